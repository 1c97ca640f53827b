/* hip_cuda.h - vt's own HIP -> CUDA portability header.
 *
 * The rocm backend is written against HIP. On NVIDIA GPUs it is compiled
 * with nvcc, and this header maps the part of HIP that vt uses onto the
 * CUDA runtime (Debian's HIP 5.2 headers for NVIDIA do not compile against
 * CUDA 13). It covers the runtime API (usable from C11, for the plugin's C
 * files) and, under nvcc, the kernel-side spellings (.hip files). Only what
 * vt calls is mapped; anything else is a compile error, not a guess. */
#ifndef VT_HIP_CUDA_H
#define VT_HIP_CUDA_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef cudaError_t hipError_t;
typedef struct cudaDeviceProp hipDeviceProp_t;
typedef cudaStream_t hipStream_t;
typedef cudaEvent_t hipEvent_t;
typedef enum cudaMemcpyKind hipMemcpyKind;
typedef enum cudaDeviceAttr hipDeviceAttribute_t;
typedef cudaGraph_t hipGraph_t;
typedef cudaGraphExec_t hipGraphExec_t;
typedef cudaGraphNode_t hipGraphNode_t;
typedef enum cudaStreamCaptureMode hipStreamCaptureMode;

#define hipSuccess           cudaSuccess
#define hipErrorNoDevice     cudaErrorNoDevice
#define hipErrorOutOfMemory  cudaErrorMemoryAllocation
#define hipErrorNotReady     cudaErrorNotReady
#define hipErrorInvalidValue cudaErrorInvalidValue
/* No code object for the device's arch (rocm_probe.c's check). */
#define hipErrorNoBinaryForGpu        cudaErrorNoKernelImageForDevice
#define hipErrorInvalidDeviceFunction cudaErrorInvalidDeviceFunction
typedef struct cudaFuncAttributes hipFuncAttributes;

#define hipMemcpyHostToDevice   cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost   cudaMemcpyDeviceToHost
#define hipMemcpyDeviceToDevice cudaMemcpyDeviceToDevice

#define hipDeviceAttributePageableMemoryAccess   cudaDevAttrPageableMemoryAccess
#define hipDeviceAttributeManagedMemory          cudaDevAttrManagedMemory
#define hipDeviceAttributeComputeCapabilityMajor cudaDevAttrComputeCapabilityMajor

#define hipMemAttachGlobal    cudaMemAttachGlobal
#define hipHostMallocDefault  cudaHostAllocDefault
#define hipEventDisableTiming cudaEventDisableTiming
#define hipStreamNonBlocking  cudaStreamNonBlocking

#define hipStreamCaptureModeRelaxed cudaStreamCaptureModeRelaxed

static inline hipError_t hipGetDeviceCount(int *count)
{
    return cudaGetDeviceCount(count);
}
static inline hipError_t hipSetDevice(int dev)
{
    return cudaSetDevice(dev);
}
static inline hipError_t hipGetDevice(int *dev)
{
    return cudaGetDevice(dev);
}
static inline hipError_t hipGetDeviceProperties(hipDeviceProp_t *prop, int dev)
{
    return cudaGetDeviceProperties(prop, dev);
}
static inline hipError_t hipDeviceGetAttribute(int *value, hipDeviceAttribute_t attr, int dev)
{
    return cudaDeviceGetAttribute(value, attr, dev);
}
static inline hipError_t hipMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    return cudaMemGetInfo(free_bytes, total_bytes);
}
static inline hipError_t hipMalloc(void **ptr, size_t bytes)
{
    return cudaMalloc(ptr, bytes);
}
static inline hipError_t hipMallocManaged(void **ptr, size_t bytes, unsigned flags)
{
    return cudaMallocManaged(ptr, bytes, flags);
}
static inline hipError_t hipFree(void *ptr)
{
    return cudaFree(ptr);
}
static inline hipError_t hipHostMalloc(void **ptr, size_t bytes, unsigned flags)
{
    return cudaHostAlloc(ptr, bytes, flags);
}
static inline hipError_t hipHostFree(void *ptr)
{
    return cudaFreeHost(ptr);
}
static inline hipError_t hipMemcpy(void *dst, const void *src, size_t bytes, hipMemcpyKind kind)
{
    return cudaMemcpy(dst, src, bytes, kind);
}
static inline hipError_t hipMemcpyAsync(void *dst, const void *src, size_t bytes, hipMemcpyKind kind,
                                        hipStream_t stream)
{
    return cudaMemcpyAsync(dst, src, bytes, kind, stream);
}
static inline hipError_t hipMemsetAsync(void *dst, int value, size_t bytes, hipStream_t stream)
{
    return cudaMemsetAsync(dst, value, bytes, stream);
}
static inline hipError_t hipStreamCreateWithFlags(hipStream_t *stream, unsigned flags)
{
    return cudaStreamCreateWithFlags(stream, flags);
}
static inline hipError_t hipStreamDestroy(hipStream_t stream)
{
    return cudaStreamDestroy(stream);
}
static inline hipError_t hipStreamSynchronize(hipStream_t stream)
{
    return cudaStreamSynchronize(stream);
}
static inline hipError_t hipEventCreateWithFlags(hipEvent_t *event, unsigned flags)
{
    return cudaEventCreateWithFlags(event, flags);
}
static inline hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream)
{
    return cudaEventRecord(event, stream);
}
static inline hipError_t hipEventSynchronize(hipEvent_t event)
{
    return cudaEventSynchronize(event);
}
static inline hipError_t hipEventQuery(hipEvent_t event)
{
    return cudaEventQuery(event);
}
static inline hipError_t hipEventCreate(hipEvent_t *event)
{
    return cudaEventCreate(event);
}
static inline hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t stop)
{
    return cudaEventElapsedTime(ms, start, stop);
}
static inline hipError_t hipStreamWaitEvent(hipStream_t stream, hipEvent_t event, unsigned flags)
{
    return cudaStreamWaitEvent(stream, event, flags);
}
static inline hipError_t hipStreamBeginCapture(hipStream_t stream, hipStreamCaptureMode mode)
{
    return cudaStreamBeginCapture(stream, mode);
}
static inline hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t *graph)
{
    return cudaStreamEndCapture(stream, graph);
}
/* HIP keeps CUDA 11's error-node/log arguments; CUDA 12+ takes flags. */
static inline hipError_t hipGraphInstantiate(hipGraphExec_t *exec, hipGraph_t graph, hipGraphNode_t *error_node,
                                             char *log, size_t log_size)
{
    (void)error_node;
    (void)log;
    (void)log_size;
    return cudaGraphInstantiate(exec, graph, 0);
}
static inline hipError_t hipGraphLaunch(hipGraphExec_t exec, hipStream_t stream)
{
    return cudaGraphLaunch(exec, stream);
}
static inline hipError_t hipGraphExecDestroy(hipGraphExec_t exec)
{
    return cudaGraphExecDestroy(exec);
}
static inline hipError_t hipGraphDestroy(hipGraph_t graph)
{
    return cudaGraphDestroy(graph);
}
static inline hipError_t hipEventDestroy(hipEvent_t event)
{
    return cudaEventDestroy(event);
}
static inline hipError_t hipDeviceSynchronize(void)
{
    return cudaDeviceSynchronize();
}
static inline hipError_t hipGetLastError(void)
{
    return cudaGetLastError();
}
static inline const char *hipGetErrorName(hipError_t e)
{
    return cudaGetErrorName(e);
}
static inline const char *hipGetErrorString(hipError_t e)
{
    return cudaGetErrorString(e);
}
static inline hipError_t hipRuntimeGetVersion(int *v)
{
    return cudaRuntimeGetVersion(v);
}
static inline hipError_t hipDriverGetVersion(int *v)
{
    return cudaDriverGetVersion(v);
}
static inline hipError_t hipFuncGetAttributes(hipFuncAttributes *attr, const void *func)
{
    return cudaFuncGetAttributes(attr, func);
}

#ifdef __cplusplus
}
#endif

/* Kernel-side spellings, under nvcc only. */
#ifdef __CUDACC__
#include <cuda_runtime.h>

#define hipLaunchKernelGGL(kernel, grid, block, shmem, stream, ...)                                                    \
    kernel<<<(grid), (block), (shmem), (stream)>>>(__VA_ARGS__)

template <typename T> __device__ inline T __shfl_xor(T v, int mask, int width = warpSize)
{
    return __shfl_xor_sync(0xffffffffu, v, mask, width);
}
template <typename T> __device__ inline T __shfl_down(T v, unsigned delta, int width = warpSize)
{
    return __shfl_down_sync(0xffffffffu, v, delta, width);
}
template <typename T> __device__ inline T __shfl(T v, int lane, int width = warpSize)
{
    return __shfl_sync(0xffffffffu, v, lane, width);
}
#endif /* __CUDACC__ */

#endif /* VT_HIP_CUDA_H */
