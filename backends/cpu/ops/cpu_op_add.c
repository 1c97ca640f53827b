/* cpu_op_add.c - Add (2): y = a + b with b broadcast over leading dims. */
#include "config.h"

#include "cpu_ops.h"

vt_status vt_cpu_add(vt_backend_ctx *ctx, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    (void)ctx;
    (void)dev;
    (void)why;
    (void)why_size;
    const float *x = a->in[0].data, *b = a->in[1].data;
    float *y = a->out[0].data;
    int64_t n = vt_cpu_elems(&a->in[0]), nb = vt_cpu_elems(&a->in[1]);
    if (nb == 0)
        return VT_OK;
    for (int64_t i = 0; i < n; i += nb)
        for (int64_t j = 0; j < nb; j++)
            y[i + j] = x[i + j] + b[j];
    return VT_OK;
}
