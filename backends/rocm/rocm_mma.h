// rocm_mma.h - the NVIDIA device instructions that the matrix-instruction
// kernels share (the decode MatMul, the prefill GEMM and the decode
// Attention; kernels_mmv.h's staging on NVIDIA too): shared-memory
// addresses, cp.async 16-byte copies and their groups, ldmatrix, mma.sync
// m16n8k16 with f32 accumulators, the clusters' rank, barrier and
// shared-memory map (sm_90), and the opt-in shared memory of a device and
// of a kernel.
// Included by .hip files of the NVIDIA build only. The instructions need
// sm_80: compiled for an older target the copies and loads do nothing and
// mma16816 traps; smem_optin answers 0 for such a device, and the kernels'
// launchers take nothing there.
#ifndef VT_ROCM_MMA_H
#define VT_ROCM_MMA_H

#if !defined(VT_HIP_PLATFORM_NVIDIA)
#error "rocm_mma.h holds NVIDIA instructions: include it from the NVIDIA build only"
#endif

#include "rocm_device.h"
#include <atomic>
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

namespace vt_mma
{

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define VT_MMA_SM80 1
#else
#define VT_MMA_SM80 0
#endif

// The shared-memory address of p (a pointer into shared memory).
__device__ __forceinline__ uint32_t smem_u32(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

// 16 bytes from global src to shared dst without registers; with
// src_bytes (0 or 16) the first src_bytes of src, zeros for the rest (0:
// src is not read).
__device__ __forceinline__ void cp16(uint32_t dst, const void *src)
{
#if VT_MMA_SM80
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
#else
    (void)dst, (void)src;
#endif
}
__device__ __forceinline__ void cp16(uint32_t dst, const void *src, int src_bytes)
{
#if VT_MMA_SM80
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
#else
    (void)dst, (void)src, (void)src_bytes;
#endif
}

// Close the group of this thread's copies issued since the last commit.
__device__ __forceinline__ void cp_commit()
{
#if VT_MMA_SM80
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Wait until at most N groups of this thread's copies are in flight (the
// other threads' copies are visible after the caller's barrier).
template <int N> __device__ __forceinline__ void cp_wait()
{
#if VT_MMA_SM80
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

// Four 8x8 16-bit matrices from shared memory (lane l gives the address of
// a row of matrix l / 8); TRANS delivers them transposed.
template <bool TRANS = false> __device__ __forceinline__ void ldsm4(uint32_t (&r)[4], uint32_t addr)
{
#if VT_MMA_SM80
    if (TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(addr));
    else
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(addr));
#else
    (void)addr;
    r[0] = r[1] = r[2] = r[3] = 0;
#endif
}

// d += A B (m16n8k16, f32 accumulators): F16 true, f16 A and B; false, bf16.
template <bool F16 = true>
__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
{
#if VT_MMA_SM80
    if (F16)
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
    (void)d, (void)a, (void)b0, (void)b1;
    __trap();
#endif
}

// The most dynamic shared memory a block may have on device dev (0..63),
// asked of the runtime once per device; 0 for a device before sm_80 (no
// mma.sync m16n8k16 with f32 accumulators) or one the runtime cannot answer.
inline size_t smem_optin(int dev)
{
    static std::atomic<int> cached[64]; /* -1: none */
    if (dev < 0 || dev >= 64)
        return 0;
    const int v = vt_rocm_memo(cached[dev], [dev] {
        int b = 0, major = 0;
        if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess || major < 8 ||
            cudaDeviceGetAttribute(&b, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess || b <= 0)
            b = -1;
        return b;
    });
    return v > 0 ? (size_t)v : 0;
}

// Raise kernel K's dynamic shared memory opt-in on device dev (0..63, the
// current one) to `bytes`, once per kernel and device: the runtime refuses
// a launch above a kernel's opt-in, and its occupancy answers count no
// block above it. Each caller passes the same bytes for a kernel and
// device every time (a constant of the kernel, or the device's limit).
template <auto K> cudaError_t smem_opt_in(int dev, size_t bytes)
{
    /* threads that raise it at once set the same bytes; a thread that reads
     * done launches after the raise (release / acquire) */
    static std::atomic<bool> done[64];
    if (dev < 0 || dev >= 64)
        return cudaErrorInvalidDevice;
    if (!done[dev].load(std::memory_order_acquire)) {
        const cudaError_t e = cudaFuncSetAttribute(K, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
        if (e != cudaSuccess)
            return e;
        done[dev].store(true, std::memory_order_release);
    }
    return cudaSuccess;
}
// The same on the current device.
template <auto K> cudaError_t smem_opt_in(size_t bytes)
{
    int dev = 0;
    const cudaError_t e = cudaGetDevice(&dev);
    return e != cudaSuccess ? e : smem_opt_in<K>(dev, bytes);
}

// Thread block clusters (sm_90 and later; compiled for an older target
// rank 0, no barrier and the block's own memory: the launchers form
// clusters on sm_90 devices only).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define VT_MMA_SM90 1
#else
#define VT_MMA_SM90 0
#endif

// This block's rank in its cluster.
__device__ __forceinline__ unsigned cluster_rank()
{
    unsigned r = 0;
#if VT_MMA_SM90
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
#endif
    return r;
}

// A barrier of all threads of the cluster; shared-memory writes before it
// (to any block of the cluster) are seen after it.
__device__ __forceinline__ void cluster_sync()
{
#if VT_MMA_SM90
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
#endif
}

// The address of p (this block's shared memory) in the shared memory of
// block rank of the cluster.
__device__ __forceinline__ float *cluster_peer(float *p, unsigned rank)
{
#if VT_MMA_SM90
    uint64_t r;
    asm volatile("mapa.u64 %0, %1, %2;\n" : "=l"(r) : "l"(p), "r"(rank));
    return (float *)r;
#else
    (void)rank;
    return p;
#endif
}

#undef VT_MMA_SM90
#undef VT_MMA_SM80

} // namespace vt_mma

#endif /* VT_ROCM_MMA_H */
