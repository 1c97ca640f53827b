/* cpu_dot_avx512.c - the AVX-512 path (x86-64 with AVX-512 F/VL/BW/DQ,
 * FMA and F16C). The canonical reduction has eight lanes (cpu_dot.h), so
 * each accumulator stays an 8-lane vector; what AVX-512 adds is its 32
 * vector registers (EVEX encodings), which hold larger tiles: 8 weight
 * rows x 1 or 2 activation rows, 4 x 4. The decoders and tile templates
 * are the AVX2 path's, compiled for this target, so the arithmetic per
 * lane is the same instruction sequence. Chosen at run time. */
#include "config.h"

#if defined(__x86_64__)

#define AVX512_TARGET       "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,f16c"
#define VT_X86_FN           static inline __attribute__((always_inline, target(AVX512_TARGET)))
#define X86_DP16(acc, a, b) _mm256_add_epi32((acc), _mm256_madd_epi16((a), (b)))
#include "cpu_tile_x86.h"
#include "cpu_qtile_x86.h"

#define AVX512_FN __attribute__((target(AVX512_TARGET))) static

/* Tile and decode functions of one weight type. */
#define AVX512_DOT(name, tile, wtype)                                                                                  \
    AVX512_FN void dot_##name(vt_cpu_tile *t)                                                                          \
    {                                                                                                                  \
        X86_TILE_DISPATCH(tile, t, wtype, 8, 8, 4);                                                                    \
    }
#define AVX512_Q(wtype, name)                                                                                          \
    AVX512_DOT(name, x86_tile_q, wtype)                                                                                \
    AVX512_FN void decode_##name(uint32_t bb, uint32_t g, const uint8_t *src, int64_t nb, void *dst, uint32_t dt)      \
    {                                                                                                                  \
        x86_decode_blocks(wtype, bb, g, src, nb, dst, dt);                                                             \
    }

AVX512_DOT(f32, x86_tile_dense, VT_F32)
AVX512_DOT(f16, x86_tile_dense, VT_F16)
AVX512_DOT(bf16, x86_tile_dense, VT_BF16)
VT_Q_FORMATS(AVX512_Q)

/* Quantized-activation tiles with vpmaddwd, for CPUs without VNNI. */
AVX512_FN void qdot_madd(vt_cpu_tile *t)
{
    switch (t->wtype) {
#define CASE(id, name)                                                                                                 \
    case id: X86_TILE_DISPATCH(x86_qtile, t, id, 8, 8, 4); break;
        VT_Q_FORMATS(CASE)
#undef CASE
    default: break;
    }
}

/* vpdpwssd where the CPU has AVX512-VNNI (the same integers, so the same
 * bits), vpmaddwd + vpaddd otherwise. */
static void qdot_all(vt_cpu_tile *t)
{
    static int vnni = -1;
    if (vnni < 0) {
        __builtin_cpu_init();
        vnni = __builtin_cpu_supports("avx512vnni") ? 1 : 0;
    }
    if (vnni)
        vt_cpu_qdot_avx512vnni(t);
    else
        qdot_madd(t);
}

AVX512_FN void quantize_all(const float *x, int64_t k, int16_t *q, float *dx)
{
    x86_qx_quantize(x, k, q, dx);
}

AVX512_FN void convert_all(uint32_t st, const void *src, int64_t n, void *dst, uint32_t dt)
{
    x86_convert(st, src, n, dst, dt);
}

static void avx512_dot(vt_cpu_tile *t)
{
    switch (t->wtype) {
    case VT_F32: dot_f32(t); break;
    case VT_F16: dot_f16(t); break;
    case VT_BF16: dot_bf16(t); break;
#define CASE(id, name)                                                                                                 \
    case id: dot_##name(t); break;
        VT_Q_FORMATS(CASE)
#undef CASE
    default: break;
    }
}

static void avx512_decode(uint32_t wtype, uint32_t bb, uint32_t groups, const uint8_t *src, int64_t nblocks, void *dst,
                          uint32_t dst_type)
{
    switch (wtype) {
#define CASE(id, name)                                                                                                 \
    case id: decode_##name(bb, groups, src, nblocks, dst, dst_type); break;
        VT_Q_FORMATS(CASE)
#undef CASE
    default: break;
    }
}

const vt_cpu_isa vt_cpu_isa_avx512 = {
    .id = VT_CPU_SIMD_AVX512,
    .tile_w = {0, 8, 8, 4, 4},
    .tile_x = 4,
    .dot = avx512_dot,
    .qdot = qdot_all,
    .quantize = quantize_all,
    .decode = avx512_decode,
    .convert = convert_all,
};

#endif
