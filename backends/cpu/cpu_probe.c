/* cpu_probe.c - what the host CPU is: name, ISA features, cores, memory. */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cpu_backend.h"

/* Copy the value of the first "key<ws>: value" line of a /proc file. */
static bool proc_value(const char *file, const char *key, char *out, size_t size)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return false;
    char line[512];
    size_t klen = strlen(key);
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) != 0)
            continue;
        char *p = line + klen;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != ':')
            continue;
        p++;
        while (*p == ' ' || *p == '\t')
            p++;
        size_t len = strcspn(p, "\n");
        if (len >= size)
            len = size - 1;
        memcpy(out, p, len);
        out[len] = '\0';
        found = true;
    }
    fclose(f);
    return found;
}

static bool meminfo_bytes(const char *key, uint64_t *bytes)
{
    char v[64];
    if (!proc_value("/proc/meminfo", key, v, sizeof v))
        return false;
    char *end = NULL;
    unsigned long long kb = strtoull(v, &end, 10);
    if (end == v)
        return false;
    *bytes = (uint64_t)kb * 1024u;
    return true;
}

vt_status vt_cpu_probe(const vt_backend_ctx *ctx, vt_device_caps *caps, char *why, size_t why_size)
{
    caps->type = VT_DEVICE_CPU;
    snprintf(caps->platform, sizeof caps->platform, "host");

    struct utsname u;
    const char *machine = uname(&u) == 0 ? u.machine : "unknown";
    if (!proc_value("/proc/cpuinfo", "model name", caps->name, sizeof caps->name) &&
        !proc_value("/proc/cpuinfo", "Model", caps->name, sizeof caps->name) &&
        !proc_value("/proc/cpuinfo", "Hardware", caps->name, sizeof caps->name))
        snprintf(caps->name, sizeof caps->name, "%s processor", machine);

    uint32_t lanes = 4; /* SSE2 on x86_64, NEON on aarch64: 128-bit f32 vectors */
    char features[48] = "";
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
        lanes = 16;
        strcat(features, "+avx512f");
    }
    if (__builtin_cpu_supports("avx2")) {
        if (lanes < 8)
            lanes = 8;
        strcat(features, "+avx2");
    }
    if (__builtin_cpu_supports("fma"))
        strcat(features, "+fma");
#elif defined(__aarch64__)
    strcat(features, "+neon");
#endif
    snprintf(caps->arch, sizeof caps->arch, "%.15s%.47s", machine, features);
    caps->warp_size = lanes;

    caps->compute_units = (uint32_t)vt_cpu_online_cores();
    /* The pool's size, as chosen at init (cpu_threads.h holds the rule). */
    if (caps->struct_size >= offsetof(vt_device_caps, host_threads) + sizeof caps->host_threads)
        caps->host_threads = (uint32_t)vt_cpu_pool_size(ctx->pool);

    uint64_t total = 0, avail = 0;
    if (!meminfo_bytes("MemTotal", &total)) {
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        if (pages <= 0 || page <= 0)
            return vt_why(VT_E_DEVICE, why, why_size, "cannot read host memory size (/proc/meminfo, sysconf)");
        total = (uint64_t)pages * (uint64_t)page;
    }
    if (!meminfo_bytes("MemAvailable", &avail)) {
        long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        avail = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    }
    caps->memory_total = total;
    caps->memory_free = avail < total ? avail : total;
    caps->alloc_alignment = VT_CPU_ALIGNMENT;

    /* The device is the host: its pointers are host pointers. */
    caps->host_addressable = true;
    snprintf(caps->host_addressable_reason, sizeof caps->host_addressable_reason,
             "host memory: the device is the CPU (aligned_alloc)");
    caps->needs_weight_staging = !caps->host_addressable;
    caps->sampled_token_readback = caps->host_addressable;
    snprintf(caps->sampled_token_readback_reason, sizeof caps->sampled_token_readback_reason,
             "token ids are written to host memory and read in place");
    caps->managed_memory_supported = false;
    caps->managed_memory_enabled = false;
    return VT_OK;
}
