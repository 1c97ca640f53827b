/* gather.c - the gather family of the op catalogue (SPEC 7): gathers by
 * index: GetRows (block-decoding, any table format) and IndexSelect (any
 * plain dtype). For each op: its catalogue entry, its operand rules and its
 * output shapes, side by side (op_family.h). */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "op_family.h"

/* ---- operands and parameters ---- */
static const vt_operand_info in_getrows[] = {{"table", 0, "[R,n] f32/f16/bf16/q"}, {"idx", 0, "[I...] i32 in [0,R)"}};
static const vt_operand_info out_getrows[] = {{"dst", 0, "[I..., n] f32/f16"}};
static const vt_operand_info in_index_select[] = {{"src", 0, "1-4 dims, any plain dtype"}, {"idx", 0, "[n] i32/i64"}};
static const vt_operand_info out_index_select[] = {{"dst", 0, "src shape with dim -> n"}};
#define P VT_PARAM_FIELD
static const vt_param_info p_index_select[] = {P(vt_params_index_select, dim, VT_PARAM_I32, "dimension")};
#undef P

/* ---- signatures (filled once by build) ---- */
static vt_sig sig_getrows[2 * (3 + VT_N_Q)], sig_index_select[16];

static void build(void)
{
    static const vt_dtype plain[8] = {VT_F32, VT_F16, VT_BF16, VT_I8, VT_I16, VT_I32, VT_I64, VT_F64};
    uint32_t n = 0;
    for (uint32_t t = 0; t < 3 + vt_n_q_formats; t++) {
        vt_dtype table = t < 3 ? vt_float_types[t] : vt_q_formats[t - 3];
        vt_dtype d1[3] = {table, VT_I32, VT_F32}, d2[3] = {table, VT_I32, VT_F16};
        sig_getrows[n++] = vt_sig_make(3, d1);
        sig_getrows[n++] = vt_sig_make(3, d2);
    }
    n = 0;
    for (int i = 0; i < 8; i++) {
        sig_index_select[n++] = vt_sig2(plain[i], VT_I32);
        sig_index_select[n++] = vt_sig2(plain[i], VT_I64);
    }
}

/* ---- operand rules ---- */

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

/* ---- output shapes ---- */

static vt_status s_get_rows(const shp_call *s)
{
    shp d = shape_of(&s->in[1]);
    if (d.n >= VT_MAX_DIMS || s->in[0].ndim != 2)
        return shp_fail(s, "table must be [R,n] and idx at most %d dims", VT_MAX_DIMS - 1);
    d.d[d.n++] = s->in[0].shape[1];
    put(&s->out[0], s->free_dtype, d);
    return VT_OK;
}

static vt_status s_index_select(const shp_call *s)
{
    const vt_operand *x = &s->in[0];
    const vt_params_index_select *p = s->params;
    int nd = (int)x->ndim, dim = p->dim < 0 ? p->dim + nd : p->dim;
    if (dim < 0 || dim >= nd || s->in[1].ndim != 1)
        return shp_fail(s, "dim=%d for src with %d dims, idx must be [n]", p->dim, nd);
    shp d = shape_of(x);
    d.d[dim] = s->in[1].shape[0];
    put(&s->out[0], x->dtype, d);
    return VT_OK;
}

/* ---- the family ---- */

static const vt_op_def ops[] = {
    VT_OP_DEF(r_get_rows, s_get_rows, VT_OPDEF_FREE_DTYPE, VT_OP_GET_ROWS, "GetRows",
              "dst[i] = table[idx[i]], block-decoding gather", OPS(in_getrows, out_getrows), "table, idx, dst",
              VT_N(sig_getrows), sig_getrows, NOPARAMS),
    VT_OP_DEF(r_index_select, s_index_select, 0, VT_OP_INDEX_SELECT, "IndexSelect", "torch.index_select(src, dim, idx)",
              OPS(in_index_select, out_index_select), "src, idx", VT_N(sig_index_select), sig_index_select,
              PARAMS(vt_params_index_select, p_index_select)),
};

const vt_op_family vt_ops_gather = {"gather", ops, VT_N(ops), build};
