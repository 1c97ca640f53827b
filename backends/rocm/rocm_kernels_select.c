/* rocm_kernels_select.c - the rocm backend's select family (the
 * catalogue's family of that name, core/ops/select.c): MoeRouter, TopK,
 * Argmax and Sample, in the cpu oracle's candidate order. A scan
 * queued first refuses NaN (and, when sampling, +inf or a row with nothing
 * finite) into the queue's error word; TopK and Sample (with a top-k cut
 * of at most 2048) select each row's k best by sorted slices in the
 * queue's scratch, other Samples sort whole rows there. */
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

/* The scan of few long rows (a vocabulary row) over many blocks, with its
 * per-slice flags in the queue's scratch (the kernels queued after it may
 * reuse that scratch: they run after it), else scan(). */
static vt_status scan_rows(const rocm_call *L, uint32_t name, const float *x, int64_t rows, int64_t n, int sampling,
                           hipError_t *e, char *why, size_t why_size)
{
    int64_t nb = vt_rocm_argmax_split_blocks(rows, n);
    if (!nb) {
        *e = scan(L, name, x, rows, n, sampling);
        return VT_OK;
    }
    void *fin;
    vt_status st = vt_rocm_call_scratch(L, (uint64_t)(rows * nb), &fin, why, why_size);
    if (st != VT_OK)
        return st;
    *e = vt_rocm_launch_scan_split(x, rows, n, nb, sampling, fin, L->q->err, L->a->op, name, L->s);
    vt_rocm_checked(L);
    return VT_OK;
}

static int64_t pow2_at_least(int64_t n)
{
    int64_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

/* Argmax of the rows of x into out, NaN refused as operand name: few long
 * rows (a vocabulary row) in one pass over many blocks, else the scan and
 * one block per row. */
static vt_status argmax_rows(const rocm_call *L, uint32_t name, const float *x, int64_t rows, int64_t n, int32_t *out,
                             hipError_t *e, char *why, size_t why_size)
{
    int64_t nb = vt_rocm_argmax_split_blocks(rows, n);
    if (!nb) {
        *e = scan(L, name, x, rows, n, 0);
        if (*e == hipSuccess)
            *e = vt_rocm_launch_argmax(x, rows, n, out, L->s);
        return VT_OK;
    }
    void *part;
    vt_status st = vt_rocm_call_scratch(L, (uint64_t)(rows * nb) * 8, &part, why, why_size);
    if (st != VT_OK)
        return st;
    *e = vt_rocm_launch_argmax_checked(x, rows, n, nb, part, out, L->q->err, L->a->op, name, L->s);
    vt_rocm_checked(L);
    return VT_OK;
}

static vt_status k_argmax(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    int64_t rows, n;
    rows_of(&a->in[0], &rows, &n);
    hipError_t e = hipSuccess;
    (void)s; /* argmax_rows takes the stream from L_ */
    vt_status st = argmax_rows(&L_, VT_ROCM_NAME_X, a->in[0].data, rows, n, a->out[0].data, &e, why, why_size);
    if (st != VT_OK)
        return st;
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

/* The k best candidates of each row of x, sorted, into the queue's scratch
 * by sliced selection (k <= 2048): *scratch gets rows x k pairs (row stride
 * k), then, when prob is asked, rows x k doubles. */
static vt_status selected_rows(const rocm_call *L, const float *x, int64_t rows, int64_t n, int64_t k, void **scratch,
                               void **prob, hipError_t *e, char *why, size_t why_size)
{
    int64_t sl = 256; /* small slices: many blocks, a short sort each */
    while (sl < 4 * k && sl < VT_ROCM_SLICE_MAX)
        sl <<= 1;
    /* ping-pong buffers: the first pass's output, then the largest later one */
    int64_t m = n, first = 0, second = 0;
    for (int pass = 0; pass == 0 || m > k; pass++) {
        int64_t out = (m + sl - 1) / sl * k;
        if (pass == 0)
            first = out;
        else if (out > second)
            second = out;
        m = out;
    }
    uint64_t a_bytes = (uint64_t)(rows * first) * 8, b_bytes = (uint64_t)(rows * second) * 8;
    uint64_t p_bytes = prob ? (uint64_t)(rows * k) * 8 : 0;
    void *base;
    vt_status st = vt_rocm_call_scratch(L, a_bytes + b_bytes + p_bytes, &base, why, why_size);
    if (st != VT_OK)
        return st;
    char *buf[2] = {base, (char *)base + a_bytes};
    m = n;
    int cur = 0;
    const void *in = NULL;
    while (*e == hipSuccess) {
        *e = vt_rocm_launch_slice_topk(in ? NULL : x, in, rows, m, sl, k, buf[cur], L->s);
        m = (m + sl - 1) / sl * k;
        in = buf[cur];
        if (m == k)
            break;
        cur ^= 1;
    }
    *scratch = (void *)in;
    if (prob)
        *prob = (char *)base + a_bytes + b_bytes;
    return VT_OK;
}

static vt_status k_topk(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const char *op = "TopK (35)";
    int64_t rows, n, p;
    rows_of(&a->in[0], &rows, &n);
    hipError_t e = hipSuccess;
    vt_status sst = scan_rows(&L_, VT_ROCM_NAME_X, a->in[0].data, rows, n, 0, &e, why, why_size);
    if (sst != VT_OK)
        return sst;
    void *scratch;
    int64_t k = ((const vt_params_topk *)a->params)->k;
    vt_status st = k <= 2048 ? selected_rows(&L_, a->in[0].data, rows, n, k, &scratch, NULL, &e, why, why_size)
                             : sorted_rows(&L_, a->in[0].data, rows, n, &p, &scratch, NULL, &e, why, why_size);
    if (k <= 2048)
        p = k;
    if (st != VT_OK)
        return st;
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
    if (!sampling) { /* temperature <= 0 is Argmax */
        hipError_t e = hipSuccess;
        vt_status st = argmax_rows(&L_, VT_ROCM_NAME_LOGITS, a->in[0].data, rows, n, a->out[0].data, &e, why, why_size);
        if (st != VT_OK)
            return st;
        return vt_rocm_done(&L_, e, op, why, why_size);
    }
    hipError_t e = hipSuccess;
    vt_status sst = scan_rows(&L_, VT_ROCM_NAME_LOGITS, a->in[0].data, rows, n, sampling, &e, why, why_size);
    if (sst != VT_OK)
        return sst;
    void *scratch, *prob;
    /* a top-k cut needs only each row's k best: sliced selection */
    bool cut = sp->top_k > 0 && sp->top_k < n && sp->top_k <= 2048;
    vt_status st = cut ? selected_rows(&L_, a->in[0].data, rows, n, sp->top_k, &scratch, &prob, &e, why, why_size)
                       : sorted_rows(&L_, a->in[0].data, rows, n, &p, &scratch, &prob, &e, why, why_size);
    if (cut)
        p = sp->top_k;
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
