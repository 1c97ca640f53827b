// kernels_attention_decode.hip - Attention (op 30) for decode: few queries
// against an f16/bf16 KV cache, split over the keys. Block (chunk, kv head,
// query) serves the G query heads that read that kv head: a group of D/8
// lanes holds one key row (each lane 8 elements, one 16-byte load) and the
// matching 8 elements of the G queries, so each K and V row is read once
// for the G heads; a group takes keys 4 at a time (the V loads go out with
// the K loads) with an online softmax, the block's groups merge in shared
// memory into the chunk's (max, sum, unnormalised output), and a combine
// kernel merges the chunks that hold visible keys (a chunk without one
// writes max = -inf and is not read).
#include "rocm_device.h"
#include "rocm_launch.h"

namespace
{

constexpr int kThreads = 128; // per block of the split kernel
constexpr int kBatch = 4;     // keys per group in flight
constexpr int kWant = 528;    // split blocks wanted (4 x 132 SMs)

template <uint32_t DT> __device__ inline void unpack8(const uint4 &u, float (&f)[8])
{
    const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int i = 0; i < 4; i++) {
        if (DT == VT_F16) {
            f[2 * i] = vt_dev_f16_to_f32_fast((uint16_t)(w[i] & 0xFFFF));
            f[2 * i + 1] = vt_dev_f16_to_f32_fast((uint16_t)(w[i] >> 16));
        } else {
            f[2 * i] = __uint_as_float(w[i] << 16);
            f[2 * i + 1] = __uint_as_float(w[i] & 0xFFFF0000u);
        }
    }
}

// The visible keys [lo, hi] of a query at position p (lo > hi: none).
__device__ inline void visible(int64_t p, int64_t S, int32_t window, int64_t &lo, int64_t &hi)
{
    lo = window > 0 ? p - window + 1 : 0;
    if (lo < 0)
        lo = 0;
    hi = p < S - 1 ? p : S - 1;
}

template <uint32_t DT, int D, int G, int NT = kThreads, int KB = kBatch>
__global__ void __launch_bounds__(NT)
    attn_decode_split_kernel(const float *q, const uint16_t *k, const uint16_t *v, const int32_t *pos, float *part_o,
                             float *part_ml, int64_t Hq, int64_t Hkv, int64_t S, float scale, int32_t window, int64_t C,
                             int64_t n_split)
{
    constexpr int L = D / 8, NG = NT / L; // lanes per key row; groups per block
    __shared__ float sm_ml[NG][2 * G];
    __shared__ float sm_o[NG][G * D];
    const int64_t split = blockIdx.x, kvh = blockIdx.y, t = blockIdx.z;
    const int lane = (int)threadIdx.x % L, grp = (int)threadIdx.x / L;
    int64_t lo, hi;
    visible(pos[t], S, window, lo, hi);
    int64_t s0 = split * C, s1 = s0 + C - 1 < hi ? s0 + C - 1 : hi;
    if (s0 < lo)
        s0 = lo;
    float *po = part_o + ((t * Hq + kvh * G) * n_split + split) * D;
    float *pml = part_ml + ((t * Hq + kvh * G) * n_split + split) * 2;
    if (s0 > s1) { // no visible key: the combine skips this chunk
        if (threadIdx.x < G) {
            pml[threadIdx.x * n_split * 2] = -INFINITY;
            pml[threadIdx.x * n_split * 2 + 1] = 0.0f;
        }
        return;
    }
    float qv[G][8];
#pragma unroll
    for (int h = 0; h < G; h++) {
        const float4 *qp = (const float4 *)(q + (t * Hq + kvh * G + h) * D + lane * 8);
        const float4 a = qp[0], b = qp[1];
        qv[h][0] = a.x * scale, qv[h][1] = a.y * scale, qv[h][2] = a.z * scale, qv[h][3] = a.w * scale;
        qv[h][4] = b.x * scale, qv[h][5] = b.y * scale, qv[h][6] = b.z * scale, qv[h][7] = b.w * scale;
    }
    float m[G], l[G], acc[G][8];
#pragma unroll
    for (int h = 0; h < G; h++) {
        m[h] = -INFINITY;
        l[h] = 0.0f;
#pragma unroll
        for (int i = 0; i < 8; i++)
            acc[h][i] = 0.0f;
    }
    const int64_t row_stride = Hkv * D; // elements between consecutive keys
    const uint16_t *kb = k + kvh * D + lane * 8, *vb = v + kvh * D + lane * 8;
    // group grp takes keys s0 + grp + NG * i; every group of a wavefront runs
    // the same number of batches (shuffles need every lane)
    const int64_t n = s1 - s0 + 1, per = (n + NG - 1) / NG;
    for (int64_t i0 = 0; i0 < per; i0 += KB) {
        uint4 kr[KB], vr[KB];
        bool ok[KB];
#pragma unroll
        for (int b = 0; b < KB; b++) {
            const int64_t j = i0 + b, s = s0 + grp + NG * j;
            ok[b] = j < per && s <= s1;
            if (ok[b]) {
                kr[b] = *(const uint4 *)(kb + s * row_stride);
                vr[b] = *(const uint4 *)(vb + s * row_stride);
            } else {
                kr[b] = make_uint4(0, 0, 0, 0);
                vr[b] = kr[b];
            }
        }
        float sc[KB][G];
#pragma unroll
        for (int b = 0; b < KB; b++) {
            float kf[8];
            unpack8<DT>(kr[b], kf);
#pragma unroll
            for (int h = 0; h < G; h++) {
                float d0 = 0.0f, d1 = 0.0f;
#pragma unroll
                for (int i = 0; i < 8; i += 2) {
                    d0 = fmaf(qv[h][i], kf[i], d0);
                    d1 = fmaf(qv[h][i + 1], kf[i + 1], d1);
                }
                float d = d0 + d1;
#pragma unroll
                for (int o = L / 2; o > 0; o >>= 1)
                    d += __shfl_xor(d, o, L);
                sc[b][h] = ok[b] ? d : -INFINITY;
            }
        }
#pragma unroll
        for (int h = 0; h < G; h++) {
            float mn = m[h];
#pragma unroll
            for (int b = 0; b < KB; b++)
                mn = fmaxf(mn, sc[b][h]);
            if (mn == -INFINITY)
                continue; // nothing visible yet
            const float corr = m[h] == -INFINITY ? 0.0f : __expf(m[h] - mn);
            m[h] = mn;
            l[h] *= corr;
#pragma unroll
            for (int i = 0; i < 8; i++)
                acc[h][i] *= corr;
        }
#pragma unroll
        for (int b = 0; b < KB; b++) {
            float vf[8];
            unpack8<DT>(vr[b], vf);
#pragma unroll
            for (int h = 0; h < G; h++) {
                const float p = sc[b][h] == -INFINITY ? 0.0f : __expf(sc[b][h] - m[h]);
                l[h] += p;
#pragma unroll
                for (int i = 0; i < 8; i++)
                    acc[h][i] = fmaf(p, vf[i], acc[h][i]);
            }
        }
    }
    // the block's groups meet: chunk max M, sum and output scaled to M
#pragma unroll
    for (int h = 0; h < G; h++) {
        if (lane == 0) {
            sm_ml[grp][2 * h] = m[h];
            sm_ml[grp][2 * h + 1] = l[h];
        }
#pragma unroll
        for (int i = 0; i < 8; i++)
            sm_o[grp][h * D + lane * 8 + i] = acc[h][i];
    }
    __syncthreads();
    for (int e = (int)threadIdx.x; e < G * D; e += NT) {
        const int h = e / D, j = e % D;
        float M = -INFINITY;
        for (int g2 = 0; g2 < NG; g2++)
            M = fmaxf(M, sm_ml[g2][2 * h]);
        float o = 0.0f, sum = 0.0f;
        for (int g2 = 0; g2 < NG; g2++) {
            const float mg = sm_ml[g2][2 * h];
            if (mg == -INFINITY)
                continue;
            const float w = __expf(mg - M);
            o = fmaf(w, sm_o[g2][e], o);
            sum = fmaf(w, sm_ml[g2][2 * h + 1], sum);
        }
        po[h * n_split * D + j] = o;
        if (j == 0) {
            pml[h * n_split * 2] = M;
            pml[h * n_split * 2 + 1] = sum;
        }
    }
}

// Block (query, head) of VT_ROCM_BLOCK threads: o = sum_i e^(m_i - M) o_i /
// sum_i e^(m_i - M) l_i over the chunks [i0, i1] that hold visible keys
// (the range the split kernel computes from the query's position; zeros
// when none): the max and the sum over the chunks spread over the threads,
// the weights in shared memory (n_split floats), then a thread per output
// element. (The structure of kernels_attention.hip's combine, which the
// previous decode path ran; a loop over the chunks per thread for the max
// measured 32 us on the H200, ncu, against 12 us for the split kernel.)
__global__ void attn_decode_combine_kernel(const float *part_o, const float *part_ml, const int32_t *pos, float *o,
                                           int64_t Hq, int64_t S, int64_t dv, int32_t window, int64_t C,
                                           int64_t n_split)
{
    extern __shared__ float wgt[]; // n_split
    __shared__ float shm[VT_ROCM_BLOCK];
    int64_t lo, hi;
    visible(pos[blockIdx.x / Hq], S, window, lo, hi);
    if (lo > hi) { // no visible key: zeros
        for (int64_t j = threadIdx.x; j < dv; j += blockDim.x)
            o[blockIdx.x * dv + j] = 0.0f;
        return;
    }
    const int64_t i0 = lo / C, i1 = hi / C;
    const float *pml = part_ml + blockIdx.x * n_split * 2, *po = part_o + blockIdx.x * n_split * dv;
    float M = -INFINITY;
    for (int64_t i = i0 + threadIdx.x; i <= i1; i += blockDim.x)
        M = fmaxf(M, pml[2 * i]);
    M = vt_block_max(M, shm);
    float L = 0.0f;
    for (int64_t i = i0 + threadIdx.x; i <= i1; i += blockDim.x) {
        float w = expf(pml[2 * i] - M);
        wgt[i] = w;
        L += w * pml[2 * i + 1];
    }
    L = vt_block_sum(L, shm); // also orders the wgt writes before the reads
    for (int64_t j = threadIdx.x; j < dv; j += blockDim.x) {
        float a0 = 0.0f, a1 = 0.0f;
        int64_t i = i0;
        for (; i + 1 <= i1; i += 2) {
            a0 += wgt[i] * po[i * dv + j];
            a1 += wgt[i + 1] * po[(i + 1) * dv + j];
        }
        if (i <= i1)
            a0 += wgt[i] * po[i * dv + j];
        o[blockIdx.x * dv + j] = L > 0.0f ? (a0 + a1) / L : 0.0f;
    }
}

// Keys per block: enough blocks to fill the device about want / 132 times
// over (T * Hkv * chunks >= want), at least 32 keys, a multiple of 32.
int64_t chunk_keys(int64_t T, int64_t Hkv, int64_t S, int64_t want = kWant)
{
    const int64_t per_head = T * Hkv;
    int64_t n_split = (want + per_head - 1) / per_head;
    int64_t C = (S + n_split - 1) / n_split;
    C = (C + 31) / 32 * 32;
    return C < 32 ? 32 : C;
}

// Whether the decode kernels take the shape.
bool takes(int64_t T, int64_t Hq, int64_t Hkv, int64_t d, int64_t dv, uint32_t kv_dtype)
{
    if (T <= 0 || T > VT_ROCM_ATTN_SPLIT_MAX_T || Hkv <= 0 || Hq % Hkv != 0 || d != dv)
        return false;
    const int64_t G = Hq / Hkv;
    return (kv_dtype == VT_F16 || kv_dtype == VT_BF16) && (d == 64 || d == 128 || d == 256) &&
           (G == 1 || G == 2 || G == 4 || G == 8);
}

template <uint32_t DT, int D, int NT, int KB>
hipError_t launch_d(int64_t G, dim3 grid, hipStream_t stream, const float *q, const uint16_t *k, const uint16_t *v,
                    const int32_t *pos, float *po, float *pml, int64_t Hq, int64_t Hkv, int64_t S, float scale,
                    int32_t window, int64_t C, int64_t n_split)
{
    switch (G) {
    case 1:
        hipLaunchKernelGGL((attn_decode_split_kernel<DT, D, 1, NT, KB>), grid, dim3(NT), 0, stream, q, k, v, pos, po,
                           pml, Hq, Hkv, S, scale, window, C, n_split);
        break;
    case 2:
        hipLaunchKernelGGL((attn_decode_split_kernel<DT, D, 2, NT, KB>), grid, dim3(NT), 0, stream, q, k, v, pos, po,
                           pml, Hq, Hkv, S, scale, window, C, n_split);
        break;
    case 4:
        hipLaunchKernelGGL((attn_decode_split_kernel<DT, D, 4, NT, KB>), grid, dim3(NT), 0, stream, q, k, v, pos, po,
                           pml, Hq, Hkv, S, scale, window, C, n_split);
        break;
    default:
        hipLaunchKernelGGL((attn_decode_split_kernel<DT, D, 8, NT, KB>), grid, dim3(NT), 0, stream, q, k, v, pos, po,
                           pml, Hq, Hkv, S, scale, window, C, n_split);
        break;
    }
    return hipGetLastError();
}

template <uint32_t DT, int NT, int KB>
hipError_t launch_dt(int64_t d, int64_t G, dim3 grid, hipStream_t stream, const float *q, const uint16_t *k,
                     const uint16_t *v, const int32_t *pos, float *po, float *pml, int64_t Hq, int64_t Hkv, int64_t S,
                     float scale, int32_t window, int64_t C, int64_t n_split)
{
    if (d == 64)
        return launch_d<DT, 64, NT, KB>(G, grid, stream, q, k, v, pos, po, pml, Hq, Hkv, S, scale, window, C, n_split);
    if (d == 128)
        return launch_d<DT, 128, NT, KB>(G, grid, stream, q, k, v, pos, po, pml, Hq, Hkv, S, scale, window, C, n_split);
    return launch_d<DT, 256, NT, KB>(G, grid, stream, q, k, v, pos, po, pml, Hq, Hkv, S, scale, window, C, n_split);
}

// Scratch bytes of the split over about want blocks.
uint64_t scratch_for(int64_t T, int64_t Hq, int64_t Hkv, int64_t S, int64_t dv, int64_t want)
{
    const int64_t C = chunk_keys(T, Hkv, S, want), n_split = (S + C - 1) / C;
    return (uint64_t)(T * Hq * n_split * (dv + 2)) * sizeof(float);
}

// The split kernel of NT threads and KB keys in flight per group over about
// want blocks, then (combine) the combine kernel; combine = 0 times the
// split alone (scripts/decode-harness.cu's variants). H200, t = 1, 8 kv
// heads, 4096 positions (BENCHMARKS.md): the defaults (128 threads, 4
// keys, 528 blocks) measured fastest; 8 keys in flight, 1056 or 264 blocks,
// 64 threads were all slower, and a combine of 1024-thread blocks merging
// the chunks per thread (loads all issued at once) took 7.6 us against 5.9.
// The shape is one takes() accepts; scratch of scratch_for(..., want) bytes.
template <int NT, int KB>
hipError_t run_decode(const float *q, const void *k, const void *v, uint32_t kv_dtype, const int32_t *pos, float *o,
                      int64_t T, int64_t Hq, int64_t Hkv, int64_t S, int64_t d, int64_t dv, float scale, int32_t window,
                      void *scratch, hipStream_t stream, int64_t want, int combine)
{
    const int64_t C = chunk_keys(T, Hkv, S, want), n_split = (S + C - 1) / C, G = Hq / Hkv;
    float *po = (float *)scratch, *pml = po + T * Hq * n_split * dv;
    const dim3 grid((unsigned)n_split, (unsigned)Hkv, (unsigned)T);
    const uint16_t *kk = (const uint16_t *)k, *vv = (const uint16_t *)v;
    hipError_t e = kv_dtype == VT_F16 ? launch_dt<VT_F16, NT, KB>(d, G, grid, stream, q, kk, vv, pos, po, pml, Hq, Hkv,
                                                                  S, scale, window, C, n_split)
                                      : launch_dt<VT_BF16, NT, KB>(d, G, grid, stream, q, kk, vv, pos, po, pml, Hq, Hkv,
                                                                   S, scale, window, C, n_split);
    if (e != hipSuccess)
        return e;
    if (combine)
        hipLaunchKernelGGL(attn_decode_combine_kernel, dim3((unsigned)(T * Hq)), dim3(VT_ROCM_BLOCK),
                           (size_t)n_split * sizeof(float), stream, po, pml, pos, o, Hq, S, dv, window, C, n_split);
    return hipGetLastError();
}

} // namespace

// Scratch bytes of the decode kernels (the chunks' partials), 0 when they
// do not take the shape.
extern "C" uint64_t vt_rocm_attention_decode_scratch_bytes(int64_t T, int64_t Hq, int64_t Hkv, int64_t S, int64_t d,
                                                           int64_t dv, uint32_t kv_dtype)
{
    if (!takes(T, Hq, Hkv, d, dv, kv_dtype) || S <= 0)
        return 0;
    return scratch_for(T, Hq, Hkv, S, dv, kWant);
}

// Attention for decode (the shapes vt_rocm_attention_decode_scratch_bytes
// takes; scratch of that size): *taken = 0 when not taken (also when q or
// the caches are not 16-byte aligned).
extern "C" hipError_t vt_rocm_launch_attention_decode(const float *q, const void *k, const void *v, uint32_t kv_dtype,
                                                      const int32_t *pos, float *o, int64_t T, int64_t Hq, int64_t Hkv,
                                                      int64_t S, int64_t d, int64_t dv, float scale, int32_t window,
                                                      void *scratch, hipStream_t stream, int *taken)
{
    *taken = 0;
    if (!takes(T, Hq, Hkv, d, dv, kv_dtype) || S <= 0 || !scratch || ((uintptr_t)q | (uintptr_t)k | (uintptr_t)v) % 16)
        return hipSuccess;
    *taken = 1;
    return run_decode<kThreads, kBatch>(q, k, v, kv_dtype, pos, o, T, Hq, Hkv, S, d, dv, scale, window, scratch, stream,
                                        kWant, 1);
}
