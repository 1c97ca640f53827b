/* cpu_op_index_select.c - IndexSelect (90): torch.index_select(src, dim,
 * idx) for every plain dtype, i32 or i64 indices, up to 4 dims. */
#include "config.h"

#include <string.h>

#include "cpu_ops.h"

vt_status vt_cpu_index_select(vt_backend_ctx *ctx, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    (void)ctx;
    (void)dev;
    const vt_operand *src = &a->in[0], *idx = &a->in[1], *dst = &a->out[0];
    const vt_params_index_select *p = a->params;
    int nd = (int)src->ndim;
    int dim = p->dim < 0 ? p->dim + nd : p->dim;
    size_t esize = vt_dtype_get(src->dtype)->block_bytes;
    int64_t outer = 1, inner = 1, n_src = src->shape[dim], n_idx = idx->shape[0];
    for (int i = 0; i < dim; i++)
        outer *= src->shape[i];
    for (int i = dim + 1; i < nd; i++)
        inner *= src->shape[i];
    /* Check every index before writing anything. */
    for (int64_t j = 0; j < n_idx; j++) {
        int64_t v = idx->dtype == VT_I64 ? ((const int64_t *)idx->data)[j] : ((const int32_t *)idx->data)[j];
        if (v < 0 || v >= n_src)
            return vt_why(VT_E_INVALID_ARG, why, why_size,
                          "IndexSelect (90): idx[%lld] = %lld is outside [0, %lld) of src dim %d", (long long)j,
                          (long long)v, (long long)n_src, dim);
    }
    size_t row = (size_t)inner * esize;
    const unsigned char *s = src->data;
    unsigned char *d = dst->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < n_idx; j++) {
            int64_t v = idx->dtype == VT_I64 ? ((const int64_t *)idx->data)[j] : ((const int32_t *)idx->data)[j];
            memcpy(d + ((size_t)o * (size_t)n_idx + (size_t)j) * row, s + ((size_t)o * (size_t)n_src + (size_t)v) * row,
                   row);
        }
    return VT_OK;
}
