/* cpu_quant.h - the GGUF block formats of SPEC 7 ("q") as the cpu backend
 * decodes them: byte layouts, the scalar group decoders, and the table
 * that ties a dtype to its decoder.
 *
 * Every format is decoded in groups of 32 consecutive elements: a 32-element
 * format (Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 IQ4_NL MXFP4) has one group per block, a
 * 256-element super-block format (Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_XS) has eight.
 * Block sizes in bytes and elements come from the type table
 * (vt_dtype_get); the offsets below are where each field sits inside one
 * block, as GGUF/ggml lay them out (little-endian, packed, f16 = IEEE half):
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
 * element j + 16 its high nibble. The super-block layouts are described at
 * their decoders (cpu_quant_kquants.c, cpu_quant_nonlinear.c).
 *
 * Exactness: each decoded value is d*q (or d*sc*q) with d an f16 or a power
 * of two and q, sc small integers, so the product is exact in f32; formats
 * with a minimum add or subtract it with one rounding (x = d*q + m). Every
 * decoder here, scalar or SIMD, produces those same f32 bits. */
#ifndef VT_CPU_QUANT_H
#define VT_CPU_QUANT_H

#include <stdint.h>
#include <string.h>

#include <vt/vt_dtype.h>

/* Elements per decoding group. */
#define VT_CPU_GROUP 32

/* Decode group `sub` (0 for 32-element formats, 0..7 for super-blocks) of
 * the block at blk into out[0..32) as f32. */
typedef void (*vt_cpu_group_decoder)(const uint8_t *blk, int sub, float *out);

/* A block format the cpu backend decodes. */
typedef struct vt_cpu_qformat {
    uint32_t dtype;              /* vt_dtype */
    vt_cpu_group_decoder decode; /* the scalar (reference) decoder */
} vt_cpu_qformat;

/* The format of a q dtype, or NULL for any other dtype. Its groups per
 * block are vt_dtype_get(dtype)->block_elems / VT_CPU_GROUP. */
const vt_cpu_qformat *vt_cpu_qformat_get(uint32_t dtype);

/* The IQ4_NL / IQ4_XS non-linear 4-bit code book. */
extern const int8_t vt_cpu_kvalues_iq4nl[16];

/* MXFP4's FP4 E2M1 values doubled (0, 0.5, 1, 1.5, 2, 3, 4, 6 and their
 * negatives, times 2); the block scale is halved to match. */
extern const int8_t vt_cpu_kvalues_mxfp4[16];

/* Scalar group decoders, one per format (the cpu backend's reference). */
void vt_cpu_decode_q4_0(const uint8_t *blk, int sub, float *out);
void vt_cpu_decode_q4_1(const uint8_t *blk, int sub, float *out);
void vt_cpu_decode_q5_0(const uint8_t *blk, int sub, float *out);
void vt_cpu_decode_q5_1(const uint8_t *blk, int sub, float *out);
void vt_cpu_decode_q8_0(const uint8_t *blk, int sub, float *out);
void vt_cpu_decode_q2_k(const uint8_t *blk, int sub, float *out);
void vt_cpu_decode_q3_k(const uint8_t *blk, int sub, float *out);
void vt_cpu_decode_q4_k(const uint8_t *blk, int sub, float *out);
void vt_cpu_decode_q5_k(const uint8_t *blk, int sub, float *out);
void vt_cpu_decode_q6_k(const uint8_t *blk, int sub, float *out);
void vt_cpu_decode_iq4_nl(const uint8_t *blk, int sub, float *out);
void vt_cpu_decode_iq4_xs(const uint8_t *blk, int sub, float *out);
void vt_cpu_decode_mxfp4(const uint8_t *blk, int sub, float *out);

/* Little-endian f16 at p as f32 (exact). */
static inline float vt_cpu_half_at(const uint8_t *p)
{
    uint16_t h;
    memcpy(&h, p, sizeof h);
    return vt_f16_to_f32(h);
}

/* MXFP4's E8M0 scale e as 2^(e-128): half of 2^(e-127), matching the
 * doubled code book. e = 0 and 1 give the subnormals 2^-128 and 2^-127. */
static inline float vt_cpu_e8m0_half(uint8_t e)
{
    uint32_t bits = e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Scale and minimum (6 bits each) of group j (0..7) of a Q4_K/Q5_K block's
 * 12 packed scale bytes. */
static inline void vt_cpu_kquant_scale_min(const uint8_t *s, int j, uint8_t *sc, uint8_t *mn)
{
    if (j < 4) {
        *sc = s[j] & 63;
        *mn = s[j + 4] & 63;
    } else {
        *sc = (uint8_t)((s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4));
        *mn = (uint8_t)((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
    }
}

/* Signed 6-bit scale i (0..15) of a Q3_K block's 12 packed scale bytes,
 * minus 32. */
static inline int vt_cpu_q3k_scale(const uint8_t *s, int i)
{
    int lo = i < 8 ? s[i] & 0xF : s[i - 8] >> 4;
    int hi = (s[8 + (i & 3)] >> (2 * (i >> 2))) & 3;
    return (lo | (hi << 4)) - 32;
}

#endif
