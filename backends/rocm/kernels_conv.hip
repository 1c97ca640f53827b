// kernels_conv.hip - the causal depthwise convolutions of the rocm backend
// (SPEC 7, ops 7, 8, 9). Prefill: one thread per output element (W = 4:
// one wavefront per segment of a row, a column per lane). The
// state-updating forms: one thread per (sequence, channel): it computes
// every output column, then shifts that channel's state row in place in
// ascending order (each write reads a column ahead of it, never behind);
// the decode shape W = 4, T = 1 has its own kernel (conv_update_w4t1_kernel).
#include "rocm_device.h"
#include "rocm_launch.h"

namespace
{

__device__ inline float act(float v, int silu)
{
    return silu ? vt_silu(v) : v;
}

// e = [S[slot, d, a-1 .. a+W-3], x[b, d, :]]
__global__ void conv_spec_kernel(const float *x, const float *w, const float *bias, const int32_t *slots,
                                 const int32_t *accepted, float *y, float *state, int64_t B, int64_t D, int64_t T,
                                 int64_t W, int64_t L, int silu)
{
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t bd = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; bd < B * D; bd += stride) {
        int64_t b = bd / D, d = bd % D;
        const float *xr = x + bd * T;
        float *yr = y + bd * T;
        int32_t slot = slots[b];
        if (slot < 0) { // padding: zero output, state untouched
            for (int64_t t = 0; t < T; t++)
                yr[t] = 0.0f;
            continue;
        }
        int64_t a = accepted[b];
        float *s = state + ((int64_t)slot * D + d) * L;
        const float *wr = w + d * W;
        for (int64_t t = 0; t < T; t++) {
            float acc = bias ? bias[d] : 0.0f;
            for (int64_t j = 0; j < W; j++) {
                int64_t k = t + j;
                float e = k < W - 1 ? s[a - 1 + k] : xr[k - (W - 1)];
                acc += wr[j] * e;
            }
            yr[t] = act(acc, silu);
        }
        for (int64_t i = 0; i <= W - 3 + T; i++) {
            int64_t k = i + 1;
            s[i] = k < W - 1 ? s[a - 1 + k] : xr[k - (W - 1)];
        }
    }
}

// x~[k] of a row, x~ = [init or zeros (W-1), x]: xr the row of x, ir the
// row's initial state (nullptr: zeros).
template <typename I> __device__ inline float conv_xt(const float *xr, const float *ir, I k, I W)
{
    return k < W - 1 ? (ir ? ir[k] : 0.0f) : xr[k - (W - 1)];
}

// x~ = [init or zeros (W-1), x]; the state out is the last W-1 columns.
// One thread per element of a row [y[t] for t < T, then state[i]], so
// neighbouring threads read neighbouring x (the window comes from cache).
// I: the index type (32-bit when every index fits: no 64-bit divisions).
template <typename I>
__global__ void conv_prefill_kernel(const float *x, const float *w, const float *bias, const float *init, float *y,
                                    float *state_out, I B, I D, I T, I W, int silu)
{
    I row = T + W - 1, total = B * D * row, stride = (I)gridDim.x * blockDim.x;
    for (I e = (I)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
        I bd = e / row, t = e % row, d = bd % D;
        const float *xr = x + bd * T;
        const float *ir = init ? init + bd * (W - 1) : nullptr;
        if (t >= T) { // state column i = x~[T + i]
            state_out[bd * (W - 1) + (t - T)] = conv_xt(xr, ir, t, W);
            continue;
        }
        const float *wr = w + d * W;
        float acc = bias ? bias[d] : 0.0f;
        for (I j = 0; j < W; j++)
            acc += wr[j] * conv_xt(xr, ir, t + j, W);
        y[bd * T + t] = act(acc, silu);
    }
}

// CausalConv1d for W = 4 (the usual width): one wavefront per segment of
// kConvSeg columns of a row at a time, a column per lane in each step of
// VT_ROCM_WAVE columns, so every load of x and store of y is one
// contiguous run. Lane l's column t takes x~[t + 3] = x[t] from memory and
// x~[t .. t + 2] from lanes l - 3 .. l - 1, or, for the first three lanes,
// from the last three lanes of the step before (at a segment's start
// loaded as such: x~[k] = k < 3 ? the initial state or 0 : x[k - 3]). The
// segment that ends the row also writes the state, x~[T .. T + 2]. The
// same sums in the same order as conv_prefill_kernel.
constexpr int kConvSeg = 1024, kConvUnroll = 8;

template <typename I>
__global__ void __launch_bounds__(VT_ROCM_BLOCK)
    conv_prefill_w4_kernel(const float *x, const float *w, const float *bias, const float *init, float *y,
                           float *state_out, I rows, I D, I T, int silu)
{
    constexpr int WV = VT_ROCM_WAVE;
    constexpr int W = 4, H = W - 1; /* the window; the state columns, x~ before x */
    const int lane = (int)threadIdx.x % WV;
    const I segs = (T + kConvSeg - 1) / kConvSeg, items = rows * segs;
    const I waves = (I)gridDim.x * (I)(blockDim.x / WV);
    for (I it = (I)blockIdx.x * (I)(blockDim.x / WV) + (I)(threadIdx.x / WV); it < items; it += waves) {
        const I bd = it / segs, s0 = (it - bd * segs) * kConvSeg, d = bd % D;
        const I s1 = T - s0 < (I)kConvSeg ? T : s0 + kConvSeg;
        const float *xr = x + bd * T;
        const float *ir = init ? init + bd * H : nullptr;
        const float w0 = w[d * W], w1 = w[d * W + 1], w2 = w[d * W + 2], w3 = w[d * W + 3];
        const float b0 = bias ? bias[d] : 0.0f;
        /* the step before's lanes WV - H .. WV - 1: x~[s0 .. s0 + H - 1] */
        float prev = lane >= WV - H ? conv_xt(xr, ir, s0 + (I)(lane - (WV - H)), (I)W) : 0.0f;
        for (I t0 = s0; t0 < s1; t0 += (I)(kConvUnroll * WV)) {
            float a[kConvUnroll]; /* x[t] of each step's column */
#pragma unroll
            for (int u = 0; u < kConvUnroll; u++) {
                const I t = t0 + (I)(u * WV + lane);
                a[u] = t < s1 ? xr[t] : 0.0f;
            }
#pragma unroll
            for (int u = 0; u < kConvUnroll; u++) {
                /* x~[t + j]: from lane l - H + j of this step, or (l < H - j)
                 * lane l - H + j + WV of the step before: a source lane m
                 * has one reader for each j and gives it the one it wants */
                float e[H];
#pragma unroll
                for (int j = 0; j < H; j++)
                    e[j] = __shfl(lane < WV - H + j ? a[u] : prev, (lane - H + j + WV) % WV, WV);
                const I t = t0 + (I)(u * WV + lane);
                float acc = b0;
                acc += w0 * e[0];
                acc += w1 * e[1];
                acc += w2 * e[2];
                acc += w3 * a[u];
                if (t < s1)
                    y[bd * T + t] = act(acc, silu);
                prev = a[u];
            }
        }
        if (s1 == T && lane < H) /* state column i = x~[T + i] */
            state_out[bd * H + lane] = conv_xt(xr, ir, T + (I)lane, (I)W);
    }
}

// e = [S[slot, d, :], x[b, d, :]]; S becomes the last W-1 columns of e.
__global__ void conv_update_kernel(const float *x, const float *w, const float *bias, const int32_t *slots, float *y,
                                   float *state, int64_t B, int64_t D, int64_t T, int64_t W, int silu)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t bd = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; bd < B * D; bd += stride) {
        int64_t b = bd / D, d = bd % D;
        const float *xr = x + bd * T;
        float *yr = y + bd * T;
        int64_t slot = slots ? slots[b] : b;
        if (slot < 0) {
            for (int64_t t = 0; t < T; t++)
                yr[t] = 0.0f;
            continue;
        }
        float *s = state + (slot * D + d) * (W - 1);
        const float *wr = w + d * W;
        for (int64_t t = 0; t < T; t++) {
            float acc = bias ? bias[d] : 0.0f;
            for (int64_t j = 0; j < W; j++) {
                int64_t k = t + j;
                acc += wr[j] * (k < W - 1 ? s[k] : xr[k - (W - 1)]);
            }
            yr[t] = act(acc, silu);
        }
        for (int64_t i = 0; i < W - 1; i++) {
            int64_t k = T + i;
            s[i] = k < W - 1 ? s[k] : xr[k - (W - 1)];
        }
    }
}

// CausalConv1dUpdate for the decode shape W = 4, T = 1: one thread per
// (sequence, channel) with 32-bit indices, the weight row in one float4
// load; the same sums in the same order as conv_update_kernel.
__global__ void conv_update_w4t1_kernel(const float *x, const float *w, const float *bias, const int32_t *slots,
                                        float *y, float *state, uint32_t B, uint32_t D, int silu)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    const uint32_t bd = blockIdx.x * blockDim.x + threadIdx.x;
    if (bd >= B * D)
        return;
    const uint32_t b = bd / D, d = bd - b * D;
    const float4 wr = *(const float4 *)(w + 4 * (size_t)d);
    const float xv = x[bd];
    float acc = bias ? bias[d] : 0.0f;
    const int64_t slot = slots ? (int64_t)slots[b] : (int64_t)b;
    if (slot < 0) { // padding: zero output, state untouched
        y[bd] = 0.0f;
        return;
    }
    float *s = state + ((size_t)slot * D + d) * 3;
    const float s0 = s[0], s1 = s[1], s2 = s[2];
    acc += wr.x * s0;
    acc += wr.y * s1;
    acc += wr.z * s2;
    acc += wr.w * xv;
    y[bd] = act(acc, silu);
    s[0] = s1;
    s[1] = s2;
    s[2] = xv;
}

} // namespace

extern "C" hipError_t vt_rocm_launch_conv_spec(const float *x, const float *w, const float *bias, const int32_t *slots,
                                               const int32_t *accepted, float *y, float *state, int64_t B, int64_t D,
                                               int64_t T, int64_t W, int64_t L, int silu, hipStream_t stream)
{
    if (B * D <= 0)
        return hipSuccess;
    hipLaunchKernelGGL(conv_spec_kernel, dim3(vt_grid_for(B * D, VT_ROCM_BLOCK)), dim3(VT_ROCM_BLOCK), 0, stream, x, w,
                       bias, slots, accepted, y, state, B, D, T, W, L, silu);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_conv_prefill(const float *x, const float *w, const float *bias, const float *init,
                                                  float *y, float *state_out, int64_t B, int64_t D, int64_t T,
                                                  int64_t W, int silu, hipStream_t stream)
{
    if (B * D <= 0)
        return hipSuccess;
    int64_t total = B * D * (T + W - 1);
    dim3 grid(vt_grid_for(total, VT_ROCM_BLOCK)), block(VT_ROCM_BLOCK);
    if (W == 4 && total < ((int64_t)1 << 31) - (int64_t)grid.x * VT_ROCM_BLOCK) {
        /* a segment per wavefront of 32 lanes (64: the blocks loop over the rest) */
        const int64_t items = B * D * ((T + kConvSeg - 1) / kConvSeg);
        hipLaunchKernelGGL(conv_prefill_w4_kernel<uint32_t>, dim3(vt_grid_for(items, VT_ROCM_BLOCK / 32)), block, 0,
                           stream, x, w, bias, init, y, state_out, (uint32_t)(B * D), (uint32_t)D, (uint32_t)T, silu);
        return hipGetLastError();
    }
    if (total < ((int64_t)1 << 31) - (int64_t)grid.x * VT_ROCM_BLOCK)
        hipLaunchKernelGGL(conv_prefill_kernel<uint32_t>, grid, block, 0, stream, x, w, bias, init, y, state_out,
                           (uint32_t)B, (uint32_t)D, (uint32_t)T, (uint32_t)W, silu);
    else
        hipLaunchKernelGGL(conv_prefill_kernel<int64_t>, grid, block, 0, stream, x, w, bias, init, y, state_out, B, D,
                           T, W, silu);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_conv_update(const float *x, const float *w, const float *bias,
                                                 const int32_t *slots, float *y, float *state, int64_t B, int64_t D,
                                                 int64_t T, int64_t W, int silu, hipStream_t stream)
{
    if (B * D <= 0)
        return hipSuccess;
    if (W == 4 && T == 1 && B * D < ((int64_t)1 << 31) && ((uintptr_t)w & 15) == 0) {
        const int nt = 128; // more, smaller blocks: the whole call is one round trip to memory
        VT_LAUNCH_CHAINED(conv_update_w4t1_kernel, dim3((unsigned)((B * D + nt - 1) / nt)), dim3(nt), 0, stream, x, w,
                          bias, slots, y, state, (uint32_t)B, (uint32_t)D, silu);
        return hipGetLastError();
    }
    VT_LAUNCH_CHAINED(conv_update_kernel, dim3(vt_grid_for(B * D, VT_ROCM_BLOCK)), dim3(VT_ROCM_BLOCK), 0, stream, x, w,
                      bias, slots, y, state, B, D, T, W, silu);
    return hipGetLastError();
}
