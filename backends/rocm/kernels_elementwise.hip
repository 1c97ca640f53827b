// kernels_elementwise.hip - elementwise f32 ops of the rocm backend: Add, Scale,
// Silu, Gelu, Sigmoid, Mul, SwiGlu, GdnGate, and MoeCombine (Add, Mul and
// SwiGlu of same-shape aligned operands in float4s).
#include "rocm_device.h"
#include "rocm_launch.h"

namespace
{

__global__ void unary_kernel(int kind, const float *x, float *y, int64_t n, float s)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = x[i];
        float r;
        switch (kind) {
        case VT_ROCM_UNARY_SCALE: r = v * s; break;
        case VT_ROCM_UNARY_SILU: r = vt_silu(v); break;
        case VT_ROCM_UNARY_GELU: {
            const float c = 0.7978845608028654f; // sqrt(2/pi)
            r = 0.5f * v * (1.0f + tanhf(c * (v + 0.044715f * v * v * v)));
            break;
        }
        default: r = 1.0f / (1.0f + expf(-v)); break;
        }
        y[i] = r;
    }
}

__global__ void mul_kernel(const float *a, const float *b, float *y, int64_t n, int64_t nb)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = a[i] * b[i % nb];
}

__global__ void swiglu_kernel(const float *g, const float *u, float *y, int64_t n)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = vt_silu(g[i]) * u[i];
}

// softplus(v) = log(1 + exp(v)), exactly, without overflow for large v.
__device__ inline float softplus(float v)
{
    return v > 0.0f ? v + log1pf(expf(-v)) : log1pf(expf(v));
}

__global__ void gdn_gate_kernel(const float *a, const float *dt_bias, const float *A, const float *b, float *g,
                                float *beta, int64_t n, int64_t H)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        int64_t h = i % H;
        g[i] = A[h] * softplus(a[i] + dt_bias[h]);
        beta[i] = 1.0f / (1.0f + expf(-b[i]));
    }
}

__global__ void moe_combine_kernel(const float *h, const float *w, float *y, int64_t T, int64_t K, int64_t m)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; o < T * m; o += stride) {
        int64_t t = o / m, j = o % m;
        float acc = 0.0f;
        for (int64_t i = 0; i < K; i++)
            acc += w[t * K + i] * h[(t * K + i) * m + j];
        y[o] = acc;
    }
}

__global__ void add_f32_kernel(const float *a, const float *b, float *y, int64_t n, int64_t nb)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = a[i] + b[i % nb];
}

// Add, Mul and SwiGlu over operands of the same n elements that are whole,
// 16-byte aligned float4s (the decode step's residual adds and FFN gate):
// one float4 per thread, no index modulo. OP: 0 add, 1 mul, 2 swiglu.
template <int OP> __global__ void binary4_kernel(const float4 *a, const float4 *b, float4 *y, int64_t n4)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        float4 u = a[i], v = b[i], r;
        if (OP == 0)
            r = make_float4(u.x + v.x, u.y + v.y, u.z + v.z, u.w + v.w);
        else if (OP == 1)
            r = make_float4(u.x * v.x, u.y * v.y, u.z * v.z, u.w * v.w);
        else
            r = make_float4(vt_silu(u.x) * v.x, vt_silu(u.y) * v.y, vt_silu(u.z) * v.z, vt_silu(u.w) * v.w);
        y[i] = r;
    }
}

// Whether the float4 form takes n elements of a, b and y.
bool takes4(const void *a, const void *b, const void *y, int64_t n, int64_t nb)
{
    return n == nb && n % 4 == 0 && (((uintptr_t)a | (uintptr_t)b | (uintptr_t)y) & 15) == 0;
}

template <int OP> hipError_t launch4(const float *a, const float *b, float *y, int64_t n, hipStream_t stream)
{
    VT_LAUNCH_CHAINED(binary4_kernel<OP>, dim3(vt_grid_for(n / 4, VT_ROCM_BLOCK)), dim3(VT_ROCM_BLOCK), 0, stream,
                      (const float4 *)a, (const float4 *)b, (float4 *)y, n / 4);
    return hipGetLastError();
}

} // namespace

extern "C" hipError_t vt_rocm_launch_unary(int kind, const float *x, float *y, int64_t n, float s, hipStream_t stream)
{
    if (n <= 0)
        return hipSuccess;
    VT_LAUNCH_CHAINED(unary_kernel, dim3(vt_grid_for(n, VT_ROCM_BLOCK)), dim3(VT_ROCM_BLOCK), 0, stream, kind, x, y, n,
                      s);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_mul_f32(const float *a, const float *b, float *y, int64_t n, int64_t nb,
                                             hipStream_t stream)
{
    if (n <= 0 || nb <= 0)
        return hipSuccess;
    if (takes4(a, b, y, n, nb))
        return launch4<1>(a, b, y, n, stream);
    VT_LAUNCH_CHAINED(mul_kernel, dim3(vt_grid_for(n, VT_ROCM_BLOCK)), dim3(VT_ROCM_BLOCK), 0, stream, a, b, y, n, nb);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_swiglu(const float *g, const float *u, float *y, int64_t n, hipStream_t stream)
{
    if (n <= 0)
        return hipSuccess;
    if (takes4(g, u, y, n, n))
        return launch4<2>(g, u, y, n, stream);
    VT_LAUNCH_CHAINED(swiglu_kernel, dim3(vt_grid_for(n, VT_ROCM_BLOCK)), dim3(VT_ROCM_BLOCK), 0, stream, g, u, y, n);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_gdn_gate(const float *a, const float *dt_bias, const float *A, const float *b,
                                              float *g, float *beta, int64_t n, int64_t H, hipStream_t stream)
{
    if (n <= 0 || H <= 0)
        return hipSuccess;
    VT_LAUNCH_CHAINED(gdn_gate_kernel, dim3(vt_grid_for(n, VT_ROCM_BLOCK)), dim3(VT_ROCM_BLOCK), 0, stream, a, dt_bias,
                      A, b, g, beta, n, H);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_moe_combine(const float *h, const float *w, float *y, int64_t T, int64_t K,
                                                 int64_t m, hipStream_t stream)
{
    if (T <= 0 || m <= 0)
        return hipSuccess;
    VT_LAUNCH_CHAINED(moe_combine_kernel, dim3(vt_grid_for(T * m, VT_ROCM_BLOCK)), dim3(VT_ROCM_BLOCK), 0, stream, h, w,
                      y, T, K, m);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_add_f32(const float *a, const float *b, float *y, int64_t n, int64_t nb,
                                             hipStream_t stream)
{
    if (n <= 0 || nb <= 0)
        return hipSuccess;
    if (takes4(a, b, y, n, nb))
        return launch4<0>(a, b, y, n, stream);
    VT_LAUNCH_CHAINED(add_f32_kernel, dim3(vt_grid_for(n, VT_ROCM_BLOCK)), dim3(VT_ROCM_BLOCK), 0, stream, a, b, y, n,
                      nb);
    return hipGetLastError();
}
