/* cpu_mm.c - the matrix engine (cpu_mm.h): blocks of activation rows that
 * fit in cache, weight rows in tiles of the SIMD path's shape. The order of
 * tiles and threads never changes a result: each output is one canonical
 * reduction computed inside one tile. */
#include "config.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "cpu_mm.h"
#include "cpu_quant.h"
#include "cpu_qx.h"

/* Activation bytes a block keeps hot while the weight rows stream past. */
#define X_BLOCK_BYTES (256u << 10)

static const float *x_row(const vt_cpu_mm *p, int64_t r)
{
    return p->xrows ? p->xrows[r] : p->x + r * p->ldx;
}

static const int16_t *xq_row(const vt_cpu_mm *p, int64_t r)
{
    return p->xq + (p->xqi ? p->xqi[r] : r) * p->k;
}

static const float *xd_row(const vt_cpu_mm *p, int64_t r)
{
    return p->xd + (p->xqi ? p->xqi[r] : r) * (p->k / VT_CPU_GROUP);
}

static float *y_row(const vt_cpu_mm *p, int64_t r)
{
    return p->yrows ? p->yrows[r] : p->y + r * p->ldy;
}

void vt_cpu_mm_rows(const vt_cpu_isa *isa, const vt_cpu_mm *p, int64_t c0, int64_t c1)
{
    if (c0 >= c1 || p->n <= 0)
        return;
    const vt_dtype_info *wi = vt_dtype_get(p->wtype);
    vt_cpu_tile t;
    t.wtype = p->wtype;
    t.block_bytes = wi->block_bytes;
    t.groups = wi->quantized ? wi->block_elems / VT_CPU_GROUP : 0;
    t.k = p->k;
    const int tx = isa->tile_x, unit = isa->tile_w[1];
    int64_t xb = p->k > 0 ? (int64_t)(X_BLOCK_BYTES / ((uint64_t)p->k * sizeof(float))) : p->n;
    xb = xb < tx ? tx : xb - xb % tx;
    for (int64_t r0 = 0; r0 < p->n; r0 += xb) {
        int64_t r1 = r0 + xb < p->n ? r0 + xb : p->n;
        for (int64_t c = c0; c < c1; c += unit) {
            int64_t cend = c + unit < c1 ? c + unit : c1;
            for (int64_t r = r0; r < r1; r += tx) {
                t.nx = (int)(r1 - r < tx ? r1 - r : tx);
                for (int i = 0; i < t.nx; i++) {
                    t.x[i] = x_row(p, r + i);
                    if (p->xq) {
                        t.xq[i] = xq_row(p, r + i);
                        t.xd[i] = xd_row(p, r + i);
                    }
                }
                const int tw = isa->tile_w[t.nx];
                for (int64_t cc = c; cc < cend; cc += tw) {
                    t.nw = (int)(cend - cc < tw ? cend - cc : tw);
                    for (int i = 0; i < t.nw; i++)
                        t.w[i] = p->w + (size_t)(cc + i) * p->w_row_bytes;
                    (p->xq ? isa->qdot : isa->dot)(&t);
                    for (int ri = 0; ri < t.nx; ri++) {
                        float *y = y_row(p, r + ri) + cc;
                        for (int i = 0; i < t.nw; i++)
                            y[i] = t.out[ri][i];
                    }
                }
            }
        }
    }
}

/* Work is handed out in chunks of units from a shared counter rather than
 * as one fixed range per thread, so a thread that the OS preempts (a busy
 * host) does not hold the others up. Which thread computes a unit never
 * changes its bits: every output is one canonical reduction in one tile. */
typedef struct mm_job {
    const vt_cpu_isa *isa;
    const vt_cpu_mm *p;
    int64_t units, chunk;
    atomic_int_fast64_t next;
} mm_job;

static void mm_worker(void *arg, int64_t w0, int64_t w1)
{
    (void)w0;
    (void)w1;
    mm_job *j = arg;
    for (;;) {
        int64_t u0 = atomic_fetch_add(&j->next, j->chunk);
        if (u0 >= j->units)
            break;
        int64_t u1 = u0 + j->chunk < j->units ? u0 + j->chunk : j->units;
        int64_t c1 = u1 * VT_CPU_MM_UNIT;
        vt_cpu_mm_rows(j->isa, j->p, u0 * VT_CPU_MM_UNIT, c1 < j->p->m ? c1 : j->p->m);
    }
}

int64_t vt_cpu_mm_min_units(int64_t k, int64_t n)
{
    /* about 64k multiply-adds per thread before splitting pays */
    int64_t per_unit = VT_CPU_MM_UNIT * (k > 0 ? k : 1) * (n > 0 ? n : 1);
    return per_unit >= 65536 ? 1 : (65536 + per_unit - 1) / per_unit;
}

bool vt_cpu_mm_quantizes(uint32_t wtype, int64_t k)
{
    return vt_cpu_qformat_get(wtype) && k >= VT_CPU_QX_MIN_K && k % VT_CPU_GROUP == 0;
}

typedef struct qx_job {
    vt_cpu_quantize_fn quantize;
    const float *x;
    int64_t ldx, k;
    int16_t *xq;
    float *xd;
} qx_job;

static void qx_worker(void *arg, int64_t r0, int64_t r1)
{
    const qx_job *j = arg;
    for (int64_t r = r0; r < r1; r++)
        j->quantize(j->x + r * j->ldx, j->k, j->xq + r * j->k, j->xd + r * (j->k / VT_CPU_GROUP));
}

void *vt_cpu_mm_quantize(vt_backend_ctx *ctx, const float *x, int64_t ldx, int64_t n, int64_t k, int16_t **xq,
                         float **xd)
{
    const size_t qbytes = ((size_t)(n * k) * sizeof(int16_t) + 63) & ~(size_t)63;
    uint8_t *buf = malloc(qbytes + (size_t)(n * (k / VT_CPU_GROUP)) * sizeof(float) + 64);
    if (!buf)
        return NULL;
    qx_job j = {ctx->isa->quantize, x, ldx, k, (int16_t *)(void *)buf, (float *)(void *)(buf + qbytes)};
    /* about 64k elements per thread before splitting pays */
    vt_cpu_parallel(ctx->pool, n, k >= 65536 ? 1 : (65536 + k - 1) / k, qx_worker, &j);
    *xq = j.xq;
    *xd = j.xd;
    return buf;
}

vt_status vt_cpu_mm_run(vt_backend_ctx *ctx, const vt_cpu_mm *p)
{
    vt_cpu_mm pq;
    void *buf = NULL;
    /* (listed rows come from MoeExpertMatMul, which quantizes its own) */
    if (!p->xq && !p->xrows && p->n > 0 && p->m > 0 && vt_cpu_mm_quantizes(p->wtype, p->k)) {
        pq = *p;
        int16_t *xq;
        float *xd;
        if (!(buf = vt_cpu_mm_quantize(ctx, p->x, p->ldx, p->n, p->k, &xq, &xd)))
            return VT_E_NO_MEMORY;
        pq.xq = xq;
        pq.xd = xd;
        p = &pq;
    }
    mm_job j = {.isa = ctx->isa, .p = p, .units = (p->m + VT_CPU_MM_UNIT - 1) / VT_CPU_MM_UNIT};
    int64_t min_units = vt_cpu_mm_min_units(p->k, p->n);
    int64_t threads = vt_cpu_pool_size(ctx->pool);
    if (threads > j.units / min_units)
        threads = j.units / min_units > 0 ? j.units / min_units : 1;
    /* about 64 chunks per thread: a thread that finishes while another
     * still runs its last chunk waits at most ~1/64 of the op (a decode
     * MatMul's chunk is a few 8-row units, long enough to stream) */
    j.chunk = j.units / (threads * 64);
    j.chunk = j.chunk < min_units ? min_units : j.chunk;
    atomic_init(&j.next, 0);
    vt_cpu_parallel(ctx->pool, threads, 1, mm_worker, &j);
    free(buf);
    return VT_OK;
}
