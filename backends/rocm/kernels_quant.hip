// kernels_quant.hip - block-format kernels of the rocm backend: Dequantize,
// the block-decoding gather (GetRows), MatMul over a block-format weight and
// MoeExpertMatMul. Elements are decoded as the cpu oracle decodes them
// (rocm_quant.h); sums over k meet in a fixed order (a shuffle tree for the
// block formats, shared memory for the float types).
#include "rocm_device.h"
#include "rocm_launch.h"
#include "rocm_quant.h"

namespace
{

__global__ void dequantize_kernel(const void *src, uint32_t st, int be, int bb, void *dst, uint32_t dt, int64_t n)
{
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        vt_dev_store(dst, dt, i, vt_q_element(src, st, i, be, bb));
}

__global__ void get_rows_kernel(const void *table, uint32_t tt, int be, int bb, const int32_t *idx, void *dst,
                                uint32_t dt, int64_t n_idx, int64_t n)
{
    int64_t total = n_idx * n, stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
        int64_t i = e / n, col = e % n;
        vt_dev_store(dst, dt, e, vt_q_element(table, tt, (int64_t)idx[i] * n + col, be, bb));
    }
}

// The dot of a row x[0..k) with one block-format weight row w (k / be
// blocks of bb bytes), by a group of 32 lanes: lane l takes the 32-element
// sub-blocks l, l + 32, ...; the partial sums then meet over a fixed xor
// tree. DT is the block format, fixed at compile time so the decoder's
// switch folds away; every lane of the group returns the same sum.
template <uint32_t DT>
__device__ inline float q_row_dot(const float *x, const uint8_t *w, int64_t k, int be, int bb, int lane)
{
    const int subs = be / 32;
    const int64_t units = k / 32;
    float acc = 0.0f;
    for (int64_t u = lane; u < units; u += 32) {
        const uint8_t *blk = w + (u / subs) * bb;
        const int j0 = (int)(u % subs) * 32;
        const float4 *xu = (const float4 *)(x + u * 32); /* x rows are 16-byte aligned (launcher) */
#pragma unroll
        for (int l = 0; l < 32; l += 4) {
            const float4 xv = xu[l / 4];
            acc += xv.x * vt_q_value(DT, blk, j0 + l) + xv.y * vt_q_value(DT, blk, j0 + l + 1) +
                   xv.z * vt_q_value(DT, blk, j0 + l + 2) + xv.w * vt_q_value(DT, blk, j0 + l + 3);
        }
    }
    for (int s = 16; s > 0; s >>= 1)
        acc += __shfl_xor(acc, s, 32);
    return acc;
}

// MatMul over a block-format weight: one group of 32 lanes per output
// y[r, c] (grid-strided), VT_ROCM_BLOCK / 32 outputs per block.
template <uint32_t DT>
__global__ void matmul_q_rows_kernel(const float *x, const uint8_t *w, int be, int bb, float *y, int64_t n, int64_t m,
                                     int64_t k)
{
    const int lane = threadIdx.x & 31, groups = blockDim.x / 32;
    const int64_t row_bytes = k / be * bb;
    for (int64_t o = (int64_t)blockIdx.x * groups + threadIdx.x / 32; o < n * m; o += (int64_t)gridDim.x * groups) {
        const int64_t r = o / m, c = o % m;
        float acc = q_row_dot<DT>(x + r * k, w + c * row_bytes, k, be, bb, lane);
        if (lane == 0)
            y[o] = acc;
    }
}

// y[t, i, c] = W[ids[t, i], c, :] . x[t] (or x[t, i]), as matmul_q_rows_kernel.
template <uint32_t DT>
__global__ void moe_matmul_q_rows_kernel(const float *x, int x_per_slot, const uint8_t *w, int be, int bb,
                                         const int32_t *ids, float *y, int64_t T, int64_t K, int64_t m, int64_t k)
{
    const int lane = threadIdx.x & 31, groups = blockDim.x / 32;
    const int64_t row_bytes = k / be * bb;
    for (int64_t o = (int64_t)blockIdx.x * groups + threadIdx.x / 32; o < T * K * m; o += (int64_t)gridDim.x * groups) {
        const int64_t c = o % m, ti = o / m, t = ti / K;
        const float *xr = x + (x_per_slot ? ti : t) * k;
        float acc = q_row_dot<DT>(xr, w + ((int64_t)ids[ti] * m + c) * row_bytes, k, be, bb, lane);
        if (lane == 0)
            y[o] = acc;
    }
}

// The generic kernels, for the float types: one block per output
// (grid-strided), threads take strided k.
__global__ void matmul_q_kernel(const float *x, const void *w, uint32_t wt, int be, int bb, float *y, int64_t n,
                                int64_t m, int64_t k)
{
    __shared__ float shm[VT_ROCM_BLOCK];
    for (int64_t o = blockIdx.x; o < n * m; o += gridDim.x) {
        int64_t r = o / m, c = o % m;
        const float *xr = x + r * k;
        float acc = 0.0f;
        for (int64_t i = threadIdx.x; i < k; i += blockDim.x)
            acc += xr[i] * vt_q_element(w, wt, c * k + i, be, bb);
        acc = vt_block_sum(acc, shm);
        if (threadIdx.x == 0)
            y[o] = acc;
    }
}

__global__ void moe_matmul_kernel(const float *x, int x_per_slot, const void *w, uint32_t wt, int be, int bb,
                                  const int32_t *ids, float *y, int64_t T, int64_t K, int64_t m, int64_t k)
{
    __shared__ float shm[VT_ROCM_BLOCK];
    for (int64_t o = blockIdx.x; o < T * K * m; o += gridDim.x) {
        int64_t c = o % m, ti = o / m, t = ti / K;
        int64_t e = ids[ti];
        const float *xr = x + (x_per_slot ? ti : t) * k;
        int64_t base = (e * m + c) * k;
        float acc = 0.0f;
        for (int64_t i = threadIdx.x; i < k; i += blockDim.x)
            acc += xr[i] * vt_q_element(w, wt, base + i, be, bb);
        acc = vt_block_sum(acc, shm);
        if (threadIdx.x == 0)
            y[o] = acc;
    }
}

unsigned out_grid(int64_t outputs)
{
    return (unsigned)(outputs < (1 << 20) ? (outputs > 0 ? outputs : 1) : (1 << 20));
}

// The block formats of SPEC 7 by vt_dtype id (rocm_quant.h decodes them).
#define VT_ROCM_Q_FORMATS(X) X(2) X(3) X(6) X(7) X(8) X(10) X(11) X(12) X(13) X(14) X(20) X(23) X(39)

} // namespace

extern "C" hipError_t vt_rocm_launch_dequantize(const void *src, uint32_t src_dtype, int block_elems, int block_bytes,
                                                void *dst, uint32_t dst_dtype, int64_t n, hipStream_t stream)
{
    if (n <= 0)
        return hipSuccess;
    hipLaunchKernelGGL(dequantize_kernel, dim3(vt_grid_for(n, VT_ROCM_BLOCK)), dim3(VT_ROCM_BLOCK), 0, stream, src,
                       src_dtype, block_elems, block_bytes, dst, dst_dtype, n);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_get_rows(const void *table, uint32_t table_dtype, int block_elems, int block_bytes,
                                              const int32_t *idx, void *dst, uint32_t dst_dtype, int64_t n_idx,
                                              int64_t n, hipStream_t stream)
{
    if (n_idx <= 0 || n <= 0)
        return hipSuccess;
    hipLaunchKernelGGL(get_rows_kernel, dim3(vt_grid_for(n_idx * n, VT_ROCM_BLOCK)), dim3(VT_ROCM_BLOCK), 0, stream,
                       table, table_dtype, block_elems, block_bytes, idx, dst, dst_dtype, n_idx, n);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_matmul_q(const float *x, const void *w, uint32_t w_dtype, int block_elems,
                                              int block_bytes, float *y, int64_t n, int64_t m, int64_t k,
                                              hipStream_t stream)
{
    if (n <= 0 || m <= 0)
        return hipSuccess;
    const unsigned grid = out_grid((n * m + VT_ROCM_BLOCK / 32 - 1) / (VT_ROCM_BLOCK / 32));
    switch ((uintptr_t)x % 16 == 0 ? w_dtype : 0) {
#define VT_ROCM_MATMUL_Q(DT)                                                                                           \
    case DT:                                                                                                           \
        hipLaunchKernelGGL(matmul_q_rows_kernel<DT>, dim3(grid), dim3(VT_ROCM_BLOCK), 0, stream, x,                    \
                           (const uint8_t *)w, block_elems, block_bytes, y, n, m, k);                                  \
        return hipGetLastError();
        VT_ROCM_Q_FORMATS(VT_ROCM_MATMUL_Q)
#undef VT_ROCM_MATMUL_Q
    }
    hipLaunchKernelGGL(matmul_q_kernel, dim3(out_grid(n * m)), dim3(VT_ROCM_BLOCK), 0, stream, x, w, w_dtype,
                       block_elems, block_bytes, y, n, m, k);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_moe_matmul(const float *x, int x_per_slot, const void *w, uint32_t w_dtype,
                                                int block_elems, int block_bytes, const int32_t *ids, float *y,
                                                int64_t T, int64_t K, int64_t m, int64_t k, hipStream_t stream)
{
    if (T <= 0 || K <= 0 || m <= 0)
        return hipSuccess;
    const unsigned grid = out_grid((T * K * m + VT_ROCM_BLOCK / 32 - 1) / (VT_ROCM_BLOCK / 32));
    switch ((uintptr_t)x % 16 == 0 ? w_dtype : 0) {
#define VT_ROCM_MOE_Q(DT)                                                                                              \
    case DT:                                                                                                           \
        hipLaunchKernelGGL(moe_matmul_q_rows_kernel<DT>, dim3(grid), dim3(VT_ROCM_BLOCK), 0, stream, x, x_per_slot,    \
                           (const uint8_t *)w, block_elems, block_bytes, ids, y, T, K, m, k);                          \
        return hipGetLastError();
        VT_ROCM_Q_FORMATS(VT_ROCM_MOE_Q)
#undef VT_ROCM_MOE_Q
    }
    hipLaunchKernelGGL(moe_matmul_kernel, dim3(out_grid(T * K * m)), dim3(VT_ROCM_BLOCK), 0, stream, x, x_per_slot, w,
                       w_dtype, block_elems, block_bytes, ids, y, T, K, m, k);
    return hipGetLastError();
}
