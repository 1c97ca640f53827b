// kernels_basic.hip - Copy, Add and dense MatMul kernels of the rocm backend.
// Nothing here assumes a warp size: reductions go through shared memory or
// a width-32 shuffle in a fixed order, so the same code is right on 64-lane
// CDNA and 32-lane RDNA / NVIDIA.
#include "rocm_device.h"
#include "rocm_launch.h"

namespace
{

constexpr int kBlock = 256;

__global__ void cast_kernel(const void *src, uint32_t st, void *dst, uint32_t dt, int64_t n)
{
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        vt_dev_store(dst, dt, i, vt_dev_load(src, st, i));
}

__global__ void add_f32_kernel(const float *a, const float *b, float *y, int64_t n, int64_t nb)
{
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = a[i] + b[i % nb];
}

// One block per output element (grid-strided): each thread sums a strided
// slice of k, then a shared-memory tree adds the partial sums.
__global__ void matmul_dense_kernel(const float *x, const void *w, uint32_t wt, float *y, int64_t n, int64_t m,
                                    int64_t k)
{
    __shared__ float part[kBlock];
    for (int64_t o = blockIdx.x; o < n * m; o += gridDim.x) {
        int64_t r = o / m, c = o % m;
        const float *xr = x + r * k;
        float acc = 0.0f;
        for (int64_t i = threadIdx.x; i < k; i += blockDim.x)
            acc += xr[i] * vt_dev_load(w, wt, c * k + i);
        part[threadIdx.x] = acc;
        __syncthreads();
        for (int s = kBlock / 2; s > 0; s >>= 1) {
            if ((int)threadIdx.x < s)
                part[threadIdx.x] += part[threadIdx.x + s];
            __syncthreads();
        }
        if (threadIdx.x == 0)
            y[o] = part[0];
        __syncthreads();
    }
}

// The 16-byte vector v of weight type WT (f32, f16 or bf16) dotted with
// the floats at x (4 or 8 of them, 16-byte aligned).
template <uint32_t WT> __device__ inline float dot16(uint4 v, const float *x)
{
    const float4 a = *(const float4 *)x;
    if (WT == VT_F32)
        return __uint_as_float(v.x) * a.x + __uint_as_float(v.y) * a.y + __uint_as_float(v.z) * a.z +
               __uint_as_float(v.w) * a.w;
    const float4 b = *(const float4 *)(x + 4);
    const uint32_t u[4] = {v.x, v.y, v.z, v.w};
    const float xs[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const uint16_t lo = (uint16_t)(u[i] & 0xFFFF), hi = (uint16_t)(u[i] >> 16);
        const float flo = WT == VT_F16 ? vt_dev_f16_to_f32_fast(lo) : vt_bf16_to_f32(lo);
        const float fhi = WT == VT_F16 ? vt_dev_f16_to_f32_fast(hi) : vt_bf16_to_f32(hi);
        acc += flo * xs[2 * i] + fhi * xs[2 * i + 1];
    }
    return acc;
}

// Dense MatMul with 16-byte loads: one group of 32 lanes per output y[r, c]
// (grid-strided); lane l takes the vectors l, l + 32, ... of the row, and
// the partial sums meet over a fixed xor tree. Needs k a multiple of the
// vector and 16-byte aligned x and w (the launcher checks).
template <uint32_t WT>
__global__ void matmul_dense_rows_kernel(const float *x, const void *w, float *y, int64_t n, int64_t m, int64_t k)
{
    constexpr int V = WT == VT_F32 ? 4 : 8;
    const int lane = threadIdx.x & 31, groups = blockDim.x / 32;
    const int64_t vecs = k / V;
    for (int64_t o = (int64_t)blockIdx.x * groups + threadIdx.x / 32; o < n * m; o += (int64_t)gridDim.x * groups) {
        const int64_t r = o / m, c = o % m;
        const float *xr = x + r * k;
        const uint4 *wr = (const uint4 *)w + c * vecs;
        float acc = 0.0f;
        for (int64_t v = lane; v < vecs; v += 32)
            acc += dot16<WT>(wr[v], xr + v * V);
        for (int s = 16; s > 0; s >>= 1)
            acc += __shfl_xor(acc, s, 32);
        if (lane == 0)
            y[o] = acc;
    }
}

unsigned grid_for(int64_t items, int64_t per_block)
{
    int64_t g = (items + per_block - 1) / per_block;
    if (g < 1)
        g = 1;
    if (g > (1 << 20))
        g = 1 << 20;
    return (unsigned)g;
}

} // namespace

extern "C" hipError_t vt_rocm_launch_cast(const void *src, uint32_t src_dtype, void *dst, uint32_t dst_dtype, int64_t n,
                                          hipStream_t stream)
{
    if (n <= 0)
        return hipSuccess;
    hipLaunchKernelGGL(cast_kernel, dim3(grid_for(n, kBlock)), dim3(kBlock), 0, stream, src, src_dtype, dst, dst_dtype,
                       n);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_add_f32(const float *a, const float *b, float *y, int64_t n, int64_t nb,
                                             hipStream_t stream)
{
    if (n <= 0 || nb <= 0)
        return hipSuccess;
    hipLaunchKernelGGL(add_f32_kernel, dim3(grid_for(n, kBlock)), dim3(kBlock), 0, stream, a, b, y, n, nb);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_matmul_dense(const float *x, const void *w, uint32_t w_dtype, float *y, int64_t n,
                                                  int64_t m, int64_t k, hipStream_t stream)
{
    if (n <= 0 || m <= 0)
        return hipSuccess;
    int taken = 0;
    const hipError_t e = vt_rocm_launch_mmv(x, w, w_dtype, y, n, m, k, stream, &taken);
    if (taken || e != hipSuccess)
        return e;
    const int vec = w_dtype == VT_F32 ? 4 : 8;
    if (k % vec == 0 && (uintptr_t)x % 16 == 0 && (uintptr_t)w % 16 == 0) {
        const unsigned grid = grid_for(n * m, kBlock / 32);
        if (w_dtype == VT_F16)
            hipLaunchKernelGGL(matmul_dense_rows_kernel<VT_F16>, dim3(grid), dim3(kBlock), 0, stream, x, w, y, n, m, k);
        else if (w_dtype == VT_BF16)
            hipLaunchKernelGGL(matmul_dense_rows_kernel<VT_BF16>, dim3(grid), dim3(kBlock), 0, stream, x, w, y, n, m,
                               k);
        else
            hipLaunchKernelGGL(matmul_dense_rows_kernel<VT_F32>, dim3(grid), dim3(kBlock), 0, stream, x, w, y, n, m, k);
        return hipGetLastError();
    }
    hipLaunchKernelGGL(matmul_dense_kernel, dim3(grid_for(n * m, 1)), dim3(kBlock), 0, stream, x, w, w_dtype, y, n, m,
                       k);
    return hipGetLastError();
}
