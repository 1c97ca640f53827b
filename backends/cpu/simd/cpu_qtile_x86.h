/* cpu_qtile_x86.h - x86 templates of the int16-activation path (cpu_qx.h):
 * the quantization of activation rows, the weight codes widened to int16
 * (elements 0-15 and 16-31 of a group in two 16-lane vectors), and the tile
 * of NW weight rows x NX quantized activation rows.
 *
 * Included by the AVX2, AVX-512 and AVX-512 VNNI path files (after
 * cpu_tile_x86.h, whose helpers it uses) once each has defined VT_X86_FN (static inline with its target attribute) and
 * X86_DP16(acc, a, b): acc + the pairwise int16 products of a and b summed
 * into 32-bit lanes (vpdpwssd, or vpmaddwd + vpaddd). Both are exact
 * integer arithmetic on the ranges used here, so every variant gives the
 * scalar path's bits. */
#ifndef VT_CPU_QTILE_X86_H
#define VT_CPU_QTILE_X86_H

#include "cpu_qx.h"
#include "cpu_tile_x86.h"

#ifndef X86_DP16
#error "define X86_DP16(acc, a, b) before including cpu_qtile_x86.h"
#endif

/* Quantize one activation row (cpu_qx.h): the same bits as
 * vt_cpu_qx_quantize_scalar (exact max, one f32 product, nearest even). */
VT_X86_FN void x86_qx_quantize(const float *x, int64_t k, int16_t *q, float *dx)
{
    const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff);
    for (int64_t g = 0; g < k / VT_CPU_GROUP; g++, x += VT_CPU_GROUP, q += VT_CPU_GROUP) {
        __m256 v[4];
        __m256i m = _mm256_setzero_si256();
#pragma GCC unroll 4
        for (int i = 0; i < 4; i++) {
            v[i] = _mm256_loadu_ps(x + 8 * i);
            m = _mm256_max_epu32(m, _mm256_and_si256(_mm256_castps_si256(v[i]), abs_mask));
        }
        __m128i h = _mm_max_epu32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
        h = _mm_max_epu32(h, _mm_shuffle_epi32(h, 0x4E));
        h = _mm_max_epu32(h, _mm_shuffle_epi32(h, 0xB1));
        float inv;
        vt_cpu_qx_scale((uint32_t)_mm_cvtsi128_si32(h), &dx[g], &inv);
        if (inv == 0.0f) {
            _mm256_storeu_si256((__m256i *)(void *)q, _mm256_setzero_si256());
            _mm256_storeu_si256((__m256i *)(void *)(q + 16), _mm256_setzero_si256());
            continue;
        }
        const __m256 s = _mm256_set1_ps(inv);
#pragma GCC unroll 2
        for (int i = 0; i < 4; i += 2) {
            __m256i a = _mm256_cvtps_epi32(_mm256_mul_ps(v[i], s)), b = _mm256_cvtps_epi32(_mm256_mul_ps(v[i + 1], s));
            _mm256_storeu_si256((__m256i *)(void *)(q + 8 * i),
                                _mm256_permute4x64_epi64(_mm256_packs_epi32(a, b), 0xD8));
        }
    }
}

/* 16 bytes at p widened to 16 int16 lanes (zero- or sign-extended). */
VT_X86_FN __m256i x86_u8x16(const uint8_t *p)
{
    return _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)p));
}
VT_X86_FN __m256i x86_s8x16(const uint8_t *p)
{
    return _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)p));
}

/* (a >> s) & mask per 16-bit lane, s a run-time count. */
VT_X86_FN __m256i x86_field16(__m256i a, int s, int mask)
{
    return _mm256_and_si256(_mm256_srl_epi16(a, _mm_cvtsi32_si128(s)), _mm256_set1_epi16((short)mask));
}

/* Bit j of the 16-bit h in int16 lane j, as `bit` or 0. */
VT_X86_FN __m256i x86_bits16(uint32_t h, short bit)
{
    const __m256i m =
        _mm256_setr_epi16(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, (short)-32768);
    const __m256i v = _mm256_and_si256(_mm256_set1_epi16((short)h), m);
    return _mm256_and_si256(_mm256_cmpeq_epi16(v, m), _mm256_set1_epi16(bit));
}

/* 16 nibble pairs at qs through a 16-entry int8 code book, as int16. */
VT_X86_FN void x86_codebook16(const uint8_t *qs, const int8_t *book, __m256i c[2])
{
    const __m128i bytes = _mm_loadu_si128((const __m128i *)(const void *)qs), m = _mm_set1_epi8(0xF);
    const __m128i tab = _mm_loadu_si128((const __m128i *)(const void *)book);
    c[0] = _mm256_cvtepi8_epi16(_mm_shuffle_epi8(tab, _mm_and_si128(bytes, m)));
    c[1] = _mm256_cvtepi8_epi16(_mm_shuffle_epi8(tab, _mm_and_si128(_mm_srli_epi16(bytes, 4), m)));
}

/* The codes of group sub of the block at blk (the group form's c, before
 * any offset) as int16: c[0] elements 0-15, c[1] elements 16-31. */
VT_X86_FN void x86_codes16(uint32_t wtype, const uint8_t *blk, int sub, __m256i c[2])
{
    switch (wtype) {
    case VT_Q4_0:
    case VT_Q4_1: {
        const __m256i w = x86_u8x16(blk + (wtype == VT_Q4_1 ? 4 : 2));
        c[0] = _mm256_and_si256(w, _mm256_set1_epi16(0xF));
        c[1] = _mm256_srli_epi16(w, 4);
        break;
    }
    case VT_Q5_0:
    case VT_Q5_1: {
        const uint8_t *qh = blk + (wtype == VT_Q5_1 ? 4 : 2);
        const uint32_t h = x86_u32(qh);
        const __m256i w = x86_u8x16(qh + 4);
        c[0] = _mm256_or_si256(_mm256_and_si256(w, _mm256_set1_epi16(0xF)), x86_bits16(h & 0xFFFF, 16));
        c[1] = _mm256_or_si256(_mm256_srli_epi16(w, 4), x86_bits16(h >> 16, 16));
        break;
    }
    case VT_Q8_0:
        c[0] = x86_s8x16(blk + 2);
        c[1] = x86_s8x16(blk + 18);
        break;
    case VT_Q2_K:
    case VT_Q3_K: {
        const uint8_t *q = blk + (wtype == VT_Q3_K ? 32 : 16) + 32 * (sub >> 2);
        const int shift = 2 * (sub & 3);
#pragma GCC unroll 2
        for (int i = 0; i < 2; i++) {
            __m256i v = x86_field16(x86_u8x16(q + 16 * i), shift, 3);
            if (wtype == VT_Q3_K)
                v = _mm256_or_si256(v, _mm256_slli_epi16(x86_field16(x86_u8x16(blk + 16 * i), sub, 1), 2));
            c[i] = v;
        }
        break;
    }
    case VT_Q4_K:
    case VT_Q5_K: {
        const uint8_t *q = blk + (wtype == VT_Q5_K ? 48 : 16) + 32 * (sub >> 1);
        const int shift = 4 * (sub & 1);
#pragma GCC unroll 2
        for (int i = 0; i < 2; i++) {
            __m256i v = x86_field16(x86_u8x16(q + 16 * i), shift, 0xF);
            if (wtype == VT_Q5_K)
                v = _mm256_or_si256(v, _mm256_slli_epi16(x86_field16(x86_u8x16(blk + 16 + 16 * i), sub, 1), 4));
            c[i] = v;
        }
        break;
    }
    case VT_Q6_K: {
        const int h = sub >> 2, r = sub & 3;
        const uint8_t *ql = blk + 64 * h + 32 * (r & 1), *qh = blk + 128 + 32 * h;
        const int lshift = r >= 2 ? 4 : 0, hshift = 2 * r;
#pragma GCC unroll 2
        for (int i = 0; i < 2; i++)
            c[i] = _mm256_or_si256(x86_field16(x86_u8x16(ql + 16 * i), lshift, 0xF),
                                   _mm256_slli_epi16(x86_field16(x86_u8x16(qh + 16 * i), hshift, 3), 4));
        break;
    }
    case VT_IQ4_NL: x86_codebook16(blk + 2, vt_cpu_kvalues_iq4nl, c); break;
    case VT_IQ4_XS: x86_codebook16(blk + 8 + 16 * sub, vt_cpu_kvalues_iq4nl, c); break;
    case VT_MXFP4: x86_codebook16(blk + 1, vt_cpu_kvalues_mxfp4, c); break;
    default: c[0] = c[1] = _mm256_setzero_si256(); break;
    }
}

/* A tile of q weight rows against quantized activation rows, in the order
 * of cpu_qx.h: per block, the factors of every (activation row, weight
 * row) as a[r] * dx and m[r] * dx; per group and activation row, the
 * activation codes and the offset starts -o*X (or the sums X as f32 for
 * formats with a minimum), shared by the NW weight rows; per weight row its
 * codes, the integer lane sums of each run and one fma per run (two with a
 * minimum). */
VT_X86_FN void x86_qtile(vt_cpu_tile *t, const uint32_t wtype, const int NW, const int NX)
{
    const uint8_t *w[VT_CPU_TILE_W];
    const int16_t *xq[VT_CPU_TILE_X];
    const float *xd[VT_CPU_TILE_X];
    __m256 acc[VT_CPU_TILE_X][VT_CPU_TILE_W];
    x86_scales tab[VT_CPU_TILE_W];
    /* ft[r][i][k][g] (super-blocks) or ft[r][0][k][i]: factor k times dx */
    float ft[VT_CPU_TILE_X][VT_CPU_TILE_W][4][8] __attribute__((aligned(32)));
    const int G = x86_groups_of(wtype), R = x86_runs_of(wtype), A = x86_affine_of(wtype);
    const short neg_o = (short)-x86_offset_of(wtype);
    {
        const int lw = t->nw > 1 ? t->nw - 1 : 0, lx = t->nx > 1 ? t->nx - 1 : 0;
        for (int i = 0; i < NW; i++)
            w[i] = t->w[i < lw ? i : lw];
        for (int r = 0; r < NX; r++) {
            xq[r] = t->xq[r < lx ? r : lx];
            xd[r] = t->xd[r < lx ? r : lx];
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < NX; r++)
#pragma GCC unroll 8
        for (int i = 0; i < NW; i++)
            acc[r][i] = _mm256_setzero_ps();
    const int64_t nblocks = t->k / ((int64_t)G * VT_CPU_GROUP);
    const size_t bb = t->block_bytes;
    const int64_t pf = (X86_PREFETCH + (int64_t)bb - 1) / (int64_t)bb;
    /* the factors a block uses: k = 0 (a of run 0), 1 (m of run 0), 2, 3 (run 1) */
    const int used[4] = {1, A == VT_CPU_MIN, R == 2, R == 2 && A == VT_CPU_MIN};
    /* formats whose one factor is the f16 d at the block's start multiply
     * it by dx next to its use (the same product) */
    const int row_d = x86_d_only(wtype);
    __m256 dxb[VT_CPU_TILE_X];
    for (int64_t b = 0; b < nblocks; b++) {
        const size_t boff = (size_t)b * bb;
        if (G > 1) {
            if (b + pf < nblocks)
                for (int i = 0; i < NW; i++)
                    for (size_t o = 0; o < bb; o += 64)
                        _mm_prefetch((const char *)(w[i] + boff + (size_t)pf * bb + o), _MM_HINT_T0);
#pragma GCC unroll 8
            for (int i = 0; i < NW; i++)
                x86_prep_block(wtype, w[i] + boff, tab[i]);
#pragma GCC unroll 4
            for (int r = 0; r < NX; r++) {
                const __m256 dv = _mm256_loadu_ps(xd[r] + b * G);
#pragma GCC unroll 8
                for (int i = 0; i < NW; i++)
#pragma GCC unroll 4
                    for (int k = 0; k < 4; k++)
                        if (used[k])
                            _mm256_store_ps(ft[r][i][k], _mm256_mul_ps(_mm256_loadu_ps(tab[i][k]), dv));
            }
        } else if (row_d) {
#pragma GCC unroll 4
            for (int r = 0; r < NX; r++)
                dxb[r] = _mm256_broadcast_ss(xd[r] + b);
        } else {
            x86_prep_rows(wtype, w, boff, NW, tab[0]);
#pragma GCC unroll 4
            for (int r = 0; r < NX; r++) {
                const __m256 dv = _mm256_broadcast_ss(xd[r] + b);
#pragma GCC unroll 2
                for (int k = 0; k < 2; k++)
                    if (used[k])
                        _mm256_store_ps(ft[r][0][k], _mm256_mul_ps(_mm256_loadu_ps(tab[0][k]), dv));
            }
        }
        for (int s = 0; s < G; s++) {
            const int64_t off = (b * G + s) * VT_CPU_GROUP;
            __m256i qa[VT_CPU_TILE_X], qb[VT_CPU_TILE_X], p0[VT_CPU_TILE_X][2];
            __m256 xs[VT_CPU_TILE_X][2];
#pragma GCC unroll 4
            for (int r = 0; r < NX; r++) {
                qa[r] = _mm256_loadu_si256((const __m256i *)(const void *)(xq[r] + off));
                qb[r] = _mm256_loadu_si256((const __m256i *)(const void *)(xq[r] + off + 16));
                if (A == VT_CPU_OFFSET) {
                    const __m256i no = _mm256_set1_epi16(neg_o);
                    if (R == 1) {
                        p0[r][0] = X86_DP16(_mm256_madd_epi16(qa[r], no), qb[r], no);
                    } else {
                        p0[r][0] = _mm256_madd_epi16(qa[r], no);
                        p0[r][1] = _mm256_madd_epi16(qb[r], no);
                    }
                } else {
                    p0[r][0] = p0[r][1] = _mm256_setzero_si256();
                }
                if (A == VT_CPU_MIN) {
                    const __m256i one = _mm256_set1_epi16(1);
                    if (R == 1) {
                        xs[r][0] = _mm256_cvtepi32_ps(X86_DP16(_mm256_madd_epi16(qa[r], one), qb[r], one));
                    } else {
                        xs[r][0] = _mm256_cvtepi32_ps(_mm256_madd_epi16(qa[r], one));
                        xs[r][1] = _mm256_cvtepi32_ps(_mm256_madd_epi16(qb[r], one));
                    }
                }
            }
#pragma GCC unroll 8
            for (int i = 0; i < NW; i++) {
                const uint8_t *bp = w[i] + boff;
                /* row i decoded next to its use (see x86_tile_q) */
                if (i)
                    __asm__("" : "+r"(bp) : "x"(acc[0][i - 1]));
                __m256i c[2];
                x86_codes16(wtype, bp, s, c);
                const __m256 d = row_d ? x86_half_all(bp) : _mm256_setzero_ps();
#pragma GCC unroll 4
                for (int r = 0; r < NX; r++) {
                    const float *a = G > 1 ? &ft[r][i][0][s] : &ft[r][0][0][i];
                    if (R == 1) {
                        const __m256i p = X86_DP16(X86_DP16(p0[r][0], c[0], qa[r]), c[1], qb[r]);
                        const __m256 f = row_d ? _mm256_mul_ps(d, dxb[r]) : x86_factor(a, 0);
                        acc[r][i] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), f, acc[r][i]);
                        if (A == VT_CPU_MIN)
                            acc[r][i] = _mm256_fmadd_ps(xs[r][0], x86_factor(a, 1), acc[r][i]);
                    } else {
#pragma GCC unroll 2
                        for (int q = 0; q < 2; q++) {
                            const __m256i p = X86_DP16(p0[r][q], c[q], q ? qb[r] : qa[r]);
                            acc[r][i] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), x86_factor(a, 2 * q), acc[r][i]);
                            if (A == VT_CPU_MIN)
                                acc[r][i] = _mm256_fmadd_ps(xs[r][q], x86_factor(a, 2 * q + 1), acc[r][i]);
                        }
                    }
                }
            }
        }
    }
    x86_tile_store(t, acc, NW, NX);
}

#endif
