/* vt_hip.h - the HIP runtime API for the rocm backend's C files, on either
 * platform: AMD's own headers, or vt's HIP->CUDA header on NVIDIA. */
#ifndef VT_HIP_H
#define VT_HIP_H

#include <stdio.h>
#include <string.h>

#if defined(VT_HIP_PLATFORM_NVIDIA)
#include "hip_cuda.h"
#define VT_HIP_PLATFORM_NAME "hip-nvidia"
#else
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>
#define VT_HIP_PLATFORM_NAME "hip-amd"
#endif

/* The device's target name: gfx90a (AMD, without feature flags) or sm_90. */
static inline void vt_hip_arch_name(const hipDeviceProp_t *prop, char *out, size_t size)
{
#if defined(VT_HIP_PLATFORM_NVIDIA)
    snprintf(out, size, "sm_%d%d", prop->major, prop->minor);
#else
    size_t len = strcspn(prop->gcnArchName, ":");
    snprintf(out, size, "%.*s", (int)len, prop->gcnArchName);
#endif
}

#endif /* VT_HIP_H */
