/* bench_baseline.h - a same-run baseline for `vtctl bench --baseline`: the
 * decode MatMul of Q4_0 and Q8_0 weights computed the way llama.cpp's ggml
 * CPU kernels compute it (the activation row quantized to 8-bit integers
 * in 32-element blocks with one f32 scale each, integer dot products per
 * block, one f32 multiply-add per block), written here from that
 * description.
 *
 * It is a yardstick, not part of vt: its error (about 1e-2 relative) is
 * outside SPEC 7's 1e-4 for MatMul, which is why vt's oracle does not
 * compute this way. Timing it on the same machine, in the same run, over
 * the same bytes and threads as vt's kernel turns "llama.cpp took N us on
 * another machine" into a ratio that survives a noisy or slower machine. */
#ifndef VTCTL_BENCH_BASELINE_H
#define VTCTL_BENCH_BASELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vt/vt.h>

/* What one baseline measurement gave. */
typedef struct bench_baseline_result {
    bool ok;
    char error[256];          /* why not, when !ok */
    double median_us, min_us; /* wall time of one whole MatMul (x quantized inside) */
    double rel_err;           /* ||baseline - vt|| / ||vt|| on the same inputs */
    const char *path;         /* "avx2" or "scalar" */
    int threads;
} bench_baseline_result;

/* True when the baseline has a kernel for weights of type wtype. */
bool bench_baseline_supports(vt_dtype wtype);

/* The thread count the cpu backend's pool uses: VT_NUM_THREADS (1..1024)
 * when set, else the CPUs this process may run on. */
int bench_baseline_threads(void);

/* Time the baseline on `sets` copies of the weights w (m rows of k
 * elements of wtype; copies rotate like vt's buffer sets) against the
 * activation row x (k floats): warmup + reps runs on `threads` threads.
 * vt_out (m floats, vt's result for the same w and x) is compared with
 * the baseline's result and a disagreement above 5e-2 fails the
 * measurement. Allocates and frees everything it uses. */
void bench_baseline_matmul(vt_dtype wtype, const void *w, int64_t m, int64_t k, const float *x, const float *vt_out,
                           int sets, int reps, int warmup, int threads, bench_baseline_result *r);

#endif
