/* rocm_device.h - what every .hip kernel file includes: HIP's kernel
 * language on AMD, or vt's HIP->CUDA header under nvcc. */
#ifndef VT_ROCM_DEVICE_H
#define VT_ROCM_DEVICE_H

#include <stdint.h>

#if defined(VT_HIP_PLATFORM_NVIDIA)
#include "hip_cuda.h"
#else
#include <hip/hip_runtime.h>
#endif

/* After the runtime headers: device code may then call memcpy. */
#include <vt/vt_dtype.h>

#include "rocm_error.h"
#include "rocm_chain.h"

#include <atomic>

/* The host's answer memoized in slot, 0 meaning "not asked yet": ask() is
 * called until it answers non-zero, then every caller gets that answer.
 * Host threads that ask at once each ask and store the same answer (a
 * runtime query), so relaxed order suffices. */
template <typename T, typename Ask> T vt_rocm_memo(std::atomic<T> &slot, Ask ask)
{
    T v = slot.load(std::memory_order_relaxed);
    if (v == 0) {
        v = ask();
        slot.store(v, std::memory_order_relaxed);
    }
    return v;
}

/* Record an error in a queue's error word unless one is there already
 * (the first error of the queue wins). */
__device__ inline void vt_rocm_err_set(vt_rocm_err *e, uint32_t code, uint32_t op, uint32_t name, int64_t a, int64_t b,
                                       int64_t c, int64_t d)
{
    if (atomicCAS(&e->code, 0u, code) != 0u)
        return;
    e->op = op;
    e->operand = name;
    e->a = a;
    e->b = b;
    e->c = c;
    e->d = d;
}

/* IEEE half -> float for the MatMul sums: exact for every finite and
 * infinite half, through the hardware conversion under nvcc (cvt.f32.f16,
 * one instruction where vt_f16_to_f32 takes about ten; a NaN may come out
 * quieted), vt_f16_to_f32 elsewhere. Copies, gathers and Dequantize keep
 * vt_f16_to_f32, whose NaNs keep their payload bits. */
__device__ inline float vt_dev_f16_to_f32_fast(uint16_t h)
{
#if defined(VT_HIP_PLATFORM_NVIDIA)
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
#else
    return vt_f16_to_f32(h);
#endif
}

/* Element i of an f32/f16/bf16 buffer as float (dtype: vt_dtype id). */
__device__ inline float vt_dev_load(const void *p, uint32_t dtype, int64_t i)
{
    if (dtype == VT_F16)
        return vt_f16_to_f32(((const uint16_t *)p)[i]);
    if (dtype == VT_BF16)
        return vt_bf16_to_f32(((const uint16_t *)p)[i]);
    return ((const float *)p)[i];
}

/* Store v as element i of an f32/f16/bf16 buffer. */
__device__ inline void vt_dev_store(void *p, uint32_t dtype, int64_t i, float v)
{
    if (dtype == VT_F16)
        ((uint16_t *)p)[i] = vt_f32_to_f16(v);
    else if (dtype == VT_BF16)
        ((uint16_t *)p)[i] = vt_f32_to_bf16(v);
    else
        ((float *)p)[i] = v;
}

/* Threads per block of the row kernels (a power of two). */
#define VT_ROCM_BLOCK 256

/* Lanes of a wavefront on the target being compiled (device pass): 32 on
 * NVIDIA and RDNA, 64 on CDNA; the host pass, which knows no target, sees 64. */
#if defined(VT_HIP_PLATFORM_NVIDIA)
#define VT_ROCM_WAVE 32
#elif defined(__AMDGCN_WAVEFRONT_SIZE)
#define VT_ROCM_WAVE __AMDGCN_WAVEFRONT_SIZE
#else
#define VT_ROCM_WAVE 64
#endif

/* Sum of v over the block, in a fixed tree order through shared memory
 * (no warp-size assumption). shm holds VT_ROCM_BLOCK floats. Every thread
 * of the block must call it; all get the sum. */
__device__ inline float vt_block_sum(float v, float *shm)
{
    shm[threadIdx.x] = v;
    __syncthreads();
    for (int s = VT_ROCM_BLOCK / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            shm[threadIdx.x] += shm[threadIdx.x + s];
        __syncthreads();
    }
    float r = shm[0];
    __syncthreads();
    return r;
}

/* Maximum of v over the block (same contract as vt_block_sum). */
__device__ inline float vt_block_max(float v, float *shm)
{
    shm[threadIdx.x] = v;
    __syncthreads();
    for (int s = VT_ROCM_BLOCK / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            shm[threadIdx.x] = fmaxf(shm[threadIdx.x], shm[threadIdx.x + s]);
        __syncthreads();
    }
    float r = shm[0];
    __syncthreads();
    return r;
}

/* The lowest i in [0, n) with bad(i), or n, for every thread of a block of
 * any size (all must call it). *first is one int64 of shared memory, free
 * for the call: one barrier when no index is bad, else a shared minimum and
 * two more. */
template <typename F> __device__ inline int64_t vt_block_first(int64_t n, F bad, int64_t *first)
{
    int64_t mine = n;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        if (bad(i)) {
            mine = i;
            break;
        }
    if (threadIdx.x == 0)
        *first = n;
    if (!__syncthreads_or(mine < n))
        return n;
    if (mine < n)
        atomicMin((unsigned long long *)first, (unsigned long long)mine);
    __syncthreads();
    const int64_t r = *first;
    __syncthreads();
    return r;
}

__device__ inline float vt_silu(float v)
{
    return v / (1.0f + expf(-v));
}

/* Blocks for items at per_block each, capped for grid-stride loops. */
static inline unsigned vt_grid_for(int64_t items, int64_t per_block)
{
    int64_t g = (items + per_block - 1) / per_block;
    if (g < 1)
        g = 1;
    if (g > (1 << 20))
        g = 1 << 20;
    return (unsigned)g;
}

#endif /* VT_ROCM_DEVICE_H */
