/* cpu_mm.h - the cpu backend's matrix engine: y[r][c] = dot(W row c,
 * x row r) for every activation row r and weight row c, each output by
 * the canonical reduction (cpu_dot.h), cut into tiles of the context's
 * SIMD path and spread over its thread pool. MatMul and MoeExpertMatMul
 * both run on it. */
#ifndef VT_CPU_MM_H
#define VT_CPU_MM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpu_backend.h"
#include "cpu_dot.h"

/* One problem. Activation and output rows are either strided (x + r*ldx,
 * y + r*ldy) or listed (xrows[r], yrows[r]) when the list is not NULL. */
typedef struct vt_cpu_mm {
    uint32_t wtype;     /* weight dtype: f32/f16/bf16 or q */
    const uint8_t *w;   /* weight row c at w + c * w_row_bytes */
    size_t w_row_bytes; /* bytes of one weight row */
    int64_t m, k;       /* weight rows; elements per row */
    int64_t n;          /* activation rows */
    const float *x;
    int64_t ldx;
    const float *const *xrows;
    float *y; /* output (r, c) at y + r*ldy + c, or yrows[r] + c */
    int64_t ldy;
    float *const *yrows;
    /* Activations quantized (cpu_qx.h), or NULL for the f32 path: row i at
     * xq + i*k with block scales at xd + i*(k/32); activation row r is row
     * xqi[r] (r when xqi is NULL). */
    const int16_t *xq;
    const float *xd;
    const int64_t *xqi;
} vt_cpu_mm;

/* Rows of weights the engine hands a thread at a time. */
#define VT_CPU_MM_UNIT 8

/* Compute the outputs of weight rows [c0, c1) for every activation row,
 * on the calling thread. */
void vt_cpu_mm_rows(const vt_cpu_isa *isa, const vt_cpu_mm *p, int64_t c0, int64_t c1);

/* Compute the whole problem on the context's pool: units of
 * VT_CPU_MM_UNIT weight rows, contiguous ranges per thread. A problem that
 * takes the int16 path (vt_cpu_mm_quantizes) and has no p->xq gets its
 * activations quantized first; VT_E_NO_MEMORY when there is no host
 * memory for them (nothing written). */
vt_status vt_cpu_mm_run(vt_backend_ctx *ctx, const vt_cpu_mm *p);

/* True when W of dtype wtype with rows of k elements takes the
 * int16-activation path (cpu_qx.h): block formats, k >= VT_CPU_QX_MIN_K. */
bool vt_cpu_mm_quantizes(uint32_t wtype, int64_t k);

/* Quantize n activation rows of k elements (row i at x + i*ldx) into a new
 * host block (returned, for free(); NULL when out of memory) holding *xq
 * and *xd as vt_cpu_mm wants them, spread over the context's pool. */
void *vt_cpu_mm_quantize(vt_backend_ctx *ctx, const float *x, int64_t ldx, int64_t n, int64_t k, int16_t **xq,
                         float **xd);

/* Smallest number of units worth a thread of its own for rows of k
 * elements against n activation rows. */
int64_t vt_cpu_mm_min_units(int64_t k, int64_t n);

#endif
