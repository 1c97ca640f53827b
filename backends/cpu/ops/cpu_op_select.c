/* cpu_op_select.c - selection per row of the last axis: TopK (35),
 * Argmax (50) and Sample (51). Every one refuses NaN (naming the row and
 * the index) before it writes anything. Order of candidates everywhere:
 * value descending, ties by ascending index; -0 and +0 are equal.
 *
 * Sample, exactly (vt_params.h; every backend must match it bit for bit):
 * temperature <= 0 is Argmax. Otherwise the candidates in the order above
 * are cut to top_k (0: all); with l_max the first candidate's logit,
 * p_i = exp(((double)l_i - (double)l_max) / (double)temperature); Z is
 * the double sum of p_i in candidate order; the kept prefix is the first
 * m candidates where m is the smallest with (sum_{i<m} p_i) / Z >= top_p
 * (the running double sum; all candidates when never); P is the running
 * sum at m; with u = vt_sample_uniform(seed, step, row), the token is the
 * first candidate i < m whose running sum / P > u, else candidate m-1.
 * Rows with +inf, or with no finite logit, are refused when sampling. */
#include "config.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_ops.h"

typedef struct cand {
    float v;
    int32_t i;
} cand;

/* a comes before b: larger value, or equal value and lower index. */
static bool cand_before(cand a, cand b)
{
    return a.v > b.v || (a.v == b.v && a.i < b.i);
}

static int cand_cmp(const void *pa, const void *pb)
{
    cand a = *(const cand *)pa, b = *(const cand *)pb;
    return cand_before(a, b) ? -1 : cand_before(b, a) ? 1 : 0;
}

/* Sift the root of a heap whose root is the candidate that comes last. */
static void heap_down(cand *h, int64_t n, int64_t i)
{
    for (;;) {
        int64_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && cand_before(h[m], h[l]))
            m = l;
        if (r < n && cand_before(h[m], h[r]))
            m = r;
        if (m == i)
            return;
        cand t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* The first k candidates of row x[0..n) in order, into out[0..k). */
static void top_candidates(const float *x, int64_t n, int64_t k, cand *out)
{
    if (k >= n) {
        for (int64_t i = 0; i < n; i++)
            out[i] = (cand){x[i], (int32_t)i};
        qsort(out, (size_t)n, sizeof *out, cand_cmp);
        return;
    }
    for (int64_t i = 0; i < k; i++)
        out[i] = (cand){x[i], (int32_t)i};
    for (int64_t i = k / 2; i-- > 0;)
        heap_down(out, k, i);
    for (int64_t i = k; i < n; i++) {
        cand c = {x[i], (int32_t)i};
        if (cand_before(c, out[0])) {
            out[0] = c;
            heap_down(out, k, 0);
        }
    }
    qsort(out, (size_t)k, sizeof *out, cand_cmp);
}

/* First NaN of the rows, as a refusal naming the operand, row and index. */
static vt_status refuse_nan(uint32_t op, const char *operand, const float *x, int64_t rows, int64_t n, char *why,
                            size_t why_size)
{
    for (int64_t r = 0; r < rows; r++)
        for (int64_t i = 0; i < n; i++)
            if (isnan(x[r * n + i]))
                return vt_cpu_op_error(VT_E_INVALID_ARG, why, why_size, op, "%s row %lld has NaN at index %lld",
                                       operand, (long long)r, (long long)i);
    return VT_OK;
}

static void rows_of(const vt_operand *x, int64_t *rows, int64_t *n)
{
    *n = x->shape[x->ndim - 1];
    *rows = *n ? vt_cpu_elems(x) / *n : 0;
}

/* ---- TopK ---- */

typedef struct topk_job {
    const float *x;
    float *values;
    int32_t *indices;
    int64_t n, k;
    atomic_int no_memory;
} topk_job;

static void topk_range(void *arg, int64_t r0, int64_t r1)
{
    topk_job *j = arg;
    cand *c = malloc((size_t)(j->k < j->n ? j->k : j->n) * sizeof *c);
    if (!c) {
        atomic_store(&j->no_memory, 1);
        return;
    }
    for (int64_t r = r0; r < r1; r++) {
        top_candidates(j->x + r * j->n, j->n, j->k, c);
        for (int64_t i = 0; i < j->k; i++) {
            j->values[r * j->k + i] = c[i].v;
            j->indices[r * j->k + i] = c[i].i;
        }
    }
    free(c);
}

VT_CPU_KERNEL(vt_cpu_topk)
{
    (void)dev;
    topk_job j;
    memset(&j, 0, sizeof j);
    int64_t rows;
    rows_of(&a->in[0], &rows, &j.n);
    j.x = a->in[0].data;
    j.values = a->out[0].data;
    j.indices = a->out[1].data;
    j.k = ((const vt_params_topk *)a->params)->k;
    atomic_init(&j.no_memory, 0);
    vt_status st = refuse_nan(VT_OP_TOPK, "x", j.x, rows, j.n, why, why_size);
    if (st != VT_OK)
        return st;
    vt_cpu_parallel(ctx->pool, rows, vt_cpu_grain(2048, j.n, 1), topk_range, &j);
    if (atomic_load(&j.no_memory))
        return vt_cpu_op_error(VT_E_NO_MEMORY, why, why_size, VT_OP_TOPK, "no host memory for %lld candidates",
                               (long long)j.k);
    return VT_OK;
}

/* ---- Argmax ---- */

static int32_t argmax_row(const float *x, int64_t n)
{
    int64_t best = 0;
    for (int64_t i = 1; i < n; i++)
        if (x[i] > x[best])
            best = i;
    return (int32_t)best;
}

typedef struct argmax_job {
    const float *x;
    int32_t *idx;
    int64_t n;
} argmax_job;

static void argmax_range(void *arg, int64_t r0, int64_t r1)
{
    const argmax_job *j = arg;
    for (int64_t r = r0; r < r1; r++)
        j->idx[r] = argmax_row(j->x + r * j->n, j->n);
}

VT_CPU_KERNEL(vt_cpu_argmax)
{
    (void)dev;
    argmax_job j = {a->in[0].data, a->out[0].data, 0};
    int64_t rows;
    rows_of(&a->in[0], &rows, &j.n);
    vt_status st = refuse_nan(VT_OP_ARGMAX, "x", j.x, rows, j.n, why, why_size);
    if (st != VT_OK)
        return st;
    vt_cpu_parallel(ctx->pool, rows, vt_cpu_grain(2048, j.n, 1), argmax_range, &j);
    return VT_OK;
}

/* ---- Sample ---- */

typedef struct sample_job {
    const float *x;
    int32_t *tokens;
    int64_t n;
    vt_params_sample p;
    atomic_int no_memory;
} sample_job;

static int32_t sample_row(const sample_job *j, int64_t row, cand *c, double *prob)
{
    const float *x = j->x + row * j->n;
    int64_t k = j->p.top_k > 0 && j->p.top_k < j->n ? j->p.top_k : j->n;
    top_candidates(x, j->n, k, c);
    double lmax = c[0].v, temp = j->p.temperature, z = 0.0;
    for (int64_t i = 0; i < k; i++) {
        prob[i] = exp(((double)c[i].v - lmax) / temp);
        z += prob[i];
    }
    int64_t m = k;
    double run = 0.0;
    for (int64_t i = 0; i < k; i++) {
        run += prob[i];
        if (run / z >= (double)j->p.top_p) {
            m = i + 1;
            break;
        }
    }
    double total = 0.0;
    for (int64_t i = 0; i < m; i++)
        total += prob[i];
    double u = vt_sample_uniform(j->p.seed, j->p.step, (uint64_t)row);
    run = 0.0;
    for (int64_t i = 0; i < m; i++) {
        run += prob[i];
        if (run / total > u)
            return c[i].i;
    }
    return c[m - 1].i;
}

static void sample_range(void *arg, int64_t r0, int64_t r1)
{
    sample_job *j = arg;
    if (j->p.temperature <= 0.0f) {
        for (int64_t r = r0; r < r1; r++)
            j->tokens[r] = argmax_row(j->x + r * j->n, j->n);
        return;
    }
    cand *c = malloc((size_t)j->n * sizeof *c);
    double *prob = malloc((size_t)j->n * sizeof *prob);
    if (!c || !prob) {
        free(c);
        free(prob);
        atomic_store(&j->no_memory, 1);
        return;
    }
    for (int64_t r = r0; r < r1; r++)
        j->tokens[r] = sample_row(j, r, c, prob);
    free(c);
    free(prob);
}

VT_CPU_KERNEL(vt_cpu_sample)
{
    (void)dev;
    sample_job j;
    memset(&j, 0, sizeof j);
    int64_t rows;
    rows_of(&a->in[0], &rows, &j.n);
    j.x = a->in[0].data;
    j.tokens = a->out[0].data;
    j.p = *(const vt_params_sample *)a->params;
    atomic_init(&j.no_memory, 0);
    vt_status st = refuse_nan(VT_OP_SAMPLE, "logits", j.x, rows, j.n, why, why_size);
    if (st != VT_OK)
        return st;
    if (j.p.temperature > 0.0f)
        for (int64_t r = 0; r < rows; r++) {
            const float *x = j.x + r * j.n;
            bool finite = false;
            for (int64_t i = 0; i < j.n; i++) {
                if (x[i] == INFINITY)
                    return vt_cpu_op_error(VT_E_INVALID_ARG, why, why_size, VT_OP_SAMPLE,
                                           "logits row %lld has +inf at index %lld", (long long)r, (long long)i);
                finite |= isfinite(x[i]);
            }
            if (!finite)
                return vt_cpu_op_error(VT_E_INVALID_ARG, why, why_size, VT_OP_SAMPLE,
                                       "logits row %lld has no finite value to sample from", (long long)r);
        }
    vt_cpu_parallel(ctx->pool, rows, vt_cpu_grain(2048, j.n, 1), sample_range, &j);
    if (atomic_load(&j.no_memory))
        return vt_cpu_op_error(VT_E_NO_MEMORY, why, why_size, VT_OP_SAMPLE, "no host memory for %lld candidates",
                               (long long)j.n);
    return VT_OK;
}
