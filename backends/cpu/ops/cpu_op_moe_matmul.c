/* cpu_op_moe_matmul.c - MoeExpertMatMul (23): y[t,i] = W[ids[t,i]] . x[t]
 * (x [T,k]) or . x[t,i] (x [T,K,k]), W stacked [E,m,k] of f32/f16/bf16 or
 * a q block format. Every id is checked before anything is written. The
 * (t, i) pairs are grouped by expert (a stable counting sort), so each
 * expert's weights stream once for all tokens routed to it; the work is
 * units of weight rows of one expert spread over the pool. Each output is
 * one canonical reduction (cpu_dot.h): any grouping, thread count or SIMD
 * path gives the same bits, equal to MatMul with that expert's W. */
#include "config.h"

#include <stdlib.h>

#include "cpu_mm.h"
#include "cpu_ops.h"

typedef struct moe_job {
    const vt_cpu_isa *isa;
    vt_cpu_mm base;         /* wtype, k, m, row bytes; w, rows filled per expert */
    const uint8_t *w;       /* expert 0 */
    size_t expert_bytes;    /* bytes of one expert's [m,k] */
    const int32_t *experts; /* used experts in id order */
    const int64_t *first;   /* first pair of used expert u (sorted order) */
    const int64_t *unit0;   /* first work unit of used expert u; unit0[n_used] = total */
    const float **xrows;    /* per sorted pair */
    const int64_t *xqi;     /* per sorted pair: its row of x (of the quantized copy) */
    float **yrows;
} moe_job;

static void moe_range(void *arg, int64_t u0, int64_t u1)
{
    const moe_job *j = arg;
    int64_t e = 0;
    while (j->unit0[e + 1] <= u0)
        e++;
    for (int64_t u = u0; u < u1; e++) {
        int64_t end = j->unit0[e + 1] < u1 ? j->unit0[e + 1] : u1;
        vt_cpu_mm p = j->base;
        p.w = j->w + (size_t)j->experts[e] * j->expert_bytes;
        p.n = j->first[e + 1] - j->first[e];
        p.xrows = j->xrows + j->first[e];
        p.yrows = j->yrows + j->first[e];
        p.xqi = j->xqi + j->first[e];
        int64_t c0 = (u - j->unit0[e]) * VT_CPU_MM_UNIT, c1 = (end - j->unit0[e]) * VT_CPU_MM_UNIT;
        vt_cpu_mm_rows(j->isa, &p, c0, c1 < p.m ? c1 : p.m);
        u = end;
    }
}

vt_status vt_cpu_moe_expert_matmul(vt_backend_ctx *ctx, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    (void)dev;
    const vt_operand *x = &a->in[0], *w = &a->in[1], *ids = &a->in[2], *y = &a->out[0];
    const int64_t T = ids->shape[0], K = ids->shape[1], E = w->shape[0], m = w->shape[1], k = w->shape[2];
    const int32_t *id = ids->data;
    for (int64_t p = 0; p < T * K; p++)
        if (id[p] < 0 || id[p] >= E)
            return vt_why(VT_E_INVALID_ARG, why, why_size,
                          "MoeExpertMatMul (23): ids[%lld,%lld] = %d is outside [0, %lld) of the stacked experts; "
                          "nothing was written",
                          (long long)(p / K), (long long)(p % K), id[p], (long long)E);
    uint64_t row_bytes;
    if (!vt_dtype_row_bytes(w->dtype, k, &row_bytes))
        return vt_why(VT_E_SHAPE, why, why_size, "MoeExpertMatMul (23): W rows of k=%lld are not whole %s blocks",
                      (long long)k, vt_dtype_name(w->dtype));
    const int64_t pairs = T * K;
    if (pairs == 0 || m == 0)
        return VT_OK;
    int64_t *count = calloc((size_t)E + 1, sizeof *count);
    int32_t *experts = malloc((size_t)E * sizeof *experts);
    int64_t *first = malloc(((size_t)E + 1) * sizeof *first), *unit0 = malloc(((size_t)E + 1) * sizeof *unit0);
    const float **xrows = malloc((size_t)pairs * sizeof *xrows);
    int64_t *xqi = malloc((size_t)pairs * sizeof *xqi);
    void *qbuf = NULL;
    float **yrows = malloc((size_t)pairs * sizeof *yrows);
    vt_status st = VT_OK;
    if (!count || !experts || !first || !unit0 || !xrows || !xqi || !yrows) {
        st = vt_why(VT_E_NO_MEMORY, why, why_size, "MoeExpertMatMul (23): out of host memory for %lld routing pairs",
                    (long long)pairs);
        goto done;
    }
    /* Stable counting sort of the pairs by expert. */
    for (int64_t p = 0; p < pairs; p++)
        count[id[p]]++;
    int64_t n_used = 0, units_per_expert = (m + VT_CPU_MM_UNIT - 1) / VT_CPU_MM_UNIT;
    first[0] = 0;
    unit0[0] = 0;
    for (int64_t e = 0; e < E; e++) {
        if (!count[e])
            continue;
        experts[n_used] = (int32_t)e;
        first[n_used + 1] = first[n_used] + count[e];
        unit0[n_used + 1] = unit0[n_used] + units_per_expert;
        count[e] = first[n_used]; /* now the next free slot of expert e */
        n_used++;
    }
    const float *xd = x->data;
    float *yd = y->data;
    for (int64_t p = 0; p < pairs; p++) {
        int64_t slot = count[id[p]]++;
        xqi[slot] = x->ndim == 2 ? p / K : p;
        xrows[slot] = xd + xqi[slot] * k;
        yrows[slot] = yd + p * m;
    }
    int16_t *xq = NULL;
    float *xs = NULL;
    if (vt_cpu_mm_quantizes(w->dtype, k) &&
        !(qbuf = vt_cpu_mm_quantize(ctx, xd, k, x->ndim == 2 ? T : pairs, k, &xq, &xs))) {
        st = vt_why(VT_E_NO_MEMORY, why, why_size, "MoeExpertMatMul (23): out of host memory for the int16 copy of x");
        goto done;
    }
    moe_job j = {
        .isa = ctx->isa,
        .base = {.wtype = w->dtype, .w_row_bytes = (size_t)row_bytes, .m = m, .k = k, .xq = xq, .xd = xs},
        .w = w->data,
        .expert_bytes = (size_t)row_bytes * (size_t)m,
        .experts = experts,
        .first = first,
        .unit0 = unit0,
        .xrows = xrows,
        .xqi = xqi,
        .yrows = yrows,
    };
    vt_cpu_parallel(ctx->pool, unit0[n_used], vt_cpu_mm_min_units(k, pairs / n_used), moe_range, &j);
done:
    free(count);
    free(experts);
    free(first);
    free(unit0);
    free(xrows);
    free(xqi);
    free(qbuf);
    free(yrows);
    return st;
}
