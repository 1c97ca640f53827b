/* cpu_quant.h - the GGUF block formats of SPEC 7 ("q") as the cpu backend
 * decodes them: byte layouts, the group form every format is read in, the
 * scalar form readers, and the table that ties a dtype to its form.
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
 * THE GROUP FORM. Every format is read as: a 32-element group splits into
 * `runs` (1 or 2) runs of 32/runs elements; element j of run r has a small
 * integer code c[j] and
 *   SCALE   x = a[r] * c           (Q8_0, IQ4_NL, IQ4_XS, MXFP4)
 *   OFFSET  x = a[r] * (c - o)     (Q4_0 o=8, Q5_0 o=16, Q3_K o=4, Q6_K o=32)
 *   MIN     x = a[r] * c + m[r]    (Q4_1, Q5_1, Q2_K, Q4_K, Q5_K)
 * with a[r] = d or d*scale and m[r] = m or -dmin*min. The form functions
 * below produce (c, a, m) per group; vt_cpu_form_decode applies it.
 *
 * Exactness: a*c and a*(c-o) are exact in f32 (a is an f16, a power of two
 * or an f16 times a scale of at most 7 significant bits, c-o at most 7:
 * 23 significant bits at most), so the decoded value is exactly ggml's, and
 * x = a*c + m rounds once, as ggml's d*q + m does. Every decoder here,
 * scalar or SIMD, produces those same f32 bits. */
#ifndef VT_CPU_QUANT_H
#define VT_CPU_QUANT_H

#include <stdint.h>
#include <string.h>

#include <vt/vt_dtype.h>

/* Elements per decoding group. */
#define VT_CPU_GROUP 32

/* How a group's values follow from its codes (see the group form). */
typedef enum vt_cpu_affine {
    VT_CPU_SCALE = 0,  /* x = a*c */
    VT_CPU_OFFSET = 1, /* x = a*(c - o) */
    VT_CPU_MIN = 2     /* x = a*c + m */
} vt_cpu_affine;

/* One group in the group form: codes as exact f32 integers, and the scale
 * and minimum of each run (m unused unless the format is VT_CPU_MIN). */
typedef struct vt_cpu_group {
    float c[VT_CPU_GROUP];
    float a[2], m[2];
} vt_cpu_group;

/* Read group `sub` (0 for 32-element formats, 0..7 for super-blocks) of
 * the block at blk in the group form. */
typedef void (*vt_cpu_form_fn)(const uint8_t *blk, int sub, vt_cpu_group *g);

/* A block format the cpu backend decodes. */
typedef struct vt_cpu_qformat {
    uint32_t dtype; /* vt_dtype */
    uint8_t runs;   /* runs per 32-element group: 1 or 2 */
    uint8_t affine; /* vt_cpu_affine */
    uint8_t offset; /* o of VT_CPU_OFFSET */
    vt_cpu_form_fn form;
} vt_cpu_qformat;

/* The format of a q dtype, or NULL for any other dtype. Its groups per
 * block are vt_dtype_get(dtype)->block_elems / VT_CPU_GROUP. */
const vt_cpu_qformat *vt_cpu_qformat_get(uint32_t dtype);

/* Decode group `sub` of the block at blk to out[0..32) as f32: the group
 * form applied (the scalar reference decoder). */
void vt_cpu_form_decode(const vt_cpu_qformat *f, const uint8_t *blk, int sub, float *out);

/* The IQ4_NL / IQ4_XS non-linear 4-bit code book. */
extern const int8_t vt_cpu_kvalues_iq4nl[16];

/* MXFP4's FP4 E2M1 values doubled (0, 0.5, 1, 1.5, 2, 3, 4, 6 and their
 * negatives, times 2); the block scale is halved to match. */
extern const int8_t vt_cpu_kvalues_mxfp4[16];

/* Scalar group-form readers, one per format (the cpu backend's reference). */
void vt_cpu_form_q4_0(const uint8_t *blk, int sub, vt_cpu_group *g);
void vt_cpu_form_q4_1(const uint8_t *blk, int sub, vt_cpu_group *g);
void vt_cpu_form_q5_0(const uint8_t *blk, int sub, vt_cpu_group *g);
void vt_cpu_form_q5_1(const uint8_t *blk, int sub, vt_cpu_group *g);
void vt_cpu_form_q8_0(const uint8_t *blk, int sub, vt_cpu_group *g);
void vt_cpu_form_q2_k(const uint8_t *blk, int sub, vt_cpu_group *g);
void vt_cpu_form_q3_k(const uint8_t *blk, int sub, vt_cpu_group *g);
void vt_cpu_form_q4_k(const uint8_t *blk, int sub, vt_cpu_group *g);
void vt_cpu_form_q5_k(const uint8_t *blk, int sub, vt_cpu_group *g);
void vt_cpu_form_q6_k(const uint8_t *blk, int sub, vt_cpu_group *g);
void vt_cpu_form_iq4_nl(const uint8_t *blk, int sub, vt_cpu_group *g);
void vt_cpu_form_iq4_xs(const uint8_t *blk, int sub, vt_cpu_group *g);
void vt_cpu_form_mxfp4(const uint8_t *blk, int sub, vt_cpu_group *g);

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
