/* runner_hparams.c - what a qwen3 / qwen3moe / qwen3next file must hold:
 * its hyper-parameters (MODELS.md section 2) and every tensor's name and
 * ne (section 3), checked before anything touches a device. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "runner_internal.h"

static const char *const arch_names[] = {"qwen3", "qwen3moe", "qwen3next"};

/* A required u32 key "<arch>.<suffix>". */
static vt_status key_u32(vt_gguf *g, const char *arch, const char *suffix, uint32_t *out, bool required, uint32_t dflt)
{
    char key[128];
    snprintf(key, sizeof key, "%s.%s", arch, suffix);
    vt_status st = vt_gguf_get_u32(g, key, out);
    if (st == VT_E_NOT_FOUND && !required) {
        *out = dflt;
        return VT_OK;
    }
    if (st == VT_E_NOT_FOUND)
        return vt_set_error(VT_E_BAD_FILE, "%s: %s model without key '%s'", vt_gguf_name(g), arch, key);
    if (st == VT_OK && *out == 0 && required)
        return vt_set_error(VT_E_BAD_FILE, "%s: key '%s' is 0", vt_gguf_name(g), key);
    return st;
}

static vt_status key_f32(vt_gguf *g, const char *arch, const char *suffix, float *out, float dflt)
{
    char key[128];
    snprintf(key, sizeof key, "%s.%s", arch, suffix);
    vt_status st = vt_gguf_get_f32(g, key, out);
    if (st == VT_E_NOT_FOUND) {
        *out = dflt;
        return VT_OK;
    }
    return st;
}

#define TRY(x)                                                                                                         \
    do {                                                                                                               \
        vt_status st_ = (x);                                                                                           \
        if (st_ != VT_OK)                                                                                              \
            return st_;                                                                                                \
    } while (0)

vt_status run_read_hparams(vt_gguf *g, run_hparams *hp)
{
    memset(hp, 0, sizeof *hp);
    vt_gguf_str s;
    vt_status st = vt_gguf_get_string(g, "general.architecture", &s);
    if (st != VT_OK)
        return vt_set_error(VT_E_BAD_FILE, "%s: no general.architecture string", vt_gguf_name(g));
    hp->arch = -1;
    for (int i = 0; i < 3; i++)
        if (s.len == strlen(arch_names[i]) && !memcmp(s.data, arch_names[i], s.len))
            hp->arch = i;
    if (hp->arch < 0) {
        char buf[64];
        vt_gguf_escape(s.data, s.len, buf, sizeof buf);
        return vt_set_error(VT_E_UNSUPPORTED,
                            "%s: architecture '%s' is not run by vt's runner (qwen3, qwen3moe, qwen3next)",
                            vt_gguf_name(g), buf);
    }
    const char *a = arch_names[hp->arch];
    TRY(key_u32(g, a, "block_count", &hp->L, true, 0));
    TRY(key_u32(g, a, "embedding_length", &hp->H, true, 0));
    TRY(key_u32(g, a, "context_length", &hp->n_ctx_train, false, 4096));
    TRY(key_u32(g, a, "attention.head_count", &hp->nh, true, 0));
    TRY(key_u32(g, a, "attention.head_count_kv", &hp->nkv, false, hp->nh));
    TRY(key_u32(g, a, "attention.key_length", &hp->hd, false, hp->H / hp->nh));
    uint32_t vlen;
    TRY(key_u32(g, a, "attention.value_length", &vlen, false, hp->hd));
    if (vlen != hp->hd)
        return vt_set_error(VT_E_BAD_FILE, "%s: %s.attention.value_length %u differs from key_length %u",
                            vt_gguf_name(g), a, vlen, hp->hd);
    TRY(key_f32(g, a, "rope.freq_base", &hp->theta, 10000.0f));
    TRY(key_f32(g, a, "attention.layer_norm_rms_epsilon", &hp->eps, 1e-6f));
    if (hp->nkv == 0 || hp->nh % hp->nkv)
        return vt_set_error(VT_E_BAD_FILE, "%s: head_count %u is not a multiple of head_count_kv %u", vt_gguf_name(g),
                            hp->nh, hp->nkv);
    if (hp->L > 4096 || hp->hd % 2)
        return vt_set_error(VT_E_BAD_FILE, "%s: block_count %u or key_length %u out of range", vt_gguf_name(g), hp->L,
                            hp->hd);
    hp->n_rot = hp->hd;
    if (hp->arch == RUN_QWEN3)
        TRY(key_u32(g, a, "feed_forward_length", &hp->F, true, 0));
    if (hp->arch != RUN_QWEN3) {
        TRY(key_u32(g, a, "expert_count", &hp->E, true, 0));
        TRY(key_u32(g, a, "expert_used_count", &hp->k, true, 0));
        TRY(key_u32(g, a, "expert_feed_forward_length", &hp->Fe, true, 0));
        if (hp->k > hp->E)
            return vt_set_error(VT_E_BAD_FILE, "%s: expert_used_count %u > expert_count %u", vt_gguf_name(g), hp->k,
                                hp->E);
    }
    if (hp->arch == RUN_QWEN3NEXT) {
        TRY(key_u32(g, a, "expert_shared_feed_forward_length", &hp->Fsh, true, 0));
        TRY(key_u32(g, a, "ssm.conv_kernel", &hp->K, true, 0));
        TRY(key_u32(g, a, "ssm.state_size", &hp->dk, true, 0));
        TRY(key_u32(g, a, "ssm.group_count", &hp->nk, true, 0));
        TRY(key_u32(g, a, "ssm.time_step_rank", &hp->nv, true, 0));
        uint32_t inner;
        TRY(key_u32(g, a, "ssm.inner_size", &inner, true, 0));
        TRY(key_u32(g, a, "full_attention_interval", &hp->interval, false, 4));
        TRY(key_u32(g, a, "rope.dimension_count", &hp->n_rot, false, hp->hd / 4));
        hp->dv = hp->dk; /* llama.cpp sizes head_v_dim from ssm.state_size */
        if (hp->nv % hp->nk || inner != hp->nv * hp->dv || hp->K < 2 || hp->interval == 0)
            return vt_set_error(
                VT_E_BAD_FILE,
                "%s: ssm keys inconsistent (time_step_rank %u, group_count %u, inner_size %u, state_size "
                "%u, conv_kernel %u, full_attention_interval %u)",
                vt_gguf_name(g), hp->nv, hp->nk, inner, hp->dk, hp->K, hp->interval);
        hp->C = 2 * hp->nk * hp->dk + hp->nv * hp->dv;
        if (hp->n_rot == 0 || hp->n_rot > hp->hd || hp->n_rot % 2)
            return vt_set_error(VT_E_BAD_FILE, "%s: rope.dimension_count %u for key_length %u", vt_gguf_name(g),
                                hp->n_rot, hp->hd);
    }
    const vt_gguf_tensor *te;
    if (vt_gguf_find_tensor(g, "token_embd.weight", &te) != VT_OK)
        return vt_set_error(VT_E_BAD_FILE, "%s: tensor 'token_embd.weight' is missing", vt_gguf_name(g));
    if (te->n_dims != 2 || te->ne[0] != hp->H || te->ne[1] < 1 || te->ne[1] > INT32_MAX)
        return vt_set_error(VT_E_BAD_FILE, "%s: tensor 'token_embd.weight' has ne {%lld, %lld}, expected {%u, vocab}",
                            vt_gguf_name(g), (long long)te->ne[0], (long long)te->ne[1], hp->H);
    hp->V = (uint32_t)te->ne[1];
    const vt_gguf_tensor *to;
    hp->tied = vt_gguf_find_tensor(g, "output.weight", &to) != VT_OK;
    return VT_OK;
}

/* Call fn for one tensor; ne given innermost first, n dims. */
static vt_status one(vt_runner *r, run_tensor_fn fn, void *user, vt_tensor **slot, bool required, uint32_t n, int64_t a,
                     int64_t b, int64_t c, const char *fmt, int il)
{
    char name[96];
    snprintf(name, sizeof name, fmt, il);
    int64_t ne[3] = {a, b, c};
    return fn(user, name, n, ne, required, r ? slot : NULL);
}

#define S(field)                 (r ? &r->layers[il].field : NULL)
#define T1(field, name, a)       TRY(one(r, fn, user, S(field), true, 1, a, 1, 1, "blk.%d." name, il))
#define T2(field, name, a, b)    TRY(one(r, fn, user, S(field), true, 2, a, b, 1, "blk.%d." name, il))
#define T3(field, name, a, b, c) TRY(one(r, fn, user, S(field), true, 3, a, b, c, "blk.%d." name, il))

vt_status run_for_each_tensor(vt_runner *r, const run_hparams *hp, run_tensor_fn fn, void *user)
{
    int64_t H = hp->H;
    TRY(one(r, fn, user, r ? &r->tok_embd : NULL, true, 2, H, hp->V, 1, "token_embd.weight", 0));
    TRY(one(r, fn, user, r ? &r->out_norm : NULL, true, 1, H, 1, 1, "output_norm.weight", 0));
    if (!hp->tied)
        TRY(one(r, fn, user, r ? &r->output : NULL, true, 2, H, hp->V, 1, "output.weight", 0));
    int64_t qd = (int64_t)hp->nh * hp->hd, kvd = (int64_t)hp->nkv * hp->hd;
    for (int il = 0; il < (int)hp->L; il++) {
        bool linear = hp->arch == RUN_QWEN3NEXT && (il + 1) % (int)hp->interval != 0;
        if (r)
            r->layers[il].linear = linear;
        T1(attn_norm, "attn_norm.weight", H);
        if (linear) {
            int64_t vd = (int64_t)hp->nv * hp->dv;
            T2(qkv, "attn_qkv.weight", H, hp->C);
            T2(zgate, "attn_gate.weight", H, vd);
            T2(ba, "ssm_ba.weight", H, 2 * (int64_t)hp->nv);
            T2(conv, "ssm_conv1d.weight", hp->K, hp->C);
            T1(dt_bias, "ssm_dt.bias", hp->nv);
            T1(ssm_a, "ssm_a", hp->nv);
            T1(ssm_norm, "ssm_norm.weight", hp->dv);
            T2(ssm_out, "ssm_out.weight", vd, H);
        } else {
            T2(q, "attn_q.weight", H, hp->arch == RUN_QWEN3NEXT ? 2 * qd : qd);
            T2(k, "attn_k.weight", H, kvd);
            T2(v, "attn_v.weight", H, kvd);
            T2(o, "attn_output.weight", qd, H);
            T1(q_norm, "attn_q_norm.weight", hp->hd);
            T1(k_norm, "attn_k_norm.weight", hp->hd);
        }
        if (hp->arch == RUN_QWEN3NEXT)
            T1(ffn_norm, "post_attention_norm.weight", H);
        else
            T1(ffn_norm, "ffn_norm.weight", H);
        if (hp->arch == RUN_QWEN3) {
            T2(gate, "ffn_gate.weight", H, hp->F);
            T2(up, "ffn_up.weight", H, hp->F);
            T2(down, "ffn_down.weight", hp->F, H);
            continue;
        }
        T2(gate_inp, "ffn_gate_inp.weight", H, hp->E);
        T3(gate_exps, "ffn_gate_exps.weight", H, hp->Fe, hp->E);
        T3(up_exps, "ffn_up_exps.weight", H, hp->Fe, hp->E);
        T3(down_exps, "ffn_down_exps.weight", hp->Fe, H, hp->E);
        if (hp->arch == RUN_QWEN3NEXT) {
            T2(gate_inp_sh, "ffn_gate_inp_shexp.weight", H, 1);
            T2(gate_sh, "ffn_gate_shexp.weight", H, hp->Fsh);
            T2(up_sh, "ffn_up_shexp.weight", H, hp->Fsh);
            T2(down_sh, "ffn_down_shexp.weight", hp->Fsh, H);
        }
    }
    return VT_OK;
}

/* Check one tensor of the file against the expected ne (trailing 1s of
 * either side ignored). */
static vt_status check_one(void *user, const char *name, uint32_t n_dims, const int64_t *ne, bool required,
                           vt_tensor **slot)
{
    (void)slot;
    vt_gguf *g = user;
    const vt_gguf_tensor *t;
    if (vt_gguf_find_tensor(g, name, &t) != VT_OK)
        return required ? vt_set_error(VT_E_BAD_FILE, "%s: tensor '%s' is missing", vt_gguf_name(g), name) : VT_OK;
    int64_t want[4] = {1, 1, 1, 1};
    for (uint32_t i = 0; i < n_dims; i++)
        want[i] = ne[i];
    bool ok = true;
    for (uint32_t i = 0; i < 4; i++)
        ok = ok && (i < t->n_dims ? t->ne[i] : 1) == want[i];
    if (!ok)
        return vt_set_error(VT_E_BAD_FILE, "%s: tensor '%s' has ne {%lld, %lld, %lld}, expected {%lld, %lld, %lld}",
                            vt_gguf_name(g), name, (long long)t->ne[0], (long long)t->ne[1], (long long)t->ne[2],
                            (long long)want[0], (long long)want[1], (long long)want[2]);
    const vt_dtype_info *info = vt_dtype_get(t->type);
    if (!info || info->is_int || (n_dims == 1 && t->type != VT_F32 && t->type != VT_F16 && t->type != VT_BF16))
        return vt_set_error(VT_E_BAD_FILE, "%s: tensor '%s' has type %s", vt_gguf_name(g), name,
                            vt_dtype_name(t->type));
    return VT_OK;
}

vt_status vt_runner_check_file(vt_gguf *g, vt_runner_info *info)
{
    if (!g)
        return vt_set_error(VT_E_INVALID_ARG, "vt_runner_check_file: no file");
    run_hparams hp;
    TRY(run_read_hparams(g, &hp));
    TRY(run_for_each_tensor(NULL, &hp, check_one, g));
    if (info) {
        memset(info, 0, sizeof *info);
        snprintf(info->arch, sizeof info->arch, "%s", arch_names[hp.arch]);
        info->n_vocab = hp.V;
        info->n_layer = hp.L;
        info->n_embd = hp.H;
        info->n_ctx_train = hp.n_ctx_train;
    }
    return VT_OK;
}
