/* rocm_kernels_attention.c - the rocm backend's attention family (the catalogue's
 * family of that name, core/ops/attention.c): Attention and KvCacheWrite over
 * f32/f16/bf16 caches (slots checked on the device first; for few tokens
 * in the writing kernel itself), GatedDeltaRule
 * over a state cache, DsaIndexerLogits for f32/f16/bf16 keys (any window
 * is clipped to [0, S) by the kernel, as on the cpu).
 * The C side of each kernel: unpack the operands, queue the device checks
 * of data-dependent values, launch on the call's stream, report the launch
 * status; then the family's kernel table rows. */
#include "config.h"

#include <string.h>

#include <vt/vt_params.h>

#include "rocm_common.h"

#define X(i) (a->in[i].data)
#define Y(i) (a->out[i].data)

static vt_status k_kv_write(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *k = &a->in[0], *v = &a->in[1], *kc = &a->out[0];
    int64_t T = k->shape[0];
    if (T <= VT_ROCM_KV_FUSED_MAX_T) { /* decode: one kernel checks and writes both */
        hipError_t e =
            vt_rocm_launch_kv_write_checked(L_.q->err, a->op, X(2), kc->shape[0], X(0), X(1), Y(0), Y(1), kc->dtype, T,
                                            k->shape[1] * k->shape[2], v->shape[1] * v->shape[2], s);
        vt_rocm_checked(&L_);
        return vt_rocm_done(&L_, e, "KvCacheWrite (31)", why, why_size);
    }
    void *safe;
    vt_status st = vt_rocm_call_scratch(&L_, (uint64_t)T * 4, &safe, why, why_size);
    if (st != VT_OK)
        return st;
    hipError_t e = vt_rocm_check_slots(&L_, X(2), T, kc->shape[0], false, NULL, 0, safe);
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
    /* the split forms for decode: partials per chunk of keys (the decode
     * kernels', or the general split kernel's when those do not take it) */
    uint64_t want = vt_rocm_attention_scratch_bytes(T, Hq, Hkv, S, d, dv);
    uint64_t want_dec = vt_rocm_attention_decode_scratch_bytes(T, Hq, Hkv, S, d, dv, k->dtype);
    void *scratch = NULL;
    if (want || want_dec) {
        vt_status st = vt_rocm_call_scratch(&L_, want > want_dec ? want : want_dec, &scratch, why, why_size);
        if (st != VT_OK)
            return st;
    }
    int taken = 0;
    hipError_t e = hipSuccess;
    if (want_dec)
        e = vt_rocm_launch_attention_decode(X(0), X(1), X(2), k->dtype, X(3), Y(0), T, Hq, Hkv, S, d, dv, p->scale,
                                            p->window, scratch, vt_rocm_queue_counters(L_.q, T * Hkv), s, &taken);
    if (e == hipSuccess && !taken)
        e = vt_rocm_launch_attention(X(0), X(1), X(2), k->dtype, X(3), Y(0), T, Hq, Hkv, S, d, dv, p->scale, p->window,
                                     want ? scratch : NULL, s);
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
    int l2norm = ((const vt_params_gdn *)a->params)->l2norm, fused = 0;
    /* decode: one kernel checks the slots and runs the recurrence */
    hipError_t e = vt_rocm_launch_gated_delta_checked(L_.q->err, a->op, X(0), X(1), X(2), X(3), X(4), sl->data,
                                                      per_token ? X(6) : NULL, per_token, Y(0), Y(1), B, T, H, HV, dk,
                                                      dv, N, l2norm, s, &fused);
    if (fused) {
        vt_rocm_checked(&L_);
        return vt_rocm_done(&L_, e, op, why, why_size);
    }
    int64_t n_slots = per_token ? B * T : B;
    /* the checked slots, then (256-byte aligned) the chunked form's scratch */
    uint64_t slot_bytes = ((uint64_t)(n_slots + B) * 4 + 255) & ~(uint64_t)255;
    uint64_t chunk_bytes = vt_rocm_gated_delta_scratch_bytes(B, T, HV, dk, dv, per_token);
    void *safe;
    vt_status r = vt_rocm_call_scratch(&L_, slot_bytes + chunk_bytes, &safe, why, why_size);
    if (r != VT_OK)
        return r;
    int32_t *safe_slots = safe, *safe_acc = safe_slots + n_slots;
    void *chunk = chunk_bytes ? (char *)safe + slot_bytes : NULL;
    e = vt_rocm_launch_check_gdr(L_.q->err, a->op, sl->data, per_token ? X(6) : NULL, per_token, B, T, N, safe_slots,
                                 safe_acc, s);
    vt_rocm_checked(&L_);
    if (e == hipSuccess)
        e = vt_rocm_launch_gated_delta(X(0), X(1), X(2), X(3), X(4), safe_slots, per_token ? safe_acc : NULL, per_token,
                                       Y(0), Y(1), B, T, H, HV, dk, dv, l2norm, chunk, s);
    return vt_rocm_done(&L_, e, op, why, why_size);
}

const vt_kernel vt_rocm_kernels_attention[] = {
    {VT_OP_ATTENTION, VT_SIG2(VT_F32, VT_F32), k_attention},
    {VT_OP_ATTENTION, VT_SIG2(VT_F32, VT_F16), k_attention},
    {VT_OP_ATTENTION, VT_SIG2(VT_F32, VT_BF16), k_attention},
    {VT_OP_KV_CACHE_WRITE, VT_SIG2(VT_F32, VT_F32), k_kv_write},
    {VT_OP_KV_CACHE_WRITE, VT_SIG2(VT_F32, VT_F16), k_kv_write},
    {VT_OP_KV_CACHE_WRITE, VT_SIG2(VT_F32, VT_BF16), k_kv_write},
    {VT_OP_GATED_DELTA_RULE, VT_SIG1(VT_F32), k_gated_delta},
    {VT_OP_DSA_INDEXER_LOGITS, VT_SIG2(VT_F32, VT_F32), k_dsa},
    {VT_OP_DSA_INDEXER_LOGITS, VT_SIG2(VT_F32, VT_F16), k_dsa},
    {VT_OP_DSA_INDEXER_LOGITS, VT_SIG2(VT_F32, VT_BF16), k_dsa},
};

const uint32_t vt_rocm_n_kernels_attention = sizeof vt_rocm_kernels_attention / sizeof vt_rocm_kernels_attention[0];
