/* vt_registry.h - finding, loading and listing backends and their devices.
 *
 * Thread safety: vt_registry_open and vt_registry_close may be called from
 * any thread at any time (libltdl is driven under one process-wide lock),
 * and several registries may be open at once. An open registry is
 * read-only: its query functions may be called from many threads at once.
 * Threading rule (the same as vt_backend.h): every function may be called
 * from several threads at once, for the same device too; the core never
 * makes two calls naming the same queue at once (it holds the queue's
 * lock), so a plugin locks only what its queues and devices share. Close a
 * registry only after every tensor, queue, event and graph on its devices
 * has been destroyed and no call on it is in flight. */
#ifndef VT_REGISTRY_H
#define VT_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include <vt/vt_backend.h>
#include <vt/vt_caps.h>
#include <vt/vt_status.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vt_registry vt_registry;
typedef struct vt_device vt_device;

/* Called once for every op that ran on the portable CPU tier (SPEC 5),
 * right after it ran, on the thread that ran it (with the queue's lock
 * held: do not call vt on that queue from here): the device, the op and a
 * line naming both ("IndexSelect (90) on rocm:0 ran on the portable CPU
 * tier"), valid during the call. Such runs are also counted
 * (vt_device_stats.cpu_tier_runs); the library itself prints nothing. */
typedef void (*vt_cpu_tier_fn)(void *user, const vt_device *dev, vt_op op, const char *text);

/* How open finds plugins, and the registry's settings. Zero-initialise,
 * set struct_size, override what you need; NULL options mean "everything
 * from the environment". The environment is read here, once, at open: a
 * field left at its default takes the variable named beside it, a field
 * set overrides it. */
typedef struct vt_registry_options {
    uint32_t struct_size;    /* sizeof(vt_registry_options) */
    const char *plugin_path; /* colon list searched first; NULL: $VT_PLUGIN_PATH */
    const char *backends;    /* "cpu,rocm" or "^cuda-stub"; NULL: $VT_BACKENDS */
    int loader_debug;        /* 1 log candidates to stderr, 0 quiet, -1: $VT_LOADER_DEBUG */
    uint32_t flags;          /* VT_REGISTRY_* below */
    /* ---- appended in version 2 ---- */
    uint32_t tier_policy; /* VT_TIER_POLICY_*: fixed for the registry's life; 0: $VT_TIER_POLICY */
    /* ---- appended in version 3 ---- */
    vt_cpu_tier_fn on_cpu_tier;   /* NULL: CPU-tier runs are only counted */
    void *on_cpu_tier_user;       /* passed to on_cpu_tier */
    const char *disable_ops;      /* "backend:Op,backend:*" kernels hidden; NULL: $VT_DISABLE_OPS */
    uint32_t isolate_timeout_s;   /* 1..3599; 0: $VT_LOADER_ISOLATE_TIMEOUT, else 60 */
    uint64_t weight_budget_bytes; /* vt_fit_budget's answer; 0: $VT_DEVICE_WEIGHT_BUDGET_BYTES, else probed */
} vt_registry_options;

/* Tier policy of a registry (vt_resolve.h): taken from $VT_TIER_POLICY at
 * open ("strict" or "portable"), or set by vt_registry_options. A strict
 * registry never runs an op on the portable CPU tier, whatever the call. */
#define VT_TIER_POLICY_ENV      0u /* $VT_TIER_POLICY, portable when unset */
#define VT_TIER_POLICY_PORTABLE 1u /* the portable CPU tier is allowed */
#define VT_TIER_POLICY_STRICT   2u /* the portable CPU tier is refused */

/* Search only plugin_path: not the build tree, not $(pkglibdir). */
#define VT_REGISTRY_ONLY_PLUGIN_PATH 0x1u

/* Probe every plugin in a child process first (also $VT_LOADER_ISOLATE=1):
 * a plugin that crashes or hangs (beyond options.isolate_timeout_s, else
 * $VT_LOADER_ISOLATE_TIMEOUT, else 60 s) while loading, initialising or
 * probing is skipped with the signal and the stage named, and never loaded
 * into this process. */
#define VT_REGISTRY_ISOLATE 0x2u

/* What became of one plugin candidate. */
typedef enum vt_backend_state {
    VT_BACKEND_READY = 0,      /* loaded, one or more devices */
    VT_BACKEND_NO_DEVICES = 1, /* loaded, zero devices (reason says why); kernel table readable */
    VT_BACKEND_SKIPPED = 2,    /* not usable: not an ELF, missing symbol, ABI, init failure */
    VT_BACKEND_EXCLUDED = 3,   /* not loaded: VT_BACKENDS deselects it */
    VT_BACKEND_SHADOWED = 4    /* not loaded: a plugin of the same name was found earlier */
} vt_backend_state;

/* "ready", "no devices", "skipped", "excluded", "shadowed". */
const char *vt_backend_state_name(int state);

/* One plugin candidate as the registry saw it. Strings are owned by the
 * registry and live until vt_registry_close. */
typedef struct vt_backend_info {
    const char *name;        /* backend name ("rocm"), from the file name */
    const char *path;        /* absolute path of the .so */
    const char *origin;      /* "VT_PLUGIN_PATH", "build tree" or "pkglibdir" */
    uint32_t state;          /* vt_backend_state */
    const char *reason;      /* why skipped / no devices / excluded; "" when ready */
    const char *description; /* the plugin's own line; "" if never loaded */
    uint32_t abi_found;      /* the plugin's ABI word; 0 if unread */
    uint32_t device_count;   /* devices it offers */
    int device_type;         /* vt_device_type, -1 if never loaded */
} vt_backend_info;

/* Open a registry: discover, load and initialise plugins. Broken plugins
 * are recorded, never fatal. *out is owned by the caller (vt_registry_close). */
VT_WARN_UNUSED vt_status vt_registry_open(vt_registry **out, const vt_registry_options *options);

/* Close a registry and unload its plugins. NULL is ignored. */
void vt_registry_close(vt_registry *reg);

/* Directories searched, in order, as one colon list (owned by reg). */
const char *vt_registry_search_path(const vt_registry *reg);

/* Number of warnings raised while opening (a refused directory, a relative
 * path entry, a VT_BACKENDS name that matched nothing, an isolated probe
 * that could not start). The library records them; it prints nothing. */
size_t vt_registry_warning_count(const vt_registry *reg);

/* Warning i, owned by reg; NULL when out of range. */
const char *vt_registry_warning(const vt_registry *reg, size_t i);

/* Number of plugin candidates seen (every state). */
size_t vt_registry_backend_count(const vt_registry *reg);

/* Describe candidate i (0-based, discovery order). */
VT_WARN_UNUSED vt_status vt_registry_backend_info(const vt_registry *reg, size_t i, vt_backend_info *out);

/* Kernel table of a loaded backend (ready or no devices), by name. The
 * table is the plugin's static memory, valid until vt_registry_close. */
VT_WARN_UNUSED vt_status vt_registry_backend_kernels(const vt_registry *reg, const char *backend,
                                                     const vt_kernel **kernels, uint32_t *n_kernels);

/* Number of devices over all ready backends. */
size_t vt_registry_device_count(const vt_registry *reg);

/* Device i (0-based), or NULL. Owned by reg. */
vt_device *vt_registry_device(vt_registry *reg, size_t i);

/* Find a device by "backend:index" or "backend" (index 0). */
VT_WARN_UNUSED vt_status vt_registry_find_device(vt_registry *reg, const char *spec, vt_device **out);

/* "rocm:0". Owned by the device. */
const char *vt_device_id(const vt_device *dev);

/* "rocm". Owned by the device. */
const char *vt_device_backend_name(const vt_device *dev);

/* Index within its backend. */
int vt_device_index(const vt_device *dev);

/* The registry the device belongs to (NULL for NULL), e.g. to find its
 * "cpu:0" sibling. */
vt_registry *vt_device_registry(const vt_device *dev);

/* Kernel table of the device's backend (plugin-owned static memory); none
 * (*n_kernels = 0) on a device whose caps say kernels_unavailable. */
VT_WARN_UNUSED vt_status vt_device_kernels(const vt_device *dev, const vt_kernel **kernels, uint32_t *n_kernels);

/* vt_device_type of the device. */
int vt_device_type_of(const vt_device *dev);

/* Probe the device now and fill caps, keep-quant sets included: the core
 * copies out->struct_size bytes (0 is taken as sizeof(vt_device_caps)). Also
 * enforces the consistency rule: a device that is not host-addressable but
 * claims needs_weight_staging false is refused (VT_E_PLUGIN). */
VT_WARN_UNUSED vt_status vt_device_probe(vt_device *dev, vt_device_caps *out);

/* Counters of a device: the backend's allocation/copy counters plus the
 * core's own op counts. Set struct_size before the call: the core copies
 * only that many bytes (an older, shorter struct gets what it has room for). */
typedef struct vt_device_stats {
    uint32_t struct_size; /* sizeof(vt_device_stats) of the caller */
    vt_backend_counters backend;
    uint64_t native_runs;   /* ops run by the device's own kernels */
    uint64_t cpu_tier_runs; /* ops run by the portable CPU tier on device pointers */
    uint64_t refusals;      /* ops refused (VT_E_OP_MISSING) */
} vt_device_stats;

/* Initialiser of a caller's vt_device_stats: zeroed, struct_size set.
 * Declare every stats struct with it: vt_device_stats s = VT_DEVICE_STATS_INIT; */
/* clang-format off */
#define VT_DEVICE_STATS_INIT {.struct_size = sizeof(vt_device_stats)}
/* clang-format on */

/* Read the device's counters into out (out->struct_size bytes of it; a
 * struct_size of 0 is taken as sizeof(vt_device_stats), for callers that
 * zero-initialise without setting it). */
VT_WARN_UNUSED vt_status vt_device_stats_get(vt_device *dev, vt_device_stats *out);

/* The registry's tier policy (VT_TIER_POLICY_PORTABLE or _STRICT), as
 * fixed at open. */
uint32_t vt_registry_tier_policy(const vt_registry *reg);

/* The same policy in *policy, or VT_E_INVALID_ARG (vt_last_error names the
 * value) when it was to come from a bad $VT_TIER_POLICY, which every
 * resolution on reg then refuses with: how a tool shows or checks the
 * policy without reading the environment itself. */
VT_WARN_UNUSED vt_status vt_registry_tier_policy_get(const vt_registry *reg, uint32_t *policy);

#ifdef __cplusplus
}
#endif
#endif /* VT_REGISTRY_H */
