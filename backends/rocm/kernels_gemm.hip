// kernels_gemm.hip - prefill MatMul on matrix instructions: y[n,m] =
// sum_k x[n,k] * W[m,k] for n at or above the decode range, x f32, W bf16,
// f16 or a block format (q4_0 and q8_0 decoded in the kernel, the others,
// on sm_90a, dequantized first: below). A first pass splits x into 16-bit
// hi and lo parts in the queue's scratch (k padded to 64 with zeros); then,
// on compute capability 9.0 in a build with sm_90a code (VT_GEMM_SM90A,
// Makefile.am), a block of 2 warpgroups computes a tile of y with wgmma
// (both operands read from shared memory in the 128-byte swizzle) from
// k-slices of 64 in a cp.async ring (bf16, f16: 128 x 256 tiles,
// m64n256k16; q4_0, q8_0: 128 x 128, m64n128k16); elsewhere (sm_80 and
// newer) a block of 256 threads computes a 128 x 128 tile from k-slices of
// 32 in a 4-stage shared-memory ring (x's parts and plain bf16/f16 weights
// by cp.async three stages ahead, block-format weights through registers
// one stage ahead, decoded on the way), read by ldmatrix into
// register-blocked warp tiles of 64 x 32 and multiplied by mma.sync
// m16n8k16. Sums are f32 in both.
//
// x stays accurate (SPEC 7: 1e-4 for block formats; the model runner must
// stay token-exact against the cpu oracle): each x is split into a high and
// a low part of the 16-bit type, x = hi + lo, and both are multiplied (two
// mma passes), about 16 (bf16) or 22 (f16) significant bits of x.
//  - bf16 weights: hi, lo in bf16 (the range of f32, no scaling).
//  - f16 weights, q4_0, q8_0 ("scaled" path): hi, lo in f16 from each row
//    of x times one power of two that puts its largest finite magnitude in
//    [2^13, 2^14) (hi stays normal and finite; split_x_scaled_kernel), the
//    row of y times its inverse at the end; the weight is f16 itself or the
//    block's integer codes (q - 8, or the signed byte: exact in f16); for
//    the block formats each 32-slice is summed apart and added to the f32
//    sum times the block's f16 factor d, as the oracle applies d per block.
//  - the other block formats (sm_90a): W dequantized into bf16 pairs
//    hi + lo (16 significant bits), then the bf16 kernel twice, x's parts
//    times W hi and x hi times W lo added (launch_wgmma_deq).
// wgmma: f16 weights run the bf16 kernel on f16 operands; q4_0 and q8_0
// sum each 32-slice apart (4 wgmma) and add it to the tile times d, the two
// warpgroups out of phase, their blocks read a stage ahead into registers
// and written decoded into the swizzled tile. Built for NVIDIA sm_80 and
// newer; elsewhere the launcher takes nothing and the caller keeps its own
// kernels.
#include "rocm_device.h"
#include "rocm_launch.h"

#include <vt/vt_blocks.h>
#include <vt/vt_dtype.h>

extern "C" long long vt_rocm_gemm_deq_bytes; /* rocm_backend.h */
extern "C" long long vt_rocm_gemm_deq_min_n; /* rocm_backend.h */

#if defined(VT_HIP_PLATFORM_NVIDIA)
#include "rocm_mma.h"
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace
{

#if defined(VT_HIP_PLATFORM_NVIDIA)

constexpr int kBM = 128;          // rows of x (n) per block
constexpr int kBN = 128;          // rows of W (m) per block
constexpr int kBK = 32;           // k per stage (one block of q4_0/q8_0)
constexpr int kLd = kBK + 8;      // shared row pitch in 16-bit elements (80 bytes: ldmatrix without conflicts)
constexpr int kThreads = 256;     // 8 warps: 2 along n x 4 along m
constexpr int kTile = kBM * kLd;  // 16-bit elements of one operand tile
constexpr int kStage = 3 * kTile; // x hi, x lo, W
constexpr int kStages = 4;        // the pipeline's depth
constexpr int kScales = 2 * kBM;  // scaled path: x slice powers, W factors (floats)

// Weight kinds of the kernel template.
constexpr int kWBf16 = 0;
constexpr int kWF16 = 1;
constexpr int kWQ40 = 2;
constexpr int kWQ80 = 3;

using vt_mma::cluster_peer;
using vt_mma::cluster_rank;
using vt_mma::cluster_sync;
using vt_mma::cp16;
using vt_mma::cp_commit;
using vt_mma::cp_wait;
using vt_mma::ldsm4;
using vt_mma::mma16816;
using vt_mma::smem_u32;

// 4 bytes global -> shared without registers (the first src_bytes of src,
// zeros for the rest).
__device__ __forceinline__ void cp_async4(void *dst, const void *src, int src_bytes)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_u32(dst)), "l"(src), "r"(src_bytes));
#else
    (void)dst;
    (void)src;
    (void)src_bytes;
#endif
}

__device__ __forceinline__ uint32_t pack_bf16(float a, float b)
{
    __nv_bfloat162 v = __floats2bfloat162_rn(a, b);
    return *(uint32_t *)&v;
}

__device__ __forceinline__ uint32_t pack_f16(float a, float b)
{
    __half2 v = __floats2half2_rn(a, b);
    return *(uint32_t *)&v;
}

// 2^p as float for p in [-126, 127].
__device__ __forceinline__ float pow2(int p)
{
    return __int_as_float((127 + p) << 23);
}

// The split of x for bf16 weights, a pass before the product: x [n, k]
// into bf16 hi and lo [n, kp] (kp = k rounded up to 64, zeros beyond k).
// One thread per 4 elements.
__global__ void split_x_kernel(const float *__restrict__ x, uint16_t *__restrict__ hi, uint16_t *__restrict__ lo,
                               int64_t n, int64_t k, int64_t kp)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    const int64_t q = kp / 4, total = n * q;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += stride) {
        const int64_t row = idx / q, col = 4 * (idx % q);
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        if (col < k)
            v = __ldg((const float4 *)(x + row * k + col));
        const __nv_bfloat162 h0 = __floats2bfloat162_rn(v.x, v.y), h1 = __floats2bfloat162_rn(v.z, v.w);
        const float2 f0 = __bfloat1622float2(h0), f1 = __bfloat1622float2(h1);
        const uint2 h = make_uint2(*(const uint32_t *)&h0, *(const uint32_t *)&h1);
        const uint2 l = make_uint2(pack_bf16(v.x - f0.x, v.y - f0.y), pack_bf16(v.z - f1.x, v.w - f1.y));
        *(uint2 *)(hi + row * kp + col) = h;
        *(uint2 *)(lo + row * kp + col) = l;
    }
}

// |v| where v is finite, else 0 (a row's scale ignores inf and NaN, which
// stay what they are in the parts).
__device__ __forceinline__ float finite_abs(float v)
{
    const float a = fabsf(v);
    return a <= 3.4028235e38f ? a : 0.f;
}

// The split of x for the f16 paths (f16, q4_0, q8_0 weights): each row of
// x [n, k] times a power of two 2^p that puts its largest finite magnitude
// in [2^13, 2^14), then into f16 hi and lo [n, kp] (zeros beyond k), and
// 2^-p into sx [kp / 32, n] at every 32-slice of the row (the layout the
// mma.sync kernel reads per slice; the wgmma kernels read slice 0 once).
// hi + lo keeps 22 significant bits of every element down to 2^-18 of the
// row's largest; below that the error stays under 2^-38 of the largest.
// One block per row (grid-stride): the row's largest, then its parts.
__global__ void split_x_scaled_kernel(const float *__restrict__ x, uint16_t *__restrict__ hi, uint16_t *__restrict__ lo,
                                      float *__restrict__ sx, int64_t n, int64_t k, int64_t kp)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    __shared__ float red[kThreads / 32];
    const int nw = (int)blockDim.x / 32;
    for (int64_t row = blockIdx.x; row < n; row += gridDim.x) {
        const float *xr = x + row * k;
        float a = 0.f;
        for (int64_t c = 4 * (int64_t)threadIdx.x; c < k; c += 4 * (int64_t)blockDim.x) {
            const float4 v = __ldg((const float4 *)(xr + c));
            a = fmaxf(a, fmaxf(fmaxf(finite_abs(v.x), finite_abs(v.y)), fmaxf(finite_abs(v.z), finite_abs(v.w))));
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
            a = fmaxf(a, __shfl_xor_sync(0xffffffffu, a, o));
        if ((threadIdx.x & 31) == 0)
            red[threadIdx.x >> 5] = a;
        __syncthreads();
        a = red[0];
        for (int i = 1; i < nw; i++)
            a = fmaxf(a, red[i]);
        __syncthreads(); /* red is written again for the next row */
        // a = f * 2^e, f in [1, 2): x times 2^(13 - e) is below 2^14 in magnitude.
        const int e = a > 0.f ? ((__float_as_int(a) >> 23) & 255) - 127 : 0;
        const int p = 13 - e > 126 ? 126 : 13 - e; /* |p| <= 126: 2^p and 2^-p are normal */
        const float s = pow2(p);
        for (int64_t c = threadIdx.x; c < kp / 32; c += blockDim.x)
            sx[c * n + row] = pow2(-p);
        for (int64_t c = 4 * (int64_t)threadIdx.x; c < kp; c += 4 * (int64_t)blockDim.x) {
            float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
            if (c < k)
                v = __ldg((const float4 *)(xr + c));
            v.x *= s, v.y *= s, v.z *= s, v.w *= s;
            const __half2 h0 = __floats2half2_rn(v.x, v.y), h1 = __floats2half2_rn(v.z, v.w);
            const float2 f0 = __half22float2(h0), f1 = __half22float2(h1);
            const uint2 h = make_uint2(*(const uint32_t *)&h0, *(const uint32_t *)&h1);
            const uint2 l = make_uint2(pack_f16(v.x - f0.x, v.y - f0.y), pack_f16(v.z - f1.x, v.w - f1.y));
            *(uint2 *)(hi + row * kp + c) = h;
            *(uint2 *)(lo + row * kp + c) = l;
        }
    }
}

// Queue the split of x for weight kind WK (chained after the op before it
// when chained).
template <int WK, bool CHAINED>
void queue_split(const float *x, uint16_t *hi, uint16_t *lo, float *sx, int64_t n, int64_t k, int64_t kp,
                 hipStream_t stream)
{
    if (WK == kWBf16) {
        const int64_t quads = n * (kp / 4);
        const unsigned grid = (unsigned)(quads / 256 + 1 < 65536 ? quads / 256 + 1 : 65536);
        if (CHAINED)
            VT_LAUNCH_CHAINED(split_x_kernel, grid, 256, 0, stream, x, hi, lo, n, k, kp);
        else
            split_x_kernel<<<grid, 256, 0, stream>>>(x, hi, lo, n, k, kp);
    } else {
        const unsigned grid = (unsigned)(n < 65535 ? n : 65535);
        if (CHAINED)
            VT_LAUNCH_CHAINED(split_x_scaled_kernel, grid, kThreads, 0, stream, x, hi, lo, sx, n, k, kp);
        else
            split_x_scaled_kernel<<<grid, kThreads, 0, stream>>>(x, hi, lo, sx, n, k, kp);
    }
}

// The x parts of a stage (rows row0.., k0..k0+32 of hi and lo) by cp.async,
// zero-filled below n; and, scaled, the 128 slice factors (4 bytes each).
template <bool SCALED>
__device__ __forceinline__ void load_x(uint16_t *hs, uint16_t *ls, float *sxs, const uint16_t *hi, const uint16_t *lo,
                                       const float *sx, int64_t n, int64_t kp, int64_t row0, int64_t k0)
{
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const int idx = threadIdx.x + kThreads * i, part = idx >> 9, row = (idx >> 2) & 127, c = 8 * (idx & 3);
        const int64_t gr = row0 + row;
        const bool ok = gr < n;
        const uint16_t *src = part ? lo : hi;
        cp16(smem_u32((part ? ls : hs) + row * kLd + c),
             ok ? (const void *)(src + gr * kp + k0 + c) : (const void *)src, ok ? 16 : 0);
    }
    if (SCALED && threadIdx.x < kBM) {
        const int64_t gr = row0 + threadIdx.x;
        const bool ok = gr < n;
        cp_async4(sxs + threadIdx.x, ok ? (const void *)(sx + (k0 / 32) * n + gr) : (const void *)sx, ok ? 4 : 0);
    }
}

// A plain 16-bit weight slice (rows m0.., k0..k0+32) into the stage by
// cp.async, zero-filled outside W; k is a multiple of 8.
__device__ __forceinline__ void load_w_plain(uint16_t *ws, const uint16_t *w, int64_t m, int64_t k, int64_t m0,
                                             int64_t k0)
{
#pragma unroll
    for (int i = 0; i < 2; i++) {
        const int idx = threadIdx.x + kThreads * i, row = idx >> 2, c = 8 * (idx & 3);
        const int64_t gr = m0 + row, gc = k0 + c;
        const bool ok = gr < m && gc < k;
        cp16(smem_u32(ws + row * kLd + c), ok ? (const void *)(w + gr * k + gc) : (const void *)w, ok ? 16 : 0);
    }
}

// The raw half-block of a block-format weight slice: thread t reads half
// t & 1 of the block of row t >> 1 (q4_0: 8 code bytes and the factor;
// q8_0: 16 code bytes and the factor) as 16-bit words (blocks are 18 or 34
// bytes, 2-byte aligned).
struct WRegs {
    uint16_t q[8];
    uint16_t d;
};

template <int WK>
__device__ __forceinline__ void load_w_block(WRegs &r, const uint8_t *w, int64_t m, int64_t kb_row, int64_t m0,
                                             int64_t kb)
{
    constexpr int bytes = WK == kWQ40 ? 18 : 34, words = WK == kWQ40 ? 4 : 8;
    const int row = threadIdx.x >> 1, h = threadIdx.x & 1;
    const int64_t gr = m0 + row;
    if (gr < m && kb < kb_row) {
        const uint16_t *b = (const uint16_t *)(w + (gr * kb_row + kb) * bytes);
        r.d = __ldg(b);
#pragma unroll
        for (int j = 0; j < words; j++)
            r.q[j] = __ldg(b + 1 + words * h + j);
    } else {
        r.d = 0;
#pragma unroll
        for (int j = 0; j < words; j++)
            r.q[j] = WK == kWQ40 ? 0x8888 : 0;
    }
}

// The codes into the stage as f16 (q - 8, or the signed byte) and the
// factor d into sw[row].
template <int WK> __device__ __forceinline__ void store_w_block(const WRegs &r, uint16_t *ws, float *sw)
{
    const int row = threadIdx.x >> 1, h = threadIdx.x & 1;
    if (h == 0)
        sw[row] = vt_dev_f16_to_f32_fast(r.d);
    uint32_t o[8];
    if (WK == kWQ40) { // bytes 8h..8h+7: low nibbles are elements 8h+j, high ones 16+8h+j
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int b0 = r.q[j] & 0xFF, b1 = r.q[j] >> 8;
            o[j] = pack_f16((float)((b0 & 15) - 8), (float)((b1 & 15) - 8));
            o[4 + j] = pack_f16((float)((b0 >> 4) - 8), (float)((b1 >> 4) - 8));
        }
        *(uint4 *)(ws + row * kLd + 8 * h) = make_uint4(o[0], o[1], o[2], o[3]);
        *(uint4 *)(ws + row * kLd + 16 + 8 * h) = make_uint4(o[4], o[5], o[6], o[7]);
    } else { // elements 16h..16h+15
#pragma unroll
        for (int j = 0; j < 8; j++)
            o[j] = pack_f16((float)(int8_t)(r.q[j] & 0xFF), (float)(int8_t)(r.q[j] >> 8));
        *(uint4 *)(ws + row * kLd + 16 * h) = make_uint4(o[0], o[1], o[2], o[3]);
        *(uint4 *)(ws + row * kLd + 16 * h + 8) = make_uint4(o[4], o[5], o[6], o[7]);
    }
}

// One stage's products: for the warp's 64 x 32 tile, hi and lo of x times
// W over the 32 k of the stage into acc (plain) or into a slice sum that is
// then added times the scales (scaled).
template <int WK, int PASSES>
__device__ __forceinline__ void compute_stage(float (&acc)[4][4][4], const uint16_t *xh, const uint16_t *xl,
                                              const uint16_t *ws, const float *sx, const float *sw, int wn, int wm)
{
    constexpr bool F16 = WK != kWBf16;
    constexpr bool SCALED = WK != kWBf16;
    const int lane = threadIdx.x & 31;
    float tmp[4][4][4];
    float(&dst)[4][4][4] = SCALED ? tmp : acc;
    if (SCALED) {
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int j = 0; j < 4; j++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    tmp[i][j][e] = 0.f;
    }
#pragma unroll
    for (int kk = 0; kk < kBK; kk += 16) {
        uint32_t b[4][2];
#pragma unroll
        for (int j = 0; j < 2; j++) {
            uint32_t r[4];
            const int mrow = wm * 32 + 16 * j + (lane & 7) + ((lane >> 4) << 3), kc = kk + ((lane >> 3) & 1) * 8;
            ldsm4(r, smem_u32(ws + mrow * kLd + kc));
            b[2 * j][0] = r[0];
            b[2 * j][1] = r[1];
            b[2 * j + 1][0] = r[2];
            b[2 * j + 1][1] = r[3];
        }
#pragma unroll
        for (int pass = 0; pass < PASSES; pass++) {
            const uint16_t *xs = pass ? xl : xh;
#pragma unroll
            for (int i = 0; i < 4; i++) {
                uint32_t a[4];
                const int nrow = wn * 64 + 16 * i + (lane & 15), kc = kk + (lane >> 4) * 8;
                ldsm4(a, smem_u32(xs + nrow * kLd + kc));
#pragma unroll
                for (int j = 0; j < 4; j++)
                    mma16816<F16>(dst[i][j], a, b[j][0], b[j][1]);
            }
        }
    }
    if (SCALED) {
        const int g = lane >> 2, t = lane & 3;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const float s0 = sx[wn * 64 + 16 * i + g], s1 = sx[wn * 64 + 16 * i + g + 8];
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const int c = wm * 32 + 8 * j + 2 * t;
                const float w0 = WK == kWF16 ? 1.f : sw[c], w1 = WK == kWF16 ? 1.f : sw[c + 1];
                acc[i][j][0] += (s0 * w0) * tmp[i][j][0];
                acc[i][j][1] += (s0 * w1) * tmp[i][j][1];
                acc[i][j][2] += (s1 * w0) * tmp[i][j][2];
                acc[i][j][3] += (s1 * w1) * tmp[i][j][3];
            }
        }
    }
}

template <int WK, int PASSES>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_kernel(const uint16_t *__restrict__ xh, const uint16_t *__restrict__ xl, const float *__restrict__ sx,
                const void *__restrict__ w, float *__restrict__ y, int64_t n, int64_t m, int64_t k, int64_t kp)
{
    extern __shared__ __align__(16) uint16_t smem[];
    constexpr bool SCALED = WK != kWBf16;
    constexpr bool PLAIN_W = WK == kWBf16 || WK == kWF16;
    float *scales = (float *)(smem + kStages * kStage); // [stage][sx 128, sw 128]
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int wn = warp & 1, wm = warp >> 1;
    const int64_t row0 = (int64_t)blockIdx.y * kBM, m0 = (int64_t)blockIdx.x * kBN;
    const int64_t kt_n = kp / kBK, kb_row = k / 32;

    float acc[4][4][4];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[i][j][e] = 0.f;

    // Stage kt lives in slot kt % kStages; x (and plain W) arrive by
    // cp.async kStages - 1 stages ahead, block-format W through registers
    // one stage ahead.
    auto issue = [&](int64_t kt) {
        if (kt < kt_n) {
            const int slot = (int)(kt % kStages);
            uint16_t *st = smem + slot * kStage;
            float *sc = scales + slot * kScales;
            load_x<SCALED>(st, st + kTile, sc, xh, xl, sx, n, kp, row0, kt * kBK);
            if (PLAIN_W)
                load_w_plain(st + 2 * kTile, (const uint16_t *)w, m, k, m0, kt * kBK);
        }
        cp_commit();
    };
    WRegs wr;
    if (!PLAIN_W) {
        load_w_block<WK>(wr, (const uint8_t *)w, m, kb_row, m0, 0);
        store_w_block<WK>(wr, smem + 2 * kTile, scales + kBM);
    }
#pragma unroll
    for (int s = 0; s < kStages - 1; s++)
        issue(s);

    for (int64_t kt = 0; kt < kt_n; kt++) {
        cp_wait<kStages - 2>();
        __syncthreads();
        issue(kt + kStages - 1);
        const int slot = (int)(kt % kStages);
        const uint16_t *st = smem + slot * kStage;
        const float *sc = scales + slot * kScales;
        const bool more = !PLAIN_W && kt + 1 < kt_n;
        if (more)
            load_w_block<WK>(wr, (const uint8_t *)w, m, kb_row, m0, kt + 1);
        compute_stage<WK, PASSES>(acc, st, st + kTile, st + 2 * kTile, sc, sc + kBM, wn, wm);
        if (more) {
            const int ns = (int)((kt + 1) % kStages);
            store_w_block<WK>(wr, smem + ns * kStage + 2 * kTile, scales + ns * kScales + kBM);
        }
    }
    cp_wait<0>();

    const int g = lane >> 2, t = lane & 3;
    const bool pairs = (m & 1) == 0 && ((uintptr_t)y & 7) == 0;
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int64_t r = row0 + wn * 64 + 16 * i + g + 8 * h;
            if (r >= n)
                continue;
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const int64_t c = m0 + wm * 32 + 8 * j + 2 * t;
                if (pairs && c + 1 < m) {
                    *(float2 *)(y + r * m + c) = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
                } else {
                    if (c < m)
                        y[r * m + c] = acc[i][j][2 * h];
                    if (c + 1 < m)
                        y[r * m + c + 1] = acc[i][j][2 * h + 1];
                }
            }
        }
}

constexpr size_t kSmemBytes = kStages * (kStage * sizeof(uint16_t) + kScales * sizeof(float));

// k rounded up to 64 (the wgmma kernel's stage; the mma.sync kernel's
// stages of 32 read the zeros beyond k too).
int64_t padded_k(int64_t k)
{
    return (k + 63) / 64 * 64;
}

// The split's scratch: hi and lo, then the slice factors (scaled).
void split_parts(void *scratch, int64_t n, int64_t kp, uint16_t **hi, uint16_t **lo, float **sx)
{
    *hi = (uint16_t *)scratch;
    *lo = *hi + n * kp;
    *sx = (float *)(*lo + n * kp);
}

// PASSES 2: x as hi + lo (the default); 1: x rounded to the 16-bit type
// (measured for comparison only).
template <int WK, int PASSES = 2>
hipError_t launch(const float *x, const void *w, float *y, int64_t n, int64_t m, int64_t k, void *scratch,
                  hipStream_t stream, int dev)
{
    const int64_t kp = padded_k(k);
    uint16_t *hi, *lo;
    float *sx;
    split_parts(scratch, n, kp, &hi, &lo, &sx);
    queue_split<WK, false>(x, hi, lo, sx, n, k, kp, stream);
    /* over 48 KiB of shared memory needs the opt-in */
    const cudaError_t e = vt_mma::smem_opt_in<gemm_kernel<WK, PASSES>>(dev, kSmemBytes);
    if (e != cudaSuccess)
        return e;
    const dim3 grid((unsigned)((m + kBN - 1) / kBN), (unsigned)((n + kBM - 1) / kBM));
    gemm_kernel<WK, PASSES><<<grid, kThreads, kSmemBytes, stream>>>(hi, lo, sx, w, y, n, m, k, kp);
    return hipGetLastError();
}

#if defined(VT_GEMM_SM90A)
// The sm_90a kernels: wgmma, the warpgroup-wide matrix instruction of
// Hopper, reading both operands from shared memory. A block of 2
// warpgroups computes a 128 x BN tile of y (bf16: BN 256, or 128 for
// comparison in scripts/gemm-harness.cu; the scaled path: 128), warpgroup g
// the 64 rows of x 64g.. against all BN rows of W, m64nBNk16 per 16 of k
// and part of x; k-slices of 64 (one 128-byte row per operand row, stored
// in the 128-byte swizzle the instruction reads without bank conflicts) in
// a cp.async ring (4 slots two stages ahead for BN 128, 3 one ahead for
// 256), so one stage's products run while the next are queued
// (wgmma.wait_group 1).
constexpr int kWgBK = 64;             // k per stage: one 128-byte swizzle row
constexpr int kWgStages = 4;          // ring slots of the 128 x 128 tiles (loads two stages ahead)
constexpr int kWgTile = 128 * kWgBK;  // 16-bit elements of one operand tile (16 KiB)
constexpr int kWgStage = 3 * kWgTile; // x hi, x lo, W
constexpr size_t kWgSmemBytes = kWgStages * kWgStage * sizeof(uint16_t) + 1024; // + alignment to 1024

// The shared-memory matrix descriptor of a K-major operand tile in the
// 128-byte swizzle: rows of 128 bytes, 8-row groups 1024 bytes apart.
__device__ __forceinline__ uint64_t wg_desc(uint32_t addr)
{
    return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)1 << 16) | ((uint64_t)(1024 >> 4) << 32) |
           ((uint64_t)1 << 62);
}

__device__ __forceinline__ void wg_fence()
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void wg_commit()
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}

// Wait until at most N wgmma groups of this warpgroup are in flight.
template <int N> __device__ __forceinline__ void wg_wait()
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}

// Shared-memory writes of the generic proxy (cp.async) made visible to
// wgmma's reads (the async proxy).
__device__ __forceinline__ void fence_async_smem()
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

// Keeps the compiler from moving accesses of v across a wgmma wait.
__device__ __forceinline__ void wg_keep(float &v)
{
    asm volatile("" : "+f"(v)::"memory");
}

// d = A * B^T (+ d when acc), m64n128k16, A (64 x 16) and B (128 x 16) by
// descriptor, f32 sums; F16: f16 operands, else bf16.
template <bool F16> __device__ __forceinline__ void wgmma128(float (&d)[64], uint64_t a, uint64_t b, int acc = 1)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    if (F16)
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, "
            "%12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, "
            "%33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, "
            "%54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
              "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
              "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
              "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
              "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
              "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
              "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
              "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
            : "l"(a), "l"(b), "r"(acc));
    else
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, "
            "%12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, "
            "%33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, "
            "%54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
              "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
              "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
              "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
              "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
              "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
              "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
              "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
            : "l"(a), "l"(b), "r"(acc));
#else
    (void)d;
    (void)a;
    (void)b;
    (void)acc;
#endif
}

// d = A * B^T (+ d when acc), m64n256k16, f32 sums; F16: f16 operands,
// else bf16.
template <bool F16> __device__ __forceinline__ void wgmma256(float (&d)[128], uint64_t a, uint64_t b, int acc = 1)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    if (F16)
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, "
            "%12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, "
            "%33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, "
            "%54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, "
            "%75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
            "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, "
            "%114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p, 1, 1, "
            "0, 0;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
              "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
              "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
              "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
              "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
              "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
              "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
              "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
              "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
              "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
              "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
              "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
              "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]),
              "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),
              "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]),
              "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]),
              "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
            : "l"(a), "l"(b), "r"(acc));
    else
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, "
            "%12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, "
            "%33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, "
            "%54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, "
            "%75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
            "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, "
            "%114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p, 1, 1, "
            "0, 0;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
              "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
              "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
              "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
              "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
              "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
              "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
              "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
              "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
              "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
              "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
              "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
              "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]),
              "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),
              "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]),
              "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]),
              "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
            : "l"(a), "l"(b), "r"(acc));
#else
    (void)d;
    (void)a;
    (void)b;
    (void)acc;
#endif
}

// Ring slots of the bf16 kernel for BN rows of W per block (a slot: x hi,
// lo, W; 48 or 64 KiB): loads BN == 128 ? 2 : 1 stages ahead.
template <int BN> __host__ __device__ constexpr int wg_stages()
{
    return BN == 128 ? 4 : 3;
}

template <int BN> constexpr size_t wg_smem_bytes()
{
    return (size_t)wg_stages<BN>() * (2 * 128 + BN) * kWgBK * sizeof(uint16_t) + 1024; // + alignment to 1024
}

// The loads of the bf16 kernel: per stage, 128 rows of x hi (and lo) and
// BN of W, 64 of k, by cp.async (zeros outside x and W), 16-byte chunk c of
// row r at chunk c ^ (r & 7) (the 128-byte swizzle). Thread t moves chunk
// t % 8 of rows t / 8 + 32 i; its source pointers are set once and step
// 64 elements a stage (the per-stage address arithmetic was most of the
// kernel's instructions).
template <int PASSES, int BN> struct WgLoader {
    static constexpr int WC = BN / 32; // W chunks per thread (BN 0: none, the block formats)
    const uint16_t *x[4], *w[WC > 0 ? WC : 1];
    int xbytes[4];
    bool wrow[WC > 0 ? WC : 1];
    int64_t lo_off, kcol, k;
    int dst; // this thread's first chunk in a tile (16-bit elements)

    __device__ __forceinline__ WgLoader(const uint16_t *hi, const uint16_t *lo, const uint16_t *wp, int64_t n,
                                        int64_t m, int64_t k_, int64_t kp, int64_t row0, int64_t m0, int64_t kt0)
    {
        const int c = threadIdx.x & 7, r = threadIdx.x >> 3;
        dst = r * kWgBK + ((c ^ (r & 7)) << 3);
        lo_off = lo - hi;
        k = k_;
        kcol = kt0 * kWgBK + 8 * c;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int64_t g = row0 + r + 32 * i;
            xbytes[i] = g < n ? 16 : 0;
            x[i] = hi + (g < n ? g : 0) * kp + kcol;
        }
#pragma unroll
        for (int i = 0; i < WC; i++) {
            const int64_t g = m0 + r + 32 * i;
            wrow[i] = g < m;
            w[i] = wp + (g < m ? g : 0) * k + kcol;
        }
    }

    // The next stage's x parts into the slot at st (or nothing past the
    // last stage: the pointers still step).
    __device__ __forceinline__ void load_x(uint16_t *st, bool any)
    {
        if (any) {
#pragma unroll
            for (int i = 0; i < 4; i++) {
                cp16(smem_u32(st + dst + i * 32 * kWgBK), x[i], xbytes[i]);
                if (PASSES > 1)
                    cp16(smem_u32(st + kWgTile + dst + i * 32 * kWgBK), x[i] + lo_off, xbytes[i]);
            }
        }
#pragma unroll
        for (int i = 0; i < 4; i++)
            x[i] += kWgBK;
    }
    // The next stage's W likewise (it reads nothing but W).
    __device__ __forceinline__ void load_w(uint16_t *st, bool any)
    {
        if (any) {
            const bool col = kcol < k;
#pragma unroll
            for (int i = 0; i < WC; i++) {
                const bool ok = wrow[i] && col;
                cp16(smem_u32(st + 2 * kWgTile + dst + i * 32 * kWgBK), w[i], ok ? 16 : 0);
            }
        }
#pragma unroll
        for (int i = 0; i < WC; i++)
            w[i] += kWgBK;
        kcol += kWgBK;
    }
    // The next stage (x parts and W) into the slot at st.
    __device__ __forceinline__ void load(uint16_t *st, bool any)
    {
        load_x(st, any);
        load_w(st, any);
    }
};

// SPLIT 2: a cluster of 2 blocks (grid z) shares the tile, each summing
// half of k; the second adds its sums into the first's shared memory (the
// idle ring) and the first adds them to its own (in that order) and writes
// y. F16: f16 weights and x's f16 parts of split_x_scaled_kernel, each row
// of y times its 2^-p (sx), else bf16 (sx unused). ACC: y += the product
// (else y =); y's rows are ldy apart.
template <int PASSES, int BN, int SPLIT = 1, bool F16 = false, bool ACC = false>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_wgmma_kernel(const uint16_t *__restrict__ xh, const uint16_t *__restrict__ xl, const uint16_t *__restrict__ w,
                      const float *__restrict__ sx, float *__restrict__ y, int64_t n, int64_t m, int64_t k, int64_t kp,
                      int64_t ldy)
{
    constexpr int S = wg_stages<BN>(), AHEAD = S - 2, SLOT = (2 * 128 + BN) * kWgBK;
    extern __shared__ __align__(16) uint16_t smem_raw[];
    const uint32_t raw = smem_u32(smem_raw), base = (raw + 1023) & ~1023u;
    uint16_t *smem = smem_raw + (base - raw) / 2;
    const int wg = threadIdx.x >> 7, warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
    const int64_t row0 = (int64_t)blockIdx.y * 128, m0 = (int64_t)blockIdx.x * BN;
    const unsigned part = SPLIT == 1 ? 0 : cluster_rank();
    const int64_t kt_all = kp / kWgBK, kt_lo = part ? kt_all / 2 : 0,
                  kt_n = (SPLIT == 1 || part ? kt_all : kt_all / 2) - kt_lo;

    float acc[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; i++)
        acc[i] = 0.f;

    // Stage kt in slot kt % S, loaded at iteration kt - AHEAD: the slot it
    // overwrites was read by stage kt - S's products, done (wait_group 1 at
    // the end of iteration kt - S + 1 = kt - AHEAD - 1) before every thread
    // passed this iteration's barrier.
    WgLoader<PASSES, BN> ld(xh, xl, w, n, m, k, kp, row0, m0, kt_lo);
    int ld_slot = 0, slot = 0;
    auto issue = [&](int64_t kt) {
        ld.load(smem + ld_slot * SLOT, kt < kt_n);
        ld_slot = ld_slot + 1 == S ? 0 : ld_slot + 1;
        cp_commit();
    };
    // descriptors: the start address field (bits 0-13, 16 bytes) steps
    // without carry (shared memory is below 256 KiB)
    const uint64_t da0 = wg_desc(base + wg * 64 * 128), db0 = wg_desc(base + 2 * kWgTile * 2);
    // Chained after its own split of x (launch_wgmma): the first stages'
    // W are queued before the wait, as the own-op rule of rocm_chain.h
    // allows (the split writes hi and lo only); their x parts after it, in
    // the same commit groups (the first group holds every early W).
#pragma unroll
    for (int s = 0; s < AHEAD; s++)
        ld.load_w(smem + s * SLOT, s < kt_n);
    vt_chain_begin();
#pragma unroll
    for (int s = 0; s < AHEAD; s++) {
        ld.load_x(smem + s * SLOT, s < kt_n);
        cp_commit();
    }
    ld_slot = AHEAD % S;
    for (int64_t kt = 0; kt < kt_n; kt++) {
        cp_wait<AHEAD - 1>();
        fence_async_smem();
        __syncthreads();
        issue(kt + AHEAD);
        const uint64_t so = (uint64_t)(slot * SLOT * 2) >> 4;
        wg_fence();
#pragma unroll
        for (int pass = 0; pass < PASSES; pass++)
#pragma unroll
            for (int kk = 0; kk < kWgBK / 16; kk++) {
                const uint64_t da = da0 + so + ((pass * kWgTile * 2 + kk * 32) >> 4), db = db0 + so + ((kk * 32) >> 4);
                if constexpr (BN == 128)
                    wgmma128<F16>(acc, da, db);
                else
                    wgmma256<F16>(acc, da, db);
            }
        wg_commit();
        wg_wait<1>();
        slot = slot + 1 == S ? 0 : slot + 1;
    }
    wg_wait<0>();
#pragma unroll
    for (int i = 0; i < BN / 2; i++)
        wg_keep(acc[i]);
    cp_wait<0>();
    if constexpr (SPLIT == 2) {
        float *red = (float *)smem;
        cluster_sync(); // both blocks are past their rings
        if (part) {
            float *peer = cluster_peer(red, 0);
#pragma unroll
            for (int i = 0; i < BN / 2; i++)
                peer[i * kThreads + threadIdx.x] = acc[i];
        }
        cluster_sync();
        if (part)
            return;
#pragma unroll
        for (int i = 0; i < BN / 2; i++)
            acc[i] += red[i * kThreads + threadIdx.x];
    }

    const int g = lane >> 2, t = lane & 3;
    const bool pairs = (ldy & 1) == 0 && ((uintptr_t)y & 7) == 0;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int64_t r = row0 + wg * 64 + warp * 16 + g + 8 * h;
        if (r >= n)
            continue;
        const float rs = F16 ? sx[r] : 1.f;
#pragma unroll
        for (int j = 0; j < BN / 8; j++) {
            const int64_t c = m0 + 8 * j + 2 * t;
            float v0 = acc[4 * j + 2 * h] * rs, v1 = acc[4 * j + 2 * h + 1] * rs;
            float *yr = y + r * ldy + c;
            if (pairs && c + 1 < m) {
                if (ACC) {
                    const float2 o = *(const float2 *)yr;
                    v0 += o.x, v1 += o.y;
                }
                *(float2 *)yr = make_float2(v0, v1);
            } else {
                if (c < m)
                    yr[0] = ACC ? yr[0] + v0 : v0;
                if (c + 1 < m)
                    yr[1] = ACC ? yr[1] + v1 : v1;
            }
        }
    }
}

// Device dev's (0..63) multiprocessors when it runs the sm_90a kernels
// (compute capability 9.0 exactly: the build's sm_90a code runs on nothing
// else), else 0; asked of the runtime once per device, as smem_optin is.
int wgmma_device(int dev)
{
    static std::atomic<int> cached[64]; // -1: no sm_90a kernels
    if (dev < 0 || dev >= 64)
        return 0;
    const int v = vt_rocm_memo(cached[dev], [dev] {
        int major = 0, minor = 0, sms = 0;
        if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
            (void)cudaGetLastError();
            sms = 0;
        }
        return major == 9 && minor == 0 && sms > 0 ? sms : -1;
    });
    return v > 0 ? v : 0;
}

// Queue the wgmma kernel over x's parts hi, lo (and sx, F16) already in
// scratch: bf16 (F16: f16) weights w, y (ACC: y +=) with rows ldy apart;
// BN 128 or 256 rows of W per block, k in SPLIT parts (clusters of SPLIT
// blocks); chained: after the kernel before it, which must not write w.
template <int PASSES, int BN, int SPLIT, bool F16, bool ACC>
hipError_t queue_wgmma(const uint16_t *hi, const uint16_t *lo, const float *sx, const void *w, float *y, int64_t n,
                       int64_t m, int64_t k, int64_t kp, int64_t ldy, hipStream_t stream, int dev, bool chained)
{
    auto kernel = gemm_wgmma_kernel<PASSES, BN, SPLIT, F16, ACC>;
    const size_t smem = wg_smem_bytes<BN>();
    const cudaError_t e = vt_mma::smem_opt_in<gemm_wgmma_kernel<PASSES, BN, SPLIT, F16, ACC>>(dev, smem);
    if (e != cudaSuccess)
        return e;
    const dim3 grid((unsigned)((m + BN - 1) / BN), (unsigned)((n + 127) / 128), SPLIT);
    /* the SPLIT blocks of a tile (its halves of k) as one cluster */
    vt_launch(kernel, grid, dim3(kThreads), smem, stream, dim3(1, 1, SPLIT), chained, hi, lo, (const uint16_t *)w, sx,
              y, n, m, k, kp, ldy);
    return hipGetLastError();
}

// The split of x (bf16 hi, lo; F16: f16 hi, lo of each row scaled) and
// the wgmma kernel chained after it, bf16 (F16: f16) weights.
template <int PASSES = 2, int BN = 128, int SPLIT = 1, bool F16 = false>
hipError_t launch_wgmma(const float *x, const void *w, float *y, int64_t n, int64_t m, int64_t k, void *scratch,
                        hipStream_t stream, int dev)
{
    const int64_t kp = padded_k(k);
    uint16_t *hi, *lo;
    float *sx;
    split_parts(scratch, n, kp, &hi, &lo, &sx);
    queue_split<F16 ? kWF16 : kWBf16, true>(x, hi, lo, sx, n, k, kp, stream);
    return queue_wgmma<PASSES, BN, SPLIT, F16, false>(hi, lo, sx, w, y, n, m, k, kp, m, stream, dev, true);
}

// bf16 (F16: f16) on sm_90a: 128 x 256 tiles (a third less traffic from L2
// per product than 128 x 128: x counts twice) when they fill most of the
// sms multiprocessors, else the same tiles with k in 2 halves (twice the
// blocks).
template <bool F16>
hipError_t launch_wgmma_dense(const float *x, const void *w, float *y, int64_t n, int64_t m, int64_t k, void *scratch,
                              hipStream_t stream, int dev, int sms)
{
    const int64_t tiles = (n + 127) / 128 * ((m + 255) / 256);
    if (4 * tiles >= 3 * (int64_t)sms)
        return launch_wgmma<2, 256, 1, F16>(x, w, y, n, m, k, scratch, stream, dev);
    return launch_wgmma<2, 256, 2, F16>(x, w, y, n, m, k, scratch, stream, dev);
}

// The block formats the scaled kernel does not decode (every one but q4_0
// and q8_0) on sm_90a: W dequantized into scratch as bf16 pairs hi + lo
// (vt_rocm_launch_dequantize_pair: 16 significant bits of each value), then
// y = x W_hi (x's bf16 parts, 2 passes) and y += x_hi W_lo (one pass):
// about 16 significant bits of x and of W, as the bf16 path keeps of x.
// Taken where the pairs fit vt_rocm_gemm_deq_bytes (256 MiB: m = 4096,
// k = 14336 fits; deq_fits), all of W at once: chunks of 1024 rows left
// multiprocessors idle at n = 512 (1182 us there on the H100, BENCHMARKS.md
// round 38).

// Whether W [m, k] as bf16 pairs fits the dequantized path's scratch.
bool deq_fits(int64_t m, int64_t k)
{
    return m <= vt_rocm_gemm_deq_bytes / 4 / k;
}

// Bytes before the bf16 pairs in scratch: x's split (256-byte aligned).
int64_t deq_pairs_at(int64_t n, int64_t kp)
{
    return (2 * n * kp * 2 + (kp / 32) * n * 4 + 255) / 256 * 256;
}

// The dequantized path: W's pairs, x's split (chained after them: the
// first product reads W before its wait, which the kernel just before it
// must not write), then the two products, the second added into y.
template <int SPLIT>
hipError_t launch_wgmma_deq_split(const float *x, const void *w, uint32_t w_dtype, float *y, int64_t n, int64_t m,
                                  int64_t k, void *scratch, hipStream_t stream, int dev)
{
    const int64_t kp = padded_k(k);
    uint16_t *hi, *lo;
    float *sx;
    split_parts(scratch, n, kp, &hi, &lo, &sx);
    uint16_t *pairs = (uint16_t *)((uint8_t *)scratch + deq_pairs_at(n, kp));
    hipError_t e = vt_rocm_launch_dequantize_pair(w, w_dtype, pairs, m * k, stream);
    if (e != hipSuccess)
        return e;
    queue_split<kWBf16, true>(x, hi, lo, sx, n, k, kp, stream);
    e = queue_wgmma<2, 256, SPLIT, false, false>(hi, lo, sx, pairs, y, n, m, k, kp, m, stream, dev, true);
    if (e != hipSuccess)
        return e;
    return queue_wgmma<1, 256, SPLIT, false, true>(hi, lo, sx, pairs + m * k, y, n, m, k, kp, m, stream, dev, true);
}

// The dequantized path with launch_wgmma_dense's choice of k halves.
hipError_t launch_wgmma_deq(const float *x, const void *w, uint32_t w_dtype, float *y, int64_t n, int64_t m, int64_t k,
                            void *scratch, hipStream_t stream, int dev, int sms)
{
    const int64_t tiles = (n + 127) / 128 * ((m + 255) / 256);
    if (4 * tiles >= 3 * (int64_t)sms)
        return launch_wgmma_deq_split<1>(x, w, w_dtype, y, n, m, k, scratch, stream, dev);
    return launch_wgmma_deq_split<2>(x, w, w_dtype, y, n, m, k, scratch, stream, dev);
}

// The sm_90a kernel of the block formats (q4_0, q8_0 weights): the same
// tiles, ring and instruction on f16 operands, each 32-slice of k summed
// apart (x hi and lo, 4 wgmma) and added to the tile times the block's
// factor, the two warpgroups out of phase so one's products run while the
// other adds; each row of y times its x row's 2^-p at the end (x's split
// scales a row by one power of two). The next stage's blocks are read into
// registers during a stage (one block of 32 per thread) and written decoded
// (f16 codes, the 128-byte swizzle) and their factors at its end.
constexpr int kWgScales = 2 * 128; // floats per slot: sw [2][128]

// The f16 pair of bits v minus c (both halves), as bits.
__device__ __forceinline__ uint32_t f16x2_minus(uint32_t v, float c)
{
    __half2 h = *(const __half2 *)&v;
    h = __hsub2(h, __float2half2_rn(c));
    return *(const uint32_t *)&h;
}

template <int WK> struct WgBlock {
    static_assert(WK == kWQ40 || WK == kWQ80, "block formats only");
    uint16_t q[WK == kWQ40 ? 8 : 16];
    uint16_t d;
    bool ok;
};

// The weight blocks of thread t for stage after stage: row t / 2, block
// 2 kt + t % 2 (the pointer steps 2 blocks a stage). wide (W 4-byte
// aligned, an even number of blocks a row): a pair of blocks starts 4-byte
// aligned, and each block is read as the NW 4-byte words that hold it (the
// second starts 2 bytes into its first word), else as 16-bit words.
template <int WK> struct WgBlockReader {
    static constexpr int BYTES = WK == kWQ40 ? 18 : 34, WORDS = WK == kWQ40 ? 8 : 16, NW = (BYTES + 2 + 3) / 4;
    const uint16_t *p;
    int64_t kb, kb_row;
    int sh;
    bool row, wide;

    __device__ __forceinline__ WgBlockReader(const void *w, int64_t m, int64_t kb_row_, int64_t m0, bool wide_)
    {
        const int64_t gr = m0 + (threadIdx.x >> 1);
        row = gr < m;
        kb = threadIdx.x & 1;
        kb_row = kb_row_;
        wide = wide_;
        sh = wide && kb ? 16 : 0;
        p = (const uint16_t *)((const uint8_t *)w + ((row ? gr : 0) * kb_row + kb) * BYTES) - (sh ? 1 : 0);
    }

    __device__ __forceinline__ void read(WgBlock<WK> &r)
    {
        r.ok = row && kb < kb_row;
        if (r.ok && wide) {
            const uint32_t *p32 = (const uint32_t *)p;
            uint32_t v[NW + 1];
#pragma unroll
            for (int i = 0; i < NW; i++)
                v[i] = __ldg(p32 + i);
            v[NW] = 0;
#pragma unroll
            for (int i = 0; i < NW; i++)
                v[i] = __funnelshift_r(v[i], v[i + 1], sh);
            r.d = (uint16_t)v[0];
#pragma unroll
            for (int j = 0; j < WORDS; j++)
                r.q[j] = (uint16_t)(v[(j + 1) >> 1] >> (((j + 1) & 1) * 16));
        } else if (r.ok) {
            r.d = __ldg(p);
#pragma unroll
            for (int j = 0; j < WORDS; j++)
                r.q[j] = __ldg(p + 1 + j);
        }
        p += BYTES; // 2 blocks of BYTES bytes in 16-bit words
        kb += 2;
    }
};

// The block as f16 codes (q - 8, or the signed byte) into the W tile ws
// (swizzled) and its factor into sw [2][128].
template <int WK> __device__ __forceinline__ void wg_store_block(const WgBlock<WK> &r, uint16_t *ws, float *sw)
{
    const int row = threadIdx.x >> 1, b = threadIdx.x & 1;
    uint32_t o[16];
    if (!r.ok) {
#pragma unroll
        for (int j = 0; j < 16; j++)
            o[j] = 0;
    } else if (WK == kWQ40) { // byte j: low nibble element j, high nibble element 16 + j
                              // f16 0x6400 | v is 1024 + v (v < 1024): minus 1032 is q - 8, exact
#pragma unroll
        for (int j = 0; j < 8; j++) {
            const uint32_t v = r.q[j];
            o[j] = f16x2_minus((v & 0x000Fu) | ((v & 0x0F00u) << 8) | 0x64006400u, 1032.f);
            o[8 + j] = f16x2_minus(((v >> 4) & 0x000Fu) | ((v & 0xF000u) << 4) | 0x64006400u, 1032.f);
        }
    } else { // the signed byte q: 1024 + (q + 128) minus 1152, exact
#pragma unroll
        for (int j = 0; j < 16; j++) {
            const uint32_t v = r.q[j];
            o[j] = f16x2_minus(((v & 0x00FFu) | ((v & 0xFF00u) << 8) | 0x64006400u) ^ 0x00800080u, 1152.f);
        }
    }
#pragma unroll
    for (int cc = 0; cc < 4; cc++) {
        const int c = 4 * b + cc;
        *(uint4 *)(ws + row * kWgBK + ((c ^ (row & 7)) << 3)) =
            make_uint4(o[4 * cc], o[4 * cc + 1], o[4 * cc + 2], o[4 * cc + 3]);
    }
    sw[b * 128 + row] = r.ok ? vt_dev_f16_to_f32_fast(r.d) : 0.f;
}

// acc += slice sum t times the W factor (per column), slice s of the
// stage's factors sw.
__device__ __forceinline__ void wg_fold(float (&acc)[64], float (&t)[64], const float *sw, int s, int lane)
{
#pragma unroll
    for (int i = 0; i < 64; i++)
        wg_keep(t[i]);
    const int q = lane & 3;
#pragma unroll
    for (int j = 0; j < 16; j++) {
        const float2 f = *(const float2 *)(sw + s * 128 + 8 * j + 2 * q); /* columns c, c + 1 (c even) */
        acc[4 * j] = fmaf(f.x, t[4 * j], acc[4 * j]);
        acc[4 * j + 1] = fmaf(f.y, t[4 * j + 1], acc[4 * j + 1]);
        acc[4 * j + 2] = fmaf(f.x, t[4 * j + 2], acc[4 * j + 2]);
        acc[4 * j + 3] = fmaf(f.y, t[4 * j + 3], acc[4 * j + 3]);
    }
}

// The 4 products of slice s of the stage at st (x hi and lo, 2 x 16 of k)
// into t, overwriting it.
__device__ __forceinline__ void wg_slice(float (&t)[64], uint32_t st, int s, int wg)
{
    wg_fence();
#pragma unroll
    for (int pass = 0; pass < 2; pass++)
#pragma unroll
        for (int kk = 2 * s; kk < 2 * s + 2; kk++)
            wgmma128<true>(t, wg_desc(st + pass * kWgTile * 2 + wg * 64 * 128 + kk * 32),
                           wg_desc(st + 2 * kWgTile * 2 + kk * 32), pass + kk != 2 * s);
    wg_commit();
}

template <int WK>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_wgmma_scaled_kernel(const uint16_t *__restrict__ xh, const uint16_t *__restrict__ xl,
                             const float *__restrict__ sx, const void *__restrict__ w, float *__restrict__ y, int64_t n,
                             int64_t m, int64_t k, int64_t kp, bool wide)
{
    extern __shared__ __align__(16) uint16_t smem_raw[];
    const uint32_t raw = smem_u32(smem_raw), base = (raw + 1023) & ~1023u;
    uint16_t *smem = smem_raw + (base - raw) / 2;
    float *scales = (float *)(smem + kWgStages * kWgStage); // [slot][sw 2 x 128]
    const int wg = threadIdx.x >> 7, warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
    const int64_t row0 = (int64_t)blockIdx.y * 128, m0 = (int64_t)blockIdx.x * 128;
    const int64_t kt_n = kp / kWgBK, kb_row = k / 32;

    const bool lead = wg == 0;
    float acc[64], sum[64];
#pragma unroll
    for (int i = 0; i < 64; i++)
        acc[i] = sum[i] = 0.f;

    // x two stages ahead by cp.async as in the bf16 kernel.
    WgLoader<2, 0> ld(xh, xl, nullptr, n, m, k, kp, row0, m0, 0);
    auto issue = [&](int64_t kt) { // stage kt's x parts, then its commit
        ld.load_x(smem + (int)(kt % kWgStages) * kWgStage, kt < kt_n);
        cp_commit();
    };
    // Chained after its own split of x (launch_wgmma_scaled): W's first
    // block before the wait, as the own-op rule of rocm_chain.h allows (the
    // split writes hi, lo and the row factors only); x after it.
    WgBlockReader<WK> rd(w, m, kb_row, m0, wide);
    WgBlock<WK> blk;
    rd.read(blk);
    wg_store_block(blk, smem + 2 * kWgTile, scales);
    vt_chain_begin();
    issue(0);
    issue(1);
    for (int64_t kt = 0; kt < kt_n; kt++) {
        cp_wait<1>();
        fence_async_smem();
        __syncthreads();
        issue(kt + 2);
        const bool more = kt + 1 < kt_n;
        if (more)
            rd.read(blk);
        const int slot = (int)(kt % kWgStages);
        const uint32_t st = base + (uint32_t)(slot * kWgStage * 2);
        // A slice sum is read only after a wait for all of this
        // warpgroup's products (ptxas serializes wgmma otherwise), so the
        // overlap is between the warpgroups: the second adds the stage's
        // second sum at the next stage's start, half a stage after the
        // first, and each one's products run while the other adds.
        if (!lead && kt > 0)
            wg_fold(acc, sum, scales + ((kt - 1) % kWgStages) * kWgScales, 1, lane);
        wg_slice(sum, st, 0, wg);
        wg_wait<0>();
        wg_fold(acc, sum, scales + slot * kWgScales, 0, lane);
        wg_slice(sum, st, 1, wg);
        wg_wait<0>();
        if (lead)
            wg_fold(acc, sum, scales + slot * kWgScales, 1, lane);
        if (more) {
            const int ns = (int)((kt + 1) % kWgStages);
            wg_store_block(blk, smem + ns * kWgStage + 2 * kWgTile, scales + ns * kWgScales);
        }
    }
    if (!lead && kt_n > 0)
        wg_fold(acc, sum, scales + ((kt_n - 1) % kWgStages) * kWgScales, 1, lane);
    cp_wait<0>();

    const int g = lane >> 2, t = lane & 3;
    const bool pairs = (m & 1) == 0 && ((uintptr_t)y & 7) == 0;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int64_t r = row0 + wg * 64 + warp * 16 + g + 8 * h;
        if (r >= n)
            continue;
        const float rs = sx[r]; /* the row's 2^-p (slice 0 of sx) */
#pragma unroll
        for (int j = 0; j < 16; j++) {
            const int64_t c = m0 + 8 * j + 2 * t;
            const float v0 = acc[4 * j + 2 * h] * rs, v1 = acc[4 * j + 2 * h + 1] * rs;
            if (pairs && c + 1 < m) {
                *(float2 *)(y + r * m + c) = make_float2(v0, v1);
            } else {
                if (c < m)
                    y[r * m + c] = v0;
                if (c + 1 < m)
                    y[r * m + c + 1] = v1;
            }
        }
    }
}

constexpr size_t kWgScaledSmemBytes = kWgSmemBytes + kWgStages * kWgScales * sizeof(float);

// The split of x (f16 hi, lo of each row scaled) and the block-format
// wgmma kernel: q4_0 or q8_0 weights.
template <int WK>
hipError_t launch_wgmma_scaled(const float *x, const void *w, float *y, int64_t n, int64_t m, int64_t k, void *scratch,
                               hipStream_t stream, int dev)
{
    const int64_t kp = padded_k(k);
    uint16_t *hi, *lo;
    float *sx;
    split_parts(scratch, n, kp, &hi, &lo, &sx);
    queue_split<WK, true>(x, hi, lo, sx, n, k, kp, stream);
    /* the blocks as 4-byte words where every pair of them is 4-byte aligned */
    const bool wide = (uintptr_t)w % 4 == 0 && (k / 32) % 2 == 0;
    const cudaError_t e = vt_mma::smem_opt_in<gemm_wgmma_scaled_kernel<WK>>(dev, kWgScaledSmemBytes);
    if (e != cudaSuccess)
        return e;
    const dim3 grid((unsigned)((m + 127) / 128), (unsigned)((n + 127) / 128));
    /* chained after the split (the kernel waits before it reads x) */
    VT_LAUNCH_CHAINED(gemm_wgmma_scaled_kernel<WK>, grid, kThreads, kWgScaledSmemBytes, stream, (const uint16_t *)hi,
                      (const uint16_t *)lo, (const float *)sx, w, y, n, m, k, kp, wide);
    return hipGetLastError();
}
#endif /* VT_GEMM_SM90A */

#endif /* VT_HIP_PLATFORM_NVIDIA */

} // namespace

#if defined(VT_HIP_PLATFORM_NVIDIA)
// The first width (rows of x) at which block format w_dtype takes the
// dequantized path: VT_ROCM_GEMM_DEQ_MIN_N where set, else the format's
// own. The pairs path costs about 145 - 152 us at any such width (m = k =
// 4096; the pass over W and two under-filled products), the decode kernels
// one pass over W per 8 rows of x; each width is the first where the pairs
// path measured faster (H100, graph us, decode kernels / pairs path forced
// by VT_ROCM_GEMM_DEQ_MIN_N = 65536 / 1; BENCHMARKS.md round 40): q6_k n =
// 105 142.8 / 148.5, 113 153.4 / 148.6; q2_k 121 154.5 / 145.4, and the
// decode kernels 148.5 at 120 (15 passes, as at 113); q5_1 113 148.1 /
// 149.3, 121 158.2 / 148.7; q3_k 121 144.3 / 148.9, 129 154.2 / 148.2; q5_k
// 121 146.8 / 149.2, 129 156.4 / 149.4; q4_1 129 144.2 / 144.5, 137 150.7 /
// 144.9; q5_0 129 143.3 / 150.1, 137 151.6 / 149.9; q4_k 129 142.6 / 146.6,
// 137 150.5 / 148.3; even at 137: iq4_nl 149.5 / 149.7, iq4_xs 152.1 /
// 151.9, mxfp4 152.2 / 151.3.
static int64_t deq_min_n(uint32_t w_dtype)
{
    if (vt_rocm_gemm_deq_min_n > 0)
        return vt_rocm_gemm_deq_min_n;
    switch (w_dtype) {
    case VT_Q2_K:
    case VT_Q6_K: return 113;
    case VT_Q5_1: return 121;
    case VT_Q3_K:
    case VT_Q5_K: return 129;
    case VT_Q4_1:
    case VT_Q5_0:
    case VT_Q4_K: return 137;
    default: return 144; /* iq4_nl, iq4_xs, mxfp4 */
    }
}
#endif

extern "C" int vt_rocm_gemm_takes(uint32_t w_dtype, int64_t n, int64_t m, int64_t k, const void *x, const void *w,
                                  int dev)
{
#if defined(VT_HIP_PLATFORM_NVIDIA)
    const bool q = w_dtype == VT_Q4_0 || w_dtype == VT_Q8_0, dense = w_dtype == VT_BF16 || w_dtype == VT_F16;
    const int64_t min_n = q ? VT_ROCM_GEMM_MIN_N_Q : dense ? VT_ROCM_GEMM_MIN_N : deq_min_n(w_dtype);
    if (n < min_n || m <= 0 || k <= 0 || n > 65535LL * kBM || m > 0x7fffffffLL)
        return 0;
    if ((uintptr_t)x % 16 != 0 || k % 4 != 0 || dev < 0 || dev >= 64)
        return 0;
    /* a device of sm_80 or later (smem_optin's per-device cache answers 0
     * before, or when the runtime cannot answer) */
    if (vt_mma::smem_optin(dev) == 0)
        return 0;
    switch (w_dtype) {
    case VT_BF16:
    case VT_F16: return k % 8 == 0 && (uintptr_t)w % 16 == 0;
    case VT_Q4_0:
    case VT_Q8_0: return k % 32 == 0 && (uintptr_t)w % 2 == 0;
    default:
#if defined(VT_GEMM_SM90A)
        /* the other block formats: dequantized into bf16 pairs (sm_90a) */
        return vt_block_elems(w_dtype) > 1 && k % vt_block_elems(w_dtype) == 0 && k % 8 == 0 && deq_fits(m, k) &&
               wgmma_device(dev) > 0;
#else
        return 0;
#endif
    }
#else
    (void)w_dtype, (void)n, (void)m, (void)k, (void)x, (void)w, (void)dev;
    return 0;
#endif
}

extern "C" uint64_t vt_rocm_gemm_scratch_bytes(uint32_t w_dtype, int64_t n, int64_t m, int64_t k)
{
#if defined(VT_HIP_PLATFORM_NVIDIA)
    const int64_t kp = padded_k(k);
    const bool deq = vt_block_elems(w_dtype) > 1 && w_dtype != VT_Q4_0 && w_dtype != VT_Q8_0;
#if defined(VT_GEMM_SM90A)
    if (deq) /* x's split, then W's bf16 pairs */
        return (uint64_t)(deq_pairs_at(n, kp) + 4 * m * k);
#endif
    (void)deq, (void)m;
    return (uint64_t)(2 * n * kp * 2 + (kp / 32) * n * 4);
#else
    (void)w_dtype, (void)n, (void)m, (void)k;
    return 0;
#endif
}

extern "C" hipError_t vt_rocm_launch_gemm(const float *x, const void *w, uint32_t w_dtype, float *y, int64_t n,
                                          int64_t m, int64_t k, void *scratch, int dev, hipStream_t stream)
{
#if defined(VT_HIP_PLATFORM_NVIDIA)
    /* dev: the current device, which the caller names (the opt-ins and
     * wgmma_device are per device) */
    if (dev < 0 || dev >= 64)
        return hipErrorInvalidValue;
#if defined(VT_GEMM_SM90A)
    const int sms = wgmma_device(dev);
#endif
    switch (w_dtype) {
    case VT_BF16:
#if defined(VT_GEMM_SM90A)
        if (sms)
            return launch_wgmma_dense<false>(x, w, y, n, m, k, scratch, stream, dev, sms);
#endif
        return launch<kWBf16>(x, w, y, n, m, k, scratch, stream, dev);
    case VT_F16:
#if defined(VT_GEMM_SM90A)
        if (sms)
            return launch_wgmma_dense<true>(x, w, y, n, m, k, scratch, stream, dev, sms);
#endif
        return launch<kWF16>(x, w, y, n, m, k, scratch, stream, dev);
    case VT_Q4_0:
#if defined(VT_GEMM_SM90A)
        if (sms)
            return launch_wgmma_scaled<kWQ40>(x, w, y, n, m, k, scratch, stream, dev);
#endif
        return launch<kWQ40>(x, w, y, n, m, k, scratch, stream, dev);
    case VT_Q8_0:
#if defined(VT_GEMM_SM90A)
        if (sms)
            return launch_wgmma_scaled<kWQ80>(x, w, y, n, m, k, scratch, stream, dev);
#endif
        return launch<kWQ80>(x, w, y, n, m, k, scratch, stream, dev);
    default:
#if defined(VT_GEMM_SM90A)
        if (sms && vt_block_elems(w_dtype) > 1)
            return launch_wgmma_deq(x, w, w_dtype, y, n, m, k, scratch, stream, dev, sms);
#endif
        break;
    }
#else
    (void)x, (void)w, (void)w_dtype, (void)y, (void)n, (void)m, (void)k, (void)scratch, (void)dev, (void)stream;
#endif
    return hipErrorInvalidValue;
}
