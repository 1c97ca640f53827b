/* cpu_kernels_convert.c - kernel rows of the convert family of the catalogue
 * (core/ops/convert.c): Copy between f32/f16/bf16 and of i32;
 * Dequantize of every q format to f32/f16/bf16. */
#include "config.h"

#include "cpu_ops.h"

#define DEQUANT_ROWS(t, _)                                                                                             \
    {VT_OP_DEQUANTIZE, VT_SIG2(t, VT_F32), vt_cpu_dequantize},                                                         \
        {VT_OP_DEQUANTIZE, VT_SIG2(t, VT_F16), vt_cpu_dequantize},                                                     \
        {VT_OP_DEQUANTIZE, VT_SIG2(t, VT_BF16), vt_cpu_dequantize},

const vt_kernel vt_cpu_kernels_convert[] = {
    {VT_OP_COPY, VT_SIG2(VT_F32, VT_F32), vt_cpu_copy},
    {VT_OP_COPY, VT_SIG2(VT_F32, VT_F16), vt_cpu_copy},
    {VT_OP_COPY, VT_SIG2(VT_F32, VT_BF16), vt_cpu_copy},
    {VT_OP_COPY, VT_SIG2(VT_F16, VT_F32), vt_cpu_copy},
    {VT_OP_COPY, VT_SIG2(VT_F16, VT_F16), vt_cpu_copy},
    {VT_OP_COPY, VT_SIG2(VT_F16, VT_BF16), vt_cpu_copy},
    {VT_OP_COPY, VT_SIG2(VT_BF16, VT_F32), vt_cpu_copy},
    {VT_OP_COPY, VT_SIG2(VT_BF16, VT_F16), vt_cpu_copy},
    {VT_OP_COPY, VT_SIG2(VT_BF16, VT_BF16), vt_cpu_copy},
    {VT_OP_COPY, VT_SIG2(VT_I32, VT_I32), vt_cpu_copy},
    /* clang-format off */
    VT_Q_FORMATS(DEQUANT_ROWS)
    /* clang-format on */
};

const uint32_t vt_cpu_n_kernels_convert = sizeof vt_cpu_kernels_convert / sizeof vt_cpu_kernels_convert[0];
