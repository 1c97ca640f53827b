/* rocm_probe.c - what a HIP device is and can do, asked of the runtime:
 * identity from hipGetDeviceProperties, memory from hipMemGetInfo, host
 * addressability from hipDeviceAttributePageableMemoryAccess (or an
 * opted-in managed allocation), sampled-token readback from a real
 * stream + event + pinned-host copy (self-tested at init, re-checked on
 * every probe); whether the binary holds code for the device's arch from a
 * kernel's attributes (kernels_probe.hip). */
#include "config.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "rocm_backend.h"

#ifndef VT_HIP_ARCHS
#error "VT_HIP_ARCHS (the --with-hip-arch list) must be defined by configure"
#endif

/* kernels_probe.hip: hipSuccess when this binary holds code for the
 * current device (hipFuncGetAttributes on one of its kernels). */
hipError_t vt_rocm_code_object_status(void);

/* A device this binary has no code object for stays listed, with every op
 * refused by name (the core reads caps->kernels_unavailable). */
static void probe_code_object(vt_device_caps *caps)
{
    if (caps->struct_size < offsetof(vt_device_caps, kernels_unavailable) + sizeof caps->kernels_unavailable)
        return; /* a core that does not read the answer */
    hipError_t e = vt_rocm_code_object_status();
    if (e == hipSuccess)
        return;
    if (e == hipErrorNoBinaryForGpu || e == hipErrorInvalidDeviceFunction)
        snprintf(caps->kernels_unavailable, sizeof caps->kernels_unavailable,
                 "vt_rocm.so has no code object for %s (built for %s): reconfigure with --with-hip-arch=%s", caps->arch,
                 VT_HIP_ARCHS, caps->arch);
    else
        snprintf(caps->kernels_unavailable, sizeof caps->kernels_unavailable,
                 "vt_rocm.so cannot use its kernels on %s (built for %s): hipFuncGetAttributes on a kernel: %s",
                 caps->arch, VT_HIP_ARCHS, hipGetErrorName(e));
}

/* The async readback path, end to end on the device's internal queue: a
 * pinned host buffer, a device buffer, an async copy and an event to wait
 * on. Once per device at init, under the device lock. */
void vt_rocm_readback_self_test(vt_backend_ctx *c, int dev)
{
    rocm_device *rd = &c->dev[dev];
    pthread_mutex_lock(&rd->lock);
    rd->readback_ok = false;
    hipStream_t s = rd->dq->stream;
    const char *step = "hipHostMalloc";
    void *host = NULL, *devbuf = NULL;
    hipEvent_t ev;
    bool have_event = false;
    hipError_t e = hipHostMalloc(&host, 64, hipHostMallocDefault);
    if (e == hipSuccess) {
        step = "hipMalloc";
        e = hipMalloc(&devbuf, 64);
    }
    if (e == hipSuccess) {
        step = "hipEventCreateWithFlags";
        e = hipEventCreateWithFlags(&ev, hipEventDisableTiming);
        have_event = e == hipSuccess;
    }
    if (e == hipSuccess) {
        step = "hipMemsetAsync";
        e = hipMemsetAsync(devbuf, 0x5a, 64, s);
    }
    if (e == hipSuccess) {
        step = "hipMemcpyAsync(device to pinned host)";
        e = hipMemcpyAsync(host, devbuf, 64, hipMemcpyDeviceToHost, s);
    }
    if (e == hipSuccess) {
        step = "hipEventRecord";
        e = hipEventRecord(ev, s);
    }
    if (e == hipSuccess) {
        step = "hipEventSynchronize";
        e = hipEventSynchronize(ev);
    }
    if (e == hipSuccess && ((unsigned char *)host)[63] != 0x5a) {
        snprintf(rd->readback_reason, sizeof rd->readback_reason,
                 "async readback returned wrong bytes (0x%02x, want 0x5a)", ((unsigned char *)host)[63]);
    } else if (e == hipSuccess) {
        rd->readback_ok = true;
        snprintf(rd->readback_reason, sizeof rd->readback_reason,
                 "stream + event + pinned host copy verified (hipMemcpyAsync to hipHostMalloc memory)");
    } else {
        snprintf(rd->readback_reason, sizeof rd->readback_reason, "%s failed: %s", step, hipGetErrorName(e));
        (void)hipGetLastError();
    }
    if (have_event)
        (void)hipEventDestroy(ev);
    if (devbuf)
        (void)hipFree(devbuf);
    if (host)
        (void)hipHostFree(host);
    pthread_mutex_unlock(&rd->lock);
}

/* Is the readback path usable now? The self-test of init, and an event
 * recorded on the internal queue now (under the device lock). */
static void probe_readback(vt_backend_ctx *c, int dev, vt_device_caps *caps)
{
    rocm_device *rd = &c->dev[dev];
    pthread_mutex_lock(&rd->lock);
    bool ok = rd->stream_ok && rd->readback_ok;
    char reason[VT_CAPS_TEXT];
    snprintf(reason, sizeof reason, "%s", rd->readback_reason);
    if (ok) {
        hipEvent_t ev;
        hipError_t e = hipEventCreateWithFlags(&ev, hipEventDisableTiming);
        if (e == hipSuccess) {
            e = hipEventRecord(ev, rd->dq->stream);
            if (e == hipSuccess) {
                e = hipEventQuery(ev);
                if (e == hipErrorNotReady)
                    e = hipSuccess;
            }
            (void)hipEventDestroy(ev);
        }
        if (e != hipSuccess) {
            ok = false;
            snprintf(reason, sizeof reason, "an event on the device's stream failed now: %s", hipGetErrorName(e));
            (void)hipGetLastError();
        }
    }
    pthread_mutex_unlock(&rd->lock);
    caps->sampled_token_readback = ok;
    snprintf(caps->sampled_token_readback_reason, sizeof caps->sampled_token_readback_reason, "%s", reason);
}

vt_status vt_rocm_probe(vt_backend_ctx *c, int dev, vt_device_caps *caps, char *why, size_t why_size)
{
    vt_status st = vt_rocm_use(c, dev, why, why_size);
    if (st != VT_OK)
        return st;
    hipDeviceProp_t prop;
    memset(&prop, 0, sizeof prop);
    hipError_t e = hipGetDeviceProperties(&prop, dev);
    if (e != hipSuccess)
        return vt_rocm_fail(e, "hipGetDeviceProperties", dev, why, why_size);
    size_t free_b = 0, total_b = 0;
    e = hipMemGetInfo(&free_b, &total_b);
    if (e != hipSuccess)
        return vt_rocm_fail(e, "hipMemGetInfo", dev, why, why_size);
    int pageable = 0, managed = 0;
    e = hipDeviceGetAttribute(&pageable, hipDeviceAttributePageableMemoryAccess, dev);
    if (e != hipSuccess)
        return vt_rocm_fail(e, "hipDeviceGetAttribute(PageableMemoryAccess)", dev, why, why_size);
    e = hipDeviceGetAttribute(&managed, hipDeviceAttributeManagedMemory, dev);
    if (e != hipSuccess)
        return vt_rocm_fail(e, "hipDeviceGetAttribute(ManagedMemory)", dev, why, why_size);

    caps->type = VT_DEVICE_ROCM;
    snprintf(caps->name, sizeof caps->name, "%s", prop.name);
    vt_hip_arch_name(&prop, caps->arch, sizeof caps->arch);
    snprintf(caps->platform, sizeof caps->platform, "%s", VT_HIP_PLATFORM_NAME);
    probe_code_object(caps);
    caps->warp_size = (uint32_t)prop.warpSize;
    caps->compute_units = (uint32_t)prop.multiProcessorCount;
    caps->memory_total = total_b;
    caps->memory_free = free_b;
    caps->alloc_alignment = VT_ROCM_ALIGNMENT;
    caps->managed_memory_supported = managed != 0;
    caps->managed_memory_enabled = c->managed_requested && managed != 0;

    if (pageable) {
        caps->host_addressable = true;
        snprintf(caps->host_addressable_reason, sizeof caps->host_addressable_reason,
                 "hipDeviceAttributePageableMemoryAccess=1: host and device share pageable memory");
    } else if (caps->managed_memory_enabled) {
        caps->host_addressable = true;
        snprintf(caps->host_addressable_reason, sizeof caps->host_addressable_reason,
                 "managed allocation opted in (VT_ROCM_MANAGED_ALLOC=1, hipMallocManaged); "
                 "hipDeviceAttributePageableMemoryAccess=0");
    } else {
        caps->host_addressable = false;
        snprintf(caps->host_addressable_reason, sizeof caps->host_addressable_reason,
                 "hipDeviceAttributePageableMemoryAccess=0, hipMalloc%s",
                 c->managed_requested ? "; VT_ROCM_MANAGED_ALLOC=1 ignored: hipDeviceAttributeManagedMemory=0" : "");
    }
    caps->needs_weight_staging = !caps->host_addressable;

    probe_readback(c, dev, caps);
    return VT_OK;
}
