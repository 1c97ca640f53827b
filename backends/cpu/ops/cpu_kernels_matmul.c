/* cpu_kernels_matmul.c - kernel rows of the matmul family of the catalogue
 * (core/ops/matmul.c): MatMul with f32/f16/bf16 weights and
 * every q format (all run vt_cpu_matmul), MoeExpertMatMul likewise. */
#include "config.h"

#include "cpu_ops.h"

#define MATMUL_ROW(t, _) {VT_OP_MATMUL, VT_SIG2(VT_F32, t), vt_cpu_matmul},
#define MOE_ROW(t, _)    {VT_OP_MOE_EXPERT_MATMUL, VT_SIG2(VT_F32, t), vt_cpu_moe_expert_matmul},

const vt_kernel vt_cpu_kernels_matmul[] = {
    {VT_OP_MATMUL, VT_SIG2(VT_F32, VT_F32), vt_cpu_matmul},
    {VT_OP_MATMUL, VT_SIG2(VT_F32, VT_F16), vt_cpu_matmul},
    {VT_OP_MATMUL, VT_SIG2(VT_F32, VT_BF16), vt_cpu_matmul},
    /* clang-format off */
    VT_Q_FORMATS(MATMUL_ROW)
    MOE_ROW(VT_F32, 0) MOE_ROW(VT_F16, 0) MOE_ROW(VT_BF16, 0) VT_Q_FORMATS(MOE_ROW)
    /* clang-format on */
};

const uint32_t vt_cpu_n_kernels_matmul = sizeof vt_cpu_kernels_matmul / sizeof vt_cpu_kernels_matmul[0];
