/* mkmodel.c - synthetic qwen3 / qwen3moe / qwen3next GGUF files with
 * random, well-conditioned weights in llama.cpp's layout (MODELS.md). */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vt_internal.h"
#include "vt/vt_gguf_writer.h"
#include "vt/vt_mkmodel.h"
#include "vt/vt_quantize.h"

enum { ARCH_QWEN3, ARCH_QWEN3MOE, ARCH_QWEN3NEXT };

/* Dimensions of a preset. */
typedef struct dims {
    uint32_t L, H, F, nh, nkv, hd, V;
    uint32_t E, k, Fe, Fsh;           /* MoE */
    uint32_t K, nk, nv, dk, interval; /* qwen3next DeltaNet */
    uint32_t rope_dim;
    int tied;
} dims;

static const char *const arch_names[] = {"qwen3", "qwen3moe", "qwen3next"};
static const char *const preset_names[] = {"tiny", "small", "8b-shape"};

/* [arch][preset] */
static const dims presets[3][3] = {
    {
        {.L = 2, .H = 128, .F = 256, .nh = 4, .nkv = 2, .hd = 32, .V = 512},
        {.L = 6, .H = 512, .F = 1536, .nh = 8, .nkv = 4, .hd = 64, .V = 8192},
        {.L = 36, .H = 4096, .F = 14336, .nh = 32, .nkv = 8, .hd = 128, .V = 151936},
    },
    {
        {.L = 2, .H = 128, .F = 256, .nh = 4, .nkv = 2, .hd = 32, .V = 512, .E = 8, .k = 2, .Fe = 64},
        {.L = 4, .H = 512, .F = 1536, .nh = 8, .nkv = 4, .hd = 64, .V = 8192, .E = 16, .k = 4, .Fe = 256},
        {.L = 24, .H = 2048, .F = 6144, .nh = 32, .nkv = 4, .hd = 128, .V = 151936, .E = 64, .k = 8, .Fe = 768},
    },
    {
        {.L = 4,
         .H = 128,
         .F = 256,
         .nh = 4,
         .nkv = 2,
         .hd = 32,
         .V = 512,
         .E = 8,
         .k = 2,
         .Fe = 64,
         .Fsh = 64,
         .K = 4,
         .nk = 2,
         .nv = 4,
         .dk = 32,
         .interval = 4,
         .rope_dim = 8,
         .tied = 1},
        {.L = 8,
         .H = 512,
         .F = 1536,
         .nh = 8,
         .nkv = 2,
         .hd = 64,
         .V = 8192,
         .E = 16,
         .k = 4,
         .Fe = 256,
         .Fsh = 256,
         .K = 4,
         .nk = 4,
         .nv = 8,
         .dk = 64,
         .interval = 4,
         .rope_dim = 16},
        {.L = 24,
         .H = 2048,
         .F = 5120,
         .nh = 16,
         .nkv = 2,
         .hd = 256,
         .V = 151936,
         .E = 64,
         .k = 8,
         .Fe = 512,
         .Fsh = 512,
         .K = 4,
         .nk = 16,
         .nv = 32,
         .dk = 128,
         .interval = 4,
         .rope_dim = 64},
    },
};

/* How a tensor's values are drawn. */
enum { FILL_UNIFORM, FILL_NORM, FILL_SSM_A };

/* The writer and everything it borrows. */
typedef struct mk {
    vt_gguf_writer *w;
    vt_dtype wtype;
    uint64_t seed;
    int share; /* one buffer per tensor kind */
    void **bufs;
    size_t n_bufs, cap_bufs;
    struct {
        char kind[64];
        void *data;
    } shared[64];
    int n_shared;
} mk;

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

static uint64_t next_u64(uint64_t *s)
{
    return vt_splitmix64_next(s);
}

/* Uniform in [-1, 1). */
static float next_sym(uint64_t *s)
{
    return (float)((double)(next_u64(s) >> 11) * (2.0 / 9007199254740992.0) - 1.0);
}

static vt_status keep_buf(mk *m, void *p)
{
    if (m->n_bufs == m->cap_bufs) {
        size_t cap = m->cap_bufs ? 2 * m->cap_bufs : 64;
        void **nb = realloc(m->bufs, cap * sizeof *nb);
        if (!nb)
            return vt_set_error(VT_E_NO_MEMORY, "mkmodel: out of host memory");
        m->bufs = nb;
        m->cap_bufs = cap;
    }
    m->bufs[m->n_bufs++] = p;
    return VT_OK;
}

/* Kind of a tensor: its name without "blk.N." (shared across layers). */
static void kind_of(const char *name, char *kind, size_t size)
{
    const char *p = name;
    if (!strncmp(name, "blk.", 4)) {
        p = strchr(name + 4, '.');
        p = p ? p + 1 : name;
    }
    if (!strcmp(p, "output.weight"))
        p = "token_embd.weight"; /* the same values serve both */
    snprintf(kind, size, "%s", p);
}

/* Rows r0..r1 of one tensor: drawn, then encoded. */
typedef struct fill_job {
    uint64_t seed;
    int fill;
    float scale;
    int type;
    int64_t n, rows;
    uint64_t row_bytes;
    uint8_t *data;
    int64_t r0, r1;
    vt_status st;
} fill_job;

static void *fill_rows(void *arg)
{
    fill_job *j = arg;
    float *row = malloc((size_t)j->n * sizeof *row);
    if (!row) {
        j->st = vt_set_error(VT_E_NO_MEMORY, "mkmodel: out of host memory");
        return NULL;
    }
    for (int64_t r = j->r0; r < j->r1 && j->st == VT_OK; r++) {
        uint64_t s = j->seed ^ (VT_SPLITMIX64_GAMMA * (uint64_t)(r + 1));
        for (int64_t i = 0; i < j->n; i++) {
            float u = next_sym(&s);
            if (j->fill == FILL_NORM)
                row[i] = 1.0f + 0.1f * u;
            else if (j->fill == FILL_SSM_A) /* -exp(A_log), A_log uniform in [log 0.1, 0] */
                row[i] = -expf(1.1513f * (u - 1.0f));
            else
                row[i] = j->scale * 1.7320508f * u; /* unit variance times scale */
        }
        j->st = vt_quantize_row(j->type, row, j->n, j->data + (uint64_t)r * j->row_bytes);
    }
    free(row);
    return NULL;
}

/* Add one tensor: ne in GGUF order, values drawn by fill with scale, stored
 * as the model's weight type when quant (else f32). */
static vt_status add(mk *m, const char *name, uint32_t n_dims, const int64_t *ne, int fill, float scale, int quant)
{
    vt_dtype type = quant ? m->wtype : VT_F32;
    int64_t rows = 1;
    for (uint32_t i = 1; i < n_dims; i++)
        rows *= ne[i];
    uint64_t row_bytes;
    if (!vt_dtype_row_bytes(type, ne[0], &row_bytes))
        return vt_set_error(VT_E_INVALID_ARG, "mkmodel: tensor '%s' has rows of %lld elements, not whole %s blocks",
                            name, (long long)ne[0], vt_dtype_name(type));
    uint64_t bytes = row_bytes * (uint64_t)rows;
    char kind[64];
    kind_of(name, kind, sizeof kind);
    if (m->share)
        for (int i = 0; i < m->n_shared; i++)
            if (!strcmp(m->shared[i].kind, kind))
                return vt_gguf_writer_add_tensor(m->w, name, type, n_dims, ne, m->shared[i].data, bytes);
    uint8_t *data = malloc(bytes ? bytes : 1);
    if (!data || keep_buf(m, data) != VT_OK) {
        free(data);
        return vt_set_error(VT_E_NO_MEMORY, "mkmodel: out of host memory for '%s' (%llu bytes)", name,
                            (unsigned long long)bytes);
    }
    fill_job job = {
        m->seed ^ hash_str(m->share ? kind : name), fill, scale, type, ne[0], rows, row_bytes, data, 0, rows, VT_OK};
    /* Large tensors are drawn by several threads, each row from its own
     * seed, so the bytes do not depend on the thread count. */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int nt = (double)rows * (double)ne[0] < (1 << 22) || ncpu < 2 ? 1 : ncpu > 16 ? 16 : (int)ncpu;
    fill_job jobs[16];
    pthread_t tid[16];
    int started = 0;
    for (int t = 0; t < nt; t++) {
        jobs[t] = job;
        jobs[t].r0 = rows * t / nt;
        jobs[t].r1 = rows * (t + 1) / nt;
        if (t > 0 && pthread_create(&tid[t], NULL, fill_rows, &jobs[t]) == 0)
            started |= 1 << t;
        else if (t > 0)
            fill_rows(&jobs[t]);
    }
    fill_rows(&jobs[0]);
    vt_status st = jobs[0].st;
    for (int t = 1; t < nt; t++) {
        if (started & (1 << t))
            pthread_join(tid[t], NULL);
        if (st == VT_OK)
            st = jobs[t].st;
    }
    if (st != VT_OK)
        return st;
    if (m->share && m->n_shared < 64) {
        snprintf(m->shared[m->n_shared].kind, sizeof m->shared[0].kind, "%s", kind);
        m->shared[m->n_shared++].data = data;
    }
    return vt_gguf_writer_add_tensor(m->w, name, type, n_dims, ne, data, bytes);
}

#define TRY(x)                                                                                                         \
    do {                                                                                                               \
        vt_status st_ = (x);                                                                                           \
        if (st_ != VT_OK)                                                                                              \
            return st_;                                                                                                \
    } while (0)

/* A 1-D f32 tensor. */
static vt_status add1(mk *m, const char *name, int64_t n, int fill, float scale)
{
    int64_t ne[1] = {n};
    return add(m, name, 1, ne, fill, scale, 0);
}

/* A matrix PyTorch [out, in]: ne {in, out}, gain 1/sqrt(in) times g. */
static vt_status add2(mk *m, const char *name, int64_t in, int64_t out, float g, int quant)
{
    int64_t ne[2] = {in, out};
    return add(m, name, 2, ne, FILL_UNIFORM, g / sqrtf((float)in), quant);
}

static vt_status add_metadata(mk *m, int arch, const dims *d, const char *preset)
{
    const char *a = arch_names[arch];
    char key[128], name[96];
    vt_gguf_writer *w = m->w;
#define KEY(suffix) (snprintf(key, sizeof key, "%s." suffix, a), key)
    TRY(vt_gguf_writer_add_string(w, "general.architecture", a));
    TRY(vt_gguf_writer_add_string(w, "general.type", "model"));
    snprintf(name, sizeof name, "vt-mkmodel %s %s", a, preset);
    TRY(vt_gguf_writer_add_string(w, "general.name", name));
    TRY(vt_gguf_writer_add_u32(w, KEY("block_count"), d->L));
    TRY(vt_gguf_writer_add_u32(w, KEY("context_length"), 40960));
    TRY(vt_gguf_writer_add_u32(w, KEY("embedding_length"), d->H));
    TRY(vt_gguf_writer_add_u32(w, KEY("feed_forward_length"), d->F));
    TRY(vt_gguf_writer_add_u32(w, KEY("attention.head_count"), d->nh));
    TRY(vt_gguf_writer_add_u32(w, KEY("attention.head_count_kv"), d->nkv));
    TRY(vt_gguf_writer_add_f32(w, KEY("rope.freq_base"), 1000000.0f));
    TRY(vt_gguf_writer_add_f32(w, KEY("attention.layer_norm_rms_epsilon"), 1e-6f));
    if (arch != ARCH_QWEN3) {
        TRY(vt_gguf_writer_add_u32(w, KEY("expert_count"), d->E));
        TRY(vt_gguf_writer_add_u32(w, KEY("expert_used_count"), d->k));
    }
    TRY(vt_gguf_writer_add_u32(w, KEY("attention.key_length"), d->hd));
    TRY(vt_gguf_writer_add_u32(w, KEY("attention.value_length"), d->hd));
    uint32_t ftype = m->wtype == VT_F32    ? 0
                     : m->wtype == VT_F16  ? 1
                     : m->wtype == VT_Q4_0 ? 2
                     : m->wtype == VT_Q8_0 ? 7
                     : m->wtype == VT_BF16 ? 32
                                           : 25; /* IQ4_NL */
    TRY(vt_gguf_writer_add_u32(w, "general.file_type", ftype));
    if (arch != ARCH_QWEN3)
        TRY(vt_gguf_writer_add_u32(w, KEY("expert_feed_forward_length"), d->Fe));
    if (arch == ARCH_QWEN3NEXT) {
        TRY(vt_gguf_writer_add_u32(w, KEY("expert_shared_feed_forward_length"), d->Fsh));
        TRY(vt_gguf_writer_add_u32(w, KEY("ssm.conv_kernel"), d->K));
        TRY(vt_gguf_writer_add_u32(w, KEY("ssm.state_size"), d->dk));
        TRY(vt_gguf_writer_add_u32(w, KEY("ssm.group_count"), d->nk));
        TRY(vt_gguf_writer_add_u32(w, KEY("ssm.time_step_rank"), d->nv));
        TRY(vt_gguf_writer_add_u32(w, KEY("ssm.inner_size"), d->dk * d->nv));
        TRY(vt_gguf_writer_add_u32(w, KEY("full_attention_interval"), d->interval));
        TRY(vt_gguf_writer_add_u32(w, KEY("rope.dimension_count"), d->rope_dim));
    }
    TRY(vt_gguf_writer_add_u32(w, "general.quantization_version", 2));
#undef KEY
    return VT_OK;
}

/* The attention block of one layer (gated: qwen3next's doubled q). */
static vt_status add_attention(mk *m, int il, const dims *d, int gated)
{
    char n[96];
#define NAME(s) (snprintf(n, sizeof n, "blk.%d." s, il), n)
    TRY(add2(m, NAME("attn_q.weight"), d->H, (int64_t)(gated ? 2 : 1) * d->nh * d->hd, 1.0f, 1));
    TRY(add2(m, NAME("attn_k.weight"), d->H, (int64_t)d->nkv * d->hd, 1.0f, 1));
    TRY(add2(m, NAME("attn_v.weight"), d->H, (int64_t)d->nkv * d->hd, 1.0f, 1));
    TRY(add2(m, NAME("attn_output.weight"), (int64_t)d->nh * d->hd, d->H, 1.0f, 1));
    TRY(add1(m, NAME("attn_q_norm.weight"), d->hd, FILL_NORM, 0));
    TRY(add1(m, NAME("attn_k_norm.weight"), d->hd, FILL_NORM, 0));
#undef NAME
    return VT_OK;
}

/* The routed experts (and, for qwen3next, the shared expert). */
static vt_status add_moe(mk *m, int il, const dims *d, int shared)
{
    char n[96];
#define NAME(s) (snprintf(n, sizeof n, "blk.%d." s, il), n)
    int64_t ne_gu[3] = {d->H, d->Fe, d->E}, ne_d[3] = {d->Fe, d->H, d->E};
    TRY(add2(m, NAME("ffn_gate_inp.weight"), d->H, d->E, 3.0f, 0));
    TRY(add(m, NAME("ffn_gate_exps.weight"), 3, ne_gu, FILL_UNIFORM, 1.0f / sqrtf((float)d->H), 1));
    TRY(add(m, NAME("ffn_up_exps.weight"), 3, ne_gu, FILL_UNIFORM, 1.0f / sqrtf((float)d->H), 1));
    TRY(add(m, NAME("ffn_down_exps.weight"), 3, ne_d, FILL_UNIFORM, 1.0f / sqrtf((float)d->Fe), 1));
    if (shared) {
        TRY(add2(m, NAME("ffn_gate_inp_shexp.weight"), d->H, 1, 1.0f, 0));
        TRY(add2(m, NAME("ffn_gate_shexp.weight"), d->H, d->Fsh, 1.0f, 1));
        TRY(add2(m, NAME("ffn_up_shexp.weight"), d->H, d->Fsh, 1.0f, 1));
        TRY(add2(m, NAME("ffn_down_shexp.weight"), d->Fsh, d->H, 1.0f, 1));
    }
#undef NAME
    return VT_OK;
}

/* A gated DeltaNet mixer (qwen3next linear layer). */
static vt_status add_deltanet(mk *m, int il, const dims *d)
{
    char n[96];
#define NAME(s) (snprintf(n, sizeof n, "blk.%d." s, il), n)
    int64_t conv_ch = 2 * (int64_t)d->nk * d->dk + (int64_t)d->nv * d->dk;
    int64_t ne_conv[2] = {d->K, conv_ch};
    TRY(add2(m, NAME("attn_qkv.weight"), d->H, conv_ch, 1.0f, 1));
    TRY(add2(m, NAME("attn_gate.weight"), d->H, (int64_t)d->nv * d->dk, 1.0f, 1));
    TRY(add2(m, NAME("ssm_ba.weight"), d->H, 2 * (int64_t)d->nv, 1.0f, 1));
    TRY(add(m, NAME("ssm_conv1d.weight"), 2, ne_conv, FILL_UNIFORM, 0.5f, 0));
    TRY(add1(m, NAME("ssm_dt.bias"), d->nv, FILL_UNIFORM, 0.3f));
    TRY(add1(m, NAME("ssm_a"), d->nv, FILL_SSM_A, 0));
    TRY(add1(m, NAME("ssm_norm.weight"), d->dk, FILL_NORM, 0));
    TRY(add2(m, NAME("ssm_out.weight"), (int64_t)d->nv * d->dk, d->H, 1.0f, 1));
#undef NAME
    return VT_OK;
}

static vt_status add_tensors(mk *m, int arch, const dims *d)
{
    char n[96];
    TRY(add2(m, "token_embd.weight", d->H, d->V, 4.0f, 1));
    for (uint32_t il = 0; il < d->L; il++) {
        snprintf(n, sizeof n, "blk.%u.attn_norm.weight", il);
        TRY(add1(m, n, d->H, FILL_NORM, 0));
        if (arch == ARCH_QWEN3NEXT) {
            if ((il + 1) % d->interval != 0)
                TRY(add_deltanet(m, (int)il, d));
            else
                TRY(add_attention(m, (int)il, d, 1));
            snprintf(n, sizeof n, "blk.%u.post_attention_norm.weight", il);
            TRY(add1(m, n, d->H, FILL_NORM, 0));
            TRY(add_moe(m, (int)il, d, 1));
            continue;
        }
        TRY(add_attention(m, (int)il, d, 0));
        snprintf(n, sizeof n, "blk.%u.ffn_norm.weight", il);
        TRY(add1(m, n, d->H, FILL_NORM, 0));
        if (arch == ARCH_QWEN3MOE) {
            TRY(add_moe(m, (int)il, d, 0));
        } else {
            snprintf(n, sizeof n, "blk.%u.ffn_gate.weight", il);
            TRY(add2(m, n, d->H, d->F, 1.0f, 1));
            snprintf(n, sizeof n, "blk.%u.ffn_up.weight", il);
            TRY(add2(m, n, d->H, d->F, 1.0f, 1));
            snprintf(n, sizeof n, "blk.%u.ffn_down.weight", il);
            TRY(add2(m, n, d->F, d->H, 1.0f, 1));
        }
    }
    TRY(add1(m, "output_norm.weight", d->H, FILL_NORM, 0));
    if (!d->tied)
        TRY(add2(m, "output.weight", d->H, d->V, 4.0f, 1));
    return VT_OK;
}

static int find_name(const char *const *names, int n, const char *s)
{
    for (int i = 0; s && i < n; i++)
        if (!strcmp(names[i], s))
            return i;
    return -1;
}

vt_status vt_mkmodel_write(const vt_mkmodel_options *o, const char *path)
{
    if (!o || o->struct_size < sizeof *o || !path)
        return vt_set_error(VT_E_INVALID_ARG, "vt_mkmodel_write: NULL options or path, or an old struct_size");
    int arch = find_name(arch_names, 3, o->arch);
    if (arch < 0)
        return vt_set_error(VT_E_INVALID_ARG, "mkmodel: unknown architecture '%s' (qwen3, qwen3moe, qwen3next)",
                            o->arch ? o->arch : "(null)");
    int preset = find_name(preset_names, 3, o->preset);
    if (preset < 0)
        return vt_set_error(VT_E_INVALID_ARG, "mkmodel: unknown preset '%s' (tiny, small, 8b-shape)",
                            o->preset ? o->preset : "(null)");
    if (!vt_quantize_supported(o->wtype))
        return vt_set_error(VT_E_INVALID_ARG,
                            "mkmodel: weight type %s is not written (f32, f16, bf16, q8_0, q4_0, iq4_nl)",
                            vt_dtype_name(o->wtype));
    dims d = presets[arch][preset];
    if (o->n_layers)
        d.L = o->n_layers;
    mk m;
    memset(&m, 0, sizeof m);
    m.wtype = o->wtype;
    m.seed = o->seed;
    m.share = preset == 2;
    vt_status st = vt_gguf_writer_create(&m.w);
    if (st == VT_OK)
        st = add_metadata(&m, arch, &d, preset_names[preset]);
    if (st == VT_OK)
        st = add_tensors(&m, arch, &d);
    if (st == VT_OK)
        st = vt_gguf_writer_write_file(m.w, path);
    vt_gguf_writer_destroy(m.w);
    for (size_t i = 0; i < m.n_bufs; i++)
        free(m.bufs[i]);
    free(m.bufs);
    return st;
}
