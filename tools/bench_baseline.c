/* bench_baseline.c - the int8-activation decode MatMul baseline of
 * `vtctl bench --baseline` (see bench_baseline.h): x quantized per
 * 32-element block to q = round(x / d), d = max|x| / 127; per weight block
 * an integer dot of the codes with q, scaled by d_w * d once. Rows are
 * split evenly over a fixed set of threads that spin between runs, as a
 * thread pool does. AVX2 where the CPU has it (chosen
 * at run time), a scalar loop elsewhere. */
#include "config.h"

#include "bench_baseline.h"
#include "bench_time.h"

#include <math.h>
#include <sched.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#define QK 32 /* elements per block of both formats and of the quantized x */

typedef struct qx_block {
    float d;
    int8_t q[QK];
} qx_block;

bool bench_baseline_supports(vt_dtype wtype)
{
    return wtype == VT_Q4_0 || wtype == VT_Q8_0;
}

/* x (nb blocks) to 8-bit codes with one scale per block. */
static void quantize_x(const float *x, int64_t nb, qx_block *out)
{
    for (int64_t b = 0; b < nb; b++) {
        const float *xb = x + b * QK;
        float amax = 0.0f;
        for (int i = 0; i < QK; i++)
            amax = fmaxf(amax, fabsf(xb[i]));
        const float d = amax / 127.0f, inv = d > 0.0f ? 1.0f / d : 0.0f;
        out[b].d = d;
        for (int i = 0; i < QK; i++)
            out[b].q[i] = (int8_t)lrintf(xb[i] * inv);
    }
}

/* ---- one weight row against the quantized x ---- */

static float row_scalar(vt_dtype wtype, const uint8_t *w, size_t bb, int64_t nb, const qx_block *x)
{
    float sum = 0.0f;
    for (int64_t b = 0; b < nb; b++, w += bb) {
        uint16_t h;
        memcpy(&h, w, 2);
        int32_t dot = 0;
        if (wtype == VT_Q4_0) {
            for (int i = 0; i < QK / 2; i++) {
                dot += ((w[2 + i] & 0xF) - 8) * x[b].q[i];
                dot += ((w[2 + i] >> 4) - 8) * x[b].q[i + QK / 2];
            }
        } else {
            for (int i = 0; i < QK; i++)
                dot += (int8_t)w[2 + i] * x[b].q[i];
        }
        sum += vt_f16_to_f32(h) * x[b].d * (float)dot;
    }
    return sum;
}

#if defined(__x86_64__)
#define AVX2_FN __attribute__((target("avx2,fma,f16c")))

/* Signed codes c against signed q: |c| * sign(q, c) in unsigned x signed
 * byte products, pairs summed to 16 bits, then to 32. */
AVX2_FN static inline __m256 block_dot(__m256i c, const qx_block *x)
{
    const __m256i q = _mm256_loadu_si256((const __m256i *)(const void *)x->q);
    const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(c, c), _mm256_sign_epi8(q, c));
    return _mm256_cvtepi32_ps(_mm256_madd_epi16(p, _mm256_set1_epi16(1)));
}

AVX2_FN static inline __m256i codes(vt_dtype wtype, const uint8_t *blk)
{
    if (wtype == VT_Q8_0)
        return _mm256_loadu_si256((const __m256i *)(const void *)(blk + 2));
    const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(blk + 2));
    const __m256i n = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(v, 4), v), _mm256_set1_epi8(0xF));
    return _mm256_sub_epi8(n, _mm256_set1_epi8(8));
}

AVX2_FN static float row_avx2(vt_dtype wtype, const uint8_t *w, size_t bb, int64_t nb, const qx_block *x)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    int64_t b = 0;
    for (; b + 1 < nb; b += 2, w += 2 * bb) {
        uint16_t h0, h1;
        memcpy(&h0, w, 2);
        memcpy(&h1, w + bb, 2);
        a0 = _mm256_fmadd_ps(_mm256_set1_ps(_cvtsh_ss(h0) * x[b].d), block_dot(codes(wtype, w), &x[b]), a0);
        a1 =
            _mm256_fmadd_ps(_mm256_set1_ps(_cvtsh_ss(h1) * x[b + 1].d), block_dot(codes(wtype, w + bb), &x[b + 1]), a1);
    }
    for (; b < nb; b++, w += bb) {
        uint16_t h;
        memcpy(&h, w, 2);
        a0 = _mm256_fmadd_ps(_mm256_set1_ps(_cvtsh_ss(h) * x[b].d), block_dot(codes(wtype, w), &x[b]), a0);
    }
    const __m256 s = _mm256_add_ps(a0, a1);
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    q = _mm_add_ps(q, _mm_movehl_ps(q, q));
    return _mm_cvtss_f32(_mm_add_ss(q, _mm_shuffle_ps(q, q, 1)));
}
#endif

/* ---- threads ---- */

/* A run: the caller bumps `gen`; each worker, spinning on it, does its
 * share and bumps `done`; the caller does share 0 and spins until every
 * worker is done (threads that spin between runs, as a pool does, so a
 * run does not pay for waking them). */
typedef struct baseline_job {
    vt_dtype wtype;
    size_t bb, row_bytes;
    int64_t m, nb;
    const float *x;
    qx_block *qx;
    const uint8_t *w; /* the set of this run */
    float *out;
    bool avx2;
    int threads;
    atomic_int gen, done;
    atomic_bool quit;
} baseline_job;

typedef struct baseline_worker {
    baseline_job *job;
    int id;
} baseline_worker;

static inline void spin_pause(void)
{
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
}

/* Thread id's share of a run. */
static void run_share(baseline_job *j, int id)
{
    const int64_t r0 = j->m * id / j->threads, r1 = j->m * (id + 1) / j->threads;
    for (int64_t r = r0; r < r1; r++) {
        const uint8_t *row = j->w + (size_t)r * j->row_bytes;
#if defined(__x86_64__)
        if (j->avx2) {
            j->out[r] = row_avx2(j->wtype, row, j->bb, j->nb, j->qx);
            continue;
        }
#endif
        j->out[r] = row_scalar(j->wtype, row, j->bb, j->nb, j->qx);
    }
}

static void *worker_main(void *arg)
{
    baseline_worker *wk = arg;
    baseline_job *j = wk->job;
    int seen = 0;
    for (;;) {
        int g;
        while ((g = atomic_load_explicit(&j->gen, memory_order_acquire)) == seen &&
               !atomic_load_explicit(&j->quit, memory_order_acquire))
            spin_pause();
        if (g == seen)
            return NULL; /* quit */
        seen = g;
        run_share(j, wk->id);
        atomic_fetch_add_explicit(&j->done, 1, memory_order_release);
    }
}

/* One run: x quantized first (inside the timed run, as a real decode step
 * must), then every share. */
static void run_once(baseline_job *j)
{
    quantize_x(j->x, j->nb, j->qx);
    atomic_store_explicit(&j->done, 0, memory_order_relaxed);
    atomic_fetch_add_explicit(&j->gen, 1, memory_order_release);
    run_share(j, 0);
    while (atomic_load_explicit(&j->done, memory_order_acquire) != j->threads - 1)
        spin_pause();
}

int bench_baseline_threads(void)
{
    const char *e = getenv("VT_NUM_THREADS");
    if (e && *e) {
        int64_t v = 0;
        if (vt_parse_i64(e, 1, 1024, &v))
            return (int)v;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static void *alloc_big(size_t bytes)
{
    void *p = NULL;
    if (posix_memalign(&p, 2u << 20, bytes ? bytes : 1))
        return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, bytes, MADV_HUGEPAGE); /* as the cpu backend advises its buffers */
#endif
    return p;
}

void bench_baseline_matmul(vt_dtype wtype, const void *w, int64_t m, int64_t k, const float *x, const float *vt_out,
                           int sets, int reps, int warmup, int threads, bench_baseline_result *r)
{
    memset(r, 0, sizeof *r);
    const vt_dtype_info *ti = vt_dtype_get((int)wtype);
    if (!bench_baseline_supports(wtype) || !ti || ti->block_elems != QK || k % QK || m <= 0 || sets < 1 || reps < 1 ||
        threads < 1) {
        snprintf(r->error, sizeof r->error, "no baseline for %s at m=%lld, k=%lld", vt_dtype_name((int)wtype),
                 (long long)m, (long long)k);
        return;
    }
    baseline_job j;
    memset(&j, 0, sizeof j);
    j.wtype = wtype;
    j.bb = ti->block_bytes;
    j.nb = k / QK;
    j.row_bytes = (size_t)j.nb * j.bb;
    j.m = m;
    j.x = x;
    j.threads = threads;
#if defined(__x86_64__)
    __builtin_cpu_init();
    unsigned a = 0, b = 0, c = 0, d = 0; /* F16C: CPUID leaf 1, ECX bit 29 (not every compiler's builtin knows it) */
    j.avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __get_cpuid(1, &a, &b, &c, &d) &&
             (c >> 29 & 1);
#endif
    r->path = j.avx2 ? "avx2" : "scalar";
    r->threads = threads;

    const size_t wbytes = j.row_bytes * (size_t)m;
    uint8_t **copies = calloc((size_t)sets, sizeof *copies);
    double *t = calloc((size_t)reps, sizeof *t);
    j.qx = calloc((size_t)j.nb, sizeof *j.qx);
    j.out = calloc((size_t)m, sizeof *j.out);
    baseline_worker *wk = calloc((size_t)threads, sizeof *wk);
    pthread_t *th = calloc((size_t)threads, sizeof *th);
    bool ok = copies && t && j.qx && j.out && wk && th;
    for (int s = 0; ok && s < sets; s++) {
        copies[s] = alloc_big(wbytes);
        ok = copies[s] != NULL;
        if (ok)
            memcpy(copies[s], w, wbytes);
    }
    if (!ok) {
        snprintf(r->error, sizeof r->error, "out of host memory for %d copies of %zu bytes", sets, wbytes);
        goto out;
    }
    /* workers 1..threads-1; with fewer started, the rows are split over those */
    int started = 1;
    for (; started < threads; started++) {
        wk[started] = (baseline_worker){&j, started};
        if (pthread_create(&th[started], NULL, worker_main, &wk[started]))
            break;
    }
    j.threads = started;
    r->threads = started;
    for (int it = 0; it < warmup + reps; it++) {
        j.w = copies[it % sets];
        const double t0 = bench_now_us();
        run_once(&j);
        if (it >= warmup)
            t[it - warmup] = bench_now_us() - t0;
    }
    atomic_store_explicit(&j.quit, true, memory_order_release);
    for (int i = 1; i < started; i++)
        pthread_join(th[i], NULL);
    /* check against vt (every set holds the same bytes) */
    double num = 0.0, den = 0.0;
    for (int64_t i = 0; i < m; i++) {
        num += ((double)j.out[i] - vt_out[i]) * ((double)j.out[i] - vt_out[i]);
        den += (double)vt_out[i] * vt_out[i];
    }
    r->rel_err = den > 0.0 ? sqrt(num / den) : sqrt(num);
    r->median_us = bench_median(t, reps, &r->min_us);
    if (!(r->rel_err <= 5e-2))
        snprintf(r->error, sizeof r->error, "baseline disagrees with vt: relative error %.3g > 5e-2", r->rel_err);
    else
        r->ok = true;
out:
    for (int s = 0; copies && s < sets; s++)
        free(copies[s]);
    free(copies);
    free(t);
    free(j.qx);
    free(j.out);
    free(wk);
    free(th);
}
