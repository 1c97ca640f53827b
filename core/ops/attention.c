/* attention.c - the attention family of the op catalogue (SPEC 7):
 * attention over caches and states: Attention, KvCacheWrite, GatedDeltaRule
 * (linear attention over a state cache) and DsaIndexerLogits. For each op:
 * its catalogue entry, its operand rules and its output shapes, side by
 * side (op_family.h). */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "op_family.h"

/* ---- operands and parameters ---- */
static const vt_operand_info in_attn[] = {{"q", 0, "[T,Hq,d] f32"},
                                          {"k_cache", 0, "[S,Hkv,d] f16/bf16/f32, slot s = position s"},
                                          {"v_cache", 0, "[S,Hkv,dv], dtype of k_cache"},
                                          {"pos", 0, "[T] i32, position of each query"}};
static const vt_operand_info out_attn[] = {{"o", 0, "[T,Hq,dv] f32"}};
static const vt_operand_info in_kv_write[] = {
    {"k", 0, "[T,Hkv,d] f32"}, {"v", 0, "[T,Hkv,dv] f32"}, {"slots", 0, "[T] i32 in [-1,S); -1 skips"}};
static const vt_operand_info out_kv_write[] = {{"k_cache", INOUT, "[S,Hkv,d] f16/bf16/f32"},
                                               {"v_cache", INOUT, "[S,Hkv,dv], dtype of k_cache"}};
static const vt_operand_info in_gdr[] = {{"q", 0, "[B,T,H,dk] f32"},
                                         {"k", 0, "[B,T,H,dk] f32"},
                                         {"v", 0, "[B,T,HV,dv] f32, HV % H == 0"},
                                         {"g", 0, "[B,T,HV] f32 (log decay)"},
                                         {"beta", 0, "[B,T,HV] f32"},
                                         {"slots", 0, "[B] or [B,T] i32 in [-1,N)"},
                                         {"accepted", OPT, "[B] i32 (with [B,T] slots): read slot[b,a-1]"}};
static const vt_operand_info out_gdr[] = {{"o", 0, "[B,T,HV,dv] f32"}, {"state", INOUT, "[N,HV,dk,dv] f32"}};
static const vt_operand_info in_dsa[] = {
    {"q", 0, "[T,H,d] f32"},
    {"k", 0, "[S,d] f32/f16/bf16"},
    {"w", 0, "[T,H] f32"},
    {"start", 0, "[T] i32, any value"},
    {"end", 0, "[T] i32, any value: [start,end) is clipped to [0,S), empty if start >= end"}};
static const vt_operand_info out_dsa[] = {{"logits", 0, "[T,S] f32, -inf outside [start,end)"}};
#define P VT_PARAM_FIELD
static const vt_param_info p_attn[] = {P(vt_params_attention, scale, VT_PARAM_F32, "logit scale"),
                                       P(vt_params_attention, window, VT_PARAM_I32, "sliding window, 0 = none")};
static const vt_param_info p_gdn[] = {P(vt_params_gdn, l2norm, VT_PARAM_I32, "1: L2-normalise q and k")};
#undef P

/* ---- signatures (filled once by build) ---- */
static vt_sig sig_attn[3], sig_kv[3], sig_dsa[3];

/* Caches and keys of the three float types. */
static void build(void)
{
    for (int i = 0; i < 3; i++) {
        sig_attn[i] = vt_sig2(VT_F32, vt_float_types[i]);
        sig_kv[i] = vt_sig2(VT_F32, vt_float_types[i]);
        sig_dsa[i] = vt_sig2(VT_F32, vt_float_types[i]);
    }
}

/* ---- operand rules ---- */

static vt_status r_attention(chk *c, vt_sig *sig)
{
    for (uint32_t i = 0; i < 3; i++)
        TRY(need_ndim(c, I(c, i), 3, 3));
    const vt_operand *q = in(c, 0), *k = in(c, 1), *v = in(c, 2);
    int64_t T = q->shape[0], Hq = q->shape[1], d = q->shape[2], S = k->shape[0], Hkv = k->shape[1];
    int64_t kw[3] = {S, Hkv, d}, vw[3] = {S, Hkv, v->shape[2]}, ow[3] = {T, Hq, v->shape[2]};
    TRY(need_shape(c, I(c, 1), 3, kw));
    TRY(need_shape(c, I(c, 2), 3, vw));
    if (v->dtype != k->dtype)
        return fail(c, VT_E_SHAPE, "v_cache is %s but k_cache is %s", vt_dtype_name(v->dtype), vt_dtype_name(k->dtype));
    if (Hkv <= 0 || Hq % Hkv != 0)
        return fail(c, VT_E_SHAPE, "query heads %lld are not a multiple of kv heads %lld", (long long)Hq,
                    (long long)Hkv);
    TRY(need_vec(c, I(c, 3), T, VT_I32));
    TRY(need_dtype(c, O(c, 0), VT_F32));
    TRY(need_shape(c, O(c, 0), 3, ow));
    const vt_params_attention *p = params(c);
    if (!isfinite(p->scale))
        return fail(c, VT_E_INVALID_ARG, "scale must be finite, got %g", (double)p->scale);
    if (p->window < 0)
        return fail(c, VT_E_INVALID_ARG, "window must be >= 0 (0 = none), got %d", p->window);
    vt_dtype dd[2] = {q->dtype, k->dtype};
    *sig = vt_sig_make(2, dd);
    return VT_OK;
}

static vt_status r_kv_write(chk *c, vt_sig *sig)
{
    TRY(need_ndim(c, I(c, 0), 3, 3));
    TRY(need_ndim(c, I(c, 1), 3, 3));
    TRY(need_ndim(c, O(c, 0), 3, 3));
    const vt_operand *k = in(c, 0), *v = in(c, 1), *kc = out(c, 0);
    int64_t T = k->shape[0], H = k->shape[1], S = kc->shape[0];
    int64_t vw[3] = {T, H, v->shape[2]}, kcw[3] = {S, H, k->shape[2]}, vcw[3] = {S, H, v->shape[2]};
    TRY(need_dtype(c, I(c, 1), VT_F32));
    TRY(need_shape(c, I(c, 1), 3, vw));
    TRY(need_vec(c, I(c, 2), T, VT_I32));
    TRY(need_shape(c, O(c, 0), 3, kcw));
    TRY(need_shape(c, O(c, 1), 3, vcw));
    if (out(c, 1)->dtype != kc->dtype)
        return fail(c, VT_E_SHAPE, "v_cache is %s but k_cache is %s", vt_dtype_name(out(c, 1)->dtype),
                    vt_dtype_name(kc->dtype));
    vt_dtype d[2] = {k->dtype, kc->dtype};
    *sig = vt_sig_make(2, d);
    return VT_OK;
}

static vt_status r_gated_delta(chk *c, vt_sig *sig)
{
    TRY(need_ndim(c, I(c, 0), 4, 4));
    TRY(need_ndim(c, I(c, 2), 4, 4));
    const vt_operand *q = in(c, 0), *v = in(c, 2);
    int64_t B = q->shape[0], T = q->shape[1], H = q->shape[2], dk = q->shape[3], HV = v->shape[2], dv = v->shape[3];
    int64_t vw[4] = {B, T, HV, dv}, gw[3] = {B, T, HV};
    TRY(need_dtype(c, I(c, 1), VT_F32));
    TRY(need_same_shape(c, I(c, 1), I(c, 0)));
    TRY(need_dtype(c, I(c, 2), VT_F32));
    TRY(need_shape(c, I(c, 2), 4, vw));
    if (H <= 0 || HV % H != 0)
        return fail(c, VT_E_SHAPE, "value heads HV=%lld are not a multiple of q/k heads H=%lld", (long long)HV,
                    (long long)H);
    for (uint32_t i = 3; i <= 4; i++) {
        TRY(need_dtype(c, I(c, i), VT_F32));
        TRY(need_shape(c, I(c, i), 3, gw));
    }
    const vt_operand *slots = in(c, 5);
    TRY(need_dtype(c, I(c, 5), VT_I32));
    int64_t s1[1] = {B}, s2[2] = {B, T};
    if (slots->ndim == 1) {
        TRY(need_shape(c, I(c, 5), 1, s1));
        if (has_in(c, 6))
            return fail(c, VT_E_SHAPE, "accepted is only used with per-token slots [B,T]");
    } else {
        TRY(need_shape(c, I(c, 5), 2, s2));
        if (!has_in(c, 6))
            return fail(c, VT_E_SHAPE, "per-token slots [B,T] need accepted [B]");
        TRY(need_vec(c, I(c, 6), B, VT_I32));
    }
    TRY(need_dtype(c, O(c, 0), VT_F32));
    TRY(need_shape(c, O(c, 0), 4, vw));
    TRY(need_dtype(c, O(c, 1), VT_F32));
    TRY(need_ndim(c, O(c, 1), 4, 4));
    const vt_operand *st = out(c, 1);
    if (st->shape[1] != HV || st->shape[2] != dk || st->shape[3] != dv)
        return fail(c, VT_E_SHAPE, "state must be [N,%lld,%lld,%lld], got [%lld,%lld,%lld,%lld]", (long long)HV,
                    (long long)dk, (long long)dv, (long long)st->shape[0], (long long)st->shape[1],
                    (long long)st->shape[2], (long long)st->shape[3]);
    const vt_params_gdn *p = params(c);
    if (p->l2norm != 0 && p->l2norm != 1)
        return fail(c, VT_E_INVALID_ARG, "l2norm must be 0 or 1, got %d", p->l2norm);
    *sig = sig_of(c, I(c, 0));
    return VT_OK;
}

static vt_status r_dsa(chk *c, vt_sig *sig)
{
    TRY(need_ndim(c, I(c, 0), 3, 3));
    TRY(need_ndim(c, I(c, 1), 2, 2));
    const vt_operand *q = in(c, 0), *k = in(c, 1);
    int64_t T = q->shape[0], H = q->shape[1], d = q->shape[2], S = k->shape[0];
    int64_t kw[2] = {S, d}, ww[2] = {T, H}, lw[2] = {T, S};
    TRY(need_shape(c, I(c, 1), 2, kw));
    TRY(need_dtype(c, I(c, 2), VT_F32));
    TRY(need_shape(c, I(c, 2), 2, ww));
    TRY(need_vec(c, I(c, 3), T, VT_I32));
    TRY(need_vec(c, I(c, 4), T, VT_I32));
    TRY(need_dtype(c, O(c, 0), VT_F32));
    TRY(need_shape(c, O(c, 0), 2, lw));
    vt_dtype dd[2] = {q->dtype, k->dtype};
    *sig = vt_sig_make(2, dd);
    return VT_OK;
}

/* ---- output shapes ---- */

static vt_status s_attention(const shp_call *s)
{
    if (s->in[0].ndim != 3 || s->in[2].ndim != 3)
        return shp_fail(s, "q must be [T,Hq,d] and v_cache [S,Hkv,dv]");
    put(&s->out[0], VT_F32, last_to(&s->in[0], s->in[2].shape[2]));
    return VT_OK;
}

/* Both caches are INOUT: nothing to derive. */
static vt_status s_none(const shp_call *s)
{
    (void)s;
    return VT_OK;
}

/* o has the shape of v (the state is INOUT). */
static vt_status s_gated_delta(const shp_call *s)
{
    put(&s->out[0], VT_F32, shape_of(&s->in[2]));
    return VT_OK;
}

static vt_status s_dsa(const shp_call *s)
{
    if (s->in[0].ndim != 3 || s->in[1].ndim != 2)
        return shp_fail(s, "q must be [T,H,d] and k [S,d]");
    shp l = {2, {s->in[0].shape[0], s->in[1].shape[0]}};
    put(&s->out[0], VT_F32, l);
    return VT_OK;
}

/* ---- the family ---- */

static const vt_op_def ops[] = {
    VT_OP_DEF(r_attention, s_attention, 0, VT_OP_ATTENTION, "Attention",
              "causal scaled dot-product over a KV cache, GQA, optional window", OPS(in_attn, out_attn), "q, k_cache",
              VT_N(sig_attn), sig_attn, PARAMS(vt_params_attention, p_attn)),
    VT_OP_DEF(r_kv_write, s_none, 0, VT_OP_KV_CACHE_WRITE, "KvCacheWrite", "scatter k, v rows into cache slots",
              OPS(in_kv_write, out_kv_write), "k, k_cache", VT_N(sig_kv), sig_kv, NOPARAMS),
    VT_OP_DEF(r_gated_delta, s_gated_delta, 0, VT_OP_GATED_DELTA_RULE, "GatedDeltaRule",
              "gated delta-rule recurrence over a state cache", OPS(in_gdr, out_gdr), "q", 1, vt_op_sig_f32,
              PARAMS(vt_params_gdn, p_gdn)),
    VT_OP_DEF(r_dsa, s_dsa, 0, VT_OP_DSA_INDEXER_LOGITS, "DsaIndexerLogits",
              "logits[t,s] = sum_h w[t,h] * relu(q[t,h].k[s]) in [start,end)", OPS(in_dsa, out_dsa), "q, k",
              VT_N(sig_dsa), sig_dsa, NOPARAMS),
};

const vt_op_family vt_ops_attention = {"attention", ops, VT_N(ops), build};
