/* rocm_kernels_matmul.c - the rocm backend's matmul family (the catalogue's
 * family of that name, core/ops/matmul.c): MatMul with f32/f16/bf16 weights and
 * every "q" format (from VT_ROCM_GEMM_MIN_N rows on, bf16/f16/q4_0/q8_0
 * through the GEMM kernel, or the vendor library when built with it),
 * MoeExpertMatMul likewise (expert ids checked on the device first, in the
 * product's own first kernel at one token and, on NVIDIA, at 2 or more
 * (kernels_mmv_mma.hip's chunks of one expert's pairs); grouped by expert
 * on the device where kernels_matmul_moe.hip takes the weight type and
 * token count). The q rows are what make the device admit keep-quant
 * residency for matmul and moe-expert.
 * The C side of each kernel: unpack the operands, queue the device checks
 * of data-dependent values, launch on the call's stream, report the launch
 * status; then the family's kernel table rows. */
#include "config.h"

#include "rocm_common.h"
#include "rocm_mmv.h"
#include "rocm_vendor_blas.h"

/* The prefill routes of a product, tried before the row kernels: the vendor
 * library (built with --with-vendor-blas, dense f16/bf16), then the GEMM
 * kernel (kernels_gemm.hip). *taken says whether one queued it. */
static vt_status matmul_wide(const rocm_call *L, const vt_op_args *a, int64_t n, int64_t m, int64_t k, hipError_t *e,
                             int *taken, char *why, size_t why_size)
{
    const vt_operand *x = &a->in[0], *w = &a->in[1];
    void *scratch = NULL;
    uint64_t bytes = vt_rocm_vendor_gemm_scratch_bytes(w->dtype, n, m, k);
    *taken = 0;
    if (bytes) {
        vt_status st = vt_rocm_call_scratch(L, bytes, &scratch, why, why_size);
        if (st != VT_OK)
            return st;
        *e = vt_rocm_vendor_gemm(x->data, w->data, w->dtype, a->out[0].data, n, m, k, scratch, L->s);
        *taken = 1;
        return VT_OK;
    }
    if (!vt_rocm_gemm_takes(w->dtype, n, m, k, x->data, w->data, L->dev))
        return VT_OK;
    vt_status st = vt_rocm_call_scratch(L, vt_rocm_gemm_scratch_bytes(w->dtype, n, m, k), &scratch, why, why_size);
    if (st != VT_OK)
        return st;
    *e = vt_rocm_launch_gemm(x->data, w->data, w->dtype, a->out[0].data, n, m, k, scratch, L->dev, L->s);
    *taken = 1;
    return VT_OK;
}

/* The decode widths (n = 2..31, below matmul_wide) on matrix instructions
 * with x split once into the call's scratch, unless taken already; *taken
 * says whether it queued the product. */
static vt_status matmul_pre(const rocm_call *L, const vt_op_args *a, int64_t n, int64_t m, int64_t k, hipError_t *e,
                            int *taken, char *why, size_t why_size)
{
    const vt_operand *x = &a->in[0], *w = &a->in[1];
    const uint64_t pre = *taken ? 0 : vt_rocm_mmv_pre_scratch_bytes(w->dtype, n, m, k);
    if (!pre)
        return VT_OK;
    void *scratch = NULL;
    vt_status st = vt_rocm_call_scratch(L, pre, &scratch, why, why_size);
    if (st != VT_OK)
        return st;
    *e = vt_rocm_launch_mmv_pre(x->data, w->data, w->dtype, a->out[0].data, n, m, k, scratch, L->s, taken);
    return VT_OK;
}

static vt_status k_matmul_dense(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *x = &a->in[0], *w = &a->in[1];
    int64_t k = x->shape[x->ndim - 1];
    int64_t n = k ? vt_rocm_elems(x) / k : vt_rocm_elems(&a->out[0]) / (w->shape[0] ? w->shape[0] : 1);
    hipError_t e = hipSuccess;
    int taken = 0;
    vt_status st = matmul_wide(&L_, a, n, w->shape[0], k, &e, &taken, why, why_size);
    if (st != VT_OK)
        return st;
    st = matmul_pre(&L_, a, n, w->shape[0], k, &e, &taken, why, why_size);
    if (st != VT_OK)
        return st;
    if (!taken && e == hipSuccess)
        e = vt_rocm_launch_matmul_dense(x->data, w->data, w->dtype, a->out[0].data, n, w->shape[0], k, s);
    return vt_rocm_done(&L_, e, "MatMul (20)", why, why_size);
}

static vt_status k_matmul_q(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *x = &a->in[0], *w = &a->in[1];
    int64_t k = x->shape[x->ndim - 1], m = w->shape[0];
    int64_t n = m ? vt_rocm_elems(&a->out[0]) / m : 0;
    int be, bb;
    vt_rocm_geometry(w->dtype, &be, &bb);
    hipError_t e = hipSuccess;
    int taken = 0;
    vt_status st = matmul_wide(&L_, a, n, m, k, &e, &taken, why, why_size);
    if (st != VT_OK)
        return st;
    st = matmul_pre(&L_, a, n, m, k, &e, &taken, why, why_size);
    if (st != VT_OK)
        return st;
    if (!taken && e == hipSuccess)
        e = vt_rocm_launch_matmul_q(x->data, w->data, w->dtype, be, bb, a->out[0].data, n, m, k, s);
    return vt_rocm_done(&L_, e, "MatMul (20)", why, why_size);
}

static vt_status k_moe_matmul(vt_backend_ctx *c, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    STREAM();
    const vt_operand *x = &a->in[0], *w = &a->in[1], *ids = &a->in[2];
    int64_t T = ids->shape[0], K = ids->shape[1], E = w->shape[0], m = w->shape[1], k = w->shape[2];
    int taken = 0;
    /* one token, or a few as the one-token kernel's slots: one kernel
     * checks the ids and computes the slots */
    hipError_t e = hipSuccess;
    if (E > 0 && T == 1)
        e = vt_rocm_launch_moe_one_checked(L_.q->err, a->op, x->data, x->ndim == 3, w->data, w->dtype, ids->data, E,
                                           a->out[0].data, K, m, k, s, &taken);
    else if (E > 0)
        e = vt_rocm_launch_moe_slots_checked(L_.q->err, a->op, x->data, x->ndim == 3, w->data, w->dtype, ids->data, E,
                                             a->out[0].data, T, K, m, k, s, &taken);
    /* two or more tokens: one kernel checks the ids, groups the pairs by
     * expert and splits x, then the product (kernels_mmv_mma.hip) */
    const uint64_t chunks =
        E > 0 && !taken && e == hipSuccess ? vt_rocm_moe_chunks_scratch_bytes(w->dtype, T, K, k, x->ndim == 3) : 0;
    if (chunks) {
        void *scratch = NULL;
        vt_status st = vt_rocm_call_scratch(&L_, chunks, &scratch, why, why_size);
        if (st != VT_OK)
            return st;
        e = vt_rocm_launch_moe_chunks_checked(L_.q->err, a->op, x->data, x->ndim == 3, w->data, w->dtype, ids->data, E,
                                              a->out[0].data, T, K, m, k, scratch, s, &taken);
    }
    if (taken) {
        vt_rocm_checked(&L_);
        return vt_rocm_done(&L_, e, "MoeExpertMatMul (23)", why, why_size);
    }
    /* scratch: the checked ids, then the grouping table of the grouped
     * kernels (none when they do not take the shape) */
    void *safe, *tab;
    vt_status st =
        vt_rocm_check_indices(&L_, VT_ROCM_NAME_IDS, ids->data, T * K, E,
                              vt_rocm_moe_grouped_scratch_bytes(w->dtype, T, K), &safe, &tab, &e, why, why_size);
    if (st != VT_OK)
        return st;
    int be, bb;
    vt_rocm_geometry(w->dtype, &be, &bb);
    if (e == hipSuccess && E > 0)
        e = vt_rocm_launch_moe_grouped(x->data, x->ndim == 3, w->data, w->dtype, safe, tab, a->out[0].data, T, K, m, k,
                                       s, &taken);
    if (e == hipSuccess && E > 0 && !taken)
        e = vt_rocm_launch_moe_matmul(x->data, x->ndim == 3, w->data, w->dtype, be, bb, safe, a->out[0].data, T, K, m,
                                      k, s);
    return vt_rocm_done(&L_, e, "MoeExpertMatMul (23)", why, why_size);
}

/* The float types (the 13 block formats are VT_Q_FORMATS). */
#define F_EACH(X) X(VT_F32, f32) X(VT_F16, f16) X(VT_BF16, bf16)

#define MMQ(t, ...) {VT_OP_MATMUL, VT_SIG2(VT_F32, t), k_matmul_q},
#define MOE(t, ...) {VT_OP_MOE_EXPERT_MATMUL, VT_SIG2(VT_F32, t), k_moe_matmul},

const vt_kernel vt_rocm_kernels_matmul[] = {
    {VT_OP_MATMUL, VT_SIG2(VT_F32, VT_F32), k_matmul_dense},
    {VT_OP_MATMUL, VT_SIG2(VT_F32, VT_F16), k_matmul_dense},
    {VT_OP_MATMUL, VT_SIG2(VT_F32, VT_BF16), k_matmul_dense},
    /* clang-format off */
    VT_Q_FORMATS(MMQ) VT_Q_FORMATS(MOE) F_EACH(MOE)
    /* clang-format on */
};

const uint32_t vt_rocm_n_kernels_matmul = sizeof vt_rocm_kernels_matmul / sizeof vt_rocm_kernels_matmul[0];
