/* cpu_quant_kquants.c - scalar decoders of the 256-element K-quant
 * super-blocks Q2_K, Q3_K, Q4_K, Q5_K and Q6_K (offsets in cpu_quant.h).
 *
 * Each decoder writes group `sub` (elements 32*sub .. 32*sub+31 of the
 * super-block):
 *   Q2_K  group g uses the 2-bit field at shift 2*(g%4) of qs[32*(g/4) + l]
 *         (l < 32); its first 16 elements take scales[2g], the last 16
 *         scales[2g+1]; a scale byte is (min << 4) | scale, and
 *         x = d*scale*q - dmin*min.
 *   Q3_K  as Q2_K for the low two bits; bit g of hmask[l] is the third bit
 *         (clear: subtract 4); 16 signed 6-bit scales (minus 32) packed in
 *         12 bytes: low nibbles in bytes 0..7 (scales 0..7) and their high
 *         nibbles (scales 8..15), the top two bits of scale i in byte
 *         8 + i%4 at shift 2*(i/4); x = d*scale*q.
 *   Q4_K  group g reads nibble (g odd: high, even: low) of qs[32*(g/2) + l];
 *         scale and min of group g are 6-bit fields of the 12 scale bytes
 *         (vt_cpu_kquant_scale_min); x = d*scale*q - dmin*min.
 *   Q5_K  as Q4_K with bit g of qh[l] as the fifth bit.
 *   Q6_K  half h = g/4 and quarter r = g%4: low four bits from
 *         ql[64h + 32*(r%2) + l] (low nibble for r < 2, high for r >= 2), top
 *         two bits from qh[32h + l] at shift 2r; value - 32; the int8 scale
 *         is scales[8h + 2r + l/16]; x = d*scale*q. */
#include "config.h"

#include "cpu_quant.h"

void vt_cpu_decode_q2_k(const uint8_t *blk, int sub, float *out)
{
    const uint8_t *scales = blk, *q = blk + 16 + 32 * (sub >> 2);
    const float d = vt_cpu_half_at(blk + 80), dmin = vt_cpu_half_at(blk + 82);
    const int shift = 2 * (sub & 3);
    for (int half = 0; half < 2; half++) {
        uint8_t sc = scales[2 * sub + half];
        float dl = d * (float)(sc & 0xF), ml = dmin * (float)(sc >> 4);
        for (int l = 0; l < 16; l++)
            out[16 * half + l] = dl * (float)((q[16 * half + l] >> shift) & 3) - ml;
    }
}

void vt_cpu_decode_q3_k(const uint8_t *blk, int sub, float *out)
{
    const uint8_t *hmask = blk, *q = blk + 32 + 32 * (sub >> 2), *scales = blk + 96;
    const float d = vt_cpu_half_at(blk + 108);
    const int shift = 2 * (sub & 3);
    for (int half = 0; half < 2; half++) {
        float dl = d * (float)vt_cpu_q3k_scale(scales, 2 * sub + half);
        for (int l = 16 * half; l < 16 * half + 16; l++) {
            int v = ((q[l] >> shift) & 3) - ((hmask[l] >> sub) & 1 ? 0 : 4);
            out[l] = dl * (float)v;
        }
    }
}

void vt_cpu_decode_q4_k(const uint8_t *blk, int sub, float *out)
{
    const float d = vt_cpu_half_at(blk), dmin = vt_cpu_half_at(blk + 2);
    const uint8_t *q = blk + 16 + 32 * (sub >> 1);
    uint8_t sc, mn;
    vt_cpu_kquant_scale_min(blk + 4, sub, &sc, &mn);
    const float d1 = d * (float)sc, m1 = dmin * (float)mn;
    const int shift = 4 * (sub & 1);
    for (int l = 0; l < 32; l++)
        out[l] = d1 * (float)((q[l] >> shift) & 0xF) - m1;
}

void vt_cpu_decode_q5_k(const uint8_t *blk, int sub, float *out)
{
    const float d = vt_cpu_half_at(blk), dmin = vt_cpu_half_at(blk + 2);
    const uint8_t *qh = blk + 16, *q = blk + 48 + 32 * (sub >> 1);
    uint8_t sc, mn;
    vt_cpu_kquant_scale_min(blk + 4, sub, &sc, &mn);
    const float d1 = d * (float)sc, m1 = dmin * (float)mn;
    const int shift = 4 * (sub & 1);
    for (int l = 0; l < 32; l++) {
        int v = ((q[l] >> shift) & 0xF) | (((qh[l] >> sub) & 1) << 4);
        out[l] = d1 * (float)v - m1;
    }
}

void vt_cpu_decode_q6_k(const uint8_t *blk, int sub, float *out)
{
    const int h = sub >> 2, r = sub & 3;
    const uint8_t *ql = blk + 64 * h + 32 * (r & 1), *qh = blk + 128 + 32 * h;
    const int8_t *scales = (const int8_t *)(blk + 192) + 8 * h + 2 * r;
    const float d = vt_cpu_half_at(blk + 208);
    const int lshift = r >= 2 ? 4 : 0, hshift = 2 * r;
    for (int half = 0; half < 2; half++) {
        float ds = d * (float)scales[half];
        for (int l = 16 * half; l < 16 * half + 16; l++) {
            int v = (((ql[l] >> lshift) & 0xF) | (((qh[l] >> hshift) & 3) << 4)) - 32;
            out[l] = ds * (float)v;
        }
    }
}
