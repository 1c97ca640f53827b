/* vt_resolve.h - op resolution: which tier runs an op on a device (SPEC 5).
 *
 * For a device, op and signature the core answers, before anything is
 * allocated:
 *   1. native   - the device's backend has a kernel;
 *   2. cpu-tier - the cpu backend's kernel on the device's own pointers,
 *                 only when the device is host-addressable and the policy
 *                 is not strict (the registry's tier policy, fixed at open
 *                 from VT_TIER_POLICY or vt_registry_options, or the call's
 *                 VT_RESOLVE_STRICT);
 *   3. refused  - VT_E_OP_MISSING with a message naming the op, its id, the
 *                 device, its type number, the signature and the reason.
 * Use of the CPU tier is counted per device (vt_device_stats_get). */
#ifndef VT_RESOLVE_H
#define VT_RESOLVE_H

#include <stddef.h>
#include <stdint.h>

#include <vt/vt_op.h>
#include <vt/vt_registry.h>
#include <vt/vt_status.h>
#include <vt/vt_tensor.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vt_tier { VT_TIER_NATIVE = 0, VT_TIER_CPU = 1, VT_TIER_REFUSED = 2 } vt_tier;

/* "native", "cpu-tier", "refused". */
const char *vt_tier_name(int tier);

/* Refuse the portable CPU tier whatever the device (strict mode). */
#define VT_RESOLVE_STRICT 0x1u

#define VT_RESOLUTION_TEXT 768

/* The verdict for one (op, signature) on one device. */
typedef struct vt_resolution {
    vt_op op;
    vt_sig sig;
    uint32_t tier;                   /* vt_tier */
    char reason[VT_RESOLUTION_TEXT]; /* refusal message (SPEC 5 shape), or why this tier */
    /* ---- appended in version 2: what vt_op_enqueue_resolved runs ---- */
    vt_device *device;       /* the device it was resolved for */
    const vt_kernel *kernel; /* the chosen kernel (the device's, or the cpu backend's for
                                the CPU tier), valid until the registry closes; NULL when refused */
    uint32_t flags;          /* the effective VT_RESOLVE_* flags (registry policy included) */
    uint32_t shapes_checked; /* 1 when resolved with shapes (vt_resolve_call: accepts was asked) */
} vt_resolution;

/* Shape and dtype of one operand, for resolving before anything is
 * allocated (vt_resolve_call). */
typedef struct vt_shape {
    vt_dtype dtype;
    uint32_t ndim;              /* 0..4 */
    int64_t shape[VT_MAX_DIMS]; /* row-major, innermost last */
} vt_shape;

/* Resolve one op. Returns VT_OK for native or cpu-tier, VT_E_OP_MISSING
 * for a refusal (the message is in out->reason and vt_last_error). */
VT_WARN_UNUSED vt_status vt_resolve(vt_device *dev, vt_op op, vt_sig sig, uint32_t flags, vt_resolution *out);

/* Resolve one call with its operand shapes (NULL for an absent optional
 * input), before anything is allocated: the shapes, dtypes and params size
 * are checked against the catalogue, the tier is chosen as vt_resolve does,
 * and the native kernel's accepts predicate (when the backend has one) is
 * asked; a kernel that does not accept these shapes is not native (the
 * reason names its limit) and the CPU tier rules apply. Returns VT_OK,
 * VT_E_SHAPE / VT_E_INVALID_ARG for bad operands, or VT_E_OP_MISSING. */
VT_WARN_UNUSED vt_status vt_resolve_call(vt_device *dev, vt_op op, const vt_shape *const *in, uint32_t n_in,
                                         const vt_shape *const *out, uint32_t n_out, const void *params,
                                         size_t params_size, uint32_t flags, vt_resolution *res);

/* The shape of a tensor, for vt_resolve_call. */
vt_shape vt_tensor_shape(const vt_tensor *t);

/* One op of a plan. */
typedef struct vt_plan_op {
    vt_op op;
    vt_sig sig;
} vt_plan_op;

/* Resolve a whole plan at once: results[i] for ops[i]; *n_refused counts
 * refusals. Returns VT_E_OP_MISSING when any op is refused, and then
 * vt_last_error lists every refused op, not just the first. */
VT_WARN_UNUSED vt_status vt_resolve_plan(vt_device *dev, const vt_plan_op *ops, size_t n_ops, uint32_t flags,
                                         vt_resolution *results, size_t *n_refused);

/* The tier policy from the environment: VT_RESOLVE_STRICT when
 * VT_TIER_POLICY=strict, 0 when unset or "portable". An unknown value is
 * VT_E_INVALID_ARG. A registry reads it once, at open, unless its options
 * set the policy; tools and engines ask the registry
 * (vt_registry_tier_policy_get), not the environment. */
VT_WARN_UNUSED vt_status vt_tier_policy_from_env(uint32_t *flags);

#ifdef __cplusplus
}
#endif
#endif /* VT_RESOLVE_H */
