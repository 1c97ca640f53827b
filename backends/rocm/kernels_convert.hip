// kernels_convert.hip - the convert family of the rocm backend (SPEC 7):
// Copy (a cast between f32, f16 and bf16, element by element) and
// Dequantize (a whole block-format tensor decoded as the cpu oracle decodes
// it, rocm_quant.h; runs of 8 elements a thread, by format, where the
// output is aligned: decoded from src, or for some formats from a tile of
// src staged in shared memory).
#include "rocm_device.h"
#include "rocm_launch.h"
#include "rocm_quant.h"

namespace
{

__global__ void cast_kernel(const void *src, uint32_t st, void *dst, uint32_t dt, int64_t n)
{
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        vt_dev_store(dst, dt, i, vt_dev_load(src, st, i));
}

__global__ void dequantize_kernel(const void *src, uint32_t st, int be, int bb, void *dst, uint32_t dt, int64_t n)
{
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        vt_dev_store(dst, dt, i, vt_q_element(src, st, i, be, bb));
}

// The output of Dequantize's kernels that is not a dtype: each value as a
// bf16 pair hi + lo (hi rounded, lo the rest rounded: 16 significant bits),
// the his in runs [0, runs) of dst, the los in runs [runs, 2 runs) (the
// weights of the prefill GEMM for the block formats it does not decode
// itself, kernels_gemm.hip).
constexpr uint32_t kBf16Pair = 0x10000u;

// The bf16 bits of v's high part and of the rest (0 where the high part is
// not finite).
__device__ inline void bf16_pair(float v, uint32_t &hi, uint32_t &lo)
{
    hi = vt_f32_to_bf16(v);
    const float h = __uint_as_float(hi << 16);
    lo = vt_f32_to_bf16(fabsf(h) <= 3.4028235e38f ? v - h : 0.0f);
}

// Stores the run of 8 values v as element run r of dst (OT: f32, f16, bf16
// or kBf16Pair, runs runs in each of its halves; dst 16-byte aligned): two
// 16-byte stores (f32, kBf16Pair) or one.
template <uint32_t OT> __device__ inline void store_run8(void *dst, int64_t r, int64_t runs, const float (&v)[8])
{
    if constexpr (OT == kBf16Pair) {
        uint32_t h[4], l[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            uint32_t h0, l0, h1, l1;
            bf16_pair(v[2 * u], h0, l0);
            bf16_pair(v[2 * u + 1], h1, l1);
            h[u] = h0 | h1 << 16;
            l[u] = l0 | l1 << 16;
        }
        ((uint4 *)dst)[r] = make_uint4(h[0], h[1], h[2], h[3]);
        ((uint4 *)dst)[runs + r] = make_uint4(l[0], l[1], l[2], l[3]);
    } else if constexpr (OT == VT_F32) {
        float4 *d = (float4 *)dst + 2 * r;
        d[0] = make_float4(v[0], v[1], v[2], v[3]);
        d[1] = make_float4(v[4], v[5], v[6], v[7]);
    } else {
        uint32_t h[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const uint32_t lo = OT == VT_F16 ? vt_f32_to_f16(v[2 * u]) : vt_f32_to_bf16(v[2 * u]);
            const uint32_t hi = OT == VT_F16 ? vt_f32_to_f16(v[2 * u + 1]) : vt_f32_to_bf16(v[2 * u + 1]);
            h[u] = lo | hi << 16;
        }
        ((uint4 *)dst)[r] = make_uint4(h[0], h[1], h[2], h[3]);
    }
}

// Dequantize of block format DT into a 16-byte aligned dst of OT (f32,
// f16, bf16): one thread per run of 8 elements of a block (every block
// holds a multiple of 8), decoded by vt_q_run8 (the bits vt_block_value
// gives dequantize_kernel, the run's factor and minimum decoded once, the
// format known at compile time), then stored (store_run8).
template <uint32_t DT, uint32_t OT>
__global__ void __launch_bounds__(VT_ROCM_BLOCK) dequantize_runs_kernel(const uint8_t *src, void *dst, int64_t runs)
{
    constexpr int BE = vt_block_elems(DT), BB = vt_block_bytes(DT), RUNS = BE / 8;
    static_assert(BE % 8 == 0 && BB > 0, "a block format of whole runs of 8");
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < runs; r += stride) {
        float v[8];
        vt_q_run8<DT>(src + (r / RUNS) * BB, (int)(r % RUNS) * 8, v);
        store_run8<OT>(dst, r, runs, v);
    }
}

// The elements of one tile of dequantize_tiles_kernel: a run of 8 a thread.
constexpr int kTileElems = 8 * VT_ROCM_BLOCK;

// Dequantize of block format DT into a 16-byte aligned dst of OT, by tiles
// of kTileElems elements (whole blocks: every block holds a divisor of it):
// the block's threads first copy the tile's bytes into shared memory, 16 at
// a time where a 16-byte piece of src lies wholly in the tile (bytes one by
// one at its ends, so src needs no alignment and nothing past the tensor is
// read), then each decodes one run of 8 there with vt_q_run8 (the bits
// vt_block_value gives dequantize_kernel) and stores it (store_run8). The
// staging reads src in whole 16-byte pieces, where a run's own codes lie in
// bytes scattered over the block (q6_k: 8 + 8 of 210, 2-byte aligned).
template <uint32_t DT, uint32_t OT>
__global__ void __launch_bounds__(VT_ROCM_BLOCK) dequantize_tiles_kernel(const uint8_t *src, void *dst, int64_t runs)
{
    constexpr int BE = vt_block_elems(DT), BB = vt_block_bytes(DT), RUNS = BE / 8;
    constexpr int TILE_BLOCKS = kTileElems / BE, TILE_BYTES = TILE_BLOCKS * BB;
    static_assert(BE % 8 == 0 && kTileElems % BE == 0 && BB > 0, "a block format of whole runs of 8 that tiles");
    __shared__ uint4 stage[TILE_BYTES / 16 + 2]; /* the tile, from its first byte's 16-byte piece on */
    uint8_t *s8 = (uint8_t *)stage;
    const int64_t blocks = runs / RUNS;
    for (int64_t t = blockIdx.x; t * TILE_BLOCKS < blocks; t += gridDim.x) {
        const uint8_t *p = src + t * TILE_BLOCKS * BB;
        const int nbytes = (int)(blocks - t * TILE_BLOCKS < TILE_BLOCKS ? blocks - t * TILE_BLOCKS : TILE_BLOCKS) * BB;
        const int lead = (int)((uintptr_t)p & 15); /* bytes of p's 16-byte piece before p */
        const uint8_t *a = p - lead;
        for (int i = threadIdx.x; 16 * i < lead + nbytes; i += blockDim.x) {
            if (16 * i >= lead && 16 * i + 16 <= lead + nbytes) {
                stage[i] = ((const uint4 *)a)[i];
            } else {
                for (int k = 16 * i; k < 16 * i + 16; k++)
                    if (k >= lead && k < lead + nbytes)
                        s8[k] = a[k];
            }
        }
        __syncthreads();
        const int64_t r = t * TILE_BLOCKS * RUNS + threadIdx.x;
        if (r < runs) {
            float v[8];
            vt_q_run8<DT>(s8 + lead + (int)(threadIdx.x / RUNS) * BB, (int)(threadIdx.x % RUNS) * 8, v);
            store_run8<OT>(dst, r, runs, v);
        }
        __syncthreads();
    }
}

// Whether Dequantize of DT stages its tiles (dequantize_tiles_kernel) rather
// than decoding runs from src (dequantize_runs_kernel): the formats staging
// made faster. H100, m = 4096, k = 14336 into f32, graph us (plugin-ab, 2
// rounds, runs -> tiles): q6_k 116.20 -> 101.83, q5_k 104.37 -> 98.98,
// q4_k 99.62 -> 97.15, mxfp4 97.72 -> 94.80; the others slower: q8_0
// 104.33 -> 132.82, q2_k 91.69 -> 103.55, q5_0 96.85 -> 108.16, q4_1 95.77
// -> 106.77, iq4_nl 94.66 -> 104.94, q4_0 94.65 -> 103.27, iq4_xs 100.99
// -> 107.83, q3_k 102.65 -> 106.84, q5_1 98.15 -> 99.09 (BENCHMARKS.md
// round 37).
template <uint32_t DT> constexpr bool staged()
{
    return DT == VT_Q6_K || DT == VT_Q5_K || DT == VT_Q4_K || DT == VT_MXFP4;
}

// Queue DT's Dequantize kernel into OT (tiles where staged<DT>, else runs)
// for n elements (whole blocks) into the 16-byte aligned dst.
template <uint32_t DT, uint32_t OT> void launch_deq_as(const uint8_t *src, void *dst, int64_t n, hipStream_t stream)
{
    const dim3 block(VT_ROCM_BLOCK);
    if constexpr (staged<DT>())
        hipLaunchKernelGGL((dequantize_tiles_kernel<DT, OT>), dim3(vt_grid_for(n, kTileElems)), block, 0, stream, src,
                           dst, n / 8);
    else
        hipLaunchKernelGGL((dequantize_runs_kernel<DT, OT>), dim3(vt_grid_for(n / 8, VT_ROCM_BLOCK)), block, 0, stream,
                           src, dst, n / 8);
}

// Queue DT's Dequantize kernel for n elements (whole blocks) into the
// 16-byte aligned dst of dtype dt (f32, f16 or bf16).
template <uint32_t DT> hipError_t launch_deq(const void *src, void *dst, uint32_t dt, int64_t n, hipStream_t stream)
{
    const uint8_t *s = (const uint8_t *)src;
    if (dt == VT_F32)
        launch_deq_as<DT, VT_F32>(s, dst, n, stream);
    else if (dt == VT_F16)
        launch_deq_as<DT, VT_F16>(s, dst, n, stream);
    else
        launch_deq_as<DT, VT_BF16>(s, dst, n, stream);
    return hipGetLastError();
}

} // namespace

// Dequantize of a block-format row range into bf16 pairs (kBf16Pair) for
// the prefill GEMM: n elements (whole blocks, a multiple of 8) of src of
// src_dtype, the his into dst [0, n) and the los into dst [n, 2 n) (16-byte
// aligned); hipErrorInvalidValue, nothing queued, for anything else.
extern "C" hipError_t vt_rocm_launch_dequantize_pair(const void *src, uint32_t src_dtype, void *dst, int64_t n,
                                                     hipStream_t stream)
{
    const int be = vt_block_elems(src_dtype);
    if (n <= 0 || be <= 1 || n % be != 0 || n % 8 != 0 || (uintptr_t)dst % 16 != 0)
        return hipErrorInvalidValue;
    switch (src_dtype) {
#define VT_DEQ_PAIR_CASE(id, f)                                                                                        \
    case id: launch_deq_as<id, kBf16Pair>((const uint8_t *)src, dst, n, stream); return hipGetLastError();
        VT_Q_FORMATS(VT_DEQ_PAIR_CASE)
#undef VT_DEQ_PAIR_CASE
    default: return hipErrorInvalidValue;
    }
}

extern "C" hipError_t vt_rocm_launch_cast(const void *src, uint32_t src_dtype, void *dst, uint32_t dst_dtype, int64_t n,
                                          hipStream_t stream)
{
    if (n <= 0)
        return hipSuccess;
    hipLaunchKernelGGL(cast_kernel, dim3(vt_grid_for(n, VT_ROCM_BLOCK)), dim3(VT_ROCM_BLOCK), 0, stream, src, src_dtype,
                       dst, dst_dtype, n);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_dequantize(const void *src, uint32_t src_dtype, int block_elems, int block_bytes,
                                                void *dst, uint32_t dst_dtype, int64_t n, hipStream_t stream)
{
    if (n <= 0)
        return hipSuccess;
    /* whole blocks into an aligned f32/f16/bf16 dst: runs of 8 by format */
    const bool runs = block_elems > 1 && n % block_elems == 0 && (uintptr_t)dst % 16 == 0 &&
                      (dst_dtype == VT_F32 || dst_dtype == VT_F16 || dst_dtype == VT_BF16);
    if (runs) {
        switch (src_dtype) {
#define VT_DEQ_CASE(id, f)                                                                                             \
    case id: return launch_deq<id>(src, dst, dst_dtype, n, stream);
            VT_Q_FORMATS(VT_DEQ_CASE)
#undef VT_DEQ_CASE
        default: break;
        }
    }
    hipLaunchKernelGGL(dequantize_kernel, dim3(vt_grid_for(n, VT_ROCM_BLOCK)), dim3(VT_ROCM_BLOCK), 0, stream, src,
                       src_dtype, block_elems, block_bytes, dst, dst_dtype, n);
    return hipGetLastError();
}
