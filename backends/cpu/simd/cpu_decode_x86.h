/* cpu_decode_x86.h - x86 SIMD block decoders: one 32-element group of any
 * weight format into four 8-lane f32 vectors (elements 0-7, 8-15, 16-23,
 * 24-31), the same real values as the scalar decoders of cpu_quant.c.
 *
 * Included by the AVX2 and AVX-512 path files, each of which first defines
 * VT_X86_FN as "static inline" with its own target attribute, so the same
 * decoders compile into both paths.
 *
 * Decoding is split in two so that the FP ports do the per-element work
 * only. A prepare step turns a block's scales into a small table of f32
 * factors, vectorised across the rows of a tile (32-element formats: one f16
 * per row) or across the groups of a super-block (K-quants, IQ4_XS); the
 * tiles and x86_apply then broadcast the factors from that table (a load,
 * not an ALU operation). A table is float tab[4][8]: for run r of a group,
 * the factor a is at a[16*r] and the minimum m at a[16*r + 8], with a =
 * &tab[0][row] for a 32-element format, &tab[0][group] for a super-block
 * (one table per row).
 *
 * The group decoders produce the group form of cpu_quant.h: the codes as
 * exact f32 integers. The tiles (cpu_tile_x86.h) combine codes, factors and
 * activations in the canonical order of cpu_dot.h; x86_apply turns codes
 * into the exact decoded values for Dequantize and GetRows (x = a*(c-o)
 * with c-o exact, x = fma(c, a, m) with c*a exact, or x = a*c): the scalar
 * reference's bits, including the sign of a zero. */
#ifndef VT_CPU_DECODE_X86_H
#define VT_CPU_DECODE_X86_H

#include <immintrin.h>
#include <string.h>

#include "cpu_dot.h"
#include "cpu_quant.h"

#ifndef VT_X86_FN
#error "define VT_X86_FN (static inline with a target attribute) before including cpu_decode_x86.h"
#endif

/* A prepared scale table (see above). */
typedef float x86_scales[4][8];

/* 32-element groups per block of a q type (1, or 8 for super-blocks). */
VT_X86_FN int x86_groups_of(uint32_t wtype)
{
    switch (wtype) {
    case VT_Q2_K:
    case VT_Q3_K:
    case VT_Q4_K:
    case VT_Q5_K:
    case VT_Q6_K:
    case VT_IQ4_XS: return 8;
    default: return 1;
    }
}

VT_X86_FN uint16_t x86_u16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

VT_X86_FN uint32_t x86_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* 8 bytes at p zero- or sign-extended to 8 32-bit lanes. */
VT_X86_FN __m256i x86_u8x8(const uint8_t *p)
{
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)p));
}
VT_X86_FN __m256i x86_s8x8(const uint8_t *p)
{
    return _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)p));
}

/* 8 bytes held in a 64-bit integer, widened to 8 f32 lanes. */
VT_X86_FN __m256 x86_u8x8_ps(uint64_t bytes)
{
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)bytes)));
}

/* (a >> s) & mask per 32-bit lane, s a run-time count. */
VT_X86_FN __m256i x86_field(__m256i a, int s, int mask)
{
    return _mm256_and_si256(_mm256_srl_epi32(a, _mm_cvtsi32_si128(s)), _mm256_set1_epi32(mask));
}

/* Factor k of a prepared table entry, in all lanes. */
VT_X86_FN __m256 x86_factor(const float *a, int k)
{
    return _mm256_broadcast_ss(a + 8 * k);
}

/* True for the formats whose one factor is the f16 d at byte 0 of the
 * block (Q4_0, Q5_0, Q8_0, IQ4_NL). */
VT_X86_FN int x86_d_only(uint32_t wtype)
{
    return wtype == VT_Q4_0 || wtype == VT_Q5_0 || wtype == VT_Q8_0 || wtype == VT_IQ4_NL;
}

/* The f16 at p as f32 (exact) in all lanes. */
VT_X86_FN __m256 x86_half_all(const uint8_t *p)
{
    return _mm256_cvtph_ps(_mm_set1_epi16((short)x86_u16(p)));
}

/* Integer lanes to exact f32. */
VT_X86_FN __m256 x86_f32(__m256i q)
{
    return _mm256_cvtepi32_ps(q);
}

/* Runs per group, affine kind and offset of a q type (the constants of the
 * format table in cpu_quant.c, needed at compile time here). */
VT_X86_FN int x86_runs_of(uint32_t wtype)
{
    return wtype == VT_Q2_K || wtype == VT_Q3_K || wtype == VT_Q6_K ? 2 : 1;
}
VT_X86_FN int x86_affine_of(uint32_t wtype)
{
    switch (wtype) {
    case VT_Q4_0:
    case VT_Q5_0:
    case VT_Q3_K:
    case VT_Q6_K: return VT_CPU_OFFSET;
    case VT_Q4_1:
    case VT_Q5_1:
    case VT_Q2_K:
    case VT_Q4_K:
    case VT_Q5_K: return VT_CPU_MIN;
    default: return VT_CPU_SCALE;
    }
}
VT_X86_FN int x86_offset_of(uint32_t wtype)
{
    switch (wtype) {
    case VT_Q4_0: return 8;
    case VT_Q5_0: return 16;
    case VT_Q3_K: return 4;
    case VT_Q6_K: return 32;
    default: return 0;
    }
}

/* ---- prepare: 32-element formats, one block of each of nw rows ---- */

/* The f16 at byte offset `at` of block b of each row (row i at
 * w[i] + boff), as f32 in lane i. The halves are packed in two 64-bit
 * integers (the integer ports are idle in these loops; the empty asm keeps
 * the compiler from turning the packing into vector shuffles). */
VT_X86_FN __m256 x86_rows_half(const uint8_t *const *w, size_t boff, const int nw, int at)
{
    uint64_t lo = 0, hi = 0;
#pragma GCC unroll 8
    for (int i = 0; i < nw; i++) {
        uint64_t h = x86_u16(w[i] + boff + at);
        __asm__("" : "+r"(h));
        if (i < 4)
            lo |= h << (16 * i);
        else
            hi |= h << (16 * (i - 4));
    }
    return _mm256_cvtph_ps(_mm_set_epi64x((long long)hi, (long long)lo));
}

/* Prepare block b (at byte offset boff) of nw rows of a 32-element format:
 * tab[k][i] = factor k of row i. */
VT_X86_FN void x86_prep_rows(uint32_t wtype, const uint8_t *const *w, size_t boff, const int nw, x86_scales tab)
{
    switch (wtype) {
    case VT_Q4_1:
    case VT_Q5_1:
        _mm256_storeu_ps(tab[0], x86_rows_half(w, boff, nw, 0));
        _mm256_storeu_ps(tab[1], x86_rows_half(w, boff, nw, 2));
        break;
    case VT_MXFP4:
#pragma GCC unroll 8
        for (int i = 0; i < nw; i++)
            tab[0][i] = vt_cpu_e8m0_half(w[i][boff]);
        break;
    default: /* Q4_0, Q5_0, Q8_0, IQ4_NL: d only */ _mm256_storeu_ps(tab[0], x86_rows_half(w, boff, nw, 0)); break;
    }
}

/* ---- prepare: super-blocks, one block of one row ---- */

/* The even and the odd bytes of b16, sign-extended, as two f32 vectors. */
VT_X86_FN void x86_even_odd_s8(__m128i b16, __m256 *even, __m256 *odd)
{
    const __m128i split = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
    __m128i s = _mm_shuffle_epi8(b16, split);
    *even = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(s));
    *odd = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(s, 8)));
}

VT_X86_FN void x86_prep_block(uint32_t wtype, const uint8_t *blk, x86_scales tab)
{
    switch (wtype) {
    case VT_Q2_K: {
        /* scales[2g] (first 16 elements) and scales[2g+1]: scale nibble low,
         * min nibble high; factors dl, -ml for each half */
        const __m256 d = _mm256_set1_ps(_cvtsh_ss(x86_u16(blk + 80)));
        const __m256 nm = _mm256_set1_ps(-_cvtsh_ss(x86_u16(blk + 82)));
        const __m128i b = _mm_loadu_si128((const __m128i *)(const void *)blk), m = _mm_set1_epi8(0xF);
        __m256 sc_e, sc_o, mn_e, mn_o;
        x86_even_odd_s8(_mm_and_si128(b, m), &sc_e, &sc_o);
        x86_even_odd_s8(_mm_and_si128(_mm_srli_epi16(b, 4), m), &mn_e, &mn_o);
        _mm256_storeu_ps(tab[0], _mm256_mul_ps(sc_e, d));
        _mm256_storeu_ps(tab[1], _mm256_mul_ps(mn_e, nm));
        _mm256_storeu_ps(tab[2], _mm256_mul_ps(sc_o, d));
        _mm256_storeu_ps(tab[3], _mm256_mul_ps(mn_o, nm));
        break;
    }
    case VT_Q3_K:
    case VT_Q6_K: {
        /* 16 signed scales, even ones for the first half of each group:
         * Q6_K int8 at 192; Q3_K 6-bit fields minus 32 from the 12 bytes at
         * 96 (cpu_quant.h), word at a time: low nibbles of bytes 0-7 are
         * scales 0-7, their high nibbles scales 8-15, and byte 8 + i%4 holds
         * the top two bits of scale i at shift 2*(i/4) */
        const int q6 = wtype == VT_Q6_K;
        const float dv = _cvtsh_ss(x86_u16(blk + (q6 ? 208 : 108)));
        __m128i b;
        if (q6) {
            b = _mm_loadu_si128((const __m128i *)(const void *)(blk + 192));
        } else {
            const uint32_t w0 = x86_u32(blk + 96), w1 = x86_u32(blk + 100), w2 = x86_u32(blk + 104);
            const uint32_t m4 = 0x0f0f0f0fu, m2 = 0x03030303u;
            b = _mm_setr_epi32((int)((w0 & m4) | ((w2 & m2) << 4)), (int)((w1 & m4) | (((w2 >> 2) & m2) << 4)),
                               (int)(((w0 >> 4) & m4) | (((w2 >> 4) & m2) << 4)),
                               (int)(((w1 >> 4) & m4) | (((w2 >> 6) & m2) << 4)));
            b = _mm_sub_epi8(b, _mm_set1_epi8(32));
        }
        const __m256 d = _mm256_set1_ps(dv);
        __m256 e, o;
        x86_even_odd_s8(b, &e, &o);
        _mm256_storeu_ps(tab[0], _mm256_mul_ps(e, d));
        _mm256_storeu_ps(tab[2], _mm256_mul_ps(o, d));
        break;
    }
    case VT_Q4_K:
    case VT_Q5_K: {
        /* 8 six-bit scales and mins from 12 bytes, word at a time: scales
         * 0-3 = b[0..3] & 63, 4-7 = (b[8..11] & 15) | (b[0..3] >> 6) << 4;
         * mins likewise from b[4..7] and the high nibbles of b[8..11] */
        const uint32_t w0 = x86_u32(blk + 4), w1 = x86_u32(blk + 8), w2 = x86_u32(blk + 12);
        const uint32_t sc_lo = w0 & 0x3f3f3f3fu, mn_lo = w1 & 0x3f3f3f3fu;
        const uint32_t sc_hi = (w2 & 0x0f0f0f0fu) | (((w0 >> 6) & 0x03030303u) << 4);
        const uint32_t mn_hi = ((w2 >> 4) & 0x0f0f0f0fu) | (((w1 >> 6) & 0x03030303u) << 4);
        const __m256 d = _mm256_set1_ps(_cvtsh_ss(x86_u16(blk))), nm = _mm256_set1_ps(-_cvtsh_ss(x86_u16(blk + 2)));
        _mm256_storeu_ps(tab[0], _mm256_mul_ps(x86_u8x8_ps(sc_lo | (uint64_t)sc_hi << 32), d));
        _mm256_storeu_ps(tab[1], _mm256_mul_ps(x86_u8x8_ps(mn_lo | (uint64_t)mn_hi << 32), nm));
        break;
    }
    case VT_IQ4_XS: {
        /* ls[g] = nibble g%2 of scales_l[g/2] | (bits 2g, 2g+1 of scales_h) << 4 */
        const uint32_t h = x86_u16(blk + 2), l = x86_u32(blk + 4);
        uint64_t ls = 0;
#pragma GCC unroll 8
        for (int g = 0; g < 8; g++)
            ls |= (uint64_t)(((l >> (4 * g)) & 0xF) | (((h >> (2 * g)) & 3) << 4)) << (8 * g);
        const __m256 v = _mm256_sub_ps(x86_u8x8_ps(ls), _mm256_set1_ps(32.0f));
        _mm256_storeu_ps(tab[0], _mm256_mul_ps(v, _mm256_set1_ps(_cvtsh_ss(x86_u16(blk)))));
        break;
    }
    default: break;
    }
}

/* ---- group decoders: codes ---- */

/* Codes of 16 nibble pairs at qs (low nibbles first). */
VT_X86_FN void x86_nibbles(const uint8_t *qs, __m256 c[4])
{
    const __m256i lo = x86_u8x8(qs), hi = x86_u8x8(qs + 8), m = _mm256_set1_epi32(0xF);
    c[0] = x86_f32(_mm256_and_si256(lo, m));
    c[1] = x86_f32(_mm256_and_si256(hi, m));
    c[2] = x86_f32(_mm256_srli_epi32(lo, 4));
    c[3] = x86_f32(_mm256_srli_epi32(hi, 4));
}

/* The 5-bit codes of a Q5 block: nibbles | (bit j of qh) << 4. */
VT_X86_FN void x86_q5_codes(const uint8_t *qh, const uint8_t *qs, __m256 c[4])
{
    const __m256i hv = _mm256_set1_epi32((int)x86_u32(qh)), m = _mm256_set1_epi32(0xF);
    const __m256i lo = x86_u8x8(qs), hi = x86_u8x8(qs + 8);
    const __m256i nib[4] = {_mm256_and_si256(lo, m), _mm256_and_si256(hi, m), _mm256_srli_epi32(lo, 4),
                            _mm256_srli_epi32(hi, 4)};
#pragma GCC unroll 8
    for (int i = 0; i < 4; i++) {
        /* bit 8i+l of qh moved to bit 4 of lane l */
        __m256i s =
            _mm256_setr_epi32(8 * i, 8 * i + 1, 8 * i + 2, 8 * i + 3, 8 * i + 4, 8 * i + 5, 8 * i + 6, 8 * i + 7);
        __m256i hb = _mm256_slli_epi32(_mm256_and_si256(_mm256_srlv_epi32(hv, s), _mm256_set1_epi32(1)), 4);
        c[i] = x86_f32(_mm256_or_si256(nib[i], hb));
    }
}

/* 16 nibble pairs at qs through a 16-entry int8 code book. */
VT_X86_FN void x86_codebook(const uint8_t *qs, const int8_t *book, __m256 c[4])
{
    const __m128i bytes = _mm_loadu_si128((const __m128i *)(const void *)qs), m = _mm_set1_epi8(0xF);
    const __m128i tab = _mm_loadu_si128((const __m128i *)(const void *)book);
    const __m128i lo = _mm_shuffle_epi8(tab, _mm_and_si128(bytes, m));
    const __m128i hi = _mm_shuffle_epi8(tab, _mm_and_si128(_mm_srli_epi16(bytes, 4), m));
    c[0] = x86_f32(_mm256_cvtepi8_epi32(lo));
    c[1] = x86_f32(_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8)));
    c[2] = x86_f32(_mm256_cvtepi8_epi32(hi));
    c[3] = x86_f32(_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8)));
}

/* The codes of group sub of the block at blk of q type wtype (a constant
 * after inlining, so the switch folds away). */
VT_X86_FN void x86_codes(uint32_t wtype, const uint8_t *blk, int sub, __m256 c[4])
{
    switch (wtype) {
    case VT_Q4_0: x86_nibbles(blk + 2, c); break;
    case VT_Q4_1: x86_nibbles(blk + 4, c); break;
    case VT_Q5_0: x86_q5_codes(blk + 2, blk + 6, c); break;
    case VT_Q5_1: x86_q5_codes(blk + 4, blk + 8, c); break;
    case VT_Q8_0:
#pragma GCC unroll 8
        for (int i = 0; i < 4; i++)
            c[i] = x86_f32(x86_s8x8(blk + 2 + 8 * i));
        break;
    case VT_Q2_K:
    case VT_Q3_K: {
        const uint8_t *q = blk + (wtype == VT_Q3_K ? 32 : 16) + 32 * (sub >> 2);
        const int shift = 2 * (sub & 3);
#pragma GCC unroll 8
        for (int i = 0; i < 4; i++) {
            __m256i v = x86_field(x86_u8x8(q + 8 * i), shift, 3);
            if (wtype == VT_Q3_K)
                v = _mm256_or_si256(v, _mm256_slli_epi32(x86_field(x86_u8x8(blk + 8 * i), sub, 1), 2));
            c[i] = x86_f32(v);
        }
        break;
    }
    case VT_Q4_K:
    case VT_Q5_K: {
        const uint8_t *q = blk + (wtype == VT_Q5_K ? 48 : 16) + 32 * (sub >> 1);
        const int shift = 4 * (sub & 1);
#pragma GCC unroll 8
        for (int i = 0; i < 4; i++) {
            __m256i v = x86_field(x86_u8x8(q + 8 * i), shift, 0xF);
            if (wtype == VT_Q5_K)
                v = _mm256_or_si256(v, _mm256_slli_epi32(x86_field(x86_u8x8(blk + 16 + 8 * i), sub, 1), 4));
            c[i] = x86_f32(v);
        }
        break;
    }
    case VT_Q6_K: {
        const int h = sub >> 2, r = sub & 3;
        const uint8_t *ql = blk + 64 * h + 32 * (r & 1), *qh = blk + 128 + 32 * h;
        const int lshift = r >= 2 ? 4 : 0, hshift = 2 * r;
#pragma GCC unroll 8
        for (int i = 0; i < 4; i++) {
            __m256i lo = x86_field(x86_u8x8(ql + 8 * i), lshift, 0xF);
            __m256i hi = x86_field(x86_u8x8(qh + 8 * i), hshift, 3);
            c[i] = x86_f32(_mm256_or_si256(lo, _mm256_slli_epi32(hi, 4)));
        }
        break;
    }
    case VT_IQ4_NL: x86_codebook(blk + 2, vt_cpu_kvalues_iq4nl, c); break;
    case VT_IQ4_XS: x86_codebook(blk + 8 + 16 * sub, vt_cpu_kvalues_iq4nl, c); break;
    case VT_MXFP4: x86_codebook(blk + 1, vt_cpu_kvalues_mxfp4, c); break;
    default: c[0] = c[1] = c[2] = c[3] = _mm256_setzero_ps(); break;
    }
}

/* The exact decoded values of a group from its codes and factors a (see
 * the top): vector i belongs to run i / (4 / runs). */
VT_X86_FN void x86_apply(uint32_t wtype, const __m256 c[4], const float *a, __m256 v[4])
{
    const int runs = x86_runs_of(wtype), affine = x86_affine_of(wtype);
    const __m256 o = _mm256_set1_ps((float)x86_offset_of(wtype));
#pragma GCC unroll 8
    for (int i = 0; i < 4; i++) {
        const int r = runs == 2 ? i >> 1 : 0;
        const __m256 s = x86_factor(a, 2 * r);
        if (affine == VT_CPU_OFFSET)
            v[i] = _mm256_mul_ps(_mm256_sub_ps(c[i], o), s);
        else if (affine == VT_CPU_MIN)
            v[i] = _mm256_fmadd_ps(c[i], s, x86_factor(a, 2 * r + 1));
        else
            v[i] = _mm256_mul_ps(c[i], s);
    }
}

/* 8 elements of a dense weight row (f32, f16 or bf16) at element j. */
VT_X86_FN __m256 x86_load_dense(uint32_t wtype, const uint8_t *w, int64_t j)
{
    switch (wtype) {
    case VT_F16: return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(w + 2 * j)));
    case VT_BF16:
        return _mm256_castsi256_ps(
            _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(w + 2 * j))), 16));
    default: return _mm256_loadu_ps((const float *)(const void *)(w + 4 * j));
    }
}

/* The canonical tree over the 8 lanes of s. */
VT_X86_FN float x86_lane_tree(__m256 s)
{
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1)); /* s0+s4 .. s3+s7 */
    __m128 p = _mm_add_ps(q, _mm_movehl_ps(q, q)); /* (s0+s4)+(s2+s6), (s1+s5)+(s3+s7) */
    return _mm_cvtss_f32(_mm_add_ss(p, _mm_shuffle_ps(p, p, 1)));
}

/* 8 f32 lanes rounded to bf16 (nearest even; NaN stays NaN), as 32-bit
 * lanes holding the 16-bit results. */
VT_X86_FN __m256i x86_bf16_bits(__m256 v)
{
    const __m256i x = _mm256_castps_si256(v);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
    const __m256i rounded =
        _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), lsb), 16);
    const __m256i nan = _mm256_or_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(0x40));
    const __m256i abs = _mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff));
    const __m256i is_nan = _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(0x7f800000));
    return _mm256_blendv_epi8(rounded, nan, is_nan);
}

/* Store 32 f32 values v[0..3] at dst element o as f32, f16 or bf16. */
VT_X86_FN void x86_store_group(const __m256 v[4], void *dst, int64_t o, uint32_t dst_type)
{
    if (dst_type == VT_F32) {
        float *d = (float *)dst + o;
#pragma GCC unroll 8
        for (int i = 0; i < 4; i++)
            _mm256_storeu_ps(d + 8 * i, v[i]);
    } else if (dst_type == VT_F16) {
        uint16_t *d = (uint16_t *)dst + o;
#pragma GCC unroll 8
        for (int i = 0; i < 4; i++)
            _mm_storeu_si128((__m128i *)(void *)(d + 8 * i),
                             _mm256_cvtps_ph(v[i], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    } else {
        uint16_t *d = (uint16_t *)dst + o;
#pragma GCC unroll 8
        for (int i = 0; i < 4; i += 2) {
            __m256i p = _mm256_packus_epi32(x86_bf16_bits(v[i]), x86_bf16_bits(v[i + 1]));
            _mm256_storeu_si256((__m256i *)(void *)(d + 8 * i), _mm256_permute4x64_epi64(p, 0xD8));
        }
    }
}

/* 8 elements of an f32/f16/bf16 array at element i as f32 (exact). */
VT_X86_FN __m256 x86_load8(uint32_t type, const void *p, int64_t i)
{
    return x86_load_dense(type, (const uint8_t *)p, i);
}

/* Store 8 f32 lanes at element i of an f32/f16/bf16 array (nearest even). */
VT_X86_FN void x86_store8(uint32_t type, void *p, int64_t i, __m256 v)
{
    if (type == VT_F32) {
        _mm256_storeu_ps((float *)p + i, v);
    } else if (type == VT_F16) {
        _mm_storeu_si128((__m128i *)(void *)((uint16_t *)p + i),
                         _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    } else {
        __m256i b = x86_bf16_bits(v);
        __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
        _mm_storeu_si128((__m128i *)(void *)((uint16_t *)p + i), packed);
    }
}

/* Cast n elements between f32/f16/bf16: 8 at a time, the rest through the
 * portable conversion (the same bits). */
VT_X86_FN void x86_convert(uint32_t src_type, const void *src, int64_t n, void *dst, uint32_t dst_type)
{
    if (src_type == dst_type) {
        vt_cpu_convert_scalar(src_type, src, n, dst, dst_type);
        return;
    }
    const int64_t n8 = n & ~(int64_t)7;
    for (int64_t i = 0; i < n8; i += 8)
        x86_store8(dst_type, dst, i, x86_load8(src_type, src, i));
    const size_t ss = src_type == VT_F32 ? 4 : 2, ds = dst_type == VT_F32 ? 4 : 2;
    vt_cpu_convert_scalar(src_type, (const uint8_t *)src + (size_t)n8 * ss, n - n8, (uint8_t *)dst + (size_t)n8 * ds,
                          dst_type);
}

#endif
