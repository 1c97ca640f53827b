/* rocm_kernels_convert.c - the rocm backend's convert family (the catalogue's
 * family of that name, core/ops/convert.c): Copy between f32/f16/bf16 and of
 * i32; Dequantize of every "q" format of SPEC 7 to f32/f16/bf16.
 * The C side of each kernel: unpack the operands, queue the device checks
 * of data-dependent values, launch on the call's stream, report the launch
 * status; then the family's kernel table rows. */
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

static vt_status k_dequantize(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    int be, bb;
    vt_rocm_geometry(a->in[0].dtype, &be, &bb);
    hipError_t e = vt_rocm_launch_dequantize(a->in[0].data, a->in[0].dtype, be, bb, a->out[0].data, a->out[0].dtype,
                                             vt_rocm_elems(&a->in[0]), s);
    return vt_rocm_done(&L_, e, "Dequantize (41)", why, why_size);
}

/* The float types (the 13 block formats are VT_Q_FORMATS). */
#define F_EACH(X) X(VT_F32, f32) X(VT_F16, f16) X(VT_BF16, bf16)

#define DEQ(t, ...)                                                                                                    \
    {VT_OP_DEQUANTIZE, VT_SIG2(t, VT_F32), k_dequantize}, {VT_OP_DEQUANTIZE, VT_SIG2(t, VT_F16), k_dequantize},        \
        {VT_OP_DEQUANTIZE, VT_SIG2(t, VT_BF16), k_dequantize},

const vt_kernel vt_rocm_kernels_convert[] = {
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
    /* clang-format off */
    VT_Q_FORMATS(DEQ)
    /* clang-format on */
};

const uint32_t vt_rocm_n_kernels_convert = sizeof vt_rocm_kernels_convert / sizeof vt_rocm_kernels_convert[0];
