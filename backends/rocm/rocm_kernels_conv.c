/* rocm_kernels_conv.c - the rocm backend's conv family (the catalogue's
 * family of that name, core/ops/conv.c): the causal depthwise convolutions
 * CausalConv1dSpecUpdate, CausalConv1d and CausalConv1dUpdate (f32); slots
 * and accepted counts are checked on the device first (kernels_check.hip),
 * so a bad call writes no state.
 * The C side of each kernel: unpack the operands, queue the device checks
 * of data-dependent values, launch on the call's stream, report the launch
 * status; then the family's kernel table rows. */
#include "config.h"

#include <vt/vt_params.h>

#include "rocm_common.h"

#define X(i) (a->in[i].data)
#define Y(i) (a->out[i].data)

static vt_status k_conv_spec(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *x = &a->in[0], *st = &a->out[1];
    int64_t B = x->shape[0], D = x->shape[1], T = x->shape[2], W = a->in[1].shape[1], N = st->shape[0],
            L = st->shape[2];
    void *safe;
    vt_status r = vt_rocm_call_scratch(&L_, (uint64_t)B * 4, &safe, why, why_size);
    if (r != VT_OK)
        return r;
    const char *op = "CausalConv1dSpecUpdate (7)";
    hipError_t e = vt_rocm_check_slots(&L_, X(3), B, N, true, X(4), L - W + 2, safe);
    if (e == hipSuccess) /* accepted is read only for rows whose safe slot is >= 0 */
        e = vt_rocm_launch_conv_spec(X(0), X(1), a->n_in > 2 ? X(2) : NULL, safe, X(4), Y(0), Y(1), B, D, T, W, L,
                                     ((const vt_params_conv *)a->params)->silu, s);
    return vt_rocm_done(&L_, e, op, why, why_size);
}

static vt_status k_conv(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *x = &a->in[0];
    hipError_t e = vt_rocm_launch_conv_prefill(X(0), X(1), a->n_in > 2 ? X(2) : NULL, a->n_in > 3 ? X(3) : NULL, Y(0),
                                               Y(1), x->shape[0], x->shape[1], x->shape[2], a->in[1].shape[1],
                                               ((const vt_params_conv *)a->params)->silu, s);
    return vt_rocm_done(&L_, e, "CausalConv1d (8)", why, why_size);
}

static vt_status k_conv_update(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *x = &a->in[0];
    int64_t B = x->shape[0];
    const void *slots = a->n_in > 3 ? X(3) : NULL;
    void *safe = NULL;
    hipError_t e = hipSuccess;
    if (slots) {
        vt_status r = vt_rocm_call_scratch(&L_, (uint64_t)B * 4, &safe, why, why_size);
        if (r != VT_OK)
            return r;
        e = vt_rocm_check_slots(&L_, slots, B, a->out[1].shape[0], true, NULL, 0, safe);
    }
    if (e == hipSuccess)
        e = vt_rocm_launch_conv_update(X(0), X(1), a->n_in > 2 ? X(2) : NULL, safe, Y(0), Y(1), B, x->shape[1],
                                       x->shape[2], a->in[1].shape[1], ((const vt_params_conv *)a->params)->silu, s);
    return vt_rocm_done(&L_, e, "CausalConv1dUpdate (9)", why, why_size);
}

const vt_kernel vt_rocm_kernels_conv[] = {
    {VT_OP_CAUSAL_CONV1D_SPEC_UPDATE, VT_SIG1(VT_F32), k_conv_spec},
    {VT_OP_CAUSAL_CONV1D, VT_SIG1(VT_F32), k_conv},
    {VT_OP_CAUSAL_CONV1D_UPDATE, VT_SIG1(VT_F32), k_conv_update},
};

const uint32_t vt_rocm_n_kernels_conv = sizeof vt_rocm_kernels_conv / sizeof vt_rocm_kernels_conv[0];
