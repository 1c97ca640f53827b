/* rocm_slots.h - the slot rule of the rocm backend's device checks (device
 * code, included by .hip files only): a slot is -1 (skip) or a row in
 * [0, limit); a call's first offence is the lowest index that breaks it,
 * found by the whole block (vt_block_first, rocm_device.h), and is recorded into the queue's error word as
 * VT_ROCM_ERR_SLOT. check_slots_kernel (kernels_check.hip) and KvCacheWrite's
 * fused decode kernel (kernels_attention.hip) both go through these. */
#ifndef VT_ROCM_SLOTS_H
#define VT_ROCM_SLOTS_H

#include "rocm_device.h"
#include "rocm_error.h"

/* Whether slot s breaks the rule for a state of limit rows. */
__device__ inline bool vt_slot_out_of_range(int64_t s, int64_t limit)
{
    return s < -1 || s >= limit;
}

/* The first of slots[0, n) out of [-1, limit), or n (block-wide, as
 * vt_block_first: first is one shared int64). */
__device__ inline int64_t vt_slots_first_out_of_range(const int32_t *slots, int64_t n, int64_t limit, int64_t *first)
{
    return vt_block_first(
        n, [&](int64_t i) { return vt_slot_out_of_range(slots[i], limit); }, first);
}

/* Record slots[i] = slot outside [-1, limit) as op's error on operand name. */
__device__ inline void vt_slot_report(vt_rocm_err *err, uint32_t op, uint32_t name, int64_t i, int64_t slot,
                                      int64_t limit)
{
    vt_rocm_err_set(err, VT_ROCM_ERR_SLOT, op, name, i, slot, limit, 0);
}

#endif /* VT_ROCM_SLOTS_H */
