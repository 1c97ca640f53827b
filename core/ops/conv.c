/* conv.c - the conv family of the op catalogue (SPEC 7): the causal
 * depthwise convolutions over a state cache: CausalConv1dSpecUpdate,
 * CausalConv1d, CausalConv1dUpdate. For each op: its catalogue entry, its
 * operand rules and its output shapes, side by side (op_family.h). */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "op_family.h"

/* ---- operands and parameters ---- */
static const vt_operand_info in_conv_spec[] = {{"x", 0, "[B,D,T] f32"},
                                               {"w", 0, "[D,W] f32, W >= 2"},
                                               {"bias", OPT, "[D] f32"},
                                               {"slots", 0, "[B] i32 in [-1,N); -1 = padding"},
                                               {"accepted", 0, "[B] i32, 1 <= a <= L-W+2"}};
static const vt_operand_info out_conv_state[] = {{"y", 0, "[B,D,T] f32"}, {"state", INOUT, "[N,D,L] f32, L >= W-2+T"}};
static const vt_operand_info in_conv[] = {{"x", 0, "[B,D,T] f32"},
                                          {"w", 0, "[D,W] f32, W >= 2"},
                                          {"bias", OPT, "[D] f32"},
                                          {"init_state", OPT, "[B,D,W-1] f32 (zeros when absent)"}};
static const vt_operand_info out_conv[] = {{"y", 0, "[B,D,T] f32"}, {"state", 0, "[B,D,W-1] f32"}};
static const vt_operand_info in_conv_upd[] = {{"x", 0, "[B,D,T] f32"},
                                              {"w", 0, "[D,W] f32, W >= 2"},
                                              {"bias", OPT, "[D] f32"},
                                              {"slots", OPT, "[B] i32 in [-1,N) (absent: b)"}};
static const vt_operand_info out_conv_upd[] = {{"y", 0, "[B,D,T] f32"}, {"state", INOUT, "[N,D,W-1] f32"}};
#define P VT_PARAM_FIELD
static const vt_param_info p_conv[] = {P(vt_params_conv, silu, VT_PARAM_I32, "1: silu activation")};
#undef P

/* ---- operand rules ---- */

static vt_status need_silu_flag(chk *c)
{
    const vt_params_conv *p = params(c);
    if (p->silu != 0 && p->silu != 1)
        return fail(c, VT_E_INVALID_ARG, "silu must be 0 or 1, got %d", p->silu);
    return VT_OK;
}

/* Shared by the three convolutions: x [B,D,T], w [D,W], bias [D]. */
static vt_status conv_common(chk *c, int64_t *B, int64_t *D, int64_t *T, int64_t *W)
{
    TRY(need_ndim(c, I(c, 0), 3, 3));
    TRY(need_ndim(c, I(c, 1), 2, 2));
    TRY(need_dtype(c, I(c, 1), VT_F32));
    *B = in(c, 0)->shape[0];
    *D = in(c, 0)->shape[1];
    *T = in(c, 0)->shape[2];
    *W = in(c, 1)->shape[1];
    if (in(c, 1)->shape[0] != *D)
        return fail(c, VT_E_SHAPE, "w has %lld rows, x has D=%lld channels", (long long)in(c, 1)->shape[0],
                    (long long)*D);
    if (*W < 2)
        return fail(c, VT_E_SHAPE, "kernel width W=%lld must be >= 2", (long long)*W);
    if (has_in(c, 2))
        TRY(need_vec(c, I(c, 2), *D, VT_F32));
    int64_t y[3] = {*B, *D, *T};
    TRY(need_dtype(c, O(c, 0), VT_F32));
    TRY(need_shape(c, O(c, 0), 3, y));
    return need_silu_flag(c);
}

static vt_status r_conv_spec(chk *c, vt_sig *sig)
{
    int64_t B, D, T, W;
    TRY(conv_common(c, &B, &D, &T, &W));
    TRY(need_vec(c, I(c, 3), B, VT_I32));
    TRY(need_vec(c, I(c, 4), B, VT_I32));
    TRY(need_dtype(c, O(c, 1), VT_F32));
    TRY(need_ndim(c, O(c, 1), 3, 3));
    const vt_operand *s = out(c, 1);
    if (s->shape[1] != D)
        return fail(c, VT_E_SHAPE, "state has D=%lld channels, x has %lld", (long long)s->shape[1], (long long)D);
    if (s->shape[2] < W - 2 + T)
        return fail(c, VT_E_SHAPE, "state length L=%lld is below W-2+T=%lld", (long long)s->shape[2],
                    (long long)(W - 2 + T));
    *sig = sig_of(c, I(c, 0));
    return VT_OK;
}

static vt_status r_conv(chk *c, vt_sig *sig)
{
    int64_t B, D, T, W;
    TRY(conv_common(c, &B, &D, &T, &W));
    int64_t st[3] = {B, D, W - 1};
    if (has_in(c, 3)) {
        TRY(need_dtype(c, I(c, 3), VT_F32));
        TRY(need_shape(c, I(c, 3), 3, st));
    }
    TRY(need_dtype(c, O(c, 1), VT_F32));
    TRY(need_shape(c, O(c, 1), 3, st));
    *sig = sig_of(c, I(c, 0));
    return VT_OK;
}

static vt_status r_conv_update(chk *c, vt_sig *sig)
{
    int64_t B, D, T, W;
    TRY(conv_common(c, &B, &D, &T, &W));
    TRY(need_dtype(c, O(c, 1), VT_F32));
    TRY(need_ndim(c, O(c, 1), 3, 3));
    const vt_operand *s = out(c, 1);
    if (s->shape[1] != D || s->shape[2] != W - 1)
        return fail(c, VT_E_SHAPE, "state must be [N,%lld,%lld], got [%lld,%lld,%lld]", (long long)D,
                    (long long)(W - 1), (long long)s->shape[0], (long long)s->shape[1], (long long)s->shape[2]);
    if (has_in(c, 3))
        TRY(need_vec(c, I(c, 3), B, VT_I32));
    else if (s->shape[0] < B)
        return fail(c, VT_E_SHAPE, "without slots the state needs N >= B=%lld rows, has %lld", (long long)B,
                    (long long)s->shape[0]);
    *sig = sig_of(c, I(c, 0));
    return VT_OK;
}

/* ---- output shapes ---- */

/* y, and the last W-1 columns as the state (the other two update an INOUT
 * state). */
static vt_status s_conv(const shp_call *s)
{
    const vt_operand *x = &s->in[0];
    put(&s->out[0], VT_F32, shape_of(x));
    if (x->ndim != 3 || s->in[1].ndim != 2)
        return shp_fail(s, "x must be [B,D,T] and w [D,W]");
    shp st = {3, {x->shape[0], x->shape[1], s->in[1].shape[1] - 1}};
    put(&s->out[1], VT_F32, st);
    return VT_OK;
}

/* ---- the family ---- */

static const vt_op_def ops[] = {
    VT_OP_DEF(r_conv_spec, s_like_x, 0, VT_OP_CAUSAL_CONV1D_SPEC_UPDATE, "CausalConv1dSpecUpdate",
              "speculative decode conv: read S[slot,:,a-1+j], write the shifted window",
              OPS(in_conv_spec, out_conv_state), "x", 1, vt_op_sig_f32, PARAMS(vt_params_conv, p_conv)),
    VT_OP_DEF(r_conv, s_conv, 0, VT_OP_CAUSAL_CONV1D, "CausalConv1d",
              "prefill conv over [initial state or zeros, x]; returns the last W-1 columns", OPS(in_conv, out_conv),
              "x", 1, vt_op_sig_f32, PARAMS(vt_params_conv, p_conv)),
    VT_OP_DEF(r_conv_update, s_like_x, 0, VT_OP_CAUSAL_CONV1D_UPDATE, "CausalConv1dUpdate",
              "decode conv over [S, x]; S becomes the last W-1 columns", OPS(in_conv_upd, out_conv_upd), "x", 1,
              vt_op_sig_f32, PARAMS(vt_params_conv, p_conv)),
};

const vt_op_family vt_ops_conv = {"conv", ops, VT_N(ops), NULL};
