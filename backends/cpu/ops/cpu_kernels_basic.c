/* cpu_kernels_basic.c - kernel rows of the basic family: Copy, Add, dense
 * MatMul, IndexSelect. */
#include "config.h"

#include "cpu_ops.h"

const vt_kernel vt_cpu_kernels_basic[] = {
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
    {VT_OP_ADD, VT_SIG1(VT_F32), vt_cpu_add},
    {VT_OP_MATMUL, VT_SIG2(VT_F32, VT_F32), vt_cpu_matmul},
    {VT_OP_MATMUL, VT_SIG2(VT_F32, VT_F16), vt_cpu_matmul},
    {VT_OP_MATMUL, VT_SIG2(VT_F32, VT_BF16), vt_cpu_matmul},
#define IDX(t)                                                                                                         \
    {VT_OP_INDEX_SELECT, VT_SIG2(t, VT_I32), vt_cpu_index_select},                                                     \
    {                                                                                                                  \
        VT_OP_INDEX_SELECT, VT_SIG2(t, VT_I64), vt_cpu_index_select                                                    \
    }
    IDX(VT_F32),
    IDX(VT_F16),
    IDX(VT_BF16),
    IDX(VT_I8),
    IDX(VT_I16),
    IDX(VT_I32),
    IDX(VT_I64),
    IDX(VT_F64),
#undef IDX
};

const uint32_t vt_cpu_n_kernels_basic = sizeof vt_cpu_kernels_basic / sizeof vt_cpu_kernels_basic[0];
