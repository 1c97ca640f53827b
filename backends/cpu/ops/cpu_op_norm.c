/* cpu_op_norm.c - norms over the last axis: RmsNorm (5), L2Norm (6) and
 * GatedRmsNorm (15). One row per work item: the sum of squares is a double
 * sum in index order inside one thread (the oracle is the most accurate
 * backend: an f32 running sum over 2^20 elements was 2e-4 off), the scale
 * is taken in double and each output rounded to f32 once. */
#include "config.h"

#include <math.h>

#include "cpu_ops.h"

typedef enum norm_kind { NORM_RMS, NORM_L2, NORM_GATED_RMS } norm_kind;

typedef struct norm_job {
    norm_kind kind;
    const float *x, *w, *z; /* w optional for RmsNorm; z only for GatedRmsNorm */
    float *y;
    int64_t n; /* row length */
    float eps;
} norm_job;

static void norm_range(void *arg, int64_t r0, int64_t r1)
{
    const norm_job *j = arg;
    const int64_t n = j->n;
    for (int64_t r = r0; r < r1; r++) {
        const float *x = j->x + r * n;
        float *y = j->y + r * n;
        double ss = 0.0; /* x^2 is exact in double */
        for (int64_t i = 0; i < n; i++)
            ss += (double)x[i] * x[i];
        double scale = j->kind == NORM_L2 ? 1.0 / sqrt(ss + j->eps) : 1.0 / sqrt(ss / (double)n + j->eps);
        switch (j->kind) {
        case NORM_RMS:
            for (int64_t i = 0; i < n; i++)
                y[i] = (float)(j->w ? x[i] * scale * j->w[i] : x[i] * scale);
            break;
        case NORM_L2:
            for (int64_t i = 0; i < n; i++)
                y[i] = (float)(x[i] * scale);
            break;
        case NORM_GATED_RMS: {
            const float *z = j->z + r * n;
            for (int64_t i = 0; i < n; i++)
                y[i] = (float)(x[i] * scale * j->w[i] * vt_cpu_silu1(z[i]));
            break;
        }
        }
    }
}

static vt_status norm_run(vt_backend_ctx *ctx, const vt_op_args *a, norm_kind kind)
{
    const vt_operand *x = &a->in[0];
    norm_job j = {
        kind, x->data, NULL, NULL, a->out[0].data, x->shape[x->ndim - 1], ((const vt_params_norm *)a->params)->eps};
    if (j.n == 0)
        return VT_OK;
    if (kind == NORM_RMS && a->n_in > 1)
        j.w = a->in[1].data; /* NULL when absent */
    if (kind == NORM_GATED_RMS) {
        j.z = a->in[1].data;
        j.w = a->in[2].data;
    }
    int64_t rows = vt_cpu_elems(x) / j.n;
    int64_t chunk = 4096 / j.n + 1;
    vt_cpu_parallel(ctx->pool, rows, chunk, norm_range, &j);
    return VT_OK;
}

VT_CPU_KERNEL(vt_cpu_rms_norm)
{
    (void)dev;
    (void)why;
    (void)why_size;
    return norm_run(ctx, a, NORM_RMS);
}

VT_CPU_KERNEL(vt_cpu_l2_norm)
{
    (void)dev;
    (void)why;
    (void)why_size;
    return norm_run(ctx, a, NORM_L2);
}

VT_CPU_KERNEL(vt_cpu_gated_rms_norm)
{
    (void)dev;
    (void)why;
    (void)why_size;
    return norm_run(ctx, a, NORM_GATED_RMS);
}
