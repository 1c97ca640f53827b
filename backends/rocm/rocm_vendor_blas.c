/* rocm_vendor_blas.c - dense f16/bf16 MatMul through cuBLASLt, built only
 * with configure --with-vendor-blas on NVIDIA (VT_VENDOR_BLAS); otherwise
 * the route takes nothing. x is rounded to the weight's type (SPEC 7's
 * 1e-2 for f16/bf16 operands; not token-exact against the cpu oracle the
 * way the project's kernel is), the sums and y stay f32. */
#include "config.h"

#include "rocm_launch.h"
#include "rocm_vendor_blas.h"

#include <vt/vt_dtype.h>

#if defined(VT_VENDOR_BLAS) && defined(VT_HIP_PLATFORM_NVIDIA)
#include <pthread.h>

/* cublasLt.h declares functions with empty parameter lists */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <cublasLt.h>
#pragma GCC diagnostic pop

#define VENDOR_WORKSPACE (32ull << 20)
#define VENDOR_MIN_N     64

static cublasLtHandle_t vendor_handle;
static cublasStatus_t vendor_create_status = CUBLAS_STATUS_NOT_INITIALIZED;
static pthread_once_t vendor_once = PTHREAD_ONCE_INIT;

/* The process's cuBLASLt handle (kept until exit: it holds no device memory). */
static void vendor_create(void)
{
    vendor_create_status = cublasLtCreate(&vendor_handle);
}

static uint64_t x_bytes(int64_t n, int64_t k)
{
    return ((uint64_t)n * (uint64_t)k * 2 + 255) / 256 * 256;
}

uint64_t vt_rocm_vendor_gemm_scratch_bytes(uint32_t w_dtype, int64_t n, int64_t m, int64_t k)
{
    if ((w_dtype != VT_F16 && w_dtype != VT_BF16) || n < VENDOR_MIN_N || m <= 0 || k <= 0 || k % 8 != 0)
        return 0;
    return x_bytes(n, k) + VENDOR_WORKSPACE;
}

hipError_t vt_rocm_vendor_gemm(const float *x, const void *w, uint32_t w_dtype, float *y, int64_t n, int64_t m,
                               int64_t k, void *scratch, hipStream_t stream)
{
    pthread_once(&vendor_once, vendor_create);
    if (vendor_create_status != CUBLAS_STATUS_SUCCESS)
        return cudaErrorNotSupported;
    hipError_t e = vt_rocm_launch_cast(x, VT_F32, scratch, w_dtype, n * k, stream);
    if (e != hipSuccess)
        return e;
    const cudaDataType_t t = w_dtype == VT_F16 ? CUDA_R_16F : CUDA_R_16BF;
    cublasLtMatmulDesc_t op = NULL;
    cublasLtMatrixLayout_t la = NULL, lb = NULL, ld = NULL;
    const cublasOperation_t trans = CUBLAS_OP_T;
    /* column-major: D (m x n) = W^T-view (m x k, stored k x m) times x (k x n) */
    cublasStatus_t s = cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof trans);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatrixLayoutCreate(&la, t, (uint64_t)k, (uint64_t)m, k);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatrixLayoutCreate(&lb, t, (uint64_t)k, (uint64_t)n, k);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, (uint64_t)m, (uint64_t)n, m);
    const float one = 1.0f, zero = 0.0f;
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmul(vendor_handle, op, &one, w, la, scratch, lb, &zero, y, ld, y, ld, NULL,
                           (char *)scratch + x_bytes(n, k), VENDOR_WORKSPACE, stream);
    if (ld)
        cublasLtMatrixLayoutDestroy(ld);
    if (lb)
        cublasLtMatrixLayoutDestroy(lb);
    if (la)
        cublasLtMatrixLayoutDestroy(la);
    if (op)
        cublasLtMatmulDescDestroy(op);
    return s == CUBLAS_STATUS_SUCCESS ? hipSuccess : cudaErrorLaunchFailure;
}

#else

uint64_t vt_rocm_vendor_gemm_scratch_bytes(uint32_t w_dtype, int64_t n, int64_t m, int64_t k)
{
    (void)w_dtype, (void)n, (void)m, (void)k;
    return 0;
}

hipError_t vt_rocm_vendor_gemm(const float *x, const void *w, uint32_t w_dtype, float *y, int64_t n, int64_t m,
                               int64_t k, void *scratch, hipStream_t stream)
{
    (void)x, (void)w, (void)w_dtype, (void)y, (void)n, (void)m, (void)k, (void)scratch, (void)stream;
    return hipErrorInvalidValue;
}

#endif
