/* cpu_dot_scalar.c - the scalar path: the canonical reductions (cpu_dot.h)
 * written out in portable C with fmaf, and block decoding through the
 * reference group forms (cpu_quant.h). Every SIMD path must match it bit
 * for bit. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "cpu_dot.h"
#include "cpu_ops.h"
#include "cpu_quant.h"
#include "cpu_qx.h"

/* One output of a q weight row: the canonical group-form reduction of
 * cpu_dot.h, group by group, run by run. */
static float dot_q(const vt_cpu_qformat *f, const vt_cpu_tile *t, const uint8_t *w, const float *x)
{
    float s[VT_CPU_LANES] = {0};
    vt_cpu_group g;
    const int len = VT_CPU_GROUP / f->runs;
    const int64_t nblocks = t->k / ((int64_t)t->groups * VT_CPU_GROUP);
    for (int64_t b = 0; b < nblocks; b++, w += t->block_bytes) {
        for (uint32_t sub = 0; sub < t->groups; sub++, x += VT_CPU_GROUP) {
            f->form(w, (int)sub, &g);
            for (int r = 0; r < f->runs; r++) {
                const int p0 = r * len;
                for (int l = 0; l < VT_CPU_LANES; l++) {
                    float xs = x[p0 + l];
                    for (int p = p0 + l + VT_CPU_LANES; p < p0 + len; p += VT_CPU_LANES)
                        xs = xs + x[p];
                    /* P: the first code times x (fused onto -o*X for an
                     * offset format), then fused multiply-adds in order */
                    const int q = p0 + l;
                    float acc = f->affine == VT_CPU_OFFSET ? fmaf(g.c[q], x[q], -(float)f->offset * xs) : g.c[q] * x[q];
                    for (int p = q + VT_CPU_LANES; p < p0 + len; p += VT_CPU_LANES)
                        acc = fmaf(g.c[p], x[p], acc);
                    s[l] = fmaf(g.a[r], acc, s[l]);
                    if (f->affine == VT_CPU_MIN)
                        s[l] = fmaf(g.m[r], xs, s[l]);
                }
            }
        }
    }
    return vt_cpu_lane_tree(s);
}

/* One output of a dense (f32/f16/bf16) weight row. */
static float dot_dense(const vt_cpu_tile *t, const uint8_t *w, const float *x)
{
    float s[VT_CPU_LANES] = {0};
    for (int64_t j = 0; j < t->k; j++)
        s[j % VT_CPU_LANES] = fmaf(vt_cpu_load(w, t->wtype, j), x[j], s[j % VT_CPU_LANES]);
    return vt_cpu_lane_tree(s);
}

static void scalar_dot(vt_cpu_tile *t)
{
    const vt_cpu_qformat *f = vt_cpu_qformat_get(t->wtype);
    for (int r = 0; r < t->nx; r++)
        for (int i = 0; i < t->nw; i++)
            t->out[r][i] = f ? dot_q(f, t, t->w[i], t->x[r]) : dot_dense(t, t->w[i], t->x[r]);
}

static void scalar_decode(uint32_t wtype, uint32_t block_bytes, uint32_t groups, const uint8_t *src, int64_t nblocks,
                          void *dst, uint32_t dst_type)
{
    const vt_cpu_qformat *f = vt_cpu_qformat_get(wtype);
    float g[VT_CPU_GROUP];
    int64_t o = 0;
    for (int64_t b = 0; b < nblocks; b++, src += block_bytes)
        for (uint32_t sub = 0; sub < groups; sub++) {
            vt_cpu_form_decode(f, src, (int)sub, g);
            for (int j = 0; j < VT_CPU_GROUP; j++)
                vt_cpu_store(dst, dst_type, o++, g[j]);
        }
}

void vt_cpu_convert_scalar(uint32_t src_type, const void *src, int64_t n, void *dst, uint32_t dst_type)
{
    if (src_type == dst_type) {
        memcpy(dst, src, (size_t)n * vt_dtype_get(src_type)->block_bytes);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        vt_cpu_store(dst, dst_type, i, vt_cpu_load(src, src_type, i));
}

const vt_cpu_isa vt_cpu_isa_scalar = {
    .id = VT_CPU_SIMD_SCALAR,
    .tile_w = {0, 1},
    .tile_x = 1,
    .dot = scalar_dot,
    .qdot = vt_cpu_qx_dot_scalar,
    .quantize = vt_cpu_qx_quantize_scalar,
    .decode = scalar_decode,
    .convert = vt_cpu_convert_scalar,
};
