/* op_check.c - operand rules of the op catalogue: counts, dtypes and
 * shapes of a call, checked before any tier is chosen, and the call's
 * kernel signature. */
#include "config.h"

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

static const char *shape_str(const vt_operand *o, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "[");
    for (uint32_t i = 0; i < o->ndim && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? "," : "", (long long)o->shape[i]);
    if (used < size)
        snprintf(buf + used, size - used, "]");
    return buf;
}

static bool is_float3(uint32_t t)
{
    return t == VT_F32 || t == VT_F16 || t == VT_BF16;
}

static vt_status need_counts(const vt_op_args *a, uint32_t in_min, uint32_t in_max, uint32_t out, char *why, size_t n)
{
    const char *name = vt_op_name((int)a->op);
    if (a->n_in < in_min || a->n_in > in_max)
        return vt_why(VT_E_INVALID_ARG, why, n, "%s (%u) takes %u..%u inputs, got %u", name, a->op, in_min, in_max,
                      a->n_in);
    if (a->n_out != out)
        return vt_why(VT_E_INVALID_ARG, why, n, "%s (%u) takes %u outputs, got %u", name, a->op, out, a->n_out);
    for (uint32_t i = 0; i < in_min; i++)
        if (!a->in[i].data)
            return vt_why(VT_E_INVALID_ARG, why, n, "%s (%u): required input %u is missing", name, a->op, i);
    for (uint32_t i = 0; i < out; i++)
        if (!a->out[i].data)
            return vt_why(VT_E_INVALID_ARG, why, n, "%s (%u): output %u is missing", name, a->op, i);
    return VT_OK;
}

static vt_status check_copy(const vt_op_args *a, vt_sig *sig, char *why, size_t n)
{
    vt_status st = need_counts(a, 1, 1, 1, why, n);
    if (st)
        return st;
    const vt_operand *src = &a->in[0], *dst = &a->out[0];
    char b1[64], b2[64];
    if (vt_operand_elems(src) != vt_operand_elems(dst))
        return vt_why(VT_E_SHAPE, why, n, "Copy (1): src %s and dst %s differ in element count",
                      shape_str(src, b1, sizeof b1), shape_str(dst, b2, sizeof b2));
    bool ok = (is_float3(src->dtype) && is_float3(dst->dtype)) || (src->dtype == VT_I32 && dst->dtype == VT_I32);
    if (!ok)
        return vt_why(VT_E_SHAPE, why, n, "Copy (1): no cast from %s to %s in the catalogue",
                      vt_dtype_name((int)src->dtype), vt_dtype_name((int)dst->dtype));
    vt_dtype d[2] = {(vt_dtype)src->dtype, (vt_dtype)dst->dtype};
    *sig = vt_sig_make(2, d);
    return VT_OK;
}

static vt_status check_add(const vt_op_args *a, vt_sig *sig, char *why, size_t n)
{
    vt_status st = need_counts(a, 2, 2, 1, why, n);
    if (st)
        return st;
    const vt_operand *x = &a->in[0], *b = &a->in[1], *y = &a->out[0];
    const char *name = vt_op_name((int)a->op);
    char b1[64], b2[64];
    if (x->dtype != VT_F32 || b->dtype != VT_F32 || y->dtype != VT_F32)
        return vt_why(VT_E_SHAPE, why, n, "%s (%u): operands must be f32 (a %s, b %s, y %s)", name, a->op,
                      vt_dtype_name((int)x->dtype), vt_dtype_name((int)b->dtype), vt_dtype_name((int)y->dtype));
    if (b->ndim > x->ndim)
        return vt_why(VT_E_SHAPE, why, n, "%s (%u): b %s has more dims than a %s", name, a->op,
                      shape_str(b, b1, sizeof b1), shape_str(x, b2, sizeof b2));
    for (uint32_t j = 0; j < b->ndim; j++)
        if (b->shape[j] != x->shape[x->ndim - b->ndim + j])
            return vt_why(VT_E_SHAPE, why, n, "%s (%u): b %s does not match the trailing dims of a %s", name, a->op,
                          shape_str(b, b1, sizeof b1), shape_str(x, b2, sizeof b2));
    if (y->ndim != x->ndim || memcmp(y->shape, x->shape, sizeof(int64_t) * x->ndim) != 0)
        return vt_why(VT_E_SHAPE, why, n, "%s (%u): y %s must have the shape of a %s", name, a->op,
                      shape_str(y, b1, sizeof b1), shape_str(x, b2, sizeof b2));
    vt_dtype d[1] = {VT_F32};
    *sig = vt_sig_make(1, d);
    return VT_OK;
}

static vt_status check_matmul(const vt_op_args *a, vt_sig *sig, char *why, size_t n)
{
    vt_status st = need_counts(a, 2, 2, 1, why, n);
    if (st)
        return st;
    const vt_operand *x = &a->in[0], *w = &a->in[1], *y = &a->out[0];
    char b1[64], b2[64], b3[64];
    if (x->dtype != VT_F32 || y->dtype != VT_F32)
        return vt_why(VT_E_SHAPE, why, n, "MatMul (20): x and y must be f32 (x %s, y %s)", vt_dtype_name((int)x->dtype),
                      vt_dtype_name((int)y->dtype));
    const vt_dtype_info *wi = vt_dtype_get((int)w->dtype);
    if (!wi || !(is_float3(w->dtype) || wi->quantized))
        return vt_why(VT_E_SHAPE, why, n, "MatMul (20): W dtype %s is not f32/f16/bf16 or a block format",
                      vt_dtype_name((int)w->dtype));
    if (w->ndim != 2 || x->ndim < 1 || y->ndim != x->ndim)
        return vt_why(VT_E_SHAPE, why, n, "MatMul (20): want x [n,k], W [m,k], y [n,m]; got x %s, W %s, y %s",
                      shape_str(x, b1, sizeof b1), shape_str(w, b2, sizeof b2), shape_str(y, b3, sizeof b3));
    int64_t k = x->shape[x->ndim - 1], m = w->shape[0];
    bool ok = w->shape[1] == k && y->shape[y->ndim - 1] == m;
    for (uint32_t i = 0; ok && i + 1 < x->ndim; i++)
        ok = x->shape[i] == y->shape[i];
    if (!ok)
        return vt_why(VT_E_SHAPE, why, n, "MatMul (20): want x [n,k], W [m,k], y [n,m]; got x %s, W %s, y %s",
                      shape_str(x, b1, sizeof b1), shape_str(w, b2, sizeof b2), shape_str(y, b3, sizeof b3));
    if (k % wi->block_elems != 0)
        return vt_why(VT_E_SHAPE, why, n, "MatMul (20): k=%lld is not a multiple of the %s block (%u)", (long long)k,
                      wi->name, wi->block_elems);
    vt_dtype d[2] = {(vt_dtype)x->dtype, (vt_dtype)w->dtype};
    *sig = vt_sig_make(2, d);
    return VT_OK;
}

vt_status vt_op_check(const vt_op_args *a, vt_sig *sig, char *why, size_t n)
{
    const char *name = vt_op_name((int)a->op);
    if (!name)
        return vt_why(VT_E_NOT_FOUND, why, n, "op id %u is not in the catalogue", a->op);
    switch (a->op) {
    case VT_OP_COPY: return check_copy(a, sig, why, n);
    case VT_OP_ADD: return check_add(a, sig, why, n);
    case VT_OP_MATMUL: return check_matmul(a, sig, why, n);
    default: break;
    }
    return vt_why(VT_E_UNSUPPORTED, why, n, "%s (%u): this build has no operand rules for it yet", name, a->op);
}
