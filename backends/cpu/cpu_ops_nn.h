/* cpu_ops_nn.h - the cpu backend's kernels of the nn family (SPEC 7):
 * elementwise ops, norms, causal convolutions, softmax, rope, MoE routing
 * and combining, attention and the KV cache, the gated delta rule, the
 * DSA indexer and selection (TopK, Argmax, Sample).
 *
 * Every kernel trusts what the core checked (counts, dtypes, shapes,
 * params) and checks the data-dependent values itself (slots, accepted
 * counts, windows, NaN) before it writes anything; a refusal names the op
 * and its id, the operand and the position. All accumulation is f32, and
 * each output element is reduced by one thread in a fixed order, so
 * results are bit-identical for any VT_NUM_THREADS. */
#ifndef VT_CPU_OPS_NN_H
#define VT_CPU_OPS_NN_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "cpu_ops.h"

/* The signature every kernel of this family has. */
#define VT_CPU_NN_KERNEL(name)                                                                                         \
    vt_status name(vt_backend_ctx *ctx, int dev, const vt_op_args *a, char *why, size_t why_size)

/* Mul (3): y = a * b, b broadcast over the leading dims of a. */
VT_CPU_NN_KERNEL(vt_cpu_mul);
/* Scale (4): y = x * s. */
VT_CPU_NN_KERNEL(vt_cpu_scale);
/* Silu (11): y = x * sigmoid(x). */
VT_CPU_NN_KERNEL(vt_cpu_silu);
/* Gelu (12): the tanh approximation. */
VT_CPU_NN_KERNEL(vt_cpu_gelu);
/* Sigmoid (13): y = 1 / (1 + exp(-x)). */
VT_CPU_NN_KERNEL(vt_cpu_sigmoid);
/* SwiGlu (14): y = silu(g) * u. */
VT_CPU_NN_KERNEL(vt_cpu_swiglu);
/* GdnGate (16): g = A * softplus(a + dt_bias) (softplus exact), beta = sigmoid(b). */
VT_CPU_NN_KERNEL(vt_cpu_gdn_gate);

/* RmsNorm (5): y = x / sqrt(mean(x^2) + eps) * w, w optional. */
VT_CPU_NN_KERNEL(vt_cpu_rms_norm);
/* L2Norm (6): y = x / sqrt(sum(x^2) + eps). */
VT_CPU_NN_KERNEL(vt_cpu_l2_norm);
/* GatedRmsNorm (15): y = x / sqrt(mean(x^2) + eps) * w * silu(z). */
VT_CPU_NN_KERNEL(vt_cpu_gated_rms_norm);

/* CausalConv1dSpecUpdate (7): speculative decode conv over S[slot,:,a-1+j]. */
VT_CPU_NN_KERNEL(vt_cpu_conv_spec_update);
/* CausalConv1d (8): prefill conv over [initial state or zeros, x]. */
VT_CPU_NN_KERNEL(vt_cpu_conv);
/* CausalConv1dUpdate (9): decode conv over [S[slot], x]; S keeps the last W-1 columns. */
VT_CPU_NN_KERNEL(vt_cpu_conv_update);

/* Softmax (10): row softmax of x*scale + mask; an all -inf row gives zeros. */
VT_CPU_NN_KERNEL(vt_cpu_softmax);

/* Rope (18): rotary embedding, normal or neox pairs, dims >= n_rot pass through. */
VT_CPU_NN_KERNEL(vt_cpu_rope);

/* MoeRouter (22): top-k experts per token from softmax or sigmoid scores. */
VT_CPU_NN_KERNEL(vt_cpu_moe_router);
/* MoeCombine (24): y[t] = sum_i w[t,i] * h[t,i]. */
VT_CPU_NN_KERNEL(vt_cpu_moe_combine);

/* Attention (30): causal scaled dot-product over a KV cache, GQA, window. */
VT_CPU_NN_KERNEL(vt_cpu_attention);
/* KvCacheWrite (31): scatter k, v rows into cache slots; -1 skips. */
VT_CPU_NN_KERNEL(vt_cpu_kv_cache_write);

/* GatedDeltaRule (32): the gated delta-rule recurrence over a state cache. */
VT_CPU_NN_KERNEL(vt_cpu_gated_delta_rule);

/* DsaIndexerLogits (34): sum_h w[t,h] * relu(q[t,h].k[s]) inside [start, end). */
VT_CPU_NN_KERNEL(vt_cpu_dsa_indexer_logits);

/* TopK (35): the k largest per row, descending, ties to the lower index. */
VT_CPU_NN_KERNEL(vt_cpu_topk);
/* Argmax (50): index of the largest value per row, ties to the lower index. */
VT_CPU_NN_KERNEL(vt_cpu_argmax);
/* Sample (51): temperature, top-k, top-p with the counter-based RNG. */
VT_CPU_NN_KERNEL(vt_cpu_sample);

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
