/* cpu_kernels_gather.c - kernel rows of the gather family of the catalogue
 * (core/ops/gather.c): GetRows from f32/f16/bf16 and every q
 * format to f32/f16; IndexSelect for every plain dtype with i32 or i64
 * indices. */
#include "config.h"

#include "cpu_ops.h"

#define GET_ROWS_ROWS(t, _)                                                                                            \
    {VT_OP_GET_ROWS, VT_SIG3(t, VT_I32, VT_F32), vt_cpu_get_rows},                                                     \
        {VT_OP_GET_ROWS, VT_SIG3(t, VT_I32, VT_F16), vt_cpu_get_rows},
#define IDX(t)                                                                                                         \
    {VT_OP_INDEX_SELECT, VT_SIG2(t, VT_I32), vt_cpu_index_select},                                                     \
        {VT_OP_INDEX_SELECT, VT_SIG2(t, VT_I64), vt_cpu_index_select},

const vt_kernel vt_cpu_kernels_gather[] = {
    /* clang-format off */
    GET_ROWS_ROWS(VT_F32, 0) GET_ROWS_ROWS(VT_F16, 0) GET_ROWS_ROWS(VT_BF16, 0) VT_Q_FORMATS(GET_ROWS_ROWS)
    IDX(VT_F32) IDX(VT_F16) IDX(VT_BF16) IDX(VT_I8) IDX(VT_I16) IDX(VT_I32) IDX(VT_I64) IDX(VT_F64)
    /* clang-format on */
};

const uint32_t vt_cpu_n_kernels_gather = sizeof vt_cpu_kernels_gather / sizeof vt_cpu_kernels_gather[0];
