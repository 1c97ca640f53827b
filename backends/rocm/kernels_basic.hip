// kernels_basic.hip - Copy, Add and dense MatMul kernels of the rocm backend.
// Nothing here assumes a warp size: reductions go through shared memory
// in a fixed order, so the same code is right on 64-lane CDNA and 32-lane
// RDNA / NVIDIA.
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
    hipLaunchKernelGGL(matmul_dense_kernel, dim3(grid_for(n * m, 1)), dim3(kBlock), 0, stream, x, w, w_dtype, y, n, m,
                       k);
    return hipGetLastError();
}
