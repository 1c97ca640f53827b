/* cpu_quant.c - the table of block formats the cpu backend decodes, their
 * scalar group readers (built from vt_blocks.h's codes and factors, one per
 * format of VT_Q_FORMATS), and the group form applied to decode (the
 * scalar reference decoder). */
#include "config.h"

#include <stddef.h>

#include "cpu_quant.h"

const int8_t vt_cpu_kvalues_iq4nl[16] = {VT_BLK_BOOK_IQ4NL};
const int8_t vt_cpu_kvalues_mxfp4[16] = {VT_BLK_BOOK_FP4X2};

/* The group reader of format f: the factor (and minimum) of each run, and
 * the code of each element, of group `sub`. */
#define FORM(id, f)                                                                                                    \
    static void form_##f(const uint8_t *blk, int sub, vt_cpu_group *g)                                                 \
    {                                                                                                                  \
        const int j0 = VT_CPU_GROUP * sub, len = VT_CPU_GROUP / VT_BLK_##f##_RUNS;                                     \
        (void)len; /* the factors of 32-element formats ignore j */                                                    \
        for (int r = 0; r < VT_BLK_##f##_RUNS; r++) {                                                                  \
            g->a[r] = vt_blk_##f##_a(blk, j0 + r * len);                                                               \
            g->m[r] = vt_blk_##f##_m(blk, j0 + r * len);                                                               \
        }                                                                                                              \
        for (int l = 0; l < VT_CPU_GROUP; l++)                                                                         \
            g->c[l] = (float)vt_blk_##f##_code(blk, j0 + l);                                                           \
    }
VT_Q_FORMATS(FORM)
#undef FORM

/* dtype, runs, affine, offset, form */
#define ROW(id, f) {id, VT_BLK_##f##_RUNS, VT_BLK_##f##_KIND, VT_BLK_##f##_OFF, form_##f},
static const vt_cpu_qformat formats[] = {VT_Q_FORMATS(ROW)};
#undef ROW

const vt_cpu_qformat *vt_cpu_qformat_get(uint32_t dtype)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (formats[i].dtype == dtype)
            return &formats[i];
    return NULL;
}

void vt_cpu_form_decode(const vt_cpu_qformat *f, const uint8_t *blk, int sub, float *out)
{
    vt_cpu_group g;
    f->form(blk, sub, &g);
    const int len = VT_CPU_GROUP / f->runs;
    for (int j = 0; j < VT_CPU_GROUP; j++) {
        const int r = j / len;
        out[j] = vt_blk_apply(f->affine, f->offset, g.a[r], (int)g.c[j], g.m[r]);
    }
}
