/* rocm_kernels_nn.c - the rocm backend's nn family: elementwise ops, norms,
 * softmax, rope, gates, MoE combine, IndexSelect, KV cache, attention,
 * the DSA indexer and the causal convolutions. Data-dependent values
 * (indices, slots, accepted counts) and Softmax's +inf logits are checked
 * on the device by a kernel queued first (kernels_check.hip, the scan in
 * kernels_rows.hip): the guarded kernel gets safe values, so a bad call
 * writes no state, and the error surfaces by name at the next sync point.
 * DSA windows need no check: any [start, end) is clipped to [0, S) by the
 * kernel, as on the cpu. */
#include "config.h"

#include <string.h>

#include <vt/vt_params.h>

#include "rocm_common.h"

#define X(i) (a->in[i].data)
#define Y(i) (a->out[i].data)

static int64_t last_dim(const vt_operand *o)
{
    return o->ndim ? o->shape[o->ndim - 1] : 1;
}

static vt_status k_unary(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    int kind = a->op == VT_OP_SCALE  ? VT_ROCM_UNARY_SCALE
               : a->op == VT_OP_SILU ? VT_ROCM_UNARY_SILU
               : a->op == VT_OP_GELU ? VT_ROCM_UNARY_GELU
                                     : VT_ROCM_UNARY_SIGMOID;
    float sc = a->op == VT_OP_SCALE ? ((const vt_params_scale *)a->params)->s : 0.0f;
    hipError_t e = vt_rocm_launch_unary(kind, X(0), Y(0), vt_rocm_elems(&a->in[0]), sc, s);
    return vt_rocm_done(&L_, e, vt_op_name((int)a->op), why, why_size);
}

static vt_status k_mul(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    hipError_t e = vt_rocm_launch_mul_f32(X(0), X(1), Y(0), vt_rocm_elems(&a->in[0]), vt_rocm_elems(&a->in[1]), s);
    return vt_rocm_done(&L_, e, "Mul (3)", why, why_size);
}

static vt_status k_swiglu(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    hipError_t e = vt_rocm_launch_swiglu(X(0), X(1), Y(0), vt_rocm_elems(&a->in[0]), s);
    return vt_rocm_done(&L_, e, "SwiGlu (14)", why, why_size);
}

static vt_status k_gdn_gate(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    hipError_t e =
        vt_rocm_launch_gdn_gate(X(0), X(1), X(2), X(3), Y(0), Y(1), vt_rocm_elems(&a->in[0]), last_dim(&a->in[0]), s);
    return vt_rocm_done(&L_, e, "GdnGate (16)", why, why_size);
}

static vt_status k_moe_combine(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *h = &a->in[0];
    hipError_t e = vt_rocm_launch_moe_combine(X(0), X(1), Y(0), h->shape[0], h->shape[1], h->shape[2], s);
    return vt_rocm_done(&L_, e, "MoeCombine (24)", why, why_size);
}

static vt_status k_norm(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    int64_t n = last_dim(&a->in[0]), rows = n ? vt_rocm_elems(&a->in[0]) / n : 0;
    float eps = ((const vt_params_norm *)a->params)->eps;
    hipError_t e;
    if (a->op == VT_OP_RMS_NORM)
        e = vt_rocm_launch_norm(VT_ROCM_NORM_RMS, X(0), a->n_in > 1 ? X(1) : NULL, NULL, Y(0), rows, n, eps, s);
    else if (a->op == VT_OP_L2_NORM)
        e = vt_rocm_launch_norm(VT_ROCM_NORM_L2, X(0), NULL, NULL, Y(0), rows, n, eps, s);
    else
        e = vt_rocm_launch_norm(VT_ROCM_NORM_GATED, X(0), X(2), X(1), Y(0), rows, n, eps, s);
    return vt_rocm_done(&L_, e, vt_op_name((int)a->op), why, why_size);
}

/* Softmax refuses a logit x*scale + mask of +inf (the row would be NaN) as
 * the cpu oracle does, named by operand, row and index: a device-side scan
 * per chunk of 2^29 rows reports the first offence into the queue's error
 * word. */
static hipError_t softmax_scan(const rocm_call *L, const float *x, const float *mask, int64_t nm, int64_t rows,
                               int64_t n, float scale)
{
    const int64_t chunk = (int64_t)1 << 29;
    hipError_t e = hipSuccess;
    for (int64_t r0 = 0; r0 < rows && e == hipSuccess; r0 += chunk)
        e = vt_rocm_launch_softmax_scan(x, mask, nm, r0, rows - r0 < chunk ? rows - r0 : chunk, n, scale, L->q->err,
                                        L->a->op, L->s);
    vt_rocm_checked(L);
    return e;
}

static vt_status k_softmax(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    int64_t n = last_dim(&a->in[0]), rows = n ? vt_rocm_elems(&a->in[0]) / n : 0;
    bool mask = a->n_in > 1 && X(1);
    int64_t nm = mask ? vt_rocm_elems(&a->in[1]) : 0;
    float scale = ((const vt_params_softmax *)a->params)->scale;
    if ((uint64_t)n >> 32) /* the scan's word holds a 32-bit index */
        return vt_why(VT_E_INVALID_ARG, why, why_size,
                      "rows of %lld elements: the rocm backend's +inf scan takes at most 2^32 per row", (long long)n);
    int64_t nb = vt_rocm_argmax_split_blocks(rows, n);
    if (nb) { /* few long rows: every pass over many blocks */
        void *part;
        vt_status st = vt_rocm_call_scratch(&L_, (uint64_t)(rows * nb) * 8, &part, why, why_size);
        if (st != VT_OK)
            return st;
        hipError_t e = vt_rocm_launch_softmax_split(X(0), mask ? X(1) : NULL, nm, Y(0), rows, n, nb, scale, part,
                                                    L_.q->err, a->op, s);
        vt_rocm_checked(&L_);
        return vt_rocm_done(&L_, e, "Softmax (10)", why, why_size);
    }
    hipError_t e = softmax_scan(&L_, X(0), mask ? X(1) : NULL, nm, rows, n, scale);
    if (e == hipSuccess)
        e = vt_rocm_launch_softmax(X(0), mask ? X(1) : NULL, nm, Y(0), rows, n, scale, L_.q->err, s);
    return vt_rocm_done(&L_, e, "Softmax (10)", why, why_size);
}

static vt_status k_rope(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_params_rope *p = a->params;
    const vt_operand *x = &a->in[0];
    hipError_t e = vt_rocm_launch_rope(X(0), X(1), Y(0), x->shape[0], x->shape[1], x->shape[2], p->n_rot, p->theta,
                                       p->mode == VT_ROPE_NEOX, s);
    return vt_rocm_done(&L_, e, "Rope (18)", why, why_size);
}

static vt_status k_index_select(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *src = &a->in[0], *idx = &a->in[1];
    const vt_params_index_select *p = a->params;
    int nd = (int)src->ndim, dim = p->dim < 0 ? p->dim + nd : p->dim;
    int64_t outer = 1, inner = 1, n_src = src->shape[dim], n_idx = idx->shape[0];
    for (int i = 0; i < dim; i++)
        outer *= src->shape[i];
    for (int i = dim + 1; i < nd; i++)
        inner *= src->shape[i];
    int wide = idx->dtype == VT_I64;
    void *safe;
    vt_status st = vt_rocm_call_scratch(&L_, (uint64_t)n_idx * (wide ? 8 : 4), &safe, why, why_size);
    if (st != VT_OK)
        return st;
    hipError_t e =
        vt_rocm_launch_check_range(L_.q->err, a->op, VT_ROCM_NAME_IDX, X(1), wide, n_idx, n_src, dim, safe, s);
    vt_rocm_checked(&L_);
    int64_t row_bytes = inner * (int64_t)vt_dtype_get((int)src->dtype)->block_bytes;
    if (e == hipSuccess && n_src > 0) /* with no source rows every index is bad: nothing to gather */
        e = vt_rocm_launch_index_select(X(0), safe, wide, Y(0), outer, n_src, n_idx, row_bytes, s);
    return vt_rocm_done(&L_, e, "IndexSelect (90)", why, why_size);
}

/* Queue the check of n slots (each -1 or in [0, limit), unique when asked;
 * with accepted, accepted[b] in [1, acc_max] where slots[b] >= 0) and
 * return the safe slots the guarded kernel must use. */
static hipError_t check_slots(const rocm_call *L, const void *slots, int64_t n, int64_t limit, bool unique,
                              const void *accepted, int64_t acc_max, void *safe)
{
    hipError_t e = vt_rocm_launch_check_slots(L->q->err, L->a->op, VT_ROCM_NAME_SLOTS, slots, n, limit, unique,
                                              accepted, acc_max, safe, L->s);
    vt_rocm_checked(L);
    return e;
}

static vt_status k_kv_write(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *k = &a->in[0], *v = &a->in[1], *kc = &a->out[0];
    int64_t T = k->shape[0];
    void *safe;
    vt_status st = vt_rocm_call_scratch(&L_, (uint64_t)T * 4, &safe, why, why_size);
    if (st != VT_OK)
        return st;
    hipError_t e = check_slots(&L_, X(2), T, kc->shape[0], false, NULL, 0, safe);
    if (e == hipSuccess)
        e = vt_rocm_launch_kv_write(X(0), safe, Y(0), kc->dtype, T, k->shape[1] * k->shape[2], s);
    if (e == hipSuccess)
        e = vt_rocm_launch_kv_write(X(1), safe, Y(1), kc->dtype, T, v->shape[1] * v->shape[2], s);
    return vt_rocm_done(&L_, e, "KvCacheWrite (31)", why, why_size);
}

static vt_status k_attention(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *q = &a->in[0], *k = &a->in[1], *v = &a->in[2];
    const vt_params_attention *p = a->params;
    int64_t T = q->shape[0], Hq = q->shape[1], Hkv = k->shape[1], S = k->shape[0], d = q->shape[2], dv = v->shape[2];
    uint64_t want = vt_rocm_attention_scratch_bytes(T, Hq, Hkv, S, d, dv);
    void *scratch = NULL;
    if (want) { /* the split form for decode: partials per chunk of keys */
        vt_status st = vt_rocm_call_scratch(&L_, want, &scratch, why, why_size);
        if (st != VT_OK)
            return st;
    }
    hipError_t e = vt_rocm_launch_attention(X(0), X(1), X(2), k->dtype, X(3), Y(0), T, Hq, Hkv, S, d, dv, p->scale,
                                            p->window, scratch, s);
    return vt_rocm_done(&L_, e, "Attention (30)", why, why_size);
}

/* Any window is accepted, as on the cpu oracle: the kernel writes -inf
 * outside [start, end), which clips it to [0, S) and leaves start >= end
 * an empty row; nothing to read back or refuse. */
static vt_status k_dsa(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *q = &a->in[0], *k = &a->in[1];
    int64_t T = q->shape[0], S = k->shape[0];
    hipError_t e =
        vt_rocm_launch_dsa_logits(X(0), X(1), k->dtype, X(2), X(3), X(4), Y(0), T, q->shape[1], q->shape[2], S, s);
    return vt_rocm_done(&L_, e, "DsaIndexerLogits (34)", why, why_size);
}

static vt_status k_conv_spec(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *x = &a->in[0], *st = &a->out[1];
    int64_t B = x->shape[0], D = x->shape[1], T = x->shape[2], W = a->in[1].shape[1], N = st->shape[0],
            L = st->shape[2];
    void *safe;
    vt_status r = vt_rocm_call_scratch(&L_, (uint64_t)B * 4, &safe, why, why_size);
    if (r != VT_OK)
        return r;
    const char *op = "CausalConv1dSpecUpdate (7)";
    hipError_t e = check_slots(&L_, X(3), B, N, true, X(4), L - W + 2, safe);
    if (e == hipSuccess) /* accepted is read only for rows whose safe slot is >= 0 */
        e = vt_rocm_launch_conv_spec(X(0), X(1), a->n_in > 2 ? X(2) : NULL, safe, X(4), Y(0), Y(1), B, D, T, W, L,
                                     ((const vt_params_conv *)a->params)->silu, s);
    return vt_rocm_done(&L_, e, op, why, why_size);
}

static vt_status k_conv(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *x = &a->in[0];
    hipError_t e = vt_rocm_launch_conv_prefill(X(0), X(1), a->n_in > 2 ? X(2) : NULL, a->n_in > 3 ? X(3) : NULL, Y(0),
                                               Y(1), x->shape[0], x->shape[1], x->shape[2], a->in[1].shape[1],
                                               ((const vt_params_conv *)a->params)->silu, s);
    return vt_rocm_done(&L_, e, "CausalConv1d (8)", why, why_size);
}

static vt_status k_conv_update(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *x = &a->in[0];
    int64_t B = x->shape[0];
    const void *slots = a->n_in > 3 ? X(3) : NULL;
    void *safe = NULL;
    hipError_t e = hipSuccess;
    if (slots) {
        vt_status r = vt_rocm_call_scratch(&L_, (uint64_t)B * 4, &safe, why, why_size);
        if (r != VT_OK)
            return r;
        e = check_slots(&L_, slots, B, a->out[1].shape[0], true, NULL, 0, safe);
    }
    if (e == hipSuccess)
        e = vt_rocm_launch_conv_update(X(0), X(1), a->n_in > 2 ? X(2) : NULL, safe, Y(0), Y(1), B, x->shape[1],
                                       x->shape[2], a->in[1].shape[1], ((const vt_params_conv *)a->params)->silu, s);
    return vt_rocm_done(&L_, e, "CausalConv1dUpdate (9)", why, why_size);
}

static vt_status k_gated_delta(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const char *op = "GatedDeltaRule (32)";
    const vt_operand *q = &a->in[0], *v = &a->in[2], *sl = &a->in[5], *st = &a->out[1];
    int64_t B = q->shape[0], T = q->shape[1], H = q->shape[2], dk = q->shape[3], HV = v->shape[2], dv = v->shape[3];
    int64_t N = st->shape[0];
    bool per_token = sl->ndim == 2;
    if (dk > VT_ROCM_GDR_MAX_DK) /* accepts() refuses it at plan time */
        return vt_why(VT_E_UNSUPPORTED, why, why_size, "GatedDeltaRule dk = %lld > %d", (long long)dk,
                      VT_ROCM_GDR_MAX_DK);
    int64_t n_slots = per_token ? B * T : B;
    void *safe;
    vt_status r = vt_rocm_call_scratch(&L_, (uint64_t)(n_slots + B) * 4, &safe, why, why_size);
    if (r != VT_OK)
        return r;
    int32_t *safe_slots = safe, *safe_acc = safe_slots + n_slots;
    hipError_t e = vt_rocm_launch_check_gdr(L_.q->err, a->op, sl->data, per_token ? X(6) : NULL, per_token, B, T, N,
                                            safe_slots, safe_acc, s);
    vt_rocm_checked(&L_);
    if (e == hipSuccess)
        e = vt_rocm_launch_gated_delta(X(0), X(1), X(2), X(3), X(4), safe_slots, per_token ? safe_acc : NULL, per_token,
                                       Y(0), Y(1), B, T, H, HV, dk, dv, ((const vt_params_gdn *)a->params)->l2norm, s);
    return vt_rocm_done(&L_, e, op, why, why_size);
}

#define IDX(t)                                                                                                         \
    {VT_OP_INDEX_SELECT, VT_SIG2(t, VT_I32), k_index_select},                                                          \
    {                                                                                                                  \
        VT_OP_INDEX_SELECT, VT_SIG2(t, VT_I64), k_index_select                                                         \
    }

const vt_kernel vt_rocm_kernels_nn[] = {
    {VT_OP_MUL, VT_SIG1(VT_F32), k_mul},
    {VT_OP_SCALE, VT_SIG1(VT_F32), k_unary},
    {VT_OP_RMS_NORM, VT_SIG1(VT_F32), k_norm},
    {VT_OP_L2_NORM, VT_SIG1(VT_F32), k_norm},
    {VT_OP_CAUSAL_CONV1D_SPEC_UPDATE, VT_SIG1(VT_F32), k_conv_spec},
    {VT_OP_CAUSAL_CONV1D, VT_SIG1(VT_F32), k_conv},
    {VT_OP_CAUSAL_CONV1D_UPDATE, VT_SIG1(VT_F32), k_conv_update},
    {VT_OP_SOFTMAX, VT_SIG1(VT_F32), k_softmax},
    {VT_OP_SILU, VT_SIG1(VT_F32), k_unary},
    {VT_OP_GELU, VT_SIG1(VT_F32), k_unary},
    {VT_OP_SIGMOID, VT_SIG1(VT_F32), k_unary},
    {VT_OP_SWIGLU, VT_SIG1(VT_F32), k_swiglu},
    {VT_OP_GATED_RMS_NORM, VT_SIG1(VT_F32), k_norm},
    {VT_OP_GDN_GATE, VT_SIG1(VT_F32), k_gdn_gate},
    {VT_OP_ROPE, VT_SIG1(VT_F32), k_rope},
    {VT_OP_MOE_COMBINE, VT_SIG1(VT_F32), k_moe_combine},
    {VT_OP_GATED_DELTA_RULE, VT_SIG1(VT_F32), k_gated_delta},
    {VT_OP_ATTENTION, VT_SIG2(VT_F32, VT_F32), k_attention},
    {VT_OP_ATTENTION, VT_SIG2(VT_F32, VT_F16), k_attention},
    {VT_OP_ATTENTION, VT_SIG2(VT_F32, VT_BF16), k_attention},
    {VT_OP_KV_CACHE_WRITE, VT_SIG2(VT_F32, VT_F32), k_kv_write},
    {VT_OP_KV_CACHE_WRITE, VT_SIG2(VT_F32, VT_F16), k_kv_write},
    {VT_OP_KV_CACHE_WRITE, VT_SIG2(VT_F32, VT_BF16), k_kv_write},
    {VT_OP_DSA_INDEXER_LOGITS, VT_SIG2(VT_F32, VT_F32), k_dsa},
    {VT_OP_DSA_INDEXER_LOGITS, VT_SIG2(VT_F32, VT_F16), k_dsa},
    {VT_OP_DSA_INDEXER_LOGITS, VT_SIG2(VT_F32, VT_BF16), k_dsa},
    IDX(VT_F32),
    IDX(VT_F16),
    IDX(VT_BF16),
    IDX(VT_I8),
    IDX(VT_I16),
    IDX(VT_I32),
    IDX(VT_I64),
    IDX(VT_F64),
};

const uint32_t vt_rocm_n_kernels_nn = sizeof vt_rocm_kernels_nn / sizeof vt_rocm_kernels_nn[0];
