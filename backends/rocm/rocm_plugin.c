/* rocm_plugin.c - the rocm backend's plugin entry: the vtable, runtime
 * start-up, device memory (hipMalloc, or hipMallocManaged when opted in
 * with VT_ROCM_MANAGED_ALLOC=1), blocking copies and synchronisation; the
 * version-2 members (queues, events, graphs) are in rocm_stream.c, the HIP
 * runtime helpers every file uses in rocm_runtime.c. */
#include "config.h"

#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rocm_backend.h"

const uint32_t vt_plugin_abi = VT_PLUGIN_ABI;
const vt_backend_iface *vt_plugin_entry(void);

static vt_status rocm_init(vt_backend_ctx **out, char *why, size_t why_size)
{
    vt_backend_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return vt_why(VT_E_NO_MEMORY, why, why_size, "out of host memory");
    const char *m = getenv("VT_ROCM_MANAGED_ALLOC");
    c->managed_requested = m && strcmp(m, "1") == 0;
    int n = 0;
    hipError_t e = hipGetDeviceCount(&n);
    if (e != hipSuccess || n <= 0) {
        /* Zero devices is not a failure: the reason is kept for the listing. */
        if (e != hipSuccess) {
            char text[160];
            vt_rocm_error_text(e, text, sizeof text);
            snprintf(c->no_device_reason, sizeof c->no_device_reason, "hipGetDeviceCount: %s", text);
        } else
            snprintf(c->no_device_reason, sizeof c->no_device_reason, "hipGetDeviceCount: 0 devices");
        (void)hipGetLastError(); /* clear the sticky error */
        c->n_devices = 0;
        *out = c;
        return VT_OK;
    }
    c->dev = calloc((size_t)n, sizeof *c->dev);
    if (!c->dev) {
        free(c);
        return vt_why(VT_E_NO_MEMORY, why, why_size, "out of host memory");
    }
    c->n_devices = n;
    vt_rocm_chain_init(n);
    vt_rocm_attn_cluster_init();
    vt_rocm_gemm_deq_init();
    for (int d = 0; d < n; d++) {
        pthread_mutex_init(&c->dev[d].lock, NULL);
        char qwhy[VT_CAPS_TEXT] = "";
        if (vt_rocm_queue_new(c, d, &c->dev[d].dq, qwhy, sizeof qwhy) == VT_OK) {
            c->dev[d].stream_ok = true;
            vt_rocm_readback_self_test(c, d);
        } else
            snprintf(c->dev[d].readback_reason, sizeof c->dev[d].readback_reason, "stream creation failed: %s", qwhy);
    }
    *out = c;
    return VT_OK;
}

static void rocm_fini(vt_backend_ctx *c)
{
    if (!c)
        return;
    for (int d = 0; d < c->n_devices; d++) {
        rocm_device *rd = &c->dev[d];
        if (hipSetDevice(d) == hipSuccess) {
            vt_rocm_queue_free(c, d, rd->dq);
            for (size_t i = 0; i < rd->n_allocs; i++)
                (void)hipFree(rd->allocs[i].ptr);
            for (size_t i = 0; i < rd->n_retired; i++)
                (void)hipFree(rd->retired[i]);
        }
        free(rd->allocs);
        free(rd->retired);
        free(rd->queues);
        pthread_mutex_destroy(&rd->lock);
    }
    free(c->dev);
    free(c);
}

static int rocm_device_count(vt_backend_ctx *c, char *why, size_t why_size)
{
    if (c->n_devices == 0)
        vt_why(VT_OK, why, why_size, "%s", c->no_device_reason);
    return c->n_devices;
}

static vt_status rocm_probe(vt_backend_ctx *c, int dev, vt_device_caps *caps, char *why, size_t why_size)
{
    return vt_rocm_probe(c, dev, caps, why, why_size);
}

static vt_status rocm_alloc(vt_backend_ctx *c, int dev, uint64_t bytes, void **ptr, char *why, size_t why_size)
{
    vt_status st = vt_rocm_use(c, dev, why, why_size);
    if (st != VT_OK)
        return st;
    if (bytes > SIZE_MAX)
        return vt_why(VT_E_DEVICE_OOM, why, why_size, "%llu bytes exceed the address space", (unsigned long long)bytes);
    rocm_device *rd = &c->dev[dev];
    pthread_mutex_lock(&rd->lock);
    if (rd->n_allocs == rd->cap_allocs) {
        size_t cap = rd->cap_allocs ? rd->cap_allocs * 2 : 64;
        rocm_allocation *na = realloc(rd->allocs, cap * sizeof *na);
        if (!na) {
            pthread_mutex_unlock(&rd->lock);
            return vt_why(VT_E_NO_MEMORY, why, why_size, "out of host memory");
        }
        rd->allocs = na;
        rd->cap_allocs = cap;
    }
    void *p = NULL;
    bool managed = vt_rocm_managed_active(c, dev);
    hipError_t e = managed ? hipMallocManaged(&p, (size_t)bytes, hipMemAttachGlobal) : hipMalloc(&p, (size_t)bytes);
    if (e != hipSuccess) {
        pthread_mutex_unlock(&rd->lock);
        (void)hipGetLastError();
        char what[96];
        snprintf(what, sizeof what, "%s(%llu bytes)", managed ? "hipMallocManaged" : "hipMalloc",
                 (unsigned long long)bytes);
        return vt_rocm_fail(e, what, dev, why, why_size);
    }
    rd->allocs[rd->n_allocs++] = (rocm_allocation){p, bytes};
    rd->counters.allocs++;
    rd->counters.live_bytes += bytes;
    if (rd->counters.live_bytes > rd->counters.peak_bytes)
        rd->counters.peak_bytes = rd->counters.live_bytes;
    pthread_mutex_unlock(&rd->lock);
    *ptr = p;
    return VT_OK;
}

static void rocm_release(vt_backend_ctx *c, int dev, void *ptr)
{
    if (!ptr || dev < 0 || dev >= c->n_devices)
        return;
    rocm_device *rd = &c->dev[dev];
    pthread_mutex_lock(&rd->lock);
    for (size_t i = 0; i < rd->n_allocs; i++) {
        if (rd->allocs[i].ptr != ptr)
            continue;
        if (hipSetDevice(dev) == hipSuccess)
            (void)hipFree(ptr);
        rd->counters.live_bytes -= rd->allocs[i].bytes;
        rd->counters.frees++;
        rd->allocs[i] = rd->allocs[--rd->n_allocs];
        break;
    }
    pthread_mutex_unlock(&rd->lock);
}

/* A blocking copy (pageable host memory), counted as one sync: after all
 * work queued on dev, on the device's internal queue, then waited for. */
static vt_status copy_sync(vt_backend_ctx *c, int dev, void *dst, const void *src, uint64_t bytes, hipMemcpyKind kind,
                           char *why, size_t why_size)
{
    vt_status st = vt_rocm_use(c, dev, why, why_size);
    if (st != VT_OK)
        return st;
    rocm_device *rd = &c->dev[dev];
    if (!rd->stream_ok)
        return vt_why(VT_E_DEVICE, why, why_size, "rocm:%d has no stream (%s)", dev, rd->readback_reason);
    /* Ordered after the work already queued on every queue of dev (a
     * kernel may still write what is read, or read what is written). */
    hipError_t e = hipDeviceSynchronize();
    if (e == hipSuccess)
        e = hipMemcpyAsync(dst, src, (size_t)bytes, kind, rd->dq->stream);
    if (e == hipSuccess)
        e = hipStreamSynchronize(rd->dq->stream);
    vt_rocm_count_sync(c, dev);
    if (e != hipSuccess)
        return vt_rocm_fail(
            e, kind == hipMemcpyHostToDevice ? "hipMemcpyAsync(host to device)" : "hipMemcpyAsync(device to host)", dev,
            why, why_size);
    pthread_mutex_lock(&rd->lock);
    if (kind == hipMemcpyHostToDevice) {
        rd->counters.h2d_copies++;
        rd->counters.h2d_bytes += bytes;
    } else {
        rd->counters.d2h_copies++;
        rd->counters.d2h_bytes += bytes;
    }
    pthread_mutex_unlock(&rd->lock);
    return VT_OK;
}

static vt_status rocm_write(vt_backend_ctx *c, int dev, void *dst, const void *src, uint64_t bytes, char *why,
                            size_t why_size)
{
    return copy_sync(c, dev, dst, src, bytes, hipMemcpyHostToDevice, why, why_size);
}

static vt_status rocm_read(vt_backend_ctx *c, int dev, void *dst, const void *src, uint64_t bytes, char *why,
                           size_t why_size)
{
    return copy_sync(c, dev, dst, src, bytes, hipMemcpyDeviceToHost, why, why_size);
}

static vt_status rocm_synchronize(vt_backend_ctx *c, int dev, char *why, size_t why_size)
{
    vt_status st = vt_rocm_use(c, dev, why, why_size);
    if (st != VT_OK)
        return st;
    /* Every queue of dev (their streams are all on this device). */
    hipError_t e = hipDeviceSynchronize();
    vt_rocm_count_sync(c, dev);
    return e == hipSuccess ? VT_OK : vt_rocm_fail(e, "hipDeviceSynchronize", dev, why, why_size);
}

static void rocm_counters(vt_backend_ctx *c, int dev, vt_backend_counters *out)
{
    memset(out, 0, sizeof *out);
    if (dev < 0 || dev >= c->n_devices)
        return;
    pthread_mutex_lock(&c->dev[dev].lock);
    *out = c->dev[dev].counters;
    pthread_mutex_unlock(&c->dev[dev].lock);
}

static vt_status rocm_host_alloc(vt_backend_ctx *c, int dev, uint64_t bytes, void **ptr, char *why, size_t why_size)
{
    vt_status st = vt_rocm_use(c, dev, why, why_size);
    if (st != VT_OK)
        return st;
    hipError_t e = hipHostMalloc(ptr, (size_t)bytes, hipHostMallocDefault);
    if (e != hipSuccess) {
        (void)hipGetLastError();
        return vt_rocm_fail(e, "hipHostMalloc", dev, why, why_size);
    }
    return VT_OK;
}

static void rocm_host_free(vt_backend_ctx *c, int dev, void *ptr)
{
    (void)c;
    (void)dev;
    if (ptr)
        (void)hipHostFree(ptr);
}

static vt_backend_iface rocm_iface = {
    .abi_version = VT_PLUGIN_ABI,
    .struct_size = sizeof(vt_backend_iface),
    .name = "rocm",
    .description = "HIP GPUs (" VT_HIP_PLATFORM_NAME " build)",
    .device_type = VT_DEVICE_ROCM,
    .init = rocm_init,
    .fini = rocm_fini,
    .device_count = rocm_device_count,
    .probe = rocm_probe,
    .alloc = rocm_alloc,
    .release = rocm_release,
    .write = rocm_write,
    .read = rocm_read,
    .synchronize = rocm_synchronize,
    .counters = rocm_counters,
    /* The HIP (and CUDA) runtimes register exit handlers and keep threads:
     * they cannot be unloaded safely, so the module stays resident. */
    .flags = VT_BACKEND_FLAG_RESIDENT,
    .host_alloc = rocm_host_alloc,
    .host_free = rocm_host_free,
};

/* The kernel table is filled in once, however many registries call the
 * entry at the same time. */
static pthread_once_t iface_once = PTHREAD_ONCE_INIT;

static void fill_iface(void)
{
    rocm_iface.kernels = vt_rocm_kernel_table(&rocm_iface.n_kernels);
    vt_rocm_fill_iface_v2(&rocm_iface);
}

const vt_backend_iface *vt_plugin_entry(void)
{
    pthread_once(&iface_once, fill_iface);
    return &rocm_iface;
}
