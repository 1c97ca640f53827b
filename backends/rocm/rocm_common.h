/* rocm_common.h - helpers shared by the rocm backend's op files: the
 * device's stream, completion, operand sizes and reading small index
 * operands back to validate them before a launch. */
#ifndef VT_ROCM_COMMON_H
#define VT_ROCM_COMMON_H

#include "rocm_backend.h"
#include "rocm_launch.h"

/* Elements of an operand. */
int64_t vt_rocm_elems(const vt_operand *o);

/* Make dev current and return its stream, or fail. */
vt_status vt_rocm_stream(vt_backend_ctx *c, int dev, hipStream_t *s, char *why, size_t why_size);

/* Check a launch, wait for the stream, name the op on failure. */
vt_status vt_rocm_done(hipError_t e, const char *what, vt_backend_ctx *c, int dev, char *why, size_t why_size);

/* Copy n i32 values (or i64 when wide) from device memory into host
 * memory (caller-owned, n elements of int64_t), widening to int64. Used to
 * validate indices, slots and counts before a kernel touches anything. */
vt_status vt_rocm_read_indices(vt_backend_ctx *c, int dev, const void *src, int64_t n, bool wide, int64_t *dst,
                               char *why, size_t why_size);

/* Family tables, assembled by rocm_kernels.c. */
extern const vt_kernel vt_rocm_kernels_basic[];
extern const uint32_t vt_rocm_n_kernels_basic;
extern const vt_kernel vt_rocm_kernels_nn[];
extern const uint32_t vt_rocm_n_kernels_nn;
extern const vt_kernel vt_rocm_kernels_quant[];
extern const uint32_t vt_rocm_n_kernels_quant;
extern const vt_kernel vt_rocm_kernels_select[];
extern const uint32_t vt_rocm_n_kernels_select;

#endif
