// kernels_mmv.h - the decode MatMul and MoeExpertMatMul kernels of the
// rocm backend (n = 1..8 columns of x against a weight read once), shared
// by the kernels_mmv_*.hip files: each of those instantiates the kernels
// of one family of formats in its own translation unit.
//
// A wavefront takes R consecutive weight rows. A row is read in tiles of
// KT elements (at most about 1 KiB of weight bytes): the wavefront copies
// the tiles of its R rows into its own shared-memory ring with 16-byte
// coalesced loads (cp.async on NVIDIA, so tile t + 1 is in flight while
// tile t is decoded), then each lane decodes runs of 8 consecutive
// elements (lane l the runs l, l + wave, ...) of every row from shared
// memory and dots them with the same 8 elements of each column of x,
// loaded once per run for the R rows (consecutive lanes read consecutive x:
// coalesced). Activations stay f32: a run contributes a * sum(v * x) +
// mn * sum(x), the cpu oracle's values summed in another order, within
// SPEC 7's MatMul tolerance. The lanes' sums meet over a fixed xor tree:
// results do not depend on timing.
#ifndef VT_KERNELS_MMV_H
#define VT_KERNELS_MMV_H

#include "rocm_device.h"
#include "rocm_launch.h"
#include "rocm_quant.h"

#if defined(VT_HIP_PLATFORM_NVIDIA)
#include "rocm_mma.h"
#endif

// cp.async (global -> shared without registers): NVIDIA sm_80 and later.
#if defined(VT_HIP_PLATFORM_NVIDIA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define VT_MMV_CP_ASYNC 1
#else
#define VT_MMV_CP_ASYNC 0
#endif

namespace vt_mmv
{

// Block geometry of a weight dtype (vt_dtype id): elements per block and
// bytes per block. The float types count a run of 8 elements as a block.
__host__ __device__ constexpr int blk_elems(uint32_t dt)
{
    return (dt == VT_F32 || dt == VT_F16 || dt == VT_BF16) ? 8 : vt_block_elems(dt) ? vt_block_elems(dt) : 32;
}
// Bytes per block of dt (0: not a weight dtype of these kernels).
__host__ __device__ constexpr int blk_bytes(uint32_t dt)
{
    return dt == VT_F32 ? 32 : dt == VT_F16 ? 16 : dt == VT_BF16 ? 16 : vt_block_bytes(dt);
}

// Elements per tile: a multiple of 256 (32 runs of 8) whose bytes stay
// within kTileTarget.
constexpr int kTileTarget = 576;
__host__ __device__ constexpr int tile_elems(uint32_t dt)
{
    return (kTileTarget * blk_elems(dt) / blk_bytes(dt)) / 256 * 256 < 256
               ? 256
               : (kTileTarget * blk_elems(dt) / blk_bytes(dt)) / 256 * 256;
}
// Bytes of a full tile.
__host__ __device__ constexpr int tile_bytes(uint32_t dt)
{
    return tile_elems(dt) / blk_elems(dt) * blk_bytes(dt);
}
// 16-byte pieces of one row's buffer in shared memory (a tile rounded out
// to 16-byte boundaries, and 16 bytes of slack for word reads past it).
__host__ __device__ constexpr int buf_pieces(uint32_t dt)
{
    return (tile_bytes(dt) + 15) / 16 + 2;
}

// --- loads -----------------------------------------------------------------

// (hi:lo) >> sh (sh 0..31): one funnel shift.
__device__ inline uint32_t funnel(uint32_t lo, uint32_t hi, int sh)
{
#if defined(VT_HIP_PLATFORM_NVIDIA)
    return __funnelshift_r(lo, hi, sh);
#else
    return __builtin_amdgcn_alignbit(hi, lo, (uint32_t)sh);
#endif
}

// Two 32-bit words starting at byte o (any alignment) of the 16-byte
// aligned shared buffer b (indexing from b keeps the loads in the shared
// address space).
__device__ inline void sh_word2(const uint8_t *b, int o, uint32_t &w0, uint32_t &w1)
{
    const uint32_t *q = (const uint32_t *)(const void *)b + (o >> 2);
    const uint32_t q0 = q[0], q1 = q[1], q2 = q[2];
    const int sh = 8 * (o & 3);
    w0 = funnel(q0, q1, sh);
    w1 = funnel(q1, q2, sh);
}

// Little-endian half at byte o (even) of the shared buffer b.
__device__ inline float sh_half(const uint8_t *b, int o)
{
    return vt_dev_f16_to_f32_fast(((const uint16_t *)(const void *)b)[o >> 1]);
}

// 16 bytes global -> shared, asynchronous where the target can (NVIDIA:
// cp.async, completed by stage_wait); elsewhere a plain copy.
__device__ inline void copy16(void *dst, const void *src)
{
#if VT_MMV_CP_ASYNC
    vt_mma::cp16(vt_mma::smem_u32(dst), src);
#else
    *(uint4 *)dst = *(const uint4 *)src;
#endif
}

// Close the group of copies issued since the last commit.
__device__ inline void stage_commit()
{
#if VT_MMV_CP_ASYNC
    vt_mma::cp_commit();
#endif
}

// Wait until at most `pending` (0 or 1) groups of this lane's copies are
// still in flight, then make every lane's copies visible to the wavefront.
template <int pending> __device__ inline void stage_wait()
{
#if VT_MMV_CP_ASYNC
    vt_mma::cp_wait<pending>();
    __syncwarp();
#elif defined(VT_HIP_PLATFORM_NVIDIA)
    __syncwarp();
#else
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront");
    __builtin_amdgcn_wave_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront");
#endif
}

// x: 8 consecutive floats (32-byte aligned) through the cache.
__device__ inline void ld_x8(const float *p, float (&v)[8])
{
#if defined(VT_HIP_PLATFORM_NVIDIA)
    const float4 a = __ldg((const float4 *)p), b = __ldg((const float4 *)p + 1);
#else
    const float4 a = *(const float4 *)p, b = *((const float4 *)p + 1);
#endif
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
}

// --- decoding a run of 8 elements ------------------------------------------

// Unsigned byte b (0..3) of word v as float minus off (exact for the small
// offsets used here): the exponent trick on NVIDIA (one permute, one add).
__device__ inline float byte_f(uint32_t v, int b, float off)
{
#if defined(VT_HIP_PLATFORM_NVIDIA)
    return __uint_as_float(__byte_perm(v, 0x4B00u, 0x5440u | (unsigned)b)) - (8388608.0f + off);
#else
    return (float)((v >> (8 * b)) & 0xFFu) - off;
#endif
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

// The 8 values of nibble half sh (0 or 4) of words w0, w1, as byte_f does.
__device__ inline void nib8(uint32_t w0, uint32_t w1, int sh, float off, float (&v)[8])
{
    const uint32_t q0 = (w0 >> sh) & 0x0F0F0F0Fu, q1 = (w1 >> sh) & 0x0F0F0F0Fu;
#pragma unroll
    for (int b = 0; b < 4; b++) {
        v[b] = byte_f(q0, b, off);
        v[4 + b] = byte_f(q1, b, off);
    }
}

// Whether a dtype's runs carry an additive min (value = a * v + mn).
__host__ __device__ constexpr bool has_min(uint32_t dt)
{
    return dt == VT_Q4_K;
}

// Run r of the block at byte o of the 16-byte aligned shared buffer b, of
// dtype DT: its 8 values v, factor a and min mn (value = a * v + mn).
template <uint32_t DT>
__device__ inline void run_vals(const uint8_t *b, int o, int r, float (&v)[8], float &a, float &mn)
{
    const uint8_t *blk = b + o;
    mn = 0.0f;
    if (DT == VT_F32) {
        const float4 p = ((const float4 *)(const void *)b)[o >> 4], q = ((const float4 *)(const void *)b)[(o >> 4) + 1];
        v[0] = p.x, v[1] = p.y, v[2] = p.z, v[3] = p.w, v[4] = q.x, v[5] = q.y, v[6] = q.z, v[7] = q.w;
        a = 1.0f;
    } else if (DT == VT_F16 || DT == VT_BF16) {
        const uint4 p = ((const uint4 *)(const void *)b)[o >> 4];
        const uint32_t u[4] = {p.x, p.y, p.z, p.w};
#pragma unroll
        for (int i = 0; i < 4; i++) {
            if (DT == VT_F16) {
                v[2 * i] = vt_dev_f16_to_f32_fast((uint16_t)(u[i] & 0xFFFF));
                v[2 * i + 1] = vt_dev_f16_to_f32_fast((uint16_t)(u[i] >> 16));
            } else {
                v[2 * i] = __uint_as_float(u[i] << 16);
                v[2 * i + 1] = __uint_as_float(u[i] & 0xFFFF0000u);
            }
        }
        a = 1.0f;
    } else if (DT == VT_Q4_0 || DT == VT_IQ4_NL) { /* q4_0, iq4_nl: runs 0, 1 low nibbles of bytes 0..15, 2, 3 high */
        uint32_t w0, w1;
        sh_word2(b, o + 2 + 8 * (r & 1), w0, w1);
        a = sh_half(b, o);
        if (DT == VT_Q4_0) {
            nib8(w0, w1, 4 * (r >> 1), 8.0f, v);
        } else {
            const int sh = 4 * (r >> 1);
#pragma unroll
            for (int b = 0; b < 4; b++) {
                v[b] = iq4nl_f((w0 >> (8 * b + sh)) & 0xF);
                v[4 + b] = iq4nl_f((w1 >> (8 * b + sh)) & 0xF);
            }
        }
    } else if (DT == VT_Q8_0) { /* q8_0: signed bytes 8r..8r+7 (xor 0x80: plus 128) */
        uint32_t w0, w1;
        sh_word2(b, o + 2 + 8 * r, w0, w1);
        a = sh_half(b, o);
        w0 ^= 0x80808080u;
        w1 ^= 0x80808080u;
#pragma unroll
        for (int b = 0; b < 4; b++) {
            v[b] = byte_f(w0, b, 128.0f);
            v[4 + b] = byte_f(w1, b, 128.0f);
        }
    } else if (DT == VT_Q4_K) { /* q4_k: sub-block s = r / 4 (32 elements), bytes of pair s / 2, nibble s % 2 */
        const int s = r >> 2;
        uint32_t w0, w1;
        sh_word2(b, o + 16 + 32 * (s >> 1) + 8 * (r & 3), w0, w1);
        const float d = sh_half(b, o), dmin = sh_half(b, o + 2);
        a = d * (float)vt_blk_k4_scale(blk + 4, s);
        mn = -(dmin * (float)vt_blk_k4_min(blk + 4, s));
        nib8(w0, w1, 4 * (s & 1), 0.0f, v);
    } else if (DT == VT_Q6_K) { /* q6_k: sub s = r / 4: half h, quarter q; low 4 bits in ql, high 2 in qh */
        const int s = r >> 2, h = s >> 2, q = s & 3, l0 = 8 * (r & 3);
        uint32_t l0w, l1w, h0w, h1w;
        sh_word2(b, o + 64 * h + 32 * (q & 1) + l0, l0w, l1w);
        sh_word2(b, o + 128 + 32 * h + l0, h0w, h1w);
        a = sh_half(b, o + 208) * (float)(int8_t)blk[192 + 8 * h + 2 * q + (l0 >> 4)];
        const int ls = 4 * (q >> 1), hs = 2 * q;
        const uint32_t c0 = ((l0w >> ls) & 0x0F0F0F0Fu) | (((h0w >> hs) & 0x03030303u) << 4);
        const uint32_t c1 = ((l1w >> ls) & 0x0F0F0F0Fu) | (((h1w >> hs) & 0x03030303u) << 4);
#pragma unroll
        for (int b = 0; b < 4; b++) {
            v[b] = byte_f(c0, b, 32.0f);
            v[4 + b] = byte_f(c1, b, 32.0f);
        }
    } else { /* any other format: element by element with the oracle's arithmetic */
#pragma unroll
        for (int i = 0; i < 8; i++)
            v[i] = vt_q_value(DT, blk, 8 * r + i);
        a = 1.0f;
    }
}

// --- the kernels -------------------------------------------------------------

// Sum over the lanes of a wavefront (fixed xor tree); every lane gets it.
__device__ inline float wave_sum(float v)
{
#pragma unroll
    for (int s = VT_ROCM_WAVE / 2; s > 0; s >>= 1)
        v += __shfl_xor(v, s, VT_ROCM_WAVE);
    return v;
}

// Queue the copy of tile t of the R rows wr into buf (R row buffers of
// buf_pieces 16-byte pieces); returns nothing, the caller commits. aligned:
// rows start 16-byte aligned and row_bytes is a multiple of 16 (pieces
// rounded out stay inside the row); else a byte-wise copy.
template <uint32_t DT, int R>
__device__ inline void stage_tile(uint4 *buf, const uint8_t *const (&wr)[R], int64_t row_bytes, int64_t t, int lane,
                                  bool aligned)
{
    constexpr int TB = tile_bytes(DT), BP = buf_pieces(DT);
    const int64_t off = t * TB;
    const int64_t end = off + TB < row_bytes ? off + TB : row_bytes;
    if (aligned) {
        const int64_t s0 = off & ~(int64_t)15, e0 = (end + 15) & ~(int64_t)15;
        const int np = (int)((e0 - s0) >> 4);
#pragma unroll
        for (int r = 0; r < R; r++)
            for (int p = lane; p < np; p += VT_ROCM_WAVE)
                copy16(buf + r * BP + p, wr[r] + s0 + 16 * p);
    } else {
        const int nb = (int)(end - off);
#pragma unroll
        for (int r = 0; r < R; r++)
            for (int p = lane; p < nb; p += VT_ROCM_WAVE)
                ((uint8_t *)(buf + r * BP))[p] = wr[r][off + p];
    }
}

// acc[r][j] += row wr[r] . column xs[j] over the tiles [t0, t1) for this
// wavefront's lane (its share of the runs); buf is the wavefront's ring of
// two tiles.
template <uint32_t DT, int N, int R>
__device__ inline void rows_dot(uint4 *buf, const uint8_t *const (&wr)[R], int64_t row_bytes,
                                const float *const (&xs)[N], int64_t k, int64_t t0, int64_t t1, bool aligned,
                                float (&acc)[R][N])
{
    constexpr int KT = tile_elems(DT), TB = tile_bytes(DT), BP = buf_pieces(DT), BE = blk_elems(DT), BB = blk_bytes(DT),
                  RPB = BE / 8;
    const int lane = (int)threadIdx.x % VT_ROCM_WAVE;
    if (t0 >= t1)
        return;
    stage_tile<DT, R>(buf + (t0 & 1) * R * BP, wr, row_bytes, t0, lane, aligned);
    stage_commit();
    for (int64_t t = t0; t < t1; t++) {
        uint4 *cur = buf + (t & 1) * R * BP;
        if (t + 1 < t1) {
            stage_tile<DT, R>(buf + ((t + 1) & 1) * R * BP, wr, row_bytes, t + 1, lane, aligned);
            stage_commit();
            stage_wait<1>();
        } else {
            stage_wait<0>();
        }
        const int64_t off = t * TB;
        const int skew = aligned ? (int)(off & 15) : 0;
        const int64_t e0 = t * KT;
        const int runs = (int)((k - e0 < KT ? k - e0 : KT) / 8);
        for (int g = lane; g < runs; g += VT_ROCM_WAVE) {
            float xv[N][8];
            float xsum[N];
#pragma unroll
            for (int j = 0; j < N; j++) {
                ld_x8(xs[j] + e0 + 8 * g, xv[j]);
                xsum[j] = 0.0f;
                if (has_min(DT)) {
#pragma unroll
                    for (int i = 0; i < 8; i++)
                        xsum[j] += xv[j][i];
                }
            }
            const int bi = (int)((unsigned)g / RPB), ri = (int)((unsigned)g % RPB);
#pragma unroll
            for (int r = 0; r < R; r++) {
                float v[8], a, mn;
                run_vals<DT>((const uint8_t *)(cur + r * BP), skew + bi * BB, ri, v, a, mn);
#pragma unroll
                for (int j = 0; j < N; j++) {
                    float sum = 0.0f;
#pragma unroll
                    for (int i = 0; i < 8; i++)
                        sum = fmaf(v[i], xv[j][i], sum);
                    acc[r][j] = fmaf(a, sum, acc[r][j]);
                    if (has_min(DT))
                        acc[r][j] = fmaf(mn, xsum[j], acc[r][j]);
                }
            }
        }
#if defined(VT_HIP_PLATFORM_NVIDIA)
        __syncwarp(); /* every lane done with cur before it is refilled */
#else
        __builtin_amdgcn_wave_barrier();
#endif
    }
}

// Wavefronts per block at most for DT and R rows: each holds a ring of two
// tiles of R rows; the block's rings stay within 40 KiB.
template <uint32_t DT, int R> constexpr int max_waves()
{
    return 40960 / (2 * R * buf_pieces(DT) * 16) >= 8 ? 8 : 40960 / (2 * R * buf_pieces(DT) * 16);
}

// Shared memory of a block: a ring of 2 tiles of R rows per wavefront, and
// the wavefronts' sums.
template <uint32_t DT, int N, int R> struct Smem {
    uint4 buf[max_waves<DT, R>()][2 * R * buf_pieces(DT)];
    float part[max_waves<DT, R>()][R * N];
};

// The tiles [t0, t1) of wavefront wv of nw, tiles in all: contiguous
// shares, the first ones one tile longer.
__device__ inline void tile_share(int64_t tiles, int wv, int nw, int64_t &t0, int64_t &t1)
{
    const int64_t q = tiles / nw, rem = tiles % nw;
    t0 = wv * q + (wv < rem ? wv : rem);
    t1 = t0 + q + (wv < rem ? 1 : 0);
}

// The block's R x N sums from the wavefronts' acc (each wavefront's xor
// tree, then the wavefronts in order): thread i < R * N gets sum (i / N,
// i % N).
template <uint32_t DT, int N, int R> __device__ inline float block_sums(Smem<DT, N, R> &sm, float (&acc)[R][N])
{
    const int wv = (int)threadIdx.x / VT_ROCM_WAVE, lane = (int)threadIdx.x % VT_ROCM_WAVE;
    const int nw = (int)blockDim.x / VT_ROCM_WAVE;
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int j = 0; j < N; j++) {
            const float s = wave_sum(acc[r][j]);
            if (lane == 0)
                sm.part[wv][r * N + j] = s;
        }
    __syncthreads();
    float sum = 0.0f;
    if ((int)threadIdx.x < R * N)
        for (int w = 0; w < nw; w++)
            sum += sm.part[w][threadIdx.x];
    __syncthreads();
    return sum;
}

// MatMul: block b takes the R rows from b * R, its wavefronts a contiguous
// share of the tiles of k each; y[j, c] = x[j] . W[c] for the n (<= N)
// columns j (a missing column repeats the last one and is not stored).
template <uint32_t DT, int N, int R>
__global__ void __launch_bounds__((max_waves<DT, R>() * VT_ROCM_WAVE))
    mmv_kernel(const float *x, const uint8_t *w, int64_t row_bytes, float *y, int n, int64_t m, int64_t k, bool aligned)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    __shared__ Smem<DT, N, R> sm;
    const int wv = (int)threadIdx.x / VT_ROCM_WAVE, nw = (int)blockDim.x / VT_ROCM_WAVE;
    const int64_t row0 = (int64_t)blockIdx.x * R;
    const uint8_t *wr[R];
    const float *xs[N];
#pragma unroll
    for (int r = 0; r < R; r++)
        wr[r] = w + (row0 + r < m ? row0 + r : m - 1) * row_bytes;
#pragma unroll
    for (int j = 0; j < N; j++)
        xs[j] = x + (int64_t)(j < n ? j : n - 1) * k;
    int64_t t0, t1;
    tile_share((k + tile_elems(DT) - 1) / tile_elems(DT), wv, nw, t0, t1);
    float acc[R][N] = {};
    rows_dot<DT, N, R>(sm.buf[wv], wr, row_bytes, xs, k, t0, t1, aligned, acc);
    const float s = block_sums<DT, N, R>(sm, acc);
    const int i = (int)threadIdx.x, r = i / N, j = i % N;
    if (i < R * N && row0 + r < m && j < n)
        y[(int64_t)j * m + row0 + r] = s;
}

// MoeExpertMatMul: block (g, s) takes the R rows of group g of expert
// e = ids[s] when s is the first slot naming e, for every slot naming e (N
// at a time): each selected expert's rows are read once per call for up
// to N slots.
template <uint32_t DT, int N, int R>
__global__ void __launch_bounds__((max_waves<DT, R>() * VT_ROCM_WAVE))
    moe_mmv_kernel(const float *x, int x_per_slot, const uint8_t *w, int64_t row_bytes, const int32_t *ids, float *y,
                   int K, int TK, int64_t m, int64_t k, bool aligned)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    __shared__ Smem<DT, N, R> sm;
    const int s = (int)blockIdx.y, e = ids[s];
    for (int p = 0; p < s; p++)
        if (ids[p] == e)
            return;
    const int wv = (int)threadIdx.x / VT_ROCM_WAVE, nw = (int)blockDim.x / VT_ROCM_WAVE;
    const int64_t row0 = (int64_t)blockIdx.x * R;
    const uint8_t *wr[R];
#pragma unroll
    for (int r = 0; r < R; r++)
        wr[r] = w + ((int64_t)e * m + (row0 + r < m ? row0 + r : m - 1)) * row_bytes;
    int64_t t0, t1;
    tile_share((k + tile_elems(DT) - 1) / tile_elems(DT), wv, nw, t0, t1);
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
        rows_dot<DT, N, R>(sm.buf[wv], wr, row_bytes, xs, k, t0, t1, aligned, acc);
        const float sum = block_sums<DT, N, R>(sm, acc);
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

// Lanes per wavefront of the current device, for sizing grids (NVIDIA: 32).
int host_wave();

// Rows per block (each x value loaded serves R rows).
constexpr int kRows = 4;

// Wavefronts per block for k: at most max_waves, each with a share of the
// tiles that differs by at most one from the others'.
template <uint32_t DT> unsigned waves_for(int64_t k)
{
    constexpr int wmax = max_waves<DT, kRows>();
    const int64_t tiles = (k + tile_elems(DT) - 1) / tile_elems(DT);
    const int64_t per = (tiles + wmax - 1) / wmax;
    const int64_t nw = (tiles + per - 1) / per;
    return (unsigned)(nw < 1 ? 1 : nw);
}

// Queue mmv_kernel over m rows for n <= N columns.
template <uint32_t DT, int N>
hipError_t launch_cols(const float *x, const uint8_t *w, int64_t row_bytes, float *y, int n, int64_t m, int64_t k,
                       hipStream_t stream, bool al)
{
    constexpr int R = kRows;
    VT_LAUNCH_CHAINED((mmv_kernel<DT, N, R>), dim3((unsigned)((m + R - 1) / R)),
                      dim3(waves_for<DT>(k) * (unsigned)host_wave()), 0, stream, x, w, row_bytes, y, n, m, k, al);
    return hipGetLastError();
}

// MatMul over n columns, 8 at a time.
template <uint32_t DT>
hipError_t launch_mmv(const float *x, const uint8_t *w, int64_t row_bytes, float *y, int64_t n, int64_t m, int64_t k,
                      hipStream_t stream, bool al)
{
    for (int64_t j0 = 0; j0 < n; j0 += 8) {
        const int nc = (int)(n - j0 < 8 ? n - j0 : 8);
        const float *xj = x + j0 * k;
        float *yj = y + j0 * m;
        hipError_t e;
        if (nc == 1)
            e = launch_cols<DT, 1>(xj, w, row_bytes, yj, nc, m, k, stream, al);
        else if (nc == 2)
            e = launch_cols<DT, 2>(xj, w, row_bytes, yj, nc, m, k, stream, al);
        else if (nc <= 4)
            e = launch_cols<DT, 4>(xj, w, row_bytes, yj, nc, m, k, stream, al);
        else
            e = launch_cols<DT, 8>(xj, w, row_bytes, yj, nc, m, k, stream, al);
        if (e != hipSuccess)
            return e;
    }
    return hipSuccess;
}

// Queue moe_mmv_kernel over every slot's m rows, N slots per pass.
template <uint32_t DT, int N>
hipError_t launch_moe_cols(const float *x, int x_per_slot, const uint8_t *w, int64_t row_bytes, const int32_t *ids,
                           float *y, int K, int TK, int64_t m, int64_t k, hipStream_t stream, bool al)
{
    constexpr int R = kRows;
    VT_LAUNCH_CHAINED((moe_mmv_kernel<DT, N, R>), dim3((unsigned)((m + R - 1) / R), (unsigned)TK),
                      dim3(waves_for<DT>(k) * (unsigned)host_wave()), 0, stream, x, x_per_slot, w, row_bytes, ids, y, K,
                      TK, m, k, al);
    return hipGetLastError();
}

// MoeExpertMatMul: one slot per pass at one token, else two (an expert
// usually meets few of the T tokens: wider passes would mostly repeat a
// column; a third pass over an expert's rows finds them in L2).
template <uint32_t DT>
hipError_t launch_moe(const float *x, int x_per_slot, const uint8_t *w, int64_t row_bytes, const int32_t *ids, float *y,
                      int64_t T, int64_t K, int64_t m, int64_t k, hipStream_t stream, bool al)
{
    const int TK = (int)(T * K), Ki = (int)K;
    if (T <= 1)
        return launch_moe_cols<DT, 1>(x, x_per_slot, w, row_bytes, ids, y, Ki, TK, m, k, stream, al);
    return launch_moe_cols<DT, 2>(x, x_per_slot, w, row_bytes, ids, y, Ki, TK, m, k, stream, al);
}

// The arguments of one decode product (MatMul: ids == NULL, T = n).
struct Args {
    const float *x;
    int x_per_slot;
    const uint8_t *w;
    int64_t row_bytes;
    const int32_t *ids;
    float *y;
    int64_t T, K, m, k;
    hipStream_t stream;
};

// Run a of dtype DT (aligned: rows 16-byte aligned, row_bytes % 16 == 0).
template <uint32_t DT> hipError_t run_dt(const Args &a, bool aligned)
{
    if (a.ids == nullptr)
        return launch_mmv<DT>(a.x, a.w, a.row_bytes, a.y, a.T, a.m, a.k, a.stream, aligned);
    return launch_moe<DT>(a.x, a.x_per_slot, a.w, a.row_bytes, a.ids, a.y, a.T, a.K, a.m, a.k, a.stream, aligned);
}

// The families, one translation unit each (kernels_mmv_<family>.hip):
// *taken = 0 when dt is not theirs.
hipError_t run_dense(uint32_t dt, const Args &a, bool aligned, int *taken);
hipError_t run_q4(uint32_t dt, const Args &a, bool aligned, int *taken);
hipError_t run_q8(uint32_t dt, const Args &a, bool aligned, int *taken);
hipError_t run_kq(uint32_t dt, const Args &a, bool aligned, int *taken);
hipError_t run_other(uint32_t dt, const Args &a, bool aligned, int *taken);
hipError_t run_other_k(uint32_t dt, const Args &a, bool aligned, int *taken);

// MatMul (ids == NULL) on matrix instructions (kernels_mmv_mma.hip: NVIDIA
// sm_80+, every block format, k a multiple of 256, rows of a multiple of 16
// bytes, w and x 16-byte aligned); *taken = 0 when it does not apply.
hipError_t run_mma(uint32_t dt, const Args &a, int *taken);

// MoeExpertMatMul of TK slots, K a token (0: one token), on matrix instructions
// (kernels_mmv_mma.hip's MOE kernel: every block format but q6_k, k a
// multiple of 256, rows of a multiple of 16 bytes, w and x 16-byte
// aligned), the TK ids checked in the kernel (a bad one recorded in err
// for op, every slot then computed with expert 0); *taken = 0 when it does
// not apply.
hipError_t run_mma_moe_one(uint32_t dt, const float *x, int x_per_slot, const uint8_t *w, int64_t row_bytes,
                           const int32_t *ids, int64_t TK, int64_t K, int64_t E, vt_rocm_err *err, uint32_t op,
                           float *y, int64_t m, int64_t k, hipStream_t stream, int *taken);

// MoeExpertMatMul of 2 <= T tokens on matrix instructions
// (kernels_mmv_mma.hip): one kernel checks the ids, groups the T K pairs by
// expert and splits x into scratch (mma_moe_scratch_bytes, 0: not taken),
// then each selected expert's rows are read once for its pairs, two at a
// time; *taken = 0 and nothing queued when dt, the shapes or the device
// do not fit.
hipError_t run_mma_moe_chunks(uint32_t dt, const float *x, int x_per_slot, const uint8_t *w, int64_t row_bytes,
                              const int32_t *ids, int64_t T, int64_t K, int64_t E, vt_rocm_err *err, uint32_t op,
                              float *y, int64_t m, int64_t k, void *scratch, hipStream_t stream, int *taken);
int64_t mma_moe_scratch_bytes(uint32_t dt, int64_t T, int64_t K, int64_t k, int x_per_slot);

// The first kernels (kernels_mmv_v1.hip), where they are faster: MatMul
// over the float types, iq4_nl and q4_k, and MoeExpertMatMul at one token.
hipError_t run_v1(const float *x, const void *w, uint32_t w_dtype, float *y, int64_t n, int64_t m, int64_t k,
                  hipStream_t stream, int *taken);
hipError_t run_v1_moe1(const float *x, int x_per_slot, const void *w, uint32_t w_dtype, const int32_t *ids, float *y,
                       int64_t K, int64_t m, int64_t k, hipStream_t stream, int *taken);

} // namespace vt_mmv

#endif /* VT_KERNELS_MMV_H */
