// kernels_convert.hip - the convert family of the rocm backend (SPEC 7):
// Copy (a cast between f32, f16 and bf16, element by element) and
// Dequantize (a whole block-format tensor decoded as the cpu oracle decodes
// it, rocm_quant.h).
#include "rocm_device.h"
#include "rocm_launch.h"
#include "rocm_quant.h"

namespace
{

__global__ void cast_kernel(const void *src, uint32_t st, void *dst, uint32_t dt, int64_t n)
{
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        vt_dev_store(dst, dt, i, vt_dev_load(src, st, i));
}

__global__ void dequantize_kernel(const void *src, uint32_t st, int be, int bb, void *dst, uint32_t dt, int64_t n)
{
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        vt_dev_store(dst, dt, i, vt_q_element(src, st, i, be, bb));
}

} // namespace

extern "C" hipError_t vt_rocm_launch_cast(const void *src, uint32_t src_dtype, void *dst, uint32_t dst_dtype, int64_t n,
                                          hipStream_t stream)
{
    if (n <= 0)
        return hipSuccess;
    hipLaunchKernelGGL(cast_kernel, dim3(vt_grid_for(n, VT_ROCM_BLOCK)), dim3(VT_ROCM_BLOCK), 0, stream, src, src_dtype,
                       dst, dst_dtype, n);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_dequantize(const void *src, uint32_t src_dtype, int block_elems, int block_bytes,
                                                void *dst, uint32_t dst_dtype, int64_t n, hipStream_t stream)
{
    if (n <= 0)
        return hipSuccess;
    hipLaunchKernelGGL(dequantize_kernel, dim3(vt_grid_for(n, VT_ROCM_BLOCK)), dim3(VT_ROCM_BLOCK), 0, stream, src,
                       src_dtype, block_elems, block_bytes, dst, dst_dtype, n);
    return hipGetLastError();
}
