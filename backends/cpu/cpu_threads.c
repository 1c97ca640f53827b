/* cpu_threads.c - a small fork-join pool: workers take one contiguous
 * range each per parallel region, and the caller takes the first range
 * itself. Between regions a worker (and the caller waiting for the
 * workers) spins for a bounded while, VT_CPU_SPIN pause instructions
 * (about 25 us on this AMD EPYC, 40 us where a pause is ~40 ns), so that back-to-back ops of a decode step start
 * without a wake-up, then sleeps on a condition variable (futex): an idle
 * pool uses no CPU that another process on a shared machine needs. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <vt/vt_backend.h>

#include "cpu_threads.h"

/* Pause iterations a waiting thread spins before it sleeps. */
#define VT_CPU_SPIN 1024

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

struct vt_cpu_pool {
    int n;                  /* threads including the caller */
    pthread_t *workers;     /* n - 1 */
    pthread_mutex_t region; /* one parallel region at a time */
    pthread_mutex_t lock;
    pthread_cond_t start, done;
    atomic_uint_fast64_t generation; /* bumped per region (after its fields are set) */
    atomic_int pending;              /* workers still running this region */
    atomic_int sleepers;             /* workers asleep (or about to be) on start */
    atomic_int stop;
    /* the current region */
    vt_cpu_range_fn fn;
    void *arg;
    int64_t n_items;
    int n_ranges;
};

typedef struct worker_arg {
    vt_cpu_pool *pool;
    int index; /* 1..n-1; the caller is 0 */
} worker_arg;

static void range_of(int64_t n, int parts, int i, int64_t *b, int64_t *e)
{
    int64_t base = n / parts, rem = n % parts;
    *b = i * base + (i < rem ? i : rem);
    *e = *b + base + (i < rem ? 1 : 0);
}

static void *worker_main(void *p)
{
    worker_arg *wa = p;
    vt_cpu_pool *pool = wa->pool;
    int index = wa->index;
    free(wa);
    uint64_t seen = 0;
    for (;;) {
        /* a bounded spin, then sleep; sleepers is raised before the last
         * look at generation (both sequentially consistent), so the caller
         * either sees a sleeper and broadcasts, or the worker sees the new
         * region */
        for (int i = 0; i < VT_CPU_SPIN && atomic_load(&pool->generation) == seen && !atomic_load(&pool->stop); i++)
            cpu_relax();
        if (atomic_load(&pool->generation) == seen && !atomic_load(&pool->stop)) {
            pthread_mutex_lock(&pool->lock);
            atomic_fetch_add(&pool->sleepers, 1);
            while (!atomic_load(&pool->stop) && atomic_load(&pool->generation) == seen)
                pthread_cond_wait(&pool->start, &pool->lock);
            atomic_fetch_sub(&pool->sleepers, 1);
            pthread_mutex_unlock(&pool->lock);
        }
        if (atomic_load(&pool->stop))
            break;
        seen = atomic_load(&pool->generation);
        vt_cpu_range_fn fn = pool->fn;
        void *arg = pool->arg;
        int64_t n = pool->n_items;
        int parts = pool->n_ranges;
        if (index < parts) {
            int64_t b, e;
            range_of(n, parts, index, &b, &e);
            if (b < e)
                fn(arg, b, e);
        }
        if (atomic_fetch_sub(&pool->pending, 1) == 1) {
            /* the last one: wake the caller if it went to sleep */
            pthread_mutex_lock(&pool->lock);
            pthread_cond_signal(&pool->done);
            pthread_mutex_unlock(&pool->lock);
        }
    }
    return NULL;
}

vt_status vt_cpu_threads_select(int *n, char *why, size_t why_size)
{
    const char *e = getenv("VT_NUM_THREADS");
    if (!e || !*e) {
        *n = vt_cpu_online_cores();
        return VT_OK;
    }
    char *end = NULL;
    errno = 0;
    long v = strtol(e, &end, 10);
    /* digits only: no space or sign strtol would skip, no overflow */
    if (*e < '0' || *e > '9' || *end || errno || v < 1 || v > 1024)
        return vt_why(VT_E_INVALID_ARG, why, why_size,
                      "VT_NUM_THREADS=%s: expected a whole number from 1 to 1024 (unset: the %d CPUs of this process)",
                      e, vt_cpu_online_cores());
    *n = (int)v;
    return VT_OK;
}

int vt_cpu_online_cores(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

vt_cpu_pool *vt_cpu_pool_create(int n_threads)
{
    vt_cpu_pool *pool = calloc(1, sizeof *pool);
    if (!pool)
        return NULL;
    pool->n = n_threads > 0 ? n_threads : vt_cpu_online_cores();
    pthread_mutex_init(&pool->region, NULL);
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->start, NULL);
    pthread_cond_init(&pool->done, NULL);
    pool->workers = calloc((size_t)pool->n, sizeof *pool->workers);
    if (!pool->workers) {
        vt_cpu_pool_destroy(pool);
        return NULL;
    }
    for (int i = 1; i < pool->n; i++) {
        worker_arg *wa = malloc(sizeof *wa);
        if (wa) {
            wa->pool = pool;
            wa->index = i;
        }
        if (!wa || pthread_create(&pool->workers[i - 1], NULL, worker_main, wa) != 0) {
            free(wa);
            pool->n = i; /* run with the threads that started */
            break;
        }
    }
    return pool;
}

void vt_cpu_pool_destroy(vt_cpu_pool *pool)
{
    if (!pool)
        return;
    pthread_mutex_lock(&pool->lock);
    atomic_store(&pool->stop, 1);
    pthread_cond_broadcast(&pool->start);
    pthread_mutex_unlock(&pool->lock);
    for (int i = 1; i < pool->n && pool->workers; i++)
        pthread_join(pool->workers[i - 1], NULL);
    free(pool->workers);
    pthread_cond_destroy(&pool->start);
    pthread_cond_destroy(&pool->done);
    pthread_mutex_destroy(&pool->lock);
    pthread_mutex_destroy(&pool->region);
    free(pool);
}

int vt_cpu_pool_size(const vt_cpu_pool *pool)
{
    return pool ? pool->n : 1;
}

void vt_cpu_parallel(vt_cpu_pool *pool, int64_t n, int64_t min_chunk, vt_cpu_range_fn fn, void *arg)
{
    if (n <= 0)
        return;
    if (min_chunk < 1)
        min_chunk = 1;
    int parts = pool ? pool->n : 1;
    if (n / min_chunk < parts)
        parts = (int)(n / min_chunk) > 0 ? (int)(n / min_chunk) : 1;
    if (parts <= 1) {
        fn(arg, 0, n);
        return;
    }
    pthread_mutex_lock(&pool->region);
    /* the fields first, then the generation that publishes them (seq_cst
     * store: a spinning worker that sees it sees them) */
    pool->fn = fn;
    pool->arg = arg;
    pool->n_items = n;
    pool->n_ranges = parts;
    atomic_store(&pool->pending, pool->n - 1);
    atomic_fetch_add(&pool->generation, 1);
    if (atomic_load(&pool->sleepers) > 0) {
        pthread_mutex_lock(&pool->lock);
        pthread_cond_broadcast(&pool->start);
        pthread_mutex_unlock(&pool->lock);
    }
    int64_t b, e;
    range_of(n, parts, 0, &b, &e);
    fn(arg, b, e);
    for (int i = 0; i < VT_CPU_SPIN && atomic_load(&pool->pending) > 0; i++)
        cpu_relax();
    if (atomic_load(&pool->pending) > 0) {
        pthread_mutex_lock(&pool->lock);
        while (atomic_load(&pool->pending) > 0)
            pthread_cond_wait(&pool->done, &pool->lock);
        pthread_mutex_unlock(&pool->lock);
    }
    pthread_mutex_unlock(&pool->region);
}

int64_t vt_cpu_grain(int64_t base, int64_t a, int64_t b)
{
    if (a < 0)
        a = 0;
    if (b < 0)
        b = 0;
    int64_t work = (b && a > (INT64_MAX - 1) / b) ? INT64_MAX - 1 : a * b;
    return 1 + base / (work + 1);
}
