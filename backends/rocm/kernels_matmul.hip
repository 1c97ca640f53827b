// kernels_matmul.hip - the matmul family of the rocm backend (SPEC 7):
// MatMul over f32/f16/bf16 or block-format weights and MoeExpertMatMul.
// The decode shapes go to the kernels of kernels_mmv.hip first; these take
// the rest. Block-format elements are decoded as the cpu oracle decodes them
// (rocm_quant.h); sums over k meet in a fixed order (a shuffle tree, or
// shared memory for the generic kernels). Nothing here assumes a warp size.
#include "rocm_device.h"
#include "rocm_launch.h"
#include "rocm_quant.h"

namespace
{

// One block per output element (grid-strided): each thread sums a strided
// slice of k, then a shared-memory tree adds the partial sums.
__global__ void matmul_dense_kernel(const float *x, const void *w, uint32_t wt, float *y, int64_t n, int64_t m,
                                    int64_t k)
{
    __shared__ float part[VT_ROCM_BLOCK];
    for (int64_t o = blockIdx.x; o < n * m; o += gridDim.x) {
        int64_t r = o / m, c = o % m;
        const float *xr = x + r * k;
        float acc = 0.0f;
        for (int64_t i = threadIdx.x; i < k; i += blockDim.x)
            acc += xr[i] * vt_dev_load(w, wt, c * k + i);
        part[threadIdx.x] = acc;
        __syncthreads();
        for (int s = VT_ROCM_BLOCK / 2; s > 0; s >>= 1) {
            if ((int)threadIdx.x < s)
                part[threadIdx.x] += part[threadIdx.x + s];
            __syncthreads();
        }
        if (threadIdx.x == 0)
            y[o] = part[0];
        __syncthreads();
    }
}

// The 16-byte vector v of weight type WT (f32, f16 or bf16) dotted with
// the floats at x (4 or 8 of them, 16-byte aligned).
template <uint32_t WT> __device__ inline float dot16(uint4 v, const float *x)
{
    const float4 a = *(const float4 *)x;
    if (WT == VT_F32)
        return __uint_as_float(v.x) * a.x + __uint_as_float(v.y) * a.y + __uint_as_float(v.z) * a.z +
               __uint_as_float(v.w) * a.w;
    const float4 b = *(const float4 *)(x + 4);
    const uint32_t u[4] = {v.x, v.y, v.z, v.w};
    const float xs[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const uint16_t lo = (uint16_t)(u[i] & 0xFFFF), hi = (uint16_t)(u[i] >> 16);
        const float flo = WT == VT_F16 ? vt_dev_f16_to_f32_fast(lo) : vt_bf16_to_f32(lo);
        const float fhi = WT == VT_F16 ? vt_dev_f16_to_f32_fast(hi) : vt_bf16_to_f32(hi);
        acc += flo * xs[2 * i] + fhi * xs[2 * i + 1];
    }
    return acc;
}

// Dense MatMul with 16-byte loads: one group of 32 lanes per output y[r, c]
// (grid-strided); lane l takes the vectors l, l + 32, ... of the row, and
// the partial sums meet over a fixed xor tree. Needs k a multiple of the
// vector and 16-byte aligned x and w (the launcher checks).
template <uint32_t WT>
__global__ void matmul_dense_rows_kernel(const float *x, const void *w, float *y, int64_t n, int64_t m, int64_t k)
{
    constexpr int V = WT == VT_F32 ? 4 : 8;
    const int lane = threadIdx.x & 31, groups = blockDim.x / 32;
    const int64_t vecs = k / V;
    for (int64_t o = (int64_t)blockIdx.x * groups + threadIdx.x / 32; o < n * m; o += (int64_t)gridDim.x * groups) {
        const int64_t r = o / m, c = o % m;
        const float *xr = x + r * k;
        const uint4 *wr = (const uint4 *)w + c * vecs;
        float acc = 0.0f;
        for (int64_t v = lane; v < vecs; v += 32)
            acc += dot16<WT>(wr[v], xr + v * V);
        for (int s = 16; s > 0; s >>= 1)
            acc += __shfl_xor(acc, s, 32);
        if (lane == 0)
            y[o] = acc;
    }
}

// x[0..32) of sub-block sub of the block at blk, dotted with its 32 decoded
// weights. The common decode-bound formats take their scales out of the
// sum (d * sum(x * code), as ggml does: the same values, summed in another
// order, within SPEC 7's MatMul tolerance); the rest decode element by
// element with vt_q_value.
template <uint32_t DT> __device__ inline float q_unit_dot(const uint8_t *blk, int sub, const float *x)
{
    const float4 *x4 = (const float4 *)x; /* 16-byte aligned: the launcher checks */
    float xs[32];
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const float4 v = x4[i];
        xs[4 * i] = v.x;
        xs[4 * i + 1] = v.y;
        xs[4 * i + 2] = v.z;
        xs[4 * i + 3] = v.w;
    }
    float acc = 0.0f;
    if (DT == VT_Q4_0 || DT == VT_IQ4_NL) { /* q4_0, iq4_nl: d, then 16 bytes of nibbles */
        const uint8_t *qs = blk + 2;
#pragma unroll
        for (int l = 0; l < 16; l++) {
            const int lo = qs[l] & 0xF, hi = qs[l] >> 4;
            if (DT == VT_Q4_0)
                acc += xs[l] * (float)(lo - 8) + xs[l + 16] * (float)(hi - 8);
            else
                acc += xs[l] * vt_q_iq4nl(lo) + xs[l + 16] * vt_q_iq4nl(hi);
        }
        return vt_q_half(blk) * acc;
    }
    if (DT == VT_Q8_0) { /* q8_0: d, then 32 signed bytes */
#pragma unroll
        for (int l = 0; l < 32; l++)
            acc += xs[l] * (float)(int8_t)blk[2 + l];
        return vt_q_half(blk) * acc;
    }
    if (DT == VT_Q4_K) { /* q4_k: x = d*sc*c - dmin*mn over each 32 */
        int sc, mn;
        vt_q_k4_scale_min(blk + 4, sub, &sc, &mn);
        const uint8_t *q = blk + 16 + 32 * (sub >> 1);
        const int shift = 4 * (sub & 1);
        float xsum = 0.0f;
        if (((uintptr_t)q & 3) == 0) { /* the 32 code bytes as 8 words (blocks are 144 bytes) */
            const uint32_t *qw = (const uint32_t *)(const void *)q;
#pragma unroll
            for (int i = 0; i < 8; i++) {
                const uint32_t v = qw[i] >> shift;
#pragma unroll
                for (int b = 0; b < 4; b++) {
                    acc += xs[4 * i + b] * (float)((v >> (8 * b)) & 0xF);
                    xsum += xs[4 * i + b];
                }
            }
        } else {
#pragma unroll
            for (int l = 0; l < 32; l++) {
                acc += xs[l] * (float)((q[l] >> shift) & 0xF);
                xsum += xs[l];
            }
        }
        return vt_q_half(blk) * (float)sc * acc - vt_q_half(blk + 2) * (float)mn * xsum;
    }
    if (DT == VT_Q6_K) { /* q6_k: two signed scales per 32, codes 6 bits minus 32 */
        const int h = sub >> 2, r = sub & 3;
        const uint8_t *ql = blk + 64 * h + 32 * (r & 1), *qh = blk + 128 + 32 * h;
        const int8_t *scales = (const int8_t *)(blk + 192) + 8 * h + 2 * r;
        const int lshift = r >= 2 ? 4 : 0;
        float half_acc[2] = {0.0f, 0.0f};
#pragma unroll
        for (int l = 0; l < 32; l++) {
            const int c = ((ql[l] >> lshift) & 0xF) | (((qh[l] >> (2 * r)) & 3) << 4);
            half_acc[l >> 4] += xs[l] * (float)(c - 32);
        }
        return vt_q_half(blk + 208) * ((float)scales[0] * half_acc[0] + (float)scales[1] * half_acc[1]);
    }
    if (DT != VT_Q4_0 && DT != VT_IQ4_NL && DT != VT_Q8_0 && DT != VT_Q4_K && DT != VT_Q6_K) {
#pragma unroll
        for (int l = 0; l < 32; l++)
            acc += xs[l] * vt_q_value(DT, blk, sub * 32 + l);
    }
    return acc;
}

// True for the formats whose blocks are 32 elements behind one f16 factor
// at byte 0 and whose pairs of blocks q_pair_dot reads as 32-bit words.
__host__ __device__ constexpr bool q_pairable(uint32_t dt)
{
    return dt == VT_Q4_0 || dt == VT_Q8_0 || dt == VT_IQ4_NL;
}

// q_words_sum for 16 nibble bytes: low nibble element 4i + b, high nibble
// 4i + b + 16 (q4_0 codes minus 8, iq4_nl through its book).
template <uint32_t DT> __device__ inline void q_nibble_words_sum(const uint32_t *c, const float4 *x4, float *sum)
{
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const float4 lo = x4[i], hi = x4[i + 4];
        const float xl[4] = {lo.x, lo.y, lo.z, lo.w}, xh[4] = {hi.x, hi.y, hi.z, hi.w};
#pragma unroll
        for (int b = 0; b < 4; b++) {
            const int l = (int)(c[i] >> (8 * b)) & 0xF, h = (int)(c[i] >> (8 * b + 4)) & 0xF;
            if (DT == VT_Q4_0)
                acc += xl[b] * (float)(l - 8) + xh[b] * (float)(h - 8);
            else
                acc += xl[b] * vt_q_iq4nl(l) + xh[b] * vt_q_iq4nl(h);
        }
    }
    *sum = acc;
}

// One block's sum of x * code from its code bytes held in 32-bit words c
// (byte b of word i is code byte 4i + b) and x4, its 32 x values.
template <uint32_t DT> __device__ inline float q_words_sum(const uint32_t *c, const float4 *x4)
{
    float acc = 0.0f;
    if (DT == VT_Q8_0) { /* 32 signed bytes: element 4i + b */
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const float4 v = x4[i];
            const uint32_t q = c[i];
            acc += v.x * (float)(int8_t)(q & 0xFF) + v.y * (float)(int8_t)((q >> 8) & 0xFF) +
                   v.z * (float)(int8_t)((q >> 16) & 0xFF) + v.w * (float)(int8_t)(q >> 24);
        }
    } else {
        q_nibble_words_sum<DT>(c, x4, &acc);
    }
    return acc;
}

// Two consecutive blocks of a pairable format (2 * bb bytes, 4-byte
// aligned: 36 for q4_0 and iq4_nl, 68 for q8_0) against x[0..64), read as
// whole 32-bit words instead of byte by byte: block A's factor is the low
// half of word 0 and its codes start at byte 2 (each code word spans two
// loaded words); block B's factor is the high half of the middle word and
// its codes are the words after it.
template <uint32_t DT> __device__ inline float q_pair_dot(const uint32_t *p, const float *x)
{
    constexpr int W = DT == VT_Q8_0 ? 17 : 9, CW = DT == VT_Q8_0 ? 8 : 4;
    uint32_t w[W];
#pragma unroll
    for (int i = 0; i < W; i++)
        w[i] = p[i];
    uint32_t ca[CW], cb[CW];
#pragma unroll
    for (int i = 0; i < CW; i++) {
        ca[i] = (w[i] >> 16) | (w[i + 1] << 16);
        cb[i] = w[W / 2 + 1 + i];
    }
    const float4 *x4 = (const float4 *)x; /* 16-byte aligned: the launcher checks */
    const float da = vt_dev_f16_to_f32_fast((uint16_t)(w[0] & 0xFFFF));
    const float db = vt_dev_f16_to_f32_fast((uint16_t)(w[W / 2] >> 16));
    return da * q_words_sum<DT>(ca, x4) + db * q_words_sum<DT>(cb, x4 + 8);
}

// The dot of a row x[0..k) with one block-format weight row w (k / be
// blocks of bb bytes), by a group of 32 lanes: lane l takes the 32-element
// sub-blocks l, l + 32, ... (or, for a pairable format on a 4-byte aligned
// row of an even number of blocks, the block pairs l, l + 32, ...); the
// partial sums then meet over a fixed xor tree. DT is the block format,
// fixed at compile time so the decoder's switch folds away; every lane of
// the group returns the same sum.
template <uint32_t DT>
__device__ inline float q_row_dot(const float *x, const uint8_t *w, int64_t k, int be, int bb, int lane)
{
    const int subs = be / 32;
    const int64_t units = k / 32;
    float acc = 0.0f;
    if (q_pairable(DT) && (units & 1) == 0 && ((uintptr_t)w & 3) == 0) {
        for (int64_t p = lane; p < units / 2; p += 32)
            acc += q_pair_dot<DT>((const uint32_t *)(const void *)(w + p * 2 * bb), x + p * 64);
    } else {
        for (int64_t u = lane; u < units; u += 32)
            acc += q_unit_dot<DT>(w + (u / subs) * bb, (int)(u % subs), x + u * 32);
    }
    for (int s = 16; s > 0; s >>= 1)
        acc += __shfl_xor(acc, s, 32);
    return acc;
}

// MatMul over a block-format weight: one group of 32 lanes per output
// y[r, c] (grid-strided), VT_ROCM_BLOCK / 32 outputs per block.
template <uint32_t DT>
__global__ void matmul_q_rows_kernel(const float *x, const uint8_t *w, int be, int bb, float *y, int64_t n, int64_t m,
                                     int64_t k)
{
    const int lane = threadIdx.x & 31, groups = blockDim.x / 32;
    const int64_t row_bytes = k / be * bb;
    for (int64_t o = (int64_t)blockIdx.x * groups + threadIdx.x / 32; o < n * m; o += (int64_t)gridDim.x * groups) {
        const int64_t r = o / m, c = o % m;
        float acc = q_row_dot<DT>(x + r * k, w + c * row_bytes, k, be, bb, lane);
        if (lane == 0)
            y[o] = acc;
    }
}

// y[t, i, c] = W[ids[t, i], c, :] . x[t] (or x[t, i]), as matmul_q_rows_kernel.
template <uint32_t DT>
__global__ void moe_matmul_q_rows_kernel(const float *x, int x_per_slot, const uint8_t *w, int be, int bb,
                                         const int32_t *ids, float *y, int64_t T, int64_t K, int64_t m, int64_t k)
{
    const int lane = threadIdx.x & 31, groups = blockDim.x / 32;
    const int64_t row_bytes = k / be * bb;
    for (int64_t o = (int64_t)blockIdx.x * groups + threadIdx.x / 32; o < T * K * m; o += (int64_t)gridDim.x * groups) {
        const int64_t c = o % m, ti = o / m, t = ti / K;
        const float *xr = x + (x_per_slot ? ti : t) * k;
        float acc = q_row_dot<DT>(xr, w + ((int64_t)ids[ti] * m + c) * row_bytes, k, be, bb, lane);
        if (lane == 0)
            y[o] = acc;
    }
}

// The generic kernels, for the float types: one block per output
// (grid-strided), threads take strided k.
__global__ void matmul_q_kernel(const float *x, const void *w, uint32_t wt, int be, int bb, float *y, int64_t n,
                                int64_t m, int64_t k)
{
    __shared__ float shm[VT_ROCM_BLOCK];
    for (int64_t o = blockIdx.x; o < n * m; o += gridDim.x) {
        int64_t r = o / m, c = o % m;
        const float *xr = x + r * k;
        float acc = 0.0f;
        for (int64_t i = threadIdx.x; i < k; i += blockDim.x)
            acc += xr[i] * vt_q_element(w, wt, c * k + i, be, bb);
        acc = vt_block_sum(acc, shm);
        if (threadIdx.x == 0)
            y[o] = acc;
    }
}

__global__ void moe_matmul_kernel(const float *x, int x_per_slot, const void *w, uint32_t wt, int be, int bb,
                                  const int32_t *ids, float *y, int64_t T, int64_t K, int64_t m, int64_t k)
{
    __shared__ float shm[VT_ROCM_BLOCK];
    for (int64_t o = blockIdx.x; o < T * K * m; o += gridDim.x) {
        int64_t c = o % m, ti = o / m, t = ti / K;
        int64_t e = ids[ti];
        const float *xr = x + (x_per_slot ? ti : t) * k;
        int64_t base = (e * m + c) * k;
        float acc = 0.0f;
        for (int64_t i = threadIdx.x; i < k; i += blockDim.x)
            acc += xr[i] * vt_q_element(w, wt, base + i, be, bb);
        acc = vt_block_sum(acc, shm);
        if (threadIdx.x == 0)
            y[o] = acc;
    }
}

unsigned out_grid(int64_t outputs)
{
    return (unsigned)(outputs < (1 << 20) ? (outputs > 0 ? outputs : 1) : (1 << 20));
}

} // namespace

extern "C" hipError_t vt_rocm_launch_matmul_dense(const float *x, const void *w, uint32_t w_dtype, float *y, int64_t n,
                                                  int64_t m, int64_t k, hipStream_t stream)
{
    if (n <= 0 || m <= 0)
        return hipSuccess;
    int taken = 0;
    const hipError_t e = vt_rocm_launch_mmv(x, w, w_dtype, y, n, m, k, stream, &taken);
    if (taken || e != hipSuccess)
        return e;
    const int vec = w_dtype == VT_F32 ? 4 : 8;
    if (k % vec == 0 && (uintptr_t)x % 16 == 0 && (uintptr_t)w % 16 == 0) {
        const unsigned grid = vt_grid_for(n * m, VT_ROCM_BLOCK / 32);
        if (w_dtype == VT_F16)
            hipLaunchKernelGGL(matmul_dense_rows_kernel<VT_F16>, dim3(grid), dim3(VT_ROCM_BLOCK), 0, stream, x, w, y, n,
                               m, k);
        else if (w_dtype == VT_BF16)
            hipLaunchKernelGGL(matmul_dense_rows_kernel<VT_BF16>, dim3(grid), dim3(VT_ROCM_BLOCK), 0, stream, x, w, y,
                               n, m, k);
        else
            hipLaunchKernelGGL(matmul_dense_rows_kernel<VT_F32>, dim3(grid), dim3(VT_ROCM_BLOCK), 0, stream, x, w, y, n,
                               m, k);
        return hipGetLastError();
    }
    hipLaunchKernelGGL(matmul_dense_kernel, dim3(vt_grid_for(n * m, 1)), dim3(VT_ROCM_BLOCK), 0, stream, x, w, w_dtype,
                       y, n, m, k);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_matmul_q(const float *x, const void *w, uint32_t w_dtype, int block_elems,
                                              int block_bytes, float *y, int64_t n, int64_t m, int64_t k,
                                              hipStream_t stream)
{
    if (n <= 0 || m <= 0)
        return hipSuccess;
    int taken = 0;
    const hipError_t e = vt_rocm_launch_mmv(x, w, w_dtype, y, n, m, k, stream, &taken);
    if (taken || e != hipSuccess)
        return e;
    const unsigned grid = out_grid((n * m + VT_ROCM_BLOCK / 32 - 1) / (VT_ROCM_BLOCK / 32));
    switch ((uintptr_t)x % 16 == 0 ? w_dtype : 0) {
#define VT_ROCM_MATMUL_Q(DT, f)                                                                                        \
    case DT:                                                                                                           \
        hipLaunchKernelGGL(matmul_q_rows_kernel<DT>, dim3(grid), dim3(VT_ROCM_BLOCK), 0, stream, x,                    \
                           (const uint8_t *)w, block_elems, block_bytes, y, n, m, k);                                  \
        return hipGetLastError();
        VT_Q_FORMATS(VT_ROCM_MATMUL_Q)
#undef VT_ROCM_MATMUL_Q
    }
    hipLaunchKernelGGL(matmul_q_kernel, dim3(out_grid(n * m)), dim3(VT_ROCM_BLOCK), 0, stream, x, w, w_dtype,
                       block_elems, block_bytes, y, n, m, k);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_moe_matmul(const float *x, int x_per_slot, const void *w, uint32_t w_dtype,
                                                int block_elems, int block_bytes, const int32_t *ids, float *y,
                                                int64_t T, int64_t K, int64_t m, int64_t k, hipStream_t stream)
{
    if (T <= 0 || K <= 0 || m <= 0)
        return hipSuccess;
    int taken = 0;
    const hipError_t e = vt_rocm_launch_mmv_moe(x, x_per_slot, w, w_dtype, ids, y, T, K, m, k, stream, &taken);
    if (taken || e != hipSuccess)
        return e;
    const unsigned grid = out_grid((T * K * m + VT_ROCM_BLOCK / 32 - 1) / (VT_ROCM_BLOCK / 32));
    switch ((uintptr_t)x % 16 == 0 ? w_dtype : 0) {
#define VT_ROCM_MOE_Q(DT, f)                                                                                           \
    case DT:                                                                                                           \
        hipLaunchKernelGGL(moe_matmul_q_rows_kernel<DT>, dim3(grid), dim3(VT_ROCM_BLOCK), 0, stream, x, x_per_slot,    \
                           (const uint8_t *)w, block_elems, block_bytes, ids, y, T, K, m, k);                          \
        return hipGetLastError();
        VT_Q_FORMATS(VT_ROCM_MOE_Q)
#undef VT_ROCM_MOE_Q
    }
    hipLaunchKernelGGL(moe_matmul_kernel, dim3(out_grid(T * K * m)), dim3(VT_ROCM_BLOCK), 0, stream, x, x_per_slot, w,
                       w_dtype, block_elems, block_bytes, ids, y, T, K, m, k);
    return hipGetLastError();
}
