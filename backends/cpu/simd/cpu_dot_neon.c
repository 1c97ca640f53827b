/* cpu_dot_neon.c - the NEON path (aarch64 Advanced SIMD, always present
 * there). The eight lane sums of the canonical reductions (cpu_dot.h) are
 * two 4-lane vectors: lanes 0-3 take elements 8i..8i+3, lanes 4-7
 * elements 8i+4..8i+7, with vfmaq_f32 (fused, one rounding); the tree
 * adds the two vectors (s0+s4 .. s3+s7), then pairs them as the scalar
 * path does. Groups are read in the group form (codes, run factors) and
 * combined in the same order as the scalar path; decoding for stores
 * applies the form exactly (c-o before the multiply, so even the sign of a
 * zero matches). Tiles: 8 weight rows x 1 activation row, 4 x 2. */
#include "config.h"

#if defined(__aarch64__)

#include <arm_neon.h>
#include <string.h>

#include "cpu_dot.h"
#include "cpu_quant.h"
#include "cpu_qx.h"

/* 16 unsigned bytes to 16 f32 (four vectors). */
static inline void u8x16_f32(uint8x16_t b, float32x4_t f[4])
{
    uint16x8_t lo = vmovl_u8(vget_low_u8(b)), hi = vmovl_u8(vget_high_u8(b));
    f[0] = vcvtq_f32_u32(vmovl_u16(vget_low_u16(lo)));
    f[1] = vcvtq_f32_u32(vmovl_u16(vget_high_u16(lo)));
    f[2] = vcvtq_f32_u32(vmovl_u16(vget_low_u16(hi)));
    f[3] = vcvtq_f32_u32(vmovl_u16(vget_high_u16(hi)));
}

/* 16 signed bytes to 16 f32 (four vectors). */
static inline void s8x16_f32(int8x16_t b, float32x4_t f[4])
{
    int16x8_t lo = vmovl_s8(vget_low_s8(b)), hi = vmovl_s8(vget_high_s8(b));
    f[0] = vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo)));
    f[1] = vcvtq_f32_s32(vmovl_s16(vget_high_s16(lo)));
    f[2] = vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi)));
    f[3] = vcvtq_f32_s32(vmovl_s16(vget_high_s16(hi)));
}

/* Bit p (p = 0..15) of the 16-bit halves of qh, as 0 or `bit` per byte. */
static inline uint8x16_t bits_of(const uint8_t *qh, uint8_t bit)
{
    static const uint8_t masks[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    uint8x16_t b = vcombine_u8(vdup_n_u8(qh[0]), vdup_n_u8(qh[1]));
    return vandq_u8(vtstq_u8(b, vld1q_u8(masks)), vdupq_n_u8(bit));
}

/* (b >> shift) & mask per byte. */
static inline uint8x16_t field(uint8x16_t b, int shift, uint8_t mask)
{
    return vandq_u8(vshlq_u8(b, vdupq_n_s8((int8_t)-shift)), vdupq_n_u8(mask));
}

/* The group form of group sub of the block at blk of q type t: codes in
 * c[0..7] (4 elements each), run factors a[r] and minimums m[r] (the same
 * values as the scalar form functions of cpu_quant.c). */
static void neon_form(uint32_t t, const uint8_t *blk, int sub, float32x4_t c[8], float a[2], float m[2])
{
    m[0] = m[1] = 0.0f;
    switch (t) {
    case VT_Q4_0:
    case VT_Q4_1:
    case VT_Q5_0:
    case VT_Q5_1: {
        const int q5 = t == VT_Q5_0 || t == VT_Q5_1, mins = t == VT_Q4_1 || t == VT_Q5_1;
        const uint8_t *qh = blk + (mins ? 4 : 2), *qs = qh + (q5 ? 4 : 0);
        a[0] = vt_cpu_half_at(blk);
        if (mins)
            m[0] = vt_cpu_half_at(blk + 2);
        uint8x16_t b = vld1q_u8(qs), lo = vandq_u8(b, vdupq_n_u8(0xF)), hi = vshrq_n_u8(b, 4);
        if (q5) {
            lo = vorrq_u8(lo, bits_of(qh, 0x10));
            hi = vorrq_u8(hi, bits_of(qh + 2, 0x10));
        }
        u8x16_f32(lo, c);
        u8x16_f32(hi, c + 4);
        break;
    }
    case VT_Q8_0:
        a[0] = vt_cpu_half_at(blk);
        s8x16_f32(vld1q_s8((const int8_t *)(blk + 2)), c);
        s8x16_f32(vld1q_s8((const int8_t *)(blk + 18)), c + 4);
        break;
    case VT_IQ4_NL:
    case VT_IQ4_XS:
    case VT_MXFP4: {
        const int8x16_t book = vld1q_s8(t == VT_MXFP4 ? vt_cpu_kvalues_mxfp4 : vt_cpu_kvalues_iq4nl);
        const uint8_t *qs = t == VT_IQ4_NL ? blk + 2 : t == VT_MXFP4 ? blk + 1 : blk + 8 + 16 * sub;
        if (t == VT_IQ4_NL) {
            a[0] = vt_cpu_half_at(blk);
        } else if (t == VT_MXFP4) {
            a[0] = vt_cpu_e8m0_half(blk[0]);
        } else {
            a[0] = vt_cpu_half_at(blk) * (float)vt_blk_iq4_xs_scale(blk, sub);
        }
        uint8x16_t b = vld1q_u8(qs);
        s8x16_f32(vqtbl1q_s8(book, vandq_u8(b, vdupq_n_u8(0xF))), c);
        s8x16_f32(vqtbl1q_s8(book, vshrq_n_u8(b, 4)), c + 4);
        break;
    }
    case VT_Q2_K:
    case VT_Q3_K: {
        const int q3 = t == VT_Q3_K;
        const uint8_t *qb = blk + (q3 ? 32 : 16) + 32 * (sub >> 2);
        const int shift = 2 * (sub & 3);
        const float d = vt_cpu_half_at(blk + (q3 ? 108 : 80));
        for (int h = 0; h < 2; h++) {
            uint8x16_t u = field(vld1q_u8(qb + 16 * h), shift, 3);
            if (q3) {
                u = vorrq_u8(u, vshlq_n_u8(field(vld1q_u8(blk + 16 * h), sub, 1), 2));
                a[h] = d * (float)vt_cpu_q3k_scale(blk + 96, 2 * sub + h);
            } else {
                const uint8_t sc = blk[2 * sub + h];
                a[h] = d * (float)(sc & 0xF);
                m[h] = -(vt_cpu_half_at(blk + 82) * (float)(sc >> 4));
            }
            u8x16_f32(u, c + 4 * h);
        }
        break;
    }
    case VT_Q4_K:
    case VT_Q5_K: {
        const int q5 = t == VT_Q5_K;
        const uint8_t *qb = blk + (q5 ? 48 : 16) + 32 * (sub >> 1);
        uint8_t sc, mn;
        vt_cpu_kquant_scale_min(blk + 4, sub, &sc, &mn);
        a[0] = vt_cpu_half_at(blk) * (float)sc;
        m[0] = -(vt_cpu_half_at(blk + 2) * (float)mn);
        const int shift = 4 * (sub & 1);
        for (int h = 0; h < 2; h++) {
            uint8x16_t u = field(vld1q_u8(qb + 16 * h), shift, 0xF);
            if (q5)
                u = vorrq_u8(u, vshlq_n_u8(field(vld1q_u8(blk + 16 + 16 * h), sub, 1), 4));
            u8x16_f32(u, c + 4 * h);
        }
        break;
    }
    case VT_Q6_K: {
        const int hh = sub >> 2, r = sub & 3;
        const uint8_t *ql = blk + 64 * hh + 32 * (r & 1), *qh = blk + 128 + 32 * hh;
        const int8_t *scales = (const int8_t *)(blk + 192) + 8 * hh + 2 * r;
        const float d = vt_cpu_half_at(blk + 208);
        for (int h = 0; h < 2; h++) {
            uint8x16_t lo = field(vld1q_u8(ql + 16 * h), r >= 2 ? 4 : 0, 0xF);
            uint8x16_t hi = field(vld1q_u8(qh + 16 * h), 2 * r, 3);
            u8x16_f32(vorrq_u8(lo, vshlq_n_u8(hi, 4)), c + 4 * h);
            a[h] = d * (float)scales[h];
        }
        break;
    }
    default:
        a[0] = a[1] = 0.0f;
        for (int i = 0; i < 8; i++)
            c[i] = vdupq_n_f32(0.0f);
        break;
    }
}

/* The exact decoded values of a group (the scalar reference's bits). */
static void neon_decode_group(const vt_cpu_qformat *f, const uint8_t *blk, int sub, float32x4_t v[8])
{
    float32x4_t c[8];
    float a[2], m[2];
    neon_form(f->dtype, blk, sub, c, a, m);
    for (int i = 0; i < 8; i++) {
        const int r = f->runs == 2 ? i >> 2 : 0;
        if (f->affine == VT_CPU_OFFSET)
            v[i] = vmulq_n_f32(vsubq_f32(c[i], vdupq_n_f32((float)f->offset)), a[r]);
        else if (f->affine == VT_CPU_MIN)
            v[i] = vfmaq_n_f32(vdupq_n_f32(m[r]), c[i], a[r]);
        else
            v[i] = vmulq_n_f32(c[i], a[r]);
    }
}

/* 8 elements of a dense weight row at element j as two vectors. */
static inline void neon_load_dense(uint32_t t, const uint8_t *w, int64_t j, float32x4_t *a, float32x4_t *b)
{
    if (t == VT_F16) {
        float16x8_t h = vld1q_f16((const __fp16 *)(const void *)(w + 2 * j));
        *a = vcvt_f32_f16(vget_low_f16(h));
        *b = vcvt_high_f32_f16(h);
    } else if (t == VT_BF16) {
        uint16x8_t h = vld1q_u16((const uint16_t *)(const void *)(w + 2 * j));
        *a = vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(h), 16));
        *b = vreinterpretq_f32_u32(vshll_n_u16(vget_high_u16(h), 16));
    } else {
        const float *f = (const float *)(const void *)(w + 4 * j);
        *a = vld1q_f32(f);
        *b = vld1q_f32(f + 4);
    }
}

/* The canonical tree over lanes (lo: 0-3, hi: 4-7). */
static inline float neon_lane_tree(float32x4_t lo, float32x4_t hi)
{
    float32x4_t s = vaddq_f32(lo, hi);                           /* s0+s4 .. s3+s7 */
    float32x2_t p = vadd_f32(vget_low_f32(s), vget_high_f32(s)); /* (s0+s4)+(s2+s6), (s1+s5)+(s3+s7) */
    return vget_lane_f32(p, 0) + vget_lane_f32(p, 1);
}

/* A tile of NW weight rows x NX activation rows. */
static inline __attribute__((always_inline)) void neon_tile(vt_cpu_tile *t, const int NW, const int NX)
{
    const uint8_t *w[VT_CPU_TILE_W];
    const float *x[VT_CPU_TILE_X];
    float32x4_t lo[VT_CPU_TILE_X][VT_CPU_TILE_W], hi[VT_CPU_TILE_X][VT_CPU_TILE_W];
    const int lw = t->nw > 1 ? t->nw - 1 : 0, lx = t->nx > 1 ? t->nx - 1 : 0;
    for (int i = 0; i < NW; i++)
        w[i] = t->w[i < lw ? i : lw];
    for (int r = 0; r < NX; r++)
        x[r] = t->x[r < lx ? r : lx];
    for (int r = 0; r < NX; r++)
        for (int i = 0; i < NW; i++)
            lo[r][i] = hi[r][i] = vdupq_n_f32(0.0f);
    const vt_dtype_info *wi = vt_dtype_get(t->wtype);
    if (wi->quantized) {
        /* the group-form order of cpu_dot.h; lanes 0-3 in lo, 4-7 in hi */
        const vt_cpu_qformat *f = vt_cpu_qformat_get(t->wtype);
        const int runs = f->runs, per = 4 / runs; /* 8-element slices per run */
        const float neg_o = -(float)f->offset;
        const int64_t nblocks = t->k / ((int64_t)t->groups * VT_CPU_GROUP);
        int64_t off = 0;
        for (int64_t b = 0; b < nblocks; b++)
            for (uint32_t s = 0; s < t->groups; s++, off += VT_CPU_GROUP) {
                float32x4_t xs[VT_CPU_TILE_X][2][2]; /* [row][run][lo/hi] */
                for (int r = 0; r < NX; r++)
                    for (int q = 0; q < runs; q++)
                        for (int h = 0; h < 2; h++) {
                            const float *xp = x[r] + off + 8 * q * per + 4 * h;
                            float32x4_t v = vld1q_f32(xp);
                            for (int u = 1; u < per; u++)
                                v = vaddq_f32(v, vld1q_f32(xp + 8 * u));
                            xs[r][q][h] = v;
                        }
                for (int i = 0; i < NW; i++) {
                    float32x4_t c[8];
                    float a[2], m[2];
                    neon_form(t->wtype, w[i] + (size_t)b * t->block_bytes, (int)s, c, a, m);
                    for (int r = 0; r < NX; r++)
                        for (int q = 0; q < runs; q++) {
                            float32x4_t p[2];
                            for (int h = 0; h < 2; h++) {
                                const int u0 = q * per;
                                const float *xp = x[r] + off + 4 * h;
                                p[h] = f->affine == VT_CPU_OFFSET ? vfmaq_f32(vmulq_n_f32(xs[r][q][h], neg_o),
                                                                              c[2 * u0 + h], vld1q_f32(xp + 8 * u0))
                                                                  : vmulq_f32(c[2 * u0 + h], vld1q_f32(xp + 8 * u0));
                                for (int u = u0 + 1; u < u0 + per; u++)
                                    p[h] = vfmaq_f32(p[h], c[2 * u + h], vld1q_f32(xp + 8 * u));
                            }
                            lo[r][i] = vfmaq_n_f32(lo[r][i], p[0], a[q]);
                            hi[r][i] = vfmaq_n_f32(hi[r][i], p[1], a[q]);
                            if (f->affine == VT_CPU_MIN) {
                                lo[r][i] = vfmaq_n_f32(lo[r][i], xs[r][q][0], m[q]);
                                hi[r][i] = vfmaq_n_f32(hi[r][i], xs[r][q][1], m[q]);
                            }
                        }
                }
            }
    } else {
        const int64_t k8 = t->k & ~(int64_t)7, rem = t->k - k8;
        const size_t es = wi->block_bytes;
        for (int64_t j = 0; j < k8 + (rem ? 8 : 0); j += 8) {
            float xt[VT_CPU_TILE_X][8];
            uint8_t wt[32];
            for (int i = 0; i < NW; i++) {
                float32x4_t a, b;
                if (j < k8) {
                    neon_load_dense(t->wtype, w[i], j, &a, &b);
                } else { /* zero-padded tail: 0*0 leaves a lane sum unchanged */
                    memset(wt, 0, sizeof wt);
                    memcpy(wt, w[i] + (size_t)k8 * es, (size_t)rem * es);
                    neon_load_dense(t->wtype, wt, 0, &a, &b);
                }
                for (int r = 0; r < NX; r++) {
                    const float *xp = x[r] + j;
                    if (j >= k8) {
                        memset(xt[r], 0, sizeof xt[r]);
                        memcpy(xt[r], x[r] + k8, (size_t)rem * sizeof(float));
                        xp = xt[r];
                    }
                    lo[r][i] = vfmaq_f32(lo[r][i], a, vld1q_f32(xp));
                    hi[r][i] = vfmaq_f32(hi[r][i], b, vld1q_f32(xp + 4));
                }
            }
        }
    }
    for (int r = 0; r < t->nx; r++)
        for (int i = 0; i < t->nw; i++)
            t->out[r][i] = neon_lane_tree(lo[r][i], hi[r][i]);
}

static void neon_dot(vt_cpu_tile *t)
{
    if (t->nx == 1)
        neon_tile(t, 8, 1);
    else
        neon_tile(t, 4, 2);
}

/* f32 to bf16 bits, nearest even, NaN kept (as vt_f32_to_bf16). */
static inline uint16x4_t neon_bf16(float32x4_t v)
{
    uint32x4_t x = vreinterpretq_u32_f32(v);
    uint32x4_t r =
        vshrq_n_u32(vaddq_u32(vaddq_u32(x, vdupq_n_u32(0x7fff)), vandq_u32(vshrq_n_u32(x, 16), vdupq_n_u32(1))), 16);
    uint32x4_t nan = vorrq_u32(vshrq_n_u32(x, 16), vdupq_n_u32(0x40));
    uint32x4_t is_nan = vcgtq_u32(vandq_u32(x, vdupq_n_u32(0x7fffffff)), vdupq_n_u32(0x7f800000));
    return vmovn_u32(vbslq_u32(is_nan, nan, r));
}

static void neon_decode(uint32_t wtype, uint32_t block_bytes, uint32_t groups, const uint8_t *src, int64_t nblocks,
                        void *dst, uint32_t dst_type)
{
    const vt_cpu_qformat *f = vt_cpu_qformat_get(wtype);
    int64_t o = 0;
    for (int64_t b = 0; b < nblocks; b++, src += block_bytes)
        for (uint32_t s = 0; s < groups; s++, o += VT_CPU_GROUP) {
            float32x4_t v[8];
            neon_decode_group(f, src, (int)s, v);
            for (int i = 0; i < 8; i++) {
                if (dst_type == VT_F32)
                    vst1q_f32((float *)dst + o + 4 * i, v[i]);
                else if (dst_type == VT_F16)
                    vst1_f16((__fp16 *)dst + o + 4 * i, vcvt_f16_f32(v[i]));
                else
                    vst1_u16((uint16_t *)dst + o + 4 * i, neon_bf16(v[i]));
            }
        }
}

const vt_cpu_isa vt_cpu_isa_neon = {
    .id = VT_CPU_SIMD_NEON,
    .tile_w = {0, 8, 4},
    .tile_x = 2,
    .dot = neon_dot,
    /* the int16-activation path in portable C (the same integers and
     * fmas; no NEON kernel for it yet) */
    .qdot = vt_cpu_qx_dot_scalar,
    .quantize = vt_cpu_qx_quantize_scalar,
    .decode = neon_decode,
    .convert = vt_cpu_convert_scalar,
};

#endif
