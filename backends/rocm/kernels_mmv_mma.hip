// kernels_mmv_mma.hip - the decode MatMul (n = 1..8 columns of f32 x against
// block-format, f16 or bf16 weights read once) on NVIDIA's matrix
// instructions (mma.sync m16n8k16: f16 A and B, bf16 for bf16 weights, f32
// accumulators), for every block format of SPEC 7 (rows of a multiple of 16
// bytes). Other targets keep kernels_mmv.h's kernels (run_mma answers
// *taken = 0).
//
// A: the weight codes of 32-element blocks (k-quants: sub-blocks) as f16,
// which are exact (q4_0: q - 8, q5_0: q - 16, q4_1, q5_1, q4_k, q5_k: the
// code, q8_0: the int8, iq4_nl, iq4_xs: the book value, mxfp4: the doubled
// E2M1 value, q2_k: the 2-bit code, q3_k: the 3-bit code - 4, q6_k: the
// 6-bit code - 32), built from the packed words with a few integer
// instructions. A block's value is dw * code - mw, mw times the block's
// sum of x (q4_1, q5_1: mw = -m; q4_k, q5_k: dmin * min). The 16-element
// scale groups of q2_k, q3_k and q6_k get separate accumulators (the lanes
// of one step share a group); q2_k's mins go with each group's sum of x.
// f16 and bf16 weights are A as they lie, in blocks of 32 with dw = 1.
// B: each block of each column of x split into hi = f16(x * 2^-e) and
// lo = f16(x * 2^-e - hi) with a power of two 2^e per block and column that
// puts the block's largest magnitude in [2^14, 2^15): hi + lo carries 22
// significant bits of every x (exact scaling), well inside SPEC 7's 1e-4
// (bf16 weights: hi and lo in bf16, 16 bits, inside its 1e-2).
// One mma column holds hi, the next lo, of one (block, column of x); the
// columns of a tile that belong to another block are zero where the k
// positions are not theirs, so each accumulator is the dot product of one
// row's block with one block of one column. Those f32 results are scaled
// by the block's weight scale and 2^e and summed in a fixed order: results
// do not depend on timing.
//
// A block takes groups of 32 rows (the grid: as many blocks as are
// resident at once, each walking every grid-th group), a warp two 16-row
// tiles of a group and every nw-th 256-element tile of k; the tiles of
// its rows stream through its own ring of shared memory across the
// block's groups (cp.async 16-byte copies with L2 fetching 256-byte
// blocks, or one bulk copy per row on sm_90, stage()). At
// n = 1, per 128 elements the warp splits x into hi/lo (every lane four
// elements per column) into shared memory once for both row tiles; at
// n > 1 with the call's scratch a first kernel splits x once for every
// block (the same arithmetic) and the warps read their B fragments from it.
// The warps' sums meet in shared memory in warp order.
//
// The formats of 32-element blocks (q4_0, q4_1, q5_0, q8_0, iq4_nl, mxfp4;
// q4_k's and iq4_xs's sub-blocks; not q5_1, int_format) take integer
// matrix instructions at n = 1 instead (mma.sync
// m16n8k32, s32 accumulators, int_chunk): A is the codes as u8 (nibbles
// under two masks; q5's fifth bits from qh; the code books' entries plus
// 128 by two permutes; q8_0: the bytes as s8), B is each element of a
// block of x written as four 8-bit digits,
// x * 2^e * 2^21 rounded = d0 2^21 + d1 2^14 + d2 2^7 + d3, with 2^e
// putting the block's largest magnitude in [32, 64) (so the digits carry
// every bit of x down to 2^-27 of the block's largest); mma column c holds
// digit c. A block's dot product with every digit is exact in the int32
// accumulator, which starts at the float bits of 1.5 * 2^23 (less the
// format's zero code times the digit's sum: q4_0's 8, q5_0's 16, the
// books' 128), so one subtraction makes it a float; the digits are
// weighted, scaled by the weight scale and 2^-e (q4_1, q4_k: less the
// block's min times its sum of x) and summed in a fixed order as above.
// Two columns (MatMul at n = 2, the chunks of MoeExpertMatMul at several
// tokens; not q4_1, int_pre) stay on the integer instructions:
// the first kernel writes both columns' digits once, and per block of 32
// one m16n8k32 takes the whole block against the two columns' four digits
// (int_chunk_pre), half the mmas of the f16 path.
#include "kernels_mmv.h"
#include "rocm_mmv.h"

#if defined(VT_HIP_PLATFORM_NVIDIA)
#include "rocm_mma.h"
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <type_traits>

namespace vt_mmv
{
namespace
{

using vt_mma::mma16816;
using vt_mma::smem_optin;

constexpr int kWarpRows = 32; // rows per warp: two 16-row mma tiles
constexpr int kTile = 256;    // elements of k per staged tile
constexpr unsigned kFull = 0xffffffffu;

// Whether this kernel decodes dt: every block format of SPEC 7, and f16
// and bf16 (dense()).
__host__ __device__ constexpr bool mma_format(uint32_t dt)
{
    return dt == VT_F16 || dt == VT_Q4_0 || dt == VT_Q4_1 || dt == VT_Q5_0 || dt == VT_Q5_1 || dt == VT_Q8_0 ||
           dt == VT_Q2_K || dt == VT_Q3_K || dt == VT_Q4_K || dt == VT_Q5_K || dt == VT_Q6_K || dt == VT_IQ4_NL ||
           dt == VT_IQ4_XS || dt == VT_BF16 || dt == VT_MXFP4;
}
// The float weights, f16 and bf16: A is the weights themselves
// (bf16: the bf16 instruction, with B's hi and lo in bf16), a 32-element
// "block" 64 bytes with factor 1.
__host__ __device__ constexpr bool dense_dt(uint32_t dt)
{
    return dt == VT_F16 || dt == VT_BF16;
}
template <uint32_t DT> __host__ __device__ constexpr bool dense()
{
    return dense_dt(DT);
}
// Whether MatMul of dt at n columns comes here: the formats above, f16 and
// bf16 from 5 columns. Below that the first kernels (kernels_mmv_v1.hip)
// measured faster on the H200 at m = 4096, k = 14336 (f16, graph time, round
// 10): n = 2 29.9 us against 40.5 here, n = 4 36.8 against 40.0; at n = 8
// they took 82.4 (round 9), this kernel 47.6.
__host__ __device__ constexpr bool mma_takes(uint32_t dt, int64_t n)
{
    return mma_format(dt) && !(dense_dt(dt) && n <= 4);
}
// Whether DT's values carry a minimum, times a sum of x: q4_1, q5_1, q4_k,
// q5_k (value = dw * code - mw per block of 32) and q2_k (a minimum per
// 16-element group, q2k_mins).
template <uint32_t DT> __host__ __device__ constexpr bool has_min()
{
    return DT == VT_Q4_1 || DT == VT_Q5_1 || DT == VT_Q2_K || DT == VT_Q4_K || DT == VT_Q5_K;
}
// Whether DT's minimums come per 16-element group (q2_k, q2k_mins) rather
// than per block: they go with each group's sum of x.
template <uint32_t DT> __host__ __device__ constexpr bool group_mins()
{
    return DT == VT_Q2_K;
}
// Sums of x per block of 32 that the split keeps: q2_k's two groups of 16.
__host__ __device__ constexpr int xs_per_block(uint32_t dt)
{
    return dt == VT_Q2_K ? 2 : 1;
}
// Whether dt's codes go to the integer matrix instructions: the formats
// of 32-element blocks but q5_1, q4_k and iq4_xs (int_block_codes; the
// harness's VT_MMA_F16_ONLY build keeps f16 for all). q5_1 measured no
// faster there on the H200 (m = 4096, k = 14336: n = 1 21.3 us against
// 21.7, n = 2 26.9 against 24.3; MoeExpertMatMul at one token 9.7 against
// 8.9).
__host__ __device__ constexpr bool int_format(uint32_t dt)
{
#ifdef VT_MMA_F16_ONLY
    (void)dt;
    return false;
#else
    return dt == VT_Q4_0 || dt == VT_Q4_1 || dt == VT_Q5_0 || dt == VT_Q8_0 || dt == VT_Q4_K || dt == VT_IQ4_NL ||
           dt == VT_IQ4_XS || dt == VT_MXFP4;
#endif
}
// Bytes of one row's 256-element tile of dtype DT in memory.
template <uint32_t DT> __host__ __device__ constexpr int tile_src_bytes()
{
    return 256 / blk_elems(DT) * blk_bytes(DT);
}
// The largest byte of a 16-byte piece a tile can start at: tiles start at
// multiples of the tile's bytes, so at multiples of their greatest common
// divisor with 16 (q6_k's 210 bytes: even bytes, 14 at most).
template <uint32_t DT> __host__ __device__ constexpr int tile_max_start()
{
    return (tile_src_bytes<DT>() & 15) == 0 ? 0 : 16 - (tile_src_bytes<DT>() & -tile_src_bytes<DT>() & 15);
}
// Bytes of one row's staged tile in shared memory: the 16-byte pieces from
// the one holding its first byte that cover it from any start (q6_k: 14
// pieces; iq4_xs, mxfp4: 9), and one more where the rows would lie a
// multiple of 128 bytes apart (q3_k: 9, not 8), which puts the same word
// of every row in the same shared-memory bank (ncu on the H200: q3_k at
// 128 bytes issued 20% of its slots, 56 us), and for q6_k one more than
// its 14 (15: rows an odd number of pieces apart, each row g of an mma
// tile in its own banks; H200, m = 4096, k = 14336, graph us: n = 1 26.97
// against 28.80, MoeExpertMatMul t = 4 34.85 against 38.83, n = 4 28.97
// against 28.33). (An odd number of pieces for q4_1 and q5_1, 11 and 13,
// measured slower on the H200: q4_1 n = 1 16.95 us against 16.04, n = 4
// 24.1 against 20.9; q5_1 n = 1 23.52 against 21.75, n = 8 35.59 against
// 34.29; so did 7 for q2_k: n = 1 19.26 against 17.81.)
template <uint32_t DT> __host__ __device__ constexpr int tile_row_bytes()
{
    return (tile_max_start<DT>() + tile_src_bytes<DT>() + 15) / 16 * 16 +
           ((tile_max_start<DT>() + tile_src_bytes<DT>() + 15) / 16 % 8 == 0 || DT == VT_Q6_K ? 16 : 0);
}
// Whether the staged bytes of the last tile of a row that ends on a 16-byte
// boundary, from the piece holding its first byte (its byte
// (16 - bytes % 16) % 16), would reach past the row: not where that is
// the largest start and no piece is added (q6_k, iq4_xs, mxfp4), but so
// for q3_k. Such a tile is staged from the row's last tile_row_bytes
// instead (tile_window).
template <uint32_t DT> __host__ __device__ constexpr bool tile_clamped()
{
    return tile_row_bytes<DT>() > tile_src_bytes<DT>() + (16 - (tile_src_bytes<DT>() & 15)) % 16;
}
// The byte of a row of row_bytes (a multiple of 16, at least
// tile_row_bytes) from which its tile t is staged: the 16-byte piece that
// holds the tile's first byte, or (tile_clamped) the row's last staged
// bytes where those pieces would reach past the row.
template <uint32_t DT> __device__ inline int64_t tile_window(int64_t t, int64_t row_bytes)
{
    const int64_t s = (t * tile_src_bytes<DT>()) & ~(int64_t)15;
    return tile_clamped<DT>() && s + tile_row_bytes<DT>() > row_bytes ? row_bytes - tile_row_bytes<DT>() : s;
}
// Staged tiles per warp (the ring's depth S): S - 1 tiles are in flight
// while the warp decodes one. Two measured best on the H200 for every
// format at n = 1 (the harness builds the other depths, RING=3|4).
constexpr int kRing = 2;
// The ring a MatMul on its call's split takes when it holds every tile of
// each warp (launch_ring): at m = k = 4096, n = 4, q4_0 on the H200, 23%
// less time than the ring of 2 with its first tile staged early (11% less
// than before either); at k = 14336 (4 tiles a warp) it costs warps and
// was slower.
constexpr int kRingEarly = 3;

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

// The bits of an f16x2 or a bf16x2.
template <typename H2> __device__ inline uint32_t h2_bits(H2 h)
{
    static_assert(sizeof(H2) == 4, "a pair of 16-bit values");
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
// The 32-element formats and iq4_xs keep a block's elements as nibbles
// (0..15 low, 16..31 high) or bytes in order; q8_0 as bytes, q4_k, q5_k
// and q6_k as runs of 32 in order.
template <uint32_t DT> __device__ constexpr int group_of_run(int r)
{
    return (DT == VT_Q4_0 || DT == VT_Q4_1 || DT == VT_Q5_0 || DT == VT_Q5_1 || DT == VT_IQ4_NL || DT == VT_IQ4_XS ||
            DT == VT_MXFP4)
               ? 2 * (r & 3) + (r >> 2)
               : r;
}
template <uint32_t DT> __host__ __device__ constexpr bool adjacent_pairs()
{
    return DT == VT_IQ4_NL || DT == VT_IQ4_XS || DT == VT_MXFP4 || dense<DT>();
}

// Bits 0..3 of b at bit 4 of bytes 0..3 (q5's fifth bits beside the nibbles).
__device__ inline uint32_t bits_to_bytes4(uint32_t b)
{
    return ((b & 0xFu) * 0x00204081u & 0x01010101u) << 4;
}

// Bytes 0, 2 (sel 0x4240) or 1, 3 (0x4341) of v as f16 1024 + byte, less
// the f16 pair z (1024 + the format's zero code): the codes as f16x2.
__device__ inline uint32_t bytes_to_h2(uint32_t v, uint32_t sel, uint32_t z)
{
    return h2_sub(__byte_perm(v, 0x64646464u, sel), z);
}

// The nibbles of word w as code-book bytes plus 128 (two 8-entry books per
// 8 bytes: lo for nibbles 0..7, hi for 8..15): t[0] elements 4u, 4u + 16,
// 4u + 1, 4u + 17, t[1] 4u + 2, 4u + 18, 4u + 3, 4u + 19 of word u.
__device__ inline void book_bytes(uint32_t w, uint32_t lo0, uint32_t lo1, uint32_t hi0, uint32_t hi1, uint32_t (&t)[2])
{
    const uint32_t q = w & 0x77777777u, sel = 0x32103210u | ((w & 0x88888888u) >> 1);
#pragma unroll
    for (int s = 0; s < 2; s++) {
        const uint32_t lo = __byte_perm(lo0, lo1, q >> (16 * s));
        const uint32_t hi = __byte_perm(hi0, hi1, q >> (16 * s));
        t[s] = __byte_perm(lo, hi, sel >> (16 * s));
    }
}

// The formats of 16-element scale groups (q2_k, q3_k, q6_k): their words go so
// that every lane of a step is in the same group, and the groups of a
// block get separate accumulators.
template <uint32_t DT> __host__ __device__ constexpr bool sixteen_groups()
{
    return DT == VT_Q2_K || DT == VT_Q3_K || DT == VT_Q6_K;
}

// The 2U words of a 32-byte run at byte o of row (word w: elements 4w..)
// that a lane takes in such a format: U = 4 (a lane per block): words
// 0..7; U = 2 (two lanes per block): words 2i + u0 / 2; U = 1 (four lanes
// per block): words 4i + u0. The words of the block's first 16-element
// group come first.
template <int U> __device__ inline void step_words(const uint8_t *row, int o, int u0, uint32_t (&q)[2 * U])
{
    if (U == 4) {
        sh_words<2 * U>(row, o, q);
    } else if (U == 2) {
        uint32_t w8[8];
        sh_words<8>(row, o, w8);
        const bool odd = (u0 >> 1) != 0;
#pragma unroll
        for (int i = 0; i < 2 * U; i++)
            q[i] = odd ? w8[2 * i + 1] : w8[2 * i];
    } else {
#pragma unroll
        for (int i = 0; i < 2 * U; i++) {
            uint32_t w1[1];
            sh_words<1>(row, o + 16 * i + 4 * u0, w1);
            q[i] = w1[0];
        }
    }
}

// Whether DT's 32-element sub-blocks (q2_k, q3_k: pairs of 16-element
// groups) take their scale and minimum from bits packed per 256-element
// super-block (q2_k, q3_k, q4_k, q5_k: sub_scale; iq4_xs's too, but its
// one scale is cheap). With the call's split (PRE) and four or eight
// columns the kernel decodes them once per staged tile into the warp's
// split area, unused under PRE (scale_table), where every lane of a row's
// fragments would otherwise decode them again for each block it visits.
// On the H200 (m = 4096, k = 14336, graph us, against the lanes' decode):
// n = 4 q4_k 22.10 / 23.25, q5_k 25.04 / 25.93, q3_k 23.33 / 25.75, q2_k
// 21.98 / 25.04; n = 8 29.84 / 30.48, 32.42 / 34.69, 30.24 / 31.80,
// 29.81 / 31.94; iq4_xs measured slower with it (n = 4 23.79 / 23.58,
// n = 8 29.77 / 28.70) and keeps the lanes' decode. table_format: the
// formats that take the table.
__host__ __device__ constexpr bool table_format(uint32_t dt)
{
    return dt == VT_Q2_K || dt == VT_Q3_K || dt == VT_Q4_K || dt == VT_Q5_K;
}
template <uint32_t DT, int N, bool PRE> __host__ __device__ constexpr bool scale_table()
{
    return PRE && N >= 4 && table_format(DT);
}

// An entry of scale_table's table: (dw, mw), q2_k's (dw, mw, its two
// groups' minimum coefficients).
template <uint32_t DT> using ScaleEntry = typename std::conditional<group_mins<DT>(), float4, float2>::type;

// Bytes of scale_table's table: [8 sub-blocks][32 rows] of (dw, mw), q2_k's
// with its two groups' minimum coefficients after them (float4).
template <uint32_t DT, int N, bool PRE> __host__ __device__ constexpr int scale_table_bytes()
{
    return scale_table<DT, N, PRE>() ? 8 * kWarpRows * (int)sizeof(ScaleEntry<DT>) : 0;
}

// Sub-block s (0..7) of the super-block at ob in a staged row: its weight
// scale dw and min coefficient mw (block_regs'), for scale_table's formats.
template <uint32_t DT> __device__ inline void sub_scale(const uint8_t *row, int ob, int s, float &dw, float &mw)
{
    if (DT == VT_Q2_K) { /* q2_k: the low nibbles of scale bytes 2s, 2s + 1 (at 0), d at 80 */
        const float d = sh_f16(row, ob + 80);
        dw = d * (float)vt_blk_q2k_scale(row + ob, 2 * s);
        mw = d * (float)vt_blk_q2k_scale(row + ob, 2 * s + 1);
    } else if (DT == VT_Q3_K) { /* q3_k: signed 6-bit scales of groups 2s, 2s + 1 at 96, d at 108 */
        const float d = sh_f16(row, ob + 108);
        dw = d * (float)vt_blk_q3k_scale(row + ob + 96, 2 * s);
        mw = d * (float)vt_blk_q3k_scale(row + ob + 96, 2 * s + 1);
    } else if (DT == VT_IQ4_XS) { /* iq4_xs: d times the 6-bit scale less 32 */
        dw = sh_f16(row, ob) * (float)vt_blk_iq4_xs_scale(row + ob, s);
        mw = 0.0f;
    } else { /* q4_k, q5_k: d, dmin, then 12 packed bytes of 6-bit scales and mins */
        dw = sh_f16(row, ob) * (float)vt_blk_k4_scale(row + ob + 4, s);
        mw = sh_f16(row, ob + 2) * (float)vt_blk_k4_min(row + ob + 4, s);
    }
}

// The 8 sub-blocks' (dw, mw) of the super-block at ob (16-byte aligned for
// q4_k and q5_k) in a staged row, sub_scale's values: q4_k's and q5_k's
// from one 16-byte load (d, dmin, the 12 packed bytes) by word operations
// on four sub-blocks at once, the others one sub-block at a time. (On the
// H200, against sub_scale per sub-block, m = 4096, k = 14336, graph us:
// q4_k n = 4 20.99 / 22.18, n = 8 27.31 / 29.90; q5_k 23.12 / 25.11,
// 30.93 / 32.49.)
template <uint32_t DT> __device__ inline void sub_scales8(const uint8_t *row, int ob, float (&dw)[8], float (&mw)[8])
{
    if constexpr (DT == VT_Q4_K || DT == VT_Q5_K) {
        const uint4 v = *(const uint4 *)(const void *)(row + ob);
        const float d = __half2float(__ushort_as_half((unsigned short)(v.x & 0xFFFFu)));
        const float dmin = __half2float(__ushort_as_half((unsigned short)(v.x >> 16)));
        uint32_t sc[2], mn[2]; /* bytes 4..15: the packed scales and mins */
        vt_blk_k4_words(v.y, v.z, v.w, sc, mn);
#pragma unroll
        for (int s = 0; s < 8; s++) {
            dw[s] = d * (float)((sc[s >> 2] >> (8 * (s & 3))) & 0xFFu);
            mw[s] = dmin * (float)((mn[s >> 2] >> (8 * (s & 3))) & 0xFFu);
        }
    } else {
#pragma unroll
        for (int s = 0; s < 8; s++)
            sub_scale<DT>(row, ob, s, dw[s], mw[s]);
    }
}

// A registers of groups 2u0 .. 2(u0 + U) - 1 of block b (0..3) of chunk h
// (0, 1) of a row's staged tile `row`, the block's weight scale dw and its
// min coefficient mw (value = dw * code - mw; mw = 0 but for q4_k). Group
// q's registers: a[q - 2 u0][0] and [1] (element order of group_of_run).
// SCALES false (scale_table's formats, whose caller reads dw and mw from
// the tile's table): the sub-block's scales are not decoded, and dw and
// mw are left as they were.
template <uint32_t DT, int U, bool SCALES = true>
__device__ inline void block_regs(const uint8_t *row, int ob, int h, int b, int u0, uint32_t (&a)[2 * U][2], float &dw,
                                  float &mw)
{
    if constexpr (SCALES)
        mw = 0.0f;
    if (dense<DT>()) { /* f16, bf16: group q of block b is its elements' 8 bytes at 8 q */
        dw = 1.0f;
        const uint4 *p = (const uint4 *)(const void *)(row + ob + 64 * (4 * h + b) + 16 * u0);
#pragma unroll
        for (int i = 0; i < U; i++) {
            const uint4 v = p[i];
            a[2 * i][0] = v.x, a[2 * i][1] = v.y, a[2 * i + 1][0] = v.z, a[2 * i + 1][1] = v.w;
        }
    } else if (DT == VT_Q4_0) { /* q4_0: unit u = qs word u: low nibbles group 2u, high 2u + 1 */
        const int o = ob + 18 * (4 * h + b);
        dw = sh_f16(row, o);
        uint32_t w[U];
        sh_words<U>(row, o + 2 + 4 * u0, w);
#pragma unroll
        for (int i = 0; i < U; i++) {
            const uint32_t wh = w[i] >> 8;
            const uint32_t l0 = (w[i] & 0x000F000Fu) | 0x64006400u, l1 = (wh & 0x000F000Fu) | 0x64006400u;
            const uint32_t h0 = (w[i] & 0x00F000F0u) | 0x64006400u, h1 = (wh & 0x00F000F0u) | 0x64006400u;
            /* 1024 + q - 1032; (1024 + 16 q) / 16 - 72 */
            a[2 * i][0] = h2_sub(l0, 0x64086408u);
            a[2 * i][1] = h2_sub(l1, 0x64086408u);
            a[2 * i + 1][0] = h2_fma(h0, 0x2C002C00u, 0xD480D480u);
            a[2 * i + 1][1] = h2_fma(h1, 0x2C002C00u, 0xD480D480u);
        }
    } else if (DT == VT_Q4_1 || DT == VT_Q5_0 || DT == VT_Q5_1) {
        /* q4_1 (d, m, qs), q5_0 (d, qh, qs), q5_1 (d, m, qh, qs): q4_0's
         * units, each nibble with its bit of qh (element l: bit l) at bit 4;
         * q4_1 and q5_1: value = d code + m (mw = -m) */
        constexpr int BB = blk_bytes(DT), QS = DT == VT_Q4_1 ? 4 : DT == VT_Q5_0 ? 6 : 8;
        constexpr uint32_t z = DT == VT_Q5_0 ? 0x64106410u : 0x64006400u; /* 1024 + 16 (q5_0), 1024 */
        const int o = ob + BB * (4 * h + b);
        dw = sh_f16(row, o);
        if (DT != VT_Q5_0)
            mw = -sh_f16(row, o + 2);
        uint32_t w[U], qh[1] = {0u};
        sh_words<U>(row, o + QS + 4 * u0, w);
        if (DT != VT_Q4_1)
            sh_words<1>(row, o + QS - 4, qh);
#pragma unroll
        for (int i = 0; i < U; i++) {
            uint32_t lo = w[i] & 0x0F0F0F0Fu, hi = (w[i] >> 4) & 0x0F0F0F0Fu;
            if (DT != VT_Q4_1) {
                lo |= bits_to_bytes4(qh[0] >> (4 * (u0 + i)));
                hi |= bits_to_bytes4(qh[0] >> (16 + 4 * (u0 + i)));
            }
            a[2 * i][0] = bytes_to_h2(lo, 0x4240, z);
            a[2 * i][1] = bytes_to_h2(lo, 0x4341, z);
            a[2 * i + 1][0] = bytes_to_h2(hi, 0x4240, z);
            a[2 * i + 1][1] = bytes_to_h2(hi, 0x4341, z);
        }
    } else if (DT == VT_IQ4_NL || DT == VT_IQ4_XS || DT == VT_MXFP4) {
        /* iq4_nl (d, qs), iq4_xs (sub-block s = 4h + b of the tile's d,
         * scales_h, scales_l, qs: qs at 8 + 16 s, scale d (ls - 32)), mxfp4
         * (E8M0 exponent, qs): the code books plus 128 as bytes, a nibble to
         * a byte with two permutes of 8 */
        int o;
        if (DT == VT_IQ4_NL) {
            o = ob + 18 * (4 * h + b);
            dw = sh_f16(row, o);
            o += 2;
        } else if (DT == VT_MXFP4) {
            o = ob + 17 * (4 * h + b);
            dw = vt_blk_e8m0_half(row[o]);
            o += 1;
        } else {
            const int sb = 4 * h + b;
            sub_scale<DT>(row, ob, sb, dw, mw);
            o = ob + 8 + 16 * sb;
        }
        uint32_t w[U];
        sh_words<U>(row, o + 4 * u0, w);
#pragma unroll
        for (int i = 0; i < U; i++) {
            uint32_t t[2];
            if (DT == VT_MXFP4) /* 0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12 */
                book_bytes(w[i], 0x83828180u, 0x8C888684u, 0x7D7E7F80u, 0x74787A7Cu, t);
            else /* -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113 */
                book_bytes(w[i], 0x3F2D1801u, 0x766A5D4Fu, 0xA6998D81u, 0xF1D9C5B5u, t);
            /* f16 1024 + byte - 1152 */
            a[2 * i][0] = bytes_to_h2(t[0], 0x4240, 0x64806480u);
            a[2 * i][1] = bytes_to_h2(t[1], 0x4240, 0x64806480u);
            a[2 * i + 1][0] = bytes_to_h2(t[0], 0x4341, 0x64806480u);
            a[2 * i + 1][1] = bytes_to_h2(t[1], 0x4341, 0x64806480u);
        }
    } else if (DT == VT_Q8_0) { /* q8_0: unit u = qs words 2u, 2u + 1, one group each */
        const int o = ob + 34 * (4 * h + b);
        dw = sh_f16(row, o);
        uint32_t w[2 * U];
        sh_words<2 * U>(row, o + 2 + 8 * u0, w);
#pragma unroll
        for (int i = 0; i < 2 * U; i++) {
            const uint32_t x = w[i] ^ 0x80808080u; /* byte + 128 */
            a[i][0] = h2_sub(__byte_perm(x, 0x64646464u, 0x4240), 0x64806480u);
            a[i][1] = h2_sub(__byte_perm(x, 0x64646464u, 0x4341), 0x64806480u);
        }
    } else if (DT == VT_Q6_K) {
        /* q6_k: group s = 4h + b: low four bits from ql[64h + 32(b % 2) + l]
         * (high nibble for b >= 2), top two from qh[32h + l] at shift 2b,
         * minus 32. The words (4 elements each) go so that every lane of a
         * step is in the same 16-element scale group: U = 4 (a lane per
         * block): words 0..7; U = 2 (two lanes per block): words 2i + u0 / 2;
         * U = 1 (four lanes per block): words 4i + u0. Words of scale group 0
         * come first: dw = d * scale 0, mw = d * scale 1. */
        const int s = 4 * h + b;
        const float d = sh_f16(row, ob + 208);
        const int8_t *sc = (const int8_t *)(const void *)(row + ob + 192 + 2 * s);
        dw = d * (float)sc[0];
        mw = d * (float)sc[1];
        uint32_t ql[2 * U], qh[2 * U];
        step_words<U>(row, ob + 64 * h + 32 * (b & 1), u0, ql);
        step_words<U>(row, ob + 128 + 32 * h, u0, qh);
        const int ns = 4 * (b >> 1), hs = 2 * b;
#pragma unroll
        for (int i = 0; i < 2 * U; i++) {
            const uint32_t v = ((ql[i] >> ns) & 0x0F0F0F0Fu) | (((qh[i] >> hs) & 0x03030303u) << 4);
            /* f16 1024 + code - 1056 */
            a[i][0] = h2_sub(__byte_perm(v, 0x64646464u, 0x4240), 0x64206420u);
            a[i][1] = h2_sub(__byte_perm(v, 0x64646464u, 0x4341), 0x64206420u);
        }
    } else if (DT == VT_Q2_K || DT == VT_Q3_K) {
        /* group s = 4h + b, the words in q6_k's order (step_words), scales
         * 2s and 2s + 1 of its 16-element groups: dw = d * the first, mw =
         * d * the second. q2_k: two bits from qs[32h + l] (at 16) at shift
         * 2b; 4-bit scales (the low nibbles of bytes 0..15), d at 80, the
         * mins apart (q2k_mins). q3_k: the same two bits at 32, the third
         * from hmask[l] (at 0) bit s, minus 4; signed 6-bit scales at 96,
         * d at 108. */
        const int s = 4 * h + b;
        uint32_t ql[2 * U], qm[2 * U];
        if constexpr (SCALES)
            sub_scale<DT>(row, ob, s, dw, mw);
        if (DT == VT_Q2_K) {
            step_words<U>(row, ob + 16 + 32 * h, u0, ql);
        } else {
            step_words<U>(row, ob + 32 + 32 * h, u0, ql);
            step_words<U>(row, ob, u0, qm);
        }
#pragma unroll
        for (int i = 0; i < 2 * U; i++) {
            uint32_t v = (ql[i] >> (2 * b)) & 0x03030303u;
            if (DT == VT_Q3_K)
                v |= ((qm[i] >> s) & 0x01010101u) << 2;
            /* f16 1024 + code less 1024 (q2_k) or 1028 (q3_k) */
            a[i][0] = bytes_to_h2(v, 0x4240, DT == VT_Q2_K ? 0x64006400u : 0x64046404u);
            a[i][1] = bytes_to_h2(v, 0x4341, DT == VT_Q2_K ? 0x64006400u : 0x64046404u);
        }
    } else { /* q4_k: sub-block s = 4h + b: nibble half s % 2 of qs bytes 32 (s / 2) .. + 31;
              * q5_k: the same at 48, with bit s of qh[l] (at 16) over nibble l */
        const int s = 4 * h + b;
        if constexpr (SCALES)
            sub_scale<DT>(row, 0, s, dw, mw);
        uint32_t w[2 * U];
        sh_words<2 * U>(row, (DT == VT_Q4_K ? 16 : 48) + 32 * (s >> 1) + 8 * u0, w);
        const int ns = 4 * (s & 1);
        if (DT == VT_Q4_K) {
#pragma unroll
            for (int i = 0; i < 2 * U; i++) {
                const uint32_t x = w[i] >> ns, xh = w[i] >> (ns + 8);
                a[i][0] = h2_sub((x & 0x000F000Fu) | 0x64006400u, 0x64006400u);
                a[i][1] = h2_sub((xh & 0x000F000Fu) | 0x64006400u, 0x64006400u);
            }
        } else {
            uint32_t qh[2 * U];
            sh_words<2 * U>(row, 16 + 8 * u0, qh);
#pragma unroll
            for (int i = 0; i < 2 * U; i++) {
                const uint32_t v = ((w[i] >> ns) & 0x0F0F0F0Fu) | (((qh[i] >> s) & 0x01010101u) << 4);
                a[i][0] = bytes_to_h2(v, 0x4240, 0x64006400u);
                a[i][1] = bytes_to_h2(v, 0x4341, 0x64006400u);
            }
        }
    }
}

// q2_k's minimum coefficients of group s = 4h + b of the tile at ob in a
// staged row: dmin (at 82) times the high nibbles of scale bytes 2s and
// 2s + 1 (values less n[0] (n[1]) for the group's first (second) 16).
__device__ inline void q2k_mins(const uint8_t *row, int ob, int h, int b, float (&n)[2])
{
    const int s = 4 * h + b;
    const float dmin = sh_f16(row, ob + 82);
    n[0] = dmin * (float)vt_blk_q2k_min(row + ob, 2 * s);
    n[1] = dmin * (float)vt_blk_q2k_min(row + ob, 2 * s + 1);
}

// Whether mma_kernel of DT at N columns splits x into digits itself (n = 1):
// one chunk ahead (int_chunk), or both chunks of a tile before it
// (split_ahead).
template <uint32_t DT, int N> __host__ __device__ constexpr bool int_path()
{
    return int_format(DT) && N == 1;
}
// Whether two columns of dt take the integer path (int_pre): int_format's
// but q4_1. The call's split writes those columns' digits (split_warp).
__host__ __device__ constexpr bool int_two(uint32_t dt)
{
    return int_format(dt) && dt != VT_Q4_1;
}
// Whether it reads two columns' digits from the call's split instead
// (int_chunk_pre): N = 2 with the split (PRE; without it the f16 path
// splits in the kernel). At 4 and 8 columns the f16 path fills every mma
// column as well, with fewer loads: the integer form of those (two mmas
// per four columns) measured slower on the H200, q4_0 m = 4096,
// k = 14336: n = 4 23.7 us against 19.9, n = 8 44.3 against 24.1; so did
// q4_1 at two (20.8 against 20.1).
template <uint32_t DT, int N, bool PRE> __host__ __device__ constexpr bool int_pre()
{
    return int_two(DT) && N == 2 && PRE;
}

// The float 1.5 * 2^23 as bits: an int32 of magnitude below 2^22 added
// to them reads back as the float 1.5 * 2^23 plus that int32.
constexpr uint32_t kMagic = 0x4B400000u;

// Split this lane's 4 elements v (elements 4 (lane % 8).. of block lane / 8
// of a 128-element chunk) into four 8-bit digits each (int_path's
// header): V = rint(x 2^(e + 21)) = d0 2^21 + d1 2^14 + d2 2^7 + d3, d0
// signed, d1..d3 in [0, 128). bd[((block * 4 + digit) * 4 + t) * 2 + i]:
// the digit's bytes of elements 4t.. (i = 0) and 16 + 4t.. (i = 1), the B
// register of lane t of that column; pw[block] = 2^-e (NaN when the block
// holds an infinity or a NaN); ci[block * 4 + digit] = the bits of
// 1.5 * 2^23 minus Z times the digit's sum over the block (Z: the
// format's zero code, which A holds as code + Z); with xs (q4_k's mins),
// xs[block] = the block's sum of x.
template <int Z>
__device__ inline void split_digits(const float4 &v, int lane, uint32_t *bd, float *pw, int *ci, float *xs)
{
    const int b = lane >> 3, r = lane & 7;
    float mx = fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w)));
    mx = fmaxf(mx, __shfl_xor_sync(kFull, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(kFull, mx, 2));
    mx = fmaxf(mx, __shfl_xor_sync(kFull, mx, 4));
    /* 2^e puts mx in [32, 64), so |V| < 2^27; clamped so 2^(e + 21) is a float */
    const int ex = (int)((__float_as_uint(mx) >> 23) & 0xFF);
    const int sh = 132 - ex < 106 ? 132 - ex : 106;
    const float sc = __uint_as_float((uint32_t)(sh + 148) << 23);
    const int V[4] = {__float2int_rn(v.x * sc), __float2int_rn(v.y * sc), __float2int_rn(v.z * sc),
                      __float2int_rn(v.w * sc)};
    int s01 = 0, s23 = 0; /* the digits' sums over the lane's elements, two per int (Z > 0) */
#pragma unroll
    for (int dg = 0; dg < 4; dg++) {
        const int shift = 21 - 7 * dg;
        uint32_t word = __byte_perm(__byte_perm((uint32_t)(V[0] >> shift), (uint32_t)(V[1] >> shift), 0x0040),
                                    __byte_perm((uint32_t)(V[2] >> shift), (uint32_t)(V[3] >> shift), 0x0040), 0x5410);
        if (dg > 0)
            word &= 0x7F7F7F7Fu;
        bd[((b * 4 + dg) * 4 + (r & 3)) * 2 + (r >> 2)] = word;
        if (Z == 0)
            continue;
        const int ds = __dp4a((int)word, 0x01010101, 0);
        if (dg == 0)
            s01 = ds;
        else if (dg == 1)
            s01 += ds * 65536;
        else if (dg == 2)
            s23 = ds;
        else
            s23 += ds * 65536;
    }
    /* over the block's 8 lanes (each sum of 32 digits is below 2^12) */
#pragma unroll
    for (int o = 1; o < 8 && Z > 0; o <<= 1) {
        s01 += __shfl_xor_sync(kFull, s01, o);
        s23 += __shfl_xor_sync(kFull, s23, o);
    }
    float sx = 0.0f;
    if (xs != nullptr) {
        sx = (v.x + v.y) + (v.z + v.w);
        sx += __shfl_xor_sync(kFull, sx, 1);
        sx += __shfl_xor_sync(kFull, sx, 2);
        sx += __shfl_xor_sync(kFull, sx, 4);
    }
    if (r == 0) {
        if (xs != nullptr)
            xs[b] = sx;
        const int d0 = (int16_t)(s01 & 0xFFFF), d2 = (int16_t)(s23 & 0xFFFF);
        const int4 c = make_int4((int)kMagic - Z * d0, (int)kMagic - Z * ((s01 - d0) >> 16), (int)kMagic - Z * d2,
                                 (int)kMagic - Z * ((s23 - d2) >> 16));
        *(int4 *)(void *)(ci + b * 4) = c;
        pw[b] = ex == 255 ? __uint_as_float(0x7FC00000u) : __uint_as_float((uint32_t)(127 - sh) << 23);
    }
}

// d = A * B + c (m16n8k32, u8 (SA: s8) A, s8 B, s32 accumulators).
template <bool SA>
__device__ inline void mma16832(int (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1, const int (&c)[4])
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if (SA)
        asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%10,%11,%12,%13};"
            : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
    else
        asm("mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%10,%11,%12,%13};"
            : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
#else
    (void)a, (void)b0, (void)b1;
    d[0] = c[0], d[1] = c[1], d[2] = c[2], d[3] = c[3];
    __trap();
#endif
}

// The integer path's split of one 128-element chunk of x in shared
// memory (split_digits): bd (4 blocks x 4 digits x 4 t x 2 words), pw
// (4 floats), ci (4 x 4 ints), xs (4 floats, the formats with a minimum);
// each warp has two, for alternate chunks.
constexpr int kDigitBytes = 512 + 16 + 64 + 16;

// The zero code Z of DT's codes in A (a value's code is A - Z, A u8):
// q4_0 8, q5_0 16, the code books 128 (their entries plus 128, as
// book_bytes gives them); 0 for q8_0 (s8 A) and the formats with a
// minimum (q4_1, q4_k: value = scale * code - min).
template <uint32_t DT> __host__ __device__ constexpr int int_zero()
{
    return DT == VT_Q4_0 ? 8 : DT == VT_Q5_0 ? 16 : (DT == VT_IQ4_NL || DT == VT_IQ4_XS || DT == VT_MXFP4) ? 128 : 0;
}

// Whether A holds the elements of a word as book_bytes leaves them
// (k positions 4t.. of a block: elements 4t, 16 + 4t, 4t + 1, 17 + 4t;
// 16 + 4t..: 4t + 2, 18 + 4t, 4t + 3, 19 + 4t): the code-book formats.
// B's digits are permuted to match (int_b).
template <uint32_t DT> __host__ __device__ constexpr bool int_interleaved()
{
    return DT == VT_IQ4_NL || DT == VT_IQ4_XS || DT == VT_MXFP4;
}

// split_digits of v into the buffer buf for DT's codes.
template <uint32_t DT> __device__ inline void split_into(const float4 &v, int lane, uint8_t *buf)
{
    split_digits<int_zero<DT>()>(v, lane, (uint32_t *)(void *)buf, (float *)(void *)(buf + 512),
                                 (int *)(void *)(buf + 528), has_min<DT>() ? (float *)(void *)(buf + 592) : nullptr);
}

// B's words of one (block, digit) for k positions 4t.. and 16 + 4t.. from
// split_digits's pair (elements 4t.., 16 + 4t..): as they are, or
// interleaved as int_interleaved's A.
template <uint32_t DT> __device__ inline uint2 int_b(uint2 v)
{
    if (!int_interleaved<DT>())
        return v;
    return make_uint2(__byte_perm(v.x, v.y, 0x5140), __byte_perm(v.x, v.y, 0x7362));
}

// The word at byte o of shared memory at row; m: o % 4 where the caller
// knows it (0 or 2: the compiler keeps that form alone), else -1.
__device__ inline uint32_t word_at(const uint8_t *row, int o, int m)
{
    if (m == 0)
        return *(const uint32_t *)(const void *)(row + o);
    if (m == 2) {
        const uint32_t *q = (const uint32_t *)(const void *)(row + o - 2);
        return __byte_perm(q[0], q[1], 0x5432);
    }
    uint32_t w[1];
    sh_words<1>(row, o, w);
    return w[0];
}

// The code-book bytes (plus 128) of nibble word w: iq4_nl's and iq4_xs's
// book, or mxfp4's doubled E2M1 values (book_bytes's order).
template <uint32_t DT> __device__ inline void int_book(uint32_t w, uint32_t (&t)[2])
{
    if (DT == VT_MXFP4) /* 0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12 */
        book_bytes(w, 0x83828180u, 0x8C888684u, 0x7D7E7F80u, 0x74787A7Cu, t);
    else /* -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113 */
        book_bytes(w, 0x3F2D1801u, 0x766A5D4Fu, 0xA6998D81u, 0xF1D9C5B5u, t);
}

// A's fragment of block b (0..3, known after unrolling) of chunk h of a
// staged tile starting at ob, for m16n8k32 over the block's 32 k
// positions (elements in order, or int_interleaved's): rows ra (a[0],
// a[2]) and rb (a[1], a[3]), positions 4t.. (a[0], a[1]) and 16 + 4t..
// (a[2], a[3]). The codes plus int_zero as u8 (q8_0: its bytes, s8):
// nibbles (q4_0, q4_1, iq4_nl's and iq4_xs's book entries, mxfp4's), with
// the fifth bit from qh (q5_0), q4_k's sub-block nibbles (a pair of
// sub-blocks shares 32 bytes: low nibbles the first, high the second).
template <uint32_t DT>
__device__ inline void int_block_codes(const uint8_t *ra, const uint8_t *rb, int ob, int h, int b, int t,
                                       uint32_t (&a)[4])
{
    constexpr uint32_t kLo = 0x0F0F0F0Fu;
    if (DT == VT_Q4_K) {
        const int sh = 4 * (b & 1), o = ob + 16 + 32 * (2 * h + (b >> 1)) + 4 * t;
        a[0] = (word_at(ra, o, 0) >> sh) & kLo, a[1] = (word_at(rb, o, 0) >> sh) & kLo;
        a[2] = (word_at(ra, o + 16, 0) >> sh) & kLo, a[3] = (word_at(rb, o + 16, 0) >> sh) & kLo;
        return;
    }
    if (DT == VT_Q8_0) { /* the bytes at o + 2: words t (elements 4t..) and 4 + t (16 + 4t..) */
        const int o = ob + 34 * (4 * h + b) + 2 + 4 * t, m = (34 * b + 2) & 3;
        a[0] = word_at(ra, o, m), a[1] = word_at(rb, o, m), a[2] = word_at(ra, o + 16, m),
        a[3] = word_at(rb, o + 16, m);
        return;
    }
    /* the 16 nibble bytes at q (word t: elements 4t.. low, 16 + 4t.. high)
     * and q5's 32 fifth bits at qh (element l: bit l) */
    int q, m, qh = -1, mh = -1;
    if (DT == VT_Q4_0 || DT == VT_IQ4_NL)
        q = ob + 18 * (4 * h + b) + 2, m = (18 * b + 2) & 3;
    else if (DT == VT_Q4_1)
        q = ob + 20 * (4 * h + b) + 4, m = 0;
    else if (DT == VT_Q5_0)
        qh = ob + 22 * (4 * h + b) + 2, mh = (22 * b + 2) & 3, q = qh + 4, m = mh;
    else if (DT == VT_IQ4_XS) /* sub-block 4h + b of the tile's super-block: at 8 + 16 (4h + b), ob and 8 even */
        q = ob + 8 + 16 * (4 * h + b), m = 0;
    else /* mxfp4: 17-byte blocks, at any byte */
        q = ob + 17 * (4 * h + b) + 1, m = -1;
    const uint32_t wa = word_at(ra, q + 4 * t, m), wb = word_at(rb, q + 4 * t, m);
    if (int_interleaved<DT>()) {
        uint32_t ta[2], tb[2];
        int_book<DT>(wa, ta);
        int_book<DT>(wb, tb);
        a[0] = ta[0], a[1] = tb[0], a[2] = ta[1], a[3] = tb[1];
        return;
    }
    a[0] = wa & kLo, a[1] = wb & kLo, a[2] = (wa >> 4) & kLo, a[3] = (wb >> 4) & kLo;
    if (DT == VT_Q5_0) {
        const uint32_t ha = word_at(ra, qh, mh), hb = word_at(rb, qh, mh);
        a[0] |= bits_to_bytes4(ha >> (4 * t)), a[1] |= bits_to_bytes4(hb >> (4 * t));
        a[2] |= bits_to_bytes4(ha >> (16 + 4 * t)), a[3] |= bits_to_bytes4(hb >> (16 + 4 * t));
    }
}

// The weight scale dw and minimum mw (value = dw (code - int_zero) - mw;
// mw = 0 but for q4_1 and q4_k) of block b (0..3) of chunk h of a
// row's staged tile starting at ob.
template <uint32_t DT>
__device__ inline void int_block_scale(const uint8_t *row, int ob, int h, int b, float &dw, float &mw)
{
    const int s = 4 * h + b;
    mw = 0.0f;
    if (DT == VT_Q4_K) {
        dw = sh_f16(row, ob) * (float)vt_blk_k4_scale(row + ob + 4, s);
        mw = sh_f16(row, ob + 2) * (float)vt_blk_k4_min(row + ob + 4, s);
    } else if (DT == VT_IQ4_XS) {
        dw = sh_f16(row, ob) * (float)vt_blk_iq4_xs_scale(row + ob, s);
    } else if (DT == VT_MXFP4) {
        dw = vt_blk_e8m0_half(row[ob + 17 * s]);
    } else {
        constexpr int BB = blk_bytes(DT);
        dw = sh_f16(row, ob + BB * s);
        if (DT == VT_Q4_1)
            mw = -sh_f16(row, ob + BB * s + 2);
    }
}

// One 128-element chunk h of the staged tile cur (the warp's 32 rows, the
// tile at ob of them) on the integer path (int_path), from the digits of
// its x in the warp's buffer h of dz; then, with split, the next chunk's
// x, xnext, into buffer 1 - h (split_digits; the lanes' sync before that
// buffer is read is the caller's). Per pair of blocks and 16-row tile two
// chained m16n8k32: k = positions 0..15 of both blocks (int_block_codes), then
// 16..31; columns 0..3 the first block's digits, 4..7 the second's (each
// zero where k is the other block's). Lane t's columns 2t, 2t + 1 are
// digits 2 (t % 2), + 1 of block t / 2 of the pair, of rows g and g + 8,
// summed into acc[row tile][row half][0] (mma_kernel's accumulators).
template <uint32_t DT>
__device__ inline void int_chunk(const uint8_t *cur, int ob, int h, const float4 &xnext, bool split, int lane,
                                 uint8_t *dz, float (&acc)[2][2][1])
{
    constexpr int TB = tile_row_bytes<DT>();
    const int g = lane >> 2, t = lane & 3, gb = g >> 2, tb = t >> 1;
    const uint8_t *buf = dz + h * kDigitBytes;
    const uint32_t *bd = (const uint32_t *)(const void *)buf;
    const float *pw = (const float *)(const void *)(buf + 512);
    const int *ci = (const int *)(const void *)(buf + 528);
    const float *xs = (const float *)(const void *)(buf + 592);
    /* digits 2 (t % 2) and + 1 weigh 2^-14 (t % 2) and 2^-7 of that */
    const float cw = (t & 1) ? 1.0f / 16384.0f : 1.0f, mg = __uint_as_float(kMagic);
#pragma unroll
    for (int pr = 0; pr < 2; pr++) {
        /* column g's B: digit g % 4 of block 2 pr + g / 4 */
        const uint2 bv = int_b<DT>(((const uint2 *)(const void *)bd)[((2 * pr + gb) * 4 + (g & 3)) * 4 + t]);
        const uint32_t b1a = gb ? 0u : bv.x, b1b = gb ? bv.x : 0u, b2a = gb ? 0u : bv.y, b2b = gb ? bv.y : 0u;
        const int2 cv = ((const int2 *)(const void *)ci)[(2 * pr + tb) * 2 + (t & 1)];
        const int c0[4] = {cv.x, cv.y, cv.x, cv.y};
        const float p = pw[2 * pr + tb] * cw;
        /* a minimum times the block's sum of x, once per block (t even) */
        const float xm = has_min<DT>() && (t & 1) == 0 ? xs[2 * pr + tb] : 0.0f;
#pragma unroll
        for (int rt = 0; rt < 2; rt++) {
            const uint8_t *ra = cur + (16 * rt + g) * TB, *rb = ra + 8 * TB;
            uint32_t a0[4], a1[4];
            int_block_codes<DT>(ra, rb, ob, h, 2 * pr, t, a0);
            int_block_codes<DT>(ra, rb, ob, h, 2 * pr + 1, t, a1);
            const uint32_t lo[4] = {a0[0], a0[1], a1[0], a1[1]}, hi[4] = {a0[2], a0[3], a1[2], a1[3]};
            int c1[4], c[4];
            mma16832<DT == VT_Q8_0>(c1, lo, b1a, b1b, c0);
            mma16832<DT == VT_Q8_0>(c, hi, b2a, b2b, c1);
            const float ya = fmaf(__int_as_float(c[1]) - mg, 1.0f / 128.0f, __int_as_float(c[0]) - mg);
            const float yb = fmaf(__int_as_float(c[3]) - mg, 1.0f / 128.0f, __int_as_float(c[2]) - mg);
            float dwa, mwa, dwb, mwb;
            int_block_scale<DT>(ra, ob, h, 2 * pr + tb, dwa, mwa);
            int_block_scale<DT>(rb, ob, h, 2 * pr + tb, dwb, mwb);
            if (has_min<DT>()) {
                acc[rt][0][0] = fmaf(-mwa, xm, fmaf(dwa * p, ya, acc[rt][0][0]));
                acc[rt][1][0] = fmaf(-mwb, xm, fmaf(dwb * p, yb, acc[rt][1][0]));
            } else {
                acc[rt][0][0] = fmaf(dwa * p, ya, acc[rt][0][0]);
                acc[rt][1][0] = fmaf(dwb * p, yb, acc[rt][1][0]);
            }
        }
    }
    /* the next chunk's digits, independent of the above: their arithmetic
     * fills the mma chains' latencies */
    if (split)
        split_into<DT>(xnext, lane, dz + (1 - h) * kDigitBytes);
}

// a[j] for a j known only at run time, without indexing the registers.
template <int N> __device__ inline int pick(const int (&a)[N], int j)
{
    int r = a[0];
#pragma unroll
    for (int i = 1; i < N; i++)
        r = j == i ? a[i] : r;
    return r;
}

// x split once per call for every column (the PRE kernels): per column j
// and 128-element chunk c, at j * chunks + c: bs (64 pairs, split_x's
// layout of one column; the columns int_chunk_pre reads: split_digits's
// digits), pw (4 floats) and xs (4 xs_per_block floats); int_two also
// ci (16 ints, split_digits's accumulator starts, of those columns).
struct Pre {
    const uint2 *bs;
    const float *pw, *xs;
    int64_t chunks;
    const int *ci;
};

// One 128-element chunk h of the staged tile cur (the warp's 32 rows, the
// tile at ob of them) on the integer path at two columns (int_pre), from
// chunk c of the call's split (pre; colx: the split's column of each).
// Per block of 32 and 16-row tile one m16n8k32 over the block's 32 k
// positions (int_block_codes), mma column 2i + r holding digit
// 2 (i / 2) + r of x column i % 2: lane t's accumulators are column
// t % 2's with digits 2e, 2e + 1 (e = t / 2), those of mma_kernel's N = 2
// epilogue (summed over lanes t, t ^ 2). Digits 2e and 2e + 1 weigh
// 2^-14 e and 2^-7 of that; the rest as int_chunk.
template <uint32_t DT>
__device__ inline void int_chunk_pre(const uint8_t *cur, int ob, int h, int64_t c, const Pre &pre, const int (&colx)[2],
                                     int lane, float (&acc)[2][2][1])
{
    constexpr int TB = tile_row_bytes<DT>();
    const int g = lane >> 2, t = lane & 3, e = t >> 1;
    const float mg = __uint_as_float(kMagic), cw = e ? 1.0f / 16384.0f : 1.0f;
    /* the split's blocks of this chunk: of this lane's column (ql) and of
     * B's column g, digit db (qb) */
    const int64_t ql = ((int64_t)pick(colx, t & 1) * pre.chunks + c) * 4;
    const int64_t qb = ((int64_t)pick(colx, (g >> 1) & 1) * pre.chunks + c) * 4;
    const int db = 2 * (g >> 2) + (g & 1);
#pragma unroll
    for (int b = 0; b < 4; b++) {
        uint32_t a[2][4];
        float dw[2][2], mw[2][2];
#pragma unroll
        for (int rt = 0; rt < 2; rt++) {
            const uint8_t *ra = cur + (16 * rt + g) * TB, *rb = ra + 8 * TB;
            int_block_codes<DT>(ra, rb, ob, h, b, t, a[rt]);
            int_block_scale<DT>(ra, ob, h, b, dw[rt][0], mw[rt][0]);
            int_block_scale<DT>(rb, ob, h, b, dw[rt][1], mw[rt][1]);
        }
        const uint2 bv = int_b<DT>(__ldg(pre.bs + (qb + b) * 16 + db * 4 + t));
        const int2 cv = __ldg((const int2 *)(const void *)pre.ci + (ql + b) * 2 + e);
        const int c0[4] = {cv.x, cv.y, cv.x, cv.y};
        const float p = __ldg(pre.pw + ql + b) * cw;
        /* a minimum times the block's sum of x, once per column (e = 0) */
        const float xm = has_min<DT>() && e == 0 ? __ldg(pre.xs + ql + b) : 0.0f;
#pragma unroll
        for (int rt = 0; rt < 2; rt++) {
            int d[4];
            mma16832<DT == VT_Q8_0>(d, a[rt], bv.x, bv.y, c0);
            const float ya = fmaf(__int_as_float(d[1]) - mg, 1.0f / 128.0f, __int_as_float(d[0]) - mg);
            const float yb = fmaf(__int_as_float(d[3]) - mg, 1.0f / 128.0f, __int_as_float(d[2]) - mg);
            acc[rt][0][0] = fmaf(-mw[rt][0], xm, fmaf(dw[rt][0] * p, ya, acc[rt][0][0]));
            acc[rt][1][0] = fmaf(-mw[rt][1], xm, fmaf(dw[rt][1] * p, yb, acc[rt][1][0]));
        }
    }
}

// The most warps a block of mma_kernel has (its launch bounds): 16, at 128
// registers a thread; at eight columns 12 (168 registers), but 8 for q2_k,
// q6_k, f16 and bf16 (255 registers); at four columns 12 for iq4_nl.
// - q4_1's eight-column kernel at 135 registers ran 8 warps per SM. At 128
//   (16 warps; ptxas spills 32 bytes) it ran 12: on the H100, m = 4096,
//   k = 14336, n = 8, 30.46 -> 29.08 us graph (plugin-ab), ncu 35.58 ->
//   33.09 us with 0.40 -> 0.43 issued per scheduler. At 168 (12 warps;
//   4 bytes) 28.75 -> 28.29 (round 29). q2_k's would spill 192 bytes.
// - q3_k, q4_k and q5_k: 12 at 168 registers (ptxas spills 8 to 56 bytes on
//   the call's split), not 8 at 178 - 244; on the H100, same shape, graph
//   us (plugin-ab, 3 rounds): q4_k 29.42 -> 27.73, q3_k 31.22 -> 29.01,
//   q5_k 33.20 -> 32.60. q2_k (52 bytes) and q6_k (8) measured the same at
//   12 and keep 8.
// - The other block formats: 12 at 168 registers (on the call's split
//   ptxas spills only q5_1's, 12 - 28 bytes), not 8 at 128 - 188; H100,
//   same shape, graph us (plugin-ab, 2 rounds; round 29): q4_0 25.38 ->
//   24.04, q5_0 32.77 -> 30.88, q5_1 36.75 -> 34.10, q8_0 35.14 -> 33.98,
//   iq4_nl 30.13 -> 27.58, iq4_xs 30.16 -> 28.62, mxfp4 29.44 -> 27.77; at
//   m = k = 4096 q4_0 9.91 -> 9.76, q8_0 12.54 -> 12.52. f16 and bf16 were
//   slower at 12 (54.20 -> 59.03, 54.73 -> 58.98) and keep 8.
// - At four columns, 12 warps at 168 registers against 16 at 128 (same
//   shape, round 29): iq4_nl 24.03 -> 23.22, which takes 12; the others
//   keep 16: q8_0 29.18 -> 29.07 (noise), q4_k 22.43 -> 22.78 (at m = k =
//   4096 9.23 -> 9.07), q4_0 21.04 -> 21.53, q4_1 22.13 -> 22.77, q5_0
//   25.73 -> 26.32.
template <uint32_t DT, int N> __host__ __device__ constexpr int launch_warps()
{
    return N == 8 ? (DT == VT_Q2_K || DT == VT_Q6_K || dense<DT>() ? 8 : 12) : N == 4 && DT == VT_IQ4_NL ? 12 : 16;
}

// Whether mma_plan's 16-warp rule (a block that holds one group of rows
// gets up to 16 warps of one tile) applies to DT's one-column kernel: not
// to iq4_nl and q4_1, which it made slower (H100, m = k = 4096, graph us,
// plugin-ab: iq4_nl 7.36 -> 7.46 and 7.43 -> 7.52 in two calls, q4_1 6.67
// -> 6.78 in one) and which were faster without it in three more (iq4_nl
// 7.44 -> 7.31, 7.46 -> 7.34, 7.45 -> 7.33; q4_1 6.66 -> 6.58, 6.67 ->
// 6.58, 6.67 -> 6.58; BENCHMARKS.md round 29).
template <uint32_t DT> __host__ __device__ constexpr bool one_group_warps()
{
    return DT != VT_IQ4_NL && DT != VT_Q4_1;
}

// Whether mma_plan's half-warps rule for MoeExpertMatMul's one-token slots
// (half the warps, two tiles each) applies to DT: the formats it made
// faster in two calls, or faster and then even (H100, E = 128, 8 used,
// m = 768, k = 2048, t = 1, graph us, plugin-ab, BENCHMARKS.md rounds 31
// and 32: q4_0 0.941 / 0.977, q4_k 0.917 / 0.938, q8_0 0.880 / 0.813,
// iq4_nl 0.952 / 0.971, mxfp4 0.973 / 0.996); not q4_1 (0.998 / 1.078),
// q5_k (1.013) or q2_k (1.006), nor iq4_xs (0.948 in round 32 on the H100,
// 1.025 in round 33 on the H200).
template <uint32_t DT> __host__ __device__ constexpr bool moe_half_warps()
{
    return DT == VT_Q4_0 || DT == VT_Q4_K || DT == VT_Q8_0 || DT == VT_IQ4_NL || DT == VT_MXFP4;
}

// Per warp, in shared memory: the ring of S staged tiles, then the hi/lo
// split of one 128-element chunk of x (Bs[j][block][hi/lo][group] as pairs
// of f16x2), the blocks' powers of two and sums of x (int_path: instead two
// buffers of kDigitBytes, int_chunk's; PRE, f16, bf16 and int_pre: none, the
// split is the call's; scale_table's formats under PRE: the staged tile's
// scales there, scale_table_bytes). After the warps' areas: the warps' row
// sums (two buffers: [2][nw][32 rows][N]) and the ring's mbarriers
// ([nw][S]). The f16
// path's block formats keep the unused area under PRE: without it q5_1 at
// n = 8 measured 49.8 us on the H200 (m = 4096, k = 14336) against 34.7
// with it, every other format the same. ncu with the area: registers allow 2
// blocks per SM, shared memory 1; without it both allow 2, and the 128
// blocks can then share SMs in pairs while others idle (the likely cause,
// not observed). The fix at depth is a grid that places one block per SM
// whenever the blocks do not outnumber the SMs.
template <uint32_t DT, int N, int S, bool PRE> struct WarpSmem {
    static constexpr int ring = S * kWarpRows * tile_row_bytes<DT>();
    static constexpr int bs = N * 4 * 2 * 8 * 8;
    static constexpr int split = PRE && (dense<DT>() || int_pre<DT, N, PRE>()) ? 0
                                 : int_path<DT, N>()                           ? 2 * kDigitBytes
                                                     : bs + N * 4 * 4 + N * 4 * 4 * xs_per_block(DT);
    static constexpr int bytes =
        ring + (split > scale_table_bytes<DT, N, PRE>() ? split : scale_table_bytes<DT, N, PRE>());
};

// Floats of the row sums of w warps in the buffers after the warps' areas
// ([2][nw][32 rows][N]: buffer b's warp w's sum of row r, column j at
// part_floats(b * nw + w) + r * N + j).
template <int N> __host__ __device__ constexpr int part_floats(int w)
{
    return w * kWarpRows * N;
}

// The pair (f0, f1) as hi = the pair rounded to f16 (BF: bf16) and lo =
// the rest rounded the same way, each as the bits of one f16x2 (bf16x2):
// hi + lo carries 22 significant bits (bf16: 16).
template <bool BF> __device__ inline void split_pair(float f0, float f1, uint32_t &hi, uint32_t &lo)
{
    if (BF) {
        hi = h2_bits(__floats2bfloat162_rn(f0, f1));
        const float g0 = __uint_as_float(hi << 16), g1 = __uint_as_float(hi & 0xFFFF0000u);
        lo = h2_bits(__floats2bfloat162_rn(f0 - g0, f1 - g1));
    } else {
        const __half2 h = __floats2half2_rn(f0, f1);
        const float2 g = __half22float2(h);
        hi = h2_bits(h);
        lo = h2_bits(__floats2half2_rn(f0 - g.x, f1 - g.y));
    }
}

// Split this lane's 4 elements xv (elements 4 lane.. of a 128-element
// chunk) of each of the N columns into shared memory
// (bs, pw: 2^e per (column, block), xsum: sum of x per (column, block),
// q2_k: per (column, block, 16-element group)).
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
        uint32_t h0, h1, l0, l1;
        split_pair<DT == VT_BF16>(f0, f1, h0, l0);
        split_pair<DT == VT_BF16>(f2, f3, h1, l1);
        const int base = ((j * 4 + b) * 2) * 8 + q;
        bs[base] = make_uint2(h0, h1);
        bs[base + 8] = make_uint2(l0, l1);
        if (has_min<DT>()) {
            constexpr int XS = xs_per_block(DT);
            float s = (v.x + v.y) + (v.z + v.w);
            s += __shfl_xor_sync(kFull, s, 1);
            s += __shfl_xor_sync(kFull, s, 2);
            if (XS == 1)
                s += __shfl_xor_sync(kFull, s, 4);
            if ((r & (8 / XS - 1)) == 0)
                xsum[(j * 4 + b) * XS + r / (8 / XS)] = s;
        }
        if (r == 0)
            pw[j * 4 + b] = __uint_as_float((uint32_t)(127 - sh) << 23);
    }
}

// mma_kernel's forms: MatMul, MoeExpertMatMul at one token, and
// MoeExpertMatMul over the chunks of a grouping table (two or more tokens).
constexpr int kMatMul = 0, kMoeOne = 1, kMoeChunks = 2;

// Whether int_path's warp splits both chunks of a tile before waiting for
// it (and the next tile's after the last mma of this one), so that no split
// runs between the mmas of a tile: MoeExpertMatMul, whose warps mostly have
// one tile, and MatMul but for q4_k. On the H100, graph us, main's
// interleaved split against this (plugin-ab, 2 rounds): MoeExpertMatMul
// t = 1 (E = 128, 8 used, m = 768, k = 2048) q4_0 7.97 -> 7.46, q4_k 8.19
// -> 7.51, iq4_nl 9.18 -> 8.67; MatMul n = 1, m = 4096, k = 14336, q4_0
// 16.89 -> 16.03, q8_0 27.11 -> 26.65, iq4_nl 21.05 -> 19.58; m = 6144,
// k = 4096 q4_0 10.76 -> 9.89. q4_k's MatMul measured slower with it at
// m = k = 4096 (6.79 -> 7.14) and keeps the interleaved split.
template <uint32_t DT, int N, bool PRE, int MO> __host__ __device__ constexpr bool split_ahead()
{
    return int_path<DT, N>() && !PRE && (MO != kMatMul || DT != VT_Q4_K);
}

// MoeExpertMatMul (W [E, m, k]). kMoeOne: slot s of the TK takes the m rows
// of expert ids[s], x row x_per_slot ? s : K ? s / K : 0 (its token's; K =
// 0 at one token, where every slot takes row 0), and y rows [s m, s m + m).
// Every block checks the ids; a bad one is recorded in err (the first, as
// vt_rocm_launch_check_range does) and every slot then computes with
// expert 0, as the checked copy (all 0) would have it. kMoeChunks: chunk c
// of tab (chunk_tab_ints, written by moe_prep_kernel, which checked the
// ids) takes the m rows of its expert for its one or two pairs p, x
// column x_per_slot ? p : p / K of the call's split, and y rows [p m,
// p m + m).
struct Moe {
    const int32_t *ids;
    vt_rocm_err *err;
    uint32_t op;
    int TK, x_per_slot;
    int64_t E;
    const int32_t *tab;
    int K;
};

// Bytes of dt's split of n columns of k elements (Pre's arrays).
inline int64_t pre_bytes(uint32_t dt, int64_t n, int64_t k)
{
    return n * (k / 128) * (64 * 8 + 4 * 4 + 4 * 4 * xs_per_block(dt) + (int_two(dt) ? 16 * 4 : 0));
}

// Pre's arrays for n columns of k elements in scratch (pre_bytes).
template <uint32_t DT> Pre pre_in(void *scratch, int64_t n, int64_t k)
{
    Pre pre = {(const uint2 *)scratch, nullptr, nullptr, k / 128, nullptr};
    const float *pw = (const float *)(const void *)(pre.bs + n * pre.chunks * 64);
    pre.pw = pw, pre.xs = pw + n * pre.chunks * 4;
    if (int_two(DT))
        pre.ci = (const int *)(const void *)(pre.xs + n * pre.chunks * 4 * xs_per_block(DT));
    return pre;
}

// The split of chunk c of column j by warp p = j * chunks + c of the
// blocks of 8 warps (p past the last: nothing) into pre (written here):
// split_x's arithmetic, so the PRE kernels see the values the others
// compute; for the columns from `digits` on (int_two: those that
// int_chunk_pre reads), split_digits's.
template <uint32_t DT>
__device__ inline void split_warp(const float *x, int64_t k, int64_t n, int64_t digits, const Pre &pre)
{
    const int lane = (int)threadIdx.x & 31;
    const int64_t chunks = k / 128, p = (int64_t)blockIdx.x * 8 + ((int)threadIdx.x >> 5);
    if (p >= n * chunks)
        return;
    const int64_t j = p / chunks, c = p % chunks;
    const float4 xv[1] = {__ldg((const float4 *)(x + j * k + c * 128) + lane)};
    uint2 *bs = (uint2 *)pre.bs + p * 64;
    float *pw = (float *)pre.pw + p * 4, *xs = (float *)pre.xs + p * 4 * xs_per_block(DT);
    if (int_two(DT) && j >= digits)
        split_digits<int_zero<DT>()>(xv[0], lane, (uint32_t *)(void *)bs, pw, (int *)pre.ci + p * 16,
                                     has_min<DT>() ? xs : nullptr);
    else
        split_x<DT, 1>(xv, lane, bs, pw, xs);
}

// The split of the n columns of x into pre (split_warp; digits from
// column `digits` on), 8 warps a block.
template <uint32_t DT>
__global__ void __launch_bounds__(256) split_kernel(const float *x, int64_t k, int64_t n, int64_t digits, Pre pre)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    split_warp<DT>(x, k, n, digits, pre);
}

// The pairs and experts the chunked MoeExpertMatMul takes (the arrays of
// its chunking block), its threads, and the pairs of a chunk.
constexpr int kMoeMaxPairs = 512, kMoeMaxExperts = 1024, kPrepThreads = 256, kChunkPairs = 2;

// The chunk table (ints): [0] the chunk count, then per chunk c the
// expert, its first pair and its second (-1: none); pairs t K + i.
__host__ __device__ constexpr int64_t chunk_tab_ints(int64_t TK)
{
    return 1 + 3 * TK;
}

// Cut the TK <= kMoeMaxPairs pairs of ids (E <= kMoeMaxExperts experts)
// into chunks of at most two pairs of one expert, into tab, by the
// kPrepThreads threads of one block. The ids are checked first: the first
// outside [0, E) is recorded in err (as vt_rocm_launch_check_range does)
// and every pair then names expert 0, as the checked copy (all 0) would.
// A pair's rank among its expert's pairs comes from a shared counter, so
// which pairs share a chunk and the chunks' order vary from run to run;
// the products do not: each column of an mma is its own dot product.
__device__ inline void moe_chunks_block(const int32_t *ids, int TK, int64_t E, vt_rocm_err *err, uint32_t op,
                                        int32_t *tab)
{
    __shared__ int cnt[kMoeMaxExperts], sid[kMoeMaxPairs], rank[kMoeMaxPairs], at[kMoeMaxPairs];
    __shared__ int wsum[kPrepThreads / 32];
    __shared__ int64_t first;
    const int tid = (int)threadIdx.x, lane = tid & 31, wv = tid >> 5;
    const int64_t f = vt_block_first(
        TK, [&](int64_t i) { return ids[i] < 0 || (int64_t)ids[i] >= E; }, &first);
    const bool bad = f < TK;
    if (bad && tid == 0)
        vt_rocm_err_set(err, VT_ROCM_ERR_RANGE, op, VT_ROCM_NAME_IDS, f, ids[f], E, -1);
    for (int e = tid; e < (int)E; e += kPrepThreads)
        cnt[e] = 0;
    __syncthreads();
    for (int p = tid; p < TK; p += kPrepThreads) {
        const int e = bad ? 0 : ids[p];
        sid[p] = e;
        rank[p] = atomicAdd(&cnt[e], 1);
    }
    __syncthreads();
    /* exclusive scan over the experts of (pairs, chunks), packed as
     * pairs + (chunks << 16) (both at most 512): each thread a run of
     * experts, then the warps, then the threads before it */
    const int per = (int)((E + kPrepThreads - 1) / kPrepThreads), e0 = tid * per;
    const int e1 = e0 + per < (int)E ? e0 + per : (int)E;
    int mine = 0;
    for (int e = e0; e < e1; e++)
        mine += cnt[e] + (((cnt[e] + 1) >> 1) << 16);
    int incl = mine;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const int v = __shfl_up_sync(kFull, incl, o);
        incl += lane >= o ? v : 0;
    }
    if (lane == 31)
        wsum[wv] = incl;
    __syncthreads();
    int run = incl - mine;
    for (int i = 0; i < wv; i++)
        run += wsum[i];
    for (int e = e0; e < e1; e++) {
        const int c = cnt[e];
        cnt[e] = run;
        run += c + (((c + 1) >> 1) << 16);
    }
    if (tid == kPrepThreads - 1)
        tab[0] = run >> 16;
    __syncthreads();
    /* the pairs grouped by expert: pair p at its expert's base + rank */
    for (int p = tid; p < TK; p += kPrepThreads)
        at[(cnt[sid[p]] & 0xFFFF) + rank[p]] = p;
    __syncthreads();
    /* a chunk at every pair of even rank, with the next of its expert */
    for (int p = tid; p < TK; p += kPrepThreads) {
        const int e = sid[p], r = rank[p];
        if (r & 1)
            continue;
        const int pos = (cnt[e] & 0xFFFF) + r, c = (cnt[e] >> 16) + r / 2;
        const int nx = pos + 1 < TK && sid[at[pos + 1]] == e ? at[pos + 1] : -1;
        tab[1 + 3 * c] = e, tab[2 + 3 * c] = p, tab[3 + 3 * c] = nx;
    }
}

// MoeExpertMatMul's first kernel at two or more tokens (kMoeChunks): the
// last block checks the TK ids and cuts the pairs into chunks
// (moe_chunks_block); the others split the n columns of x into pre as
// split_kernel does.
template <uint32_t DT>
__global__ void __launch_bounds__(kPrepThreads)
    moe_prep_kernel(const float *x, int64_t k, int64_t n, Pre pre, const int32_t *ids, int TK, int64_t E,
                    vt_rocm_err *err, uint32_t op, int32_t *tab)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    if (blockIdx.x + 1 == gridDim.x)
        moe_chunks_block(ids, TK, E, err, op, tab);
    else
        split_warp<DT>(x, k, n, 0, pre);
}

// 16 bytes global -> shared without registers, with L2 told to fetch the
// whole 256-byte block around them (the next tile of the row, which the
// next warp reads at about the same time; flags: the harness's other
// choices, 8: no prefetch, 16: 128 bytes).
__device__ inline void cp16(unsigned s, const void *src, int flags)
{
#ifdef VT_MMA_HARNESS
    if (flags & 8) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src) : "memory");
        return;
    }
    if (flags & 16) {
        asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;\n" ::"r"(s), "l"(src) : "memory");
        return;
    }
#endif
    (void)flags;
    asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;\n" ::"r"(s), "l"(src) : "memory");
}

// The ring's copies: on sm_90 the rows of 240 and 272 bytes per tile
// (q6_k, q8_0) come with one bulk copy each (the TMA unit) that signals an
// mbarrier per ring slot; the 144-byte rows (q4_0, iq4_nl, q4_k) and
// older targets copy 16-byte pieces with cp.async, one commit group per
// slot (on the H200 each was the faster for those rows: scripts/
// mma-harness.cu shapes, the harness's VT_MMA_CP_ASYNC build).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && !defined(VT_MMA_CP_ASYNC)
#define VT_MMA_BULK_ARCH 1
#else
#define VT_MMA_BULK_ARCH 0
#endif
template <uint32_t DT> __device__ constexpr bool bulk_copies()
{
    return VT_MMA_BULK_ARCH && tile_row_bytes<DT>() > 144;
}

// This lane's cp.async pieces of a tile: piece lane + 32 i of the warp's
// 32 x P (row (lane + 32 i) / P, 16-byte column (lane + 32 i) % P, which
// lands at byte 16 (lane + 32 i) of the staged rows); offs[i], its byte
// from the tile's start in the source: min(row, rows - 1) * rb + 16
// column (the 32 rows span less than 2 GiB). The same for every tile of
// a group of rows.
template <int P> __device__ inline void piece_offsets(int rb, int rows, int lane, int (&offs)[P])
{
#pragma unroll
    for (int i = 0; i < P; i++) {
        const int p = lane + 32 * i, r = p / P, c = p - r * P;
        offs[i] = (r < rows - 1 ? r : rows - 1) * rb + 16 * c;
    }
}

// Queue tile t of the warp's 32 rows (row_bytes apart from w0; rows from
// `rows` on repeat row rows - 1, so every byte read is in bounds) into the
// ring slot dst whose mbarrier is bar (bulk) or as one commit group
// (cp.async: with offs, piece_offsets's for these rows, when small: the
// 32 rows span less than 2 GiB).
template <uint32_t DT>
__device__ inline void stage(uint8_t *dst, const uint8_t *w0, int64_t row_bytes, int rows, int64_t t, int lane,
                             unsigned bar, int flags, const int (&offs)[tile_row_bytes<DT>() / 16], bool small)
{
    constexpr int TB = tile_row_bytes<DT>();
    const uint8_t *src = w0 + tile_window<DT>(t, row_bytes);
    if constexpr (bulk_copies<DT>()) {
#if VT_MMA_BULK_ARCH
        if (lane == 0)
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(kWarpRows * TB)
                         : "memory");
        __syncwarp();
        /* the slot's previous tile was read through the generic proxy */
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        const int r = lane < rows ? lane : rows - 1;
        const unsigned d = (unsigned)__cvta_generic_to_shared(dst + lane * TB);
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(d),
                     "l"(src + r * row_bytes), "r"(TB), "r"(bar)
                     : "memory");
#endif
        (void)offs, (void)small;
    } else {
        constexpr int P = TB / 16;
        const unsigned sd = (unsigned)__cvta_generic_to_shared(dst) + 16 * lane;
        if (small) {
#pragma unroll
            for (int i = 0; i < P; i++)
                cp16(sd + 512 * i, src + offs[i], flags);
        } else {
            const int last = rows - 1;
#pragma unroll
            for (int i = 0; i < P; i++) {
                const int p = lane + 32 * i, r = p / P, c = p - r * P;
                cp16(sd + 512 * i, src + (r < last ? r : last) * row_bytes + 16 * c, flags);
            }
        }
        asm volatile("cp.async.commit_group;\n" ::: "memory");
    }
    (void)bar, (void)flags;
}

// Nothing to queue this turn (cp.async: an empty group keeps the count).
template <uint32_t DT> __device__ inline void stage_none()
{
    if constexpr (!bulk_copies<DT>())
        asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Wait until the warp's next tile is in shared memory: bulk, the phase of
// parity `phase` of its slot's barrier bar; cp.async, this lane's copies
// (the caller syncs the warp).
template <uint32_t DT, int S> __device__ inline void wait_tile(unsigned bar, unsigned phase)
{
    if constexpr (bulk_copies<DT>()) {
#if VT_MMA_BULK_ARCH
        unsigned done = 0;
        while (!done)
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                         : "=r"(done)
                         : "r"(bar), "r"(phase)
                         : "memory");
#endif
    } else {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(S - 1) : "memory");
    }
    (void)bar, (void)phase;
}

// MatMul, persistent: block i takes the groups of 32 rows i, i + grid, ...
// (rows past m: the last row again, not stored), its warps the tiles of k
// of each group in turn (flags & 1) or a contiguous share each, one stream
// of tiles per warp across its groups (the ring never drains between
// groups); y[j, c] = x[j] . W[c] for the n <= N columns (a missing column
// repeats the last one and is not stored). w0 is 16-byte aligned and
// row_bytes a multiple of 16. PRE: x split into pre by split_kernel, else
// each warp splits its own chunks (int_path: one chunk ahead, or one tile,
// split_ahead). flags: 1 in the plugin; the harness's diagnostics add 2
// (no split) and 4 (loads only) on the f16 path, 8 and 16 (cp16's
// prefetch).
// MO (Moe): kMoeOne (N = 1, no PRE), MoeExpertMatMul at one token, the
// groups of 32 rows those of each slot's expert in turn (ceil(m / 32) per
// slot); kMoeChunks (N = 2, PRE), those of each chunk's expert, the chunk's
// pairs as the columns (the chunk count read from the table after the
// chained wait).
template <uint32_t DT, int N, bool PRE, int S, int MO>
__global__ void __launch_bounds__(32 * launch_warps<DT, N>())
    mma_kernel(const float *x, const uint8_t *w, int64_t row_bytes, float *y, int n, int64_t m, int64_t k, int flags,
               Pre pre, Moe mo)
{
    constexpr bool MOE = MO == kMoeOne;
    static_assert(!MOE || (N == 1 && !PRE), "MoeExpertMatMul at one token: one column, split in the kernel");
    static_assert(MO != kMoeChunks || (N == kChunkPairs && PRE), "chunks: their pairs' columns of the split");
    extern __shared__ __align__(16) uint8_t smem[];
    constexpr int TB = tile_row_bytes<DT>();
    constexpr int T = N == 8 ? 2 : 1;               /* mma tiles of 8 columns */
    constexpr int BV = N == 1 ? 1 : N == 2 ? 2 : 4; /* blocks a lane visits per chunk */
    constexpr int U = 4 / BV;                       /* units (2 groups) per visit */
    using WS = WarpSmem<DT, N, S, PRE>;
    const int lane = (int)threadIdx.x & 31, wv = (int)threadIdx.x >> 5, nw = (int)blockDim.x >> 5;
    const int g = lane >> 2, t = lane & 3;
    uint8_t *mine = smem + wv * WS::bytes;
    uint8_t *ring = mine;
    uint2 *bs = (uint2 *)(void *)(mine + WS::ring);
    float *pw = (float *)(void *)(mine + WS::ring + WS::bs);
    float *xsum = pw + 4 * N;
    float *part = (float *)(void *)(smem + nw * WS::bytes); /* two buffers of part_floats */
    uint64_t *bars = (uint64_t *)(void *)(part + part_floats<N>(2 * nw)) + wv * S;
    const unsigned bar0 = (unsigned)__cvta_generic_to_shared(bars);
#if VT_MMA_BULK_ARCH
    if constexpr (bulk_copies<DT>()) {
        if (lane == 0)
            for (int i = 0; i < S; i++)
                asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar0 + 8 * i));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        __syncwarp();
    }
#endif

    const int64_t gpm = (m + kWarpRows - 1) / kWarpRows; /* groups of one matrix */
    int64_t groups = MOE ? gpm * mo.TK : gpm;
    /* the block's groups (kMoeChunks: after the wait) */
    auto groups_of_block = [&]() { return (groups - blockIdx.x + gridDim.x - 1) / gridDim.x; };
    int64_t mine_g = groups_of_block();
    const float *xs[N];
#pragma unroll
    for (int j = 0; j < N; j++)
        xs[j] = x + (int64_t)(j < n ? j : n - 1) * k;

    /* the warp's tiles of k in each group: f, f + st, ... (cnt of them);
     * interleaved (f = wv, st = nw) the block's warps read neighbouring
     * tiles of each row at the same time (long runs of each row per DRAM
     * page), else a contiguous share each. The launch gives every warp
     * at least one. */
    const int64_t tiles = k / kTile;
    int64_t f, st, cnt;
    if (flags & 1) {
        f = wv, st = nw, cnt = tiles > wv ? (tiles - wv + nw - 1) / nw : 0;
    } else {
        const int64_t q = tiles / nw, rem = tiles % nw;
        f = wv * q + (wv < rem ? wv : rem), st = 1, cnt = q + (wv < rem ? 1 : 0);
    }
    int64_t total = cnt * mine_g; /* the warp's stream of tiles */
    /* chained launch (rocm_chain.h): the setup above overlaps the end of
     * the kernel before this one; no global access before the wait but,
     * for a MatMul on the call's split (PRE), its first tiles of weights:
     * the kernel before is then this call's split_kernel or mma_kernel,
     * which write only the split and y (rocm_chain.h's own-op rule) */
    constexpr bool early = PRE && MO == kMatMul;
    if constexpr (!early)
        vt_chain_begin();
    const int32_t *ctab = nullptr; /* kMoeChunks: the table's chunks */
    if constexpr (MO == kMoeChunks) {
        ctab = mo.tab + 1;
        groups = gpm * __ldg(mo.tab);
        mine_g = groups_of_block();
        total = cnt * mine_g;
    }
    /* PRE: the split's column of each of the N columns of the group decoded
     * (MatMul: j, a missing one the last; kMoeChunks: its chunk's pairs',
     * a missing second the first's), set at each group's start with
     * kMoeChunks's pairs themselves (y's rows; -1: none) */
    int colx[N], cpair[N];
#pragma unroll
    for (int j = 0; j < N; j++)
        colx[j] = j < n ? j : n - 1, cpair[j] = -1;
    auto chunk_cols = [&](int64_t u) {
        if constexpr (MO == kMoeChunks) {
            const int64_t c = u < groups ? u / gpm : 0;
            cpair[0] = __ldg(ctab + 3 * c + 1), cpair[1] = __ldg(ctab + 3 * c + 2);
            colx[0] = mo.x_per_slot ? cpair[0] : cpair[0] / mo.K;
            colx[1] = cpair[1] < 0 ? colx[0] : mo.x_per_slot ? cpair[1] : cpair[1] / mo.K;
        }
        (void)u;
    };
    chunk_cols(blockIdx.x);

    /* MOE: the ids checked by every block (the first bad one recorded by
     * block 0); a bad call computes every slot with expert 0 */
    bool bad = false;
    if constexpr (MOE) {
        /* part's first 8 bytes hold the search's minimum: part is not
         * written before the first group ends */
        const int64_t i = vt_block_first(
            mo.TK,
            [&](int64_t s) {
                const int32_t id = __ldg(mo.ids + s);
                return id < 0 || (int64_t)id >= mo.E;
            },
            (int64_t *)(void *)part);
        bad = i < mo.TK;
        if (bad && blockIdx.x == 0 && threadIdx.x == 0)
            vt_rocm_err_set(mo.err, VT_ROCM_ERR_RANGE, mo.op, VT_ROCM_NAME_IDS, i, __ldg(mo.ids + i), mo.E, -1);
    }
    /* group u's first row (r0 of its matrix), its rows (32 but at m's
     * end), where its weight rows start and its x column (MOE: slot u /
     * gpm's expert and x row; groups past the last read nothing) */
    auto group_at = [&](int64_t u, int64_t &r0, int &rows, const uint8_t *&src, const float *&xg) {
        int64_t base;
        if constexpr (MOE) {
            const int64_t sl = u / gpm;
            r0 = (u - sl * gpm) * kWarpRows;
            const int64_t e = bad || u >= groups ? 0 : __ldg(mo.ids + sl);
            base = e * m + r0;
            xg = x + (u >= groups ? 0 : mo.x_per_slot ? sl : mo.K ? (int)sl / mo.K : 0) * k;
        } else if constexpr (MO == kMoeChunks) {
            const int64_t c = u / gpm;
            r0 = (u - c * gpm) * kWarpRows;
            base = (u < groups ? (int64_t)__ldg(ctab + 3 * c) : 0) * m + r0;
            xg = x;
        } else {
            r0 = u * kWarpRows, base = r0, xg = x;
        }
        rows = m - r0 < kWarpRows ? (int)(m - r0) : kWarpRows;
        src = w + base * row_bytes;
    };

    /* the next tile to queue: the ij-th of the warp in group iu (rows
     * irows from isrc), into slot is (counters, no divisions in the loop
     * but MOE's at a new group) */
    int64_t ij = 0, iu = blockIdx.x, ir0;
    int is = 0, irows;
    const uint8_t *isrc;
    const float *ixg;
    group_at(iu, ir0, irows, isrc, ixg);
    /* the cp.async pieces' source offsets, for groups of offs_rows rows */
    const bool small = row_bytes <= (int64_t)(0x7FFFFFFF / kWarpRows);
    int offs[TB / 16], offs_rows = 0;
    auto issue = [&]() {
        if (!bulk_copies<DT>() && small && irows != offs_rows) {
            piece_offsets<TB / 16>((int)row_bytes, irows, lane, offs);
            offs_rows = irows;
        }
        stage<DT>(ring + is * kWarpRows * TB, isrc, row_bytes, irows, f + ij * st, lane, bar0 + 8 * (unsigned)is, flags,
                  offs, small);
        is = is + 1 == S ? 0 : is + 1;
        if (++ij == cnt) {
            ij = 0, iu += gridDim.x;
            group_at(iu, ir0, irows, isrc, ixg);
        }
    };
    /* the x of the group decoded (xd) and of the group after it (xa): one
     * x for MatMul */
    const float *xd = x, *xa = x;
    if constexpr (MOE) {
        int64_t r0;
        int rows;
        const uint8_t *src;
        group_at(blockIdx.x, r0, rows, src, xd);
        group_at(blockIdx.x + gridDim.x, r0, rows, src, xa);
        xs[0] = xd;
    }

    float acc[2][2][T] = {};
    /* x of the next chunk, loaded one chunk ahead (ahead: and of the one
     * after it, xn1) */
    constexpr bool ahead = split_ahead<DT, N, PRE, MO>();
    float4 xn[N], xn1 = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (!PRE && total > 0) {
#pragma unroll
        for (int j = 0; j < N; j++)
            xn[j] = __ldg((const float4 *)(xs[j] + f * kTile) + lane);
        if (ahead)
            xn1 = __ldg((const float4 *)(xs[0] + f * kTile + 128) + lane);
    }
#pragma unroll
    for (int i = 0; i < S - 1; i++) {
        if (i < total)
            issue();
        else
            stage_none<DT>();
    }
    if constexpr (early)
        vt_chain_begin();
    if constexpr (int_path<DT, N>() && !PRE) {
        /* the integer path splits one chunk ahead: the first now (buffer 0),
         * xn the second's x; ahead, the second too (buffer 1) */
        if (total > 0) {
            uint8_t *dz = mine + WS::ring;
            split_into<DT>(xn[0], lane, dz);
            if (ahead)
                split_into<DT>(xn1, lane, dz + kDigitBytes);
            else
                xn[0] = __ldg((const float4 *)(xs[0] + f * kTile + 128) + lane);
            __syncwarp();
        }
    }
    /* the tile decoded: the cj-th of the warp in the block's group gi
     * (group du), in slot cs, whose barrier's phase has parity cph */
    int64_t cj = 0, gi = 0, du = blockIdx.x;
    int cs = 0;
    unsigned cph = 0;
    for (int64_t it = 0; it < total; it++) {
        const int64_t tt = f + cj * st, ttn = f + (cj + 1 == cnt ? 0 : cj + 1) * st;
        /* the x of tile ttn (MOE: the next group's where this one ends) */
        const float *xt = MOE ? (cj + 1 == cnt ? xa : xd) : xs[0];
        uint8_t *cur = ring + cs * kWarpRows * TB;
        /* where the tile starts in its staged rows (q6_k: 0..14, even; q3_k: 0..34, even) */
        const int ob = (int)(tt * tile_src_bytes<DT>() - tile_window<DT>(tt, row_bytes));
        /* the slot of tile it - 1, which every lane has read */
        if (it + S - 1 < total)
            issue();
        else
            stage_none<DT>();
        wait_tile<DT, S>(bar0 + 8 * (unsigned)cs, cph);
        if (++cs == S)
            cs = 0, cph ^= 1;
        __syncwarp();
        if constexpr (scale_table<DT, N, PRE>()) {
            /* row lane's 8 sub-blocks: tab[s][row] = (dw, mw); the last
             * tile's reads ended at the loop's closing __syncwarp */
            ScaleEntry<DT> *tab = (ScaleEntry<DT> *)(void *)(mine + WS::ring); /* [8][32 rows] */
            float dw[8], mw[8];
            sub_scales8<DT>(cur + lane * TB, ob, dw, mw);
#pragma unroll
            for (int sb = 0; sb < 8; sb++) {
                if constexpr (group_mins<DT>()) {
                    float nm[2];
                    q2k_mins(cur + lane * TB, ob, sb >> 2, sb & 3, nm);
                    tab[sb * kWarpRows + lane] = make_float4(dw[sb], mw[sb], nm[0], nm[1]);
                } else {
                    tab[sb * kWarpRows + lane] = make_float2(dw[sb], mw[sb]);
                }
            }
            __syncwarp();
        }
#pragma unroll
        for (int h = 0; h < 2; h++) {
            if constexpr (ahead) {
                /* both chunks' digits are in their buffers; the next
                 * tile's x comes in meanwhile */
                if (h == 0 && it + 1 < total) {
                    xn[0] = __ldg((const float4 *)(xt + ttn * kTile) + lane);
                    xn1 = __ldg((const float4 *)(xt + ttn * kTile + 128) + lane);
                }
                int_chunk<DT>(cur, ob, h, xn[0], false, lane, mine + WS::ring, acc);
                if (h == 1 && it + 1 < total) {
                    __syncwarp(); /* both buffers read before they are rewritten */
                    split_into<DT>(xn[0], lane, mine + WS::ring);
                    split_into<DT>(xn1, lane, mine + WS::ring + kDigitBytes);
                }
                __syncwarp(); /* digits written before they are read */
            } else if constexpr (int_path<DT, N>() && !PRE) {
                /* xn: the next chunk's x (split now); then the one after
                 * it; past the warp's last tile neither */
                const float4 xs_next = xn[0];
                const bool next = it + 1 < total;
                if (next)
                    xn[0] = __ldg((const float4 *)(xt + ttn * kTile + 128 * h) + lane);
                int_chunk<DT>(cur, ob, h, xs_next, h == 0 || next, lane, mine + WS::ring, acc);
                __syncwarp(); /* digits written before they are read, read before rewritten */
            } else if constexpr (int_pre<DT, N, PRE>()) {
                int_chunk_pre<DT>(cur, ob, h, 2 * tt + h, pre, colx, lane, acc);
            } else {
                float4 xc[N];
#pragma unroll
                for (int j = 0; j < N; j++)
                    xc[j] = xn[j];
                const int64_t chunk = 2 * tt + h; /* PRE: this chunk of the split */
                /* the next chunk: the second half of this tile, else the next tile's first */
                const int64_t e1 = h == 0 ? tt * kTile + 128 : ttn * kTile;
                if (!PRE && (h == 0 || it + 1 < total)) {
#pragma unroll
                    for (int j = 0; j < N; j++)
                        xn[j] = __ldg((const float4 *)((MOE ? (h == 0 ? xd : xt) : xs[j]) + e1) + lane);
                }

#ifdef VT_MMA_HARNESS
                if (!(flags & 2)) /* the harness's timing without the split */
#endif
                    if (!PRE)
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
                        /* PRE: column j (a missing one repeats the last) of the call's split */
                        const int jj = MO == kMoeChunks ? pick(colx, j) : j < n ? j : n - 1;
                        const uint2 *src = PRE ? pre.bs + (jj * pre.chunks + chunk) * 64 + (blk * 2 + (g & 1)) * 8
                                               : bs + ((j * 4 + blk) * 2 + (g & 1)) * 8;
                        if (sixteen_groups<DT>() && N > 1) {
                            /* q6_k's word order (block_regs): steps s, s + 1 take
                             * groups 2 (s % 4) + t % 2 and the next but one (N = 2),
                             * t and t + 4 (N >= 4) */
                            const int g0 = N == 2 ? 2 * (s & 3) + (t & 1) : t, g1 = N == 2 ? g0 + 2 : t + 4;
                            if (on) {
                                const uint2 v0 = PRE ? __ldg(src + g0) : src[g0], v1 = PRE ? __ldg(src + g1) : src[g1];
                                v = make_uint4(v0.x, v0.y, v1.x, v1.y);
                            }
                        } else if (on) {
                            v = PRE ? __ldg((const uint4 *)(const void *)(src + grp))
                                    : *(const uint4 *)(const void *)(src + grp);
                        }
                        bf[tau][s][0] = v.x, bf[tau][s][1] = v.y, bf[tau][s + 1][0] = v.z, bf[tau][s + 1][1] = v.w;
                    }
#pragma unroll
                for (int rt = 0; rt < 2; rt++) {
#ifdef VT_MMA_HARNESS
                    if (flags & 4) /* the harness's timing of the loads alone */
                        continue;
#endif
                    const uint8_t *ra = cur + (16 * rt + g) * TB, *rb = ra + 8 * TB;
#pragma unroll
                    for (int v = 0; v < BV; v++) {
                        const int blk = N == 1 ? t : N == 2 ? 2 * v + (t >> 1) : v;
                        const int u0 = N == 1 ? 0 : N == 2 ? 2 * (t & 1) : t;
                        constexpr bool TAB = scale_table<DT, N, PRE>(); /* the scales from the tile's table */
                        uint32_t aa[2 * U][2], ab[2 * U][2];
                        float da, db, ma, mb;
                        block_regs<DT, U, !TAB>(ra, ob, h, blk, u0, aa, da, ma);
                        block_regs<DT, U, !TAB>(rb, ob, h, blk, u0, ab, db, mb);
                        float na[2] = {0.0f, 0.0f}, nb[2] = {0.0f, 0.0f}; /* q2_k's mins */
                        if constexpr (TAB) {
                            const int e = (4 * h + blk) * kWarpRows + 16 * rt + g; /* rows g, g + 8 of the half */
                            const ScaleEntry<DT> *tab = (const ScaleEntry<DT> *)(const void *)(mine + WS::ring);
                            const ScaleEntry<DT> sa = tab[e], sb = tab[e + 8];
                            da = sa.x, ma = sa.y, db = sb.x, mb = sb.y;
                            if constexpr (group_mins<DT>())
                                na[0] = sa.z, na[1] = sa.w, nb[0] = sb.z, nb[1] = sb.w;
                        } else if (group_mins<DT>()) {
                            q2k_mins(ra, ob, h, blk, na);
                            q2k_mins(rb, ob, h, blk, nb);
                        }
#pragma unroll
                        for (int tau = 0; tau < T; tau++) {
                            float c0[4] = {0.0f, 0.0f, 0.0f, 0.0f}, c1[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
                            for (int i = 0; i < 2 * U; i++) {
                                const int s = v * 2 * U + i;
                                const uint32_t af[4] = {aa[i][0], ab[i][0], aa[i][1], ab[i][1]};
                                /* two chains; q6_k: one per 16-element scale group */
                                const bool second = sixteen_groups<DT>() ? i >= U : (i & 1) != 0;
                                mma16816<DT != VT_BF16>(second ? c1 : c0, af, bf[tau][s][0], bf[tau][s][1]);
                            }
                            const int j = N == 1 ? 0 : N == 2 ? (t & 1) : 4 * tau + t;
                            const int jj = MO == kMoeChunks ? pick(colx, j) : j < n ? j : n - 1;
                            const int64_t pi = (jj * pre.chunks + chunk) * 4 + blk; /* PRE: in the split */
                            const float p = PRE ? __ldg(pre.pw + pi) : pw[j * 4 + blk];
                            if (sixteen_groups<DT>()) { /* c0: scale da (db), c1: ma (mb) */
                                const float a0 = (c0[0] + c0[1]) * p, a1 = (c1[0] + c1[1]) * p;
                                const float b0 = (c0[2] + c0[3]) * p, b1 = (c1[2] + c1[3]) * p;
                                acc[rt][0][tau] = fmaf(ma, a1, fmaf(da, a0, acc[rt][0][tau]));
                                acc[rt][1][tau] = fmaf(mb, b1, fmaf(db, b0, acc[rt][1][tau]));
                                if (group_mins<DT>()) { /* less the mins times the groups' sums of x */
                                    const float x0 = PRE ? __ldg(pre.xs + 2 * pi) : xsum[(j * 4 + blk) * 2];
                                    const float x1 = PRE ? __ldg(pre.xs + 2 * pi + 1) : xsum[(j * 4 + blk) * 2 + 1];
                                    acc[rt][0][tau] -= fmaf(na[0], x0, na[1] * x1);
                                    acc[rt][1][tau] -= fmaf(nb[0], x0, nb[1] * x1);
                                }
                                continue;
                            }
                            const float xsb = !has_min<DT>() ? 0.0f : PRE ? __ldg(pre.xs + pi) : xsum[j * 4 + blk];
                            float ya = (c0[0] + c1[0]) + (c0[1] + c1[1]), yb = (c0[2] + c1[2]) + (c0[3] + c1[3]);
                            ya *= p, yb *= p;
                            if (has_min<DT>()) {
                                ya = fmaf(ma, -xsb, da * ya);
                                yb = fmaf(mb, -xsb, db * yb);
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
        }
        __syncwarp(); /* every lane done with cur before it is refilled */
        if (++cj != cnt)
            continue;
        cj = 0;

        /* the warp's last tile of this group: the lanes' sums over the
         * blocks of a chunk (N = 1: lanes t; N = 2: lanes t, t ^ 2) into
         * the group's buffer of part, then the warps in order */
        int64_t r0;
        int rows_here;
        const uint8_t *src;
        const float *xg;
        group_at(du, r0, rows_here, src, xg);
        /* y of the group's first row, column 0 (MOE: slot du / gpm's rows;
         * kMoeChunks: each pair's rows, cpair) */
        float *yg = y + (MOE ? du / gpm * m : 0) + r0;
        float *pb = part + part_floats<N>((int)(gi & 1) * nw);
#pragma unroll
        for (int rt = 0; rt < 2; rt++)
#pragma unroll
            for (int hh = 0; hh < 2; hh++)
#pragma unroll
                for (int tau = 0; tau < T; tau++) {
                    float v = acc[rt][hh][tau];
                    acc[rt][hh][tau] = 0.0f;
                    if (N == 1)
                        v += __shfl_xor_sync(kFull, v, 1);
                    if (N <= 2)
                        v += __shfl_xor_sync(kFull, v, 2);
                    const int r = 16 * rt + 8 * hh + g;
                    const int j = N == 1 ? 0 : N == 2 ? (t & 1) : 4 * tau + t;
                    const bool writer = N == 1 ? t == 0 : N == 2 ? t < 2 : true;
                    if (writer)
                        pb[(wv * kWarpRows + r) * N + j] = v;
                }
        /* one barrier per group: the next group writes the other buffer,
         * and the one after this one only past the next barrier */
        __syncthreads();
        for (int i = (int)threadIdx.x; i < kWarpRows * N; i += (int)blockDim.x) {
            const int r = i / N, j = i % N;
            float s = 0.0f;
            for (int w2 = 0; w2 < nw; w2++)
                s += pb[(w2 * kWarpRows + r) * N + j];
            if constexpr (MO == kMoeChunks) {
                const int p = pick(cpair, j);
                if (r < rows_here && p >= 0)
                    y[(int64_t)p * m + r0 + r] = s;
            } else if (r < rows_here && j < n) {
                yg[(int64_t)j * m + r] = s;
            }
        }
        gi++, du += gridDim.x;
        chunk_cols(du);
        if constexpr (MOE) { /* the group after the next one's x */
            xd = xa;
            group_at(du + gridDim.x, r0, rows_here, src, xa);
        }
    }
    if constexpr (!bulk_copies<DT>())
        asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}

// Shared memory a block of nw warps needs (PRE: x split by the call; f16
// and bf16 then have no split area per warp: at n = 8, 6 warps where 5 fit
// with it, 47.6 us against 52.8 on the H200).
template <uint32_t DT, int N, int S, bool PRE> constexpr size_t block_smem(int nw)
{
    return (size_t)nw * WarpSmem<DT, N, S, PRE>::bytes + (size_t)part_floats<N>(2 * nw) * sizeof(float) +
           (size_t)nw * S * sizeof(uint64_t);
}

#ifdef VT_MMA_HARNESS
int vt_mma_nw_override; /* the standalone harness's warp count, when set */
int vt_mma_flags = 1;   /* the harness's choice (mma_kernel's flags) */
int vt_mma_ring;        /* the harness's ring depth (3, 4), when set */
int vt_mma_grid;        /* the harness's most blocks, when set */
int vt_mma_old_grid;    /* the harness's A/B: round 5's warps and grid (no balance, no one-group rule) */
#else
constexpr int vt_mma_flags = 1; /* warps take the tiles of k in turn */
#endif

// The blocks of kernel with nw warps and `bytes` of shared memory that
// are resident at once on device dev (all its SMs), 0 when
// unknown; asked of the runtime once per device and warp count (a kernel
// is launched with one `bytes` per warp count).
template <uint32_t DT, int N, int S, bool PRE, int MO> int64_t resident_blocks(int dev, int nw, size_t bytes)
{
    static std::atomic<int64_t> cached[64][17]; /* per instantiation */
    if (dev < 0 || dev >= 64 || nw < 1 || nw > 16)
        return 0;
    return vt_rocm_memo(cached[dev][nw], [=] {
        int sms = 0, per = 0;
        if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, mma_kernel<DT, N, PRE, S, MO>, 32 * nw, bytes) !=
                cudaSuccess)
            return (int64_t)0; /* unknown: asked again next time */
        return (int64_t)sms * per;
    });
}

// mma_kernel's shared memory opt-in raised to all that device dev (0..63)
// allows, once per device (its shared memory is all dynamic, so the
// device's limit is its own). Before it the runtime counts no resident block
// that needs more than 48 KB (cudaOccupancyMaxActiveBlocksPerMultiprocessor
// checks the kernel's opt-in), so mma_plan asks it first: its 16-warp rule
// was asked of an opt-in still at 48 KB, or at a smaller plan's bytes, and
// never fired in a process that had not run a larger plan before.
template <uint32_t DT, int N, bool PRE, int S, int MO> hipError_t opt_in(int dev)
{
    const size_t optin = smem_optin(dev);
    return optin > 48 * 1024 ? vt_mma::smem_opt_in<mma_kernel<DT, N, PRE, S, MO>>(dev, optin) : hipSuccess;
}

// Whether mma_kernel with N columns, a ring of S tiles and the split area
// (PRE) or not runs for k on device dev: k holds a tile and one warp's
// shared memory fits the opt-in. launch_mma's refusal, asked first also by
// the launchers that queue a kernel before it (mma_moe_chunks).
template <uint32_t DT, int N, int S, bool PRE> bool mma_fits(int dev, int64_t k)
{
    return k / kTile >= 1 && block_smem<DT, N, S, PRE>(1) <= smem_optin(dev);
}

// How mma_kernel runs for a call: warps per block, blocks, shared memory
// bytes, whether it is the PRE kernel, and the most tiles one warp
// streams (0 in nw: the device cannot run it).
struct MmaPlan {
    int nw;
    int64_t grid;
    size_t bytes;
    bool use_pre;
    int64_t warp_tiles;
};

// The plan of mma_kernel for n <= N columns with a ring of S tiles on
// device dev (0..63, the current one); its shared memory opt-in raised to
// the device's (opt_in). MO kMoeOne: the TK slots of mo, one column;
// kMoeChunks: at most TK chunks of mo's table, the grid sized for TK.
template <uint32_t DT, int N, int S, int MO>
hipError_t mma_plan(int64_t m, int64_t k, const Pre &pre, const Moe &mo, int dev, MmaPlan &pl)
{
    /* the split of the call (N > 1) or the kernel's own (N = 1); the
     * "plain" kernel of kMoeChunks is its PRE one (it has no other) */
    constexpr bool P = N > 1, P0 = MO == kMoeChunks;
    const bool use_pre = P && pre.bs != nullptr;
    const size_t optin = smem_optin(dev);
    const int64_t tiles = k / kTile;
    pl = MmaPlan{0, 0, 0, use_pre, 0};
    hipError_t e = opt_in<DT, N, P0, S, MO>(dev);
    if (e == hipSuccess && P)
        e = opt_in<DT, N, P, S, MO>(dev);
    if (e != hipSuccess)
        return e;
    /* 14 warps (fewer where the launch bounds say so), then as few as
     * give the same longest share: measured on the H200 against 16 and 12 */
    int nw = launch_warps<DT, N>() < 14 ? launch_warps<DT, N>() : 14;
    const int64_t groups = (m + kWarpRows - 1) / kWarpRows * (MO != kMatMul ? mo.TK : 1);
    /* a block that gets one group of rows at most (m = 4096: 128 groups on
     * 132 SMs) has nothing to stream behind its first tiles: up to 16
     * warps of one tile each put all its copies in flight at once (the
     * H200, q4_0 at m = 4096, k = 4096: 9.95 us against 10.5 with 8 warps
     * of 2; the plugin on the H100 once opt_in let the rule fire, graph
     * us, plugin-ab: q4_0 6.36 -> 6.11, at m = 1024 5.18 -> 4.73, q4_k
     * 6.74 -> 6.68, iq4_nl 7.36 -> 7.46; BENCHMARKS.md round 28), for
     * the formats that take it (one_group_warps) */
    bool one_group = false;
    static_assert(N != 1 || !one_group_warps<DT>() || launch_warps<DT, 1>() >= 16,
                  "the 16-warp rule launches 16 warps: the launch bounds must allow them");
    /* the shared memory of the kernel that runs */
    auto smem_for = [&](int w) { return use_pre ? block_smem<DT, N, S, P>(w) : block_smem<DT, N, S, P0>(w); };
    if (N == 1 && one_group_warps<DT>() && tiles >= 16 && smem_for(16) <= optin) {
        const int64_t r16 = resident_blocks<DT, N, S, P0, MO>(dev, 16, smem_for(16));
        one_group = r16 > 0 && groups <= r16;
    }
#ifdef VT_MMA_HARNESS
    if (vt_mma_old_grid)
        one_group = false;
#endif
    if (one_group)
        nw = 16;
#ifdef VT_MMA_HARNESS
    if (vt_mma_nw_override)
        nw = vt_mma_nw_override;
#endif
    if (!(use_pre ? mma_fits<DT, N, S, P>(dev, k) : mma_fits<DT, N, S, P0>(dev, k)))
        return hipSuccess;
    while (nw > 1 && smem_for(nw) > optin)
        nw--;
    /* as few warps as give the same longest share: every warp gets the
     * same number of tiles or one less (56 tiles: 14 warps of 4), and at
     * least one */
    int64_t per = (tiles + nw - 1) / nw;
    nw = (int)((tiles + per - 1) / per);
    if (nw < 1)
        return hipSuccess;
    /* MoeExpertMatMul's one-token slots, for the formats that take it
     * (moe_half_warps, with its figures): where every warp would take one
     * tile, half the warps take two each (both in the ring at once) when a
     * block for every group still fits in one wave. At t = 4 the groups do
     * not fit and half the warps were slower (17.69 -> 18.30 us), which the
     * fit test leaves out */
    if (MO == kMoeOne && moe_half_warps<DT>() && per == 1 && tiles >= 3) {
        const int half = (int)((tiles + 1) / 2);
        if (groups <= resident_blocks<DT, N, S, P0, MO>(dev, half, smem_for(half)))
            nw = half, per = 2;
    }
    const size_t bytes = smem_for(nw);
    /* persistent blocks: as many groups of 32 rows as there are, at most
     * as many blocks as are resident at once; then as few blocks as give
     * the same most groups per block, so that every block streams to the
     * end (896 groups on 264 resident: 224 blocks of 4, not 104 of 4 and
     * 160 of 3 with a last round at 104 blocks) */
    int64_t grid =
        use_pre ? resident_blocks<DT, N, S, P, MO>(dev, nw, bytes) : resident_blocks<DT, N, S, P0, MO>(dev, nw, bytes);
#ifdef VT_MMA_HARNESS
    if (vt_mma_grid > 0 && vt_mma_grid < grid)
        grid = vt_mma_grid;
#endif
    if (grid < 1 || grid > groups)
        grid = groups;
    bool balance = true;
#ifdef VT_MMA_HARNESS
    balance = !vt_mma_old_grid;
#endif
    if (balance) {
        const int64_t most = (groups + grid - 1) / grid;
        grid = (groups + most - 1) / most;
    }
    pl = MmaPlan{nw, grid, bytes, use_pre, per * ((groups + grid - 1) / grid)};
    return hipSuccess;
}

// Queue mma_kernel by its plan (mma_plan); *taken = 0 when the device
// cannot run it.
template <uint32_t DT, int N, int S, int MO = kMatMul>
hipError_t launch_planned(const float *x, const uint8_t *w, int64_t row_bytes, float *y, int n, int64_t m, int64_t k,
                          const Pre &pre, const Moe &mo, const MmaPlan &pl, hipStream_t stream, int *taken)
{
    constexpr bool P = N > 1, P0 = MO == kMoeChunks;
    if (pl.nw < 1) {
        *taken = 0;
        return hipSuccess;
    }
    auto plain = mma_kernel<DT, N, P0, S, MO>;
    auto split = mma_kernel<DT, N, P, S, MO>;
    VT_LAUNCH_CHAINED(pl.use_pre ? split : plain, dim3((unsigned)pl.grid), dim3(32 * pl.nw), pl.bytes, stream, x, w,
                      row_bytes, y, n, m, k, vt_mma_flags, pre, mo);
    *taken = 1;
    return cudaGetLastError();
}

// Queue mma_kernel for n <= N columns with a ring of S tiles on device dev
// (mma_plan's terms); *taken = 0 when the device cannot.
template <uint32_t DT, int N, int S, int MO = kMatMul>
hipError_t launch_mma(const float *x, const uint8_t *w, int64_t row_bytes, float *y, int n, int64_t m, int64_t k,
                      const Pre &pre, const Moe &mo, int dev, hipStream_t stream, int *taken)
{
    MmaPlan pl;
    const hipError_t e = mma_plan<DT, N, S, MO>(m, k, pre, mo, dev, pl);
    if (e != hipSuccess)
        return e;
    return launch_planned<DT, N, S, MO>(x, w, row_bytes, y, n, m, k, pre, mo, pl, stream, taken);
}

// launch_mma with the plugin's ring depth (the harness: its choice). On
// the call's split (N > 1), where a ring of kRingEarly tiles holds every
// tile a warp streams, that ring: all of them are then staged before the
// kernel's wait, while the split runs (mma_kernel's early tiles).
template <uint32_t DT, int N>
hipError_t launch_ring(const float *x, const uint8_t *w, int64_t row_bytes, float *y, int n, int64_t m, int64_t k,
                       const Pre &pre, int dev, hipStream_t stream, int *taken)
{
#ifdef VT_MMA_HARNESS
    if (vt_mma_ring == 3)
        return launch_mma<DT, N, 3>(x, w, row_bytes, y, n, m, k, pre, Moe{}, dev, stream, taken);
    if (vt_mma_ring == 4)
        return launch_mma<DT, N, 4>(x, w, row_bytes, y, n, m, k, pre, Moe{}, dev, stream, taken);
#endif
    if constexpr (N > 1) {
        if (pre.bs != nullptr) {
            MmaPlan pl;
            const hipError_t e = mma_plan<DT, N, kRingEarly, kMatMul>(m, k, pre, Moe{}, dev, pl);
            if (e != hipSuccess)
                return e;
            if (pl.nw > 0 && pl.warp_tiles <= kRingEarly - 1)
                return launch_planned<DT, N, kRingEarly>(x, w, row_bytes, y, n, m, k, pre, Moe{}, pl, stream, taken);
        }
    }
    return launch_mma<DT, N, kRing>(x, w, row_bytes, y, n, m, k, pre, Moe{}, dev, stream, taken);
}

// MatMul of DT over n columns, 8 at a time.
// With scratch (n > 1; mma_scratch_bytes, 16-byte aligned) x is split once
// for all columns first.
template <uint32_t DT>
hipError_t mma_cols(const float *x, const uint8_t *w, int64_t row_bytes, float *y, int64_t n, int64_t m, int64_t k,
                    void *scratch, hipStream_t stream, int *taken)
{
    /* the device, asked once per call: the launches' caches are per device;
     * rows of at least one staged tile (tile_window) */
    int dev = 0;
    if (row_bytes < tile_row_bytes<DT>() || cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64) {
        *taken = 0;
        return hipSuccess;
    }
    Pre all = {nullptr, nullptr, nullptr, k / 128, nullptr};
    if (scratch != nullptr && n > 1 && smem_optin(dev) > 0) {
        all = pre_in<DT>(scratch, n, k);
        /* the columns of a last launch of two (int_pre) as digits */
        const int64_t digits = n % 8 == 2 ? n - 2 : n, warps = n * all.chunks;
        VT_LAUNCH_CHAINED(split_kernel<DT>, dim3((unsigned)((warps + 7) / 8)), dim3(256), 0, stream, x, k, n, digits,
                          all);
        const hipError_t e = cudaGetLastError();
        if (e != hipSuccess)
            return e;
    }
    for (int64_t j0 = 0; j0 < n; j0 += 8) {
        const int nc = (int)(n - j0 < 8 ? n - j0 : 8);
        const float *xj = x + j0 * k;
        float *yj = y + j0 * m;
        Pre pre = all;
        if (all.bs != nullptr) {
            pre.bs += j0 * all.chunks * 64, pre.pw += j0 * all.chunks * 4,
                pre.xs += j0 * all.chunks * 4 * xs_per_block(DT);
            if (all.ci != nullptr)
                pre.ci += j0 * all.chunks * 16;
        }
        hipError_t e;
        if (nc == 1)
            e = launch_ring<DT, 1>(xj, w, row_bytes, yj, nc, m, k, pre, dev, stream, taken);
        else if (nc == 2)
            e = launch_ring<DT, 2>(xj, w, row_bytes, yj, nc, m, k, pre, dev, stream, taken);
        else if (nc <= 4)
            e = launch_ring<DT, 4>(xj, w, row_bytes, yj, nc, m, k, pre, dev, stream, taken);
        else
            e = launch_ring<DT, 8>(xj, w, row_bytes, yj, nc, m, k, pre, dev, stream, taken);
        if (e != hipSuccess || !*taken)
            return e; /* a refusal can only come with the first launch (the same shape each time) */
    }
    return hipSuccess;
}

// MoeExpertMatMul of DT at one token (mo's TK slots) on the kernel's MOE
// form; *taken = 0 when the device or the rows do not fit.
template <uint32_t DT>
hipError_t mma_moe_one(const float *x, const uint8_t *w, int64_t row_bytes, float *y, int64_t m, int64_t k,
                       const Moe &mo, hipStream_t stream, int *taken)
{
    int dev = 0;
    if (row_bytes < tile_row_bytes<DT>() || cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64) {
        *taken = 0;
        return hipSuccess;
    }
    const Pre none = {nullptr, nullptr, nullptr, k / 128, nullptr};
    return launch_mma<DT, 1, kRing, kMoeOne>(x, w, row_bytes, y, 1, m, k, none, mo, dev, stream, taken);
}

// Scratch of mma_moe_chunks: the split of the x columns (T, or T K with x
// per slot), then the grouping table.
inline int64_t moe_chunks_bytes(uint32_t dt, int64_t T, int64_t K, int64_t k, int x_per_slot)
{
    return pre_bytes(dt, x_per_slot ? T * K : T, k) + chunk_tab_ints(T * K) * 4;
}

// MoeExpertMatMul of DT at T >= 2 tokens (mo: the ids, unchecked) on the
// kernel's kMoeChunks form, after moe_prep_kernel (the check, the grouping
// and the split, into scratch of moe_chunks_bytes); *taken = 0 (nothing
// queued) when the device or the rows do not fit.
template <uint32_t DT>
hipError_t mma_moe_chunks(const float *x, const uint8_t *w, int64_t row_bytes, float *y, int64_t T, int64_t m,
                          int64_t k, Moe mo, void *scratch, hipStream_t stream, int *taken)
{
    int dev = 0;
    *taken = 0;
    /* launch_mma's refusal, before the first kernel is queued */
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64 || !mma_fits<DT, kChunkPairs, kRing, true>(dev, k))
        return hipSuccess;
    const int64_t cols = mo.x_per_slot ? T * mo.K : T;
    const Pre pre = pre_in<DT>(scratch, cols, k);
    int32_t *tab = (int32_t *)(void *)((uint8_t *)scratch + pre_bytes(DT, cols, k));
    mo.tab = tab;
    const int64_t warps = cols * pre.chunks;
    VT_LAUNCH_CHAINED(moe_prep_kernel<DT>, dim3((unsigned)((warps + 7) / 8 + 1)), dim3(kPrepThreads), 0, stream, x, k,
                      cols, pre, mo.ids, mo.TK, mo.E, mo.err, mo.op, tab);
    const hipError_t e = cudaGetLastError();
    if (e != hipSuccess)
        return e;
    return launch_mma<DT, kChunkPairs, kRing, kMoeChunks>(x, w, row_bytes, y, kChunkPairs, m, k, pre, mo, dev, stream,
                                                          taken);
}

} // namespace

// MoeExpertMatMul of TK slots, K a token (0: one token, whose x row every
// slot reads, with no division in the kernel), on matrix instructions, the
// ids checked in the kernel (W [E, m, k] of dt; x [TK / K, k], or [TK / K,
// K, k] with x_per_slot; y [TK / K, K, m]): each slot reads its expert's rows
// for its own token, so an expert two tokens chose is asked for twice, the
// second time from L2 (ncu on the H100, E = 128, 8 used, m = 768, k = 2048,
// q4_0 at four tokens: 25.74 MB read from DRAM, as by the chunked kernel,
// which reads each expert once); *taken = 0 and nothing queued unless dt,
// the shapes, the alignments and the device fit. q6_k stays on the slot
// kernels: measured on the H200 (E=128, 8 used, m=768, k=2048) they take
// 11.6 us against 12.7 here.
hipError_t run_mma_moe_one(uint32_t dt, const float *x, int x_per_slot, const uint8_t *w, int64_t row_bytes,
                           const int32_t *ids, int64_t TK, int64_t K, int64_t E, vt_rocm_err *err, uint32_t op,
                           float *y, int64_t m, int64_t k, hipStream_t stream, int *taken)
{
    *taken = 0;
    if (TK <= 0 || TK > 65535 || K < 0 || (K > 0 && TK % K != 0) || E <= 0 || m <= 0 || k <= 0 || k % kTile != 0 ||
        (uintptr_t)w % 16 != 0 || (uintptr_t)x % 16 != 0 || row_bytes % 16 != 0 || m * TK > ((int64_t)1 << 40))
        return hipSuccess;
    const Moe mo = {ids, err, op, (int)TK, x_per_slot, E, nullptr, (int)K};
    switch (dt) {
#define VT_MMA_CASE(id)                                                                                                \
    case id: return mma_moe_one<id>(x, w, row_bytes, y, m, k, mo, stream, taken);
        VT_MMA_CASE(VT_Q4_0)
        VT_MMA_CASE(VT_Q4_1)
        VT_MMA_CASE(VT_Q5_0)
        VT_MMA_CASE(VT_Q5_1)
        VT_MMA_CASE(VT_Q8_0)
        VT_MMA_CASE(VT_Q2_K)
        VT_MMA_CASE(VT_Q3_K)
        VT_MMA_CASE(VT_Q4_K)
        VT_MMA_CASE(VT_Q5_K)
        VT_MMA_CASE(VT_IQ4_NL)
        VT_MMA_CASE(VT_IQ4_XS)
        VT_MMA_CASE(VT_MXFP4)
#undef VT_MMA_CASE
    }
    return hipSuccess;
}

// MoeExpertMatMul of 2 <= T tokens of K slots on matrix instructions, the
// ids checked in the first kernel (W [E, m, k] of dt, x [T, k] or [T, K, k]
// with x_per_slot, y [T, K, m]; scratch of mma_moe_scratch_bytes, 16-byte
// aligned): *taken = 0 and nothing queued unless dt, the shapes, the
// alignments and the device fit.
hipError_t run_mma_moe_chunks(uint32_t dt, const float *x, int x_per_slot, const uint8_t *w, int64_t row_bytes,
                              const int32_t *ids, int64_t T, int64_t K, int64_t E, vt_rocm_err *err, uint32_t op,
                              float *y, int64_t m, int64_t k, void *scratch, hipStream_t stream, int *taken)
{
    *taken = 0;
    if (mma_moe_scratch_bytes(dt, T, K, k, x_per_slot) == 0 || E <= 0 || E > kMoeMaxExperts || m <= 0 ||
        (uintptr_t)w % 16 != 0 || (uintptr_t)x % 16 != 0 || (uintptr_t)scratch % 16 != 0 || row_bytes % 16 != 0 ||
        m * T * K > ((int64_t)1 << 40))
        return hipSuccess;
    const Moe mo = {ids, err, op, (int)(T * K), x_per_slot, E, nullptr, (int)K};
    switch (dt) {
#define VT_MMA_CASE(id)                                                                                                \
    case id: return mma_moe_chunks<id>(x, w, row_bytes, y, T, m, k, mo, scratch, stream, taken);
        VT_MMA_CASE(VT_F16)
        VT_MMA_CASE(VT_Q4_0)
        VT_MMA_CASE(VT_Q4_1)
        VT_MMA_CASE(VT_Q5_0)
        VT_MMA_CASE(VT_Q5_1)
        VT_MMA_CASE(VT_Q8_0)
        VT_MMA_CASE(VT_Q2_K)
        VT_MMA_CASE(VT_Q3_K)
        VT_MMA_CASE(VT_Q4_K)
        VT_MMA_CASE(VT_Q5_K)
        VT_MMA_CASE(VT_Q6_K)
        VT_MMA_CASE(VT_IQ4_NL)
        VT_MMA_CASE(VT_IQ4_XS)
        VT_MMA_CASE(VT_BF16)
        VT_MMA_CASE(VT_MXFP4)
#undef VT_MMA_CASE
    }
    return hipSuccess;
}

// Scratch bytes of run_mma_moe_chunks (0: it does not take dt, T, K or k).
int64_t mma_moe_scratch_bytes(uint32_t dt, int64_t T, int64_t K, int64_t k, int x_per_slot)
{
    if (!mma_format(dt) || T < 2 || K < 1 || T * K > kMoeMaxPairs || k <= 0 || k % kTile != 0)
        return 0;
    return moe_chunks_bytes(dt, T, K, k, x_per_slot);
}

// The MatMul a (ids == NULL) on matrix instructions when dt, the shapes and
// the device allow (*taken = 1), else *taken = 0 and nothing is queued;
// with scratch (mma_scratch_bytes) x is split once for all columns.
hipError_t run_mma_scratch(uint32_t dt, const Args &a, void *scratch, int *taken)
{
    *taken = 0;
    if (a.ids != nullptr || a.T <= 0 || !mma_takes(dt, a.T) || a.m <= 0 || a.k <= 0 || a.k % kTile != 0 ||
        (uintptr_t)a.w % 16 != 0 || (uintptr_t)a.x % 16 != 0 || a.row_bytes % 16 != 0)
        return hipSuccess;
    switch (dt) {
#define VT_MMA_CASE(id)                                                                                                \
    case id: return mma_cols<id>(a.x, a.w, a.row_bytes, a.y, a.T, a.m, a.k, scratch, a.stream, taken);
        VT_MMA_CASE(VT_F16)
        VT_MMA_CASE(VT_Q4_0)
        VT_MMA_CASE(VT_Q4_1)
        VT_MMA_CASE(VT_Q5_0)
        VT_MMA_CASE(VT_Q5_1)
        VT_MMA_CASE(VT_Q8_0)
        VT_MMA_CASE(VT_Q2_K)
        VT_MMA_CASE(VT_Q3_K)
        VT_MMA_CASE(VT_Q4_K)
        VT_MMA_CASE(VT_Q5_K)
        VT_MMA_CASE(VT_Q6_K)
        VT_MMA_CASE(VT_IQ4_NL)
        VT_MMA_CASE(VT_IQ4_XS)
        VT_MMA_CASE(VT_BF16)
        VT_MMA_CASE(VT_MXFP4)
#undef VT_MMA_CASE
    }
    return hipSuccess;
}

// The same without scratch: each kernel splits its own x.
hipError_t run_mma(uint32_t dt, const Args &a, int *taken)
{
    return run_mma_scratch(dt, a, nullptr, taken);
}

// Scratch bytes run_mma_scratch uses for n columns (0: it splits in the
// kernels: n = 1, or a dtype or k it does not take).
int64_t mma_scratch_bytes(uint32_t dt, int64_t n, int64_t k)
{
    return mma_takes(dt, n) && n > 1 && k > 0 && k % kTile == 0 ? pre_bytes(dt, n, k) : 0;
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

// The same with scratch: none on this target (*taken = 0).
hipError_t run_mma_scratch(uint32_t dt, const Args &a, void *scratch, int *taken)
{
    (void)scratch;
    return run_mma(dt, a, taken);
}

// No scratch on this target.
int64_t mma_scratch_bytes(uint32_t dt, int64_t n, int64_t k)
{
    (void)dt, (void)n, (void)k;
    return 0;
}

// MoeExpertMatMul of several tokens on matrix instructions: none on this
// target (*taken = 0).
hipError_t run_mma_moe_chunks(uint32_t dt, const float *x, int x_per_slot, const uint8_t *w, int64_t row_bytes,
                              const int32_t *ids, int64_t T, int64_t K, int64_t E, vt_rocm_err *err, uint32_t op,
                              float *y, int64_t m, int64_t k, void *scratch, hipStream_t stream, int *taken)
{
    (void)dt, (void)x, (void)x_per_slot, (void)w, (void)row_bytes, (void)ids, (void)T, (void)K, (void)E, (void)err;
    (void)op, (void)y, (void)m, (void)k, (void)scratch, (void)stream;
    *taken = 0;
    return hipSuccess;
}

// No scratch on this target.
int64_t mma_moe_scratch_bytes(uint32_t dt, int64_t T, int64_t K, int64_t k, int x_per_slot)
{
    (void)dt, (void)T, (void)K, (void)k, (void)x_per_slot;
    return 0;
}

// MoeExpertMatMul on matrix instructions: none on this target (*taken = 0).
hipError_t run_mma_moe_one(uint32_t dt, const float *x, int x_per_slot, const uint8_t *w, int64_t row_bytes,
                           const int32_t *ids, int64_t TK, int64_t K, int64_t E, vt_rocm_err *err, uint32_t op,
                           float *y, int64_t m, int64_t k, hipStream_t stream, int *taken)
{
    (void)dt, (void)x, (void)x_per_slot, (void)w, (void)row_bytes, (void)ids, (void)TK, (void)K, (void)E, (void)err;
    (void)op, (void)y, (void)m, (void)k, (void)stream;
    *taken = 0;
    return hipSuccess;
}

} // namespace vt_mmv

#endif

// Scratch bytes of vt_rocm_launch_mmv_pre (0: it would not use any; the
// caller then launches vt_rocm_launch_matmul_q's kernels directly).
extern "C" uint64_t vt_rocm_mmv_pre_scratch_bytes(uint32_t w_dtype, int64_t n, int64_t m, int64_t k)
{
    return m > 0 ? (uint64_t)vt_mmv::mma_scratch_bytes(w_dtype, n, k) : 0;
}

// The decode MatMul on matrix instructions with x split once into scratch
// (vt_rocm_mmv_pre_scratch_bytes, 16-byte aligned); *taken = 0 when the
// dtype, shapes, alignments or device do not fit (nothing queued but
// possibly the split).
extern "C" hipError_t vt_rocm_launch_mmv_pre(const float *x, const void *w, uint32_t w_dtype, float *y, int64_t n,
                                             int64_t m, int64_t k, void *scratch, hipStream_t stream, int *taken)
{
    *taken = 0;
    const int be = vt_mmv::blk_elems(w_dtype), bb = vt_mmv::blk_bytes(w_dtype);
    if (n <= 0 || m <= 0 || k <= 0 || bb == 0 || k % be != 0 || (uintptr_t)scratch % 16 != 0)
        return hipSuccess;
    const vt_mmv::Args a = {x, 0, (const uint8_t *)w, k / be * bb, nullptr, y, n, 1, m, k, stream};
    return vt_mmv::run_mma_scratch(w_dtype, a, scratch, taken);
}

// Scratch bytes of vt_rocm_launch_moe_chunks_checked for T tokens of K
// slots (0: it does not take the weight type or shape).
extern "C" uint64_t vt_rocm_moe_chunks_scratch_bytes(uint32_t w_dtype, int64_t T, int64_t K, int64_t k, int x_per_slot)
{
    return (uint64_t)vt_mmv::mma_moe_scratch_bytes(w_dtype, T, K, k, x_per_slot);
}

// MoeExpertMatMul at 2 or more tokens on matrix instructions with the
// check of the ids folded into its first kernel (vt_mmv::run_mma_moe_chunks):
// *taken = 0 (nothing queued) when the weight type, shapes, alignments or
// device do not fit.
extern "C" hipError_t vt_rocm_launch_moe_chunks_checked(vt_rocm_err *err, uint32_t op, const float *x, int x_per_slot,
                                                        const void *w, uint32_t w_dtype, const int32_t *ids, int64_t E,
                                                        float *y, int64_t T, int64_t K, int64_t m, int64_t k,
                                                        void *scratch, hipStream_t stream, int *taken)
{
    *taken = 0;
    const int be = vt_mmv::blk_elems(w_dtype), bb = vt_mmv::blk_bytes(w_dtype);
    if (bb == 0 || k <= 0 || k % be != 0)
        return hipSuccess;
    return vt_mmv::run_mma_moe_chunks(w_dtype, x, x_per_slot, (const uint8_t *)w, k / be * bb, ids, T, K, E, err, op, y,
                                      m, k, scratch, stream, taken);
}
