/* cpu_quant_kquants.c - group forms of the 256-element K-quant super-blocks
 * Q2_K, Q3_K, Q4_K, Q5_K and Q6_K (offsets in cpu_quant.h).
 *
 * Group `sub` is elements 32*sub .. 32*sub+31 of the super-block:
 *   Q2_K  two runs of 16. Codes: the 2-bit field at shift 2*(g%4) of
 *         qs[32*(g/4) + l] (l < 32); run r takes scales[2g+r], a byte
 *         (min << 4) | scale: a = d*scale, m = -dmin*min.
 *   Q3_K  two runs of 16, offset 4. Codes: those 2 bits | bit g of hmask[l]
 *         << 2; 16 signed 6-bit scales (minus 32) packed in 12 bytes (low
 *         nibbles of bytes 0..7 are scales 0..7, their high nibbles scales
 *         8..15, the top two bits of scale i in byte 8 + i%4 at shift
 *         2*(i/4)); run r: a = d*scale[2g+r].
 *   Q4_K  one run. Codes: nibble (g odd: high, even: low) of
 *         qs[32*(g/2) + l]; 6-bit scale and min of group g from the 12
 *         scale bytes (vt_cpu_kquant_scale_min): a = d*scale, m = -dmin*min.
 *   Q5_K  as Q4_K with bit g of qh[l] as the code's fifth bit.
 *   Q6_K  two runs of 16, offset 32. Half h = g/4, quarter r = g%4: low four
 *         bits from ql[64h + 32*(r%2) + l] (low nibble for r < 2, high for
 *         r >= 2), top two bits from qh[32h + l] at shift 2r; run r' takes
 *         the int8 scale scales[8h + 2r + r']: a = d*scale. */
#include "config.h"

#include "cpu_quant.h"

void vt_cpu_form_q2_k(const uint8_t *blk, int sub, vt_cpu_group *g)
{
    const uint8_t *q = blk + 16 + 32 * (sub >> 2);
    const float d = vt_cpu_half_at(blk + 80), dmin = vt_cpu_half_at(blk + 82);
    const int shift = 2 * (sub & 3);
    for (int r = 0; r < 2; r++) {
        const uint8_t sc = blk[2 * sub + r];
        g->a[r] = d * (float)(sc & 0xF);
        g->m[r] = -(dmin * (float)(sc >> 4));
    }
    for (int l = 0; l < 32; l++)
        g->c[l] = (float)((q[l] >> shift) & 3);
}

void vt_cpu_form_q3_k(const uint8_t *blk, int sub, vt_cpu_group *g)
{
    const uint8_t *hmask = blk, *q = blk + 32 + 32 * (sub >> 2);
    const float d = vt_cpu_half_at(blk + 108);
    const int shift = 2 * (sub & 3);
    for (int r = 0; r < 2; r++)
        g->a[r] = d * (float)vt_cpu_q3k_scale(blk + 96, 2 * sub + r);
    for (int l = 0; l < 32; l++)
        g->c[l] = (float)(((q[l] >> shift) & 3) | (((hmask[l] >> sub) & 1) << 2));
}

/* Scale and minimum factors of group sub of a Q4_K/Q5_K block. */
static void k4_factors(const uint8_t *blk, int sub, vt_cpu_group *g)
{
    uint8_t sc, mn;
    vt_cpu_kquant_scale_min(blk + 4, sub, &sc, &mn);
    g->a[0] = vt_cpu_half_at(blk) * (float)sc;
    g->m[0] = -(vt_cpu_half_at(blk + 2) * (float)mn);
}

void vt_cpu_form_q4_k(const uint8_t *blk, int sub, vt_cpu_group *g)
{
    const uint8_t *q = blk + 16 + 32 * (sub >> 1);
    const int shift = 4 * (sub & 1);
    k4_factors(blk, sub, g);
    for (int l = 0; l < 32; l++)
        g->c[l] = (float)((q[l] >> shift) & 0xF);
}

void vt_cpu_form_q5_k(const uint8_t *blk, int sub, vt_cpu_group *g)
{
    const uint8_t *qh = blk + 16, *q = blk + 48 + 32 * (sub >> 1);
    const int shift = 4 * (sub & 1);
    k4_factors(blk, sub, g);
    for (int l = 0; l < 32; l++)
        g->c[l] = (float)(((q[l] >> shift) & 0xF) | (((qh[l] >> sub) & 1) << 4));
}

void vt_cpu_form_q6_k(const uint8_t *blk, int sub, vt_cpu_group *g)
{
    const int h = sub >> 2, r = sub & 3;
    const uint8_t *ql = blk + 64 * h + 32 * (r & 1), *qh = blk + 128 + 32 * h;
    const int8_t *scales = (const int8_t *)(blk + 192) + 8 * h + 2 * r;
    const float d = vt_cpu_half_at(blk + 208);
    const int lshift = r >= 2 ? 4 : 0, hshift = 2 * r;
    for (int run = 0; run < 2; run++)
        g->a[run] = d * (float)scales[run];
    for (int l = 0; l < 32; l++)
        g->c[l] = (float)(((ql[l] >> lshift) & 0xF) | (((qh[l] >> hshift) & 3) << 4));
}
