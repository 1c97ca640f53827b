/* rocm_kernels_elementwise.c - the rocm backend's elementwise family (the catalogue's
 * family of that name, core/ops/elementwise.c): the f32 ops Add, Mul,
 * Scale, Silu, Gelu, Sigmoid, SwiGlu, GdnGate and MoeCombine.
 * The C side of each kernel: unpack the operands, queue the device checks
 * of data-dependent values, launch on the call's stream, report the launch
 * status; then the family's kernel table rows. */
#include "config.h"

#include <vt/vt_params.h>

#include "rocm_common.h"

#define X(i) (a->in[i].data)
#define Y(i) (a->out[i].data)

static vt_status k_add(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    hipError_t e = vt_rocm_launch_add_f32(a->in[0].data, a->in[1].data, a->out[0].data, vt_rocm_elems(&a->in[0]),
                                          vt_rocm_elems(&a->in[1]), s);
    return vt_rocm_done(&L_, e, "Add (2)", why, why_size);
}

static vt_status k_unary(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    int kind = a->op == VT_OP_SCALE  ? VT_ROCM_UNARY_SCALE
               : a->op == VT_OP_SILU ? VT_ROCM_UNARY_SILU
               : a->op == VT_OP_GELU ? VT_ROCM_UNARY_GELU
                                     : VT_ROCM_UNARY_SIGMOID;
    float sc = a->op == VT_OP_SCALE ? ((const vt_params_scale *)a->params)->s : 0.0f;
    hipError_t e = vt_rocm_launch_unary(kind, X(0), Y(0), vt_rocm_elems(&a->in[0]), sc, s);
    return vt_rocm_done(&L_, e, vt_op_name(a->op), why, why_size);
}

static vt_status k_mul(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    hipError_t e = vt_rocm_launch_mul_f32(X(0), X(1), Y(0), vt_rocm_elems(&a->in[0]), vt_rocm_elems(&a->in[1]), s);
    return vt_rocm_done(&L_, e, "Mul (3)", why, why_size);
}

static vt_status k_swiglu(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    hipError_t e = vt_rocm_launch_swiglu(X(0), X(1), Y(0), vt_rocm_elems(&a->in[0]), s);
    return vt_rocm_done(&L_, e, "SwiGlu (14)", why, why_size);
}

static vt_status k_gdn_gate(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    hipError_t e = vt_rocm_launch_gdn_gate(X(0), X(1), X(2), X(3), Y(0), Y(1), vt_rocm_elems(&a->in[0]),
                                           vt_rocm_last_dim(&a->in[0]), s);
    return vt_rocm_done(&L_, e, "GdnGate (16)", why, why_size);
}

static vt_status k_moe_combine(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *h = &a->in[0];
    hipError_t e = vt_rocm_launch_moe_combine(X(0), X(1), Y(0), h->shape[0], h->shape[1], h->shape[2], s);
    return vt_rocm_done(&L_, e, "MoeCombine (24)", why, why_size);
}

const vt_kernel vt_rocm_kernels_elementwise[] = {
    {VT_OP_ADD, VT_SIG1(VT_F32), k_add},
    {VT_OP_MUL, VT_SIG1(VT_F32), k_mul},
    {VT_OP_SCALE, VT_SIG1(VT_F32), k_unary},
    {VT_OP_SILU, VT_SIG1(VT_F32), k_unary},
    {VT_OP_GELU, VT_SIG1(VT_F32), k_unary},
    {VT_OP_SIGMOID, VT_SIG1(VT_F32), k_unary},
    {VT_OP_SWIGLU, VT_SIG1(VT_F32), k_swiglu},
    {VT_OP_GDN_GATE, VT_SIG1(VT_F32), k_gdn_gate},
    {VT_OP_MOE_COMBINE, VT_SIG1(VT_F32), k_moe_combine},
};

const uint32_t vt_rocm_n_kernels_elementwise =
    sizeof vt_rocm_kernels_elementwise / sizeof vt_rocm_kernels_elementwise[0];
