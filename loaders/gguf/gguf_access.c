/* gguf_access.c - queries on an open GGUF handle: file facts, KVs by index
 * and by key (typed, with lossless conversions only), tensors by index and
 * by name. Everything read here was validated by gguf_parse. */
#include "config.h"

#include <string.h>

#include "gguf_internal.h"

const char *vt_gguf_name(const vt_gguf *g)
{
    return g ? g->name : "";
}

uint32_t vt_gguf_version(const vt_gguf *g)
{
    return g ? g->version : 0;
}

uint32_t vt_gguf_alignment(const vt_gguf *g)
{
    return g ? g->alignment : 0;
}

uint64_t vt_gguf_data_offset(const vt_gguf *g)
{
    return g ? g->data_offset : 0;
}

uint64_t vt_gguf_data_size(const vt_gguf *g)
{
    return g ? g->data_size : 0;
}

uint64_t vt_gguf_file_size(const vt_gguf *g)
{
    return g ? g->size : 0;
}

const void *vt_gguf_bytes(const vt_gguf *g)
{
    return g ? g->base : NULL;
}

size_t vt_gguf_kv_count(const vt_gguf *g)
{
    return g ? g->n_kv : 0;
}

const vt_gguf_kv *vt_gguf_kv_at(const vt_gguf *g, size_t i)
{
    return g && i < g->n_kv ? &g->kvs[i].pub : NULL;
}

/* Compare a stored (NUL-free) name of len bytes with a C string. */
static int compare_name(const char *stored, uint64_t len, const char *s, size_t slen)
{
    int c = memcmp(stored, s, len < slen ? (size_t)len : slen);
    if (c)
        return c;
    return (len > slen) - (len < slen);
}

vt_status vt_gguf_find_kv(const vt_gguf *g, const char *key, const vt_gguf_kv **out)
{
    if (!out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_gguf_find_kv: out is NULL");
    *out = NULL;
    if (!g || !key)
        return vt_set_error(VT_E_INVALID_ARG, "vt_gguf_find_kv: NULL handle or key");
    size_t lo = 0, hi = g->n_kv, klen = strlen(key);
    while (lo < hi) { /* first entry not below key */
        size_t mid = lo + (hi - lo) / 2;
        if (compare_name(g->kv_by_key[mid]->pub.key, g->kv_by_key[mid]->pub.key_len, key, klen) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < g->n_kv && compare_name(g->kv_by_key[lo]->pub.key, g->kv_by_key[lo]->pub.key_len, key, klen) == 0) {
        *out = &g->kv_by_key[lo]->pub;
        return VT_OK;
    }
    return vt_set_error(VT_E_NOT_FOUND, "GGUF file '%s' has no key '%s'", g->name, key);
}

vt_status vt_gguf_kv_value(const vt_gguf *g, size_t kv_index, uint64_t elem, vt_gguf_value *out)
{
    if (!g || !out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_gguf_kv_value: NULL handle or out");
    if (kv_index >= g->n_kv)
        return vt_set_error(VT_E_INVALID_ARG, "vt_gguf_kv_value: kv %zu of %zu in '%s'", kv_index, g->n_kv, g->name);
    const gguf_kv_entry *e = &g->kvs[kv_index];
    if (elem >= e->pub.count)
        return vt_set_error(VT_E_INVALID_ARG, "vt_gguf_kv_value: element %llu of %llu in kv '%s' of '%s'",
                            (unsigned long long)elem, (unsigned long long)e->pub.count, e->pub.key, g->name);
    vt_gguf_type t = e->pub.elem_type;
    if (t != VT_GGUF_STRING) {
        gguf_decode_scalar(t, e->value + elem * gguf_type_size(t), out);
        return VT_OK;
    }
    const uint8_t *s = e->pub.type == VT_GGUF_ARRAY ? g->base + g->str_offsets[e->str_first + elem] : e->value;
    memset(out, 0, sizeof *out);
    out->type = VT_GGUF_STRING;
    out->as.str.len = gguf_load_u64(s);
    out->as.str.data = (const char *)s + 8;
    return VT_OK;
}

/* The scalar KV for key, checked against a set of accepted types. */
static vt_status get_scalar(const vt_gguf *g, const char *key, const char *want, uint32_t accepted, vt_gguf_value *out)
{
    const vt_gguf_kv *kv;
    vt_status st = vt_gguf_find_kv(g, key, &kv);
    if (st != VT_OK)
        return st;
    char esc[128];
    vt_gguf_escape(kv->key, kv->key_len, esc, sizeof esc);
    if (kv->type == VT_GGUF_ARRAY || !((accepted >> kv->type) & 1u))
        return vt_set_error(VT_E_BAD_FILE, "bad GGUF file '%s' at offset %llu: kv[%zu] '%s' is %s%s%s, not %s", g->name,
                            (unsigned long long)kv->offset, kv->index, esc,
                            kv->type == VT_GGUF_ARRAY ? "an array of " : "a ", vt_gguf_type_name(kv->elem_type),
                            kv->type == VT_GGUF_ARRAY ? "" : " value", want);
    return vt_gguf_kv_value(g, kv->index, 0, out);
}

#define BIT(t)      (1u << (t))
#define UNSIGNED_32 (BIT(VT_GGUF_U8) | BIT(VT_GGUF_U16) | BIT(VT_GGUF_U32))
#define SIGNED_ALL  (BIT(VT_GGUF_I8) | BIT(VT_GGUF_I16) | BIT(VT_GGUF_I32) | BIT(VT_GGUF_I64))

vt_status vt_gguf_get_u32(const vt_gguf *g, const char *key, uint32_t *out)
{
    vt_gguf_value v;
    vt_status st = get_scalar(g, key, "a u32 (or narrower unsigned)", UNSIGNED_32, &v);
    if (st == VT_OK)
        *out = (uint32_t)v.as.u;
    return st;
}

vt_status vt_gguf_get_u64(const vt_gguf *g, const char *key, uint64_t *out)
{
    vt_gguf_value v;
    vt_status st = get_scalar(g, key, "an unsigned integer", UNSIGNED_32 | BIT(VT_GGUF_U64), &v);
    if (st == VT_OK)
        *out = v.as.u;
    return st;
}

vt_status vt_gguf_get_i64(const vt_gguf *g, const char *key, int64_t *out)
{
    vt_gguf_value v;
    vt_status st = get_scalar(g, key, "an integer that fits int64", SIGNED_ALL | UNSIGNED_32, &v);
    if (st == VT_OK)
        *out = v.type == VT_GGUF_U8 || v.type == VT_GGUF_U16 || v.type == VT_GGUF_U32 ? (int64_t)v.as.u : v.as.i;
    return st;
}

vt_status vt_gguf_get_f32(const vt_gguf *g, const char *key, float *out)
{
    vt_gguf_value v;
    vt_status st = get_scalar(g, key, "an f32", BIT(VT_GGUF_F32), &v);
    if (st == VT_OK)
        *out = (float)v.as.f;
    return st;
}

vt_status vt_gguf_get_f64(const vt_gguf *g, const char *key, double *out)
{
    vt_gguf_value v;
    vt_status st = get_scalar(g, key, "an f32 or f64", BIT(VT_GGUF_F32) | BIT(VT_GGUF_F64), &v);
    if (st == VT_OK)
        *out = v.as.f;
    return st;
}

vt_status vt_gguf_get_bool(const vt_gguf *g, const char *key, bool *out)
{
    vt_gguf_value v;
    vt_status st = get_scalar(g, key, "a bool", BIT(VT_GGUF_BOOL), &v);
    if (st == VT_OK)
        *out = v.as.b;
    return st;
}

vt_status vt_gguf_get_string(const vt_gguf *g, const char *key, vt_gguf_str *out)
{
    vt_gguf_value v;
    vt_status st = get_scalar(g, key, "a string", BIT(VT_GGUF_STRING), &v);
    if (st == VT_OK)
        *out = v.as.str;
    return st;
}

vt_status vt_gguf_get_array(const vt_gguf *g, const char *key, vt_gguf_type elem_type, const vt_gguf_kv **out)
{
    if (!out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_gguf_get_array: out is NULL");
    const vt_gguf_kv *kv;
    vt_status st = vt_gguf_find_kv(g, key, &kv);
    *out = NULL;
    if (st != VT_OK)
        return st;
    char esc[128];
    vt_gguf_escape(kv->key, kv->key_len, esc, sizeof esc);
    if (kv->type != VT_GGUF_ARRAY || (elem_type != VT_GGUF_ARRAY && kv->elem_type != elem_type))
        return vt_set_error(
            VT_E_BAD_FILE, "bad GGUF file '%s' at offset %llu: kv[%zu] '%s' is %s%s, not an array of %s", g->name,
            (unsigned long long)kv->offset, kv->index, esc, kv->type == VT_GGUF_ARRAY ? "an array of " : "a ",
            vt_gguf_type_name(kv->elem_type), elem_type == VT_GGUF_ARRAY ? "any type" : vt_gguf_type_name(elem_type));
    *out = kv;
    return VT_OK;
}

size_t vt_gguf_tensor_count(const vt_gguf *g)
{
    return g ? g->n_tensors : 0;
}

const vt_gguf_tensor *vt_gguf_tensor_at(const vt_gguf *g, size_t i)
{
    return g && i < g->n_tensors ? &g->tensors[i] : NULL;
}

vt_status vt_gguf_find_tensor(const vt_gguf *g, const char *name, const vt_gguf_tensor **out)
{
    if (!out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_gguf_find_tensor: out is NULL");
    *out = NULL;
    if (!g || !name)
        return vt_set_error(VT_E_INVALID_ARG, "vt_gguf_find_tensor: NULL handle or name");
    size_t lo = 0, hi = g->n_tensors, nlen = strlen(name);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (compare_name(g->tensor_by_name[mid]->name, g->tensor_by_name[mid]->name_len, name, nlen) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < g->n_tensors &&
        compare_name(g->tensor_by_name[lo]->name, g->tensor_by_name[lo]->name_len, name, nlen) == 0) {
        *out = g->tensor_by_name[lo];
        return VT_OK;
    }
    return vt_set_error(VT_E_NOT_FOUND, "GGUF file '%s' has no tensor '%s'", g->name, name);
}
