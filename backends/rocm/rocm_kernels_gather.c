/* rocm_kernels_gather.c - the rocm backend's gather family (the catalogue's
 * family of that name, core/ops/gather.c): GetRows (the block-decoding gather)
 * from f32/f16/bf16 and every "q" format to f32/f16, IndexSelect for every
 * plain dtype with i32 or i64 indices. Indices are checked on the device
 * first (kernels_check.hip); the gathers read the safe copy the check
 * writes.
 * The C side of each kernel: unpack the operands, queue the device checks
 * of data-dependent values, launch on the call's stream, report the launch
 * status; then the family's kernel table rows. */
#include "config.h"

#include <vt/vt_params.h>

#include "rocm_common.h"

#define X(i) (a->in[i].data)
#define Y(i) (a->out[i].data)

static vt_status k_get_rows(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *t = &a->in[0], *idx = &a->in[1];
    int64_t n_idx = vt_rocm_elems(idx);
    void *safe, *unused;
    hipError_t e = hipSuccess;
    vt_status st = vt_rocm_check_indices(&L_, VT_ROCM_NAME_IDX, idx->data, n_idx, t->shape[0], 0, &safe, &unused, &e,
                                         why, why_size);
    if (st != VT_OK)
        return st;
    int be, bb;
    vt_rocm_geometry(t->dtype, &be, &bb);
    if (e == hipSuccess && t->shape[0] > 0) /* an empty table has no row to gather */
        e = vt_rocm_launch_get_rows(t->data, t->dtype, be, bb, safe, a->out[0].data, a->out[0].dtype, n_idx,
                                    t->shape[1], s);
    return vt_rocm_done(&L_, e, "GetRows (40)", why, why_size);
}

static vt_status k_index_select(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *src = &a->in[0], *idx = &a->in[1];
    const vt_params_index_select *p = a->params;
    int nd = (int)src->ndim, dim = p->dim < 0 ? p->dim + nd : p->dim;
    int64_t outer = 1, inner = 1, n_src = src->shape[dim], n_idx = idx->shape[0];
    for (int i = 0; i < dim; i++)
        outer *= src->shape[i];
    for (int i = dim + 1; i < nd; i++)
        inner *= src->shape[i];
    int wide = idx->dtype == VT_I64;
    void *safe;
    vt_status st = vt_rocm_call_scratch(&L_, (uint64_t)n_idx * (wide ? 8 : 4), &safe, why, why_size);
    if (st != VT_OK)
        return st;
    hipError_t e =
        vt_rocm_launch_check_range(L_.q->err, a->op, VT_ROCM_NAME_IDX, X(1), wide, n_idx, n_src, dim, safe, s);
    vt_rocm_checked(&L_);
    int64_t row_bytes = inner * (int64_t)vt_dtype_get(src->dtype)->block_bytes;
    if (e == hipSuccess && n_src > 0) /* with no source rows every index is bad: nothing to gather */
        e = vt_rocm_launch_index_select(X(0), safe, wide, Y(0), outer, n_src, n_idx, row_bytes, s);
    return vt_rocm_done(&L_, e, "IndexSelect (90)", why, why_size);
}

/* The float types (the 13 block formats are VT_Q_FORMATS). */
#define F_EACH(X) X(VT_F32, f32) X(VT_F16, f16) X(VT_BF16, bf16)

#define ROWS(t, ...)                                                                                                   \
    {VT_OP_GET_ROWS, VT_SIG3(t, VT_I32, VT_F32), k_get_rows}, {VT_OP_GET_ROWS, VT_SIG3(t, VT_I32, VT_F16), k_get_rows},
#define IDX(t)                                                                                                         \
    {VT_OP_INDEX_SELECT, VT_SIG2(t, VT_I32), k_index_select}, {VT_OP_INDEX_SELECT, VT_SIG2(t, VT_I64), k_index_select},

const vt_kernel vt_rocm_kernels_gather[] = {
    /* clang-format off */
    VT_Q_FORMATS(ROWS) F_EACH(ROWS)
    IDX(VT_F32) IDX(VT_F16) IDX(VT_BF16) IDX(VT_I8) IDX(VT_I16) IDX(VT_I32) IDX(VT_I64) IDX(VT_F64)
    /* clang-format on */
};

const uint32_t vt_rocm_n_kernels_gather = sizeof vt_rocm_kernels_gather / sizeof vt_rocm_kernels_gather[0];
