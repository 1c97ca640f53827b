// kernels_state.hip - gathers, caches and attention of the rocm backend:
// IndexSelect, KvCacheWrite, Attention (online softmax over key chunks)
// and DsaIndexerLogits. Indices are validated on the host before launch.
#include "rocm_device.h"
#include "rocm_launch.h"

namespace
{

template <typename W>
__global__ void index_select_kernel(const W *src, const void *idx, int wide, W *dst, int64_t outer, int64_t n_src,
                                    int64_t n_idx, int64_t row_words)
{
    int64_t total = outer * n_idx * row_words, stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
        int64_t w = e % row_words, j = (e / row_words) % n_idx, o = e / (row_words * n_idx);
        int64_t v = wide ? ((const int64_t *)idx)[j] : ((const int32_t *)idx)[j];
        dst[e] = src[(o * n_src + v) * row_words + w];
    }
}

__global__ void kv_write_kernel(const float *k, const int32_t *slots, void *cache, uint32_t dtype, int64_t T, int64_t n)
{
    int64_t total = T * n, stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
        int64_t t = e / n, i = e % n;
        int32_t slot = slots[t];
        if (slot >= 0)
            vt_dev_store(cache, dtype, (int64_t)slot * n + i, k[e]);
    }
}

// One block per (query, head). Keys in chunks of VT_ROCM_BLOCK: each thread
// scores one key, the block keeps a running max and sum (online softmax),
// and threads accumulate the output dims in shared memory.
__global__ void attention_kernel(const float *q, const void *k, const void *v, uint32_t kv_dtype, const int32_t *pos,
                                 float *o, int64_t T, int64_t Hq, int64_t Hkv, int64_t S, int64_t d, int64_t dv,
                                 float scale, int32_t window)
{
    extern __shared__ float dyn[];
    float *acc = dyn;       // dv
    float *prob = dyn + dv; // VT_ROCM_BLOCK
    __shared__ float shm[VT_ROCM_BLOCK];
    int64_t group = Hq / Hkv;
    for (int64_t th = blockIdx.x; th < T * Hq; th += gridDim.x) {
        int64_t t = th / Hq, h = th % Hq, kvh = h / group;
        int64_t p = pos[t];
        int64_t lo = window > 0 ? p - window + 1 : 0, hi = p < S - 1 ? p : S - 1;
        if (lo < 0)
            lo = 0;
        for (int64_t j = threadIdx.x; j < dv; j += blockDim.x)
            acc[j] = 0.0f;
        __syncthreads();
        float m = -INFINITY, l = 0.0f;
        const float *qv = q + (t * Hq + h) * d;
        for (int64_t c0 = lo; c0 <= hi; c0 += VT_ROCM_BLOCK) {
            int64_t s = c0 + threadIdx.x;
            float score = -INFINITY;
            if (s <= hi) {
                float dot = 0.0f;
                for (int64_t i = 0; i < d; i++)
                    dot += qv[i] * vt_dev_load(k, kv_dtype, (s * Hkv + kvh) * d + i);
                score = dot * scale;
            }
            float cmax = vt_block_max(score, shm);
            float nm = fmaxf(m, cmax);
            float factor = m == -INFINITY ? 0.0f : expf(m - nm);
            float ps = score == -INFINITY ? 0.0f : expf(score - nm);
            prob[threadIdx.x] = ps;
            float csum = vt_block_sum(ps, shm); // also orders the prob writes before the reads below
            l = l * factor + csum;
            int64_t n_here = hi - c0 + 1 < VT_ROCM_BLOCK ? hi - c0 + 1 : VT_ROCM_BLOCK;
            for (int64_t j = threadIdx.x; j < dv; j += blockDim.x) {
                float a = acc[j] * factor;
                for (int64_t u = 0; u < n_here; u++)
                    a += prob[u] * vt_dev_load(v, kv_dtype, ((c0 + u) * Hkv + kvh) * dv + j);
                acc[j] = a;
            }
            m = nm;
            __syncthreads();
        }
        for (int64_t j = threadIdx.x; j < dv; j += blockDim.x)
            o[(t * Hq + h) * dv + j] = l > 0.0f ? acc[j] / l : 0.0f; // no visible key: zeros
        __syncthreads();
    }
}

__global__ void dsa_kernel(const float *q, const void *k, uint32_t k_dtype, const float *w, const int32_t *start,
                           const int32_t *end, float *logits, int64_t T, int64_t H, int64_t d, int64_t S)
{
    int64_t total = T * S, stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
        int64_t t = e / S, s = e % S;
        if (s < start[t] || s >= end[t]) {
            logits[e] = -INFINITY;
            continue;
        }
        float sum = 0.0f;
        for (int64_t h = 0; h < H; h++) {
            const float *qv = q + (t * H + h) * d;
            float dot = 0.0f;
            for (int64_t i = 0; i < d; i++)
                dot += qv[i] * vt_dev_load(k, k_dtype, s * d + i);
            sum += w[t * H + h] * fmaxf(dot, 0.0f);
        }
        logits[e] = sum;
    }
}

} // namespace

extern "C" hipError_t vt_rocm_launch_index_select(const void *src, const void *idx, int idx_wide, void *dst,
                                                  int64_t outer, int64_t n_src, int64_t n_idx, int64_t row_bytes,
                                                  hipStream_t stream)
{
    int64_t total = outer * n_idx * row_bytes;
    if (total <= 0)
        return hipSuccess;
    if (row_bytes % 4 == 0) {
        int64_t words = row_bytes / 4;
        hipLaunchKernelGGL(index_select_kernel<uint32_t>, dim3(vt_grid_for(total / 4, VT_ROCM_BLOCK)),
                           dim3(VT_ROCM_BLOCK), 0, stream, (const uint32_t *)src, idx, idx_wide, (uint32_t *)dst, outer,
                           n_src, n_idx, words);
    } else {
        hipLaunchKernelGGL(index_select_kernel<uint8_t>, dim3(vt_grid_for(total, VT_ROCM_BLOCK)), dim3(VT_ROCM_BLOCK),
                           0, stream, (const uint8_t *)src, idx, idx_wide, (uint8_t *)dst, outer, n_src, n_idx,
                           row_bytes);
    }
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_kv_write(const float *k, const int32_t *slots, void *cache, uint32_t cache_dtype,
                                              int64_t T, int64_t n, hipStream_t stream)
{
    if (T <= 0 || n <= 0)
        return hipSuccess;
    hipLaunchKernelGGL(kv_write_kernel, dim3(vt_grid_for(T * n, VT_ROCM_BLOCK)), dim3(VT_ROCM_BLOCK), 0, stream, k,
                       slots, cache, cache_dtype, T, n);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_attention(const float *q, const void *k, const void *v, uint32_t kv_dtype,
                                               const int32_t *pos, float *o, int64_t T, int64_t Hq, int64_t Hkv,
                                               int64_t S, int64_t d, int64_t dv, float scale, int32_t window,
                                               hipStream_t stream)
{
    if (T <= 0 || Hq <= 0 || dv <= 0)
        return hipSuccess;
    size_t shm = (size_t)(dv + VT_ROCM_BLOCK) * sizeof(float);
    unsigned grid = (unsigned)(T * Hq < 65535 ? T * Hq : 65535);
    hipLaunchKernelGGL(attention_kernel, dim3(grid), dim3(VT_ROCM_BLOCK), shm, stream, q, k, v, kv_dtype, pos, o, T, Hq,
                       Hkv, S, d, dv, scale, window);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_dsa_logits(const float *q, const void *k, uint32_t k_dtype, const float *w,
                                                const int32_t *start, const int32_t *end, float *logits, int64_t T,
                                                int64_t H, int64_t d, int64_t S, hipStream_t stream)
{
    if (T <= 0 || S <= 0)
        return hipSuccess;
    hipLaunchKernelGGL(dsa_kernel, dim3(vt_grid_for(T * S, VT_ROCM_BLOCK)), dim3(VT_ROCM_BLOCK), 0, stream, q, k,
                       k_dtype, w, start, end, logits, T, H, d, S);
    return hipGetLastError();
}
