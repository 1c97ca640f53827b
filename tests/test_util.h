/* test_util.h - helpers shared by the Check suites: seeded random inputs,
 * poisoning, error norms, temporary directories. */
#ifndef VT_TEST_UTIL_H
#define VT_TEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <check.h>
#include <vt/vt.h>

/* Automake's exit code for a skipped test. */
#define VT_TEST_SKIP 77

/* The run's seed: $VT_TEST_SEED or time-based; printed once. */
uint64_t vt_test_seed(void);

/* A splitmix64 stream. */
typedef struct vt_rng {
    uint64_t s;
} vt_rng;

/* Seed a stream from the run's seed and a stream id. */
void vt_rng_init(vt_rng *r, uint64_t stream);

/* Next 64 random bits. */
uint64_t vt_rng_next(vt_rng *r);

/* Uniform float in [lo, hi). */
float vt_rng_uniform(vt_rng *r, float lo, float hi);

/* Uniform integer in [0, n). */
uint64_t vt_rng_below(vt_rng *r, uint64_t n);

/* Fill n floats uniformly in [lo, hi). */
void vt_rng_fill(vt_rng *r, float *x, size_t n, float lo, float hi);

/* Fill a buffer with NaN-pattern bytes (0xff) so unwritten outputs show. */
void vt_poison(void *p, size_t bytes);

/* ||out - ref|| / ||ref|| over n values; any NaN in out gives +inf. When
 * ||ref|| is 0 the absolute norm is returned. */
double vt_rel_l2(const float *out, const double *ref, size_t n);

/* Make a fresh private temporary directory; returns a malloc'd path. */
char *vt_test_mkdtemp(void);

/* Remove a directory and the files directly inside it. */
void vt_test_rmtree(const char *dir);

/* Whether a backend's suite should run: 77 (skip, reason on stderr) when
 * VT_TEST_BACKEND selects another backend or the backend has no device
 * here, 0 to run. Probes in a child process so the caller never touches a
 * device runtime before Check forks its tests. */
int vt_test_backend_gate(const char *backend);

/* Open a registry with loader debug off, failing the test on error. */
vt_registry *vt_test_open(const char *plugin_path, const char *backends, uint32_t flags);

/* The entry of the candidate backend named name (its strings owned by
 * reg), failing the test when reg lists none. */
vt_backend_info vt_test_backend(vt_registry *reg, const char *name);

/* The device spec names ("cpu:0"), failing the test (with the registry's
 * reason) when there is none. */
vt_device *vt_test_device(vt_registry *reg, const char *spec);

/* A tensor on d; when data is not NULL, its vt_tensor_nbytes bytes are
 * written from data. Fails the test (naming the dtype) on error. Owned by
 * the caller (vt_tensor_destroy). */
vt_tensor *vt_test_tensor(vt_device *d, vt_dtype t, uint32_t nd, const int64_t *shape, const void *data);

/* The device's counters now (vt_device_stats_get), failing the test on error. */
vt_device_stats vt_test_stats(vt_device *d);

/* Exact value of element i of an f32, f16 or bf16 buffer, decoded here
 * (independently of the library's converters). */
double vt_test_decode(const void *p, vt_dtype t, int64_t i);

/* The start of a suite's main: when backend is not NULL, its gate (77,
 * skip: main returns it; the suite is not made); then the run's seed and
 * a suite named name holding one test case tc_name (timeout_s seconds; 0
 * keeps Check's default), in *s and *tc for main to fill. 0: run it. */
int vt_test_suite_begin(const char *backend, const char *name, const char *tc_name, double timeout_s, Suite **s,
                        TCase **tc);

/* Run every test of s, free the runner, and return the suite's exit
 * status (0 when every test passed, 1 otherwise). */
int vt_test_run_suite(Suite *s);

#endif
