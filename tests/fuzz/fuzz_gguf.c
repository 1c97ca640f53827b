/* fuzz_gguf.c - libFuzzer target for the GGUF parser: open the input as a
 * memory image, then use everything a valid handle hands out (every getter
 * on every key, every array element, every tensor and its bytes) and check
 * the parser's promises; a broken promise traps. Built by `make fuzz`. */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "vt/vt_dtype.h"
#include "vt/vt_gguf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PROMISE(c)                                                                                                     \
    do {                                                                                                               \
        if (!(c))                                                                                                      \
            __builtin_trap();                                                                                          \
    } while (0)

static volatile uint64_t sink;

/* Read every byte of a string that the handle says is valid. */
static void touch(const char *s, uint64_t len)
{
    uint64_t sum = 0;
    for (uint64_t i = 0; i < len; i++)
        sum += (unsigned char)s[i];
    sink += sum;
}

static void use_kv(const vt_gguf *g, const vt_gguf_kv *kv)
{
    PROMISE(kv->key && strlen(kv->key) == kv->key_len && kv->key_len > 0);
    const vt_gguf_kv *found = NULL;
    PROMISE(vt_gguf_find_kv(g, kv->key, &found) == VT_OK && found == kv);
    char esc[64];
    vt_gguf_escape(kv->key, kv->key_len, esc, sizeof esc);
    PROMISE(strlen(esc) < sizeof esc);
    /* Every element of short arrays; the first and last 32 of long ones. */
    for (uint64_t i = 0; i < kv->count; i++) {
        if (kv->count > 64 && i == 32)
            i = kv->count - 32;
        vt_gguf_value v;
        PROMISE(vt_gguf_kv_value(g, kv->index, i, &v) == VT_OK);
        PROMISE(v.type == kv->elem_type);
        if (v.type == VT_GGUF_STRING) {
            touch(v.as.str.data, v.as.str.len);
            vt_gguf_escape(v.as.str.data, v.as.str.len, esc, sizeof esc);
        } else {
            sink += v.as.u;
        }
    }
    vt_gguf_value v;
    PROMISE(vt_gguf_kv_value(g, kv->index, kv->count, &v) == VT_E_INVALID_ARG);
    uint32_t u32;
    uint64_t u64;
    int64_t i64;
    float f32;
    double f64;
    bool b;
    vt_gguf_str s;
    const vt_gguf_kv *arr;
    /* Each getter either succeeds or refuses by name; none may crash. */
    sink += vt_gguf_get_u32(g, kv->key, &u32) == VT_OK;
    sink += vt_gguf_get_u64(g, kv->key, &u64) == VT_OK;
    sink += vt_gguf_get_i64(g, kv->key, &i64) == VT_OK;
    sink += vt_gguf_get_f32(g, kv->key, &f32) == VT_OK;
    sink += vt_gguf_get_f64(g, kv->key, &f64) == VT_OK;
    sink += vt_gguf_get_bool(g, kv->key, &b) == VT_OK;
    if (vt_gguf_get_string(g, kv->key, &s) == VT_OK)
        touch(s.data, s.len);
    PROMISE((vt_gguf_get_array(g, kv->key, VT_GGUF_ARRAY, &arr) == VT_OK) == (kv->type == VT_GGUF_ARRAY));
}

static void use_tensor(const vt_gguf *g, const vt_gguf_tensor *t)
{
    PROMISE(t->name && strlen(t->name) == t->name_len && t->name_len > 0 && t->name_len <= VT_GGUF_MAX_NAME);
    const vt_gguf_tensor *found = NULL;
    PROMISE(vt_gguf_find_tensor(g, t->name, &found) == VT_OK && found == t);
    PROMISE(vt_dtype_get(t->type) != NULL && t->n_dims <= VT_GGUF_MAX_DIMS);
    for (uint32_t d = 0; d < t->n_dims; d++)
        PROMISE(t->ne[d] >= 0 && t->shape[t->n_dims - 1 - d] == t->ne[d]);
    uint64_t bytes;
    PROMISE(vt_dtype_tensor_bytes(t->type, t->n_dims, t->shape, &bytes) && bytes == t->n_bytes);
    PROMISE(t->file_offset == vt_gguf_data_offset(g) + t->offset);
    PROMISE(t->offset % vt_gguf_alignment(g) == 0);
    if (t->n_bytes) {
        const uint8_t *base = vt_gguf_bytes(g), *p = t->data;
        PROMISE(p == base + t->file_offset && t->file_offset + t->n_bytes <= vt_gguf_file_size(g));
        sink += p[0] + p[t->n_bytes - 1];
    } else {
        PROMISE(t->data == NULL);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vt_gguf *g = NULL;
    vt_status st = vt_gguf_open_memory(data, size, "fuzz.gguf", &g);
    if (st != VT_OK) {
        /* Refusals are the file's fault, with a message that names it. */
        PROMISE(st == VT_E_BAD_FILE && g == NULL);
        PROMISE(strncmp(vt_last_error(), "bad GGUF file 'fuzz.gguf' at offset ", 36) == 0);
        return 0;
    }
    PROMISE(vt_gguf_version(g) == 2 || vt_gguf_version(g) == 3);
    uint32_t a = vt_gguf_alignment(g);
    PROMISE(a && !(a & (a - 1)) && a <= VT_GGUF_MAX_ALIGNMENT && vt_gguf_data_offset(g) % a == 0);
    for (size_t i = 0; i < vt_gguf_kv_count(g); i++)
        use_kv(g, vt_gguf_kv_at(g, i));
    PROMISE(vt_gguf_kv_at(g, vt_gguf_kv_count(g)) == NULL);
    for (size_t i = 0; i < vt_gguf_tensor_count(g); i++)
        use_tensor(g, vt_gguf_tensor_at(g, i));
    PROMISE(vt_gguf_tensor_at(g, vt_gguf_tensor_count(g)) == NULL);
    const vt_gguf_kv *kv;
    const vt_gguf_tensor *t;
    PROMISE(vt_gguf_find_kv(g, "no.such.key", &kv) == VT_E_NOT_FOUND || kv != NULL);
    PROMISE(vt_gguf_find_tensor(g, "no.such.tensor", &t) == VT_E_NOT_FOUND || t != NULL);
    vt_gguf_close(g);
    return 0;
}
