/* cpu_kernels_nn.c - kernel rows of the nn family (cpu_ops_nn.h): every
 * f32 op of the catalogue, Attention and KvCacheWrite for f32/f16/bf16
 * caches, DsaIndexerLogits for f32/f16/bf16 keys. */
#include "config.h"

#include "cpu_ops_nn.h"

#define F32(op, fn)                                                                                                    \
    {                                                                                                                  \
        op, VT_SIG1(VT_F32), fn                                                                                        \
    }
#define CACHE(op, fn)                                                                                                  \
    {op, VT_SIG2(VT_F32, VT_F32), fn}, {op, VT_SIG2(VT_F32, VT_F16), fn},                                              \
    {                                                                                                                  \
        op, VT_SIG2(VT_F32, VT_BF16), fn                                                                               \
    }

const vt_kernel vt_cpu_kernels_nn[] = {
    F32(VT_OP_MUL, vt_cpu_mul),
    F32(VT_OP_SCALE, vt_cpu_scale),
    F32(VT_OP_RMS_NORM, vt_cpu_rms_norm),
    F32(VT_OP_L2_NORM, vt_cpu_l2_norm),
    F32(VT_OP_CAUSAL_CONV1D_SPEC_UPDATE, vt_cpu_conv_spec_update),
    F32(VT_OP_CAUSAL_CONV1D, vt_cpu_conv),
    F32(VT_OP_CAUSAL_CONV1D_UPDATE, vt_cpu_conv_update),
    F32(VT_OP_SOFTMAX, vt_cpu_softmax),
    F32(VT_OP_SILU, vt_cpu_silu),
    F32(VT_OP_GELU, vt_cpu_gelu),
    F32(VT_OP_SIGMOID, vt_cpu_sigmoid),
    F32(VT_OP_SWIGLU, vt_cpu_swiglu),
    F32(VT_OP_GATED_RMS_NORM, vt_cpu_gated_rms_norm),
    F32(VT_OP_GDN_GATE, vt_cpu_gdn_gate),
    F32(VT_OP_ROPE, vt_cpu_rope),
    F32(VT_OP_MOE_ROUTER, vt_cpu_moe_router),
    F32(VT_OP_MOE_COMBINE, vt_cpu_moe_combine),
    CACHE(VT_OP_ATTENTION, vt_cpu_attention),
    CACHE(VT_OP_KV_CACHE_WRITE, vt_cpu_kv_cache_write),
    F32(VT_OP_GATED_DELTA_RULE, vt_cpu_gated_delta_rule),
    CACHE(VT_OP_DSA_INDEXER_LOGITS, vt_cpu_dsa_indexer_logits),
    F32(VT_OP_TOPK, vt_cpu_topk),
    F32(VT_OP_ARGMAX, vt_cpu_argmax),
    F32(VT_OP_SAMPLE, vt_cpu_sample),
};

const uint32_t vt_cpu_n_kernels_nn = sizeof vt_cpu_kernels_nn / sizeof vt_cpu_kernels_nn[0];
