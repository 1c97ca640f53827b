/* cpu_op_softmax.c - Softmax (10): y = softmax(x * scale + mask) over the
 * last axis, the mask broadcast over the leading dims of x. A row that is
 * -inf everywhere gives zeros; a NaN anywhere in a row makes the row NaN. */
#include "config.h"

#include <math.h>

#include "cpu_ops_nn.h"

typedef struct softmax_job {
    const float *x, *mask; /* mask optional */
    float *y;
    int64_t n;  /* row length */
    int64_t nm; /* elements of the mask (it repeats every nm elements) */
    float scale;
} softmax_job;

static void softmax_range(void *arg, int64_t r0, int64_t r1)
{
    const softmax_job *j = arg;
    const int64_t n = j->n;
    for (int64_t r = r0; r < r1; r++) {
        const float *x = j->x + r * n;
        float *y = j->y + r * n;
        /* The mask is [..., n] (its rows repeat) or a 0-d scalar. */
        const float *m = j->mask && j->nm >= n ? j->mask + (r * n) % j->nm : NULL;
        float m0 = j->mask && j->nm < n ? j->mask[0] : 0.0f;
        float mx = -INFINITY;
        for (int64_t i = 0; i < n; i++) {
            float v = x[i] * j->scale + (m ? m[i] : m0);
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
        float sum = 0.0f;
        for (int64_t i = 0; i < n; i++) {
            y[i] = expf(y[i] - mx);
            sum += y[i];
        }
        for (int64_t i = 0; i < n; i++)
            y[i] = y[i] / sum;
    }
}

VT_CPU_NN_KERNEL(vt_cpu_softmax)
{
    (void)dev;
    (void)why;
    (void)why_size;
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
    vt_cpu_parallel(ctx->pool, rows, vt_cpu_grain(2048, j.n, 1), softmax_range, &j);
    return VT_OK;
}
