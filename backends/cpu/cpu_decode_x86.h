/* cpu_decode_x86.h - x86 SIMD block decoders: one 32-element group of any
 * weight format into four 8-lane f32 vectors (elements 0-7, 8-15, 16-23,
 * 24-31), bit-identical to the scalar decoders of cpu_quant_*.c.
 *
 * Included by the AVX2 and AVX-512 path files, each of which first defines
 * VT_X86_FN as "static inline" with its own target attribute, so the same
 * decoders compile into both paths. Integer fields are widened to 32-bit
 * lanes, converted exactly to f32 and scaled: d*q is exact in f32 (see
 * cpu_quant.h), so fma(q, d, m) with a minimum m rounds once, exactly as the
 * scalar d*q + m does.
 *
 * Formats with an offset (x = d*(q-8), d*(q-16), d*(q-4), d*(q-32)) have two
 * modes. EXACT computes float(q-o)*d, which is the scalar value bit for bit
 * including the sign of a zero (q = o with d < 0 gives -0); Dequantize and
 * GetRows store it. The dot mode computes fma(q, d, -o*d): the same real
 * number in one instruction fewer, but +0 where EXACT gives -0. Inside the
 * canonical dot that cannot change a bit: a lane sum starts at +0 and is
 * never -0 (an exact zero sum rounds to +0), and s + (+0) == s + (-0) for
 * every s that is not -0. */
#ifndef VT_CPU_DECODE_X86_H
#define VT_CPU_DECODE_X86_H

#include <immintrin.h>
#include <string.h>

#include "cpu_quant.h"

#ifndef VT_X86_FN
#error "define VT_X86_FN (static inline with a target attribute) before including cpu_decode_x86.h"
#endif

/* An f16 at p broadcast to 8 lanes. */
VT_X86_FN __m256 x86_half_bcast(const uint8_t *p)
{
    uint16_t h;
    memcpy(&h, p, sizeof h);
    return _mm256_set1_ps(_cvtsh_ss(h));
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

/* (a >> s) & mask per 32-bit lane, s a run-time count. */
VT_X86_FN __m256i x86_field(__m256i a, int s, int mask)
{
    return _mm256_and_si256(_mm256_srl_epi32(a, _mm_cvtsi32_si128(s)), _mm256_set1_epi32(mask));
}

/* fma(float(q), d, c) per lane. */
VT_X86_FN __m256 x86_scale(__m256i q, __m256 d, __m256 c)
{
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(q), d, c);
}

/* d * (q - o) per lane: float(q - o) * d when exact (the sign of a zero
 * follows d), else fma(float(q), d, -o*d) (see the note above). */
VT_X86_FN __m256 x86_offset_scale(__m256i q, int o, __m256 d, const int exact)
{
    if (exact)
        return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(q, _mm256_set1_epi32(o))), d);
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(q), d, _mm256_mul_ps(d, _mm256_set1_ps((float)-o)));
}

/* ---- 32-element linear formats ---- */

VT_X86_FN void x86_dec_q4_0(const uint8_t *blk, __m256 v[4], const int exact)
{
    const __m256 d = x86_half_bcast(blk);
    const __m256i a = x86_u8x8(blk + 2), b = x86_u8x8(blk + 10), m = _mm256_set1_epi32(0xF);
    v[0] = x86_offset_scale(_mm256_and_si256(a, m), 8, d, exact);
    v[1] = x86_offset_scale(_mm256_and_si256(b, m), 8, d, exact);
    v[2] = x86_offset_scale(_mm256_srli_epi32(a, 4), 8, d, exact);
    v[3] = x86_offset_scale(_mm256_srli_epi32(b, 4), 8, d, exact);
}

VT_X86_FN void x86_dec_q4_1(const uint8_t *blk, __m256 v[4])
{
    const __m256 d = x86_half_bcast(blk), mn = x86_half_bcast(blk + 2);
    const __m256i a = x86_u8x8(blk + 4), b = x86_u8x8(blk + 12), m = _mm256_set1_epi32(0xF);
    v[0] = x86_scale(_mm256_and_si256(a, m), d, mn);
    v[1] = x86_scale(_mm256_and_si256(b, m), d, mn);
    v[2] = x86_scale(_mm256_srli_epi32(a, 4), d, mn);
    v[3] = x86_scale(_mm256_srli_epi32(b, 4), d, mn);
}

/* The 5-bit values of a Q5 block: nibbles | (bit j of qh) << 4. */
VT_X86_FN void x86_q5_values(const uint8_t *qh, const uint8_t *qs, __m256i q[4])
{
    uint32_t h;
    memcpy(&h, qh, sizeof h);
    const __m256i hv = _mm256_set1_epi32((int)h), m = _mm256_set1_epi32(0xF), bit = _mm256_set1_epi32(0x10);
    const __m256i a = x86_u8x8(qs), b = x86_u8x8(qs + 8);
    const __m256i nib[4] = {_mm256_and_si256(a, m), _mm256_and_si256(b, m), _mm256_srli_epi32(a, 4),
                            _mm256_srli_epi32(b, 4)};
    for (int i = 0; i < 4; i++) {
        __m256i sh =
            _mm256_setr_epi32(8 * i, 8 * i + 1, 8 * i + 2, 8 * i + 3, 8 * i + 4, 8 * i + 5, 8 * i + 6, 8 * i + 7);
        __m256i hb = _mm256_and_si256(_mm256_slli_epi32(_mm256_srlv_epi32(hv, sh), 4), bit);
        q[i] = _mm256_or_si256(nib[i], hb);
    }
}

VT_X86_FN void x86_dec_q5_0(const uint8_t *blk, __m256 v[4], const int exact)
{
    const __m256 d = x86_half_bcast(blk);
    __m256i q[4];
    x86_q5_values(blk + 2, blk + 6, q);
    for (int i = 0; i < 4; i++)
        v[i] = x86_offset_scale(q[i], 16, d, exact);
}

VT_X86_FN void x86_dec_q5_1(const uint8_t *blk, __m256 v[4])
{
    const __m256 d = x86_half_bcast(blk), mn = x86_half_bcast(blk + 2);
    __m256i q[4];
    x86_q5_values(blk + 4, blk + 8, q);
    for (int i = 0; i < 4; i++)
        v[i] = x86_scale(q[i], d, mn);
}

VT_X86_FN void x86_dec_q8_0(const uint8_t *blk, __m256 v[4])
{
    const __m256 d = x86_half_bcast(blk);
    for (int i = 0; i < 4; i++)
        v[i] = _mm256_mul_ps(_mm256_cvtepi32_ps(x86_s8x8(blk + 2 + 8 * i)), d);
}

/* ---- code books ---- */

/* 16 nibble pairs at qs through a 16-entry int8 code book, times d. */
VT_X86_FN void x86_codebook(const uint8_t *qs, const int8_t *book, __m256 d, __m256 v[4])
{
    const __m128i bytes = _mm_loadu_si128((const __m128i *)(const void *)qs), m = _mm_set1_epi8(0xF);
    const __m128i tab = _mm_loadu_si128((const __m128i *)(const void *)book);
    const __m128i lo = _mm_shuffle_epi8(tab, _mm_and_si128(bytes, m));
    const __m128i hi = _mm_shuffle_epi8(tab, _mm_and_si128(_mm_srli_epi16(bytes, 4), m));
    v[0] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lo)), d);
    v[1] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8))), d);
    v[2] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(hi)), d);
    v[3] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8))), d);
}

VT_X86_FN void x86_dec_iq4_nl(const uint8_t *blk, __m256 v[4])
{
    x86_codebook(blk + 2, vt_cpu_kvalues_iq4nl, x86_half_bcast(blk), v);
}

VT_X86_FN void x86_dec_mxfp4(const uint8_t *blk, __m256 v[4])
{
    x86_codebook(blk + 1, vt_cpu_kvalues_mxfp4, _mm256_set1_ps(vt_cpu_e8m0_half(blk[0])), v);
}

VT_X86_FN void x86_dec_iq4_xs(const uint8_t *blk, int sub, __m256 v[4])
{
    const int scales_h = blk[2] | (blk[3] << 8);
    const int ls = ((blk[4 + sub / 2] >> (4 * (sub % 2))) & 0xF) | (((scales_h >> (2 * sub)) & 3) << 4);
    uint16_t h;
    memcpy(&h, blk, sizeof h);
    x86_codebook(blk + 8 + 16 * sub, vt_cpu_kvalues_iq4nl, _mm256_set1_ps(_cvtsh_ss(h) * (float)(ls - 32)), v);
}

/* ---- K-quants (group layouts in cpu_quant_kquants.c) ---- */

VT_X86_FN void x86_dec_q2_k(const uint8_t *blk, int sub, __m256 v[4])
{
    uint16_t hd, hm;
    memcpy(&hd, blk + 80, 2);
    memcpy(&hm, blk + 82, 2);
    const float d = _cvtsh_ss(hd), dmin = _cvtsh_ss(hm);
    const uint8_t *q = blk + 16 + 32 * (sub >> 2);
    const int shift = 2 * (sub & 3);
    for (int half = 0; half < 2; half++) {
        const uint8_t sc = blk[2 * sub + half];
        const __m256 dl = _mm256_set1_ps(d * (float)(sc & 0xF)), ml = _mm256_set1_ps(-(dmin * (float)(sc >> 4)));
        v[2 * half] = x86_scale(x86_field(x86_u8x8(q + 16 * half), shift, 3), dl, ml);
        v[2 * half + 1] = x86_scale(x86_field(x86_u8x8(q + 16 * half + 8), shift, 3), dl, ml);
    }
}

VT_X86_FN void x86_dec_q3_k(const uint8_t *blk, int sub, __m256 v[4], const int exact)
{
    uint16_t hd;
    memcpy(&hd, blk + 108, 2);
    const float d = _cvtsh_ss(hd);
    const uint8_t *q = blk + 32 + 32 * (sub >> 2);
    const int shift = 2 * (sub & 3);
    for (int half = 0; half < 2; half++) {
        const __m256 dl = _mm256_set1_ps(d * (float)vt_cpu_q3k_scale(blk + 96, 2 * sub + half));
        for (int i = 2 * half; i < 2 * half + 2; i++) {
            __m256i lo = x86_field(x86_u8x8(q + 8 * i), shift, 3);
            __m256i hb = x86_field(x86_u8x8(blk + 8 * i), sub, 1);
            v[i] = x86_offset_scale(_mm256_or_si256(lo, _mm256_slli_epi32(hb, 2)), 4, dl, exact);
        }
    }
}

/* d*scale and -dmin*min of group sub of a Q4_K/Q5_K block. */
VT_X86_FN void x86_kquant_scales(const uint8_t *blk, int sub, __m256 *d1, __m256 *m1)
{
    uint16_t hd, hm;
    memcpy(&hd, blk, 2);
    memcpy(&hm, blk + 2, 2);
    uint8_t sc, mn;
    vt_cpu_kquant_scale_min(blk + 4, sub, &sc, &mn);
    *d1 = _mm256_set1_ps(_cvtsh_ss(hd) * (float)sc);
    *m1 = _mm256_set1_ps(-(_cvtsh_ss(hm) * (float)mn));
}

VT_X86_FN void x86_dec_q4_k(const uint8_t *blk, int sub, __m256 v[4])
{
    __m256 d1, m1;
    x86_kquant_scales(blk, sub, &d1, &m1);
    const uint8_t *q = blk + 16 + 32 * (sub >> 1);
    const int shift = 4 * (sub & 1);
    for (int i = 0; i < 4; i++)
        v[i] = x86_scale(x86_field(x86_u8x8(q + 8 * i), shift, 0xF), d1, m1);
}

VT_X86_FN void x86_dec_q5_k(const uint8_t *blk, int sub, __m256 v[4])
{
    __m256 d1, m1;
    x86_kquant_scales(blk, sub, &d1, &m1);
    const uint8_t *q = blk + 48 + 32 * (sub >> 1);
    const int shift = 4 * (sub & 1);
    for (int i = 0; i < 4; i++) {
        __m256i lo = x86_field(x86_u8x8(q + 8 * i), shift, 0xF);
        __m256i hb = x86_field(x86_u8x8(blk + 16 + 8 * i), sub, 1);
        v[i] = x86_scale(_mm256_or_si256(lo, _mm256_slli_epi32(hb, 4)), d1, m1);
    }
}

VT_X86_FN void x86_dec_q6_k(const uint8_t *blk, int sub, __m256 v[4], const int exact)
{
    uint16_t hd;
    memcpy(&hd, blk + 208, 2);
    const float d = _cvtsh_ss(hd);
    const int h = sub >> 2, r = sub & 3;
    const uint8_t *ql = blk + 64 * h + 32 * (r & 1), *qh = blk + 128 + 32 * h;
    const int8_t *scales = (const int8_t *)(blk + 192) + 8 * h + 2 * r;
    const int lshift = r >= 2 ? 4 : 0, hshift = 2 * r;
    for (int half = 0; half < 2; half++) {
        const __m256 ds = _mm256_set1_ps(d * (float)scales[half]);
        for (int i = 2 * half; i < 2 * half + 2; i++) {
            __m256i lo = x86_field(x86_u8x8(ql + 8 * i), lshift, 0xF);
            __m256i hi = x86_field(x86_u8x8(qh + 8 * i), hshift, 3);
            v[i] = x86_offset_scale(_mm256_or_si256(lo, _mm256_slli_epi32(hi, 4)), 32, ds, exact);
        }
    }
}

/* Group sub of the block at blk of q type wtype (a constant after
 * inlining, so the switch folds away); exact: see the note at the top. */
VT_X86_FN void x86_decode_group(uint32_t wtype, const uint8_t *blk, int sub, __m256 v[4], const int exact)
{
    switch (wtype) {
    case VT_Q4_0: x86_dec_q4_0(blk, v, exact); break;
    case VT_Q4_1: x86_dec_q4_1(blk, v); break;
    case VT_Q5_0: x86_dec_q5_0(blk, v, exact); break;
    case VT_Q5_1: x86_dec_q5_1(blk, v); break;
    case VT_Q8_0: x86_dec_q8_0(blk, v); break;
    case VT_Q2_K: x86_dec_q2_k(blk, sub, v); break;
    case VT_Q3_K: x86_dec_q3_k(blk, sub, v, exact); break;
    case VT_Q4_K: x86_dec_q4_k(blk, sub, v); break;
    case VT_Q5_K: x86_dec_q5_k(blk, sub, v); break;
    case VT_Q6_K: x86_dec_q6_k(blk, sub, v, exact); break;
    case VT_IQ4_NL: x86_dec_iq4_nl(blk, v); break;
    case VT_IQ4_XS: x86_dec_iq4_xs(blk, sub, v); break;
    case VT_MXFP4: x86_dec_mxfp4(blk, v); break;
    default: v[0] = v[1] = v[2] = v[3] = _mm256_setzero_ps(); break;
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
        for (int i = 0; i < 4; i++)
            _mm256_storeu_ps(d + 8 * i, v[i]);
    } else if (dst_type == VT_F16) {
        uint16_t *d = (uint16_t *)dst + o;
        for (int i = 0; i < 4; i++)
            _mm_storeu_si128((__m128i *)(void *)(d + 8 * i),
                             _mm256_cvtps_ph(v[i], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    } else {
        uint16_t *d = (uint16_t *)dst + o;
        for (int i = 0; i < 4; i += 2) {
            __m256i p = _mm256_packus_epi32(x86_bf16_bits(v[i]), x86_bf16_bits(v[i + 1]));
            _mm256_storeu_si256((__m256i *)(void *)(d + 8 * i), _mm256_permute4x64_epi64(p, 0xD8));
        }
    }
}

#endif
