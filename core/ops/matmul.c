/* matmul.c - the matmul family of the op catalogue (SPEC 7): products with
 * a weight of any float type or block format: MatMul and MoeExpertMatMul.
 * For each op: its catalogue entry, its operand rules and its output
 * shapes, side by side (op_family.h). */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "op_family.h"

/* ---- operands and parameters ---- */
static const vt_operand_info out_y[] = {{"y", 0, "shape of the first input, f32"}};
static const vt_operand_info in_matmul[] = {{"x", 0, "[..., k] f32"}, {"W", 0, "[m,k] f32/f16/bf16/q"}};
static const vt_operand_info in_moe_mm[] = {
    {"x", 0, "[T,k] or [T,K,k] f32"}, {"W", 0, "[E,m,k] f32/f16/bf16/q"}, {"ids", 0, "[T,K] i32 in [0,E)"}};
static const vt_operand_info out_moe_mm[] = {{"y", 0, "[T,K,m] f32"}};

/* ---- signatures (filled once by build) ---- */
static vt_sig sig_matmul[3 + VT_N_Q], sig_moe_mm[3 + VT_N_Q];

/* Weights: the three float types, then every block format. */
static void build(void)
{
    for (int i = 0; i < 3; i++) {
        sig_matmul[i] = vt_sig2(VT_F32, vt_float_types[i]);
        sig_moe_mm[i] = vt_sig2(VT_F32, vt_float_types[i]);
    }
    for (uint32_t q = 0; q < vt_n_q_formats; q++) {
        sig_matmul[3 + q] = vt_sig2(VT_F32, vt_q_formats[q]);
        sig_moe_mm[3 + q] = vt_sig2(VT_F32, vt_q_formats[q]);
    }
}

/* ---- operand rules ---- */

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

/* ---- output shapes ---- */

static vt_status s_matmul(const shp_call *s)
{
    if (s->in[1].ndim != 2)
        return shp_fail(s, "W must be [m,k]");
    put(&s->out[0], VT_F32, last_to(&s->in[0], s->in[1].shape[0]));
    return VT_OK;
}

static vt_status s_moe_expert(const shp_call *s)
{
    if (s->in[1].ndim != 3 || s->in[2].ndim != 2)
        return shp_fail(s, "W must be [E,m,k] and ids [T,K]");
    shp y = {3, {s->in[2].shape[0], s->in[2].shape[1], s->in[1].shape[1]}};
    put(&s->out[0], VT_F32, y);
    return VT_OK;
}

/* ---- the family ---- */

static const vt_op_def ops[] = {
    VT_OP_DEF(r_matmul, s_matmul, 0, VT_OP_MATMUL, "MatMul", "y[n,m] = sum_k x[n,k] * W[m,k]", OPS(in_matmul, out_y),
              "x, W", VT_N(sig_matmul), sig_matmul, NOPARAMS),
    VT_OP_DEF(r_moe_expert, s_moe_expert, 0, VT_OP_MOE_EXPERT_MATMUL, "MoeExpertMatMul",
              "y[t,i] = W[ids[t,i]] . x[t] (or x[t,i])", OPS(in_moe_mm, out_moe_mm), "x, W", VT_N(sig_moe_mm),
              sig_moe_mm, NOPARAMS),
};

const vt_op_family vt_ops_matmul = {"matmul", ops, VT_N(ops), build};
