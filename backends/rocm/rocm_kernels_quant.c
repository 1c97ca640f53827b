/* rocm_kernels_quant.c - the rocm backend's block-format family:
 * Dequantize, GetRows (the block-decoding gather), MatMul over block-format
 * weights and MoeExpertMatMul, for every "q" format of SPEC 7 (and the
 * plain float types where the op has them). These rows are what make the
 * device admit keep-quant residency for matmul, gather and moe-expert.
 * Indices are checked on the device first (kernels_check.hip); the
 * gathers read the safe copy the check writes. */
#include "config.h"

#include "rocm_common.h"

/* Block geometry of a dtype from the type table. */
static void geometry(uint32_t dtype, int *be, int *bb)
{
    const vt_dtype_info *t = vt_dtype_get(dtype);
    *be = (int)t->block_elems;
    *bb = (int)t->block_bytes;
}

static vt_status k_dequantize(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    int be, bb;
    geometry(a->in[0].dtype, &be, &bb);
    hipError_t e = vt_rocm_launch_dequantize(a->in[0].data, a->in[0].dtype, be, bb, a->out[0].data, a->out[0].dtype,
                                             vt_rocm_elems(&a->in[0]), s);
    return vt_rocm_done(&L_, e, "Dequantize (41)", why, why_size);
}

/* Queue the check of n i32 indices (each in [0, limit)) and return, in
 * L's scratch, the safe copy the gather must use. */
static vt_status check_indices(const rocm_call *L, uint32_t name, const void *ptr, int64_t n, int64_t limit,
                               void **safe, hipError_t *e, char *why, size_t why_size)
{
    vt_status st = vt_rocm_call_scratch(L, (uint64_t)n * 4, safe, why, why_size);
    if (st != VT_OK)
        return st;
    *e = vt_rocm_launch_check_range(L->q->err, L->a->op, name, ptr, 0, n, limit, -1, *safe, L->s);
    vt_rocm_checked(L);
    return VT_OK;
}

static vt_status k_get_rows(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *t = &a->in[0], *idx = &a->in[1];
    int64_t n_idx = vt_rocm_elems(idx);
    void *safe;
    hipError_t e = hipSuccess;
    vt_status st = check_indices(&L_, VT_ROCM_NAME_IDX, idx->data, n_idx, t->shape[0], &safe, &e, why, why_size);
    if (st != VT_OK)
        return st;
    int be, bb;
    geometry(t->dtype, &be, &bb);
    if (e == hipSuccess && t->shape[0] > 0) /* an empty table has no row to gather */
        e = vt_rocm_launch_get_rows(t->data, t->dtype, be, bb, safe, a->out[0].data, a->out[0].dtype, n_idx,
                                    t->shape[1], s);
    return vt_rocm_done(&L_, e, "GetRows (40)", why, why_size);
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
    return vt_rocm_done(&L_, e, "MatMul (20)", why, why_size);
}

static vt_status k_moe_matmul(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *x = &a->in[0], *w = &a->in[1], *ids = &a->in[2];
    int64_t T = ids->shape[0], K = ids->shape[1], E = w->shape[0], m = w->shape[1], k = w->shape[2];
    void *safe;
    hipError_t e = hipSuccess;
    vt_status st = check_indices(&L_, VT_ROCM_NAME_IDS, ids->data, T * K, E, &safe, &e, why, why_size);
    if (st != VT_OK)
        return st;
    int be, bb;
    geometry(w->dtype, &be, &bb);
    if (e == hipSuccess && E > 0)
        e = vt_rocm_launch_moe_matmul(x->data, x->ndim == 3, w->data, w->dtype, be, bb, safe, a->out[0].data, T, K, m,
                                      k, s);
    return vt_rocm_done(&L_, e, "MoeExpertMatMul (23)", why, why_size);
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
