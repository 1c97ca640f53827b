/* cpu_op_copy.c - Copy (1): casts between f32/f16/bf16 and i32 copies. */
#include "config.h"

#include <string.h>

#include "cpu_ops.h"

vt_status vt_cpu_copy(vt_backend_ctx *ctx, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    (void)ctx;
    (void)dev;
    (void)why;
    (void)why_size;
    const vt_operand *src = &a->in[0], *dst = &a->out[0];
    int64_t n = vt_cpu_elems(src);
    if (src->dtype == dst->dtype) {
        memmove(dst->data, src->data, (size_t)src->nbytes);
        return VT_OK;
    }
    for (int64_t i = 0; i < n; i++)
        vt_cpu_store(dst->data, dst->dtype, i, vt_cpu_load(src->data, src->dtype, i));
    return VT_OK;
}
