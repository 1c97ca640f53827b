/* vt_backend.h - the plugin contract (SPEC 3): what a backend .so exports.
 *
 * Writing a new backend? Start from backends/example/: example_plugin.c is
 * a complete backend (one device, Add on f32) explained line by line, with
 * its configure.m4 and Makefile.am (README "Contributing" says what goes
 * where); tests/test_example.c loads it and runs it. This header is the
 * reference for everything it does not use (queues, events, graphs).
 *
 * A backend is a libtool module vt_<name>.so that exports two symbols:
 *
 *   const uint32_t vt_plugin_abi;                     data: VT_PLUGIN_ABI
 *   const vt_backend_iface *vt_plugin_entry(void);    the vtable
 *
 * The core reads vt_plugin_abi from the file itself (the dynamic symbol
 * table, then the word in its section) before it opens the plugin, so no
 * plugin code runs - not even a constructor - for a plugin of another ABI;
 * it must be a defined, global, 4-byte object in a data section. On a
 * mismatch the core records "ABI <found>, core wants <n>" and never opens
 * the file. Then it opens it and calls vt_plugin_entry once.
 *
 * A plugin links libvt (it may call the public vt_* functions: vt_op_name,
 * vt_dtype_get ...) and is linked with -Wl,-z,defs, so it loads into a host
 * that opened libvt RTLD_LOCAL. The file and every directory on its path
 * must be owned by root or the loading user and writable by no other user.
 *
 * Versioning, one mechanism. VT_PLUGIN_ABI changes only for incompatible
 * changes. Everything else grows like sqlite3_vfs: structs are only ever
 * APPENDED to, in blocks marked "---- version N ----". The vtable says how
 * far it goes with struct_size and iface_version; the core reads a member
 * only when struct_size covers it, calls a version-2 member only when
 * iface_version >= 2 and the member is not NULL, and otherwise falls back
 * (a plugin without queues gets a synchronous default queue, events that
 * complete at once and graphs recorded and replayed by the core). A plugin
 * built against the version-1 header keeps loading and running.
 *
 * Memory. All memory a plugin returns (the vtable, the kernel table,
 * strings) is static and owned by the plugin; everything the core passes in
 * (caps, args, why buffers) is owned by the core and only valid during the
 * call. Device memory is a handle (what alloc returned) plus a byte offset:
 * the core never adds offsets to a handle nor dereferences it, except
 * through the portable CPU tier on a device whose caps say host_addressable.
 * A plugin without queues (version 1, or version 2 without queue_create) is
 * pointer-based by definition: the core calls its kernels directly, on the
 * caller's thread, with each offset folded into data (offset 0).
 *
 * Threading (the same rule as vt_registry.h): every function of a plugin
 * may be called from several threads at once, for the same device too;
 * the core never makes two calls naming the same queue at once (it holds
 * the queue's lock), so a plugin locks only what its queues and devices
 * share (allocator, counters, the error word read by event_sync).
 *
 * Errors and the why convention. A function that fails writes ONLY what
 * went wrong into why ("idx[1] = 7 is outside [0, 3)"); the core prefixes
 * the op, its id and the device ("GetRows (40) on rocm:0: ...").
 *
 * Kernels validate data-dependent values. The core checks every shape,
 * dtype and params size against the catalogue before a kernel runs; values
 * that live in device memory (indices, slots, windows, accepted counts,
 * NaN where refused) are the kernel's duty: a version-2 kernel checks them
 * ON THE DEVICE, records the first bad one in its queue's error word, writes
 * nothing out of range, and the next sync point reports it. Operand order
 * of every op: vt_op_get_info(op)->in and ->out (vt_op.h), or `vtctl ops`.
 *
 * Besides libvt's public vt_* functions (above), a plugin may use the
 * static inline helpers and macros of this header: vt_why,
 * vt_kernel_families_join, VT_KERNEL_TABLE_FROM_FAMILIES,
 * vt_op_args_fold_offsets. */
#ifndef VT_BACKEND_H
#define VT_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include <vt/vt_caps.h>
#include <vt/vt_dtype.h>
#include <vt/vt_op.h>
#include <vt/vt_status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a struct below changes incompatibly. */
#define VT_PLUGIN_ABI 1u

#define VT_PLUGIN_ABI_SYMBOL   "vt_plugin_abi"
#define VT_PLUGIN_ENTRY_SYMBOL "vt_plugin_entry"

#define VT_MAX_DIMS    4
#define VT_MAX_INPUTS  12
#define VT_MAX_OUTPUTS 4

/* Plugin-private state, created by init and passed back to every call. */
typedef struct vt_backend_ctx vt_backend_ctx;

/* Plugin-private queue, event and graph objects (version 2): opaque to the
 * core, created and destroyed only through the vtable. */
typedef struct vt_backend_queue vt_backend_queue;
typedef struct vt_backend_event vt_backend_event;
typedef struct vt_backend_graph vt_backend_graph;

/* Version of the vtable members this header declares (iface_version). */
#define VT_IFACE_VERSION 2u

/* One tensor operand of an op call: a contiguous row-major array. */
typedef struct vt_operand {
    void *data;                 /* buffer handle from alloc; NULL for an absent optional operand */
    uint32_t dtype;             /* vt_dtype */
    uint32_t ndim;              /* 0..VT_MAX_DIMS */
    int64_t shape[VT_MAX_DIMS]; /* row-major, innermost last */
    uint64_t nbytes;            /* bytes of data */
} vt_operand;

/* An op call as a kernel sees it. The core has checked shapes and dtypes
 * against the catalogue before the kernel runs. */
typedef struct vt_op_args {
    /* ---- version 1 ---- */
    uint32_t struct_size; /* sizeof(vt_op_args) of the core */
    uint32_t op;          /* vt_op */
    uint32_t n_in;        /* inputs used in in[] */
    uint32_t n_out;       /* outputs used in out[] */
    vt_operand in[VT_MAX_INPUTS];
    vt_operand out[VT_MAX_OUTPUTS];
    const void *params; /* the op's params struct (vt_params.h) or NULL */
    size_t params_size; /* sizeof that struct */
    /* ---- members below are version 2 (iface_version >= 2) ---- */
    vt_backend_queue *queue;             /* the queue to enqueue on (never NULL for a v2 plugin's enqueue) */
    uint64_t in_offset[VT_MAX_INPUTS];   /* byte offset of in[i] inside its buffer in[i].data */
    uint64_t out_offset[VT_MAX_OUTPUTS]; /* same for outputs */
} vt_op_args;

/* For a pointer-based plugin: args with every offset folded into its data
 * pointer (offsets 0), the one place such a plugin forms addresses (its
 * enqueue; kernels then stay unchanged). Header-only. */
static inline void vt_op_args_fold_offsets(const vt_op_args *args, vt_op_args *out)
{
    *out = *args;
    for (uint32_t i = 0; i < out->n_in && i < VT_MAX_INPUTS; i++) {
        if (out->in[i].data)
            out->in[i].data = (char *)out->in[i].data + out->in_offset[i];
        out->in_offset[i] = 0;
    }
    for (uint32_t i = 0; i < out->n_out && i < VT_MAX_OUTPUTS; i++) {
        if (out->out[i].data)
            out->out[i].data = (char *)out->out[i].data + out->out_offset[i];
        out->out_offset[i] = 0;
    }
}

/* A kernel: runs one op for one signature on device dev. Returns VT_OK or a
 * status with a reason written to why (NUL-terminated, at most why_size;
 * only what went wrong, the core names the op and device). A version-1
 * plugin's kernel finishes its work before it returns; a version-2
 * plugin's kernels are only ever reached through its enqueue. */
typedef vt_status (*vt_kernel_fn)(vt_backend_ctx *ctx, int dev, const vt_op_args *args, char *why, size_t why_size);

/* One row of a backend's static kernel table: (op, signature) -> kernel. */
typedef struct vt_kernel {
    uint32_t op;      /* vt_op */
    vt_sig sig;       /* dtypes of the op's signature operands */
    vt_kernel_fn run; /* never NULL */
} vt_kernel;

/* Signature initialisers for static kernel tables:
 * {VT_OP_MATMUL, VT_SIG2(VT_F32, VT_Q4_0), my_kernel}. */
/* clang-format off */
#define VT_SIG1(a) {1, {(a)}}
#define VT_SIG2(a, b) {2, {(a), (b)}}
#define VT_SIG3(a, b, c) {3, {(a), (b), (c)}}
/* clang-format on */

/* One family of rows of a backend's kernel table (an op family's file). */
typedef struct vt_kernel_family {
    const vt_kernel *rows;
    const uint32_t *n;
} vt_kernel_family;

/* Concatenate families into out (at most max rows); returns the rows
 * written. Header-only, for plugins that build their table once. */
static inline uint32_t vt_kernel_families_join(const vt_kernel_family *families, size_t n_families, vt_kernel *out,
                                               uint32_t max)
{
    uint32_t n = 0;
    for (size_t f = 0; f < n_families; f++)
        for (uint32_t i = 0; i < *families[f].n && n < max; i++)
            out[n++] = families[f].rows[i];
    return n;
}

/* A backend whose kernel rows live in one file per op family (as cpu and
 * rocm do) names each file's rows <prefix>_kernels_<family>[] and their
 * count <prefix>_n_kernels_<family>; VT_OP_FAMILIES(VT_KERNEL_FAMILY_DECLARE,
 * prefix) declares all of them, and VT_KERNEL_TABLE_FROM_FAMILIES defines
 * the table the vtable points at. A backend with a few rows (cuda-stub,
 * backends/example) keeps one static vt_kernel array instead. */
#define VT_KERNEL_FAMILY_DECLARE(prefix, family)                                                                       \
    extern const vt_kernel prefix##_kernels_##family[];                                                                \
    extern const uint32_t prefix##_n_kernels_##family;
#define VT_KERNEL_FAMILY_ROW(prefix, family) {prefix##_kernels_##family, &prefix##_n_kernels_##family},

/* Rows a table assembled from families holds at most. */
#define VT_KERNEL_TABLE_MAX 1024u

/* Defines `const vt_kernel *fn(uint32_t *n)`: the backend's kernel table,
 * every family of VT_OP_FAMILIES in the catalogue's order, joined on the
 * first call. Not thread-safe on that first call: the plugin calls it from
 * vt_plugin_entry under a pthread_once (backends/cpu/cpu_plugin.c). */
#define VT_KERNEL_TABLE_FROM_FAMILIES(fn, prefix)                                                                      \
    const vt_kernel *fn(uint32_t *n)                                                                                   \
    {                                                                                                                  \
        static const vt_kernel_family families_[] = {VT_OP_FAMILIES(VT_KERNEL_FAMILY_ROW, prefix)};                    \
        static vt_kernel rows_[VT_KERNEL_TABLE_MAX];                                                                   \
        static uint32_t n_rows_;                                                                                       \
        if (!n_rows_)                                                                                                  \
            n_rows_ = vt_kernel_families_join(families_, sizeof families_ / sizeof families_[0], rows_,                \
                                              VT_KERNEL_TABLE_MAX);                                                    \
        *n = n_rows_;                                                                                                  \
        return rows_;                                                                                                  \
    }

/* The (op, sig) row of a kernel table, or NULL. */
const vt_kernel *vt_kernel_find(const vt_kernel *table, uint32_t n, vt_op op, vt_sig sig);

/* Counters a backend keeps per device (allocation and copy traffic). The
 * core zeroes the struct before counters fills it, so a version-1 plugin
 * leaves the version-2 members 0. */
typedef struct vt_backend_counters {
    /* ---- version 1 ---- */
    uint64_t allocs;     /* successful allocations, ever */
    uint64_t frees;      /* releases, ever */
    uint64_t live_bytes; /* bytes allocated now */
    uint64_t peak_bytes; /* most bytes allocated at once */
    uint64_t h2d_copies; /* host -> device copies */
    uint64_t d2h_copies; /* device -> host copies */
    uint64_t h2d_bytes;
    uint64_t d2h_bytes;
    /* ---- members below are version 2 (iface_version >= 2) ---- */
    uint64_t syncs;    /* host waits on the device: synchronize, queue/event sync, blocking copies */
    uint64_t launches; /* kernel launches (enqueues); a graph launch counts 1 */
} vt_backend_counters;

/* The backend vtable. Threading: see the rule at the top of this file.
 * Members marked (optional) may be NULL. */
typedef struct vt_backend_iface {
    /* ---- version 1 ---- */
    uint32_t abi_version;     /* VT_PLUGIN_ABI the plugin was built with */
    uint32_t struct_size;     /* sizeof(vt_backend_iface) the plugin was built with */
    const char *name;         /* backend name: "cpu", "rocm", "cuda-stub" (file vt_<name with _>.so) */
    const char *description;  /* one line for humans */
    uint32_t device_type;     /* vt_device_type of every device of this backend */
    const vt_kernel *kernels; /* static kernel table, valid before init and without devices */
    uint32_t n_kernels;       /* rows in kernels */

    /* Start the backend: probe the runtime, create *ctx. A failure makes the
     * core skip the plugin with why as the reason. Zero devices is not a
     * failure: init succeeds and device_count says 0 with a reason. */
    vt_status (*init)(vt_backend_ctx **ctx, char *why, size_t why_size);

    /* Release everything init and later calls created. ctx may be NULL. */
    void (*fini)(vt_backend_ctx *ctx);

    /* Number of devices; when 0, why says what the runtime answered. */
    int (*device_count)(vt_backend_ctx *ctx, char *why, size_t why_size);

    /* Probe device dev now and fill caps (all but keep_quant). */
    vt_status (*probe)(vt_backend_ctx *ctx, int dev, vt_device_caps *caps, char *why, size_t why_size);

    /* Allocate bytes of device memory (aligned to caps.alloc_alignment). */
    vt_status (*alloc)(vt_backend_ctx *ctx, int dev, uint64_t bytes, void **ptr, char *why, size_t why_size);

    /* Free memory from alloc; NULL is ignored. */
    void (*release)(vt_backend_ctx *ctx, int dev, void *ptr);

    /* Copy bytes from host memory into device memory at dst, blocking (the
     * copy is done when it returns). */
    vt_status (*write)(vt_backend_ctx *ctx, int dev, void *dst, const void *src, uint64_t bytes, char *why,
                       size_t why_size);

    /* Copy bytes from device memory at src into host memory, blocking. */
    vt_status (*read)(vt_backend_ctx *ctx, int dev, void *dst, const void *src, uint64_t bytes, char *why,
                      size_t why_size);

    /* Wait until all work on every queue of dev has finished (a host sync:
     * counted in syncs). Device-recorded errors stay in their queues. */
    vt_status (*synchronize)(vt_backend_ctx *ctx, int dev, char *why, size_t why_size);

    /* Fill the allocation and copy counters of dev. */
    void (*counters)(vt_backend_ctx *ctx, int dev, vt_backend_counters *out);

    uint32_t flags; /* VT_BACKEND_FLAG_* */

    /* (optional) Host memory the device copies from fastest (pinned); the
     * core falls back to plain aligned host memory. */
    vt_status (*host_alloc)(vt_backend_ctx *ctx, int dev, uint64_t bytes, void **ptr, char *why, size_t why_size);

    /* (optional, set with host_alloc) Free memory from host_alloc; NULL is ignored. */
    void (*host_free)(vt_backend_ctx *ctx, int dev, void *ptr);

    /* ---- members below are version 2 (iface_version >= 2) ----
     * The core reads iface_version only when struct_size covers it (a
     * version-1 vtable ends before it). Setting queue_create promises the
     * whole queue set: queue_destroy, enqueue, queue_sync, the three async
     * copies and the seven event functions. The graph set (graph_begin,
     * graph_end, graph_launch, graph_destroy) is all or nothing. */
    uint32_t iface_version; /* VT_IFACE_VERSION the plugin was built with (2) */

    /* (optional) Create a queue (stream) on dev; the core may create several
     * per device (one is the device's default queue). */
    vt_status (*queue_create)(vt_backend_ctx *ctx, int dev, vt_backend_queue **q, char *why, size_t why_size);

    /* (optional) Destroy a queue; the core has synchronised it first. */
    void (*queue_destroy)(vt_backend_ctx *ctx, int dev, vt_backend_queue *q);

    /* (optional) Run kernel k of this plugin's table on args->queue. It MAY
     * RETURN BEFORE THE WORK IS DONE and never synchronises. It fails only
     * for what it can see without waiting (a launch error); data-dependent
     * errors (index out of range, bad slot, window, accepted count, NaN
     * where refused) are detected ON THE DEVICE and recorded in the queue's
     * error word (first error wins, with args->op). Operands are (handle,
     * offset) pairs: in[i].data + in_offset[i] (see vt_op_args_fold_offsets). */
    vt_status (*enqueue)(vt_backend_ctx *ctx, int dev, const vt_kernel *k, const vt_op_args *args, char *why,
                         size_t why_size);

    /* (optional) The host waits until all work on q is done; returns the
     * first device-recorded error since the last sync point (and clears it):
     * its status, *failed_op = the op id that recorded it, why = only what
     * went wrong ("idx[1] = 7 is outside [0, 3)"). A host sync. */
    vt_status (*queue_sync)(vt_backend_ctx *ctx, int dev, vt_backend_queue *q, uint32_t *failed_op, char *why,
                            size_t why_size);

    /* (optional) Copy bytes of host memory src into buffer dst at dst_offset,
     * in q's order; may return before the copy is done (src must stay valid
     * and unchanged until then; pinned memory from host_alloc for a true
     * asynchronous copy). */
    vt_status (*write_async)(vt_backend_ctx *ctx, int dev, vt_backend_queue *q, void *dst, uint64_t dst_offset,
                             const void *src, uint64_t bytes, char *why, size_t why_size);

    /* (optional) Copy bytes of buffer src at src_offset into host memory dst,
     * in q's order; dst is filled once an event recorded after it completes. */
    vt_status (*read_async)(vt_backend_ctx *ctx, int dev, vt_backend_queue *q, void *dst, const void *src,
                            uint64_t src_offset, uint64_t bytes, char *why, size_t why_size);

    /* (optional) Device-to-device copy between two buffers of dev, in q's order. */
    vt_status (*copy_async)(vt_backend_ctx *ctx, int dev, vt_backend_queue *q, void *dst, uint64_t dst_offset,
                            const void *src, uint64_t src_offset, uint64_t bytes, char *why, size_t why_size);

    /* (optional) Create an event (with timing) on dev. */
    vt_status (*event_create)(vt_backend_ctx *ctx, int dev, vt_backend_event **e, char *why, size_t why_size);

    /* (optional) Destroy an event; NULL is ignored. */
    void (*event_destroy)(vt_backend_ctx *ctx, int dev, vt_backend_event *e);

    /* (optional) Record e on q: e completes when the work enqueued on q
     * before it is done. */
    vt_status (*event_record)(vt_backend_ctx *ctx, int dev, vt_backend_queue *q, vt_backend_event *e, char *why,
                              size_t why_size);

    /* (optional) Make q wait (on the device) for e; the host returns at once. */
    vt_status (*queue_wait_event)(vt_backend_ctx *ctx, int dev, vt_backend_queue *q, vt_backend_event *e, char *why,
                                  size_t why_size);

    /* (optional) VT_OK when e has completed (or was never recorded),
     * VT_E_NOT_READY when not yet; never waits. */
    vt_status (*event_query)(vt_backend_ctx *ctx, int dev, vt_backend_event *e);

    /* (optional) The host waits for e; then returns (and clears) the error
     * word of the queue e was recorded on, as queue_sync does. A host sync;
     * may run while another thread uses that queue. */
    vt_status (*event_sync)(vt_backend_ctx *ctx, int dev, vt_backend_event *e, uint32_t *failed_op, char *why,
                            size_t why_size);

    /* (optional) Milliseconds between two completed events. */
    vt_status (*event_elapsed_ms)(vt_backend_ctx *ctx, int dev, vt_backend_event *start, vt_backend_event *end,
                                  float *ms, char *why, size_t why_size);

    /* (optional) Graphs: record q's enqueues and async copies between begin
     * and end (stream capture on HIP/CUDA) and replay them with launch,
     * without re-capture; values that change per step live in device
     * buffers written by async copies. Without these the core records the
     * calls itself and replays the list through enqueue and the copies. */
    vt_status (*graph_begin)(vt_backend_ctx *ctx, int dev, vt_backend_queue *q, char *why, size_t why_size);

    /* (optional) End the recording begun on q; *g is the replayable graph. */
    vt_status (*graph_end)(vt_backend_ctx *ctx, int dev, vt_backend_queue *q, vt_backend_graph **g, char *why,
                           size_t why_size);

    /* (optional) Replay g on q (one launch in the counters); may return before the work is done. */
    vt_status (*graph_launch)(vt_backend_ctx *ctx, int dev, vt_backend_queue *q, vt_backend_graph *g, char *why,
                              size_t why_size);

    /* (optional) Destroy a graph; NULL is ignored. */
    void (*graph_destroy)(vt_backend_ctx *ctx, int dev, vt_backend_graph *g);

    /* (optional) Shape predicate: can kernel k run these operands (shapes,
     * dtypes and params known; data may be NULL - resolution before
     * allocation - and is never to be dereferenced; queue NULL; an absent
     * optional input has ndim 0 and nbytes 0)? VT_OK, or VT_E_OP_MISSING with
     * why ("GatedDeltaRule dk = 512 > 256"). Resolution calls it when shapes
     * are known (vt_resolve_call, vt_op_enqueue), so a kernel's limits refuse
     * at plan time by name, never after "native" at run time. */
    vt_status (*accepts)(vt_backend_ctx *ctx, int dev, const vt_kernel *k, const vt_op_args *args, char *why,
                         size_t why_size);
} vt_backend_iface;

/* Bytes of a version-1 vtable (everything up to host_free). */
#define VT_IFACE_V1_SIZE (offsetof(vt_backend_iface, host_free) + sizeof(void (*)(void)))

/* True when vtable f covers member m (struct_size reaches past it). */
#define VT_IFACE_COVERS(f, m) ((size_t)(f)->struct_size >= offsetof(vt_backend_iface, m) + sizeof((f)->m))

/* True when the core may call version-2 member m of f: the vtable covers
 * iface_version and m, iface_version >= 2, and m is set. */
#define VT_IFACE_HAS(f, m)                                                                                             \
    (VT_IFACE_COVERS(f, iface_version) && (f)->iface_version >= 2u && VT_IFACE_COVERS(f, m) && (f)->m != NULL)

/* The module stays loaded until the process exits (fini still runs at
 * close): for backends whose device runtime cannot be unloaded safely. */
#define VT_BACKEND_FLAG_RESIDENT 0x1u

/* Signature of vt_plugin_entry. */
typedef const vt_backend_iface *(*vt_plugin_entry_fn)(void);

/* Writes printf-style text into a plugin's why buffer; returns status. A
 * helper for plugins, header-only so plugins need not link libvt. */
#include <stdarg.h>
#include <stdio.h>
static inline vt_status vt_why(vt_status status, char *why, size_t why_size, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static inline vt_status vt_why(vt_status status, char *why, size_t why_size, const char *fmt, ...)
{
    if (why && why_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, why_size, fmt, ap);
        va_end(ap);
    }
    return status;
}

#ifdef __cplusplus
}
#endif
#endif /* VT_BACKEND_H */
