/* cpu_op_matmul.c - MatMul (20) for dense weights: y = x W^T with f32
 * accumulation in index order. Parallel over output columns; each output
 * is summed by one thread in a fixed order (deterministic). */
#include "config.h"

#include "cpu_ops.h"

typedef struct mm_job {
    const float *x;
    const vt_operand *w;
    float *y;
    int64_t n, m, k;
} mm_job;

static void mm_range(void *arg, int64_t c0, int64_t c1)
{
    const mm_job *j = arg;
    for (int64_t c = c0; c < c1; c++)
        for (int64_t r = 0; r < j->n; r++) {
            const float *xr = j->x + r * j->k;
            float acc = 0.0f;
            for (int64_t i = 0; i < j->k; i++)
                acc += xr[i] * vt_cpu_load(j->w->data, j->w->dtype, c * j->k + i);
            j->y[r * j->m + c] = acc;
        }
}

vt_status vt_cpu_matmul(vt_backend_ctx *ctx, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    (void)dev;
    (void)why;
    (void)why_size;
    const vt_operand *x = &a->in[0], *w = &a->in[1];
    int64_t k = x->shape[x->ndim - 1];
    int64_t m = w->shape[0];
    int64_t n = m ? vt_cpu_elems(&a->out[0]) / m : 0;
    mm_job j = {x->data, w, a->out[0].data, n, m, k};
    vt_cpu_parallel(ctx->pool, m, 16, mm_range, &j);
    return VT_OK;
}
