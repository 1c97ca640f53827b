// kernels_gather.hip - the gather family of the rocm backend (SPEC 7):
// GetRows (rows of a f32/f16/bf16 or block-format table, decoded as the cpu
// oracle decodes them) and IndexSelect (whole rows copied as 32-bit words
// or bytes). Indices are validated on the device by the check kernels,
// queued before these.
#include "rocm_device.h"
#include "rocm_launch.h"
#include "rocm_quant.h"

namespace
{

__global__ void get_rows_kernel(const void *table, uint32_t tt, int be, int bb, const int32_t *idx, void *dst,
                                uint32_t dt, int64_t n_idx, int64_t n)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    int64_t total = n_idx * n, stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
        int64_t i = e / n, col = e % n;
        vt_dev_store(dst, dt, e, vt_q_element(table, tt, (int64_t)idx[i] * n + col, be, bb));
    }
}

template <typename W>
__global__ void index_select_kernel(const W *src, const void *idx, int wide, W *dst, int64_t outer, int64_t n_src,
                                    int64_t n_idx, int64_t row_words)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    int64_t total = outer * n_idx * row_words, stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
        int64_t w = e % row_words, j = (e / row_words) % n_idx, o = e / (row_words * n_idx);
        int64_t v = wide ? ((const int64_t *)idx)[j] : ((const int32_t *)idx)[j];
        dst[e] = src[(o * n_src + v) * row_words + w];
    }
}

} // namespace

extern "C" hipError_t vt_rocm_launch_get_rows(const void *table, uint32_t table_dtype, int block_elems, int block_bytes,
                                              const int32_t *idx, void *dst, uint32_t dst_dtype, int64_t n_idx,
                                              int64_t n, hipStream_t stream)
{
    if (n_idx <= 0 || n <= 0)
        return hipSuccess;
    VT_LAUNCH_CHAINED(get_rows_kernel, dim3(vt_grid_for(n_idx * n, VT_ROCM_BLOCK)), dim3(VT_ROCM_BLOCK), 0, stream,
                      table, table_dtype, block_elems, block_bytes, idx, dst, dst_dtype, n_idx, n);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_index_select(const void *src, const void *idx, int idx_wide, void *dst,
                                                  int64_t outer, int64_t n_src, int64_t n_idx, int64_t row_bytes,
                                                  hipStream_t stream)
{
    int64_t total = outer * n_idx * row_bytes;
    if (total <= 0)
        return hipSuccess;
    if (row_bytes % 4 == 0) {
        int64_t words = row_bytes / 4;
        VT_LAUNCH_CHAINED(index_select_kernel<uint32_t>, dim3(vt_grid_for(total / 4, VT_ROCM_BLOCK)),
                          dim3(VT_ROCM_BLOCK), 0, stream, (const uint32_t *)src, idx, idx_wide, (uint32_t *)dst, outer,
                          n_src, n_idx, words);
    } else {
        VT_LAUNCH_CHAINED(index_select_kernel<uint8_t>, dim3(vt_grid_for(total, VT_ROCM_BLOCK)), dim3(VT_ROCM_BLOCK), 0,
                          stream, (const uint8_t *)src, idx, idx_wide, (uint8_t *)dst, outer, n_src, n_idx, row_bytes);
    }
    return hipGetLastError();
}
