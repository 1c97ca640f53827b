/* cpu_quant_legacy.c - scalar decoders of the 32-element linear formats
 * Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0 (layouts in cpu_quant.h). */
#include "config.h"

#include "cpu_quant.h"

/* The 5th bit of element j of a Q5 block: bit j of the 32-bit qh word. */
static inline int q5_high_bit(const uint8_t *qh, int j)
{
    return (qh[j >> 3] >> (j & 7)) & 1;
}

void vt_cpu_decode_q4_0(const uint8_t *blk, int sub, float *out)
{
    (void)sub;
    const float d = vt_cpu_half_at(blk);
    const uint8_t *qs = blk + 2;
    for (int j = 0; j < 16; j++) {
        out[j] = (float)((qs[j] & 0xF) - 8) * d;
        out[j + 16] = (float)((qs[j] >> 4) - 8) * d;
    }
}

void vt_cpu_decode_q4_1(const uint8_t *blk, int sub, float *out)
{
    (void)sub;
    const float d = vt_cpu_half_at(blk), m = vt_cpu_half_at(blk + 2);
    const uint8_t *qs = blk + 4;
    for (int j = 0; j < 16; j++) {
        out[j] = (float)(qs[j] & 0xF) * d + m;
        out[j + 16] = (float)(qs[j] >> 4) * d + m;
    }
}

void vt_cpu_decode_q5_0(const uint8_t *blk, int sub, float *out)
{
    (void)sub;
    const float d = vt_cpu_half_at(blk);
    const uint8_t *qh = blk + 2, *qs = blk + 6;
    for (int j = 0; j < 16; j++) {
        out[j] = (float)(((qs[j] & 0xF) | (q5_high_bit(qh, j) << 4)) - 16) * d;
        out[j + 16] = (float)(((qs[j] >> 4) | (q5_high_bit(qh, j + 16) << 4)) - 16) * d;
    }
}

void vt_cpu_decode_q5_1(const uint8_t *blk, int sub, float *out)
{
    (void)sub;
    const float d = vt_cpu_half_at(blk), m = vt_cpu_half_at(blk + 2);
    const uint8_t *qh = blk + 4, *qs = blk + 8;
    for (int j = 0; j < 16; j++) {
        out[j] = (float)((qs[j] & 0xF) | (q5_high_bit(qh, j) << 4)) * d + m;
        out[j + 16] = (float)((qs[j] >> 4) | (q5_high_bit(qh, j + 16) << 4)) * d + m;
    }
}

void vt_cpu_decode_q8_0(const uint8_t *blk, int sub, float *out)
{
    (void)sub;
    const float d = vt_cpu_half_at(blk);
    const int8_t *qs = (const int8_t *)(blk + 2);
    for (int j = 0; j < 32; j++)
        out[j] = (float)qs[j] * d;
}
