/* cpu_dot_avx2.c - the AVX2 path (x86-64 with AVX2, FMA and F16C): tiles
 * of 8 weight rows x 1 activation row (decode) or 4 x 2 (prefill), in the
 * sixteen 256-bit registers. Chosen at run time (cpu_simd.h); nothing else
 * in the build assumes these instructions. */
#include "config.h"

#if defined(__x86_64__)

#define VT_X86_FN           static inline __attribute__((always_inline, target("avx2,fma,f16c")))
#define X86_DP16(acc, a, b) _mm256_add_epi32((acc), _mm256_madd_epi16((a), (b)))
#include "cpu_tile_x86.h"
#include "cpu_qtile_x86.h"

#define AVX2_FN __attribute__((target("avx2,fma,f16c"))) static

/* Tile and decode functions of one weight type. */
#define AVX2_DOT(name, tile, wtype)                                                                                    \
    AVX2_FN void dot_##name(vt_cpu_tile *t)                                                                            \
    {                                                                                                                  \
        X86_TILE_DISPATCH(tile, t, wtype, 8, 4, 0);                                                                    \
    }
#define AVX2_Q(wtype, name)                                                                                            \
    AVX2_DOT(name, x86_tile_q, wtype)                                                                                  \
    AVX2_FN void decode_##name(uint32_t bb, uint32_t g, const uint8_t *src, int64_t nb, void *dst, uint32_t dt)        \
    {                                                                                                                  \
        x86_decode_blocks(wtype, bb, g, src, nb, dst, dt);                                                             \
    }

AVX2_DOT(f32, x86_tile_dense, VT_F32)
AVX2_DOT(f16, x86_tile_dense, VT_F16)
AVX2_DOT(bf16, x86_tile_dense, VT_BF16)
VT_Q_FORMATS(AVX2_Q)

AVX2_FN void qdot_all(vt_cpu_tile *t)
{
    switch (t->wtype) {
#define CASE(id, name)                                                                                                 \
    case id: X86_TILE_DISPATCH(x86_qtile, t, id, 8, 4, 0); break;
        VT_Q_FORMATS(CASE)
#undef CASE
    default: break;
    }
}

AVX2_FN void quantize_all(const float *x, int64_t k, int16_t *q, float *dx)
{
    x86_qx_quantize(x, k, q, dx);
}

AVX2_FN void convert_all(uint32_t st, const void *src, int64_t n, void *dst, uint32_t dt)
{
    x86_convert(st, src, n, dst, dt);
}

static void avx2_dot(vt_cpu_tile *t)
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

static void avx2_decode(uint32_t wtype, uint32_t bb, uint32_t groups, const uint8_t *src, int64_t nblocks, void *dst,
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

const vt_cpu_isa vt_cpu_isa_avx2 = {
    .id = VT_CPU_SIMD_AVX2,
    .tile_w = {0, 8, 4},
    .tile_x = 2,
    .dot = avx2_dot,
    .qdot = qdot_all,
    .quantize = quantize_all,
    .decode = avx2_decode,
    .convert = convert_all,
};

#endif
