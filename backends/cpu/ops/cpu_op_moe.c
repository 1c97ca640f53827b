/* cpu_op_moe.c - MoE routing and combining: MoeRouter (22) and
 * MoeCombine (24).
 *
 * MoeRouter, per token t: scores = softmax(logits[t]) (f32: max, exp,
 * sum in expert order, divide) or sigmoid(logits[t]); the selection key is
 * score + bias (bias optional, selection only); the k largest keys in
 * descending order, ties to the lower expert index; weights are the
 * unbiased scores of the chosen experts, divided by max(their f32 sum in
 * selection order, 2^-14) when renormalising, then times routed_scale.
 * NaN in logits or bias is refused with the token and expert named. */
#include "config.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_ops.h"

typedef struct router_job {
    const float *logits, *bias; /* bias optional */
    int32_t *ids;
    float *weights;
    int64_t E;
    vt_params_moe_router p;
    atomic_int no_memory;
} router_job;

static void router_range(void *arg, int64_t t0, int64_t t1)
{
    router_job *j = arg;
    const int64_t E = j->E, k = j->p.k;
    float *score = malloc((size_t)E * 2 * sizeof *score);
    unsigned char *taken = malloc((size_t)E);
    if (!score || !taken) {
        free(score);
        free(taken);
        atomic_store(&j->no_memory, 1);
        return;
    }
    float *key = score + E;
    for (int64_t t = t0; t < t1; t++) {
        const float *l = j->logits + t * E;
        if (j->p.score == VT_ROUTER_SOFTMAX) {
            float mx = l[0];
            for (int64_t e = 1; e < E; e++)
                if (l[e] > mx)
                    mx = l[e];
            float sum = 0.0f;
            for (int64_t e = 0; e < E; e++) {
                score[e] = expf(l[e] - mx);
                sum += score[e];
            }
            for (int64_t e = 0; e < E; e++)
                score[e] = score[e] / sum;
        } else {
            for (int64_t e = 0; e < E; e++)
                score[e] = vt_cpu_sigmoid1(l[e]);
        }
        for (int64_t e = 0; e < E; e++)
            key[e] = j->bias ? score[e] + j->bias[e] : score[e];
        memset(taken, 0, (size_t)E);
        int32_t *ids = j->ids + t * k;
        float *w = j->weights + t * k;
        for (int64_t i = 0; i < k; i++) {
            int64_t best = -1;
            for (int64_t e = 0; e < E; e++)
                if (!taken[e] && (best < 0 || key[e] > key[best]))
                    best = e;
            taken[best] = 1;
            ids[i] = (int32_t)best;
            w[i] = score[best];
        }
        if (j->p.renormalize) {
            float sum = 0.0f;
            for (int64_t i = 0; i < k; i++)
                sum += w[i];
            float denom = sum > 0x1p-14f ? sum : 0x1p-14f;
            for (int64_t i = 0; i < k; i++)
                w[i] = w[i] / denom;
        }
        for (int64_t i = 0; i < k; i++)
            w[i] = w[i] * j->p.routed_scale;
    }
    free(score);
    free(taken);
}

VT_CPU_KERNEL(vt_cpu_moe_router)
{
    (void)dev;
    const vt_operand *lg = &a->in[0];
    router_job j;
    memset(&j, 0, sizeof j);
    j.logits = lg->data;
    j.bias = a->n_in > 1 ? a->in[1].data : NULL;
    j.ids = a->out[0].data;
    j.weights = a->out[1].data;
    j.E = lg->shape[1];
    j.p = *(const vt_params_moe_router *)a->params;
    atomic_init(&j.no_memory, 0);
    int64_t T = lg->shape[0];
    for (int64_t t = 0; t < T; t++)
        for (int64_t e = 0; e < j.E; e++)
            if (isnan(j.logits[t * j.E + e]))
                return vt_cpu_op_error(VT_E_INVALID_ARG, why, why_size, VT_OP_MOE_ROUTER,
                                       "logits[%lld,%lld] is NaN (token %lld)", (long long)t, (long long)e,
                                       (long long)t);
    for (int64_t e = 0; j.bias && e < j.E; e++)
        if (isnan(j.bias[e]))
            return vt_cpu_op_error(VT_E_INVALID_ARG, why, why_size, VT_OP_MOE_ROUTER, "bias[%lld] is NaN",
                                   (long long)e);
    vt_cpu_parallel(ctx->pool, T, vt_cpu_grain(1024, j.E, (int64_t)j.p.k + 2), router_range, &j);
    if (atomic_load(&j.no_memory))
        return vt_cpu_op_error(VT_E_NO_MEMORY, why, why_size, VT_OP_MOE_ROUTER, "no host memory for %lld scores",
                               (long long)j.E);
    return VT_OK;
}

typedef struct combine_job {
    const float *h, *w;
    float *y;
    int64_t K, m;
} combine_job;

/* y[t, c] = sum over i of w[t,i] * h[t,i,c], in i order. */
static void combine_range(void *arg, int64_t t0, int64_t t1)
{
    const combine_job *j = arg;
    for (int64_t t = t0; t < t1; t++) {
        float *y = j->y + t * j->m;
        for (int64_t c = 0; c < j->m; c++)
            y[c] = 0.0f;
        for (int64_t i = 0; i < j->K; i++) {
            float wi = j->w[t * j->K + i];
            const float *h = j->h + (t * j->K + i) * j->m;
            for (int64_t c = 0; c < j->m; c++)
                y[c] += wi * h[c];
        }
    }
}

VT_CPU_KERNEL(vt_cpu_moe_combine)
{
    (void)dev;
    (void)why;
    (void)why_size;
    const vt_operand *h = &a->in[0];
    combine_job j = {h->data, a->in[1].data, a->out[0].data, h->shape[1], h->shape[2]};
    vt_cpu_parallel(ctx->pool, h->shape[0], vt_cpu_grain(2048, j.K, j.m), combine_range, &j);
    return VT_OK;
}
