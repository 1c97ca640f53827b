/* cpu_kernels_attention.c - kernel rows of the attention family of the catalogue
 * (core/ops/attention.c): Attention and KvCacheWrite for
 * f32/f16/bf16 caches, GatedDeltaRule (f32), DsaIndexerLogits for
 * f32/f16/bf16 keys. */
#include "config.h"

#include "cpu_ops.h"

#define F32(op, fn)                                                                                                    \
    {                                                                                                                  \
        op, VT_SIG1(VT_F32), fn                                                                                        \
    }
#define CACHE(op, fn)                                                                                                  \
    {op, VT_SIG2(VT_F32, VT_F32), fn}, {op, VT_SIG2(VT_F32, VT_F16), fn},                                              \
    {                                                                                                                  \
        op, VT_SIG2(VT_F32, VT_BF16), fn                                                                               \
    }

const vt_kernel vt_cpu_kernels_attention[] = {
    CACHE(VT_OP_ATTENTION, vt_cpu_attention),
    CACHE(VT_OP_KV_CACHE_WRITE, vt_cpu_kv_cache_write),
    F32(VT_OP_GATED_DELTA_RULE, vt_cpu_gated_delta_rule),
    CACHE(VT_OP_DSA_INDEXER_LOGITS, vt_cpu_dsa_indexer_logits),
};

const uint32_t vt_cpu_n_kernels_attention = sizeof vt_cpu_kernels_attention / sizeof vt_cpu_kernels_attention[0];
