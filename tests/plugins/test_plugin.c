/* test_plugin.c - deliberately broken (or deliberately lying) plugins for
 * the registry tests. One source, built several times with:
 *   TEST_NAME          backend name the vtable claims ("test-badabi")
 *   TEST_ABI           value of the vt_plugin_abi word (default VT_PLUGIN_ABI)
 *   TEST_NO_ABI        do not export vt_plugin_abi
 *   TEST_NO_ENTRY      do not export vt_plugin_entry
 *   TEST_INIT_FAILS    init returns VT_E_DEVICE with a reason
 *   TEST_ZERO_DEVICES  init succeeds with zero devices
 *   TEST_LIAR          one device, not host-addressable, claiming
 *                      needs_weight_staging = false
 *   TEST_INIT_CRASHES  init dies with SIGSEGV (isolation must contain it)
 *   TEST_INIT_HANGS    init never returns (isolation must time out)
 *   TEST_V2_HALF       contract version 2 with queue_create but not the rest
 *                      of the queue set (the loader must refuse it by name)
 *   TEST_QUANT_KERNELS a discrete 64 GiB planning double whose kernel table
 *                      consumes q4_0 for matmul, gather and moe-expert (so
 *                      keep-quant is admitted); the kernels refuse to run and
 *                      nothing can be allocated
 *   TEST_NO_CODE_OBJECT the probe reports kernels_unavailable (a GPU arch the
 *                      binary has no code object for); with TEST_QUANT_KERNELS
 *                      the table is non-empty, so the core must hide it
 *   TEST_ABI_BYTE      vt_plugin_abi is a 1-byte object, not the 4-byte word
 *   TEST_ABI_FUNC      vt_plugin_abi is a function, not data
 *   TEST_UNDEFINED_DATA the plugin reads a data symbol no object defines, so
 *                      the dynamic linker refuses it (not "file not found")
 * vt_plugin_entry sets VT_TEST_ENTRY_CALLED_<name>=1 in the environment so a
 * test can prove the core never called it (ABI mismatch). Every build has a
 * constructor that, when VT_TEST_CTOR_DIR is set, creates the file
 * $VT_TEST_CTOR_DIR/<name>: a file survives an isolated probe process, so a
 * test proves no code of a refused plugin ran at all, in any process. */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include <vt/vt_backend.h>

#ifndef TEST_ABI
#define TEST_ABI VT_PLUGIN_ABI
#endif

#include <fcntl.h>

#if defined(TEST_ABI_BYTE)
/* The asm label gives the symbol the ABI word's name with another type. */
const uint8_t vt_test_abi_byte __asm__(VT_PLUGIN_ABI_SYMBOL);
const uint8_t vt_test_abi_byte = 1;
#elif defined(TEST_ABI_FUNC)
uint32_t vt_test_abi_func(void) __asm__(VT_PLUGIN_ABI_SYMBOL);
uint32_t vt_test_abi_func(void)
{
    return VT_PLUGIN_ABI;
}
#elif !defined(TEST_NO_ABI)
const uint32_t vt_plugin_abi = TEST_ABI;
#endif

#ifdef TEST_UNDEFINED_DATA
extern int vt_test_no_such_data; /* defined nowhere: the dynamic linker refuses the plugin */
int *vt_test_undefined_ref(void);
int *vt_test_undefined_ref(void)
{
    return &vt_test_no_such_data;
}
#endif

/* Runs at dlopen, before any check of the core could: leaves a marker. */
__attribute__((constructor)) static void t_constructor(void)
{
    const char *dir = getenv("VT_TEST_CTOR_DIR");
    if (!dir)
        return;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, TEST_NAME);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd >= 0) {
        if (write(fd, "x", 1) != 1)
            (void)0; /* the file's existence is the marker */
        close(fd);
    }
}

struct vt_backend_ctx {
    int dummy;
};

static vt_status t_init(vt_backend_ctx **ctx, char *why, size_t why_size)
{
#ifdef TEST_INIT_CRASHES
    raise(SIGSEGV);
#endif
#ifdef TEST_INIT_HANGS
    for (;;)
        pause();
#endif
#ifdef TEST_INIT_FAILS
    (void)ctx;
    return vt_why(VT_E_DEVICE, why, why_size, "test plugin init fails on purpose");
#else
    static vt_backend_ctx the_ctx;
    (void)why;
    (void)why_size;
    *ctx = &the_ctx;
    return VT_OK;
#endif
}

static void t_fini(vt_backend_ctx *ctx)
{
    (void)ctx;
}

static int t_count(vt_backend_ctx *ctx, char *why, size_t why_size)
{
    (void)ctx;
#ifdef TEST_ZERO_DEVICES
    vt_why(VT_OK, why, why_size, "test plugin has no devices on purpose");
    return 0;
#else
    (void)why;
    (void)why_size;
    return 1;
#endif
}

static vt_status t_probe(vt_backend_ctx *ctx, int dev, vt_device_caps *c, char *why, size_t why_size)
{
    (void)ctx;
    (void)dev;
    (void)why;
    (void)why_size;
    c->type = VT_DEVICE_VULKAN;
    snprintf(c->name, sizeof c->name, "test device");
    snprintf(c->arch, sizeof c->arch, "test");
    snprintf(c->platform, sizeof c->platform, "stub");
    c->warp_size = 32;
    c->compute_units = 1;
#ifdef TEST_QUANT_KERNELS
    c->memory_total = 64ull << 30;
#else
    c->memory_total = 1u << 20;
#endif
    c->memory_free = c->memory_total;
    c->alloc_alignment = 64;
    c->host_addressable = false;
    snprintf(c->host_addressable_reason, sizeof c->host_addressable_reason, "test device memory is opaque");
#ifdef TEST_LIAR
    c->needs_weight_staging = c->host_addressable; /* the lie under test */
#else
    c->needs_weight_staging = !c->host_addressable;
#endif
#ifdef TEST_NO_CODE_OBJECT
    snprintf(c->kernels_unavailable, sizeof c->kernels_unavailable,
             "vt_test_nocode.so has no code object for test (built for gfx90a,gfx1030): reconfigure with "
             "--with-hip-arch=test");
#endif
    return VT_OK;
}

static vt_status t_alloc(vt_backend_ctx *ctx, int dev, uint64_t bytes, void **p, char *why, size_t why_size)
{
    (void)ctx;
    (void)dev;
    (void)bytes;
    (void)p;
    return vt_why(VT_E_DEVICE_OOM, why, why_size, "test device allocates nothing");
}

static void t_release(vt_backend_ctx *ctx, int dev, void *p)
{
    (void)ctx;
    (void)dev;
    (void)p;
}

static vt_status t_copy(vt_backend_ctx *ctx, int dev, void *dst, const void *src, uint64_t bytes, char *why,
                        size_t why_size)
{
    (void)ctx;
    (void)dev;
    (void)dst;
    (void)src;
    (void)bytes;
    return vt_why(VT_E_DEVICE, why, why_size, "test device copies nothing");
}

static vt_status t_sync(vt_backend_ctx *ctx, int dev, char *why, size_t why_size)
{
    (void)ctx;
    (void)dev;
    (void)why;
    (void)why_size;
    return VT_OK;
}

static void t_counters(vt_backend_ctx *ctx, int dev, vt_backend_counters *out)
{
    (void)ctx;
    (void)dev;
    memset(out, 0, sizeof *out);
}

#ifdef TEST_QUANT_KERNELS
static vt_status t_no_compute(vt_backend_ctx *ctx, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    (void)ctx;
    (void)dev;
    (void)a;
    return vt_why(VT_E_UNSUPPORTED, why, why_size, "planning double: no compute");
}

static const vt_kernel t_kernels[] = {
    {VT_OP_MATMUL, {2, {VT_F32, VT_Q4_0}}, t_no_compute},
    {VT_OP_GET_ROWS, {3, {VT_Q4_0, VT_I32, VT_F32}}, t_no_compute},
    {VT_OP_MOE_EXPERT_MATMUL, {2, {VT_F32, VT_Q4_0}}, t_no_compute},
};
#define T_KERNELS t_kernels, 3
#else
#define T_KERNELS NULL, 0
#endif

#ifdef TEST_V2_HALF
static vt_status t_queue_create(vt_backend_ctx *ctx, int dev, vt_backend_queue **q, char *why, size_t why_size)
{
    (void)ctx, (void)dev, (void)q;
    return vt_why(VT_E_UNSUPPORTED, why, why_size, "half a queue set");
}
#endif

static const vt_backend_iface iface = {
    .abi_version = VT_PLUGIN_ABI,
    .struct_size = sizeof(vt_backend_iface),
    .name = TEST_NAME,
    .description = "registry test plugin",
    .device_type = VT_DEVICE_VULKAN,
    .kernels = T_KERNELS,
    .init = t_init,
    .fini = t_fini,
    .device_count = t_count,
    .probe = t_probe,
    .alloc = t_alloc,
    .release = t_release,
    .write = t_copy,
    .read = t_copy,
    .synchronize = t_sync,
    .counters = t_counters,
#ifdef TEST_V2_HALF
    .iface_version = VT_IFACE_VERSION,
    .queue_create = t_queue_create,
#endif
};

#ifndef TEST_NO_ENTRY
#define TEST_ENTRY vt_plugin_entry
#else
#define TEST_ENTRY vt_test_misnamed_entry /* exported, but not under the entry name */
#endif
const vt_backend_iface *TEST_ENTRY(void);
const vt_backend_iface *TEST_ENTRY(void)
{
    setenv("VT_TEST_ENTRY_CALLED_" TEST_NAME, "1", 1);
    return &iface;
}
