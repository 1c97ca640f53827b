/* cpu_op_elementwise.c - elementwise ops: Mul (3), Scale (4), Silu (11),
 * Gelu (12, tanh approximation), Sigmoid (13), SwiGlu (14) and GdnGate
 * (16). Each output element depends only on its own inputs, so any split
 * of the range over threads gives the same bits. */
#include "config.h"

#include <math.h>

#include "cpu_ops.h"

/* Elements per parallel chunk: small enough to split mid-size tensors. */
#define EW_CHUNK 2048

typedef enum ew_kind { EW_MUL, EW_SCALE, EW_SILU, EW_GELU, EW_SIGMOID, EW_SWIGLU } ew_kind;

typedef struct ew_job {
    ew_kind kind;
    const float *x, *b; /* b: the second operand (Mul's b, SwiGlu's u) */
    float *y;
    int64_t nb; /* elements of b (Mul broadcasts b over the leading dims) */
    float s;    /* Scale's factor */
} ew_job;

/* gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
static float gelu1(float x)
{
    const float c = 0.7978845608028654f; /* sqrt(2/pi) */
    return 0.5f * x * (1.0f + tanhf(c * (x + 0.044715f * x * x * x)));
}

static void ew_range(void *arg, int64_t i0, int64_t i1)
{
    const ew_job *j = arg;
    const float *x = j->x, *b = j->b;
    float *y = j->y;
    switch (j->kind) {
    case EW_MUL:
        for (int64_t i = i0; i < i1; i++)
            y[i] = x[i] * b[i % j->nb];
        break;
    case EW_SCALE:
        for (int64_t i = i0; i < i1; i++)
            y[i] = x[i] * j->s;
        break;
    case EW_SILU:
        for (int64_t i = i0; i < i1; i++)
            y[i] = vt_cpu_silu1(x[i]);
        break;
    case EW_GELU:
        for (int64_t i = i0; i < i1; i++)
            y[i] = gelu1(x[i]);
        break;
    case EW_SIGMOID:
        for (int64_t i = i0; i < i1; i++)
            y[i] = vt_cpu_sigmoid1(x[i]);
        break;
    case EW_SWIGLU:
        for (int64_t i = i0; i < i1; i++)
            y[i] = vt_cpu_silu1(x[i]) * b[i];
        break;
    }
}

static vt_status ew_run(vt_backend_ctx *ctx, const vt_op_args *a, ew_kind kind)
{
    ew_job j = {kind, a->in[0].data, NULL, a->out[0].data, 1, 0.0f};
    if (kind == EW_MUL || kind == EW_SWIGLU) {
        j.b = a->in[1].data;
        j.nb = vt_cpu_elems(&a->in[1]);
        if (j.nb == 0)
            return VT_OK; /* then a is empty too */
    }
    if (kind == EW_SCALE)
        j.s = ((const vt_params_scale *)a->params)->s;
    vt_cpu_parallel(ctx->pool, vt_cpu_elems(&a->in[0]), EW_CHUNK, ew_range, &j);
    return VT_OK;
}

VT_CPU_KERNEL(vt_cpu_mul)
{
    (void)dev;
    (void)why;
    (void)why_size;
    return ew_run(ctx, a, EW_MUL);
}

VT_CPU_KERNEL(vt_cpu_scale)
{
    (void)dev;
    (void)why;
    (void)why_size;
    return ew_run(ctx, a, EW_SCALE);
}

VT_CPU_KERNEL(vt_cpu_silu)
{
    (void)dev;
    (void)why;
    (void)why_size;
    return ew_run(ctx, a, EW_SILU);
}

VT_CPU_KERNEL(vt_cpu_gelu)
{
    (void)dev;
    (void)why;
    (void)why_size;
    return ew_run(ctx, a, EW_GELU);
}

VT_CPU_KERNEL(vt_cpu_sigmoid)
{
    (void)dev;
    (void)why;
    (void)why_size;
    return ew_run(ctx, a, EW_SIGMOID);
}

VT_CPU_KERNEL(vt_cpu_swiglu)
{
    (void)dev;
    (void)why;
    (void)why_size;
    return ew_run(ctx, a, EW_SWIGLU);
}

/* ---- GdnGate ---- */

typedef struct gate_job {
    const float *a, *dt_bias, *A, *b;
    float *g, *beta;
    int64_t H;
} gate_job;

/* softplus(x) = log(1 + exp(x)), evaluated without overflow and without
 * the linear cut-off (x > 20 -> x) some implementations take. */
static float softplus1(float x)
{
    return x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x));
}

static void gate_range(void *arg, int64_t i0, int64_t i1)
{
    const gate_job *j = arg;
    for (int64_t i = i0; i < i1; i++) {
        int64_t h = i % j->H;
        j->g[i] = j->A[h] * softplus1(j->a[i] + j->dt_bias[h]);
        j->beta[i] = vt_cpu_sigmoid1(j->b[i]);
    }
}

VT_CPU_KERNEL(vt_cpu_gdn_gate)
{
    (void)dev;
    (void)why;
    (void)why_size;
    const vt_operand *x = &a->in[0];
    gate_job j = {x->data,        a->in[1].data,  a->in[2].data,        a->in[3].data,
                  a->out[0].data, a->out[1].data, x->shape[x->ndim - 1]};
    if (j.H == 0)
        return VT_OK;
    vt_cpu_parallel(ctx->pool, vt_cpu_elems(x), EW_CHUNK, gate_range, &j);
    return VT_OK;
}
