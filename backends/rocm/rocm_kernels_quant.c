/* rocm_kernels_quant.c - the rocm backend's block-format family:
 * Dequantize, GetRows (the block-decoding gather), MatMul over block-format
 * weights and MoeExpertMatMul, for every "q" format of SPEC 7 (and the
 * plain float types where the op has them). These rows are what make the
 * device admit keep-quant residency for matmul, gather and moe-expert.
 * Indices are read back and checked before any launch. */
#include "config.h"

#include <stdlib.h>

#include "rocm_common.h"

/* Block geometry of a dtype from the type table. */
static void geometry(uint32_t dtype, int *be, int *bb)
{
    const vt_dtype_info *t = vt_dtype_get((int)dtype);
    *be = (int)t->block_elems;
    *bb = (int)t->block_bytes;
}

#define STREAM()                                                                                                       \
    hipStream_t s;                                                                                                     \
    vt_status st_ = vt_rocm_stream(c, dev, &s, why, why_size);                                                         \
    if (st_ != VT_OK)                                                                                                  \
    return st_

static vt_status k_dequantize(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    int be, bb;
    geometry(a->in[0].dtype, &be, &bb);
    hipError_t e = vt_rocm_launch_dequantize(a->in[0].data, a->in[0].dtype, be, bb, a->out[0].data, a->out[0].dtype,
                                             vt_rocm_elems(&a->in[0]), s);
    return vt_rocm_done(e, "Dequantize (41)", c, dev, why, why_size);
}

/* Read n indices and check each is in [0, limit). */
static vt_status check_indices(vt_backend_ctx *c, int dev, const char *op, const char *name, const void *ptr, int64_t n,
                               int64_t limit, char *why, size_t why_size)
{
    int64_t *v = malloc(sizeof *v * (size_t)(n ? n : 1));
    if (!v)
        return vt_why(VT_E_NO_MEMORY, why, why_size, "out of host memory");
    vt_status st = vt_rocm_read_indices(c, dev, ptr, n, false, v, why, why_size);
    for (int64_t i = 0; st == VT_OK && i < n; i++)
        if (v[i] < 0 || v[i] >= limit)
            st = vt_why(VT_E_INVALID_ARG, why, why_size, "%s: %s[%lld] = %lld is outside [0, %lld)", op, name,
                        (long long)i, (long long)v[i], (long long)limit);
    free(v);
    return st;
}

static vt_status k_get_rows(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *t = &a->in[0], *idx = &a->in[1];
    int64_t n_idx = vt_rocm_elems(idx);
    vt_status st = check_indices(c, dev, "GetRows (40)", "idx", idx->data, n_idx, t->shape[0], why, why_size);
    if (st != VT_OK)
        return st;
    int be, bb;
    geometry(t->dtype, &be, &bb);
    hipError_t e = vt_rocm_launch_get_rows(t->data, t->dtype, be, bb, idx->data, a->out[0].data, a->out[0].dtype, n_idx,
                                           t->shape[1], s);
    return vt_rocm_done(e, "GetRows (40)", c, dev, why, why_size);
}

static vt_status k_matmul_q(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *x = &a->in[0], *w = &a->in[1];
    int64_t k = x->shape[x->ndim - 1], m = w->shape[0];
    int64_t n = m ? vt_rocm_elems(&a->out[0]) / m : 0;
    int be, bb;
    geometry(w->dtype, &be, &bb);
    hipError_t e = vt_rocm_launch_matmul_q(x->data, w->data, w->dtype, be, bb, a->out[0].data, n, m, k, s);
    return vt_rocm_done(e, "MatMul (20)", c, dev, why, why_size);
}

static vt_status k_moe_matmul(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *x = &a->in[0], *w = &a->in[1], *ids = &a->in[2];
    int64_t T = ids->shape[0], K = ids->shape[1], E = w->shape[0], m = w->shape[1], k = w->shape[2];
    vt_status st = check_indices(c, dev, "MoeExpertMatMul (23)", "ids", ids->data, T * K, E, why, why_size);
    if (st != VT_OK)
        return st;
    int be, bb;
    geometry(w->dtype, &be, &bb);
    hipError_t e = vt_rocm_launch_moe_matmul(x->data, x->ndim == 3, w->data, w->dtype, be, bb, ids->data,
                                             a->out[0].data, T, K, m, k, s);
    return vt_rocm_done(e, "MoeExpertMatMul (23)", c, dev, why, why_size);
}

/* The 13 formats of SPEC 7, and the float types. */
#define Q_EACH(X)                                                                                                      \
    X(VT_Q4_0)                                                                                                         \
    X(VT_Q4_1)                                                                                                         \
    X(VT_Q5_0)                                                                                                         \
    X(VT_Q5_1) X(VT_Q8_0) X(VT_Q2_K) X(VT_Q3_K) X(VT_Q4_K) X(VT_Q5_K) X(VT_Q6_K) X(VT_IQ4_NL) X(VT_IQ4_XS) X(VT_MXFP4)
#define F_EACH(X) X(VT_F32) X(VT_F16) X(VT_BF16)

#define DEQ(t)                                                                                                         \
    {VT_OP_DEQUANTIZE, VT_SIG2(t, VT_F32), k_dequantize}, {VT_OP_DEQUANTIZE, VT_SIG2(t, VT_F16), k_dequantize},        \
        {VT_OP_DEQUANTIZE, VT_SIG2(t, VT_BF16), k_dequantize},
#define ROWS(t)                                                                                                        \
    {VT_OP_GET_ROWS, VT_SIG3(t, VT_I32, VT_F32), k_get_rows}, {VT_OP_GET_ROWS, VT_SIG3(t, VT_I32, VT_F16), k_get_rows},
#define MMQ(t) {VT_OP_MATMUL, VT_SIG2(VT_F32, t), k_matmul_q},
#define MOE(t) {VT_OP_MOE_EXPERT_MATMUL, VT_SIG2(VT_F32, t), k_moe_matmul},

const vt_kernel vt_rocm_kernels_quant[] = {Q_EACH(DEQ) Q_EACH(ROWS) F_EACH(ROWS) Q_EACH(MMQ) Q_EACH(MOE) F_EACH(MOE)};

const uint32_t vt_rocm_n_kernels_quant = sizeof vt_rocm_kernels_quant / sizeof vt_rocm_kernels_quant[0];
