/* cpu_qx.h - the int16-activation path of the cpu backend's MatMul and
 * MoeExpertMatMul for block-format weights (q) with k >= VT_CPU_QX_MIN_K.
 *
 * ACTIVATIONS. Each activation row x is held, per 32-element block g, as
 * 16-bit integers q[j] with one f32 scale dx[g]:
 *     amax  = max |x[j]| over the block (exact)
 *     dx[g] = amax / 32767.0f                  (one f32 division)
 *     q[j]  = rint(x[j] * (32767.0f / amax))    (f32 product, nearest even)
 * so |x[j] - dx*q[j]| <= about amax / 65534 per element. A block whose amax
 * is below 2^-100 (zeros, subnormals) has dx = 0 and q = 0; a block with an
 * infinity or NaN has dx = NaN and q = 0, which makes every output of that
 * row NaN.
 *
 * THE CANONICAL REDUCTION of an output y = W row . x: eight f32 lane sums
 * s[0..7] from +0.0f, for each 32-element weight group g in order (the
 * group form of cpu_quant.h: codes c, per-run factor a, offset o or
 * minimum m), for each run r in order (1 run of 32 or 2 runs of 16):
 *     P[l] = sum over the run's positions p of lane l of (c[p] - o) * q[p]
 *     X[l] = sum over the same positions of q[p]          (MIN formats)
 * in exact 32-bit integer arithmetic (|P| < 2^24, so (float)P is exact),
 * where lane l owns positions 2l, 2l+1, 16+2l, 17+2l of a 32-element run
 * and positions 16r+2l, 16r+2l+1 of run r of a 16-element-run format; then
 *     s[l] = fmaf((float)P[l], a[r] * dx[g], s[l])
 *     s[l] = fmaf((float)X[l], m[r] * dx[g], s[l])        (MIN formats)
 * (each factor one f32 product), and y is the lane tree of cpu_dot.h.
 * The integer sums do not depend on the order they are formed in, so the
 * AVX-512 VNNI path (vpdpwssd), the AVX2 path (vpmaddwd + vpaddd) and the
 * scalar path give the same bits, for any tile shape and thread count.
 *
 * Error: about 2^-16 of each block's maximum per element, so ||y - exact||
 * / ||exact|| is about 1.5e-5 on uniform random data (measured, see
 * README), inside SPEC 7's 1e-4 for reductions over >= 1024 terms; below
 * that k (SPEC 7: 1e-5) the f32 path of cpu_dot.h runs instead. */
#ifndef VT_CPU_QX_H
#define VT_CPU_QX_H

#include <stdint.h>

#include "cpu_dot.h"
#include "cpu_quant.h"

/* Smallest k that takes the int16-activation path. */
#define VT_CPU_QX_MIN_K 1024

/* Largest quantized magnitude. */
#define VT_CPU_QX_MAX 32767

/* Quantize one row of k activations (k a multiple of 32) into q[k] and
 * dx[k/32] as described above (portable C; every path's bits). */
void vt_cpu_qx_quantize_scalar(const float *x, int64_t k, int16_t *q, float *dx);

/* The canonical reduction of every output of a tile whose activation rows
 * are quantized (t->xq, t->xd), in portable C. */
void vt_cpu_qx_dot_scalar(vt_cpu_tile *t);

/* The block scale of a block of amax bits (|x| as IEEE bits, NaN above
 * infinity), and the multiplier of its elements (0 for flushed blocks). */
static inline void vt_cpu_qx_scale(uint32_t amax_bits, float *dx, float *inv)
{
    float amax;
    memcpy(&amax, &amax_bits, sizeof amax);
    if (amax_bits >= 0x7f800000u) { /* inf or NaN */
        *dx = __builtin_nanf("");
        *inv = 0.0f;
    } else if (amax < 0x1p-100f) {
        *dx = 0.0f;
        *inv = 0.0f;
    } else {
        *dx = amax / (float)VT_CPU_QX_MAX;
        *inv = (float)VT_CPU_QX_MAX / amax;
    }
}

#endif
