/* tensor.c - tensors in device memory and vt_op_run: check operands,
 * resolve the tier, run the kernel. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_check.h"
#include "vt_internal.h"

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

vt_status vt_tensor_wrap(vt_device *dev, vt_dtype dtype, uint32_t ndim, const int64_t *shape, void *data,
                         bool read_only, vt_tensor **out)
{
    *out = NULL;
    uint64_t bytes;
    if (ndim > VT_MAX_DIMS || !vt_dtype_tensor_bytes(dtype, ndim, shape, &bytes))
        return vt_set_error(VT_E_INVALID_ARG, "vt_tensor_wrap on %s: bad %s shape", dev->id, vt_dtype_name(dtype));
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
    if (!ptr)
        return;
    if (pinned)
        dev->plugin->iface->host_free(dev->plugin->ctx, dev->index, ptr);
    else
        free(ptr);
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
    char why[VT_WHY_SIZE] = "";
    const vt_backend_iface *f = t->dev->plugin->iface;
    vt_status st = f->write(t->dev->plugin->ctx, t->dev->index, (char *)t->data + offset, src, nbytes, why, sizeof why);
    if (st != VT_OK)
        return vt_set_error(st, "copy of %zu bytes to %s failed: %s", nbytes, t->dev->id, why);
    return VT_OK;
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
    char why[VT_WHY_SIZE] = "";
    const vt_backend_iface *f = t->dev->plugin->iface;
    vt_status st = f->read(t->dev->plugin->ctx, t->dev->index, dst, t->data, nbytes, why, sizeof why);
    if (st != VT_OK)
        return vt_set_error(st, "copy of %zu bytes from %s failed: %s", nbytes, t->dev->id, why);
    return VT_OK;
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

static void fill_operand(vt_operand *o, const vt_tensor *t)
{
    memset(o, 0, sizeof *o);
    if (!t)
        return;
    o->data = t->data;
    o->dtype = t->dtype;
    o->ndim = t->ndim;
    for (uint32_t i = 0; i < t->ndim; i++)
        o->shape[i] = t->shape[i];
    o->nbytes = t->nbytes;
}

vt_status vt_op_run(vt_device *dev, vt_op op, const vt_tensor *const *in, uint32_t n_in, vt_tensor *const *out,
                    uint32_t n_out, const void *params, size_t params_size)
{
    if (!dev)
        return vt_set_error(VT_E_INVALID_ARG, "vt_op_run: device is NULL");
    const char *name = vt_op_name(op);
    if (!name)
        return vt_set_error(VT_E_NOT_FOUND, "vt_op_run on %s: op id %d is not in the catalogue", dev->id, (int)op);
    if (n_in > VT_MAX_INPUTS || n_out > VT_MAX_OUTPUTS || (n_in && !in) || (n_out && !out))
        return vt_set_error(VT_E_INVALID_ARG, "%s (%d) on %s: %u inputs / %u outputs (at most %d / %d)", name, (int)op,
                            dev->id, n_in, n_out, VT_MAX_INPUTS, VT_MAX_OUTPUTS);
    vt_op_args args;
    memset(&args, 0, sizeof args);
    args.struct_size = sizeof args;
    args.op = op;
    args.n_in = n_in;
    args.n_out = n_out;
    args.params = params;
    args.params_size = params_size;
    for (uint32_t i = 0; i < n_in; i++) {
        if (in[i] && in[i]->dev != dev)
            return vt_set_error(VT_E_INVALID_ARG, "%s (%d): input %u lives on %s, the op runs on %s", name, (int)op, i,
                                in[i]->dev->id, dev->id);
        fill_operand(&args.in[i], in[i]);
    }
    for (uint32_t i = 0; i < n_out; i++) {
        if (!out[i])
            return vt_set_error(VT_E_INVALID_ARG, "%s (%d) on %s: output %u is NULL", name, (int)op, dev->id, i);
        if (out[i]->dev != dev)
            return vt_set_error(VT_E_INVALID_ARG, "%s (%d): output %u lives on %s, the op runs on %s", name, (int)op, i,
                                out[i]->dev->id, dev->id);
        fill_operand(&args.out[i], out[i]);
    }
    char why[VT_WHY_SIZE] = "";
    vt_sig sig;
    vt_status st = vt_op_check(&args, &sig, why, sizeof why);
    if (st != VT_OK)
        return vt_set_error(st, "%s on %s", why, dev->id);

    vt_resolution r;
    st = vt_resolve(dev, op, sig, 0, &r);
    if (st != VT_OK) {
        if (st == VT_E_OP_MISSING)
            atomic_fetch_add(&dev->refusals, 1);
        return st; /* vt_resolve set the message */
    }
    const vt_backend_iface *f = dev->plugin->iface;
    if (r.tier == VT_TIER_NATIVE) {
        uint32_t n_kernels = 0;
        const vt_kernel *kernels = vt_device_table(dev, &n_kernels);
        const vt_kernel *k = vt_kernel_find(kernels, n_kernels, op, sig);
        st = k->run(dev->plugin->ctx, dev->index, &args, why, sizeof why);
        if (st != VT_OK)
            return vt_set_error(st, "%s (%d) on %s failed: %s", name, (int)op, dev->id, why);
        atomic_fetch_add(&dev->native_runs, 1);
        return VT_OK;
    }
    /* Portable CPU tier: the cpu backend's kernel on this device's pointers,
     * with the device synchronised around it. */
    vt_plugin *cpu = vt_registry_cpu(dev->reg);
    const vt_kernel *k = vt_kernel_find(cpu->kernels, cpu->n_kernels, op, sig);
    st = f->synchronize(dev->plugin->ctx, dev->index, why, sizeof why);
    if (st == VT_OK)
        st = k->run(cpu->ctx, 0, &args, why, sizeof why);
    if (st == VT_OK)
        st = f->synchronize(dev->plugin->ctx, dev->index, why, sizeof why);
    if (st != VT_OK)
        return vt_set_error(st, "%s (%d) on %s via the portable CPU tier failed: %s", name, (int)op, dev->id, why);
    atomic_fetch_add(&dev->cpu_tier_runs, 1);
    const char *log = getenv("VT_TIER_LOG");
    if (log && *log && strcmp(log, "0") != 0)
        fprintf(stderr, "vt: %s (%d) on %s ran on the portable CPU tier\n", name, (int)op, dev->id);
    return VT_OK;
}
