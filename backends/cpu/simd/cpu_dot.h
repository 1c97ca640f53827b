/* cpu_dot.h - the canonical dot products of the cpu backend's MatMul and
 * MoeExpertMatMul, and the per-SIMD-path kernel sets that compute them.
 *
 * THE CANONICAL REDUCTIONS. (Block-format weights with k >= 1024 take the
 * int16-activation reduction of cpu_qx.h instead; these are the others.)
 * An output y = sum_j w[j] * x[j] over j in
 * [0, k) (w a weight row, x an f32 activation row, not quantized) keeps
 * eight f32 lane sums s[0..7], all starting at +0.0f, every update one
 * fused multiply-add (fmaf: one rounding), and ends with the fixed tree
 *     y = ((s0 + s4) + (s2 + s6)) + ((s1 + s5) + (s3 + s7)).
 *
 * Dense weights (f32, f16, bf16; w[j] widened exactly):
 *     for j = 0, 1, ..., k-1 in order:  s[j%8] = fmaf(w[j], x[j], s[j%8]).
 *
 * Block formats, in the group form of cpu_quant.h (codes c, per-run factor
 * a, offset o or minimum m): for each 32-element group in order, for each
 * run in order (1 run of 32 or 2 runs of 16 elements, positions p of the
 * group), for each lane l, over the run's positions p = l, l+8, ... :
 *     X = x[first p] + x[next p] + ...            (plain adds, in order)
 *     P = c[first p] * x[first p]                  (SCALE, MIN)
 *       = fmaf(c[first p], x[first p], -o * X)      (OFFSET; -o*X is exact)
 *     P = fmaf(c[p], x[p], P)                      for the following p
 *     s[l] = fmaf(a, P, s[l]);  MIN also: s[l] = fmaf(m, X, s[l]).
 * So the group's factor is applied once per run instead of once per
 * element: about a third fewer multiply-adds on the FMA ports than
 * dequantize-then-dot, the port the decode MatMul is bound on.
 *
 * The scalar path writes exactly this; each SIMD path keeps the eight lanes
 * in one 8-wide vector (AVX2, and AVX-512 with VL encodings) or two 4-wide
 * ones (NEON) and performs the same operations in the same order, so every
 * path, tile shape and thread count gives the same bits (for finite inputs;
 * NaN payloads may differ). Accuracy: for k = 14336 the relative error
 * against an exact sum is ~1e-6 on random data (SPEC 7 allows 1e-4).
 *
 * A tile is the unit a path computes: up to VT_CPU_TILE_W weight rows
 * against up to VT_CPU_TILE_X activation rows, each output by the
 * canonical reduction. The engine (cpu_mm.h) cuts a problem into tiles. */
#ifndef VT_CPU_DOT_H
#define VT_CPU_DOT_H

#include <stdint.h>

#include "cpu_simd.h"

#define VT_CPU_LANES  8 /* lane sums of the canonical reduction */
#define VT_CPU_TILE_W 8 /* most weight rows in one tile */
#define VT_CPU_TILE_X 4 /* most activation rows in one tile */

/* One tile: out[r][i] = dot(weight row i, activation row r). Rows that a
 * path pads a tile with (when nw or nx is below its tile shape) repeat the
 * last real row and are discarded. */
typedef struct vt_cpu_tile {
    uint32_t wtype;       /* vt_dtype of the weight rows: f32/f16/bf16 or q */
    uint32_t block_bytes; /* bytes per block of wtype (vt_dtype_get) */
    uint32_t groups;      /* 32-element groups per block (q only) */
    int nw, nx;           /* rows used */
    int64_t k;            /* elements per row (a multiple of the block for q) */
    const uint8_t *w[VT_CPU_TILE_W];
    const float *x[VT_CPU_TILE_X];
    const int16_t *xq[VT_CPU_TILE_X]; /* the x rows quantized (cpu_qx.h), for qdot */
    const float *xd[VT_CPU_TILE_X];   /* their block scales */
    float out[VT_CPU_TILE_X][VT_CPU_TILE_W];
} vt_cpu_tile;

/* Compute one tile. */
typedef void (*vt_cpu_dot_fn)(vt_cpu_tile *t);

/* Decode nblocks whole blocks of q type wtype at src into dst (nblocks *
 * block_elems elements) of dst_type f32, f16 or bf16 (f32 rounded to
 * nearest even). */
typedef void (*vt_cpu_decode_fn)(uint32_t wtype, uint32_t block_bytes, uint32_t groups, const uint8_t *src,
                                 int64_t nblocks, void *dst, uint32_t dst_type);

/* Convert n elements between f32, f16 and bf16 (widening exactly,
 * narrowing to nearest even, NaN kept as vt_f32_to_f16 / vt_f32_to_bf16
 * keep it): the same bits as vt_cpu_load + vt_cpu_store on every path. */
typedef void (*vt_cpu_convert_fn)(uint32_t src_type, const void *src, int64_t n, void *dst, uint32_t dst_type);

/* The portable conversion (element by element). */
void vt_cpu_convert_scalar(uint32_t src_type, const void *src, int64_t n, void *dst, uint32_t dst_type);

/* Quantize one activation row of k elements (cpu_qx.h). */
typedef void (*vt_cpu_quantize_fn)(const float *x, int64_t k, int16_t *q, float *dx);

/* A SIMD path's kernel set. */
typedef struct vt_cpu_isa {
    vt_cpu_simd id;
    int tile_w[VT_CPU_TILE_X + 1]; /* weight rows per tile for nx = 1.. activation rows (0: nx unused) */
    int tile_x;                    /* most activation rows per tile */
    vt_cpu_dot_fn dot;             /* any weight dtype of MatMul */
    vt_cpu_dot_fn qdot;            /* q weights against quantized x rows (cpu_qx.h) */
    vt_cpu_quantize_fn quantize;   /* x rows for qdot */
    vt_cpu_decode_fn decode;       /* any q dtype */
    vt_cpu_convert_fn convert;     /* f32/f16/bf16 casts */
} vt_cpu_isa;

/* The kernel set of a path (NULL when not built for this architecture). */
const vt_cpu_isa *vt_cpu_isa_get(vt_cpu_simd s);

/* The kernel sets, one per file. */
extern const vt_cpu_isa vt_cpu_isa_scalar;
#if defined(__x86_64__)
extern const vt_cpu_isa vt_cpu_isa_avx2;
extern const vt_cpu_isa vt_cpu_isa_avx512;
/* The AVX-512 path's quantized-activation tiles with vpdpwssd (only on a
 * CPU with AVX512-VNNI). */
void vt_cpu_qdot_avx512vnni(vt_cpu_tile *t);
#endif
#if defined(__aarch64__)
extern const vt_cpu_isa vt_cpu_isa_neon;
#endif

/* The final step of the canonical reduction over eight lane sums. */
static inline float vt_cpu_lane_tree(const float s[VT_CPU_LANES])
{
    return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
}

#endif
