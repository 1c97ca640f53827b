/* vt_backend_v1.h - FROZEN copy of core/vt/vt_backend.h as of contract
 * version 1 (commit 4d1d354, before issue 9). Never edit: the v1 test
 * plugin is built against it to prove the core still loads and runs a
 * plugin written for version 1. */
/* vt_backend.h - the plugin contract (SPEC 3): what a backend .so exports.
 *
 * A backend is a libtool module vt_<name>.so that exports two symbols:
 *
 *   const uint32_t vt_plugin_abi;                     data: VT_PLUGIN_ABI
 *   const vt_backend_iface *vt_plugin_entry(void);    the vtable
 *
 * The core reads vt_plugin_abi with lt_dlsym before it calls any plugin
 * code; on a mismatch it unloads the plugin and records
 * "ABI <found>, core wants <n>". Then it calls vt_plugin_entry once.
 *
 * The vtable is versioned like sqlite3_vfs: abi_version and struct_size
 * first, fields only ever appended. All memory a plugin returns (the vtable,
 * the kernel table, strings) is static and owned by the plugin; everything
 * the core passes in (caps, args, why buffers) is owned by the core and only
 * valid during the call. Device pointers are opaque to the core: it never
 * dereferences them, except through the portable CPU tier on a device whose
 * caps say host_addressable. */
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

/* One tensor operand of an op call: a contiguous row-major array. */
typedef struct vt_operand {
    void *data;                 /* device pointer; NULL for an absent optional operand */
    uint32_t dtype;             /* vt_dtype */
    uint32_t ndim;              /* 0..VT_MAX_DIMS */
    int64_t shape[VT_MAX_DIMS]; /* row-major, innermost last */
    uint64_t nbytes;            /* bytes of data */
} vt_operand;

/* An op call as a kernel sees it. The core has checked shapes and dtypes
 * against the catalogue before the kernel runs. */
typedef struct vt_op_args {
    uint32_t struct_size; /* sizeof(vt_op_args) of the core */
    uint32_t op;          /* vt_op */
    uint32_t n_in;        /* inputs used in in[] */
    uint32_t n_out;       /* outputs used in out[] */
    vt_operand in[VT_MAX_INPUTS];
    vt_operand out[VT_MAX_OUTPUTS];
    const void *params; /* the op's params struct (vt_params.h) or NULL */
    size_t params_size; /* sizeof that struct */
} vt_op_args;

/* A kernel: runs one op for one signature on device dev. Returns VT_OK or a
 * status with a reason written to why (NUL-terminated, at most why_size). */
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

/* The (op, sig) row of a kernel table, or NULL. */
const vt_kernel *vt_kernel_find(const vt_kernel *table, uint32_t n, uint32_t op, vt_sig sig);

/* Counters a backend keeps per device (allocation and copy traffic). */
typedef struct vt_backend_counters {
    uint64_t allocs;     /* successful allocations, ever */
    uint64_t frees;      /* releases, ever */
    uint64_t live_bytes; /* bytes allocated now */
    uint64_t peak_bytes; /* most bytes allocated at once */
    uint64_t h2d_copies; /* host -> device copies */
    uint64_t d2h_copies; /* device -> host copies */
    uint64_t h2d_bytes;
    uint64_t d2h_bytes;
} vt_backend_counters;

/* The backend vtable. Every function may be called from several threads at
 * once for different devices; calls on one device are serialised by the
 * caller unless the backend documents otherwise. */
typedef struct vt_backend_iface {
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

    /* Copy bytes from host memory into device memory at dst. */
    vt_status (*write)(vt_backend_ctx *ctx, int dev, void *dst, const void *src, uint64_t bytes, char *why,
                       size_t why_size);

    /* Copy bytes from device memory at src into host memory. */
    vt_status (*read)(vt_backend_ctx *ctx, int dev, void *dst, const void *src, uint64_t bytes, char *why,
                      size_t why_size);

    /* Wait until all work queued on dev has finished. */
    vt_status (*synchronize)(vt_backend_ctx *ctx, int dev, char *why, size_t why_size);

    /* Fill the allocation and copy counters of dev. */
    void (*counters)(vt_backend_ctx *ctx, int dev, vt_backend_counters *out);

    uint32_t flags; /* VT_BACKEND_FLAG_* */

    /* Optional (may be NULL): host memory the device copies from fastest
     * (pinned); the core falls back to plain aligned host memory. */
    vt_status (*host_alloc)(vt_backend_ctx *ctx, int dev, uint64_t bytes, void **ptr, char *why, size_t why_size);

    /* Free memory from host_alloc; NULL is ignored. Set with host_alloc. */
    void (*host_free)(vt_backend_ctx *ctx, int dev, void *ptr);
} vt_backend_iface;

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
