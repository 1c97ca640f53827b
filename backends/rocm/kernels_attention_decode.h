// kernels_attention_decode.h - what the decode Attention kernels share
// (kernels_attention_decode.hip: the f16/bf16 kernel on vector units;
// kernels_attention_decode_mma.hip: the f16 kernel on NVIDIA's matrix
// instructions): a block's share of the visible keys, the scratch layout of
// the chunks' partials and counters, and the vector kernel's merge of the
// chunks by the last block (merge_last; the mma kernel has its own,
// merge_chunks). Device code of HIP translation units only.
#ifndef VT_KERNELS_ATTENTION_DECODE_H
#define VT_KERNELS_ATTENTION_DECODE_H

#include "rocm_device.h"
#include "rocm_launch.h"

// Whether the f16 kernel on matrix instructions may merge the chunks of a
// (query, kv head) within a cluster on sm_90 (1, the default) or always
// through global memory (0: VT_ROCM_ATTN_CLUSTER=0). Set by the plugin at
// init (rocm_common.c); the harnesses set their own.
extern "C" int vt_rocm_attn_cluster;

namespace vt_attn
{

constexpr int kMaxSplit = 64; // chunks per (query, kv head) at most

// The visible keys [lo, hi] of a query at position p (lo > hi: none).
__device__ inline void visible(int64_t p, int64_t S, int32_t window, int64_t &lo, int64_t &hi)
{
    lo = window > 0 ? p - window + 1 : 0;
    if (lo < 0)
        lo = 0;
    hi = p < S - 1 ? p : S - 1;
}

// Chunk `split` of n_split of a query's visible keys at position p: [s0, s1]
// (s0 > s1: none).
__device__ inline void chunk_keys(int64_t p, int64_t S, int32_t window, int64_t split, int64_t n_split, int64_t &s0,
                                  int64_t &s1)
{
    int64_t lo, hi;
    visible(p, S, window, lo, hi);
    const int64_t nvis = hi >= lo ? hi - lo + 1 : 0, per_block = (nvis + n_split - 1) / n_split;
    s0 = lo + split * per_block;
    s1 = s0 + per_block - 1 < hi ? s0 + per_block - 1 : hi;
}

// A float written by another block of the same launch (read past L1; the
// mma kernel's vector form, NVIDIA only: ld_vec_cg).
__device__ inline float ld_other(const float *p)
{
    return *(const volatile float *)p;
}

// The kernels' arguments past their template parameters. po: the chunks'
// unnormalised outputs [T * Hq][n_split][dv], pml: their (max, sum)
// [T * Hq][n_split][2], done: a counter per (query, kv head).
struct AttnArgs {
    const float *q;
    const uint16_t *k, *v;
    const int32_t *pos;
    float *o, *po, *pml;
    uint32_t *done;
    int64_t Hq, Hkv, S;
    float scale;
    int32_t window;
    int64_t n_split;
};

// After a block of NT threads has written its chunk's partials (part_o,
// part_ml of the G heads from row0): the last block of (query, kv head) to
// arrive (counter *done, zero before the launch; that block resets it)
// merges the chunks in chunk order into out: o = sum_i e^(m_i - M) o_i /
// sum_i e^(m_i - M) l_i (zeros when no key is visible; a chunk without one
// has m_i = -inf, weight 0, o_i = l_i = 0). Each thread takes output
// elements tid, tid + NT, .. and loads their chunks B at a time with every
// load of a batch in flight; the first batch goes out with the chunks'
// (m, l), so the merge costs the counter's round trip and about one load
// round trip per B chunks. Every thread of the block calls it. The
// arrival: every thread fences its own writes before the barrier, a form
// that does not rely on a fence's cumulativity (this kernel is AMD's too);
// the mma kernel's merge_chunks, NVIDIA only, has one fence by thread 0
// after the barrier, cumulative in PTX's memory model.
template <int G, int D, int NT>
__device__ inline void merge_last(const float *part_o, const float *part_ml, uint32_t *done, float *out, int64_t row0,
                                  int64_t n_split)
{
    constexpr int EPT = (G * D + NT - 1) / NT;                          // output elements per thread
    constexpr int B = 64 / EPT < 4 ? 4 : 64 / EPT > 16 ? 16 : 64 / EPT; // chunks per batch
    __shared__ float sm_cm[G * kMaxSplit], sm_cl[G * kMaxSplit], sm_cw[G * kMaxSplit];
    __shared__ int sm_last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0)
        sm_last = atomicAdd(done, 1u) == (uint32_t)(n_split - 1);
    __syncthreads();
    if (!sm_last)
        return;
    __threadfence();
    const int ns = (int)n_split, ne = G * ns, tid = (int)threadIdx.x;
    float x[EPT][B];
    auto load = [&](int i0) { // chunks i0 .. i0 + B - 1 of the thread's elements
#pragma unroll
        for (int r = 0; r < EPT; r++) {
            const int e = tid + NT * r;
#pragma unroll
            for (int b = 0; b < B; b++)
                x[r][b] = e < G * D && i0 + b < ns ? ld_other(part_o + ((row0 + e / D) * n_split + i0 + b) * D + e % D)
                                                   : 0.0f;
        }
    };
    load(0);
    for (int e = tid; e < ne; e += NT) {
        const float *pml = part_ml + (row0 * n_split + e) * 2; // head e / ns, chunk e % ns
        sm_cm[e] = ld_other(pml);
        sm_cl[e] = ld_other(pml + 1);
    }
    __syncthreads();
    for (int e = tid; e < ne; e += NT) {
        const int h = e / ns;
        float M = -INFINITY;
        for (int i = 0; i < ns; i++)
            M = fmaxf(M, sm_cm[h * ns + i]);
        sm_cw[e] = sm_cm[e] == -INFINITY ? 0.0f : expf(sm_cm[e] - M);
    }
    __syncthreads();
    float a[EPT], sum[EPT];
#pragma unroll
    for (int r = 0; r < EPT; r++)
        a[r] = sum[r] = 0.0f;
    for (int i0 = 0; i0 < ns; i0 += B) {
        if (i0 > 0)
            load(i0);
#pragma unroll
        for (int r = 0; r < EPT; r++) {
            const int h = (tid + NT * r) / D;
            const float *w = sm_cw + h * ns, *l = sm_cl + h * ns;
#pragma unroll
            for (int b = 0; b < B; b++)
                if (i0 + b < ns) {
                    a[r] = fmaf(w[i0 + b], x[r][b], a[r]);
                    sum[r] = fmaf(w[i0 + b], l[i0 + b], sum[r]);
                }
        }
    }
#pragma unroll
    for (int r = 0; r < EPT; r++) {
        const int e = tid + NT * r;
        if (e < G * D)
            out[(row0 + e / D) * D + e % D] = sum[r] > 0.0f ? a[r] / sum[r] : 0.0f;
    }
    if (tid == 0)
        *done = 0; // ready for the next launch (graph replay)
}

// The f16 kernel on matrix instructions (kernels_attention_decode_mma.hip):
// queues it over grid (n_split, Hkv, T) with the arguments a for head
// dimension d and G query heads per kv head and sets *taken = 1, or
// queues nothing and leaves *taken = 0 (not NVIDIA sm_80 or later, d not
// 64 or 128, or too little shared memory).
hipError_t launch_mma(const AttnArgs &a, int64_t d, int64_t G, dim3 grid, hipStream_t stream, int *taken);

} // namespace vt_attn

#endif /* VT_KERNELS_ATTENTION_DECODE_H */
