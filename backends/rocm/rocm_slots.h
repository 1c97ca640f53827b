/* rocm_slots.h - the slot rule of the rocm backend's device checks (device
 * code, included by .hip files only): a slot is -1 (skip) or a row in
 * [0, limit); a call's first offence is the lowest index that breaks it,
 * found by the whole block, and is recorded into the queue's error word as
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

/* The lowest i in [0, n) with bad(i), or n, for every thread of the block
 * (all must call it; shm holds VT_ROCM_BLOCK int64). One barrier when no
 * index is bad, else a minimum through shared memory. */
template <typename F> __device__ inline int64_t vt_block_first(int64_t n, F bad, int64_t *shm)
{
    int64_t mine = n;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        if (bad(i)) {
            mine = i;
            break;
        }
    if (!__syncthreads_or(mine < n))
        return n;
    shm[threadIdx.x] = mine;
    __syncthreads();
    for (int s = VT_ROCM_BLOCK / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s && shm[threadIdx.x + s] < shm[threadIdx.x])
            shm[threadIdx.x] = shm[threadIdx.x + s];
        __syncthreads();
    }
    int64_t r = shm[0];
    __syncthreads();
    return r;
}

/* The first of slots[0, n) out of [-1, limit), or n (block-wide, as
 * vt_block_first). */
__device__ inline int64_t vt_slots_first_out_of_range(const int32_t *slots, int64_t n, int64_t limit, int64_t *shm)
{
    return vt_block_first(
        n, [&](int64_t i) { return vt_slot_out_of_range(slots[i], limit); }, shm);
}

/* Record slots[i] = slot outside [-1, limit) as op's error on operand name. */
__device__ inline void vt_slot_report(vt_rocm_err *err, uint32_t op, uint32_t name, int64_t i, int64_t slot,
                                      int64_t limit)
{
    vt_rocm_err_set(err, VT_ROCM_ERR_SLOT, op, name, i, slot, limit, 0);
}

#endif /* VT_ROCM_SLOTS_H */
