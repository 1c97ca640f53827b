/* op_shapes.c - output dtypes and shapes of every op of the catalogue
 * (op_shapes.h), one case per op family. */
#include "config.h"

#include <string.h>

#include "op_shapes.h"

bool op_shapes_has_free_dtype(uint32_t op)
{
    return op == VT_OP_COPY || op == VT_OP_GET_ROWS || op == VT_OP_DEQUANTIZE;
}

/* A shape under construction. */
typedef struct shp {
    uint32_t n;
    int64_t d[VT_MAX_DIMS];
} shp;

static shp shape_of(const host_array *a)
{
    shp s = {a->ndim, {0}};
    memcpy(s.d, a->shape, sizeof(int64_t) * a->ndim);
    return s;
}

static void put(host_array *o, vt_dtype t, shp s)
{
    host_array_declare(o, t, s.n, s.d);
}

/* The shape with its innermost dim replaced by n (or dropped when n < 0). */
static shp last_to(const host_array *a, int64_t n)
{
    shp s = shape_of(a);
    if (s.n == 0)
        return s;
    if (n < 0)
        s.n--;
    else
        s.d[s.n - 1] = n;
    return s;
}

vt_status op_shapes_infer(uint32_t op, const host_array *in, uint32_t n_in, const void *params, vt_dtype free_dtype,
                          host_array *out, char *why, size_t why_size)
{
    const vt_op_info *info = vt_op_get_info(op);
    if (!info)
        return vt_why(VT_E_UNSUPPORTED, why, why_size, "op id %u is not in the catalogue", op);
    for (uint32_t i = 0; i < info->n_in; i++)
        if (!(info->in[i].flags & VT_OPERAND_OPTIONAL) && (i >= n_in || !in[i].present))
            return vt_why(VT_E_INVALID_ARG, why, why_size, "%s (%u) needs input %s (%s)", info->name, op,
                          info->in[i].name, info->in[i].doc);
    if (info->params_size && !params)
        return vt_why(VT_E_INVALID_ARG, why, why_size, "%s (%u) needs its params", info->name, op);
    const host_array *x = &in[0];
    switch (op) {
    case VT_OP_COPY:
    case VT_OP_DEQUANTIZE: put(&out[0], free_dtype, shape_of(x)); return VT_OK;
    case VT_OP_ADD:
    case VT_OP_MUL:
    case VT_OP_SCALE:
    case VT_OP_RMS_NORM:
    case VT_OP_L2_NORM:
    case VT_OP_SOFTMAX:
    case VT_OP_SILU:
    case VT_OP_GELU:
    case VT_OP_SIGMOID:
    case VT_OP_SWIGLU:
    case VT_OP_GATED_RMS_NORM:
    case VT_OP_ROPE: put(&out[0], VT_F32, shape_of(x)); return VT_OK;
    case VT_OP_GDN_GATE:
        put(&out[0], VT_F32, shape_of(x));
        put(&out[1], VT_F32, shape_of(x));
        return VT_OK;
    case VT_OP_CAUSAL_CONV1D_SPEC_UPDATE:
    case VT_OP_CAUSAL_CONV1D_UPDATE: put(&out[0], VT_F32, shape_of(x)); return VT_OK; /* state is INOUT */
    case VT_OP_CAUSAL_CONV1D: {
        put(&out[0], VT_F32, shape_of(x));
        if (x->ndim != 3 || in[1].ndim != 2)
            return vt_why(VT_E_INVALID_ARG, why, why_size, "%s (%u): x must be [B,D,T] and w [D,W]", info->name, op);
        shp s = {3, {x->shape[0], x->shape[1], in[1].shape[1] - 1}};
        put(&out[1], VT_F32, s);
        return VT_OK;
    }
    case VT_OP_MATMUL:
        if (in[1].ndim != 2)
            return vt_why(VT_E_INVALID_ARG, why, why_size, "%s (%u): W must be [m,k]", info->name, op);
        put(&out[0], VT_F32, last_to(x, in[1].shape[0]));
        return VT_OK;
    case VT_OP_MOE_ROUTER: {
        const vt_params_moe_router *p = params;
        put(&out[0], VT_I32, last_to(x, p->k));
        put(&out[1], VT_F32, last_to(x, p->k));
        return VT_OK;
    }
    case VT_OP_MOE_EXPERT_MATMUL: {
        if (in[1].ndim != 3 || in[2].ndim != 2)
            return vt_why(VT_E_INVALID_ARG, why, why_size, "%s (%u): W must be [E,m,k] and ids [T,K]", info->name, op);
        shp s = {3, {in[2].shape[0], in[2].shape[1], in[1].shape[1]}};
        put(&out[0], VT_F32, s);
        return VT_OK;
    }
    case VT_OP_MOE_COMBINE: {
        if (x->ndim != 3)
            return vt_why(VT_E_INVALID_ARG, why, why_size, "%s (%u): h must be [T,K,m]", info->name, op);
        shp s = {2, {x->shape[0], x->shape[2]}};
        put(&out[0], VT_F32, s);
        return VT_OK;
    }
    case VT_OP_ATTENTION:
        if (x->ndim != 3 || in[2].ndim != 3)
            return vt_why(VT_E_INVALID_ARG, why, why_size, "%s (%u): q must be [T,Hq,d] and v_cache [S,Hkv,dv]",
                          info->name, op);
        put(&out[0], VT_F32, last_to(x, in[2].shape[2]));
        return VT_OK;
    case VT_OP_KV_CACHE_WRITE: return VT_OK; /* both caches are INOUT */
    case VT_OP_GATED_DELTA_RULE: put(&out[0], VT_F32, shape_of(&in[2])); return VT_OK;
    case VT_OP_DSA_INDEXER_LOGITS: {
        if (x->ndim != 3 || in[1].ndim != 2)
            return vt_why(VT_E_INVALID_ARG, why, why_size, "%s (%u): q must be [T,H,d] and k [S,d]", info->name, op);
        shp s = {2, {x->shape[0], in[1].shape[0]}};
        put(&out[0], VT_F32, s);
        return VT_OK;
    }
    case VT_OP_TOPK: {
        const vt_params_topk *p = params;
        put(&out[0], VT_F32, last_to(x, p->k));
        put(&out[1], VT_I32, last_to(x, p->k));
        return VT_OK;
    }
    case VT_OP_GET_ROWS: {
        shp s = shape_of(&in[1]);
        if (s.n >= VT_MAX_DIMS || x->ndim != 2)
            return vt_why(VT_E_INVALID_ARG, why, why_size, "%s (%u): table must be [R,n] and idx at most %d dims",
                          info->name, op, VT_MAX_DIMS - 1);
        s.d[s.n++] = x->shape[1];
        put(&out[0], free_dtype, s);
        return VT_OK;
    }
    case VT_OP_ARGMAX:
    case VT_OP_SAMPLE: {
        shp s = x->ndim > 1 ? last_to(x, -1) : (shp){1, {1}};
        put(&out[0], VT_I32, s);
        return VT_OK;
    }
    case VT_OP_INDEX_SELECT: {
        const vt_params_index_select *p = params;
        int nd = (int)x->ndim, dim = p->dim < 0 ? p->dim + nd : p->dim;
        if (dim < 0 || dim >= nd || in[1].ndim != 1)
            return vt_why(VT_E_INVALID_ARG, why, why_size, "%s (%u): dim=%d for src with %d dims, idx must be [n]",
                          info->name, op, p->dim, nd);
        shp s = shape_of(x);
        s.d[dim] = in[1].shape[0];
        put(&out[0], x->dtype, s);
        return VT_OK;
    }
    }
    return vt_why(VT_E_UNSUPPORTED, why, why_size, "the output shapes of %s (%u) are not known to this vtctl",
                  info->name, op);
}
