/* test_quantize.c - vt_quantize_row (models/quantize.c) round-trips
 * through the cpu backend's Dequantize: values a format represents
 * exactly come back bit for bit (Q4_K, Q6_K, Q8_0, F16, BF16, F32), the
 * K-quant bytes decode the same through an independent decoder written
 * here from ggml's block layouts, random rows come back within each
 * format's error bound, and what cannot be written is refused by name. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <vt/vt.h>
#include <vt/vt_quantize.h>

#include "test_util.h"

static vt_device *g_dev;
static vt_registry *g_reg;

/* cpu:0, opened once per test process (inside a test: vt_test_open asserts). */
static void open_cpu(void)
{
    if (!g_reg) {
        g_reg = vt_test_open(NULL, "cpu", 0);
        g_dev = vt_test_device(g_reg, "cpu:0");
    }
}

/* Quantize n floats as dt, dequantize them on cpu:0 into y. */
static void round_trip(int dt, const float *x, int64_t n, float *y, uint8_t *bytes)
{
    open_cpu();
    uint64_t nb = (uint64_t)n / (uint64_t)vt_dtype_get(dt)->block_elems * vt_dtype_get(dt)->block_bytes;
    ck_assert_msg(vt_quantize_row(dt, x, n, bytes) == VT_OK, "%s: %s", vt_dtype_name(dt), vt_last_error());
    int64_t shape[1] = {n};
    vt_tensor *q, *f;
    ck_assert_int_eq(vt_tensor_create(g_dev, (vt_dtype)dt, 1, shape, &q), VT_OK);
    ck_assert_int_eq(vt_tensor_create(g_dev, VT_F32, 1, shape, &f), VT_OK);
    ck_assert_int_eq(vt_tensor_write(q, bytes, nb), VT_OK);
    vt_op op = vt_dtype_get(dt)->quantized ? VT_OP_DEQUANTIZE : VT_OP_COPY;
    ck_assert_msg(vt_op_run(g_dev, op, (const vt_tensor *const[]){q}, 1, (vt_tensor *const[]){f}, 1, NULL, 0) == VT_OK,
                  "%s: %s", vt_dtype_name(dt), vt_last_error());
    ck_assert_int_eq(vt_tensor_read(f, y, (size_t)n * sizeof *y), VT_OK);
    vt_tensor_destroy(q);
    vt_tensor_destroy(f);
}

static float half_at(const uint8_t *p)
{
    uint16_t h;
    memcpy(&h, p, 2);
    return vt_f16_to_f32(h);
}

/* ggml's get_scale_min_k4. */
static void k4_scale_min(int j, const uint8_t *q, int *d, int *m)
{
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

/* ggml's dequantize_row_q4_K for one block. */
static void ref_q4_k(const uint8_t *b, float *y)
{
    float d = half_at(b), dmin = half_at(b + 2);
    const uint8_t *q = b + 16;
    int is = 0;
    for (int j = 0; j < 256; j += 64) {
        int sc, m;
        k4_scale_min(is, b + 4, &sc, &m);
        float d1 = d * sc, m1 = dmin * m;
        k4_scale_min(is + 1, b + 4, &sc, &m);
        float d2 = d * sc, m2 = dmin * m;
        for (int l = 0; l < 32; l++)
            *y++ = d1 * (q[l] & 0xF) - m1;
        for (int l = 0; l < 32; l++)
            *y++ = d2 * (q[l] >> 4) - m2;
        q += 32;
        is += 2;
    }
}

/* ggml's dequantize_row_q6_K for one block. */
static void ref_q6_k(const uint8_t *b, float *y)
{
    float d = half_at(b + 208);
    const uint8_t *ql = b, *qh = b + 128;
    const int8_t *sc = (const int8_t *)(b + 192);
    for (int n = 0; n < 256; n += 128) {
        for (int l = 0; l < 32; l++) {
            int is = l / 16;
            int q1 = (int8_t)((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
            int q2 = (int8_t)((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
            int q3 = (int8_t)((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
            int q4 = (int8_t)((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
            y[l] = d * sc[is] * q1;
            y[l + 32] = d * sc[is + 2] * q2;
            y[l + 64] = d * sc[is + 4] * q3;
            y[l + 96] = d * sc[is + 6] * q4;
        }
        y += 128;
        ql += 64;
        qh += 32;
        sc += 8;
    }
}

/* Values on each format's grid come back exactly. */
START_TEST(representable_values_come_back_exactly)
{
    enum { N = 512 };
    float x[N], y[N], r[N];
    uint8_t bytes[N * 4];
    /* Q4_K: every group of 32 spans codes 0..15 with step 63/64 and
     * minimum -63/64, so d = dmin = 1/64 and every scale and min is 63. */
    for (int i = 0; i < N; i++)
        x[i] = (float)(63 * (i % 16) - 63) / 64.0f;
    round_trip(VT_Q4_K, x, N, y, bytes);
    ck_assert_float_eq(half_at(bytes), 1.0f / 64);
    ck_assert_float_eq(half_at(bytes + 2), 1.0f / 64);
    for (int i = 0; i < N; i++)
        ck_assert_msg(y[i] == x[i], "q4_k element %d: %g, want %g", i, y[i], x[i]);
    ref_q4_k(bytes, r);
    ref_q4_k(bytes + 144, r + 256);
    ck_assert_msg(!memcmp(r, x, sizeof x), "q4_k: ggml's decoder disagrees");
    /* Q6_K: every group of 16 holds -32 (the signed largest) and codes
     * -32..31 times 1/8: scales -128, d = -1/1024. */
    for (int i = 0; i < N; i++)
        x[i] = (float)(i % 16 == 0 ? -32 : (int)((i * 37) % 64) - 32) / 8.0f;
    round_trip(VT_Q6_K, x, N, y, bytes);
    ck_assert_float_eq(half_at(bytes + 208), -1.0f / 1024);
    ck_assert_int_eq((int8_t)bytes[192], -128);
    for (int i = 0; i < N; i++)
        ck_assert_msg(y[i] == x[i], "q6_k element %d: %g, want %g", i, y[i], x[i]);
    ref_q6_k(bytes, r);
    ref_q6_k(bytes + 210, r + 256);
    ck_assert_msg(!memcmp(r, x, sizeof x), "q6_k: ggml's decoder disagrees");
    /* Q8_0: -127..127 times 1/64 with the block maximum 127/64. */
    for (int i = 0; i < N; i++)
        x[i] = (float)(i % 32 == 0 ? 127 : (i * 29) % 255 - 127) / 64.0f;
    round_trip(VT_Q8_0, x, N, y, bytes);
    for (int i = 0; i < N; i++)
        ck_assert_msg(y[i] == x[i], "q8_0 element %d: %g, want %g", i, y[i], x[i]);
    /* Plain types: values with 8 significant bits. */
    const int plain[3] = {VT_F32, VT_F16, VT_BF16};
    for (int t = 0; t < 3; t++) {
        for (int i = 0; i < N; i++)
            x[i] = ldexpf((float)((i * 13) % 256 - 128), i % 9 - 8);
        round_trip(plain[t], x, N, y, bytes);
        ck_assert_msg(!memcmp(x, y, sizeof x), "%s does not round-trip", vt_dtype_name(plain[t]));
    }
}
END_TEST

/* Random rows (block scales spread over 2^-6 .. 2^6): the dequantized
 * values, for the K-quants also through ggml's decoder, within each
 * format's bound relative to the block's largest element. */
START_TEST(random_rows_within_bounds)
{
    enum { N = 4096 };
    static float x[N], y[N], r[N];
    static uint8_t bytes[N * 4];
    vt_rng rng;
    vt_rng_init(&rng, 77);
    for (int i = 0; i < N; i++)
        x[i] = vt_rng_uniform(&rng, -1, 1) * ldexpf(1, (i / 256) % 13 - 6);
    /* Bound: max |error| / max |x| of the 256-element block. Q8_0: half a
     * step plus the f16 scale's rounding; Q4_0, IQ4_NL and Q6_K map the
     * signed largest element to the end of an asymmetric code range, so
     * the opposite end may clamp by one step (Q4_0 1/8, IQ4_NL 14/127,
     * Q6_K 1/32, and a group whose step is the largest but of the other
     * sign gets scale 127 for 128 (ggml's clamp): 32 - 31 * 127/128 =
     * 1.24 steps); Q4_K half of a step of (max - min) / 15 plus the
     * 6-bit min's rounding (0.075); F16 and BF16 half an ulp.
     * The K-quants' f16 super-block scales of the smallest blocks (2^-6)
     * are subnormal, where f16 rounds by up to 2^-25 absolute, not 2^-11
     * relative: that rounding times the largest scale * code product
     * (Q6_K 128 * 32, Q4_K 63 * 15 for d plus 63 for dmin) is added as an
     * absolute term (seed 12127783589 exceeded the relative bound alone). */
    const float sub = ldexpf(1, -25);
    const struct {
        int dt;
        float bound, abs;
    } f[] = {{VT_Q8_0, (0.5f + 127.0f / 2048) / 127, 0},
             {VT_Q4_0, 1.01f / 8, 0},
             {VT_IQ4_NL, 14.5f / 127, 0},
             {VT_Q4_K, 0.08f, (63 * 15 + 63) * sub},
             {VT_Q6_K, 1.27f / 32, 128 * 32 * sub},
             {VT_F16, 1.0f / 2048, 0},
             {VT_BF16, 1.0f / 256, 0},
             {VT_F32, 0, 0}};
    for (size_t k = 0; k < sizeof f / sizeof f[0]; k++) {
        round_trip(f[k].dt, x, N, y, bytes);
        if (f[k].dt == VT_Q4_K || f[k].dt == VT_Q6_K) {
            for (int b = 0; b < N / 256; b++)
                (f[k].dt == VT_Q4_K ? ref_q4_k : ref_q6_k)(bytes + b * vt_dtype_get(f[k].dt)->block_bytes, r + 256 * b);
            for (int i = 0; i < N; i++)
                ck_assert_msg(fabsf(r[i] - y[i]) <= 1e-6f * fabsf(r[i]), "%s element %d: Dequantize %g, ggml %g",
                              vt_dtype_name(f[k].dt), i, y[i], r[i]);
        }
        for (int b = 0; b < N / 256; b++) {
            float amax = 0, err = 0;
            for (int i = 256 * b; i < 256 * (b + 1); i++) {
                amax = fmaxf(amax, fabsf(x[i]));
                err = fmaxf(err, fabsf(y[i] - x[i]));
            }
            ck_assert_msg(err <= f[k].bound * amax + f[k].abs, "%s block %d: error %g of max %g (bound %g)",
                          vt_dtype_name(f[k].dt), b, err, amax, f[k].bound * amax + f[k].abs);
        }
    }
}
END_TEST

/* Bad rows are refused by name, dst untouched: NULL pointers, and for a
 * block format a NaN or an infinity (a block's scale would be NaN, its
 * codes a float-to-int conversion of NaN); a plain type converts them. */
START_TEST(bad_rows_are_refused_by_name)
{
    float x[64];
    uint8_t b[256];
    for (int i = 0; i < 64; i++)
        x[i] = 0.25f * (float)(i - 30);
    ck_assert_int_eq(vt_quantize_row(VT_Q4_0, NULL, 32, b), VT_E_INVALID_ARG);
    ck_assert_ptr_nonnull(strstr(vt_last_error(), "vt_quantize_row: NULL src or dst for 32 elements"));
    ck_assert_int_eq(vt_quantize_row(VT_F16, x, 32, NULL), VT_E_INVALID_ARG);
    ck_assert_int_eq(vt_quantize_row(VT_Q4_0, NULL, 0, NULL), VT_OK);
    const struct {
        vt_dtype dt;
        int at;
        float v;
        const char *why;
    } bad[] = {
        {VT_Q4_0, 3, NAN, "vt_quantize_row: element 3 is nan: q4_0 blocks hold finite values only"},
        {VT_Q8_0, 40, INFINITY, "vt_quantize_row: element 40 is inf: q8_0 blocks hold finite values only"},
        {VT_IQ4_NL, 63, -INFINITY, "vt_quantize_row: element 63 is -inf: iq4_nl blocks hold finite values only"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        float y[64];
        memcpy(y, x, sizeof y);
        y[bad[k].at] = bad[k].v;
        memset(b, 0xab, sizeof b);
        ck_assert_int_eq(vt_quantize_row(bad[k].dt, y, 64, b), VT_E_INVALID_ARG);
        ck_assert_msg(strstr(vt_last_error(), bad[k].why), "%s", vt_last_error());
        for (size_t i = 0; i < sizeof b; i++)
            ck_assert_uint_eq(b[i], 0xab);
    }
    float y[2] = {NAN, INFINITY};
    uint16_t h[2];
    ck_assert_int_eq(vt_quantize_row(VT_F16, y, 2, h), VT_OK);
    ck_assert_uint_eq(h[1], 0x7c00);
    ck_assert_uint_eq(h[0] & 0x7c00, 0x7c00);
    ck_assert_uint_ne(h[0] & 0x3ff, 0);
}
END_TEST

START_TEST(unwritable_formats_are_refused)
{
    float x[256] = {0};
    uint8_t b[1024];
    ck_assert(vt_quantize_supported(VT_Q4_K) && vt_quantize_supported(VT_Q6_K));
    ck_assert(!vt_quantize_supported(VT_Q5_K) && !vt_quantize_supported(VT_I32));
    ck_assert_int_eq(vt_quantize_row(VT_Q5_K, x, 256, b), VT_E_INVALID_ARG);
    ck_assert_ptr_nonnull(strstr(vt_last_error(), "cannot encode 256 elements as q5_k"));
    ck_assert_int_eq(vt_quantize_row(VT_Q4_K, x, 128, b), VT_E_INVALID_ARG);
    ck_assert_ptr_nonnull(strstr(vt_last_error(), "cannot encode 128 elements as q4_k"));
    /* An all-zero block encodes to zeros, not NaN. */
    float y[256];
    round_trip(VT_Q4_K, x, 256, y, b);
    for (int i = 0; i < 256; i++)
        ck_assert_float_eq(y[i], 0);
    round_trip(VT_Q6_K, x, 256, y, b);
    for (int i = 0; i < 256; i++)
        ck_assert_float_eq(y[i], 0);
}
END_TEST

int main(void)
{
    Suite *s;
    TCase *tc;
    int gate = vt_test_suite_begin(NULL, "quantize", "rows", 0, &s, &tc);
    if (gate != 0)
        return gate;
    tcase_add_test(tc, representable_values_come_back_exactly);
    tcase_add_test(tc, random_rows_within_bounds);
    tcase_add_test(tc, unwritable_formats_are_refused);
    tcase_add_test(tc, bad_rows_are_refused_by_name);
    return vt_test_run_suite(s);
}
