// kernels_attention_decode.hip - Attention (op 30) for decode: few queries
// against an f16/bf16 KV cache, split over the keys, in one launch. Block
// (chunk, kv head, query) serves the G query heads that read that kv head
// and takes an equal share of the query's visible keys: a group of D/8
// lanes holds one key row (each lane 8 elements, one 16-byte load) and the
// matching 8 elements of the G queries, so each K and V row is read once
// for the G heads; a group takes keys KB at a time with the next batch's
// loads in flight while it scores the current one (online softmax), the
// block's groups merge in shared memory into the chunk's (max, sum,
// unnormalised output), and the last block of a (query, kv head) to arrive
// (a counter in scratch, zeroed before the launch and reset by that block)
// merges the chunks in chunk order into the output (merge_last,
// kernels_attention_decode.h). An f16 cache with d = 64 or 128 on NVIDIA
// sm_80 and later takes kernels_attention_decode_mma.hip's kernel instead
// (same chunks, scratch and merge; scores and values on matrix
// instructions).
#include "kernels_attention_decode.h"

namespace
{

using namespace vt_attn;

constexpr int kThreads = 256; // per block
constexpr int kBatch = 4;     // keys per group per batch
constexpr int kWant = 132;    // blocks wanted (one per H200 SM)

template <uint32_t DT> __device__ inline void unpack8(const uint4 &u, float (&f)[8])
{
    const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int i = 0; i < 4; i++) {
        if (DT == VT_F16) {
            f[2 * i] = vt_dev_f16_to_f32_fast((uint16_t)(w[i] & 0xFFFF));
            f[2 * i + 1] = vt_dev_f16_to_f32_fast((uint16_t)(w[i] >> 16));
        } else {
            f[2 * i] = __uint_as_float(w[i] << 16);
            f[2 * i + 1] = __uint_as_float(w[i] & 0xFFFF0000u);
        }
    }
}

// One group's running state: G heads' max, sum and 8 output elements.
template <int G> struct Run {
    float m[G], l[G], acc[G][8];
};

// Loads batch j0 .. j0+KB-1 of the group's keys (s = s0 + grp + NG * j;
// past the group's share: zeros, ok false).
template <int KB>
__device__ inline void load_batch(const uint16_t *kb, const uint16_t *vb, int64_t row_stride, int64_t s0, int64_t s1,
                                  int grp, int NG, int64_t j0, uint4 (&kr)[KB], uint4 (&vr)[KB], bool (&ok)[KB])
{
#pragma unroll
    for (int b = 0; b < KB; b++) {
        const int64_t s = s0 + grp + (int64_t)NG * (j0 + b);
        ok[b] = s <= s1;
        if (ok[b]) {
            kr[b] = *(const uint4 *)(kb + s * row_stride);
            vr[b] = *(const uint4 *)(vb + s * row_stride);
        } else {
            kr[b] = make_uint4(0, 0, 0, 0);
            vr[b] = kr[b];
        }
    }
}

// Scores a batch of KB keys for the G heads (dot products over the L lanes
// of the group) and folds it into the running state.
template <uint32_t DT, int G, int L, int KB>
__device__ inline void score_batch(const float (&qv)[G][8], const uint4 (&kr)[KB], const uint4 (&vr)[KB],
                                   const bool (&ok)[KB], Run<G> &r)
{
    float sc[KB][G];
#pragma unroll
    for (int b = 0; b < KB; b++) {
        float kf[8];
        unpack8<DT>(kr[b], kf);
#pragma unroll
        for (int h = 0; h < G; h++) {
            float d0 = 0.0f, d1 = 0.0f;
#pragma unroll
            for (int i = 0; i < 8; i += 2) {
                d0 = fmaf(qv[h][i], kf[i], d0);
                d1 = fmaf(qv[h][i + 1], kf[i + 1], d1);
            }
            sc[b][h] = d0 + d1;
        }
    }
#pragma unroll
    for (int o = L / 2; o > 0; o >>= 1)
#pragma unroll
        for (int b = 0; b < KB; b++)
#pragma unroll
            for (int h = 0; h < G; h++)
                sc[b][h] += __shfl_xor(sc[b][h], o, L);
#pragma unroll
    for (int b = 0; b < KB; b++)
#pragma unroll
        for (int h = 0; h < G; h++)
            sc[b][h] = ok[b] ? sc[b][h] : -INFINITY;
#pragma unroll
    for (int h = 0; h < G; h++) {
        float mn = r.m[h];
#pragma unroll
        for (int b = 0; b < KB; b++)
            mn = fmaxf(mn, sc[b][h]);
        if (mn == -INFINITY)
            continue; // nothing visible yet
        const float corr = r.m[h] == -INFINITY ? 0.0f : __expf(r.m[h] - mn);
        r.m[h] = mn;
        r.l[h] *= corr;
#pragma unroll
        for (int i = 0; i < 8; i++)
            r.acc[h][i] *= corr;
    }
#pragma unroll
    for (int b = 0; b < KB; b++) {
        float vf[8];
        unpack8<DT>(vr[b], vf);
#pragma unroll
        for (int h = 0; h < G; h++) {
            const float p = sc[b][h] == -INFINITY ? 0.0f : __expf(sc[b][h] - r.m[h]);
            r.l[h] += p;
#pragma unroll
            for (int i = 0; i < 8; i++)
                r.acc[h][i] = fmaf(p, vf[i], r.acc[h][i]);
        }
    }
}

template <uint32_t DT, int D, int G, int NT = kThreads, int KB = kBatch>
__global__ void __launch_bounds__(NT)
    attn_decode_kernel(const float *q, const uint16_t *k, const uint16_t *v, const int32_t *pos, float *out,
                       float *part_o, float *part_ml, uint32_t *done, int64_t Hq, int64_t Hkv, int64_t S, float scale,
                       int32_t window, int64_t n_split)
{
    vt_chain_begin();                     /* chained launch: before any memory access (rocm_chain.h) */
    constexpr int L = D / 8, NG = NT / L; // lanes per key row; groups per block
    __shared__ float sm_ml[NG][2 * G], sm_w[NG][G];
    __shared__ float sm_o[NG][D];
    const int64_t split = blockIdx.x, kvh = blockIdx.y, t = blockIdx.z;
    const int lane = (int)threadIdx.x % L, grp = (int)threadIdx.x / L;
    // this block's share of the visible keys: [s0, s1]
    int64_t s0, s1;
    chunk_keys(pos[t], S, window, split, n_split, s0, s1);
    const int64_t row_stride = Hkv * D; // elements between consecutive keys
    const uint16_t *kb = k + kvh * D + lane * 8, *vb = v + kvh * D + lane * 8;
    const int64_t n = s1 - s0 + 1, per = n > 0 ? (n + NG - 1) / NG : 0; // batches of the group: per / KB
    uint4 ka[KB], va[KB], kn[KB], vn[KB];
    bool oka[KB], okn[KB];
    if (per > 0)
        load_batch<KB>(kb, vb, row_stride, s0, s1, grp, NG, 0, ka, va, oka);
    float qv[G][8];
#pragma unroll
    for (int h = 0; h < G; h++) {
        const float4 *qp = (const float4 *)(q + (t * Hq + kvh * G + h) * D + lane * 8);
        const float4 a = qp[0], b = qp[1];
        qv[h][0] = a.x * scale, qv[h][1] = a.y * scale, qv[h][2] = a.z * scale, qv[h][3] = a.w * scale;
        qv[h][4] = b.x * scale, qv[h][5] = b.y * scale, qv[h][6] = b.z * scale, qv[h][7] = b.w * scale;
    }
    Run<G> r;
#pragma unroll
    for (int h = 0; h < G; h++) {
        r.m[h] = -INFINITY;
        r.l[h] = 0.0f;
#pragma unroll
        for (int i = 0; i < 8; i++)
            r.acc[h][i] = 0.0f;
    }
    // two register buffers: the next batch loads while this one is scored
    // (every group of a wavefront runs the same batches: shuffles need
    // every lane)
    for (int64_t j0 = 0; j0 < per; j0 += 2 * KB) {
        if (j0 + KB < per)
            load_batch<KB>(kb, vb, row_stride, s0, s1, grp, NG, j0 + KB, kn, vn, okn);
        score_batch<DT, G, L, KB>(qv, ka, va, oka, r);
        if (j0 + KB >= per)
            break;
        if (j0 + 2 * KB < per)
            load_batch<KB>(kb, vb, row_stride, s0, s1, grp, NG, j0 + 2 * KB, ka, va, oka);
        score_batch<DT, G, L, KB>(qv, kn, vn, okn, r);
    }
    // the block's groups meet: per head the chunk max M, the groups'
    // weights e^(m_g - M) (0 for a group without a visible key) and sum
    if (lane == 0) {
#pragma unroll
        for (int h = 0; h < G; h++) {
            sm_ml[grp][2 * h] = r.m[h];
            sm_ml[grp][2 * h + 1] = r.l[h];
        }
    }
    __syncthreads();
    const int64_t row0 = t * Hq + kvh * G; // first query head of the block
    for (int e = (int)threadIdx.x; e < NG * G; e += NT) {
        const int g = e / G, h = e % G;
        float M = -INFINITY;
#pragma unroll
        for (int g2 = 0; g2 < NG; g2++)
            M = fmaxf(M, sm_ml[g2][2 * h]);
        const float mg = sm_ml[g][2 * h];
        sm_w[g][h] = mg == -INFINITY ? 0.0f : __expf(mg - M);
        if (g == 0) {
            float sum = 0.0f;
#pragma unroll
            for (int g2 = 0; g2 < NG; g2++) {
                const float m2 = sm_ml[g2][2 * h];
                if (m2 != -INFINITY)
                    sum = fmaf(__expf(m2 - M), sm_ml[g2][2 * h + 1], sum);
            }
            part_ml[((row0 + h) * n_split + split) * 2] = M;
            part_ml[((row0 + h) * n_split + split) * 2 + 1] = sum;
        }
    }
#pragma unroll
    for (int h = 0; h < G; h++) {
        __syncthreads(); // the weights, or the previous head's reads
#pragma unroll
        for (int i = 0; i < 8; i++)
            sm_o[grp][lane * 8 + i] = r.acc[h][i];
        __syncthreads();
        for (int j = (int)threadIdx.x; j < D; j += NT) {
            float o = 0.0f;
#pragma unroll
            for (int g2 = 0; g2 < NG; g2++)
                o = fmaf(sm_w[g2][h], sm_o[g2][j], o);
            part_o[((row0 + h) * n_split + split) * D + j] = o;
        }
    }
    // the last block of (query, kv head) to arrive merges the chunks
    merge_last<G, D, NT>(part_o, part_ml, done + t * Hkv + kvh, out, row0, n_split);
}

// Chunks per (query, kv head): about want blocks in all, at most the keys
// and kMaxSplit, at least 1 (rounded down so that want blocks of one wave
// stay one).
int64_t n_chunks(int64_t T, int64_t Hkv, int64_t S, int64_t want = kWant)
{
    int64_t n = want / (T * Hkv);
    if (n > S)
        n = S;
    if (n > kMaxSplit)
        n = kMaxSplit;
    return n < 1 ? 1 : n;
}

// Whether the decode kernel takes the shape.
bool takes(int64_t T, int64_t Hq, int64_t Hkv, int64_t d, int64_t dv, uint32_t kv_dtype)
{
    if (T <= 0 || T > VT_ROCM_ATTN_SPLIT_MAX_T || Hkv <= 0 || Hq % Hkv != 0 || d != dv)
        return false;
    const int64_t G = Hq / Hkv;
    return (kv_dtype == VT_F16 || kv_dtype == VT_BF16) && (d == 64 || d == 128 || d == 256) &&
           (G == 1 || G == 2 || G == 4 || G == 8);
}

template <uint32_t DT, int D, int G, int NT, int KB> void launch_g(dim3 grid, hipStream_t stream, const AttnArgs &a)
{
    VT_LAUNCH_CHAINED((attn_decode_kernel<DT, D, G, NT, KB>), grid, dim3(NT), 0, stream, a.q, a.k, a.v, a.pos, a.o,
                      a.po, a.pml, a.done, a.Hq, a.Hkv, a.S, a.scale, a.window, a.n_split);
}

template <uint32_t DT, int D, int NT, int KB> void launch_d(int64_t G, dim3 grid, hipStream_t stream, const AttnArgs &a)
{
    switch (G) {
    case 1: launch_g<DT, D, 1, NT, KB>(grid, stream, a); break;
    case 2: launch_g<DT, D, 2, NT, KB>(grid, stream, a); break;
    case 4: launch_g<DT, D, 4, NT, KB>(grid, stream, a); break;
    default: launch_g<DT, D, 8, NT, KB>(grid, stream, a); break;
    }
}

template <uint32_t DT, int NT, int KB>
void launch_dt(int64_t d, int64_t G, dim3 grid, hipStream_t stream, const AttnArgs &a)
{
    if (d == 64)
        launch_d<DT, 64, NT, KB>(G, grid, stream, a);
    else if (d == 128)
        launch_d<DT, 128, NT, KB>(G, grid, stream, a);
    else
        launch_d<DT, 256, NT, KB>(G, grid, stream, a);
}

// Scratch bytes of the split over about want blocks: the chunks' partials,
// then a counter per (query, kv head).
uint64_t scratch_for(int64_t T, int64_t Hq, int64_t Hkv, int64_t S, int64_t dv, int64_t want)
{
    const int64_t n_split = n_chunks(T, Hkv, S, want);
    return (uint64_t)(T * Hq * n_split * (dv + 2)) * sizeof(float) + (uint64_t)(T * Hkv) * sizeof(uint32_t);
}

// The arguments and grid of a launch over about want blocks. done: T * Hkv
// counters that are zero (the kernel leaves them zero); NULL: the ones in
// scratch, zeroed first (on stream). Scratch of scratch_for(..., want)
// bytes.
hipError_t attn_setup(const float *q, const void *k, const void *v, const int32_t *pos, float *o, int64_t T, int64_t Hq,
                      int64_t Hkv, int64_t S, int64_t dv, float scale, int32_t window, void *scratch,
                      hipStream_t stream, int64_t want, uint32_t *done, AttnArgs &a, dim3 &grid)
{
    const int64_t n_split = n_chunks(T, Hkv, S, want);
    a.q = q, a.k = (const uint16_t *)k, a.v = (const uint16_t *)v, a.pos = pos, a.o = o;
    a.po = (float *)scratch, a.pml = a.po + T * Hq * n_split * dv;
    a.done = done ? done : (uint32_t *)(a.pml + T * Hq * n_split * 2);
    a.Hq = Hq, a.Hkv = Hkv, a.S = S, a.scale = scale, a.window = window, a.n_split = n_split;
    grid = dim3((unsigned)n_split, (unsigned)Hkv, (unsigned)T);
    return done ? hipSuccess : hipMemsetAsync(a.done, 0, (size_t)(T * Hkv) * sizeof(uint32_t), stream);
}

// The kernel of NT threads and KB keys per group per batch over about want
// blocks (done: as setup's), or with mma the f16 kernel on matrix
// instructions where it takes the shape and device. The shape is one
// takes() accepts.
template <int NT, int KB>
hipError_t run_decode(const float *q, const void *k, const void *v, uint32_t kv_dtype, const int32_t *pos, float *o,
                      int64_t T, int64_t Hq, int64_t Hkv, int64_t S, int64_t d, int64_t dv, float scale, int32_t window,
                      void *scratch, hipStream_t stream, int64_t want, uint32_t *done, bool mma = false)
{
    AttnArgs a;
    dim3 grid;
    hipError_t e = attn_setup(q, k, v, pos, o, T, Hq, Hkv, S, dv, scale, window, scratch, stream, want, done, a, grid);
    if (e != hipSuccess)
        return e;
    if (mma && kv_dtype == VT_F16) {
        int took = 0;
        e = launch_mma(a, d, Hq / Hkv, grid, stream, &took);
        if (took)
            return e;
    }
    if (kv_dtype == VT_F16)
        launch_dt<VT_F16, NT, KB>(d, Hq / Hkv, grid, stream, a);
    else
        launch_dt<VT_BF16, NT, KB>(d, Hq / Hkv, grid, stream, a);
    return hipGetLastError();
}

} // namespace

// Scratch bytes of the decode kernel (the chunks' partials and counters), 0
// when it does not take the shape.
extern "C" uint64_t vt_rocm_attention_decode_scratch_bytes(int64_t T, int64_t Hq, int64_t Hkv, int64_t S, int64_t d,
                                                           int64_t dv, uint32_t kv_dtype)
{
    if (!takes(T, Hq, Hkv, d, dv, kv_dtype) || S <= 0)
        return 0;
    return scratch_for(T, Hq, Hkv, S, dv, kWant);
}

// Attention for decode (the shapes vt_rocm_attention_decode_scratch_bytes
// takes; scratch of that size; done: as attn_setup's): *taken = 0 when not
// taken (also when q or the caches are not 16-byte aligned).
extern "C" hipError_t vt_rocm_launch_attention_decode(const float *q, const void *k, const void *v, uint32_t kv_dtype,
                                                      const int32_t *pos, float *o, int64_t T, int64_t Hq, int64_t Hkv,
                                                      int64_t S, int64_t d, int64_t dv, float scale, int32_t window,
                                                      void *scratch, uint32_t *done, hipStream_t stream, int *taken)
{
    *taken = 0;
    if (!takes(T, Hq, Hkv, d, dv, kv_dtype) || S <= 0 || !scratch || ((uintptr_t)q | (uintptr_t)k | (uintptr_t)v) % 16)
        return hipSuccess;
    *taken = 1;
    return run_decode<kThreads, kBatch>(q, k, v, kv_dtype, pos, o, T, Hq, Hkv, S, d, dv, scale, window, scratch, stream,
                                        kWant, done, true);
}
