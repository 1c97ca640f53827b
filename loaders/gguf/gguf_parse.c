/* gguf_parse.c - the validating GGUF parser: header, KVs, tensor infos and
 * the data layout. Every read is bounds-checked and every size computed
 * with overflow checks; a failure names the file, the byte offset and the
 * field (VT_E_BAD_FILE). Works on bytes already in memory (the mapping). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf_internal.h"
#include "vt/vt_backend.h"

_Static_assert(VT_GGUF_MAX_DIMS == VT_MAX_DIMS, "GGUF dims and vt dims must agree");

/* "No array element": the field read is not inside an array. */
#define NO_ELEM UINT64_MAX

typedef struct parser {
    vt_gguf *g;
    uint64_t pos;
    /* The record being read, for messages: "kv[3] 'key' ...". */
    const char *item; /* "kv", "tensor" or NULL (the header) */
    size_t index;
    const uint8_t *label; /* its key or name once read, else NULL */
    uint64_t label_len;
    size_t str_cap; /* capacity of g->str_offsets */
} parser;

static vt_status fail(const parser *p, uint64_t offset, const char *fmt, ...) VT_PRINTF(3, 4);

/* Record VT_E_BAD_FILE: "bad GGUF file 'F' at offset N: kv[i] 'key' what". */
static vt_status fail(const parser *p, uint64_t offset, const char *fmt, ...)
{
    char what[512];
    char prefix[192] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (p->item && p->label) {
        char esc[100];
        vt_gguf_escape((const char *)p->label, p->label_len, esc, sizeof esc);
        snprintf(prefix, sizeof prefix, "%s[%zu] '%s' ", p->item, p->index, esc);
    } else if (p->item) {
        snprintf(prefix, sizeof prefix, "%s[%zu] ", p->item, p->index);
    }
    return vt_set_error(VT_E_BAD_FILE, "bad GGUF file '%s' at offset %llu: %s%s", p->g->name,
                        (unsigned long long)offset, prefix, what);
}

/* Name of a field for messages: "[element E ]field[ suffix]". */
static const char *field_name(char *buf, size_t size, const char *field, const char *suffix, uint64_t elem)
{
    char el[40] = "";
    if (elem != NO_ELEM)
        snprintf(el, sizeof el, "element %llu%s", (unsigned long long)elem, field[0] ? " " : "");
    snprintf(buf, size, "%s%s%s%s", el, field, suffix[0] && (field[0] || el[0]) ? " " : "", suffix);
    return buf;
}

static uint64_t left(const parser *p)
{
    return p->g->size - p->pos;
}

/* Take n bytes of a field; fails naming the field when the file ends first. */
static vt_status take(parser *p, uint64_t n, const char *field, const char *suffix, uint64_t elem, const uint8_t **out)
{
    if (n > left(p)) {
        char name[128];
        return fail(p, p->pos, "%s truncated: needs %llu bytes, %llu left (file size %llu)",
                    field_name(name, sizeof name, field, suffix, elem), (unsigned long long)n,
                    (unsigned long long)left(p), (unsigned long long)p->g->size);
    }
    *out = p->g->base + p->pos;
    p->pos += n;
    return VT_OK;
}

static vt_status read_u32(parser *p, const char *field, uint32_t *v)
{
    const uint8_t *b = NULL;
    vt_status st = take(p, 4, field, "", NO_ELEM, &b);
    if (st == VT_OK)
        *v = gguf_load_u32(b);
    return st;
}

static vt_status read_u64(parser *p, const char *field, uint64_t *v)
{
    const uint8_t *b = NULL;
    vt_status st = take(p, 8, field, "", NO_ELEM, &b);
    if (st == VT_OK)
        *v = gguf_load_u64(b);
    return st;
}

/* A GGUF string: u64 length, then that many bytes. */
static vt_status read_string(parser *p, const char *field, uint64_t elem, const uint8_t **s, uint64_t *len)
{
    const uint8_t *b = NULL;
    uint64_t len_off = p->pos;
    vt_status st = take(p, 8, field, "length", elem, &b);
    if (st != VT_OK)
        return st;
    *len = gguf_load_u64(b);
    if (*len > left(p)) {
        char name[128];
        return fail(p, len_off, "%s %llu exceeds the file (size %llu, %llu bytes left)",
                    field_name(name, sizeof name, field, "length", elem), (unsigned long long)*len,
                    (unsigned long long)p->g->size, (unsigned long long)left(p));
    }
    *s = p->g->base + p->pos;
    p->pos += *len;
    return VT_OK;
}

static bool bytes_equal(const uint8_t *a, uint64_t alen, const char *b)
{
    size_t blen = strlen(b);
    return alen == blen && memcmp(a, b, blen) == 0;
}

static int compare_bytes(const uint8_t *a, uint64_t alen, const uint8_t *b, uint64_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    if (c)
        return c;
    return (alen > blen) - (alen < blen);
}

static vt_status parse_header(parser *p)
{
    vt_gguf *g = p->g;
    const uint8_t *m = NULL;
    vt_status st = take(p, 4, "magic", "", NO_ELEM, &m);
    if (st != VT_OK)
        return st;
    if (m[0] != GGUF_MAGIC_0 || m[1] != GGUF_MAGIC_1 || m[2] != GGUF_MAGIC_2 || m[3] != GGUF_MAGIC_3) {
        char esc[40];
        vt_gguf_escape((const char *)m, 4, esc, sizeof esc);
        return fail(p, 0, "magic is \"%s\", not \"GGUF\": not a GGUF file", esc);
    }
    uint32_t v;
    if ((st = read_u32(p, "version", &v)) != VT_OK)
        return st;
    uint32_t swapped = (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
    if (swapped >= 1 && swapped <= 3)
        return fail(p, 4, "big-endian GGUF files are not supported (version field reads %u, byte-swapped %u)", v,
                    swapped);
    if (v == 0)
        return fail(p, 4, "version 0 is not a GGUF version (v2 and v3 are supported)");
    if (v == 1)
        return fail(p, 4, "GGUF v1 is not supported (v2 and v3 are)");
    if (v > 3)
        return fail(p, 4, "version %u is newer than this reader (v2 and v3 are supported)", v);
    g->version = v;

    uint64_t n_tensors, n_kv;
    if ((st = read_u64(p, "tensor count", &n_tensors)) != VT_OK || (st = read_u64(p, "kv count", &n_kv)) != VT_OK)
        return st;
    const struct {
        const char *what;
        uint64_t n, min, off;
    } counts[] = {{"tensor count", n_tensors, GGUF_MIN_TENSOR_BYTES, 8}, {"kv count", n_kv, GGUF_MIN_KV_BYTES, 16}};
    for (size_t i = 0; i < 2; i++) {
        uint64_t n = counts[i].n, min = counts[i].min;
        if (n > UINT64_MAX / min)
            return fail(p, counts[i].off, "%s %llu overflows: at least %llu bytes each is more than 2^64",
                        counts[i].what, (unsigned long long)n, (unsigned long long)min);
        if (n * min > left(p))
            return fail(p, counts[i].off,
                        "%s %llu exceeds the file: needs at least %llu bytes, %llu left (file size %llu)",
                        counts[i].what, (unsigned long long)n, (unsigned long long)(n * min),
                        (unsigned long long)left(p), (unsigned long long)g->size);
    }
    /* Bounded by the file size above, so these fit in memory's terms. */
    g->kvs = calloc(n_kv ? (size_t)n_kv : 1, sizeof *g->kvs);
    g->tensors = calloc(n_tensors ? (size_t)n_tensors : 1, sizeof *g->tensors);
    if (!g->kvs || !g->tensors)
        return vt_set_error(VT_E_NO_MEMORY, "GGUF file '%s': out of memory for %llu KVs and %llu tensors", g->name,
                            (unsigned long long)n_kv, (unsigned long long)n_tensors);
    g->n_kv = (size_t)n_kv;
    g->n_tensors = (size_t)n_tensors;
    return VT_OK;
}

/* Room for n more string offsets. n is bounded by the bytes left / 8. */
static vt_status reserve_strings(parser *p, uint64_t n)
{
    vt_gguf *g = p->g;
    uint64_t need = (uint64_t)g->n_str_offsets + n;
    if (need <= p->str_cap)
        return VT_OK;
    uint64_t cap = p->str_cap ? (uint64_t)p->str_cap * 2 : 64;
    if (cap < need)
        cap = need;
    if (cap > SIZE_MAX / sizeof *g->str_offsets)
        return vt_set_error(VT_E_NO_MEMORY, "GGUF file '%s': too many strings (%llu)", g->name,
                            (unsigned long long)need);
    uint64_t *s = realloc(g->str_offsets, (size_t)cap * sizeof *s);
    if (!s)
        return vt_set_error(VT_E_NO_MEMORY, "GGUF file '%s': out of memory for %llu string offsets", g->name,
                            (unsigned long long)cap);
    g->str_offsets = s;
    p->str_cap = (size_t)cap;
    return VT_OK;
}

/* The value of KV e (a scalar, or count elements after the array header
 * whose count field sits at count_off). */
static vt_status parse_value(parser *p, gguf_kv_entry *e, uint64_t count_off)
{
    vt_gguf *g = p->g;
    bool array = e->pub.type == VT_GGUF_ARRAY;
    vt_gguf_type et = e->pub.elem_type;
    uint64_t count = e->pub.count;
    const uint8_t *s = NULL;
    uint64_t len = 0;
    if (et != VT_GGUF_STRING) {
        uint32_t size = gguf_type_size(et);
        if (!array)
            return take(p, size, "value", "", NO_ELEM, &s);
        if (count > UINT64_MAX / size)
            return fail(p, count_off, "array count %llu of %s overflows: %u bytes each is more than 2^64",
                        (unsigned long long)count, vt_gguf_type_name(et), size);
        if (count * size > left(p))
            return fail(p, count_off, "array of %llu %s (%llu bytes) exceeds the file (size %llu, %llu bytes left)",
                        (unsigned long long)count, vt_gguf_type_name(et), (unsigned long long)(count * size),
                        (unsigned long long)g->size, (unsigned long long)left(p));
        p->pos += count * size;
        return VT_OK;
    }
    if (!array)
        return read_string(p, "value", NO_ELEM, &s, &len);
    if (count > left(p) / 8)
        return fail(p, count_off,
                    "array count %llu of strings exceeds the file: 8 bytes each at least, %llu bytes left (file "
                    "size %llu)",
                    (unsigned long long)count, (unsigned long long)left(p), (unsigned long long)g->size);
    vt_status st = reserve_strings(p, count);
    if (st != VT_OK)
        return st;
    e->str_first = g->n_str_offsets;
    for (uint64_t j = 0; j < count; j++) {
        g->str_offsets[g->n_str_offsets++] = p->pos;
        if ((st = read_string(p, "", j, &s, &len)) != VT_OK)
            return st;
    }
    return VT_OK;
}

/* general.alignment: a u32, non-zero, a power of two, at most the cap. */
static vt_status check_alignment(parser *p, const gguf_kv_entry *e, uint64_t type_off)
{
    if (e->pub.type != VT_GGUF_U32)
        return fail(p, type_off, "must be a u32, not %s%s%s", vt_gguf_type_name(e->pub.type),
                    e->pub.type == VT_GGUF_ARRAY ? " of " : "",
                    e->pub.type == VT_GGUF_ARRAY ? vt_gguf_type_name(e->pub.elem_type) : "");
    uint32_t a = gguf_load_u32(e->value);
    if (a == 0)
        return fail(p, e->pub.value_offset, "value 0: the alignment must not be zero");
    if (a & (a - 1))
        return fail(p, e->pub.value_offset, "value %u is not a power of two", a);
    if (a > VT_GGUF_MAX_ALIGNMENT)
        return fail(p, e->pub.value_offset, "value %u exceeds the cap of %u bytes (1 MiB)", a, VT_GGUF_MAX_ALIGNMENT);
    p->g->alignment = a;
    return VT_OK;
}

static vt_status parse_kv(parser *p, size_t i)
{
    vt_gguf *g = p->g;
    gguf_kv_entry *e = &g->kvs[i];
    p->item = "kv";
    p->index = i;
    p->label = NULL;
    e->pub.struct_size = sizeof e->pub;
    e->pub.index = i;
    e->pub.offset = p->pos;

    const uint8_t *key;
    uint64_t key_len;
    vt_status st = read_string(p, "key", NO_ELEM, &key, &key_len);
    if (st != VT_OK)
        return st;
    if (key_len == 0)
        return fail(p, e->pub.offset, "key is empty");
    if (memchr(key, 0, key_len))
        return fail(p, e->pub.offset + 8, "key contains a NUL byte");
    p->label = key;
    p->label_len = key_len;
    e->key_bytes = key;
    e->pub.key_len = key_len;

    uint64_t type_off = p->pos, count_off = 0;
    uint32_t type;
    if ((st = read_u32(p, "value type", &type)) != VT_OK)
        return st;
    if (type >= VT_GGUF_TYPE_COUNT)
        return fail(p, type_off, "value type %u is not a GGUF type (0..12)", type);
    e->pub.type = (vt_gguf_type)type;
    e->pub.elem_type = (vt_gguf_type)type;
    e->pub.count = 1;
    if (type == VT_GGUF_ARRAY) {
        uint64_t et_off = p->pos;
        uint32_t et;
        uint64_t count;
        if ((st = read_u32(p, "array element type", &et)) != VT_OK)
            return st;
        if (et == VT_GGUF_ARRAY)
            return fail(p, et_off, "nested arrays are not supported (array element type is array)");
        if (et >= VT_GGUF_TYPE_COUNT)
            return fail(p, et_off, "array element type %u is not a GGUF type (0..12)", et);
        count_off = p->pos;
        if ((st = read_u64(p, "array count", &count)) != VT_OK)
            return st;
        e->pub.elem_type = (vt_gguf_type)et;
        e->pub.count = count;
    }
    e->pub.value_offset = p->pos;
    e->value = g->base + p->pos;
    if ((st = parse_value(p, e, count_off)) != VT_OK)
        return st;
    if (bytes_equal(key, key_len, VT_GGUF_KEY_ALIGNMENT))
        return check_alignment(p, e, type_off);
    return VT_OK;
}

static int compare_kv(const void *a, const void *b)
{
    const gguf_kv_entry *x = *(const gguf_kv_entry *const *)a, *y = *(const gguf_kv_entry *const *)b;
    int c = compare_bytes(x->key_bytes, x->pub.key_len, y->key_bytes, y->pub.key_len);
    return c ? c : (x->pub.index > y->pub.index) - (x->pub.index < y->pub.index);
}

/* Sort the keys (the lookup index) and refuse duplicates. */
static vt_status index_keys(parser *p)
{
    vt_gguf *g = p->g;
    g->kv_by_key = malloc((g->n_kv ? g->n_kv : 1) * sizeof *g->kv_by_key);
    if (!g->kv_by_key)
        return vt_set_error(VT_E_NO_MEMORY, "GGUF file '%s': out of memory for the key index", g->name);
    for (size_t i = 0; i < g->n_kv; i++)
        g->kv_by_key[i] = &g->kvs[i];
    qsort(g->kv_by_key, g->n_kv, sizeof *g->kv_by_key, compare_kv);
    for (size_t i = 1; i < g->n_kv; i++) {
        const gguf_kv_entry *a = g->kv_by_key[i - 1], *b = g->kv_by_key[i];
        if (compare_bytes(a->key_bytes, a->pub.key_len, b->key_bytes, b->pub.key_len) == 0) {
            p->item = "kv";
            p->index = b->pub.index;
            p->label = b->key_bytes;
            p->label_len = b->pub.key_len;
            return fail(p, b->pub.offset, "key duplicates kv[%zu] (at offset %llu)", a->pub.index,
                        (unsigned long long)a->pub.offset);
        }
    }
    return VT_OK;
}

/* File offset of a tensor info's offset field. */
static uint64_t offset_field(const vt_gguf_tensor *t)
{
    return t->info_offset + 8 + t->name_len + 4 + 8ull * t->n_dims + 4;
}

/* "[a, b, c]" of the first n dims. */
static const char *format_ne(char *buf, size_t size, const int64_t *ne, uint32_t n)
{
    size_t used = (size_t)snprintf(buf, size, "[");
    for (uint32_t d = 0; d < n && used < size; d++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", d ? ", " : "", (long long)ne[d]);
    if (used < size)
        snprintf(buf + used, size - used, "]");
    return buf;
}

/* Element count and the byte-size chain of t: (ne0/blck)*type_size*ne1*ne2*ne3
 * (gguf_tensor_size), then the alignment padding, then the running sum. */
static vt_status size_tensor(parser *p, vt_gguf_tensor *t, uint64_t dims_off, uint64_t *running)
{
    const vt_dtype_info *info = vt_dtype_get(t->type);
    char ne[128];
    switch (gguf_tensor_size(t->type, t->n_dims, t->ne, &t->n_elements, &t->n_bytes)) {
    case GGUF_SIZE_OK: break;
    case GGUF_SIZE_ELEMENTS_OVERFLOW:
        return fail(p, dims_off, "element count overflows int64 (ne = %s; zero dims count as 1)",
                    format_ne(ne, sizeof ne, t->ne, t->n_dims));
    case GGUF_SIZE_NOT_BLOCKS:
        return fail(p, dims_off, "ne[0] = %lld is not a multiple of %s's block size %u", (long long)t->ne[0],
                    info->name, info->block_elems);
    case GGUF_SIZE_BYTES_OVERFLOW:
        return fail(p, dims_off,
                    "byte size overflows 64 bits: (ne[0]/%u)*%u*ne[1]*ne[2]*ne[3] with ne = %s (%s; zero dims count "
                    "as 1)",
                    info->block_elems, info->block_bytes, format_ne(ne, sizeof ne, t->ne, t->n_dims), info->name);
    default: /* type and dims were checked while reading */ return fail(p, dims_off, "tensor shape or type is invalid");
    }
    uint64_t bytes = t->n_bytes;
    uint32_t align = p->g->alignment;
    if (bytes > UINT64_MAX - (align - 1))
        return fail(p, dims_off, "byte size %llu padded to the alignment %u overflows 64 bits",
                    (unsigned long long)bytes, align);
    uint64_t padded = (bytes + (align - 1)) / align * align;
    if (padded > UINT64_MAX - *running)
        return fail(p, dims_off, "running sum of tensor sizes overflows 64 bits (%llu + %llu)",
                    (unsigned long long)*running, (unsigned long long)padded);
    *running += padded;
    return VT_OK;
}

static vt_status parse_tensor_info(parser *p, size_t i, uint64_t *running)
{
    vt_gguf_tensor *t = &p->g->tensors[i];
    p->item = "tensor";
    p->index = i;
    p->label = NULL;
    t->struct_size = sizeof *t;
    t->index = i;
    t->info_offset = p->pos;

    const uint8_t *name;
    uint64_t name_len;
    vt_status st = read_string(p, "name", NO_ELEM, &name, &name_len);
    if (st != VT_OK)
        return st;
    if (name_len == 0)
        return fail(p, t->info_offset, "name is empty");
    if (name_len > VT_GGUF_MAX_NAME)
        return fail(p, t->info_offset, "name length %llu is 64 bytes or more (at most %d)",
                    (unsigned long long)name_len, VT_GGUF_MAX_NAME);
    if (memchr(name, 0, name_len))
        return fail(p, t->info_offset + 8, "name contains a NUL byte");
    p->label = name;
    p->label_len = name_len;
    t->name = (const char *)name; /* in the mapping until the names are copied */
    t->name_len = (uint32_t)name_len;

    uint64_t n_dims_off = p->pos;
    uint32_t n_dims;
    if ((st = read_u32(p, "n_dims", &n_dims)) != VT_OK)
        return st;
    if (n_dims > VT_GGUF_MAX_DIMS)
        return fail(p, n_dims_off, "n_dims %u exceeds %d", n_dims, VT_GGUF_MAX_DIMS);
    t->n_dims = n_dims;
    uint64_t dims_off = p->pos;
    for (uint32_t d = 0; d < VT_GGUF_MAX_DIMS; d++)
        t->ne[d] = 1;
    for (uint32_t d = 0; d < n_dims; d++) {
        char field[16];
        snprintf(field, sizeof field, "ne[%u]", d);
        uint64_t off = p->pos, v;
        if ((st = read_u64(p, field, &v)) != VT_OK)
            return st;
        int64_t sv;
        memcpy(&sv, &v, sizeof sv);
        if (sv < 0)
            return fail(p, off, "ne[%u] = %lld is negative", d, (long long)sv);
        t->ne[d] = sv;
    }
    for (uint32_t d = 0; d < VT_GGUF_MAX_DIMS; d++)
        t->shape[d] = d < n_dims ? t->ne[n_dims - 1 - d] : 1;

    uint64_t type_off = p->pos;
    uint32_t type;
    if ((st = read_u32(p, "type", &type)) != VT_OK)
        return st;
    if (type < VT_DTYPE_COUNT && vt_dtype_is_removed(type))
        return fail(p, type_off, "type %u (%s) was removed from ggml", type, vt_dtype_name(type));
    if (type >= VT_DTYPE_COUNT || !vt_dtype_get(type))
        return fail(p, type_off, "type %u is not a ggml type", type);
    t->type = (int)type;
    if ((st = read_u64(p, "offset", &t->offset)) != VT_OK)
        return st;
    return size_tensor(p, t, dims_off, running);
}

static int compare_tensor_name(const void *a, const void *b)
{
    const vt_gguf_tensor *x = *(const vt_gguf_tensor *const *)a, *y = *(const vt_gguf_tensor *const *)b;
    int c = compare_bytes((const uint8_t *)x->name, x->name_len, (const uint8_t *)y->name, y->name_len);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

static int compare_tensor_data(const void *a, const void *b)
{
    const vt_gguf_tensor *x = *(const vt_gguf_tensor *const *)a, *y = *(const vt_gguf_tensor *const *)b;
    if (x->file_offset != y->file_offset)
        return (x->file_offset > y->file_offset) - (x->file_offset < y->file_offset);
    return (x->index > y->index) - (x->index < y->index);
}

static void point_at(parser *p, const vt_gguf_tensor *t)
{
    p->item = "tensor";
    p->index = t->index;
    p->label = (const uint8_t *)t->name;
    p->label_len = t->name_len;
}

/* Sort the names (the lookup index) and refuse duplicates. */
static vt_status index_names(parser *p)
{
    vt_gguf *g = p->g;
    g->tensor_by_name = malloc((g->n_tensors ? g->n_tensors : 1) * sizeof *g->tensor_by_name);
    if (!g->tensor_by_name)
        return vt_set_error(VT_E_NO_MEMORY, "GGUF file '%s': out of memory for the tensor index", g->name);
    for (size_t i = 0; i < g->n_tensors; i++)
        g->tensor_by_name[i] = &g->tensors[i];
    qsort(g->tensor_by_name, g->n_tensors, sizeof *g->tensor_by_name, compare_tensor_name);
    for (size_t i = 1; i < g->n_tensors; i++) {
        const vt_gguf_tensor *a = g->tensor_by_name[i - 1], *b = g->tensor_by_name[i];
        if (a->name_len == b->name_len && memcmp(a->name, b->name, a->name_len) == 0) {
            point_at(p, b);
            return fail(p, b->info_offset, "name duplicates tensor[%zu] (at offset %llu)", a->index,
                        (unsigned long long)a->info_offset);
        }
    }
    return VT_OK;
}

/* Place every tensor's data: aligned, inside the file, overlapping none. */
static vt_status place_data(parser *p)
{
    vt_gguf *g = p->g;
    uint32_t align = g->alignment;
    for (size_t i = 0; i < g->n_tensors; i++) {
        vt_gguf_tensor *t = &g->tensors[i];
        point_at(p, t);
        if (t->offset % align != 0)
            return fail(p, offset_field(t), "offset %llu is not a multiple of the alignment %u",
                        (unsigned long long)t->offset, align);
        if (t->offset > UINT64_MAX - g->data_offset)
            return fail(p, offset_field(t), "offset %llu overflows 64 bits past the data section at %llu",
                        (unsigned long long)t->offset, (unsigned long long)g->data_offset);
        t->file_offset = g->data_offset + t->offset;
        if (t->n_bytes == 0) {
            t->data = NULL;
            continue;
        }
        if (t->n_bytes > g->size || t->file_offset > g->size - t->n_bytes)
            return fail(p, offset_field(t),
                        "data past the end of the file: %llu bytes at file offset %llu (data section %llu + offset "
                        "%llu), file size %llu",
                        (unsigned long long)t->n_bytes, (unsigned long long)t->file_offset,
                        (unsigned long long)g->data_offset, (unsigned long long)t->offset, (unsigned long long)g->size);
        t->data = g->base + t->file_offset;
    }
    /* Overlaps: sort the non-empty tensors by where their data starts. */
    const vt_gguf_tensor **by_data = malloc((g->n_tensors ? g->n_tensors : 1) * sizeof *by_data);
    if (!by_data)
        return vt_set_error(VT_E_NO_MEMORY, "GGUF file '%s': out of memory for the data layout", g->name);
    size_t n = 0;
    for (size_t i = 0; i < g->n_tensors; i++)
        if (g->tensors[i].n_bytes)
            by_data[n++] = &g->tensors[i];
    qsort(by_data, n, sizeof *by_data, compare_tensor_data);
    vt_status st = VT_OK;
    for (size_t i = 1; i < n && st == VT_OK; i++) {
        const vt_gguf_tensor *a = by_data[i - 1], *b = by_data[i];
        if (a->file_offset + a->n_bytes > b->file_offset) {
            const vt_gguf_tensor *later = a->index > b->index ? a : b, *earlier = later == a ? b : a;
            char esc[100];
            vt_gguf_escape(earlier->name, earlier->name_len, esc, sizeof esc);
            point_at(p, later);
            st = fail(p, offset_field(later),
                      "data overlaps tensor[%zu] '%s': [%llu, %llu) and [%llu, %llu) in the data section",
                      earlier->index, esc, (unsigned long long)later->offset,
                      (unsigned long long)(later->offset + later->n_bytes), (unsigned long long)earlier->offset,
                      (unsigned long long)(earlier->offset + earlier->n_bytes));
        }
    }
    free(by_data);
    return st;
}

/* Copy keys and names out of the mapping, NUL-terminated, into one block. */
static vt_status copy_names(vt_gguf *g)
{
    uint64_t total = 1;
    for (size_t i = 0; i < g->n_kv; i++)
        total += g->kvs[i].pub.key_len + 1;
    for (size_t i = 0; i < g->n_tensors; i++)
        total += g->tensors[i].name_len + 1;
    if (total > SIZE_MAX || !(g->names = malloc((size_t)total)))
        return vt_set_error(VT_E_NO_MEMORY, "GGUF file '%s': out of memory for %llu bytes of names", g->name,
                            (unsigned long long)total);
    char *at = g->names;
    for (size_t i = 0; i < g->n_kv; i++) {
        gguf_kv_entry *e = &g->kvs[i];
        memcpy(at, e->key_bytes, (size_t)e->pub.key_len);
        at[e->pub.key_len] = '\0';
        e->pub.key = at;
        at += e->pub.key_len + 1;
    }
    for (size_t i = 0; i < g->n_tensors; i++) {
        vt_gguf_tensor *t = &g->tensors[i];
        memcpy(at, t->name, t->name_len);
        at[t->name_len] = '\0';
        t->name = at;
        at += t->name_len + 1;
    }
    return VT_OK;
}

vt_status gguf_parse(vt_gguf *g)
{
    parser p = {.g = g};
    g->alignment = VT_GGUF_DEFAULT_ALIGNMENT;
    vt_status st = parse_header(&p);
    for (size_t i = 0; st == VT_OK && i < g->n_kv; i++)
        st = parse_kv(&p, i);
    if (st == VT_OK)
        st = index_keys(&p);
    uint64_t running = 0;
    for (size_t i = 0; st == VT_OK && i < g->n_tensors; i++)
        st = parse_tensor_info(&p, i, &running);
    if (st == VT_OK)
        st = index_names(&p);
    if (st != VT_OK)
        return st;
    g->data_size = running;
    /* The data section starts at the next multiple of the alignment; it may
     * lie past the end of a file whose tensors are all empty. */
    uint64_t align = g->alignment, pad = (align - p.pos % align) % align;
    p.item = NULL;
    if (pad > UINT64_MAX - p.pos)
        return fail(&p, p.pos, "data section offset overflows 64 bits");
    g->data_offset = p.pos + pad;
    if ((st = place_data(&p)) != VT_OK)
        return st;
    return copy_names(g);
}

void gguf_release(vt_gguf *g)
{
    free(g->kvs);
    free(g->tensors);
    free(g->str_offsets);
    free(g->names);
    free(g->kv_by_key);
    free(g->tensor_by_name);
    g->kvs = NULL;
    g->tensors = NULL;
    g->str_offsets = NULL;
    g->names = NULL;
    g->kv_by_key = NULL;
    g->tensor_by_name = NULL;
    g->n_kv = g->n_tensors = g->n_str_offsets = 0;
}
