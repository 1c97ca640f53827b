/* rocm_kernels_rows.c - the rocm backend's rows family (the catalogue's
 * family of that name, core/ops/rows.c): the f32 ops over the last axis:
 * RmsNorm, L2Norm, GatedRmsNorm, Softmax (its +inf logits refused by a
 * device scan queued first) and Rope.
 * The C side of each kernel: unpack the operands, queue the device checks
 * of data-dependent values, launch on the call's stream, report the launch
 * status; then the family's kernel table rows. */
#include "config.h"

#include <vt/vt_params.h>

#include "rocm_common.h"

#define X(i) (a->in[i].data)
#define Y(i) (a->out[i].data)

static vt_status k_norm(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    int64_t n = vt_rocm_last_dim(&a->in[0]), rows = n ? vt_rocm_elems(&a->in[0]) / n : 0;
    float eps = ((const vt_params_norm *)a->params)->eps;
    hipError_t e;
    if (a->op == VT_OP_RMS_NORM)
        e = vt_rocm_launch_norm(VT_ROCM_NORM_RMS, X(0), a->n_in > 1 ? X(1) : NULL, NULL, Y(0), rows, n, eps, s);
    else if (a->op == VT_OP_L2_NORM)
        e = vt_rocm_launch_norm(VT_ROCM_NORM_L2, X(0), NULL, NULL, Y(0), rows, n, eps, s);
    else
        e = vt_rocm_launch_norm(VT_ROCM_NORM_GATED, X(0), X(2), X(1), Y(0), rows, n, eps, s);
    return vt_rocm_done(&L_, e, vt_op_name(a->op), why, why_size);
}

/* Softmax refuses a logit x*scale + mask of +inf (the row would be NaN) as
 * the cpu oracle does, named by operand, row and index: a device-side scan
 * per chunk of 2^29 rows reports the first offence into the queue's error
 * word. */
static hipError_t softmax_scan(const rocm_call *L, const float *x, const float *mask, int64_t nm, int64_t rows,
                               int64_t n, float scale)
{
    const int64_t chunk = (int64_t)1 << 29;
    hipError_t e = hipSuccess;
    for (int64_t r0 = 0; r0 < rows && e == hipSuccess; r0 += chunk)
        e = vt_rocm_launch_softmax_scan(x, mask, nm, r0, rows - r0 < chunk ? rows - r0 : chunk, n, scale, L->q->err,
                                        L->a->op, L->s);
    vt_rocm_checked(L);
    return e;
}

static vt_status k_softmax(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    int64_t n = vt_rocm_last_dim(&a->in[0]), rows = n ? vt_rocm_elems(&a->in[0]) / n : 0;
    bool mask = a->n_in > 1 && X(1);
    int64_t nm = mask ? vt_rocm_elems(&a->in[1]) : 0;
    float scale = ((const vt_params_softmax *)a->params)->scale;
    if ((uint64_t)n >> 32) /* the scan's word holds a 32-bit index */
        return vt_why(VT_E_INVALID_ARG, why, why_size,
                      "rows of %lld elements: the rocm backend's +inf scan takes at most 2^32 per row", (long long)n);
    int64_t nb = vt_rocm_argmax_split_blocks(rows, n);
    if (nb) { /* few long rows: every pass over many blocks */
        void *part;
        vt_status st = vt_rocm_call_scratch(&L_, (uint64_t)(rows * nb) * 8, &part, why, why_size);
        if (st != VT_OK)
            return st;
        hipError_t e = vt_rocm_launch_softmax_split(X(0), mask ? X(1) : NULL, nm, Y(0), rows, n, nb, scale, part,
                                                    L_.q->err, a->op, s);
        vt_rocm_checked(&L_);
        return vt_rocm_done(&L_, e, "Softmax (10)", why, why_size);
    }
    hipError_t e = softmax_scan(&L_, X(0), mask ? X(1) : NULL, nm, rows, n, scale);
    if (e == hipSuccess)
        e = vt_rocm_launch_softmax(X(0), mask ? X(1) : NULL, nm, Y(0), rows, n, scale, L_.q->err, s);
    return vt_rocm_done(&L_, e, "Softmax (10)", why, why_size);
}

static vt_status k_rope(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_params_rope *p = a->params;
    const vt_operand *x = &a->in[0];
    hipError_t e = vt_rocm_launch_rope(X(0), X(1), Y(0), x->shape[0], x->shape[1], x->shape[2], p->n_rot, p->theta,
                                       p->mode == VT_ROPE_NEOX, s);
    return vt_rocm_done(&L_, e, "Rope (18)", why, why_size);
}

const vt_kernel vt_rocm_kernels_rows[] = {
    {VT_OP_RMS_NORM, VT_SIG1(VT_F32), k_norm},       {VT_OP_L2_NORM, VT_SIG1(VT_F32), k_norm},
    {VT_OP_GATED_RMS_NORM, VT_SIG1(VT_F32), k_norm}, {VT_OP_SOFTMAX, VT_SIG1(VT_F32), k_softmax},
    {VT_OP_ROPE, VT_SIG1(VT_F32), k_rope},
};

const uint32_t vt_rocm_n_kernels_rows = sizeof vt_rocm_kernels_rows / sizeof vt_rocm_kernels_rows[0];
