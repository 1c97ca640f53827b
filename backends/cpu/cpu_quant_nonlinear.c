/* cpu_quant_nonlinear.c - scalar decoders of the code-book formats IQ4_NL,
 * IQ4_XS and MXFP4 (offsets in cpu_quant.h).
 *
 *   IQ4_NL  x = d * kvalues_iq4nl[nibble]; element j < 16 is the low nibble
 *           of qs[j], element j + 16 its high nibble.
 *   IQ4_XS  a 256-element super-block of eight IQ4_NL-like groups sharing
 *           d; group g has the 6-bit scale ls = (nibble g%2 of
 *           scales_l[g/2]) | (bits 2g..2g+1 of scales_h) << 4, its values
 *           are d*(ls-32)*kvalues_iq4nl[nibble] over qs[16g .. 16g+15].
 *   MXFP4   OCP microscaling FP4: x = 2^(e-127) * E2M1(nibble), computed as
 *           2^(e-128) * kvalues_mxfp4[nibble] (the values doubled). */
#include "config.h"

#include "cpu_quant.h"

const int8_t vt_cpu_kvalues_iq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
const int8_t vt_cpu_kvalues_mxfp4[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

/* 32 elements from 16 nibble pairs through a code book, times d. */
static inline void decode_codebook(const uint8_t *qs, const int8_t *book, float d, float *out)
{
    for (int j = 0; j < 16; j++) {
        out[j] = d * (float)book[qs[j] & 0xF];
        out[j + 16] = d * (float)book[qs[j] >> 4];
    }
}

void vt_cpu_decode_iq4_nl(const uint8_t *blk, int sub, float *out)
{
    (void)sub;
    decode_codebook(blk + 2, vt_cpu_kvalues_iq4nl, vt_cpu_half_at(blk), out);
}

void vt_cpu_decode_iq4_xs(const uint8_t *blk, int sub, float *out)
{
    const uint16_t scales_h = (uint16_t)(blk[2] | (blk[3] << 8));
    const int ls = ((blk[4 + sub / 2] >> (4 * (sub % 2))) & 0xF) | (((scales_h >> (2 * sub)) & 3) << 4);
    const float dl = vt_cpu_half_at(blk) * (float)(ls - 32);
    decode_codebook(blk + 8 + 16 * sub, vt_cpu_kvalues_iq4nl, dl, out);
}

void vt_cpu_decode_mxfp4(const uint8_t *blk, int sub, float *out)
{
    (void)sub;
    decode_codebook(blk + 1, vt_cpu_kvalues_mxfp4, vt_cpu_e8m0_half(blk[0]), out);
}
