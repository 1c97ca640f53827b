/* example_plugin.c - the smallest complete vt backend, written to be read.
 *
 * This file is documentation that compiles (in the spirit of SQLite's
 * test_demovfs.c): a backend named "example" with one device whose memory
 * is ordinary host memory and one kernel, Add on f32. Copy this folder to
 * start a new backend; README "Contributing" says which files to touch.
 *
 * What a backend is (core/vt/vt_backend.h has the full contract):
 *   - a libtool module vt_<name>.so (here vt_example.so; a '-' in the name
 *     becomes '_' in the file name) built by its own Makefile.am, which
 *     includes backends/plugin.am for the flags every module shares;
 *   - detected by its own configure.m4 (here: nothing to detect);
 *   - exporting exactly two symbols: the data word vt_plugin_abi, which the
 *     core reads from the file before it runs any code of it, and the
 *     function vt_plugin_entry, which returns the vtable below.
 *
 * What the core does for a backend, so this file does not have to:
 *   - it checks every op call against the catalogue (operand count, dtypes,
 *     shapes, params size) before a kernel runs: a kernel receives only
 *     calls its table row matches;
 *   - it refuses by name an op the table has no row for ("Mul (3) on
 *     example:0: no native kernel for (f32) ..."), or runs it on the
 *     portable CPU tier when the device is host-addressable and the
 *     registry's tier policy allows it;
 *   - without queue functions in the vtable (as here) it runs each kernel
 *     on the caller's thread and gives the device a synchronous queue.
 *
 * Build (in the tree): configure and make build it as
 * backends/example/.libs/vt_example.so; it is not installed and the build
 * tree's libvt does not search it: tests/test_example.c loads it by path.
 * Out of the tree, against an installed vt: Makefile.out-of-tree here. */
#ifdef HAVE_CONFIG_H /* in the tree: configure's results (-DHAVE_CONFIG_H) */
#include "config.h"
#endif

#include <pthread.h> /* the counters are shared by every thread that calls us */
#include <stdint.h>
#include <stdio.h>  /* snprintf, for the caps strings */
#include <stdlib.h> /* aligned_alloc, free, calloc */
#include <string.h> /* memcpy */
#include <unistd.h> /* sysconf, to probe the memory we allocate from */

#include <vt/vt_backend.h> /* the contract: vtable, kernel rows, vt_why */

/* The ABI word. The core reads it from the ELF file and refuses the plugin
 * ("ABI <found>, core wants <n>") before calling anything when it differs;
 * it must be a global const uint32_t initialised to VT_PLUGIN_ABI. */
const uint32_t vt_plugin_abi = VT_PLUGIN_ABI;

/* The entry point, declared here because no header of ours declares it. */
const vt_backend_iface *vt_plugin_entry(void);

/* Every allocation is padded to this, and caps say so (alloc_alignment). */
#define EXAMPLE_ALIGNMENT 64u

/* The backend's private state: the core only ever holds a pointer to it.
 * One device; its counters are updated under a lock because the core may
 * call alloc, release, write and read from several threads at once. */
struct vt_backend_ctx {
    pthread_mutex_t lock;         /* guards counters */
    vt_backend_counters counters; /* allocation and copy traffic (vtctl stats) */
};

/* ---- the kernel ------------------------------------------------------- */

/* Add (op 2): y = a + b, b broadcast over a's leading dims (the catalogue,
 * `vtctl ops Add`). The core has already checked that in[0], in[1] and
 * out[0] are f32, that b's shape is a suffix of a's and y's shape is a's,
 * and (for a backend without queues) folded every byte offset into data,
 * so the kernel only computes. why is for data-dependent refusals, which
 * Add has none of. */
static vt_status example_add(vt_backend_ctx *ctx, int dev, const vt_op_args *args, char *why, size_t why_size)
{
    (void)ctx;                         /* Add needs no state */
    (void)dev;                         /* nor the device index: there is one device */
    (void)why;                         /* nothing can go wrong once the core checked shapes */
    (void)why_size;                    /* (a kernel that can refuse writes only what went wrong) */
    const float *a = args->in[0].data; /* device pointers: host memory here */
    const float *b = args->in[1].data;
    float *y = args->out[0].data;
    uint64_t n = args->in[0].nbytes / sizeof(float);  /* elements of a (and y) */
    uint64_t nb = args->in[1].nbytes / sizeof(float); /* elements of b: a's innermost dims */
    if (nb == 0)                                      /* an empty b broadcasts over an empty a */
        return VT_OK;
    for (uint64_t i = 0; i < n; i += nb)  /* each leading index of a ... */
        for (uint64_t j = 0; j < nb; j++) /* ... adds the whole of b */
            y[i + j] = a[i + j] + b[j];
    return VT_OK;
}

/* The kernel table: one row per (op, signature) this backend runs. It is
 * static and read before init (vtctl ops, resolution plans without a
 * device). Every row must be a signature of the catalogue (the loader
 * refuses the plugin otherwise, naming the row). Add's signature is the
 * dtype of its operands: VT_SIG1(VT_F32). */
static const vt_kernel example_kernels[] = {
    {VT_OP_ADD, VT_SIG1(VT_F32), example_add},
};

/* ---- life cycle ------------------------------------------------------- */

/* init: called once after the core opened the file and vetted the vtable.
 * A real backend opens its runtime here; failing (with why) makes the
 * core skip the plugin and list it with that reason. */
static vt_status example_init(vt_backend_ctx **out, char *why, size_t why_size)
{
    vt_backend_ctx *c = calloc(1, sizeof *c); /* zeroed counters */
    if (!c)
        return vt_why(VT_E_NO_MEMORY, why, why_size, "out of host memory");
    pthread_mutex_init(&c->lock, NULL);
    *out = c;
    return VT_OK;
}

/* fini: releases what init created; the core passes NULL when init failed. */
static void example_fini(vt_backend_ctx *c)
{
    if (!c)
        return;
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* device_count: how many devices; 0 is not an error (say why instead). */
static int example_device_count(vt_backend_ctx *c, char *why, size_t why_size)
{
    (void)c;
    (void)why; /* with 0 devices, why would carry the runtime's answer */
    (void)why_size;
    return 1;
}

/* ---- capabilities ----------------------------------------------------- */

/* Whether the host reads and writes this device's memory in place: take
 * one block the way alloc does, store a pattern through a host pointer and
 * read it back. (A GPU backend asks its runtime instead, e.g. HIP's
 * PageableMemoryAccess; the point is the same: an answer found out, not
 * assumed.) */
static bool host_reads_device_memory(char *reason, size_t reason_size)
{
    volatile unsigned char *p = aligned_alloc(EXAMPLE_ALIGNMENT, EXAMPLE_ALIGNMENT);
    if (!p) {
        snprintf(reason, reason_size, "a probe block of %u bytes could not be allocated", EXAMPLE_ALIGNMENT);
        return false;
    }
    bool same = true;
    for (unsigned i = 0; i < EXAMPLE_ALIGNMENT; i++)
        p[i] = (unsigned char)(0xA5 ^ i);
    for (unsigned i = 0; i < EXAMPLE_ALIGNMENT; i++)
        same &= p[i] == (unsigned char)(0xA5 ^ i);
    free((void *)p);
    snprintf(reason, reason_size,
             same ? "a block of its memory (aligned_alloc) read back through a host pointer"
                  : "a block of its memory did not read back through a host pointer");
    return same;
}

/* probe: fill the device's capabilities NOW (every field a probe result,
 * never a cached constant: vt_caps.h). The core zeroed caps and set
 * struct_size; it derives keep_quant from the kernel table itself. */
static vt_status example_probe(vt_backend_ctx *c, int dev, vt_device_caps *caps, char *why, size_t why_size)
{
    (void)c;
    (void)dev;
    long pages = sysconf(_SC_PHYS_PAGES), avail = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) /* a probe that cannot answer fails, by name */
        return vt_why(VT_E_DEVICE, why, why_size, "sysconf cannot tell the host memory size");
    caps->type = VT_DEVICE_CPU; /* must equal the vtable's device_type */
    snprintf(caps->name, sizeof caps->name, "example device (host memory)");
    snprintf(caps->arch, sizeof caps->arch, "example");
    snprintf(caps->platform, sizeof caps->platform, "host");
    caps->warp_size = 4;     /* f32 lanes of a 128-bit vector (SSE2, NEON): what Add's loop is vectorised for */
    caps->compute_units = 1; /* kernels run on the caller's thread */
    caps->memory_total = (uint64_t)pages * (uint64_t)page;
    caps->memory_free = avail > 0 ? (uint64_t)avail * (uint64_t)page : 0;
    caps->alloc_alignment = EXAMPLE_ALIGNMENT;
    /* Our "device memory" is malloc'd host memory, so the host may read it
     * in place: the core may then use the portable CPU tier on it, and
     * weights need no staging copy. The core rejects a device whose
     * staging claim contradicts its addressability. */
    caps->host_addressable =
        host_reads_device_memory(caps->host_addressable_reason, sizeof caps->host_addressable_reason);
    caps->needs_weight_staging = !caps->host_addressable; /* what the host cannot read must be copied over */
    caps->sampled_token_readback = false;                 /* no asynchronous readback path */
    snprintf(caps->sampled_token_readback_reason, sizeof caps->sampled_token_readback_reason,
             "the example backend has no queues");
    return VT_OK;
}

/* ---- memory ----------------------------------------------------------- */

/* Each allocation starts with one alignment block that records its size
 * (release needs it for live_bytes); the caller gets the address after it. */
#define EXAMPLE_HEADER EXAMPLE_ALIGNMENT

/* alloc: bytes of device memory, padded to the alignment probe reports. */
static vt_status example_alloc(vt_backend_ctx *c, int dev, uint64_t bytes, void **ptr, char *why, size_t why_size)
{
    (void)dev;
    if (bytes > SIZE_MAX - 2 * EXAMPLE_ALIGNMENT) /* the padding below would wrap */
        return vt_why(VT_E_NO_MEMORY, why, why_size, "%llu bytes cannot be allocated", (unsigned long long)bytes);
    size_t padded = ((size_t)bytes + EXAMPLE_ALIGNMENT - 1) / EXAMPLE_ALIGNMENT * EXAMPLE_ALIGNMENT;
    char *block = aligned_alloc(EXAMPLE_ALIGNMENT, EXAMPLE_HEADER + padded); /* never size 0 */
    if (!block)
        return vt_why(VT_E_NO_MEMORY, why, why_size, "out of host memory for %llu bytes", (unsigned long long)bytes);
    memcpy(block, &padded, sizeof padded); /* the size, for release */
    pthread_mutex_lock(&c->lock);
    c->counters.allocs++;
    c->counters.live_bytes += padded;
    if (c->counters.live_bytes > c->counters.peak_bytes)
        c->counters.peak_bytes = c->counters.live_bytes;
    pthread_mutex_unlock(&c->lock);
    *ptr = block + EXAMPLE_HEADER; /* still EXAMPLE_ALIGNMENT-aligned */
    return VT_OK;
}

/* release: frees what alloc returned. */
static void example_release(vt_backend_ctx *c, int dev, void *ptr)
{
    (void)dev;
    if (!ptr) /* NULL is ignored, as free() does */
        return;
    char *block = (char *)ptr - EXAMPLE_HEADER;
    size_t padded;
    memcpy(&padded, block, sizeof padded);
    free(block);
    pthread_mutex_lock(&c->lock);
    c->counters.frees++;
    c->counters.live_bytes -= padded;
    pthread_mutex_unlock(&c->lock);
}

/* write: host -> device, blocking (done when it returns). */
static vt_status example_write(vt_backend_ctx *c, int dev, void *dst, const void *src, uint64_t bytes, char *why,
                               size_t why_size)
{
    (void)dev;
    (void)why; /* memcpy cannot fail; a DMA engine could, and would say so */
    (void)why_size;
    memcpy(dst, src, (size_t)bytes);
    pthread_mutex_lock(&c->lock);
    c->counters.h2d_copies++;
    c->counters.h2d_bytes += bytes;
    pthread_mutex_unlock(&c->lock);
    return VT_OK;
}

/* read: device -> host, blocking. */
static vt_status example_read(vt_backend_ctx *c, int dev, void *dst, const void *src, uint64_t bytes, char *why,
                              size_t why_size)
{
    (void)dev;
    (void)why;
    (void)why_size;
    memcpy(dst, src, (size_t)bytes);
    pthread_mutex_lock(&c->lock);
    c->counters.d2h_copies++;
    c->counters.d2h_bytes += bytes;
    pthread_mutex_unlock(&c->lock);
    return VT_OK;
}

/* synchronize: wait for all work of the device. Ours finishes before each
 * kernel returns, so there is never anything to wait for. */
static vt_status example_synchronize(vt_backend_ctx *c, int dev, char *why, size_t why_size)
{
    (void)c;
    (void)dev;
    (void)why;
    (void)why_size;
    return VT_OK;
}

/* counters: a snapshot for vt_device_stats_get (vtctl stats). */
static void example_counters(vt_backend_ctx *c, int dev, vt_backend_counters *out)
{
    (void)dev;
    pthread_mutex_lock(&c->lock);
    *out = c->counters;
    pthread_mutex_unlock(&c->lock);
}

/* ---- the vtable ------------------------------------------------------- */

/* Every member not named is NULL: no pinned host memory, no queues, no
 * events, no graphs, no shape predicate. The core supplies the defaults
 * (vt_backend.h: "a plugin without queues gets a synchronous default
 * queue ..."). struct_size and iface_version say which header we were
 * built with, so an older or newer core knows how far to read. */
static const vt_backend_iface example_iface = {
    .abi_version = VT_PLUGIN_ABI,            /* checked again against the word above */
    .struct_size = sizeof(vt_backend_iface), /* how much of the struct we have */
    .name = "example",                       /* must match the file: vt_example.so */
    .description = "minimal example backend: one host-memory device, Add on f32",
    .device_type = VT_DEVICE_CPU, /* every device's caps->type */
    .kernels = example_kernels,
    .n_kernels = sizeof example_kernels / sizeof example_kernels[0],
    .init = example_init,
    .fini = example_fini,
    .device_count = example_device_count,
    .probe = example_probe,
    .alloc = example_alloc,
    .release = example_release,
    .write = example_write,
    .read = example_read,
    .synchronize = example_synchronize,
    .counters = example_counters,
    .iface_version = VT_IFACE_VERSION, /* version-2 header, no version-2 member set */
};

/* The entry: called once, after the ABI word matched; returns static data. */
const vt_backend_iface *vt_plugin_entry(void)
{
    return &example_iface;
}
