// kernels_rows.hip - ops over the last axis of the rocm backend: RmsNorm,
// L2Norm, GatedRmsNorm, Softmax (and the scan that refuses its +inf
// logits) and Rope. One block per row; reductions through shared memory in
// a fixed order, whatever the warp size.
#include "rocm_device.h"
#include "rocm_launch.h"

namespace
{

__global__ void norm_kernel(int kind, const float *x, const float *w, const float *z, float *y, int64_t rows, int64_t n,
                            float eps)
{
    __shared__ float shm[VT_ROCM_BLOCK];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const float *xr = x + r * n;
        float ss = 0.0f;
        for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
            ss += xr[j] * xr[j];
        ss = vt_block_sum(ss, shm);
        float inv = kind == VT_ROCM_NORM_L2 ? 1.0f / sqrtf(ss + eps) : 1.0f / sqrtf(ss / (float)n + eps);
        for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
            float v = xr[j] * inv;
            if (w)
                v *= w[j];
            if (kind == VT_ROCM_NORM_GATED)
                v *= vt_silu(z[r * n + j]);
            y[r * n + j] = v;
        }
    }
}

__global__ void softmax_kernel(const float *x, const float *mask, int64_t mask_elems, float *y, int64_t rows, int64_t n,
                               float scale)
{
    __shared__ float shm[VT_ROCM_BLOCK];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        float mx = -INFINITY;
        for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
            float v = x[r * n + j] * scale + (mask ? mask[(r * n + j) % mask_elems] : 0.0f);
            mx = fmaxf(mx, v);
        }
        mx = vt_block_max(mx, shm);
        if (mx == -INFINITY) { // every entry masked: zeros
            for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
                y[r * n + j] = 0.0f;
            continue;
        }
        float sum = 0.0f;
        for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
            float v = x[r * n + j] * scale + (mask ? mask[(r * n + j) % mask_elems] : 0.0f);
            float e = expf(v - mx);
            y[r * n + j] = e;
            sum += e;
        }
        sum = vt_block_sum(sum, shm);
        float inv = 1.0f / sum;
        for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
            y[r * n + j] *= inv;
    }
}

// Softmax's +inf refusal, one block per row: the first index whose logit
// x*scale + mask is +inf, or NaN from infinite operands (the row would be
// NaN), and its kind (0 x is +inf, 1 the mask is, 2 the logit is +inf, 3
// it is NaN) over rows [row0, row0 + rows); the first offence in
// row-major order wins through atomicMin on
// ((row - row0) << 34 | index << 2 | kind).
__global__ void softmax_scan_kernel(const float *x, const float *mask, int64_t mask_elems, int64_t row0, int64_t rows,
                                    int64_t n, float scale, unsigned long long *err)
{
    __shared__ int64_t shm[VT_ROCM_BLOCK];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const int64_t base = (row0 + r) * n;
        int64_t first = n;
        for (int64_t j = threadIdx.x; j < n && first == n; j += blockDim.x) {
            float xv = x[base + j], m = mask ? mask[(base + j) % mask_elems] : 0.0f, v = xv * scale + m;
            if (xv == INFINITY || m == INFINITY || v == INFINITY || (v != v && xv == xv && m == m))
                first = j; // a thread's indices rise: its first offence is its least
        }
        shm[threadIdx.x] = first;
        __syncthreads();
        for (int s = VT_ROCM_BLOCK / 2; s > 0; s >>= 1) {
            if ((int)threadIdx.x < s && shm[threadIdx.x + s] < shm[threadIdx.x])
                shm[threadIdx.x] = shm[threadIdx.x + s];
            __syncthreads();
        }
        first = shm[0];
        __syncthreads();
        if (threadIdx.x == 0 && first < n) {
            float xv = x[base + first], m = mask ? mask[(base + first) % mask_elems] : 0.0f, v = xv * scale + m;
            unsigned long long kind = xv == INFINITY ? 0 : m == INFINITY ? 1 : v == INFINITY ? 2 : 3;
            atomicMin(err, ((unsigned long long)r << 34) | ((unsigned long long)first << 2) | kind);
        }
    }
}

__global__ void rope_kernel(const float *x, const int32_t *pos, float *y, int64_t T, int64_t H, int64_t d,
                            int32_t n_rot, float theta, int neox)
{
    int64_t total = T * H * d, stride = (int64_t)gridDim.x * blockDim.x;
    int64_t half = n_rot / 2;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
        int64_t c = e % d, t = e / (H * d);
        if (c >= n_rot) {
            y[e] = x[e];
            continue;
        }
        int64_t i, c0, c1;
        if (neox) {
            i = c < half ? c : c - half;
            c0 = i;
            c1 = i + half;
        } else {
            i = c / 2;
            c0 = 2 * i;
            c1 = 2 * i + 1;
        }
        double angle = (double)pos[t] * pow((double)theta, -2.0 * (double)i / (double)n_rot);
        double sn, cs;
        sincos(angle, &sn, &cs);
        int64_t base = e - c;
        double x0 = x[base + c0], x1 = x[base + c1];
        y[e] = (float)(c == c0 ? x0 * cs - x1 * sn : x0 * sn + x1 * cs);
    }
}

unsigned row_grid(int64_t rows)
{
    return (unsigned)(rows < 65535 ? (rows > 0 ? rows : 1) : 65535);
}

} // namespace

extern "C" hipError_t vt_rocm_launch_norm(int kind, const float *x, const float *w, const float *z, float *y,
                                          int64_t rows, int64_t n, float eps, hipStream_t stream)
{
    if (rows <= 0 || n <= 0)
        return hipSuccess;
    hipLaunchKernelGGL(norm_kernel, dim3(row_grid(rows)), dim3(VT_ROCM_BLOCK), 0, stream, kind, x, w, z, y, rows, n,
                       eps);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_softmax(const float *x, const float *mask, int64_t mask_elems, float *y,
                                             int64_t rows, int64_t n, float scale, hipStream_t stream)
{
    if (rows <= 0 || n <= 0)
        return hipSuccess;
    hipLaunchKernelGGL(softmax_kernel, dim3(row_grid(rows)), dim3(VT_ROCM_BLOCK), 0, stream, x, mask,
                       mask_elems > 0 ? mask_elems : 1, y, rows, n, scale);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_softmax_scan(const float *x, const float *mask, int64_t mask_elems, int64_t row0,
                                                  int64_t rows, int64_t n, float scale, unsigned long long *err,
                                                  hipStream_t stream)
{
    if (rows <= 0 || n <= 0)
        return hipSuccess;
    hipLaunchKernelGGL(softmax_scan_kernel, dim3(row_grid(rows)), dim3(VT_ROCM_BLOCK), 0, stream, x, mask,
                       mask_elems > 0 ? mask_elems : 1, row0, rows, n, scale, err);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_rope(const float *x, const int32_t *pos, float *y, int64_t T, int64_t H, int64_t d,
                                          int32_t n_rot, float theta, int neox, hipStream_t stream)
{
    int64_t total = T * H * d;
    if (total <= 0)
        return hipSuccess;
    hipLaunchKernelGGL(rope_kernel, dim3(vt_grid_for(total, VT_ROCM_BLOCK)), dim3(VT_ROCM_BLOCK), 0, stream, x, pos, y,
                       T, H, d, n_rot, theta, neox);
    return hipGetLastError();
}
