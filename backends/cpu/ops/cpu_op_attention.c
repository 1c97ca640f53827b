/* cpu_op_attention.c - Attention (30) over a KV cache and KvCacheWrite
 * (31) that fills it.
 *
 * Attention: query t of head h at position p = pos[t] reads kv head
 * h / (Hq/Hkv); key slot s is visible iff s <= p and p - s < window (window
 * 0: no window), so the visible slots are [max(0, p-window+1), min(p, S-1)].
 * logits = scale * (q . k), softmax over the visible slots (max, exp, sum
 * in slot order), o = sum_s e_s v_s / sum, all in double (dots, logits,
 * weights, their sum and the weighted values, each in index or slot
 * order) and rounded to f32 once: the oracle stays within ~1e-8 of a
 * double reference at long context, where f32 sums were ~1e-5 off.
 * A query that sees no key (p < 0, or a window past the cache) outputs
 * zeros. Work items are (t, h) pairs.
 *
 * KvCacheWrite: k_cache[slots[t]] = k[t], v_cache[slots[t]] = v[t] with a
 * cast to the cache's dtype; slot -1 skips the token; when two tokens name
 * one slot the later token wins. Slots are checked before anything is
 * written. */
#include "config.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_ops.h"

/* q . k[off .. off+n) with k f32/f16/bf16, double accumulation in index
 * order (each product of two floats is exact in double). */
static double dot_any(const float *q, const void *k, uint32_t dtype, int64_t off, int64_t n)
{
    double acc = 0.0;
    if (dtype == VT_F32) {
        const float *kf = (const float *)k + off;
        for (int64_t i = 0; i < n; i++)
            acc += (double)q[i] * kf[i];
    } else if (dtype == VT_F16) {
        const uint16_t *kh = (const uint16_t *)k + off;
        for (int64_t i = 0; i < n; i++)
            acc += (double)q[i] * vt_f16_to_f32(kh[i]);
    } else {
        const uint16_t *kb = (const uint16_t *)k + off;
        for (int64_t i = 0; i < n; i++)
            acc += (double)q[i] * vt_bf16_to_f32(kb[i]);
    }
    return acc;
}

/* acc[0..n) += e * v[off .. off+n) with v f32/f16/bf16, in double. */
static void axpy_any(double *acc, double e, const void *v, uint32_t dtype, int64_t off, int64_t n)
{
    if (dtype == VT_F32) {
        const float *vf = (const float *)v + off;
        for (int64_t i = 0; i < n; i++)
            acc[i] += e * vf[i];
    } else if (dtype == VT_F16) {
        const uint16_t *vh = (const uint16_t *)v + off;
        for (int64_t i = 0; i < n; i++)
            acc[i] += e * vt_f16_to_f32(vh[i]);
    } else {
        const uint16_t *vb = (const uint16_t *)v + off;
        for (int64_t i = 0; i < n; i++)
            acc[i] += e * vt_bf16_to_f32(vb[i]);
    }
}

typedef struct attn_job {
    const float *q;
    const void *k, *v;
    uint32_t kv_dtype;
    const int32_t *pos;
    float *o;
    int64_t Hq, Hkv, d, dv, S;
    float scale;
    int64_t window;
    atomic_int no_memory;
} attn_job;

static void attn_range(void *arg, int64_t i0, int64_t i1)
{
    attn_job *j = arg;
    /* The logits, then dv accumulators of the weighted values. A query sees
     * keys [lo, hi] with hi <= pos < 2^31: the logits never outnumber
     * min(S, 2^31) + 1, whatever S (no product that wraps; dv is real, as
     * an op with an empty output runs no kernel). */
    int64_t n_logit = j->S < ((int64_t)1 << 31) ? j->S + 1 : ((int64_t)1 << 31) + 1;
    double *logit = malloc((size_t)(n_logit + j->dv) * sizeof *logit);
    if (!logit) {
        atomic_store(&j->no_memory, 1);
        return;
    }
    double *acc = logit + n_logit;
    const int64_t group = j->Hq / j->Hkv;
    for (int64_t item = i0; item < i1; item++) {
        int64_t t = item / j->Hq, h = item % j->Hq, kvh = h / group;
        const float *q = j->q + item * j->d;
        float *o = j->o + item * j->dv;
        int64_t p = j->pos[t];
        int64_t lo = j->window > 0 ? p - j->window + 1 : 0;
        int64_t hi = p < j->S - 1 ? p : j->S - 1;
        if (lo < 0)
            lo = 0;
        for (int64_t c = 0; c < j->dv; c++)
            o[c] = 0.0f;
        if (hi < lo)
            continue; /* sees no key: zeros */
        double mx = -INFINITY;
        for (int64_t s = lo; s <= hi; s++) {
            double l = j->scale * dot_any(q, j->k, j->kv_dtype, (s * j->Hkv + kvh) * j->d, j->d);
            logit[s - lo] = l;
            if (l > mx)
                mx = l;
        }
        for (int64_t c = 0; c < j->dv; c++)
            acc[c] = 0.0;
        double sum = 0.0;
        for (int64_t s = lo; s <= hi; s++) {
            double e = exp(logit[s - lo] - mx);
            sum += e;
            axpy_any(acc, e, j->v, j->kv_dtype, (s * j->Hkv + kvh) * j->dv, j->dv);
        }
        for (int64_t c = 0; c < j->dv; c++)
            o[c] = (float)(acc[c] / sum);
    }
    free(logit);
}

VT_CPU_KERNEL(vt_cpu_attention)
{
    (void)dev;
    const vt_operand *q = &a->in[0], *k = &a->in[1], *v = &a->in[2];
    const vt_params_attention *p = a->params;
    attn_job j;
    memset(&j, 0, sizeof j);
    j.q = q->data;
    j.k = k->data;
    j.v = v->data;
    j.kv_dtype = k->dtype;
    j.pos = a->in[3].data;
    j.o = a->out[0].data;
    j.Hq = q->shape[1];
    j.Hkv = k->shape[1];
    j.d = q->shape[2];
    j.dv = v->shape[2];
    j.S = k->shape[0];
    j.scale = p->scale;
    j.window = p->window;
    atomic_init(&j.no_memory, 0);
    int64_t items = q->shape[0] * j.Hq;
    vt_cpu_parallel(ctx->pool, items, vt_cpu_grain(8192, j.S + 1, j.d + j.dv + 1), attn_range, &j);
    if (atomic_load(&j.no_memory))
        return vt_cpu_op_error(VT_E_NO_MEMORY, why, why_size, VT_OP_ATTENTION,
                               "no host memory for %lld logits and %lld accumulators", (long long)j.S, (long long)j.dv);
    return VT_OK;
}

typedef struct kv_job {
    const float *k, *v;
    const int32_t *slots;
    void *kc, *vc;
    uint32_t dtype;
    int64_t T, H, d, dv;
} kv_job;

/* Heads [h0, h1) of every token, tokens in order (later tokens win). */
static void kv_range(void *arg, int64_t h0, int64_t h1)
{
    const kv_job *j = arg;
    for (int64_t t = 0; t < j->T; t++) {
        int64_t s = j->slots[t];
        if (s < 0)
            continue;
        for (int64_t h = h0; h < h1; h++) {
            for (int64_t i = 0; i < j->d; i++)
                vt_cpu_store(j->kc, j->dtype, (s * j->H + h) * j->d + i, j->k[(t * j->H + h) * j->d + i]);
            for (int64_t i = 0; i < j->dv; i++)
                vt_cpu_store(j->vc, j->dtype, (s * j->H + h) * j->dv + i, j->v[(t * j->H + h) * j->dv + i]);
        }
    }
}

VT_CPU_KERNEL(vt_cpu_kv_cache_write)
{
    (void)dev;
    const vt_operand *k = &a->in[0], *kc = &a->out[0];
    kv_job j = {k->data,   a->in[1].data, a->in[2].data, kc->data,    a->out[1].data,
                kc->dtype, k->shape[0],   k->shape[1],   k->shape[2], a->in[1].shape[2]};
    int64_t S = kc->shape[0];
    for (int64_t t = 0; t < j.T; t++)
        if (j.slots[t] < -1 || j.slots[t] >= S)
            return vt_cpu_op_error(VT_E_INVALID_ARG, why, why_size, VT_OP_KV_CACHE_WRITE,
                                   "slots[%lld] = %d is outside [-1, %lld) (S cache slots)", (long long)t, j.slots[t],
                                   (long long)S);
    vt_cpu_parallel(ctx->pool, j.H, 1, kv_range, &j);
    return VT_OK;
}
