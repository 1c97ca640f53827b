/* rows.c - the rows family of the op catalogue (SPEC 7): ops over the last
 * axis, one row at a time: RmsNorm, L2Norm, GatedRmsNorm, Softmax and Rope.
 * For each op: its catalogue entry, its operand rules and its output
 * shapes, side by side (op_family.h). */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "op_family.h"

/* ---- operands and parameters ---- */
static const vt_operand_info in_x[] = {{"x", 0, "[..., n] f32"}};
static const vt_operand_info out_y[] = {{"y", 0, "shape of the first input, f32"}};
static const vt_operand_info in_rms[] = {{"x", 0, "[..., D] f32"}, {"w", OPT, "[D] f32"}};
static const vt_operand_info in_softmax[] = {{"x", 0, "[..., n] f32; a logit x*scale + mask of +inf is refused"},
                                             {"mask", OPT, "trailing dims of x, f32, -inf allowed"}};
static const vt_operand_info in_gated_rms[] = {
    {"x", 0, "[..., D] f32"}, {"z", 0, "shape of x, f32"}, {"w", 0, "[D] f32"}};
static const vt_operand_info in_rope[] = {{"x", 0, "[T,H,d] f32"}, {"pos", 0, "[T] i32"}};
#define P VT_PARAM_FIELD
static const vt_param_info p_norm[] = {P(vt_params_norm, eps, VT_PARAM_F32, "epsilon under the root")};
static const vt_param_info p_softmax[] = {P(vt_params_softmax, scale, VT_PARAM_F32, "logit scale")};
static const vt_param_info p_rope[] = {P(vt_params_rope, theta, VT_PARAM_F32, "frequency base"),
                                       P(vt_params_rope, n_rot, VT_PARAM_I32, "rotated dims (even)"),
                                       P(vt_params_rope, mode, VT_PARAM_I32, "0 normal, 1 neox")};
#undef P

/* ---- operand rules ---- */

static vt_status need_eps(chk *c)
{
    const vt_params_norm *p = params(c);
    if (!(p->eps >= 0.0f) || !isfinite(p->eps))
        return fail(c, VT_E_INVALID_ARG, "eps must be finite and >= 0, got %g", (double)p->eps);
    return VT_OK;
}

static vt_status r_rms_norm(chk *c, vt_sig *sig)
{
    TRY(r_unary(c, sig));
    TRY(need_eps(c));
    if (has_in(c, 1))
        TRY(need_vec(c, I(c, 1), in(c, 0)->shape[in(c, 0)->ndim - 1], VT_F32));
    return VT_OK;
}

static vt_status r_l2_norm(chk *c, vt_sig *sig)
{
    TRY(r_unary(c, sig));
    return need_eps(c);
}

static vt_status r_softmax(chk *c, vt_sig *sig)
{
    TRY(r_unary(c, sig));
    const vt_params_softmax *p = params(c);
    if (!isfinite(p->scale))
        return fail(c, VT_E_INVALID_ARG, "scale must be finite, got %g", (double)p->scale);
    if (has_in(c, 1)) {
        const vt_operand *x = in(c, 0), *m = in(c, 1);
        char b1[96], b2[96];
        TRY(need_dtype(c, I(c, 1), VT_F32));
        bool ok = m->ndim <= x->ndim;
        for (uint32_t j = 0; ok && j < m->ndim; j++)
            ok = m->shape[j] == x->shape[x->ndim - m->ndim + j];
        if (!ok)
            return fail(c, VT_E_SHAPE, "mask %s does not match the trailing dims of x %s", shape_str(m, b1, sizeof b1),
                        shape_str(x, b2, sizeof b2));
    }
    return VT_OK;
}

static vt_status r_gated_rms(chk *c, vt_sig *sig)
{
    TRY(r_unary(c, sig));
    TRY(need_eps(c));
    TRY(need_dtype(c, I(c, 1), VT_F32));
    TRY(need_same_shape(c, I(c, 1), I(c, 0)));
    return need_vec(c, I(c, 2), in(c, 0)->shape[in(c, 0)->ndim - 1], VT_F32);
}

static vt_status r_rope(chk *c, vt_sig *sig)
{
    TRY(need_ndim(c, I(c, 0), 3, 3));
    TRY(r_unary(c, sig));
    TRY(need_vec(c, I(c, 1), in(c, 0)->shape[0], VT_I32));
    const vt_params_rope *p = params(c);
    int64_t d = in(c, 0)->shape[2];
    if (p->n_rot <= 0 || p->n_rot % 2 || p->n_rot > d)
        return fail(c, VT_E_INVALID_ARG, "n_rot=%d must be even and in (0, head dim %lld]", p->n_rot, (long long)d);
    if (!(p->theta > 0.0f) || !isfinite(p->theta))
        return fail(c, VT_E_INVALID_ARG, "theta must be finite and > 0, got %g", (double)p->theta);
    if (p->mode != VT_ROPE_NORMAL && p->mode != VT_ROPE_NEOX)
        return fail(c, VT_E_INVALID_ARG, "mode must be 0 (normal) or 1 (neox), got %d", p->mode);
    return VT_OK;
}

/* ---- output shapes ---- */

/* ---- the family ---- */

static const vt_op_def ops[] = {
    VT_OP_DEF(r_rms_norm, s_like_x, 0, VT_OP_RMS_NORM, "RmsNorm", "y = x / sqrt(mean(x^2) + eps) * w (w optional)",
              OPS(in_rms, out_y), "x", 1, vt_op_sig_f32, PARAMS(vt_params_norm, p_norm)),
    VT_OP_DEF(r_l2_norm, s_like_x, 0, VT_OP_L2_NORM, "L2Norm", "y = x / sqrt(sum(x^2) + eps)", OPS(in_x, out_y), "x", 1,
              vt_op_sig_f32, PARAMS(vt_params_norm, p_norm)),
    VT_OP_DEF(r_softmax, s_like_x, 0, VT_OP_SOFTMAX, "Softmax",
              "row softmax of x*scale + mask; an all -inf row gives zeros, +inf is refused", OPS(in_softmax, out_y),
              "x", 1, vt_op_sig_f32, PARAMS(vt_params_softmax, p_softmax)),
    VT_OP_DEF(r_gated_rms, s_like_x, 0, VT_OP_GATED_RMS_NORM, "GatedRmsNorm",
              "y = x / sqrt(mean(x^2) + eps) * w * silu(z)", OPS(in_gated_rms, out_y), "x", 1, vt_op_sig_f32,
              PARAMS(vt_params_norm, p_norm)),
    VT_OP_DEF(r_rope, s_like_x, 0, VT_OP_ROPE, "Rope", "rotary embedding at given positions, normal or neox pairs",
              OPS(in_rope, out_y), "x", 1, vt_op_sig_f32, PARAMS(vt_params_rope, p_rope)),
};

const vt_op_family vt_ops_rows = {"rows", ops, VT_N(ops), NULL};
