/* cpu_op_gdn.c - GatedDeltaRule (32): the gated delta-rule recurrence of
 * Gated DeltaNet over a state cache [N,HV,dk,dv] f32.
 *
 * Per batch row b and value head hv (q/k head h = hv / (HV/H), repeat-
 * interleave), starting from the state read from the read slot:
 *   per token t: optionally q, k <- x / sqrt(sum x^2 + 1e-6); q <- q / sqrt(dk);
 *   S <- S * exp(g); u = beta * (v - S^T k); S <- S + k u^T; o = S^T q.
 * Slots [B] (per sequence): read slot[b], write the final state there.
 * Slots [B,T] (per token, speculative decode): read slot[b, a[b]-1] with
 * a[b] in [1, T], write the state after token t to slot[b, t]; -1 skips
 * that write. A read slot of -1 marks a padding row: its outputs are
 * zeros and it reads and writes no state. Every sum (S^T k, S^T q, the
 * norms) is f32 in index order; work items are (b, hv) pairs, and the
 * slots are checked first so that no two rows share a state row. */
#include "config.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_ops.h"

typedef struct gdr_job {
    const float *q, *k, *v, *g, *beta;
    const int32_t *slots, *accepted; /* accepted only with per-token slots */
    float *o, *state;
    int64_t B, T, H, HV, dk, dv;
    bool per_token;
    int l2norm;
    atomic_int no_memory;
} gdr_job;

/* The slot row b reads its initial state from. */
static int32_t read_slot(const gdr_job *j, int64_t b)
{
    return j->per_token ? j->slots[b * j->T + j->accepted[b] - 1] : j->slots[b];
}

/* x <- x / sqrt(sum x^2 + 1e-6). */
static void l2_normalise(float *x, int64_t n)
{
    float ss = 0.0f;
    for (int64_t i = 0; i < n; i++)
        ss += x[i] * x[i];
    float inv = 1.0f / sqrtf(ss + 1e-6f);
    for (int64_t i = 0; i < n; i++)
        x[i] = x[i] * inv;
}

static void gdr_range(void *arg, int64_t i0, int64_t i1)
{
    gdr_job *j = arg;
    const int64_t T = j->T, H = j->H, HV = j->HV, dk = j->dk, dv = j->dv;
    const int64_t ratio = HV / H;
    const float qscale = 1.0f / sqrtf((float)dk);
    float *S = malloc((size_t)(dk * dv + 2 * dk + dv) * sizeof *S);
    if (!S) {
        atomic_store(&j->no_memory, 1);
        return;
    }
    float *qn = S + dk * dv, *kn = qn + dk, *u = kn + dk;
    for (int64_t item = i0; item < i1; item++) {
        int64_t b = item / HV, hv = item % HV, h = hv / ratio;
        int32_t rs = read_slot(j, b);
        if (rs < 0) { /* padding row */
            for (int64_t t = 0; t < T; t++)
                memset(j->o + ((b * T + t) * HV + hv) * dv, 0, (size_t)dv * sizeof(float));
            continue;
        }
        memcpy(S, j->state + ((int64_t)rs * HV + hv) * dk * dv, (size_t)(dk * dv) * sizeof *S);
        for (int64_t t = 0; t < T; t++) {
            int64_t bt = b * T + t;
            memcpy(qn, j->q + (bt * H + h) * dk, (size_t)dk * sizeof *qn);
            memcpy(kn, j->k + (bt * H + h) * dk, (size_t)dk * sizeof *kn);
            if (j->l2norm) {
                l2_normalise(qn, dk);
                l2_normalise(kn, dk);
            }
            for (int64_t i = 0; i < dk; i++)
                qn[i] = qn[i] * qscale;
            float decay = expf(j->g[bt * HV + hv]), beta = j->beta[bt * HV + hv];
            for (int64_t i = 0; i < dk * dv; i++)
                S[i] = S[i] * decay;
            /* u = beta * (v - S^T k), the sum over i in index order */
            for (int64_t c = 0; c < dv; c++)
                u[c] = 0.0f;
            for (int64_t i = 0; i < dk; i++)
                for (int64_t c = 0; c < dv; c++)
                    u[c] += S[i * dv + c] * kn[i];
            const float *v = j->v + (bt * HV + hv) * dv;
            for (int64_t c = 0; c < dv; c++)
                u[c] = beta * (v[c] - u[c]);
            for (int64_t i = 0; i < dk; i++)
                for (int64_t c = 0; c < dv; c++)
                    S[i * dv + c] += kn[i] * u[c];
            float *o = j->o + (bt * HV + hv) * dv;
            for (int64_t c = 0; c < dv; c++)
                o[c] = 0.0f;
            for (int64_t i = 0; i < dk; i++)
                for (int64_t c = 0; c < dv; c++)
                    o[c] += S[i * dv + c] * qn[i];
            if (j->per_token) {
                int32_t ws = j->slots[bt];
                if (ws >= 0)
                    memcpy(j->state + ((int64_t)ws * HV + hv) * dk * dv, S, (size_t)(dk * dv) * sizeof *S);
            }
        }
        if (!j->per_token)
            memcpy(j->state + ((int64_t)rs * HV + hv) * dk * dv, S, (size_t)(dk * dv) * sizeof *S);
    }
    free(S);
}

VT_CPU_KERNEL(vt_cpu_gated_delta_rule)
{
    (void)dev;
    const vt_operand *q = &a->in[0], *v = &a->in[2], *sl = &a->in[5], *st = &a->out[1];
    gdr_job j;
    memset(&j, 0, sizeof j);
    j.q = q->data;
    j.k = a->in[1].data;
    j.v = v->data;
    j.g = a->in[3].data;
    j.beta = a->in[4].data;
    j.slots = sl->data;
    j.per_token = sl->ndim == 2;
    j.accepted = j.per_token ? a->in[6].data : NULL;
    j.o = a->out[0].data;
    j.state = st->data;
    j.B = q->shape[0];
    j.T = q->shape[1];
    j.H = q->shape[2];
    j.dk = q->shape[3];
    j.HV = v->shape[2];
    j.dv = v->shape[3];
    j.l2norm = ((const vt_params_gdn *)a->params)->l2norm;
    atomic_init(&j.no_memory, 0);
    int64_t N = st->shape[0];
    if (j.per_token)
        for (int64_t b = 0; b < j.B; b++)
            if (j.accepted[b] < 1 || j.accepted[b] > j.T)
                return vt_cpu_op_error(VT_E_INVALID_ARG, why, why_size, VT_OP_GATED_DELTA_RULE,
                                       "accepted[%lld] = %d is outside [1, T=%lld]", (long long)b, j.accepted[b],
                                       (long long)j.T);
    int64_t per_row = j.per_token ? j.T : 1;
    /* Every slot value in range; ownership over the rows that write. */
    unsigned char *active = malloc((size_t)j.B + 1);
    if (!active)
        return vt_cpu_op_error(VT_E_NO_MEMORY, why, why_size, VT_OP_GATED_DELTA_RULE, "no host memory");
    for (int64_t b = 0; b < j.B; b++)
        active[b] = read_slot(&j, b) >= 0;
    vt_status s = vt_cpu_check_slots(VT_OP_GATED_DELTA_RULE, "slots", j.slots, j.B, per_row, N, active, why, why_size);
    free(active);
    if (s != VT_OK)
        return s;
    if (j.B * j.HV == 0)
        return VT_OK;
    vt_cpu_parallel(ctx->pool, j.B * j.HV, 1, gdr_range, &j);
    if (atomic_load(&j.no_memory))
        return vt_cpu_op_error(VT_E_NO_MEMORY, why, why_size, VT_OP_GATED_DELTA_RULE,
                               "no host memory for a %lldx%lld state", (long long)j.dk, (long long)j.dv);
    return VT_OK;
}
