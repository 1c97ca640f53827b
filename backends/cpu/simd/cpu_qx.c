/* cpu_qx.c - the int16-activation path in portable C (cpu_qx.h): the
 * quantization of activation rows and the canonical reduction, the bits
 * every SIMD path must reproduce. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "cpu_qx.h"

void vt_cpu_qx_quantize_scalar(const float *x, int64_t k, int16_t *q, float *dx)
{
    for (int64_t g = 0; g < k / VT_CPU_GROUP; g++, x += VT_CPU_GROUP, q += VT_CPU_GROUP) {
        uint32_t amax = 0;
        for (int j = 0; j < VT_CPU_GROUP; j++) {
            uint32_t b;
            memcpy(&b, &x[j], sizeof b);
            b &= 0x7fffffffu;
            amax = b > amax ? b : amax;
        }
        float inv;
        vt_cpu_qx_scale(amax, &dx[g], &inv);
        for (int j = 0; j < VT_CPU_GROUP; j++)
            q[j] = inv == 0.0f ? 0 : (int16_t)lrintf(x[j] * inv);
    }
}

/* One output: the canonical reduction of cpu_qx.h. */
static float qdot_row(const vt_cpu_qformat *f, const vt_cpu_tile *t, const uint8_t *w, const int16_t *q,
                      const float *dx)
{
    float s[VT_CPU_LANES] = {0};
    vt_cpu_group g;
    const int o = f->affine == VT_CPU_OFFSET ? f->offset : 0;
    const int64_t nblocks = t->k / ((int64_t)t->groups * VT_CPU_GROUP);
    for (int64_t b = 0; b < nblocks; b++, w += t->block_bytes) {
        for (uint32_t sub = 0; sub < t->groups; sub++, q += VT_CPU_GROUP, dx++) {
            f->form(w, (int)sub, &g);
            for (int r = 0; r < f->runs; r++) {
                const float fa = g.a[r] * *dx, fm = g.m[r] * *dx;
                for (int l = 0; l < VT_CPU_LANES; l++) {
                    /* the run's positions of lane l */
                    int pos[4], np = 0;
                    if (f->runs == 1) {
                        pos[np++] = 2 * l, pos[np++] = 2 * l + 1, pos[np++] = 16 + 2 * l, pos[np++] = 17 + 2 * l;
                    } else {
                        pos[np++] = 16 * r + 2 * l, pos[np++] = 16 * r + 2 * l + 1;
                    }
                    int32_t P = 0, X = 0;
                    for (int i = 0; i < np; i++) {
                        P += ((int32_t)g.c[pos[i]] - o) * q[pos[i]];
                        X += q[pos[i]];
                    }
                    s[l] = fmaf((float)P, fa, s[l]);
                    if (f->affine == VT_CPU_MIN)
                        s[l] = fmaf((float)X, fm, s[l]);
                }
            }
        }
    }
    return vt_cpu_lane_tree(s);
}

void vt_cpu_qx_dot_scalar(vt_cpu_tile *t)
{
    const vt_cpu_qformat *f = vt_cpu_qformat_get(t->wtype);
    for (int r = 0; r < t->nx; r++)
        for (int i = 0; i < t->nw; i++)
            t->out[r][i] = f ? qdot_row(f, t, t->w[i], t->xq[r], t->xd[r]) : 0.0f;
}
