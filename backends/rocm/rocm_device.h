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

/* IEEE half bits -> float (exact), as vt_f16_to_f32 on the host. */
__device__ inline float vt_dev_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else {
            exp = 127 - 15 + 1;
            while (!(man & 0x400u)) {
                man <<= 1;
                exp--;
            }
            man &= 0x3ffu;
            bits = sign | (exp << 23) | (man << 13);
        }
    } else if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    return __uint_as_float(bits);
}

/* float -> IEEE half bits, round to nearest even, as vt_f32_to_f16. */
__device__ inline uint16_t vt_dev_f32_to_f16(float f)
{
    uint32_t x = __float_as_uint(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t absx = x & 0x7fffffffu;
    if (absx > 0x7f800000u)
        return (uint16_t)(sign | 0x7e00u | ((absx >> 13) & 0x3ffu));
    if (absx >= 0x477ff000u)
        return (uint16_t)(sign | 0x7c00u);
    if (absx < 0x38800000u) {
        if (absx < 0x33000000u)
            return (uint16_t)sign;
        uint32_t e = absx >> 23;
        uint32_t m = (absx & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126 - e;
        uint32_t q = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1u);
        uint32_t halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (q & 1u)))
            q++;
        return (uint16_t)(sign | q);
    }
    uint32_t r = absx - 0x38000000u;
    uint32_t q = r >> 13;
    uint32_t rem = r & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (q & 1u)))
        q++;
    return (uint16_t)(sign | q);
}

/* bfloat16 bits -> float (exact). */
__device__ inline float vt_dev_bf16_to_f32(uint16_t h)
{
    return __uint_as_float((uint32_t)h << 16);
}

/* float -> bfloat16 bits, round to nearest even. */
__device__ inline uint16_t vt_dev_f32_to_bf16(float f)
{
    uint32_t x = __float_as_uint(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

/* Element i of an f32/f16/bf16 buffer as float (dtype: vt_dtype id). */
__device__ inline float vt_dev_load(const void *p, uint32_t dtype, int64_t i)
{
    if (dtype == 1)
        return vt_dev_f16_to_f32(((const uint16_t *)p)[i]);
    if (dtype == 30)
        return vt_dev_bf16_to_f32(((const uint16_t *)p)[i]);
    return ((const float *)p)[i];
}

/* Store v as element i of an f32/f16/bf16 buffer. */
__device__ inline void vt_dev_store(void *p, uint32_t dtype, int64_t i, float v)
{
    if (dtype == 1)
        ((uint16_t *)p)[i] = vt_dev_f32_to_f16(v);
    else if (dtype == 30)
        ((uint16_t *)p)[i] = vt_dev_f32_to_bf16(v);
    else
        ((float *)p)[i] = v;
}

/* Threads per block of the row kernels (a power of two). */
#define VT_ROCM_BLOCK 256

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
