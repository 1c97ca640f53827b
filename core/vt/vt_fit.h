/* vt_fit.h - residency of weights and the device-fit refusal (SPEC 6).
 *
 * Before the first device allocation, the core decides for every weight
 * tensor whether it stays in its GGUF block format on the device
 * (keep-quant: only where the device has a native kernel consuming that
 * format for the op class the tensor feeds) or is expanded to the compute
 * dtype, and adds up what the load will allocate on the device: every
 * weight it copies there, padded to the device's alignment, forced
 * expansions at their expanded size (never bounded by the file size), plus
 * what the run needs (KV cache, state caches, scratch). Which weights are
 * copied is the staging decision the device's caps derive
 * (vt_caps_staging_decisions): every weight on a device that stages
 * weights or allocates managed memory; on a host-addressable device only
 * the expanded ones, the rest being used in place. Whenever that total is
 * not zero it is checked against the budget, and a plan over budget is
 * refused with VT_E_DOES_NOT_FIT and a message naming the model, device,
 * bytes, forcing formats, budget and source and
 * the largest tensors. The plan itself allocates nothing. */
#ifndef VT_FIT_H
#define VT_FIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vt/vt_backend.h>
#include <vt/vt_registry.h>
#include <vt/vt_status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Residency of one weight tensor. */
#define VT_RESIDENCY_EXPAND     0 /* converted at load to the compute dtype */
#define VT_RESIDENCY_KEEP_QUANT 1 /* stays in its GGUF block format */

/* The dtype weights expand to. */
#define VT_EXPAND_F16  0 /* default */
#define VT_EXPAND_BF16 1
#define VT_EXPAND_F32  2

/* One weight tensor as stored (a GGUF tensor, or any list of weights). */
typedef struct vt_weight_desc {
    const char *name;  /* for messages; owned by the caller */
    vt_dtype dtype;    /* stored type (ggml id) */
    uint32_t op_class; /* vt_op_class it feeds, or VT_OP_CLASS_NONE */
    uint32_t ndim;
    int64_t shape[VT_MAX_DIMS]; /* row-major, innermost last */
} vt_weight_desc;

/* What the plan decided for one tensor. */
typedef struct vt_weight_plan {
    uint32_t residency;      /* VT_RESIDENCY_* */
    vt_dtype resident_dtype; /* dtype on the device */
    uint64_t stored_bytes;   /* bytes as stored */
    uint64_t resident_bytes; /* bytes on the device, padded to the device alignment */
    bool forced_expand;      /* a block format the device does not admit for its op class */
    bool in_place;           /* used from host memory in place: the load allocates nothing on the device for it */
} vt_weight_plan;

/* Options; zero-initialise and set struct_size. NULL means all defaults. */
typedef struct vt_fit_options {
    uint32_t struct_size;      /* sizeof(vt_fit_options) */
    uint32_t expand;           /* VT_EXPAND_F16 (default), VT_EXPAND_BF16, VT_EXPAND_F32 */
    uint64_t budget_bytes;     /* > 0: use this budget; 0: the registry's (vt_fit_budget) */
    const char *budget_origin; /* how budget_bytes was given ("--budget"); NULL: "options" */
    uint64_t run_bytes;        /* device bytes the run needs besides weights (KV cache, states, scratch) */
    const char *model;         /* model name for messages; NULL: "model" */
    uint32_t flags;            /* VT_FIT_* */
} vt_fit_options;

/* Every weight will be copied into a device allocation, even where the
 * device could use it from host memory in place (VT_LOAD_NO_ZERO_COPY). */
#define VT_FIT_NO_IN_PLACE 0x1u

#define VT_FIT_LARGEST 5

/* The totals of a plan. */
typedef struct vt_fit_report {
    bool checked;              /* the load allocates device memory (needed_bytes > 0), so the fit was checked */
    bool fits;                 /* checked and within budget, or nothing to allocate */
    uint64_t keep_quant_bytes; /* resident bytes of keep-quant tensors */
    uint64_t expanded_bytes;   /* resident bytes of tensors expanded to the compute dtype */
    uint64_t f32_bytes;        /* resident bytes of tensors kept f32 (op class none) */
    uint64_t weight_bytes;     /* the three above */
    uint64_t run_bytes;        /* from the options */
    uint64_t in_place_bytes;   /* resident bytes of weights used from host memory in place (of weight_bytes) */
    uint32_t n_in_place;       /* weights used in place */
    uint64_t needed_bytes;     /* what the load allocates on the device: weight_bytes - in_place_bytes + run_bytes */
    uint64_t budget_bytes;
    char budget_source[192]; /* "VT_DEVICE_WEIGHT_BUDGET_BYTES=1", "probed free ... minus ..." */
    uint64_t forced_formats; /* bit t: dtype t was expanded because the device does not admit it */
    uint32_t n_keep_quant, n_expanded, n_f32, n_forced;
    uint32_t n_largest;
    uint32_t largest[VT_FIT_LARGEST]; /* indices of the largest tensors allocated on the device, largest first */
    vt_dtype expand_dtype;            /* what weights expand to */
} vt_fit_report;

/* Plan residency and check device fit for n weights on dev. plans (n rows,
 * may be NULL) and report receive the decisions. Returns VT_OK when what
 * the load allocates on the device fits the budget (or is nothing),
 * VT_E_DOES_NOT_FIT with
 * the full message in vt_last_error otherwise, VT_E_INVALID_ARG for a bad
 * descriptor (named), VT_E_UNSUPPORTED for a block format the device does
 * not consume and vt cannot expand (named). Allocates nothing on the
 * device. */
VT_WARN_UNUSED vt_status vt_fit_plan(vt_device *dev, const vt_weight_desc *weights, size_t n,
                                     const vt_fit_options *options, vt_weight_plan *plans, vt_fit_report *report);

/* The device budget alone: the registry's (vt_registry_options.
 * weight_budget_bytes, else $VT_DEVICE_WEIGHT_BUDGET_BYTES as read when the
 * registry opened) when set, else probed free memory minus headroom (5% of
 * total or 512 MiB, the larger).
 * source (may be NULL) receives how it was derived. */
VT_WARN_UNUSED vt_status vt_fit_budget(vt_device *dev, uint64_t *budget, char *source, size_t source_size);

#ifdef __cplusplus
}
#endif
#endif /* VT_FIT_H */
