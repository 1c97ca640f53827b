// kernels_gemm.hip - prefill MatMul on matrix instructions: y[n,m] =
// sum_k x[n,k] * W[m,k] for n at or above the decode range, x f32, W bf16,
// f16, q4_0 or q8_0. A first pass splits x into 16-bit hi and lo parts in
// the queue's scratch; then a block of 256 threads computes a 128 x 128
// tile of y from k-slices of 32 in a 4-stage shared-memory ring (x's parts
// and plain bf16/f16 weights by cp.async three stages ahead, block-format
// weights through registers one stage ahead, decoded on the way), read by
// ldmatrix into register-blocked warp tiles of 64 x 32 and multiplied by
// mma.sync m16n8k16 (f32 sums).
//
// x stays accurate (SPEC 7: 1e-4 for block formats; the model runner must
// stay token-exact against the cpu oracle): each x is split into a high and
// a low part of the 16-bit type, x = hi + lo, and both are multiplied (two
// mma passes), about 16 (bf16) or 22 (f16) significant bits of x.
//  - bf16 weights: hi, lo in bf16 (the range of f32, no scaling).
//  - f16 weights, q4_0, q8_0 ("scaled" path): hi, lo in f16 from x times a
//    power of two chosen per row and 32-slice of k (so hi stays normal and
//    finite); the weight is f16 itself or the block's integer codes (q - 8,
//    or the signed byte: exact in f16); each 32-slice is summed apart and
//    added to the f32 sum times the x slice's power of two and the block's
//    f16 factor d, as the oracle applies d per block.
// Built for NVIDIA sm_80 and newer; elsewhere the launcher takes nothing
// and the caller keeps its own kernels.
#include "rocm_device.h"
#include "rocm_launch.h"

#include <vt/vt_dtype.h>

#if defined(VT_HIP_PLATFORM_NVIDIA)
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

__device__ __forceinline__ uint32_t smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void cp_async16(void *dst, const void *src, int src_bytes)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(src_bytes));
#else
    (void)dst;
    (void)src;
    (void)src_bytes;
#endif
}

__device__ __forceinline__ void cp_async4(void *dst, const void *src, int src_bytes)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(src_bytes));
#else
    (void)dst;
    (void)src;
    (void)src_bytes;
#endif
}

__device__ __forceinline__ void cp_async_commit()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}

// Wait until at most N groups of this thread are in flight.
template <int N> __device__ __forceinline__ void cp_async_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], const void *p)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
#else
    (void)p;
    r[0] = r[1] = r[2] = r[3] = 0;
#endif
}

// d += a * b, m16n8k16, f32 sums; F16: the operands are f16, else bf16.
template <bool F16> __device__ __forceinline__ void mma16816(float d[4], const uint32_t a[4], const uint32_t b[2])
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if (F16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    (void)d;
    (void)a;
    (void)b;
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

// The split of x, a pass before the product: x [n, k] into hi and lo
// [n, kp] (kp = k rounded up to 32, zeros beyond k) of the 16-bit type and,
// scaled, the inverse power of two of each 32-slice into sx [kp / 32, n].
// One thread per 4 elements; the 8 threads of a slice are adjacent lanes.
template <bool SCALED>
__global__ void split_x_kernel(const float *__restrict__ x, uint16_t *__restrict__ hi, uint16_t *__restrict__ lo,
                               float *__restrict__ sx, int64_t n, int64_t k, int64_t kp)
{
    const int64_t q = kp / 4, total = n * q;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t base = (int64_t)blockIdx.x * blockDim.x; base < total; base += stride) {
        const int64_t idx = base + threadIdx.x;
        const bool in = idx < total;
        const int64_t row = in ? idx / q : 0, col = in ? 4 * (idx % q) : 0;
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        if (in && col < k)
            v = __ldg((const float4 *)(x + row * k + col));
        uint2 h, l;
        if (SCALED) {
            float a = fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w)));
            a = fmaxf(a, __shfl_xor_sync(0xffffffffu, a, 1));
            a = fmaxf(a, __shfl_xor_sync(0xffffffffu, a, 2));
            a = fmaxf(a, __shfl_xor_sync(0xffffffffu, a, 4));
            // a = f * 2^e, f in [1, 2): x times 2^(13 - e) is below 2^14 in magnitude.
            const int e = a > 0.f && a <= 3.4e38f ? ((__float_as_int(a) >> 23) & 255) - 127 : 0;
            int p = 13 - e;
            p = p > 126 ? 126 : p; /* |p| <= 126: 2^p and 2^-p are normal */
            const float s = pow2(p);
            if (in && (idx & 7) == 0)
                sx[(col / 32) * n + row] = pow2(-p);
            v.x *= s, v.y *= s, v.z *= s, v.w *= s;
            const __half2 h0 = __floats2half2_rn(v.x, v.y), h1 = __floats2half2_rn(v.z, v.w);
            const float2 f0 = __half22float2(h0), f1 = __half22float2(h1);
            h.x = *(const uint32_t *)&h0;
            h.y = *(const uint32_t *)&h1;
            l.x = pack_f16(v.x - f0.x, v.y - f0.y);
            l.y = pack_f16(v.z - f1.x, v.w - f1.y);
        } else {
            const __nv_bfloat162 h0 = __floats2bfloat162_rn(v.x, v.y), h1 = __floats2bfloat162_rn(v.z, v.w);
            const float2 f0 = __bfloat1622float2(h0), f1 = __bfloat1622float2(h1);
            h.x = *(const uint32_t *)&h0;
            h.y = *(const uint32_t *)&h1;
            l.x = pack_bf16(v.x - f0.x, v.y - f0.y);
            l.y = pack_bf16(v.z - f1.x, v.w - f1.y);
        }
        if (in) {
            *(uint2 *)(hi + row * kp + col) = h;
            *(uint2 *)(lo + row * kp + col) = l;
        }
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
        cp_async16((part ? ls : hs) + row * kLd + c, ok ? (const void *)(src + gr * kp + k0 + c) : (const void *)src,
                   ok ? 16 : 0);
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
        cp_async16(ws + row * kLd + c, ok ? (const void *)(w + gr * k + gc) : (const void *)w, ok ? 16 : 0);
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
            ldmatrix_x4(r, ws + mrow * kLd + kc);
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
                ldmatrix_x4(a, xs + nrow * kLd + kc);
#pragma unroll
                for (int j = 0; j < 4; j++)
                    mma16816<F16>(dst[i][j], a, b[j]);
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
        cp_async_commit();
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
        cp_async_wait<kStages - 2>();
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
    cp_async_wait<0>();

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

int64_t padded_k(int64_t k)
{
    return (k + kBK - 1) / kBK * kBK;
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
                  hipStream_t stream)
{
    const int64_t kp = padded_k(k);
    uint16_t *hi, *lo;
    float *sx;
    split_parts(scratch, n, kp, &hi, &lo, &sx);
    const int64_t quads = n * (kp / 4);
    const unsigned sgrid = (unsigned)(quads / 256 + 1 < 65536 ? quads / 256 + 1 : 65536);
    split_x_kernel<WK != kWBf16><<<sgrid, 256, 0, stream>>>(x, hi, lo, sx, n, k, kp);
    /* Over 48 KiB of shared memory needs the opt-in (per device: set each time, a host-side call). */
    const cudaError_t e =
        cudaFuncSetAttribute(gemm_kernel<WK, PASSES>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)kSmemBytes);
    if (e != cudaSuccess)
        return e;
    const dim3 grid((unsigned)((m + kBN - 1) / kBN), (unsigned)((n + kBM - 1) / kBM));
    gemm_kernel<WK, PASSES><<<grid, kThreads, kSmemBytes, stream>>>(hi, lo, sx, w, y, n, m, k, kp);
    return hipGetLastError();
}

#endif /* VT_HIP_PLATFORM_NVIDIA */

} // namespace

extern "C" int vt_rocm_gemm_takes(uint32_t w_dtype, int64_t n, int64_t m, int64_t k, const void *x, const void *w)
{
#if defined(VT_HIP_PLATFORM_NVIDIA)
    const bool q = w_dtype == VT_Q4_0 || w_dtype == VT_Q8_0;
    if (n < (q ? VT_ROCM_GEMM_MIN_N_Q : VT_ROCM_GEMM_MIN_N) || m <= 0 || k <= 0 || n > 65535LL * kBM ||
        m > 0x7fffffffLL)
        return 0;
    if ((uintptr_t)x % 16 != 0 || k % 4 != 0)
        return 0;
    int dev = 0, major = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    if (major < 8)
        return 0;
    switch (w_dtype) {
    case VT_BF16:
    case VT_F16: return k % 8 == 0 && (uintptr_t)w % 16 == 0;
    case VT_Q4_0:
    case VT_Q8_0: return k % 32 == 0 && (uintptr_t)w % 2 == 0;
    default: return 0;
    }
#else
    (void)w_dtype, (void)n, (void)m, (void)k, (void)x, (void)w;
    return 0;
#endif
}

extern "C" uint64_t vt_rocm_gemm_scratch_bytes(int64_t n, int64_t k)
{
#if defined(VT_HIP_PLATFORM_NVIDIA)
    const int64_t kp = padded_k(k);
    return (uint64_t)(2 * n * kp * 2 + (kp / 32) * n * 4);
#else
    (void)n, (void)k;
    return 0;
#endif
}

extern "C" hipError_t vt_rocm_launch_gemm(const float *x, const void *w, uint32_t w_dtype, float *y, int64_t n,
                                          int64_t m, int64_t k, void *scratch, hipStream_t stream)
{
#if defined(VT_HIP_PLATFORM_NVIDIA)
    switch (w_dtype) {
    case VT_BF16: return launch<kWBf16>(x, w, y, n, m, k, scratch, stream);
    case VT_F16: return launch<kWF16>(x, w, y, n, m, k, scratch, stream);
    case VT_Q4_0: return launch<kWQ40>(x, w, y, n, m, k, scratch, stream);
    case VT_Q8_0: return launch<kWQ80>(x, w, y, n, m, k, scratch, stream);
    }
#else
    (void)x, (void)w, (void)y, (void)n, (void)m, (void)k, (void)scratch, (void)stream;
#endif
    return hipErrorInvalidValue;
}
