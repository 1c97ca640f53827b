/* cuda_stub_plugin.c - the cuda-stub test double (see cuda_stub.h):
 * configuration from the environment, the handle allocator and copies. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_stub.h"

const uint32_t vt_plugin_abi = VT_PLUGIN_ABI;
const vt_backend_iface *vt_plugin_entry(void);

/* Parse an unsigned decimal env value; false (and *out untouched) if unset. */
static vt_status env_u64(const char *name, uint64_t *out, bool *set, char *why, size_t why_size)
{
    const char *v = getenv(name);
    *set = false;
    if (!v || !*v)
        return VT_OK;
    char *end = NULL;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end || v[0] == '-')
        return vt_why(VT_E_INVALID_ARG, why, why_size, "%s='%s' is not an unsigned number", name, v);
    *out = x;
    *set = true;
    return VT_OK;
}

/* Where device dev's handles start: an address in the kernel half of the
 * address space, which user-mode code can never dereference (any CPU access
 * faults at once). Each device gets 2^44 bytes (16 TiB) of it; nothing is
 * mapped, so many stub devices and registries cost no address space. */
_Static_assert(sizeof(uintptr_t) == 8, "cuda-stub handles need a 64-bit address space");

static uintptr_t handle_base(int dev)
{
    return (uintptr_t)0xffff000000000000ull + ((uintptr_t)dev << 44);
}

static vt_status stub_init(vt_backend_ctx **out, char *why, size_t why_size)
{
    vt_backend_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return vt_why(VT_E_NO_MEMORY, why, why_size, "out of host memory");
    bool set;
    uint64_t mem = VT_CUDA_STUB_DEFAULT_MEMORY, addr = 0, ndev = 1;
    vt_status st = env_u64("VT_CUDA_STUB_MEMORY_BYTES", &mem, &set, why, why_size);
    if (st == VT_OK)
        st = env_u64("VT_CUDA_STUB_HOST_ADDRESSABLE", &addr, &set, why, why_size);
    if (st == VT_OK)
        st = env_u64("VT_CUDA_STUB_DEVICES", &ndev, &set, why, why_size);
    uint64_t fdev = UINT64_MAX;
    if (st == VT_OK)
        st = env_u64("VT_CUDA_STUB_FAIL_ALLOC_AT", &c->faults.fail_alloc_at, &set, why, why_size);
    if (st == VT_OK)
        st = env_u64("VT_CUDA_STUB_FAIL_COPY_AT", &c->faults.fail_copy_at, &set, why, why_size);
    if (st == VT_OK)
        st = env_u64("VT_CUDA_STUB_LOSE_AT_COPY", &c->faults.lose_at_copy, &set, why, why_size);
    if (st == VT_OK)
        st = env_u64("VT_CUDA_STUB_FAIL_PROBE_AT", &c->faults.fail_probe_at, &set, why, why_size);
    if (st == VT_OK)
        st = env_u64("VT_CUDA_STUB_FAULT_DEVICE", &fdev, &set, why, why_size);
    c->faults.device = fdev == UINT64_MAX ? -1 : (int)fdev;
    if (st == VT_OK && mem > (1ull << 44))
        st = vt_why(VT_E_INVALID_ARG, why, why_size, "VT_CUDA_STUB_MEMORY_BYTES=%llu: at most 2^44 (16 TiB)",
                    (unsigned long long)mem);
    if (st == VT_OK && ndev > VT_CUDA_STUB_MAX_DEVICES)
        st = vt_why(VT_E_INVALID_ARG, why, why_size, "VT_CUDA_STUB_DEVICES=%llu: at most %d", (unsigned long long)ndev,
                    VT_CUDA_STUB_MAX_DEVICES);
    if (st != VT_OK) {
        free(c);
        return st;
    }
    c->memory_bytes = mem;
    c->host_addressable = addr != 0;
    c->n_devices = (int)ndev;
    for (int d = 0; d < c->n_devices; d++) {
        stub_device *sd = &c->dev[d];
        pthread_mutex_init(&sd->lock, NULL);
        if (!c->host_addressable)
            sd->base = handle_base(d);
    }
    *out = c;
    return VT_OK;
}

static void stub_fini(vt_backend_ctx *c)
{
    if (!c)
        return;
    for (int d = 0; d < c->n_devices; d++) {
        stub_device *sd = &c->dev[d];
        for (size_t i = 0; i < sd->n_blocks; i++)
            free(sd->blocks[i].host);
        free(sd->blocks);
        free(sd->queues); /* the core destroyed every queue and event before fini */
        free(sd->events);
        pthread_mutex_destroy(&sd->lock);
    }
    free(c);
}

static int stub_device_count(vt_backend_ctx *c, char *why, size_t why_size)
{
    if (c->n_devices == 0)
        vt_why(VT_OK, why, why_size, "VT_CUDA_STUB_DEVICES=0: the stub was configured with no devices");
    return c->n_devices;
}

static bool valid_dev(const vt_backend_ctx *c, int dev)
{
    return dev >= 0 && dev < c->n_devices;
}

static bool faults_apply(const vt_backend_ctx *c, int dev)
{
    return c->faults.device < 0 || c->faults.device == dev;
}

/* VT_E_DEVICE_LOST once the device is lost; caller holds the lock. */
static vt_status lost_status(const stub_device *sd, int dev, char *why, size_t why_size)
{
    if (!sd->lost)
        return VT_OK;
    return vt_why(VT_E_DEVICE_LOST, why, why_size, "cuda-stub:%d is lost (injected fault VT_CUDA_STUB_LOSE_AT_COPY)",
                  dev);
}

vt_status stub_copy_fault(vt_backend_ctx *c, stub_device *sd, int dev, char *why, size_t why_size)
{
    vt_status st = lost_status(sd, dev, why, why_size);
    if (st != VT_OK)
        return st;
    uint64_t n = ++sd->copy_calls;
    if (!faults_apply(c, dev))
        return VT_OK;
    if (c->faults.lose_at_copy && n == c->faults.lose_at_copy) {
        sd->lost = true;
        return lost_status(sd, dev, why, why_size);
    }
    if (c->faults.fail_copy_at && n == c->faults.fail_copy_at)
        return vt_why(VT_E_DEVICE, why, why_size, "cuda-stub:%d: injected copy failure (copy #%llu)", dev,
                      (unsigned long long)n);
    return VT_OK;
}

static vt_status stub_probe(vt_backend_ctx *c, int dev, vt_device_caps *caps, char *why, size_t why_size)
{
    if (!valid_dev(c, dev))
        return vt_why(VT_E_NOT_FOUND, why, why_size, "cuda-stub has %d devices, asked for %d", c->n_devices, dev);
    stub_device *sd = &c->dev[dev];
    pthread_mutex_lock(&sd->lock);
    uint64_t live = sd->counters.live_bytes;
    vt_status lost = lost_status(sd, dev, why, why_size);
    uint64_t n_call = ++sd->probe_calls;
    pthread_mutex_unlock(&sd->lock);
    if (lost != VT_OK)
        return lost;
    if (faults_apply(c, dev) && c->faults.fail_probe_at && n_call == c->faults.fail_probe_at)
        return vt_why(VT_E_DEVICE, why, why_size, "cuda-stub:%d: injected probe failure (probe #%llu)", dev,
                      (unsigned long long)n_call);
    caps->type = VT_DEVICE_CUDA;
    snprintf(caps->name, sizeof caps->name, "vt cuda-stub %d (test double, no GPU)", dev);
    snprintf(caps->arch, sizeof caps->arch, "stub");
    snprintf(caps->platform, sizeof caps->platform, "stub");
    caps->warp_size = 32;
    caps->compute_units = 1;
    caps->memory_total = c->memory_bytes;
    caps->memory_free = c->memory_bytes - live;
    caps->alloc_alignment = VT_CUDA_STUB_ALIGNMENT;
    caps->host_addressable = c->host_addressable;
    if (c->host_addressable)
        snprintf(caps->host_addressable_reason, sizeof caps->host_addressable_reason,
                 "VT_CUDA_STUB_HOST_ADDRESSABLE=1: stub allocations are host memory");
    else
        snprintf(caps->host_addressable_reason, sizeof caps->host_addressable_reason,
                 "stub device pointers are opaque kernel-half handles (VT_CUDA_STUB_HOST_ADDRESSABLE unset)");
    caps->needs_weight_staging = !caps->host_addressable;
    caps->sampled_token_readback = true;
    snprintf(caps->sampled_token_readback_reason, sizeof caps->sampled_token_readback_reason,
             "queues, events and async copies (contract version 2); ids land in host memory at the event");
    caps->managed_memory_supported = false;
    caps->managed_memory_enabled = false;
    /* A device the binary has no code for, as the rocm probe reports it. */
    const char *nc = getenv("VT_CUDA_STUB_NO_CODE_OBJECT");
    if (nc && *nc && strcmp(nc, "0") != 0 &&
        caps->struct_size >= offsetof(vt_device_caps, kernels_unavailable) + sizeof caps->kernels_unavailable)
        snprintf(caps->kernels_unavailable, sizeof caps->kernels_unavailable,
                 "vt_cuda_stub.so has no code object for %s (built for none: VT_CUDA_STUB_NO_CODE_OBJECT=1): "
                 "unset VT_CUDA_STUB_NO_CODE_OBJECT",
                 caps->arch);
    return VT_OK;
}

/* Index of the block containing handle p, or -1. Caller holds the lock. */
static long find_block(const vt_backend_ctx *c, const stub_device *sd, const void *p, uint64_t *offset_in_block)
{
    for (size_t i = 0; i < sd->n_blocks; i++) {
        const stub_block *b = &sd->blocks[i];
        uintptr_t start = c->host_addressable ? (uintptr_t)b->host : sd->base + b->offset;
        if ((uintptr_t)p >= start && (uintptr_t)p < start + b->size) {
            *offset_in_block = (uintptr_t)p - start;
            return (long)i;
        }
    }
    return -1;
}

static vt_status stub_alloc(vt_backend_ctx *c, int dev, uint64_t bytes, void **ptr, char *why, size_t why_size)
{
    if (!valid_dev(c, dev))
        return vt_why(VT_E_NOT_FOUND, why, why_size, "cuda-stub:%d does not exist", dev);
    stub_device *sd = &c->dev[dev];
    uint64_t size = (bytes + VT_CUDA_STUB_ALIGNMENT - 1) / VT_CUDA_STUB_ALIGNMENT * VT_CUDA_STUB_ALIGNMENT;
    if (size < bytes || size == 0)
        size = bytes ? UINT64_MAX : VT_CUDA_STUB_ALIGNMENT;
    pthread_mutex_lock(&sd->lock);
    vt_status st = lost_status(sd, dev, why, why_size);
    uint64_t free_bytes = c->memory_bytes - sd->counters.live_bytes;
    uint64_t n_call = ++sd->alloc_calls;
    if (st != VT_OK)
        goto out;
    if (faults_apply(c, dev) && c->faults.fail_alloc_at && n_call == c->faults.fail_alloc_at) {
        st = vt_why(VT_E_DEVICE_OOM, why, why_size, "cuda-stub:%d: injected allocation failure (allocation #%llu)", dev,
                    (unsigned long long)n_call);
        goto out;
    }
    /* First fit in the handle range: blocks are sorted by offset. */
    uint64_t at = 0;
    size_t pos = 0;
    if (size > free_bytes) {
        st =
            vt_why(VT_E_DEVICE_OOM, why, why_size, "cuda-stub:%d out of memory: %llu bytes asked, %llu of %llu free",
                   dev, (unsigned long long)bytes, (unsigned long long)free_bytes, (unsigned long long)c->memory_bytes);
        goto out;
    }
    for (pos = 0; pos < sd->n_blocks; pos++) {
        if (sd->blocks[pos].offset - at >= size)
            break;
        at = sd->blocks[pos].offset + sd->blocks[pos].size;
    }
    if (at > c->memory_bytes || c->memory_bytes - at < size) {
        st = vt_why(VT_E_DEVICE_OOM, why, why_size, "cuda-stub:%d out of memory: no free range of %llu bytes", dev,
                    (unsigned long long)size);
        goto out;
    }
    if (sd->n_blocks == sd->cap_blocks) {
        size_t cap = sd->cap_blocks ? sd->cap_blocks * 2 : 16;
        stub_block *nb = realloc(sd->blocks, cap * sizeof *nb);
        if (!nb) {
            st = vt_why(VT_E_NO_MEMORY, why, why_size, "out of host memory for the block table");
            goto out;
        }
        sd->blocks = nb;
        sd->cap_blocks = cap;
    }
    unsigned char *host = size <= SIZE_MAX ? aligned_alloc(VT_CUDA_STUB_ALIGNMENT, (size_t)size) : NULL;
    if (!host) {
        st = vt_why(VT_E_DEVICE_OOM, why, why_size, "cuda-stub:%d: no host memory to back %llu bytes", dev,
                    (unsigned long long)size);
        goto out;
    }
    memmove(&sd->blocks[pos + 1], &sd->blocks[pos], (sd->n_blocks - pos) * sizeof *sd->blocks);
    sd->blocks[pos] = (stub_block){at, size, host};
    sd->n_blocks++;
    sd->counters.allocs++;
    sd->counters.live_bytes += size;
    if (sd->counters.live_bytes > sd->counters.peak_bytes)
        sd->counters.peak_bytes = sd->counters.live_bytes;
    *ptr = c->host_addressable ? (void *)host : (void *)(sd->base + at);
out:
    pthread_mutex_unlock(&sd->lock);
    return st;
}

static void stub_release(vt_backend_ctx *c, int dev, void *ptr)
{
    if (!ptr || !valid_dev(c, dev))
        return;
    stub_device *sd = &c->dev[dev];
    pthread_mutex_lock(&sd->lock);
    uint64_t off;
    long i = find_block(c, sd, ptr, &off);
    if (i >= 0 && off == 0) {
        free(sd->blocks[i].host);
        sd->counters.live_bytes -= sd->blocks[i].size;
        sd->counters.frees++;
        memmove(&sd->blocks[i], &sd->blocks[i + 1], (sd->n_blocks - (size_t)i - 1) * sizeof *sd->blocks);
        sd->n_blocks--;
    }
    pthread_mutex_unlock(&sd->lock);
}

vt_status stub_resolve_range(vt_backend_ctx *c, int dev, const void *p, uint64_t bytes, unsigned char **host, char *why,
                             size_t why_size)
{
    stub_device *sd = &c->dev[dev];
    uint64_t off;
    long i = find_block(c, sd, p, &off);
    if (i < 0)
        return vt_why(VT_E_INVALID_ARG, why, why_size, "cuda-stub:%d: %p is not a live device pointer", dev, p);
    if (bytes > sd->blocks[i].size - off)
        return vt_why(VT_E_INVALID_ARG, why, why_size,
                      "cuda-stub:%d: %llu bytes at %p run past the end of their allocation", dev,
                      (unsigned long long)bytes, p);
    *host = sd->blocks[i].host + off;
    return VT_OK;
}

/* A blocking copy between host memory and the device range at dptr: from
 * the host (from_host, a write) or to it (to_host, a read), the other
 * NULL. It waits for the device (a sync) and counts one copy. */
static vt_status stub_blocking_copy(vt_backend_ctx *c, int dev, const void *dptr, void *to_host, const void *from_host,
                                    uint64_t bytes, char *why, size_t why_size)
{
    if (!valid_dev(c, dev))
        return vt_why(VT_E_NOT_FOUND, why, why_size, "cuda-stub:%d does not exist", dev);
    stub_device *sd = &c->dev[dev];
    pthread_mutex_lock(&sd->lock);
    unsigned char *host;
    vt_status st = stub_copy_fault(c, sd, dev, why, why_size);
    if (st == VT_OK)
        st = stub_resolve_range(c, dev, dptr, bytes, &host, why, why_size);
    if (st == VT_OK) {
        stub_drain_all(c, dev); /* a blocking copy waits for the device (and counts as a sync) */
        sd->counters.syncs++;
        if (from_host) {
            memcpy(host, from_host, (size_t)bytes);
            sd->counters.h2d_copies++;
            sd->counters.h2d_bytes += bytes;
        } else {
            memcpy(to_host, host, (size_t)bytes);
            sd->counters.d2h_copies++;
            sd->counters.d2h_bytes += bytes;
        }
    }
    pthread_mutex_unlock(&sd->lock);
    return st;
}

static vt_status stub_write(vt_backend_ctx *c, int dev, void *dst, const void *src, uint64_t bytes, char *why,
                            size_t why_size)
{
    return stub_blocking_copy(c, dev, dst, NULL, src, bytes, why, why_size);
}

static vt_status stub_read(vt_backend_ctx *c, int dev, void *dst, const void *src, uint64_t bytes, char *why,
                           size_t why_size)
{
    return stub_blocking_copy(c, dev, src, dst, NULL, bytes, why, why_size);
}

static vt_status stub_synchronize(vt_backend_ctx *c, int dev, char *why, size_t why_size)
{
    if (!valid_dev(c, dev))
        return vt_why(VT_E_NOT_FOUND, why, why_size, "cuda-stub:%d does not exist", dev);
    pthread_mutex_lock(&c->dev[dev].lock);
    vt_status st = lost_status(&c->dev[dev], dev, why, why_size);
    stub_drain_all(c, dev); /* errors stay in their queues' error words */
    c->dev[dev].counters.syncs++;
    pthread_mutex_unlock(&c->dev[dev].lock);
    return st;
}

static void stub_counters(vt_backend_ctx *c, int dev, vt_backend_counters *out)
{
    memset(out, 0, sizeof *out);
    if (!valid_dev(c, dev))
        return;
    stub_device *sd = &c->dev[dev];
    pthread_mutex_lock(&sd->lock);
    *out = sd->counters;
    pthread_mutex_unlock(&sd->lock);
}

/* The vtable; VT_CUDA_STUB_KERNELS=1 selects the one with native kernels. */
#define STUB_IFACE(table, n_table, accepts_fn)                                                                         \
    {                                                                                                                  \
        .abi_version = VT_PLUGIN_ABI, .struct_size = sizeof(vt_backend_iface), .name = "cuda-stub",                    \
        .description = "TEST DOUBLE: a discrete CUDA-typed device without a GPU (opaque memory, deferred queues)",     \
        .device_type = VT_DEVICE_CUDA, .kernels = table, .n_kernels = n_table, .init = stub_init, .fini = stub_fini,   \
        .device_count = stub_device_count, .probe = stub_probe, .alloc = stub_alloc, .release = stub_release,          \
        .write = stub_write, .read = stub_read, .synchronize = stub_synchronize, .counters = stub_counters,            \
        .iface_version = VT_IFACE_VERSION, .queue_create = stub_queue_create, .queue_destroy = stub_queue_destroy,     \
        .enqueue = stub_enqueue, .queue_sync = stub_queue_sync, .write_async = stub_write_async,                       \
        .read_async = stub_read_async, .copy_async = stub_copy_async, .event_create = stub_event_create,               \
        .event_destroy = stub_event_destroy, .event_record = stub_event_record,                                        \
        .queue_wait_event = stub_queue_wait_event, .event_query = stub_event_query, .event_sync = stub_event_sync,     \
        .event_elapsed_ms = stub_event_elapsed_ms, .accepts = accepts_fn,                                              \
    }

static const vt_backend_iface stub_iface = STUB_IFACE(NULL, 0, NULL);
static const vt_backend_iface stub_iface_kernels =
    STUB_IFACE(vt_cuda_stub_kernels, VT_CUDA_STUB_N_KERNELS, stub_accepts);

const vt_backend_iface *vt_plugin_entry(void)
{
    const char *k = getenv("VT_CUDA_STUB_KERNELS");
    return k && strcmp(k, "1") == 0 ? &stub_iface_kernels : &stub_iface;
}
