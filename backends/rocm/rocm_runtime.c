/* rocm_runtime.c - the rocm backend's HIP runtime helpers: error text and
 * status, making a device current, managed memory. Used by the entry, the
 * probe, the queues and the op files alike. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "rocm_backend.h"

void vt_rocm_error_text(hipError_t e, char *buf, size_t size)
{
    const char *name = hipGetErrorName(e), *text = hipGetErrorString(e);
    if (text && strcmp(text, name) != 0)
        snprintf(buf, size, "%s (%s)", name, text);
    else
        snprintf(buf, size, "%s", name);
}

vt_status vt_rocm_fail(hipError_t e, const char *what, int dev, char *why, size_t why_size)
{
    vt_status st = e == hipErrorOutOfMemory ? VT_E_DEVICE_OOM : VT_E_DEVICE;
    char text[160];
    vt_rocm_error_text(e, text, sizeof text);
    return vt_why(st, why, why_size, "%s on rocm:%d: %s", what, dev, text);
}

vt_status vt_rocm_use(vt_backend_ctx *ctx, int dev, char *why, size_t why_size)
{
    if (dev < 0 || dev >= ctx->n_devices)
        return vt_why(VT_E_NOT_FOUND, why, why_size, "rocm has %d devices, asked for %d", ctx->n_devices, dev);
    /* Every enqueue comes here: asking is a thread-local read, setting is
     * not free (part of the per-op cost of a stream of tiny ops). */
    int cur = -1;
    if (hipGetDevice(&cur) == hipSuccess && cur == dev)
        return VT_OK;
    hipError_t e = hipSetDevice(dev);
    return e == hipSuccess ? VT_OK : vt_rocm_fail(e, "hipSetDevice", dev, why, why_size);
}

bool vt_rocm_managed_active(vt_backend_ctx *ctx, int dev)
{
    if (!ctx->managed_requested)
        return false;
    int managed = 0;
    return hipDeviceGetAttribute(&managed, hipDeviceAttributeManagedMemory, dev) == hipSuccess && managed;
}
