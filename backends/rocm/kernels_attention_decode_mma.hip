// kernels_attention_decode_mma.hip - Attention (op 30) for decode over an
// f16 KV cache on NVIDIA's matrix instructions (mma.sync m16n8k16: f16
// inputs, f32 accumulators; sm_80 and later), d = dv in {64, 128}. Other
// targets and shapes keep kernels_attention_decode.hip's kernel
// (launch_mma answers *taken = 0).
//
// Blocks and chunks as kernels_attention_decode.hip's: block (chunk, kv
// head, query) takes an equal share of the query's visible keys for the G
// query heads of its kv head. The chunks of a (query, kv head) merge
// either through global memory, the last block to arrive merging them
// (attn_mma_kernel, merge_chunks), or on sm_90 within a thread block cluster
// of at most 16 blocks, each block merging a share of the outputs from the
// others' shared memory (attn_mma_cluster_kernel; cluster_size says when).
// Within a block each of kWarps warps takes every kWarps-th tile of 16
// keys; the K and V rows of its tiles stream into the warp's own ring of
// shared memory (cp.async, kStages - 1 tiles ahead), so the loads in
// flight do not depend on the arithmetic.
//
// Scores: S = Q K^T with A = the G query rows, each split into hi =
// f16(q * 2^e) and lo = f16(q * 2^e - hi) (rows h and 8 + h; 2^e a power
// of two per head putting its largest |q| in [128, 256)), B = the K rows
// as they lie in the cache (f16: exact), so hi + lo carries 22 significant
// bits of every q and a score is c(h) + c(8 + h) times 2^-e. Online
// softmax per tile (the running max per head, the rescale of the
// accumulators only when a max grows). Values: O += P V with A = the
// probabilities times 2^10 split the same way (hi in row h, lo in 8 + h:
// exactly the layout the scores' accumulators have, so P never leaves the
// registers) and B = the V rows (ldmatrix.trans). Activations stay f32 to
// within 2^-22 of each q and p: the cpu oracle's values, summed in another
// order, within SPEC 7's Attention tolerance.
#include "kernels_attention_decode.h"

namespace vt_attn
{

#if defined(VT_HIP_PLATFORM_NVIDIA)
} // namespace vt_attn
#include "rocm_mma.h"
#include <cuda_fp16.h>
namespace vt_attn
{

namespace
{

using vt_mma::cluster_peer;
using vt_mma::cluster_rank;
using vt_mma::cluster_sync;
using vt_mma::cp16;
using vt_mma::cp_commit;
using vt_mma::cp_wait;
using vt_mma::ldsm4;
using vt_mma::mma16816;
using vt_mma::smem_optin;
using vt_mma::smem_u32;

constexpr int kWarps = 4;     // per block
constexpr int kTileKeys = 16; // keys per tile (one mma k step of P V)
constexpr int kStages = 4;    // ring slots per warp
constexpr unsigned kFull = 0xffffffffu;

// Bytes of one K or V row in shared memory: padded by 16 so that the eight
// rows of an ldmatrix fall in different banks.
template <int D> __host__ __device__ constexpr int row_bytes()
{
    return 2 * D + 16;
}
// Bytes of one ring slot (16 K rows, then 16 V rows).
template <int D> __host__ __device__ constexpr int slot_bytes()
{
    return 2 * kTileKeys * row_bytes<D>();
}
// Dynamic shared memory of a block: the warps' rings (reused for the
// warps' merge once every copy has landed).
template <int D> __host__ __device__ constexpr size_t block_smem()
{
    return (size_t)kWarps * kStages * slot_bytes<D>();
}

// x split into f16 hi + lo (x already scaled into f16's range): the
// f16x2 words {hi(x0), hi(x1)} and {lo(x0), lo(x1)}.
__device__ inline void split2(float x0, float x1, uint32_t &hi, uint32_t &lo)
{
    const __half h0 = __float2half_rn(x0), h1 = __float2half_rn(x1);
    const __half l0 = __float2half_rn(x0 - __half2float(h0)), l1 = __float2half_rn(x1 - __half2float(h1));
    hi = (uint32_t)__half_as_ushort(h0) | ((uint32_t)__half_as_ushort(h1) << 16);
    lo = (uint32_t)__half_as_ushort(l0) | ((uint32_t)__half_as_ushort(l1) << 16);
}

// Queues the K and V rows of tile `tile` (keys s0 + 16 tile ..) into ring
// slot at shared address dst; keys past s1 are zeros. A lane copies the
// same 16-byte column of every kRows-th row, one pointer per cache and a
// stride instead of an index computed per piece, and a tile whose keys
// are all visible goes without the zero-fill test: the copies leave
// sooner (32 / 8 heads, d = 128, 4096 positions: 11.68 -> 11.46 us graph,
// the last tile lands 0.4 us earlier; BENCHMARKS.md round 18).
template <int D>
__device__ inline void load_tile(uint32_t dst, const uint16_t *kb, const uint16_t *vb, int64_t row_stride, int64_t s0,
                                 int64_t s1, int64_t tile, int lane)
{
    constexpr int kChunks = D / 8;      // 16-byte pieces per row
    constexpr int kRows = 32 / kChunks; // rows per pass of the warp
    const int r0 = lane / kChunks, col = lane % kChunks;
    const int64_t sr = s0 + kTileKeys * tile + r0, first = sr * row_stride + col * 8, step = kRows * row_stride;
    const uint16_t *kp = kb + first, *vp = vb + first;
    const uint32_t at = dst + (uint32_t)(r0 * row_bytes<D>() + col * 16);
    constexpr uint32_t kv = kTileKeys * row_bytes<D>(); // the V rows after the K rows
    if (s0 + kTileKeys * (tile + 1) - 1 <= s1) {        // every key of the tile visible
#pragma unroll
        for (int i = 0; i < kTileKeys / kRows; i++) {
            cp16(at + (uint32_t)(i * kRows * row_bytes<D>()), kp + i * step);
            cp16(at + kv + (uint32_t)(i * kRows * row_bytes<D>()), vp + i * step);
        }
        return;
    }
#pragma unroll
    for (int i = 0; i < kTileKeys / kRows; i++) {
        const bool ok = sr + kRows * i <= s1;
        cp16(at + (uint32_t)(i * kRows * row_bytes<D>()), ok ? kp + i * step : kb, ok ? 16 : 0);
        cp16(at + kv + (uint32_t)(i * kRows * row_bytes<D>()), ok ? vp + i * step : vb, ok ? 16 : 0);
    }
}

// Floats of padding after each warp's output row of a head in the warps'
// merge area, so that the rows of the G heads a warp writes at once fall in
// different banks (a row of 128 floats would put them all in the same ones).
constexpr int kPad = 8;
// The warps' merge area (the rings' memory once every copy has landed):
// per warp w and head h, m[w][h], then l[w][h], then o[w][h][D + kPad].
template <int D, int G> __host__ __device__ constexpr int warps_floats()
{
    return kWarps * G * (2 + D + kPad);
}
// Shared memory of the block's chunk result for the cluster merge (after the
// warps' merge area): per head h of the block's G, m[h], l[h], then o[h][D].
template <int D, int G> __host__ __device__ constexpr int part_offset()
{
    return (warps_floats<D, G>() * (int)sizeof(float) + 15) / 16 * 16;
}
// Floats before o[0] in that area: m and l of the G heads, rounded up to 16
// bytes so that a lane's vector store of its outputs is aligned at any G
// (G = 1 gave an 8-byte-aligned 16-byte store: a misaligned address).
template <int G> __host__ __device__ constexpr int part_o()
{
    return (2 * G + 3) / 4 * 4;
}

// V consecutive floats (V = 2 or 4) at p (aligned to 4 V bytes).
template <int V> __device__ inline void ld_vec(const float *p, float (&x)[V])
{
    if constexpr (V == 4) {
        const float4 a = *(const float4 *)p;
        x[0] = a.x, x[1] = a.y, x[2] = a.z, x[3] = a.w;
    } else {
        const float2 a = *(const float2 *)p;
        x[0] = a.x, x[1] = a.y;
    }
}
// The same from L2 (written by another block of the launch).
template <int V> __device__ inline void ld_vec_cg(const float *p, float (&x)[V])
{
    if constexpr (V == 4) {
        const float4 a = __ldcg((const float4 *)p);
        x[0] = a.x, x[1] = a.y, x[2] = a.z, x[3] = a.w;
    } else {
        const float2 a = __ldcg((const float2 *)p);
        x[0] = a.x, x[1] = a.y;
    }
}
// x stored as V consecutive floats at p (aligned to 4 V bytes).
template <int V> __device__ inline void st_vec(float *p, const float (&x)[V])
{
    if constexpr (V == 4)
        *(float4 *)p = make_float4(x[0], x[1], x[2], x[3]);
    else
        *(float2 *)p = make_float2(x[0], x[1]);
}

// The block's chunk `split` of n_split of the visible keys of the query at
// position p, for the G query heads of kv head kvh from query row row0:
// leaves in the warps' merge area (warps_floats') each warp's max, sum
// and unnormalised output per head over its tiles (m = -inf, l = 0, o = 0
// without a key). Every thread of the block calls it; the area is complete
// on return (combine_warps merges it).
template <int D, int G>
__device__ inline void chunk_partial(const float *q, const uint16_t *k, const uint16_t *v, int64_t p, int64_t row0,
                                     int64_t kvh, int64_t Hkv, int64_t S, float scale, int32_t window, int64_t split,
                                     int64_t n_split, uint8_t *smem)
{
    constexpr int KC = D / 16; // k steps of the scores
    constexpr int DT = D / 8;  // n tiles of the values
    static_assert(part_offset<D, G>() + (part_o<G>() + G * D) * (int)sizeof(float) <= (int)block_smem<D>(),
                  "part in the rings");
    static_assert(D % 32 == 0 && ((D + kPad) * sizeof(float)) % 16 == 0, "a lane's outputs of a row: one vector");
    const int lane = (int)threadIdx.x % 32, w = (int)threadIdx.x / 32, g = lane / 4, c2 = 2 * (lane % 4);
    int64_t s0, s1;
    chunk_keys(p, S, window, split, n_split, s0, s1);
    const int64_t n = s1 - s0 + 1, ntiles = n > 0 ? (n + kTileKeys - 1) / kTileKeys : 0;
    const int64_t mine = ntiles > w ? (ntiles - w + kWarps - 1) / kWarps : 0; // this warp's tiles: w, w + kWarps, ..
    const int64_t row_stride = Hkv * D;
    const uint16_t *kb = k + kvh * D, *vb = v + kvh * D;
    const uint32_t ring = smem_u32(smem + (size_t)w * kStages * slot_bytes<D>());
#pragma unroll
    for (int j = 0; j < kStages - 1; j++) {
        if (j < mine)
            load_tile<D>(ring + j * slot_bytes<D>(), kb, vb, row_stride, s0, s1, w + (int64_t)kWarps * j, lane);
        cp_commit();
    }
    // the A fragments of the queries: lane holds row g (hi) and 8 + g (lo)
    // of head g, k positions c2, c2 + 1 and 8 + c2, 9 + c2 of each step
    float qf[KC][4];
    float amax = 0.0f;
#pragma unroll
    for (int kc = 0; kc < KC; kc++) {
        if (g < G) {
            const float *qp = q + (row0 + g) * D + kc * 16 + c2;
            const float2 a = *(const float2 *)qp, b = *(const float2 *)(qp + 8);
            qf[kc][0] = a.x * scale, qf[kc][1] = a.y * scale, qf[kc][2] = b.x * scale, qf[kc][3] = b.y * scale;
        } else {
            qf[kc][0] = qf[kc][1] = qf[kc][2] = qf[kc][3] = 0.0f;
        }
#pragma unroll
        for (int i = 0; i < 4; i++)
            amax = fmaxf(amax, fabsf(qf[kc][i]));
    }
    amax = fmaxf(amax, __shfl_xor_sync(kFull, amax, 1));
    amax = fmaxf(amax, __shfl_xor_sync(kFull, amax, 2));
    int ex = 0;
    (void)frexpf(amax, &ex); // amax = f 2^ex, f in [0.5, 1) (0: ex = 0)
    const float up = ldexpf(1.0f, 8 - ex), down = ldexpf(1.0f, ex - 8);
    uint32_t qa[KC][4];
#pragma unroll
    for (int kc = 0; kc < KC; kc++) {
        split2(qf[kc][0] * up, qf[kc][1] * up, qa[kc][0], qa[kc][1]);
        split2(qf[kc][2] * up, qf[kc][3] * up, qa[kc][2], qa[kc][3]);
    }
    float acc[DT][4];
#pragma unroll
    for (int j = 0; j < DT; j++)
        acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
    float m = -INFINITY, l = 0.0f; // head g's running max, this lane's share of the sum
    // the lane's ldmatrix rows: K (keys 8 (l / 16) + l % 8, d 8 ((l / 8) % 2))
    // and V transposed (keys 8 ((l / 8) % 2) + l % 8, d 8 (l / 16))
    const uint32_t k_off = (uint32_t)((8 * (lane / 16) + lane % 8) * row_bytes<D>() + 16 * ((lane / 8) % 2));
    const uint32_t v_off =
        (uint32_t)(kTileKeys * row_bytes<D>() + (8 * ((lane / 8) % 2) + lane % 8) * row_bytes<D>() + 16 * (lane / 16));
    for (int64_t j = 0; j < mine; j++) {
        cp_wait<kStages - 2>();
        __syncwarp(); /* every lane's copies of the slot visible to the warp */
        const uint32_t slot = ring + (uint32_t)((j % kStages) * slot_bytes<D>());
        float sc[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
#pragma unroll
        for (int kc = 0; kc < KC; kc++) {
            uint32_t b[4];
            ldsm4(b, slot + k_off + 32 * kc);
            mma16816(sc[0], qa[kc], b[0], b[1]);
            mma16816(sc[1], qa[kc], b[2], b[3]);
        }
        // head g's scores of keys c2, c2 + 1 (tile 0) and 8 + c2, 9 + c2
        const int64_t key0 = (int64_t)kTileKeys * (w + (int64_t)kWarps * j);
        float s[4];
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int kk = 8 * (i / 2) + c2 + (i % 2);
            s[i] = (sc[i / 2][i % 2] + sc[i / 2][2 + i % 2]) * down;
            if (g >= G || key0 + kk >= n)
                s[i] = -INFINITY;
        }
        float tm = fmaxf(fmaxf(s[0], s[1]), fmaxf(s[2], s[3]));
        tm = fmaxf(tm, __shfl_xor_sync(kFull, tm, 1));
        tm = fmaxf(tm, __shfl_xor_sync(kFull, tm, 2));
        const float mn = fmaxf(m, tm);
        if (__any_sync(kFull, mn > m)) {
            const float corr = mn == -INFINITY ? 1.0f : __expf(m - mn); // m = -inf: 0
            l *= corr;
#pragma unroll
            for (int jt = 0; jt < DT; jt++)
#pragma unroll
                for (int i = 0; i < 4; i++)
                    acc[jt][i] *= corr;
            m = mn;
        }
        float pr[4];
#pragma unroll
        for (int i = 0; i < 4; i++) {
            pr[i] = s[i] == -INFINITY ? 0.0f : __expf(s[i] - m);
            l += pr[i];
        }
        uint32_t pa[4];
        split2(pr[0] * 1024.0f, pr[1] * 1024.0f, pa[0], pa[1]);
        split2(pr[2] * 1024.0f, pr[3] * 1024.0f, pa[2], pa[3]);
#pragma unroll
        for (int dc = 0; dc < D / 16; dc++) {
            uint32_t b[4];
            ldsm4<true>(b, slot + v_off + 32 * dc);
            mma16816(acc[2 * dc], pa, b[0], b[1]);
            mma16816(acc[2 * dc + 1], pa, b[2], b[3]);
        }
        __syncwarp(); // every lane has read the slot before it is refilled
        if (j + kStages - 1 < mine)
            load_tile<D>(ring + (uint32_t)(((j + kStages - 1) % kStages) * slot_bytes<D>()), kb, vb, row_stride, s0, s1,
                         w + (int64_t)kWarps * (j + kStages - 1), lane);
        cp_commit();
    }
    cp_wait<0>();
    __syncwarp();
    l += __shfl_xor_sync(kFull, l, 1);
    l += __shfl_xor_sync(kFull, l, 2);
    // the warps meet (the rings' memory, now idle): their m, l and o per head
    __syncthreads();
    float *sm_m = (float *)smem, *sm_l = sm_m + kWarps * G, *sm_o = sm_l + kWarps * G; // sm_o [kWarps][G][D + kPad]
    if (g < G) {
        if (lane % 4 == 0) {
            sm_m[w * G + g] = m;
            sm_l[w * G + g] = l;
        }
        float *o = sm_o + (w * G + g) * (D + kPad) + c2;
#pragma unroll
        for (int jt = 0; jt < DT; jt++)
            *(float2 *)(o + 8 * jt) =
                make_float2((acc[jt][0] + acc[jt][2]) * (1.0f / 1024.0f), (acc[jt][1] + acc[jt][3]) * (1.0f / 1024.0f));
    }
    __syncthreads();
}

// The chunk's result per head from the warps' (chunk_partial's area): per
// head the chunk max M, the warps' weights e^(m_w - M) and the chunk's sum
// and output, in warp order. Warp w takes heads w, w + kWarps, .., lane
// the V = D / 32 outputs from V lane, and hands each to
// put(h, jd, o[V], M, sum). Every thread of the block calls it.
template <int D, int G, class Put> __device__ inline void combine_warps(const uint8_t *smem, Put put)
{
    constexpr int V = D / 32;
    const float *sm_m = (const float *)smem, *sm_l = sm_m + kWarps * G, *sm_o = sm_l + kWarps * G;
    const int w = (int)threadIdx.x / 32, jd = V * ((int)threadIdx.x % 32);
    for (int h = w; h < G; h += kWarps) {
        float M = -INFINITY;
#pragma unroll
        for (int i = 0; i < kWarps; i++)
            M = fmaxf(M, sm_m[i * G + h]);
        float o[V], sum = 0.0f;
#pragma unroll
        for (int j = 0; j < V; j++)
            o[j] = 0.0f;
#pragma unroll
        for (int i = 0; i < kWarps; i++) {
            const float mw = sm_m[i * G + h], wt = mw == -INFINITY ? 0.0f : __expf(mw - M);
            float x[V];
            ld_vec<V>(sm_o + (i * G + h) * (D + kPad) + jd, x);
#pragma unroll
            for (int j = 0; j < V; j++)
                o[j] = fmaf(wt, x[j], o[j]);
            sum = fmaf(wt, sm_l[i * G + h], sum);
        }
        put(h, jd, o, M, sum);
    }
}

// After every warp of the block has written its heads' partials of chunk
// `split` (part_o, part_ml: AttnArgs' layout): the last block of (query,
// kv head) to arrive (counter *done, zero before the launch; that block
// resets it) merges the chunks in chunk order into out, with merge_last's
// arithmetic: o = sum_i e^(m_i - M) o_i / sum_i e^(m_i - M) l_i (zeros
// when no key is visible). Warp w takes heads w, w + kWarps, ..: lane i
// loads chunk i's (m, l) (and 32 + i's), every lane its V outputs of 16
// chunks at a time, all in flight together; the weights go from lane to
// lane by shuffles, so the merge is the counter's round trip and about
// one load round trip, without merge_last's barriers and passes over
// shared memory (with combine_warps, H200 graph us: 32 / 8 heads 11.42 ->
// 10.41, 32 / 4 10.68 -> 9.78; BENCHMARKS.md round 19). Every thread of
// the block calls it.
template <int D, int G>
__device__ inline void merge_chunks(const float *part_o, const float *part_ml, uint32_t *done, float *out, int64_t row0,
                                    int64_t n_split)
{
    static_assert(kMaxSplit <= 64, "two chunks' (m, l) per lane");
    constexpr int V = D / 32, B = 16; // outputs per lane, chunks per batch of loads
    __shared__ int sm_last;
    __syncthreads(); // every warp's partials written (the fence below is cumulative over the barrier)
    if (threadIdx.x == 0) {
        __threadfence();
        const bool last = atomicAdd(done, 1u) == (uint32_t)(n_split - 1);
        if (last)
            __threadfence();
        sm_last = last;
    }
    __syncthreads();
    if (!sm_last)
        return;
    // Branch-free: chunk indices past ns clamped to ns - 1 for the loads
    // (their weights are zero: lanes past ns hold m = -inf), the (m, l)
    // loads first, every shuffle of a batch before its sums, one test
    // before the divisions (32 / 8 heads: 10.41 -> 9.96 us graph; 16 / 2
    // merged through global memory 14.61 -> 10.47; BENCHMARKS.md round 20).
    const int ns = (int)n_split, lane = (int)threadIdx.x % 32, w = (int)threadIdx.x / 32, jd = V * lane;
    for (int h = w; h < G; h += kWarps) {
        const int64_t r0 = (row0 + h) * n_split; // chunk 0's row of head h
        const float2 *pm = (const float2 *)(part_ml + r0 * 2);
        float2 ml0 = __ldcg(pm + min(lane, ns - 1)), ml1 = __ldcg(pm + min(32 + lane, ns - 1));
        if (lane >= ns)
            ml0 = make_float2(-INFINITY, 0.0f);
        if (32 + lane >= ns)
            ml1 = make_float2(-INFINITY, 0.0f);
        float x[B][V];
        auto load = [&](int i0) {
#pragma unroll
            for (int b = 0; b < B; b++)
                ld_vec_cg<V>(part_o + (r0 + min(i0 + b, ns - 1)) * D + jd, x[b]);
        };
        load(0);
        float M = fmaxf(ml0.x, ml1.x);
#pragma unroll
        for (int s = 16; s >= 1; s /= 2)
            M = fmaxf(M, __shfl_xor_sync(kFull, M, s));
        const float w0 = ml0.x == -INFINITY ? 0.0f : expf(ml0.x - M), w1 = ml1.x == -INFINITY ? 0.0f : expf(ml1.x - M);
        float a[V], sum = 0.0f;
#pragma unroll
        for (int j = 0; j < V; j++)
            a[j] = 0.0f;
        for (int i0 = 0; i0 < ns; i0 += B) {
            if (i0 > 0)
                load(i0);
            float wt[B], li[B];
#pragma unroll
            for (int b = 0; b < B; b++) {
                const int i = i0 + b; // < 64: the weight of a chunk past ns is 0
                wt[b] = __shfl_sync(kFull, i < 32 ? w0 : w1, i % 32);
                li[b] = __shfl_sync(kFull, i < 32 ? ml0.y : ml1.y, i % 32);
            }
#pragma unroll
            for (int b = 0; b < B; b++) {
#pragma unroll
                for (int j = 0; j < V; j++)
                    a[j] = fmaf(wt[b], x[b][j], a[j]);
                sum = fmaf(wt[b], li[b], sum);
            }
        }
        if (sum > 0.0f) { // one test for the lane's V outputs
#pragma unroll
            for (int j = 0; j < V; j++)
                a[j] = a[j] / sum;
        } else {
#pragma unroll
            for (int j = 0; j < V; j++)
                a[j] = 0.0f;
        }
        st_vec<V>(out + (row0 + h) * D + jd, a);
    }
    if (threadIdx.x == 0)
        *done = 0; // ready for the next launch (graph replay)
}

// Block (chunk, kv head, query) of the launch: its chunk, then the merge of
// the chunks through global memory (the partials in scratch, the last block
// to arrive merges: merge_chunks).
template <int D, int G>
__global__ void __launch_bounds__(kWarps * 32)
    attn_mma_kernel(const float *q, const uint16_t *k, const uint16_t *v, const int32_t *pos, float *out, float *part_o,
                    float *part_ml, uint32_t *done, int64_t Hq, int64_t Hkv, int64_t S, float scale, int32_t window,
                    int64_t n_split)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    extern __shared__ uint4 attn_mma_smem[];
    uint8_t *smem = (uint8_t *)attn_mma_smem;
    const int64_t split = blockIdx.x, kvh = blockIdx.y, t = blockIdx.z, row0 = t * Hq + kvh * G;
    chunk_partial<D, G>(q, k, v, pos[t], row0, kvh, Hkv, S, scale, window, split, n_split, smem);
    const bool lead = threadIdx.x % 32 == 0;
    combine_warps<D, G>(smem, [&](int h, int jd, const float(&o)[D / 32], float M, float sum) {
        const int64_t row = (row0 + h) * n_split + split;
        st_vec<D / 32>(part_o + row * D + jd, o);
        if (lead)
            *(float2 *)(part_ml + row * 2) = make_float2(M, sum);
    });
    merge_chunks<D, G>(part_o, part_ml, done + t * Hkv + kvh, out, row0, n_split);
}

constexpr int kMaxCluster = 16; // blocks per cluster at most (sm_90's non-portable limit)

// The same with the n_split chunks of a (query, kv head) one cluster (sm_90;
// n_split <= kMaxCluster): after a cluster barrier each block merges a
// share of the G * D outputs from the chunks' results in the blocks'
// shared memory, in chunk order and with merge_last's arithmetic (so the
// values are those of attn_mma_kernel); a second barrier keeps every
// block's memory until the others have read it. No scratch, no counters.
template <int D, int G>
__global__ void __launch_bounds__(kWarps * 32)
    attn_mma_cluster_kernel(const float *q, const uint16_t *k, const uint16_t *v, const int32_t *pos, float *out,
                            int64_t Hq, int64_t Hkv, int64_t S, float scale, int32_t window, int64_t n_split)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    extern __shared__ uint4 attn_mma_smem[];
    uint8_t *smem = (uint8_t *)attn_mma_smem;
    float *part = (float *)(smem + part_offset<D, G>());
    const int64_t kvh = blockIdx.y, t = blockIdx.z, row0 = t * Hq + kvh * G;
    const int ns = (int)n_split, r = (int)cluster_rank();
    chunk_partial<D, G>(q, k, v, pos[t], row0, kvh, Hkv, S, scale, window, r, n_split, smem);
    const bool lead = threadIdx.x % 32 == 0;
    combine_warps<D, G>(smem, [&](int h, int jd, const float(&o)[D / 32], float M, float sum) {
        st_vec<D / 32>(part + part_o<G>() + h * D + jd, o);
        if (lead)
            part[h] = M, part[G + h] = sum;
    });
    cluster_sync(); // every block's part written
    const int per = (G * D + ns - 1) / ns, e1 = (r + 1) * per < G * D ? (r + 1) * per : G * D;
    for (int e = r * per + (int)threadIdx.x; e < e1; e += kWarps * 32) {
        const int h = e / D;
        float cm[kMaxCluster], cl[kMaxCluster], co[kMaxCluster];
#pragma unroll
        for (int i = 0; i < kMaxCluster; i++)
            if (i < ns) {
                const float *pp = cluster_peer(part, (unsigned)i);
                cm[i] = pp[h], cl[i] = pp[G + h], co[i] = pp[part_o<G>() + e];
            }
        float M = -INFINITY;
#pragma unroll
        for (int i = 0; i < kMaxCluster; i++)
            if (i < ns)
                M = fmaxf(M, cm[i]);
        float a = 0.0f, sum = 0.0f;
#pragma unroll
        for (int i = 0; i < kMaxCluster; i++)
            if (i < ns) {
                const float wt = cm[i] == -INFINITY ? 0.0f : expf(cm[i] - M);
                a = fmaf(wt, co[i], a);
                sum = fmaf(wt, cl[i], sum);
            }
        out[(row0 + h) * D + e % D] = sum > 0.0f ? a / sum : 0.0f;
    }
    cluster_sync(); // the other blocks have read this block's part
}

// How many clusters of ns blocks of attn_mma_cluster_kernel<D, G> device
// dev holds at once (the runtime's answer for the kernel's threads and
// shared memory, asked once per device and size); 0 before sm_90 or when
// the runtime does not answer.
template <int D, int G> int max_clusters(int dev, int ns)
{
    static std::atomic<int> known[64][kMaxCluster + 1]; // 0: not asked; else the answer + 1
    if (dev < 0 || dev >= 64 || ns < 0 || ns > kMaxCluster)
        return 0;
    const int a = vt_rocm_memo(known[dev][ns], [dev, ns] {
        auto kernel = attn_mma_cluster_kernel<D, G>;
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = (unsigned)ns;
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3((unsigned)ns);
        cfg.blockDim = dim3(kWarps * 32);
        cfg.dynamicSmemBytes = block_smem<D>();
        cfg.attrs = attr;
        cfg.numAttrs = 1;
        int n = 0, major = 0;
        if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess || major < 9 ||
            vt_mma::smem_opt_in<attn_mma_cluster_kernel<D, G>>(dev, block_smem<D>()) != cudaSuccess ||
            (ns > 8 &&
             cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess) ||
            cudaOccupancyMaxActiveClusters(&n, kernel, &cfg) != cudaSuccess) {
            (void)cudaGetLastError(); // the refusal is an answer, not the launch's error
            n = 0;
        }
        return n + 1;
    });
    return a - 1;
}

// The cluster size for a launch of `need` (query, kv head) pairs whose
// chunks would be n_split, or 0: the chunks then merge through global
// memory. The largest size s from cap = min(n_split, kMaxCluster) down to
// 2 whose clusters are all resident at once on device dev, taken when it
// keeps every chunk (s = cap), or when the global merge would be of more
// than kMaxCluster chunks (one batch of loads per 4 to 16 chunks: slow)
// and s >= 3/4 cap. Otherwise the fewer blocks of the clusters stream the
// keys more slowly than the merge in shared memory saves. H200 (7 clusters
// of 16 fit; BENCHMARKS.md, round 12), d = 128, 4096 positions, graph us,
// cluster against global: 16 / 2 heads 10.54 / 20.27 (2 of 16 against 128
// blocks merging 64 chunks), 32 / 4 heads 10.94 / 17.34; 32 / 8 heads,
// 8 clusters of 9 against 128 blocks, 12.45 / 11.68; 2 tokens, 16 of 6
// against 128, 14.41 / 14.23. Off when vt_rocm_attn_cluster is 0
// (VT_ROCM_ATTN_CLUSTER=0).
template <int D, int G> int cluster_size(int dev, int64_t n_split, int64_t need)
{
    const int cap = n_split < kMaxCluster ? (int)n_split : kMaxCluster;
    if (!vt_rocm_attn_cluster)
        return 0;
    for (int ns = cap; ns >= 2; ns--)
        if (max_clusters<D, G>(dev, ns) >= need)
            return ns == cap || (n_split > kMaxCluster && 4 * ns >= 3 * cap) ? ns : 0;
    return 0;
}

// attn_mma_cluster_kernel over grid, clusters of grid.x blocks, chained as
// VT_LAUNCH_CHAINED's kernels are.
template <int D, int G> hipError_t launch_cluster(const AttnArgs &a, dim3 grid, hipStream_t stream)
{
    vt_launch(attn_mma_cluster_kernel<D, G>, grid, dim3(kWarps * 32), block_smem<D>(), stream, dim3(grid.x, 1, 1), true,
              a.q, a.k, a.v, a.pos, a.o, a.Hq, a.Hkv, a.S, a.scale, a.window, a.n_split);
    return hipGetLastError();
}

template <int D, int G> hipError_t launch_dg(const AttnArgs &a, dim3 grid, hipStream_t stream, int dev)
{
    const cudaError_t e = vt_mma::smem_opt_in<attn_mma_kernel<D, G>>(dev, block_smem<D>());
    if (e != cudaSuccess)
        return e;
    const int ns = cluster_size<D, G>(dev, a.n_split, (int64_t)grid.y * grid.z);
    if (ns) {
        AttnArgs c = a;
        c.n_split = ns;
        return launch_cluster<D, G>(c, dim3((unsigned)ns, grid.y, grid.z), stream);
    }
    VT_LAUNCH_CHAINED((attn_mma_kernel<D, G>), grid, dim3(kWarps * 32), block_smem<D>(), stream, a.q, a.k, a.v, a.pos,
                      a.o, a.po, a.pml, a.done, a.Hq, a.Hkv, a.S, a.scale, a.window, a.n_split);
    return hipGetLastError();
}

template <int D> hipError_t launch_d(const AttnArgs &a, int64_t G, dim3 grid, hipStream_t stream, int dev)
{
    switch (G) {
    case 1: return launch_dg<D, 1>(a, grid, stream, dev);
    case 2: return launch_dg<D, 2>(a, grid, stream, dev);
    case 4: return launch_dg<D, 4>(a, grid, stream, dev);
    default: return launch_dg<D, 8>(a, grid, stream, dev);
    }
}

} // namespace

hipError_t launch_mma(const AttnArgs &a, int64_t d, int64_t G, dim3 grid, hipStream_t stream, int *taken)
{
    *taken = 0;
    int dev = 0;
    if ((d != 64 && d != 128) || (G != 1 && G != 2 && G != 4 && G != 8) || hipGetDevice(&dev) != hipSuccess)
        return hipSuccess;
    const size_t need = d == 64 ? block_smem<64>() : block_smem<128>();
    if (smem_optin(dev) < need)
        return hipSuccess;
    *taken = 1;
    return d == 64 ? launch_d<64>(a, G, grid, stream, dev) : launch_d<128>(a, G, grid, stream, dev);
}

#else /* AMD: the vector kernel of kernels_attention_decode.hip */

hipError_t launch_mma(const AttnArgs &a, int64_t d, int64_t G, dim3 grid, hipStream_t stream, int *taken)
{
    (void)a, (void)d, (void)G, (void)grid, (void)stream;
    *taken = 0;
    return hipSuccess;
}

#endif

} // namespace vt_attn
