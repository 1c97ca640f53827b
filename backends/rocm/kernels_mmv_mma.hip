// kernels_mmv_mma.hip - the decode MatMul (n = 1..8 columns of f32 x against
// block-format weights read once) on NVIDIA's matrix instructions
// (mma.sync m16n8k16: f16 A and B, f32 accumulators), for q4_0, q8_0,
// iq4_nl and q4_k. Other targets and formats keep kernels_mmv.h's kernels
// (run_mma answers *taken = 0).
//
// A: the weight codes of 32-element blocks (q4_k: sub-blocks) as f16, which
// are exact (q4_0: q - 8, q8_0: the int8, iq4_nl: the book value, q4_k: the
// nibble), built from the packed words with a few integer instructions.
// B: each block of each column of x split into hi = f16(x * 2^-e) and
// lo = f16(x * 2^-e - hi) with a power of two 2^e per block and column that
// puts the block's largest magnitude in [2^14, 2^15): hi + lo carries 22
// significant bits of every x (exact scaling), well inside SPEC 7's 1e-4.
// One mma column holds hi, the next lo, of one (block, column of x); the
// columns of a tile that belong to another block are zero where the k
// positions are not theirs, so each accumulator is the dot product of one
// row's block with one block of one column. Those f32 results are scaled
// by the block's weight scale and 2^e and summed in a fixed order: results
// do not depend on timing.
//
// A warp takes 32 rows (two 16-row tiles) and a contiguous share of the
// 256-element tiles of k; the tiles of its 32 rows stream through its own
// ring of shared memory with 16-byte cp.async copies. Per 128 elements the
// warp splits x into hi/lo (every lane four elements per column) into
// shared memory once for both row tiles. The warps' sums meet in shared
// memory in warp order.
#include "kernels_mmv.h"

#if defined(VT_HIP_PLATFORM_NVIDIA)
#include <cuda_fp16.h>

namespace vt_mmv
{
namespace
{

constexpr int kWarpRows = 32; // rows per warp: two 16-row mma tiles
constexpr int kTile = 256;    // elements of k per staged tile
constexpr unsigned kFull = 0xffffffffu;

// Bytes of one row's 256-element tile of dtype DT.
template <uint32_t DT> __host__ __device__ constexpr int tile_row_bytes()
{
    return DT == 8 ? 272 : 144;
}
// Staged tiles per warp for DT at N columns (the ring's depth): two where
// the block can then hold 16 warps (more warps hide more latency), four for
// the 8 warps that fit otherwise.
template <uint32_t DT, int N> __host__ __device__ constexpr int ring_depth()
{
    return DT == 8 || N <= 4 ? 2 : 4;
}

// Lower / upper f16 halves of a word as f16x2 arithmetic operands.
__device__ inline uint32_t h2_sub(uint32_t a, uint32_t b)
{
    uint32_t r;
    asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
__device__ inline uint32_t h2_fma(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t r;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}

// The bits of an f16x2.
__device__ inline uint32_t h2_bits(__half2 h)
{
    uint32_t u;
    memcpy(&u, &h, sizeof u);
    return u;
}

// W 32-bit words from byte offset o (even) of shared memory at b: aligned
// loads and funnel shifts.
template <int W> __device__ inline void sh_words(const uint8_t *b, int o, uint32_t (&w)[W])
{
    const uint32_t *q = (const uint32_t *)(const void *)b + (o >> 2);
    const int sh = 8 * (o & 3);
    uint32_t r[W + 1];
#pragma unroll
    for (int i = 0; i <= W; i++)
        r[i] = q[i];
#pragma unroll
    for (int i = 0; i < W; i++)
        w[i] = __funnelshift_r(r[i], r[i + 1], sh);
}

// f16 at byte o (even) of shared memory at b, as float.
__device__ inline float sh_f16(const uint8_t *b, int o)
{
    return __half2float(__ushort_as_half(((const uint16_t *)(const void *)b)[o >> 1]));
}

// The group of 4 elements of a block that run r (elements 4r..4r+3) is in
// the A registers, and how the pair registers hold them: adjacent
// ((0,1), (2,3)) or interleaved ((0,2), (1,3)).
template <uint32_t DT> __device__ constexpr int group_of_run(int r)
{
    return (DT == 2 || DT == 20) ? 2 * (r & 3) + (r >> 2) : r;
}
template <uint32_t DT> __host__ __device__ constexpr bool adjacent_pairs()
{
    return DT == 20;
}

// A registers of groups 2u0 .. 2(u0 + U) - 1 of block b (0..3) of chunk h
// (0, 1) of a row's staged tile `row`, the block's weight scale dw and its
// min coefficient mw (value = dw * code - mw; mw = 0 but for q4_k). Group
// q's registers: a[q - 2 u0][0] and [1] (element order of group_of_run).
template <uint32_t DT, int U>
__device__ inline void block_regs(const uint8_t *row, int h, int b, int u0, uint32_t (&a)[2 * U][2], float &dw,
                                  float &mw)
{
    mw = 0.0f;
    if (DT == 2 || DT == 20) { /* q4_0 / iq4_nl: unit u = qs word u: low nibbles group 2u, high 2u + 1 */
        const int o = 18 * (4 * h + b);
        dw = sh_f16(row, o);
        uint32_t w[U];
        sh_words<U>(row, o + 2 + 4 * u0, w);
#pragma unroll
        for (int i = 0; i < U; i++) {
            if (DT == 2) {
                const uint32_t wh = w[i] >> 8;
                const uint32_t l0 = (w[i] & 0x000F000Fu) | 0x64006400u, l1 = (wh & 0x000F000Fu) | 0x64006400u;
                const uint32_t h0 = (w[i] & 0x00F000F0u) | 0x64006400u, h1 = (wh & 0x00F000F0u) | 0x64006400u;
                /* 1024 + q - 1032; (1024 + 16 q) / 16 - 72 */
                a[2 * i][0] = h2_sub(l0, 0x64086408u);
                a[2 * i][1] = h2_sub(l1, 0x64086408u);
                a[2 * i + 1][0] = h2_fma(h0, 0x2C002C00u, 0xD480D480u);
                a[2 * i + 1][1] = h2_fma(h1, 0x2C002C00u, 0xD480D480u);
            } else {
                /* the book plus 128 as bytes: nibble -> byte with two permutes of 8 */
                const uint32_t q = w[i] & 0x77777777u, sel = 0x32103210u | ((w[i] & 0x88888888u) >> 1);
                uint32_t t[2];
#pragma unroll
                for (int s = 0; s < 2; s++) {
                    const uint32_t lo = __byte_perm(0x3F2D1801u, 0x766A5D4Fu, q >> (16 * s));
                    const uint32_t hi = __byte_perm(0xA6998D81u, 0xF1D9C5B5u, q >> (16 * s));
                    t[s] = __byte_perm(lo, hi, sel >> (16 * s));
                }
                /* t[0]: elements 4u, 4u+16, 4u+1, 4u+17; t[1]: 4u+2, 4u+18, 4u+3, 4u+19; f16 1024 + byte - 1152 */
                a[2 * i][0] = h2_sub(__byte_perm(t[0], 0x64646464u, 0x4240), 0x64806480u);
                a[2 * i][1] = h2_sub(__byte_perm(t[1], 0x64646464u, 0x4240), 0x64806480u);
                a[2 * i + 1][0] = h2_sub(__byte_perm(t[0], 0x64646464u, 0x4341), 0x64806480u);
                a[2 * i + 1][1] = h2_sub(__byte_perm(t[1], 0x64646464u, 0x4341), 0x64806480u);
            }
        }
    } else if (DT == 8) { /* q8_0: unit u = qs words 2u, 2u + 1, one group each */
        const int o = 34 * (4 * h + b);
        dw = sh_f16(row, o);
        uint32_t w[2 * U];
        sh_words<2 * U>(row, o + 2 + 8 * u0, w);
#pragma unroll
        for (int i = 0; i < 2 * U; i++) {
            const uint32_t x = w[i] ^ 0x80808080u; /* byte + 128 */
            a[i][0] = h2_sub(__byte_perm(x, 0x64646464u, 0x4240), 0x64806480u);
            a[i][1] = h2_sub(__byte_perm(x, 0x64646464u, 0x4341), 0x64806480u);
        }
    } else { /* q4_k: sub-block s = 4h + b: nibble half s % 2 of qs bytes 32 (s / 2) .. + 31 */
        const int s = 4 * h + b;
        const float d = sh_f16(row, 0), dmin = sh_f16(row, 2);
        const uint8_t *sc = row + 4;
        int scv, mv;
        if (s < 4) {
            scv = sc[s] & 63;
            mv = sc[s + 4] & 63;
        } else {
            scv = (sc[s + 4] & 0xF) | ((sc[s - 4] >> 6) << 4);
            mv = (sc[s + 4] >> 4) | ((sc[s] >> 6) << 4);
        }
        dw = d * (float)scv;
        mw = dmin * (float)mv;
        uint32_t w[2 * U];
        sh_words<2 * U>(row, 16 + 32 * (s >> 1) + 8 * u0, w);
        const int ns = 4 * (s & 1);
#pragma unroll
        for (int i = 0; i < 2 * U; i++) {
            const uint32_t x = w[i] >> ns, xh = w[i] >> (ns + 8);
            a[i][0] = h2_sub((x & 0x000F000Fu) | 0x64006400u, 0x64006400u);
            a[i][1] = h2_sub((xh & 0x000F000Fu) | 0x64006400u, 0x64006400u);
        }
    }
}

// d += A * B (m16n8k16, f16 inputs, f32 accumulators).
__device__ inline void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
    (void)d, (void)a, (void)b0, (void)b1;
    __trap();
#endif
}

// Per warp, in shared memory: the ring of staged tiles, then the hi/lo
// split of one 128-element chunk of x (Bs[j][block][hi/lo][group] as
// pairs of f16x2), the blocks' powers of two and sums of x.
template <uint32_t DT, int N> struct WarpSmem {
    static constexpr int ring = ring_depth<DT, N>() * kWarpRows * tile_row_bytes<DT>();
    static constexpr int bs = N * 4 * 2 * 8 * 8;
    static constexpr int bytes = ring + bs + 2 * N * 4 * 4;
};

// Split this lane's 4 elements xv (elements 4 lane.. of a 128-element
// chunk) of each of the N columns into shared memory
// (bs, pw: 2^e per (column, block), xsum: sum of x per (column, block)).
template <uint32_t DT, int N>
__device__ inline void split_x(const float4 (&xv)[N], int lane, uint2 *bs, float *pw, float *xsum)
{
    const int b = lane >> 3, r = lane & 7, q = group_of_run<DT>(r);
#pragma unroll
    for (int j = 0; j < N; j++) {
        const float4 v = xv[j];
        float mx = fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w)));
        mx = fmaxf(mx, __shfl_xor_sync(kFull, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(kFull, mx, 2));
        mx = fmaxf(mx, __shfl_xor_sync(kFull, mx, 4));
        /* 2^sh puts mx in [2^14, 2^15); clamped so 2^sh and 2^-sh stay normal */
        const int ex = (int)((__float_as_uint(mx) >> 23) & 0xFF);
        const int sh = 141 - ex < 126 ? 141 - ex : 126;
        const float inv = __uint_as_float((uint32_t)(sh + 127) << 23);
        const float p0 = v.x * inv, p1 = v.y * inv, p2 = v.z * inv, p3 = v.w * inv;
        const float f0 = adjacent_pairs<DT>() ? p0 : p0, f1 = adjacent_pairs<DT>() ? p1 : p2;
        const float f2 = adjacent_pairs<DT>() ? p2 : p1, f3 = adjacent_pairs<DT>() ? p3 : p3;
        const __half2 h0 = __floats2half2_rn(f0, f1), h1 = __floats2half2_rn(f2, f3);
        const float2 g0 = __half22float2(h0), g1 = __half22float2(h1);
        const __half2 l0 = __floats2half2_rn(f0 - g0.x, f1 - g0.y), l1 = __floats2half2_rn(f2 - g1.x, f3 - g1.y);
        const int base = ((j * 4 + b) * 2) * 8 + q;
        bs[base] = make_uint2(h2_bits(h0), h2_bits(h1));
        bs[base + 8] = make_uint2(h2_bits(l0), h2_bits(l1));
        if (DT == 12) {
            float s = (v.x + v.y) + (v.z + v.w);
            s += __shfl_xor_sync(kFull, s, 1);
            s += __shfl_xor_sync(kFull, s, 2);
            s += __shfl_xor_sync(kFull, s, 4);
            if (r == 0)
                xsum[j * 4 + b] = s;
        }
        if (r == 0)
            pw[j * 4 + b] = __uint_as_float((uint32_t)(127 - sh) << 23);
    }
}

// 16 bytes global -> shared without registers.
__device__ inline void cp16(void *dst, const void *src)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src) : "memory");
}

// Queue tile t of the warp's 32 rows wr (rows row_bytes apart from w0)
// into the ring slot dst, and close the group.
template <uint32_t DT>
__device__ inline void stage(uint8_t *dst, const uint8_t *w0, int64_t row_bytes, int64_t t, int lane)
{
    constexpr int TB = tile_row_bytes<DT>(), P = TB / 16;
    const uint8_t *src = w0 + t * TB;
#pragma unroll
    for (int p = lane; p < kWarpRows * P; p += 32) {
        const int r = p / P, c = p % P;
        cp16(dst + r * TB + 16 * c, src + r * row_bytes + 16 * c);
    }
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// MatMul: block i takes rows [32 i, 32 i + 32) (past m: the last row again,
// not stored), its warps a contiguous share of the tiles of k each;
// y[j, c] = x[j] . W[c] for the n <= N columns (a missing column repeats
// the last one and is not stored). w0 is 16-byte aligned and row_bytes a
// multiple of 16.
template <uint32_t DT, int N>
__global__ void __launch_bounds__(N == 8 ? 256 : 512)
    mma_kernel(const float *x, const uint8_t *w, int64_t row_bytes, float *y, int n, int64_t m, int64_t k)
{
    extern __shared__ __align__(16) uint8_t smem[];
    constexpr int S = ring_depth<DT, N>(), TB = tile_row_bytes<DT>();
    constexpr int T = N == 8 ? 2 : 1;               /* mma tiles of 8 columns */
    constexpr int BV = N == 1 ? 1 : N == 2 ? 2 : 4; /* blocks a lane visits per chunk */
    constexpr int U = 4 / BV;                       /* units (2 groups) per visit */
    const int lane = (int)threadIdx.x & 31, wv = (int)threadIdx.x >> 5, nw = (int)blockDim.x >> 5;
    const int g = lane >> 2, t = lane & 3;
    uint8_t *mine = smem + wv * WarpSmem<DT, N>::bytes;
    uint8_t *ring = mine;
    uint2 *bs = (uint2 *)(void *)(mine + WarpSmem<DT, N>::ring);
    float *pw = (float *)(void *)(mine + WarpSmem<DT, N>::ring + WarpSmem<DT, N>::bs);
    float *xsum = pw + 4 * N;
    float *part = (float *)(void *)(smem + nw * WarpSmem<DT, N>::bytes); /* [nw][32 rows][N] */

    const int64_t row0 = (int64_t)blockIdx.x * kWarpRows;
    /* the warp's rows: 32 consecutive ones past row0, clamped to m - 1 (a
     * clamped row's tile is staged from the last row: still in bounds) */
    const int64_t rows_here = m - row0 < kWarpRows ? m - row0 : kWarpRows;
    const float *xs[N];
#pragma unroll
    for (int j = 0; j < N; j++)
        xs[j] = x + (int64_t)(j < n ? j : n - 1) * k;

    const int64_t tiles = k / kTile;
    const int64_t q = tiles / nw, rem = tiles % nw;
    const int64_t t0 = wv * q + (wv < rem ? wv : rem), t1 = t0 + q + (wv < rem ? 1 : 0);

    /* staging: rows past m read the last row instead */
    const uint8_t *w0 = w + row0 * row_bytes;
    const bool full = rows_here == kWarpRows;

    float acc[2][2][T] = {};
    /* x of the next chunk, loaded one chunk ahead */
    float4 xn[N];
    if (t0 < t1) {
#pragma unroll
        for (int j = 0; j < N; j++)
            xn[j] = __ldg((const float4 *)(xs[j] + t0 * kTile) + lane);
    }
    if (full) {
#pragma unroll
        for (int i = 0; i < S - 1; i++) {
            if (t0 + i < t1)
                stage<DT>(ring + (i % S) * kWarpRows * TB, w0, row_bytes, t0 + i, lane);
            else
                asm volatile("cp.async.commit_group;\n" ::: "memory");
        }
    }
    for (int64_t tt = t0; tt < t1; tt++) {
        uint8_t *cur = ring + (int)((tt - t0) % S) * kWarpRows * TB;
        if (full) {
            if (tt + S - 1 < t1)
                stage<DT>(ring + (int)((tt - t0 + S - 1) % S) * kWarpRows * TB, w0, row_bytes, tt + S - 1, lane);
            else
                asm volatile("cp.async.commit_group;\n" ::: "memory");
            asm volatile("cp.async.wait_group %0;\n" ::"n"(S - 1) : "memory");
        } else {
            /* the last block of rows: plain copies, rows past m from row m - 1 */
            constexpr int P = TB / 16;
            for (int p = lane; p < kWarpRows * P; p += 32) {
                const int r = p / P, c = p % P;
                const int64_t rr = r < rows_here ? r : rows_here - 1;
                *(uint4 *)(void *)(cur + r * TB + 16 * c) = *(const uint4 *)(w0 + rr * row_bytes + tt * TB + 16 * c);
            }
        }
        __syncwarp();
#pragma unroll
        for (int h = 0; h < 2; h++) {
            float4 xc[N];
#pragma unroll
            for (int j = 0; j < N; j++)
                xc[j] = xn[j];
            const int64_t e1 = tt * kTile + 128 * (h + 1);
            if (e1 < t1 * kTile) {
#pragma unroll
                for (int j = 0; j < N; j++)
                    xn[j] = __ldg((const float4 *)(xs[j] + e1) + lane);
            }
            split_x<DT, N>(xc, lane, bs, pw, xsum);
            __syncwarp();
            /* this lane's B fragments for the 8 steps of the chunk */
            uint32_t bf[T][8][2];
#pragma unroll
            for (int tau = 0; tau < T; tau++)
#pragma unroll
                for (int s = 0; s < 8; s += 2) {
                    int blk, grp, j;
                    bool on;
                    if (N == 1) {
                        blk = t, grp = s, j = 0, on = (g >> 1) == t;
                    } else if (N == 2) {
                        blk = 2 * (s >> 2) + (t >> 1), grp = 4 * (t & 1) + (s & 3), j = (g >> 1) & 1;
                        on = (g >> 2) == (t >> 1);
                    } else {
                        blk = s >> 1, grp = 2 * t, j = 4 * tau + (g >> 1), on = true;
                    }
                    uint4 v = make_uint4(0, 0, 0, 0);
                    if (on)
                        v = *(const uint4 *)(const void *)(bs + ((j * 4 + blk) * 2 + (g & 1)) * 8 + grp);
                    bf[tau][s][0] = v.x, bf[tau][s][1] = v.y, bf[tau][s + 1][0] = v.z, bf[tau][s + 1][1] = v.w;
                }
#pragma unroll
            for (int rt = 0; rt < 2; rt++) {
                const uint8_t *ra = cur + (16 * rt + g) * TB, *rb = ra + 8 * TB;
#pragma unroll
                for (int v = 0; v < BV; v++) {
                    const int blk = N == 1 ? t : N == 2 ? 2 * v + (t >> 1) : v;
                    const int u0 = N == 1 ? 0 : N == 2 ? 2 * (t & 1) : t;
                    uint32_t aa[2 * U][2], ab[2 * U][2];
                    float da, db, ma, mb;
                    block_regs<DT, U>(ra, h, blk, u0, aa, da, ma);
                    block_regs<DT, U>(rb, h, blk, u0, ab, db, mb);
#pragma unroll
                    for (int tau = 0; tau < T; tau++) {
                        float c0[4] = {0.0f, 0.0f, 0.0f, 0.0f}, c1[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
                        for (int i = 0; i < 2 * U; i++) {
                            const int s = v * 2 * U + i;
                            const uint32_t af[4] = {aa[i][0], ab[i][0], aa[i][1], ab[i][1]};
                            mma16816((i & 1) ? c1 : c0, af, bf[tau][s][0], bf[tau][s][1]);
                        }
                        const int j = N == 1 ? 0 : N == 2 ? (t & 1) : 4 * tau + t;
                        const float p = pw[j * 4 + blk];
                        float ya = (c0[0] + c1[0]) + (c0[1] + c1[1]), yb = (c0[2] + c1[2]) + (c0[3] + c1[3]);
                        ya *= p, yb *= p;
                        if (DT == 12) {
                            ya = fmaf(ma, -xsum[j * 4 + blk], da * ya);
                            yb = fmaf(mb, -xsum[j * 4 + blk], db * yb);
                            acc[rt][0][tau] += ya;
                            acc[rt][1][tau] += yb;
                        } else {
                            acc[rt][0][tau] = fmaf(da, ya, acc[rt][0][tau]);
                            acc[rt][1][tau] = fmaf(db, yb, acc[rt][1][tau]);
                        }
                    }
                }
            }
            __syncwarp(); /* every lane has read bs before the next split */
        }
        __syncwarp(); /* every lane done with cur before it is refilled */
    }
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");

    /* the lanes' sums: over the blocks of a chunk (N = 1: lanes t; N = 2:
     * lanes t, t ^ 2), then the warps in order */
#pragma unroll
    for (int rt = 0; rt < 2; rt++)
#pragma unroll
        for (int hh = 0; hh < 2; hh++)
#pragma unroll
            for (int tau = 0; tau < T; tau++) {
                float v = acc[rt][hh][tau];
                if (N == 1)
                    v += __shfl_xor_sync(kFull, v, 1);
                if (N <= 2)
                    v += __shfl_xor_sync(kFull, v, 2);
                const int r = 16 * rt + 8 * hh + g;
                const int j = N == 1 ? 0 : N == 2 ? (t & 1) : 4 * tau + t;
                const bool writer = N == 1 ? t == 0 : N == 2 ? t < 2 : true;
                if (writer)
                    part[(wv * kWarpRows + r) * N + j] = v;
            }
    __syncthreads();
    for (int i = (int)threadIdx.x; i < kWarpRows * N; i += (int)blockDim.x) {
        const int r = i / N, j = i % N;
        float s = 0.0f;
        for (int w2 = 0; w2 < nw; w2++)
            s += part[(w2 * kWarpRows + r) * N + j];
        if (r < rows_here && j < n)
            y[(int64_t)j * m + row0 + r] = s;
    }
}

// Shared memory a block of nw warps needs.
template <uint32_t DT, int N> constexpr size_t block_smem(int nw)
{
    return (size_t)nw * WarpSmem<DT, N>::bytes + (size_t)nw * kWarpRows * N * sizeof(float);
}

// The most dynamic shared memory a block may have on the current device.
size_t smem_optin()
{
    static int cached[64];
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64)
        return 0;
    if (!cached[dev]) {
        int v = 0, major = 0;
        if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess || major < 8)
            v = -1; /* no mma.sync m16n8k16 f32 before sm_80 */
        else if (cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess)
            v = -1;
        cached[dev] = v;
    }
    return cached[dev] > 0 ? (size_t)cached[dev] : 0;
}

#ifdef VT_MMA_HARNESS
int vt_mma_nw_override; /* the standalone harness's warp count, when set */
#endif

// Queue mma_kernel for n <= N columns; *taken = 0 when the device cannot.
template <uint32_t DT, int N>
hipError_t launch_mma(const float *x, const uint8_t *w, int64_t row_bytes, float *y, int n, int64_t m, int64_t k,
                      hipStream_t stream, int *taken)
{
    const size_t optin = smem_optin();
    const int64_t tiles = k / kTile;
    int nw = N == 8 ? 8 : 16; /* the kernel's launch bounds */
#ifdef VT_MMA_HARNESS
    if (vt_mma_nw_override)
        nw = vt_mma_nw_override;
#endif
    while (nw > 1 && block_smem<DT, N>(nw) > optin)
        nw--;
    if (block_smem<DT, N>(nw) > optin || tiles < 1) {
        *taken = 0;
        return hipSuccess;
    }
    /* as few warps as give the same longest share: every warp gets the
     * same number of tiles or one less (56 tiles: 14 warps of 4) */
    const int64_t per = (tiles + nw - 1) / nw;
    nw = (int)((tiles + per - 1) / per);
    if (nw < 1) {
        *taken = 0;
        return hipSuccess;
    }
    const size_t bytes = block_smem<DT, N>(nw);
    /* the kernel's opt-in per device, raised once to the most a call needs */
    static size_t raised[64];
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64) {
        *taken = 0;
        return hipSuccess;
    }
    if (bytes > 48 * 1024 && bytes > raised[dev]) {
        const cudaError_t e =
            cudaFuncSetAttribute(mma_kernel<DT, N>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
        if (e != cudaSuccess)
            return e;
        raised[dev] = bytes;
    }
    mma_kernel<DT, N><<<dim3((unsigned)((m + kWarpRows - 1) / kWarpRows)), dim3(32 * nw), bytes, stream>>>(
        x, w, row_bytes, y, n, m, k);
    *taken = 1;
    return cudaGetLastError();
}

// MatMul of DT over n columns, 8 at a time.
template <uint32_t DT>
hipError_t mma_cols(const float *x, const uint8_t *w, int64_t row_bytes, float *y, int64_t n, int64_t m, int64_t k,
                    hipStream_t stream, int *taken)
{
    for (int64_t j0 = 0; j0 < n; j0 += 8) {
        const int nc = (int)(n - j0 < 8 ? n - j0 : 8);
        const float *xj = x + j0 * k;
        float *yj = y + j0 * m;
        hipError_t e;
        if (nc == 1)
            e = launch_mma<DT, 1>(xj, w, row_bytes, yj, nc, m, k, stream, taken);
        else if (nc == 2)
            e = launch_mma<DT, 2>(xj, w, row_bytes, yj, nc, m, k, stream, taken);
        else if (nc <= 4)
            e = launch_mma<DT, 4>(xj, w, row_bytes, yj, nc, m, k, stream, taken);
        else
            e = launch_mma<DT, 8>(xj, w, row_bytes, yj, nc, m, k, stream, taken);
        if (e != hipSuccess || !*taken)
            return e; /* a refusal can only come with the first launch (the same shape each time) */
    }
    return hipSuccess;
}

} // namespace

// The MatMul a (ids == NULL) on matrix instructions when dt, the shapes and
// the device allow (*taken = 1), else *taken = 0 and nothing is queued.
hipError_t run_mma(uint32_t dt, const Args &a, int *taken)
{
    *taken = 0;
    if (a.ids != nullptr || a.T <= 0 || a.m <= 0 || a.k <= 0 || a.k % kTile != 0 || (uintptr_t)a.w % 16 != 0 ||
        (uintptr_t)a.x % 16 != 0)
        return hipSuccess;
    switch (dt) {
    case 2: return mma_cols<2>(a.x, a.w, a.row_bytes, a.y, a.T, a.m, a.k, a.stream, taken);
    case 8: return mma_cols<8>(a.x, a.w, a.row_bytes, a.y, a.T, a.m, a.k, a.stream, taken);
    case 12: return mma_cols<12>(a.x, a.w, a.row_bytes, a.y, a.T, a.m, a.k, a.stream, taken);
    case 20: return mma_cols<20>(a.x, a.w, a.row_bytes, a.y, a.T, a.m, a.k, a.stream, taken);
    }
    return hipSuccess;
}

} // namespace vt_mmv

#else /* no matrix-instruction path for this target */

namespace vt_mmv
{

// The MatMul a on matrix instructions: none on this target (*taken = 0).
hipError_t run_mma(uint32_t dt, const Args &a, int *taken)
{
    (void)dt;
    (void)a;
    *taken = 0;
    return hipSuccess;
}

} // namespace vt_mmv

#endif
