/* rocm_chain.h - chained launches of the decode path's kernels: on NVIDIA
 * sm_90 and later (programmatic dependent launch), a kernel queued with
 * VT_LAUNCH_CHAINED may be scheduled while the kernel before it in the
 * stream (or in the captured graph) is still running, so its blocks are
 * resident and set up when that one ends, instead of a launch later.
 *
 * The rule that keeps it correct: a chained kernel calls vt_chain_wait()
 * unconditionally, before any global memory access and before any return
 * (only register and shared-memory setup, and the hint below, may come
 * first). It returns once the kernel before it has finished and its
 * writes are visible; since that one waited in turn for its own
 * predecessor, everything queued earlier has finished too. A kernel may
 * then call vt_chain_open() to let the next chained kernel be scheduled
 * (only scheduling: that kernel still waits); vt_chain_begin() does both. Elsewhere (AMD, sm_80, a
 * kernel launched plainly) both are no-ops and VT_LAUNCH_CHAINED is a
 * plain launch.
 *
 * The own-op rule, the one exception for reads: a kernel whose launcher
 * queued the kernel just before it (a kernel of the same call that opens
 * only after its own wait, as vt_chain_begin() does) may read before its
 * wait what that kernel does not write. It is scheduled only once every
 * block of that kernel has passed its wait, so everything queued earlier
 * has finished; only that kernel's own writes may still be under way. The
 * decode MatMul on its call's split of x stages its first weight tiles
 * so (kernels_mmv_mma.hip), as do the prefill GEMMs (bf16, and the scaled
 * path's f16 and block formats) on their split (kernels_gemm.hip).
 *
 * vt_launch is the one launcher that sets launch attributes (chaining,
 * and clusters for the kernels that share shared memory across blocks);
 * VT_LAUNCH_CHAINED is it without clusters.
 *
 * vt_rocm_chain_mode (set by the plugin at init, rocm_plugin.c; the
 * harnesses set their own): 1 chained (the default on sm_90 and later),
 * 0 plain launches (VT_ROCM_CHAIN=0, or a device before sm_90). Not for
 * the C files: device code and launchers only. */
#ifndef VT_ROCM_CHAIN_H
#define VT_ROCM_CHAIN_H

extern "C" int vt_rocm_chain_mode;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define VT_CHAIN_ARCH 1
#else
#define VT_CHAIN_ARCH 0
#endif

/* Wait for the kernel before this one (chained launch); first statement. */
__device__ inline void vt_chain_wait()
{
#if VT_CHAIN_ARCH
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* Let the next chained kernel be scheduled now. */
__device__ inline void vt_chain_open()
{
#if VT_CHAIN_ARCH
    asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

/* The hint a chained kernel may give before its wait, while the kernel
 * before it still runs: a request that L2 fetch the line at p. It reads no
 * value the kernel computes with and changes nothing any kernel reads (L2
 * is where every write lands, so a line the kernel before writes after the
 * fetch holds the written bytes), so it cannot break the rule above. Where
 * chaining does not exist it does nothing. */
__device__ inline void vt_chain_prefetch(const void *p)
{
#if VT_CHAIN_ARCH
    asm volatile("prefetch.global.L2 [%0];" ::"l"(p) : "memory");
#else
    (void)p;
#endif
}

/* The first statement of a chained kernel: the wait, then the open. */
__device__ inline void vt_chain_begin()
{
    vt_chain_wait();
    vt_chain_open();
}

/* Whether VT_LAUNCH_CHAINED queues its kernel chained (host side): the one
 * test, for the launcher and for kernels told so (a hint before the wait
 * is worth giving only then). */
static inline bool vt_launches_chained()
{
#if defined(VT_HIP_PLATFORM_NVIDIA)
    return vt_rocm_chain_mode != 0;
#else
    return false;
#endif
}

#if defined(VT_HIP_PLATFORM_NVIDIA)
/* kernel<<<grid, block, shmem, stream>>>(args...) in clusters of `cluster`
 * blocks (sm_90; 1 x 1 x 1: no clusters) and chained when `chained` and
 * vt_launches_chained() say so: the one place that sets launch attributes.
 * The launch status is cudaGetLastError's, as for <<<>>>. */
template <typename... P, typename... A>
static inline void vt_launch(void (*kernel)(P...), dim3 grid, dim3 block, size_t shmem, cudaStream_t stream,
                             dim3 cluster, bool chained, A &&...args)
{
    cudaLaunchAttribute attr[2];
    unsigned na = 0;
    if (cluster.x * cluster.y * cluster.z > 1) {
        attr[na].id = cudaLaunchAttributeClusterDimension;
        attr[na].val.clusterDim.x = cluster.x;
        attr[na].val.clusterDim.y = cluster.y;
        attr[na].val.clusterDim.z = cluster.z;
        na++;
    }
    if (chained && vt_launches_chained()) {
        attr[na].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[na].val.programmaticStreamSerializationAllowed = 1;
        na++;
    }
    if (na == 0) {
        kernel<<<grid, block, shmem, stream>>>(static_cast<A &&>(args)...);
        return;
    }
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = shmem;
    cfg.stream = stream;
    cfg.attrs = attr;
    cfg.numAttrs = na;
    (void)cudaLaunchKernelEx(&cfg, kernel, static_cast<A &&>(args)...);
}

/* kernel<<<grid, block, shmem, stream>>>(args...), chained when
 * vt_rocm_chain_mode says so (vt_launch without clusters). */
template <typename... P, typename... A>
static inline void vt_launch_chained(void (*kernel)(P...), dim3 grid, dim3 block, size_t shmem, cudaStream_t stream,
                                     A &&...args)
{
    vt_launch(kernel, grid, block, shmem, stream, dim3(1, 1, 1), true, static_cast<A &&>(args)...);
}
#define VT_LAUNCH_CHAINED(kernel, grid, block, shmem, stream, ...)                                                     \
    vt_launch_chained(kernel, dim3(grid), dim3(block), (size_t)(shmem), (stream), __VA_ARGS__)
#else
#define VT_LAUNCH_CHAINED(kernel, grid, block, shmem, stream, ...)                                                     \
    hipLaunchKernelGGL(kernel, grid, block, shmem, stream, __VA_ARGS__)
#endif

#endif /* VT_ROCM_CHAIN_H */
