/* rocm_quant.h - the GGUF block formats of SPEC 7 ("q") decoded on the
 * device, one element at a time, with the same arithmetic as the cpu
 * oracle (backends/cpu/cpu_quant.h): every value is x = a*c, a*(c - o) or
 * a*c + m where a*c is exact in f32, so the result rounds once and is
 * bit-identical to the oracle's (an fma of a*c + m rounds the same way).
 * Included by .hip kernel files only. */
#ifndef VT_ROCM_QUANT_H
#define VT_ROCM_QUANT_H

#include "rocm_device.h"

/* Little-endian f16 at p. */
__device__ inline float vt_q_half(const uint8_t *p)
{
    return vt_f16_to_f32((uint16_t)(p[0] | (p[1] << 8)));
}

/* MXFP4's E8M0 scale e as 2^(e-128) (the code book is doubled). */
__device__ inline float vt_q_e8m0_half(uint8_t e)
{
    uint32_t bits = e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23;
    return __uint_as_float(bits);
}

/* Nibble l of a 16-byte nibble array: elements 0..15 low, 16..31 high. */
__device__ inline int vt_q_nib(const uint8_t *qs, int l)
{
    return l < 16 ? qs[l] & 0xF : qs[l - 16] >> 4;
}

/* Signed byte n (0..15) of a 16-entry code book packed little-endian in two
 * words: the book stays in registers (a table in memory would serialise
 * lanes that index it differently). */
__device__ inline float vt_q_book(uint64_t lo, uint64_t hi, int n)
{
    const uint64_t word = n < 8 ? lo : hi;
    return (float)(int8_t)(uint8_t)(word >> (8 * (n & 7)));
}

/* IQ4_NL's code book: -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25,
 * 38, 53, 69, 89, 113. */
__device__ inline float vt_q_iq4nl(int n)
{
    return vt_q_book(0xf6eaddcfbfad9881ull, 0x7159453526190d01ull, n);
}

/* MXFP4's E2M1 values, doubled: 0, 1, 2, 3, 4, 6, 8, 12, then negated. */
__device__ inline float vt_q_fp4x2(int n)
{
    return vt_q_book(0x0c08060403020100ull, 0xf4f8fafcfdfeff00ull, n);
}

/* Scale and min (6 bits) of group j of Q4_K/Q5_K's 12 scale bytes. */
__device__ inline void vt_q_k4_scale_min(const uint8_t *s, int j, int *sc, int *mn)
{
    if (j < 4) {
        *sc = s[j] & 63;
        *mn = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
        *mn = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

/* Signed scale i of Q3_K's 12 scale bytes, minus 32. */
__device__ inline int vt_q_q3k_scale(const uint8_t *s, int i)
{
    int lo = i < 8 ? s[i] & 0xF : s[i - 8] >> 4;
    int hi = (s[8 + (i & 3)] >> (2 * (i >> 2))) & 3;
    return (lo | (hi << 4)) - 32;
}

/* Element j of the block at blk, of block format dtype (vt_dtype id). */
__device__ inline float vt_q_value(uint32_t dtype, const uint8_t *blk, int j)
{
    const int sub = j >> 5, l = j & 31;
    switch (dtype) {
    case 2: /* q4_0 */ return vt_q_half(blk) * (float)(vt_q_nib(blk + 2, l) - 8);
    case 3: /* q4_1 */ return vt_q_half(blk) * (float)vt_q_nib(blk + 4, l) + vt_q_half(blk + 2);
    case 6: { /* q5_0 */
        int c = vt_q_nib(blk + 6, l) | (((blk[2 + (l >> 3)] >> (l & 7)) & 1) << 4);
        return vt_q_half(blk) * (float)(c - 16);
    }
    case 7: { /* q5_1 */
        int c = vt_q_nib(blk + 8, l) | (((blk[4 + (l >> 3)] >> (l & 7)) & 1) << 4);
        return vt_q_half(blk) * (float)c + vt_q_half(blk + 2);
    }
    case 8: /* q8_0 */ return vt_q_half(blk) * (float)(int8_t)blk[2 + l];
    case 10: { /* q2_k */
        const uint8_t *q = blk + 16 + 32 * (sub >> 2);
        uint8_t sc = blk[2 * sub + (l >> 4)];
        float a = vt_q_half(blk + 80) * (float)(sc & 0xF), m = -(vt_q_half(blk + 82) * (float)(sc >> 4));
        return a * (float)((q[l] >> (2 * (sub & 3))) & 3) + m;
    }
    case 11: { /* q3_k */
        const uint8_t *q = blk + 32 + 32 * (sub >> 2);
        float a = vt_q_half(blk + 108) * (float)vt_q_q3k_scale(blk + 96, 2 * sub + (l >> 4));
        int c = ((q[l] >> (2 * (sub & 3))) & 3) | (((blk[l] >> sub) & 1) << 2);
        return a * (float)(c - 4);
    }
    case 12:   /* q4_k */
    case 13: { /* q5_k */
        int sc, mn;
        vt_q_k4_scale_min(blk + 4, sub, &sc, &mn);
        float a = vt_q_half(blk) * (float)sc, m = -(vt_q_half(blk + 2) * (float)mn);
        int c;
        if (dtype == 12)
            c = (blk[16 + 32 * (sub >> 1) + l] >> (4 * (sub & 1))) & 0xF;
        else
            c = ((blk[48 + 32 * (sub >> 1) + l] >> (4 * (sub & 1))) & 0xF) | (((blk[16 + l] >> sub) & 1) << 4);
        return a * (float)c + m;
    }
    case 14: { /* q6_k */
        const int h = sub >> 2, r = sub & 3;
        const uint8_t *ql = blk + 64 * h + 32 * (r & 1), *qh = blk + 128 + 32 * h;
        float a = vt_q_half(blk + 208) * (float)((const int8_t *)(blk + 192))[8 * h + 2 * r + (l >> 4)];
        int c = ((ql[l] >> (r >= 2 ? 4 : 0)) & 0xF) | (((qh[l] >> (2 * r)) & 3) << 4);
        return a * (float)(c - 32);
    }
    case 20: /* iq4_nl */ return vt_q_half(blk) * vt_q_iq4nl(vt_q_nib(blk + 2, l));
    case 23: { /* iq4_xs */
        int scales_h = blk[2] | (blk[3] << 8);
        int ls = ((blk[4 + sub / 2] >> (4 * (sub % 2))) & 0xF) | (((scales_h >> (2 * sub)) & 3) << 4);
        return vt_q_half(blk) * (float)(ls - 32) * vt_q_iq4nl(vt_q_nib(blk + 8 + 16 * sub, l));
    }
    case 39: /* mxfp4 */ return vt_q_e8m0_half(blk[0]) * vt_q_fp4x2(vt_q_nib(blk + 1, l));
    }
    return __int_as_float(0x7fc00000); /* not a block format: NaN, never passes a check */
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
