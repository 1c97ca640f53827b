/* cpu_quant.h - the GGUF block formats of SPEC 7 ("q") as the cpu backend
 * decodes them: the group form every format is read in, and the table that
 * ties a dtype to its scalar group reader. Layouts, codes and factors are
 * vt_blocks.h's (shared with the device backends); this header adds the
 * cpu's grouping.
 *
 * Every format is decoded in groups of 32 consecutive elements: a 32-element
 * format (Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 IQ4_NL MXFP4) has one group per block, a
 * 256-element super-block format (Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_XS) has eight.
 * A group splits into `runs` (1 or 2) runs of 32/runs elements sharing a
 * factor a[r] (and a minimum m[r]); element j has the code c[j] and the
 * value of vt_blocks.h's group form. The form readers produce (c, a, m) per
 * group; vt_cpu_form_decode applies it, and the SIMD paths read the same
 * codes and factors, so every decoder here, scalar or SIMD, produces the
 * same f32 bits as vt_block_value. */
#ifndef VT_CPU_QUANT_H
#define VT_CPU_QUANT_H

#include <stdint.h>
#include <string.h>

#include <vt/vt_blocks.h>

/* Elements per decoding group. */
#define VT_CPU_GROUP 32

/* How a group's values follow from its codes (vt_blocks.h's kinds). */
typedef enum vt_cpu_affine {
    VT_CPU_SCALE = VT_BLK_SCALE,   /* x = a*c */
    VT_CPU_OFFSET = VT_BLK_OFFSET, /* x = a*(c - o) */
    VT_CPU_MIN = VT_BLK_MIN        /* x = a*c + m */
} vt_cpu_affine;

/* One group in the group form: codes as exact f32 integers, and the scale
 * and minimum of each run (m is 0 unless the format is VT_CPU_MIN). */
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

/* The IQ4_NL / IQ4_XS non-linear 4-bit code book (VT_BLK_BOOK_IQ4NL). */
extern const int8_t vt_cpu_kvalues_iq4nl[16];

/* MXFP4's doubled E2M1 code book (VT_BLK_BOOK_FP4X2); the block scale is
 * halved to match. */
extern const int8_t vt_cpu_kvalues_mxfp4[16];

/* Little-endian f16 at p as f32 (exact): vt_blk_half. */
static inline float vt_cpu_half_at(const uint8_t *p)
{
    return vt_blk_half(p);
}

/* MXFP4's E8M0 scale e as 2^(e-128): vt_blk_e8m0_half. */
static inline float vt_cpu_e8m0_half(uint8_t e)
{
    return vt_blk_e8m0_half(e);
}

/* Scale and minimum (6 bits each) of group j (0..7) of a Q4_K/Q5_K block's
 * 12 packed scale bytes: vt_blk_k4_scale, vt_blk_k4_min. */
static inline void vt_cpu_kquant_scale_min(const uint8_t *s, int j, uint8_t *sc, uint8_t *mn)
{
    *sc = (uint8_t)vt_blk_k4_scale(s, j);
    *mn = (uint8_t)vt_blk_k4_min(s, j);
}

/* Signed 6-bit scale i (0..15) of a Q3_K block's scale bytes, minus 32. */
static inline int vt_cpu_q3k_scale(const uint8_t *s, int i)
{
    return vt_blk_q3k_scale(s, i);
}

#endif
