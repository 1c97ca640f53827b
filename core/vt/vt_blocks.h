/* vt_blocks.h - the GGUF block formats of SPEC 7 ("q"), once: each
 * format's geometry, byte layout, group form and per-element decoder.
 * Compiled as C (the core, the cpu backend, tools) and as device code
 * (HIP, CUDA: every function is VT_HOST_DEVICE), so every backend decodes
 * a block with the same arithmetic and the same bits. The list of formats
 * is VT_Q_FORMATS (vt_op.h); a new format adds its row there and its
 * section here (see the README's contributor guide).
 *
 * LAYOUTS (little-endian, packed, f16 = IEEE half):
 *
 *   q4_0   18 B: d f16 @0, qs[16] @2                 x = d*(nib-8)
 *   q4_1   20 B: d @0, m @2, qs[16] @4               x = d*nib + m
 *   q5_0   22 B: d @0, qh[4] @2, qs[16] @6           x = d*((nib|hb<<4)-16)
 *   q5_1   24 B: d @0, m @2, qh[4] @4, qs[16] @8     x = d*(nib|hb<<4) + m
 *   q8_0   34 B: d @0, qs[32] i8 @2                  x = d*q
 *   q2_k   84 B: scales[16] @0, qs[64] @16, d @80, dmin @82
 *   q3_k  110 B: hmask[32] @0, qs[64] @32, scales[12] @96, d @108
 *   q4_k  144 B: d @0, dmin @2, scales[12] @4, qs[128] @16
 *   q5_k  176 B: d @0, dmin @2, scales[12] @4, qh[32] @16, qs[128] @48
 *   q6_k  210 B: ql[128] @0, qh[64] @128, scales[16] i8 @192, d @208
 *   iq4_nl 18 B: d @0, qs[16] @2                     x = d*kvalues_iq4nl[nib]
 *   iq4_xs 136 B: d @0, scales_h u16 @2, scales_l[4] @4, qs[128] @8
 *   mxfp4  17 B: e (E8M0) @0, qs[16] @1              x = 2^(e-128)*kvalues_mxfp4[nib]
 *
 * In the 32-element formats element j < 16 is the low nibble of qs[j] and
 * element j + 16 its high nibble. A 256-element super-block is read as
 * eight groups of 32; group g = j / 32, l = j % 32:
 *   Q2_K  the 2-bit field at shift 2*(g%4) of qs[32*(g/4) + l]; each 16
 *         elements take scales[j/16], a byte (min << 4) | scale: a =
 *         d*scale, m = -dmin*min.
 *   Q3_K  those 2 bits | bit g of hmask[l] << 2, minus 4; 16 signed 6-bit
 *         scales (minus 32) packed in 12 bytes (low nibbles of bytes 0..7
 *         are scales 0..7, their high nibbles scales 8..15, the top two
 *         bits of scale i in byte 8 + i%4 at shift 2*(i/4)); a =
 *         d*scale[j/16].
 *   Q4_K  nibble (g odd: high, even: low) of qs[32*(g/2) + l]; 6-bit scale
 *         and min of group g from the 12 scale bytes (vt_blk_k4_scale,
 *         vt_blk_k4_min): a = d*scale, m = -dmin*min.
 *   Q5_K  as Q4_K with bit g of qh[l] as the code's fifth bit.
 *   Q6_K  half h = g/4, quarter r = g%4: low four bits from ql[64h +
 *         32*(r%2) + l] (low nibble for r < 2, high for r >= 2), top two
 *         bits from qh[32h + l] at shift 2r, minus 32; a = d*scales[j/16]
 *         (int8).
 *   IQ4_XS  eight IQ4_NL-like groups sharing d; group g has the 6-bit
 *         scale ls = (nibble g%2 of scales_l[g/2]) | (bits 2g..2g+1 of
 *         scales_h) << 4, a = d*(ls-32), codes from qs[16g .. 16g+15].
 *   MXFP4  OCP microscaling FP4: x = 2^(e-127) * E2M1(nibble), computed as
 *         a = 2^(e-128) times kvalues_mxfp4 (the E2M1 values doubled).
 *
 * THE GROUP FORM. Every element j of a block has a small integer code c
 * (vt_blk_<f>_code) and a factor a (vt_blk_<f>_a, per run of 32/RUNS
 * elements) and is, by the format's KIND,
 *   VT_BLK_SCALE   x = a * c           (Q8_0, IQ4_NL, IQ4_XS, MXFP4)
 *   VT_BLK_OFFSET  x = a * (c - OFF)   (Q4_0 8, Q5_0 16, Q3_K 4, Q6_K 32)
 *   VT_BLK_MIN     x = a * c + m       (Q4_1, Q5_1, Q2_K, Q4_K, Q5_K)
 * with a = d or d*scale and m (vt_blk_<f>_m) = m or -dmin*min.
 *
 * Exactness: a*c and a*(c-o) are exact in f32 (a is an f16, a power of two
 * or an f16 times a scale of at most 7 significant bits, c-o at most 7:
 * 23 significant bits at most), so the decoded value is exactly ggml's, and
 * x = a*c + m rounds once, as ggml's d*q + m does (an fma rounds the same
 * way). Every decoder built on this header, scalar, SIMD or device,
 * produces those same f32 bits. */
#ifndef VT_BLOCKS_H
#define VT_BLOCKS_H

#include <stdint.h>
#include <string.h>

#include <vt/vt_dtype.h>
#include <vt/vt_op.h>

#ifdef __cplusplus
#define VT_BLK_CONSTEXPR constexpr
extern "C" {
#else
#define VT_BLK_CONSTEXPR
#endif

/* How a format's values follow from its codes (the group form). */
#define VT_BLK_SCALE  0 /* x = a*c */
#define VT_BLK_OFFSET 1 /* x = a*(c - OFF) */
#define VT_BLK_MIN    2 /* x = a*c + m */

/* ---- shared field readers ---- */

/* Little-endian f16 at p as f32 (exact). */
static inline VT_HOST_DEVICE float vt_blk_half(const uint8_t *p)
{
    return vt_f16_to_f32((uint16_t)(p[0] | (p[1] << 8)));
}

/* MXFP4's E8M0 scale e as 2^(e-128): half of 2^(e-127), matching the
 * doubled code book. e = 0 and 1 give the subnormals 2^-128 and 2^-127. */
static inline VT_HOST_DEVICE float vt_blk_e8m0_half(uint8_t e)
{
    uint32_t bits = e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Nibble l (0..31) of a 16-byte nibble array: elements 0..15 low, 16..31
 * high. */
static inline VT_HOST_DEVICE int vt_blk_nib(const uint8_t *qs, int l)
{
    return l < 16 ? qs[l] & 0xF : qs[l - 16] >> 4;
}

/* Bit j of the little-endian bit array at p. */
static inline VT_HOST_DEVICE int vt_blk_bit(const uint8_t *p, int j)
{
    return (p[j >> 3] >> (j & 7)) & 1;
}

/* 6-bit scale of group j (0..7) of Q4_K/Q5_K's 12 packed scale bytes. */
static inline VT_HOST_DEVICE int vt_blk_k4_scale(const uint8_t *s, int j)
{
    return j < 4 ? s[j] & 63 : (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
}

/* 6-bit minimum of group j (0..7) of Q4_K/Q5_K's 12 packed scale bytes. */
static inline VT_HOST_DEVICE int vt_blk_k4_min(const uint8_t *s, int j)
{
    return j < 4 ? s[j + 4] & 63 : (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
}

/* Q4_K/Q5_K's 8 scales and 8 minimums a byte each, from the 12 packed
 * scale bytes read as little-endian words w0 (bytes 0-3), w1 (4-7) and w2
 * (8-11): sc[0] holds scales 0-3, sc[1] scales 4-7, mn[0] and mn[1] the
 * minimums (vt_blk_k4_scale and vt_blk_k4_min by word operations, for
 * kernels that decode a super-block's scales together). */
static inline VT_HOST_DEVICE void vt_blk_k4_words(uint32_t w0, uint32_t w1, uint32_t w2, uint32_t sc[2], uint32_t mn[2])
{
    sc[0] = w0 & 0x3F3F3F3Fu;
    sc[1] = (w2 & 0x0F0F0F0Fu) | ((w0 >> 2) & 0x30303030u);
    mn[0] = w1 & 0x3F3F3F3Fu;
    mn[1] = ((w2 >> 4) & 0x0F0F0F0Fu) | ((w1 >> 2) & 0x30303030u);
}

/* Signed 6-bit scale i (0..15) of Q3_K's 12 packed scale bytes, minus 32. */
static inline VT_HOST_DEVICE int vt_blk_q3k_scale(const uint8_t *s, int i)
{
    int lo = i < 8 ? s[i] & 0xF : s[i - 8] >> 4;
    int hi = (s[8 + (i & 3)] >> (2 * (i >> 2))) & 3;
    return (lo | (hi << 4)) - 32;
}

/* ---- code books: 16 signed bytes, written once ---- */

/* IQ4_NL / IQ4_XS's non-linear 4-bit code book. */
#define VT_BLK_BOOK_IQ4NL -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113
/* MXFP4's FP4 E2M1 values doubled (0, 0.5, 1, 1.5, 2, 3, 4, 6 and their
 * negatives, times 2); the block scale is halved to match. */
#define VT_BLK_BOOK_FP4X2 0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12

/* Eight signed bytes packed little-endian into a word. */
#define VT_BLK_PACK8(b0, b1, b2, b3, b4, b5, b6, b7)                                                                   \
    ((uint64_t)(uint8_t)(b0) | (uint64_t)(uint8_t)(b1) << 8 | (uint64_t)(uint8_t)(b2) << 16 |                          \
     (uint64_t)(uint8_t)(b3) << 24 | (uint64_t)(uint8_t)(b4) << 32 | (uint64_t)(uint8_t)(b5) << 40 |                   \
     (uint64_t)(uint8_t)(b6) << 48 | (uint64_t)(uint8_t)(b7) << 56)
#define VT_BLK_LO_(b0, b1, b2, b3, b4, b5, b6, b7, ...) VT_BLK_PACK8(b0, b1, b2, b3, b4, b5, b6, b7)
#define VT_BLK_HI_(b0, b1, b2, b3, b4, b5, b6, b7, ...) VT_BLK_LO_(__VA_ARGS__, 0)
/* Entries 0..7 and 8..15 of a code book as two words. */
#define VT_BLK_BOOK_LO(...) VT_BLK_LO_(__VA_ARGS__)
#define VT_BLK_BOOK_HI(...) VT_BLK_HI_(__VA_ARGS__)

/* Entry n (0..15) of a code book packed in two words: on a device the book
 * stays in registers (a table in memory would serialise lanes that index
 * it differently). */
static inline VT_HOST_DEVICE int vt_blk_book(uint64_t lo, uint64_t hi, int n)
{
    const uint64_t word = n < 8 ? lo : hi;
    return (int8_t)(uint8_t)(word >> (8 * (n & 7)));
}

/* Entry n of a code book: from the two words in device (and C++) code,
 * from a table in C on the host (an indexed load is cheaper there than a
 * 64-bit shift). */
#if defined(__cplusplus) || defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define VT_BLK_BOOK_AT(book, n) vt_blk_book(VT_BLK_BOOK_LO(book), VT_BLK_BOOK_HI(book), n)
#else
#define VT_BLK_BOOK_AT(book, n) ((const int8_t[16]){book})[n]
#endif

/* IQ4_NL's code book at n. */
static inline VT_HOST_DEVICE int vt_blk_iq4nl(int n)
{
    return VT_BLK_BOOK_AT(VT_BLK_BOOK_IQ4NL, n);
}

/* MXFP4's doubled E2M1 value at n. */
static inline VT_HOST_DEVICE int vt_blk_fp4x2(int n)
{
    return VT_BLK_BOOK_AT(VT_BLK_BOOK_FP4X2, n);
}

/* ---- the formats: per format <f> (VT_Q_FORMATS' second column)
 *   VT_BLK_<f>_ELEMS, _BYTES   elements and bytes of a block
 *   VT_BLK_<f>_RUNS            runs per 32-element group (1 or 2)
 *   VT_BLK_<f>_KIND, _OFF      the group form and its offset
 *   VT_BLK_<f>_D, _DMIN        byte offsets of the f16 factor fields (-1: none)
 *   VT_BLK_<f>_E8M0            byte offset of an E8M0 exponent (-1: none)
 *   vt_blk_<f>_code(b, g, l)   the code of element l (0..31) of group g
 *                              (0..7; 0 in a 32-element format) of the
 *                              block at b: element j = 32*g + l
 *   vt_blk_<f>_a(b, g, l)      the factor of that element's run
 *   vt_blk_<f>_m(b, g, l)      the minimum of that element's run (VT_BLK_MIN) */

/* No minimum: formats whose KIND is not VT_BLK_MIN. */
#define VT_BLK_NO_MIN(b, g, l) 0.0f

/* Q4_0 */
#define VT_BLK_q4_0_ELEMS 32
#define VT_BLK_q4_0_BYTES 18
#define VT_BLK_q4_0_RUNS  1
#define VT_BLK_q4_0_KIND  VT_BLK_OFFSET
#define VT_BLK_q4_0_OFF   8
#define VT_BLK_q4_0_D     0
#define VT_BLK_q4_0_DMIN  (-1)
#define VT_BLK_q4_0_E8M0  (-1)
static inline VT_HOST_DEVICE int vt_blk_q4_0_code(const uint8_t *b, int g, int l)
{
    (void)g;
    return vt_blk_nib(b + 2, l);
}
#define vt_blk_q4_0_a(b, g, l) vt_blk_half(b)
#define vt_blk_q4_0_m          VT_BLK_NO_MIN

/* Q4_1 */
#define VT_BLK_q4_1_ELEMS 32
#define VT_BLK_q4_1_BYTES 20
#define VT_BLK_q4_1_RUNS  1
#define VT_BLK_q4_1_KIND  VT_BLK_MIN
#define VT_BLK_q4_1_OFF   0
#define VT_BLK_q4_1_D     0
#define VT_BLK_q4_1_DMIN  2
#define VT_BLK_q4_1_E8M0  (-1)
static inline VT_HOST_DEVICE int vt_blk_q4_1_code(const uint8_t *b, int g, int l)
{
    (void)g;
    return vt_blk_nib(b + 4, l);
}
#define vt_blk_q4_1_a(b, g, l) vt_blk_half(b)
#define vt_blk_q4_1_m(b, g, l) vt_blk_half((b) + 2)

/* Q5_0 */
#define VT_BLK_q5_0_ELEMS 32
#define VT_BLK_q5_0_BYTES 22
#define VT_BLK_q5_0_RUNS  1
#define VT_BLK_q5_0_KIND  VT_BLK_OFFSET
#define VT_BLK_q5_0_OFF   16
#define VT_BLK_q5_0_D     0
#define VT_BLK_q5_0_DMIN  (-1)
#define VT_BLK_q5_0_E8M0  (-1)
static inline VT_HOST_DEVICE int vt_blk_q5_0_code(const uint8_t *b, int g, int l)
{
    (void)g;
    return vt_blk_nib(b + 6, l) | (vt_blk_bit(b + 2, l) << 4);
}
#define vt_blk_q5_0_a(b, g, l) vt_blk_half(b)
#define vt_blk_q5_0_m          VT_BLK_NO_MIN

/* Q5_1 */
#define VT_BLK_q5_1_ELEMS 32
#define VT_BLK_q5_1_BYTES 24
#define VT_BLK_q5_1_RUNS  1
#define VT_BLK_q5_1_KIND  VT_BLK_MIN
#define VT_BLK_q5_1_OFF   0
#define VT_BLK_q5_1_D     0
#define VT_BLK_q5_1_DMIN  2
#define VT_BLK_q5_1_E8M0  (-1)
static inline VT_HOST_DEVICE int vt_blk_q5_1_code(const uint8_t *b, int g, int l)
{
    (void)g;
    return vt_blk_nib(b + 8, l) | (vt_blk_bit(b + 4, l) << 4);
}
#define vt_blk_q5_1_a(b, g, l) vt_blk_half(b)
#define vt_blk_q5_1_m(b, g, l) vt_blk_half((b) + 2)

/* Q8_0 */
#define VT_BLK_q8_0_ELEMS 32
#define VT_BLK_q8_0_BYTES 34
#define VT_BLK_q8_0_RUNS  1
#define VT_BLK_q8_0_KIND  VT_BLK_SCALE
#define VT_BLK_q8_0_OFF   0
#define VT_BLK_q8_0_D     0
#define VT_BLK_q8_0_DMIN  (-1)
#define VT_BLK_q8_0_E8M0  (-1)
static inline VT_HOST_DEVICE int vt_blk_q8_0_code(const uint8_t *b, int g, int l)
{
    (void)g;
    return (int8_t)b[2 + l];
}
#define vt_blk_q8_0_a(b, g, l) vt_blk_half(b)
#define vt_blk_q8_0_m          VT_BLK_NO_MIN

/* Q2_K */
#define VT_BLK_q2_k_ELEMS 256
#define VT_BLK_q2_k_BYTES 84
#define VT_BLK_q2_k_RUNS  2
#define VT_BLK_q2_k_KIND  VT_BLK_MIN
#define VT_BLK_q2_k_OFF   0
#define VT_BLK_q2_k_D     80
#define VT_BLK_q2_k_DMIN  82
#define VT_BLK_q2_k_E8M0  (-1)
static inline VT_HOST_DEVICE int vt_blk_q2_k_code(const uint8_t *b, int g, int l)
{
    return (b[16 + 32 * (g >> 2) + l] >> (2 * (g & 3))) & 3;
}
/* Q2_K's 4-bit scale and minimum of 16-element group i (0..15). */
static inline VT_HOST_DEVICE int vt_blk_q2k_scale(const uint8_t *b, int i)
{
    return b[i] & 0xF;
}
static inline VT_HOST_DEVICE int vt_blk_q2k_min(const uint8_t *b, int i)
{
    return b[i] >> 4;
}
static inline VT_HOST_DEVICE float vt_blk_q2_k_a(const uint8_t *b, int g, int l)
{
    return vt_blk_half(b + 80) * (float)vt_blk_q2k_scale(b, 2 * g + (l >> 4));
}
static inline VT_HOST_DEVICE float vt_blk_q2_k_m(const uint8_t *b, int g, int l)
{
    return -(vt_blk_half(b + 82) * (float)vt_blk_q2k_min(b, 2 * g + (l >> 4)));
}

/* Q3_K */
#define VT_BLK_q3_k_ELEMS 256
#define VT_BLK_q3_k_BYTES 110
#define VT_BLK_q3_k_RUNS  2
#define VT_BLK_q3_k_KIND  VT_BLK_OFFSET
#define VT_BLK_q3_k_OFF   4
#define VT_BLK_q3_k_D     108
#define VT_BLK_q3_k_DMIN  (-1)
#define VT_BLK_q3_k_E8M0  (-1)
static inline VT_HOST_DEVICE int vt_blk_q3_k_code(const uint8_t *b, int g, int l)
{
    return ((b[32 + 32 * (g >> 2) + l] >> (2 * (g & 3))) & 3) | (((b[l] >> g) & 1) << 2);
}
static inline VT_HOST_DEVICE float vt_blk_q3_k_a(const uint8_t *b, int g, int l)
{
    return vt_blk_half(b + 108) * (float)vt_blk_q3k_scale(b + 96, 2 * g + (l >> 4));
}
#define vt_blk_q3_k_m VT_BLK_NO_MIN

/* Q4_K and Q5_K share their factors: d @0, dmin @2, scales @4. */
static inline VT_HOST_DEVICE float vt_blk_k4_a(const uint8_t *b, int g, int l)
{
    (void)l;
    return vt_blk_half(b) * (float)vt_blk_k4_scale(b + 4, g);
}
static inline VT_HOST_DEVICE float vt_blk_k4_m(const uint8_t *b, int g, int l)
{
    (void)l;
    return -(vt_blk_half(b + 2) * (float)vt_blk_k4_min(b + 4, g));
}

/* Q4_K */
#define VT_BLK_q4_k_ELEMS 256
#define VT_BLK_q4_k_BYTES 144
#define VT_BLK_q4_k_RUNS  1
#define VT_BLK_q4_k_KIND  VT_BLK_MIN
#define VT_BLK_q4_k_OFF   0
#define VT_BLK_q4_k_D     0
#define VT_BLK_q4_k_DMIN  2
#define VT_BLK_q4_k_E8M0  (-1)
static inline VT_HOST_DEVICE int vt_blk_q4_k_code(const uint8_t *b, int g, int l)
{
    return (b[16 + 32 * (g >> 1) + l] >> (4 * (g & 1))) & 0xF;
}
#define vt_blk_q4_k_a vt_blk_k4_a
#define vt_blk_q4_k_m vt_blk_k4_m

/* Q5_K */
#define VT_BLK_q5_k_ELEMS 256
#define VT_BLK_q5_k_BYTES 176
#define VT_BLK_q5_k_RUNS  1
#define VT_BLK_q5_k_KIND  VT_BLK_MIN
#define VT_BLK_q5_k_OFF   0
#define VT_BLK_q5_k_D     0
#define VT_BLK_q5_k_DMIN  2
#define VT_BLK_q5_k_E8M0  (-1)
static inline VT_HOST_DEVICE int vt_blk_q5_k_code(const uint8_t *b, int g, int l)
{
    return ((b[48 + 32 * (g >> 1) + l] >> (4 * (g & 1))) & 0xF) | (((b[16 + l] >> g) & 1) << 4);
}
#define vt_blk_q5_k_a vt_blk_k4_a
#define vt_blk_q5_k_m vt_blk_k4_m

/* Q6_K */
#define VT_BLK_q6_k_ELEMS 256
#define VT_BLK_q6_k_BYTES 210
#define VT_BLK_q6_k_RUNS  2
#define VT_BLK_q6_k_KIND  VT_BLK_OFFSET
#define VT_BLK_q6_k_OFF   32
#define VT_BLK_q6_k_D     208
#define VT_BLK_q6_k_DMIN  (-1)
#define VT_BLK_q6_k_E8M0  (-1)
static inline VT_HOST_DEVICE int vt_blk_q6_k_code(const uint8_t *b, int g, int l)
{
    const int h = g >> 2, r = g & 3;
    const uint8_t *ql = b + 64 * h + 32 * (r & 1), *qh = b + 128 + 32 * h;
    return ((ql[l] >> (r >= 2 ? 4 : 0)) & 0xF) | (((qh[l] >> (2 * r)) & 3) << 4);
}
static inline VT_HOST_DEVICE float vt_blk_q6_k_a(const uint8_t *b, int g, int l)
{
    return vt_blk_half(b + 208) * (float)(int8_t)b[192 + 2 * g + (l >> 4)];
}
#define vt_blk_q6_k_m VT_BLK_NO_MIN

/* IQ4_NL */
#define VT_BLK_iq4_nl_ELEMS 32
#define VT_BLK_iq4_nl_BYTES 18
#define VT_BLK_iq4_nl_RUNS  1
#define VT_BLK_iq4_nl_KIND  VT_BLK_SCALE
#define VT_BLK_iq4_nl_OFF   0
#define VT_BLK_iq4_nl_D     0
#define VT_BLK_iq4_nl_DMIN  (-1)
#define VT_BLK_iq4_nl_E8M0  (-1)
static inline VT_HOST_DEVICE int vt_blk_iq4_nl_code(const uint8_t *b, int g, int l)
{
    (void)g;
    return vt_blk_iq4nl(vt_blk_nib(b + 2, l));
}
#define vt_blk_iq4_nl_a(b, g, l) vt_blk_half(b)
#define vt_blk_iq4_nl_m          VT_BLK_NO_MIN

/* IQ4_XS */
#define VT_BLK_iq4_xs_ELEMS 256
#define VT_BLK_iq4_xs_BYTES 136
#define VT_BLK_iq4_xs_RUNS  1
#define VT_BLK_iq4_xs_KIND  VT_BLK_SCALE
#define VT_BLK_iq4_xs_OFF   0
#define VT_BLK_iq4_xs_D     0
#define VT_BLK_iq4_xs_DMIN  (-1)
#define VT_BLK_iq4_xs_E8M0  (-1)
static inline VT_HOST_DEVICE int vt_blk_iq4_xs_code(const uint8_t *b, int g, int l)
{
    return vt_blk_iq4nl(vt_blk_nib(b + 8 + 16 * g, l));
}
/* IQ4_XS's signed scale of group g (0..7): its 6-bit field (low four bits
 * from scales_l, top two from scales_h) minus 32. */
static inline VT_HOST_DEVICE int vt_blk_iq4_xs_scale(const uint8_t *b, int g)
{
    const int scales_h = b[2] | (b[3] << 8);
    return (((b[4 + g / 2] >> (4 * (g % 2))) & 0xF) | (((scales_h >> (2 * g)) & 3) << 4)) - 32;
}
static inline VT_HOST_DEVICE float vt_blk_iq4_xs_a(const uint8_t *b, int g, int l)
{
    (void)l;
    return vt_blk_half(b) * (float)vt_blk_iq4_xs_scale(b, g);
}
#define vt_blk_iq4_xs_m VT_BLK_NO_MIN

/* MXFP4 */
#define VT_BLK_mxfp4_ELEMS 32
#define VT_BLK_mxfp4_BYTES 17
#define VT_BLK_mxfp4_RUNS  1
#define VT_BLK_mxfp4_KIND  VT_BLK_SCALE
#define VT_BLK_mxfp4_OFF   0
#define VT_BLK_mxfp4_D     (-1)
#define VT_BLK_mxfp4_DMIN  (-1)
#define VT_BLK_mxfp4_E8M0  0
static inline VT_HOST_DEVICE int vt_blk_mxfp4_code(const uint8_t *b, int g, int l)
{
    (void)g;
    return vt_blk_fp4x2(vt_blk_nib(b + 1, l));
}
#define vt_blk_mxfp4_a(b, g, l) vt_blk_e8m0_half((b)[0])
#define vt_blk_mxfp4_m          VT_BLK_NO_MIN

/* ---- decoding any format ---- */

/* x from a run's factor a, minimum m and an element's code c, by the
 * format's kind and offset (compile-time constants where it is inlined). */
static inline VT_HOST_DEVICE float vt_blk_apply(int kind, int off, float a, int c, float m)
{
    if (kind == VT_BLK_MIN)
        return a * (float)c + m;
    if (kind == VT_BLK_OFFSET)
        return a * (float)(c - off);
    return a * (float)c;
}

/* Element l of group g of the block at b, of the format named f
 * (VT_Q_FORMATS). */
#define VT_BLK_VALUE(f, b, g, l)                                                                                       \
    vt_blk_apply(VT_BLK_##f##_KIND, VT_BLK_##f##_OFF, vt_blk_##f##_a(b, g, l), vt_blk_##f##_code(b, g, l),             \
                 vt_blk_##f##_m(b, g, l))

/* Element j (0 <= j < block elements) of the block at blk, of block format
 * dtype (a vt_dtype of VT_Q_FORMATS); NaN for any other dtype. */
static inline VT_HOST_DEVICE float vt_block_value(uint32_t dtype, const uint8_t *blk, int j)
{
    switch (dtype) {
#define VT_BLK_VALUE_CASE(id, f)                                                                                       \
    case id: return VT_BLK_VALUE(f, blk, j >> 5, j & 31);
        VT_Q_FORMATS(VT_BLK_VALUE_CASE)
#undef VT_BLK_VALUE_CASE
    default: break;
    }
    const uint32_t nan_bits = 0x7fc00000u; /* not a block format: never passes a check */
    float f;
    memcpy(&f, &nan_bits, sizeof f);
    return f;
}

/* One arm of the geometry lookups below: format f's elements (bytes) when
 * dtype is its id; the arms chain into one conditional expression, a
 * constant expression in C++. */
#define VT_BLK_ELEMS_ARM(id, f) dtype == id ? VT_BLK_##f##_ELEMS:
#define VT_BLK_BYTES_ARM(id, f) dtype == id ? VT_BLK_##f##_BYTES:

/* Elements of a block of format dtype; 0 for a dtype outside VT_Q_FORMATS. */
static inline VT_HOST_DEVICE VT_BLK_CONSTEXPR int vt_block_elems(uint32_t dtype)
{
    return VT_Q_FORMATS(VT_BLK_ELEMS_ARM) 0;
}

/* Bytes of a block of format dtype; 0 for a dtype outside VT_Q_FORMATS. */
static inline VT_HOST_DEVICE VT_BLK_CONSTEXPR int vt_block_bytes(uint32_t dtype)
{
    return VT_Q_FORMATS(VT_BLK_BYTES_ARM) 0;
}

#ifdef __cplusplus
}
#endif
#endif /* VT_BLOCKS_H */
