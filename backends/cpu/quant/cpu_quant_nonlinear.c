/* cpu_quant_nonlinear.c - group forms of the code-book formats IQ4_NL,
 * IQ4_XS and MXFP4 (offsets in cpu_quant.h): one run, codes the code-book
 * entries, x = a * code.
 *
 *   IQ4_NL  a = d; element j < 16 is the low nibble of qs[j] through
 *           kvalues_iq4nl, element j + 16 its high nibble.
 *   IQ4_XS  a 256-element super-block of eight IQ4_NL-like groups sharing
 *           d; group g has the 6-bit scale ls = (nibble g%2 of
 *           scales_l[g/2]) | (bits 2g..2g+1 of scales_h) << 4, a =
 *           d*(ls-32), codes from qs[16g .. 16g+15].
 *   MXFP4   OCP microscaling FP4: x = 2^(e-127) * E2M1(nibble), computed as
 *           a = 2^(e-128) times kvalues_mxfp4 (the E2M1 values doubled). */
#include "config.h"

#include "cpu_quant.h"

const int8_t vt_cpu_kvalues_iq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
const int8_t vt_cpu_kvalues_mxfp4[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

/* Codes of 16 nibble pairs through a code book. */
static inline void codebook(const uint8_t *qs, const int8_t *book, float *c)
{
    for (int j = 0; j < 16; j++) {
        c[j] = (float)book[qs[j] & 0xF];
        c[j + 16] = (float)book[qs[j] >> 4];
    }
}

void vt_cpu_form_iq4_nl(const uint8_t *blk, int sub, vt_cpu_group *g)
{
    (void)sub;
    g->a[0] = vt_cpu_half_at(blk);
    codebook(blk + 2, vt_cpu_kvalues_iq4nl, g->c);
}

void vt_cpu_form_iq4_xs(const uint8_t *blk, int sub, vt_cpu_group *g)
{
    const uint16_t scales_h = (uint16_t)(blk[2] | (blk[3] << 8));
    const int ls = ((blk[4 + sub / 2] >> (4 * (sub % 2))) & 0xF) | (((scales_h >> (2 * sub)) & 3) << 4);
    g->a[0] = vt_cpu_half_at(blk) * (float)(ls - 32);
    codebook(blk + 8 + 16 * sub, vt_cpu_kvalues_iq4nl, g->c);
}

void vt_cpu_form_mxfp4(const uint8_t *blk, int sub, vt_cpu_group *g)
{
    (void)sub;
    g->a[0] = vt_cpu_e8m0_half(blk[0]);
    codebook(blk + 1, vt_cpu_kvalues_mxfp4, g->c);
}
