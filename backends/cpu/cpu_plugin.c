/* cpu_plugin.c - the cpu backend's plugin entry, memory and copies. */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cpu_backend.h"
#include "cpu_dot.h"
#include "cpu_simd.h"

const uint32_t vt_plugin_abi = VT_PLUGIN_ABI;
const vt_backend_iface *vt_plugin_entry(void);

static vt_status cpu_init(vt_backend_ctx **ctx, char *why, size_t why_size)
{
    vt_cpu_simd simd;
    int threads;
    vt_status st = vt_cpu_simd_select(&simd, why, why_size);
    if (st == VT_OK)
        st = vt_cpu_threads_select(&threads, why, why_size);
    if (st != VT_OK)
        return st;
    vt_backend_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return vt_why(VT_E_NO_MEMORY, why, why_size, "out of host memory");
    c->isa = vt_cpu_isa_get(simd);
    c->pool = vt_cpu_pool_create(threads);
    if (!c->pool) {
        free(c);
        return vt_why(VT_E_NO_MEMORY, why, why_size, "cannot start the thread pool");
    }
    *ctx = c;
    return VT_OK;
}

static void cpu_fini(vt_backend_ctx *ctx)
{
    if (!ctx)
        return;
    vt_cpu_pool_destroy(ctx->pool);
    free(ctx);
}

static int cpu_device_count(vt_backend_ctx *ctx, char *why, size_t why_size)
{
    (void)ctx;
    (void)why;
    (void)why_size;
    return 1; /* the host */
}

static vt_status cpu_probe(vt_backend_ctx *ctx, int dev, vt_device_caps *caps, char *why, size_t why_size)
{
    if (dev != 0)
        return vt_why(VT_E_NOT_FOUND, why, why_size, "cpu has one device, asked for %d", dev);
    return vt_cpu_probe(ctx, caps, why, why_size);
}

/* Ask for transparent huge pages over the whole 2 MiB pages inside a large
 * buffer (weights): a decode MatMul streams them once per token, and with
 * 4 KiB pages every 4 KiB of each row in flight costs a TLB miss. Advice
 * only; where the kernel has no THP nothing changes. */
static void advise_huge(void *base, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    if (bytes < 2 * huge)
        return;
    uintptr_t lo = ((uintptr_t)base + huge - 1) & ~(huge - 1), hi = ((uintptr_t)base + bytes) & ~(huge - 1);
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)base;
    (void)bytes;
#endif
}

static vt_status cpu_alloc(vt_backend_ctx *ctx, int dev, uint64_t bytes, void **ptr, char *why, size_t why_size)
{
    (void)dev;
    uint64_t padded = (bytes + VT_CPU_ALIGNMENT - 1) / VT_CPU_ALIGNMENT * VT_CPU_ALIGNMENT;
    if (padded < bytes || padded > SIZE_MAX - sizeof(uint64_t) * 8)
        return vt_why(VT_E_DEVICE_OOM, why, why_size, "cannot allocate %llu bytes of host memory",
                      (unsigned long long)bytes);
    /* One header cache line in front records the size for the counters. */
    unsigned char *base = aligned_alloc(VT_CPU_ALIGNMENT, (size_t)padded + VT_CPU_ALIGNMENT);
    if (!base)
        return vt_why(VT_E_DEVICE_OOM, why, why_size, "aligned_alloc of %llu bytes failed", (unsigned long long)padded);
    advise_huge(base, (size_t)padded + VT_CPU_ALIGNMENT);
    memcpy(base, &padded, sizeof padded);
    *ptr = base + VT_CPU_ALIGNMENT;
    atomic_fetch_add(&ctx->allocs, 1);
    uint64_t live = atomic_fetch_add(&ctx->live_bytes, padded) + padded;
    uint64_t peak = atomic_load(&ctx->peak_bytes);
    while (live > peak && !atomic_compare_exchange_weak(&ctx->peak_bytes, &peak, live))
        ;
    return VT_OK;
}

static void cpu_release(vt_backend_ctx *ctx, int dev, void *ptr)
{
    (void)dev;
    if (!ptr)
        return;
    unsigned char *base = (unsigned char *)ptr - VT_CPU_ALIGNMENT;
    uint64_t padded;
    memcpy(&padded, base, sizeof padded);
    atomic_fetch_sub(&ctx->live_bytes, padded);
    atomic_fetch_add(&ctx->frees, 1);
    free(base);
}

static vt_status cpu_write(vt_backend_ctx *ctx, int dev, void *dst, const void *src, uint64_t bytes, char *why,
                           size_t why_size)
{
    (void)dev;
    (void)why;
    (void)why_size;
    memcpy(dst, src, (size_t)bytes);
    atomic_fetch_add(&ctx->h2d_copies, 1);
    atomic_fetch_add(&ctx->h2d_bytes, bytes);
    return VT_OK;
}

static vt_status cpu_read(vt_backend_ctx *ctx, int dev, void *dst, const void *src, uint64_t bytes, char *why,
                          size_t why_size)
{
    (void)dev;
    (void)why;
    (void)why_size;
    memcpy(dst, src, (size_t)bytes);
    atomic_fetch_add(&ctx->d2h_copies, 1);
    atomic_fetch_add(&ctx->d2h_bytes, bytes);
    return VT_OK;
}

static vt_status cpu_synchronize(vt_backend_ctx *ctx, int dev, char *why, size_t why_size)
{
    (void)ctx;
    (void)dev;
    (void)why;
    (void)why_size;
    return VT_OK; /* cpu kernels run to completion before they return */
}

static void cpu_counters(vt_backend_ctx *ctx, int dev, vt_backend_counters *out)
{
    (void)dev;
    out->allocs = atomic_load(&ctx->allocs);
    out->frees = atomic_load(&ctx->frees);
    out->live_bytes = atomic_load(&ctx->live_bytes);
    out->peak_bytes = atomic_load(&ctx->peak_bytes);
    out->h2d_copies = atomic_load(&ctx->h2d_copies);
    out->d2h_copies = atomic_load(&ctx->d2h_copies);
    out->h2d_bytes = atomic_load(&ctx->h2d_bytes);
    out->d2h_bytes = atomic_load(&ctx->d2h_bytes);
}

static vt_backend_iface cpu_iface = {
    .abi_version = VT_PLUGIN_ABI,
    .struct_size = sizeof(vt_backend_iface),
    .name = "cpu",
    .description = "host CPU: the reference backend, the CPU oracle and the portable CPU tier",
    .device_type = VT_DEVICE_CPU,
    .init = cpu_init,
    .fini = cpu_fini,
    .device_count = cpu_device_count,
    .probe = cpu_probe,
    .alloc = cpu_alloc,
    .release = cpu_release,
    .write = cpu_write,
    .read = cpu_read,
    .synchronize = cpu_synchronize,
    .counters = cpu_counters,
    /* Contract version 2 without the optional queue set: the cpu backend
     * runs queued work synchronously on the caller's thread (the core's
     * fallback queue: an op is done when vt_op_enqueue returns, events
     * complete at once, graphs are the core's recorded list), which the
     * contract allows. Its kernels read host pointers, so the core folds
     * operand offsets into them. */
    .iface_version = VT_IFACE_VERSION,
};

/* The kernel table is filled in once, however many registries call the
 * entry at the same time. */
static pthread_once_t iface_once = PTHREAD_ONCE_INIT;

static void fill_iface(void)
{
    cpu_iface.kernels = vt_cpu_kernel_table(&cpu_iface.n_kernels);
}

const vt_backend_iface *vt_plugin_entry(void)
{
    pthread_once(&iface_once, fill_iface);
    return &cpu_iface;
}
