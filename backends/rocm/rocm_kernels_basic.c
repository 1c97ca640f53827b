/* rocm_kernels_basic.c - Copy, Add and dense MatMul: the C side of each
 * kernel (unpack the operands, launch on the device's stream, report the
 * launch status) and their table rows. */
#include "config.h"

#include "rocm_common.h"

static vt_status k_copy(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *src = &a->in[0], *dst = &a->out[0];
    hipError_t e;
    if (src->dtype == dst->dtype)
        e = hipMemcpyAsync(dst->data, src->data, (size_t)src->nbytes, hipMemcpyDeviceToDevice, s);
    else
        e = vt_rocm_launch_cast(src->data, src->dtype, dst->data, dst->dtype, vt_rocm_elems(src), s);
    return vt_rocm_done(&L_, e, "Copy (1)", why, why_size);
}

static vt_status k_add(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    hipError_t e = vt_rocm_launch_add_f32(a->in[0].data, a->in[1].data, a->out[0].data, vt_rocm_elems(&a->in[0]),
                                          vt_rocm_elems(&a->in[1]), s);
    return vt_rocm_done(&L_, e, "Add (2)", why, why_size);
}

static vt_status k_matmul_dense(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *x = &a->in[0], *w = &a->in[1];
    int64_t k = x->shape[x->ndim - 1];
    int64_t n = k ? vt_rocm_elems(x) / k : vt_rocm_elems(&a->out[0]) / (w->shape[0] ? w->shape[0] : 1);
    hipError_t e = vt_rocm_launch_matmul_dense(x->data, w->data, w->dtype, a->out[0].data, n, w->shape[0], k, s);
    return vt_rocm_done(&L_, e, "MatMul (20)", why, why_size);
}

const vt_kernel vt_rocm_kernels_basic[] = {
    {VT_OP_COPY, VT_SIG2(VT_F32, VT_F32), k_copy},
    {VT_OP_COPY, VT_SIG2(VT_F32, VT_F16), k_copy},
    {VT_OP_COPY, VT_SIG2(VT_F32, VT_BF16), k_copy},
    {VT_OP_COPY, VT_SIG2(VT_F16, VT_F32), k_copy},
    {VT_OP_COPY, VT_SIG2(VT_F16, VT_F16), k_copy},
    {VT_OP_COPY, VT_SIG2(VT_F16, VT_BF16), k_copy},
    {VT_OP_COPY, VT_SIG2(VT_BF16, VT_F32), k_copy},
    {VT_OP_COPY, VT_SIG2(VT_BF16, VT_F16), k_copy},
    {VT_OP_COPY, VT_SIG2(VT_BF16, VT_BF16), k_copy},
    {VT_OP_COPY, VT_SIG2(VT_I32, VT_I32), k_copy},
    {VT_OP_ADD, VT_SIG1(VT_F32), k_add},
    {VT_OP_MATMUL, VT_SIG2(VT_F32, VT_F32), k_matmul_dense},
    {VT_OP_MATMUL, VT_SIG2(VT_F32, VT_F16), k_matmul_dense},
    {VT_OP_MATMUL, VT_SIG2(VT_F32, VT_BF16), k_matmul_dense},
};

const uint32_t vt_rocm_n_kernels_basic = sizeof vt_rocm_kernels_basic / sizeof vt_rocm_kernels_basic[0];
