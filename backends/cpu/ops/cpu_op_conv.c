/* cpu_op_conv.c - the causal depthwise convolutions of SPEC 7:
 * CausalConv1dSpecUpdate (7), CausalConv1d (8), CausalConv1dUpdate (9).
 *
 * Per batch row b and channel d the kernel builds the window
 * e = [history (W-1 columns), x[b,d,0..T)] and computes
 * out[t] = act(bias[d] + sum_j w[d,j] * e[t+j]) with the sum in j order.
 * History and new state:
 *   8: history = init_state[b] or zeros; state[b] = e[T .. T+W-2].
 *   9: history = S[slot]; S[slot] = e[T .. T+W-2] (the last W-1 columns).
 *   7: history = S[slot, :, a-1 .. a+W-3]; S[slot, :, i] = e[i+1] for
 *      i <= W-3+T; columns >= W-2+T are not touched.
 * A slot of -1 is padding: its output rows are zeros and no state is read
 * or written (its accepted count is not looked at). States are copies of
 * inputs, so they match the oracle bit for bit. Work items are (b, d)
 * pairs; slots are checked first so no two rows share a cache row. */
#include "config.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_ops.h"

typedef enum conv_kind { CONV_SPEC = 7, CONV_PREFILL = 8, CONV_UPDATE = 9 } conv_kind;

typedef struct conv_job {
    conv_kind kind;
    const float *x, *w, *bias; /* bias optional */
    const float *init;         /* 8: initial state, optional */
    const int32_t *slots;      /* 7, 9 (9: optional, slot = b when absent) */
    const int32_t *accepted;   /* 7 */
    float *y, *state;
    int64_t B, D, T, W;
    int64_t L; /* columns of a state row: W-1 for 8 and 9, L for 7 */
    int silu;
    atomic_int no_memory;
} conv_job;

static void conv_range(void *arg, int64_t i0, int64_t i1)
{
    conv_job *j = arg;
    const int64_t D = j->D, T = j->T, W = j->W, L = j->L;
    float *e = malloc((size_t)(W - 1 + T) * sizeof *e);
    if (!e) {
        atomic_store(&j->no_memory, 1);
        return;
    }
    for (int64_t item = i0; item < i1; item++) {
        int64_t b = item / D, d = item % D;
        const float *x = j->x + (b * D + d) * T;
        float *y = j->y + (b * D + d) * T;
        float *srow = NULL; /* the state row read and written (7, 9) */
        if (j->kind == CONV_PREFILL) {
            if (j->init)
                memcpy(e, j->init + (b * D + d) * (W - 1), (size_t)(W - 1) * sizeof *e);
            else
                memset(e, 0, (size_t)(W - 1) * sizeof *e);
        } else {
            int64_t slot = j->slots ? j->slots[b] : b;
            if (slot < 0) { /* padding */
                memset(y, 0, (size_t)T * sizeof *y);
                continue;
            }
            srow = j->state + (slot * D + d) * L;
            int64_t first = j->kind == CONV_SPEC ? j->accepted[b] - 1 : 0;
            memcpy(e, srow + first, (size_t)(W - 1) * sizeof *e);
        }
        memcpy(e + W - 1, x, (size_t)T * sizeof *e);
        const float *w = j->w + d * W;
        float bias = j->bias ? j->bias[d] : 0.0f;
        for (int64_t t = 0; t < T; t++) {
            float s = 0.0f;
            for (int64_t k = 0; k < W; k++)
                s += w[k] * e[t + k];
            s = bias + s;
            y[t] = j->silu ? vt_cpu_silu1(s) : s;
        }
        if (j->kind == CONV_PREFILL)
            memcpy(j->state + (b * D + d) * (W - 1), e + T, (size_t)(W - 1) * sizeof *e);
        else if (j->kind == CONV_UPDATE)
            memcpy(srow, e + T, (size_t)(W - 1) * sizeof *e);
        else
            memcpy(srow, e + 1, (size_t)(W - 2 + T) * sizeof *e);
    }
    free(e);
}

static vt_status conv_run(vt_backend_ctx *ctx, const vt_op_args *a, conv_kind kind, char *why, size_t why_size)
{
    const vt_operand *x = &a->in[0], *st = &a->out[1];
    conv_job j;
    memset(&j, 0, sizeof j);
    j.kind = kind;
    j.x = x->data;
    j.w = a->in[1].data;
    j.bias = a->n_in > 2 ? a->in[2].data : NULL;
    j.y = a->out[0].data;
    j.state = st->data;
    j.B = x->shape[0];
    j.D = x->shape[1];
    j.T = x->shape[2];
    j.W = a->in[1].shape[1];
    j.L = kind == CONV_SPEC ? st->shape[2] : j.W - 1;
    j.silu = ((const vt_params_conv *)a->params)->silu;
    atomic_init(&j.no_memory, 0);
    if (kind == CONV_PREFILL)
        j.init = a->n_in > 3 ? a->in[3].data : NULL;
    else if (kind == CONV_UPDATE)
        j.slots = a->n_in > 3 ? a->in[3].data : NULL;
    else {
        j.slots = a->in[3].data;
        j.accepted = a->in[4].data;
    }
    if (j.slots) {
        vt_status s = vt_cpu_check_slots(kind, "slots", j.slots, j.B, 1, st->shape[0], NULL, why, why_size);
        if (s != VT_OK)
            return s;
    }
    if (kind == CONV_SPEC) {
        /* a-1+j must stay inside the state row for j < W-1: a <= L-W+2. */
        int64_t max_a = j.L - j.W + 2;
        for (int64_t b = 0; b < j.B; b++)
            if (j.slots[b] >= 0 && (j.accepted[b] < 1 || j.accepted[b] > max_a))
                return vt_cpu_op_error(VT_E_INVALID_ARG, why, why_size, kind,
                                       "accepted[%lld] = %d is outside [1, L-W+2 = %lld] (slot %d, L=%lld, W=%lld)",
                                       (long long)b, j.accepted[b], (long long)max_a, j.slots[b], (long long)j.L,
                                       (long long)j.W);
    }
    if (j.B * j.D == 0)
        return VT_OK;
    vt_cpu_parallel(ctx->pool, j.B * j.D, vt_cpu_grain(4096, j.T + 1, j.W), conv_range, &j);
    if (atomic_load(&j.no_memory))
        return vt_cpu_op_error(VT_E_NO_MEMORY, why, why_size, kind, "no host memory for a window of %lld columns",
                               (long long)(j.W - 1 + j.T));
    return VT_OK;
}

VT_CPU_KERNEL(vt_cpu_conv_spec_update)
{
    (void)dev;
    return conv_run(ctx, a, CONV_SPEC, why, why_size);
}

VT_CPU_KERNEL(vt_cpu_conv)
{
    (void)dev;
    return conv_run(ctx, a, CONV_PREFILL, why, why_size);
}

VT_CPU_KERNEL(vt_cpu_conv_update)
{
    (void)dev;
    return conv_run(ctx, a, CONV_UPDATE, why, why_size);
}
