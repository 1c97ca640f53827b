/* rocm_mmv.h - the decode MatMul on matrix instructions with x split once
 * per call into the call's scratch (kernels_mmv_mma.hip), for the matmul
 * family's C side (rocm_kernels_matmul.c). */
#ifndef VT_ROCM_MMV_H
#define VT_ROCM_MMV_H

#include "vt_hip.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Scratch bytes vt_rocm_launch_mmv_pre needs for n columns of x against W
 * [m, k] of w_dtype (0: that path does not take the product). */
uint64_t vt_rocm_mmv_pre_scratch_bytes(uint32_t w_dtype, int64_t n, int64_t m, int64_t k);

/* MatMul y = x W^T (n columns) with x split once into scratch (16-byte
 * aligned, vt_rocm_mmv_pre_scratch_bytes); *taken = 0 when the dtype,
 * shapes, alignments or device do not fit (the caller then launches the
 * other kernels). */
hipError_t vt_rocm_launch_mmv_pre(const float *x, const void *w, uint32_t w_dtype, float *y, int64_t n, int64_t m,
                                  int64_t k, void *scratch, hipStream_t stream, int *taken);

#ifdef __cplusplus
}
#endif

#endif
