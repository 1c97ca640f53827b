/* cpu_op_matmul.c - MatMul (20): y[n,m] = sum_k x[n,k] * W[m,k], x f32,
 * W f32/f16/bf16 or a q block format (keep-quant), on the matrix engine
 * (cpu_mm.h): for block-format W with k >= 1024, x held as int16 per
 * 32-element block and the canonical reduction of cpu_qx.h; otherwise f32
 * accumulation in the canonical order of cpu_dot.h. Either way the result
 * is the same for any thread count and SIMD path. */
#include "config.h"

#include "cpu_mm.h"
#include "cpu_ops.h"

vt_status vt_cpu_matmul(vt_backend_ctx *ctx, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    (void)dev;
    const vt_operand *x = &a->in[0], *w = &a->in[1], *y = &a->out[0];
    int64_t k = x->shape[x->ndim - 1], m = w->shape[0];
    uint64_t row_bytes;
    if (!vt_dtype_row_bytes(w->dtype, k, &row_bytes))
        return vt_why(VT_E_SHAPE, why, why_size, "MatMul (20): W rows of k=%lld are not whole %s blocks", (long long)k,
                      vt_dtype_name(w->dtype));
    vt_cpu_mm p = {
        .wtype = w->dtype,
        .w = w->data,
        .w_row_bytes = (size_t)row_bytes,
        .m = m,
        .k = k,
        .n = m ? vt_cpu_elems(y) / m : 0,
        .x = x->data,
        .ldx = k,
        .y = y->data,
        .ldy = m,
    };
    if (vt_cpu_mm_run(ctx, &p) != VT_OK)
        return vt_why(VT_E_NO_MEMORY, why, why_size,
                      "MatMul (20): out of host memory for the int16 copy of x (%lld rows of k=%lld)", (long long)p.n,
                      (long long)k);
    return VT_OK;
}
