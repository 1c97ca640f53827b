/* cpu_quant_legacy.c - group forms of the 32-element linear formats Q4_0,
 * Q4_1, Q5_0, Q5_1 and Q8_0 (layouts in cpu_quant.h): one run, codes the
 * 4/5-bit unsigned fields (offset 8 or 16, or a minimum) or the int8s. */
#include "config.h"

#include "cpu_quant.h"

/* The 5th bit of element j of a Q5 block: bit j of the 32-bit qh word. */
static inline int q5_high_bit(const uint8_t *qh, int j)
{
    return (qh[j >> 3] >> (j & 7)) & 1;
}

/* Codes of 16 nibble pairs: low nibbles are elements 0..15. */
static inline void nibbles(const uint8_t *qs, float *c)
{
    for (int j = 0; j < 16; j++) {
        c[j] = (float)(qs[j] & 0xF);
        c[j + 16] = (float)(qs[j] >> 4);
    }
}

/* Codes of a Q5 block: nibble | (bit of qh) << 4. */
static inline void q5_codes(const uint8_t *qh, const uint8_t *qs, float *c)
{
    for (int j = 0; j < 16; j++) {
        c[j] = (float)((qs[j] & 0xF) | (q5_high_bit(qh, j) << 4));
        c[j + 16] = (float)((qs[j] >> 4) | (q5_high_bit(qh, j + 16) << 4));
    }
}

void vt_cpu_form_q4_0(const uint8_t *blk, int sub, vt_cpu_group *g)
{
    (void)sub;
    g->a[0] = vt_cpu_half_at(blk);
    nibbles(blk + 2, g->c);
}

void vt_cpu_form_q4_1(const uint8_t *blk, int sub, vt_cpu_group *g)
{
    (void)sub;
    g->a[0] = vt_cpu_half_at(blk);
    g->m[0] = vt_cpu_half_at(blk + 2);
    nibbles(blk + 4, g->c);
}

void vt_cpu_form_q5_0(const uint8_t *blk, int sub, vt_cpu_group *g)
{
    (void)sub;
    g->a[0] = vt_cpu_half_at(blk);
    q5_codes(blk + 2, blk + 6, g->c);
}

void vt_cpu_form_q5_1(const uint8_t *blk, int sub, vt_cpu_group *g)
{
    (void)sub;
    g->a[0] = vt_cpu_half_at(blk);
    g->m[0] = vt_cpu_half_at(blk + 2);
    q5_codes(blk + 4, blk + 8, g->c);
}

void vt_cpu_form_q8_0(const uint8_t *blk, int sub, vt_cpu_group *g)
{
    (void)sub;
    g->a[0] = vt_cpu_half_at(blk);
    const int8_t *qs = (const int8_t *)(blk + 2);
    for (int j = 0; j < 32; j++)
        g->c[j] = (float)qs[j];
}
