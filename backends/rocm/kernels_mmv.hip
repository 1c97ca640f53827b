// kernels_mmv.hip - the entry points of the decode MatMul and
// MoeExpertMatMul (kernels_mmv.h): which weights they take, and the family
// file (kernels_mmv_<family>.hip, one translation unit each so the device
// compiler runs on them in parallel) whose kernels run them.
#include "kernels_mmv.h"

namespace vt_mmv
{

// Lanes per wavefront of the current device, for sizing grids (NVIDIA: 32).
int host_wave()
{
#if defined(VT_HIP_PLATFORM_NVIDIA)
    return 32;
#else
    static std::atomic<int> cached[64];
    int dev = 0;
    if (hipGetDevice(&dev) != hipSuccess || dev < 0 || dev >= 64)
        return 64;
    return vt_rocm_memo(cached[dev], [dev] {
        int ws = 64;
        if (hipDeviceGetAttribute(&ws, hipDeviceAttributeWarpSize, dev) != hipSuccess || ws <= 0)
            ws = 64;
        return ws;
    });
#endif
}

namespace
{

// Bytes of a row of k elements of dtype dt (0: not a dtype of these kernels
// or k not a whole number of blocks).
int64_t row_bytes_of(uint32_t dt, int64_t k)
{
    const int be = blk_elems(dt), bb = blk_bytes(dt);
    if (bb == 0 || k % be != 0)
        return 0;
    return k / be * bb;
}

// Run a through the family that holds dt; *taken = 0 when none does.
hipError_t dispatch(uint32_t dt, const Args &a, int *taken)
{
    const bool aligned = (uintptr_t)a.w % 16 == 0 && a.row_bytes % 16 == 0;
    hipError_t e = run_dense(dt, a, aligned, taken);
    if (!*taken)
        e = run_q4(dt, a, aligned, taken);
    if (!*taken)
        e = run_q8(dt, a, aligned, taken);
    if (!*taken)
        e = run_kq(dt, a, aligned, taken);
    if (!*taken)
        e = run_other(dt, a, aligned, taken);
    if (!*taken)
        e = run_other_k(dt, a, aligned, taken);
    return e;
}

} // namespace
} // namespace vt_mmv

// The decode products for MatMul (f32 x [n, k] against W [m, k] of
// w_dtype): *taken = 0 when the shapes or alignments do not fit (the caller
// then launches its own kernel).
extern "C" hipError_t vt_rocm_launch_mmv(const float *x, const void *w, uint32_t w_dtype, float *y, int64_t n,
                                         int64_t m, int64_t k, hipStream_t stream, int *taken)
{
    *taken = 0;
    const bool dense = w_dtype == VT_F32 || w_dtype == VT_F16 || w_dtype == VT_BF16;
    {
        /* matrix instructions where the target has them (kernels_mmv_mma.hip) */
        const int64_t rb = vt_mmv::row_bytes_of(w_dtype, k);
        if (n > 0 && m > 0 && k > 0 && rb != 0) {
            const vt_mmv::Args a = {x, 0, (const uint8_t *)w, rb, nullptr, y, n, 1, m, k, stream};
            const hipError_t e = vt_mmv::run_mma(w_dtype, a, taken);
            if (*taken || e != hipSuccess)
                return e;
        }
    }
    /* Measured on the H200 (BENCHMARKS.md): the first kernels are faster for
     * the float types where the above does not take them, for q4_k at n = 1
     * and iq4_nl at n <= 2. */
    if (dense || (w_dtype == VT_Q4_K && n == 1) || (w_dtype == VT_IQ4_NL && n <= 2)) {
        const hipError_t e = vt_mmv::run_v1(x, w, w_dtype, y, n, m, k, stream, taken);
        if (*taken || e != hipSuccess)
            return e;
    }
    const int64_t rb = vt_mmv::row_bytes_of(w_dtype, k);
    if (n <= 0 || m <= 0 || k <= 0 || rb == 0 || (uintptr_t)x % 16 != 0 || k % 8 != 0)
        return hipSuccess;
    const vt_mmv::Args a = {x, 0, (const uint8_t *)w, rb, nullptr, y, n, 1, m, k, stream};
    return vt_mmv::dispatch(w_dtype, a, taken);
}

// The same for MoeExpertMatMul (W [E, m, k]; ids [T, K] already checked).
extern "C" hipError_t vt_rocm_launch_mmv_moe(const float *x, int x_per_slot, const void *w, uint32_t w_dtype,
                                             const int32_t *ids, float *y, int64_t T, int64_t K, int64_t m, int64_t k,
                                             hipStream_t stream, int *taken)
{
    *taken = 0;
    if (T == 1) { /* the first kernels are faster at one token (BENCHMARKS.md) */
        const hipError_t e = vt_mmv::run_v1_moe1(x, x_per_slot, w, w_dtype, ids, y, K, m, k, stream, taken);
        if (*taken || e != hipSuccess)
            return e;
    }
    const int64_t rb = vt_mmv::row_bytes_of(w_dtype, k);
    if (T <= 0 || K <= 0 || m <= 0 || k <= 0 || T * K > 65535 || rb == 0 || (uintptr_t)x % 16 != 0 || k % 8 != 0)
        return hipSuccess;
    const vt_mmv::Args a = {x, x_per_slot, (const uint8_t *)w, rb, ids, y, T, K, m, k, stream};
    return vt_mmv::dispatch(w_dtype, a, taken);
}
