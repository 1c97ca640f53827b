/* op_harness.h - helpers of the cpu op suites (test_cpu_ops_*.c): the cpu
 * device, tensors from host arrays, poisoned outputs, runs, and the
 * comparisons of SPEC 7 (relative L2 over finite entries with -inf matched
 * position for position, exact equality). */
#ifndef VT_OP_HARNESS_H
#define VT_OP_HARNESS_H

#include "test_util.h"

/* The registry and the cpu device of one test. */
typedef struct oh {
    vt_registry *reg;
    vt_device *dev;
    vt_rng r;
} oh;

/* Open the registry and find cpu:0; stream seeds h->r. */
void oh_open(oh *h, uint64_t stream);

/* Close the registry. */
void oh_close(oh *h);

/* A tensor on the cpu device holding data, or poisoned (0xff bytes) when
 * data is NULL. Owned by the caller (vt_tensor_destroy). */
vt_tensor *oh_tensor(oh *h, vt_dtype t, uint32_t nd, const int64_t *shape, const void *data);

/* Read a whole tensor into dst. */
void oh_read(const vt_tensor *t, void *dst);

/* Run op; fails the test with the error text unless it returns VT_OK. */
void oh_run(oh *h, vt_op op, const vt_tensor *const *in, uint32_t n_in, vt_tensor *const *out, uint32_t n_out,
            const void *params, size_t params_size);

/* Run op expecting the status want; returns the error text (thread-local). */
const char *oh_run_fails(oh *h, vt_status want, vt_op op, const vt_tensor *const *in, uint32_t n_in,
                         vt_tensor *const *out, uint32_t n_out, const void *params, size_t params_size);

/* ||got - ref|| / ||ref|| over finite entries (infinities and NaN are
 * oh_expect_rel's business). */
double oh_rel_error(const float *got, const double *ref, size_t n);

/* ||got - ref|| / ||ref|| over finite entries <= tol; infinities must
 * match position for position, NaN fails. what names the check. */
void oh_expect_rel(const char *what, const float *got, const double *ref, size_t n, double tol);

/* got[i] == want[i] bit for bit for n 32-bit values. */
void oh_expect_bits32(const char *what, const void *got, const void *want, size_t n);

/* Every element of a float array is finite or -inf (nothing left poisoned). */
void oh_expect_written(const char *what, const float *got, size_t n);

/* Allocate n floats uniform in [lo, hi) from h->r. */
float *oh_rand(oh *h, size_t n, float lo, float hi);

/* Uniform integer in [lo, hi]. */
int64_t oh_irange(oh *h, int64_t lo, int64_t hi);

/* Exact value of element i of an f32/f16/bf16 buffer, decoded here. */
double oh_decode(const void *p, vt_dtype t, int64_t i);

#endif
