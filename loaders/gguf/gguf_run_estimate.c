/* gguf_run_estimate.c - what a run of a GGUF model needs on the device
 * besides its weights, from the model's metadata (SPEC 6): the KV cache of
 * its attention layers, the conv and recurrent state caches of its SSM or
 * Gated-DeltaNet layers, and per-token scratch, for a context and batch. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "gguf_load.h"

/* An unsigned integer KV of any integer type, or a per-layer array of
 * them: *value gets the scalar (or the array's maximum), *sum the sum and
 * *n_pos the number of positive entries. Returns false when absent. */
static bool uint_kv(const vt_gguf *g, const char *key, uint64_t *value, uint64_t *sum, uint64_t *n_pos)
{
    const vt_gguf_kv *kv;
    if (vt_gguf_find_kv(g, key, &kv) != VT_OK)
        return false;
    uint64_t mx = 0, total = 0, pos = 0;
    for (uint64_t i = 0; i < kv->count; i++) {
        vt_gguf_value v;
        if (vt_gguf_kv_value(g, kv->index, i, &v) != VT_OK)
            return false;
        uint64_t x;
        switch (v.type) {
        case VT_GGUF_U8:
        case VT_GGUF_U16:
        case VT_GGUF_U32:
        case VT_GGUF_U64: x = v.as.u; break;
        case VT_GGUF_I8:
        case VT_GGUF_I16:
        case VT_GGUF_I32:
        case VT_GGUF_I64: x = v.as.i > 0 ? (uint64_t)v.as.i : 0; break;
        default: return false;
        }
        mx = x > mx ? x : mx;
        total = total > UINT64_MAX - x ? UINT64_MAX : total + x; /* saturates: the estimate refuses */
        pos += x > 0;
    }
    if (value)
        *value = mx;
    if (sum)
        *sum = total;
    if (n_pos)
        *n_pos = pos;
    return true;
}

static bool arch_uint(const vt_gguf *g, const char *arch, const char *suffix, uint64_t *value)
{
    char key[256];
    snprintf(key, sizeof key, "%s.%s", arch, suffix);
    return uint_kv(g, key, value, NULL, NULL);
}

static bool mul_ok(uint64_t *acc, uint64_t v)
{
    return !__builtin_mul_overflow(*acc, v, acc);
}

static bool add_ok(uint64_t *acc, uint64_t v)
{
    return !__builtin_add_overflow(*acc, v, acc);
}

/* a * b, or UINT64_MAX when it wraps (the estimate then refuses). */
static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

vt_status vt_gguf_run_estimate(const vt_gguf *g, uint64_t ctx, uint64_t batch, vt_run_estimate *out)
{
    memset(out, 0, sizeof *out);
    if (ctx == 0) {
        snprintf(out->detail, sizeof out->detail, "no run state (context 0)");
        return VT_OK;
    }
    if (batch == 0)
        batch = 1;
    vt_gguf_str arch_s;
    if (vt_gguf_get_string(g, "general.architecture", &arch_s) != VT_OK || arch_s.len == 0 || arch_s.len > 64)
        return vt_set_error(VT_E_BAD_FILE, "%s: a run estimate needs general.architecture (a string)", vt_gguf_name(g));
    char arch[72], arch_text[100]; /* the key prefix; the safe text for messages */
    snprintf(arch, sizeof arch, "%.*s", (int)arch_s.len, arch_s.data);
    vt_gguf_escape(arch_s.data, arch_s.len, arch_text, sizeof arch_text);
    uint64_t n_layer = 0;
    if (!arch_uint(g, arch, "block_count", &n_layer) || n_layer == 0)
        return vt_set_error(VT_E_BAD_FILE, "%s: a run estimate needs %s.block_count", vt_gguf_name(g), arch_text);

    uint64_t n_embd = 0, n_ff = 0, n_head = 0, kv_max = 0, kv_sum = 0, kv_layers = 0;
    arch_uint(g, arch, "embedding_length", &n_embd);
    arch_uint(g, arch, "feed_forward_length", &n_ff);
    char key[256];
    snprintf(key, sizeof key, "%s.attention.head_count", arch);
    bool has_heads = uint_kv(g, key, &n_head, NULL, NULL);
    snprintf(key, sizeof key, "%s.attention.head_count_kv", arch);
    const vt_gguf_kv *kvk = NULL;
    bool per_layer_kv = vt_gguf_find_kv(g, key, &kvk) == VT_OK && kvk->type == VT_GGUF_ARRAY;
    if (!uint_kv(g, key, &kv_max, &kv_sum, &kv_layers))
        kv_max = n_head; /* no head_count_kv: one kv head per head */
    if (!per_layer_kv) { /* one value for every layer */
        kv_sum = mul_sat(kv_max, n_layer);
        kv_layers = has_heads || kv_max ? n_layer : 0;
    }
    uint64_t k_len = 0, v_len = 0;
    if (!arch_uint(g, arch, "attention.key_length", &k_len))
        k_len = n_head ? n_embd / n_head : 0;
    if (!arch_uint(g, arch, "attention.value_length", &v_len))
        v_len = k_len;

    /* Recurrent (SSM / Gated DeltaNet) layers. */
    uint64_t conv_k = 0, d_inner = 0, d_state = 0, groups = 0, dt_rank = 0, interval = 0;
    bool ssm = arch_uint(g, arch, "ssm.conv_kernel", &conv_k) && conv_k > 0;
    arch_uint(g, arch, "ssm.inner_size", &d_inner);
    arch_uint(g, arch, "ssm.state_size", &d_state);
    arch_uint(g, arch, "ssm.group_count", &groups);
    arch_uint(g, arch, "ssm.time_step_rank", &dt_rank);
    uint64_t attn_layers = kv_layers, rec_layers = 0;
    if (ssm && arch_uint(g, arch, "full_attention_interval", &interval) && interval > 0) {
        attn_layers = n_layer / interval;
        rec_layers = n_layer - attn_layers;
        kv_sum = mul_sat(kv_max, attn_layers);
    } else if (ssm && !per_layer_kv && !has_heads) {
        attn_layers = 0;
        rec_layers = n_layer;
        kv_sum = 0;
    } else if (ssm && per_layer_kv) {
        rec_layers = n_layer - kv_layers; /* layers with zero kv heads are recurrent */
    }

    /* KV cache: f16 keys and values for every attention layer. */
    uint64_t kv = ctx;
    uint64_t kv_len = k_len;
    bool ok = add_ok(&kv_len, v_len) && kv_sum != UINT64_MAX && mul_ok(&kv, batch) && mul_ok(&kv, kv_sum) &&
              mul_ok(&kv, kv_len) && mul_ok(&kv, 2);
    uint64_t conv = 0, rec = 0;
    if (ssm && rec_layers) {
        uint64_t ch = 2;
        ok = ok && mul_ok(&ch, groups ? groups : 1) && mul_ok(&ch, d_state) && add_ok(&ch, d_inner);
        conv = rec_layers;
        ok = ok && mul_ok(&conv, batch) && mul_ok(&conv, conv_k - 1) && mul_ok(&conv, ch) && mul_ok(&conv, 4);
        rec = rec_layers;
        if (dt_rank) /* Gated DeltaNet: HV heads of dk x dv */
            ok = ok && mul_ok(&rec, batch) && mul_ok(&rec, dt_rank) && mul_ok(&rec, d_state) &&
                 mul_ok(&rec, d_inner / dt_rank) && mul_ok(&rec, 4);
        else /* Mamba-style: d_inner x d_state */
            ok = ok && mul_ok(&rec, batch) && mul_ok(&rec, d_inner) && mul_ok(&rec, d_state) && mul_ok(&rec, 4);
    }
    uint64_t n_vocab = 0;
    const vt_gguf_kv *tok;
    if (vt_gguf_find_kv(g, "tokenizer.ggml.tokens", &tok) == VT_OK)
        n_vocab = tok->count;
    else
        arch_uint(g, arch, "vocab_size", &n_vocab);
    uint64_t wide = n_embd > n_ff ? n_embd : n_ff;
    uint64_t scratch = batch, row = 4;
    ok = ok && mul_ok(&row, wide) && add_ok(&row, n_vocab) && mul_ok(&scratch, row) && mul_ok(&scratch, 4);
    uint64_t total = kv;
    ok = ok && add_ok(&total, conv) && add_ok(&total, rec) && add_ok(&total, scratch);
    if (!ok)
        return vt_set_error(VT_E_INVALID_ARG, "%s: the run estimate for ctx %llu, batch %llu overflows",
                            vt_gguf_name(g), (unsigned long long)ctx, (unsigned long long)batch);
    out->kv_cache = kv;
    out->conv_state = conv;
    out->recurrent_state = rec;
    out->scratch = scratch;
    out->total = total;
    snprintf(out->detail, sizeof out->detail,
             "%s, ctx %llu, batch %llu: KV %llu attention layers x %llu kv heads x (%llu+%llu) x f16; "
             "%llu recurrent layers; scratch (vocab %llu + 4 x %llu) x f32",
             arch_text, (unsigned long long)ctx, (unsigned long long)batch, (unsigned long long)attn_layers,
             (unsigned long long)kv_max, (unsigned long long)k_len, (unsigned long long)v_len,
             (unsigned long long)rec_layers, (unsigned long long)n_vocab, (unsigned long long)wide);
    return VT_OK;
}
