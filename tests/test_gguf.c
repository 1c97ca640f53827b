/* test_gguf.c - the GGUF loader: a writer -> parser round trip of every KV
 * type and every tensor type, v2/v3, zero-size tensors, alignment 1, and
 * one test per class of malformed input. Malformed files are valid images
 * from the writer with bytes patched; each must be refused with
 * VT_E_BAD_FILE and a message naming the byte offset and the field. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

/* ---- images and patches ---- */

typedef struct image {
    uint8_t *p;
    size_t n;
} image;

#define TRY(call)                                                                                                      \
    do {                                                                                                               \
        vt_status st_ = (call);                                                                                        \
        ck_assert_msg(st_ == VT_OK, "%s: %s: %s", #call, vt_status_name(st_), vt_last_error());                        \
    } while (0)

static vt_gguf_writer *new_writer(void)
{
    vt_gguf_writer *w = NULL;
    TRY(vt_gguf_writer_create(&w));
    return w;
}

/* The writer's image; the writer is freed. */
static image finish(vt_gguf_writer *w)
{
    image im;
    void *p;
    TRY(vt_gguf_writer_write_memory(w, &p, &im.n));
    uint64_t size;
    TRY(vt_gguf_writer_size(w, &size));
    ck_assert_uint_eq(size, im.n);
    vt_gguf_writer_destroy(w);
    im.p = p;
    return im;
}

static vt_gguf *open_ok(const image *im)
{
    vt_gguf *g = NULL;
    TRY(vt_gguf_open_memory(im->p, im->n, "t.gguf", &g));
    ck_assert_ptr_nonnull(g);
    return g;
}

static void put_u32(image *im, uint64_t off, uint32_t v)
{
    ck_assert_uint_le(off + 4, im->n);
    for (int i = 0; i < 4; i++)
        im->p[off + (uint64_t)i] = (uint8_t)(v >> (8 * i));
}

static void put_u64(image *im, uint64_t off, uint64_t v)
{
    ck_assert_uint_le(off + 8, im->n);
    for (int i = 0; i < 8; i++)
        im->p[off + (uint64_t)i] = (uint8_t)(v >> (8 * i));
}

/* Where the fields of a KV and a tensor info lie in a valid image. */
typedef struct kv_pos {
    uint64_t offset;    /* key length */
    uint64_t key;       /* key bytes */
    uint64_t type;      /* value type */
    uint64_t elem_type; /* arrays */
    uint64_t count;     /* arrays */
    uint64_t value;     /* value / element 0 */
} kv_pos;

typedef struct tensor_pos {
    uint64_t offset; /* name length */
    uint64_t name;
    uint64_t n_dims;
    uint64_t ne; /* ne[0] */
    uint64_t type;
    uint64_t data_offset; /* the offset field */
    uint64_t file_offset; /* where its data is */
    uint64_t n_bytes;
} tensor_pos;

static kv_pos kv_at(const image *im, const char *key)
{
    vt_gguf *g = open_ok(im);
    const vt_gguf_kv *kv;
    TRY(vt_gguf_find_kv(g, key, &kv));
    kv_pos p = {kv->offset, kv->offset + 8, kv->offset + 8 + kv->key_len, 0, 0, kv->value_offset};
    if (kv->type == VT_GGUF_ARRAY) {
        p.elem_type = p.type + 4;
        p.count = p.type + 8;
    }
    vt_gguf_close(g);
    return p;
}

static tensor_pos tensor_at(const image *im, const char *name)
{
    vt_gguf *g = open_ok(im);
    const vt_gguf_tensor *t;
    TRY(vt_gguf_find_tensor(g, name, &t));
    tensor_pos p;
    p.offset = t->info_offset;
    p.name = p.offset + 8;
    p.n_dims = p.name + t->name_len;
    p.ne = p.n_dims + 4;
    p.type = p.ne + 8ull * t->n_dims;
    p.data_offset = p.type + 4;
    p.file_offset = t->file_offset;
    p.n_bytes = t->n_bytes;
    vt_gguf_close(g);
    return p;
}

/* Open must refuse im with VT_E_BAD_FILE, a message naming the offset and
 * containing each of the words (NULL-terminated list). */
static void expect_bad_words(const image *im, uint64_t offset, const char *const *words, const char *what)
{
    vt_gguf *g = (vt_gguf *)im; /* must be reset to NULL */
    vt_clear_error();
    vt_status st = vt_gguf_open_memory(im->p, im->n, "t.gguf", &g);
    ck_assert_msg(st == VT_E_BAD_FILE, "%s: got %s (%s), want VT_E_BAD_FILE", what, vt_status_name(st),
                  vt_last_error());
    ck_assert_msg(g == NULL, "%s: handle not reset on failure", what);
    char want[96];
    snprintf(want, sizeof want, "bad GGUF file 't.gguf' at offset %llu: ", (unsigned long long)offset);
    const char *msg = vt_last_error();
    ck_assert_msg(strncmp(msg, want, strlen(want)) == 0, "%s: message '%s' does not start with '%s'", what, msg, want);
    for (size_t i = 0; words[i]; i++)
        ck_assert_msg(strstr(msg, words[i]) != NULL, "%s: '%s' not in '%s'", what, words[i], msg);
}

#define expect_bad(im, offset, ...)                                                                                    \
    do {                                                                                                               \
        const char *const words_[] = {__VA_ARGS__, NULL};                                                              \
        expect_bad_words((im), (offset), words_, #__VA_ARGS__);                                                        \
    } while (0)

static image copy_image(const image *im)
{
    image c = {malloc(im->n ? im->n : 1), im->n};
    ck_assert_ptr_nonnull(c.p);
    memcpy(c.p, im->p, im->n);
    return c;
}

/* ---- fixtures ---- */

static uint8_t random_bytes[16384];

static void fill_random(void)
{
    vt_rng r;
    vt_rng_init(&r, 41);
    for (size_t i = 0; i < sizeof random_bytes; i++)
        random_bytes[i] = (uint8_t)vt_rng_next(&r);
}

static void add_tensor(vt_gguf_writer *w, const char *name, int type, uint32_t n_dims, const int64_t *ne)
{
    int64_t shape[4];
    for (uint32_t d = 0; d < n_dims; d++)
        shape[n_dims - 1 - d] = ne[d];
    uint64_t bytes = 0;
    ck_assert_msg(vt_dtype_tensor_bytes(type, n_dims, shape, &bytes), "fixture tensor %s", name);
    ck_assert_uint_le(bytes, sizeof random_bytes);
    TRY(vt_gguf_writer_add_tensor(w, name, type, n_dims, ne, random_bytes, bytes));
}

static void add_tensor2(vt_gguf_writer *w, const char *name, int type, int64_t ne0, int64_t ne1)
{
    int64_t ne[2] = {ne0, ne1};
    add_tensor(w, name, type, 2, ne);
}

/* A file with a field of every kind, after a 400-byte string: cuts after
 * that string leave enough bytes for the header's count bounds, so each
 * field's own truncation check is what fires. */
static image rich_image(void)
{
    vt_gguf_writer *w = new_writer();
    char pad[401];
    memset(pad, 'x', 400);
    pad[400] = '\0';
    TRY(vt_gguf_writer_add_string(w, "pad", pad));
    TRY(vt_gguf_writer_add_u32(w, "k.u32", 7));
    TRY(vt_gguf_writer_add_string(w, "k.str", "hello"));
    int32_t arr[3] = {1, 2, 3};
    TRY(vt_gguf_writer_add_array(w, "k.arr", VT_GGUF_I32, arr, 3));
    /* A long element 0, so that cuts inside element 1 leave enough bytes
     * for the array's count bound (8 bytes per element). */
    vt_gguf_str strs[3] = {{"abcdefghijklmnopqrstuvwxyz0123", 30}, {"cd", 2}, {"ef", 2}};
    TRY(vt_gguf_writer_add_array(w, "k.sarr", VT_GGUF_STRING, strs, 3));
    add_tensor2(w, "t.a", VT_F32, 4, 2);
    add_tensor2(w, "t.b", VT_Q8_0, 32, 1);
    return finish(w);
}

/* Two KVs and two f32 tensors: the base of most patch tests. */
static image small_image(void)
{
    vt_gguf_writer *w = new_writer();
    TRY(vt_gguf_writer_add_string(w, "general.architecture", "llama"));
    TRY(vt_gguf_writer_add_u32(w, "k.b", 5));
    add_tensor2(w, "w.a", VT_F32, 8, 2);
    add_tensor2(w, "w.b", VT_F32, 8, 2);
    return finish(w);
}

/* ---- valid files ---- */

static const vt_gguf_type all_scalar_types[] = {VT_GGUF_U8,  VT_GGUF_I8,  VT_GGUF_U16, VT_GGUF_I16,
                                                VT_GGUF_U32, VT_GGUF_I32, VT_GGUF_F32, VT_GGUF_BOOL,
                                                VT_GGUF_U64, VT_GGUF_I64, VT_GGUF_F64, VT_GGUF_STRING};
#define N_SCALAR_TYPES (sizeof all_scalar_types / sizeof all_scalar_types[0])

/* A value of type t that depends on seed, within the type's range. */
static vt_gguf_value sample_value(vt_gguf_type t, uint64_t seed)
{
    static char text[64][24];
    vt_gguf_value v;
    memset(&v, 0, sizeof v);
    v.type = t;
    switch (t) {
    case VT_GGUF_U8: v.as.u = 200 + seed % 50; break;
    case VT_GGUF_I8: v.as.i = -100 - (int64_t)(seed % 20); break;
    case VT_GGUF_U16: v.as.u = 60000 + seed; break;
    case VT_GGUF_I16: v.as.i = -30000 - (int64_t)seed; break;
    case VT_GGUF_U32: v.as.u = 4000000000u + seed; break;
    case VT_GGUF_I32: v.as.i = -2000000000 - (int64_t)seed; break;
    case VT_GGUF_F32: v.as.f = (double)(0.1f * (float)(seed + 1)); break;
    case VT_GGUF_BOOL: v.as.b = seed % 2 == 0; break;
    case VT_GGUF_U64: v.as.u = 18000000000000000000ull + seed; break;
    case VT_GGUF_I64: v.as.i = -9000000000000000000ll - (int64_t)seed; break;
    case VT_GGUF_F64: v.as.f = 3.141592653589793 * (double)(seed + 1); break;
    case VT_GGUF_STRING:
        snprintf(text[seed % 64], sizeof text[0], "s%llu\x01\xff", (unsigned long long)seed);
        v.as.str.data = text[seed % 64];
        v.as.str.len = strlen(text[seed % 64]) + (seed % 3 == 0 ? 1 : 0); /* some with a NUL byte */
        break;
    default: break;
    }
    return v;
}

static void assert_value_eq(const vt_gguf_value *got, const vt_gguf_value *want, const char *what)
{
    ck_assert_msg(got->type == want->type, "%s: type %d, want %d", what, got->type, want->type);
    switch (want->type) {
    case VT_GGUF_U8:
    case VT_GGUF_U16:
    case VT_GGUF_U32:
    case VT_GGUF_U64: ck_assert_msg(got->as.u == want->as.u, "%s: %llu", what, (unsigned long long)got->as.u); break;
    case VT_GGUF_I8:
    case VT_GGUF_I16:
    case VT_GGUF_I32:
    case VT_GGUF_I64: ck_assert_msg(got->as.i == want->as.i, "%s: %lld", what, (long long)got->as.i); break;
    case VT_GGUF_F32:
    case VT_GGUF_F64: ck_assert_msg(got->as.f == want->as.f, "%s: %.17g vs %.17g", what, got->as.f, want->as.f); break;
    case VT_GGUF_BOOL: ck_assert_msg(got->as.b == want->as.b, "%s", what); break;
    case VT_GGUF_STRING:
        ck_assert_msg(got->as.str.len == want->as.str.len &&
                          memcmp(got->as.str.data, want->as.str.data, (size_t)want->as.str.len) == 0,
                      "%s: string differs", what);
        break;
    default: ck_abort_msg("%s: bad type", what);
    }
}

/* Host array of n values of type t (the writer's element layout). */
static void *host_array(vt_gguf_type t, const vt_gguf_value *v, size_t n)
{
    size_t size = t == VT_GGUF_STRING ? sizeof(vt_gguf_str) : t == VT_GGUF_BOOL ? sizeof(bool) : 8;
    uint8_t *a = calloc(n ? n : 1, size);
    ck_assert_ptr_nonnull(a);
    for (size_t i = 0; i < n; i++) {
        switch (t) {
        case VT_GGUF_U8: ((uint8_t *)a)[i] = (uint8_t)v[i].as.u; break;
        case VT_GGUF_I8: ((int8_t *)a)[i] = (int8_t)v[i].as.i; break;
        case VT_GGUF_U16: ((uint16_t *)a)[i] = (uint16_t)v[i].as.u; break;
        case VT_GGUF_I16: ((int16_t *)a)[i] = (int16_t)v[i].as.i; break;
        case VT_GGUF_U32: ((uint32_t *)a)[i] = (uint32_t)v[i].as.u; break;
        case VT_GGUF_I32: ((int32_t *)a)[i] = (int32_t)v[i].as.i; break;
        case VT_GGUF_F32: ((float *)a)[i] = (float)v[i].as.f; break;
        case VT_GGUF_BOOL: ((bool *)a)[i] = v[i].as.b; break;
        case VT_GGUF_U64: ((uint64_t *)a)[i] = v[i].as.u; break;
        case VT_GGUF_I64: ((int64_t *)a)[i] = v[i].as.i; break;
        case VT_GGUF_F64: ((double *)a)[i] = v[i].as.f; break;
        case VT_GGUF_STRING: ((vt_gguf_str *)a)[i] = v[i].as.str; break;
        default: break;
        }
    }
    return a;
}

#define ARRAY_LEN 37

/* Every KV of the round-trip file, in order, and every tensor. */
typedef struct rt_tensor {
    char name[32];
    int type;
    uint32_t n_dims;
    int64_t ne[4];
    uint64_t n_bytes;
} rt_tensor;

static rt_tensor rt_tensors[64];
static size_t n_rt_tensors;

static void rt_add(vt_gguf_writer *w, const char *name, int type, uint32_t n_dims, const int64_t *ne)
{
    rt_tensor *t = &rt_tensors[n_rt_tensors++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->type = type;
    t->n_dims = n_dims;
    for (uint32_t d = 0; d < 4; d++)
        t->ne[d] = d < n_dims ? ne[d] : 1;
    int64_t shape[4];
    for (uint32_t d = 0; d < n_dims; d++)
        shape[n_dims - 1 - d] = ne[d];
    ck_assert(vt_dtype_tensor_bytes(type, n_dims, shape, &t->n_bytes));
    /* Different bytes per tensor: start at a different place. */
    size_t start = (n_rt_tensors * 97) % 4096;
    ck_assert_uint_le(start + t->n_bytes, sizeof random_bytes);
    TRY(vt_gguf_writer_add_tensor(w, name, type, n_dims, ne, random_bytes + start, t->n_bytes));
}

static image roundtrip_image(uint32_t alignment)
{
    vt_gguf_writer *w = new_writer();
    TRY(vt_gguf_writer_set_alignment(w, alignment));
    for (size_t i = 0; i < N_SCALAR_TYPES; i++) {
        char key[64];
        snprintf(key, sizeof key, "scalar.%s", vt_gguf_type_name(all_scalar_types[i]));
        vt_gguf_value v = sample_value(all_scalar_types[i], i);
        TRY(vt_gguf_writer_add_value(w, key, &v));
    }
    for (size_t i = 0; i < N_SCALAR_TYPES; i++) {
        vt_gguf_type t = all_scalar_types[i];
        vt_gguf_value v[ARRAY_LEN];
        for (size_t j = 0; j < ARRAY_LEN; j++)
            v[j] = sample_value(t, j);
        void *a = host_array(t, v, ARRAY_LEN);
        char key[64];
        snprintf(key, sizeof key, "array.%s", vt_gguf_type_name(t));
        TRY(vt_gguf_writer_add_array(w, key, t, a, ARRAY_LEN));
        snprintf(key, sizeof key, "empty.%s", vt_gguf_type_name(t));
        TRY(vt_gguf_writer_add_array(w, key, t, NULL, 0));
        free(a);
    }
    n_rt_tensors = 0;
    for (int t = 0; t < VT_DTYPE_COUNT; t++) {
        const vt_dtype_info *info = vt_dtype_get(t);
        if (!info)
            continue;
        char name[32];
        snprintf(name, sizeof name, "t.%s", info->name);
        int64_t ne[2] = {2 * (int64_t)info->block_elems, 3};
        rt_add(w, name, t, 2, ne);
    }
    int64_t ne4[4] = {2, 3, 4, 5};
    rt_add(w, "four.dims", VT_F16, 4, ne4);
    rt_add(w, "scalar", VT_F32, 0, NULL);
    int64_t ne3[3] = {7, 1, 2};
    rt_add(w, "odd.bytes", VT_I8, 3, ne3);
    return finish(w);
}

/* Compare a parsed round-trip file with what was written. */
static void check_roundtrip(const vt_gguf *g, uint32_t alignment)
{
    ck_assert_uint_eq(vt_gguf_version(g), 3);
    ck_assert_uint_eq(vt_gguf_alignment(g), alignment);
    ck_assert_uint_eq(vt_gguf_data_offset(g) % alignment, 0);
    /* general.alignment, the scalars, then an array and an empty array per type. */
    ck_assert_uint_eq(vt_gguf_kv_count(g), 1 + 3 * N_SCALAR_TYPES);
    uint32_t a;
    TRY(vt_gguf_get_u32(g, VT_GGUF_KEY_ALIGNMENT, &a));
    ck_assert_uint_eq(a, alignment);
    for (size_t i = 0; i < N_SCALAR_TYPES; i++) {
        const vt_gguf_kv *kv = vt_gguf_kv_at(g, 1 + i);
        char key[64];
        snprintf(key, sizeof key, "scalar.%s", vt_gguf_type_name(all_scalar_types[i]));
        ck_assert_str_eq(kv->key, key);
        ck_assert_uint_eq(kv->key_len, strlen(key));
        ck_assert_int_eq(kv->type, all_scalar_types[i]);
        ck_assert_uint_eq(kv->count, 1);
        vt_gguf_value got, want = sample_value(all_scalar_types[i], i);
        TRY(vt_gguf_kv_value(g, kv->index, 0, &got));
        if (want.type == VT_GGUF_F32)
            want.as.f = (double)(float)want.as.f;
        assert_value_eq(&got, &want, key);
        ck_assert_int_eq(vt_gguf_kv_value(g, kv->index, 1, &got), VT_E_INVALID_ARG);
    }
    for (size_t i = 0; i < N_SCALAR_TYPES; i++) {
        vt_gguf_type t = all_scalar_types[i];
        const vt_gguf_kv *kv = vt_gguf_kv_at(g, 1 + N_SCALAR_TYPES + 2 * i);
        char key[64];
        snprintf(key, sizeof key, "array.%s", vt_gguf_type_name(t));
        ck_assert_str_eq(kv->key, key);
        ck_assert_int_eq(kv->type, VT_GGUF_ARRAY);
        ck_assert_int_eq(kv->elem_type, t);
        ck_assert_uint_eq(kv->count, ARRAY_LEN);
        const vt_gguf_kv *arr;
        TRY(vt_gguf_get_array(g, key, t, &arr));
        ck_assert_ptr_eq(arr, kv);
        for (size_t j = 0; j < ARRAY_LEN; j++) {
            vt_gguf_value got, want = sample_value(t, j);
            if (t == VT_GGUF_F32)
                want.as.f = (double)(float)want.as.f;
            TRY(vt_gguf_kv_value(g, kv->index, j, &got));
            assert_value_eq(&got, &want, key);
        }
        const vt_gguf_kv *empty = vt_gguf_kv_at(g, kv->index + 1);
        ck_assert_int_eq(empty->type, VT_GGUF_ARRAY);
        ck_assert_int_eq(empty->elem_type, t);
        ck_assert_uint_eq(empty->count, 0);
        vt_gguf_value v;
        ck_assert_int_eq(vt_gguf_kv_value(g, empty->index, 0, &v), VT_E_INVALID_ARG);
    }
    ck_assert_uint_eq(vt_gguf_tensor_count(g), n_rt_tensors);
    uint64_t data_size = 0;
    for (size_t i = 0; i < n_rt_tensors; i++) {
        const rt_tensor *want = &rt_tensors[i];
        const vt_gguf_tensor *t = vt_gguf_tensor_at(g, i), *found;
        ck_assert_uint_eq(t->struct_size, sizeof *t);
        ck_assert_uint_eq(t->index, i);
        ck_assert_str_eq(t->name, want->name);
        TRY(vt_gguf_find_tensor(g, want->name, &found));
        ck_assert_ptr_eq(found, t);
        ck_assert_int_eq(t->type, want->type);
        ck_assert_uint_eq(t->n_dims, want->n_dims);
        int64_t elements = 1;
        for (uint32_t d = 0; d < 4; d++) {
            ck_assert_int_eq(t->ne[d], want->ne[d]);
            elements *= want->ne[d];
        }
        for (uint32_t d = 0; d < t->n_dims; d++)
            ck_assert_int_eq(t->shape[d], want->ne[t->n_dims - 1 - d]);
        ck_assert_int_eq(t->n_elements, elements);
        ck_assert_uint_eq(t->n_bytes, want->n_bytes);
        ck_assert_uint_eq(t->offset % alignment, 0);
        ck_assert_uint_eq(t->file_offset, vt_gguf_data_offset(g) + t->offset);
        ck_assert_ptr_eq(t->data, (const uint8_t *)vt_gguf_bytes(g) + t->file_offset);
        size_t start = ((i + 1) * 97) % 4096;
        ck_assert_msg(memcmp(t->data, random_bytes + start, (size_t)t->n_bytes) == 0, "tensor %s bytes differ",
                      t->name);
        data_size += (t->n_bytes + alignment - 1) / alignment * alignment;
    }
    ck_assert_uint_eq(vt_gguf_data_size(g), data_size);
    ck_assert_ptr_null(vt_gguf_tensor_at(g, n_rt_tensors));
    ck_assert_ptr_null(vt_gguf_kv_at(g, vt_gguf_kv_count(g)));
}

START_TEST(roundtrip_every_kv_and_tensor_byte)
{
    image im = roundtrip_image(64);
    vt_gguf *g = open_ok(&im);
    check_roundtrip(g, 64);
    vt_gguf_close(g);

    /* The same through a file and the mmap path. */
    char *dir = vt_test_mkdtemp();
    char path[1024];
    snprintf(path, sizeof path, "%s/rt.gguf", dir);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(im.p, 1, im.n, f), im.n);
    fclose(f);
    TRY(vt_gguf_open(path, &g));
    ck_assert_str_eq(vt_gguf_name(g), path);
    ck_assert_uint_eq(vt_gguf_file_size(g), im.n);
    check_roundtrip(g, 64);
    vt_gguf_close(g);
    vt_test_rmtree(dir);
    free(dir);
    free(im.p);
}
END_TEST

START_TEST(writer_writes_files)
{
    char *dir = vt_test_mkdtemp();
    char path[1024];
    snprintf(path, sizeof path, "%s/w.gguf", dir);
    vt_gguf_writer *w = new_writer();
    TRY(vt_gguf_writer_add_string(w, "general.architecture", "llama"));
    add_tensor2(w, "w", VT_Q4_K, 256, 2);
    TRY(vt_gguf_writer_write_file(w, path));
    void *mem;
    size_t n;
    TRY(vt_gguf_writer_write_memory(w, &mem, &n));
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    ck_assert_uint_eq((uint64_t)sb.st_size, n);
    FILE *f = fopen(path, "rb");
    uint8_t *back = malloc(n);
    ck_assert_uint_eq(fread(back, 1, n, f), n);
    fclose(f);
    ck_assert(memcmp(back, mem, n) == 0);
    vt_gguf *g;
    TRY(vt_gguf_open(path, &g));
    vt_gguf_str s;
    TRY(vt_gguf_get_string(g, "general.architecture", &s));
    ck_assert(s.len == 5 && memcmp(s.data, "llama", 5) == 0);
    vt_gguf_close(g);
    /* A path that cannot be created is VT_E_IO and leaves nothing behind. */
    char bad[1100];
    snprintf(bad, sizeof bad, "%s/no/such/dir.gguf", dir);
    ck_assert_int_eq(vt_gguf_writer_write_file(w, bad), VT_E_IO);
    ck_assert_ptr_nonnull(strstr(vt_last_error(), "no/such/dir.gguf"));
    vt_gguf_writer_destroy(w);
    free(back);
    free(mem);
    vt_test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(versions_2_and_3_are_read)
{
    for (uint32_t v = 2; v <= 3; v++) {
        vt_gguf_writer *w = new_writer();
        TRY(vt_gguf_writer_set_version(w, v));
        TRY(vt_gguf_writer_add_u32(w, "k", v));
        add_tensor2(w, "w", VT_F16, 4, 4);
        image im = finish(w);
        ck_assert_uint_eq(im.p[4], v);
        vt_gguf *g = open_ok(&im);
        ck_assert_uint_eq(vt_gguf_version(g), v);
        uint32_t k;
        TRY(vt_gguf_get_u32(g, "k", &k));
        ck_assert_uint_eq(k, v);
        ck_assert_uint_eq(vt_gguf_tensor_at(g, 0)->n_bytes, 32);
        vt_gguf_close(g);
        free(im.p);
    }
    vt_gguf_writer *w = new_writer();
    ck_assert_int_eq(vt_gguf_writer_set_version(w, 1), VT_E_INVALID_ARG);
    ck_assert_int_eq(vt_gguf_writer_set_version(w, 4), VT_E_INVALID_ARG);
    vt_gguf_writer_destroy(w);
}
END_TEST

START_TEST(zero_size_tensors_are_valid)
{
    vt_gguf_writer *w = new_writer();
    add_tensor2(w, "empty.f32", VT_F32, 0, 4);
    add_tensor2(w, "empty.q4_0", VT_Q4_0, 32, 0);
    add_tensor2(w, "full", VT_F32, 4, 1);
    int64_t ne[1] = {0};
    add_tensor(w, "empty.1d", VT_Q4_K, 1, ne);
    image im = finish(w);
    vt_gguf *g = open_ok(&im);
    const vt_gguf_tensor *t;
    TRY(vt_gguf_find_tensor(g, "empty.f32", &t));
    ck_assert_int_eq(t->n_elements, 0);
    ck_assert_uint_eq(t->n_bytes, 0);
    ck_assert_ptr_null(t->data);
    TRY(vt_gguf_find_tensor(g, "empty.q4_0", &t));
    ck_assert_uint_eq(t->n_bytes, 0);
    TRY(vt_gguf_find_tensor(g, "full", &t));
    ck_assert_uint_eq(t->n_bytes, 16);
    ck_assert_ptr_nonnull(t->data);
    vt_gguf_close(g);
    free(im.p);

    /* Only empty tensors and no data section at all in the file: valid. */
    w = new_writer();
    add_tensor2(w, "e", VT_F32, 0, 0);
    im = finish(w);
    tensor_pos tp = tensor_at(&im, "e");
    im.n = tp.data_offset + 8; /* cut right after the infos, before the padding */
    g = open_ok(&im);
    ck_assert_uint_ge(vt_gguf_data_offset(g), im.n);
    ck_assert_uint_eq(vt_gguf_tensor_at(g, 0)->n_bytes, 0);
    vt_gguf_close(g);
    free(im.p);
}
END_TEST

START_TEST(alignment_1_is_valid)
{
    vt_gguf_writer *w = new_writer();
    TRY(vt_gguf_writer_set_alignment(w, 1));
    int64_t n3[1] = {3}, n32[1] = {32}, n1[1] = {1};
    add_tensor(w, "a", VT_I8, 1, n3);
    add_tensor(w, "b", VT_Q8_0, 1, n32);
    add_tensor(w, "c", VT_F16, 1, n1);
    image im = finish(w);
    vt_gguf *g = open_ok(&im);
    ck_assert_uint_eq(vt_gguf_alignment(g), 1);
    /* Packed back to back: 3, 34 and 2 bytes. */
    ck_assert_uint_eq(vt_gguf_tensor_at(g, 0)->offset, 0);
    ck_assert_uint_eq(vt_gguf_tensor_at(g, 1)->offset, 3);
    ck_assert_uint_eq(vt_gguf_tensor_at(g, 2)->offset, 37);
    ck_assert_uint_eq(vt_gguf_data_size(g), 39);
    ck_assert_uint_eq(vt_gguf_file_size(g), vt_gguf_data_offset(g) + 39);
    ck_assert(memcmp(vt_gguf_tensor_at(g, 1)->data, random_bytes, 34) == 0);
    vt_gguf_close(g);
    free(im.p);
}
END_TEST

START_TEST(empty_file_is_valid)
{
    image im = finish(new_writer());
    ck_assert_uint_eq(im.n, 32); /* header padded to 32 */
    vt_gguf *g = open_ok(&im);
    ck_assert_uint_eq(vt_gguf_kv_count(g), 0);
    ck_assert_uint_eq(vt_gguf_tensor_count(g), 0);
    ck_assert_uint_eq(vt_gguf_alignment(g), VT_GGUF_DEFAULT_ALIGNMENT);
    ck_assert_uint_eq(vt_gguf_data_offset(g), 32);
    const vt_gguf_kv *kv;
    ck_assert_int_eq(vt_gguf_find_kv(g, "x", &kv), VT_E_NOT_FOUND);
    ck_assert_ptr_null(kv);
    const vt_gguf_tensor *t;
    ck_assert_int_eq(vt_gguf_find_tensor(g, "x", &t), VT_E_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(vt_last_error(), "no tensor 'x'"));
    vt_gguf_close(g);
    im.n = 24; /* no padding at all */
    g = open_ok(&im);
    vt_gguf_close(g);
    free(im.p);
}
END_TEST

START_TEST(typed_getters_check_types)
{
    vt_gguf_writer *w = new_writer();
    vt_gguf_value v = {.type = VT_GGUF_U8, .as.u = 9};
    TRY(vt_gguf_writer_add_value(w, "u8", &v));
    v = (vt_gguf_value){.type = VT_GGUF_I16, .as.i = -5};
    TRY(vt_gguf_writer_add_value(w, "i16", &v));
    TRY(vt_gguf_writer_add_u32(w, "u32", 70000));
    TRY(vt_gguf_writer_add_u64(w, "u64", 1ull << 40));
    TRY(vt_gguf_writer_add_i32(w, "i32", -7));
    TRY(vt_gguf_writer_add_f32(w, "f32", 0.5f));
    v = (vt_gguf_value){.type = VT_GGUF_F64, .as.f = 0.25};
    TRY(vt_gguf_writer_add_value(w, "f64", &v));
    TRY(vt_gguf_writer_add_bool(w, "bool", true));
    TRY(vt_gguf_writer_add_string(w, "str", "text"));
    uint32_t arr[2] = {1, 2};
    TRY(vt_gguf_writer_add_array(w, "arr", VT_GGUF_U32, arr, 2));
    image im = finish(w);
    vt_gguf *g = open_ok(&im);
    uint32_t u32;
    uint64_t u64;
    int64_t i64;
    float f32;
    double f64;
    bool b;
    vt_gguf_str s;
    const vt_gguf_kv *kv;
    /* Lossless conversions are accepted. */
    TRY(vt_gguf_get_u32(g, "u8", &u32));
    ck_assert_uint_eq(u32, 9);
    TRY(vt_gguf_get_u32(g, "u32", &u32));
    ck_assert_uint_eq(u32, 70000);
    TRY(vt_gguf_get_u64(g, "u32", &u64));
    ck_assert_uint_eq(u64, 70000);
    TRY(vt_gguf_get_u64(g, "u64", &u64));
    ck_assert_uint_eq(u64, 1ull << 40);
    TRY(vt_gguf_get_i64(g, "i16", &i64));
    ck_assert_int_eq(i64, -5);
    TRY(vt_gguf_get_i64(g, "u32", &i64));
    ck_assert_int_eq(i64, 70000);
    TRY(vt_gguf_get_i64(g, "i32", &i64));
    ck_assert_int_eq(i64, -7);
    TRY(vt_gguf_get_f32(g, "f32", &f32));
    ck_assert(f32 == 0.5f);
    TRY(vt_gguf_get_f64(g, "f32", &f64));
    ck_assert(f64 == 0.5);
    TRY(vt_gguf_get_f64(g, "f64", &f64));
    ck_assert(f64 == 0.25);
    TRY(vt_gguf_get_bool(g, "bool", &b));
    ck_assert(b);
    TRY(vt_gguf_get_string(g, "str", &s));
    ck_assert(s.len == 4 && memcmp(s.data, "text", 4) == 0);
    TRY(vt_gguf_get_array(g, "arr", VT_GGUF_U32, &kv));
    TRY(vt_gguf_get_array(g, "arr", VT_GGUF_ARRAY, &kv));
    ck_assert_uint_eq(kv->count, 2);
    /* Lossy or wrong types are refused, naming the key, offset and types. */
    kv_pos p = kv_at(&im, "u64");
    ck_assert_int_eq(vt_gguf_get_u32(g, "u64", &u32), VT_E_BAD_FILE);
    char want[128];
    snprintf(want, sizeof want, "at offset %llu: kv[3] 'u64' is a u64 value, not a u32", (unsigned long long)p.offset);
    ck_assert_msg(strstr(vt_last_error(), want), "%s", vt_last_error());
    ck_assert_int_eq(vt_gguf_get_u64(g, "i32", &u64), VT_E_BAD_FILE);
    ck_assert_int_eq(vt_gguf_get_i64(g, "u64", &i64), VT_E_BAD_FILE);
    ck_assert_int_eq(vt_gguf_get_f32(g, "f64", &f32), VT_E_BAD_FILE);
    ck_assert_int_eq(vt_gguf_get_f64(g, "i32", &f64), VT_E_BAD_FILE);
    ck_assert_int_eq(vt_gguf_get_bool(g, "u8", &b), VT_E_BAD_FILE);
    ck_assert_int_eq(vt_gguf_get_string(g, "arr", &s), VT_E_BAD_FILE);
    ck_assert_ptr_nonnull(strstr(vt_last_error(), "is an array of u32, not a string"));
    ck_assert_int_eq(vt_gguf_get_array(g, "arr", VT_GGUF_STRING, &kv), VT_E_BAD_FILE);
    ck_assert_ptr_null(kv);
    ck_assert_int_eq(vt_gguf_get_array(g, "str", VT_GGUF_ARRAY, &kv), VT_E_BAD_FILE);
    ck_assert_int_eq(vt_gguf_get_u32(g, "missing", &u32), VT_E_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(vt_last_error(), "has no key 'missing'"));
    ck_assert_int_eq(vt_gguf_get_array(g, "missing", VT_GGUF_U8, &kv), VT_E_NOT_FOUND);
    vt_gguf_close(g);
    free(im.p);
}
END_TEST

START_TEST(writer_refuses_invalid_input)
{
    vt_gguf_writer *w = new_writer();
    TRY(vt_gguf_writer_add_u32(w, "k", 1));
    ck_assert_int_eq(vt_gguf_writer_add_u32(w, "k", 2), VT_E_INVALID_ARG);
    ck_assert_int_eq(vt_gguf_writer_add_u32(w, "", 2), VT_E_INVALID_ARG);
    ck_assert_int_eq(vt_gguf_writer_add_string(w, "s", NULL), VT_E_INVALID_ARG);
    ck_assert_int_eq(vt_gguf_writer_add_array(w, "nested", VT_GGUF_ARRAY, NULL, 0), VT_E_INVALID_ARG);
    ck_assert_int_eq(vt_gguf_writer_add_array(w, "bad", (vt_gguf_type)13, NULL, 0), VT_E_INVALID_ARG);
    vt_gguf_value v = {.type = VT_GGUF_ARRAY};
    ck_assert_int_eq(vt_gguf_writer_add_value(w, "arr", &v), VT_E_INVALID_ARG);
    ck_assert_int_eq(vt_gguf_writer_set_alignment(w, 0), VT_E_INVALID_ARG);
    ck_assert_int_eq(vt_gguf_writer_set_alignment(w, 48), VT_E_INVALID_ARG);
    ck_assert_int_eq(vt_gguf_writer_set_alignment(w, VT_GGUF_MAX_ALIGNMENT * 2), VT_E_INVALID_ARG);
    ck_assert_int_eq(vt_gguf_writer_add_string(w, VT_GGUF_KEY_ALIGNMENT, "64"), VT_E_INVALID_ARG);
    /* general.alignment as a u32 is the alignment (once, updated in place). */
    TRY(vt_gguf_writer_add_u32(w, VT_GGUF_KEY_ALIGNMENT, 16));
    TRY(vt_gguf_writer_set_alignment(w, 128));
    int64_t ne[2] = {32, 2};
    ck_assert_int_eq(vt_gguf_writer_add_tensor(w, "", VT_F32, 2, ne, NULL, 256), VT_E_INVALID_ARG);
    char long_name[80];
    memset(long_name, 'n', 64);
    long_name[64] = '\0';
    ck_assert_int_eq(vt_gguf_writer_add_tensor(w, long_name, VT_F32, 2, ne, NULL, 256), VT_E_INVALID_ARG);
    long_name[63] = '\0';
    TRY(vt_gguf_writer_add_tensor(w, long_name, VT_F32, 2, ne, NULL, 256));
    ck_assert_int_eq(vt_gguf_writer_add_tensor(w, long_name, VT_F32, 2, ne, NULL, 256), VT_E_INVALID_ARG);
    ck_assert_int_eq(vt_gguf_writer_add_tensor(w, "removed", 4, 2, ne, NULL, 256), VT_E_INVALID_ARG);
    ck_assert_int_eq(vt_gguf_writer_add_tensor(w, "unknown", 40, 2, ne, NULL, 256), VT_E_INVALID_ARG);
    ck_assert_int_eq(vt_gguf_writer_add_tensor(w, "size", VT_F32, 2, ne, NULL, 255), VT_E_INVALID_ARG);
    ck_assert_ptr_nonnull(strstr(vt_last_error(), "255 bytes given"));
    ck_assert_int_eq(vt_gguf_writer_add_tensor(w, "dims", VT_F32, 5, ne, NULL, 256), VT_E_INVALID_ARG);
    int64_t neg[2] = {32, -1};
    ck_assert_int_eq(vt_gguf_writer_add_tensor(w, "neg", VT_F32, 2, neg, NULL, 0), VT_E_INVALID_ARG);
    int64_t q[1] = {33};
    ck_assert_int_eq(vt_gguf_writer_add_tensor(w, "blocks", VT_Q4_0, 1, q, NULL, 18), VT_E_INVALID_ARG);
    int64_t huge[2] = {INT64_MAX, 0};
    ck_assert_int_eq(vt_gguf_writer_add_tensor(w, "huge", VT_F32, 2, huge, NULL, 0), VT_E_INVALID_ARG);
    image im = finish(w);
    vt_gguf *g = open_ok(&im);
    ck_assert_uint_eq(vt_gguf_alignment(g), 128);
    ck_assert_uint_eq(vt_gguf_kv_count(g), 2);
    ck_assert_uint_eq(vt_gguf_tensor_count(g), 1);
    ck_assert_uint_eq(vt_gguf_tensor_at(g, 0)->name_len, 63);
    vt_gguf_close(g);
    free(im.p);
}
END_TEST

START_TEST(escape_renders_safe_text)
{
    char buf[64];
    ck_assert_uint_eq(vt_gguf_escape("plain", 5, buf, sizeof buf), 5);
    ck_assert_str_eq(buf, "plain");
    vt_gguf_escape("a\"b\\c\n\x1b\x7f", 8, buf, sizeof buf);
    ck_assert_str_eq(buf, "a\\\"b\\\\c\\x0a\\x1b\\x7f");
    vt_gguf_escape("\xc3\xa9t\xc3\xa9 \xe2\x82\xac", 9, buf, sizeof buf); /* UTF-8 passes */
    ck_assert_str_eq(buf, "\xc3\xa9t\xc3\xa9 \xe2\x82\xac");
    vt_gguf_escape("\xc2\x85\xff\xc3", 4, buf, sizeof buf); /* C1 control, bad byte, cut sequence */
    ck_assert_str_eq(buf, "\\xc2\\x85\\xff\\xc3");
    vt_gguf_escape("nul\0byte", 8, buf, sizeof buf);
    ck_assert_str_eq(buf, "nul\\x00byte");
    /* Too long: cut with "..." and NUL-terminated inside the buffer. */
    char small[8];
    uint64_t used = vt_gguf_escape("abcdefghijkl", 12, small, sizeof small);
    ck_assert_str_eq(small, "abcd...");
    ck_assert_uint_eq(used, 4);
    ck_assert_uint_eq(vt_gguf_escape("abcdefg", 7, small, sizeof small), 7);
    ck_assert_str_eq(small, "abcdefg");
    vt_gguf_escape("\x01\x02\x03", 3, small, sizeof small);
    ck_assert_str_eq(small, "\\x01...");
}
END_TEST

/* ---- files that do not exist or are not files ---- */

START_TEST(open_reports_missing_and_unreadable_files)
{
    vt_gguf *g = (vt_gguf *)&g;
    ck_assert_int_eq(vt_gguf_open("/nonexistent/model.gguf", &g), VT_E_NOT_FOUND);
    ck_assert_ptr_null(g);
    ck_assert_ptr_nonnull(strstr(vt_last_error(), "/nonexistent/model.gguf"));
    char *dir = vt_test_mkdtemp();
    ck_assert_int_eq(vt_gguf_open(dir, &g), VT_E_IO);
    ck_assert_ptr_nonnull(strstr(vt_last_error(), "not a regular file"));
    /* An empty file and a bad file name their path in the message. */
    char path[1024];
    snprintf(path, sizeof path, "%s/empty.gguf", dir);
    FILE *f = fopen(path, "wb");
    fclose(f);
    ck_assert_int_eq(vt_gguf_open(path, &g), VT_E_BAD_FILE);
    char want[1100];
    snprintf(want, sizeof want, "bad GGUF file '%s' at offset 0: magic truncated", path);
    ck_assert_msg(strstr(vt_last_error(), want), "%s", vt_last_error());
    ck_assert_int_eq(vt_gguf_open(NULL, &g), VT_E_INVALID_ARG);
    ck_assert_int_eq(vt_gguf_open_memory(NULL, 4, NULL, &g), VT_E_INVALID_ARG);
    ck_assert_int_eq(vt_gguf_open_memory(NULL, 0, NULL, &g), VT_E_BAD_FILE);
    ck_assert_ptr_nonnull(strstr(vt_last_error(), "bad GGUF file '<memory>' at offset 0"));
    vt_test_rmtree(dir);
    free(dir);
}
END_TEST

/* ---- one test per class of malformed input ---- */

START_TEST(truncation_inside_every_field)
{
    image im = rich_image();
    kv_pos u32 = kv_at(&im, "k.u32"), str = kv_at(&im, "k.str"), arr = kv_at(&im, "k.arr"), sarr = kv_at(&im, "k.sarr");
    tensor_pos tb = tensor_at(&im, "t.b");
    uint64_t elem1 = sarr.value + 8 + 30; /* element 1 of k.sarr */
    const struct {
        uint64_t cut, offset;
        const char *words[3];
    } cases[] = {
        {2, 0, {"magic truncated", "needs 4 bytes, 2 left"}},
        {6, 4, {"version truncated"}},
        {10, 8, {"tensor count truncated"}},
        {20, 16, {"kv count truncated"}},
        {u32.offset + 3, u32.offset, {"kv[1] key length truncated", "needs 8 bytes, 3 left"}},
        {u32.key + 2, u32.offset, {"kv[1] key length 5 exceeds the file"}},
        {u32.type + 1, u32.type, {"kv[1] 'k.u32' value type truncated"}},
        {u32.value + 2, u32.value, {"kv[1] 'k.u32' value truncated", "needs 4 bytes, 2 left"}},
        {str.value + 3, str.value, {"kv[2] 'k.str' value length truncated"}},
        {str.value + 8 + 2, str.value, {"kv[2] 'k.str' value length 5 exceeds the file"}},
        {arr.elem_type + 1, arr.elem_type, {"kv[3] 'k.arr' array element type truncated"}},
        {arr.count + 1, arr.count, {"kv[3] 'k.arr' array count truncated"}},
        {arr.value + 5, arr.count, {"kv[3] 'k.arr' array of 3 i32 (12 bytes) exceeds the file"}},
        {elem1 + 3, elem1, {"kv[4] 'k.sarr' element 1 length truncated"}},
        {elem1 + 8 + 1, elem1, {"kv[4] 'k.sarr' element 1 length 2 exceeds the file"}},
        {tb.offset + 3, tb.offset, {"tensor[1] name length truncated"}},
        {tb.name + 1, tb.offset, {"tensor[1] name length 3 exceeds the file"}},
        {tb.n_dims + 1, tb.n_dims, {"tensor[1] 't.b' n_dims truncated"}},
        {tb.ne + 1, tb.ne, {"tensor[1] 't.b' ne[0] truncated"}},
        {tb.type + 1, tb.type, {"tensor[1] 't.b' type truncated"}},
        {tb.data_offset + 1, tb.data_offset, {"tensor[1] 't.b' offset truncated"}},
        {tb.file_offset + 1, tb.data_offset, {"tensor[1] 't.b' data past the end of the file", "34 bytes"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        image cut = {im.p, (size_t)cases[i].cut};
        const char *const words[] = {cases[i].words[0], cases[i].words[1], NULL};
        char what[32];
        snprintf(what, sizeof what, "case %zu (cut at %llu)", i, (unsigned long long)cases[i].cut);
        expect_bad_words(&cut, cases[i].offset, words, what);
    }
    /* Every cut before the end of the last tensor's data is refused as a
     * truncation at or before the cut; cuts in the final padding are fine. */
    uint64_t data_end = tb.file_offset + tb.n_bytes;
    for (uint64_t n = 0; n < im.n; n++) {
        vt_gguf *g = NULL;
        vt_status st = vt_gguf_open_memory(im.p, (size_t)n, "t.gguf", &g);
        if (n >= data_end) {
            ck_assert_msg(st == VT_OK, "cut at %llu (data ends at %llu): %s", (unsigned long long)n,
                          (unsigned long long)data_end, vt_last_error());
            vt_gguf_close(g);
            continue;
        }
        ck_assert_msg(st == VT_E_BAD_FILE, "cut at %llu: %s", (unsigned long long)n, vt_status_name(st));
        const char *msg = vt_last_error();
        unsigned long long at = 0;
        ck_assert_msg(sscanf(msg, "bad GGUF file 't.gguf' at offset %llu:", &at) == 1, "%s", msg);
        ck_assert_msg(at <= n, "cut at %llu, reported at %llu: %s", (unsigned long long)n, at, msg);
        ck_assert_msg(strstr(msg, "truncated") || strstr(msg, "exceeds the file") || strstr(msg, "past the end"),
                      "cut at %llu: %s", (unsigned long long)n, msg);
    }
    free(im.p);
}
END_TEST

START_TEST(bad_magic_is_refused)
{
    image im = small_image();
    memcpy(im.p, "GGML", 4);
    expect_bad(&im, 0, "magic is \"GGML\", not \"GGUF\"", "not a GGUF file");
    memcpy(im.p,
           "\x00\x1b\xff"
           "F",
           4);
    expect_bad(&im, 0, "magic is \"\\x00\\x1b\\xffF\"");
    free(im.p);
}
END_TEST

START_TEST(bad_versions_are_refused)
{
    image im = small_image();
    put_u32(&im, 4, 0);
    expect_bad(&im, 4, "version 0 is not a GGUF version");
    put_u32(&im, 4, 1);
    expect_bad(&im, 4, "GGUF v1 is not supported");
    put_u32(&im, 4, 4);
    expect_bad(&im, 4, "version 4 is newer than this reader");
    put_u32(&im, 4, 0xffffffffu);
    expect_bad(&im, 4, "version 4294967295 is newer");
    /* Byte-swapped: a big-endian writer's v2 and v3. */
    put_u32(&im, 4, 0x03000000u);
    expect_bad(&im, 4, "big-endian GGUF files are not supported", "byte-swapped 3");
    put_u32(&im, 4, 0x02000000u);
    expect_bad(&im, 4, "big-endian GGUF files are not supported", "byte-swapped 2");
    free(im.p);
}
END_TEST

START_TEST(counts_that_overflow_or_exceed_the_file)
{
    image im = small_image();
    image c = copy_image(&im);
    put_u64(&c, 8, UINT64_MAX);
    expect_bad(&c, 8, "tensor count 18446744073709551615 overflows");
    memcpy(c.p, im.p, im.n);
    put_u64(&c, 16, UINT64_MAX / 3);
    expect_bad(&c, 16, "kv count 6148914691236517205 overflows");
    memcpy(c.p, im.p, im.n);
    put_u64(&c, 8, 1000);
    expect_bad(&c, 8, "tensor count 1000 exceeds the file", "needs at least 25000 bytes");
    memcpy(c.p, im.p, im.n);
    put_u64(&c, 16, 1ull << 40);
    expect_bad(&c, 16, "kv count 1099511627776 exceeds the file");
    free(c.p);
    free(im.p);
}
END_TEST

START_TEST(string_lengths_past_the_end)
{
    image im = rich_image();
    kv_pos k1 = kv_at(&im, "k.u32"), str = kv_at(&im, "k.str"), sarr = kv_at(&im, "k.sarr");
    tensor_pos ta = tensor_at(&im, "t.a");
    image c = copy_image(&im);
    char size[64];
    snprintf(size, sizeof size, "exceeds the file (size %zu,", im.n);
    put_u64(&c, 24, UINT64_MAX);
    expect_bad(&c, 24, "kv[0] key length 18446744073709551615 exceeds the file", size);
    memcpy(c.p, im.p, im.n);
    put_u64(&c, k1.offset, im.n - k1.offset - 7); /* one byte past the end */
    expect_bad(&c, k1.offset, "kv[1] key length", size);
    memcpy(c.p, im.p, im.n);
    put_u64(&c, str.value, UINT64_MAX);
    expect_bad(&c, str.value, "kv[2] 'k.str' value length 18446744073709551615 exceeds the file");
    memcpy(c.p, im.p, im.n);
    put_u64(&c, sarr.value, UINT64_MAX - 1);
    expect_bad(&c, sarr.value, "kv[4] 'k.sarr' element 0 length 18446744073709551614 exceeds the file");
    memcpy(c.p, im.p, im.n);
    put_u64(&c, ta.offset, UINT64_MAX);
    expect_bad(&c, ta.offset, "tensor[0] name length 18446744073709551615 exceeds the file");
    free(c.p);
    free(im.p);
}
END_TEST

START_TEST(value_types_out_of_range)
{
    image im = rich_image();
    kv_pos k1 = kv_at(&im, "k.u32"), arr = kv_at(&im, "k.arr");
    image c = copy_image(&im);
    put_u32(&c, k1.type, VT_GGUF_TYPE_COUNT);
    expect_bad(&c, k1.type, "kv[1] 'k.u32' value type 13 is not a GGUF type (0..12)");
    put_u32(&c, k1.type, 0xffffffffu);
    expect_bad(&c, k1.type, "value type 4294967295 is not a GGUF type");
    memcpy(c.p, im.p, im.n);
    put_u32(&c, arr.elem_type, 13);
    expect_bad(&c, arr.elem_type, "kv[3] 'k.arr' array element type 13 is not a GGUF type");
    free(c.p);
    free(im.p);
}
END_TEST

START_TEST(nested_arrays_are_refused)
{
    image im = rich_image();
    kv_pos arr = kv_at(&im, "k.arr");
    put_u32(&im, arr.elem_type, VT_GGUF_ARRAY);
    expect_bad(&im, arr.elem_type, "kv[3] 'k.arr' nested arrays are not supported");
    free(im.p);
}
END_TEST

START_TEST(array_counts_that_overflow_or_exceed_the_file)
{
    image im = rich_image();
    kv_pos arr = kv_at(&im, "k.arr"), sarr = kv_at(&im, "k.sarr");
    image c = copy_image(&im);
    put_u64(&c, arr.count, UINT64_MAX / 2);
    expect_bad(&c, arr.count, "kv[3] 'k.arr' array count 9223372036854775807 of i32 overflows");
    memcpy(c.p, im.p, im.n);
    put_u64(&c, arr.count, 1ull << 40);
    expect_bad(&c, arr.count, "array of 1099511627776 i32 (4398046511104 bytes) exceeds the file");
    memcpy(c.p, im.p, im.n);
    put_u64(&c, sarr.count, UINT64_MAX);
    expect_bad(&c, sarr.count, "kv[4] 'k.sarr' array count 18446744073709551615 of strings exceeds the file");
    free(c.p);
    free(im.p);
}
END_TEST

START_TEST(empty_duplicate_and_nul_keys)
{
    image im = small_image();
    kv_pos kb = kv_at(&im, "k.b");
    image c = copy_image(&im);
    put_u64(&c, kb.offset, 0);
    expect_bad(&c, kb.offset, "kv[1] key is empty");
    memcpy(c.p, im.p, im.n);
    c.p[kb.key + 1] = '\0';
    expect_bad(&c, kb.offset + 8, "kv[1] key contains a NUL byte");
    free(c.p);
    free(im.p);

    vt_gguf_writer *w = new_writer();
    TRY(vt_gguf_writer_add_u32(w, "dup.a", 1));
    TRY(vt_gguf_writer_add_u32(w, "other", 2));
    TRY(vt_gguf_writer_add_string(w, "dup.b", "x"));
    im = finish(w);
    kv_pos b = kv_at(&im, "dup.b");
    im.p[b.key + 4] = 'a';
    char want[64];
    snprintf(want, sizeof want, "key duplicates kv[0] (at offset 24)");
    expect_bad(&im, b.offset, "kv[2] 'dup.a'", want);
    free(im.p);
}
END_TEST

START_TEST(bad_alignment_values)
{
    vt_gguf_writer *w = new_writer();
    TRY(vt_gguf_writer_set_alignment(w, 32));
    add_tensor2(w, "w", VT_F32, 8, 1);
    image im = finish(w);
    kv_pos a = kv_at(&im, VT_GGUF_KEY_ALIGNMENT);
    image c = copy_image(&im);
    const struct {
        uint32_t value;
        const char *words;
    } bad[] = {
        {0, "kv[0] 'general.alignment' value 0: the alignment must not be zero"},
        {48, "kv[0] 'general.alignment' value 48 is not a power of two"},
        {3, "value 3 is not a power of two"},
        {VT_GGUF_MAX_ALIGNMENT * 2, "value 2097152 exceeds the cap of 1048576 bytes (1 MiB)"},
        {0x80000000u, "exceeds the cap"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        put_u32(&c, a.value, bad[i].value);
        expect_bad(&c, a.value, bad[i].words);
    }
    /* The cap itself passes the KV check: what fails next is the tensor,
     * whose data the 1 MiB-aligned data section moved past the end. */
    put_u32(&c, a.value, VT_GGUF_MAX_ALIGNMENT);
    tensor_pos w0 = tensor_at(&im, "w");
    expect_bad(&c, w0.data_offset, "tensor[0] 'w' data past the end of the file", "file offset 1048576");
    /* Not a u32: an i32, a u64, a string. */
    memcpy(c.p, im.p, im.n);
    put_u32(&c, a.type, VT_GGUF_I32);
    expect_bad(&c, a.type, "kv[0] 'general.alignment' must be a u32, not i32");
    free(c.p);
    free(im.p);

    w = new_writer();
    TRY(vt_gguf_writer_add_string(w, "general.alignmenX", "32"));
    im = finish(w);
    a = kv_at(&im, "general.alignmenX");
    im.p[a.key + 16] = 't';
    expect_bad(&im, a.type, "kv[0] 'general.alignment' must be a u32, not string");
    free(im.p);
    w = new_writer();
    uint32_t arr[1] = {32};
    TRY(vt_gguf_writer_add_array(w, "general.alignmenX", VT_GGUF_U32, arr, 1));
    im = finish(w);
    a = kv_at(&im, "general.alignmenX");
    im.p[a.key + 16] = 't';
    expect_bad(&im, a.type, "must be a u32, not array of u32");
    free(im.p);
}
END_TEST

START_TEST(bad_tensor_names)
{
    image im = small_image();
    tensor_pos a = tensor_at(&im, "w.a"), b = tensor_at(&im, "w.b");
    image c = copy_image(&im);
    put_u64(&c, b.offset, 0);
    expect_bad(&c, b.offset, "tensor[1] name is empty");
    memcpy(c.p, im.p, im.n);
    c.p[a.name + 1] = '\0';
    expect_bad(&c, a.offset + 8, "tensor[0] name contains a NUL byte");
    memcpy(c.p, im.p, im.n);
    c.p[b.name + 2] = 'a';
    char want[64];
    snprintf(want, sizeof want, "name duplicates tensor[0] (at offset %llu)", (unsigned long long)a.offset);
    expect_bad(&c, b.offset, "tensor[1] 'w.a'", want);
    free(c.p);
    free(im.p);

    /* 64 bytes: a 63-byte name with its length patched to 64. */
    vt_gguf_writer *w = new_writer();
    char name[64];
    memset(name, 'n', 63);
    name[63] = '\0';
    add_tensor2(w, name, VT_F32, 8, 1);
    im = finish(w);
    a = tensor_at(&im, name);
    vt_gguf *g = open_ok(&im); /* 63 bytes is fine */
    vt_gguf_close(g);
    put_u64(&im, a.offset, 64);
    expect_bad(&im, a.offset, "tensor[0] name length 64 is 64 bytes or more (at most 63)");
    put_u64(&im, a.offset, 100);
    expect_bad(&im, a.offset, "tensor[0] name length 100 is 64 bytes or more");
    free(im.p);
}
END_TEST

START_TEST(n_dims_above_4)
{
    image im = small_image();
    tensor_pos b = tensor_at(&im, "w.b");
    put_u32(&im, b.n_dims, 5);
    expect_bad(&im, b.n_dims, "tensor[1] 'w.b' n_dims 5 exceeds 4");
    put_u32(&im, b.n_dims, 0xffffffffu);
    expect_bad(&im, b.n_dims, "n_dims 4294967295 exceeds 4");
    free(im.p);
}
END_TEST

START_TEST(negative_dims)
{
    image im = small_image();
    tensor_pos b = tensor_at(&im, "w.b");
    put_u64(&im, b.ne + 8, (uint64_t)-3);
    expect_bad(&im, b.ne + 8, "tensor[1] 'w.b' ne[1] = -3 is negative");
    put_u64(&im, b.ne, 1ull << 63);
    expect_bad(&im, b.ne, "ne[0] = -9223372036854775808 is negative");
    free(im.p);
}
END_TEST

START_TEST(element_count_overflows_int64)
{
    image im = small_image();
    tensor_pos b = tensor_at(&im, "w.b");
    image c = copy_image(&im);
    put_u64(&c, b.ne, 1ull << 32);
    put_u64(&c, b.ne + 8, 1ull << 31);
    expect_bad(&c, b.ne, "tensor[1] 'w.b' element count overflows int64", "ne = [4294967296, 2147483648]");
    /* A zero dim does not hide an overflowing shape (zero dims count as 1). */
    memcpy(c.p, im.p, im.n);
    put_u64(&c, b.ne, (uint64_t)INT64_MAX);
    put_u64(&c, b.ne + 8, 0);
    expect_bad(&c, b.ne, "byte size overflows 64 bits");
    free(c.p);
    free(im.p);
}
END_TEST

START_TEST(ne0_not_a_multiple_of_the_block)
{
    vt_gguf_writer *w = new_writer();
    add_tensor2(w, "q", VT_Q4_0, 64, 2);
    add_tensor2(w, "k", VT_Q6_K, 256, 1);
    image im = finish(w);
    tensor_pos q = tensor_at(&im, "q"), k = tensor_at(&im, "k");
    image c = copy_image(&im);
    put_u64(&c, q.ne, 33);
    expect_bad(&c, q.ne, "tensor[0] 'q' ne[0] = 33 is not a multiple of q4_0's block size 32");
    memcpy(c.p, im.p, im.n);
    put_u64(&c, k.ne, 128);
    expect_bad(&c, k.ne, "tensor[1] 'k' ne[0] = 128 is not a multiple of q6_k's block size 256");
    free(c.p);
    free(im.p);
}
END_TEST

START_TEST(byte_size_chain_overflows)
{
    vt_gguf_writer *w = new_writer();
    int64_t ne[1] = {2};
    add_tensor(w, "f32", VT_F32, 1, ne);
    add_tensor(w, "f64", VT_F64, 1, ne);
    add_tensor(w, "g32", VT_F32, 1, ne);
    image im = finish(w);
    tensor_pos f32 = tensor_at(&im, "f32"), f64 = tensor_at(&im, "f64"), g32 = tensor_at(&im, "g32");
    image c = copy_image(&im);
    /* (ne0/1)*4 = 2^64: the byte size itself. */
    put_u64(&c, f32.ne, 1ull << 62);
    expect_bad(&c, f32.ne, "tensor[0] 'f32' byte size overflows 64 bits", "(ne[0]/1)*4*ne[1]*ne[2]*ne[3]");
    /* 8*(2^61-1) = 2^64-8 fits; padded to 32 it does not. */
    memcpy(c.p, im.p, im.n);
    put_u64(&c, f64.ne, (1ull << 61) - 1);
    expect_bad(&c, f64.ne, "tensor[1] 'f64' byte size 18446744073709551608 padded to the alignment 32 overflows");
    /* 2^63 + 2^63: the running sum. */
    memcpy(c.p, im.p, im.n);
    put_u64(&c, f32.ne, 1ull << 61);
    put_u64(&c, g32.ne, 1ull << 61);
    expect_bad(&c, g32.ne, "tensor[2] 'g32' running sum of tensor sizes overflows 64 bits",
               "(9223372036854775840 + 9223372036854775808)");
    /* Each fits alone but the data is far past the end of the file. */
    memcpy(c.p, im.p, im.n);
    put_u64(&c, g32.ne, 1ull << 61);
    expect_bad(&c, g32.data_offset, "tensor[2] 'g32' data past the end of the file");
    free(c.p);
    free(im.p);
}
END_TEST

START_TEST(misaligned_overlapping_and_out_of_file_offsets)
{
    image im = small_image();
    tensor_pos a = tensor_at(&im, "w.a"), b = tensor_at(&im, "w.b");
    ck_assert_uint_eq(b.file_offset - a.file_offset, 64);
    image c = copy_image(&im);
    put_u64(&c, b.data_offset, 65);
    expect_bad(&c, b.data_offset, "tensor[1] 'w.b' offset 65 is not a multiple of the alignment 32");
    memcpy(c.p, im.p, im.n);
    put_u64(&c, b.data_offset, 32); /* half over w.a's 64 bytes */
    expect_bad(&c, b.data_offset, "tensor[1] 'w.b' data overlaps tensor[0] 'w.a'", "[32, 96) and [0, 64)");
    memcpy(c.p, im.p, im.n);
    put_u64(&c, a.data_offset, 64); /* both at 64: the later in the file is blamed */
    expect_bad(&c, b.data_offset, "tensor[1] 'w.b' data overlaps tensor[0] 'w.a'");
    memcpy(c.p, im.p, im.n);
    put_u64(&c, b.data_offset, 1ull << 20);
    char want[128];
    snprintf(want, sizeof want, "file size %zu", im.n);
    expect_bad(&c, b.data_offset, "tensor[1] 'w.b' data past the end of the file", "64 bytes at file offset", want);
    memcpy(c.p, im.p, im.n);
    put_u64(&c, b.data_offset, UINT64_MAX - 31); /* aligned, but wraps past 2^64 */
    expect_bad(&c, b.data_offset, "tensor[1] 'w.b' offset 18446744073709551584 overflows 64 bits");
    /* Swapped places (no overlap, still aligned and inside): valid. */
    memcpy(c.p, im.p, im.n);
    put_u64(&c, a.data_offset, 64);
    put_u64(&c, b.data_offset, 0);
    vt_gguf *g = open_ok(&c);
    ck_assert_uint_eq(vt_gguf_tensor_at(g, 0)->offset, 64);
    vt_gguf_close(g);
    free(c.p);
    free(im.p);
}
END_TEST

START_TEST(removed_and_unknown_type_ids)
{
    image im = small_image();
    tensor_pos b = tensor_at(&im, "w.b");
    static const uint32_t removed[] = {4, 5, 31, 32, 33, 36, 37, 38};
    for (size_t i = 0; i < sizeof removed / sizeof removed[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "tensor[1] 'w.b' type %u (removed(%u)) was removed from ggml", removed[i],
                 removed[i]);
        put_u32(&im, b.type, removed[i]);
        expect_bad(&im, b.type, want);
    }
    static const uint32_t unknown[] = {40, 77, 0x7fffffffu, 0xffffffffu};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "tensor[1] 'w.b' type %u is not a ggml type", unknown[i]);
        put_u32(&im, b.type, unknown[i]);
        expect_bad(&im, b.type, want);
    }
    free(im.p);
}
END_TEST

START_TEST(hostile_text_in_messages_is_escaped)
{
    vt_gguf_writer *w = new_writer();
    TRY(vt_gguf_writer_add_u32(w, "evil\x1b[2J\x7f", 1));
    image im = finish(w);
    kv_pos k = kv_at(&im, "evil\x1b[2J\x7f");
    put_u32(&im, k.type, 99);
    expect_bad(&im, k.type, "kv[0] 'evil\\x1b[2J\\x7f' value type 99");
    ck_assert_ptr_null(strchr(vt_last_error(), '\x1b'));
    free(im.p);
}
END_TEST

/* ---- regressions found by fuzzing (tests/fuzz/RESULTS.md) ---- */

/* Fuzz crash 1 (a broken promise, not a memory error): tensor 'w' has
 * ne = [6931039837867868164, 0] f32. Its byte size is 0, but
 * (ne0/blck)*type_size overflows before the zero dim, and the type table's
 * vt_dtype_tensor_bytes refused the shape the parser had accepted. Now the
 * parser counts zero dims as 1 in every overflow check and refuses it. */
START_TEST(fuzz_regression_zero_dim_hides_overflow)
{
    static const uint8_t crash[] = {
        0x47, 0x47, 0x55, 0x46, 0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x67, 0x65, 0x6e, 0x65,
        0x72, 0xa9, 0x93, 0xd1, 0x9e, 0x72, 0x63, 0x68, 0x69, 0x74, 0x65, 0x63, 0xb2, 0x75, 0x72, 0x65, 0x08, 0x00,
        0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x76, 0x32, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x77, 0x02, 0x00, 0x00, 0x00, 0x04, 0x00, 0x32, 0xa4, 0x02, 0x00, 0x30, 0x60, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0xdc, 0x04, 0x65, 0xaa, 0x1f, 0xad, 0x1d, 0x5a, 0xda, 0xe5, 0xac, 0x1b, 0x1e, 0x5f, 0x00, 0x00,
        0x00, 0x00, 0x10, 0xff, 0x19, 0xaf, 0x60, 0x1d, 0x04, 0xac, 0xb4, 0x1d, 0x02, 0x2b, 0x46,
    };
    image im = {(uint8_t *)crash, sizeof crash};
    expect_bad(&im, 79, "tensor[0] 'w' byte size overflows 64 bits", "ne = [6931039837867868164, 0]");
    /* Every shape the parser accepts, the type table can size. */
    int64_t shape[2] = {0, 6931039837867868164ll};
    uint64_t bytes;
    ck_assert(!vt_dtype_tensor_bytes(VT_F32, 2, shape, &bytes));
}
END_TEST

int main(void)
{
    vt_test_seed();
    fill_random();
    Suite *s = suite_create("gguf");
    TCase *valid = tcase_create("valid");
    tcase_add_test(valid, roundtrip_every_kv_and_tensor_byte);
    tcase_add_test(valid, writer_writes_files);
    tcase_add_test(valid, versions_2_and_3_are_read);
    tcase_add_test(valid, zero_size_tensors_are_valid);
    tcase_add_test(valid, alignment_1_is_valid);
    tcase_add_test(valid, empty_file_is_valid);
    tcase_add_test(valid, typed_getters_check_types);
    tcase_add_test(valid, writer_refuses_invalid_input);
    tcase_add_test(valid, escape_renders_safe_text);
    tcase_add_test(valid, open_reports_missing_and_unreadable_files);
    suite_add_tcase(s, valid);
    TCase *bad = tcase_create("malformed");
    tcase_set_timeout(bad, 120);
    tcase_add_test(bad, truncation_inside_every_field);
    tcase_add_test(bad, bad_magic_is_refused);
    tcase_add_test(bad, bad_versions_are_refused);
    tcase_add_test(bad, counts_that_overflow_or_exceed_the_file);
    tcase_add_test(bad, string_lengths_past_the_end);
    tcase_add_test(bad, value_types_out_of_range);
    tcase_add_test(bad, nested_arrays_are_refused);
    tcase_add_test(bad, array_counts_that_overflow_or_exceed_the_file);
    tcase_add_test(bad, empty_duplicate_and_nul_keys);
    tcase_add_test(bad, bad_alignment_values);
    tcase_add_test(bad, bad_tensor_names);
    tcase_add_test(bad, n_dims_above_4);
    tcase_add_test(bad, negative_dims);
    tcase_add_test(bad, element_count_overflows_int64);
    tcase_add_test(bad, ne0_not_a_multiple_of_the_block);
    tcase_add_test(bad, byte_size_chain_overflows);
    tcase_add_test(bad, misaligned_overlapping_and_out_of_file_offsets);
    tcase_add_test(bad, removed_and_unknown_type_ids);
    tcase_add_test(bad, hostile_text_in_messages_is_escaped);
    tcase_add_test(bad, fuzz_regression_zero_dim_hides_overflow);
    suite_add_tcase(s, bad);
    return vt_test_run_suite(s);
}
