/* cpu_kernels_quant.c - kernel rows of the block-format family: MatMul
 * over the 13 q formats (the dense rows are in the basic family; both run
 * vt_cpu_matmul), MoeExpertMatMul, GetRows and Dequantize over every
 * signature the catalogue defines for them. */
#include "config.h"

#include "cpu_ops.h"
#include "cpu_ops_quant.h"

#define MATMUL_ROW(t, _) {VT_OP_MATMUL, VT_SIG2(VT_F32, t), vt_cpu_matmul},
#define MOE_ROW(t, _)    {VT_OP_MOE_EXPERT_MATMUL, VT_SIG2(VT_F32, t), vt_cpu_moe_expert_matmul},
#define GET_ROWS_ROWS(t, _)                                                                                            \
    {VT_OP_GET_ROWS, VT_SIG3(t, VT_I32, VT_F32), vt_cpu_get_rows},                                                     \
        {VT_OP_GET_ROWS, VT_SIG3(t, VT_I32, VT_F16), vt_cpu_get_rows},
#define DEQUANT_ROWS(t, _)                                                                                             \
    {VT_OP_DEQUANTIZE, VT_SIG2(t, VT_F32), vt_cpu_dequantize},                                                         \
        {VT_OP_DEQUANTIZE, VT_SIG2(t, VT_F16), vt_cpu_dequantize},                                                     \
        {VT_OP_DEQUANTIZE, VT_SIG2(t, VT_BF16), vt_cpu_dequantize},

/* clang-format off */
const vt_kernel vt_cpu_kernels_quant[] = {
    VT_Q_FORMATS(MATMUL_ROW)
    MOE_ROW(VT_F32, 0) MOE_ROW(VT_F16, 0) MOE_ROW(VT_BF16, 0) VT_Q_FORMATS(MOE_ROW)
    GET_ROWS_ROWS(VT_F32, 0) GET_ROWS_ROWS(VT_F16, 0) GET_ROWS_ROWS(VT_BF16, 0) VT_Q_FORMATS(GET_ROWS_ROWS)
    VT_Q_FORMATS(DEQUANT_ROWS)
};
/* clang-format on */

const uint32_t vt_cpu_n_kernels_quant = sizeof vt_cpu_kernels_quant / sizeof vt_cpu_kernels_quant[0];
