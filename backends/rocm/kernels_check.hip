// kernels_check.hip - the rocm backend's data checks, run on the device in
// the queue's order just before the kernel they guard: indices, slots and
// accepted counts. Each is one block; the first offence (the
// lowest index, as the host checks of vt 1 found it) goes into the queue's
// error word (first error of the queue wins), and each writes a "safe"
// copy of the values for the kernel it guards: the values themselves when
// the whole call is valid, else values that make that kernel do nothing
// (slot -1) or stay in range (index 0), so no kernel reads or writes out
// of range and a bad call writes no state. (GatedDeltaRule's check is
// rocm_check_gdr.h's, which its decode kernel also runs itself; MoE at one
// token and KvCacheWrite for few tokens check inside their kernels too,
// the latter with the slot rule of rocm_slots.h that check_slots_kernel uses.)
#include "rocm_check_gdr.h"
#include "rocm_device.h"
#include "rocm_error.h"
#include "rocm_launch.h"
#include "rocm_slots.h"

namespace
{

__device__ inline int64_t ld(const void *v, int wide, int64_t i)
{
    return wide ? ((const int64_t *)v)[i] : (int64_t)((const int32_t *)v)[i];
}

__device__ inline void st(void *v, int wide, int64_t i, int64_t x)
{
    if (wide)
        ((int64_t *)v)[i] = x;
    else
        ((int32_t *)v)[i] = (int32_t)x;
}

__global__ void check_range_kernel(vt_rocm_err *err, uint32_t op, uint32_t name, const void *v, int wide, int64_t n,
                                   int64_t hi, int64_t dim, void *safe)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    __shared__ int64_t first;
    int64_t f = vt_block_first(
        n,
        [&](int64_t i) {
            int64_t x = ld(v, wide, i);
            return x < 0 || x >= hi;
        },
        &first);
    if (threadIdx.x == 0 && f < n)
        vt_rocm_err_set(err, dim < 0 ? VT_ROCM_ERR_RANGE : VT_ROCM_ERR_RANGE_DIM, op, name, f, ld(v, wide, f), hi, dim);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        st(safe, wide, i, f < n ? 0 : ld(v, wide, i));
}

__global__ void check_slots_kernel(vt_rocm_err *err, uint32_t op, uint32_t name, const int32_t *s, int64_t n,
                                   int64_t limit, int unique, const int32_t *acc, int64_t acc_max, int32_t *safe)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    __shared__ int64_t first;
    auto twice = [&](int64_t i) {
        for (int64_t j = 0; j < i; j++)
            if (s[j] == s[i])
                return j;
        return i;
    };
    int64_t f = vt_block_first(
        n,
        [&](int64_t i) {
            int64_t x = s[i];
            return vt_slot_out_of_range(x, limit) || (unique && x >= 0 && twice(i) < i);
        },
        &first);
    bool bad = f < n;
    if (threadIdx.x == 0 && bad) {
        int64_t x = s[f];
        if (vt_slot_out_of_range(x, limit))
            vt_slot_report(err, op, name, f, x, limit);
        else
            vt_rocm_err_set(err, VT_ROCM_ERR_SLOT_TWICE, op, name, twice(f), f, x, 0);
    }
    if (!bad && acc) {
        int64_t g = vt_block_first(
            n, [&](int64_t b) { return s[b] >= 0 && (acc[b] < 1 || (int64_t)acc[b] > acc_max); }, &first);
        bad = g < n;
        if (threadIdx.x == 0 && bad)
            vt_rocm_err_set(err, VT_ROCM_ERR_CONV_ACCEPT, op, name, g, acc[g], acc_max, 0);
    }
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        safe[i] = bad ? -1 : s[i];
}

__global__ void check_gdr_kernel(vt_rocm_err *err, uint32_t op, const int32_t *s, const int32_t *acc, int per_token,
                                 int64_t B, int64_t T, int64_t N, int32_t *safe_s, int32_t *safe_acc)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    const bool bad = vt_gdr_check(err, true, op, s, acc, per_token, B, T, N);
    const int64_t n = per_token ? B * T : B;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        safe_s[i] = bad ? -1 : s[i];
    for (int64_t b = threadIdx.x; per_token && b < B; b += blockDim.x)
        safe_acc[b] = bad ? 1 : acc[b];
}

// A graph captured on one queue reports into that queue's word; replayed
// on another, its error moves to the replaying queue's word.
__global__ void err_move_kernel(vt_rocm_err *from, vt_rocm_err *to)
{
    uint32_t code = atomicExch(&from->code, 0u);
    if (code != 0u)
        vt_rocm_err_set(to, code, from->op, from->operand, from->a, from->b, from->c, from->d);
}

} // namespace

extern "C" hipError_t vt_rocm_launch_check_range(vt_rocm_err *err, uint32_t op, uint32_t name, const void *v, int wide,
                                                 int64_t n, int64_t hi, int64_t dim, void *safe, hipStream_t stream)
{
    if (n <= 0)
        return hipSuccess;
    VT_LAUNCH_CHAINED(check_range_kernel, dim3(1), dim3(VT_ROCM_BLOCK), 0, stream, err, op, name, v, wide, n, hi, dim,
                      safe);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_check_slots(vt_rocm_err *err, uint32_t op, uint32_t name, const int32_t *slots,
                                                 int64_t n, int64_t limit, int unique, const int32_t *accepted,
                                                 int64_t acc_max, int32_t *safe, hipStream_t stream)
{
    if (n <= 0)
        return hipSuccess;
    VT_LAUNCH_CHAINED(check_slots_kernel, dim3(1), dim3(VT_ROCM_BLOCK), 0, stream, err, op, name, slots, n, limit,
                      unique, accepted, acc_max, safe);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_check_gdr(vt_rocm_err *err, uint32_t op, const int32_t *slots,
                                               const int32_t *accepted, int per_token, int64_t B, int64_t T, int64_t N,
                                               int32_t *safe_slots, int32_t *safe_accepted, hipStream_t stream)
{
    if (B <= 0 || T <= 0)
        return hipSuccess;
    VT_LAUNCH_CHAINED(check_gdr_kernel, dim3(1), dim3(VT_ROCM_BLOCK), 0, stream, err, op, slots, accepted, per_token, B,
                      T, N, safe_slots, safe_accepted);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_err_move(vt_rocm_err *from, vt_rocm_err *to, hipStream_t stream)
{
    hipLaunchKernelGGL(err_move_kernel, dim3(1), dim3(1), 0, stream, from, to);
    return hipGetLastError();
}
