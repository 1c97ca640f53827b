/* cpu_simd.h - which instruction-set path the cpu backend's quant and
 * MatMul kernels take, chosen once per backend context.
 *
 * VT_CPU_SIMD=auto|scalar|avx2|avx512|neon forces a path (auto, the
 * default, takes the best this CPU and build support). Every path computes
 * the same canonical reduction (cpu_dot.h), so they agree bit for bit; the
 * switch exists to prove that and to bisect. Forcing a path the CPU or the
 * build lacks fails backend init with the reason, never silently falls
 * back. */
#ifndef VT_CPU_SIMD_H
#define VT_CPU_SIMD_H

#include <stdbool.h>
#include <stddef.h>

#include <vt/vt_status.h>

typedef enum vt_cpu_simd {
    VT_CPU_SIMD_SCALAR = 0, /* portable C with fmaf */
    VT_CPU_SIMD_AVX2 = 1,   /* x86-64 AVX2 + FMA + F16C */
    VT_CPU_SIMD_AVX512 = 2, /* x86-64 AVX-512 F/VL/BW/DQ + FMA + F16C */
    VT_CPU_SIMD_NEON = 3,   /* aarch64 Advanced SIMD */
    VT_CPU_SIMD_COUNT = 4
} vt_cpu_simd;

/* "scalar", "avx2", "avx512", "neon". */
const char *vt_cpu_simd_name(vt_cpu_simd s);

/* True when the path is compiled into this build and the CPU runs it. */
bool vt_cpu_simd_available(vt_cpu_simd s);

/* The path from $VT_CPU_SIMD (auto when unset or empty); an unknown name
 * or an unavailable path returns VT_E_INVALID_ARG / VT_E_UNSUPPORTED with
 * the reason in why. */
vt_status vt_cpu_simd_select(vt_cpu_simd *out, char *why, size_t why_size);

#endif
