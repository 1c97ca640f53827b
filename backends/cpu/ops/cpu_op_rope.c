/* cpu_op_rope.c - Rope (18): rotary position embedding of x [T,H,d] at
 * positions pos [T]. Pair i < n_rot/2 turns by angle p * theta^(-2i/n_rot);
 * normal mode pairs dims (2i, 2i+1), neox mode pairs (i, i + n_rot/2);
 * dims >= n_rot pass through. The angle and its cosine and sine are
 * evaluated in double (the oracle's angles are exact to f32 at any
 * position), the rotation in f32. Work items are tokens. */
#include "config.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_ops.h"

typedef struct rope_job {
    const float *x;
    const int32_t *pos;
    float *y;
    int64_t H, d;
    int n_rot, mode;
    double theta;
    atomic_int no_memory;
} rope_job;

static void rope_range(void *arg, int64_t t0, int64_t t1)
{
    rope_job *j = arg;
    const int half = j->n_rot / 2;
    float *cs = malloc((size_t)half * 2 * sizeof *cs);
    if (!cs) {
        atomic_store(&j->no_memory, 1);
        return;
    }
    for (int64_t t = t0; t < t1; t++) {
        double p = (double)j->pos[t];
        for (int i = 0; i < half; i++) {
            double angle = p * pow(j->theta, -2.0 * (double)i / (double)j->n_rot);
            cs[2 * i] = (float)cos(angle);
            cs[2 * i + 1] = (float)sin(angle);
        }
        for (int64_t h = 0; h < j->H; h++) {
            const float *x = j->x + (t * j->H + h) * j->d;
            float *y = j->y + (t * j->H + h) * j->d;
            for (int i = 0; i < half; i++) {
                int64_t i0 = j->mode == VT_ROPE_NEOX ? i : 2 * i;
                int64_t i1 = j->mode == VT_ROPE_NEOX ? i + half : 2 * i + 1;
                float c = cs[2 * i], s = cs[2 * i + 1];
                float x0 = x[i0], x1 = x[i1];
                y[i0] = x0 * c - x1 * s;
                y[i1] = x0 * s + x1 * c;
            }
            if (j->d > j->n_rot)
                memcpy(y + j->n_rot, x + j->n_rot, (size_t)(j->d - j->n_rot) * sizeof *y);
        }
    }
    free(cs);
}

VT_CPU_KERNEL(vt_cpu_rope)
{
    (void)dev;
    const vt_operand *x = &a->in[0];
    const vt_params_rope *p = a->params;
    rope_job j;
    memset(&j, 0, sizeof j);
    j.x = x->data;
    j.pos = a->in[1].data;
    j.y = a->out[0].data;
    j.H = x->shape[1];
    j.d = x->shape[2];
    j.n_rot = p->n_rot;
    j.mode = p->mode;
    j.theta = p->theta;
    atomic_init(&j.no_memory, 0);
    int64_t T = x->shape[0];
    vt_cpu_parallel(ctx->pool, T, vt_cpu_grain(2048, j.H, j.d), rope_range, &j);
    if (atomic_load(&j.no_memory))
        return vt_cpu_op_error(VT_E_NO_MEMORY, why, why_size, VT_OP_ROPE, "no host memory for %d angles", p->n_rot);
    return VT_OK;
}
