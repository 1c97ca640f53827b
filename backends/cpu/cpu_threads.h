/* cpu_threads.h - the cpu backend's thread pool.
 *
 * One pool per backend context, sized to the cores this process may run on
 * (VT_NUM_THREADS overrides). vt_cpu_parallel splits [0, n) into
 * contiguous ranges, one per worker, and returns when all are done.
 * Determinism rule for kernels: each output element is computed entirely
 * inside one range, with a reduction order that does not depend on the
 * split, so results are bit-identical for any thread count. */
#ifndef VT_CPU_THREADS_H
#define VT_CPU_THREADS_H

#include <stddef.h>
#include <stdint.h>

#include <vt/vt_status.h>

typedef struct vt_cpu_pool vt_cpu_pool;

/* The body of a parallel loop: handle items [begin, end). */
typedef void (*vt_cpu_range_fn)(void *arg, int64_t begin, int64_t end);

/* Create a pool of n_threads (the caller counts as one; the backend's
 * from vt_cpu_threads_select); 0 picks vt_cpu_online_cores(). NULL on
 * failure. */
vt_cpu_pool *vt_cpu_pool_create(int n_threads);

/* Stop the workers and free the pool. NULL is ignored. */
void vt_cpu_pool_destroy(vt_cpu_pool *pool);

/* Number of threads (>= 1). */
int vt_cpu_pool_size(const vt_cpu_pool *pool);

/* Run fn over [0, n) split in ranges of at least min_chunk items. Calls
 * from several threads at once are serialised. pool may be NULL (runs
 * inline). */
void vt_cpu_parallel(vt_cpu_pool *pool, int64_t n, int64_t min_chunk, vt_cpu_range_fn fn, void *arg);

/* The smallest chunk for items of about a*b units of work each:
 * 1 + base / (a*b + 1), with the product saturating instead of wrapping
 * (a, b >= 0), so no shape divides by zero or overflows. */
int64_t vt_cpu_grain(int64_t base, int64_t a, int64_t b);

/* The one rule for the pool's size, into *n: $VT_NUM_THREADS (a whole
 * number from 1 to 1024), else (unset or empty) vt_cpu_online_cores();
 * VT_E_INVALID_ARG naming the value otherwise. The backend reports the
 * size it chose through its caps (host_threads); nothing outside this
 * backend restates the rule. */
vt_status vt_cpu_threads_select(int *n, char *why, size_t why_size);

/* CPUs this process may run on: its affinity mask, else the online CPUs
 * (sysconf), at least 1. */
int vt_cpu_online_cores(void);

#endif
