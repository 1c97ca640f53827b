/* rocm_vendor_blas.h - the optional vendor-library route of dense f16/bf16
 * MatMul (configure --with-vendor-blas: cuBLASLt on NVIDIA builds). Off by
 * default; the project's GEMM kernel (kernels_gemm.hip) is the tested path. */
#ifndef VT_ROCM_VENDOR_BLAS_H
#define VT_ROCM_VENDOR_BLAS_H

#include <stdint.h>

#include "vt_hip.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Scratch bytes the vendor route needs for y[n,m] = x[n,k] W[m,k]^T (x
 * rounded to the weight's type, and the library's workspace); 0 when the
 * build has no vendor route or it does not take (w_dtype, n, m, k). */
uint64_t vt_rocm_vendor_gemm_scratch_bytes(uint32_t w_dtype, int64_t n, int64_t m, int64_t k);

/* Queue the product on stream through the vendor library (x rounded to the
 * weight's type into scratch, f32 sums and output). Only call it when the
 * scratch size above is non-zero. */
hipError_t vt_rocm_vendor_gemm(const float *x, const void *w, uint32_t w_dtype, float *y, int64_t n, int64_t m,
                               int64_t k, void *scratch, hipStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* VT_ROCM_VENDOR_BLAS_H */
