/* rocm_launch.h - extern "C" launchers of the rocm backend's kernels.
 * Each queues its kernel on stream and returns the launch status; the
 * caller checks shapes (the core did) and synchronises when it must. */
#ifndef VT_ROCM_LAUNCH_H
#define VT_ROCM_LAUNCH_H

#include <stdint.h>

#include "vt_hip.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dst[i] = cast(src[i]) for n elements; dtypes f32 (0), f16 (1), bf16 (30). */
hipError_t vt_rocm_launch_cast(const void *src, uint32_t src_dtype, void *dst, uint32_t dst_dtype, int64_t n,
                               hipStream_t stream);

/* y[i] = a[i] + b[i % nb] for n f32 elements. */
hipError_t vt_rocm_launch_add_f32(const float *a, const float *b, float *y, int64_t n, int64_t nb, hipStream_t stream);

/* y[r, c] = sum_i x[r, i] * W[c, i]; x f32 [n, k], W f32/f16/bf16 [m, k]. */
hipError_t vt_rocm_launch_matmul_dense(const float *x, const void *w, uint32_t w_dtype, float *y, int64_t n, int64_t m,
                                       int64_t k, hipStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
