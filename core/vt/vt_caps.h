/* vt_caps.h - what a device can do (SPEC 4), as probed by its backend.
 *
 * Every field is a probe result, never a constant: memory from the device
 * runtime, host addressability from the device attribute (or an opted-in
 * managed allocation), staging derived from addressability. The keep-quant
 * sets are derived by the core from the backend's kernel table. */
#ifndef VT_CAPS_H
#define VT_CAPS_H

#include <stdbool.h>
#include <stdint.h>

#include <vt/vt_dtype.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Device types: stable numbers (SPEC 3). */
typedef enum vt_device_type {
    VT_DEVICE_CPU = 0,
    VT_DEVICE_CUDA = 1,
    VT_DEVICE_METAL = 2,
    VT_DEVICE_VULKAN = 3,
    VT_DEVICE_TENSTORRENT = 4,
    VT_DEVICE_ROCM = 5
} vt_device_type;

/* "CPU", "CUDA", ... "ROCM"; "UNKNOWN" for other numbers. */
const char *vt_device_type_name(vt_device_type type);

/* The op a weight tensor feeds decides which keep-quant set admits it. */
typedef enum vt_op_class {
    VT_OP_CLASS_MATMUL = 0,     /* dense projections (MatMul) */
    VT_OP_CLASS_GATHER = 1,     /* embedding tables (GetRows) */
    VT_OP_CLASS_MOE_EXPERT = 2, /* stacked experts (MoeExpertMatMul) */
    VT_OP_CLASS_COUNT = 3,
    VT_OP_CLASS_NONE = 255 /* feeds no weight op: kept f32 (norms, biases, 1-D tensors) */
} vt_op_class;

/* "matmul", "gather", "moe-expert", "none". */
const char *vt_op_class_name(int op_class);

#define VT_CAPS_TEXT 256

/* A device's capabilities. Backends fill everything but keep_quant, which
 * the core derives from the kernel table. Strings are NUL-terminated. */
typedef struct vt_device_caps {
    uint32_t struct_size;                       /* sizeof(vt_device_caps) of the writer */
    uint32_t type;                              /* vt_device_type */
    char name[VT_CAPS_TEXT];                    /* device name from the runtime */
    char arch[64];                              /* gfx90a, sm_90, x86_64+avx2 ... */
    char platform[16];                          /* hip-amd, hip-nvidia, host, stub */
    uint32_t warp_size;                         /* lanes per wavefront/warp (SIMD f32 lanes on a CPU) */
    uint32_t compute_units;                     /* CUs / SMs / cores */
    uint64_t memory_total;                      /* bytes */
    uint64_t memory_free;                       /* bytes, probed at the call */
    uint64_t alloc_alignment;                   /* bytes every allocation is padded to */
    bool host_addressable;                      /* the CPU may dereference device pointers */
    char host_addressable_reason[VT_CAPS_TEXT]; /* the probe fact behind it */
    bool needs_weight_staging;                  /* weights must be copied into device memory */
    bool sampled_token_readback;                /* async readback of sampled token ids */
    char sampled_token_readback_reason[VT_CAPS_TEXT];
    bool managed_memory_supported;          /* the device can allocate managed memory */
    bool managed_memory_enabled;            /* allocations are managed (opt-in only) */
    uint64_t keep_quant[VT_OP_CLASS_COUNT]; /* bit t: dtype t consumed in block form */
    /* Non-empty: this device can run none of its backend's kernels, and why
     * ("vt_rocm.so has no code object for gfx1151 (built for gfx90a,gfx1030):
     * reconfigure with --with-hip-arch=gfx1151"). The device stays listed;
     * every op on it is refused with this text (no native kernel, no CPU
     * tier: the fix is a rebuild). Written only when struct_size covers it. */
    char kernels_unavailable[VT_CAPS_TEXT];
    /* ---- version 3: appended; a backend writes a member below only when
     * the struct_size the core passed covers it, and vt_device_probe copies
     * only what the caller's struct_size covers (an older caller never sees
     * it, an older backend leaves it 0) ---- */
    /* Host threads the backend's kernels run on for this device: the cpu
     * backend's pool size, fixed when its registry opened ($VT_NUM_THREADS,
     * else the CPUs this process may run on). 0: the backend does not say
     * (kernels that run on a GPU, or a backend built before this member). */
    uint32_t host_threads;
} vt_device_caps;

/* Initialiser of a caller's vt_device_caps: zeroed, struct_size set.
 * Declare every caps struct with it: vt_device_caps c = VT_DEVICE_CAPS_INIT; */
/* clang-format off */
#define VT_DEVICE_CAPS_INIT {.struct_size = sizeof(vt_device_caps)}
/* clang-format on */

/* True when dtype is in the keep-quant set of op_class. */
static inline bool vt_caps_keeps_quant(const vt_device_caps *caps, int op_class, vt_dtype dtype)
{
    return op_class >= 0 && op_class < VT_OP_CLASS_COUNT && dtype < 64u && ((caps->keep_quant[op_class] >> dtype) & 1u);
}

/* Decisions that depend on "does this device stage weights" (SPEC 4). All
 * derive from the one capability, needs_weight_staging (and, for using
 * weights in place, whether allocations are managed); none keeps its own
 * per-backend answer. The loader (vt_fit_plan, vt_load_plan_create,
 * vt_model_stage) reads them from here, and `vtctl caps` prints them. */
typedef struct vt_staging_decisions {
    bool direct_to_device_load;   /* load weights straight into device memory (else via host) */
    bool device_state_cache_io;   /* conv/GDN state caches read and written on the device (else host row copies) */
    bool merged_projection;       /* merged projections prepared in device memory */
    bool packed_decode;           /* packed decode layouts prepared in device memory */
    bool resident_weight_prepare; /* resident weights prepared on the device at load */
    bool weights_in_place;        /* a weight that keeps its stored form is used from host memory in place (no
                                   * device allocation); false: every weight is copied into a device allocation */
    bool device_fit_all_weights;  /* the device-fit check, which runs before every load that allocates device
                                   * memory, counts every weight; false: only the copies the load makes (expanded
                                   * weights) besides the run state */
} vt_staging_decisions;

/* Derive the staging decisions from a device's caps. */
vt_staging_decisions vt_caps_staging_decisions(const vt_device_caps *caps);

#ifdef __cplusplus
}
#endif
#endif /* VT_CAPS_H */
