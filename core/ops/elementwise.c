/* elementwise.c - the elementwise family of the op catalogue (SPEC 7):
 * elementwise f32 ops: Add, Mul, Scale, Silu, Gelu, Sigmoid, SwiGlu,
 * GdnGate, and MoeCombine (a weighted sum of expert rows). For each op: its
 * catalogue entry, its operand rules and its output shapes, side by side
 * (op_family.h). */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "op_family.h"

/* ---- operands and parameters ---- */
static const vt_operand_info in_ab[] = {{"a", 0, "[..., n] f32"}, {"b", 0, "trailing dims of a, f32 (broadcast)"}};
static const vt_operand_info in_x[] = {{"x", 0, "[..., n] f32"}};
static const vt_operand_info out_y[] = {{"y", 0, "shape of the first input, f32"}};
static const vt_operand_info in_swiglu[] = {{"g", 0, "[..., n] f32"}, {"u", 0, "shape of g, f32"}};
static const vt_operand_info in_gdn_gate[] = {{"a", 0, "[..., H] f32"},
                                              {"dt_bias", 0, "[H] f32"},
                                              {"A", 0, "[H] f32 (= -exp(A_log), GGUF ssm_a)"},
                                              {"b", 0, "shape of a, f32"}};
static const vt_operand_info out_gdn_gate[] = {{"g", 0, "shape of a, f32"}, {"beta", 0, "shape of a, f32"}};
static const vt_operand_info in_moe_combine[] = {{"h", 0, "[T,K,m] f32"}, {"w", 0, "[T,K] f32"}};
static const vt_operand_info out_moe_combine[] = {{"y", 0, "[T,m] f32"}};
#define P VT_PARAM_FIELD
static const vt_param_info p_scale[] = {P(vt_params_scale, s, VT_PARAM_F32, "factor")};
#undef P

/* ---- operand rules ---- */

/* b broadcast over the leading dims of a (Add, Mul). */
static vt_status r_binary(chk *c, vt_sig *sig)
{
    const vt_operand *a = in(c, 0), *b = in(c, 1);
    char b1[96], b2[96];
    TRY(need_dtype(c, I(c, 1), VT_F32));
    TRY(need_dtype(c, O(c, 0), VT_F32));
    if (b->ndim > a->ndim)
        return fail(c, VT_E_SHAPE, "b %s has more dims than a %s", shape_str(b, b1, sizeof b1),
                    shape_str(a, b2, sizeof b2));
    for (uint32_t j = 0; j < b->ndim; j++)
        if (b->shape[j] != a->shape[a->ndim - b->ndim + j])
            return fail(c, VT_E_SHAPE, "b %s does not match the trailing dims of a %s", shape_str(b, b1, sizeof b1),
                        shape_str(a, b2, sizeof b2));
    TRY(need_same_shape(c, O(c, 0), I(c, 0)));
    *sig = sig_of(c, I(c, 0));
    return VT_OK;
}

static vt_status r_scale(chk *c, vt_sig *sig)
{
    TRY(r_unary(c, sig));
    const vt_params_scale *p = params(c);
    if (!isfinite(p->s))
        return fail(c, VT_E_INVALID_ARG, "s must be finite, got %g", (double)p->s);
    return VT_OK;
}

static vt_status r_swiglu(chk *c, vt_sig *sig)
{
    TRY(r_unary(c, sig));
    TRY(need_dtype(c, I(c, 1), VT_F32));
    return need_same_shape(c, I(c, 1), I(c, 0));
}

static vt_status r_gdn_gate(chk *c, vt_sig *sig)
{
    TRY(need_ndim(c, I(c, 0), 1, VT_MAX_DIMS));
    int64_t H = in(c, 0)->shape[in(c, 0)->ndim - 1];
    TRY(need_vec(c, I(c, 1), H, VT_F32));
    TRY(need_vec(c, I(c, 2), H, VT_F32));
    TRY(need_dtype(c, I(c, 3), VT_F32));
    TRY(need_same_shape(c, I(c, 3), I(c, 0)));
    for (uint32_t o = 0; o < 2; o++) {
        TRY(need_dtype(c, O(c, o), VT_F32));
        TRY(need_same_shape(c, O(c, o), I(c, 0)));
    }
    *sig = sig_of(c, I(c, 0));
    return VT_OK;
}

static vt_status r_moe_combine(chk *c, vt_sig *sig)
{
    TRY(need_ndim(c, I(c, 0), 3, 3));
    const vt_operand *h = in(c, 0);
    int64_t tk[2] = {h->shape[0], h->shape[1]}, tm[2] = {h->shape[0], h->shape[2]};
    TRY(need_dtype(c, I(c, 1), VT_F32));
    TRY(need_shape(c, I(c, 1), 2, tk));
    TRY(need_dtype(c, O(c, 0), VT_F32));
    TRY(need_shape(c, O(c, 0), 2, tm));
    *sig = sig_of(c, I(c, 0));
    return VT_OK;
}

/* ---- output shapes ---- */

static vt_status s_gdn_gate(const shp_call *s)
{
    put(&s->out[0], VT_F32, shape_of(&s->in[0]));
    put(&s->out[1], VT_F32, shape_of(&s->in[0]));
    return VT_OK;
}

static vt_status s_moe_combine(const shp_call *s)
{
    const vt_operand *h = &s->in[0];
    if (h->ndim != 3)
        return shp_fail(s, "h must be [T,K,m]");
    shp y = {2, {h->shape[0], h->shape[2]}};
    put(&s->out[0], VT_F32, y);
    return VT_OK;
}

/* ---- the family ---- */

static const vt_op_def ops[] = {
    VT_OP_DEF(r_binary, s_like_x, VT_OPDEF_IN_PLACE, VT_OP_ADD, "Add", "y = a + b, b broadcast over leading dims",
              OPS(in_ab, out_y), "a", 1, vt_op_sig_f32, NOPARAMS),
    VT_OP_DEF(r_binary, s_like_x, VT_OPDEF_IN_PLACE, VT_OP_MUL, "Mul", "y = a * b, b broadcast over leading dims",
              OPS(in_ab, out_y), "a", 1, vt_op_sig_f32, NOPARAMS),
    VT_OP_DEF(r_scale, s_like_x, VT_OPDEF_IN_PLACE, VT_OP_SCALE, "Scale", "y = x * s", OPS(in_x, out_y), "x", 1,
              vt_op_sig_f32, PARAMS(vt_params_scale, p_scale)),
    VT_OP_DEF(r_unary, s_like_x, VT_OPDEF_IN_PLACE, VT_OP_SILU, "Silu", "y = x * sigmoid(x)", OPS(in_x, out_y), "x", 1,
              vt_op_sig_f32, NOPARAMS),
    VT_OP_DEF(r_unary, s_like_x, VT_OPDEF_IN_PLACE, VT_OP_GELU, "Gelu", "tanh approximation", OPS(in_x, out_y), "x", 1,
              vt_op_sig_f32, NOPARAMS),
    VT_OP_DEF(r_unary, s_like_x, VT_OPDEF_IN_PLACE, VT_OP_SIGMOID, "Sigmoid", "y = 1 / (1 + exp(-x))", OPS(in_x, out_y),
              "x", 1, vt_op_sig_f32, NOPARAMS),
    VT_OP_DEF(r_swiglu, s_like_x, 0, VT_OP_SWIGLU, "SwiGlu", "y = silu(g) * u", OPS(in_swiglu, out_y), "g", 1,
              vt_op_sig_f32, NOPARAMS),
    VT_OP_DEF(r_gdn_gate, s_gdn_gate, 0, VT_OP_GDN_GATE, "GdnGate", "g = A * softplus(a + dt_bias), beta = sigmoid(b)",
              OPS(in_gdn_gate, out_gdn_gate), "a", 1, vt_op_sig_f32, NOPARAMS),
    VT_OP_DEF(r_moe_combine, s_moe_combine, 0, VT_OP_MOE_COMBINE, "MoeCombine", "y[t] = sum_i w[t,i] * h[t,i]",
              OPS(in_moe_combine, out_moe_combine), "h", 1, vt_op_sig_f32, NOPARAMS),
};

const vt_op_family vt_ops_elementwise = {"elementwise", ops, VT_N(ops), NULL};
