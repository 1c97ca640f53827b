/* test_runner.c - the model runner (vt_runner.h) on cpu:0 against an
 * independent plain-C forward pass written here from shared/MODELS.md
 * (double accumulation, one token at a time, reading the same GGUF file
 * through the parser only), for qwen3, qwen3moe and qwen3next models that
 * vt_mkmodel_write produced: tokens identical and logits within tolerance
 * at every step, greedy and seeded sampling; identical results with 1 and
 * 2 threads and with chunked prefill; named refusals of bad files and
 * inputs before any device allocation. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vt/vt_mkmodel.h>
#include <vt/vt_runner.h>

#include "test_util.h"

/* ---- the reference: a float64 forward pass straight from MODELS.md ---- */

typedef struct ref_t {
    vt_gguf *g;
    int arch; /* 0 qwen3, 1 qwen3moe, 2 qwen3next */
    int L, H, F, nh, nkv, hd, V, E, k, Fe, Fsh, K, nk, nv, dk, C, interval, n_rot;
    double eps, theta;
    int ctx, pos;
    int kv_f16;                     /* store K and V rounded to f16, as the runner's default cache */
    double **kc, **vc, **conv, **S; /* per layer */
    struct {
        char name[64];
        double *v;
    } t[512];
    int n_t;
} ref_t;

static double half(const uint8_t *p)
{
    uint16_t h;
    memcpy(&h, p, 2);
    return vt_f16_to_f32(h);
}

/* A tensor of the file as doubles (dequantized here). */
static const double *W(ref_t *r, const char *fmt, int il)
{
    char name[64];
    snprintf(name, sizeof name, fmt, il);
    for (int i = 0; i < r->n_t; i++)
        if (!strcmp(r->t[i].name, name))
            return r->t[i].v;
    const vt_gguf_tensor *t;
    ck_assert_msg(vt_gguf_find_tensor(r->g, name, &t) == VT_OK, "reference: no tensor %s", name);
    int64_t n = t->n_elements;
    double *v = malloc((size_t)n * sizeof *v);
    ck_assert_ptr_nonnull(v);
    const uint8_t *d = t->data;
    for (int64_t i = 0; i < n; i++) {
        switch (t->type) {
        case VT_F32: {
            float f;
            memcpy(&f, d + 4 * i, 4);
            v[i] = f;
            break;
        }
        case VT_F16: v[i] = half(d + 2 * i); break;
        case VT_BF16: {
            uint16_t b;
            memcpy(&b, d + 2 * i, 2);
            v[i] = vt_bf16_to_f32(b);
            break;
        }
        case VT_Q8_0: {
            const uint8_t *b = d + (i / 32) * 34;
            v[i] = half(b) * (int8_t)b[2 + i % 32];
            break;
        }
        case VT_Q4_0: {
            const uint8_t *b = d + (i / 32) * 18;
            int j = (int)(i % 32);
            int q = j < 16 ? (b[2 + j] & 15) : (b[2 + j - 16] >> 4);
            v[i] = half(b) * (q - 8);
            break;
        }
        default: ck_abort_msg("reference: type %s", vt_dtype_name(t->type));
        }
    }
    ck_assert_int_lt(r->n_t, 512);
    snprintf(r->t[r->n_t].name, sizeof r->t[0].name, "%s", name);
    r->t[r->n_t].v = v;
    return r->t[r->n_t++].v;
}

static uint32_t key(vt_gguf *g, const char *arch, const char *k)
{
    char s[128];
    uint32_t v = 0;
    snprintf(s, sizeof s, "%s.%s", arch, k);
    return vt_gguf_get_u32(g, s, &v) == VT_OK ? v : 0;
}

static void ref_open(ref_t *r, const char *path, int ctx)
{
    memset(r, 0, sizeof *r);
    ck_assert_int_eq(vt_gguf_open(path, &r->g), VT_OK);
    vt_gguf_str a;
    ck_assert_int_eq(vt_gguf_get_string(r->g, "general.architecture", &a), VT_OK);
    const char *arch = a.len == 5 ? "qwen3" : a.len == 8 ? "qwen3moe" : "qwen3next";
    r->arch = a.len == 5 ? 0 : a.len == 8 ? 1 : 2;
    r->L = (int)key(r->g, arch, "block_count");
    r->H = (int)key(r->g, arch, "embedding_length");
    r->F = (int)key(r->g, arch, "feed_forward_length");
    r->nh = (int)key(r->g, arch, "attention.head_count");
    r->nkv = (int)key(r->g, arch, "attention.head_count_kv");
    r->hd = (int)key(r->g, arch, "attention.key_length");
    r->E = (int)key(r->g, arch, "expert_count");
    r->k = (int)key(r->g, arch, "expert_used_count");
    r->Fe = (int)key(r->g, arch, "expert_feed_forward_length");
    r->Fsh = (int)key(r->g, arch, "expert_shared_feed_forward_length");
    r->K = (int)key(r->g, arch, "ssm.conv_kernel");
    r->dk = (int)key(r->g, arch, "ssm.state_size");
    r->nk = (int)key(r->g, arch, "ssm.group_count");
    r->nv = (int)key(r->g, arch, "ssm.time_step_rank");
    r->interval = (int)key(r->g, arch, "full_attention_interval");
    r->n_rot = r->arch == 2 ? (int)key(r->g, arch, "rope.dimension_count") : r->hd;
    r->C = 2 * r->nk * r->dk + r->nv * r->dk;
    char s[128];
    float f;
    snprintf(s, sizeof s, "%s.rope.freq_base", arch);
    ck_assert_int_eq(vt_gguf_get_f32(r->g, s, &f), VT_OK);
    r->theta = f;
    snprintf(s, sizeof s, "%s.attention.layer_norm_rms_epsilon", arch);
    ck_assert_int_eq(vt_gguf_get_f32(r->g, s, &f), VT_OK);
    r->eps = f;
    const vt_gguf_tensor *te;
    ck_assert_int_eq(vt_gguf_find_tensor(r->g, "token_embd.weight", &te), VT_OK);
    r->V = (int)te->ne[1];
    r->ctx = ctx;
    r->kc = calloc((size_t)r->L, sizeof *r->kc);
    r->vc = calloc((size_t)r->L, sizeof *r->vc);
    r->conv = calloc((size_t)r->L, sizeof *r->conv);
    r->S = calloc((size_t)r->L, sizeof *r->S);
    for (int il = 0; il < r->L; il++) {
        r->kc[il] = calloc((size_t)ctx * r->nkv * r->hd, sizeof(double));
        r->vc[il] = calloc((size_t)ctx * r->nkv * r->hd, sizeof(double));
        if (r->arch == 2) {
            r->conv[il] = calloc((size_t)(r->K - 1) * r->C, sizeof(double));
            r->S[il] = calloc((size_t)r->nv * r->dk * r->dk, sizeof(double));
        }
    }
}

static void ref_close(ref_t *r)
{
    for (int il = 0; il < r->L; il++) {
        free(r->kc[il]);
        free(r->vc[il]);
        free(r->conv[il]);
        free(r->S[il]);
    }
    free(r->kc);
    free(r->vc);
    free(r->conv);
    free(r->S);
    for (int i = 0; i < r->n_t; i++)
        free(r->t[i].v);
    vt_gguf_close(r->g);
}

/* y[out] = W[out][in] x[in] (W rows of in values, PyTorch [out, in]). */
static void mv(const double *w, const double *x, double *y, int in, int out)
{
    for (int o = 0; o < out; o++) {
        double s = 0;
        for (int i = 0; i < in; i++)
            s += w[(size_t)o * in + i] * x[i];
        y[o] = s;
    }
}

static void rms(const double *x, const double *w, double *y, int n, double eps)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += x[i] * x[i];
    double inv = 1.0 / sqrt(s / n + eps);
    for (int i = 0; i < n; i++)
        y[i] = x[i] * inv * (w ? w[i] : 1.0);
}

static double sigm(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

static double silu(double x)
{
    return x * sigm(x);
}

/* NEOX RoPE over the first n_rot dims: pairs (i, i + n_rot/2). */
static void rope(double *v, int n_rot, int pos, double theta)
{
    for (int i = 0; i < n_rot / 2; i++) {
        double ang = pos * pow(theta, -2.0 * i / n_rot), c = cos(ang), s = sin(ang);
        double x0 = v[i], x1 = v[i + n_rot / 2];
        v[i] = x0 * c - x1 * s;
        v[i + n_rot / 2] = x0 * s + x1 * c;
    }
}

/* Attention mixer (gated for qwen3next) of one token into out[H]. */
static void ref_attention(ref_t *r, int il, const double *h, double *out)
{
    int nh = r->nh, nkv = r->nkv, hd = r->hd, gated = r->arch == 2;
    double *qf = calloc((size_t)nh * hd * 2, sizeof *qf), *k = calloc((size_t)nkv * hd, sizeof *k);
    double *v = calloc((size_t)nkv * hd, sizeof *v), *o = calloc((size_t)nh * hd, sizeof *o);
    double *sc = calloc((size_t)r->pos + 1, sizeof *sc);
    mv(W(r, "blk.%d.attn_q.weight", il), h, qf, r->H, nh * hd * (gated ? 2 : 1));
    mv(W(r, "blk.%d.attn_k.weight", il), h, k, r->H, nkv * hd);
    mv(W(r, "blk.%d.attn_v.weight", il), h, v, r->H, nkv * hd);
    const double *qn = W(r, "blk.%d.attn_q_norm.weight", il), *kn = W(r, "blk.%d.attn_k_norm.weight", il);
    for (int j = 0; j < nkv; j++) {
        rms(k + j * hd, kn, k + j * hd, hd, r->eps);
        rope(k + j * hd, r->n_rot, r->pos, r->theta);
    }
    for (int i = 0; r->kv_f16 && i < nkv * hd; i++) {
        k[i] = vt_f16_to_f32(vt_f32_to_f16((float)k[i]));
        v[i] = vt_f16_to_f32(vt_f32_to_f16((float)v[i]));
    }
    memcpy(r->kc[il] + (size_t)r->pos * nkv * hd, k, (size_t)nkv * hd * sizeof *k);
    memcpy(r->vc[il] + (size_t)r->pos * nkv * hd, v, (size_t)nkv * hd * sizeof *v);
    for (int hh = 0; hh < nh; hh++) {
        double q[512];
        const double *src = gated ? qf + hh * 2 * hd : qf + hh * hd; /* per head [q | gate] */
        rms(src, qn, q, hd, r->eps);
        rope(q, r->n_rot, r->pos, r->theta);
        int kvh = hh / (nh / nkv);
        double mx = -1e300, sum = 0;
        for (int s = 0; s <= r->pos; s++) {
            const double *ks = r->kc[il] + ((size_t)s * nkv + kvh) * hd;
            double d = 0;
            for (int i = 0; i < hd; i++)
                d += q[i] * ks[i];
            sc[s] = d / sqrt((double)hd);
            mx = sc[s] > mx ? sc[s] : mx;
        }
        for (int s = 0; s <= r->pos; s++)
            sum += (sc[s] = exp(sc[s] - mx));
        for (int s = 0; s <= r->pos; s++) {
            const double *vs = r->vc[il] + ((size_t)s * nkv + kvh) * hd;
            for (int i = 0; i < hd; i++)
                o[hh * hd + i] += sc[s] / sum * vs[i];
        }
        if (gated)
            for (int i = 0; i < hd; i++)
                o[hh * hd + i] *= sigm(src[hd + i]);
    }
    mv(W(r, "blk.%d.attn_output.weight", il), o, out, nh * hd, r->H);
    free(qf);
    free(k);
    free(v);
    free(o);
    free(sc);
}

/* Gated DeltaNet mixer of one token into out[H]. */
static void ref_deltanet(ref_t *r, int il, const double *h, double *out)
{
    int C = r->C, K = r->K, nk = r->nk, nv = r->nv, dk = r->dk, dv = r->dk, rr = nv / nk;
    double *qkv = calloc((size_t)C, sizeof *qkv), *z = calloc((size_t)nv * dv, sizeof *z);
    double *ba = calloc((size_t)2 * nv, sizeof *ba), *y = calloc((size_t)C, sizeof *y);
    double *o = calloc((size_t)nv * dv, sizeof *o);
    mv(W(r, "blk.%d.attn_qkv.weight", il), h, qkv, r->H, C);
    mv(W(r, "blk.%d.attn_gate.weight", il), h, z, r->H, nv * dv);
    mv(W(r, "blk.%d.ssm_ba.weight", il), h, ba, r->H, 2 * nv);
    /* causal depthwise conv over [K-1 previous rows, this row], then SiLU */
    const double *cw = W(r, "blk.%d.ssm_conv1d.weight", il); /* ne {K, C}: row c has K taps */
    double *st = r->conv[il];
    for (int c = 0; c < C; c++) {
        double s = cw[(size_t)c * K + K - 1] * qkv[c];
        for (int j = 0; j < K - 1; j++)
            s += cw[(size_t)c * K + j] * st[(size_t)j * C + c];
        y[c] = silu(s);
    }
    memmove(st, st + C, (size_t)(K - 2) * C * sizeof *st);
    memcpy(st + (size_t)(K - 2) * C, qkv, (size_t)C * sizeof *st);
    const double *dt = W(r, "blk.%d.ssm_dt.bias", il), *A = W(r, "blk.%d.ssm_a", il);
    double *q = y, *k = y + nk * dk, *v = y + 2 * nk * dk;
    for (int j = 0; j < nk; j++) { /* L2 norm, eps = rms eps */
        double sq = 0, sk = 0;
        for (int i = 0; i < dk; i++) {
            sq += q[j * dk + i] * q[j * dk + i];
            sk += k[j * dk + i] * k[j * dk + i];
        }
        for (int i = 0; i < dk; i++) {
            q[j * dk + i] /= fmax(sqrt(sq), r->eps);
            k[j * dk + i] /= fmax(sqrt(sk), r->eps);
        }
    }
    for (int j = 0; j < nv; j++) {
        int grp = j / rr, i = j % rr;
        double b = ba[grp * 2 * rr + i], a = ba[grp * 2 * rr + rr + i];
        double beta = sigm(b), g = log1p(exp(a + dt[j])) * A[j];
        const double *qh = q + grp * dk, *kh = k + grp * dk, *vh = v + j * dv;
        double *S = r->S[il] + (size_t)j * dk * dv;
        for (int e = 0; e < dk * dv; e++)
            S[e] *= exp(g);
        for (int d = 0; d < dv; d++) {
            double kv = 0;
            for (int e = 0; e < dk; e++)
                kv += S[e * dv + d] * kh[e];
            double delta = (vh[d] - kv) * beta;
            for (int e = 0; e < dk; e++)
                S[e * dv + d] += kh[e] * delta;
        }
        for (int d = 0; d < dv; d++) {
            double s = 0;
            for (int e = 0; e < dk; e++)
                s += S[e * dv + d] * qh[e];
            o[j * dv + d] = s / sqrt((double)dk);
        }
        rms(o + j * dv, W(r, "blk.%d.ssm_norm.weight", il), o + j * dv, dv, r->eps);
        for (int d = 0; d < dv; d++)
            o[j * dv + d] *= silu(z[j * dv + d]);
    }
    mv(W(r, "blk.%d.ssm_out.weight", il), o, out, nv * dv, r->H);
    free(qkv);
    free(z);
    free(ba);
    free(y);
    free(o);
}

/* silu(gate . h) * (up . h) -> down, from weight pointers. */
static void swiglu_ffn(const double *wg, const double *wu, const double *wd, const double *h, double *out, int H, int F)
{
    double *g = calloc((size_t)F, sizeof *g), *u = calloc((size_t)F, sizeof *u);
    mv(wg, h, g, H, F);
    mv(wu, h, u, H, F);
    for (int i = 0; i < F; i++)
        g[i] = silu(g[i]) * u[i];
    mv(wd, g, out, F, H);
    free(g);
    free(u);
}

static void ref_ffn(ref_t *r, int il, const double *h, double *out)
{
    int H = r->H;
    memset(out, 0, (size_t)H * sizeof *out);
    if (r->arch == 0) {
        swiglu_ffn(W(r, "blk.%d.ffn_gate.weight", il), W(r, "blk.%d.ffn_up.weight", il),
                   W(r, "blk.%d.ffn_down.weight", il), h, out, H, r->F);
        return;
    }
    double lg[256], p[256], tmp[4096];
    mv(W(r, "blk.%d.ffn_gate_inp.weight", il), h, lg, H, r->E);
    double mx = -1e300, sum = 0;
    for (int e = 0; e < r->E; e++)
        mx = lg[e] > mx ? lg[e] : mx;
    for (int e = 0; e < r->E; e++)
        sum += (p[e] = exp(lg[e] - mx));
    int sel[64];
    double ws = 0;
    for (int j = 0; j < r->k; j++) { /* top-k, ties to the lower index */
        int best = -1;
        for (int e = 0; e < r->E; e++) {
            bool used = false;
            for (int i = 0; i < j; i++)
                used = used || sel[i] == e;
            if (!used && (best < 0 || p[e] > p[best]))
                best = e;
        }
        sel[j] = best;
        ws += p[best] / sum;
    }
    const double *G = W(r, "blk.%d.ffn_gate_exps.weight", il), *U = W(r, "blk.%d.ffn_up_exps.weight", il);
    const double *D = W(r, "blk.%d.ffn_down_exps.weight", il);
    size_t per = (size_t)r->Fe * H;
    for (int j = 0; j < r->k; j++) {
        int e = sel[j];
        swiglu_ffn(G + e * per, U + e * per, D + e * per, h, tmp, H, r->Fe);
        for (int i = 0; i < H; i++)
            out[i] += p[e] / sum / ws * tmp[i];
    }
    if (r->arch == 2) {
        double sg;
        mv(W(r, "blk.%d.ffn_gate_inp_shexp.weight", il), h, &sg, H, 1);
        swiglu_ffn(W(r, "blk.%d.ffn_gate_shexp.weight", il), W(r, "blk.%d.ffn_up_shexp.weight", il),
                   W(r, "blk.%d.ffn_down_shexp.weight", il), h, tmp, H, r->Fsh);
        for (int i = 0; i < H; i++)
            out[i] += sigm(sg) * tmp[i];
    }
}

/* One token at r->pos; logits[V]. */
static void ref_token(ref_t *r, int tok, double *logits)
{
    int H = r->H;
    double x[4096], h[4096], a[4096];
    ck_assert_int_le(H, 4096);
    const double *emb = W(r, "token_embd.weight", 0);
    memcpy(x, emb + (size_t)tok * H, (size_t)H * sizeof *x);
    for (int il = 0; il < r->L; il++) {
        rms(x, W(r, "blk.%d.attn_norm.weight", il), h, H, r->eps);
        if (r->arch == 2 && (il + 1) % r->interval != 0)
            ref_deltanet(r, il, h, a);
        else
            ref_attention(r, il, h, a);
        for (int i = 0; i < H; i++)
            x[i] += a[i];
        rms(x, W(r, r->arch == 2 ? "blk.%d.post_attention_norm.weight" : "blk.%d.ffn_norm.weight", il), h, H, r->eps);
        ref_ffn(r, il, h, a);
        for (int i = 0; i < H; i++)
            x[i] += a[i];
    }
    rms(x, W(r, "output_norm.weight", 0), h, H, r->eps);
    const vt_gguf_tensor *to;
    const double *out = vt_gguf_find_tensor(r->g, "output.weight", &to) == VT_OK ? W(r, "output.weight", 0) : emb;
    mv(out, h, logits, H, r->V);
    r->pos++;
}

/* Sample's rule (vt_params.h) over double logits. */
static int ref_sample(const double *l, int V, const vt_sampler *s, uint64_t step)
{
    int best = 0;
    for (int i = 1; i < V; i++)
        if (l[i] > l[best])
            best = i;
    if (s->temperature <= 0)
        return best;
    int *idx = malloc((size_t)V * sizeof *idx);
    for (int i = 0; i < V; i++)
        idx[i] = i;
    for (int i = 1; i < V; i++) { /* insertion sort: logit descending, ties lower index first */
        int t = idx[i], j = i - 1;
        while (j >= 0 && (l[idx[j]] < l[t] || (l[idx[j]] == l[t] && idx[j] > t))) {
            idx[j + 1] = idx[j];
            j--;
        }
        idx[j + 1] = t;
    }
    int n = s->top_k > 0 && s->top_k < V ? s->top_k : V;
    double *p = malloc((size_t)n * sizeof *p), tot = 0;
    for (int i = 0; i < n; i++)
        tot += (p[i] = exp((l[idx[i]] - l[idx[0]]) / s->temperature));
    int keep = n;
    double cum = 0;
    for (int i = 0; i < n; i++) {
        cum += p[i] / tot;
        if (cum >= s->top_p) {
            keep = i + 1;
            break;
        }
    }
    double kt = 0;
    for (int i = 0; i < keep; i++)
        kt += p[i];
    double u = vt_sample_uniform(s->seed, step, 0), c = 0;
    int tok = idx[keep - 1];
    for (int i = 0; i < keep; i++) {
        c += p[i] / kt;
        if (c > u) {
            tok = idx[i];
            break;
        }
    }
    free(p);
    free(idx);
    return tok;
}

/* ---- the runner side ---- */

static char *g_dir;
static int g_kv_type = VT_RUNNER_KV_F32; /* the runners' KV cache (the reference matches it) */
static uint32_t g_load_flags;            /* the runners' VT_LOAD_* flags */
static uint32_t g_want_merged;           /* weight groups compare() expects staged side by side */

static char *make_model(const char *arch, int wtype, uint64_t seed)
{
    char *path = malloc(512);
    snprintf(path, 512, "%s/%s-%s-%llu.gguf", g_dir, arch, vt_dtype_name(wtype), (unsigned long long)seed);
    vt_mkmodel_options o = {sizeof o, arch, "tiny", wtype, seed, 0};
    ck_assert_msg(vt_mkmodel_write(&o, path) == VT_OK, "%s", vt_last_error());
    return path;
}

static vt_runner *open_runner(vt_registry **reg, vt_gguf **g, const char *path, uint32_t ctx, uint32_t chunk,
                              const char *threads, uint32_t flags)
{
    setenv("VT_NUM_THREADS", threads, 1);
    *reg = vt_test_open(NULL, "cpu", 0);
    vt_device *dev;
    ck_assert_int_eq(vt_registry_find_device(*reg, "cpu:0", &dev), VT_OK);
    ck_assert_int_eq(vt_gguf_open(path, g), VT_OK);
    vt_runner_options o = {sizeof o, ctx, chunk, g_kv_type, -1, 0, g_load_flags, NULL, NULL, flags};
    vt_runner *r = NULL;
    ck_assert_msg(vt_runner_create(*g, dev, &o, &r) == VT_OK, "%s", vt_last_error());
    return r;
}

static void close_runner(vt_registry *reg, vt_gguf *g, vt_runner *r)
{
    vt_runner_destroy(r);
    vt_gguf_close(g);
    vt_registry_close(reg);
}

#define N_PROMPT 7
#define N_GEN    20
static const int32_t prompt[N_PROMPT] = {1, 17, 42, 99, 3, 250, 7};

/* Runner vs reference: every step's token and logits. */
static void compare(const char *arch, int wtype, const vt_sampler *s, double tol)
{
    char *path = make_model(arch, wtype, 11);
    vt_registry *reg;
    vt_gguf *g;
    vt_runner *r = open_runner(&reg, &g, path, 64, 0, "2", 0);
    ck_assert_uint_eq(vt_runner_get_info(r)->n_merged, g_want_merged);
    ref_t ref;
    ref_open(&ref, path, 64);
    ref.kv_f16 = g_kv_type == VT_RUNNER_KV_F16;
    int V = ref.V;
    float *lr = malloc((size_t)V * sizeof *lr);
    double *lx = malloc((size_t)V * sizeof *lx);
    for (int i = 0; i < N_PROMPT; i++)
        ref_token(&ref, prompt[i], lx);
    int32_t tok;
    ck_assert_msg(vt_runner_step(r, prompt, N_PROMPT, s, 0, &tok, lr) == VT_OK, "%s", vt_last_error());
    int distinct = 0, last = -1;
    for (int step = 0; step < N_GEN; step++) {
        double err = 0, scale = 0;
        for (int i = 0; i < V; i++) {
            err = fmax(err, fabs(lr[i] - lx[i]));
            scale = fmax(scale, fabs(lx[i]));
        }
        ck_assert_msg(err <= tol * scale, "%s %s step %d: logits differ by %g (max |logit| %g, tolerance %g)", arch,
                      vt_dtype_name(wtype), step, err, scale, tol * scale);
        int want = ref_sample(lx, V, s, (uint64_t)step);
        ck_assert_msg(tok == want, "%s %s step %d: runner token %d, reference %d", arch, vt_dtype_name(wtype), step,
                      tok, want);
        distinct += tok != last;
        last = tok;
        ref_token(&ref, tok, lx);
        ck_assert_msg(vt_runner_step(r, NULL, 1, s, (uint64_t)step + 1, &tok, lr) == VT_OK, "%s", vt_last_error());
    }
    ck_assert_msg(distinct >= 3, "%s: the model keeps repeating one token (%d changes)", arch, distinct);
    free(lr);
    free(lx);
    ref_close(&ref);
    close_runner(reg, g, r);
    free(path);
}

/* Tolerance of the *_matches_reference tests: 1e-5 of the largest |logit|,
 * f32 rounding (the worst seen is 3.0e-6, qwen3next f32 step 10): the
 * tiny models' matrices (k < 1024) take the cpu's exact f32 MatMul and
 * the cache is f32, so any reduced-precision intermediate shows. */
static const vt_sampler greedy = {0, 0, 1, 0};
static const vt_sampler sampled = {0.8f, 40, 0.95f, 1234};

START_TEST(qwen3_matches_reference)
{
    compare("qwen3", VT_F32, &greedy, 1e-5);
    compare("qwen3", VT_Q8_0, &greedy, 1e-5);
    compare("qwen3", VT_Q4_0, &sampled, 1e-5);
}
END_TEST

START_TEST(qwen3moe_matches_reference)
{
    compare("qwen3moe", VT_F32, &greedy, 1e-5);
    compare("qwen3moe", VT_Q8_0, &sampled, 1e-5);
}
END_TEST

START_TEST(qwen3next_matches_reference)
{
    compare("qwen3next", VT_F32, &greedy, 1e-5);
    compare("qwen3next", VT_Q4_0, &sampled, 1e-5);
}
END_TEST

/* Weights copied to the device (VT_LOAD_NO_ZERO_COPY: the cpu then stages
 * like a GPU) are staged with q|k|v of each attention layer and gate|up of
 * each dense FFN side by side: the prompt multiplies the members' views,
 * each replayed decode step one MatMul per group; the same tokens and
 * logits as the reference. The weights used in place (every other test
 * here) are not merged. */
START_TEST(merged_weights_match_reference)
{
    g_load_flags = VT_LOAD_NO_ZERO_COPY;
    g_want_merged = 4; /* tiny qwen3: 2 layers x (q|k|v, gate|up) */
    compare("qwen3", VT_F32, &greedy, 1e-5);
    compare("qwen3", VT_Q4_0, &sampled, 1e-5);
    g_want_merged = 2; /* q|k|v of 2 layers; the experts stay apart */
    compare("qwen3moe", VT_Q8_0, &greedy, 1e-5);
    g_want_merged = 1; /* the one full-attention layer of 4 */
    compare("qwen3next", VT_Q4_0, &sampled, 1e-5);
    g_load_flags = 0;
    g_want_merged = 0;
}
END_TEST

/* The default f16 KV cache against the reference storing K and V rounded
 * to f16 the same way: the same tokens; the logits within 2e-4, as a
 * last-bit difference before the rounding can move a K or V element by
 * one f16 ulp (2^-11 relative). Against the exact reference the f16 cache
 * alone moves qwen3 small q4_0 logits by 5.4e-4 of the largest (and its
 * seeded sample at step 58), an f32 cache by 7e-5. */
START_TEST(f16_kv_cache_matches_rounded_reference)
{
    g_kv_type = VT_RUNNER_KV_F16;
    compare("qwen3", VT_Q4_0, &sampled, 2e-4);
    compare("qwen3moe", VT_Q8_0, &sampled, 2e-4);
    compare("qwen3next", VT_Q4_0, &sampled, 2e-4);
    g_kv_type = VT_RUNNER_KV_F32;
}
END_TEST

/* The same tokens and bit-identical logits with 1 and 2 threads (decode
 * replaying the recorded graph), and the same tokens with the prompt in
 * chunks of 3 and every decode step run op by op. */
static void deterministic(const char *arch)
{
    char *path = make_model(arch, VT_Q8_0, 5);
    int32_t toks[3][N_GEN];
    float *logits[3];
    const char *threads[3] = {"1", "2", "2"};
    uint32_t chunk[3] = {0, 0, 3};
    for (int run = 0; run < 3; run++) {
        vt_registry *reg;
        vt_gguf *g;
        vt_runner *r = open_runner(&reg, &g, path, 64, chunk[run], threads[run], run == 2 ? VT_RUNNER_NO_GRAPH : 0);
        uint32_t V = vt_runner_get_info(r)->n_vocab;
        logits[run] = malloc(V * sizeof(float));
        vt_generate_stats st;
        ck_assert_msg(vt_runner_generate(r, prompt, N_PROMPT, N_GEN, &sampled, toks[run], &st) == VT_OK, "%s",
                      vt_last_error());
        ck_assert_int_eq(st.n_decoded, N_GEN - 1);
        ck_assert_int_eq(vt_runner_position(r), N_PROMPT + N_GEN - 1);
        ck_assert_int_eq(vt_runner_get_info(r)->decode_graph, run != 2);
        ck_assert_int_eq(vt_runner_step(r, NULL, 1, NULL, 0, NULL, logits[run]), VT_OK);
        close_runner(reg, g, r);
        if (run == 0)
            continue;
        for (int i = 0; i < N_GEN; i++)
            ck_assert_msg(toks[run][i] == toks[0][i], "%s run %d token %d: %d vs %d", arch, run, i, toks[run][i],
                          toks[0][i]);
        if (run == 1)
            ck_assert_msg(!memcmp(logits[run], logits[0], V * sizeof(float)), "%s: logits differ with 2 threads", arch);
        else
            for (uint32_t i = 0; i < V; i++)
                ck_assert_msg(fabsf(logits[run][i] - logits[0][i]) <= 1e-4f * (1 + fabsf(logits[0][i])),
                              "%s: chunked prefill logit %u %g vs %g", arch, i, logits[run][i], logits[0][i]);
    }
    for (int run = 0; run < 3; run++)
        free(logits[run]);
    free(path);
}

START_TEST(deterministic_over_threads_and_chunks)
{
    deterministic("qwen3");
    deterministic("qwen3moe");
    deterministic("qwen3next");
}
END_TEST

/* Copy a GGUF file through the writer, leaving out tensor `drop` or
 * giving tensor `reshape` a doubled ne[0], or a new architecture. */
static char *rewrite(const char *src, const char *drop, const char *reshape, const char *arch, const char *tag)
{
    vt_gguf *g;
    ck_assert_int_eq(vt_gguf_open(src, &g), VT_OK);
    vt_gguf_writer *w;
    ck_assert_int_eq(vt_gguf_writer_create(&w), VT_OK);
    for (size_t i = 0; i < vt_gguf_kv_count(g); i++) {
        const vt_gguf_kv *kv = vt_gguf_kv_at(g, i);
        vt_gguf_value v;
        ck_assert_int_eq(vt_gguf_kv_value(g, i, 0, &v), VT_OK);
        if (arch && !strcmp(kv->key, "general.architecture")) {
            v.as.str.data = arch;
            v.as.str.len = strlen(arch);
        }
        ck_assert_int_eq(vt_gguf_writer_add_value(w, kv->key, &v), VT_OK);
    }
    void *extra = NULL;
    for (size_t i = 0; i < vt_gguf_tensor_count(g); i++) {
        const vt_gguf_tensor *t = vt_gguf_tensor_at(g, i);
        if (drop && !strcmp(t->name, drop))
            continue;
        if (reshape && !strcmp(t->name, reshape)) {
            int64_t ne[4] = {t->ne[0] * 2, t->ne[1], t->ne[2], t->ne[3]};
            extra = calloc(2, t->n_bytes);
            ck_assert_int_eq(vt_gguf_writer_add_tensor(w, t->name, t->type, t->n_dims, ne, extra, 2 * t->n_bytes),
                             VT_OK);
            continue;
        }
        ck_assert_int_eq(vt_gguf_writer_add_tensor(w, t->name, t->type, t->n_dims, t->ne, t->data, t->n_bytes), VT_OK);
    }
    char *path = malloc(512);
    snprintf(path, 512, "%s/bad-%s.gguf", g_dir, tag);
    ck_assert_int_eq(vt_gguf_writer_write_file(w, path), VT_OK);
    vt_gguf_writer_destroy(w);
    free(extra);
    vt_gguf_close(g);
    return path;
}

/* A refusal of check_file, of create on cpu:0 and on a cuda-stub, and of
 * create_split over both, naming what, before anything is allocated on
 * or copied to the stub (its counters stay at zero). */
static void refused(const char *path, vt_status want, const char *needle)
{
    vt_gguf *g;
    ck_assert_int_eq(vt_gguf_open(path, &g), VT_OK);
    vt_status st = vt_runner_check_file(g, NULL);
    ck_assert_msg(st == want && strstr(vt_last_error(), needle), "check_file: %s (%s), wanted %s", vt_status_name(st),
                  vt_last_error(), needle);
    setenv("VT_CUDA_STUB_HOST_ADDRESSABLE", "1", 1);
    vt_registry *reg = vt_test_open(NULL, "cpu,cuda-stub", 0);
    vt_device *dev, *stub;
    ck_assert_int_eq(vt_registry_find_device(reg, "cpu:0", &dev), VT_OK);
    ck_assert_int_eq(vt_registry_find_device(reg, "cuda-stub:0", &stub), VT_OK);
    vt_device *both[2] = {stub, dev};
    for (int how = 0; how < 3; how++) {
        vt_runner *r = (vt_runner *)1;
        st = how == 0   ? vt_runner_create(g, dev, NULL, &r)
             : how == 1 ? vt_runner_create(g, stub, NULL, &r)
                        : vt_runner_create_split(g, both, 2, NULL, &r);
        ck_assert_msg(st == want && strstr(vt_last_error(), needle) && r == NULL, "create %d: %s", how,
                      vt_last_error());
    }
    vt_device_stats ds;
    memset(&ds, 0, sizeof ds);
    ds.struct_size = sizeof ds;
    ds = vt_test_stats(stub);
    ck_assert_msg(ds.backend.allocs == 0 && ds.backend.peak_bytes == 0 && ds.backend.h2d_copies == 0,
                  "the stub saw %llu allocations, %llu bytes, %llu copies", (unsigned long long)ds.backend.allocs,
                  (unsigned long long)ds.backend.peak_bytes, (unsigned long long)ds.backend.h2d_copies);
    vt_registry_close(reg);
    vt_gguf_close(g);
}

START_TEST(bad_files_and_inputs_are_refused_by_name)
{
    char *good = make_model("qwen3next", VT_F32, 3);
    char *p = rewrite(good, NULL, NULL, "llama", "arch");
    refused(p, VT_E_UNSUPPORTED, "architecture 'llama'");
    free(p);
    p = rewrite(good, "blk.1.ssm_a", NULL, NULL, "missing");
    refused(p, VT_E_BAD_FILE, "tensor 'blk.1.ssm_a' is missing");
    free(p);
    p = rewrite(good, NULL, "blk.3.attn_k_norm.weight", NULL, "shape");
    refused(p, VT_E_BAD_FILE, "tensor 'blk.3.attn_k_norm.weight' has ne {64");
    free(p);
    p = rewrite(good, NULL, "token_embd.weight", NULL, "embd");
    refused(p, VT_E_BAD_FILE, "tensor 'token_embd.weight' has ne {256");
    free(p);
    p = rewrite(good, "output_norm.weight", NULL, NULL, "norm");
    refused(p, VT_E_BAD_FILE, "tensor 'output_norm.weight' is missing");
    free(p);

    /* A bad token or length is refused before any copy or launch. */
    vt_registry *reg;
    vt_gguf *g;
    vt_runner *r = open_runner(&reg, &g, good, 8, 0, "1", 0);
    vt_device *cpu;
    ck_assert_int_eq(vt_registry_find_device(reg, "cpu:0", &cpu), VT_OK);
    vt_device_stats before, after;
    memset(&before, 0, sizeof before);
    memset(&after, 0, sizeof after);
    before = vt_test_stats(cpu);
    int32_t bad[2] = {3, 512}, tok;
    ck_assert_int_eq(vt_runner_step(r, bad, 2, NULL, 0, &tok, NULL), VT_E_INVALID_ARG);
    ck_assert_ptr_nonnull(strstr(vt_last_error(), "token 512 (index 1) is outside the vocabulary of 512"));
    ck_assert_int_eq(vt_runner_position(r), 0);
    int32_t nine[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    ck_assert_int_eq(vt_runner_step(r, nine, 9, NULL, 0, &tok, NULL), VT_E_INVALID_ARG);
    ck_assert_ptr_nonnull(strstr(vt_last_error(), "exceed the context of 8"));
    int32_t out[4];
    ck_assert_int_eq(vt_runner_generate(r, nine, 6, 4, NULL, out, NULL), VT_E_INVALID_ARG);
    ck_assert_ptr_nonnull(strstr(vt_last_error(), "6 prompt + 4 generated tokens exceed the context of 8"));
    /* A sampler out of its range (vt_sampler) is refused by field, before
     * the reset of generate or the prefill of step: a NaN temperature is
     * not greedy, a NaN or negative top_p is not "no cut". */
    const struct {
        vt_sampler s;
        const char *why;
    } bad_s[] = {
        {{NAN, 0, 0.0f, 1}, "sampler temperature nan is not finite"},
        {{INFINITY, 0, 0.0f, 1}, "sampler temperature inf is not finite"},
        {{0.8f, -1, 0.0f, 1}, "sampler top_k -1 is negative (0: no cut)"},
        {{0.8f, 0, NAN, 1}, "sampler top_p nan is outside [0, 1] (0 means 1)"},
        {{0.0f, 0, -0.5f, 1}, "sampler top_p -0.5 is outside [0, 1] (0 means 1)"},
        {{0.8f, 0, 1.5f, 1}, "sampler top_p 1.5 is outside [0, 1] (0 means 1)"},
    };
    for (size_t i = 0; i < sizeof bad_s / sizeof bad_s[0]; i++) {
        ck_assert_int_eq(vt_runner_step(r, nine, 2, &bad_s[i].s, 0, &tok, NULL), VT_E_INVALID_ARG);
        ck_assert_msg(strstr(vt_last_error(), bad_s[i].why), "%zu: %s", i, vt_last_error());
        ck_assert_ptr_nonnull(strstr(vt_last_error(), "vt_runner_step: "));
        ck_assert_int_eq(vt_runner_generate(r, nine, 2, 2, &bad_s[i].s, out, NULL), VT_E_INVALID_ARG);
        ck_assert_msg(strstr(vt_last_error(), bad_s[i].why), "%zu: %s", i, vt_last_error());
        ck_assert_ptr_nonnull(strstr(vt_last_error(), "vt_runner_generate: "));
    }
    ck_assert_int_eq(vt_runner_position(r), 0);
    after = vt_test_stats(cpu);
    ck_assert_uint_eq(after.backend.h2d_copies, before.backend.h2d_copies);
    ck_assert_uint_eq(after.backend.allocs, before.backend.allocs);
    ck_assert_uint_eq(after.native_runs, before.native_runs);
    ck_assert_int_eq(vt_runner_generate(r, nine, 5, 4, NULL, out, NULL), VT_OK);
    /* n_gen = 0 prefills the prompt and samples nothing into out: the next
     * step continues after it (generate's doc: reset, prefill, n_gen). */
    out[0] = -7;
    vt_generate_stats gs = {1.0, 1.0, 0, 9};
    ck_assert_int_eq(vt_runner_generate(r, nine, 5, 0, NULL, out, &gs), VT_OK);
    ck_assert_int_eq(out[0], -7);
    ck_assert_uint_eq(vt_runner_position(r), 5);
    ck_assert_uint_eq(gs.n_prompt, 5);
    ck_assert_uint_eq(gs.n_decoded, 0);
    ck_assert(gs.prefill_s > 0.0 && gs.decode_s == 0.0);
    ck_assert_int_eq(vt_runner_generate(r, nine, 9, 0, NULL, NULL, NULL), VT_E_INVALID_ARG);
    ck_assert_ptr_nonnull(strstr(vt_last_error(), "9 prompt + 0 generated tokens exceed the context of 8"));
    ck_assert_int_eq(vt_runner_generate(r, nine, 8, 0, NULL, NULL, NULL), VT_OK);
    ck_assert_uint_eq(vt_runner_position(r), 8);
    close_runner(reg, g, r);
    free(good);
}
END_TEST

/* A bad $VT_TIER_POLICY (read at the registry's open, reported by every
 * resolution) is what vt_runner_create names, not "0 of N planned ops
 * refused", and nothing is allocated. */
START_TEST(bad_tier_policy_is_named)
{
    char *path = make_model("qwen3", VT_F32, 5);
    setenv("VT_TIER_POLICY", "bogus", 1);
    vt_registry *reg = vt_test_open(NULL, "cpu", 0);
    unsetenv("VT_TIER_POLICY");
    vt_device *cpu;
    ck_assert_int_eq(vt_registry_find_device(reg, "cpu:0", &cpu), VT_OK);
    vt_gguf *g;
    ck_assert_int_eq(vt_gguf_open(path, &g), VT_OK);
    vt_device_stats before = vt_test_stats(cpu), after;
    vt_runner *r = (vt_runner *)1;
    ck_assert_int_eq(vt_runner_create(g, cpu, NULL, &r), VT_E_INVALID_ARG);
    ck_assert_ptr_null(r);
    const char *m = vt_last_error();
    ck_assert_msg(strstr(m, "qwen3 model on cpu:0: VT_TIER_POLICY='bogus' is not a policy: use strict or portable") &&
                      !strstr(m, "planned ops refused"),
                  "%s", m);
    after = vt_test_stats(cpu);
    ck_assert_uint_eq(after.backend.allocs, before.backend.allocs);
    ck_assert_uint_eq(after.backend.h2d_copies, before.backend.h2d_copies);
    vt_gguf_close(g);
    vt_registry_close(reg);
    free(path);
}
END_TEST

/* Generate on a device of the named backend; tokens and the final logits. */
static void run_on(const char *backend, const char *path, int32_t *toks, float *logits, uint32_t V)
{
    vt_registry *reg = vt_test_open(NULL, "cpu,cuda-stub", 0);
    char id[64];
    snprintf(id, sizeof id, "%s:0", backend);
    vt_device *dev;
    ck_assert_int_eq(vt_registry_find_device(reg, id, &dev), VT_OK);
    vt_gguf *g;
    ck_assert_int_eq(vt_gguf_open(path, &g), VT_OK);
    vt_runner *r;
    ck_assert_msg(vt_runner_create(g, dev, NULL, &r) == VT_OK, "%s: %s", id, vt_last_error());
    ck_assert_msg(vt_runner_generate(r, prompt, N_PROMPT, N_GEN, &sampled, toks, NULL) == VT_OK, "%s: %s", id,
                  vt_last_error());
    ck_assert_int_eq(vt_runner_step(r, NULL, 1, NULL, 0, NULL, logits), VT_OK);
    ck_assert_uint_eq(vt_runner_get_info(r)->n_vocab, V);
    vt_runner_destroy(r);
    vt_gguf_close(g);
    vt_registry_close(reg);
}

/* On the cuda-stub (deferred queues: work runs when the host waits; the
 * ops on the CPU tier over host-addressable memory) the runner gives the
 * cpu's tokens and logits: every input write, graph replay and read-back
 * is ordered through the queue. */
START_TEST(deferred_queue_device_matches_cpu)
{
    setenv("VT_CUDA_STUB_HOST_ADDRESSABLE", "1", 1);
    for (int a = 0; a < 3; a++) {
        const char *arch = a == 0 ? "qwen3" : a == 1 ? "qwen3moe" : "qwen3next";
        char *path = make_model(arch, VT_Q8_0, 21);
        int32_t t_cpu[N_GEN], t_stub[N_GEN];
        float l_cpu[512], l_stub[512];
        run_on("cpu", path, t_cpu, l_cpu, 512);
        run_on("cuda-stub", path, t_stub, l_stub, 512);
        ck_assert_msg(!memcmp(t_cpu, t_stub, sizeof t_cpu), "%s: the stub's tokens differ", arch);
        for (int i = 0; i < 512; i++) /* the stub may expand a block format the cpu keeps */
            ck_assert_msg(fabsf(l_cpu[i] - l_stub[i]) <= 1e-3f * (1 + fabsf(l_cpu[i])), "%s: logit %d %g vs %g", arch,
                          i, l_cpu[i], l_stub[i]);
        free(path);
    }
}
END_TEST

/* A tiny model with n_layers layers. */
static char *make_layers(const char *arch, int wtype, uint64_t seed, uint32_t n_layers)
{
    char *path = malloc(512);
    snprintf(path, 512, "%s/%s-%s-%llu-L%u.gguf", g_dir, arch, vt_dtype_name(wtype), (unsigned long long)seed,
             n_layers);
    vt_mkmodel_options o = {sizeof o, arch, "tiny", wtype, seed, n_layers};
    ck_assert_msg(vt_mkmodel_write(&o, path) == VT_OK, "%s", vt_last_error());
    return path;
}

/* Generate through r: the tokens, then the logits of one more step. */
static void gen_with(vt_runner *r, const vt_sampler *s, int32_t *toks, float *logits)
{
    ck_assert_msg(vt_runner_generate(r, prompt, N_PROMPT, N_GEN, s, toks, NULL) == VT_OK, "%s", vt_last_error());
    ck_assert_int_eq(vt_runner_position(r), N_PROMPT + N_GEN - 1);
    ck_assert_msg(vt_runner_step(r, NULL, 1, NULL, 0, NULL, logits) == VT_OK, "%s", vt_last_error());
}

/* A layer split over two host-addressable cuda-stub devices whose memory
 * holds about 40% of the model each and cpu:0: each device runs its layers
 * (the activations copied at each boundary, the token back to the first),
 * and the tokens are those of the model on cpu:0 alone, greedy and
 * sampled, with the decode graph per part and op by op with the prompt in
 * chunks of 3. One stub alone refuses the model, naming the split over it
 * and cpu:0 that fits; two stubs without the cpu cannot place every layer. */
static void split_case(const char *arch, int wtype)
{
    char *path = make_layers(arch, wtype, 9, 8);
    vt_gguf *g;
    ck_assert_int_eq(vt_gguf_open(path, &g), VT_OK);
    const uint32_t V = 512;
    int32_t t_one[2][N_GEN], t_split[N_GEN];
    float l_one[2][512], l_split[512];
    const vt_sampler *samplers[2] = {&greedy, &sampled};
    vt_runner_options o = {sizeof o, 64, 0, VT_RUNNER_KV_F16, -1, 0, 0, NULL, NULL, 0};

    /* On cpu:0 alone, and what the whole model costs on one stub. */
    unsetenv("VT_CUDA_STUB_MEMORY_BYTES");
    vt_registry *reg = vt_test_open(NULL, "cpu,cuda-stub", 0);
    vt_device *cpu, *stub0, *stub1;
    ck_assert_int_eq(vt_registry_find_device(reg, "cpu:0", &cpu), VT_OK);
    ck_assert_int_eq(vt_registry_find_device(reg, "cuda-stub:0", &stub0), VT_OK);
    vt_runner *r;
    ck_assert_msg(vt_runner_create(g, cpu, &o, &r) == VT_OK, "%s", vt_last_error());
    for (int i = 0; i < 2; i++)
        gen_with(r, samplers[i], t_one[i], l_one[i]);
    vt_runner_destroy(r);
    vt_runner_split sp;
    vt_runner_options big = o;
    big.budget_bytes = 1ull << 40;
    ck_assert_int_eq(vt_runner_plan_split(g, &stub0, 1, &big, &sp), VT_OK);
    uint64_t whole = sp.needed_bytes[0];
    ck_assert_uint_eq(sp.first_layer[1], 8);
    vt_registry_close(reg);

    /* Stubs with 40% of that (beyond the 512 MiB headroom the budget keeps). */
    char mem[32];
    snprintf(mem, sizeof mem, "%llu", (unsigned long long)((512ull << 20) + whole * 2 / 5));
    setenv("VT_CUDA_STUB_MEMORY_BYTES", mem, 1);
    reg = vt_test_open(NULL, "cpu,cuda-stub", 0);
    ck_assert_int_eq(vt_registry_find_device(reg, "cpu:0", &cpu), VT_OK);
    ck_assert_int_eq(vt_registry_find_device(reg, "cuda-stub:0", &stub0), VT_OK);
    ck_assert_int_eq(vt_registry_find_device(reg, "cuda-stub:1", &stub1), VT_OK);

    r = (vt_runner *)1;
    ck_assert_int_eq(vt_runner_create(g, stub0, &o, &r), VT_E_DOES_NOT_FIT);
    ck_assert_ptr_null(r);
    ck_assert_msg(strstr(vt_last_error(), "does not fit on cuda-stub:0") &&
                      strstr(vt_last_error(), "a layer split over cuda-stub:0,cpu:0 fits: layers 0-"),
                  "%s", vt_last_error());

    vt_device *two[2] = {stub0, stub1};
    ck_assert_int_eq(vt_runner_create_split(g, two, 2, &o, &r), VT_E_DOES_NOT_FIT);
    ck_assert_ptr_null(r);
    ck_assert_msg(strstr(vt_last_error(), "of 8 layers fit"), "%s", vt_last_error());

    vt_device *three[3] = {stub0, stub1, cpu};
    ck_assert_int_eq(vt_runner_plan_split(g, three, 3, &o, &sp), VT_OK);
    for (int d = 0; d < 3; d++) /* every device holds layers, none over its budget */
        ck_assert_msg(sp.first_layer[d + 1] > sp.first_layer[d] && sp.needed_bytes[d] <= sp.budget_bytes[d],
                      "%s: device %d: layers %u-%u, %llu of %llu bytes", arch, d, sp.first_layer[d],
                      sp.first_layer[d + 1], (unsigned long long)sp.needed_bytes[d],
                      (unsigned long long)sp.budget_bytes[d]);
    ck_assert_uint_eq(sp.first_layer[3], 8);
    for (int mode = 0; mode < 2; mode++) {
        vt_runner_options om = o;
        if (mode == 1) {
            om.chunk = 3;
            om.flags = VT_RUNNER_NO_GRAPH;
        }
        ck_assert_msg(vt_runner_create_split(g, three, 3, &om, &r) == VT_OK, "%s", vt_last_error());
        const vt_runner_info *in = vt_runner_get_info(r);
        ck_assert_uint_eq(in->n_devices, 3);
        if (mode == 0) /* smaller chunks need smaller workspaces: more layers fit the stubs */
            ck_assert_str_eq(in->placement, sp.placement);
        for (int i = 0; i < 2; i++) {
            gen_with(r, samplers[i], t_split, l_split);
            for (int k = 0; k < N_GEN; k++)
                ck_assert_msg(t_split[k] == t_one[i][k], "%s %s mode %d sampler %d token %d: split %d, one device %d",
                              arch, vt_dtype_name(wtype), mode, i, k, t_split[k], t_one[i][k]);
            for (uint32_t k = 0; k < V; k++)
                ck_assert_msg(fabsf(l_split[k] - l_one[i][k]) <= 1e-3f * (1 + fabsf(l_one[i][k])),
                              "%s: logit %u split %g, one device %g", arch, k, l_split[k], l_one[i][k]);
        }
        ck_assert_int_eq(in->decode_graph, mode == 0);
        vt_runner_destroy(r);
    }
    vt_registry_close(reg);
    unsetenv("VT_CUDA_STUB_MEMORY_BYTES");
    vt_gguf_close(g);
    free(path);
}

START_TEST(layer_split_matches_one_device)
{
    setenv("VT_CUDA_STUB_HOST_ADDRESSABLE", "1", 1);
    setenv("VT_CUDA_STUB_DEVICES", "2", 1);
    split_case("qwen3", VT_Q8_0);
    split_case("qwen3moe", VT_Q8_0);
    split_case("qwen3next", VT_Q4_0);
    unsetenv("VT_CUDA_STUB_DEVICES");
}
END_TEST

static bool select_blk1(void *user, const char *name)
{
    (void)user;
    return !strncmp(name, "blk.1.", 6) || !strcmp(name, "output_norm.weight");
}

/* vt_load_options.select (what a part of a split loads): the plan lists
 * and the model holds only the selected tensors, in file order, found by
 * name; the others are not there. */
START_TEST(load_select_plans_and_stages_a_part)
{
    char *path = make_model("qwen3", VT_Q8_0, 2);
    vt_gguf *g;
    ck_assert_int_eq(vt_gguf_open(path, &g), VT_OK);
    vt_registry *reg = vt_test_open(NULL, "cpu", 0);
    vt_device *dev;
    ck_assert_int_eq(vt_registry_find_device(reg, "cpu:0", &dev), VT_OK);
    vt_load_options lo;
    memset(&lo, 0, sizeof lo);
    lo.struct_size = sizeof lo;
    lo.select = select_blk1;
    vt_load_plan *plan;
    ck_assert_int_eq(vt_load_plan_create(g, dev, &lo, &plan), VT_OK);
    size_t want = 1;
    for (size_t i = 0; i < vt_gguf_tensor_count(g); i++)
        want += !strncmp(vt_gguf_tensor_at(g, i)->name, "blk.1.", 6);
    ck_assert_uint_eq(vt_load_plan_count(plan), want);
    size_t last = 0;
    for (size_t i = 0; i < vt_load_plan_count(plan); i++) {
        const vt_gguf_tensor *t;
        ck_assert_int_eq(vt_load_plan_entry(plan, i, &t, NULL, NULL), VT_OK);
        ck_assert_msg(select_blk1(NULL, t->name) && (i == 0 || t->index > last), "entry %zu: %s", i, t->name);
        last = t->index;
    }
    vt_model *m;
    ck_assert_int_eq(vt_model_stage(plan, &lo, &m), VT_OK);
    ck_assert_uint_eq(vt_model_tensor_count(m), want);
    ck_assert_ptr_nonnull(vt_model_find(m, "blk.1.ffn_down.weight"));
    ck_assert_ptr_nonnull(vt_model_find(m, "output_norm.weight"));
    ck_assert_ptr_null(vt_model_find(m, "blk.0.ffn_down.weight"));
    ck_assert_ptr_null(vt_model_find(m, "token_embd.weight"));
    ck_assert_int_eq(vt_tensor_dim(vt_model_find(m, "blk.1.attn_q.weight"), 1), 128);
    vt_model_destroy(m);
    vt_load_plan_destroy(plan);
    vt_registry_close(reg);
    vt_gguf_close(g);
    free(path);
}
END_TEST

/* A split whose second device fails an allocation part way (injected on
 * cuda-stub:1) is refused naming the split and the failure, and frees
 * what the first part had staged: both stubs end with nothing live and
 * as many frees as allocations. The budget option forces the split. */
START_TEST(layer_split_failure_frees_everything)
{
    setenv("VT_CUDA_STUB_HOST_ADDRESSABLE", "1", 1);
    setenv("VT_CUDA_STUB_DEVICES", "2", 1);
    setenv("VT_CUDA_STUB_FAULT_DEVICE", "1", 1);
    setenv("VT_CUDA_STUB_FAIL_ALLOC_AT", "4", 1);
    char *path = make_layers("qwen3", VT_Q8_0, 9, 8);
    vt_gguf *g;
    ck_assert_int_eq(vt_gguf_open(path, &g), VT_OK);
    vt_registry *reg = vt_test_open(NULL, "cpu,cuda-stub", 0);
    vt_device *d[3];
    ck_assert_int_eq(vt_registry_find_device(reg, "cuda-stub:0", &d[0]), VT_OK);
    ck_assert_int_eq(vt_registry_find_device(reg, "cuda-stub:1", &d[1]), VT_OK);
    ck_assert_int_eq(vt_registry_find_device(reg, "cpu:0", &d[2]), VT_OK);
    vt_runner_options o = {sizeof o, 64, 0, VT_RUNNER_KV_F16, -1, 1ull << 40, 0, NULL, NULL, 0};
    vt_runner_split sp;
    ck_assert_int_eq(vt_runner_plan_split(g, d, 1, &o, &sp), VT_OK);
    o.budget_bytes = sp.needed_bytes[0] * 2 / 5;
    ck_assert_int_eq(vt_runner_plan_split(g, d, 3, &o, &sp), VT_OK);
    ck_assert(sp.first_layer[1] > 0 && sp.first_layer[2] > sp.first_layer[1] && sp.first_layer[2] < 8);
    vt_runner *r = (vt_runner *)1;
    ck_assert_int_eq(vt_runner_create_split(g, d, 3, &o, &r), VT_E_DEVICE_OOM);
    ck_assert_ptr_null(r);
    ck_assert_msg(strstr(vt_last_error(), "layer split (layers 0-") &&
                      strstr(vt_last_error(), "cuda-stub:1: injected allocation failure (allocation #4)"),
                  "%s", vt_last_error());
    for (int i = 0; i < 2; i++) {
        vt_device_stats ds;
        memset(&ds, 0, sizeof ds);
        ds.struct_size = sizeof ds;
        ds = vt_test_stats(d[i]);
        ck_assert_msg(ds.backend.live_bytes == 0 && ds.backend.allocs == ds.backend.frees && ds.backend.allocs > 0,
                      "cuda-stub:%d: %llu live bytes, %llu allocations, %llu frees", i,
                      (unsigned long long)ds.backend.live_bytes, (unsigned long long)ds.backend.allocs,
                      (unsigned long long)ds.backend.frees);
    }
    vt_registry_close(reg);
    vt_gguf_close(g);
    free(path);
    unsetenv("VT_CUDA_STUB_FAIL_ALLOC_AT");
    unsetenv("VT_CUDA_STUB_FAULT_DEVICE");
    unsetenv("VT_CUDA_STUB_DEVICES");
}
END_TEST

/* A device without the kernels refuses the model at creation, listing
 * every refused op at once, before any weight is staged. */
START_TEST(refused_ops_are_listed_together)
{
    unsetenv("VT_CUDA_STUB_HOST_ADDRESSABLE");
    char *path = make_model("qwen3next", VT_F32, 4);
    vt_registry *reg = vt_test_open(NULL, "cuda-stub", 0);
    vt_device *dev;
    ck_assert_int_eq(vt_registry_find_device(reg, "cuda-stub:0", &dev), VT_OK);
    vt_gguf *g;
    ck_assert_int_eq(vt_gguf_open(path, &g), VT_OK);
    vt_runner *r = NULL;
    ck_assert_int_eq(vt_runner_create(g, dev, NULL, &r), VT_E_OP_MISSING);
    ck_assert_ptr_null(r);
    char m[8192];
    snprintf(m, sizeof m, "%s", vt_last_error());
    const char *needles[] = {"qwen3next model on cuda-stub:0", "MatMul (20)",    "GatedDeltaRule (32)",
                             "CausalConv1dUpdate (9)",         "Attention (30)", "IndexSelect (90)"};
    for (size_t i = 0; i < sizeof needles / sizeof needles[0]; i++)
        ck_assert_msg(strstr(m, needles[i]), "'%s' not in the refusal (%.300s...)", needles[i], m);
    vt_gguf_close(g);
    vt_registry_close(reg);
    free(path);
}
END_TEST

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    g_dir = malloc(4096);
    snprintf(g_dir, 4096, "%s/vt-runner-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    Suite *s = suite_create("runner");
    TCase *tc = tcase_create("cpu");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, qwen3_matches_reference);
    tcase_add_test(tc, qwen3moe_matches_reference);
    tcase_add_test(tc, qwen3next_matches_reference);
    tcase_add_test(tc, f16_kv_cache_matches_rounded_reference);
    tcase_add_test(tc, merged_weights_match_reference);
    tcase_add_test(tc, deterministic_over_threads_and_chunks);
    tcase_add_test(tc, bad_files_and_inputs_are_refused_by_name);
    tcase_add_test(tc, bad_tier_policy_is_named);
    tcase_add_test(tc, deferred_queue_device_matches_cpu);
    tcase_add_test(tc, refused_ops_are_listed_together);
    tcase_add_test(tc, load_select_plans_and_stages_a_part);
    tcase_add_test(tc, layer_split_matches_one_device);
    tcase_add_test(tc, layer_split_failure_frees_everything);
    suite_add_tcase(s, tc);
    int rc = vt_test_run_suite(s);
    vt_test_rmtree(g_dir);
    free(g_dir);
    return rc;
}
