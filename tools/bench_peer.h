/* bench_peer.h - the reference library's op benchmark as a yardstick for
 * `vtctl bench --peer PATH`: ggml's test-backend-ops (built by
 * ../shared/peers/build-ggml-bench) run on the same MatMul shape right
 * after vt's row, its "N runs - T us/run" read back. */
#ifndef VTCTL_BENCH_PEER_H
#define VTCTL_BENCH_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vt/vt_dtype.h>

/* One run of the peer on one shape. */
typedef struct bench_peer_result {
    bool ok;
    double us; /* its time per run */
    int runs;  /* runs it averaged over */
    char error[256];
} bench_peer_result;

/* The ggml type name of a vt weight dtype ("q4_K" for q4_k), or NULL when
 * ggml has no such type. */
const char *bench_peer_type(vt_dtype t);

/* Run `PATH perf -b BACKEND -o MUL_MAT -p "type_a=T,type_b=f32,m=M,n=N,k=K,"`
 * (BACKEND "CPU" for the cpu backend) and read its time into r. */
void bench_peer_matmul(const char *path, const char *backend, vt_dtype wtype, int64_t m, int64_t n, int64_t k,
                       bench_peer_result *r);

/* Read "N runs - T us/run" from the peer's output; false when absent. */
bool bench_peer_parse(const char *out, int *runs, double *us);

#endif
