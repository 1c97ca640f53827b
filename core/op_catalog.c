/* op_catalog.c - op names and ids (SPEC 7), kernel signatures. */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "vt_internal.h"

static const char *const op_names[VT_OP_ID_LIMIT] = {
    [VT_OP_COPY] = "Copy",
    [VT_OP_ADD] = "Add",
    [VT_OP_MUL] = "Mul",
    [VT_OP_SCALE] = "Scale",
    [VT_OP_RMS_NORM] = "RmsNorm",
    [VT_OP_L2_NORM] = "L2Norm",
    [VT_OP_CAUSAL_CONV1D_SPEC_UPDATE] = "CausalConv1dSpecUpdate",
    [VT_OP_CAUSAL_CONV1D] = "CausalConv1d",
    [VT_OP_CAUSAL_CONV1D_UPDATE] = "CausalConv1dUpdate",
    [VT_OP_SOFTMAX] = "Softmax",
    [VT_OP_SILU] = "Silu",
    [VT_OP_GELU] = "Gelu",
    [VT_OP_SIGMOID] = "Sigmoid",
    [VT_OP_SWIGLU] = "SwiGlu",
    [VT_OP_GATED_RMS_NORM] = "GatedRmsNorm",
    [VT_OP_GDN_GATE] = "GdnGate",
    [VT_OP_ROPE] = "Rope",
    [VT_OP_MATMUL] = "MatMul",
    [VT_OP_MOE_ROUTER] = "MoeRouter",
    [VT_OP_MOE_EXPERT_MATMUL] = "MoeExpertMatMul",
    [VT_OP_MOE_COMBINE] = "MoeCombine",
    [VT_OP_ATTENTION] = "Attention",
    [VT_OP_KV_CACHE_WRITE] = "KvCacheWrite",
    [VT_OP_GATED_DELTA_RULE] = "GatedDeltaRule",
    [VT_OP_DSA_INDEXER_LOGITS] = "DsaIndexerLogits",
    [VT_OP_TOPK] = "TopK",
    [VT_OP_GET_ROWS] = "GetRows",
    [VT_OP_DEQUANTIZE] = "Dequantize",
    [VT_OP_ARGMAX] = "Argmax",
    [VT_OP_SAMPLE] = "Sample",
    [VT_OP_INDEX_SELECT] = "IndexSelect",
};

const char *vt_op_name(int op)
{
    if (op <= 0 || op >= VT_OP_ID_LIMIT)
        return NULL;
    return op_names[op];
}

vt_op vt_op_from_name(const char *name)
{
    if (!name)
        return VT_OP_NONE;
    for (int op = 1; op < VT_OP_ID_LIMIT; op++) {
        const char *n = op_names[op];
        if (!n)
            continue;
        size_t i = 0;
        while (n[i] && name[i] && tolower((unsigned char)n[i]) == tolower((unsigned char)name[i]))
            i++;
        if (!n[i] && !name[i])
            return (vt_op)op;
    }
    return VT_OP_NONE;
}

vt_sig vt_sig_make(uint32_t n, const vt_dtype *dtypes)
{
    vt_sig s;
    memset(&s, 0, sizeof s);
    if (n > VT_SIG_MAX)
        n = VT_SIG_MAX;
    s.n = (uint8_t)n;
    for (uint32_t i = 0; i < n; i++)
        s.dtype[i] = (uint8_t)dtypes[i];
    return s;
}

bool vt_sig_equal(vt_sig a, vt_sig b)
{
    if (a.n != b.n)
        return false;
    for (uint32_t i = 0; i < a.n && i < VT_SIG_MAX; i++)
        if (a.dtype[i] != b.dtype[i])
            return false;
    return true;
}

char *vt_sig_format(vt_sig sig, char *buf, size_t size)
{
    size_t used = 0;
    if (!buf || size == 0)
        return buf;
    buf[0] = '\0';
    used += (size_t)snprintf(buf + used, size - used, "(");
    for (uint32_t i = 0; i < sig.n && i < VT_SIG_MAX && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", vt_dtype_name(sig.dtype[i]));
    if (used < size)
        snprintf(buf + used, size - used, ")");
    return buf;
}

const vt_kernel *vt_kernel_find(const vt_kernel *table, uint32_t n, uint32_t op, vt_sig sig)
{
    for (uint32_t i = 0; i < n; i++)
        if (table[i].op == op && vt_sig_equal(table[i].sig, sig))
            return &table[i];
    return NULL;
}
