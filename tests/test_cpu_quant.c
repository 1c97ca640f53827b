/* test_cpu_quant.c - the cpu backend's block-format kernels through the
 * public API: Dequantize and GetRows bit-exact against reference decoders
 * written here from the GGUF format definitions (a second, plain
 * implementation, not the backend's code), MatMul and MoeExpertMatMul over
 * q weights against a double-precision reference within the SPEC 7
 * tolerances, bad indices named, and determinism: the same bits for 1, 2
 * and 3 threads and for every SIMD path this machine runs (VT_CPU_SIMD).
 * Outputs are poisoned (NaN) before every run. Nothing here is timed. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test_util.h"
#include <vt/vt_blocks.h>

/* ---- reference decoders (independent of backends/cpu) ---- */

typedef struct ref_format {
    vt_dtype type;
    int block_elems, block_bytes;
    int half_at[2]; /* byte offsets of the f16 fields (scale, min); -1 when absent */
} ref_format;

/* Layouts as GGUF/ggml define them (block_q4_0 ... block_mxfp4). */
static const ref_format ref_formats[] = {
    {VT_Q4_0, 32, 18, {0, -1}},     {VT_Q4_1, 32, 20, {0, 2}},    {VT_Q5_0, 32, 22, {0, -1}},
    {VT_Q5_1, 32, 24, {0, 2}},      {VT_Q8_0, 32, 34, {0, -1}},   {VT_Q2_K, 256, 84, {80, 82}},
    {VT_Q3_K, 256, 110, {108, -1}}, {VT_Q4_K, 256, 144, {0, 2}},  {VT_Q5_K, 256, 176, {0, 2}},
    {VT_Q6_K, 256, 210, {208, -1}}, {VT_IQ4_NL, 32, 18, {0, -1}}, {VT_IQ4_XS, 256, 136, {0, -1}},
    {VT_MXFP4, 32, 17, {-1, -1}},
};
#define N_FORMATS (sizeof ref_formats / sizeof ref_formats[0])

/* IEEE half from its fields, in double (exact). */
static float ref_half(const uint8_t *p)
{
    unsigned h = p[0] | (p[1] << 8);
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return (float)(s ? -v : v);
}

static const int iq4nl_values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

/* FP4 E2M1 (sign, 2 exponent bits, 1 mantissa bit, bias 1), in double. */
static double e2m1(int code)
{
    int s = code >> 3, e = (code >> 1) & 3, m = code & 1;
    double v = e == 0 ? 0.5 * m : (1.0 + 0.5 * m) * ldexp(1.0, e - 1);
    /* ggml's table decodes the negative-zero code 8 as +0. */
    return s && v != 0 ? -v : v;
}

/* 6-bit scale j and min j (j < 8) of the 12 packed bytes of Q4_K/Q5_K:
 * bytes 0-3 hold scales 0-3 (low 6 bits) and the top 2 bits of scales 4-7;
 * bytes 4-7 the same for the mins; bytes 8-11 the low nibbles of scales
 * 4-7 (low half) and of mins 4-7 (high half). */
static void ref_k4_scales(const uint8_t *s, int sc[8], int mn[8])
{
    for (int j = 0; j < 4; j++) {
        sc[j] = s[j] & 0x3F;
        mn[j] = s[4 + j] & 0x3F;
        sc[4 + j] = (s[8 + j] & 0x0F) + 16 * (s[j] >> 6);
        mn[4 + j] = (s[8 + j] >> 4) + 16 * (s[4 + j] >> 6);
    }
}

/* Decode one block of format f into y[0 .. block_elems). */
static void ref_decode_block(vt_dtype t, const uint8_t *b, float *y)
{
    switch (t) {
    case VT_Q4_0:
        for (int j = 0; j < 16; j++) {
            y[j] = (float)((double)ref_half(b) * ((b[2 + j] & 15) - 8));
            y[j + 16] = (float)((double)ref_half(b) * ((b[2 + j] >> 4) - 8));
        }
        break;
    case VT_Q4_1: {
        float d = ref_half(b), m = ref_half(b + 2);
        for (int j = 0; j < 16; j++) {
            y[j] = (float)(b[4 + j] & 15) * d + m;
            y[j + 16] = (float)(b[4 + j] >> 4) * d + m;
        }
        break;
    }
    case VT_Q5_0:
    case VT_Q5_1: {
        int q5_1 = t == VT_Q5_1, o = q5_1 ? 4 : 2;
        float d = ref_half(b), m = q5_1 ? ref_half(b + 2) : 0.0f;
        uint32_t qh = (uint32_t)b[o] | (uint32_t)b[o + 1] << 8 | (uint32_t)b[o + 2] << 16 | (uint32_t)b[o + 3] << 24;
        for (int j = 0; j < 16; j++) {
            int x0 = (b[o + 4 + j] & 15) | (int)(((qh >> j) << 4) & 0x10);
            int x1 = (b[o + 4 + j] >> 4) | (int)((qh >> (j + 12)) & 0x10);
            if (q5_1) {
                y[j] = (float)x0 * d + m;
                y[j + 16] = (float)x1 * d + m;
            } else {
                y[j] = (float)((double)d * (x0 - 16));
                y[j + 16] = (float)((double)d * (x1 - 16));
            }
        }
        break;
    }
    case VT_Q8_0:
        for (int j = 0; j < 32; j++)
            y[j] = (float)((double)ref_half(b) * (int8_t)b[2 + j]);
        break;
    case VT_Q2_K: {
        float d = ref_half(b + 80), dmin = ref_half(b + 82);
        const uint8_t *q = b + 16;
        int is = 0;
        for (int n = 0; n < 256; n += 128, q += 32)
            for (int shift = 0; shift < 8; shift += 2)
                for (int half = 0; half < 2; half++, is++) {
                    float dl = d * (float)(b[is] & 15), ml = dmin * (float)(b[is] >> 4);
                    for (int l = 0; l < 16; l++)
                        *y++ = dl * (float)((q[16 * half + l] >> shift) & 3) - ml;
                }
        break;
    }
    case VT_Q3_K: {
        /* ggml's unpacking of the 16 six-bit scales, on 32-bit words */
        uint32_t aux[4];
        memcpy(aux, b + 96, 12);
        uint32_t tmp = aux[2];
        aux[2] = ((aux[0] >> 4) & 0x0f0f0f0f) | (((tmp >> 4) & 0x03030303) << 4);
        aux[3] = ((aux[1] >> 4) & 0x0f0f0f0f) | (((tmp >> 6) & 0x03030303) << 4);
        aux[0] = (aux[0] & 0x0f0f0f0f) | ((tmp & 0x03030303) << 4);
        aux[1] = (aux[1] & 0x0f0f0f0f) | (((tmp >> 2) & 0x03030303) << 4);
        int8_t scales[16];
        memcpy(scales, aux, 16);
        double d = ref_half(b + 108);
        const uint8_t *q = b + 32, *hm = b;
        int is = 0, bit = 1;
        for (int n = 0; n < 256; n += 128, q += 32)
            for (int shift = 0; shift < 8; shift += 2, bit <<= 1)
                for (int half = 0; half < 2; half++, is++)
                    for (int l = 16 * half; l < 16 * half + 16; l++)
                        *y++ = (float)(d * (scales[is] - 32) * (((q[l] >> shift) & 3) - ((hm[l] & bit) ? 0 : 4)));
        break;
    }
    case VT_Q4_K:
    case VT_Q5_K: {
        int q5 = t == VT_Q5_K, sc[8], mn[8];
        float d = ref_half(b), dmin = ref_half(b + 2);
        ref_k4_scales(b + 4, sc, mn);
        const uint8_t *qh = b + 16, *qs = b + (q5 ? 48 : 16);
        for (int g = 0; g < 8; g++)
            for (int l = 0; l < 32; l++) {
                int v = (qs[32 * (g / 2) + l] >> (4 * (g % 2))) & 15;
                if (q5 && (qh[l] & (1 << g)))
                    v += 16;
                *y++ = (d * (float)sc[g]) * (float)v - dmin * (float)mn[g];
            }
        break;
    }
    case VT_Q6_K: {
        double d = ref_half(b + 208);
        const uint8_t *ql = b, *qh = b + 128;
        const int8_t *sc = (const int8_t *)(b + 192);
        for (int n = 0; n < 2; n++, ql += 64, qh += 32, sc += 8)
            for (int l = 0; l < 32; l++) {
                int q[4] = {(ql[l] & 15) | ((qh[l] & 3) << 4), (ql[l + 32] & 15) | (((qh[l] >> 2) & 3) << 4),
                            (ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4), (ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)};
                for (int r = 0; r < 4; r++)
                    y[128 * n + 32 * r + l] = (float)(d * sc[l / 16 + 2 * r] * (q[r] - 32));
            }
        break;
    }
    case VT_IQ4_NL:
        for (int j = 0; j < 16; j++) {
            y[j] = (float)((double)ref_half(b) * iq4nl_values[b[2 + j] & 15]);
            y[j + 16] = (float)((double)ref_half(b) * iq4nl_values[b[2 + j] >> 4]);
        }
        break;
    case VT_IQ4_XS: {
        double d = ref_half(b);
        unsigned scales_h = b[2] | (b[3] << 8);
        for (int ib = 0; ib < 8; ib++) {
            int ls = ((b[4 + ib / 2] >> (4 * (ib % 2))) & 15) | (((scales_h >> (2 * ib)) & 3) << 4);
            const uint8_t *qs = b + 8 + 16 * ib;
            for (int j = 0; j < 16; j++) {
                y[32 * ib + j] = (float)(d * (ls - 32) * iq4nl_values[qs[j] & 15]);
                y[32 * ib + j + 16] = (float)(d * (ls - 32) * iq4nl_values[qs[j] >> 4]);
            }
        }
        break;
    }
    case VT_MXFP4:
        /* E8M0 scale 2^(e-127) times the E2M1 value */
        for (int j = 0; j < 16; j++) {
            y[j] = (float)(ldexp(1.0, b[0] - 127) * e2m1(b[1 + j] & 15));
            y[j + 16] = (float)(ldexp(1.0, b[0] - 127) * e2m1(b[1 + j] >> 4));
        }
        break;
    default: ck_abort_msg("no reference for %s", vt_dtype_name(t));
    }
}

static const ref_format *ref_format_of(vt_dtype t)
{
    for (size_t i = 0; i < N_FORMATS; i++)
        if (ref_formats[i].type == t)
            return &ref_formats[i];
    return NULL;
}

/* Decode n elements (whole blocks) of a q buffer. */
static void ref_decode(vt_dtype t, const uint8_t *src, int64_t n, float *y)
{
    const ref_format *f = ref_format_of(t);
    for (int64_t b = 0; b < n / f->block_elems; b++)
        ref_decode_block(t, src + b * f->block_bytes, y + b * f->block_elems);
}

/* A random finite f16: any bit pattern but exponent 31. */
static uint16_t random_finite_half(vt_rng *r)
{
    for (;;) {
        uint16_t h = (uint16_t)vt_rng_next(r);
        if (((h >> 10) & 31) != 31)
            return h;
    }
}

/* Scale modes of random blocks: any finite scale, or moderate scales
 * (|d| in [2^-8, 2^-2]) for products that stay well inside f32. */
enum { SCALES_ANY, SCALES_MODERATE };

/* n elements of random blocks of q type t: random bytes, then random
 * scales in every f16 field (and MXFP4's E8M0 byte). */
static uint8_t *random_blocks(vt_rng *r, vt_dtype t, int64_t n, int mode)
{
    const ref_format *f = ref_format_of(t);
    size_t bytes = (size_t)(n / f->block_elems) * (size_t)f->block_bytes;
    uint8_t *p = malloc(bytes + 1);
    ck_assert_ptr_nonnull(p);
    for (size_t i = 0; i < bytes; i++)
        p[i] = (uint8_t)vt_rng_next(r);
    for (size_t b = 0; b < bytes; b += (size_t)f->block_bytes) {
        for (int k = 0; k < 2; k++) {
            if (f->half_at[k] < 0)
                continue;
            uint16_t h = mode == SCALES_ANY
                             ? random_finite_half(r)
                             : vt_f32_to_f16(ldexpf(vt_rng_uniform(r, 1.0f, 2.0f), -2 - (int)vt_rng_below(r, 7)) *
                                             (vt_rng_below(r, 2) ? 1.0f : -1.0f));
            p[b + (size_t)f->half_at[k]] = (uint8_t)h;
            p[b + (size_t)f->half_at[k] + 1] = (uint8_t)(h >> 8);
        }
        if (t == VT_MXFP4)
            p[b] = (uint8_t)(mode == SCALES_ANY ? vt_rng_below(r, 255) : 118 + vt_rng_below(r, 8));
    }
    return p;
}

/* ---- device plumbing ---- */

static vt_registry *open_cpu(vt_device **dev)
{
    vt_registry *reg = vt_test_open(NULL, "cpu", 0);
    *dev = vt_test_device(reg, "cpu:0");
    return reg;
}

/* open_cpu, with the random stream r seeded from stream. */
static vt_registry *open_cpu_rng(vt_device **dev, vt_rng *r, uint64_t stream)
{
    vt_rng_init(r, stream);
    return open_cpu(dev);
}

static vt_tensor *make(vt_device *d, vt_dtype t, uint32_t nd, const int64_t *shape)
{
    return vt_test_tensor(d, t, nd, shape, NULL);
}

static vt_tensor *make_from(vt_device *d, vt_dtype t, uint32_t nd, const int64_t *shape, const void *src)
{
    return vt_test_tensor(d, t, nd, shape, src);
}

static void poison(vt_tensor *t)
{
    size_t n = vt_tensor_nbytes(t);
    void *p = malloc(n ? n : 1);
    vt_poison(p, n);
    ck_assert(vt_tensor_write(t, p, n) == VT_OK);
    free(p);
}

static void *read_all(const vt_tensor *t)
{
    size_t n = vt_tensor_nbytes(t);
    void *p = malloc(n ? n : 1);
    ck_assert(vt_tensor_read(t, p, n) == VT_OK);
    return p;
}

static vt_status run(vt_device *d, vt_op op, const vt_tensor *const *in, uint32_t n_in, vt_tensor *out)
{
    vt_tensor *o[1] = {out};
    return vt_op_run(d, op, in, n_in, o, 1, NULL, 0);
}

/* The bits a dst of type dt must hold for the exact value v. */
static uint32_t want_bits(float v, vt_dtype dt)
{
    if (dt == VT_F16)
        return vt_f32_to_f16(v);
    if (dt == VT_BF16)
        return vt_f32_to_bf16(v);
    uint32_t b;
    memcpy(&b, &v, 4);
    return b;
}

static uint32_t got_bits(const void *p, vt_dtype dt, int64_t i)
{
    if (dt == VT_F16 || dt == VT_BF16)
        return ((const uint16_t *)p)[i];
    uint32_t b;
    memcpy(&b, (const uint8_t *)p + 4 * i, 4);
    return b;
}

/* ---- tests ---- */

/* The reference layouts agree with the one type table. */
START_TEST(layouts_match_the_type_table)
{
    for (size_t i = 0; i < N_FORMATS; i++) {
        const vt_dtype_info *ti = vt_dtype_get(ref_formats[i].type);
        ck_assert_ptr_nonnull(ti);
        ck_assert_msg(ti->quantized, "%s is a block format", ti->name);
        ck_assert_uint_eq(ti->block_elems, (unsigned)ref_formats[i].block_elems);
        ck_assert_uint_eq(ti->block_bytes, (unsigned)ref_formats[i].block_bytes);
    }
    ck_assert_uint_eq(vt_n_q_formats, N_FORMATS);
}
END_TEST

/* vt_blocks.h, the decoders every backend is built from (the device
 * backends call vt_block_value on the GPU): geometry and factor offsets
 * match the layouts written here, and every element of random blocks of
 * every format decodes to the reference's bits; not a block format: NaN. */
START_TEST(shared_block_decoder_matches_reference)
{
#define LAYOUT(id, f) {id, VT_BLK_##f##_D, VT_BLK_##f##_DMIN, VT_BLK_##f##_E8M0},
    static const struct {
        vt_dtype t;
        int d, dmin, e8m0;
    } lay[] = {VT_Q_FORMATS(LAYOUT)};
#undef LAYOUT
    ck_assert_uint_eq(sizeof lay / sizeof lay[0], N_FORMATS);
    vt_rng r;
    vt_rng_init(&r, 7);
    for (size_t fi = 0; fi < N_FORMATS; fi++) {
        const ref_format *f = &ref_formats[fi];
        ck_assert_int_eq(lay[fi].t, f->type);
        ck_assert_int_eq(lay[fi].d, f->half_at[0]);
        ck_assert_int_eq(lay[fi].dmin, f->half_at[1]);
        ck_assert_int_eq(lay[fi].e8m0, f->type == VT_MXFP4 ? 0 : -1);
        ck_assert_int_eq(vt_block_elems(f->type), f->block_elems);
        ck_assert_int_eq(vt_block_bytes(f->type), f->block_bytes);
        int64_t n = 9 * (int64_t)f->block_elems;
        uint8_t *blocks = random_blocks(&r, f->type, n, SCALES_ANY);
        float *ref = malloc((size_t)n * sizeof *ref);
        ref_decode(f->type, blocks, n, ref);
        for (int64_t i = 0; i < n; i++) {
            float got =
                vt_block_value(f->type, blocks + (i / f->block_elems) * f->block_bytes, (int)(i % f->block_elems));
            ck_assert_msg(want_bits(got, VT_F32) == want_bits(ref[i], VT_F32), "%s element %lld: got %a want %a",
                          vt_dtype_name(f->type), (long long)i, (double)got, (double)ref[i]);
        }
        free(ref);
        free(blocks);
    }
    uint8_t blk[34] = {0};
    ck_assert(isnan(vt_block_value(VT_F16, blk, 0)) && isnan(vt_block_value(VT_Q8_1, blk, 0)));
    ck_assert_int_eq(vt_block_elems(VT_F32), 0);
    ck_assert_int_eq(vt_block_bytes(VT_Q8_K), 0);
}
END_TEST

/* vt_blk_k4_words, the word form of Q4_K/Q5_K's packed scales the device
 * kernels decode a super-block with: every byte of its words is the
 * reference's scale or minimum, on random packed bytes and on all-ones. */
START_TEST(k4_scale_words_match_reference)
{
    vt_rng r;
    vt_rng_init(&r, 11);
    for (int it = 0; it < 4096; it++) {
        uint8_t s[12];
        for (int i = 0; i < 12; i++)
            s[i] = it == 0 ? 0xFF : (uint8_t)(vt_rng_next(&r) >> 24);
        uint32_t w[3];
        for (int i = 0; i < 3; i++)
            w[i] = (uint32_t)s[4 * i] | (uint32_t)s[4 * i + 1] << 8 | (uint32_t)s[4 * i + 2] << 16 |
                   (uint32_t)s[4 * i + 3] << 24;
        int sc[8], mn[8];
        ref_k4_scales(s, sc, mn);
        uint32_t wsc[2], wmn[2];
        vt_blk_k4_words(w[0], w[1], w[2], wsc, wmn);
        for (int j = 0; j < 8; j++) {
            ck_assert_int_eq((int)(wsc[j / 4] >> (8 * (j % 4)) & 0xFF), sc[j]);
            ck_assert_int_eq((int)(wmn[j / 4] >> (8 * (j % 4)) & 0xFF), mn[j]);
            ck_assert_int_eq(vt_blk_k4_scale(s, j), sc[j]);
            ck_assert_int_eq(vt_blk_k4_min(s, j), mn[j]);
        }
    }
}
END_TEST

/* Dequantize n elements of blocks (format t, shape sh) on d into a
 * poisoned tensor of dtype to: what it wrote (malloc'd, the caller frees),
 * with the reference decode of blocks in ref (n floats). */
static void *dequantize_with_ref(vt_device *d, vt_dtype t, uint32_t nd, const int64_t *sh, int64_t n,
                                 const uint8_t *blocks, vt_dtype to, float *ref)
{
    vt_tensor *src = make_from(d, t, nd, sh, blocks), *dst = make(d, to, nd, sh);
    poison(dst);
    const vt_tensor *in[1] = {src};
    ck_assert_msg(run(d, VT_OP_DEQUANTIZE, in, 1, dst) == VT_OK, "Dequantize %s->%s: %s", vt_dtype_name(t),
                  vt_dtype_name(to), vt_last_error());
    ref_decode(t, blocks, n, ref);
    void *got = read_all(dst);
    vt_tensor_destroy(src);
    vt_tensor_destroy(dst);
    return got;
}

/* Dequantize of every format to f32/f16/bf16 equals the reference, bit for
 * bit, on random blocks with any finite scales. */
START_TEST(dequantize_is_exact)
{
    vt_device *d;
    vt_rng r;
    vt_registry *reg = open_cpu_rng(&d, &r, 101);
    static const vt_dtype dsts[3] = {VT_F32, VT_F16, VT_BF16};
    for (size_t fi = 0; fi < N_FORMATS; fi++) {
        const ref_format *f = &ref_formats[fi];
        for (int di = 0; di < 3; di++) {
            /* one block, and a 3-d tensor with an odd number of blocks */
            int64_t s1[1] = {f->block_elems}, s3[3] = {3, 1 + (int64_t)vt_rng_below(&r, 5), 7 * f->block_elems};
            for (int shape = 0; shape < 2; shape++) {
                uint32_t nd = shape ? 3 : 1;
                const int64_t *sh = shape ? s3 : s1;
                int64_t n = shape ? s3[0] * s3[1] * s3[2] : s1[0];
                uint8_t *blocks = random_blocks(&r, f->type, n, SCALES_ANY);
                float *ref = malloc((size_t)n * sizeof *ref);
                void *got = dequantize_with_ref(d, f->type, nd, sh, n, blocks, dsts[di], ref);
                for (int64_t i = 0; i < n; i++)
                    ck_assert_msg(got_bits(got, dsts[di], i) == want_bits(ref[i], dsts[di]),
                                  "Dequantize %s->%s element %lld of %lld (block %lld): got 0x%x want 0x%x (%a)",
                                  vt_dtype_name(f->type), vt_dtype_name(dsts[di]), (long long)i, (long long)n,
                                  (long long)(i / f->block_elems), got_bits(got, dsts[di], i),
                                  want_bits(ref[i], dsts[di]), (double)ref[i]);
                free(got);
                free(ref);
                free(blocks);
            }
        }
    }
    vt_registry_close(reg);
}
END_TEST

/* Every scale byte pattern of a format decodes exactly: sweep the f16
 * scale (or E8M0 exponent) through all finite values. */
START_TEST(dequantize_scale_sweep)
{
    vt_device *d;
    vt_rng r;
    vt_registry *reg = open_cpu_rng(&d, &r, 102);
    for (size_t fi = 0; fi < N_FORMATS; fi++) {
        const ref_format *f = &ref_formats[fi];
        int64_t nb = f->type == VT_MXFP4 ? 255 : 31 * 64; /* every finite exponent, 64 mantissas each */
        int64_t n = nb * f->block_elems;
        uint8_t *blocks = random_blocks(&r, f->type, n, SCALES_ANY);
        for (int64_t b = 0; b < nb; b++) {
            uint8_t *blk = blocks + b * f->block_bytes;
            if (f->type == VT_MXFP4) {
                blk[0] = (uint8_t)b;
                continue;
            }
            uint16_t h = (uint16_t)(((b / 64) << 10) | (uint16_t)vt_rng_below(&r, 1024) | (b & 1 ? 0x8000 : 0));
            blk[f->half_at[0]] = (uint8_t)h;
            blk[f->half_at[0] + 1] = (uint8_t)(h >> 8);
        }
        int64_t shape[1] = {n};
        float *ref = malloc((size_t)n * sizeof *ref);
        float *got = dequantize_with_ref(d, f->type, 1, shape, n, blocks, VT_F32, ref);
        ck_assert_msg(memcmp(got, ref, (size_t)n * 4) == 0, "Dequantize %s scale sweep differs from the reference",
                      vt_dtype_name(f->type));
        free(got);
        free(ref);
        free(blocks);
    }
    vt_registry_close(reg);
}
END_TEST

/* GetRows of every table type to f32 and f16, exact, with repeated and
 * multi-dimensional indices. */
START_TEST(get_rows_is_exact)
{
    vt_device *d;
    vt_rng r;
    vt_registry *reg = open_cpu_rng(&d, &r, 103);
    vt_dtype tables[3 + N_FORMATS] = {VT_F32, VT_F16, VT_BF16};
    for (size_t i = 0; i < N_FORMATS; i++)
        tables[3 + i] = ref_formats[i].type;
    static const vt_dtype dsts[2] = {VT_F32, VT_F16};
    for (size_t ti = 0; ti < 3 + N_FORMATS; ti++) {
        vt_dtype tt = tables[ti];
        const ref_format *f = ref_format_of(tt);
        int64_t be = f ? f->block_elems : 1;
        int64_t R = 1 + (int64_t)vt_rng_below(&r, 11), n = be * (1 + (int64_t)vt_rng_below(&r, 4));
        if (!f)
            n += (int64_t)vt_rng_below(&r, 7); /* plain rows of any length */
        int64_t tshape[2] = {R, n};
        void *table;
        float *decoded = malloc((size_t)(R * n) * sizeof *decoded);
        if (f) {
            table = random_blocks(&r, tt, R * n, SCALES_ANY);
            ref_decode(tt, table, R * n, decoded);
        } else {
            size_t es = tt == VT_F32 ? 4 : 2;
            table = malloc((size_t)(R * n) * es);
            for (int64_t i = 0; i < R * n; i++) {
                float v = ldexpf(vt_rng_uniform(&r, -1, 1), (int)vt_rng_below(&r, 36) - 20);
                if (tt == VT_F32)
                    ((float *)table)[i] = v;
                else
                    ((uint16_t *)table)[i] = tt == VT_F16 ? vt_f32_to_f16(v) : vt_f32_to_bf16(v);
                decoded[i] = (float)vt_test_decode(table, tt, i);
            }
        }
        vt_tensor *tab = make_from(d, tt, 2, tshape, table);
        for (int di = 0; di < 2; di++) {
            int64_t ishape[2] = {1 + (int64_t)vt_rng_below(&r, 3), 1 + (int64_t)vt_rng_below(&r, 6)};
            uint32_t ind = 1 + (uint32_t)vt_rng_below(&r, 2);
            int64_t count = ind == 2 ? ishape[0] * ishape[1] : ishape[1];
            const int64_t *is = ind == 2 ? ishape : ishape + 1;
            int32_t *idx = malloc((size_t)count * sizeof *idx);
            for (int64_t i = 0; i < count; i++)
                idx[i] = (int32_t)vt_rng_below(&r, (uint64_t)R);
            int64_t dshape[3] = {is[0], ind == 2 ? is[1] : n, n};
            vt_tensor *ti_ = make_from(d, VT_I32, ind, is, idx), *dst = make(d, dsts[di], ind + 1, dshape);
            poison(dst);
            const vt_tensor *in[2] = {tab, ti_};
            ck_assert_msg(run(d, VT_OP_GET_ROWS, in, 2, dst) == VT_OK, "GetRows %s->%s: %s", vt_dtype_name(tt),
                          vt_dtype_name(dsts[di]), vt_last_error());
            void *got = read_all(dst);
            for (int64_t i = 0; i < count; i++)
                for (int64_t e = 0; e < n; e++)
                    ck_assert_msg(got_bits(got, dsts[di], i * n + e) == want_bits(decoded[idx[i] * n + e], dsts[di]),
                                  "GetRows %s->%s row %lld (table row %d) element %lld: got 0x%x want 0x%x",
                                  vt_dtype_name(tt), vt_dtype_name(dsts[di]), (long long)i, idx[i], (long long)e,
                                  got_bits(got, dsts[di], i * n + e), want_bits(decoded[idx[i] * n + e], dsts[di]));
            free(got);
            free(idx);
            vt_tensor_destroy(ti_);
            vt_tensor_destroy(dst);
        }
        vt_tensor_destroy(tab);
        free(table);
        free(decoded);
    }
    vt_registry_close(reg);
}
END_TEST

/* An index outside the table is refused by name, and nothing is written. */
START_TEST(get_rows_bad_index_is_named)
{
    vt_device *d;
    vt_rng r;
    vt_registry *reg = open_cpu_rng(&d, &r, 104);
    int64_t tshape[2] = {5, 64}, ishape[2] = {2, 3}, dshape[3] = {2, 3, 64};
    uint8_t *table = random_blocks(&r, VT_Q4_K, 5 * 256, SCALES_ANY);
    int64_t qshape[2] = {5, 256}, qdshape[3] = {2, 3, 256};
    static const int32_t bad_values[2] = {5, -1};
    for (int q = 0; q < 2; q++) {
        float *ftable = calloc(5 * 64, sizeof(float));
        vt_tensor *tab = q ? make_from(d, VT_Q4_K, 2, qshape, table) : make_from(d, VT_F32, 2, tshape, ftable);
        for (int b = 0; b < 2; b++) {
            int32_t idx[6] = {0, 1, 2, 3, 4, 0};
            idx[4] = bad_values[b];
            vt_tensor *ti_ = make_from(d, VT_I32, 2, ishape, idx), *dst = make(d, VT_F32, 3, q ? qdshape : dshape);
            poison(dst);
            const vt_tensor *in[2] = {tab, ti_};
            ck_assert_int_eq(run(d, VT_OP_GET_ROWS, in, 2, dst), VT_E_INVALID_ARG);
            char want[64];
            snprintf(want, sizeof want, "idx[1,1] (flat position 4) = %d", bad_values[b]);
            ck_assert_msg(strstr(vt_last_error(), "GetRows (40)") && strstr(vt_last_error(), want) &&
                              strstr(vt_last_error(), "[0, 5)"),
                          "names op, position and value: %s", vt_last_error());
            uint32_t *got = read_all(dst);
            for (int64_t i = 0; i < 6 * (q ? 256 : 64); i++)
                ck_assert_msg(got[i] == 0xffffffffu, "element %lld was written", (long long)i);
            free(got);
            vt_tensor_destroy(ti_);
            vt_tensor_destroy(dst);
        }
        vt_tensor_destroy(tab);
        free(ftable);
    }
    free(table);
    vt_registry_close(reg);
}
END_TEST

/* Weights of type t (plain or q) with their exact decoded values. */
typedef struct weights {
    void *data;
    float *values;
} weights;

static weights random_weights(vt_rng *r, vt_dtype t, int64_t rows, int64_t k)
{
    weights w;
    int64_t n = rows * k;
    w.values = malloc((size_t)n * sizeof(float) + 4);
    if (ref_format_of(t)) {
        w.data = random_blocks(r, t, n, SCALES_MODERATE);
        ref_decode(t, w.data, n, w.values);
        return w;
    }
    size_t es = t == VT_F32 ? 4 : 2;
    w.data = malloc((size_t)n * es + 4);
    for (int64_t i = 0; i < n; i++) {
        float v = vt_rng_uniform(r, -1, 1);
        if (t == VT_F32)
            ((float *)w.data)[i] = v;
        else
            ((uint16_t *)w.data)[i] = t == VT_F16 ? vt_f32_to_f16(v) : vt_f32_to_bf16(v);
        w.values[i] = (float)vt_test_decode(w.data, t, i);
    }
    return w;
}

static void free_weights(weights *w)
{
    free(w->data);
    free(w->values);
}

static double tolerance(int64_t k)
{
    return k >= 1024 ? 1e-4 : 1e-5;
}

/* MatMul (x f32 [n,k], W t [m,k]) against the double reference. */
static void check_matmul(vt_device *d, vt_rng *r, vt_dtype t, int64_t n, int64_t m, int64_t k)
{
    weights w = random_weights(r, t, m, k);
    float *x = malloc((size_t)(n * k) * sizeof *x + 4);
    vt_rng_fill(r, x, (size_t)(n * k), -1, 1);
    int64_t sx[2] = {n, k}, sw[2] = {m, k}, sy[2] = {n, m};
    vt_tensor *tx = make_from(d, VT_F32, 2, sx, x), *tw = make_from(d, t, 2, sw, w.data), *ty = make(d, VT_F32, 2, sy);
    poison(ty);
    const vt_tensor *in[2] = {tx, tw};
    ck_assert_msg(run(d, VT_OP_MATMUL, in, 2, ty) == VT_OK, "MatMul %s: %s", vt_dtype_name(t), vt_last_error());
    float *y = read_all(ty);
    double *ref = malloc((size_t)(n * m) * sizeof *ref + 8);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++) {
            double acc = 0;
            for (int64_t l = 0; l < k; l++)
                acc += (double)x[i * k + l] * w.values[j * k + l];
            ref[i * m + j] = acc;
        }
    double e = vt_rel_l2(y, ref, (size_t)(n * m));
    ck_assert_msg(e <= tolerance(k), "MatMul (f32, %s) n=%lld m=%lld k=%lld: rel err %g > %g", vt_dtype_name(t),
                  (long long)n, (long long)m, (long long)k, e, tolerance(k));
    free(y);
    free(ref);
    free(x);
    free_weights(&w);
    vt_tensor_destroy(tx);
    vt_tensor_destroy(tw);
    vt_tensor_destroy(ty);
}

START_TEST(matmul_q_matches_reference)
{
    vt_device *d;
    vt_rng r;
    vt_registry *reg = open_cpu_rng(&d, &r, 105);
    for (size_t fi = 0; fi < N_FORMATS; fi++) {
        vt_dtype t = ref_formats[fi].type;
        int64_t be = ref_formats[fi].block_elems;
        /* at least 32 outputs per shape: one output alone can cancel to a
         * near-zero sum whose relative error no f32 sum can bound */
        check_matmul(d, &r, t, 1, 37, be);     /* decode, prime rows, k = one block */
        check_matmul(d, &r, t, 1, 67, 2048);   /* decode, k >= 1024 */
        check_matmul(d, &r, t, 2, 17, 4 * be); /* prefill, two rows */
        check_matmul(d, &r, t, 7, 11, 1024);   /* prefill, odd rows */
    }
    /* dense weights through the same engine, odd k */
    static const vt_dtype dense[3] = {VT_F32, VT_F16, VT_BF16};
    for (int i = 0; i < 3; i++) {
        check_matmul(d, &r, dense[i], 1, 29, 1531);
        check_matmul(d, &r, dense[i], 5, 17, 7);
        check_matmul(d, &r, dense[i], 3, 9, 1);
    }
    vt_registry_close(reg);
}
END_TEST

/* MoeExpertMatMul for W of type t: x [T,k] (or [T,K,k] when per_pair). */
static void check_moe(vt_device *d, vt_rng *r, vt_dtype t, int64_t T, int64_t K, int64_t E, int64_t m, int64_t k,
                      int per_pair)
{
    weights w = random_weights(r, t, E * m, k);
    int64_t nx = per_pair ? T * K : T;
    float *x = malloc((size_t)(nx * k) * sizeof *x + 4);
    vt_rng_fill(r, x, (size_t)(nx * k), -1, 1);
    int32_t *ids = malloc((size_t)(T * K) * sizeof *ids + 4);
    for (int64_t p = 0; p < T * K; p++)
        ids[p] = (int32_t)vt_rng_below(r, (uint64_t)E);
    int64_t sx3[3] = {T, K, k}, sx2[2] = {T, k}, sw[3] = {E, m, k}, si[2] = {T, K}, sy[3] = {T, K, m};
    vt_tensor *tx = per_pair ? make_from(d, VT_F32, 3, sx3, x) : make_from(d, VT_F32, 2, sx2, x);
    vt_tensor *tw = make_from(d, t, 3, sw, w.data), *ti_ = make_from(d, VT_I32, 2, si, ids);
    vt_tensor *ty = make(d, VT_F32, 3, sy);
    poison(ty);
    const vt_tensor *in[3] = {tx, tw, ti_};
    ck_assert_msg(run(d, VT_OP_MOE_EXPERT_MATMUL, in, 3, ty) == VT_OK, "MoeExpertMatMul %s: %s", vt_dtype_name(t),
                  vt_last_error());
    float *y = read_all(ty);
    double *ref = malloc((size_t)(T * K * m) * sizeof *ref + 8);
    for (int64_t p = 0; p < T * K; p++)
        for (int64_t j = 0; j < m; j++) {
            const float *xr = x + (per_pair ? p : p / K) * k;
            const float *wr = w.values + (ids[p] * m + j) * k;
            double acc = 0;
            for (int64_t l = 0; l < k; l++)
                acc += (double)xr[l] * wr[l];
            ref[p * m + j] = acc;
        }
    double e = vt_rel_l2(y, ref, (size_t)(T * K * m));
    ck_assert_msg(e <= tolerance(k), "MoeExpertMatMul (f32, %s) T=%lld K=%lld E=%lld m=%lld k=%lld x%s: rel err %g",
                  vt_dtype_name(t), (long long)T, (long long)K, (long long)E, (long long)m, (long long)k,
                  per_pair ? "[T,K,k]" : "[T,k]", e);
    free(y);
    free(ref);
    free(x);
    free(ids);
    free_weights(&w);
    vt_tensor_destroy(tx);
    vt_tensor_destroy(tw);
    vt_tensor_destroy(ti_);
    vt_tensor_destroy(ty);
}

START_TEST(moe_expert_matmul_matches_reference)
{
    vt_device *d;
    vt_rng r;
    vt_registry *reg = open_cpu_rng(&d, &r, 107);
    vt_dtype types[3 + N_FORMATS] = {VT_F32, VT_F16, VT_BF16};
    for (size_t i = 0; i < N_FORMATS; i++)
        types[3 + i] = ref_formats[i].type;
    for (size_t i = 0; i < 3 + N_FORMATS; i++) {
        const ref_format *f = ref_format_of(types[i]);
        int64_t be = f ? f->block_elems : 32;
        check_moe(d, &r, types[i], 1, 4, 6, 23, be, 0);     /* decode, one token, k = one block */
        check_moe(d, &r, types[i], 5, 2, 3, 17, 4 * be, 1); /* prefill, per-pair x */
        check_moe(d, &r, types[i], 3, 3, 8, 9, 1024, 0);    /* k >= 1024 */
        if (!f)
            check_moe(d, &r, types[i], 2, 2, 3, 9, 37, 1); /* dense, odd k */
    }
    vt_registry_close(reg);
}
END_TEST

START_TEST(moe_bad_id_is_named)
{
    vt_device *d;
    vt_rng r;
    vt_registry *reg = open_cpu_rng(&d, &r, 108);
    int64_t sx[2] = {2, 256}, sw[3] = {4, 8, 256}, si[2] = {2, 3}, sy[3] = {2, 3, 8};
    float x[512] = {0};
    uint8_t *w = random_blocks(&r, VT_Q6_K, 4 * 8 * 256, SCALES_MODERATE);
    vt_tensor *tx = make_from(d, VT_F32, 2, sx, x), *tw = make_from(d, VT_Q6_K, 3, sw, w);
    static const int32_t bad_values[2] = {4, -3};
    for (int b = 0; b < 2; b++) {
        int32_t ids[6] = {0, 1, 2, 3, 0, 1};
        ids[5] = bad_values[b];
        vt_tensor *ti_ = make_from(d, VT_I32, 2, si, ids), *ty = make(d, VT_F32, 3, sy);
        poison(ty);
        const vt_tensor *in[3] = {tx, tw, ti_};
        ck_assert_int_eq(run(d, VT_OP_MOE_EXPERT_MATMUL, in, 3, ty), VT_E_INVALID_ARG);
        char want[64];
        snprintf(want, sizeof want, "ids[1,2] = %d", bad_values[b]);
        ck_assert_msg(strstr(vt_last_error(), "MoeExpertMatMul (23)") && strstr(vt_last_error(), want) &&
                          strstr(vt_last_error(), "[0, 4)"),
                      "names op, position and value: %s", vt_last_error());
        uint32_t *got = read_all(ty);
        for (int i = 0; i < 48; i++)
            ck_assert_msg(got[i] == 0xffffffffu, "element %d was written", i);
        free(got);
        vt_tensor_destroy(ti_);
        vt_tensor_destroy(ty);
    }
    free(w);
    vt_tensor_destroy(tx);
    vt_tensor_destroy(tw);
    vt_registry_close(reg);
}
END_TEST

/* ---- determinism across thread counts and SIMD paths ---- */

/* Run a fixed battery of ops on a fresh registry (so VT_NUM_THREADS and
 * VT_CPU_SIMD are read anew) and return the concatenated output bytes;
 * NULL when the cpu backend refuses the configuration (a SIMD path this CPU
 * lacks), with the reason in why. */
static uint8_t *battery(size_t *size, char *why, size_t why_size)
{
    vt_registry *reg = vt_test_open(NULL, "cpu", 0);
    vt_device *d;
    if (vt_registry_find_device(reg, "cpu:0", &d) != VT_OK) {
        for (size_t i = 0; i < vt_registry_backend_count(reg); i++) {
            vt_backend_info b;
            if (vt_registry_backend_info(reg, i, &b) == VT_OK && !strcmp(b.name, "cpu"))
                snprintf(why, why_size, "%s", b.reason);
        }
        vt_registry_close(reg);
        return NULL;
    }
    vt_rng r;
    vt_rng_init(&r, 109); /* the same inputs for every configuration */
    size_t cap = 1 << 20, used = 0;
    uint8_t *out = malloc(cap);
#define APPEND(t)                                                                                                      \
    do {                                                                                                               \
        size_t nb_ = vt_tensor_nbytes(t);                                                                              \
        while (used + nb_ > cap)                                                                                       \
            out = realloc(out, cap *= 2);                                                                              \
        ck_assert(vt_tensor_read(t, out + used, nb_) == VT_OK);                                                        \
        used += nb_;                                                                                                   \
    } while (0)
    {
        /* casts of special values (zeros, subnormals, halfway cases,
         * overflow, infinities, NaN) through every float type and back */
        static const uint32_t bits[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu, 0x33800000u, 0x33800001u,
                                        0x387fc000u, 0x38800000u, 0x3f800000u, 0x3f801000u, 0x3f803000u, 0x3f808000u,
                                        0x3f818000u, 0x477fe000u, 0x477ff000u, 0x477fefffu, 0x47800000u, 0x7f7fffffu,
                                        0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc12345u, 0x7f800001u, 0x7fa00000u,
                                        0x3effffffu, 0xbf7fffffu, 0x4b000001u, 0x3dcccccdu, 0xc2f6e979u};
        int64_t n = sizeof bits / sizeof bits[0];
        static const vt_dtype fl[3] = {VT_F32, VT_F16, VT_BF16};
        vt_tensor *src = make_from(d, VT_F32, 1, &n, bits);
        for (int a = 0; a < 3; a++) {
            vt_tensor *mid = make(d, fl[a], 1, &n);
            const vt_tensor *in1[1] = {src};
            poison(mid);
            ck_assert(run(d, VT_OP_COPY, in1, 1, mid) == VT_OK);
            APPEND(mid);
            for (int b = 0; b < 3; b++) {
                vt_tensor *out2 = make(d, fl[b], 1, &n);
                const vt_tensor *in2[1] = {mid};
                poison(out2);
                ck_assert(run(d, VT_OP_COPY, in2, 1, out2) == VT_OK);
                APPEND(out2);
                vt_tensor_destroy(out2);
            }
            vt_tensor_destroy(mid);
        }
        vt_tensor_destroy(src);
    }
    vt_dtype types[3 + N_FORMATS] = {VT_F32, VT_F16, VT_BF16};
    for (size_t i = 0; i < N_FORMATS; i++)
        types[3 + i] = ref_formats[i].type;
    for (size_t i = 0; i < 3 + N_FORMATS; i++) {
        vt_dtype t = types[i];
        const ref_format *f = ref_format_of(t);
        /* decode and prefill MatMul with row counts around the tile shapes */
        static const int64_t ns[3] = {1, 3, 6};
        int64_t m = 53, k = f ? 3 * f->block_elems : 203;
        weights w = random_weights(&r, t, m, k);
        /* and with k = 1024, where q weights take the int16-activation
         * path (cpu_qx.h) */
        for (int kk = 0; kk < (f ? 2 : 1); kk++) {
            const int64_t kq = kk ? 1024 : k;
            weights wk = kk ? random_weights(&r, t, m, kq) : w;
            for (int c = 0; c < 3; c++) {
                int64_t n = ns[c];
                float *x = malloc((size_t)(n * kq) * 4);
                vt_rng_fill(&r, x, (size_t)(n * kq), -1, 1);
                int64_t sx[2] = {n, kq}, sw[2] = {m, kq}, sy[2] = {n, m};
                vt_tensor *tx = make_from(d, VT_F32, 2, sx, x), *tw = make_from(d, t, 2, sw, wk.data);
                vt_tensor *ty = make(d, VT_F32, 2, sy);
                poison(ty);
                const vt_tensor *in[2] = {tx, tw};
                ck_assert_msg(run(d, VT_OP_MATMUL, in, 2, ty) == VT_OK, "%s", vt_last_error());
                APPEND(ty);
                vt_tensor_destroy(tx);
                vt_tensor_destroy(tw);
                vt_tensor_destroy(ty);
                free(x);
            }
            /* MoE over the first 52 weight rows as 2 experts of 26 */
            {
                int64_t T = 4, K = 2, E = 2, me = 26, sx[2] = {T, kq}, sw3[3] = {E, me, kq}, si[2] = {T, K};
                int64_t sy[3] = {T, K, me};
                float *x = malloc((size_t)(T * kq) * 4);
                vt_rng_fill(&r, x, (size_t)(T * kq), -1, 1);
                int32_t ids[8] = {1, 0, 1, 1, 0, 0, 1, 0};
                vt_tensor *tx = make_from(d, VT_F32, 2, sx, x), *tw = make_from(d, t, 3, sw3, wk.data);
                vt_tensor *ti_ = make_from(d, VT_I32, 2, si, ids), *ty = make(d, VT_F32, 3, sy);
                poison(ty);
                const vt_tensor *in[3] = {tx, tw, ti_};
                ck_assert_msg(run(d, VT_OP_MOE_EXPERT_MATMUL, in, 3, ty) == VT_OK, "%s", vt_last_error());
                APPEND(ty);
                vt_tensor_destroy(tx);
                vt_tensor_destroy(tw);
                vt_tensor_destroy(ti_);
                vt_tensor_destroy(ty);
                free(x);
            }
            if (kk)
                free_weights(&wk);
        }
        if (!f) {
            /* the dense casts: Copy to the other float types, GetRows to f16 */
            static const vt_dtype dsts[3] = {VT_F32, VT_F16, VT_BF16};
            int64_t sw[2] = {m, k};
            vt_tensor *tw = make_from(d, t, 2, sw, w.data);
            for (int di = 0; di < 3; di++) {
                vt_tensor *ty = make(d, dsts[di], 2, sw);
                poison(ty);
                const vt_tensor *in[1] = {tw};
                ck_assert_msg(run(d, VT_OP_COPY, in, 1, ty) == VT_OK, "%s", vt_last_error());
                APPEND(ty);
                vt_tensor_destroy(ty);
            }
            int32_t idx[3] = {52, 0, 17};
            int64_t si[1] = {3}, sy[2] = {3, k};
            vt_tensor *ti_ = make_from(d, VT_I32, 1, si, idx), *ty = make(d, VT_F16, 2, sy);
            poison(ty);
            const vt_tensor *in[2] = {tw, ti_};
            ck_assert(run(d, VT_OP_GET_ROWS, in, 2, ty) == VT_OK);
            APPEND(ty);
            vt_tensor_destroy(ti_);
            vt_tensor_destroy(ty);
            vt_tensor_destroy(tw);
        }
        if (f) {
            /* Dequantize to each type and GetRows to f16 */
            static const vt_dtype dsts[3] = {VT_F32, VT_F16, VT_BF16};
            int64_t sw[2] = {m, k};
            vt_tensor *tw = make_from(d, t, 2, sw, w.data);
            for (int di = 0; di < 3; di++) {
                vt_tensor *ty = make(d, dsts[di], 2, sw);
                poison(ty);
                const vt_tensor *in[1] = {tw};
                ck_assert(run(d, VT_OP_DEQUANTIZE, in, 1, ty) == VT_OK);
                APPEND(ty);
                vt_tensor_destroy(ty);
            }
            int32_t idx[5] = {52, 0, 7, 7, 30};
            int64_t si[1] = {5}, sy[2] = {5, k};
            vt_tensor *ti_ = make_from(d, VT_I32, 1, si, idx), *ty = make(d, VT_F16, 2, sy);
            poison(ty);
            const vt_tensor *in[2] = {tw, ti_};
            ck_assert(run(d, VT_OP_GET_ROWS, in, 2, ty) == VT_OK);
            APPEND(ty);
            vt_tensor_destroy(ti_);
            vt_tensor_destroy(ty);
            vt_tensor_destroy(tw);
        }
        free_weights(&w);
    }
#undef APPEND
    vt_registry_close(reg);
    *size = used;
    return out;
}

START_TEST(same_bits_for_any_threads_and_simd_path)
{
    static const char *paths[] = {"scalar", "avx2", "avx512", "neon"};
    static const char *threads[] = {"1", "2", "3"};
    uint8_t *first = NULL;
    size_t first_size = 0;
    char first_name[64] = "";
    int ran_paths = 0;
    for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
        int ran = 0;
        for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
            setenv("VT_CPU_SIMD", paths[p], 1);
            setenv("VT_NUM_THREADS", threads[t], 1);
            char why[512] = "";
            size_t size = 0;
            uint8_t *out = battery(&size, why, sizeof why);
            if (!out) {
                ck_assert_msg(strstr(why, "VT_CPU_SIMD="), "refusal names the switch: %s", why);
                ck_assert_msg(p != 0, "the scalar path always runs: %s", why);
                fprintf(stderr, "determinism: path %s not run here: %s\n", paths[p], why);
                break;
            }
            ran = 1;
            if (!first) {
                first = out;
                first_size = size;
                snprintf(first_name, sizeof first_name, "%s/%s threads", paths[p], threads[t]);
                continue;
            }
            ck_assert_uint_eq(size, first_size);
            size_t diff = 0;
            while (diff < size && out[diff] == first[diff])
                diff++;
            ck_assert_msg(diff == size, "%s/%s threads differs from %s at byte %zu of %zu", paths[p], threads[t],
                          first_name, diff, size);
            free(out);
        }
        ran_paths += ran;
    }
    fprintf(stderr, "determinism: %d SIMD paths x 3 thread counts gave the same %zu bytes\n", ran_paths, first_size);
#if defined(__x86_64__) || defined(__aarch64__)
    ck_assert_msg(ran_paths >= 2, "scalar and at least one SIMD path compared");
#endif
    unsetenv("VT_CPU_SIMD");
    unsetenv("VT_NUM_THREADS");
    free(first);
}
END_TEST

/* The int16-activation path of MatMul for q weights with k >= 1024
 * (backends/cpu/simd/cpu_qx.h), recomputed here from its definition for Q8_0
 * and Q4_0 (one run of 32, scale and offset): x per 32-element block as
 * q = rint(x * (32767 / amax)) with dx = amax / 32767, exact integer lane
 * sums P[l] over positions 2l, 2l+1, 16+2l, 17+2l of sum (c - o) * q, one
 * fmaf(P, d * dx, s[l]) per block, the lane tree. Bit for bit. */
static float qx_canonical(vt_dtype t, const uint8_t *row, const float *x, int64_t k)
{
    float s[8] = {0};
    const size_t bb = t == VT_Q8_0 ? 34 : 18;
    for (int64_t g = 0; g < k / 32; g++) {
        const float *xb = x + 32 * g;
        const uint8_t *blk = row + (size_t)g * bb;
        float amax = 0;
        int finite = 1;
        for (int j = 0; j < 32; j++) {
            finite &= isfinite(xb[j]) != 0;
            amax = fabsf(xb[j]) > amax ? fabsf(xb[j]) : amax;
        }
        float dx = !finite ? NAN : amax < 0x1p-100f ? 0.0f : amax / 32767.0f;
        float inv = !finite || amax < 0x1p-100f ? 0.0f : 32767.0f / amax;
        int q[32], c[32];
        for (int j = 0; j < 32; j++) {
            q[j] = inv == 0.0f ? 0 : (int)lrintf(xb[j] * inv);
            c[j] = t == VT_Q8_0 ? (int8_t)blk[2 + j] : j < 16 ? (blk[2 + j] & 15) - 8 : (blk[2 + j - 16] >> 4) - 8;
        }
        const float f = ref_half(blk) * dx;
        for (int l = 0; l < 8; l++) {
            int P = c[2 * l] * q[2 * l] + c[2 * l + 1] * q[2 * l + 1] + c[16 + 2 * l] * q[16 + 2 * l] +
                    c[17 + 2 * l] * q[17 + 2 * l];
            s[l] = fmaf((float)P, f, s[l]);
        }
    }
    return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
}

START_TEST(matmul_int16_path_is_canonical)
{
    vt_device *d;
    vt_rng r;
    vt_registry *reg = open_cpu_rng(&d, &r, 113);
    static const vt_dtype types[2] = {VT_Q8_0, VT_Q4_0};
    for (int ti = 0; ti < 2; ti++) {
        const vt_dtype t = types[ti];
        for (int big = 0; big < 2; big++) {
            /* k = 992 keeps the f32 path (SPEC 7: 1e-5 below 1024 terms) */
            const int64_t n = 5, m = 19, k = big ? 2048 : 992;
            weights w = random_weights(&r, t, m, k);
            float *x = malloc((size_t)(n * k) * sizeof *x);
            vt_rng_fill(&r, x, (size_t)(n * k), -1, 1);
            for (int j = 0; j < 32; j++)
                x[k + 64 + j] = 0.0f; /* row 1: a zero block */
            for (int j = 0; j < 32; j++)
                x[2 * k + 96 + j] = j == 3 ? 1e-31f : 0.0f; /* row 2: a block below 2^-100 * 32767 */
            x[3 * k + 5] = INFINITY;                        /* row 3: NaN out */
            int64_t sx[2] = {n, k}, sw[2] = {m, k}, sy[2] = {n, m};
            vt_tensor *tx = make_from(d, VT_F32, 2, sx, x), *tw = make_from(d, t, 2, sw, w.data);
            vt_tensor *ty = make(d, VT_F32, 2, sy);
            poison(ty);
            const vt_tensor *in[2] = {tx, tw};
            ck_assert_msg(run(d, VT_OP_MATMUL, in, 2, ty) == VT_OK, "%s", vt_last_error());
            float *y = read_all(ty);
            double num = 0, den = 0;
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < m; j++) {
                    const float got = y[i * m + j];
                    if (big) {
                        const float want = qx_canonical(
                            t, (const uint8_t *)w.data + (size_t)j * (k / 32) * (t == VT_Q8_0 ? 34 : 18), x + i * k, k);
                        uint32_t gb, wb;
                        memcpy(&gb, &got, 4);
                        memcpy(&wb, &want, 4);
                        ck_assert_msg(gb == wb || (isnan(got) && isnan(want)),
                                      "MatMul %s k=%lld [%lld,%lld]: %a, the int16 canonical order gives %a",
                                      vt_dtype_name(t), (long long)k, (long long)i, (long long)j, got, want);
                    }
                    if (i == 3) {
                        ck_assert_msg(big ? isnan(got) : !isfinite(got), "row with an infinity: %g", got);
                        continue;
                    }
                    double ref = 0;
                    for (int64_t l = 0; l < k; l++)
                        ref += (double)x[i * k + l] * w.values[j * k + l];
                    num += (got - ref) * (got - ref);
                    den += ref * ref;
                }
            /* the f32 path is ~1e-7 from exact; the int16 path ~1.5e-5 */
            const double e = sqrt(num / den);
            if (big)
                ck_assert_msg(e > 2e-6 && e < 4e-5, "MatMul %s k=%lld: rel err %g, want the int16 path's ~1.5e-5",
                              vt_dtype_name(t), (long long)k, e);
            else
                ck_assert_msg(e < 2e-6, "MatMul %s k=%lld: rel err %g, want the f32 path's", vt_dtype_name(t),
                              (long long)k, e);
            free(y);
            free(x);
            free_weights(&w);
            vt_tensor_destroy(tx);
            vt_tensor_destroy(tw);
            vt_tensor_destroy(ty);
        }
    }
    vt_registry_close(reg);
}
END_TEST

/* The pool's threads spin only briefly after a parallel region, then
 * sleep: with 4 threads, 300 ms of idling after a MatMul costs the process
 * well under 30 ms of CPU time (a spinning pool would burn ~1 s). */
START_TEST(idle_pool_burns_no_cpu)
{
    setenv("VT_NUM_THREADS", "4", 1);
    vt_device *d;
    vt_registry *reg = open_cpu(&d);
    unsetenv("VT_NUM_THREADS");
    vt_rng r;
    vt_rng_init(&r, 117);
    const int64_t m = 256, k = 4096;
    weights w = random_weights(&r, VT_Q4_0, m, k);
    float *x = malloc((size_t)k * sizeof *x);
    vt_rng_fill(&r, x, (size_t)k, -1, 1);
    int64_t sx[2] = {1, k}, sw[2] = {m, k}, sy[2] = {1, m};
    vt_tensor *tx = make_from(d, VT_F32, 2, sx, x), *tw = make_from(d, VT_Q4_0, 2, sw, w.data);
    vt_tensor *ty = make(d, VT_F32, 2, sy);
    const vt_tensor *in[2] = {tx, tw};
    for (int i = 0; i < 3; i++)
        ck_assert_msg(run(d, VT_OP_MATMUL, in, 2, ty) == VT_OK, "%s", vt_last_error());
    struct timespec c0, c1, nap = {0, 300 * 1000 * 1000};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    while (nanosleep(&nap, &nap) != 0)
        ;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    const double used = (double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec);
    ck_assert_msg(used < 0.030, "an idle pool of 4 threads used %.3f s of CPU in 0.3 s", used);
    free(x);
    free_weights(&w);
    vt_tensor_destroy(tx);
    vt_tensor_destroy(tw);
    vt_tensor_destroy(ty);
    vt_registry_close(reg);
}
END_TEST

START_TEST(bad_simd_switch_is_named)
{
    setenv("VT_CPU_SIMD", "sse9", 1);
    vt_registry *reg = vt_test_open(NULL, "cpu", 0);
    vt_device *d;
    ck_assert_int_ne(vt_registry_find_device(reg, "cpu:0", &d), VT_OK);
    const vt_backend_info b = vt_test_backend(reg, "cpu");
    ck_assert_msg(strstr(b.reason, "VT_CPU_SIMD=sse9") && strstr(b.reason, "scalar"), "reason: %s", b.reason);
    vt_registry_close(reg);
    unsetenv("VT_CPU_SIMD");
}
END_TEST

int main(void)
{
    Suite *s;
    TCase *tc;
    int gate = vt_test_suite_begin("cpu", "cpu-quant", "quant", 600, &s, &tc);
    if (gate != 0)
        return gate;
    tcase_add_test(tc, layouts_match_the_type_table);
    tcase_add_test(tc, shared_block_decoder_matches_reference);
    tcase_add_test(tc, k4_scale_words_match_reference);
    tcase_add_test(tc, dequantize_is_exact);
    tcase_add_test(tc, dequantize_scale_sweep);
    tcase_add_test(tc, get_rows_is_exact);
    tcase_add_test(tc, get_rows_bad_index_is_named);
    tcase_add_test(tc, matmul_q_matches_reference);
    tcase_add_test(tc, moe_expert_matmul_matches_reference);
    tcase_add_test(tc, moe_bad_id_is_named);
    tcase_add_test(tc, same_bits_for_any_threads_and_simd_path);
    tcase_add_test(tc, bad_simd_switch_is_named);
    tcase_add_test(tc, matmul_int16_path_is_canonical);
    tcase_add_test(tc, idle_pool_burns_no_cpu);
    return vt_test_run_suite(s);
}
