/* rocm_kernels_select.c - the rocm backend's select family (the
 * catalogue's family of that name, core/ops/select.c): MoeRouter, TopK,
 * Argmax and Sample, in the cpu oracle's candidate order. A scan
 * queued first refuses NaN (and, when sampling, +inf or a row with nothing
 * finite) into the queue's error word; TopK and Sample sort rows in the
 * queue's scratch. */
#include "config.h"

#include <vt/vt_params.h>

#include "rocm_common.h"

static void rows_of(const vt_operand *x, int64_t *rows, int64_t *n)
{
    *n = x->ndim ? x->shape[x->ndim - 1] : 1;
    *rows = *n ? vt_rocm_elems(x) / *n : 0;
}

/* Queue the refusal scan over rows of x (operand name: VT_ROCM_NAME_*):
 * the first offence goes into the queue's error word. */
static hipError_t scan(const rocm_call *L, uint32_t name, const float *x, int64_t rows, int64_t n, int sampling)
{
    hipError_t e = vt_rocm_launch_scan(x, rows, n, sampling, L->q->err, L->a->op, name, L->s);
    vt_rocm_checked(L);
    return e;
}

static int64_t pow2_at_least(int64_t n)
{
    int64_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

static vt_status k_argmax(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    int64_t rows, n;
    rows_of(&a->in[0], &rows, &n);
    hipError_t e = scan(&L_, VT_ROCM_NAME_X, a->in[0].data, rows, n, 0);
    if (e == hipSuccess)
        e = vt_rocm_launch_argmax(a->in[0].data, rows, n, a->out[0].data, s);
    return vt_rocm_done(&L_, e, "Argmax (50)", why, why_size);
}

/* Sort the rows of x into the queue's scratch (rows x p pairs, then, when
 * prob is asked, rows x p doubles). */
static vt_status sorted_rows(const rocm_call *L, const float *x, int64_t rows, int64_t n, int64_t *p, void **scratch,
                             void **prob, hipError_t *e, char *why, size_t why_size)
{
    *p = pow2_at_least(n);
    uint64_t pairs = (uint64_t)(rows * *p) * 8;
    vt_status st = vt_rocm_call_scratch(L, prob ? 2 * pairs : pairs, scratch, why, why_size);
    if (st != VT_OK)
        return st;
    if (prob)
        *prob = (char *)*scratch + pairs;
    if (*e == hipSuccess)
        *e = vt_rocm_launch_sort_rows(x, rows, n, *p, *scratch, L->s);
    return VT_OK;
}

static vt_status k_topk(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const char *op = "TopK (35)";
    int64_t rows, n, p;
    rows_of(&a->in[0], &rows, &n);
    hipError_t e = scan(&L_, VT_ROCM_NAME_X, a->in[0].data, rows, n, 0);
    void *scratch;
    vt_status st = sorted_rows(&L_, a->in[0].data, rows, n, &p, &scratch, NULL, &e, why, why_size);
    if (st != VT_OK)
        return st;
    int64_t k = ((const vt_params_topk *)a->params)->k;
    if (e == hipSuccess)
        e = vt_rocm_launch_topk_out(scratch, rows, p, k, a->out[0].data, a->out[1].data, s);
    return vt_rocm_done(&L_, e, op, why, why_size);
}

static vt_status k_sample(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const char *op = "Sample (51)";
    const vt_params_sample *sp = a->params;
    int64_t rows, n, p;
    rows_of(&a->in[0], &rows, &n);
    bool sampling = sp->temperature > 0.0f;
    hipError_t e = scan(&L_, VT_ROCM_NAME_LOGITS, a->in[0].data, rows, n, sampling);
    if (!sampling) { /* temperature <= 0 is Argmax */
        if (e == hipSuccess)
            e = vt_rocm_launch_argmax(a->in[0].data, rows, n, a->out[0].data, s);
        return vt_rocm_done(&L_, e, op, why, why_size);
    }
    void *scratch, *prob;
    vt_status st = sorted_rows(&L_, a->in[0].data, rows, n, &p, &scratch, &prob, &e, why, why_size);
    if (st != VT_OK)
        return st;
    if (e == hipSuccess)
        e = vt_rocm_launch_sample(scratch, rows, n, p, sp, prob, a->out[0].data, s);
    return vt_rocm_done(&L_, e, op, why, why_size);
}

static vt_status k_router(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const char *op = "MoeRouter (22)";
    const vt_params_moe_router *p = a->params;
    int64_t T = a->in[0].shape[0], E = a->in[0].shape[1];
    if (E > VT_ROCM_ROUTER_MAX_E) /* accepts() refuses it at plan time */
        return vt_why(VT_E_UNSUPPORTED, why, why_size, "MoeRouter E = %lld > %d", (long long)E, VT_ROCM_ROUTER_MAX_E);
    const float *bias = a->n_in > 1 ? a->in[1].data : NULL;
    hipError_t e = scan(&L_, VT_ROCM_NAME_LOGITS, a->in[0].data, T, E, 0);
    if (e == hipSuccess && bias)
        e = scan(&L_, VT_ROCM_NAME_BIAS, bias, 1, E, 0);
    if (e == hipSuccess)
        e = vt_rocm_launch_router(a->in[0].data, bias, T, E, p->k, p->score, p->renormalize, p->routed_scale,
                                  a->out[0].data, a->out[1].data, s);
    return vt_rocm_done(&L_, e, op, why, why_size);
}

const vt_kernel vt_rocm_kernels_select[] = {
    {VT_OP_MOE_ROUTER, VT_SIG1(VT_F32), k_router},
    {VT_OP_TOPK, VT_SIG1(VT_F32), k_topk},
    {VT_OP_ARGMAX, VT_SIG1(VT_F32), k_argmax},
    {VT_OP_SAMPLE, VT_SIG1(VT_F32), k_sample},
};

const uint32_t vt_rocm_n_kernels_select = sizeof vt_rocm_kernels_select / sizeof vt_rocm_kernels_select[0];
