// kernels_rows.hip - ops over the last axis of the rocm backend: RmsNorm,
// L2Norm, GatedRmsNorm, Softmax (and the scan that refuses its +inf
// logits) and Rope. One block per row; reductions in a fixed order,
// through shared memory or (the norms of few long rows) a butterfly over
// each wavefront of the target's width and then the wavefronts' sums.
#include "rocm_device.h"
#include "rocm_launch.h"

namespace
{

__global__ void norm_kernel(int kind, const float *x, const float *w, const float *z, float *y, int64_t rows, int64_t n,
                            float eps)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
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

// The same norms for long rows (a hidden state of a decode step): one
// block of NORM_WIDE threads per row, 16-byte loads when the row is whole
// float4s (VEC), so a row of 4096 is one load per thread per pass.
#define NORM_WIDE 1024
template <bool VEC>
__global__ void norm_wide_kernel(int kind, const float *x, const float *w, const float *z, float *y, int64_t rows,
                                 int64_t n, float eps)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    __shared__ float shm[NORM_WIDE];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const float *xr = x + r * n;
        float ss = 0.0f;
        if (VEC) {
            for (int64_t j = threadIdx.x; j < n / 4; j += NORM_WIDE) {
                float4 v = ((const float4 *)xr)[j];
                ss += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
            }
        } else {
            for (int64_t j = threadIdx.x; j < n; j += NORM_WIDE)
                ss += xr[j] * xr[j];
        }
        shm[threadIdx.x] = ss;
        __syncthreads();
        for (int st = NORM_WIDE / 2; st > 0; st >>= 1) {
            if ((int)threadIdx.x < st)
                shm[threadIdx.x] += shm[threadIdx.x + st];
            __syncthreads();
        }
        ss = shm[0];
        __syncthreads();
        float inv = kind == VT_ROCM_NORM_L2 ? 1.0f / sqrtf(ss + eps) : 1.0f / sqrtf(ss / (float)n + eps);
        for (int64_t j = threadIdx.x; j < (VEC ? n / 4 : n); j += NORM_WIDE) {
            int c = VEC ? 4 : 1;
            for (int u = 0; u < c; u++) {
                int64_t i = VEC ? 4 * j + u : j;
                float v = xr[i] * inv;
                if (w)
                    v *= w[i];
                if (kind == VT_ROCM_NORM_GATED)
                    v *= vt_silu(z[r * n + i]);
                y[r * n + i] = v;
            }
        }
    }
}

// Sum over the lanes of a wavefront by a butterfly: every lane ends with
// the same bits (each step adds the same two partial sums on both sides).
__device__ inline float wave_sum(float v)
{
    for (int s = VT_ROCM_WAVE / 2; s > 0; s >>= 1)
        v += __shfl_xor(v, s, VT_ROCM_WAVE);
    return v;
}

// The scale a norm multiplies x by, from the row's sum of squares.
__device__ inline float norm_scale(int kind, float ss, int64_t n, float eps)
{
    return kind == VT_ROCM_NORM_L2 ? 1.0f / sqrtf(ss + eps) : 1.0f / sqrtf(ss / (float)n + eps);
}

// The norms for few long rows (a hidden state of a decode step) whose
// operands are whole float4s: VT_ROCM_BLOCK threads per row, each holding
// its NV float4s of x (and of w) in registers from one round of 16-byte
// loads, so x is read once and w's loads overlap the reduction; the sum
// goes through the wavefronts (butterfly) and then, in a fixed order, the
// wavefronts' partial sums.
template <int NV>
__global__ void norm_reg_kernel(int kind, const float *x, const float *w, const float *z, float *y, int64_t rows,
                                int64_t n, float eps)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    __shared__ float part[VT_ROCM_BLOCK / VT_ROCM_WAVE];
    const int64_t n4 = n / 4;
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const float4 *xr = (const float4 *)(x + r * n);
        float4 v[NV], g[NV];
        float ss = 0.0f;
#pragma unroll
        for (int u = 0; u < NV; u++) {
            const int64_t j = threadIdx.x + (int64_t)u * VT_ROCM_BLOCK;
            v[u] = j < n4 ? xr[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            g[u] = w && j < n4 ? ((const float4 *)w)[j] : make_float4(1.0f, 1.0f, 1.0f, 1.0f);
            ss += v[u].x * v[u].x + v[u].y * v[u].y + v[u].z * v[u].z + v[u].w * v[u].w;
        }
        ss = wave_sum(ss);
        if (threadIdx.x % VT_ROCM_WAVE == 0)
            part[threadIdx.x / VT_ROCM_WAVE] = ss;
        __syncthreads();
        ss = 0.0f;
        for (int i = 0; i < VT_ROCM_BLOCK / VT_ROCM_WAVE; i++)
            ss += part[i];
        __syncthreads(); // part is rewritten for the next row
        const float inv = norm_scale(kind, ss, n, eps);
#pragma unroll
        for (int u = 0; u < NV; u++) {
            const int64_t j = threadIdx.x + (int64_t)u * VT_ROCM_BLOCK;
            if (j >= n4)
                continue;
            float4 o = make_float4(v[u].x * inv, v[u].y * inv, v[u].z * inv, v[u].w * inv);
            if (w) {
                o.x *= g[u].x;
                o.y *= g[u].y;
                o.z *= g[u].z;
                o.w *= g[u].w;
            }
            if (kind == VT_ROCM_NORM_GATED) {
                float4 zz = ((const float4 *)(z + r * n))[j];
                o.x *= vt_silu(zz.x);
                o.y *= vt_silu(zz.y);
                o.z *= vt_silu(zz.z);
                o.w *= vt_silu(zz.w);
            }
            ((float4 *)(y + r * n))[j] = o;
        }
    }
}

__global__ void softmax_kernel(const float *x, const float *mask, int64_t mask_elems, float *y, int64_t rows, int64_t n,
                               float scale, const vt_rocm_err *err)
{
    __shared__ float shm[VT_ROCM_BLOCK];
    if (err && err->code) // the scan before refused the call (or the queue has failed): write nothing
        return;
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
// ((row - row0) << 34 | index << 2 | kind) in err->scan.
__global__ void softmax_scan_kernel(const float *x, const float *mask, int64_t mask_elems, int64_t row0, int64_t rows,
                                    int64_t n, float scale, vt_rocm_err *err, uint32_t op)
{
    __shared__ int64_t shm[VT_ROCM_BLOCK];
    __shared__ bool last;
    unsigned long long best = ~0ull;
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
            unsigned long long code = ((unsigned long long)r << 34) | ((unsigned long long)first << 2) | kind;
            if (code < best)
                best = code;
        }
    }
    // The block's first offence, then the last block to finish reports
    // the call's first into the queue's error word.
    if (threadIdx.x == 0) {
        if (best != ~0ull)
            atomicMin(&err->scan, best);
        __threadfence();
        last = atomicAdd(&err->blocks_done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last || threadIdx.x != 0)
        return;
    unsigned long long w = atomicExch(&err->scan, ~0ull);
    err->blocks_done = 0;
    if (w == ~0ull)
        return;
    int64_t r = row0 + (int64_t)(w >> 34), i = (int64_t)((w >> 2) & 0xffffffffu);
    uint32_t kind = (uint32_t)(w & 3);
    int64_t mi = mask_elems >= n ? (r * n + i) % mask_elems : 0;
    vt_rocm_err_set(err, VT_ROCM_ERR_SOFTMAX_X_INF + kind, op, VT_ROCM_NAME_X, r, i, mi, 0);
}

// Softmax and its +inf scan for few long rows (a vocabulary row): nb
// blocks per row, each over a slice of per elements.
__device__ inline float softmax_logit(const float *x, const float *mask, int64_t mask_elems, int64_t e, float scale)
{
    return x[e] * scale + (mask ? mask[e % mask_elems] : 0.0f);
}

// The scan of softmax_scan_kernel over slices: the same codes, so the
// minimum over the blocks is the same first offence.
__global__ void softmax_scan_split_kernel(const float *x, const float *mask, int64_t mask_elems, int64_t n, int64_t nb,
                                          float scale, vt_rocm_err *err, uint32_t op)
{
    __shared__ int64_t shm[VT_ROCM_BLOCK];
    __shared__ bool last;
    int64_t r = blockIdx.x / nb, per = (n + nb - 1) / nb, i0 = (blockIdx.x % nb) * per;
    int64_t i1 = i0 + per < n ? i0 + per : n, first = n;
    for (int64_t j = i0 + threadIdx.x; j < i1 && first == n; j += blockDim.x) {
        float xv = x[r * n + j], m = mask ? mask[(r * n + j) % mask_elems] : 0.0f, v = xv * scale + m;
        if (xv == INFINITY || m == INFINITY || v == INFINITY || (v != v && xv == xv && m == m))
            first = j;
    }
    shm[threadIdx.x] = first;
    __syncthreads();
    for (int st = VT_ROCM_BLOCK / 2; st > 0; st >>= 1) {
        if ((int)threadIdx.x < st && shm[threadIdx.x + st] < shm[threadIdx.x])
            shm[threadIdx.x] = shm[threadIdx.x + st];
        __syncthreads();
    }
    first = shm[0];
    if (threadIdx.x == 0) {
        if (first < n) {
            float xv = x[r * n + first], m = mask ? mask[(r * n + first) % mask_elems] : 0.0f, v = xv * scale + m;
            unsigned long long kind = xv == INFINITY ? 0 : m == INFINITY ? 1 : v == INFINITY ? 2 : 3;
            atomicMin(&err->scan, ((unsigned long long)r << 34) | ((unsigned long long)first << 2) | kind);
        }
        __threadfence();
        last = atomicAdd(&err->blocks_done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last || threadIdx.x != 0)
        return;
    unsigned long long w = atomicExch(&err->scan, ~0ull);
    err->blocks_done = 0;
    if (w == ~0ull)
        return;
    int64_t rr = (int64_t)(w >> 34), i = (int64_t)((w >> 2) & 0xffffffffu);
    uint32_t kind = (uint32_t)(w & 3);
    int64_t mi = mask_elems >= n ? (rr * n + i) % mask_elems : 0;
    vt_rocm_err_set(err, VT_ROCM_ERR_SOFTMAX_X_INF + kind, op, VT_ROCM_NAME_X, rr, i, mi, 0);
}

// Pass 1: each slice's maximum m and sum of e^(v - m) into part[row][slice].
__global__ void softmax_part_kernel(const float *x, const float *mask, int64_t mask_elems, int64_t n, int64_t nb,
                                    float scale, float2 *part, const vt_rocm_err *err)
{
    __shared__ float shm[VT_ROCM_BLOCK];
    if (err && err->code)
        return;
    int64_t r = blockIdx.x / nb, per = (n + nb - 1) / nb, i0 = (blockIdx.x % nb) * per;
    int64_t i1 = i0 + per < n ? i0 + per : n;
    float mx = -INFINITY;
    for (int64_t j = i0 + threadIdx.x; j < i1; j += blockDim.x)
        mx = fmaxf(mx, softmax_logit(x, mask, mask_elems, r * n + j, scale));
    mx = vt_block_max(mx, shm);
    float sum = 0.0f;
    if (mx != -INFINITY)
        for (int64_t j = i0 + threadIdx.x; j < i1; j += blockDim.x)
            sum += expf(softmax_logit(x, mask, mask_elems, r * n + j, scale) - mx);
    sum = vt_block_sum(sum, shm);
    if (threadIdx.x == 0)
        part[blockIdx.x] = make_float2(mx, sum);
}

// Pass 2: the row's maximum and sum from its slices (every block the same
// way), then y = e^(v - M) / S over this block's slice; zeros when every
// logit of the row is -inf.
__global__ void softmax_apply_kernel(const float *x, const float *mask, int64_t mask_elems, float *y, int64_t n,
                                     int64_t nb, float scale, const float2 *part, const vt_rocm_err *err)
{
    __shared__ float red[2];
    if (err && err->code)
        return;
    int64_t r = blockIdx.x / nb, per = (n + nb - 1) / nb, i0 = (blockIdx.x % nb) * per;
    int64_t i1 = i0 + per < n ? i0 + per : n;
    if (threadIdx.x == 0) {
        const float2 *pr = part + r * nb;
        float M = -INFINITY, S = 0.0f;
        for (int64_t b = 0; b < nb; b++)
            M = fmaxf(M, pr[b].x);
        for (int64_t b = 0; M != -INFINITY && b < nb; b++)
            if (pr[b].x != -INFINITY)
                S += pr[b].y * expf(pr[b].x - M);
        red[0] = M;
        red[1] = S;
    }
    __syncthreads();
    float M = red[0], inv = 1.0f / red[1];
    for (int64_t j = i0 + threadIdx.x; j < i1; j += blockDim.x) {
        int64_t e = r * n + j;
        y[e] = M == -INFINITY ? 0.0f : expf(softmax_logit(x, mask, mask_elems, e, scale) - M) * inv;
    }
}

#define ROPE_TABLE_MAX 4096 // rotated dims whose table (n_rot / 2 x 16 bytes) rope_kernel keeps in shared memory

// Rope one element per thread, each evaluating its pair's angle: for a
// table of cosines and sines too large for shared memory (n_rot > 4096).
__global__ void rope_elem_kernel(const float *x, const int32_t *pos, float *y, int64_t T, int64_t H, int64_t d,
                                 int32_t n_rot, float theta, int neox)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    int64_t total = T * H * d, stride = (int64_t)gridDim.x * blockDim.x;
    int64_t half = n_rot / 2;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
        int64_t c = e % d, t = e / (H * d);
        if (c >= n_rot) {
            y[e] = x[e];
            continue;
        }
        int64_t i = neox ? (c < half ? c : c - half) : c / 2;
        int64_t c0 = neox ? i : 2 * i, c1 = neox ? i + half : 2 * i + 1;
        double angle = (double)pos[t] * pow((double)theta, -2.0 * (double)i / (double)n_rot);
        double sn, cs;
        sincos(angle, &sn, &cs);
        int64_t base = e - c;
        double x0 = x[base + c0], x1 = x[base + c1];
        y[e] = (float)(c == c0 ? x0 * cs - x1 * sn : x0 * sn + x1 * cs);
    }
}

// Rope: one block per (token, group of heads). The block first puts the
// cosine and sine of each pair's angle (in double, as one thread per
// element computed them before) into shared memory, so each angle is
// evaluated once per token and block instead of once per element; the
// rotation is the same double expression, so y is unchanged bit for bit.
__global__ void rope_kernel(const float *x, const int32_t *pos, float *y, int64_t T, int64_t H, int64_t d,
                            int32_t n_rot, float theta, int neox, int64_t heads_per_block)
{
    vt_chain_begin();                 /* chained launch: before any memory access (rocm_chain.h) */
    extern __shared__ double cs_sn[]; // cs[half], then sn[half]
    const int64_t half = n_rot / 2, groups = (H + heads_per_block - 1) / heads_per_block;
    double *cs = cs_sn, *sn = cs_sn + half;
    for (int64_t b = blockIdx.x; b < T * groups; b += gridDim.x) {
        const int64_t t = b / groups, h0 = (b % groups) * heads_per_block;
        const int64_t h1 = h0 + heads_per_block < H ? h0 + heads_per_block : H;
        for (int64_t i = threadIdx.x; i < half; i += blockDim.x) {
            double angle = (double)pos[t] * pow((double)theta, -2.0 * (double)i / (double)n_rot);
            sincos(angle, &sn[i], &cs[i]);
        }
        __syncthreads();
        const float *xt = x + (t * H + h0) * d;
        float *yt = y + (t * H + h0) * d;
        for (int64_t e = threadIdx.x; e < (h1 - h0) * d; e += blockDim.x) {
            int64_t c = e % d;
            if (c >= n_rot) {
                yt[e] = xt[e];
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
            int64_t base = e - c;
            double x0 = xt[base + c0], x1 = xt[base + c1];
            yt[e] = (float)(c == c0 ? x0 * cs[i] - x1 * sn[i] : x0 * sn[i] + x1 * cs[i]);
        }
        __syncthreads(); // the table is rewritten for the next (token, group)
    }
}

unsigned row_grid(int64_t rows)
{
    return (unsigned)(rows < 65535 ? (rows > 0 ? rows : 1) : 65535);
}

} // namespace

// Whether p is 16-byte aligned (NULL is).
static bool aligned16(const void *p)
{
    return ((uintptr_t)p & 15) == 0;
}

extern "C" hipError_t vt_rocm_launch_norm(int kind, const float *x, const float *w, const float *z, float *y,
                                          int64_t rows, int64_t n, float eps, hipStream_t stream)
{
    if (rows <= 0 || n <= 0)
        return hipSuccess;
    if (n >= 2048 && rows <= 256) { // few long rows: a block per row
        const int64_t per_pass = 4 * VT_ROCM_BLOCK;
        if (n % 4 == 0 && n <= 8 * per_pass && aligned16(x) && aligned16(w) && aligned16(z) && aligned16(y)) {
            dim3 g(row_grid(rows)), b(VT_ROCM_BLOCK);
            if (n <= per_pass)
                VT_LAUNCH_CHAINED(norm_reg_kernel<1>, g, b, 0, stream, kind, x, w, z, y, rows, n, eps);
            else if (n <= 2 * per_pass)
                VT_LAUNCH_CHAINED(norm_reg_kernel<2>, g, b, 0, stream, kind, x, w, z, y, rows, n, eps);
            else if (n <= 4 * per_pass)
                VT_LAUNCH_CHAINED(norm_reg_kernel<4>, g, b, 0, stream, kind, x, w, z, y, rows, n, eps);
            else
                VT_LAUNCH_CHAINED(norm_reg_kernel<8>, g, b, 0, stream, kind, x, w, z, y, rows, n, eps);
        } else if (n % 4 == 0 && aligned16(x)) {
            VT_LAUNCH_CHAINED(norm_wide_kernel<true>, dim3(row_grid(rows)), dim3(NORM_WIDE), 0, stream, kind, x, w, z,
                              y, rows, n, eps);
        } else {
            VT_LAUNCH_CHAINED(norm_wide_kernel<false>, dim3(row_grid(rows)), dim3(NORM_WIDE), 0, stream, kind, x, w, z,
                              y, rows, n, eps);
        }
        return hipGetLastError();
    }
    VT_LAUNCH_CHAINED(norm_kernel, dim3(row_grid(rows)), dim3(VT_ROCM_BLOCK), 0, stream, kind, x, w, z, y, rows, n,
                      eps);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_softmax(const float *x, const float *mask, int64_t mask_elems, float *y,
                                             int64_t rows, int64_t n, float scale, const vt_rocm_err *err,
                                             hipStream_t stream)
{
    if (rows <= 0 || n <= 0)
        return hipSuccess;
    hipLaunchKernelGGL(softmax_kernel, dim3(row_grid(rows)), dim3(VT_ROCM_BLOCK), 0, stream, x, mask,
                       mask_elems > 0 ? mask_elems : 1, y, rows, n, scale, err);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_softmax_scan(const float *x, const float *mask, int64_t mask_elems, int64_t row0,
                                                  int64_t rows, int64_t n, float scale, vt_rocm_err *err, uint32_t op,
                                                  hipStream_t stream)
{
    if (rows <= 0 || n <= 0)
        return hipSuccess;
    hipLaunchKernelGGL(softmax_scan_kernel, dim3(row_grid(rows)), dim3(VT_ROCM_BLOCK), 0, stream, x, mask,
                       mask_elems > 0 ? mask_elems : 1, row0, rows, n, scale, err, op);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_softmax_split(const float *x, const float *mask, int64_t mask_elems, float *y,
                                                   int64_t rows, int64_t n, int64_t nb, float scale, void *part,
                                                   vt_rocm_err *err, uint32_t op, hipStream_t stream)
{
    if (rows <= 0 || n <= 0)
        return hipSuccess;
    int64_t me = mask_elems > 0 ? mask_elems : 1;
    dim3 grid((unsigned)(rows * nb)), block(VT_ROCM_BLOCK);
    hipLaunchKernelGGL(softmax_scan_split_kernel, grid, block, 0, stream, x, mask, me, n, nb, scale, err, op);
    hipError_t e = hipGetLastError();
    if (e != hipSuccess)
        return e;
    hipLaunchKernelGGL(softmax_part_kernel, grid, block, 0, stream, x, mask, me, n, nb, scale, (float2 *)part, err);
    e = hipGetLastError();
    if (e != hipSuccess)
        return e;
    hipLaunchKernelGGL(softmax_apply_kernel, grid, block, 0, stream, x, mask, me, y, n, nb, scale, (const float2 *)part,
                       err);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_rope(const float *x, const int32_t *pos, float *y, int64_t T, int64_t H, int64_t d,
                                          int32_t n_rot, float theta, int neox, hipStream_t stream)
{
    if (T * H * d <= 0)
        return hipSuccess;
    // About one element per thread (2 heads of 128 per block): with 8 heads
    // per block (4 elements per thread, dependent rounds of loads) the H200
    // took 6.0 us for 40 heads of 128, where one element per thread took 3.7
    // for 32. The table is n_rot/2 cosines and sines in shared memory (at
    // most 32 KiB).
    if (n_rot > ROPE_TABLE_MAX) {
        VT_LAUNCH_CHAINED(rope_elem_kernel, dim3(vt_grid_for(T * H * d, VT_ROCM_BLOCK)), dim3(VT_ROCM_BLOCK), 0, stream,
                          x, pos, y, T, H, d, n_rot, theta, neox);
        return hipGetLastError();
    }
    int64_t hpb = d >= VT_ROCM_BLOCK ? 1 : VT_ROCM_BLOCK / d;
    if (hpb > H)
        hpb = H;
    int64_t blocks = T * ((H + hpb - 1) / hpb);
    size_t shm = (size_t)(n_rot / 2 > 0 ? n_rot / 2 : 1) * 2 * sizeof(double);
    VT_LAUNCH_CHAINED(rope_kernel, dim3(vt_grid_for(blocks, 1)), dim3(VT_ROCM_BLOCK), shm, stream, x, pos, y, T, H, d,
                      n_rot, theta, neox, hpb);
    return hipGetLastError();
}
