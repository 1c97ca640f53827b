/* rocm_kernels_nn.c - the rocm backend's nn family: elementwise ops, norms,
 * softmax, rope, gates, MoE combine, IndexSelect, KV cache, attention,
 * the DSA indexer and the causal convolutions. Data-dependent values
 * (indices, slots, accepted counts) are read back and checked before any
 * launch, and Softmax's +inf logits are found by a device-side scan, so a
 * bad call is named and writes nothing. DSA windows need no check: any
 * [start, end) is clipped to [0, S) by the kernel, as on the cpu. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <vt/vt_params.h>

#include "rocm_common.h"

#define X(i) (a->in[i].data)
#define Y(i) (a->out[i].data)

static int64_t last_dim(const vt_operand *o)
{
    return o->ndim ? o->shape[o->ndim - 1] : 1;
}

/* Prologue of every kernel here: the device's stream or return. */
#define STREAM()                                                                                                       \
    hipStream_t s;                                                                                                     \
    vt_status st_ = vt_rocm_stream(c, dev, &s, why, why_size);                                                         \
    if (st_ != VT_OK)                                                                                                  \
    return st_

static vt_status k_unary(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    int kind = a->op == VT_OP_SCALE  ? VT_ROCM_UNARY_SCALE
               : a->op == VT_OP_SILU ? VT_ROCM_UNARY_SILU
               : a->op == VT_OP_GELU ? VT_ROCM_UNARY_GELU
                                     : VT_ROCM_UNARY_SIGMOID;
    float sc = a->op == VT_OP_SCALE ? ((const vt_params_scale *)a->params)->s : 0.0f;
    hipError_t e = vt_rocm_launch_unary(kind, X(0), Y(0), vt_rocm_elems(&a->in[0]), sc, s);
    return vt_rocm_done(e, vt_op_name((int)a->op), c, dev, why, why_size);
}

static vt_status k_mul(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    hipError_t e = vt_rocm_launch_mul_f32(X(0), X(1), Y(0), vt_rocm_elems(&a->in[0]), vt_rocm_elems(&a->in[1]), s);
    return vt_rocm_done(e, "Mul (3)", c, dev, why, why_size);
}

static vt_status k_swiglu(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    hipError_t e = vt_rocm_launch_swiglu(X(0), X(1), Y(0), vt_rocm_elems(&a->in[0]), s);
    return vt_rocm_done(e, "SwiGlu (14)", c, dev, why, why_size);
}

static vt_status k_gdn_gate(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    hipError_t e =
        vt_rocm_launch_gdn_gate(X(0), X(1), X(2), X(3), Y(0), Y(1), vt_rocm_elems(&a->in[0]), last_dim(&a->in[0]), s);
    return vt_rocm_done(e, "GdnGate (16)", c, dev, why, why_size);
}

static vt_status k_moe_combine(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *h = &a->in[0];
    hipError_t e = vt_rocm_launch_moe_combine(X(0), X(1), Y(0), h->shape[0], h->shape[1], h->shape[2], s);
    return vt_rocm_done(e, "MoeCombine (24)", c, dev, why, why_size);
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
    return vt_rocm_done(e, vt_op_name((int)a->op), c, dev, why, why_size);
}

/* Softmax refuses a logit x*scale + mask of +inf (the row would be NaN) as
 * the cpu oracle does, named by operand, row and index, before anything
 * is written: a device-side scan reports the first offence through the
 * device's error word, rows in chunks of 2^29 so the row fits the word. */
static vt_status softmax_scan(vt_backend_ctx *c, int dev, hipStream_t s, const float *x, const float *mask, int64_t nm,
                              int64_t rows, int64_t n, float scale, char *why, size_t why_size)
{
    if ((uint64_t)n >> 32)
        return vt_why(VT_E_INVALID_ARG, why, why_size,
                      "Softmax (10): rows of %lld elements: the rocm backend's +inf scan takes at most 2^32 per row",
                      (long long)n);
    const int64_t chunk = (int64_t)1 << 29;
    for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
        int64_t nr = rows - r0 < chunk ? rows - r0 : chunk;
        unsigned long long *err = c->dev[dev].err_word, word = 0;
        hipError_t e = hipMemsetAsync(err, 0xff, sizeof *err, s);
        if (e == hipSuccess)
            e = vt_rocm_launch_softmax_scan(x, mask, nm, r0, nr, n, scale, err, s);
        if (e == hipSuccess)
            e = hipMemcpyAsync(&word, err, sizeof word, hipMemcpyDeviceToHost, s);
        if (e == hipSuccess)
            e = hipStreamSynchronize(s);
        if (e != hipSuccess)
            return vt_rocm_fail(e, "Softmax (10)", dev, why, why_size);
        if (word == ~0ull)
            continue;
        long long r = r0 + (long long)(word >> 34), i = (long long)((word >> 2) & 0xffffffffu);
        switch (word & 3) {
        case 0: return vt_why(VT_E_INVALID_ARG, why, why_size, "Softmax (10): x row %lld has +inf at index %lld", r, i);
        case 1:
            return vt_why(VT_E_INVALID_ARG, why, why_size,
                          "Softmax (10): mask has +inf at index %lld (x row %lld, index %lld)",
                          (long long)(nm >= n ? (r * n + i) % nm : 0), r, i);
        case 2:
            return vt_why(VT_E_INVALID_ARG, why, why_size,
                          "Softmax (10): x row %lld index %lld: x*scale + mask is +inf", r, i);
        default:
            return vt_why(VT_E_INVALID_ARG, why, why_size,
                          "Softmax (10): x row %lld index %lld: x*scale + mask is NaN from infinite operands", r, i);
        }
    }
    return VT_OK;
}

static vt_status k_softmax(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    int64_t n = last_dim(&a->in[0]), rows = n ? vt_rocm_elems(&a->in[0]) / n : 0;
    bool mask = a->n_in > 1 && X(1);
    int64_t nm = mask ? vt_rocm_elems(&a->in[1]) : 0;
    float scale = ((const vt_params_softmax *)a->params)->scale;
    vt_status st = softmax_scan(c, dev, s, X(0), mask ? X(1) : NULL, nm, rows, n, scale, why, why_size);
    if (st != VT_OK)
        return st;
    hipError_t e = vt_rocm_launch_softmax(X(0), mask ? X(1) : NULL, nm, Y(0), rows, n, scale, s);
    return vt_rocm_done(e, "Softmax (10)", c, dev, why, why_size);
}

static vt_status k_rope(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_params_rope *p = a->params;
    const vt_operand *x = &a->in[0];
    hipError_t e = vt_rocm_launch_rope(X(0), X(1), Y(0), x->shape[0], x->shape[1], x->shape[2], p->n_rot, p->theta,
                                       p->mode == VT_ROPE_NEOX, s);
    return vt_rocm_done(e, "Rope (18)", c, dev, why, why_size);
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
    int64_t *iv = malloc(sizeof *iv * (size_t)(n_idx ? n_idx : 1));
    if (!iv)
        return vt_why(VT_E_NO_MEMORY, why, why_size, "out of host memory");
    vt_status st = vt_rocm_read_indices(c, dev, idx->data, n_idx, idx->dtype == VT_I64, iv, why, why_size);
    for (int64_t j = 0; st == VT_OK && j < n_idx; j++)
        if (iv[j] < 0 || iv[j] >= n_src)
            st = vt_why(VT_E_INVALID_ARG, why, why_size,
                        "IndexSelect (90): idx[%lld] = %lld is outside [0, %lld) of src dim %d", (long long)j,
                        (long long)iv[j], (long long)n_src, dim);
    free(iv);
    if (st != VT_OK)
        return st;
    int64_t row_bytes = inner * (int64_t)vt_dtype_get((int)src->dtype)->block_bytes;
    hipError_t e =
        vt_rocm_launch_index_select(X(0), X(1), idx->dtype == VT_I64, Y(0), outer, n_src, n_idx, row_bytes, s);
    return vt_rocm_done(e, "IndexSelect (90)", c, dev, why, why_size);
}

/* Read n slots and check each is -1 or in [0, limit); with unique, no
 * non-negative slot may repeat. */
static vt_status check_slots(vt_backend_ctx *c, int dev, const char *op, const char *name, const void *ptr, int64_t n,
                             int64_t limit, bool unique, int64_t *out, char *why, size_t why_size)
{
    vt_status st = vt_rocm_read_indices(c, dev, ptr, n, false, out, why, why_size);
    for (int64_t i = 0; st == VT_OK && i < n; i++) {
        if (out[i] < -1 || out[i] >= limit)
            return vt_why(VT_E_INVALID_ARG, why, why_size, "%s: %s[%lld] = %lld is outside [-1, %lld)", op, name,
                          (long long)i, (long long)out[i], (long long)limit);
        for (int64_t j = 0; unique && out[i] >= 0 && j < i; j++)
            if (out[j] == out[i])
                return vt_why(VT_E_INVALID_ARG, why, why_size, "%s: %s[%lld] and %s[%lld] both name slot %lld", op,
                              name, (long long)j, name, (long long)i, (long long)out[i]);
    }
    return st;
}

static vt_status k_kv_write(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *k = &a->in[0], *v = &a->in[1], *kc = &a->out[0];
    int64_t T = k->shape[0];
    int64_t *sl = malloc(sizeof *sl * (size_t)(T ? T : 1));
    if (!sl)
        return vt_why(VT_E_NO_MEMORY, why, why_size, "out of host memory");
    vt_status st = check_slots(c, dev, "KvCacheWrite (31)", "slots", X(2), T, kc->shape[0], false, sl, why, why_size);
    free(sl);
    if (st != VT_OK)
        return st;
    hipError_t e = vt_rocm_launch_kv_write(X(0), X(2), Y(0), kc->dtype, T, k->shape[1] * k->shape[2], s);
    if (e == hipSuccess)
        e = vt_rocm_launch_kv_write(X(1), X(2), Y(1), kc->dtype, T, v->shape[1] * v->shape[2], s);
    return vt_rocm_done(e, "KvCacheWrite (31)", c, dev, why, why_size);
}

static vt_status k_attention(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *q = &a->in[0], *k = &a->in[1], *v = &a->in[2];
    const vt_params_attention *p = a->params;
    hipError_t e = vt_rocm_launch_attention(X(0), X(1), X(2), k->dtype, X(3), Y(0), q->shape[0], q->shape[1],
                                            k->shape[1], k->shape[0], q->shape[2], v->shape[2], p->scale, p->window, s);
    return vt_rocm_done(e, "Attention (30)", c, dev, why, why_size);
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
    return vt_rocm_done(e, "DsaIndexerLogits (34)", c, dev, why, why_size);
}

static vt_status k_conv_spec(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *x = &a->in[0], *st = &a->out[1];
    int64_t B = x->shape[0], D = x->shape[1], T = x->shape[2], W = a->in[1].shape[1], N = st->shape[0],
            L = st->shape[2];
    int64_t *buf = malloc(sizeof *buf * (size_t)(2 * B + 1));
    if (!buf)
        return vt_why(VT_E_NO_MEMORY, why, why_size, "out of host memory");
    const char *op = "CausalConv1dSpecUpdate (7)";
    vt_status r = check_slots(c, dev, op, "slots", X(3), B, N, true, buf, why, why_size);
    if (r == VT_OK)
        r = vt_rocm_read_indices(c, dev, X(4), B, false, buf + B, why, why_size);
    for (int64_t b = 0; r == VT_OK && b < B; b++)
        if (buf[b] >= 0 && (buf[B + b] < 1 || buf[B + b] > L - W + 2))
            r = vt_why(VT_E_INVALID_ARG, why, why_size, "%s: accepted[%lld] = %lld is outside [1, L-W+2 = %lld]", op,
                       (long long)b, (long long)buf[B + b], (long long)(L - W + 2));
    free(buf);
    if (r != VT_OK)
        return r;
    hipError_t e = vt_rocm_launch_conv_spec(X(0), X(1), a->n_in > 2 ? X(2) : NULL, X(3), X(4), Y(0), Y(1), B, D, T, W,
                                            L, ((const vt_params_conv *)a->params)->silu, s);
    return vt_rocm_done(e, op, c, dev, why, why_size);
}

static vt_status k_conv(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *x = &a->in[0];
    hipError_t e = vt_rocm_launch_conv_prefill(X(0), X(1), a->n_in > 2 ? X(2) : NULL, a->n_in > 3 ? X(3) : NULL, Y(0),
                                               Y(1), x->shape[0], x->shape[1], x->shape[2], a->in[1].shape[1],
                                               ((const vt_params_conv *)a->params)->silu, s);
    return vt_rocm_done(e, "CausalConv1d (8)", c, dev, why, why_size);
}

static vt_status k_conv_update(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *x = &a->in[0];
    int64_t B = x->shape[0];
    const void *slots = a->n_in > 3 ? X(3) : NULL;
    if (slots) {
        int64_t *buf = malloc(sizeof *buf * (size_t)(B ? B : 1));
        if (!buf)
            return vt_why(VT_E_NO_MEMORY, why, why_size, "out of host memory");
        vt_status r = check_slots(c, dev, "CausalConv1dUpdate (9)", "slots", slots, B, a->out[1].shape[0], true, buf,
                                  why, why_size);
        free(buf);
        if (r != VT_OK)
            return r;
    }
    hipError_t e =
        vt_rocm_launch_conv_update(X(0), X(1), a->n_in > 2 ? X(2) : NULL, slots, Y(0), Y(1), B, x->shape[1],
                                   x->shape[2], a->in[1].shape[1], ((const vt_params_conv *)a->params)->silu, s);
    return vt_rocm_done(e, "CausalConv1dUpdate (9)", c, dev, why, why_size);
}

static vt_status k_gated_delta(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const char *op = "GatedDeltaRule (32)";
    const vt_operand *q = &a->in[0], *v = &a->in[2], *sl = &a->in[5], *st = &a->out[1];
    int64_t B = q->shape[0], T = q->shape[1], H = q->shape[2], dk = q->shape[3], HV = v->shape[2], dv = v->shape[3];
    int64_t N = st->shape[0];
    bool per_token = sl->ndim == 2;
    if (dk > VT_ROCM_GDR_MAX_DK)
        return vt_why(VT_E_UNSUPPORTED, why, why_size, "%s: key dim %lld exceeds this kernel's %d", op, (long long)dk,
                      VT_ROCM_GDR_MAX_DK);
    int64_t n_slots = per_token ? B * T : B;
    int64_t *buf = malloc(sizeof *buf * (size_t)(n_slots + B + 1));
    if (!buf)
        return vt_why(VT_E_NO_MEMORY, why, why_size, "out of host memory");
    int64_t *acc = buf + n_slots;
    vt_status r = vt_rocm_read_indices(c, dev, sl->data, n_slots, false, buf, why, why_size);
    if (r == VT_OK && per_token)
        r = vt_rocm_read_indices(c, dev, X(6), B, false, acc, why, why_size);
    for (int64_t b = 0; r == VT_OK && per_token && b < B; b++)
        if (acc[b] < 1 || acc[b] > T)
            r = vt_why(VT_E_INVALID_ARG, why, why_size, "%s: accepted[%lld] = %lld is outside [1, T=%lld]", op,
                       (long long)b, (long long)acc[b], (long long)T);
    /* Every slot in range, and no state row shared by two active rows. */
    for (int64_t i = 0; r == VT_OK && i < n_slots; i++)
        if (buf[i] < -1 || buf[i] >= N)
            r = vt_why(VT_E_INVALID_ARG, why, why_size, "%s: slots value %lld at %lld is outside [-1, %lld)", op,
                       (long long)buf[i], (long long)i, (long long)N);
    int64_t per_row = per_token ? T : 1;
    for (int64_t i = 0; r == VT_OK && i < n_slots; i++) {
        int64_t row = i / per_row;
        int64_t read = per_token ? buf[row * T + acc[row] - 1] : buf[row];
        if (buf[i] < 0 || read < 0)
            continue;
        for (int64_t j = 0; j < i; j++) {
            int64_t other = j / per_row;
            int64_t oread = per_token ? buf[other * T + acc[other] - 1] : buf[other];
            if (other != row && oread >= 0 && buf[j] == buf[i]) {
                r = vt_why(VT_E_INVALID_ARG, why, why_size, "%s: state slot %lld belongs to rows %lld and %lld", op,
                           (long long)buf[i], (long long)other, (long long)row);
                break;
            }
        }
    }
    free(buf);
    if (r != VT_OK)
        return r;
    hipError_t e =
        vt_rocm_launch_gated_delta(X(0), X(1), X(2), X(3), X(4), sl->data, per_token ? X(6) : NULL, per_token, Y(0),
                                   Y(1), B, T, H, HV, dk, dv, ((const vt_params_gdn *)a->params)->l2norm, s);
    return vt_rocm_done(e, op, c, dev, why, why_size);
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
