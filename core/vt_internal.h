/* vt_internal.h - structures and helpers shared by libvt's own files.
 * Not installed; plugins and users never see these. */
#ifndef VT_INTERNAL_H
#define VT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ltdl.h>

#include "vt/vt.h"

/* Size of the reason buffers passed to plugins. */
#define VT_WHY_SIZE 512

/* One plugin candidate and, once loaded, its live state. */
typedef struct vt_plugin {
    char *name;         /* from the file name: vt_cuda_stub.so -> "cuda-stub" */
    char *path;         /* absolute path */
    const char *origin; /* static: where the directory came from */
    vt_backend_state state;
    char *reason;      /* "" when ready */
    char *description; /* plugin's own line, "" until loaded */
    uint32_t abi_found;
    lt_dlhandle handle;            /* NULL unless ready / no devices */
    const vt_backend_iface *iface; /* NULL unless ready / no devices */
    vt_backend_ctx *ctx;           /* plugin state from init */
    uint32_t n_devices;
    bool pending;             /* discovered, not yet loaded */
    const vt_kernel *kernels; /* the effective table: the plugin's, less VT_DISABLE_OPS */
    uint32_t n_kernels;
    vt_kernel *filtered; /* owned copy when VT_DISABLE_OPS removed rows, else NULL */
    char **no_kernels;   /* per device, from the load-time probe: NULL, or why it runs no kernel */
} vt_plugin;

struct vt_device {
    vt_registry *reg;
    vt_plugin *plugin;
    int index;              /* within the backend */
    char id[96];            /* "rocm:0" */
    const char *no_kernels; /* the probe's kernels_unavailable (owned by the plugin), or NULL */
    atomic_uint_fast64_t native_runs;
    atomic_uint_fast64_t cpu_tier_runs;
    atomic_uint_fast64_t refusals;
    /* Work the core itself ran for a backend without queues (its syncs and
     * launches counters, added to the backend's in vt_device_stats_get). */
    atomic_uint_fast64_t core_syncs;
    atomic_uint_fast64_t core_launches;
    /* From the latest probe (host addressability never changes): 0 not
     * probed yet, 1 host-addressable, 2 not; vt_tensor_wrap's check. */
    atomic_int host_addressable;
    pthread_mutex_t queue_lock; /* guards creating default_queue */
    vt_queue *default_queue;    /* created on first use, freed at close */
};

struct vt_registry {
    vt_plugin *plugins;
    size_t n_plugins;
    vt_device *devices;
    size_t n_devices;
    char *search_path; /* the directories searched, colon-joined */
    vt_plugin *cpu;    /* the cpu backend (for the CPU tier), or NULL */
    char **warnings;
    size_t n_warnings;
    bool debug;                 /* VT_LOADER_DEBUG */
    uint32_t tier_flags;        /* VT_RESOLVE_STRICT when the tier policy is strict (fixed at open) */
    vt_status policy_status;    /* VT_OK, or VT_E_INVALID_ARG for a bad $VT_TIER_POLICY */
    char *policy_error;         /* its message, or NULL */
    vt_cpu_tier_fn on_cpu_tier; /* options.on_cpu_tier: told of every CPU-tier run, or NULL */
    void *on_cpu_tier_user;
    /* Settings read once at open: the option, else the environment. */
    char *disable_ops;             /* VT_DISABLE_OPS: kernels hidden, or NULL */
    uint32_t isolate_timeout_s;    /* VT_LOADER_ISOLATE_TIMEOUT: 1..3599, default 60 */
    uint64_t weight_budget;        /* VT_DEVICE_WEIGHT_BUDGET_BYTES: > 0 replaces the probe */
    char weight_budget_source[96]; /* how weight_budget was given */
    char *weight_budget_error;     /* a malformed $VT_DEVICE_WEIGHT_BUDGET_BYTES, reported by every fit */
};

struct vt_tensor {
    vt_device *dev;
    void *data;      /* buffer handle from the backend's alloc (or borrowed memory) */
    uint64_t offset; /* byte offset of this tensor inside data (views) */
    bool borrowed;   /* data is not ours (a view of a mapped file, vt_tensor_view): never released */
    bool read_only;  /* writes are refused (the view is of read-only memory) */
    vt_dtype dtype;
    uint32_t ndim;
    int64_t shape[VT_MAX_DIMS];
    uint64_t nbytes;
};

/* strdup that returns NULL on NULL. */
char *vt_strdup(const char *s);

/* printf into a fresh malloc'd string; NULL on allocation failure. */
char *vt_strdup_printf(const char *fmt, ...) VT_PRINTF(1, 2);

/* Process-wide lock around every libltdl call (libltdl is not thread-safe). */
void vt_ltdl_lock(void);
void vt_ltdl_unlock(void);

/* Loader debug line to stderr ("vt-loader: ..."), when enabled. */
void vt_loader_log(bool enabled, const char *fmt, ...) VT_PRINTF(2, 3);

/* Read the ABI word of the plugin file at path from the file itself,
 * without loading it (plugin_elf.c): NULL and *abi set, or a malloc'd
 * reason (not an ELF64 shared object for this machine, no or a malformed
 * vt_plugin_abi symbol, a table outside the file ...). */
char *vt_plugin_elf_abi(const char *path, uint32_t *abi);

/* NULL when path (a plugin file, or with want_dir a plugin directory) and
 * everything on its path with links resolved is owned by root or this
 * process's user and writable by no other user (plugin_trust.c); else a
 * malloc'd reason naming the object and the rule it breaks. */
char *vt_plugin_trust_problem(const char *path, bool want_dir);

/* The life of one plugin (plugin_loader.c). Load a pending candidate in
 * this process and vet its devices: each is probed once, and the plugin is
 * refused (unloaded, VT_BACKEND_SKIPPED) when a probe fails or breaks the
 * staging rule. */
void vt_plugin_open(const vt_registry *reg, vt_plugin *p, bool debug);

/* Load and vet a pending candidate in a child process first
 * (VT_REGISTRY_ISOLATE): a crash or hang there, attributed to its stage,
 * marks the plugin skipped, and it is then not loaded here. A probe that
 * cannot start (no pipe, no fork) is a warning of reg. */
void vt_plugin_probe_isolated(vt_registry *reg, vt_plugin *p, bool debug);

/* SPEC 4 consistency: a device that is not host-addressable must stage
 * weights. NULL, or a malloc'd reason naming dev_id. */
char *vt_staging_claim_problem(const char *dev_id, const vt_device_caps *c);

/* Discovery (plugin_discovery.c): the search path (plugin_path, then the
 * build tree's plugin directories or pkglibdir unless only_plugin_path)
 * recorded in reg->search_path, and every vt_<name>.so candidate appended
 * to reg->plugins: shadowed, excluded by the backends allow-list, or
 * pending. Problems become registry warnings. */
vt_status vt_discover(vt_registry *reg, const char *plugin_path, const char *backends, bool only_plugin_path);

/* Add a warning to the registry's list (and a loader debug line). */
void vt_registry_warn(vt_registry *reg, const char *fmt, ...) VT_PRINTF(2, 3);

/* True when spec (the registry's VT_DISABLE_OPS list, or NULL) hides op on
 * backend (entries "backend:Op" or "backend:*"). */
bool vt_op_disabled(const char *spec, const char *backend, uint32_t op);

/* Unload a loaded candidate (fini, dlclose). */
void vt_plugin_unload(vt_plugin *p);

/* Fill caps->keep_quant from a kernel table (SPEC 4: the kernel table is
 * the source of keep-quant formats per op class). */
void vt_caps_derive_keep_quant(vt_device_caps *caps, const vt_kernel *table, uint32_t n);

/* The kernels dev may run: its backend's effective table, or none (*n = 0)
 * when the device's probe said kernels_unavailable. */
const vt_kernel *vt_device_table(const vt_device *dev, uint32_t *n);

/* The registry's cpu backend, when loaded with a device. */
vt_plugin *vt_registry_cpu(vt_registry *reg);

/* True when the plugin implements queues (version 2, queue_create set). */
bool vt_plugin_has_queues(const vt_plugin *p);

/* Problems of the version-2 part of a vtable (a set given by halves), or
 * NULL; the result is malloc'd. */
char *vt_iface_v2_problem(const vt_backend_iface *f);

/* Free the device's default queue (registry close, before unloading). */
void vt_device_queues_fini(vt_device *dev);

/* Resolve op with its checked args (accepts is asked when args is not
 * NULL): fills res (device, kernel, flags included). Does not count. */
vt_status vt_resolve_args(vt_device *dev, vt_op op, vt_sig sig, const vt_op_args *args, uint32_t flags,
                          vt_resolution *res);

/* The why of a plugin with a leading "<Op> (<id>): " of op dropped (the
 * core names the op itself, once). */
const char *vt_why_strip_op(const char *why, uint32_t op);

#endif /* VT_INTERNAL_H */
