/* rocm_kernels_select.c - the rocm backend's selection family: Argmax,
 * TopK, Sample and MoeRouter, in the cpu oracle's candidate order. A scan
 * refuses NaN (and, when sampling, +inf or a row with nothing finite)
 * before anything is written; TopK and Sample sort rows in scratch device
 * memory that is freed before the call returns. */
#include "config.h"

#include <stdlib.h>

#include <vt/vt_params.h>

#include "rocm_common.h"

#define STREAM()                                                                                                       \
    hipStream_t s;                                                                                                     \
    vt_status st_ = vt_rocm_stream(c, dev, &s, why, why_size);                                                         \
    if (st_ != VT_OK)                                                                                                  \
    return st_

static void rows_of(const vt_operand *x, int64_t *rows, int64_t *n)
{
    *n = x->ndim ? x->shape[x->ndim - 1] : 1;
    *rows = *n ? vt_rocm_elems(x) / *n : 0;
}

/* Run the refusal scan over rows of x; VT_E_INVALID_ARG naming the first
 * offence (op and operand named), VT_OK when clean. */
static vt_status scan(vt_backend_ctx *c, int dev, hipStream_t s, const char *op, const char *name, const float *x,
                      int64_t rows, int64_t n, int sampling, char *why, size_t why_size)
{
    unsigned long long *err = c->dev[dev].err_word, word = 0;
    hipError_t e = hipMemsetAsync(err, 0xff, sizeof *err, s);
    if (e == hipSuccess)
        e = vt_rocm_launch_scan(x, rows, n, sampling, err, s);
    if (e == hipSuccess)
        e = hipMemcpyAsync(&word, err, sizeof word, hipMemcpyDeviceToHost, s);
    if (e == hipSuccess)
        e = hipStreamSynchronize(s);
    if (e != hipSuccess)
        return vt_rocm_fail(e, op, dev, why, why_size);
    if (word == ~0ull)
        return VT_OK;
    if (!(word >> 63))
        return vt_why(VT_E_INVALID_ARG, why, why_size, "%s: %s row %llu has NaN at index %llu", op, name,
                      (unsigned long long)(word >> 32), (unsigned long long)(word & 0xffffffffu));
    unsigned long long row = (word >> 34) & ((1ull << 29) - 1), kind = (word >> 32) & 3;
    if (kind == 1)
        return vt_why(VT_E_INVALID_ARG, why, why_size, "%s: %s row %llu has +inf at index %llu", op, name, row,
                      (unsigned long long)(word & 0xffffffffu));
    return vt_why(VT_E_INVALID_ARG, why, why_size, "%s: %s row %llu has no finite value to sample from", op, name, row);
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
    vt_status st = scan(c, dev, s, "Argmax (50)", "x", a->in[0].data, rows, n, 0, why, why_size);
    if (st != VT_OK)
        return st;
    hipError_t e = vt_rocm_launch_argmax(a->in[0].data, rows, n, a->out[0].data, s);
    return vt_rocm_done(e, "Argmax (50)", c, dev, why, why_size);
}

/* Sort the rows of x into fresh scratch (and a prob array when asked). */
static vt_status sorted_rows(int dev, hipStream_t s, const float *x, int64_t rows, int64_t n, int64_t *p,
                             void **scratch, void **prob, const char *op, char *why, size_t why_size)
{
    *p = pow2_at_least(n);
    *scratch = NULL;
    if (prob)
        *prob = NULL;
    hipError_t e = hipMalloc(scratch, (size_t)(rows * *p) * 8);
    if (e == hipSuccess && prob)
        e = hipMalloc(prob, (size_t)(rows * *p) * sizeof(double));
    if (e == hipSuccess)
        e = vt_rocm_launch_sort_rows(x, rows, n, *p, *scratch, s);
    if (e != hipSuccess) {
        (void)hipGetLastError();
        if (*scratch)
            (void)hipFree(*scratch);
        if (prob && *prob)
            (void)hipFree(*prob);
        return vt_rocm_fail(e, op, dev, why, why_size);
    }
    return VT_OK;
}

static vt_status k_topk(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const char *op = "TopK (35)";
    int64_t rows, n, p;
    rows_of(&a->in[0], &rows, &n);
    vt_status st = scan(c, dev, s, op, "x", a->in[0].data, rows, n, 0, why, why_size);
    if (st != VT_OK)
        return st;
    void *scratch;
    st = sorted_rows(dev, s, a->in[0].data, rows, n, &p, &scratch, NULL, op, why, why_size);
    if (st != VT_OK)
        return st;
    int64_t k = ((const vt_params_topk *)a->params)->k;
    hipError_t e = vt_rocm_launch_topk_out(scratch, rows, p, k, a->out[0].data, a->out[1].data, s);
    st = vt_rocm_done(e, op, c, dev, why, why_size);
    (void)hipFree(scratch);
    return st;
}

static vt_status k_sample(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const char *op = "Sample (51)";
    const vt_params_sample *sp = a->params;
    int64_t rows, n, p;
    rows_of(&a->in[0], &rows, &n);
    bool sampling = sp->temperature > 0.0f;
    vt_status st = scan(c, dev, s, op, "logits", a->in[0].data, rows, n, sampling, why, why_size);
    if (st != VT_OK)
        return st;
    if (!sampling) /* temperature <= 0 is Argmax */
        return vt_rocm_done(vt_rocm_launch_argmax(a->in[0].data, rows, n, a->out[0].data, s), op, c, dev, why,
                            why_size);
    void *scratch, *prob;
    st = sorted_rows(dev, s, a->in[0].data, rows, n, &p, &scratch, &prob, op, why, why_size);
    if (st != VT_OK)
        return st;
    hipError_t e = vt_rocm_launch_sample(scratch, rows, n, p, sp, prob, a->out[0].data, s);
    st = vt_rocm_done(e, op, c, dev, why, why_size);
    (void)hipFree(scratch);
    (void)hipFree(prob);
    return st;
}

static vt_status k_router(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const char *op = "MoeRouter (22)";
    const vt_params_moe_router *p = a->params;
    int64_t T = a->in[0].shape[0], E = a->in[0].shape[1];
    if (E > VT_ROCM_ROUTER_MAX_E)
        return vt_why(VT_E_UNSUPPORTED, why, why_size, "%s: %lld experts exceed this kernel's %d", op, (long long)E,
                      VT_ROCM_ROUTER_MAX_E);
    const float *bias = a->n_in > 1 ? a->in[1].data : NULL;
    vt_status st = scan(c, dev, s, op, "logits", a->in[0].data, T, E, 0, why, why_size);
    if (st == VT_OK && bias)
        st = scan(c, dev, s, op, "bias", bias, 1, E, 0, why, why_size);
    if (st != VT_OK)
        return st;
    hipError_t e = vt_rocm_launch_router(a->in[0].data, bias, T, E, p->k, p->score, p->renormalize, p->routed_scale,
                                         a->out[0].data, a->out[1].data, s);
    return vt_rocm_done(e, op, c, dev, why, why_size);
}

const vt_kernel vt_rocm_kernels_select[] = {
    {VT_OP_MOE_ROUTER, VT_SIG1(VT_F32), k_router},
    {VT_OP_TOPK, VT_SIG1(VT_F32), k_topk},
    {VT_OP_ARGMAX, VT_SIG1(VT_F32), k_argmax},
    {VT_OP_SAMPLE, VT_SIG1(VT_F32), k_sample},
};

const uint32_t vt_rocm_n_kernels_select = sizeof vt_rocm_kernels_select / sizeof vt_rocm_kernels_select[0];
