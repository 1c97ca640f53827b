/* cpu_op_softmax.c - Softmax (10): y = softmax(x * scale + mask) over the
 * last axis, the mask broadcast over the leading dims of x. A row that is
 * -inf everywhere gives zeros; a NaN anywhere in a row makes the row NaN.
 * A logit of +inf (an +inf in x or the mask, or x * scale + mask reaching
 * +inf, or NaN from infinite operands) is refused by operand, row and
 * index before anything is written: the row would be NaN.
 *
 * Accuracy (the oracle is the most accurate backend): each exponent is
 * taken in double of the exact difference logit - max, the row sum is a
 * double sum in index order, and y = e / sum is rounded to f32 once from
 * the f32-stored e. One row is reduced by one thread in a fixed order, so
 * results are bit-identical for any thread count. */
#include "config.h"

#include <math.h>

#include "cpu_ops.h"

typedef struct softmax_job {
    const float *x, *mask; /* mask optional */
    float *y;
    int64_t n;  /* row length */
    int64_t nm; /* elements of the mask (it repeats every nm elements) */
    float scale;
} softmax_job;

/* Element i of row r's mask, 0 without a mask. The mask is [..., n] (its
 * rows repeat) or a 0-d scalar. */
static inline int64_t mask_index(const softmax_job *j, int64_t r, int64_t i)
{
    return j->nm >= j->n ? (r * j->n + i) % j->nm : 0;
}

static void softmax_range(void *arg, int64_t r0, int64_t r1)
{
    const softmax_job *j = arg;
    const int64_t n = j->n;
    for (int64_t r = r0; r < r1; r++) {
        const float *x = j->x + r * n;
        float *y = j->y + r * n;
        float mx = -INFINITY;
        for (int64_t i = 0; i < n; i++) {
            float v = x[i] * j->scale + (j->mask ? j->mask[mask_index(j, r, i)] : 0.0f);
            y[i] = v;
            if (v > mx)
                mx = v;
        }
        if (mx == -INFINITY) { /* every logit masked: no distribution, zeros */
            bool nan = false;
            for (int64_t i = 0; i < n; i++)
                nan |= isnan(y[i]);
            for (int64_t i = 0; i < n; i++)
                y[i] = nan ? NAN : 0.0f;
            continue;
        }
        double sum = 0.0;
        for (int64_t i = 0; i < n; i++) {
            double e = exp((double)y[i] - (double)mx); /* the difference of two floats is exact in double */
            y[i] = (float)e;
            sum += e;
        }
        for (int64_t i = 0; i < n; i++)
            y[i] = (float)((double)y[i] / sum);
    }
}

/* The first +inf logit in row-major order, as a refusal. */
static vt_status refuse_inf(const softmax_job *j, int64_t rows, char *why, size_t why_size)
{
    for (int64_t r = 0; r < rows; r++)
        for (int64_t i = 0; i < j->n; i++) {
            float x = j->x[r * j->n + i], m = j->mask ? j->mask[mask_index(j, r, i)] : 0.0f;
            float v = x * j->scale + m;
            if (x == INFINITY)
                return vt_cpu_op_error(VT_E_INVALID_ARG, why, why_size, VT_OP_SOFTMAX,
                                       "x row %lld has +inf at index %lld", (long long)r, (long long)i);
            if (m == INFINITY)
                return vt_cpu_op_error(VT_E_INVALID_ARG, why, why_size, VT_OP_SOFTMAX,
                                       "mask has +inf at index %lld (x row %lld, index %lld)",
                                       (long long)mask_index(j, r, i), (long long)r, (long long)i);
            if (v == INFINITY)
                return vt_cpu_op_error(VT_E_INVALID_ARG, why, why_size, VT_OP_SOFTMAX,
                                       "x row %lld index %lld: x*scale + mask is +inf", (long long)r, (long long)i);
            if (isnan(v) && !isnan(x) && !isnan(m))
                return vt_cpu_op_error(VT_E_INVALID_ARG, why, why_size, VT_OP_SOFTMAX,
                                       "x row %lld index %lld: x*scale + mask is NaN from infinite operands",
                                       (long long)r, (long long)i);
        }
    return VT_OK;
}

VT_CPU_KERNEL(vt_cpu_softmax)
{
    (void)dev;
    const vt_operand *x = &a->in[0];
    softmax_job j = {
        x->data, NULL, a->out[0].data, x->shape[x->ndim - 1], 1, ((const vt_params_softmax *)a->params)->scale};
    if (j.n == 0)
        return VT_OK;
    if (a->n_in > 1 && a->in[1].data) {
        j.mask = a->in[1].data;
        j.nm = vt_cpu_elems(&a->in[1]);
    }
    int64_t rows = vt_cpu_elems(x) / j.n;
    vt_status st = refuse_inf(&j, rows, why, why_size);
    if (st != VT_OK)
        return st;
    vt_cpu_parallel(ctx->pool, rows, vt_cpu_grain(2048, j.n, 1), softmax_range, &j);
    return VT_OK;
}
