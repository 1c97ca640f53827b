/* rocm_backend.h - the rocm backend's private state and helpers. */
#ifndef VT_ROCM_BACKEND_H
#define VT_ROCM_BACKEND_H

#include <pthread.h>
#include <stdbool.h>

#include <vt/vt_backend.h>

#include "vt_hip.h"

/* hipMalloc's documented alignment. */
#define VT_ROCM_ALIGNMENT 256u

/* One live allocation, for the counters. */
typedef struct rocm_allocation {
    void *ptr;
    uint64_t bytes;
} rocm_allocation;

/* Per-device state. */
typedef struct rocm_device {
    pthread_mutex_t lock; /* guards allocs and counters */
    hipStream_t stream;   /* every kernel and copy of vt runs here */
    bool stream_ok;
    rocm_allocation *allocs;
    size_t n_allocs, cap_allocs;
    vt_backend_counters counters;
    unsigned long long *err_word; /* device word the refusal scans report through */
    bool readback_probed;         /* sampled-token readback probe done */
    bool readback_ok;
    char readback_reason[VT_CAPS_TEXT];
} rocm_device;

struct vt_backend_ctx {
    int n_devices;
    char no_device_reason[256]; /* what hipGetDeviceCount said when 0 */
    bool managed_requested;     /* VT_ROCM_MANAGED_ALLOC=1 */
    rocm_device *dev;
};

/* "hipErrorNoDevice (no ROCm-capable device is detected)": the error's
 * name, and its text when the runtime gives more than the name. */
void vt_rocm_error_text(hipError_t e, char *buf, size_t size);

/* "hipMalloc: hipErrorOutOfMemory (out of memory)"-style status from a HIP
 * error; OOM maps to VT_E_DEVICE_OOM, the rest to VT_E_DEVICE. */
vt_status vt_rocm_fail(hipError_t e, const char *what, int dev, char *why, size_t why_size);

/* Make dev current on this thread. */
vt_status vt_rocm_use(vt_backend_ctx *ctx, int dev, char *why, size_t why_size);

/* True when managed allocation is both requested and supported on dev. */
bool vt_rocm_managed_active(vt_backend_ctx *ctx, int dev);

/* Probe dev into caps (rocm_probe.c). */
vt_status vt_rocm_probe(vt_backend_ctx *ctx, int dev, vt_device_caps *caps, char *why, size_t why_size);

/* The kernel table, assembled once from the family tables (rocm_kernels.c). */
const vt_kernel *vt_rocm_kernel_table(uint32_t *n);

#endif
