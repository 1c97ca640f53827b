/* gguf_fixture.c - writes small GGUF files with vt's writer: the fixtures
 * of the vtctl inspect test and the fuzzer's seed corpus (valid files and
 * byte-patched invalid ones).
 *
 *   gguf_fixture NAME FILE     write one fixture
 *   gguf_fixture --list        list the fixture names
 *   gguf_fixture --corpus DIR  write every fixture as DIR/NAME.gguf */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vt/vt.h>

/* Abort the program with the library's message when a call fails. */
#define TRY(call)                                                                                                      \
    do {                                                                                                               \
        vt_status st_ = (call);                                                                                        \
        if (st_ != VT_OK) {                                                                                            \
            fprintf(stderr, "gguf_fixture: %s: %s: %s\n", #call, vt_status_name(st_), vt_last_error());                \
            exit(99);                                                                                                  \
        }                                                                                                              \
    } while (0)

/* Tensor payloads: deterministic bytes, long enough for every fixture. */
static uint8_t payload[64 * 1024];

static void fill_payload(void)
{
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof payload; i++) {
        x = x * 1103515245u + 12345u;
        payload[i] = (uint8_t)(x >> 16);
    }
}

static void add_tensor(vt_gguf_writer *w, const char *name, int type, uint32_t n_dims, int64_t ne0, int64_t ne1)
{
    int64_t ne[2] = {ne0, ne1};
    int64_t shape[2] = {ne1, ne0};
    uint64_t bytes = 0;
    if (!vt_dtype_tensor_bytes(type, n_dims, n_dims == 2 ? shape : ne, &bytes) || bytes > sizeof payload) {
        fprintf(stderr, "gguf_fixture: tensor %s does not fit the payload\n", name);
        exit(99);
    }
    TRY(vt_gguf_writer_add_tensor(w, name, type, n_dims, ne, payload, bytes));
}

/* A small model: every KV type, a long string array, text with
 * non-printable bytes, tensors of several types and an empty one. */
static vt_gguf_writer *build_model(void)
{
    vt_gguf_writer *w;
    TRY(vt_gguf_writer_create(&w));
    TRY(vt_gguf_writer_set_alignment(w, 64));
    TRY(vt_gguf_writer_add_string(w, "general.architecture", "llama"));
    TRY(vt_gguf_writer_add_string(w, "general.name", "tiny\x01model\x1b[31m"));
    vt_gguf_value v = {.type = VT_GGUF_U8, .as.u = 200};
    TRY(vt_gguf_writer_add_value(w, "test.u8", &v));
    v = (vt_gguf_value){.type = VT_GGUF_I8, .as.i = -100};
    TRY(vt_gguf_writer_add_value(w, "test.i8", &v));
    v = (vt_gguf_value){.type = VT_GGUF_U16, .as.u = 60000};
    TRY(vt_gguf_writer_add_value(w, "test.u16", &v));
    v = (vt_gguf_value){.type = VT_GGUF_I16, .as.i = -30000};
    TRY(vt_gguf_writer_add_value(w, "test.i16", &v));
    TRY(vt_gguf_writer_add_u32(w, "llama.context_length", 4096));
    TRY(vt_gguf_writer_add_i32(w, "test.i32", -2000000000));
    TRY(vt_gguf_writer_add_f32(w, "llama.attention.layer_norm_rms_epsilon", 1e-5f));
    TRY(vt_gguf_writer_add_bool(w, "test.bool", true));
    TRY(vt_gguf_writer_add_u64(w, "test.u64", 18000000000000000000ull));
    v = (vt_gguf_value){.type = VT_GGUF_I64, .as.i = -9000000000000000000ll};
    TRY(vt_gguf_writer_add_value(w, "test.i64", &v));
    v = (vt_gguf_value){.type = VT_GGUF_F64, .as.f = 3.141592653589793};
    TRY(vt_gguf_writer_add_value(w, "test.f64", &v));
    static char tokens[40][8];
    vt_gguf_str toks[40];
    for (int i = 0; i < 40; i++) {
        snprintf(tokens[i], sizeof tokens[i], "tok%d", i);
        toks[i] = (vt_gguf_str){tokens[i], strlen(tokens[i])};
    }
    toks[3] = (vt_gguf_str){"\n\t\"q\"", 5};
    TRY(vt_gguf_writer_add_array(w, "tokenizer.ggml.tokens", VT_GGUF_STRING, toks, 40));
    int32_t types[3] = {1, 1, 3};
    TRY(vt_gguf_writer_add_array(w, "tokenizer.ggml.token_type", VT_GGUF_I32, types, 3));
    float scores[2] = {0.5f, -1.25f};
    TRY(vt_gguf_writer_add_array(w, "tokenizer.ggml.scores", VT_GGUF_F32, scores, 2));
    TRY(vt_gguf_writer_add_array(w, "test.empty_array", VT_GGUF_U8, NULL, 0));
    add_tensor(w, "token_embd.weight", VT_Q4_0, 2, 64, 8);
    add_tensor(w, "output_norm.weight", VT_F32, 1, 64, 1);
    add_tensor(w, "blk.0.attn_q.weight", VT_F16, 2, 64, 16);
    add_tensor(w, "blk.0.ffn_down.weight", VT_Q8_0, 2, 64, 16);
    add_tensor(w, "blk.0.ffn_up.weight", VT_Q4_K, 2, 256, 4);
    add_tensor(w, "empty", VT_F32, 2, 0, 4);
    return w;
}

/* One tensor of every type in the type table, one block row each. */
static vt_gguf_writer *build_all_types(void)
{
    vt_gguf_writer *w;
    TRY(vt_gguf_writer_create(&w));
    TRY(vt_gguf_writer_add_string(w, "general.architecture", "types"));
    for (int t = 0; t < VT_DTYPE_COUNT; t++) {
        const vt_dtype_info *info = vt_dtype_get(t);
        if (!info)
            continue;
        char name[32];
        snprintf(name, sizeof name, "t.%s", info->name);
        add_tensor(w, name, t, 1, info->block_elems, 1);
    }
    return w;
}

/* One weight of every block format SPEC 7 calls q (llama names, so they
 * feed matmul), a q4_0 expert stack, a q4_k embedding and dense f16/f32. */
static vt_gguf_writer *build_q_formats(void)
{
    static const int q[] = {VT_Q4_0, VT_Q4_1, VT_Q5_0, VT_Q5_1,   VT_Q8_0,   VT_Q2_K, VT_Q3_K,
                            VT_Q4_K, VT_Q5_K, VT_Q6_K, VT_IQ4_NL, VT_IQ4_XS, VT_MXFP4};
    vt_gguf_writer *w;
    TRY(vt_gguf_writer_create(&w));
    TRY(vt_gguf_writer_add_string(w, "general.architecture", "llama"));
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        const vt_dtype_info *info = vt_dtype_get(q[i]);
        char name[48];
        snprintf(name, sizeof name, "blk.%zu.attn_%s.weight", i, info->name);
        add_tensor(w, name, q[i], 2, info->block_elems * 2, 3);
    }
    add_tensor(w, "blk.0.ffn_gate_exps.weight", VT_Q4_0, 2, 64, 8);
    add_tensor(w, "token_embd.weight", VT_Q4_K, 2, 256, 4);
    add_tensor(w, "output.weight", VT_F16, 2, 64, 4);
    add_tensor(w, "blk.0.attn_k.weight", VT_F32, 2, 64, 4);
    add_tensor(w, "output_norm.weight", VT_F32, 1, 64, 1);
    return w;
}

/* head_count_kv near 2^63: the run estimate's products wrap (to a 0-byte
 * KV cache with unchecked arithmetic). */
static vt_gguf_writer *build_kv_wrap(void)
{
    vt_gguf_writer *w;
    TRY(vt_gguf_writer_create(&w));
    TRY(vt_gguf_writer_add_string(w, "general.architecture", "llama"));
    TRY(vt_gguf_writer_add_u32(w, "llama.block_count", 2));
    TRY(vt_gguf_writer_add_u32(w, "llama.embedding_length", 64));
    TRY(vt_gguf_writer_add_u32(w, "llama.attention.head_count", 4));
    TRY(vt_gguf_writer_add_u64(w, "llama.attention.head_count_kv", 1ull << 63));
    add_tensor(w, "output_norm.weight", VT_F32, 1, 64, 1);
    return w;
}

/* Terminal escapes and newlines in the architecture and a tensor name. */
static vt_gguf_writer *build_escapes(void)
{
    vt_gguf_writer *w;
    TRY(vt_gguf_writer_create(&w));
    TRY(vt_gguf_writer_add_string(w, "general.architecture", "ll\x1b]0;pwn\x07\nama\x1b[31m"));
    add_tensor(w, "w\x1b[31m\nFAKE LINE", VT_F32, 2, 64, 4);
    return w;
}

/* An empty tensor with a dim of 2^61 ([2^61, 1, 0] row-major): valid, and
 * IndexSelect over it must not loop 2^61 times. */
static vt_gguf_writer *build_huge_empty(void)
{
    vt_gguf_writer *w;
    TRY(vt_gguf_writer_create(&w));
    TRY(vt_gguf_writer_add_string(w, "general.architecture", "test"));
    int64_t ne[3] = {0, 1, (int64_t)1 << 61};
    TRY(vt_gguf_writer_add_tensor(w, "t", VT_F32, 3, ne, payload, 0));
    return w;
}

static vt_gguf_writer *build_v2(void)
{
    vt_gguf_writer *w;
    TRY(vt_gguf_writer_create(&w));
    TRY(vt_gguf_writer_set_version(w, 2));
    TRY(vt_gguf_writer_add_string(w, "general.architecture", "v2"));
    add_tensor(w, "w", VT_F32, 2, 4, 2);
    return w;
}

static vt_gguf_writer *build_align1(void)
{
    vt_gguf_writer *w;
    TRY(vt_gguf_writer_create(&w));
    TRY(vt_gguf_writer_set_alignment(w, 1));
    add_tensor(w, "a", VT_I8, 1, 3, 1);
    add_tensor(w, "b", VT_Q8_0, 1, 32, 1);
    add_tensor(w, "c", VT_F16, 1, 1, 1);
    return w;
}

static vt_gguf_writer *build_empty(void)
{
    vt_gguf_writer *w;
    TRY(vt_gguf_writer_create(&w));
    return w;
}

/* A valid image of a builder. */
static uint8_t *image(vt_gguf_writer *(*build)(void), size_t *size)
{
    vt_gguf_writer *w = build();
    void *data;
    TRY(vt_gguf_writer_write_memory(w, &data, size));
    vt_gguf_writer_destroy(w);
    return data;
}

/* Overwrite 4 little-endian bytes at off. */
static void patch_u32(uint8_t *p, size_t off, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[off + (size_t)i] = (uint8_t)(v >> (8 * i));
}

/* How a malformed fixture's image is damaged after it is written. */
typedef void (*damage_fn)(uint8_t *p, size_t *size);

static void bad_magic(uint8_t *p, size_t *size)
{
    (void)size;
    memcpy(p, "GGML", 4);
}
static void version_1(uint8_t *p, size_t *size)
{
    (void)size;
    patch_u32(p, 4, 1);
}
static void big_endian(uint8_t *p, size_t *size)
{
    (void)size;
    patch_u32(p, 4, 0x03000000u);
}
static void truncated(uint8_t *p, size_t *size)
{
    (void)p;
    *size /= 2;
}
/* The first tensor's offset field (the last 8 bytes of its info) made
 * misaligned: in the v2 fixture the only tensor's info ends the infos. */
static void bad_offset(uint8_t *p, size_t *size)
{
    vt_gguf *g;
    TRY(vt_gguf_open_memory(p, *size, "v2", &g));
    const vt_gguf_tensor *t = vt_gguf_tensor_at(g, 0);
    size_t off = (size_t)(t->info_offset + 8 + t->name_len + 4 + 8 * t->n_dims + 4);
    vt_gguf_close(g);
    patch_u32(p, off, 3);
}

/* Each fixture: its name, the writer that builds it, the damage done to
 * its image (NULL for the valid ones). */
static const struct {
    const char *name;
    vt_gguf_writer *(*build)(void);
    damage_fn damage;
} fixtures[] = {
    {"model", build_model, NULL},         {"all-types", build_all_types, NULL},   {"v2", build_v2, NULL},
    {"align1", build_align1, NULL},       {"empty", build_empty, NULL},           {"bad-magic", build_v2, bad_magic},
    {"version-1", build_v2, version_1},   {"big-endian", build_v2, big_endian},   {"truncated", build_model, truncated},
    {"bad-offset", build_v2, bad_offset}, {"q-formats", build_q_formats, NULL},   {"kv-wrap", build_kv_wrap, NULL},
    {"escapes", build_escapes, NULL},     {"huge-empty", build_huge_empty, NULL},
};

static int write_fixture(size_t i, const char *path)
{
    size_t size;
    uint8_t *p = image(fixtures[i].build, &size);
    if (fixtures[i].damage)
        fixtures[i].damage(p, &size);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, size, f) != size || fclose(f) != 0) {
        fprintf(stderr, "gguf_fixture: cannot write %s\n", path);
        free(p);
        return 1;
    }
    free(p);
    return 0;
}

int main(int argc, char **argv)
{
    fill_payload();
    size_t n = sizeof fixtures / sizeof fixtures[0];
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < n; i++)
            printf("%s\n", fixtures[i].name);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "--corpus") == 0) {
        int rc = 0;
        for (size_t i = 0; i < n; i++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s.gguf", argv[2], fixtures[i].name);
            rc |= write_fixture(i, path);
        }
        return rc;
    }
    if (argc == 3)
        for (size_t i = 0; i < n; i++)
            if (strcmp(argv[1], fixtures[i].name) == 0)
                return write_fixture(i, argv[2]);
    fprintf(stderr, "usage: gguf_fixture NAME FILE | --list | --corpus DIR\n");
    return 2;
}
