// kernels_matmul_moe.hip - MoeExpertMatMul (op 23) grouped by expert: the
// (token, slot) pairs are sorted into one list per selected expert on the
// device (moe_group_kernel: no host round trip, so the op replays from a
// graph), then one block per (R rows, expert) reads that expert's rows once
// and dots them with the x columns of every pair that names it, N at a
// time (the tile decoder of kernels_mmv.h: each weight element is decoded
// once per N pairs, not once per pair). Which shapes and weight types it
// takes: moe_grouped_takes, from the H200 figures of BENCHMARKS.md.
#include "kernels_mmv.h"
#include "rocm_error.h"

namespace
{

using namespace vt_mmv;

// The grouping table in scratch (ints): [0] groups, then per group g the
// expert, the first index into the pair list and the pair count, then the
// pair list (indices t * K + i), grouped.
__host__ __device__ inline int64_t tab_ints(int64_t TK)
{
    return 1 + 3 * TK + TK;
}

// The grouping's block size and its largest pair count (shared arrays).
constexpr int kGroupThreads = 256, kGroupMaxPairs = 2048;

// One block over TK <= kGroupMaxPairs pairs: pair p's leader is the first
// pair naming the same expert; a leader opens a group, numbered by the
// leaders before it; pairs sit in their group in index order (O(TK) per
// pair from shared memory).

__global__ void __launch_bounds__(kGroupThreads) moe_group_kernel(const int32_t *ids, int TK, int32_t *tab)
{
    __shared__ int32_t sid[kGroupMaxPairs], lead[kGroupMaxPairs];
    for (int p = (int)threadIdx.x; p < TK; p += blockDim.x)
        sid[p] = ids[p];
    __syncthreads();
    for (int p = (int)threadIdx.x; p < TK; p += blockDim.x) {
        const int e = sid[p];
        int q = 0;
        while (sid[q] != e) // stops at p at the latest
            q++;
        lead[p] = q;
    }
    __syncthreads();
    int32_t *gexp = tab + 1, *gstart = gexp + TK, *gcount = gstart + TK, *pairs = gcount + TK;
    for (int p = (int)threadIdx.x; p < TK; p += blockDim.x) {
        const int L = lead[p];
        int before = 0, rank = 0, groups = 0, count = 0;
        for (int q = 0; q < TK; q++) {
            const int lq = lead[q];
            before += lq < L;
            rank += (lq == L) & (q < p);
            groups += (lq == q) & (q < p);
            count += lq == p;
        }
        pairs[before + rank] = p;
        if (L == p) {
            gexp[groups] = sid[p];
            gstart[groups] = before;
            gcount[groups] = count;
        }
        if (p == TK - 1)
            tab[0] = groups + (L == p);
    }
}

// Shared bytes of a block of nw wavefronts: each a ring of two tiles of R
// rows, then the wavefronts' R x N sums. Sized by the wavefronts launched
// (not kernels_mmv.h's largest block), so small k keeps many blocks per CU.
template <uint32_t DT, int N, int R> __host__ __device__ constexpr size_t moe_shm(int nw)
{
    return (size_t)nw * (2 * R * buf_pieces(DT) * 16 + R * N * 4);
}

// Block (b, g): rows [b * R, b * R + R) of group g's expert for each pair
// of the group, N pairs per pass over the rows (a missing pair repeats the
// last and is not stored).
template <uint32_t DT, int N, int R>
__global__ void __launch_bounds__((max_waves<DT, R>() * VT_ROCM_WAVE))
    moe_grouped_kernel(const float *x, int x_per_slot, const uint8_t *w, int64_t row_bytes, const int32_t *tab,
                       float *y, int TK, int K, int64_t m, int64_t k, bool aligned)
{
    extern __shared__ uint4 moe_dyn[];
    const int g = (int)blockIdx.y;
    if (g >= tab[0])
        return;
    const int e = tab[1 + g], first = tab[1 + TK + g], count = tab[1 + 2 * TK + g];
    const int32_t *pairs = tab + 1 + 3 * TK;
    const int wv = (int)threadIdx.x / VT_ROCM_WAVE, nw = (int)blockDim.x / VT_ROCM_WAVE;
    const int lane = (int)threadIdx.x % VT_ROCM_WAVE;
    uint4 *buf = moe_dyn + wv * 2 * R * buf_pieces(DT);
    float *part = (float *)(moe_dyn + nw * 2 * R * buf_pieces(DT)); // [nw][R * N]
    const int64_t row0 = (int64_t)blockIdx.x * R;
    const uint8_t *wr[R];
#pragma unroll
    for (int r = 0; r < R; r++)
        wr[r] = w + ((int64_t)e * m + (row0 + r < m ? row0 + r : m - 1)) * row_bytes;
    int64_t t0, t1;
    tile_share((k + tile_elems(DT) - 1) / tile_elems(DT), wv, nw, t0, t1);
    for (int c0 = 0; c0 < count; c0 += N) {
        int sl[N];
        const float *xs[N];
#pragma unroll
        for (int j = 0; j < N; j++) {
            const int c = c0 + j < count ? c0 + j : count - 1;
            sl[j] = pairs[first + c];
            xs[j] = x + (int64_t)(x_per_slot ? sl[j] : sl[j] / K) * k;
        }
        float acc[R][N] = {};
        rows_dot<DT, N, R>(buf, wr, row_bytes, xs, k, t0, t1, aligned, acc);
        // each wavefront's xor tree, then the wavefronts in order
#pragma unroll
        for (int r = 0; r < R; r++)
#pragma unroll
            for (int j = 0; j < N; j++) {
                const float sw = wave_sum(acc[r][j]);
                if (lane == 0)
                    part[wv * R * N + r * N + j] = sw;
            }
        __syncthreads();
        const int i = (int)threadIdx.x, r = i / N, j = i % N;
        if (i < R * N) {
            float sum = 0.0f;
            for (int v = 0; v < nw; v++)
                sum += part[v * R * N + i];
            int slot = sl[0];
#pragma unroll
            for (int jj = 1; jj < N; jj++)
                if (j == jj)
                    slot = sl[jj];
            if (row0 + r < m && c0 + j < count)
                y[(int64_t)slot * m + row0 + r] = sum;
        }
        __syncthreads(); // part is rewritten by the next pass
    }
}

// One token with the id check folded in (one launch): block (b, s) takes
// rows [b R, b R + R) of expert ids[s] for slot s alone (at one token each
// slot has its own output rows: no grouping). Every block checks the TK
// ids; block (0, 0) records the first one outside [0, E) as
// vt_rocm_launch_check_range does, and a bad call computes every slot with
// expert 0, as the checked copy (all 0) would have it.
template <uint32_t DT, int R>
__global__ void __launch_bounds__((max_waves<DT, R>() * VT_ROCM_WAVE))
    moe_slot_kernel(const float *x, int x_per_slot, const uint8_t *w, int64_t row_bytes, const int32_t *ids,
                    vt_rocm_err *err, uint32_t op, int64_t E, float *y, int TK, int K, int64_t m, int64_t k,
                    bool aligned)
{
    extern __shared__ uint4 moe_dyn[];
    __shared__ int64_t first;
    const int s = (int)blockIdx.y;
    int e = ids[s];
    const int64_t f = vt_block_first(
        TK, [&](int64_t i) { return ids[i] < 0 || (int64_t)ids[i] >= E; }, &first);
    if (f < TK) {
        e = 0;
        if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0)
            vt_rocm_err_set(err, VT_ROCM_ERR_RANGE, op, VT_ROCM_NAME_IDS, f, ids[f], E, -1);
    }
    const int wv = (int)threadIdx.x / VT_ROCM_WAVE, nw = (int)blockDim.x / VT_ROCM_WAVE;
    const int lane = (int)threadIdx.x % VT_ROCM_WAVE;
    uint4 *buf = moe_dyn + wv * 2 * R * buf_pieces(DT);
    float *part = (float *)(moe_dyn + nw * 2 * R * buf_pieces(DT)); // [nw][R]
    const int64_t row0 = (int64_t)blockIdx.x * R;
    const uint8_t *wr[R];
#pragma unroll
    for (int r = 0; r < R; r++)
        wr[r] = w + ((int64_t)e * m + (row0 + r < m ? row0 + r : m - 1)) * row_bytes;
    int64_t t0, t1;
    tile_share((k + tile_elems(DT) - 1) / tile_elems(DT), wv, nw, t0, t1);
    const float *const xs[1] = {x + (int64_t)(x_per_slot ? s : s / K) * k};
    float acc[R][1] = {};
    rows_dot<DT, 1, R>(buf, wr, row_bytes, xs, k, t0, t1, aligned, acc);
#pragma unroll
    for (int r = 0; r < R; r++) {
        const float sw = wave_sum(acc[r][0]);
        if (lane == 0)
            part[wv * R + r] = sw;
    }
    __syncthreads();
    const int i = (int)threadIdx.x;
    if (i < R && row0 + i < m) {
        float sum = 0.0f;
        for (int v = 0; v < nw; v++)
            sum += part[v * R + i];
        y[(int64_t)s * m + row0 + i] = sum;
    }
}

// Wavefronts per block for k (as kernels_mmv.h's waves_for, for R rows).
template <uint32_t DT, int R> unsigned moe_waves(int64_t k)
{
    constexpr int wmax = max_waves<DT, R>();
    const int64_t tiles = (k + tile_elems(DT) - 1) / tile_elems(DT);
    const int64_t per = (tiles + wmax - 1) / wmax;
    const int64_t nw = (tiles + per - 1) / per;
    return (unsigned)(nw < 1 ? 1 : nw);
}

// Queue moe_grouped_kernel<DT, N, R> over groups blocks of rows.
template <uint32_t DT, int N, int R>
hipError_t launch_grouped(const float *x, int x_per_slot, const uint8_t *w, int64_t rb, const int32_t *tab, float *y,
                          int TK, int K, int64_t m, int64_t k, hipStream_t stream, bool aligned)
{
    const unsigned nw = moe_waves<DT, R>(k);
    const size_t shm = moe_shm<DT, N, R>((int)nw);
    hipLaunchKernelGGL((moe_grouped_kernel<DT, N, R>), dim3((unsigned)((m + R - 1) / R), (unsigned)TK),
                       dim3(nw * (unsigned)host_wave()), shm, stream, x, x_per_slot, w, rb, tab, y, TK, K, m, k,
                       aligned);
    return hipGetLastError();
}

// Queue moe_slot_kernel<DT, R> over the TK slots of one token.
template <uint32_t DT, int R>
hipError_t launch_slots(const float *x, int x_per_slot, const uint8_t *w, int64_t rb, const int32_t *ids,
                        vt_rocm_err *err, uint32_t op, int64_t E, float *y, int TK, int K, int64_t m, int64_t k,
                        hipStream_t stream, bool aligned)
{
    const unsigned nw = moe_waves<DT, R>(k);
    const size_t shm = moe_shm<DT, 1, R>((int)nw);
    hipLaunchKernelGGL((moe_slot_kernel<DT, R>), dim3((unsigned)((m + R - 1) / R), (unsigned)TK),
                       dim3(nw * (unsigned)host_wave()), shm, stream, x, x_per_slot, w, rb, ids, err, op, E, y, TK, K,
                       m, k, aligned);
    return hipGetLastError();
}

// Rows per block of the one-token kernel: q4_0 8 (H200, E = 128, 8 slots,
// m = 768, k = 2048: 7.75 us against 8.10 at 4, 9.41 at 2), the others 4.
constexpr int kSlotRows = 4, kSlotRowsQ4 = 8;

struct MoeArgs {
    const float *x;
    int x_per_slot;
    const uint8_t *w;
    int64_t row_bytes;
    const int32_t *ids;
    int32_t *tab;
    float *y;
    int TK, K;
    int64_t m, k;
    hipStream_t stream;
    bool aligned;
};

// Rows per block and pairs per pass: 4 rows, 2 pairs (an expert meets
// about 1.6 of 16 tokens' 128 pairs; wider passes mostly repeat a column:
// H200, q4_0, 16 tokens: 91.8 us at 2 pairs, 96.4 at 1, 151.1 at 4).
constexpr int kRows = 4, kPairs = 2;

// Queue the grouping, then the product for DT.
template <uint32_t DT> hipError_t run_moe(const MoeArgs &a)
{
    hipLaunchKernelGGL(moe_group_kernel, dim3(1), dim3(kGroupThreads), 0, a.stream, a.ids, a.TK, a.tab);
    const hipError_t e = hipGetLastError();
    if (e != hipSuccess)
        return e;
    return launch_grouped<DT, kPairs, kRows>(a.x, a.x_per_slot, a.w, a.row_bytes, a.tab, a.y, a.TK, a.K, a.m, a.k,
                                             a.stream, a.aligned);
}

// Whether the grouped kernels run T tokens of weight type dt: measured on
// the H200 against kernels_mmv*.hip (BENCHMARKS.md; E = 128, 8 of them per
// token, m = 768, k = 2048): at one token those are faster (q4_0 7.2
// against 10.4 us); at 4 tokens q4_0 and q4_k gain (33.8 / 42.0 against
// 48.2 / 59.6 us), q8_0, q6_k and f16 do not (52.9 / 49.2 / 76.2 against
// 50.1 / 47.5 / 62.5 us); at 16 tokens every one gains (91 - 224 against
// 244 - 349 us). bf16 and iq4_nl were not timed: they keep the old path.
bool moe_grouped_takes(uint32_t dt, int64_t T)
{
    if (T < 2)
        return false;
    if (dt == VT_Q4_0 || dt == VT_Q4_K)
        return true;
    return T >= 8 && (dt == VT_Q8_0 || dt == VT_Q6_K || dt == VT_F16);
}

} // namespace

// Scratch bytes the grouped MoeExpertMatMul wants for T x K pairs (the
// grouping table), 0 when it does not take the shape.
extern "C" uint64_t vt_rocm_moe_grouped_scratch_bytes(uint32_t w_dtype, int64_t T, int64_t K)
{
    if (!moe_grouped_takes(w_dtype, T) || T * K > kGroupMaxPairs)
        return 0;
    return (uint64_t)tab_ints(T * K) * 4;
}

// MoeExpertMatMul grouped by expert (ids [T, K] checked; tab: the scratch
// of vt_rocm_moe_grouped_scratch_bytes): *taken = 0 when the weight type,
// shape or alignment is not one of these kernels'.
extern "C" hipError_t vt_rocm_launch_moe_grouped(const float *x, int x_per_slot, const void *w, uint32_t w_dtype,
                                                 const int32_t *ids, void *tab, float *y, int64_t T, int64_t K,
                                                 int64_t m, int64_t k, hipStream_t stream, int *taken)
{
    *taken = 0;
    const int be = blk_elems(w_dtype), bb = blk_bytes(w_dtype);
    if (!moe_grouped_takes(w_dtype, T) || !tab || K <= 0 || m <= 0 || k <= 0 || T * K > kGroupMaxPairs || bb == 0 ||
        k % be != 0 || k % 8 != 0 || (uintptr_t)x % 16 != 0 || m > (int64_t)1 << 30)
        return hipSuccess;
    const int64_t rb = k / be * bb;
    const MoeArgs a = {x,
                       x_per_slot,
                       (const uint8_t *)w,
                       rb,
                       ids,
                       (int32_t *)tab,
                       y,
                       (int)(T * K),
                       (int)K,
                       m,
                       k,
                       stream,
                       (uintptr_t)w % 16 == 0 && rb % 16 == 0};
    *taken = 1;
    switch (w_dtype) {
    case VT_F16: return run_moe<VT_F16>(a);
    case VT_Q4_0: return run_moe<VT_Q4_0>(a);
    case VT_Q8_0: return run_moe<VT_Q8_0>(a);
    case VT_Q4_K: return run_moe<VT_Q4_K>(a);
    case VT_Q6_K: return run_moe<VT_Q6_K>(a);
    }
    *taken = 0;
    return hipSuccess;
}

namespace
{

// The most pairs T K (T >= 2) vt_rocm_launch_moe_slots_checked takes as
// slots of the one-token kernel, each reading its own expert's rows; more
// go to the chunked kernel, which reads each expert once for all its pairs.
// On the H100 (E = 128, 8 used, m = 768, k = 2048, plugin-ab, graph us),
// chunked against slots: q4_0 t = 2 14.78 -> 11.96, t = 4 22.05 -> 17.50,
// t = 8 32.35 -> 29.63, t = 12 42.53 -> 41.02, t = 16 50.88 -> 52.85; at
// m = 2048, k = 768: q4_0 t = 2 13.94 -> 11.78, t = 4 21.14 -> 19.39, t = 8
// 31.97 -> 29.99, t = 12 40.72 -> 41.68, q4_k t = 12 44.00 -> 43.25 (96
// pairs sit at the crossover on both shapes).
constexpr int64_t kMoeOnePairs = 96;

// The weight-row bytes of the slot kernels for K slots of a token (0: they
// do not take the shapes or alignments: K up to 65535, k a multiple of the
// block and of 8, x 16-byte aligned, at most 2^30 rows).
int64_t moe_slot_row_bytes(const float *x, uint32_t w_dtype, int64_t E, int64_t K, int64_t m, int64_t k)
{
    const int be = blk_elems(w_dtype), bb = blk_bytes(w_dtype);
    if (K <= 0 || K > 65535 || E <= 0 || m <= 0 || k <= 0 || bb == 0 || k % be != 0 || k % 8 != 0 ||
        (uintptr_t)x % 16 != 0 || m > (int64_t)1 << 30)
        return 0;
    return k / be * bb;
}

} // namespace

// MoeExpertMatMul at one token with the id check folded in (ids [K] as the
// caller passed them, E experts): *taken = 0 (nothing queued) unless the
// weight type is a block format with the matrix-instruction kernel's shapes
// (kernels_mmv_mma.hip, every format but q6_k), or q4_0, q8_0, q4_k or q6_k
// with the tile decoder's alignments. H200 (BENCHMARKS.md, E = 128, 8 used,
// m = 768, k = 2048), graph mode: the matrix-instruction kernel against the
// tile decoder: q4_0 7.27 / 8.45 us, q8_0 9.83 / 11.58, q4_k 7.42 / 10.37,
// q6_k 12.72 / 11.57 (q6_k keeps the tile decoder); f16 12.63 against 10.40
// on kernels_mmv* keeps that path.
extern "C" hipError_t vt_rocm_launch_moe_one_checked(vt_rocm_err *err, uint32_t op, const float *x, int x_per_slot,
                                                     const void *w, uint32_t w_dtype, const int32_t *ids, int64_t E,
                                                     float *y, int64_t K, int64_t m, int64_t k, hipStream_t stream,
                                                     int *taken)
{
    *taken = 0;
    const int64_t rb = moe_slot_row_bytes(x, w_dtype, E, K, m, k);
    if (rb == 0)
        return hipSuccess;
    const bool al = (uintptr_t)w % 16 == 0 && rb % 16 == 0;
    const uint8_t *wb = (const uint8_t *)w;
    /* 0 slots a token: every slot reads x row 0 (no division in the kernel) */
    const hipError_t em =
        run_mma_moe_one(w_dtype, x, x_per_slot, wb, rb, ids, K, 0, E, err, op, y, m, k, stream, taken);
    if (*taken || em != hipSuccess)
        return em;
    const int TK = (int)K;
    switch (w_dtype) {
    case VT_Q4_0:
        *taken = 1;
        return launch_slots<VT_Q4_0, kSlotRowsQ4>(x, x_per_slot, wb, rb, ids, err, op, E, y, TK, TK, m, k, stream, al);
    case VT_Q8_0:
        *taken = 1;
        return launch_slots<VT_Q8_0, kSlotRows>(x, x_per_slot, wb, rb, ids, err, op, E, y, TK, TK, m, k, stream, al);
    case VT_Q4_K:
        *taken = 1;
        return launch_slots<VT_Q4_K, kSlotRows>(x, x_per_slot, wb, rb, ids, err, op, E, y, TK, TK, m, k, stream, al);
    case VT_Q6_K:
        *taken = 1;
        return launch_slots<VT_Q6_K, kSlotRows>(x, x_per_slot, wb, rb, ids, err, op, E, y, TK, TK, m, k, stream, al);
    }
    return hipSuccess;
}

// MoeExpertMatMul at 2 <= T tokens of K slots (T K <= kMoeOnePairs) as the
// T K slots of the one-token matrix-instruction kernel, the ids checked in
// it: *taken = 0 (nothing queued) unless the weight type is a block format
// with that kernel's shapes (every format but q6_k).
extern "C" hipError_t vt_rocm_launch_moe_slots_checked(vt_rocm_err *err, uint32_t op, const float *x, int x_per_slot,
                                                       const void *w, uint32_t w_dtype, const int32_t *ids, int64_t E,
                                                       float *y, int64_t T, int64_t K, int64_t m, int64_t k,
                                                       hipStream_t stream, int *taken)
{
    *taken = 0;
    const int64_t rb = moe_slot_row_bytes(x, w_dtype, E, K, m, k);
    if (T < 2 || T * K > kMoeOnePairs || rb == 0)
        return hipSuccess;
    return run_mma_moe_one(w_dtype, x, x_per_slot, (const uint8_t *)w, rb, ids, T * K, K, E, err, op, y, m, k, stream,
                           taken);
}
