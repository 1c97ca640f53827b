/* select.c - the select family of the op catalogue (SPEC 7): selection, in
 * a fixed candidate order: MoeRouter, TopK, Argmax and Sample. For each op:
 * its catalogue entry, its operand rules and its output shapes, side by
 * side (op_family.h). */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "op_family.h"

/* ---- operands and parameters ---- */
static const vt_operand_info in_x[] = {{"x", 0, "[..., n] f32"}};
static const vt_operand_info in_router[] = {{"logits", 0, "[T,E] f32"}, {"bias", OPT, "[E] f32 (selection only)"}};
static const vt_operand_info out_router[] = {{"ids", 0, "[T,k] i32"}, {"weights", 0, "[T,k] f32"}};
static const vt_operand_info out_topk[] = {{"values", 0, "[..., k] f32"}, {"indices", 0, "[..., k] i32"}};
static const vt_operand_info out_argmax[] = {{"idx", 0, "one i32 per row"}};
static const vt_operand_info in_sample[] = {{"logits", 0, "[..., V] f32"}};
static const vt_operand_info out_sample[] = {{"tokens", 0, "one i32 per row"}};
#define P VT_PARAM_FIELD
static const vt_param_info p_router[] = {
    P(vt_params_moe_router, k, VT_PARAM_I32, "experts per token"),
    P(vt_params_moe_router, score, VT_PARAM_I32, "0 softmax, 1 sigmoid"),
    P(vt_params_moe_router, renormalize, VT_PARAM_I32, "1: divide by max(sum, 2^-14)"),
    P(vt_params_moe_router, routed_scale, VT_PARAM_F32, "weight factor (1 = none)")};
static const vt_param_info p_topk[] = {P(vt_params_topk, k, VT_PARAM_I32, "values per row (<= 2048)")};
static const vt_param_info p_sample[] = {P(vt_params_sample, temperature, VT_PARAM_F32, "<= 0: argmax"),
                                         P(vt_params_sample, top_k, VT_PARAM_I32, "0: no cut"),
                                         P(vt_params_sample, top_p, VT_PARAM_F32, "nucleus mass, (0,1]"),
                                         P(vt_params_sample, seed, VT_PARAM_U64, "RNG seed"),
                                         P(vt_params_sample, step, VT_PARAM_U64, "RNG step")};
#undef P

/* ---- operand rules ---- */

static vt_status r_moe_router(chk *c, vt_sig *sig)
{
    TRY(need_ndim(c, I(c, 0), 2, 2));
    int64_t T = in(c, 0)->shape[0], E = in(c, 0)->shape[1];
    const vt_params_moe_router *p = params(c);
    if (p->k < 1 || p->k > E)
        return fail(c, VT_E_INVALID_ARG, "k=%d must be in [1, E=%lld]", p->k, (long long)E);
    if (p->score != VT_ROUTER_SOFTMAX && p->score != VT_ROUTER_SIGMOID)
        return fail(c, VT_E_INVALID_ARG, "score must be 0 (softmax) or 1 (sigmoid), got %d", p->score);
    if (p->renormalize != 0 && p->renormalize != 1)
        return fail(c, VT_E_INVALID_ARG, "renormalize must be 0 or 1, got %d", p->renormalize);
    if (!isfinite(p->routed_scale))
        return fail(c, VT_E_INVALID_ARG, "routed_scale must be finite, got %g", (double)p->routed_scale);
    if (has_in(c, 1))
        TRY(need_vec(c, I(c, 1), E, VT_F32));
    int64_t tk[2] = {T, p->k};
    TRY(need_dtype(c, O(c, 0), VT_I32));
    TRY(need_shape(c, O(c, 0), 2, tk));
    TRY(need_dtype(c, O(c, 1), VT_F32));
    TRY(need_shape(c, O(c, 1), 2, tk));
    *sig = sig_of(c, I(c, 0));
    return VT_OK;
}

/* Rows and row length of an op that reduces over the last axis. */
static void rows_of(const vt_operand *x, int64_t *rows, int64_t *n)
{
    *n = x->ndim ? x->shape[x->ndim - 1] : 1;
    *rows = *n ? vt_operand_elems(x) / *n : 0;
}

static vt_status r_topk(chk *c, vt_sig *sig)
{
    TRY(need_ndim(c, I(c, 0), 1, VT_MAX_DIMS));
    const vt_operand *x = in(c, 0);
    int64_t rows, n;
    rows_of(x, &rows, &n);
    const vt_params_topk *p = params(c);
    if (p->k < 1 || p->k > 2048 || p->k > n)
        return fail(c, VT_E_INVALID_ARG, "k=%d must be in [1, min(n=%lld, 2048)]", p->k, (long long)n);
    int64_t want[VT_MAX_DIMS];
    for (uint32_t i = 0; i < x->ndim; i++)
        want[i] = x->shape[i];
    want[x->ndim - 1] = p->k;
    TRY(need_dtype(c, O(c, 0), VT_F32));
    TRY(need_shape(c, O(c, 0), x->ndim, want));
    TRY(need_dtype(c, O(c, 1), VT_I32));
    TRY(need_shape(c, O(c, 1), x->ndim, want));
    *sig = sig_of(c, I(c, 0));
    return VT_OK;
}

/* One i32 per row of x (Argmax, Sample). */
static vt_status r_per_row(chk *c, vt_sig *sig)
{
    TRY(need_ndim(c, I(c, 0), 1, VT_MAX_DIMS));
    int64_t rows, n;
    rows_of(in(c, 0), &rows, &n);
    if (n < 1)
        return fail(c, VT_E_SHAPE, "rows of %s are empty", in_name(c, 0));
    TRY(need_dtype(c, O(c, 0), VT_I32));
    if (vt_operand_elems(out(c, 0)) != rows)
        return fail(c, VT_E_SHAPE, "%s must hold one value per row (%lld), holds %lld", out_name(c, 0), (long long)rows,
                    (long long)vt_operand_elems(out(c, 0)));
    *sig = sig_of(c, I(c, 0));
    return VT_OK;
}

static vt_status r_sample(chk *c, vt_sig *sig)
{
    TRY(r_per_row(c, sig));
    const vt_params_sample *p = params(c);
    if (!isfinite(p->temperature))
        return fail(c, VT_E_INVALID_ARG, "temperature must be finite, got %g", (double)p->temperature);
    if (p->top_k < 0)
        return fail(c, VT_E_INVALID_ARG, "top_k must be >= 0 (0 = no cut), got %d", p->top_k);
    if (!(p->top_p > 0.0f && p->top_p <= 1.0f))
        return fail(c, VT_E_INVALID_ARG, "top_p must be in (0, 1], got %g", (double)p->top_p);
    if (p->reserved)
        return fail(c, VT_E_INVALID_ARG, "reserved must be 0");
    return VT_OK;
}

/* ---- output shapes ---- */

static vt_status s_moe_router(const shp_call *s)
{
    const vt_params_moe_router *p = s->params;
    put(&s->out[0], VT_I32, last_to(&s->in[0], p->k));
    put(&s->out[1], VT_F32, last_to(&s->in[0], p->k));
    return VT_OK;
}

static vt_status s_topk(const shp_call *s)
{
    const vt_params_topk *p = s->params;
    put(&s->out[0], VT_F32, last_to(&s->in[0], p->k));
    put(&s->out[1], VT_I32, last_to(&s->in[0], p->k));
    return VT_OK;
}

/* One i32 per row (Argmax, Sample). */
static vt_status s_per_row(const shp_call *s)
{
    const vt_operand *x = &s->in[0];
    shp y = x->ndim > 1 ? last_to(x, -1) : (shp){1, {1}};
    put(&s->out[0], VT_I32, y);
    return VT_OK;
}

/* ---- the family ---- */

static const vt_op_def ops[] = {
    VT_OP_DEF(r_moe_router, s_moe_router, 0, VT_OP_MOE_ROUTER, "MoeRouter",
              "top-k experts per token from softmax or sigmoid scores", OPS(in_router, out_router), "logits", 1,
              vt_op_sig_f32, PARAMS(vt_params_moe_router, p_router)),
    VT_OP_DEF(r_topk, s_topk, 0, VT_OP_TOPK, "TopK", "k largest per row, descending, ties to the lower index",
              OPS(in_x, out_topk), "x", 1, vt_op_sig_f32, PARAMS(vt_params_topk, p_topk)),
    VT_OP_DEF(r_per_row, s_per_row, 0, VT_OP_ARGMAX, "Argmax",
              "index of the largest value per row, ties to the lower index", OPS(in_x, out_argmax), "x", 1,
              vt_op_sig_f32, NOPARAMS),
    VT_OP_DEF(r_sample, s_per_row, 0, VT_OP_SAMPLE, "Sample",
              "temperature, top-k, top-p sampling from a counter-based RNG", OPS(in_sample, out_sample), "logits", 1,
              vt_op_sig_f32, PARAMS(vt_params_sample, p_sample)),
};

const vt_op_family vt_ops_select = {"select", ops, VT_N(ops), NULL};
