/* cpu_tile_x86.h - x86 tile templates of the canonical dot (cpu_dot.h):
 * NW weight rows x NX activation rows, one 8-lane accumulator per output,
 * each weight group decoded once and used for all NX activation rows.
 *
 * Included after cpu_decode_x86.h by the AVX2 and AVX-512 path files. The
 * templates are always inlined with constant wtype, NW and NX, so each
 * (format, tile shape) becomes straight-line code with its accumulators
 * in registers; X86_TILE_DISPATCH picks the shape for a tile's rows. */
#ifndef VT_CPU_TILE_X86_H
#define VT_CPU_TILE_X86_H

#include "cpu_decode_x86.h"
#include "cpu_dot.h"

/* Bytes ahead of the current position each weight row is prefetched. */
#ifndef X86_PREFETCH
#define X86_PREFETCH 512
#endif

/* Real rows first, then copies of the last real row up to the shape. */
VT_X86_FN void x86_tile_rows(const vt_cpu_tile *t, int nw, int nx, const uint8_t **w, const float **x)
{
    const int lw = t->nw > 1 ? t->nw - 1 : 0, lx = t->nx > 1 ? t->nx - 1 : 0;
    for (int i = 0; i < nw; i++)
        w[i] = t->w[i < lw ? i : lw];
    for (int r = 0; r < nx; r++)
        x[r] = t->x[r < lx ? r : lx];
}

/* Reduce the NX x NW accumulators (constant loops, so they stay in
 * registers) and keep the real rows' outputs. */
VT_X86_FN void x86_tile_store(vt_cpu_tile *t, __m256 acc[VT_CPU_TILE_X][VT_CPU_TILE_W], const int NW, const int NX)
{
    float out[VT_CPU_TILE_X][VT_CPU_TILE_W];
#pragma GCC unroll 4
    for (int r = 0; r < NX; r++)
#pragma GCC unroll 8
        for (int i = 0; i < NW; i++)
            out[r][i] = x86_lane_tree(acc[r][i]);
    for (int r = 0; r < t->nx; r++)
        for (int i = 0; i < t->nw; i++)
            t->out[r][i] = out[r][i];
}

/* A tile of q weight rows in the group-form order of cpu_dot.h: per block,
 * prepare the factors of all NW rows; per group and activation row, the
 * run sums X of x (shared by the NW rows) and, for offset formats, the
 * starts -o*X; then per weight row its codes, the code-times-x chain P of
 * each run and the lane-sum updates s = fma(a, P, s) (and fma(m, X, s) for
 * formats with a minimum), each row decoded next to its use. G, the groups
 * per block, is a constant of the format (equal to the type table's
 * block_elems / 32, which t->groups carries). */
VT_X86_FN void x86_tile_q(vt_cpu_tile *t, const uint32_t wtype, const int NW, const int NX)
{
    const uint8_t *w[VT_CPU_TILE_W];
    const float *x[VT_CPU_TILE_X];
    __m256 acc[VT_CPU_TILE_X][VT_CPU_TILE_W];
    x86_scales tab[VT_CPU_TILE_W];
    const int G = x86_groups_of(wtype), R = x86_runs_of(wtype), A = x86_affine_of(wtype);
    const float neg_o = -(float)x86_offset_of(wtype);
    x86_tile_rows(t, NW, NX, w, x);
#pragma GCC unroll 4
    for (int r = 0; r < NX; r++)
#pragma GCC unroll 8
        for (int i = 0; i < NW; i++)
            acc[r][i] = _mm256_setzero_ps();
    const int64_t nblocks = t->k / ((int64_t)G * VT_CPU_GROUP);
    const size_t bb = t->block_bytes;
    /* Software prefetch of each super-block row X86_PREFETCH bytes ahead:
     * the hardware streamers lose track of rows whose blocks are read out
     * of address order (Q6_K reads its scales at the end of the block
     * first). The 32-element formats are read in address order, which the
     * streamers follow; a prefetch per small block would cost more issue
     * slots than it saves. */
    const int64_t pf = (X86_PREFETCH + (int64_t)bb - 1) / (int64_t)bb;
    /* Formats whose only factor is the f16 at the block's start convert it
     * next to its use; the others go through the prepared table. */
    const int row_d = x86_d_only(wtype);
    for (int64_t b = 0; b < nblocks; b++) {
        const size_t boff = (size_t)b * bb;
        if (G > 1 && b + pf < nblocks)
            for (int i = 0; i < NW; i++)
                for (size_t o = 0; o < bb; o += 64)
                    _mm_prefetch((const char *)(w[i] + boff + (size_t)pf * bb + o), _MM_HINT_T0);
        if (G > 1) {
#pragma GCC unroll 8
            for (int i = 0; i < NW; i++)
                x86_prep_block(wtype, w[i] + boff, tab[i]);
        } else if (!row_d) {
            x86_prep_rows(wtype, w, boff, NW, tab[0]);
        }
        for (int s = 0; s < G; s++) {
            const int64_t off = (b * G + s) * VT_CPU_GROUP;
            /* run sums of x and the starts of the chains, per x row */
            __m256 xs[VT_CPU_TILE_X][2], p0[VT_CPU_TILE_X][2];
#pragma GCC unroll 4
            for (int r = 0; r < NX; r++) {
                const float *xr = x[r] + off;
                if (R == 1) {
                    xs[r][0] = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(_mm256_loadu_ps(xr), _mm256_loadu_ps(xr + 8)),
                                                           _mm256_loadu_ps(xr + 16)),
                                             _mm256_loadu_ps(xr + 24));
                } else {
                    xs[r][0] = _mm256_add_ps(_mm256_loadu_ps(xr), _mm256_loadu_ps(xr + 8));
                    xs[r][1] = _mm256_add_ps(_mm256_loadu_ps(xr + 16), _mm256_loadu_ps(xr + 24));
                }
                for (int q = 0; q < R; q++)
                    p0[r][q] =
                        A == VT_CPU_OFFSET ? _mm256_mul_ps(xs[r][q], _mm256_set1_ps(neg_o)) : _mm256_setzero_ps();
            }
#pragma GCC unroll 8
            for (int i = 0; i < NW; i++) {
                const uint8_t *bp = w[i] + boff;
                const float *xp[VT_CPU_TILE_X];
                for (int r = 0; r < NX; r++)
                    xp[r] = x[r] + off;
                /* Make row i's addresses depend (for the compiler only: the
                 * asm is empty) on row i-1's accumulator, so each row is
                 * decoded next to its use and reads x from L1 as FMA memory
                 * operands, instead of all NW decodes (or x) being hoisted
                 * into registers and spilled. One base register for the
                 * factors (else the compiler keeps NW addresses, spilled). */
                const float *tp = &tab[0][0][0];
                if (i) {
                    __asm__("" : "+r"(bp) : "x"(acc[0][i - 1]));
                    for (int r = 0; r < NX; r++)
                        __asm__("" : "+r"(xp[r]) : "r"(bp));
                }
                __asm__("" : "+r"(tp) : "r"(bp));
                const float *a = G > 1 ? tp + 32 * i + s : tp + i;
                __m256 c[4];
                x86_codes(wtype, bp, s, c);
                const __m256 d = row_d ? x86_half_all(bp) : _mm256_setzero_ps();
#pragma GCC unroll 4
                for (int r = 0; r < NX; r++) {
#pragma GCC unroll 2
                    for (int q = 0; q < R; q++) {
                        const int u0 = q * (4 / R), u1 = u0 + 4 / R;
                        __m256 p = A == VT_CPU_OFFSET
                                       ? _mm256_fmadd_ps(c[u0], _mm256_loadu_ps(xp[r] + 8 * u0), p0[r][q])
                                       : _mm256_mul_ps(c[u0], _mm256_loadu_ps(xp[r] + 8 * u0));
#pragma GCC unroll 4
                        for (int u = u0 + 1; u < u1; u++)
                            p = _mm256_fmadd_ps(c[u], _mm256_loadu_ps(xp[r] + 8 * u), p);
                        acc[r][i] = _mm256_fmadd_ps(row_d ? d : x86_factor(a, 2 * q), p, acc[r][i]);
                        if (A == VT_CPU_MIN)
                            acc[r][i] = _mm256_fmadd_ps(x86_factor(a, 2 * q + 1), xs[r][q], acc[r][i]);
                    }
                }
            }
        }
    }
    x86_tile_store(t, acc, NW, NX);
}

/* A tile of dense (f32/f16/bf16) weight rows, any k: the last k % 8
 * elements go through zero-padded copies (0*0 added to a lane sum that is
 * never -0 leaves it unchanged, so padding cannot alter a bit). */
VT_X86_FN void x86_tile_dense(vt_cpu_tile *t, const uint32_t wtype, const int NW, const int NX)
{
    const uint8_t *w[VT_CPU_TILE_W];
    const float *x[VT_CPU_TILE_X];
    __m256 acc[VT_CPU_TILE_X][VT_CPU_TILE_W];
    x86_tile_rows(t, NW, NX, w, x);
#pragma GCC unroll 4
    for (int r = 0; r < NX; r++)
#pragma GCC unroll 8
        for (int i = 0; i < NW; i++)
            acc[r][i] = _mm256_setzero_ps();
    const int64_t k8 = t->k & ~(int64_t)7;
    const size_t es = wtype == VT_F32 ? 4 : 2;
    const int64_t line = 64 / (int64_t)es; /* elements per cache line */
    for (int64_t j = 0; j < k8; j += 8) {
        if ((j & (line - 1)) == 0 && j + X86_PREFETCH / (int64_t)es < k8)
            for (int i = 0; i < NW; i++)
                _mm_prefetch((const char *)(w[i] + (size_t)j * es + X86_PREFETCH), _MM_HINT_T0);
#pragma GCC unroll 8
        for (int i = 0; i < NW; i++) {
            __m256 wv = x86_load_dense(wtype, w[i], j);
#pragma GCC unroll 4
            for (int r = 0; r < NX; r++)
                acc[r][i] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(x[r] + j), acc[r][i]);
        }
    }
    const int64_t rem = t->k - k8;
    if (rem) {
        float xt[VT_CPU_TILE_X][8];
        uint8_t wt[32];
        for (int r = 0; r < NX; r++) {
            memset(xt[r], 0, sizeof xt[r]);
            memcpy(xt[r], x[r] + k8, (size_t)rem * sizeof(float));
        }
        for (int i = 0; i < NW; i++) {
            memset(wt, 0, sizeof wt);
            memcpy(wt, w[i] + (size_t)k8 * es, (size_t)rem * es);
            __m256 wv = x86_load_dense(wtype, wt, 0);
            for (int r = 0; r < NX; r++)
                acc[r][i] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(xt[r]), acc[r][i]);
        }
    }
    x86_tile_store(t, acc, NW, NX);
}

/* Decode whole blocks of q type wtype to f32/f16/bf16 (exact values). */
VT_X86_FN void x86_decode_blocks(const uint32_t wtype, uint32_t block_bytes, uint32_t groups, const uint8_t *src,
                                 int64_t nblocks, void *dst, uint32_t dst_type)
{
    const int G = x86_groups_of(wtype);
    x86_scales tab;
    int64_t o = 0;
    (void)groups; /* == G */
    for (int64_t b = 0; b < nblocks; b++, src += block_bytes) {
        if (G > 1)
            x86_prep_block(wtype, src, tab);
        else
            x86_prep_rows(wtype, &src, 0, 1, tab);
        for (int s = 0; s < G; s++, o += VT_CPU_GROUP) {
            __m256 c[4], v[4];
            x86_codes(wtype, src, s, c);
            x86_apply(wtype, c, &tab[0][G > 1 ? s : 0], v);
            x86_store_group(v, dst, o, dst_type);
        }
    }
}

/* Run the tile template of one weight type for t->nx activation rows:
 * shapes (NW1 x 1), (NW2 x 2) and (NW4 x 4) (NW4 = 0: at most 2 rows);
 * nx = 3 runs the 4-row shape with a padded row. The path's tile_w[] must
 * match these shapes. */
#define X86_TILE_DISPATCH(tile, t, wtype, NW1, NW2, NW4)                                                               \
    do {                                                                                                               \
        if ((t)->nx == 1)                                                                                              \
            tile(t, wtype, NW1, 1);                                                                                    \
        else if ((t)->nx == 2 || (NW4) == 0)                                                                           \
            tile(t, wtype, NW2, 2);                                                                                    \
        else                                                                                                           \
            tile(t, wtype, (NW4) ? (NW4) : 1, 4);                                                                      \
    } while (0)

#endif
