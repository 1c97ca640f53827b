/* cuda_stub_kernels.c - the cuda-stub's few native kernels (only with
 * VT_CUDA_STUB_KERNELS=1): f32 Scale, Add, GetRows and Argmax. They run
 * when the stub's "device" executes a queue, on operands already resolved
 * to host memory, and validate data-dependent values as a device kernel
 * must (an index out of range writes zeros and reports, never reads out of
 * range). */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include <vt/vt_params.h>

#include "cuda_stub.h"

/* Elements of an operand. */
static int64_t elems(const vt_operand *o)
{
    int64_t n = 1;
    for (uint32_t i = 0; i < o->ndim; i++)
        n *= o->shape[i];
    return n;
}

static vt_status k_scale(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    (void)c, (void)dev, (void)why, (void)why_size;
    const float *x = a->in[0].data;
    float *y = a->out[0].data;
    float s = ((const vt_params_scale *)a->params)->s;
    for (int64_t i = 0, n = elems(&a->in[0]); i < n; i++)
        y[i] = x[i] * s;
    return VT_OK;
}

static vt_status k_add(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    (void)c, (void)dev, (void)why, (void)why_size;
    const float *x = a->in[0].data, *b = a->in[1].data;
    float *y = a->out[0].data;
    int64_t nb = elems(&a->in[1]);
    for (int64_t i = 0, n = elems(&a->in[0]); i < n; i++)
        y[i] = x[i] + b[nb ? i % nb : 0];
    return VT_OK;
}

static vt_status k_get_rows(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    (void)c, (void)dev;
    const float *table = a->in[0].data;
    const int32_t *idx = a->in[1].data;
    float *dst = a->out[0].data;
    int64_t rows = a->in[0].shape[0], n = a->in[0].ndim > 1 ? a->in[0].shape[a->in[0].ndim - 1] : 1;
    int64_t ni = elems(&a->in[1]);
    vt_status st = VT_OK;
    for (int64_t i = 0; i < ni; i++) {
        if (idx[i] < 0 || idx[i] >= rows) {
            memset(dst + i * n, 0, (size_t)n * sizeof *dst);
            if (st == VT_OK)
                st = vt_why(VT_E_INVALID_ARG, why, why_size, "idx[%lld] = %d is outside [0, %lld)", (long long)i,
                            idx[i], (long long)rows);
            continue;
        }
        memcpy(dst + i * n, table + idx[i] * n, (size_t)n * sizeof *dst);
    }
    return st;
}

static vt_status k_argmax(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    (void)c, (void)dev, (void)why, (void)why_size;
    const float *x = a->in[0].data;
    int32_t *out = a->out[0].data;
    int64_t n = a->in[0].ndim ? a->in[0].shape[a->in[0].ndim - 1] : 1, rows = n ? elems(&a->in[0]) / n : 0;
    for (int64_t r = 0; r < rows; r++) {
        int32_t best = 0;
        for (int64_t j = 1; j < n; j++)
            if (x[r * n + j] > x[r * n + best])
                best = (int32_t)j;
        out[r] = best;
    }
    return VT_OK;
}

/* The stub's limit on an Argmax row (for the accepts predicate). */
#define STUB_ARGMAX_MAX_ROW (1 << 20)

vt_status stub_accepts(vt_backend_ctx *c, int dev, const vt_kernel *k, const vt_op_args *args, char *why,
                       size_t why_size)
{
    (void)c, (void)dev;
    if (k->op == VT_OP_ARGMAX && args->in[0].ndim) {
        int64_t n = args->in[0].shape[args->in[0].ndim - 1];
        if (n > STUB_ARGMAX_MAX_ROW)
            return vt_why(VT_E_OP_MISSING, why, why_size, "Argmax row of %lld elements > %d (the stub kernel's limit)",
                          (long long)n, STUB_ARGMAX_MAX_ROW);
    }
    return VT_OK;
}

const vt_kernel vt_cuda_stub_kernels[VT_CUDA_STUB_N_KERNELS] = {
    {VT_OP_SCALE, VT_SIG1(VT_F32), k_scale},
    {VT_OP_ADD, VT_SIG1(VT_F32), k_add},
    {VT_OP_GET_ROWS, VT_SIG3(VT_F32, VT_I32, VT_F32), k_get_rows},
    {VT_OP_ARGMAX, VT_SIG1(VT_F32), k_argmax},
};
