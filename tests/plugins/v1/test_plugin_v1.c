/* test_plugin_v1.c - a plugin written for contract version 1, built
 * against the frozen header tests/plugins/v1/vt_backend_v1.h (not today's
 * vt_backend.h): a host-memory device "test-v1" with two kernels, f32
 * Scale and GetRows (f32 table, i32 idx). Its vtable ends at host_free, so
 * the core must read it as version 1, give it the fallback queue, and call
 * its kernels with plain pointers. GetRows refuses an index out of range
 * the version-1 way: the kernel returns the status, why names the op. */
#include "config.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_backend_v1.h"

#include <vt/vt_params.h>

const uint32_t vt_plugin_abi = VT_PLUGIN_ABI;
const vt_backend_iface *vt_plugin_entry(void);

struct vt_backend_ctx {
    atomic_uint_fast64_t allocs, frees, h2d, d2h;
};

static vt_status v1_init(vt_backend_ctx **ctx, char *why, size_t why_size)
{
    *ctx = calloc(1, sizeof **ctx);
    return *ctx ? VT_OK : vt_why(VT_E_NO_MEMORY, why, why_size, "out of host memory");
}

static void v1_fini(vt_backend_ctx *ctx)
{
    free(ctx);
}

static int v1_count(vt_backend_ctx *ctx, char *why, size_t why_size)
{
    (void)ctx, (void)why, (void)why_size;
    return 1;
}

static vt_status v1_probe(vt_backend_ctx *ctx, int dev, vt_device_caps *c, char *why, size_t why_size)
{
    (void)ctx, (void)dev, (void)why, (void)why_size;
    c->type = VT_DEVICE_VULKAN;
    snprintf(c->name, sizeof c->name, "v1 test device (host memory)");
    snprintf(c->arch, sizeof c->arch, "v1");
    snprintf(c->platform, sizeof c->platform, "host");
    c->warp_size = 1;
    c->compute_units = 1;
    c->memory_total = 1u << 30;
    c->memory_free = c->memory_total;
    c->alloc_alignment = 64;
    c->host_addressable = true;
    snprintf(c->host_addressable_reason, sizeof c->host_addressable_reason, "malloc'd host memory");
    c->needs_weight_staging = false;
    snprintf(c->sampled_token_readback_reason, sizeof c->sampled_token_readback_reason, "version-1 plugin");
    return VT_OK;
}

static vt_status v1_alloc(vt_backend_ctx *ctx, int dev, uint64_t bytes, void **p, char *why, size_t why_size)
{
    (void)dev;
    *p = aligned_alloc(64, (size_t)((bytes + 63) / 64 * 64));
    if (!*p)
        return vt_why(VT_E_DEVICE_OOM, why, why_size, "cannot allocate %llu bytes", (unsigned long long)bytes);
    atomic_fetch_add(&ctx->allocs, 1);
    return VT_OK;
}

static void v1_release(vt_backend_ctx *ctx, int dev, void *p)
{
    (void)dev;
    if (p)
        atomic_fetch_add(&ctx->frees, 1);
    free(p);
}

static vt_status v1_write(vt_backend_ctx *ctx, int dev, void *dst, const void *src, uint64_t bytes, char *why,
                          size_t why_size)
{
    (void)dev, (void)why, (void)why_size;
    memcpy(dst, src, (size_t)bytes);
    atomic_fetch_add(&ctx->h2d, 1);
    return VT_OK;
}

static vt_status v1_read(vt_backend_ctx *ctx, int dev, void *dst, const void *src, uint64_t bytes, char *why,
                         size_t why_size)
{
    (void)dev, (void)why, (void)why_size;
    memcpy(dst, src, (size_t)bytes);
    atomic_fetch_add(&ctx->d2h, 1);
    return VT_OK;
}

static vt_status v1_sync(vt_backend_ctx *ctx, int dev, char *why, size_t why_size)
{
    (void)ctx, (void)dev, (void)why, (void)why_size;
    return VT_OK;
}

static void v1_counters(vt_backend_ctx *ctx, int dev, vt_backend_counters *out)
{
    (void)dev;
    memset(out, 0, sizeof *out); /* the version-1 struct: 8 counters */
    out->allocs = atomic_load(&ctx->allocs);
    out->frees = atomic_load(&ctx->frees);
    out->h2d_copies = atomic_load(&ctx->h2d);
    out->d2h_copies = atomic_load(&ctx->d2h);
}

static vt_status v1_scale(vt_backend_ctx *ctx, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    (void)ctx, (void)dev, (void)why, (void)why_size;
    const float *x = a->in[0].data;
    float *y = a->out[0].data;
    float s = ((const vt_params_scale *)a->params)->s;
    for (uint64_t i = 0; i < a->in[0].nbytes / sizeof(float); i++)
        y[i] = x[i] * s;
    return VT_OK;
}

static vt_status v1_get_rows(vt_backend_ctx *ctx, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    (void)ctx, (void)dev;
    const float *table = a->in[0].data;
    const int32_t *idx = a->in[1].data;
    float *dst = a->out[0].data;
    int64_t rows = a->in[0].shape[0], n = a->in[0].shape[a->in[0].ndim - 1];
    int64_t ni = (int64_t)(a->in[1].nbytes / sizeof(int32_t));
    for (int64_t i = 0; i < ni; i++)
        if (idx[i] < 0 || idx[i] >= rows)
            return vt_why(VT_E_INVALID_ARG, why, why_size, "GetRows (40): idx[%lld] = %d is outside [0, %lld)",
                          (long long)i, idx[i], (long long)rows);
    for (int64_t i = 0; i < ni; i++)
        memcpy(dst + i * n, table + idx[i] * n, (size_t)n * sizeof *dst);
    return VT_OK;
}

static const vt_kernel v1_kernels[] = {
    {VT_OP_SCALE, VT_SIG1(VT_F32), v1_scale},
    {VT_OP_GET_ROWS, VT_SIG3(VT_F32, VT_I32, VT_F32), v1_get_rows},
};

static const vt_backend_iface v1_iface = {
    .abi_version = VT_PLUGIN_ABI,
    .struct_size = sizeof(vt_backend_iface), /* the version-1 size: ends at host_free */
    .name = "test-v1",
    .description = "a contract version-1 plugin (frozen header)",
    .device_type = VT_DEVICE_VULKAN,
    .kernels = v1_kernels,
    .n_kernels = 2,
    .init = v1_init,
    .fini = v1_fini,
    .device_count = v1_count,
    .probe = v1_probe,
    .alloc = v1_alloc,
    .release = v1_release,
    .write = v1_write,
    .read = v1_read,
    .synchronize = v1_sync,
    .counters = v1_counters,
};

const vt_backend_iface *vt_plugin_entry(void)
{
    return &v1_iface;
}
