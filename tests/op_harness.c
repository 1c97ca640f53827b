/* op_harness.c - helpers of the cpu op suites (op_harness.h). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_harness.h"

void oh_open(oh *h, uint64_t stream)
{
    memset(h, 0, sizeof *h);
    h->reg = vt_test_open(NULL, "cpu", 0);
    h->dev = vt_test_device(h->reg, "cpu:0");
    vt_rng_init(&h->r, stream);
}

void oh_close(oh *h)
{
    vt_registry_close(h->reg);
    memset(h, 0, sizeof *h);
}

vt_tensor *oh_tensor(oh *h, vt_dtype t, uint32_t nd, const int64_t *shape, const void *data)
{
    vt_tensor *x = vt_test_tensor(h->dev, t, nd, shape, data);
    if (!data) {
        size_t n = (size_t)vt_tensor_nbytes(x);
        void *p = malloc(n ? n : 1);
        ck_assert_ptr_nonnull(p);
        vt_poison(p, n);
        ck_assert_msg(vt_tensor_write(x, p, n) == VT_OK, "%s", vt_last_error());
        free(p);
    }
    return x;
}

void oh_read(const vt_tensor *t, void *dst)
{
    ck_assert_msg(vt_tensor_read(t, dst, (size_t)vt_tensor_nbytes(t)) == VT_OK, "%s", vt_last_error());
}

void oh_run(oh *h, vt_op op, const vt_tensor *const *in, uint32_t n_in, vt_tensor *const *out, uint32_t n_out,
            const void *params, size_t params_size)
{
    vt_status st = vt_op_run(h->dev, op, in, n_in, out, n_out, params, params_size);
    ck_assert_msg(st == VT_OK, "%s (%d): %s: %s", vt_op_name(op), (int)op, vt_status_name(st), vt_last_error());
}

const char *oh_run_fails(oh *h, vt_status want, vt_op op, const vt_tensor *const *in, uint32_t n_in,
                         vt_tensor *const *out, uint32_t n_out, const void *params, size_t params_size)
{
    vt_status st = vt_op_run(h->dev, op, in, n_in, out, n_out, params, params_size);
    ck_assert_msg(st == want, "%s (%d): got %s, want %s: %s", vt_op_name(op), (int)op, vt_status_name(st),
                  vt_status_name(want), vt_last_error());
    return vt_last_error();
}

double oh_rel_error(const float *got, const double *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(got[i]) || !isfinite(ref[i]))
            continue;
        num += ((double)got[i] - ref[i]) * ((double)got[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

void oh_expect_rel(const char *what, const float *got, const double *ref, size_t n, double tol)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(!isnan(got[i]) && !isnan(ref[i]), "%s: NaN at %zu (got %g, ref %g)", what, i, (double)got[i],
                      ref[i]);
        if (isinf(got[i]) || isinf(ref[i])) {
            ck_assert_msg((double)got[i] == ref[i], "%s: infinity mismatch at %zu (got %g, ref %g)", what, i,
                          (double)got[i], ref[i]);
            continue;
        }
        num += ((double)got[i] - ref[i]) * ((double)got[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    double e = den > 0 ? sqrt(num / den) : sqrt(num);
    ck_assert_msg(e <= tol, "%s: relative error %g > %g over %zu values", what, e, tol, n);
}

void oh_expect_bits32(const char *what, const void *got, const void *want, size_t n)
{
    const uint32_t *g = got, *w = want;
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(g[i] == w[i], "%s: element %zu is 0x%08x, want 0x%08x", what, i, g[i], w[i]);
}

void oh_expect_written(const char *what, const float *got, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(!isnan(got[i]), "%s: element %zu was not written (NaN poison)", what, i);
}

float *oh_rand(oh *h, size_t n, float lo, float hi)
{
    float *p = malloc((n ? n : 1) * sizeof *p);
    ck_assert_ptr_nonnull(p);
    vt_rng_fill(&h->r, p, n, lo, hi);
    return p;
}

int64_t oh_irange(oh *h, int64_t lo, int64_t hi)
{
    return hi <= lo ? lo : lo + (int64_t)vt_rng_below(&h->r, (uint64_t)(hi - lo + 1));
}

double oh_decode(const void *p, vt_dtype t, int64_t i)
{
    return vt_test_decode(p, t, i);
}
