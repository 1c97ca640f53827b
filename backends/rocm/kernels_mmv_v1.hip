// kernels_mmv_v1.hip - the first decode MatMul and MoeExpertMatMul kernels
// of the rocm backend, kept where they beat kernels_mmv.h's (the float
// types, iq4_nl and q4_k at n = 1, MoeExpertMatMul at t = 1; see
// kernels_mmv.hip for the choice): one block
// per R consecutive weight rows, its threads taking the rows' units (runs
// of 32 or 64 elements, or 8 for the float types) in order, each unit of
// each row decoded once and dotted with the N columns of x it meets, so x
// is loaded once per unit for R rows and the weight once for N columns.
// The per-thread sums meet over a fixed xor tree of the wavefront's width
// (64 on CDNA, 32 on RDNA and NVIDIA), then over the wavefronts in order. Codes become floats through the exponent
// trick on NVIDIA (2^23 + byte, one byte permute and one subtraction, exact)
// instead of the quarter-rate integer conversion; scales multiply per run
// of 8 (d * sum(x * code) + min * sum(x): the values of the cpu oracle,
// summed in another order, within SPEC 7's MatMul tolerance).
#include "kernels_mmv.h"

namespace
{

constexpr int kThreads = 256;

// Block geometry of a format (vt_dtype id), from vt_blocks.h: elements
// (32 for a dtype that is not a block format, so a division stays
// defined) and bytes (0 for one that is not).
__host__ __device__ constexpr int q_be(uint32_t dt)
{
    return vt_block_elems(dt) ? vt_block_elems(dt) : 32;
}
__host__ __device__ constexpr int q_bb(uint32_t dt)
{
    return vt_block_bytes(dt);
}

// 32-bit word at p (4-byte aligned), streamed: read once, kept out of L1.
__device__ inline uint32_t ld_w32(const uint32_t *p)
{
#if defined(VT_HIP_PLATFORM_NVIDIA)
    return __ldcs(p);
#else
    return __builtin_nontemporal_load(p);
#endif
}

// 16 bytes at p (16-byte aligned), streamed.
__device__ inline uint4 ld_w128(const uint4 *p)
{
#if defined(VT_HIP_PLATFORM_NVIDIA)
    return __ldcs(p);
#else
    uint4 v;
    v.x = __builtin_nontemporal_load(&p->x);
    v.y = __builtin_nontemporal_load(&p->y);
    v.z = __builtin_nontemporal_load(&p->z);
    v.w = __builtin_nontemporal_load(&p->w);
    return v;
#endif
}

// x values: read through the cache, shared by the rows of a wavefront and
// the wavefronts of a multiprocessor.
__device__ inline float4 ld_x4(const float *p)
{
#if defined(VT_HIP_PLATFORM_NVIDIA)
    return __ldg((const float4 *)p);
#else
    return *(const float4 *)p;
#endif
}

// A 16-byte value read by several lanes: through the cache.
__device__ inline uint4 ld_c128(const uint4 *p)
{
#if defined(VT_HIP_PLATFORM_NVIDIA)
    return __ldg(p);
#else
    return *p;
#endif
}

// A 32-bit word read by several lanes: through the cache.
__device__ inline uint32_t ld_c32(const uint32_t *p)
{
#if defined(VT_HIP_PLATFORM_NVIDIA)
    return __ldg(p);
#else
    return *p;
#endif
}

// Unsigned byte b (0..3) of word v as float minus off (exact for the small
// offsets used here).
__device__ inline float byte_f(uint32_t v, int b, float off)
{
#if defined(VT_HIP_PLATFORM_NVIDIA)
    return __uint_as_float(__byte_perm(v, 0x4B00u, 0x5440u | (unsigned)b)) - (8388608.0f + off);
#else
    return (float)((v >> (8 * b)) & 0xFFu) - off;
#endif
}

// Bytes 2..5 of the pair (lo, hi): the word that starts two bytes into lo.
__device__ inline uint32_t mid_word(uint32_t lo, uint32_t hi)
{
    return (lo >> 16) | (hi << 16);
}

// IQ4_NL's code book at nibble n (0..15).
__device__ inline float iq4nl_f(uint32_t n)
{
#if defined(VT_HIP_PLATFORM_NVIDIA)
    /* the book plus 128, bytes 0..15: a permute picks a byte of 8 */
    const uint32_t b =
        n & 8 ? __byte_perm(0xA6998D81u, 0xF1D9C5B5u, n & 7) : __byte_perm(0x3F2D1801u, 0x766A5D4Fu, n & 7);
    return byte_f(b, 0, 128.0f);
#else
    return vt_q_iq4nl((int)n);
#endif
}

// A unit's interface (U below): E elements per unit; C = E / 8 runs;
// xbase(u) the unit's first x element and xoff(c) run c's offset from it
// (each run is 8 consecutive x); load(row, u) reads the unit's bytes of one
// row; run(c, v, a, mn) its 8 values v (codes, offset applied) with the
// run's factor a and additive min mn (value = a * v + mn). kScaled/kMin say
// whether a and mn apply.

// Any format, element by element through vt_q_value (bytes read as they
// are needed): the fallback for the formats without a packed decoder.
template <uint32_t DT> struct UGen {
    static constexpr int E = 32, C = 4;
    static constexpr bool kScaled = false, kMin = false;
    const uint8_t *blk;
    int sub;
    __device__ static int64_t xbase(int64_t u)
    {
        return u * 32;
    }
    __device__ static int xoff(int c)
    {
        return 8 * c;
    }
    __device__ void load(const uint8_t *row, int64_t u)
    {
        constexpr int subs = q_be(DT) / 32;
        blk = row + (u / subs) * q_bb(DT);
        sub = (int)(u % subs);
    }
    __device__ void run(int c, float *v, float &a, float &mn) const
    {
#pragma unroll
        for (int i = 0; i < 8; i++)
            v[i] = vt_q_value(DT, blk, sub * 32 + 8 * c + i);
        a = 1.0f;
        mn = 0.0f;
    }
};

// f32 / f16 / bf16 rows: 8 elements from 16 (f16, bf16) or 32 (f32) bytes.
template <uint32_t WT> struct UDense {
    static constexpr int E = 8, C = 1;
    static constexpr bool kScaled = false, kMin = false;
    uint4 q[WT == VT_F32 ? 2 : 1];
    __device__ static int64_t xbase(int64_t u)
    {
        return u * 8;
    }
    __device__ static int xoff(int)
    {
        return 0;
    }
    __device__ void load(const uint8_t *row, int64_t u)
    {
        const uint4 *p = (const uint4 *)(const void *)row + u * (WT == VT_F32 ? 2 : 1);
        q[0] = ld_w128(p);
        if (WT == VT_F32)
            q[WT == VT_F32 ? 1 : 0] = ld_w128(p + 1);
    }
    __device__ void run(int, float *v, float &a, float &mn) const
    {
        a = 1.0f;
        mn = 0.0f;
        if (WT == VT_F32) {
            const uint4 p = q[0], r = q[WT == VT_F32 ? 1 : 0];
            v[0] = __uint_as_float(p.x), v[1] = __uint_as_float(p.y), v[2] = __uint_as_float(p.z);
            v[3] = __uint_as_float(p.w), v[4] = __uint_as_float(r.x), v[5] = __uint_as_float(r.y);
            v[6] = __uint_as_float(r.z), v[7] = __uint_as_float(r.w);
            return;
        }
        const uint32_t u[4] = {q[0].x, q[0].y, q[0].z, q[0].w};
#pragma unroll
        for (int i = 0; i < 4; i++) {
            if (WT == VT_F16) {
                v[2 * i] = vt_dev_f16_to_f32_fast((uint16_t)(u[i] & 0xFFFF));
                v[2 * i + 1] = vt_dev_f16_to_f32_fast((uint16_t)(u[i] >> 16));
            } else {
                v[2 * i] = __uint_as_float(u[i] << 16);
                v[2 * i + 1] = __uint_as_float(u[i] & 0xFFFF0000u);
            }
        }
    }
};

// Two consecutive blocks of q4_0 / iq4_nl (36 bytes, 9 words) or q8_0 (68
// bytes, 17 words): 64 elements. Needs 4-byte aligned rows of an even
// number of blocks. Block A: factor in the low half of word 0, codes from
// byte 2; block B: factor in the high half of the middle word, codes in
// the words after it.
template <uint32_t DT> struct UPair {
    static constexpr int W = DT == VT_Q8_0 ? 17 : 9;
    static constexpr int E = 64, C = 8;
    static constexpr bool kScaled = true, kMin = false;
    uint32_t w[W];
    __device__ static int64_t xbase(int64_t u)
    {
        return u * 64;
    }
    __device__ static int xoff(int c)
    {
        return 8 * c;
    }
    __device__ void load(const uint8_t *row, int64_t u)
    {
        const uint32_t *p = (const uint32_t *)(const void *)row + u * W;
#pragma unroll
        for (int i = 0; i < W; i++)
            w[i] = ld_w32(p + i);
    }
    // Code word i (0..CW) of block blk.
    __device__ uint32_t code(int blk, int i) const
    {
        return blk == 0 ? mid_word(w[i], w[i + 1]) : w[W / 2 + 1 + i];
    }
    __device__ void run(int c, float *v, float &a, float &mn) const
    {
        const int blk = c >> 2, h = c & 3;
        a = vt_dev_f16_to_f32_fast((uint16_t)(blk == 0 ? (w[0] & 0xFFFF) : (w[W / 2] >> 16)));
        mn = 0.0f;
        if (DT == VT_Q8_0) { /* run h: code bytes 8h..8h+7, signed (xor 0x80: plus 128) */
#pragma unroll
            for (int t = 0; t < 2; t++) {
                const uint32_t q = code(blk, 2 * h + t) ^ 0x80808080u;
#pragma unroll
                for (int b = 0; b < 4; b++)
                    v[4 * t + b] = byte_f(q, b, 128.0f);
            }
            return;
        }
        /* runs 0, 1: low nibbles of code bytes 8h..; runs 2, 3: high nibbles */
        const int wi = 2 * (h & 1), sh = 4 * (h >> 1);
#pragma unroll
        for (int t = 0; t < 2; t++) {
            const uint32_t q = (code(blk, wi + t) >> sh) & 0x0F0F0F0Fu;
#pragma unroll
            for (int b = 0; b < 4; b++)
                v[4 * t + b] = DT == VT_Q4_0 ? byte_f(q, b, 8.0f) : iq4nl_f((q >> (8 * b)) & 0xFF);
        }
    }
};

// Q4_K: 64 elements (the sub-blocks 2j and 2j + 1 of a 144-byte block)
// from the 16-byte header and 32 code bytes, three 16-byte loads (blocks
// are 16-byte aligned when the row is).
struct UQ4K {
    static constexpr int E = 64, C = 8;
    static constexpr bool kScaled = true, kMin = true;
    uint4 c0, c1;
    float a[2], mn[2];
    __device__ static int64_t xbase(int64_t u)
    {
        return u * 64;
    }
    __device__ static int xoff(int c)
    {
        return 8 * c;
    }
    __device__ void load(const uint8_t *row, int64_t u)
    {
        const uint8_t *blk = row + (u >> 2) * 144;
        const int j = (int)(u & 3);
        const uint4 hd = ld_c128((const uint4 *)(const void *)blk);
        c0 = ld_w128((const uint4 *)(const void *)(blk + 16 + 32 * j));
        c1 = ld_w128((const uint4 *)(const void *)(blk + 32 + 32 * j));
        const float d = vt_dev_f16_to_f32_fast((uint16_t)(hd.x & 0xFFFF));
        const float dmin = vt_dev_f16_to_f32_fast((uint16_t)(hd.x >> 16));
#pragma unroll
        for (int t = 0; t < 2; t++) {
            const int s = 2 * j + t, qq = 8 * (s & 3);
            const uint32_t b0 = (hd.y >> qq) & 0xFF, b1 = (hd.z >> qq) & 0xFF, b2 = (hd.w >> qq) & 0xFF;
            uint32_t sc, m;
            if (s < 4) {
                sc = b0 & 63;
                m = b1 & 63;
            } else {
                sc = (b2 & 0xF) | ((b0 >> 6) << 4);
                m = (b2 >> 4) | ((b1 >> 6) << 4);
            }
            a[t] = d * (float)sc;
            mn[t] = -(dmin * (float)m);
        }
    }
    __device__ void run(int c, float *v, float &af, float &mf) const
    {
        const int t = c >> 2, h = c & 3;
        af = a[t];
        mf = mn[t];
        const uint32_t u[8] = {c0.x, c0.y, c0.z, c0.w, c1.x, c1.y, c1.z, c1.w};
#pragma unroll
        for (int i = 0; i < 2; i++) {
            const uint32_t q = (u[2 * h + i] >> (4 * t)) & 0x0F0F0F0Fu;
#pragma unroll
            for (int b = 0; b < 4; b++)
                v[4 * i + b] = byte_f(q, b, 0.0f);
        }
    }
};

// Q6_K: 64 elements, the sub-blocks r and r + 2 of half h of a 210-byte
// block (they share their 32 low-code bytes and 32 high-bit bytes). Blocks
// are only 2-byte aligned: words are read from the aligned address below
// and shifted into place.
struct UQ6K {
    static constexpr int E = 64, C = 8;
    static constexpr bool kScaled = true, kMin = false;
    uint32_t ql[8], qh[8];
    float sc[4];
    int r;
    __device__ static int64_t xbase(int64_t u)
    {
        return (u >> 2) * 256 + 32 * (4 * ((u & 3) >> 1) + (u & 1));
    }
    __device__ static int xoff(int c)
    {
        return 64 * (c >> 2) + 8 * (c & 3);
    }
    // 8 words from byte address p (2-byte aligned), through the cache.
    __device__ static void words8(const uint8_t *p, uint32_t *out)
    {
        const uint32_t *a = (const uint32_t *)(const void *)((uintptr_t)p & ~(uintptr_t)3);
        const int sh = (int)((uintptr_t)p & 3) * 8;
        uint32_t prev = ld_c32(a);
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const uint32_t next = ld_c32(a + i + 1);
            out[i] = sh ? (prev >> sh) | (next << (32 - sh)) : prev;
            prev = next;
        }
    }
    __device__ void load(const uint8_t *row, int64_t u)
    {
        const uint8_t *blk = row + (u >> 2) * 210;
        const int h = (int)((u & 3) >> 1);
        r = (int)(u & 1);
        words8(blk + 64 * h + 32 * r, ql);
        words8(blk + 128 + 32 * h, qh);
        const int8_t *s = (const int8_t *)(blk + 192 + 8 * h + 2 * r);
        const float d = vt_q_half(blk + 208);
        sc[0] = d * (float)s[0];
        sc[1] = d * (float)s[1];
        sc[2] = d * (float)s[4];
        sc[3] = d * (float)s[5];
    }
    __device__ void run(int c, float *v, float &a, float &mn) const
    {
        const int t = c >> 2, h8 = c & 3, rr = r + 2 * t;
        a = sc[2 * t + (h8 >> 1)];
        mn = 0.0f;
#pragma unroll
        for (int i = 0; i < 2; i++) {
            const uint32_t q =
                ((ql[2 * h8 + i] >> (4 * t)) & 0x0F0F0F0Fu) | (((qh[2 * h8 + i] >> (2 * rr)) & 0x03030303u) << 4);
#pragma unroll
            for (int b = 0; b < 4; b++)
                v[4 * i + b] = byte_f(q, b, 32.0f);
        }
    }
};

// Sum over the lanes of a wavefront (fixed xor tree); every lane gets it.
__device__ inline float wave_sum(float v)
{
#pragma unroll
    for (int s = VT_ROCM_WAVE / 2; s > 0; s >>= 1)
        v += __shfl_xor(v, s, VT_ROCM_WAVE);
    return v;
}

// acc[r][j] += row wr[r] . column xs[j] over k, the threads of the block
// taking the units tid, tid + blockDim, ... (a wavefront's lanes take
// consecutive units); every thread ends with its share.
template <typename U, int N, int R>
__device__ inline void rows_dot(const uint8_t *const *wr, const float *const *xs, int64_t k, float (&acc)[R][N])
{
    const int64_t units = k / U::E;
    for (int64_t u = threadIdx.x; u < units; u += blockDim.x) {
        U q[R];
#pragma unroll
        for (int r = 0; r < R; r++)
            q[r].load(wr[r], u);
        const int64_t xb = U::xbase(u);
#pragma unroll
        for (int c = 0; c < U::C; c++) {
            float v[R][8], a[R], mn[R];
#pragma unroll
            for (int r = 0; r < R; r++)
                q[r].run(c, v[r], a[r], mn[r]);
#pragma unroll
            for (int j = 0; j < N; j++) {
                const float *xp = xs[j] + xb + U::xoff(c);
                const float4 x0 = ld_x4(xp), x1 = ld_x4(xp + 4);
                const float xv[8] = {x0.x, x0.y, x0.z, x0.w, x1.x, x1.y, x1.z, x1.w};
                float xsum = 0.0f;
                if (U::kMin) {
#pragma unroll
                    for (int i = 0; i < 8; i++)
                        xsum += xv[i];
                }
#pragma unroll
                for (int r = 0; r < R; r++) {
                    float sum = 0.0f;
#pragma unroll
                    for (int i = 0; i < 8; i++)
                        sum = fmaf(v[r][i], xv[i], sum);
                    if (U::kScaled)
                        acc[r][j] = fmaf(a[r], sum, acc[r][j]);
                    else
                        acc[r][j] += sum;
                    if (U::kMin)
                        acc[r][j] = fmaf(mn[r], xsum, acc[r][j]);
                }
            }
        }
    }
}

// The block's sums of acc (a fixed order: the wavefront's xor tree, then
// the wavefronts in order); thread i < R * N gets sum (i / N, i % N).
template <int N, int R> __device__ inline float block_sums(float (&acc)[R][N], float (*part)[R * N])
{
    const int lane = (int)threadIdx.x % VT_ROCM_WAVE, warp = (int)threadIdx.x / VT_ROCM_WAVE;
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int j = 0; j < N; j++) {
            const float s = wave_sum(acc[r][j]);
            if (lane == 0)
                part[warp][r * N + j] = s;
        }
    __syncthreads();
    float sum = 0.0f;
    if ((int)threadIdx.x < R * N)
        for (int w = 0; w < (int)blockDim.x / VT_ROCM_WAVE; w++)
            sum += part[w][threadIdx.x];
    __syncthreads();
    return sum;
}

// MatMul: block b takes the R rows from b * R, every thread of it a share
// of k; y[j, c] = x[j] . W[c] for the n (<= N) columns j (a missing column
// repeats the last one and is not stored).
template <typename U, int N, int R>
__global__ void __launch_bounds__(kThreads)
    mmv_kernel(const float *x, const uint8_t *w, int64_t row_bytes, float *y, int n, int64_t m, int64_t k)
{
    __shared__ float part[kThreads / 32][R * N];
    const int64_t row0 = (int64_t)blockIdx.x * R;
    const uint8_t *wr[R];
    const float *xs[N];
#pragma unroll
    for (int r = 0; r < R; r++)
        wr[r] = w + (row0 + r < m ? row0 + r : m - 1) * row_bytes;
#pragma unroll
    for (int j = 0; j < N; j++)
        xs[j] = x + (int64_t)(j < n ? j : n - 1) * k;
    float acc[R][N] = {};
    rows_dot<U, N, R>(wr, xs, k, acc);
    const float s = block_sums<N, R>(acc, part);
    const int i = (int)threadIdx.x, r = i / N, j = i % N;
    if (i < R * N && row0 + r < m && j < n)
        y[(int64_t)j * m + row0 + r] = s;
}

// MoeExpertMatMul: block (g, s) takes the R rows of group g of expert
// e = ids[s] when s is the first slot naming e, for every slot naming e
// (N at a time): each selected expert's rows are read once per call.
template <typename U, int N, int R>
__global__ void __launch_bounds__(kThreads)
    moe_mmv_kernel(const float *x, int x_per_slot, const uint8_t *w, int64_t row_bytes, const int32_t *ids, float *y,
                   int K, int TK, int64_t m, int64_t k)
{
    __shared__ float part[kThreads / 32][R * N];
    const int s = (int)blockIdx.y, e = ids[s];
    for (int p = 0; p < s; p++)
        if (ids[p] == e)
            return;
    const int64_t row0 = (int64_t)blockIdx.x * R;
    const uint8_t *wr[R];
#pragma unroll
    for (int r = 0; r < R; r++)
        wr[r] = w + ((int64_t)e * m + (row0 + r < m ? row0 + r : m - 1)) * row_bytes;
    for (int p = s; p < TK;) {
        int sl[N];
        const float *xs[N];
#pragma unroll
        for (int j = 0; j < N; j++) {
            while (p < TK && ids[p] != e)
                p++;
            sl[j] = p < TK ? p : -1;
            p++;
            const int src = sl[j] >= 0 ? sl[j] : sl[0];
            xs[j] = x + (int64_t)(x_per_slot ? src : src / K) * k;
        }
        float acc[R][N] = {};
        rows_dot<U, N, R>(wr, xs, k, acc);
        const float sum = block_sums<N, R>(acc, part);
        const int i = (int)threadIdx.x, r = i / N;
        int slot = -1;
#pragma unroll
        for (int j = 0; j < N; j++)
            if (i % N == j)
                slot = sl[j];
        if (i < R * N && row0 + r < m && slot >= 0)
            y[(int64_t)slot * m + row0 + r] = sum;
        while (p < TK && ids[p] != e)
            p++;
    }
}

// Lanes per wavefront of the current device (kernels_mmv.hip).
int host_wave_v1()
{
    return vt_mmv::host_wave();
}
// Rows per block: each x value loaded serves R rows (and x is read once per
// block from the cache: blocks * N * k * 4 bytes in all).
template <int N> constexpr int rows_for()
{
    return 4;
}

// Threads per block: one per unit of a row, whole wavefronts, at most
// kThreads.
template <typename U> unsigned threads_for(int64_t k)
{
    const int64_t wave = host_wave_v1(), units = k / U::E;
    const int64_t t = (units + wave - 1) / wave * wave;
    return (unsigned)(t < wave ? wave : t > kThreads ? kThreads : t);
}

template <typename U, int N>
hipError_t launch_cols(const float *x, const uint8_t *w, int64_t row_bytes, float *y, int n, int64_t m, int64_t k,
                       hipStream_t stream)
{
    constexpr int R = rows_for<N>();
    hipLaunchKernelGGL((mmv_kernel<U, N, R>), dim3((unsigned)((m + R - 1) / R)), dim3(threads_for<U>(k)), 0, stream, x,
                       w, row_bytes, y, n, m, k);
    return hipGetLastError();
}

// MatMul over n columns, 8 at a time.
template <typename U>
hipError_t launch_mmv(const float *x, const uint8_t *w, int64_t row_bytes, float *y, int64_t n, int64_t m, int64_t k,
                      hipStream_t stream)
{
    for (int64_t j0 = 0; j0 < n; j0 += 8) {
        const int nc = (int)(n - j0 < 8 ? n - j0 : 8);
        const float *xj = x + j0 * k;
        float *yj = y + j0 * m;
        hipError_t e;
        if (nc == 1)
            e = launch_cols<U, 1>(xj, w, row_bytes, yj, nc, m, k, stream);
        else if (nc == 2)
            e = launch_cols<U, 2>(xj, w, row_bytes, yj, nc, m, k, stream);
        else if (nc <= 4)
            e = launch_cols<U, 4>(xj, w, row_bytes, yj, nc, m, k, stream);
        else
            e = launch_cols<U, 8>(xj, w, row_bytes, yj, nc, m, k, stream);
        if (e != hipSuccess)
            return e;
    }
    return hipSuccess;
}

template <typename U, int N>
hipError_t launch_moe_cols(const float *x, int x_per_slot, const uint8_t *w, int64_t row_bytes, const int32_t *ids,
                           float *y, int K, int TK, int64_t m, int64_t k, hipStream_t stream)
{
    constexpr int R = rows_for<N>();
    hipLaunchKernelGGL((moe_mmv_kernel<U, N, R>), dim3((unsigned)((m + R - 1) / R), (unsigned)TK),
                       dim3(threads_for<U>(k)), 0, stream, x, x_per_slot, w, row_bytes, ids, y, K, TK, m, k);
    return hipGetLastError();
}

// Which unit decodes dtype over rows of row_bytes at w: 0 none (the caller
// keeps its own kernel), else the index used by dispatch below.
enum { U_NONE, U_GEN, U_DENSE, U_PAIR, U_Q4K, U_Q6K };

int pick_unit(uint32_t dt, const void *w, int64_t row_bytes, int64_t k)
{
    const uintptr_t a = (uintptr_t)w;
    if (dt == VT_F32 || dt == VT_F16 || dt == VT_BF16)
        return k % 8 == 0 && a % 16 == 0 && row_bytes % 16 == 0 ? U_DENSE : U_NONE;
    if (q_bb(dt) == 0 || k % q_be(dt) != 0)
        return U_NONE;
    if ((dt == VT_Q4_0 || dt == VT_IQ4_NL || dt == VT_Q8_0) && a % 4 == 0 && row_bytes % 4 == 0 && (k / 32) % 2 == 0)
        return U_PAIR;
    if (dt == VT_Q4_K && a % 16 == 0 && row_bytes % 16 == 0)
        return U_Q4K;
    if (dt == VT_Q6_K && a % 4 == 0 && row_bytes % 2 == 0)
        return U_Q6K;
    return U_GEN;
}

} // namespace

// The first kernels for MatMul (f32 x [n, k] against W [m, k] of w_dtype)
// for the float types, iq4_nl and q4_k: *taken = 0 when the dtype, shapes
// or alignments do not fit.
hipError_t vt_mmv::run_v1(const float *x, const void *w, uint32_t w_dtype, float *y, int64_t n, int64_t m, int64_t k,
                          hipStream_t stream, int *taken)
{
    *taken = 0;
    const int64_t row_bytes = w_dtype == VT_F32                           ? 4 * k
                              : (w_dtype == VT_F16 || w_dtype == VT_BF16) ? 2 * k
                                                                          : k / q_be(w_dtype) * q_bb(w_dtype);
    if (n <= 0 || m <= 0 || k <= 0 || (uintptr_t)x % 16 != 0 || k % 8 != 0 ||
        (w_dtype != VT_F32 && w_dtype != VT_F16 && w_dtype != VT_BF16 && q_bb(w_dtype) == 0))
        return hipSuccess;
    const int u = pick_unit(w_dtype, w, row_bytes, k);
    const uint8_t *wb = (const uint8_t *)w;
    if (u == U_DENSE && w_dtype == VT_F32) {
        *taken = 1;
        return ::launch_mmv<UDense<VT_F32>>(x, wb, row_bytes, y, n, m, k, stream);
    }
    if (u == U_DENSE && w_dtype == VT_F16) {
        *taken = 1;
        return ::launch_mmv<UDense<VT_F16>>(x, wb, row_bytes, y, n, m, k, stream);
    }
    if (u == U_DENSE && w_dtype == VT_BF16) {
        *taken = 1;
        return ::launch_mmv<UDense<VT_BF16>>(x, wb, row_bytes, y, n, m, k, stream);
    }
    if (u == U_PAIR && w_dtype == VT_IQ4_NL) {
        *taken = 1;
        return ::launch_mmv<UPair<VT_IQ4_NL>>(x, wb, row_bytes, y, n, m, k, stream);
    }
    if (u == U_Q4K) {
        *taken = 1;
        return ::launch_mmv<UQ4K>(x, wb, row_bytes, y, n, m, k, stream);
    }
    return hipSuccess;
}

// The same for MoeExpertMatMul at one token (W [E, m, k]; ids [1, K]
// already checked) for the float types, q4_0, q8_0, iq4_nl, q4_k and q6_k.
hipError_t vt_mmv::run_v1_moe1(const float *x, int x_per_slot, const void *w, uint32_t w_dtype, const int32_t *ids,
                               float *y, int64_t K, int64_t m, int64_t k, hipStream_t stream, int *taken)
{
    *taken = 0;
    const int64_t row_bytes = w_dtype == VT_F32                           ? 4 * k
                              : (w_dtype == VT_F16 || w_dtype == VT_BF16) ? 2 * k
                                                                          : k / q_be(w_dtype) * q_bb(w_dtype);
    if (K <= 0 || m <= 0 || k <= 0 || K > 65535 || (uintptr_t)x % 16 != 0 || k % 8 != 0 ||
        (w_dtype != VT_F32 && w_dtype != VT_F16 && w_dtype != VT_BF16 && q_bb(w_dtype) == 0))
        return hipSuccess;
    const int u = pick_unit(w_dtype, w, row_bytes, k), TK = (int)K, Ki = (int)K;
    const uint8_t *wb = (const uint8_t *)w;
    *taken = 1;
    if (u == U_DENSE && w_dtype == VT_F32)
        return ::launch_moe_cols<UDense<VT_F32>, 1>(x, x_per_slot, wb, row_bytes, ids, y, Ki, TK, m, k, stream);
    if (u == U_DENSE && w_dtype == VT_F16)
        return ::launch_moe_cols<UDense<VT_F16>, 1>(x, x_per_slot, wb, row_bytes, ids, y, Ki, TK, m, k, stream);
    if (u == U_DENSE && w_dtype == VT_BF16)
        return ::launch_moe_cols<UDense<VT_BF16>, 1>(x, x_per_slot, wb, row_bytes, ids, y, Ki, TK, m, k, stream);
    if (u == U_PAIR && w_dtype == VT_Q4_0)
        return ::launch_moe_cols<UPair<VT_Q4_0>, 1>(x, x_per_slot, wb, row_bytes, ids, y, Ki, TK, m, k, stream);
    if (u == U_PAIR && w_dtype == VT_Q8_0)
        return ::launch_moe_cols<UPair<VT_Q8_0>, 1>(x, x_per_slot, wb, row_bytes, ids, y, Ki, TK, m, k, stream);
    if (u == U_PAIR && w_dtype == VT_IQ4_NL)
        return ::launch_moe_cols<UPair<VT_IQ4_NL>, 1>(x, x_per_slot, wb, row_bytes, ids, y, Ki, TK, m, k, stream);
    if (u == U_Q4K)
        return ::launch_moe_cols<UQ4K, 1>(x, x_per_slot, wb, row_bytes, ids, y, Ki, TK, m, k, stream);
    if (u == U_Q6K)
        return ::launch_moe_cols<UQ6K, 1>(x, x_per_slot, wb, row_bytes, ids, y, Ki, TK, m, k, stream);
    *taken = 0;
    return hipSuccess;
}
