/* cpu_quant.c - the table of block formats the cpu backend decodes, and the
 * group form applied to decode (the scalar reference decoder). */
#include "config.h"

#include <stddef.h>

#include "cpu_quant.h"

/* dtype, runs, affine, offset, form */
static const vt_cpu_qformat formats[] = {
    {VT_Q4_0, 1, VT_CPU_OFFSET, 8, vt_cpu_form_q4_0},    {VT_Q4_1, 1, VT_CPU_MIN, 0, vt_cpu_form_q4_1},
    {VT_Q5_0, 1, VT_CPU_OFFSET, 16, vt_cpu_form_q5_0},   {VT_Q5_1, 1, VT_CPU_MIN, 0, vt_cpu_form_q5_1},
    {VT_Q8_0, 1, VT_CPU_SCALE, 0, vt_cpu_form_q8_0},     {VT_Q2_K, 2, VT_CPU_MIN, 0, vt_cpu_form_q2_k},
    {VT_Q3_K, 2, VT_CPU_OFFSET, 4, vt_cpu_form_q3_k},    {VT_Q4_K, 1, VT_CPU_MIN, 0, vt_cpu_form_q4_k},
    {VT_Q5_K, 1, VT_CPU_MIN, 0, vt_cpu_form_q5_k},       {VT_Q6_K, 2, VT_CPU_OFFSET, 32, vt_cpu_form_q6_k},
    {VT_IQ4_NL, 1, VT_CPU_SCALE, 0, vt_cpu_form_iq4_nl}, {VT_IQ4_XS, 1, VT_CPU_SCALE, 0, vt_cpu_form_iq4_xs},
    {VT_MXFP4, 1, VT_CPU_SCALE, 0, vt_cpu_form_mxfp4},
};

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
        switch (f->affine) {
        case VT_CPU_OFFSET: out[j] = g.a[r] * (g.c[j] - (float)f->offset); break;
        case VT_CPU_MIN: out[j] = g.a[r] * g.c[j] + g.m[r]; break;
        default: out[j] = g.a[r] * g.c[j]; break;
        }
    }
}
