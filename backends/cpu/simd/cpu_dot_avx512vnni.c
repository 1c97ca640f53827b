/* cpu_dot_avx512vnni.c - the AVX-512 path's quantized-activation tiles
 * (cpu_qx.h) with vpdpwssd (AVX512-VNNI on 256-bit vectors): the int16
 * products of a pair summed into the 32-bit lane in one instruction. The
 * sums are exact integers, the same as vpmaddwd + vpaddd, so the results
 * are the AVX-512 path's bits; cpu_dot_avx512.c calls this only on a CPU
 * that has the instructions. */
#include "config.h"

#if defined(__x86_64__)

#define VNNI_TARGET         "avx512f,avx512vl,avx512bw,avx512dq,avx512vnni,avx2,fma,f16c"
#define VT_X86_FN           static inline __attribute__((always_inline, target(VNNI_TARGET)))
#define X86_DP16(acc, a, b) _mm256_dpwssd_epi32((acc), (a), (b))
#include "cpu_tile_x86.h"
#include "cpu_qtile_x86.h"

__attribute__((target(VNNI_TARGET))) void vt_cpu_qdot_avx512vnni(vt_cpu_tile *t)
{
    switch (t->wtype) {
#define CASE(id, f)                                                                                                    \
    case id: X86_TILE_DISPATCH(x86_qtile, t, id, 8, 8, 4); break;
        VT_Q_FORMATS(CASE)
#undef CASE
    default: break;
    }
}

#endif
