/* gguf_writer.c - building GGUF files: KVs and tensor infos are encoded as
 * they are added (after validation), the layout is computed at write time
 * and the image goes to a file or a malloc'd buffer. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gguf_internal.h"

/* One KV: the key and its encoded value (type, [element type, count,]
 * values), little-endian. */
typedef struct writer_kv {
    char *key;
    size_t key_len;
    uint8_t *payload;
    size_t payload_len;
} writer_kv;

typedef struct writer_tensor {
    char name[VT_GGUF_MAX_NAME + 1];
    uint32_t name_len;
    int type;
    uint32_t n_dims;
    int64_t ne[VT_GGUF_MAX_DIMS];
    const void *data; /* borrowed; NULL writes zeros */
    uint64_t n_bytes;
} writer_tensor;

struct vt_gguf_writer {
    uint32_t version;
    uint32_t alignment;
    writer_kv *kvs;
    size_t n_kv, cap_kv;
    writer_tensor *tensors;
    size_t n_tensors, cap_tensors;
};

vt_status vt_gguf_writer_create(vt_gguf_writer **out)
{
    if (!out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_gguf_writer_create: out is NULL");
    *out = calloc(1, sizeof **out);
    if (!*out)
        return vt_set_error(VT_E_NO_MEMORY, "vt_gguf_writer_create: out of memory");
    (*out)->version = 3;
    (*out)->alignment = VT_GGUF_DEFAULT_ALIGNMENT;
    return VT_OK;
}

void vt_gguf_writer_destroy(vt_gguf_writer *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->n_kv; i++) {
        free(w->kvs[i].key);
        free(w->kvs[i].payload);
    }
    free(w->kvs);
    free(w->tensors);
    free(w);
}

vt_status vt_gguf_writer_set_version(vt_gguf_writer *w, uint32_t version)
{
    if (!w)
        return vt_set_error(VT_E_INVALID_ARG, "vt_gguf_writer_set_version: writer is NULL");
    if (version != 2 && version != 3)
        return vt_set_error(VT_E_INVALID_ARG, "vt_gguf_writer_set_version: version %u (2 or 3)", version);
    w->version = version;
    return VT_OK;
}

static writer_kv *find_kv(vt_gguf_writer *w, const char *key, size_t key_len)
{
    for (size_t i = 0; i < w->n_kv; i++)
        if (w->kvs[i].key_len == key_len && memcmp(w->kvs[i].key, key, key_len) == 0)
            return &w->kvs[i];
    return NULL;
}

/* Append a KV whose payload (malloc'd) the writer takes over. */
static vt_status append_kv(vt_gguf_writer *w, const char *key, uint8_t *payload, size_t payload_len)
{
    if (w->n_kv == w->cap_kv) {
        size_t cap = w->cap_kv ? w->cap_kv * 2 : 16;
        writer_kv *k = realloc(w->kvs, cap * sizeof *k);
        if (!k) {
            free(payload);
            return vt_set_error(VT_E_NO_MEMORY, "GGUF writer: out of memory for KVs");
        }
        w->kvs = k;
        w->cap_kv = cap;
    }
    char *copy = strdup(key);
    if (!copy) {
        free(payload);
        return vt_set_error(VT_E_NO_MEMORY, "GGUF writer: out of memory for key '%s'", key);
    }
    w->kvs[w->n_kv++] = (writer_kv){copy, strlen(key), payload, payload_len};
    return VT_OK;
}

static vt_status check_key(vt_gguf_writer *w, const char *key, const char *fn)
{
    if (!w || !key)
        return vt_set_error(VT_E_INVALID_ARG, "%s: NULL writer or key", fn);
    if (!key[0])
        return vt_set_error(VT_E_INVALID_ARG, "%s: the key is empty", fn);
    if (find_kv(w, key, strlen(key)))
        return vt_set_error(VT_E_INVALID_ARG, "%s: key '%s' was already added", fn, key);
    return VT_OK;
}

/* Encode one scalar of a fixed-size type (not string) from a value. */
static void encode_scalar(vt_gguf_type t, const vt_gguf_value *v, uint8_t *p)
{
    switch (t) {
    case VT_GGUF_U8: p[0] = (uint8_t)v->as.u; break;
    case VT_GGUF_I8: p[0] = (uint8_t)(int8_t)v->as.i; break;
    case VT_GGUF_BOOL: p[0] = v->as.b ? 1 : 0; break;
    case VT_GGUF_U16: gguf_store_u16(p, (uint16_t)v->as.u); break;
    case VT_GGUF_I16: gguf_store_u16(p, (uint16_t)(int16_t)v->as.i); break;
    case VT_GGUF_U32: gguf_store_u32(p, (uint32_t)v->as.u); break;
    case VT_GGUF_I32: gguf_store_u32(p, (uint32_t)(int32_t)v->as.i); break;
    case VT_GGUF_U64: gguf_store_u64(p, v->as.u); break;
    case VT_GGUF_I64: gguf_store_u64(p, (uint64_t)v->as.i); break;
    case VT_GGUF_F32: {
        float f = (float)v->as.f;
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        gguf_store_u32(p, bits);
        break;
    }
    case VT_GGUF_F64: {
        uint64_t bits;
        memcpy(&bits, &v->as.f, sizeof bits);
        gguf_store_u64(p, bits);
        break;
    }
    default: break;
    }
}

/* Element i of a host-typed C array as a value. */
static void host_element(vt_gguf_type t, const void *elems, uint64_t i, vt_gguf_value *v)
{
    memset(v, 0, sizeof *v);
    v->type = t;
    switch (t) {
    case VT_GGUF_U8: v->as.u = ((const uint8_t *)elems)[i]; break;
    case VT_GGUF_I8: v->as.i = ((const int8_t *)elems)[i]; break;
    case VT_GGUF_U16: v->as.u = ((const uint16_t *)elems)[i]; break;
    case VT_GGUF_I16: v->as.i = ((const int16_t *)elems)[i]; break;
    case VT_GGUF_U32: v->as.u = ((const uint32_t *)elems)[i]; break;
    case VT_GGUF_I32: v->as.i = ((const int32_t *)elems)[i]; break;
    case VT_GGUF_F32: v->as.f = ((const float *)elems)[i]; break;
    case VT_GGUF_BOOL: v->as.b = ((const bool *)elems)[i]; break;
    case VT_GGUF_STRING: v->as.str = ((const vt_gguf_str *)elems)[i]; break;
    case VT_GGUF_U64: v->as.u = ((const uint64_t *)elems)[i]; break;
    case VT_GGUF_I64: v->as.i = ((const int64_t *)elems)[i]; break;
    case VT_GGUF_F64: v->as.f = ((const double *)elems)[i]; break;
    default: break;
    }
}

/* Encoded size of one value (adds to *total; false on overflow). */
static bool add_value_size(const vt_gguf_value *v, size_t *total)
{
    size_t n = v->type == VT_GGUF_STRING ? 8 : gguf_type_size(v->type);
    if (v->type == VT_GGUF_STRING) {
        if (v->as.str.len > SIZE_MAX - 8)
            return false;
        n += (size_t)v->as.str.len;
    }
    if (n > SIZE_MAX - *total)
        return false;
    *total += n;
    return true;
}

/* Encode v at p; returns the bytes written. */
static size_t encode_value(const vt_gguf_value *v, uint8_t *p)
{
    if (v->type != VT_GGUF_STRING) {
        encode_scalar(v->type, v, p);
        return gguf_type_size(v->type);
    }
    gguf_store_u64(p, v->as.str.len);
    if (v->as.str.len)
        memcpy(p + 8, v->as.str.data, (size_t)v->as.str.len);
    return 8 + (size_t)v->as.str.len;
}

vt_status vt_gguf_writer_set_alignment(vt_gguf_writer *w, uint32_t alignment)
{
    if (!w)
        return vt_set_error(VT_E_INVALID_ARG, "vt_gguf_writer_set_alignment: writer is NULL");
    if (alignment == 0 || (alignment & (alignment - 1)) || alignment > VT_GGUF_MAX_ALIGNMENT)
        return vt_set_error(VT_E_INVALID_ARG, "vt_gguf_writer_set_alignment: %u is not a power of two between 1 and %u",
                            alignment, VT_GGUF_MAX_ALIGNMENT);
    writer_kv *kv = find_kv(w, VT_GGUF_KEY_ALIGNMENT, strlen(VT_GGUF_KEY_ALIGNMENT));
    if (kv) {
        gguf_store_u32(kv->payload + 4, alignment);
    } else {
        uint8_t *payload = malloc(8);
        if (!payload)
            return vt_set_error(VT_E_NO_MEMORY, "GGUF writer: out of memory");
        gguf_store_u32(payload, VT_GGUF_U32);
        gguf_store_u32(payload + 4, alignment);
        vt_status st = append_kv(w, VT_GGUF_KEY_ALIGNMENT, payload, 8);
        if (st != VT_OK)
            return st;
    }
    w->alignment = alignment;
    return VT_OK;
}

vt_status vt_gguf_writer_add_value(vt_gguf_writer *w, const char *key, const vt_gguf_value *value)
{
    static const char fn[] = "vt_gguf_writer_add_value";
    if (!value)
        return vt_set_error(VT_E_INVALID_ARG, "%s: value is NULL", fn);
    if (key && strcmp(key, VT_GGUF_KEY_ALIGNMENT) == 0) {
        if (value->type != VT_GGUF_U32 || value->as.u > UINT32_MAX)
            return vt_set_error(VT_E_INVALID_ARG, "%s: %s must be a u32", fn, VT_GGUF_KEY_ALIGNMENT);
        return vt_gguf_writer_set_alignment(w, (uint32_t)value->as.u);
    }
    vt_status st = check_key(w, key, fn);
    if (st != VT_OK)
        return st;
    if (value->type >= VT_GGUF_TYPE_COUNT || value->type == VT_GGUF_ARRAY)
        return vt_set_error(VT_E_INVALID_ARG, "%s: key '%s': value type %u is not a scalar GGUF type", fn, key,
                            value->type);
    if (value->type == VT_GGUF_STRING && value->as.str.len && !value->as.str.data)
        return vt_set_error(VT_E_INVALID_ARG, "%s: key '%s': NULL string data", fn, key);
    size_t len = 4;
    if (!add_value_size(value, &len))
        return vt_set_error(VT_E_INVALID_ARG, "%s: key '%s': the value is too large", fn, key);
    uint8_t *payload = malloc(len);
    if (!payload)
        return vt_set_error(VT_E_NO_MEMORY, "%s: out of memory for key '%s'", fn, key);
    gguf_store_u32(payload, value->type);
    encode_value(value, payload + 4);
    return append_kv(w, key, payload, len);
}

vt_status vt_gguf_writer_add_u32(vt_gguf_writer *w, const char *key, uint32_t v)
{
    vt_gguf_value x = {.type = VT_GGUF_U32, .as.u = v};
    return vt_gguf_writer_add_value(w, key, &x);
}

vt_status vt_gguf_writer_add_u64(vt_gguf_writer *w, const char *key, uint64_t v)
{
    vt_gguf_value x = {.type = VT_GGUF_U64, .as.u = v};
    return vt_gguf_writer_add_value(w, key, &x);
}

vt_status vt_gguf_writer_add_i32(vt_gguf_writer *w, const char *key, int32_t v)
{
    vt_gguf_value x = {.type = VT_GGUF_I32, .as.i = v};
    return vt_gguf_writer_add_value(w, key, &x);
}

vt_status vt_gguf_writer_add_f32(vt_gguf_writer *w, const char *key, float v)
{
    vt_gguf_value x = {.type = VT_GGUF_F32, .as.f = v};
    return vt_gguf_writer_add_value(w, key, &x);
}

vt_status vt_gguf_writer_add_bool(vt_gguf_writer *w, const char *key, bool v)
{
    vt_gguf_value x = {.type = VT_GGUF_BOOL, .as.b = v};
    return vt_gguf_writer_add_value(w, key, &x);
}

vt_status vt_gguf_writer_add_string(vt_gguf_writer *w, const char *key, const char *s)
{
    if (!s)
        return vt_set_error(VT_E_INVALID_ARG, "vt_gguf_writer_add_string: NULL string for key '%s'", key ? key : "");
    vt_gguf_value x = {.type = VT_GGUF_STRING, .as.str = {s, strlen(s)}};
    return vt_gguf_writer_add_value(w, key, &x);
}

vt_status vt_gguf_writer_add_array(vt_gguf_writer *w, const char *key, vt_gguf_type elem_type, const void *elems,
                                   uint64_t count)
{
    static const char fn[] = "vt_gguf_writer_add_array";
    if (key && strcmp(key, VT_GGUF_KEY_ALIGNMENT) == 0)
        return vt_set_error(VT_E_INVALID_ARG, "%s: %s must be a u32, not an array", fn, VT_GGUF_KEY_ALIGNMENT);
    vt_status st = check_key(w, key, fn);
    if (st != VT_OK)
        return st;
    if (elem_type >= VT_GGUF_TYPE_COUNT || elem_type == VT_GGUF_ARRAY)
        return vt_set_error(VT_E_INVALID_ARG, "%s: key '%s': element type %u (arrays of arrays are not GGUF)", fn, key,
                            elem_type);
    if (count && !elems)
        return vt_set_error(VT_E_INVALID_ARG, "%s: key '%s': NULL elements", fn, key);
    size_t len = 16;
    vt_gguf_value v;
    if (elem_type == VT_GGUF_STRING) {
        for (uint64_t i = 0; i < count; i++) {
            host_element(elem_type, elems, i, &v);
            if (v.as.str.len && !v.as.str.data)
                return vt_set_error(VT_E_INVALID_ARG, "%s: key '%s': element %llu has NULL data", fn, key,
                                    (unsigned long long)i);
            if (!add_value_size(&v, &len))
                return vt_set_error(VT_E_INVALID_ARG, "%s: key '%s': the array is too large", fn, key);
        }
    } else {
        uint32_t size = gguf_type_size(elem_type);
        if (count > (SIZE_MAX - len) / size)
            return vt_set_error(VT_E_INVALID_ARG, "%s: key '%s': the array is too large", fn, key);
        len += (size_t)count * size;
    }
    uint8_t *payload = malloc(len);
    if (!payload)
        return vt_set_error(VT_E_NO_MEMORY, "%s: out of memory for key '%s'", fn, key);
    gguf_store_u32(payload, VT_GGUF_ARRAY);
    gguf_store_u32(payload + 4, elem_type);
    gguf_store_u64(payload + 8, count);
    size_t at = 16;
    for (uint64_t i = 0; i < count; i++) {
        host_element(elem_type, elems, i, &v);
        at += encode_value(&v, payload + at);
    }
    return append_kv(w, key, payload, len);
}

vt_status vt_gguf_writer_add_tensor(vt_gguf_writer *w, const char *name, vt_dtype type, uint32_t n_dims,
                                    const int64_t *ne, const void *data, uint64_t n_bytes)
{
    static const char fn[] = "vt_gguf_writer_add_tensor";
    if (!w || !name || (n_dims && !ne))
        return vt_set_error(VT_E_INVALID_ARG, "%s: NULL writer, name or ne", fn);
    size_t name_len = strlen(name);
    if (name_len == 0 || name_len > VT_GGUF_MAX_NAME)
        return vt_set_error(VT_E_INVALID_ARG, "%s: name '%s' has %zu bytes (1..%d)", fn, name, name_len,
                            VT_GGUF_MAX_NAME);
    for (size_t i = 0; i < w->n_tensors; i++)
        if (strcmp(w->tensors[i].name, name) == 0)
            return vt_set_error(VT_E_INVALID_ARG, "%s: tensor '%s' was already added", fn, name);
    const vt_dtype_info *info = vt_dtype_get(type);
    if (!info)
        return vt_set_error(VT_E_INVALID_ARG, "%s: tensor '%s': type %s", fn, name, vt_dtype_name(type));
    if (n_dims > VT_GGUF_MAX_DIMS)
        return vt_set_error(VT_E_INVALID_ARG, "%s: tensor '%s': %u dims (at most %d)", fn, name, n_dims,
                            VT_GGUF_MAX_DIMS);
    for (uint32_t d = 0; d < n_dims; d++)
        if (ne[d] < 0)
            return vt_set_error(VT_E_INVALID_ARG, "%s: tensor '%s': ne[%u] = %lld is negative", fn, name, d,
                                (long long)ne[d]);
    int64_t elements;
    uint64_t bytes;
    if (gguf_tensor_size(type, n_dims, ne, &elements, &bytes) != GGUF_SIZE_OK)
        return vt_set_error(VT_E_INVALID_ARG,
                            "%s: tensor '%s': %s shape overflows or ne[0] is not a multiple of the block (%u)", fn,
                            name, info->name, info->block_elems);
    if (bytes != n_bytes)
        return vt_set_error(VT_E_INVALID_ARG, "%s: tensor '%s': %llu bytes given, its %s shape has %llu", fn, name,
                            (unsigned long long)n_bytes, info->name, (unsigned long long)bytes);
    if (w->n_tensors == w->cap_tensors) {
        size_t cap = w->cap_tensors ? w->cap_tensors * 2 : 16;
        writer_tensor *t = realloc(w->tensors, cap * sizeof *t);
        if (!t)
            return vt_set_error(VT_E_NO_MEMORY, "%s: out of memory", fn);
        w->tensors = t;
        w->cap_tensors = cap;
    }
    writer_tensor *t = &w->tensors[w->n_tensors++];
    memset(t, 0, sizeof *t);
    memcpy(t->name, name, name_len + 1);
    t->name_len = (uint32_t)name_len;
    t->type = type;
    t->n_dims = n_dims;
    for (uint32_t d = 0; d < n_dims; d++)
        t->ne[d] = ne[d];
    t->data = data;
    t->n_bytes = n_bytes;
    return VT_OK;
}

static uint64_t pad_to(uint64_t n, uint32_t align)
{
    return (align - n % align) % align;
}

/* Layout: where the data section starts and the whole size. */
static vt_status layout(const vt_gguf_writer *w, uint64_t *data_offset, uint64_t *total)
{
    uint64_t n = GGUF_HEADER_BYTES;
    for (size_t i = 0; i < w->n_kv; i++)
        n += 8 + w->kvs[i].key_len + w->kvs[i].payload_len; /* both in memory: no overflow */
    for (size_t i = 0; i < w->n_tensors; i++)
        n += 8 + w->tensors[i].name_len + 4 + 8ull * w->tensors[i].n_dims + 4 + 8;
    n += pad_to(n, w->alignment);
    *data_offset = n;
    for (size_t i = 0; i < w->n_tensors; i++) {
        uint64_t b = w->tensors[i].n_bytes;
        if (b > UINT64_MAX - w->alignment || b + pad_to(b, w->alignment) > UINT64_MAX - n)
            return vt_set_error(VT_E_INVALID_ARG, "GGUF writer: the file would exceed 2^64 bytes (tensor '%s')",
                                w->tensors[i].name);
        n += b + pad_to(b, w->alignment);
    }
    *total = n;
    return VT_OK;
}

vt_status vt_gguf_writer_size(const vt_gguf_writer *w, uint64_t *size)
{
    if (!w || !size)
        return vt_set_error(VT_E_INVALID_ARG, "vt_gguf_writer_size: NULL writer or size");
    uint64_t data_offset;
    return layout(w, &data_offset, size);
}

/* Where the bytes go: a FILE, or a buffer of exactly the file's size. */
typedef struct sink {
    FILE *f;
    uint8_t *buf;
    uint64_t pos;
} sink;

static bool put(sink *s, const void *p, uint64_t n)
{
    if (s->f) {
        if (n && fwrite(p, 1, (size_t)n, s->f) != n)
            return false;
    } else if (n) {
        memcpy(s->buf + s->pos, p, (size_t)n);
    }
    s->pos += n;
    return true;
}

static bool put_zeros(sink *s, uint64_t n)
{
    static const uint8_t zeros[4096];
    while (n) {
        uint64_t k = n < sizeof zeros ? n : sizeof zeros;
        if (!put(s, zeros, k))
            return false;
        n -= k;
    }
    return true;
}

static bool put_u32(sink *s, uint32_t v)
{
    uint8_t b[4];
    gguf_store_u32(b, v);
    return put(s, b, 4);
}

static bool put_u64(sink *s, uint64_t v)
{
    uint8_t b[8];
    gguf_store_u64(b, v);
    return put(s, b, 8);
}

/* Write the whole image; false on an I/O error (errno set). */
static bool emit(const vt_gguf_writer *w, sink *s)
{
    static const uint8_t magic[4] = {GGUF_MAGIC_0, GGUF_MAGIC_1, GGUF_MAGIC_2, GGUF_MAGIC_3};
    bool ok = put(s, magic, 4) && put_u32(s, w->version) && put_u64(s, w->n_tensors) && put_u64(s, w->n_kv);
    for (size_t i = 0; ok && i < w->n_kv; i++)
        ok = put_u64(s, w->kvs[i].key_len) && put(s, w->kvs[i].key, w->kvs[i].key_len) &&
             put(s, w->kvs[i].payload, w->kvs[i].payload_len);
    uint64_t offset = 0;
    for (size_t i = 0; ok && i < w->n_tensors; i++) {
        const writer_tensor *t = &w->tensors[i];
        ok = put_u64(s, t->name_len) && put(s, t->name, t->name_len) && put_u32(s, t->n_dims);
        for (uint32_t d = 0; ok && d < t->n_dims; d++)
            ok = put_u64(s, (uint64_t)t->ne[d]);
        ok = ok && put_u32(s, t->type) && put_u64(s, offset);
        offset += t->n_bytes + pad_to(t->n_bytes, w->alignment);
    }
    ok = ok && put_zeros(s, pad_to(s->pos, w->alignment));
    for (size_t i = 0; ok && i < w->n_tensors; i++) {
        const writer_tensor *t = &w->tensors[i];
        ok = (t->data ? put(s, t->data, t->n_bytes) : put_zeros(s, t->n_bytes)) &&
             put_zeros(s, pad_to(t->n_bytes, w->alignment));
    }
    return ok;
}

vt_status vt_gguf_writer_write_memory(const vt_gguf_writer *w, void **data, size_t *size)
{
    if (!w || !data || !size)
        return vt_set_error(VT_E_INVALID_ARG, "vt_gguf_writer_write_memory: NULL writer, data or size");
    *data = NULL;
    *size = 0;
    uint64_t data_offset, total;
    vt_status st = layout(w, &data_offset, &total);
    if (st != VT_OK)
        return st;
    if (total > SIZE_MAX)
        return vt_set_error(VT_E_NO_MEMORY, "GGUF writer: %llu bytes do not fit in memory", (unsigned long long)total);
    sink s = {.buf = malloc((size_t)total)};
    if (!s.buf)
        return vt_set_error(VT_E_NO_MEMORY, "GGUF writer: out of memory for %llu bytes", (unsigned long long)total);
    emit(w, &s); /* cannot fail in memory */
    *data = s.buf;
    *size = (size_t)total;
    return VT_OK;
}

vt_status vt_gguf_writer_write_file(const vt_gguf_writer *w, const char *path)
{
    if (!w || !path)
        return vt_set_error(VT_E_INVALID_ARG, "vt_gguf_writer_write_file: NULL writer or path");
    uint64_t data_offset, total;
    vt_status st = layout(w, &data_offset, &total);
    if (st != VT_OK)
        return st;
    sink s = {.f = fopen(path, "wb")};
    if (!s.f)
        return vt_set_error(VT_E_IO, "cannot create GGUF file '%s': %s", path, strerror(errno));
    bool ok = emit(w, &s);
    int e = errno;
    if (fclose(s.f) != 0 && ok) {
        ok = false;
        e = errno;
    }
    if (!ok) {
        unlink(path);
        return vt_set_error(VT_E_IO, "writing GGUF file '%s' failed: %s", path, strerror(e));
    }
    return VT_OK;
}
