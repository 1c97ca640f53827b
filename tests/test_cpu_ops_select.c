/* test_cpu_ops_select.c - the cpu oracle's TopK, Argmax and Sample against
 * references written here: ties to the lower index, -0 equal to +0 (and
 * returned as stored), -inf values, k = 1, k = n and k = 2048, NaN refused
 * with the row named; Sample token for token against the algorithm of
 * vt_params.h implemented independently, and its frequencies against the
 * softmax distribution. Exit 77 when another backend is selected. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_harness.h"

/* Position of element i in the order "value descending, index ascending"
 * (-0 == +0), by counting: independent of any sort. */
static int64_t rank_of(const float *x, int64_t n, int64_t i)
{
    int64_t r = 0;
    for (int64_t j = 0; j < n; j++)
        r += x[j] > x[i] || (x[j] == x[i] && j < i);
    return r;
}

/* Rows with ties, signed zeros and -inf. */
static float *tied(oh *h, int64_t rows, int64_t n, bool coarse)
{
    float *x = malloc(sizeof(float) * (size_t)(rows * n));
    for (int64_t i = 0; i < rows * n; i++) {
        x[i] = coarse ? (float)oh_irange(h, -6, 6) * 0.5f : vt_rng_uniform(&h->r, -10, 10);
        uint64_t c = vt_rng_below(&h->r, 40);
        if (c == 0)
            x[i] = -0.0f;
        else if (c == 1)
            x[i] = 0.0f;
        else if (c == 2)
            x[i] = -INFINITY;
    }
    return x;
}

static void topk_case(oh *h, int64_t rows, int64_t n, int64_t k, bool coarse)
{
    float *x = tied(h, rows, n, coarse);
    int64_t sx[2] = {rows, n}, so[2] = {rows, k};
    vt_tensor *tx = oh_tensor(h, VT_F32, 2, sx, x), *tv = oh_tensor(h, VT_F32, 2, so, NULL),
              *ti = oh_tensor(h, VT_I32, 2, so, NULL);
    vt_params_topk p = {(int32_t)k};
    const vt_tensor *in[1] = {tx};
    vt_tensor *out[2] = {tv, ti};
    oh_run(h, VT_OP_TOPK, in, 1, out, 2, &p, sizeof p);
    float *v = malloc(sizeof(float) * (size_t)(rows * k));
    int32_t *idx = malloc(sizeof(int32_t) * (size_t)(rows * k)), *want = malloc(sizeof(int32_t) * (size_t)k);
    oh_read(tv, v);
    oh_read(ti, idx);
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * n;
        for (int64_t i = 0; i < n; i++) {
            int64_t rk = rank_of(xr, n, i);
            if (rk < k)
                want[rk] = (int32_t)i;
        }
        for (int64_t j = 0; j < k; j++) {
            ck_assert_msg(idx[r * k + j] == want[j],
                          "TopK rows=%lld n=%lld k=%lld: row %lld slot %lld index %d, want %d", (long long)rows,
                          (long long)n, (long long)k, (long long)r, (long long)j, idx[r * k + j], want[j]);
            ck_assert_msg(memcmp(&v[r * k + j], &xr[want[j]], 4) == 0, "TopK value bits at row %lld slot %lld",
                          (long long)r, (long long)j);
        }
    }
    free(x), free(v), free(idx), free(want);
    vt_tensor_destroy(tx);
    vt_tensor_destroy(tv);
    vt_tensor_destroy(ti);
}

START_TEST(topk_ties_zeros_and_k_range)
{
    oh h;
    oh_open(&h, 401);
    static const int64_t ns[] = {1, 2, 7, 17, 100, 1031};
    for (size_t i = 0; i < 6; i++)
        for (int coarse = 0; coarse <= 1; coarse++) {
            int64_t n = ns[i];
            topk_case(&h, oh_irange(&h, 1, 4), n, 1, coarse);
            topk_case(&h, oh_irange(&h, 1, 4), n, n, coarse);
            topk_case(&h, oh_irange(&h, 1, 4), n, oh_irange(&h, 1, n), coarse);
        }
    topk_case(&h, 2, 2048, 2048, true); /* the largest k */
    topk_case(&h, 3, 3001, 2048, true);
    topk_case(&h, 2, 3001, 2048, false);
    oh_close(&h);
}
END_TEST

/* +0 and -0 tie and keep their order by index; values come back as stored. */
START_TEST(topk_signed_zero_is_a_tie)
{
    oh h;
    oh_open(&h, 402);
    float x[6] = {-0.0f, 0.0f, -1.0f, 0.0f, -0.0f, -INFINITY};
    int64_t sx[1] = {6}, so[1] = {5};
    vt_tensor *tx = oh_tensor(&h, VT_F32, 1, sx, x), *tv = oh_tensor(&h, VT_F32, 1, so, NULL),
              *ti = oh_tensor(&h, VT_I32, 1, so, NULL);
    vt_params_topk p = {5};
    const vt_tensor *in[1] = {tx};
    vt_tensor *out[2] = {tv, ti};
    oh_run(&h, VT_OP_TOPK, in, 1, out, 2, &p, sizeof p);
    float v[5];
    int32_t idx[5], want[5] = {0, 1, 3, 4, 2};
    oh_read(tv, v);
    oh_read(ti, idx);
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(idx[i], want[i]);
        ck_assert(signbit(v[i]) == signbit(x[want[i]]));
    }
    vt_tensor_destroy(tx);
    vt_tensor_destroy(tv);
    vt_tensor_destroy(ti);
    oh_close(&h);
}
END_TEST

/* NaN is refused by TopK, Argmax and Sample, naming the row and index. */
START_TEST(nan_is_refused_with_its_row)
{
    oh h;
    oh_open(&h, 403);
    int64_t sx[2] = {4, 9}, so[2] = {4, 3}, s1[1] = {4};
    float *x = oh_rand(&h, 36, -1, 1);
    x[2 * 9 + 5] = NAN;
    vt_tensor *tx = oh_tensor(&h, VT_F32, 2, sx, x), *tv = oh_tensor(&h, VT_F32, 2, so, NULL),
              *ti = oh_tensor(&h, VT_I32, 2, so, NULL), *ta = oh_tensor(&h, VT_I32, 1, s1, NULL);
    const vt_tensor *in[1] = {tx};
    vt_tensor *out[2] = {tv, ti}, *out1[1] = {ta};
    vt_params_topk pk = {3};
    const char *m = oh_run_fails(&h, VT_E_INVALID_ARG, VT_OP_TOPK, in, 1, out, 2, &pk, sizeof pk);
    ck_assert_msg(strstr(m, "TopK (35)") && strstr(m, "row 2 has NaN at index 5"), "%s", m);
    m = oh_run_fails(&h, VT_E_INVALID_ARG, VT_OP_ARGMAX, in, 1, out1, 1, NULL, 0);
    ck_assert_msg(strstr(m, "Argmax (50)") && strstr(m, "row 2 has NaN at index 5"), "%s", m);
    vt_params_sample ps = {1.0f, 0, 1.0f, 0, 7, 0};
    m = oh_run_fails(&h, VT_E_INVALID_ARG, VT_OP_SAMPLE, in, 1, out1, 1, &ps, sizeof ps);
    ck_assert_msg(strstr(m, "Sample (51)") && strstr(m, "row 2 has NaN at index 5"), "%s", m);
    /* sampling from +inf or from nothing finite is refused too */
    x[2 * 9 + 5] = INFINITY;
    ck_assert_int_eq(vt_tensor_write(tx, x, sizeof(float) * 36), VT_OK);
    m = oh_run_fails(&h, VT_E_INVALID_ARG, VT_OP_SAMPLE, in, 1, out1, 1, &ps, sizeof ps);
    ck_assert_msg(strstr(m, "row 2 has +inf at index 5"), "%s", m);
    for (int i = 0; i < 9; i++)
        x[9 + i] = -INFINITY;
    x[2 * 9 + 5] = 0.0f;
    ck_assert_int_eq(vt_tensor_write(tx, x, sizeof(float) * 36), VT_OK);
    m = oh_run_fails(&h, VT_E_INVALID_ARG, VT_OP_SAMPLE, in, 1, out1, 1, &ps, sizeof ps);
    ck_assert_msg(strstr(m, "row 1 has no finite value"), "%s", m);
    free(x);
    vt_tensor_destroy(tx);
    vt_tensor_destroy(tv);
    vt_tensor_destroy(ti);
    vt_tensor_destroy(ta);
    oh_close(&h);
}
END_TEST

START_TEST(argmax_ties_to_the_lower_index)
{
    oh h;
    oh_open(&h, 404);
    static const int64_t ns[] = {1, 2, 3, 16, 17, 1031, 5003};
    for (size_t i = 0; i < 7; i++)
        for (int coarse = 0; coarse <= 1; coarse++) {
            int64_t rows = oh_irange(&h, 1, 6), n = ns[i];
            float *x = tied(&h, rows, n, coarse);
            int64_t sx[3] = {1, rows, n}, so[2] = {1, rows};
            vt_tensor *tx = oh_tensor(&h, VT_F32, 3, sx, x), *ta = oh_tensor(&h, VT_I32, 2, so, NULL);
            const vt_tensor *in[1] = {tx};
            vt_tensor *out[1] = {ta};
            oh_run(&h, VT_OP_ARGMAX, in, 1, out, 1, NULL, 0);
            int32_t *got = malloc(sizeof(int32_t) * (size_t)rows);
            oh_read(ta, got);
            for (int64_t r = 0; r < rows; r++) {
                int64_t best = -1;
                for (int64_t j = 0; j < n; j++)
                    if (rank_of(x + r * n, n, j) == 0)
                        best = j;
                ck_assert_msg(got[r] == best, "Argmax n=%lld row %lld: %d, want %lld", (long long)n, (long long)r,
                              got[r], (long long)best);
            }
            free(x), free(got);
            vt_tensor_destroy(tx);
            vt_tensor_destroy(ta);
        }
    oh_close(&h);
}
END_TEST

/* ---- Sample ---- */

/* The algorithm of vt_params.h for one row, written again here. */
static int32_t ref_sample(const float *x, int64_t n, const vt_params_sample *p, uint64_t row)
{
    int32_t *order = malloc(sizeof(int32_t) * (size_t)n);
    for (int64_t i = 0; i < n; i++)
        order[rank_of(x, n, i)] = (int32_t)i;
    int32_t tok;
    if (p->temperature <= 0.0f) {
        tok = order[0];
        free(order);
        return tok;
    }
    int64_t k = p->top_k > 0 && p->top_k < n ? p->top_k : n;
    double *pr = malloc(sizeof(double) * (size_t)k), z = 0;
    for (int64_t i = 0; i < k; i++) {
        pr[i] = exp(((double)x[order[i]] - (double)x[order[0]]) / (double)p->temperature);
        z += pr[i];
    }
    int64_t m = k;
    double c = 0;
    for (int64_t i = 0; i < k; i++) {
        c += pr[i];
        if (c / z >= (double)p->top_p) {
            m = i + 1;
            break;
        }
    }
    double mass = 0;
    for (int64_t i = 0; i < m; i++)
        mass += pr[i];
    double u = vt_sample_uniform(p->seed, p->step, row);
    tok = order[m - 1];
    c = 0;
    for (int64_t i = 0; i < m; i++) {
        c += pr[i];
        if (c / mass > u) {
            tok = order[i];
            break;
        }
    }
    free(order), free(pr);
    return tok;
}

static void run_sample(oh *h, const float *x, int64_t rows, int64_t n, const vt_params_sample *p, int32_t *tok)
{
    int64_t sx[2] = {rows, n};
    vt_tensor *tx = oh_tensor(h, VT_F32, 2, sx, x), *tt = oh_tensor(h, VT_I32, 1, &rows, NULL);
    const vt_tensor *in[1] = {tx};
    vt_tensor *out[1] = {tt};
    oh_run(h, VT_OP_SAMPLE, in, 1, out, 1, p, sizeof *p);
    oh_read(tt, tok);
    vt_tensor_destroy(tx);
    vt_tensor_destroy(tt);
}

START_TEST(sample_matches_the_documented_algorithm)
{
    oh h;
    oh_open(&h, 405);
    static const float temps[] = {0.0f, -1.0f, 0.3f, 1.0f, 2.5f};
    static const int32_t top_ks[] = {0, 1, 2, 40, 100000};
    static const float top_ps[] = {1.0f, 0.95f, 0.5f, 1e-6f};
    for (int ti = 0; ti < 5; ti++)
        for (int ki = 0; ki < 5; ki++)
            for (int pi = 0; pi < 4; pi++) {
                int64_t rows = oh_irange(&h, 1, 6), n = oh_irange(&h, 1, 600);
                float *x = tied(&h, rows, n, (ti + ki + pi) % 2 == 0);
                for (int64_t r = 0; r < rows; r++)
                    x[r * n + oh_irange(&h, 0, n - 1)] = 3.0f; /* at least one finite logit */
                vt_params_sample p = {temps[ti], top_ks[ki],        top_ps[pi],
                                      0,         vt_rng_next(&h.r), (uint64_t)oh_irange(&h, 0, 99999)};
                int32_t *tok = malloc(sizeof(int32_t) * (size_t)rows);
                run_sample(&h, x, rows, n, &p, tok);
                for (int64_t r = 0; r < rows; r++) {
                    int32_t want = ref_sample(x + r * n, n, &p, (uint64_t)r);
                    ck_assert_msg(tok[r] == want, "Sample T=%g top_k=%d top_p=%g n=%lld row %lld: %d, want %d",
                                  (double)p.temperature, p.top_k, (double)p.top_p, (long long)n, (long long)r, tok[r],
                                  want);
                }
                free(x), free(tok);
            }
    oh_close(&h);
}
END_TEST

/* Over many rows (each its own RNG draw) the tokens follow the softmax of
 * logits / temperature: every frequency within 5 sigma. */
START_TEST(sample_frequencies_follow_softmax)
{
    oh h;
    oh_open(&h, 406);
    const int64_t V = 6, rows = 60000;
    const float logits[6] = {1.0f, 0.5f, 2.0f, -1.0f, 2.0f, 0.0f};
    float *x = malloc(sizeof(float) * (size_t)(V * rows));
    for (int64_t r = 0; r < rows; r++)
        memcpy(x + r * V, logits, sizeof logits);
    vt_params_sample p = {0.8f, 0, 1.0f, 0, 12345, 7};
    int32_t *tok = malloc(sizeof(int32_t) * (size_t)rows);
    run_sample(&h, x, rows, V, &p, tok);
    double z = 0, prob[6];
    for (int i = 0; i < V; i++)
        z += exp(logits[i] / 0.8);
    int64_t count[6] = {0};
    for (int64_t r = 0; r < rows; r++) {
        ck_assert(tok[r] >= 0 && tok[r] < V);
        count[tok[r]]++;
    }
    for (int i = 0; i < V; i++) {
        prob[i] = exp(logits[i] / 0.8) / z;
        double sigma = sqrt(rows * prob[i] * (1 - prob[i]));
        ck_assert_msg(fabs(count[i] - rows * prob[i]) < 5 * sigma, "token %d: %lld of %lld, expected %.0f", i,
                      (long long)count[i], (long long)rows, rows * prob[i]);
    }
    /* the same seed, step and row give the same token, call after call */
    int32_t *again = malloc(sizeof(int32_t) * (size_t)rows);
    run_sample(&h, x, rows, V, &p, again);
    ck_assert_int_eq(memcmp(tok, again, sizeof(int32_t) * (size_t)rows), 0);
    free(x), free(tok), free(again);
    oh_close(&h);
}
END_TEST

int main(void)
{
    Suite *s;
    TCase *tc;
    int gate = vt_test_suite_begin("cpu", "cpu ops: TopK, Argmax, Sample", "select", 300, &s, &tc);
    if (gate != 0)
        return gate;
    tcase_add_test(tc, topk_ties_zeros_and_k_range);
    tcase_add_test(tc, topk_signed_zero_is_a_tie);
    tcase_add_test(tc, nan_is_refused_with_its_row);
    tcase_add_test(tc, argmax_ties_to_the_lower_index);
    tcase_add_test(tc, sample_matches_the_documented_algorithm);
    tcase_add_test(tc, sample_frequencies_follow_softmax);
    return vt_test_run_suite(s);
}
