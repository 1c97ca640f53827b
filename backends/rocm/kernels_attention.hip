// kernels_attention.hip - the attention family of the rocm backend (SPEC 7):
// KvCacheWrite, Attention (decode: split over chunks of keys and combined;
// many queries: one block per head, online softmax over key chunks) and
// DsaIndexerLogits. GatedDeltaRule, of the same family, is in
// kernels_attention_gdn.hip. Slots are validated before launch.
#include "rocm_device.h"
#include "rocm_launch.h"
#include "rocm_slots.h"

namespace
{

__global__ void kv_write_kernel(const float *k, const int32_t *slots, void *cache, uint32_t dtype, int64_t T, int64_t n)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    int64_t total = T * n, stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
        int64_t t = e / n, i = e % n;
        int32_t slot = slots[t];
        if (slot >= 0)
            vt_dev_store(cache, dtype, (int64_t)slot * n + i, k[e]);
    }
}

// KvCacheWrite of K and V in one launch, for few tokens (decode): every
// block checks all T slots itself with the rule of check_slots_kernel
// (rocm_slots.h: the same test, the same block-wide first-offence search;
// block 0 records it), and writes its share of the K and V rows only when
// every slot is valid, so a bad call writes no state. Saves the check
// kernel and the second write.
__global__ void kv_write_checked_kernel(vt_rocm_err *err, uint32_t op, const int32_t *slots, int64_t limit,
                                        const float *k, const float *v, void *kc, void *vc, uint32_t dtype, int64_t T,
                                        int64_t nk, int64_t nv)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    __shared__ int64_t first_slot;
    const int64_t first = vt_slots_first_out_of_range(slots, T, limit, &first_slot);
    if (first < T) {
        if (blockIdx.x == 0 && threadIdx.x == 0)
            vt_slot_report(err, op, VT_ROCM_NAME_SLOTS, first, slots[first], limit);
        return;
    }
    const int64_t total = T * (nk + nv), stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
        const bool is_k = e < T * nk;
        const int64_t n = is_k ? nk : nv, r = is_k ? e : e - T * nk, t = r / n, i = r % n;
        const int32_t slot = slots[t];
        if (slot >= 0)
            vt_dev_store(is_k ? kc : vc, dtype, (int64_t)slot * n + i, (is_k ? k : v)[r]);
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

// Attention for few queries (decode), split over the keys: one block per
// (query, kv head, chunk of C keys) serves the G = Hq/Hkv query heads that
// read that kv head. The chunk's keys are staged in shared memory with
// coalesced loads, scored against the G queries, turned into the chunk's
// softmax partial (max m, sum l) and, after the values replace the keys in
// shared memory, into the chunk's unnormalised output; attention_combine
// merges the chunks. Chunks outside the visible keys write m = -inf.
// Row stride (floats) of the staged keys and values: a multiple of 4 (16-byte
// loads) that is 4 mod 32, so rows fall on different banks.
__host__ __device__ inline int64_t split_ld(int64_t d, int64_t dv)
{
    int64_t m = d > dv ? d : dv;
    return (m + 3) / 4 * 4 + 4;
}

template <uint32_t DT> __device__ inline float kv_at(const void *p, int64_t i)
{
    if (DT == VT_F16)
        return vt_dev_f16_to_f32_fast(((const uint16_t *)p)[i]);
    if (DT == VT_BF16)
        return vt_bf16_to_f32(((const uint16_t *)p)[i]);
    return ((const float *)p)[i];
}

// rows [s0, s0 + n) of one kv head into sh (row stride ld floats).
template <uint32_t DT>
__device__ inline void stage_rows(const void *src, int64_t s0, int64_t n, int64_t Hkv, int64_t kvh, int64_t dim,
                                  float *sh, int64_t ld)
{
    if (DT != VT_F32 && dim % 8 == 0 && ((uintptr_t)src & 15) == 0) { // 16-byte loads of 8 halves
        int64_t per_row = dim / 8;
        for (int64_t e = threadIdx.x; e < n * per_row; e += blockDim.x) {
            int64_t r = e / per_row, c = (e % per_row) * 8;
            uint4 u = *(const uint4 *)((const uint16_t *)src + ((s0 + r) * Hkv + kvh) * dim + c);
            const uint16_t *hv = (const uint16_t *)&u;
            for (int i = 0; i < 8; i++)
                sh[r * ld + c + i] = DT == VT_F16 ? vt_dev_f16_to_f32_fast(hv[i]) : vt_bf16_to_f32(hv[i]);
        }
        return;
    }
    for (int64_t e = threadIdx.x; e < n * dim; e += blockDim.x) {
        int64_t r = e / dim, c = e % dim;
        sh[r * ld + c] = kv_at<DT>(src, ((s0 + r) * Hkv + kvh) * dim + c);
    }
}

// Tree reduction over the C (a power of two) entries of each of G rows of
// a (max when is_max, else sum) into out[G]; tmp holds G * C floats.
__device__ inline void rows_reduce(const float *a, float *tmp, int64_t G, int64_t C, bool is_max, float *out)
{
    for (int64_t e = threadIdx.x; e < G * C; e += blockDim.x)
        tmp[e] = a[e];
    __syncthreads();
    for (int64_t st = C / 2; st > 0; st >>= 1) {
        for (int64_t e = threadIdx.x; e < G * st; e += blockDim.x) {
            int64_t h = e / st, i = e % st;
            float x = tmp[h * C + i], y = tmp[h * C + i + st];
            tmp[h * C + i] = is_max ? fmaxf(x, y) : x + y;
        }
        __syncthreads();
    }
    for (int64_t h = threadIdx.x; h < G; h += blockDim.x)
        out[h] = tmp[h * C];
    __syncthreads();
}

template <uint32_t DT>
__global__ void attention_split_kernel(const float *q, const void *k, const void *v, const int32_t *pos, float *part_o,
                                       float *part_ml, int64_t Hq, int64_t Hkv, int64_t S, int64_t d, int64_t dv,
                                       float scale, int32_t window, int64_t C, int64_t n_split)
{
    extern __shared__ float4 dyn4[]; // 16-byte aligned
    float *dyn = (float *)dyn4;
    int64_t G = Hq / Hkv, ld = split_ld(d, dv);
    float *rows = dyn;         // C * ld: keys, then values
    float *qs = rows + C * ld; // G * d
    float *sc = qs + G * d;    // G * C: scores, then probabilities
    float *tmp = sc + G * C;   // G * C
    float *ml = tmp + G * C;   // 2 * G
    int64_t split = blockIdx.x % n_split, kvh = (blockIdx.x / n_split) % Hkv, t = blockIdx.x / (n_split * Hkv);
    int64_t p = pos[t];
    int64_t lo = window > 0 ? p - window + 1 : 0, hi = p < S - 1 ? p : S - 1;
    if (lo < 0)
        lo = 0;
    int64_t s0 = split * C, s1 = s0 + C - 1 < hi ? s0 + C - 1 : hi;
    if (s0 < lo)
        s0 = lo;
    float *po = part_o + ((t * Hq + kvh * G) * n_split + split) * dv;
    float *pml = part_ml + ((t * Hq + kvh * G) * n_split + split) * 2;
    if (s0 > s1) // no visible key in this chunk: the combine skips it
        return;
    int64_t n = s1 - s0 + 1;
    for (int64_t e = threadIdx.x; e < G * d; e += blockDim.x)
        qs[e] = q[(t * Hq + kvh * G) * d + e];
    stage_rows<DT>(k, s0, n, Hkv, kvh, d, rows, ld);
    __syncthreads();
    for (int64_t e = threadIdx.x; e < G * C; e += blockDim.x) {
        int64_t h = e / C, i = e % C;
        float dot = -INFINITY;
        if (i < n) {
            const float *kr = rows + i * ld, *qh = qs + h * d;
            if (d % 4 == 0) { // 16-byte shared loads, four running sums
                float4 a = {0.0f, 0.0f, 0.0f, 0.0f};
                for (int64_t j = 0; j < d; j += 4) {
                    float4 qv = *(const float4 *)(qh + j), kv = *(const float4 *)(kr + j);
                    a.x += qv.x * kv.x;
                    a.y += qv.y * kv.y;
                    a.z += qv.z * kv.z;
                    a.w += qv.w * kv.w;
                }
                dot = (a.x + a.y) + (a.z + a.w);
            } else {
                dot = 0.0f;
                for (int64_t j = 0; j < d; j++)
                    dot += qh[j] * kr[j];
            }
            dot *= scale;
        }
        sc[e] = dot;
    }
    __syncthreads();
    rows_reduce(sc, tmp, G, C, true, ml);
    for (int64_t e = threadIdx.x; e < G * C; e += blockDim.x)
        sc[e] = sc[e] == -INFINITY ? 0.0f : expf(sc[e] - ml[e / C]);
    __syncthreads();
    rows_reduce(sc, tmp, G, C, false, ml + G);
    stage_rows<DT>(v, s0, n, Hkv, kvh, dv, rows, ld);
    __syncthreads();
    for (int64_t e = threadIdx.x; e < G * dv; e += blockDim.x) {
        int64_t h = e / dv, j = e % dv;
        const float *ph = sc + h * C;
        float a0 = 0.0f, a1 = 0.0f;
        int64_t i = 0;
        for (; i + 1 < n; i += 2) {
            a0 += ph[i] * rows[i * ld + j];
            a1 += ph[i + 1] * rows[(i + 1) * ld + j];
        }
        if (i < n)
            a0 += ph[i] * rows[i * ld + j];
        po[h * n_split * dv + j] = a0 + a1;
    }
    for (int64_t h = threadIdx.x; h < G; h += blockDim.x) {
        pml[h * n_split * 2] = ml[h];
        pml[h * n_split * 2 + 1] = ml[G + h];
    }
}

// One block per (query, head): o = sum_i e^(m_i - M) o_i / sum_i e^(m_i - M)
// l_i over the chunks [i0, i1] that hold visible keys (the same range the
// split kernel computes from the query's position).
__global__ void attention_combine_kernel(const float *part_o, const float *part_ml, const int32_t *pos, float *o,
                                         int64_t Hq, int64_t S, int64_t dv, int32_t window, int64_t C, int64_t n_split)
{
    extern __shared__ float wgt[]; // n_split
    __shared__ float shm[VT_ROCM_BLOCK];
    int64_t p = pos[blockIdx.x / Hq];
    int64_t lo = window > 0 ? p - window + 1 : 0, hi = p < S - 1 ? p : S - 1;
    if (lo < 0)
        lo = 0;
    if (lo > hi) { // no visible key: zeros
        for (int64_t j = threadIdx.x; j < dv; j += blockDim.x)
            o[blockIdx.x * dv + j] = 0.0f;
        return;
    }
    const int64_t i0 = lo / C, i1 = hi / C;
    const float *pml = part_ml + blockIdx.x * n_split * 2, *po = part_o + blockIdx.x * n_split * dv;
    float M = -INFINITY;
    for (int64_t i = i0 + threadIdx.x; i <= i1; i += blockDim.x)
        M = fmaxf(M, pml[2 * i]);
    M = vt_block_max(M, shm);
    float L = 0.0f;
    for (int64_t i = i0 + threadIdx.x; i <= i1; i += blockDim.x) {
        float w = expf(pml[2 * i] - M);
        wgt[i] = w;
        L += w * pml[2 * i + 1];
    }
    L = vt_block_sum(L, shm); // also orders the wgt writes before the reads
    for (int64_t j = threadIdx.x; j < dv; j += blockDim.x) {
        float a0 = 0.0f, a1 = 0.0f;
        int64_t i = i0;
        for (; i + 1 <= i1; i += 2) {
            a0 += wgt[i] * po[i * dv + j];
            a1 += wgt[i + 1] * po[(i + 1) * dv + j];
        }
        if (i <= i1)
            a0 += wgt[i] * po[i * dv + j];
        o[blockIdx.x * dv + j] = L > 0.0f ? (a0 + a1) / L : 0.0f;
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

extern "C" hipError_t vt_rocm_launch_kv_write(const float *k, const int32_t *slots, void *cache, uint32_t cache_dtype,
                                              int64_t T, int64_t n, hipStream_t stream)
{
    if (T <= 0 || n <= 0)
        return hipSuccess;
    VT_LAUNCH_CHAINED(kv_write_kernel, dim3(vt_grid_for(T * n, VT_ROCM_BLOCK)), dim3(VT_ROCM_BLOCK), 0, stream, k,
                      slots, cache, cache_dtype, T, n);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_kv_write_checked(vt_rocm_err *err, uint32_t op, const int32_t *slots,
                                                      int64_t limit, const float *k, const float *v, void *k_cache,
                                                      void *v_cache, uint32_t cache_dtype, int64_t T, int64_t nk,
                                                      int64_t nv, hipStream_t stream)
{
    if (T <= 0 || nk + nv <= 0)
        return hipSuccess;
    VT_LAUNCH_CHAINED(kv_write_checked_kernel, dim3(vt_grid_for(T * (nk + nv), VT_ROCM_BLOCK)), dim3(VT_ROCM_BLOCK), 0,
                      stream, err, op, slots, limit, k, v, k_cache, v_cache, cache_dtype, T, nk, nv);
    return hipGetLastError();
}

// The split form's chunk (keys per block, a power of two) and shared bytes,
// or 0 when the shape takes the one-block-per-head kernel.
static int64_t split_chunk(int64_t T, int64_t Hq, int64_t Hkv, int64_t d, int64_t dv, size_t *shm)
{
    int64_t G = Hq / Hkv, ld = split_ld(d, dv), C = 64;
    if (T > VT_ROCM_ATTN_SPLIT_MAX_T || Hkv <= 0 || G > 16)
        return 0;
    while (C > 8 && C * ld * 4 > 32768)
        C /= 2;
    *shm = (size_t)(C * ld + G * d + 2 * G * C + 2 * G) * sizeof(float);
    return *shm <= 46 * 1024 ? C : 0;
}

extern "C" uint64_t vt_rocm_attention_scratch_bytes(int64_t T, int64_t Hq, int64_t Hkv, int64_t S, int64_t d,
                                                    int64_t dv)
{
    size_t shm;
    int64_t C = split_chunk(T, Hq, Hkv, d, dv, &shm);
    if (!C || T <= 0 || S <= 0)
        return 0;
    int64_t n_split = (S + C - 1) / C;
    return (uint64_t)(T * Hq * n_split * (dv + 2)) * sizeof(float);
}

extern "C" hipError_t vt_rocm_launch_attention(const float *q, const void *k, const void *v, uint32_t kv_dtype,
                                               const int32_t *pos, float *o, int64_t T, int64_t Hq, int64_t Hkv,
                                               int64_t S, int64_t d, int64_t dv, float scale, int32_t window,
                                               void *scratch, hipStream_t stream)
{
    if (T <= 0 || Hq <= 0 || dv <= 0)
        return hipSuccess;
    size_t shm = 0;
    int64_t C = split_chunk(T, Hq, Hkv, d, dv, &shm);
    if (scratch && C && S > 0) {
        int64_t n_split = (S + C - 1) / C;
        float *part_o = (float *)scratch, *part_ml = part_o + T * Hq * n_split * dv;
        dim3 grid((unsigned)(T * Hkv * n_split)), block(VT_ROCM_BLOCK);
        if (kv_dtype == VT_F16)
            hipLaunchKernelGGL(attention_split_kernel<VT_F16>, grid, block, shm, stream, q, k, v, pos, part_o, part_ml,
                               Hq, Hkv, S, d, dv, scale, window, C, n_split);
        else if (kv_dtype == VT_BF16)
            hipLaunchKernelGGL(attention_split_kernel<VT_BF16>, grid, block, shm, stream, q, k, v, pos, part_o, part_ml,
                               Hq, Hkv, S, d, dv, scale, window, C, n_split);
        else
            hipLaunchKernelGGL(attention_split_kernel<VT_F32>, grid, block, shm, stream, q, k, v, pos, part_o, part_ml,
                               Hq, Hkv, S, d, dv, scale, window, C, n_split);
        hipError_t e = hipGetLastError();
        if (e != hipSuccess)
            return e;
        hipLaunchKernelGGL(attention_combine_kernel, dim3((unsigned)(T * Hq)), dim3(VT_ROCM_BLOCK),
                           (size_t)n_split * sizeof(float), stream, part_o, part_ml, pos, o, Hq, S, dv, window, C,
                           n_split);
        return hipGetLastError();
    }
    size_t shm_one = (size_t)(dv + VT_ROCM_BLOCK) * sizeof(float);
    unsigned grid = (unsigned)(T * Hq < 65535 ? T * Hq : 65535);
    hipLaunchKernelGGL(attention_kernel, dim3(grid), dim3(VT_ROCM_BLOCK), shm_one, stream, q, k, v, kv_dtype, pos, o, T,
                       Hq, Hkv, S, d, dv, scale, window);
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
