/* rocm_quant.h - the GGUF block formats of SPEC 7 ("q") decoded on the
 * device, one element at a time: vt_blocks.h's layouts and decoders (the
 * ones the cpu oracle is built from, so every value is bit-identical to
 * the oracle's) under the names the kernels use, and the device-only
 * helpers. Included by .hip kernel files only. */
#ifndef VT_ROCM_QUANT_H
#define VT_ROCM_QUANT_H

#include "rocm_device.h"

#include <vt/vt_blocks.h>

/* Little-endian f16 at p. */
__device__ inline float vt_q_half(const uint8_t *p)
{
    return vt_blk_half(p);
}

/* MXFP4's E8M0 scale e as 2^(e-128) (the code book is doubled). */
__device__ inline float vt_q_e8m0_half(uint8_t e)
{
    return vt_blk_e8m0_half(e);
}

/* Nibble l of a 16-byte nibble array: elements 0..15 low, 16..31 high. */
__device__ inline int vt_q_nib(const uint8_t *qs, int l)
{
    return vt_blk_nib(qs, l);
}

/* Signed byte n (0..15) of a 16-entry code book packed little-endian in two
 * words (vt_blk_book: the book stays in registers). */
__device__ inline float vt_q_book(uint64_t lo, uint64_t hi, int n)
{
    return (float)vt_blk_book(lo, hi, n);
}

/* IQ4_NL's code book (VT_BLK_BOOK_IQ4NL). */
__device__ inline float vt_q_iq4nl(int n)
{
    return (float)vt_blk_iq4nl(n);
}

/* MXFP4's E2M1 values, doubled (VT_BLK_BOOK_FP4X2). */
__device__ inline float vt_q_fp4x2(int n)
{
    return (float)vt_blk_fp4x2(n);
}

/* Scale and min (6 bits) of group j of Q4_K/Q5_K's 12 scale bytes. */
__device__ inline void vt_q_k4_scale_min(const uint8_t *s, int j, int *sc, int *mn)
{
    *sc = vt_blk_k4_scale(s, j);
    *mn = vt_blk_k4_min(s, j);
}

/* Signed scale i of Q3_K's 12 scale bytes, minus 32. */
__device__ inline int vt_q_q3k_scale(const uint8_t *s, int i)
{
    return vt_blk_q3k_scale(s, i);
}

/* Element j of the block at blk, of block format dtype (vt_dtype id); NaN
 * for any other dtype (never passes a check). */
__device__ inline float vt_q_value(uint32_t dtype, const uint8_t *blk, int j)
{
    return vt_block_value(dtype, blk, j);
}

/* Elements j0 .. j0 + 7 (j0 a multiple of 8) of the block at blk, of block
 * format DT known at compile time, into v: the bits vt_q_value gives each
 * one, with the run's factor and minimum decoded once (a run of 8 lies in
 * one run of 16 or 32 elements, whose a and m vt_blocks.h's group form
 * shares, as the cpu oracle's group reader takes them). */
template <uint32_t DT> __device__ inline void vt_q_run8(const uint8_t *blk, int j0, float (&v)[8])
{
    static_assert(vt_block_elems(DT) % 8 == 0 && vt_block_elems(DT) > 0, "a block format of whole runs of 8");
    const int g = j0 >> 5, l0 = j0 & 31;
#define VT_Q_RUN8_CASE(id, f)                                                                                          \
    if constexpr (DT == id) {                                                                                          \
        const float a = vt_blk_##f##_a(blk, g, l0), m = vt_blk_##f##_m(blk, g, l0);                                    \
        for (int u = 0; u < 8; u++) /* a constant trip count: unrolled, v stays in registers */                        \
            v[u] = vt_blk_apply(VT_BLK_##f##_KIND, VT_BLK_##f##_OFF, a, vt_blk_##f##_code(blk, g, l0 + u), m);         \
    }
    VT_Q_FORMATS(VT_Q_RUN8_CASE)
#undef VT_Q_RUN8_CASE
}

/* Element i of a row-major weight of dtype: plain f32/f16/bf16 or a block
 * format with block_elems elements in block_bytes bytes. */
__device__ inline float vt_q_element(const void *w, uint32_t dtype, int64_t i, int block_elems, int block_bytes)
{
    if (block_elems == 1)
        return vt_dev_load(w, dtype, i);
    const uint8_t *blk = (const uint8_t *)w + (i / block_elems) * block_bytes;
    return vt_q_value(dtype, blk, (int)(i % block_elems));
}

#endif /* VT_ROCM_QUANT_H */
