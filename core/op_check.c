/* op_check.c - operand rules of the op catalogue: counts, dtypes, shapes
 * and parameters of a call, checked before any tier is chosen, and the
 * call's kernel signature. After these rules pass, a kernel may trust
 * every shape; only data-dependent values (indices, slots) remain for the
 * kernel to check. */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "op_check.h"

int64_t vt_operand_elems(const vt_operand *o)
{
    int64_t n = 1;
    for (uint32_t i = 0; i < o->ndim; i++)
        n *= o->shape[i];
    return n;
}

bool vt_op_outputs_empty(const vt_op_args *args)
{
    for (uint32_t i = 0; i < args->n_out; i++)
        if (vt_operand_elems(&args->out[i]) != 0)
            return false;
    return args->n_out > 0;
}

/* The call being checked and where its reason goes. */
typedef struct chk {
    const vt_op_args *a;
    const vt_op_info *info;
    char *why;
    size_t size;
} chk;

static vt_status fail(chk *c, vt_status st, const char *fmt, ...) VT_PRINTF(3, 4);
static vt_status fail(chk *c, vt_status st, const char *fmt, ...)
{
    int n = snprintf(c->why, c->size, "%s (%u): ", c->info->name, c->info->op);
    if (n < 0 || (size_t)n >= c->size)
        return st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why + n, c->size - (size_t)n, fmt, ap);
    va_end(ap);
    return st;
}

static const char *shape_str(const vt_operand *o, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "[");
    for (uint32_t i = 0; i < o->ndim && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? "," : "", (long long)o->shape[i]);
    if (used < size)
        snprintf(buf + used, size - used, "]");
    return buf;
}

/* Operand accessors: inputs by index, outputs by index. */
static const vt_operand *in(chk *c, uint32_t i)
{
    return &c->a->in[i];
}
static const vt_operand *out(chk *c, uint32_t i)
{
    return &c->a->out[i];
}
static bool has_in(chk *c, uint32_t i)
{
    return i < c->a->n_in && c->a->in[i].data != NULL;
}
static const char *in_name(chk *c, uint32_t i)
{
    return c->info->in[i].name;
}
static const char *out_name(chk *c, uint32_t i)
{
    return c->info->out[i].name;
}

/* An operand reference for the rule helpers: which list, which index. */
typedef struct ref {
    const vt_operand *o;
    const char *name;
} ref;
static ref I(chk *c, uint32_t i)
{
    return (ref){in(c, i), in_name(c, i)};
}
static ref O(chk *c, uint32_t i)
{
    return (ref){out(c, i), out_name(c, i)};
}

static vt_status need_dtype(chk *c, ref r, vt_dtype t)
{
    if (r.o->dtype != (uint32_t)t)
        return fail(c, VT_E_SHAPE, "%s must be %s, got %s", r.name, vt_dtype_name(t), vt_dtype_name(r.o->dtype));
    return VT_OK;
}

static vt_status need_ndim(chk *c, ref r, uint32_t lo, uint32_t hi)
{
    char b[96];
    if (r.o->ndim < lo || r.o->ndim > hi) {
        if (lo == hi)
            return fail(c, VT_E_SHAPE, "%s must have %u dims, got %s", r.name, lo, shape_str(r.o, b, sizeof b));
        return fail(c, VT_E_SHAPE, "%s must have %u..%u dims, got %s", r.name, lo, hi, shape_str(r.o, b, sizeof b));
    }
    return VT_OK;
}

/* dims of r must equal want[0..n) exactly (n == ndim). */
static vt_status need_shape(chk *c, ref r, uint32_t n, const int64_t *want)
{
    bool ok = r.o->ndim == n;
    for (uint32_t i = 0; ok && i < n; i++)
        ok = r.o->shape[i] == want[i];
    if (!ok) {
        char b1[96], b2[96];
        vt_operand w;
        memset(&w, 0, sizeof w);
        w.ndim = n;
        for (uint32_t i = 0; i < n; i++)
            w.shape[i] = want[i];
        return fail(c, VT_E_SHAPE, "%s must be %s, got %s", r.name, shape_str(&w, b1, sizeof b1),
                    shape_str(r.o, b2, sizeof b2));
    }
    return VT_OK;
}

static vt_status need_same_shape(chk *c, ref r, ref like)
{
    char b1[96], b2[96];
    if (r.o->ndim != like.o->ndim || memcmp(r.o->shape, like.o->shape, sizeof(int64_t) * like.o->ndim) != 0)
        return fail(c, VT_E_SHAPE, "%s %s must have the shape of %s %s", r.name, shape_str(r.o, b1, sizeof b1),
                    like.name, shape_str(like.o, b2, sizeof b2));
    return VT_OK;
}

/* r is a 1-D vector of n elements of dtype t. */
static vt_status need_vec(chk *c, ref r, int64_t n, vt_dtype t)
{
    vt_status st = need_dtype(c, r, t);
    return st ? st : need_shape(c, r, 1, &n);
}

#define TRY(x)                                                                                                         \
    do {                                                                                                               \
        vt_status st_ = (x);                                                                                           \
        if (st_ != VT_OK)                                                                                              \
            return st_;                                                                                                \
    } while (0)

static const void *params(chk *c)
{
    return c->a->params;
}

/* ---- rules, one per op family ---- */

static vt_status r_copy(chk *c, vt_sig *sig)
{
    char b1[96], b2[96];
    if (vt_operand_elems(in(c, 0)) != vt_operand_elems(out(c, 0)))
        return fail(c, VT_E_SHAPE, "src %s and dst %s differ in element count", shape_str(in(c, 0), b1, sizeof b1),
                    shape_str(out(c, 0), b2, sizeof b2));
    vt_dtype d[2] = {in(c, 0)->dtype, out(c, 0)->dtype};
    *sig = vt_sig_make(2, d);
    return VT_OK;
}

static vt_sig sig_of(chk *c, ref r)
{
    (void)c;
    vt_dtype d = r.o->dtype;
    return vt_sig_make(1, &d);
}

/* y = f(x): unary elementwise ops and Scale, L2Norm. */
static vt_status r_unary(chk *c, vt_sig *sig)
{
    TRY(need_ndim(c, I(c, 0), 1, VT_MAX_DIMS));
    TRY(need_dtype(c, O(c, 0), VT_F32));
    TRY(need_same_shape(c, O(c, 0), I(c, 0)));
    *sig = sig_of(c, I(c, 0));
    return VT_OK;
}

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

static vt_status r_scale(chk *c, vt_sig *sig)
{
    TRY(r_unary(c, sig));
    const vt_params_scale *p = params(c);
    if (!isfinite(p->s))
        return fail(c, VT_E_INVALID_ARG, "s must be finite, got %g", (double)p->s);
    return VT_OK;
}

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

static vt_status r_swiglu(chk *c, vt_sig *sig)
{
    TRY(r_unary(c, sig));
    TRY(need_dtype(c, I(c, 1), VT_F32));
    return need_same_shape(c, I(c, 1), I(c, 0));
}

static vt_status r_gated_rms(chk *c, vt_sig *sig)
{
    TRY(r_unary(c, sig));
    TRY(need_eps(c));
    TRY(need_dtype(c, I(c, 1), VT_F32));
    TRY(need_same_shape(c, I(c, 1), I(c, 0)));
    return need_vec(c, I(c, 2), in(c, 0)->shape[in(c, 0)->ndim - 1], VT_F32);
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

/* The innermost dim of a weight must hold whole blocks. */
static vt_status need_blocks(chk *c, ref w, int64_t k)
{
    const vt_dtype_info *wi = vt_dtype_get(w.o->dtype);
    if (!wi)
        return fail(c, VT_E_SHAPE, "%s dtype %s is unknown", w.name, vt_dtype_name(w.o->dtype));
    if (k % wi->block_elems != 0)
        return fail(c, VT_E_SHAPE, "k=%lld is not a multiple of the %s block (%u)", (long long)k, wi->name,
                    wi->block_elems);
    return VT_OK;
}

static vt_status r_matmul(chk *c, vt_sig *sig)
{
    const vt_operand *x = in(c, 0), *w = in(c, 1), *y = out(c, 0);
    char b1[96], b2[96], b3[96];
    TRY(need_dtype(c, O(c, 0), VT_F32));
    if (w->ndim != 2 || x->ndim < 1 || y->ndim != x->ndim)
        return fail(c, VT_E_SHAPE, "want x [n,k], W [m,k], y [n,m]; got x %s, W %s, y %s", shape_str(x, b1, sizeof b1),
                    shape_str(w, b2, sizeof b2), shape_str(y, b3, sizeof b3));
    int64_t k = x->shape[x->ndim - 1], m = w->shape[0];
    bool ok = w->shape[1] == k && y->shape[y->ndim - 1] == m;
    for (uint32_t i = 0; ok && i + 1 < x->ndim; i++)
        ok = x->shape[i] == y->shape[i];
    if (!ok)
        return fail(c, VT_E_SHAPE, "want x [n,k], W [m,k], y [n,m]; got x %s, W %s, y %s", shape_str(x, b1, sizeof b1),
                    shape_str(w, b2, sizeof b2), shape_str(y, b3, sizeof b3));
    TRY(need_blocks(c, I(c, 1), k));
    vt_dtype d[2] = {x->dtype, w->dtype};
    *sig = vt_sig_make(2, d);
    return VT_OK;
}

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

static vt_status r_moe_expert(chk *c, vt_sig *sig)
{
    TRY(need_ndim(c, I(c, 1), 3, 3));
    TRY(need_ndim(c, I(c, 2), 2, 2));
    TRY(need_dtype(c, I(c, 2), VT_I32));
    const vt_operand *x = in(c, 0), *w = in(c, 1), *ids = in(c, 2);
    int64_t T = ids->shape[0], K = ids->shape[1], m = w->shape[1], k = w->shape[2];
    int64_t x2[2] = {T, k}, x3[3] = {T, K, k};
    if (x->ndim == 2)
        TRY(need_shape(c, I(c, 0), 2, x2));
    else
        TRY(need_shape(c, I(c, 0), 3, x3));
    int64_t y[3] = {T, K, m};
    TRY(need_dtype(c, O(c, 0), VT_F32));
    TRY(need_shape(c, O(c, 0), 3, y));
    TRY(need_blocks(c, I(c, 1), k));
    vt_dtype d[2] = {x->dtype, w->dtype};
    *sig = vt_sig_make(2, d);
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

static vt_status r_get_rows(chk *c, vt_sig *sig)
{
    TRY(need_ndim(c, I(c, 0), 2, 2));
    TRY(need_ndim(c, I(c, 1), 1, VT_MAX_DIMS - 1));
    const vt_operand *t = in(c, 0), *idx = in(c, 1);
    int64_t want[VT_MAX_DIMS];
    for (uint32_t i = 0; i < idx->ndim; i++)
        want[i] = idx->shape[i];
    want[idx->ndim] = t->shape[1];
    TRY(need_shape(c, O(c, 0), idx->ndim + 1, want));
    TRY(need_blocks(c, I(c, 0), t->shape[1]));
    vt_dtype d[3] = {t->dtype, idx->dtype, out(c, 0)->dtype};
    *sig = vt_sig_make(3, d);
    return VT_OK;
}

static vt_status r_dequantize(chk *c, vt_sig *sig)
{
    TRY(need_ndim(c, I(c, 0), 1, VT_MAX_DIMS));
    TRY(need_same_shape(c, O(c, 0), I(c, 0)));
    vt_dtype d[2] = {in(c, 0)->dtype, out(c, 0)->dtype};
    *sig = vt_sig_make(2, d);
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

static vt_status r_index_select(chk *c, vt_sig *sig)
{
    TRY(need_ndim(c, I(c, 0), 1, 4));
    TRY(need_ndim(c, I(c, 1), 1, 1));
    const vt_operand *src = in(c, 0), *idx = in(c, 1);
    const vt_params_index_select *p = params(c);
    int nd = (int)src->ndim;
    if (p->dim < -nd || p->dim >= nd)
        return fail(c, VT_E_INVALID_ARG, "dim=%d is outside [-%d, %d) for src with %d dims", p->dim, nd, nd, nd);
    int dim = p->dim < 0 ? p->dim + nd : p->dim;
    int64_t want[4];
    for (int i = 0; i < nd; i++)
        want[i] = i == dim ? idx->shape[0] : src->shape[i];
    TRY(need_dtype(c, O(c, 0), src->dtype));
    TRY(need_shape(c, O(c, 0), (uint32_t)nd, want));
    vt_dtype d[2] = {src->dtype, idx->dtype};
    *sig = vt_sig_make(2, d);
    return VT_OK;
}

typedef vt_status (*rule_fn)(chk *c, vt_sig *sig);

static rule_fn rule_of(uint32_t op)
{
    switch (op) {
    case VT_OP_COPY: return r_copy;
    case VT_OP_ADD:
    case VT_OP_MUL: return r_binary;
    case VT_OP_SCALE: return r_scale;
    case VT_OP_RMS_NORM: return r_rms_norm;
    case VT_OP_L2_NORM: return r_l2_norm;
    case VT_OP_CAUSAL_CONV1D_SPEC_UPDATE: return r_conv_spec;
    case VT_OP_CAUSAL_CONV1D: return r_conv;
    case VT_OP_CAUSAL_CONV1D_UPDATE: return r_conv_update;
    case VT_OP_SOFTMAX: return r_softmax;
    case VT_OP_SILU:
    case VT_OP_GELU:
    case VT_OP_SIGMOID: return r_unary;
    case VT_OP_SWIGLU: return r_swiglu;
    case VT_OP_GATED_RMS_NORM: return r_gated_rms;
    case VT_OP_GDN_GATE: return r_gdn_gate;
    case VT_OP_ROPE: return r_rope;
    case VT_OP_MATMUL: return r_matmul;
    case VT_OP_MOE_ROUTER: return r_moe_router;
    case VT_OP_MOE_EXPERT_MATMUL: return r_moe_expert;
    case VT_OP_MOE_COMBINE: return r_moe_combine;
    case VT_OP_ATTENTION: return r_attention;
    case VT_OP_KV_CACHE_WRITE: return r_kv_write;
    case VT_OP_GATED_DELTA_RULE: return r_gated_delta;
    case VT_OP_DSA_INDEXER_LOGITS: return r_dsa;
    case VT_OP_TOPK: return r_topk;
    case VT_OP_GET_ROWS: return r_get_rows;
    case VT_OP_DEQUANTIZE: return r_dequantize;
    case VT_OP_ARGMAX: return r_per_row;
    case VT_OP_SAMPLE: return r_sample;
    case VT_OP_INDEX_SELECT: return r_index_select;
    }
    return NULL;
}

/* Counts, presence of required operands, dims and the params struct. */
static vt_status check_frame(chk *c)
{
    const vt_op_args *a = c->a;
    const vt_op_info *info = c->info;
    uint32_t required = 0;
    for (uint32_t i = 0; i < info->n_in; i++)
        if (!(info->in[i].flags & VT_OPERAND_OPTIONAL))
            required = i + 1;
    if (a->n_in < required || a->n_in > info->n_in)
        return fail(c, VT_E_INVALID_ARG, "takes %u..%u inputs, got %u", required, info->n_in, a->n_in);
    if (a->n_out != info->n_out)
        return fail(c, VT_E_INVALID_ARG, "takes %u outputs, got %u", info->n_out, a->n_out);
    for (uint32_t i = 0; i < a->n_in; i++) {
        if (!a->in[i].data && !(info->in[i].flags & VT_OPERAND_OPTIONAL))
            return fail(c, VT_E_INVALID_ARG, "input %u (%s) is required", i, info->in[i].name);
        if (a->in[i].data && a->in[i].ndim > VT_MAX_DIMS)
            return fail(c, VT_E_SHAPE, "input %s has %u dims", info->in[i].name, a->in[i].ndim);
    }
    for (uint32_t i = 0; i < a->n_out; i++)
        if (!a->out[i].data)
            return fail(c, VT_E_INVALID_ARG, "output %u (%s) is required", i, info->out[i].name);
    if (info->params_size) {
        if (!a->params || a->params_size != info->params_size)
            return fail(c, VT_E_INVALID_ARG, "needs its params struct (%u bytes), got %s of %zu bytes",
                        info->params_size, a->params ? "a pointer" : "NULL", a->params_size);
    } else if (a->params || a->params_size) {
        return fail(c, VT_E_INVALID_ARG, "takes no params, got %zu bytes", a->params_size);
    }
    return VT_OK;
}

/* True when the bytes of x and y overlap (empty operands overlap nothing). */
/* True when bytes [xo, xo + x.nbytes) and [yo, yo + y.nbytes) of one
 * buffer overlap (a tensor and its views share the buffer, at offsets;
 * distinct buffers never overlap; empty operands overlap nothing). */
static bool overlaps(const vt_operand *x, uint64_t xo, const vt_operand *y, uint64_t yo)
{
    if (!x->data || x->data != y->data || !x->nbytes || !y->nbytes)
        return false;
    return xo < yo ? yo - xo < x->nbytes : xo - yo < y->nbytes;
}

/* The byte offset of an operand inside its buffer (0 for a v1 args). */
static uint64_t in_off(chk *c, uint32_t i)
{
    return c->a->struct_size >= sizeof(vt_op_args) ? c->a->in_offset[i] : 0;
}
static uint64_t out_off(chk *c, uint32_t i)
{
    return c->a->struct_size >= sizeof(vt_op_args) ? c->a->out_offset[i] : 0;
}

/* An output shares no byte with an input or another output: a kernel reads
 * its inputs while it writes, so an aliased output (GetRows writing over
 * its table) gives a wrong result. In-out states are outputs only. */
/* Elementwise ops read element i before they write element i: an output
 * that is exactly one of their inputs (in place) is safe. */
static bool in_place_ok(chk *c, uint32_t j, uint32_t i)
{
    switch (c->a->op) {
    case VT_OP_COPY:
    case VT_OP_ADD:
    case VT_OP_MUL:
    case VT_OP_SCALE:
    case VT_OP_SILU:
    case VT_OP_GELU:
    case VT_OP_SIGMOID: break;
    default: return false;
    }
    return out_off(c, j) == in_off(c, i) && out(c, j)->nbytes == in(c, i)->nbytes;
}

static vt_status check_overlap(chk *c)
{
    for (uint32_t j = 0; j < c->a->n_out; j++) {
        for (uint32_t i = 0; i < c->a->n_in; i++)
            if (overlaps(out(c, j), out_off(c, j), in(c, i), in_off(c, i)) && !in_place_ok(c, j, i))
                return fail(c, VT_E_INVALID_ARG, "output %s overlaps input %s: give it its own tensor", out_name(c, j),
                            in_name(c, i));
        for (uint32_t k = 0; k < j; k++)
            if (overlaps(out(c, j), out_off(c, j), out(c, k), out_off(c, k)))
                return fail(c, VT_E_INVALID_ARG, "output %s overlaps output %s: give it its own tensor", out_name(c, j),
                            out_name(c, k));
    }
    return VT_OK;
}

vt_status vt_op_check_args(const vt_op_args *args)
{
    if (!args)
        return vt_set_error(VT_E_INVALID_ARG, "vt_op_check_args: args is NULL");
    char why[VT_WHY_SIZE] = "";
    vt_sig sig;
    vt_status st = vt_op_check(args, &sig, why, sizeof why);
    return st == VT_OK ? VT_OK : vt_set_error(st, "%s", why);
}

vt_status vt_op_check(const vt_op_args *a, vt_sig *sig, char *why, size_t n)
{
    const vt_op_info *info = vt_op_get_info(a->op);
    if (!info)
        return vt_why(VT_E_NOT_FOUND, why, n, "op id %u is not in the catalogue", a->op);
    chk c = {a, info, why, n};
    TRY(check_frame(&c));
    rule_fn rule = rule_of(a->op);
    if (!rule)
        return fail(&c, VT_E_UNSUPPORTED, "this build has no operand rules for it");
    TRY(rule(&c, sig));
    TRY(check_overlap(&c));
    if (!vt_op_sig_in_catalog(a->op, *sig)) {
        char b[128];
        return fail(&c, VT_E_SHAPE, "signature %s (%s) is not in the catalogue", vt_sig_format(*sig, b, sizeof b),
                    info->sig_operands);
    }
    return VT_OK;
}
