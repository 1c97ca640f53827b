// kernels_convert.hip - the convert family of the rocm backend (SPEC 7):
// Copy (a cast between f32, f16 and bf16, element by element) and
// Dequantize (a whole block-format tensor decoded as the cpu oracle decodes
// it, rocm_quant.h; runs of 8 elements a thread, by format, where the
// output is aligned).
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

// Dequantize of block format DT into a 16-byte aligned dst of OT (f32,
// f16, bf16): one thread per run of 8 elements of a block (every block
// holds a multiple of 8), decoded by vt_q_run8 (the bits vt_block_value
// gives dequantize_kernel, the run's factor and minimum decoded once, the
// format known at compile time), then stored with two 16-byte stores (f32)
// or one (f16, bf16).
template <uint32_t DT, uint32_t OT>
__global__ void __launch_bounds__(VT_ROCM_BLOCK) dequantize_runs_kernel(const uint8_t *src, void *dst, int64_t runs)
{
    constexpr int BE = vt_block_elems(DT), BB = vt_block_bytes(DT), RUNS = BE / 8;
    static_assert(BE % 8 == 0 && BB > 0, "a block format of whole runs of 8");
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < runs; r += stride) {
        float v[8];
        vt_q_run8<DT>(src + (r / RUNS) * BB, (int)(r % RUNS) * 8, v);
        if constexpr (OT == VT_F32) {
            float4 *d = (float4 *)dst + 2 * r;
            d[0] = make_float4(v[0], v[1], v[2], v[3]);
            d[1] = make_float4(v[4], v[5], v[6], v[7]);
        } else {
            uint32_t h[4];
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const uint32_t lo = OT == VT_F16 ? vt_f32_to_f16(v[2 * u]) : vt_f32_to_bf16(v[2 * u]);
                const uint32_t hi = OT == VT_F16 ? vt_f32_to_f16(v[2 * u + 1]) : vt_f32_to_bf16(v[2 * u + 1]);
                h[u] = lo | hi << 16;
            }
            ((uint4 *)dst)[r] = make_uint4(h[0], h[1], h[2], h[3]);
        }
    }
}

// Queue dequantize_runs_kernel<DT, *> for n elements into dst of dtype dt.
template <uint32_t DT> hipError_t launch_runs(const void *src, void *dst, uint32_t dt, int64_t n, hipStream_t stream)
{
    const int64_t runs = n / 8;
    const dim3 grid(vt_grid_for(runs, VT_ROCM_BLOCK)), block(VT_ROCM_BLOCK);
    const uint8_t *s = (const uint8_t *)src;
    if (dt == VT_F32)
        hipLaunchKernelGGL((dequantize_runs_kernel<DT, VT_F32>), grid, block, 0, stream, s, dst, runs);
    else if (dt == VT_F16)
        hipLaunchKernelGGL((dequantize_runs_kernel<DT, VT_F16>), grid, block, 0, stream, s, dst, runs);
    else
        hipLaunchKernelGGL((dequantize_runs_kernel<DT, VT_BF16>), grid, block, 0, stream, s, dst, runs);
    return hipGetLastError();
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
    /* whole blocks into an aligned f32/f16/bf16 dst: runs of 8 by format */
    const bool runs = block_elems > 1 && n % block_elems == 0 && (uintptr_t)dst % 16 == 0 &&
                      (dst_dtype == VT_F32 || dst_dtype == VT_F16 || dst_dtype == VT_BF16);
    if (runs) {
        switch (src_dtype) {
#define VT_DEQ_CASE(id, f)                                                                                             \
    case id: return launch_runs<id>(src, dst, dst_dtype, n, stream);
            VT_Q_FORMATS(VT_DEQ_CASE)
#undef VT_DEQ_CASE
        default: break;
        }
    }
    hipLaunchKernelGGL(dequantize_kernel, dim3(vt_grid_for(n, VT_ROCM_BLOCK)), dim3(VT_ROCM_BLOCK), 0, stream, src,
                       src_dtype, block_elems, block_bytes, dst, dst_dtype, n);
    return hipGetLastError();
}
