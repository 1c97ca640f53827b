/* op_catalog.c - the op catalogue (SPEC 7): ids, names, operands,
 * parameters and every signature each op defines. Backends' kernel tables
 * are checked against it; `vtctl ops` walks it. */
#include "config.h"

#include <ctype.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "vt_internal.h"

const vt_dtype vt_q_formats[] = {VT_Q4_0, VT_Q4_1, VT_Q5_0, VT_Q5_1,   VT_Q8_0,   VT_Q2_K, VT_Q3_K,
                                 VT_Q4_K, VT_Q5_K, VT_Q6_K, VT_IQ4_NL, VT_IQ4_XS, VT_MXFP4};
const uint32_t vt_n_q_formats = sizeof vt_q_formats / sizeof vt_q_formats[0];

#define OPT   VT_OPERAND_OPTIONAL
#define INOUT VT_OPERAND_INOUT

/* ---- operands ---- */
static const vt_operand_info in_src[] = {{"src", 0, "any shape"}};
static const vt_operand_info out_dst[] = {{"dst", 0, "same element count as src"}};
static const vt_operand_info in_ab[] = {{"a", 0, "[..., n] f32"}, {"b", 0, "trailing dims of a, f32 (broadcast)"}};
static const vt_operand_info in_x[] = {{"x", 0, "[..., n] f32"}};
static const vt_operand_info out_y[] = {{"y", 0, "shape of the first input, f32"}};
static const vt_operand_info in_rms[] = {{"x", 0, "[..., D] f32"}, {"w", OPT, "[D] f32"}};
static const vt_operand_info in_conv_spec[] = {{"x", 0, "[B,D,T] f32"},
                                               {"w", 0, "[D,W] f32, W >= 2"},
                                               {"bias", OPT, "[D] f32"},
                                               {"slots", 0, "[B] i32 in [-1,N); -1 = padding"},
                                               {"accepted", 0, "[B] i32, 1 <= a <= L-W+2"}};
static const vt_operand_info out_conv_state[] = {{"y", 0, "[B,D,T] f32"}, {"state", INOUT, "[N,D,L] f32, L >= W-2+T"}};
static const vt_operand_info in_conv[] = {{"x", 0, "[B,D,T] f32"},
                                          {"w", 0, "[D,W] f32, W >= 2"},
                                          {"bias", OPT, "[D] f32"},
                                          {"init_state", OPT, "[B,D,W-1] f32 (zeros when absent)"}};
static const vt_operand_info out_conv[] = {{"y", 0, "[B,D,T] f32"}, {"state", 0, "[B,D,W-1] f32"}};
static const vt_operand_info in_conv_upd[] = {{"x", 0, "[B,D,T] f32"},
                                              {"w", 0, "[D,W] f32, W >= 2"},
                                              {"bias", OPT, "[D] f32"},
                                              {"slots", OPT, "[B] i32 in [-1,N) (absent: b)"}};
static const vt_operand_info out_conv_upd[] = {{"y", 0, "[B,D,T] f32"}, {"state", INOUT, "[N,D,W-1] f32"}};
static const vt_operand_info in_softmax[] = {{"x", 0, "[..., n] f32; a logit x*scale + mask of +inf is refused"},
                                             {"mask", OPT, "trailing dims of x, f32, -inf allowed"}};
static const vt_operand_info in_swiglu[] = {{"g", 0, "[..., n] f32"}, {"u", 0, "shape of g, f32"}};
static const vt_operand_info in_gated_rms[] = {
    {"x", 0, "[..., D] f32"}, {"z", 0, "shape of x, f32"}, {"w", 0, "[D] f32"}};
static const vt_operand_info in_gdn_gate[] = {{"a", 0, "[..., H] f32"},
                                              {"dt_bias", 0, "[H] f32"},
                                              {"A", 0, "[H] f32 (= -exp(A_log), GGUF ssm_a)"},
                                              {"b", 0, "shape of a, f32"}};
static const vt_operand_info out_gdn_gate[] = {{"g", 0, "shape of a, f32"}, {"beta", 0, "shape of a, f32"}};
static const vt_operand_info in_rope[] = {{"x", 0, "[T,H,d] f32"}, {"pos", 0, "[T] i32"}};
static const vt_operand_info in_matmul[] = {{"x", 0, "[..., k] f32"}, {"W", 0, "[m,k] f32/f16/bf16/q"}};
static const vt_operand_info in_router[] = {{"logits", 0, "[T,E] f32"}, {"bias", OPT, "[E] f32 (selection only)"}};
static const vt_operand_info out_router[] = {{"ids", 0, "[T,k] i32"}, {"weights", 0, "[T,k] f32"}};
static const vt_operand_info in_moe_mm[] = {
    {"x", 0, "[T,k] or [T,K,k] f32"}, {"W", 0, "[E,m,k] f32/f16/bf16/q"}, {"ids", 0, "[T,K] i32 in [0,E)"}};
static const vt_operand_info out_moe_mm[] = {{"y", 0, "[T,K,m] f32"}};
static const vt_operand_info in_moe_combine[] = {{"h", 0, "[T,K,m] f32"}, {"w", 0, "[T,K] f32"}};
static const vt_operand_info out_moe_combine[] = {{"y", 0, "[T,m] f32"}};
static const vt_operand_info in_attn[] = {{"q", 0, "[T,Hq,d] f32"},
                                          {"k_cache", 0, "[S,Hkv,d] f16/bf16/f32, slot s = position s"},
                                          {"v_cache", 0, "[S,Hkv,dv], dtype of k_cache"},
                                          {"pos", 0, "[T] i32, position of each query"}};
static const vt_operand_info out_attn[] = {{"o", 0, "[T,Hq,dv] f32"}};
static const vt_operand_info in_kv_write[] = {
    {"k", 0, "[T,Hkv,d] f32"}, {"v", 0, "[T,Hkv,dv] f32"}, {"slots", 0, "[T] i32 in [-1,S); -1 skips"}};
static const vt_operand_info out_kv_write[] = {{"k_cache", INOUT, "[S,Hkv,d] f16/bf16/f32"},
                                               {"v_cache", INOUT, "[S,Hkv,dv], dtype of k_cache"}};
static const vt_operand_info in_gdr[] = {{"q", 0, "[B,T,H,dk] f32"},
                                         {"k", 0, "[B,T,H,dk] f32"},
                                         {"v", 0, "[B,T,HV,dv] f32, HV % H == 0"},
                                         {"g", 0, "[B,T,HV] f32 (log decay)"},
                                         {"beta", 0, "[B,T,HV] f32"},
                                         {"slots", 0, "[B] or [B,T] i32 in [-1,N)"},
                                         {"accepted", OPT, "[B] i32 (with [B,T] slots): read slot[b,a-1]"}};
static const vt_operand_info out_gdr[] = {{"o", 0, "[B,T,HV,dv] f32"}, {"state", INOUT, "[N,HV,dk,dv] f32"}};
static const vt_operand_info in_dsa[] = {
    {"q", 0, "[T,H,d] f32"},
    {"k", 0, "[S,d] f32/f16/bf16"},
    {"w", 0, "[T,H] f32"},
    {"start", 0, "[T] i32, any value"},
    {"end", 0, "[T] i32, any value: [start,end) is clipped to [0,S), empty if start >= end"}};
static const vt_operand_info out_dsa[] = {{"logits", 0, "[T,S] f32, -inf outside [start,end)"}};
static const vt_operand_info out_topk[] = {{"values", 0, "[..., k] f32"}, {"indices", 0, "[..., k] i32"}};
static const vt_operand_info in_getrows[] = {{"table", 0, "[R,n] f32/f16/bf16/q"}, {"idx", 0, "[I...] i32 in [0,R)"}};
static const vt_operand_info out_getrows[] = {{"dst", 0, "[I..., n] f32/f16"}};
static const vt_operand_info in_dequant[] = {{"src", 0, "q, any shape"}};
static const vt_operand_info out_dequant[] = {{"dst", 0, "shape of src, f16/bf16/f32"}};
static const vt_operand_info out_argmax[] = {{"idx", 0, "one i32 per row"}};
static const vt_operand_info in_sample[] = {{"logits", 0, "[..., V] f32"}};
static const vt_operand_info out_sample[] = {{"tokens", 0, "one i32 per row"}};
static const vt_operand_info in_index_select[] = {{"src", 0, "1-4 dims, any plain dtype"}, {"idx", 0, "[n] i32/i64"}};
static const vt_operand_info out_index_select[] = {{"dst", 0, "src shape with dim -> n"}};

/* ---- parameters ---- */
#define P(type, field, kind, doc)                                                                                      \
    {                                                                                                                  \
#field, kind, (uint32_t)offsetof(type, field), doc                                                             \
    }
static const vt_param_info p_scale[] = {P(vt_params_scale, s, VT_PARAM_F32, "factor")};
static const vt_param_info p_norm[] = {P(vt_params_norm, eps, VT_PARAM_F32, "epsilon under the root")};
static const vt_param_info p_conv[] = {P(vt_params_conv, silu, VT_PARAM_I32, "1: silu activation")};
static const vt_param_info p_softmax[] = {P(vt_params_softmax, scale, VT_PARAM_F32, "logit scale")};
static const vt_param_info p_rope[] = {P(vt_params_rope, theta, VT_PARAM_F32, "frequency base"),
                                       P(vt_params_rope, n_rot, VT_PARAM_I32, "rotated dims (even)"),
                                       P(vt_params_rope, mode, VT_PARAM_I32, "0 normal, 1 neox")};
static const vt_param_info p_router[] = {
    P(vt_params_moe_router, k, VT_PARAM_I32, "experts per token"),
    P(vt_params_moe_router, score, VT_PARAM_I32, "0 softmax, 1 sigmoid"),
    P(vt_params_moe_router, renormalize, VT_PARAM_I32, "1: divide by max(sum, 2^-14)"),
    P(vt_params_moe_router, routed_scale, VT_PARAM_F32, "weight factor (1 = none)")};
static const vt_param_info p_attn[] = {P(vt_params_attention, scale, VT_PARAM_F32, "logit scale"),
                                       P(vt_params_attention, window, VT_PARAM_I32, "sliding window, 0 = none")};
static const vt_param_info p_gdn[] = {P(vt_params_gdn, l2norm, VT_PARAM_I32, "1: L2-normalise q and k")};
static const vt_param_info p_topk[] = {P(vt_params_topk, k, VT_PARAM_I32, "values per row (<= 2048)")};
static const vt_param_info p_sample[] = {P(vt_params_sample, temperature, VT_PARAM_F32, "<= 0: argmax"),
                                         P(vt_params_sample, top_k, VT_PARAM_I32, "0: no cut"),
                                         P(vt_params_sample, top_p, VT_PARAM_F32, "nucleus mass, (0,1]"),
                                         P(vt_params_sample, seed, VT_PARAM_U64, "RNG seed"),
                                         P(vt_params_sample, step, VT_PARAM_U64, "RNG step")};
static const vt_param_info p_index_select[] = {P(vt_params_index_select, dim, VT_PARAM_I32, "dimension")};
#undef P

/* ---- signatures (filled once by build_signatures) ---- */
static vt_sig sig_copy[10], sig_f32[1], sig_matmul[16], sig_moe_mm[16], sig_attn[3], sig_kv[3], sig_dsa[3],
    sig_getrows[32], sig_dequant[39], sig_index_select[16];

#define N(a)         (uint32_t)(sizeof(a) / sizeof((a)[0]))
#define OPS(i, o)    N(i), N(o), i, o
#define PARAMS(t, p) (uint32_t)sizeof(t), N(p), p
#define NOPARAMS     0, 0, NULL

static const vt_op_info catalog[] = {
    {VT_OP_COPY, "Copy", "cast between f32/f16/bf16; i32 copy", OPS(in_src, out_dst), "src, dst", N(sig_copy), sig_copy,
     NOPARAMS},
    {VT_OP_ADD, "Add", "y = a + b, b broadcast over leading dims", OPS(in_ab, out_y), "a", 1, sig_f32, NOPARAMS},
    {VT_OP_MUL, "Mul", "y = a * b, b broadcast over leading dims", OPS(in_ab, out_y), "a", 1, sig_f32, NOPARAMS},
    {VT_OP_SCALE, "Scale", "y = x * s", OPS(in_x, out_y), "x", 1, sig_f32, PARAMS(vt_params_scale, p_scale)},
    {VT_OP_RMS_NORM, "RmsNorm", "y = x / sqrt(mean(x^2) + eps) * w (w optional)", OPS(in_rms, out_y), "x", 1, sig_f32,
     PARAMS(vt_params_norm, p_norm)},
    {VT_OP_L2_NORM, "L2Norm", "y = x / sqrt(sum(x^2) + eps)", OPS(in_x, out_y), "x", 1, sig_f32,
     PARAMS(vt_params_norm, p_norm)},
    {VT_OP_CAUSAL_CONV1D_SPEC_UPDATE, "CausalConv1dSpecUpdate",
     "speculative decode conv: read S[slot,:,a-1+j], write the shifted window", OPS(in_conv_spec, out_conv_state), "x",
     1, sig_f32, PARAMS(vt_params_conv, p_conv)},
    {VT_OP_CAUSAL_CONV1D, "CausalConv1d", "prefill conv over [initial state or zeros, x]; returns the last W-1 columns",
     OPS(in_conv, out_conv), "x", 1, sig_f32, PARAMS(vt_params_conv, p_conv)},
    {VT_OP_CAUSAL_CONV1D_UPDATE, "CausalConv1dUpdate", "decode conv over [S, x]; S becomes the last W-1 columns",
     OPS(in_conv_upd, out_conv_upd), "x", 1, sig_f32, PARAMS(vt_params_conv, p_conv)},
    {VT_OP_SOFTMAX, "Softmax", "row softmax of x*scale + mask; an all -inf row gives zeros, +inf is refused",
     OPS(in_softmax, out_y), "x", 1, sig_f32, PARAMS(vt_params_softmax, p_softmax)},
    {VT_OP_SILU, "Silu", "y = x * sigmoid(x)", OPS(in_x, out_y), "x", 1, sig_f32, NOPARAMS},
    {VT_OP_GELU, "Gelu", "tanh approximation", OPS(in_x, out_y), "x", 1, sig_f32, NOPARAMS},
    {VT_OP_SIGMOID, "Sigmoid", "y = 1 / (1 + exp(-x))", OPS(in_x, out_y), "x", 1, sig_f32, NOPARAMS},
    {VT_OP_SWIGLU, "SwiGlu", "y = silu(g) * u", OPS(in_swiglu, out_y), "g", 1, sig_f32, NOPARAMS},
    {VT_OP_GATED_RMS_NORM, "GatedRmsNorm", "y = x / sqrt(mean(x^2) + eps) * w * silu(z)", OPS(in_gated_rms, out_y), "x",
     1, sig_f32, PARAMS(vt_params_norm, p_norm)},
    {VT_OP_GDN_GATE, "GdnGate", "g = A * softplus(a + dt_bias), beta = sigmoid(b)", OPS(in_gdn_gate, out_gdn_gate), "a",
     1, sig_f32, NOPARAMS},
    {VT_OP_ROPE, "Rope", "rotary embedding at given positions, normal or neox pairs", OPS(in_rope, out_y), "x", 1,
     sig_f32, PARAMS(vt_params_rope, p_rope)},
    {VT_OP_MATMUL, "MatMul", "y[n,m] = sum_k x[n,k] * W[m,k]", OPS(in_matmul, out_y), "x, W", N(sig_matmul), sig_matmul,
     NOPARAMS},
    {VT_OP_MOE_ROUTER, "MoeRouter", "top-k experts per token from softmax or sigmoid scores",
     OPS(in_router, out_router), "logits", 1, sig_f32, PARAMS(vt_params_moe_router, p_router)},
    {VT_OP_MOE_EXPERT_MATMUL, "MoeExpertMatMul", "y[t,i] = W[ids[t,i]] . x[t] (or x[t,i])", OPS(in_moe_mm, out_moe_mm),
     "x, W", N(sig_moe_mm), sig_moe_mm, NOPARAMS},
    {VT_OP_MOE_COMBINE, "MoeCombine", "y[t] = sum_i w[t,i] * h[t,i]", OPS(in_moe_combine, out_moe_combine), "h", 1,
     sig_f32, NOPARAMS},
    {VT_OP_ATTENTION, "Attention", "causal scaled dot-product over a KV cache, GQA, optional window",
     OPS(in_attn, out_attn), "q, k_cache", N(sig_attn), sig_attn, PARAMS(vt_params_attention, p_attn)},
    {VT_OP_KV_CACHE_WRITE, "KvCacheWrite", "scatter k, v rows into cache slots", OPS(in_kv_write, out_kv_write),
     "k, k_cache", N(sig_kv), sig_kv, NOPARAMS},
    {VT_OP_GATED_DELTA_RULE, "GatedDeltaRule", "gated delta-rule recurrence over a state cache", OPS(in_gdr, out_gdr),
     "q", 1, sig_f32, PARAMS(vt_params_gdn, p_gdn)},
    {VT_OP_DSA_INDEXER_LOGITS, "DsaIndexerLogits", "logits[t,s] = sum_h w[t,h] * relu(q[t,h].k[s]) in [start,end)",
     OPS(in_dsa, out_dsa), "q, k", N(sig_dsa), sig_dsa, NOPARAMS},
    {VT_OP_TOPK, "TopK", "k largest per row, descending, ties to the lower index", OPS(in_x, out_topk), "x", 1, sig_f32,
     PARAMS(vt_params_topk, p_topk)},
    {VT_OP_GET_ROWS, "GetRows", "dst[i] = table[idx[i]], block-decoding gather", OPS(in_getrows, out_getrows),
     "table, idx, dst", N(sig_getrows), sig_getrows, NOPARAMS},
    {VT_OP_DEQUANTIZE, "Dequantize", "a whole q tensor to f16/bf16/f32", OPS(in_dequant, out_dequant), "src, dst",
     N(sig_dequant), sig_dequant, NOPARAMS},
    {VT_OP_ARGMAX, "Argmax", "index of the largest value per row, ties to the lower index", OPS(in_x, out_argmax), "x",
     1, sig_f32, NOPARAMS},
    {VT_OP_SAMPLE, "Sample", "temperature, top-k, top-p sampling from a counter-based RNG", OPS(in_sample, out_sample),
     "logits", 1, sig_f32, PARAMS(vt_params_sample, p_sample)},
    {VT_OP_INDEX_SELECT, "IndexSelect", "torch.index_select(src, dim, idx)", OPS(in_index_select, out_index_select),
     "src, idx", N(sig_index_select), sig_index_select, PARAMS(vt_params_index_select, p_index_select)},
};

static pthread_once_t sigs_once = PTHREAD_ONCE_INIT;

static vt_sig sig2(vt_dtype a, vt_dtype b)
{
    vt_dtype d[2] = {a, b};
    return vt_sig_make(2, d);
}

static void build_signatures(void)
{
    static const vt_dtype fl[3] = {VT_F32, VT_F16, VT_BF16};
    static const vt_dtype plain[8] = {VT_F32, VT_F16, VT_BF16, VT_I8, VT_I16, VT_I32, VT_I64, VT_F64};
    uint32_t n = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            sig_copy[n++] = sig2(fl[i], fl[j]);
    sig_copy[n++] = sig2(VT_I32, VT_I32);
    vt_dtype f32 = VT_F32;
    sig_f32[0] = vt_sig_make(1, &f32);
    /* weights: the three float types, then every q format */
    for (int i = 0; i < 3; i++) {
        sig_matmul[i] = sig2(VT_F32, fl[i]);
        sig_moe_mm[i] = sig2(VT_F32, fl[i]);
        sig_attn[i] = sig2(VT_F32, fl[i]);
        sig_kv[i] = sig2(VT_F32, fl[i]);
        sig_dsa[i] = sig2(VT_F32, fl[i]);
    }
    for (uint32_t q = 0; q < vt_n_q_formats; q++) {
        sig_matmul[3 + q] = sig2(VT_F32, vt_q_formats[q]);
        sig_moe_mm[3 + q] = sig2(VT_F32, vt_q_formats[q]);
    }
    n = 0;
    for (uint32_t t = 0; t < 3 + vt_n_q_formats; t++) {
        vt_dtype table = t < 3 ? fl[t] : vt_q_formats[t - 3];
        vt_dtype d1[3] = {table, VT_I32, VT_F32}, d2[3] = {table, VT_I32, VT_F16};
        sig_getrows[n++] = vt_sig_make(3, d1);
        sig_getrows[n++] = vt_sig_make(3, d2);
    }
    n = 0;
    for (uint32_t q = 0; q < vt_n_q_formats; q++)
        for (int j = 0; j < 3; j++)
            sig_dequant[n++] = sig2(vt_q_formats[q], fl[j]);
    n = 0;
    for (int i = 0; i < 8; i++) {
        sig_index_select[n++] = sig2(plain[i], VT_I32);
        sig_index_select[n++] = sig2(plain[i], VT_I64);
    }
}

static const vt_op_info *by_id[VT_OP_ID_LIMIT];

static void build_index(void)
{
    build_signatures();
    for (uint32_t i = 0; i < N(catalog); i++)
        by_id[catalog[i].op] = &catalog[i];
}

static void ensure_built(void)
{
    pthread_once(&sigs_once, build_index);
}

const vt_op_info *vt_op_get_info(vt_op op)
{
    if (op <= 0 || op >= VT_OP_ID_LIMIT)
        return NULL;
    ensure_built();
    return by_id[op];
}

uint32_t vt_op_catalog_size(void)
{
    return N(catalog);
}

const vt_op_info *vt_op_catalog_entry(uint32_t i)
{
    ensure_built();
    return i < N(catalog) ? &catalog[i] : NULL;
}

bool vt_op_sig_in_catalog(vt_op op, vt_sig sig)
{
    const vt_op_info *info = vt_op_get_info(op);
    if (!info)
        return false;
    for (uint32_t i = 0; i < info->n_sigs; i++)
        if (vt_sig_equal(info->sigs[i], sig))
            return true;
    return false;
}

const char *vt_op_name(vt_op op)
{
    const vt_op_info *info = vt_op_get_info(op);
    return info ? info->name : NULL;
}

vt_op vt_op_from_name(const char *name)
{
    if (!name)
        return VT_OP_NONE;
    for (uint32_t i = 0; i < N(catalog); i++) {
        const char *n = catalog[i].name;
        size_t j = 0;
        while (n[j] && name[j] && tolower((unsigned char)n[j]) == tolower((unsigned char)name[j]))
            j++;
        if (!n[j] && !name[j])
            return catalog[i].op;
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

const vt_kernel *vt_kernel_find(const vt_kernel *table, uint32_t n, vt_op op, vt_sig sig)
{
    for (uint32_t i = 0; i < n; i++)
        if (table[i].op == op && vt_sig_equal(table[i].sig, sig))
            return &table[i];
    return NULL;
}
