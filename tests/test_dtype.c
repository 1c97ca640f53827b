/* test_dtype.c - the type table and the half/bfloat16 conversions, against
 * independent references (ldexp decoding, nearest-value search). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_util.h"

START_TEST(type_table_matches_ggml)
{
    /* (id, name, block elements, block bytes) from ggml's type traits. */
    static const struct {
        int id;
        const char *name;
        unsigned blck, bytes;
    } want[] = {
        {0, "f32", 1, 4},         {1, "f16", 1, 2},         {2, "q4_0", 32, 18},      {3, "q4_1", 32, 20},
        {6, "q5_0", 32, 22},      {7, "q5_1", 32, 24},      {8, "q8_0", 32, 34},      {9, "q8_1", 32, 36},
        {10, "q2_k", 256, 84},    {11, "q3_k", 256, 110},   {12, "q4_k", 256, 144},   {13, "q5_k", 256, 176},
        {14, "q6_k", 256, 210},   {15, "q8_k", 256, 292},   {16, "iq2_xxs", 256, 66}, {17, "iq2_xs", 256, 74},
        {18, "iq3_xxs", 256, 98}, {19, "iq1_s", 256, 50},   {20, "iq4_nl", 32, 18},   {21, "iq3_s", 256, 110},
        {22, "iq2_s", 256, 82},   {23, "iq4_xs", 256, 136}, {24, "i8", 1, 1},         {25, "i16", 1, 2},
        {26, "i32", 1, 4},        {27, "i64", 1, 8},        {28, "f64", 1, 8},        {29, "iq1_m", 256, 56},
        {30, "bf16", 1, 2},       {34, "tq1_0", 256, 54},   {35, "tq2_0", 256, 66},   {39, "mxfp4", 32, 17},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const vt_dtype_info *t = vt_dtype_get(want[i].id);
        ck_assert_msg(t != NULL, "type %d missing", want[i].id);
        ck_assert_str_eq(t->name, want[i].name);
        ck_assert_uint_eq(t->block_elems, want[i].blck);
        ck_assert_uint_eq(t->block_bytes, want[i].bytes);
        vt_dtype got = VT_DTYPE_COUNT;
        ck_assert(vt_dtype_from_name(want[i].name, &got));
        ck_assert_int_eq(got, want[i].id);
    }
    static const int removed[] = {4, 5, 31, 32, 33, 36, 37, 38};
    for (size_t i = 0; i < sizeof removed / sizeof removed[0]; i++) {
        ck_assert_ptr_null(vt_dtype_get(removed[i]));
        ck_assert(vt_dtype_is_removed(removed[i]));
        char want_name[32];
        snprintf(want_name, sizeof want_name, "removed(%d)", removed[i]);
        ck_assert_str_eq(vt_dtype_name(removed[i]), want_name);
    }
    ck_assert_ptr_null(vt_dtype_get(40));
    ck_assert_ptr_null(vt_dtype_get(-1));
    ck_assert_str_eq(vt_dtype_name(77), "unknown(77)");
    vt_dtype got = VT_F32;
    ck_assert(vt_dtype_from_name("Q4_K", &got));
    ck_assert_int_eq(got, VT_Q4_K);
    ck_assert(!vt_dtype_from_name("q4", &got));
    ck_assert_int_eq(got, VT_Q4_K); /* untouched on a refusal */
    ck_assert(!vt_dtype_from_name(NULL, &got));
    ck_assert(vt_dtype_get(VT_Q4_0)->quantized && !vt_dtype_get(VT_F16)->quantized);
}
END_TEST

START_TEST(byte_sizes_check_blocks_and_overflow)
{
    uint64_t b = 0;
    ck_assert(vt_dtype_row_bytes(VT_Q4_0, 4096, &b));
    ck_assert_uint_eq(b, 4096 / 32 * 18);
    ck_assert(!vt_dtype_row_bytes(VT_Q4_0, 33, &b));
    ck_assert(!vt_dtype_row_bytes(4, 32, &b));
    ck_assert(!vt_dtype_row_bytes(VT_F32, -1, &b));
    int64_t shape[3] = {3, 5, 256};
    ck_assert(vt_dtype_tensor_bytes(VT_Q6_K, 3, shape, &b));
    ck_assert_uint_eq(b, 15u * 210u);
    int64_t huge[4] = {INT64_MAX / 2, INT64_MAX / 2, 4, 32};
    b = 12345;
    ck_assert(!vt_dtype_tensor_bytes(VT_F32, 4, huge, &b));
    ck_assert_uint_eq(b, 12345);
    int64_t zero[2] = {0, 64};
    ck_assert(vt_dtype_tensor_bytes(VT_F16, 2, zero, &b));
    ck_assert_uint_eq(b, 0);
}
END_TEST

/* The one size rule: a zero dim does not hide a product that wraps, in any
 * position; an empty tensor whose other dims fit is valid (0 bytes). */
START_TEST(a_zero_dim_hides_no_overflow)
{
    uint64_t b = 12345;
    int64_t e = 12345;
    int64_t hidden[3] = {0, (int64_t)1 << 59, 8}; /* 2^59 * 8 * 4 bytes wrap */
    ck_assert(!vt_dtype_tensor_bytes(VT_F32, 3, hidden, &b));
    ck_assert_int_eq(vt_dtype_shape_size(VT_F32, 3, hidden, &e, &b), VT_SIZE_BYTES_OVERFLOW);
    int64_t inner[3] = {4294967297, 4294967295, 0}; /* zero innermost */
    ck_assert(!vt_dtype_tensor_bytes(VT_F32, 3, inner, &b));
    int64_t elems[2] = {0, INT64_MAX}, elems2[3] = {2, INT64_MAX / 2 + 1, 0};
    ck_assert_int_eq(vt_dtype_shape_size(VT_I8, 2, elems, &e, &b), VT_SIZE_OK);
    ck_assert_int_eq(vt_dtype_shape_size(VT_I8, 3, elems2, &e, &b), VT_SIZE_ELEMENTS_OVERFLOW);
    ck_assert_uint_eq(b, 0);
    int64_t fits[3] = {(int64_t)1 << 61, 0, 1}; /* 2^61 * 4 bytes fit: valid and empty */
    ck_assert_int_eq(vt_dtype_shape_size(VT_F32, 3, fits, &e, &b), VT_SIZE_OK);
    ck_assert_int_eq(e, 0);
    ck_assert_uint_eq(b, 0);
    int64_t q[2] = {0, 33};
    ck_assert_int_eq(vt_dtype_shape_size(VT_Q4_0, 2, q, &e, &b), VT_SIZE_NOT_BLOCKS);
    int64_t neg[2] = {0, -1};
    ck_assert_int_eq(vt_dtype_shape_size(VT_F32, 2, neg, &e, &b), VT_SIZE_NEGATIVE);
}
END_TEST

/* The one number parser: digits (or 0x and hex digits) and nothing else. */
START_TEST(numbers_are_parsed_strictly)
{
    uint64_t u = 7;
    ck_assert(vt_parse_u64("18446744073709551615", &u) && u == UINT64_MAX);
    ck_assert(vt_parse_u64("0x10", &u) && u == 16);
    ck_assert(vt_parse_u64("0", &u) && u == 0);
    u = 7;
    ck_assert(!vt_parse_u64("18446744073709551616", &u));
    ck_assert(!vt_parse_u64(" 5", &u));
    ck_assert(!vt_parse_u64(" -1", &u));
    ck_assert(!vt_parse_u64("-1", &u));
    ck_assert(!vt_parse_u64("+1", &u));
    ck_assert(!vt_parse_u64("5 ", &u));
    ck_assert(!vt_parse_u64("", &u));
    ck_assert(!vt_parse_u64("0x", &u));
    ck_assert(!vt_parse_u64(NULL, &u));
    ck_assert_uint_eq(u, 7);
    int64_t i = 7;
    ck_assert(vt_parse_i64("-9223372036854775808", INT64_MIN, INT64_MAX, &i) && i == INT64_MIN);
    ck_assert(vt_parse_i64("-5", -10, 10, &i) && i == -5);
    ck_assert(!vt_parse_i64("11", -10, 10, &i));
    ck_assert(!vt_parse_i64("9223372036854775808", INT64_MIN, INT64_MAX, &i));
    ck_assert(!vt_parse_i64("- 5", -10, 10, &i));
    ck_assert(!vt_parse_i64("--5", -10, 10, &i));
    ck_assert(!vt_parse_i64(" 5", -10, 10, &i));
    ck_assert_int_eq(i, -5);
}
END_TEST

/* Independent half decoding: sign * mantissa * 2^exp with ldexp. */
static double ref_f16(uint16_t h)
{
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v;
    if (e == 0)
        v = ldexp(m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexp(m + 1024, e - 25);
    return s ? -v : v;
}

START_TEST(f16_decode_is_exact_for_every_half)
{
    for (uint32_t h = 0; h < 65536; h++) {
        double want = ref_f16((uint16_t)h);
        float got = vt_f16_to_f32((uint16_t)h);
        if (isnan(want))
            ck_assert_msg(isnan(got), "half 0x%04x should be NaN", h);
        else
            ck_assert_msg((double)got == want && !signbit(got) == !signbit(want), "half 0x%04x: %g, want %g", h,
                          (double)got, want);
    }
}
END_TEST

/* f32 -> f16 must give the nearest half, ties to even. */
static void check_f16_rounding(float f)
{
    uint16_t h = vt_f32_to_f16(f);
    if (isnan(f)) {
        ck_assert_msg(isnan(ref_f16(h)), "NaN must stay NaN");
        return;
    }
    double got = ref_f16(h);
    ck_assert_msg(!signbit(got) == !signbit(f) || got == 0.0, "sign of %a", (double)f);
    double err = fabs(got - (double)f);
    /* Every other finite half must be no closer (ties: even mantissa). */
    for (int d = -1; d <= 1; d += 2) {
        uint16_t o = (uint16_t)(h + d);
        if ((o & 0x7c00) == 0x7c00 && (o & 0x3ff))
            continue; /* NaN neighbour */
        if ((h & 0x7fff) == 0 && d < 0)
            continue;
        double other = ref_f16(o);
        if (isinf(other) && !isinf(got))
            continue;
        double oerr = fabs(other - (double)f);
        if (isinf(got)) {
            ck_assert_msg(fabs((double)f) >= 65520.0, "%a overflowed to inf", (double)f);
            continue;
        }
        ck_assert_msg(err < oerr || (err == oerr && !(h & 1)),
                      "%a -> 0x%04x (%a), neighbour 0x%04x (%a) is closer or ties to even", (double)f, h, got, o,
                      other);
    }
}

START_TEST(f16_encode_rounds_to_nearest_even)
{
    vt_rng r;
    vt_rng_init(&r, 11);
    static const float edge[] = {0.0f,     -0.0f,         1.0f,          65504.0f,      65519.99f,
                                 65520.0f, 1e9f,          5.96e-8f,      2.98e-8f,      2.9802322e-08f,
                                 6.1e-5f,  6.097555e-05f, 1.0009765625f, 1.00048828125f};
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++) {
        check_f16_rounding(edge[i]);
        check_f16_rounding(-edge[i]);
    }
    for (int i = 0; i < 200000; i++) {
        uint32_t bits = (uint32_t)vt_rng_next(&r);
        float f;
        memcpy(&f, &bits, 4);
        if (fabsf(f) > 1e6f || (fabsf(f) < 1e-9f && f != 0))
            f = ldexpf((float)vt_rng_uniform(&r, -2.f, 2.f), (int)vt_rng_below(&r, 44) - 28);
        check_f16_rounding(f);
    }
    ck_assert_uint_eq(vt_f32_to_f16(INFINITY), 0x7c00);
    ck_assert_uint_eq(vt_f32_to_f16(-INFINITY), 0xfc00);
    ck_assert(isnan(vt_f16_to_f32(vt_f32_to_f16(NAN))));
}
END_TEST

START_TEST(bf16_rounds_to_nearest_even)
{
    vt_rng r;
    vt_rng_init(&r, 12);
    for (int i = 0; i < 200000; i++) {
        uint32_t bits = (uint32_t)vt_rng_next(&r);
        float f;
        memcpy(&f, &bits, 4);
        if (!isfinite(f) || fabsf(f) > 1e38f)
            continue;
        uint16_t h = vt_f32_to_bf16(f);
        double got = vt_bf16_to_f32(h);
        double lo = vt_bf16_to_f32((uint16_t)(bits >> 16)), hi = vt_bf16_to_f32((uint16_t)((bits >> 16) + 1));
        double want;
        double dlo = fabs((double)f - lo), dhi = fabs(hi - (double)f);
        if (dlo < dhi)
            want = lo;
        else if (dhi < dlo)
            want = hi;
        else
            want = ((bits >> 16) & 1) ? hi : lo;
        ck_assert_msg(got == want, "%a -> %a, want %a", (double)f, got, want);
    }
    ck_assert(isnan(vt_bf16_to_f32(vt_f32_to_bf16(NAN))));
}
END_TEST

/* The tree's one splitmix64 (vt_params.h) is Vigna's reference generator. */
START_TEST(splitmix64_matches_the_reference)
{
    uint64_t s = 0;
    ck_assert_uint_eq(vt_splitmix64_next(&s), 0xe220a8397b1dcdafull);
    ck_assert_uint_eq(vt_splitmix64_next(&s), 0x6e789e6aa1b965f4ull);
    ck_assert_uint_eq(vt_splitmix64_next(&s), 0x06c45d188009454full);
    ck_assert_uint_eq(s, 3 * VT_SPLITMIX64_GAMMA);
    /* Sample's counter-based mix is the same function of the state */
    ck_assert_uint_eq(vt_sample_mix(0), 0xe220a8397b1dcdafull);
}
END_TEST

/* The tree's one UTF-8 validator (vt_utf8.h): lengths and code points of
 * valid sequences, 0 for every malformed one. */
START_TEST(utf8_decode_accepts_and_refuses)
{
    static const struct {
        const char *s;
        size_t n, len;
        uint32_t cp;
    } cases[] = {
        {"a", 1, 1, 0x61},
        {"\xc2\x80", 2, 2, 0x80},
        {"\xc3\xa9", 2, 2, 0xe9},
        {"\xe2\x82\xac", 3, 3, 0x20ac},
        {"\xf0\x9f\x98\x80", 4, 4, 0x1f600},
        {"\xf4\x8f\xbf\xbf", 4, 4, 0x10ffff},
        {"\x80", 1, 0, 0},             /* a stray continuation byte */
        {"\xc0\xaf", 2, 0, 0},         /* overlong '/' */
        {"\xe0\x80\xaf", 3, 0, 0},     /* overlong, three bytes */
        {"\xed\xa0\x80", 3, 0, 0},     /* a surrogate */
        {"\xf4\x90\x80\x80", 4, 0, 0}, /* beyond U+10FFFF */
        {"\xe2\x82\xac", 2, 0, 0},     /* cut short by n */
        {"\xc3(", 2, 0, 0},            /* not a continuation */
        {"\xf8\x88\x80\x80", 4, 0, 0}, /* no 5-byte forms */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t cp = 0xdead;
        size_t len = vt_utf8_decode((const unsigned char *)cases[i].s, cases[i].n, &cp);
        ck_assert_msg(len == cases[i].len, "case %zu: length %zu, want %zu", i, len, cases[i].len);
        if (len)
            ck_assert_msg(cp == cases[i].cp, "case %zu: U+%04X, want U+%04X", i, cp, cases[i].cp);
        else
            ck_assert_msg(cp == 0xdead, "case %zu: a refusal leaves *cp alone", i);
    }
}
END_TEST

int main(void)
{
    Suite *s;
    TCase *tc;
    int gate = vt_test_suite_begin(NULL, "dtype", "table", 60, &s, &tc);
    if (gate != 0)
        return gate;
    tcase_add_test(tc, type_table_matches_ggml);
    tcase_add_test(tc, byte_sizes_check_blocks_and_overflow);
    tcase_add_test(tc, a_zero_dim_hides_no_overflow);
    tcase_add_test(tc, numbers_are_parsed_strictly);
    tcase_add_test(tc, f16_decode_is_exact_for_every_half);
    tcase_add_test(tc, f16_encode_rounds_to_nearest_even);
    tcase_add_test(tc, bf16_rounds_to_nearest_even);
    tcase_add_test(tc, splitmix64_matches_the_reference);
    tcase_add_test(tc, utf8_decode_accepts_and_refuses);
    return vt_test_run_suite(s);
}
