/* cpu_simd.c - runtime choice of the SIMD path (VT_CPU_SIMD). */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <vt/vt_backend.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "cpu_dot.h"
#include "cpu_simd.h"

static const char *const names[VT_CPU_SIMD_COUNT] = {"scalar", "avx2", "avx512", "neon"};

const char *vt_cpu_simd_name(vt_cpu_simd s)
{
    return s < VT_CPU_SIMD_COUNT ? names[s] : "unknown";
}

#if defined(__x86_64__)
/* F16C from CPUID leaf 1 (not every compiler's __builtin_cpu_supports
 * knows it); its registers are the AVX state the avx2 check covers. */
static bool x86_f16c(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
}
#endif

bool vt_cpu_simd_available(vt_cpu_simd s)
{
    switch (s) {
    case VT_CPU_SIMD_SCALAR: return true;
#if defined(__x86_64__)
    case VT_CPU_SIMD_AVX2:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && x86_f16c();
    case VT_CPU_SIMD_AVX512:
        __builtin_cpu_init();
        return vt_cpu_simd_available(VT_CPU_SIMD_AVX2) && __builtin_cpu_supports("avx512f") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512dq");
#endif
#if defined(__aarch64__)
    case VT_CPU_SIMD_NEON: return true;
#endif
    default: return false;
    }
}

static vt_cpu_simd best(void)
{
    static const vt_cpu_simd order[] = {VT_CPU_SIMD_AVX512, VT_CPU_SIMD_AVX2, VT_CPU_SIMD_NEON};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if (vt_cpu_simd_available(order[i]))
            return order[i];
    return VT_CPU_SIMD_SCALAR;
}

/* True when the path's code is part of this build (its architecture). */
static bool compiled(vt_cpu_simd s)
{
#if defined(__x86_64__)
    return s == VT_CPU_SIMD_SCALAR || s == VT_CPU_SIMD_AVX2 || s == VT_CPU_SIMD_AVX512;
#elif defined(__aarch64__)
    return s == VT_CPU_SIMD_SCALAR || s == VT_CPU_SIMD_NEON;
#else
    return s == VT_CPU_SIMD_SCALAR;
#endif
}

vt_status vt_cpu_simd_select(vt_cpu_simd *out, char *why, size_t why_size)
{
    const char *e = getenv("VT_CPU_SIMD");
    if (!e || !*e || strcasecmp(e, "auto") == 0) {
        *out = best();
        return VT_OK;
    }
    for (int s = 0; s < VT_CPU_SIMD_COUNT; s++) {
        if (strcasecmp(e, names[s]) != 0)
            continue;
        if (!compiled((vt_cpu_simd)s))
            return vt_why(VT_E_UNSUPPORTED, why, why_size,
                          "VT_CPU_SIMD=%s: the %s path is not built for this architecture (best here: %s)", e, names[s],
                          names[best()]);
        if (!vt_cpu_simd_available((vt_cpu_simd)s))
            return vt_why(VT_E_UNSUPPORTED, why, why_size,
                          "VT_CPU_SIMD=%s: this CPU lacks the instructions of the %s path (best here: %s)", e, names[s],
                          names[best()]);
        *out = (vt_cpu_simd)s;
        return VT_OK;
    }
    return vt_why(VT_E_INVALID_ARG, why, why_size, "VT_CPU_SIMD=%s: expected auto, scalar, avx2, avx512 or neon", e);
}

const vt_cpu_isa *vt_cpu_isa_get(vt_cpu_simd s)
{
    switch (s) {
    case VT_CPU_SIMD_SCALAR: return &vt_cpu_isa_scalar;
#if defined(__x86_64__)
    case VT_CPU_SIMD_AVX2: return &vt_cpu_isa_avx2;
    case VT_CPU_SIMD_AVX512: return &vt_cpu_isa_avx512;
#endif
#if defined(__aarch64__)
    case VT_CPU_SIMD_NEON: return &vt_cpu_isa_neon;
#endif
    default: return NULL;
    }
}
