/* convert.c - the convert family of the op catalogue (SPEC 7): conversions
 * between dtypes: Copy (float casts, i32 copy) and Dequantize (a block
 * format to a float type). For each op: its catalogue entry, its operand
 * rules and its output shapes, side by side (op_family.h). */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "op_family.h"

/* ---- operands and parameters ---- */
static const vt_operand_info in_src[] = {{"src", 0, "any shape"}};
static const vt_operand_info out_dst[] = {{"dst", 0, "same element count as src"}};
static const vt_operand_info in_dequant[] = {{"src", 0, "q, any shape"}};
static const vt_operand_info out_dequant[] = {{"dst", 0, "shape of src, f16/bf16/f32"}};

/* ---- signatures (filled once by build) ---- */
static vt_sig sig_copy[10], sig_dequant[3 * VT_N_Q];

static void build(void)
{
    uint32_t n = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            sig_copy[n++] = vt_sig2(vt_float_types[i], vt_float_types[j]);
    sig_copy[n++] = vt_sig2(VT_I32, VT_I32);
    n = 0;
    for (uint32_t q = 0; q < vt_n_q_formats; q++)
        for (int j = 0; j < 3; j++)
            sig_dequant[n++] = vt_sig2(vt_q_formats[q], vt_float_types[j]);
}

/* ---- operand rules ---- */

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

static vt_status r_dequantize(chk *c, vt_sig *sig)
{
    TRY(need_ndim(c, I(c, 0), 1, VT_MAX_DIMS));
    TRY(need_same_shape(c, O(c, 0), I(c, 0)));
    vt_dtype d[2] = {in(c, 0)->dtype, out(c, 0)->dtype};
    *sig = vt_sig_make(2, d);
    return VT_OK;
}

/* ---- output shapes ---- */

/* dst: the caller's dtype, the shape of src. */
static vt_status s_free(const shp_call *s)
{
    put(&s->out[0], s->free_dtype, shape_of(&s->in[0]));
    return VT_OK;
}

/* ---- the family ---- */

static const vt_op_def ops[] = {
    VT_OP_DEF(r_copy, s_free, VT_OPDEF_FREE_DTYPE, VT_OP_COPY, "Copy", "cast between f32/f16/bf16; i32 copy",
              OPS(in_src, out_dst), "src, dst", VT_N(sig_copy), sig_copy, NOPARAMS),
    VT_OP_DEF(r_dequantize, s_free, VT_OPDEF_FREE_DTYPE, VT_OP_DEQUANTIZE, "Dequantize",
              "a whole q tensor to f16/bf16/f32", OPS(in_dequant, out_dequant), "src, dst", VT_N(sig_dequant),
              sig_dequant, NOPARAMS),
};

const vt_op_family vt_ops_convert = {"convert", ops, VT_N(ops), build};
