/* vt_resolve.h - op resolution: which tier runs an op on a device (SPEC 5).
 *
 * For a device, op and signature the core answers, before anything is
 * allocated:
 *   1. native   - the device's backend has a kernel;
 *   2. cpu-tier - the cpu backend's kernel on the device's own pointers,
 *                 only when the device is host-addressable and the policy
 *                 is not strict (VT_TIER_POLICY=strict or VT_RESOLVE_STRICT);
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
    uint32_t op; /* vt_op */
    vt_sig sig;
    uint32_t tier;                   /* vt_tier */
    char reason[VT_RESOLUTION_TEXT]; /* refusal message (SPEC 5 shape), or why this tier */
} vt_resolution;

/* Resolve one op. Returns VT_OK for native or cpu-tier, VT_E_OP_MISSING
 * for a refusal (the message is in out->reason and vt_last_error). */
vt_status vt_resolve(vt_device *dev, vt_op op, vt_sig sig, uint32_t flags, vt_resolution *out);

/* One op of a plan. */
typedef struct vt_plan_op {
    uint32_t op; /* vt_op */
    vt_sig sig;
} vt_plan_op;

/* Resolve a whole plan at once: results[i] for ops[i]; *n_refused counts
 * refusals. Returns VT_E_OP_MISSING when any op is refused, and then
 * vt_last_error lists every refused op, not just the first. */
vt_status vt_resolve_plan(vt_device *dev, const vt_plan_op *ops, size_t n_ops, uint32_t flags, vt_resolution *results,
                          size_t *n_refused);

/* The tier policy from the environment: VT_RESOLVE_STRICT when
 * VT_TIER_POLICY=strict, 0 when unset or "portable". An unknown value is
 * VT_E_INVALID_ARG. */
vt_status vt_tier_policy_from_env(uint32_t *flags);

#ifdef __cplusplus
}
#endif
#endif /* VT_RESOLVE_H */
