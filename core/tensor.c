/* tensor.c - tensors in device memory, views of them, and copies between
 * host memory and a tensor (blocking, and asynchronous on a queue). */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue_internal.h"

vt_status vt_tensor_create(vt_device *dev, vt_dtype dtype, uint32_t ndim, const int64_t *shape, vt_tensor **out)
{
    if (!out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_tensor_create: out is NULL");
    *out = NULL;
    if (!dev || (ndim && !shape))
        return vt_set_error(VT_E_INVALID_ARG, "vt_tensor_create: NULL device or shape");
    if (ndim > VT_MAX_DIMS)
        return vt_set_error(VT_E_INVALID_ARG, "vt_tensor_create on %s: %u dims, at most %d", dev->id, ndim,
                            VT_MAX_DIMS);
    const vt_dtype_info *info = vt_dtype_get(dtype);
    if (!info)
        return vt_set_error(VT_E_INVALID_ARG, "vt_tensor_create on %s: dtype %s", dev->id, vt_dtype_name(dtype));
    for (uint32_t i = 0; i < ndim; i++)
        if (shape[i] < 0)
            return vt_set_error(VT_E_INVALID_ARG, "vt_tensor_create on %s: dim %u is negative (%lld)", dev->id, i,
                                (long long)shape[i]);
    uint64_t bytes;
    if (!vt_dtype_tensor_bytes(dtype, ndim, shape, &bytes))
        return vt_set_error(VT_E_INVALID_ARG,
                            "vt_tensor_create on %s: %s shape overflows or its innermost dim is not a "
                            "multiple of the block (%u)",
                            dev->id, info->name, info->block_elems);
    vt_tensor *t = calloc(1, sizeof *t);
    if (!t)
        return vt_set_error(VT_E_NO_MEMORY, "vt_tensor_create: out of host memory");
    t->dev = dev;
    t->dtype = dtype;
    t->ndim = ndim;
    for (uint32_t i = 0; i < ndim; i++)
        t->shape[i] = shape[i];
    t->nbytes = bytes;
    char why[VT_WHY_SIZE] = "";
    const vt_backend_iface *f = dev->plugin->iface;
    vt_status st = f->alloc(dev->plugin->ctx, dev->index, bytes ? bytes : 1, &t->data, why, sizeof why);
    if (st != VT_OK) {
        free(t);
        return vt_set_error(st, "allocating %llu bytes on %s failed: %s", (unsigned long long)bytes, dev->id,
                            why[0] ? why : vt_status_name(st));
    }
    *out = t;
    return VT_OK;
}

void vt_tensor_destroy(vt_tensor *t)
{
    if (!t)
        return;
    if (!t->borrowed)
        t->dev->plugin->iface->release(t->dev->plugin->ctx, t->dev->index, t->data);
    free(t);
}

/* VT_OK when dev's kernels read host memory: the latest probe's answer,
 * or one probe when there is none (a "no" is probed again for its reason). */
static vt_status host_addressable(vt_device *dev, const char *fn)
{
    if (atomic_load(&dev->host_addressable) == 1)
        return VT_OK;
    vt_device_caps caps = {.struct_size = sizeof caps};
    vt_status st = vt_device_probe(dev, &caps);
    if (st != VT_OK)
        return st;
    if (!caps.host_addressable)
        return vt_set_error(VT_E_UNSUPPORTED,
                            "%s on %s: the device is not host-addressable (%s): copy into a tensor "
                            "of it instead",
                            fn, dev->id, caps.host_addressable_reason);
    return VT_OK;
}

vt_status vt_tensor_wrap(vt_device *dev, vt_dtype dtype, uint32_t ndim, const int64_t *shape, void *data,
                         bool read_only, vt_tensor **out)
{
    if (!out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_tensor_wrap: out is NULL");
    *out = NULL;
    if (!dev || (ndim && !shape))
        return vt_set_error(VT_E_INVALID_ARG, "vt_tensor_wrap: NULL device or shape");
    uint64_t bytes;
    if (ndim > VT_MAX_DIMS || !vt_dtype_get(dtype) || !vt_dtype_tensor_bytes(dtype, ndim, shape, &bytes))
        return vt_set_error(VT_E_INVALID_ARG,
                            "vt_tensor_wrap on %s: bad %s shape (%u dims, at most %d; whole blocks, no overflow)",
                            dev->id, vt_dtype_name(dtype), ndim, VT_MAX_DIMS);
    if (!data && bytes)
        return vt_set_error(VT_E_INVALID_ARG, "vt_tensor_wrap on %s: data is NULL for %llu bytes", dev->id,
                            (unsigned long long)bytes);
    if ((uintptr_t)data % vt_dtype_alignment(dtype) != 0)
        return vt_set_error(VT_E_INVALID_ARG, "vt_tensor_wrap on %s: data at %p is not aligned to the %u bytes of %s",
                            dev->id, data, vt_dtype_alignment(dtype), vt_dtype_name(dtype));
    vt_status st = host_addressable(dev, "vt_tensor_wrap");
    if (st != VT_OK)
        return st;
    vt_tensor *t = calloc(1, sizeof *t);
    if (!t)
        return vt_set_error(VT_E_NO_MEMORY, "vt_tensor_wrap: out of host memory");
    t->dev = dev;
    t->data = data;
    t->dtype = dtype;
    t->ndim = ndim;
    for (uint32_t i = 0; i < ndim; i++)
        t->shape[i] = shape[i];
    t->nbytes = bytes;
    t->borrowed = true;
    t->read_only = read_only;
    *out = t;
    return VT_OK;
}

vt_status vt_device_host_alloc(vt_device *dev, uint64_t bytes, void **ptr, bool *pinned)
{
    if (!dev || !ptr || !pinned)
        return vt_set_error(VT_E_INVALID_ARG, "vt_device_host_alloc: NULL argument");
    const vt_backend_iface *f = dev->plugin->iface;
    char why[VT_WHY_SIZE] = "";
    *ptr = NULL;
    *pinned = false;
    if (f->host_alloc && f->host_alloc(dev->plugin->ctx, dev->index, bytes, ptr, why, sizeof why) == VT_OK) {
        *pinned = true;
        return VT_OK;
    }
    size_t padded = (size_t)((bytes + 63) / 64 * 64);
    *ptr = padded ? aligned_alloc(64, padded) : NULL;
    if (!*ptr)
        return vt_set_error(VT_E_NO_MEMORY, "cannot allocate %llu bytes of host memory for %s%s%s",
                            (unsigned long long)bytes, dev->id, why[0] ? " (pinned: " : "", why[0] ? why : "");
    return VT_OK;
}

void vt_device_host_free(vt_device *dev, void *ptr, bool pinned)
{
    if (!ptr || !dev)
        return;
    if (pinned)
        dev->plugin->iface->host_free(dev->plugin->ctx, dev->index, ptr);
    else
        free(ptr);
}

/* A blocking copy between host memory and t's buffer at byte offset off
 * (of the buffer). At offset 0, or on a pointer-based version-1 plugin,
 * the plugin's blocking write/read; else the async copy on the device's
 * default queue and its sync point (the core never adds offsets to a
 * version-2 plugin's handles). */
static vt_status blocking_copy(const vt_tensor *t, vt_work_kind kind, uint64_t off, void *host, size_t n)
{
    vt_device *dev = t->dev;
    const vt_backend_iface *f = dev->plugin->iface;
    if (off == 0 || !vt_plugin_has_queues(dev->plugin)) {
        char why[VT_WHY_SIZE] = "";
        vt_status st =
            kind == VT_WORK_WRITE
                ? f->write(dev->plugin->ctx, dev->index, (char *)t->data + off, host, n, why, sizeof why)
                : f->read(dev->plugin->ctx, dev->index, host, (const char *)t->data + off, n, why, sizeof why);
        if (st != VT_OK)
            return vt_set_error(st, "copy of %zu bytes %s %s failed: %s", n, kind == VT_WORK_WRITE ? "to" : "from",
                                dev->id, why);
        return VT_OK;
    }
    vt_queue *q = vt_device_default_queue(dev);
    if (!q)
        return VT_E_DEVICE;
    vt_work w = {.kind = kind, .bytes = n};
    if (kind == VT_WORK_WRITE) {
        w.dst = t->data;
        w.dst_off = off;
        w.src = host;
    } else {
        w.dst = host;
        w.src = t->data;
        w.src_off = off;
    }
    pthread_mutex_lock(&q->lock);
    vt_status st =
        q->recording != VT_REC_NONE
            ? vt_set_error(VT_E_INVALID_ARG, "a blocking copy on %s while its default queue records a graph", dev->id)
            : vt_queue_submit_locked(q, &w);
    if (st == VT_OK)
        st = vt_queue_sync_locked(q);
    pthread_mutex_unlock(&q->lock);
    return st;
}

vt_status vt_tensor_write_at(vt_tensor *t, uint64_t offset, const void *src, size_t nbytes)
{
    if (!t || (nbytes && !src))
        return vt_set_error(VT_E_INVALID_ARG, "vt_tensor_write: NULL argument");
    if (t->read_only)
        return vt_set_error(VT_E_INVALID_ARG, "vt_tensor_write on %s: the tensor is a read-only view of a mapped file",
                            t->dev->id);
    if (offset > t->nbytes || nbytes > t->nbytes - offset)
        return vt_set_error(VT_E_INVALID_ARG,
                            "vt_tensor_write on %s: %zu bytes at offset %llu exceed the tensor's %llu", t->dev->id,
                            nbytes, (unsigned long long)offset, (unsigned long long)t->nbytes);
    if (!nbytes)
        return VT_OK;
    return blocking_copy(t, VT_WORK_WRITE, t->offset + offset, (void *)src, nbytes);
}

vt_status vt_tensor_write(vt_tensor *t, const void *src, size_t nbytes)
{
    if (t && nbytes != t->nbytes)
        return vt_set_error(VT_E_INVALID_ARG, "vt_tensor_write on %s: %zu bytes given, the tensor has %llu", t->dev->id,
                            nbytes, (unsigned long long)t->nbytes);
    return vt_tensor_write_at(t, 0, src, nbytes);
}

vt_status vt_tensor_read(const vt_tensor *t, void *dst, size_t nbytes)
{
    if (!t || (nbytes && !dst))
        return vt_set_error(VT_E_INVALID_ARG, "vt_tensor_read: NULL argument");
    if (nbytes != t->nbytes)
        return vt_set_error(VT_E_INVALID_ARG, "vt_tensor_read on %s: %zu bytes asked, the tensor has %llu", t->dev->id,
                            nbytes, (unsigned long long)t->nbytes);
    if (!nbytes)
        return VT_OK;
    return blocking_copy(t, VT_WORK_READ, t->offset, dst, nbytes);
}

uint64_t vt_tensor_nbytes(const vt_tensor *t)
{
    return t ? t->nbytes : 0;
}

vt_dtype vt_tensor_dtype(const vt_tensor *t)
{
    return t ? t->dtype : VT_F32;
}

uint32_t vt_tensor_ndim(const vt_tensor *t)
{
    return t ? t->ndim : 0;
}

int64_t vt_tensor_dim(const vt_tensor *t, uint32_t i)
{
    return t && i < t->ndim ? t->shape[i] : 0;
}

vt_device *vt_tensor_device(const vt_tensor *t)
{
    return t ? t->dev : NULL;
}

vt_shape vt_tensor_shape(const vt_tensor *t)
{
    vt_shape s;
    memset(&s, 0, sizeof s);
    if (t) {
        s.dtype = t->dtype;
        s.ndim = t->ndim;
        for (uint32_t i = 0; i < t->ndim; i++)
            s.shape[i] = t->shape[i];
    }
    return s;
}

vt_status vt_tensor_view(vt_tensor *base, uint64_t offset, vt_dtype dtype, uint32_t ndim, const int64_t *shape,
                         vt_tensor **out)
{
    if (!out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_tensor_view: out is NULL");
    *out = NULL;
    if (!base || (ndim && !shape))
        return vt_set_error(VT_E_INVALID_ARG, "vt_tensor_view: NULL base or shape");
    uint64_t bytes;
    if (ndim > VT_MAX_DIMS || !vt_dtype_get(dtype) || !vt_dtype_tensor_bytes(dtype, ndim, shape, &bytes))
        return vt_set_error(VT_E_INVALID_ARG, "vt_tensor_view on %s: bad %s shape of %u dims", base->dev->id,
                            vt_dtype_name(dtype), ndim);
    for (uint32_t i = 0; i < ndim; i++)
        if (shape[i] < 0)
            return vt_set_error(VT_E_INVALID_ARG, "vt_tensor_view on %s: dim %u is negative (%lld)", base->dev->id, i,
                                (long long)shape[i]);
    if (offset > base->nbytes || bytes > base->nbytes - offset)
        return vt_set_error(
            VT_E_INVALID_ARG, "vt_tensor_view on %s: %llu bytes at offset %llu exceed the base tensor's %llu",
            base->dev->id, (unsigned long long)bytes, (unsigned long long)offset, (unsigned long long)base->nbytes);
    /* Whole elements or blocks, at their alignment in the buffer */
    const vt_dtype_info *di = vt_dtype_get(dtype);
    const uint32_t align = vt_dtype_alignment(dtype);
    if (offset % di->block_bytes != 0)
        return vt_set_error(VT_E_INVALID_ARG,
                            "vt_tensor_view on %s: offset %llu is not a whole number of %s %s (%u bytes)",
                            base->dev->id, (unsigned long long)offset, vt_dtype_name(dtype),
                            di->quantized ? "blocks" : "elements", di->block_bytes);
    if ((base->offset + offset) % align != 0)
        return vt_set_error(VT_E_INVALID_ARG,
                            "vt_tensor_view on %s: byte %llu of the buffer (the base's own view at %llu, plus %llu) "
                            "is not aligned to the %u bytes of %s",
                            base->dev->id, (unsigned long long)(base->offset + offset),
                            (unsigned long long)base->offset, (unsigned long long)offset, align, vt_dtype_name(dtype));
    vt_tensor *t = calloc(1, sizeof *t);
    if (!t)
        return vt_set_error(VT_E_NO_MEMORY, "vt_tensor_view: out of host memory");
    t->dev = base->dev;
    t->data = base->data;
    t->offset = base->offset + offset;
    t->borrowed = true;
    t->read_only = base->read_only;
    t->dtype = dtype;
    t->ndim = ndim;
    for (uint32_t i = 0; i < ndim; i++)
        t->shape[i] = shape[i];
    t->nbytes = bytes;
    *out = t;
    return VT_OK;
}

/* Check one async copy's range against t; names the call on failure. */
static vt_status check_range(const char *fn, const vt_queue *q, const vt_tensor *t, uint64_t offset, size_t n)
{
    if (!q || !t)
        return vt_set_error(VT_E_INVALID_ARG, "%s: NULL queue or tensor", fn);
    if (t->dev != q->dev)
        return vt_set_error(VT_E_INVALID_ARG, "%s: the tensor lives on %s, the queue is of %s", fn, t->dev->id,
                            q->dev->id);
    if (offset > t->nbytes || n > t->nbytes - offset)
        return vt_set_error(VT_E_INVALID_ARG, "%s on %s: %zu bytes at offset %llu exceed the tensor's %llu", fn,
                            t->dev->id, n, (unsigned long long)offset, (unsigned long long)t->nbytes);
    return VT_OK;
}

static vt_status submit(vt_queue *q, const vt_work *w)
{
    pthread_mutex_lock(&q->lock);
    vt_status st = vt_queue_submit_locked(q, w);
    pthread_mutex_unlock(&q->lock);
    return st;
}

vt_status vt_tensor_write_async(vt_queue *q, vt_tensor *t, uint64_t offset, const void *src, size_t n)
{
    vt_status st = check_range("vt_tensor_write_async", q, t, offset, n);
    if (st != VT_OK)
        return st;
    if (n && !src)
        return vt_set_error(VT_E_INVALID_ARG, "vt_tensor_write_async on %s: src is NULL", t->dev->id);
    if (t->read_only)
        return vt_set_error(VT_E_INVALID_ARG, "vt_tensor_write_async on %s: the tensor is read-only", t->dev->id);
    if (!n)
        return VT_OK;
    vt_work w = {.kind = VT_WORK_WRITE, .dst = t->data, .dst_off = t->offset + offset, .src = src, .bytes = n};
    return submit(q, &w);
}

vt_status vt_tensor_read_async(vt_queue *q, const vt_tensor *t, uint64_t offset, void *dst, size_t n)
{
    vt_status st = check_range("vt_tensor_read_async", q, t, offset, n);
    if (st != VT_OK)
        return st;
    if (n && !dst)
        return vt_set_error(VT_E_INVALID_ARG, "vt_tensor_read_async on %s: dst is NULL", t->dev->id);
    if (!n)
        return VT_OK;
    vt_work w = {.kind = VT_WORK_READ, .dst = dst, .src = t->data, .src_off = t->offset + offset, .bytes = n};
    return submit(q, &w);
}

vt_status vt_tensor_copy_async(vt_queue *q, vt_tensor *dst, uint64_t dst_off, const vt_tensor *src, uint64_t src_off,
                               size_t n)
{
    vt_status st = check_range("vt_tensor_copy_async", q, dst, dst_off, n);
    if (st == VT_OK)
        st = check_range("vt_tensor_copy_async", q, src, src_off, n);
    if (st != VT_OK)
        return st;
    if (dst->read_only)
        return vt_set_error(VT_E_INVALID_ARG, "vt_tensor_copy_async on %s: the destination is read-only", dst->dev->id);
    if (!n)
        return VT_OK;
    vt_work w = {.kind = VT_WORK_COPY,
                 .dst = dst->data,
                 .dst_off = dst->offset + dst_off,
                 .src = src->data,
                 .src_off = src->offset + src_off,
                 .bytes = n};
    return submit(q, &w);
}
