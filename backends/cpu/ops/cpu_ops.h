/* cpu_ops.h - the cpu backend's kernels, one function per op (in
 * cpu_op_<op>.c), declared by the catalogue's op families (core/ops/
 * <family>.c) as the kernel tables cpu_kernels_<family>.c list them; and the
 * helpers the kernels share.
 *
 * Every kernel trusts what the core checked (counts, dtypes, shapes,
 * params) and checks the data-dependent values itself (indices, slots,
 * accepted counts, windows, NaN) before it writes anything; a refusal names
 * the op and its id, the operand and the position. All accumulation is
 * f32, and each output element is reduced by one thread in a fixed order,
 * so results are bit-identical for any VT_NUM_THREADS. */
#ifndef VT_CPU_OPS_H
#define VT_CPU_OPS_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include <vt/vt_params.h>

#include "cpu_backend.h"

/* The signature every kernel has. */
#define VT_CPU_KERNEL(name)                                                                                            \
    vt_status name(vt_backend_ctx *ctx, int dev, const vt_op_args *a, char *why, size_t why_size)

/* The kernel rows of each family (ops/cpu_kernels_<family>.c):
 * vt_cpu_kernels_<family>[] and vt_cpu_n_kernels_<family>. */
VT_OP_FAMILIES(VT_KERNEL_FAMILY_DECLARE, vt_cpu)

/* ---- convert ---- */
/* Copy (1): cast between f32/f16/bf16, or copy i32. */
VT_CPU_KERNEL(vt_cpu_copy);
/* Dequantize (41): a whole q tensor to f32/f16/bf16 (exact decode, then
 * round to nearest even for f16/bf16). */
VT_CPU_KERNEL(vt_cpu_dequantize);

/* ---- elementwise ---- */
/* Add (2): y = a + b, b broadcast over the leading dims of a (f32). */
VT_CPU_KERNEL(vt_cpu_add);
/* Mul (3): y = a * b, b broadcast over the leading dims of a. */
VT_CPU_KERNEL(vt_cpu_mul);
/* Scale (4): y = x * s. */
VT_CPU_KERNEL(vt_cpu_scale);
/* Silu (11): y = x * sigmoid(x). */
VT_CPU_KERNEL(vt_cpu_silu);
/* Gelu (12): the tanh approximation. */
VT_CPU_KERNEL(vt_cpu_gelu);
/* Sigmoid (13): y = 1 / (1 + exp(-x)). */
VT_CPU_KERNEL(vt_cpu_sigmoid);
/* SwiGlu (14): y = silu(g) * u. */
VT_CPU_KERNEL(vt_cpu_swiglu);
/* GdnGate (16): g = A * softplus(a + dt_bias) (softplus exact), beta = sigmoid(b). */
VT_CPU_KERNEL(vt_cpu_gdn_gate);
/* MoeCombine (24): y[t] = sum_i w[t,i] * h[t,i]. */
VT_CPU_KERNEL(vt_cpu_moe_combine);

/* ---- rows ---- */
/* RmsNorm (5): y = x / sqrt(mean(x^2) + eps) * w, w optional. */
VT_CPU_KERNEL(vt_cpu_rms_norm);
/* L2Norm (6): y = x / sqrt(sum(x^2) + eps). */
VT_CPU_KERNEL(vt_cpu_l2_norm);
/* GatedRmsNorm (15): y = x / sqrt(mean(x^2) + eps) * w * silu(z). */
VT_CPU_KERNEL(vt_cpu_gated_rms_norm);
/* Softmax (10): row softmax of x*scale + mask; an all -inf row gives zeros. */
VT_CPU_KERNEL(vt_cpu_softmax);
/* Rope (18): rotary embedding, normal or neox pairs, dims >= n_rot pass through. */
VT_CPU_KERNEL(vt_cpu_rope);

/* ---- conv ---- */
/* CausalConv1dSpecUpdate (7): speculative decode conv over S[slot,:,a-1+j]. */
VT_CPU_KERNEL(vt_cpu_conv_spec_update);
/* CausalConv1d (8): prefill conv over [initial state or zeros, x]. */
VT_CPU_KERNEL(vt_cpu_conv);
/* CausalConv1dUpdate (9): decode conv over [S[slot], x]; S keeps the last W-1 columns. */
VT_CPU_KERNEL(vt_cpu_conv_update);

/* ---- matmul ---- */
/* MatMul (20): y[n,m] = sum_k x[n,k] * W[m,k]; x f32, W f32/f16/bf16 or q. */
VT_CPU_KERNEL(vt_cpu_matmul);
/* MoeExpertMatMul (23): y[t,i] = W[ids[t,i]] . x[t] (or x[t,i]); every id
 * is checked before anything is written. */
VT_CPU_KERNEL(vt_cpu_moe_expert_matmul);

/* ---- attention ---- */
/* Attention (30): causal scaled dot-product over a KV cache, GQA, window. */
VT_CPU_KERNEL(vt_cpu_attention);
/* KvCacheWrite (31): scatter k, v rows into cache slots; -1 skips. */
VT_CPU_KERNEL(vt_cpu_kv_cache_write);
/* GatedDeltaRule (32): the gated delta-rule recurrence over a state cache. */
VT_CPU_KERNEL(vt_cpu_gated_delta_rule);
/* DsaIndexerLogits (34): sum_h w[t,h] * relu(q[t,h].k[s]) inside [start, end). */
VT_CPU_KERNEL(vt_cpu_dsa_indexer_logits);

/* ---- select ---- */
/* MoeRouter (22): top-k experts per token from softmax or sigmoid scores. */
VT_CPU_KERNEL(vt_cpu_moe_router);
/* TopK (35): the k largest per row, descending, ties to the lower index. */
VT_CPU_KERNEL(vt_cpu_topk);
/* Argmax (50): index of the largest value per row, ties to the lower index. */
VT_CPU_KERNEL(vt_cpu_argmax);
/* Sample (51): temperature, top-k, top-p with the counter-based RNG. */
VT_CPU_KERNEL(vt_cpu_sample);

/* ---- gather ---- */
/* GetRows (40): dst[i] = table[idx[i]] decoded to f32/f16; every index is
 * checked before anything is written. */
VT_CPU_KERNEL(vt_cpu_get_rows);
/* IndexSelect (90): gather along one dim, any plain dtype, i32/i64 indices. */
VT_CPU_KERNEL(vt_cpu_index_select);

/* ---- helpers the kernels share ---- */
/* Elements of an operand. */
static inline int64_t vt_cpu_elems(const vt_operand *o)
{
    int64_t n = 1;
    for (uint32_t i = 0; i < o->ndim; i++)
        n *= o->shape[i];
    return n;
}

/* Element i of a float-typed buffer (f32/f16/bf16) as f32. */
static inline float vt_cpu_load(const void *p, uint32_t dtype, int64_t i)
{
    switch (dtype) {
    case VT_F16: return vt_f16_to_f32(((const uint16_t *)p)[i]);
    case VT_BF16: return vt_bf16_to_f32(((const uint16_t *)p)[i]);
    default: return ((const float *)p)[i];
    }
}

/* Store v as element i of a float-typed buffer (f32/f16/bf16). */
static inline void vt_cpu_store(void *p, uint32_t dtype, int64_t i, float v)
{
    switch (dtype) {
    case VT_F16: ((uint16_t *)p)[i] = vt_f32_to_f16(v); break;
    case VT_BF16: ((uint16_t *)p)[i] = vt_f32_to_bf16(v); break;
    default: ((float *)p)[i] = v; break;
    }
}

/* Write "Name (id): <message>" into why and return st. */
static inline vt_status vt_cpu_op_error(vt_status st, char *why, size_t why_size, uint32_t op, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
static inline vt_status vt_cpu_op_error(vt_status st, char *why, size_t why_size, uint32_t op, const char *fmt, ...)
{
    if (!why || !why_size)
        return st;
    const char *name = vt_op_name(op);
    int n = snprintf(why, why_size, "%s (%u): ", name ? name : "op", op);
    if (n < 0 || (size_t)n >= why_size)
        return st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why + n, why_size - (size_t)n, fmt, ap);
    va_end(ap);
    return st;
}

/* Rows of a state cache written by a call: checks that every slot value
 * is in [-1, n_slots) and that no slot is written by two different rows
 * (rows with row_active[r] false, padding rows, are range-checked only).
 * slots holds rows x per_row values; operand names the operand in the
 * message. row_active may be NULL (every row writes). */
vt_status vt_cpu_check_slots(uint32_t op, const char *operand, const int32_t *slots, int64_t rows, int64_t per_row,
                             int64_t n_slots, const unsigned char *row_active, char *why, size_t why_size);

/* silu(x) = x * sigmoid(x), evaluated as x / (1 + exp(-x)). */
static inline float vt_cpu_silu1(float x)
{
    return x / (1.0f + expf(-x));
}

/* sigmoid(x) = 1 / (1 + exp(-x)). */
static inline float vt_cpu_sigmoid1(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

#endif
