/* cpu_op_matmul.c - MatMul (20) for dense weights: y = x W^T, f32 accumulation. */
#include "config.h"

#include "cpu_ops.h"

vt_status vt_cpu_matmul(vt_backend_ctx *ctx, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    (void)ctx;
    (void)dev;
    (void)why;
    (void)why_size;
    const vt_operand *x = &a->in[0], *w = &a->in[1];
    const float *xd = x->data;
    float *y = a->out[0].data;
    int64_t k = x->shape[x->ndim - 1];
    int64_t n = k ? vt_cpu_elems(x) / k : 0;
    int64_t m = w->shape[0];
    if (k == 0) {
        for (int64_t i = 0; i < vt_cpu_elems(&a->out[0]); i++)
            y[i] = 0.0f;
        return VT_OK;
    }
    for (int64_t r = 0; r < n; r++) {
        const float *xr = xd + r * k;
        for (int64_t c = 0; c < m; c++) {
            float acc = 0.0f;
            for (int64_t i = 0; i < k; i++)
                acc += xr[i] * vt_cpu_load(w->data, w->dtype, c * k + i);
            y[r * m + c] = acc;
        }
    }
    return VT_OK;
}
