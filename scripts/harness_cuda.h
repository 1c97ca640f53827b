// harness_cuda.h - what the standalone GPU instruments (scripts/*.cu and
// scripts/gdn-kernels/gdn_bench.cu, built with nvcc, no plugin) share and
// need nothing of vt for: the CUDA error check and the random source.
// harness_util.h adds random weights of every dtype on top of it.
#ifndef VT_HARNESS_CUDA_H
#define VT_HARNESS_CUDA_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>

// A CUDA call that must succeed, else the harness exits with 2.
#define CK(e)                                                                                                          \
    do {                                                                                                               \
        cudaError_t e_ = (e);                                                                                          \
        if (e_ != cudaSuccess) {                                                                                       \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));                                \
            exit(2);                                                                                                   \
        }                                                                                                              \
    } while (0)

// The harness's random source (xorshift64, a fixed seed: runs repeat).
static uint64_t rng = 88172645463325252ull;
static inline uint32_t rnd()
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}
// Uniform in [-1, 1).
static inline float frnd()
{
    return (float)(rnd() >> 8) / 8388608.0f - 1.0f;
}

#endif
