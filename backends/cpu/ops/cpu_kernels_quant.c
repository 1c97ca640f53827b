/* cpu_kernels_quant.c - kernel rows of the block-format family: MatMul
 * over the 13 q formats (the dense rows are in the basic family; both run
 * vt_cpu_matmul), MoeExpertMatMul, GetRows and Dequantize over every
 * signature the catalogue defines for them. */
#include "config.h"

#include "cpu_ops.h"
#include "cpu_ops_quant.h"

/* The q formats of SPEC 7, in catalogue order. */
#define EACH_Q(X, ...)                                                                                                 \
    X(VT_Q4_0, __VA_ARGS__)                                                                                            \
    X(VT_Q4_1, __VA_ARGS__)                                                                                            \
    X(VT_Q5_0, __VA_ARGS__)                                                                                            \
    X(VT_Q5_1, __VA_ARGS__)                                                                                            \
    X(VT_Q8_0, __VA_ARGS__)                                                                                            \
    X(VT_Q2_K, __VA_ARGS__)                                                                                            \
    X(VT_Q3_K, __VA_ARGS__)                                                                                            \
    X(VT_Q4_K, __VA_ARGS__)                                                                                            \
    X(VT_Q5_K, __VA_ARGS__)                                                                                            \
    X(VT_Q6_K, __VA_ARGS__)                                                                                            \
    X(VT_IQ4_NL, __VA_ARGS__)                                                                                          \
    X(VT_IQ4_XS, __VA_ARGS__)                                                                                          \
    X(VT_MXFP4, __VA_ARGS__)

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
    EACH_Q(MATMUL_ROW, 0)
    MOE_ROW(VT_F32, 0) MOE_ROW(VT_F16, 0) MOE_ROW(VT_BF16, 0) EACH_Q(MOE_ROW, 0)
    GET_ROWS_ROWS(VT_F32, 0) GET_ROWS_ROWS(VT_F16, 0) GET_ROWS_ROWS(VT_BF16, 0) EACH_Q(GET_ROWS_ROWS, 0)
    EACH_Q(DEQUANT_ROWS, 0)
};
/* clang-format on */

const uint32_t vt_cpu_n_kernels_quant = sizeof vt_cpu_kernels_quant / sizeof vt_cpu_kernels_quant[0];
