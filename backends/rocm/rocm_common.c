/* rocm_common.c - helpers shared by the rocm backend's op files. */
#include "config.h"

#include <stdlib.h>

#include "rocm_common.h"

int64_t vt_rocm_elems(const vt_operand *o)
{
    int64_t n = 1;
    for (uint32_t i = 0; i < o->ndim; i++)
        n *= o->shape[i];
    return n;
}

vt_status vt_rocm_stream(vt_backend_ctx *c, int dev, hipStream_t *s, char *why, size_t why_size)
{
    vt_status st = vt_rocm_use(c, dev, why, why_size);
    if (st != VT_OK)
        return st;
    if (!c->dev[dev].stream_ok)
        return vt_why(VT_E_DEVICE, why, why_size, "rocm:%d has no stream", dev);
    *s = c->dev[dev].stream;
    return VT_OK;
}

vt_status vt_rocm_done(hipError_t e, const char *what, vt_backend_ctx *c, int dev, char *why, size_t why_size)
{
    if (e == hipSuccess)
        e = hipStreamSynchronize(c->dev[dev].stream);
    return e == hipSuccess ? VT_OK : vt_rocm_fail(e, what, dev, why, why_size);
}

vt_status vt_rocm_read_indices(vt_backend_ctx *c, int dev, const void *src, int64_t n, bool wide, int64_t *dst,
                               char *why, size_t why_size)
{
    if (n <= 0)
        return VT_OK;
    hipStream_t s;
    vt_status st = vt_rocm_stream(c, dev, &s, why, why_size);
    if (st != VT_OK)
        return st;
    size_t bytes = (size_t)n * (wide ? 8 : 4);
    void *tmp = wide ? (void *)dst : malloc(bytes);
    if (!tmp)
        return vt_why(VT_E_NO_MEMORY, why, why_size, "out of host memory reading %lld indices", (long long)n);
    hipError_t e = hipMemcpyAsync(tmp, src, bytes, hipMemcpyDeviceToHost, s);
    if (e == hipSuccess)
        e = hipStreamSynchronize(s);
    if (e != hipSuccess) {
        if (!wide)
            free(tmp);
        return vt_rocm_fail(e, "hipMemcpyAsync(indices to host)", dev, why, why_size);
    }
    if (!wide) {
        for (int64_t i = 0; i < n; i++)
            dst[i] = ((const int32_t *)tmp)[i];
        free(tmp);
    }
    return VT_OK;
}
