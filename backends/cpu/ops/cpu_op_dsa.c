/* cpu_op_dsa.c - DsaIndexerLogits (34): the DeepSeek sparse-attention
 * indexer. logits[t,s] = sum_h w[t,h] * relu(q[t,h,:] . k[s,:]) for s in
 * [start[t], end[t]), -inf elsewhere (SPEC 7); k f32/f16/bf16. Any start
 * and end are accepted: the window is clipped to [0, S), and start >= end
 * is an empty row of -inf. Dots (index order) and the head sum (head
 * order) are double, rounded to f32 once; work items are (t, s). */
#include "config.h"

#include <math.h>

#include "cpu_ops.h"

typedef struct dsa_job {
    const float *q, *w;
    const void *k;
    uint32_t k_dtype;
    const int32_t *start, *end;
    float *logits;
    int64_t H, d, S;
} dsa_job;

static void dsa_range(void *arg, int64_t i0, int64_t i1)
{
    const dsa_job *j = arg;
    for (int64_t item = i0; item < i1; item++) {
        int64_t t = item / j->S, s = item % j->S;
        if (s < j->start[t] || s >= j->end[t]) {
            j->logits[item] = -INFINITY;
            continue;
        }
        double acc = 0.0;
        for (int64_t h = 0; h < j->H; h++) {
            const float *q = j->q + (t * j->H + h) * j->d;
            double dot = 0.0;
            for (int64_t i = 0; i < j->d; i++)
                dot += (double)q[i] * vt_cpu_load(j->k, j->k_dtype, s * j->d + i);
            double r = dot < 0.0 ? 0.0 : dot; /* relu; NaN stays NaN */
            acc += j->w[t * j->H + h] * r;
        }
        j->logits[item] = (float)acc;
    }
}

VT_CPU_KERNEL(vt_cpu_dsa_indexer_logits)
{
    (void)dev;
    const vt_operand *q = &a->in[0], *k = &a->in[1];
    dsa_job j = {q->data,       a->in[2].data,  k->data,     k->dtype,    a->in[3].data,
                 a->in[4].data, a->out[0].data, q->shape[1], q->shape[2], k->shape[0]};
    (void)why;
    (void)why_size;
    int64_t T = q->shape[0];
    vt_cpu_parallel(ctx->pool, T * j.S, vt_cpu_grain(4096, j.H, j.d), dsa_range, &j);
    return VT_OK;
}
