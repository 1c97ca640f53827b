/* cpu_mm.h - the cpu backend's matrix engine: y[r][c] = dot(W row c,
 * x row r) for every activation row r and weight row c, each output by
 * the canonical reduction (cpu_dot.h), cut into tiles of the context's
 * SIMD path and spread over its thread pool. MatMul and MoeExpertMatMul
 * both run on it. */
#ifndef VT_CPU_MM_H
#define VT_CPU_MM_H

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
} vt_cpu_mm;

/* Rows of weights the engine hands a thread at a time. */
#define VT_CPU_MM_UNIT 8

/* Compute the outputs of weight rows [c0, c1) for every activation row,
 * on the calling thread. */
void vt_cpu_mm_rows(const vt_cpu_isa *isa, const vt_cpu_mm *p, int64_t c0, int64_t c1);

/* Compute the whole problem on the context's pool: units of
 * VT_CPU_MM_UNIT weight rows, contiguous ranges per thread. */
void vt_cpu_mm_run(vt_backend_ctx *ctx, const vt_cpu_mm *p);

/* Smallest number of units worth a thread of its own for rows of k
 * elements against n activation rows. */
int64_t vt_cpu_mm_min_units(int64_t k, int64_t n);

#endif
