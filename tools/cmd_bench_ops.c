/* cmd_bench_ops.c - `vtctl bench` plans of the decode-path ops besides the
 * weight products (bench_plan.h): GatedDeltaRule, CausalConv1d,
 * CausalConv1dUpdate, Attention, Softmax, Argmax, TopK, Sample, RmsNorm and
 * Rope. Each plan names the tensors of one run, the params and the bytes
 * the op must move at least: every input read once, every output written
 * once, a state (GatedDeltaRule's recurrent state, CausalConv1dUpdate's
 * window) read and written. Inputs are drawn so that repeated runs stay
 * finite: GatedDeltaRule L2-normalises q and k, decays by exp(g) with g in
 * [-0.1, 0) and takes beta in [0, 1). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "bench_plan.h"

#define F32_TENSOR(nd, a, b, c, d, l, h) ((tensor_plan){VT_F32, nd, {a, b, c, d}, FILL_F32, 0, l, h, 0})
#define OUT_TENSOR(dt, nd, a, b, c, d)   ((tensor_plan){dt, nd, {a, b, c, d}, FILL_NONE, 0, 0, 0, 0})
#define I32_TENSOR(nd, a, b, v)          ((tensor_plan){VT_I32, nd, {a, b, 0, 0}, FILL_I32, 0, 0, 0, v})
#define ABSENT                           ((tensor_plan){VT_F32, 1, {1, 0, 0, 0}, FILL_ABSENT, 0, 0, 0, 0})

/* Copy the params struct of a case into p. */
static void set_params(case_plan *p, const void *params, size_t size)
{
    memcpy(p->params, params, size);
    p->params_size = size;
}

/* GatedDeltaRule: q, k [B,T,H,dk], v [B,T,HV,dv], g, beta [B,T,HV], slots
 * [B] = b; o [B,T,HV,dv] and the state [B,HV,dk,dv] (read and written). */
static bool plan_gdr(const bench_case *c, case_plan *p)
{
    int64_t B = bench_key(c, "b"), T = bench_key(c, "t"), H = bench_key(c, "h"), HV = bench_key(c, "hv");
    int64_t dk = bench_key(c, "dk"), dv = bench_key(c, "dv");
    if (HV % H != 0)
        return false;
    vt_params_gdn prm = {1};
    p->n_in = 7;
    p->n_out = 2;
    p->in[0] = F32_TENSOR(4, B, T, H, dk, -1.0f, 1.0f);
    p->in[1] = F32_TENSOR(4, B, T, H, dk, -1.0f, 1.0f);
    p->in[2] = F32_TENSOR(4, B, T, HV, dv, -1.0f, 1.0f);
    p->in[3] = F32_TENSOR(3, B, T, HV, 0, -0.1f, 0.0f);
    p->in[4] = F32_TENSOR(3, B, T, HV, 0, 0.0f, 1.0f);
    p->in[5] = (tensor_plan){VT_I32, 1, {B, 0, 0, 0}, FILL_INDEX, 0, 0, 0, 0};
    p->in[5].index_below = B; /* B distinct slots of B: a permutation */
    p->in[6] = ABSENT;
    p->out[0] = OUT_TENSOR(VT_F32, 4, B, T, HV, dv);
    p->out[1] = F32_TENSOR(4, B, HV, dk, dv, -0.01f, 0.01f);
    double bt = (double)B * (double)T;
    p->bytes = 4.0 * (bt * (2.0 * (double)H * (double)dk + 2.0 * (double)HV * (double)dv + 2.0 * (double)HV) +
                      (double)B + 2.0 * (double)B * (double)HV * (double)dk * (double)dv);
    set_params(p, &prm, sizeof prm);
    return true;
}

/* CausalConv1d (prefill): x [B,D,T], w [D,W], no bias, no initial state;
 * y [B,D,T] and the final state [B,D,W-1]. CausalConv1dUpdate (decode):
 * the same x and w, the state [B,D,W-1] read and written. */
static bool plan_conv(const bench_case *c, case_plan *p, bool update)
{
    int64_t B = bench_key(c, "b"), D = bench_key(c, "d"), T = bench_key(c, "t"), W = bench_key(c, "w");
    if (W < 2)
        return false;
    vt_params_conv prm = {1};
    p->n_in = 4;
    p->n_out = 2;
    p->in[0] = F32_TENSOR(3, B, D, T, 0, -1.0f, 1.0f);
    p->in[1] = F32_TENSOR(2, D, W, 0, 0, -0.5f, 0.5f);
    p->in[2] = ABSENT;
    p->in[3] = ABSENT;
    p->out[0] = OUT_TENSOR(VT_F32, 3, B, D, T, 0);
    p->out[1] = update ? F32_TENSOR(3, B, D, W - 1, 0, -1.0f, 1.0f) : OUT_TENSOR(VT_F32, 3, B, D, W - 1, 0);
    double state = 4.0 * (double)B * (double)D * (double)(W - 1);
    p->bytes = 4.0 * (2.0 * (double)B * (double)D * (double)T + (double)D * (double)W) + (update ? 2.0 : 1.0) * state;
    set_params(p, &prm, sizeof prm);
    return true;
}

/* Attention (decode): q [T,Hq,d], k and v caches [S,Hkv,d] of the wtype,
 * every query at position S-1 (all S slots visible); o [T,Hq,d]. */
static bool plan_attention(const bench_case *c, case_plan *p)
{
    int64_t T = bench_key(c, "t"), Hq = bench_key(c, "hq"), Hkv = bench_key(c, "hkv"), d = bench_key(c, "d");
    int64_t S = bench_key(c, "s");
    if (Hq % Hkv != 0 || S > INT32_MAX)
        return false;
    vt_params_attention prm = {1.0f / 11.3137085f, 0}; /* 1/sqrt(128) */
    p->n_in = 4;
    p->n_out = 1;
    p->in[0] = F32_TENSOR(3, T, Hq, d, 0, -1.0f, 1.0f);
    p->in[1] = (tensor_plan){c->wtype, 3, {S, Hkv, d, 0}, FILL_BYTES, 0, 0, 0, 0};
    p->in[2] = p->in[1];
    p->in[3] = I32_TENSOR(1, T, 0, (int32_t)(S - 1));
    p->out[0] = OUT_TENSOR(VT_F32, 3, T, Hq, d, 0);
    uint64_t kv = 0;
    if (!vt_dtype_tensor_bytes((int)c->wtype, 3, p->in[1].shape, &kv))
        return false;
    p->bytes = 2.0 * (double)kv + 4.0 * (2.0 * (double)T * (double)Hq * (double)d + (double)T);
    set_params(p, &prm, sizeof prm);
    return true;
}

/* Softmax, Argmax, TopK, Sample over [rows, n]. */
static bool plan_row_op(const bench_case *c, case_plan *p)
{
    int64_t rows = bench_key(c, "rows"), n = bench_key(c, "n"), k = bench_key(c, "k");
    double in = 4.0 * (double)rows * (double)n;
    p->n_in = 1;
    p->n_out = 1;
    p->in[0] = F32_TENSOR(2, rows, n, 0, 0, -8.0f, 8.0f);
    switch (c->spec->op) {
    case VT_OP_SOFTMAX: {
        vt_params_softmax prm = {1.0f};
        p->n_in = 2;
        p->in[1] = ABSENT;
        p->out[0] = OUT_TENSOR(VT_F32, 2, rows, n, 0, 0);
        p->bytes = 2.0 * in;
        set_params(p, &prm, sizeof prm);
        return true;
    }
    case VT_OP_ARGMAX:
        p->out[0] = OUT_TENSOR(VT_I32, 1, rows, 0, 0, 0);
        p->bytes = in + 4.0 * (double)rows;
        return true;
    case VT_OP_TOPK: {
        if (k > n || k > 2048)
            return false;
        vt_params_topk prm = {(int32_t)k};
        p->n_out = 2;
        p->out[0] = OUT_TENSOR(VT_F32, 2, rows, k, 0, 0);
        p->out[1] = OUT_TENSOR(VT_I32, 2, rows, k, 0, 0);
        p->bytes = in + 8.0 * (double)rows * (double)k;
        set_params(p, &prm, sizeof prm);
        return true;
    }
    case VT_OP_SAMPLE: {
        if (k > n)
            return false;
        vt_params_sample prm = {0.8f, (int32_t)k, 0.95f, 0, 42, 7};
        p->out[0] = OUT_TENSOR(VT_I32, 1, rows, 0, 0, 0);
        p->bytes = in + 4.0 * (double)rows;
        set_params(p, &prm, sizeof prm);
        return true;
    }
    default: return false;
    }
}

/* RmsNorm over [rows, n] with a weight [n]; Rope over [t, h, d] (all d
 * rotated, neox pairs, theta 1e6) at position 4095. */
static bool plan_norm_rope(const bench_case *c, case_plan *p)
{
    p->n_out = 1;
    if (c->spec->op == VT_OP_RMS_NORM) {
        int64_t rows = bench_key(c, "rows"), n = bench_key(c, "n");
        vt_params_norm prm = {1e-6f};
        p->n_in = 2;
        p->in[0] = F32_TENSOR(2, rows, n, 0, 0, -1.0f, 1.0f);
        p->in[1] = F32_TENSOR(1, n, 0, 0, 0, 0.5f, 1.5f);
        p->out[0] = OUT_TENSOR(VT_F32, 2, rows, n, 0, 0);
        p->bytes = 4.0 * (2.0 * (double)rows * (double)n + (double)n);
        set_params(p, &prm, sizeof prm);
        return true;
    }
    int64_t T = bench_key(c, "t"), H = bench_key(c, "h"), d = bench_key(c, "d");
    if (d % 2 != 0 || d > INT32_MAX)
        return false;
    vt_params_rope prm = {1e6f, (int32_t)d, VT_ROPE_NEOX};
    p->n_in = 2;
    p->in[0] = F32_TENSOR(3, T, H, d, 0, -1.0f, 1.0f);
    p->in[1] = I32_TENSOR(1, T, 0, 4095);
    p->out[0] = OUT_TENSOR(VT_F32, 3, T, H, d, 0);
    p->bytes = 4.0 * (2.0 * (double)T * (double)H * (double)d + (double)T);
    set_params(p, &prm, sizeof prm);
    return true;
}

bool bench_plan_decode_op(const bench_case *c, case_plan *p, bool *handled, char *err, size_t err_size)
{
    bool ok;
    *handled = true;
    switch (c->spec->op) {
    case VT_OP_GATED_DELTA_RULE: ok = plan_gdr(c, p); break;
    case VT_OP_CAUSAL_CONV1D: ok = plan_conv(c, p, false); break;
    case VT_OP_CAUSAL_CONV1D_UPDATE: ok = plan_conv(c, p, true); break;
    case VT_OP_ATTENTION: ok = plan_attention(c, p); break;
    case VT_OP_SOFTMAX:
    case VT_OP_ARGMAX:
    case VT_OP_TOPK:
    case VT_OP_SAMPLE: ok = plan_row_op(c, p); break;
    case VT_OP_RMS_NORM:
    case VT_OP_ROPE: ok = plan_norm_rope(c, p); break;
    default: *handled = false; return false;
    }
    if (!ok)
        snprintf(err, err_size, "shape does not fit %s (%s)", vt_op_name(c->spec->op), c->spec->keys_doc);
    return ok;
}
