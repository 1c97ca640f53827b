/* rocm_kernels.c - the rocm backend's static kernel table and the C side
 * of each kernel: unpack the operands, launch on the device's stream,
 * report the launch status. */
#include "config.h"

#include "rocm_backend.h"
#include "rocm_launch.h"

static int64_t elems(const vt_operand *o)
{
    int64_t n = 1;
    for (uint32_t i = 0; i < o->ndim; i++)
        n *= o->shape[i];
    return n;
}

/* Make dev current and return its stream, or fail. */
static vt_status stream_of(vt_backend_ctx *c, int dev, hipStream_t *s, char *why, size_t why_size)
{
    vt_status st = vt_rocm_use(c, dev, why, why_size);
    if (st != VT_OK)
        return st;
    if (!c->dev[dev].stream_ok)
        return vt_why(VT_E_DEVICE, why, why_size, "rocm:%d has no stream", dev);
    *s = c->dev[dev].stream;
    return VT_OK;
}

static vt_status done(hipError_t e, const char *what, vt_backend_ctx *c, int dev, char *why, size_t why_size)
{
    if (e == hipSuccess)
        e = hipStreamSynchronize(c->dev[dev].stream);
    return e == hipSuccess ? VT_OK : vt_rocm_fail(e, what, dev, why, why_size);
}

static vt_status k_copy(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    hipStream_t s;
    vt_status st = stream_of(c, dev, &s, why, why_size);
    if (st != VT_OK)
        return st;
    const vt_operand *src = &a->in[0], *dst = &a->out[0];
    hipError_t e;
    if (src->dtype == dst->dtype)
        e = hipMemcpyAsync(dst->data, src->data, (size_t)src->nbytes, hipMemcpyDeviceToDevice, s);
    else
        e = vt_rocm_launch_cast(src->data, src->dtype, dst->data, dst->dtype, elems(src), s);
    return done(e, "Copy (1)", c, dev, why, why_size);
}

static vt_status k_add(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    hipStream_t s;
    vt_status st = stream_of(c, dev, &s, why, why_size);
    if (st != VT_OK)
        return st;
    hipError_t e =
        vt_rocm_launch_add_f32(a->in[0].data, a->in[1].data, a->out[0].data, elems(&a->in[0]), elems(&a->in[1]), s);
    return done(e, "Add (2)", c, dev, why, why_size);
}

static vt_status k_matmul_dense(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    hipStream_t s;
    vt_status st = stream_of(c, dev, &s, why, why_size);
    if (st != VT_OK)
        return st;
    const vt_operand *x = &a->in[0], *w = &a->in[1];
    int64_t k = x->shape[x->ndim - 1];
    int64_t n = k ? elems(x) / k : elems(&a->out[0]) / (w->shape[0] ? w->shape[0] : 1);
    hipError_t e = vt_rocm_launch_matmul_dense(x->data, w->data, w->dtype, a->out[0].data, n, w->shape[0], k, s);
    return done(e, "MatMul (20)", c, dev, why, why_size);
}

#define SIG1(a)                                                                                                        \
    {                                                                                                                  \
        1,                                                                                                             \
        {                                                                                                              \
            (a)                                                                                                        \
        }                                                                                                              \
    }
#define SIG2(a, b)                                                                                                     \
    {                                                                                                                  \
        2,                                                                                                             \
        {                                                                                                              \
            (a), (b)                                                                                                   \
        }                                                                                                              \
    }

const vt_kernel vt_rocm_kernels[] = {
    {VT_OP_COPY, SIG2(VT_F32, VT_F32), k_copy},
    {VT_OP_COPY, SIG2(VT_F32, VT_F16), k_copy},
    {VT_OP_COPY, SIG2(VT_F32, VT_BF16), k_copy},
    {VT_OP_COPY, SIG2(VT_F16, VT_F32), k_copy},
    {VT_OP_COPY, SIG2(VT_F16, VT_F16), k_copy},
    {VT_OP_COPY, SIG2(VT_F16, VT_BF16), k_copy},
    {VT_OP_COPY, SIG2(VT_BF16, VT_F32), k_copy},
    {VT_OP_COPY, SIG2(VT_BF16, VT_F16), k_copy},
    {VT_OP_COPY, SIG2(VT_BF16, VT_BF16), k_copy},
    {VT_OP_COPY, SIG2(VT_I32, VT_I32), k_copy},
    {VT_OP_ADD, SIG1(VT_F32), k_add},
    {VT_OP_MATMUL, SIG2(VT_F32, VT_F32), k_matmul_dense},
    {VT_OP_MATMUL, SIG2(VT_F32, VT_F16), k_matmul_dense},
    {VT_OP_MATMUL, SIG2(VT_F32, VT_BF16), k_matmul_dense},
};

const uint32_t vt_rocm_n_kernels = sizeof vt_rocm_kernels / sizeof vt_rocm_kernels[0];
