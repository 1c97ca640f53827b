/* cpu_quant.c - the table of block formats the cpu backend decodes. */
#include "config.h"

#include <stddef.h>

#include "cpu_quant.h"

static const vt_cpu_qformat formats[] = {
    {VT_Q4_0, vt_cpu_decode_q4_0},   {VT_Q4_1, vt_cpu_decode_q4_1},     {VT_Q5_0, vt_cpu_decode_q5_0},
    {VT_Q5_1, vt_cpu_decode_q5_1},   {VT_Q8_0, vt_cpu_decode_q8_0},     {VT_Q2_K, vt_cpu_decode_q2_k},
    {VT_Q3_K, vt_cpu_decode_q3_k},   {VT_Q4_K, vt_cpu_decode_q4_k},     {VT_Q5_K, vt_cpu_decode_q5_k},
    {VT_Q6_K, vt_cpu_decode_q6_k},   {VT_IQ4_NL, vt_cpu_decode_iq4_nl}, {VT_IQ4_XS, vt_cpu_decode_iq4_xs},
    {VT_MXFP4, vt_cpu_decode_mxfp4},
};

const vt_cpu_qformat *vt_cpu_qformat_get(uint32_t dtype)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (formats[i].dtype == dtype)
            return &formats[i];
    return NULL;
}
