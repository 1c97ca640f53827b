/* cmd_inspect.c - `vtctl inspect FILE.gguf`: what a GGUF file holds, after
 * full validation: version, alignment, data offset, every KV (long arrays
 * abbreviated unless --all), every tensor with its type, shape, bytes and
 * file offset, and totals per type. Text from the file is escaped: \xNN
 * for non-printable bytes in text mode, JSON escapes with --json. */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vtctl.h"

/* Array elements shown before "... (N more)". */
#define PREVIEW_ELEMS 8

/* Rendered bytes of a string value shown before it is cut (text mode). */
#define PREVIEW_TEXT 96

/* Width of the key column: keys longer than this push their value right. */
#define KEY_WIDTH 40

/* Print s escaped and quoted; at most limit rendered bytes unless all. */
static void print_string(vt_gguf_str s, size_t limit, bool all)
{
    char small[PREVIEW_TEXT + 8];
    char *buf = small;
    size_t size = limit + 4 < sizeof small ? limit + 4 : sizeof small;
    if (all) {
        size = s.len <= (SIZE_MAX - 8) / 4 ? (size_t)s.len * 4 + 8 : SIZE_MAX;
        buf = malloc(size);
        if (!buf) { /* fall back to the preview */
            buf = small;
            size = sizeof small;
        }
    }
    uint64_t shown = vt_gguf_escape(s.data, s.len, buf, size);
    printf("\"%s\"", buf);
    if (shown < s.len)
        printf(" (%" PRIu64 " bytes)", s.len);
    if (buf != small)
        free(buf);
}

static void print_value(const vt_gguf_value *v, size_t text_limit, bool all)
{
    switch (v->type) {
    case VT_GGUF_U8:
    case VT_GGUF_U16:
    case VT_GGUF_U32:
    case VT_GGUF_U64: printf("%" PRIu64, v->as.u); break;
    case VT_GGUF_I8:
    case VT_GGUF_I16:
    case VT_GGUF_I32:
    case VT_GGUF_I64: printf("%" PRId64, v->as.i); break;
    case VT_GGUF_F32: printf("%.9g", v->as.f); break;
    case VT_GGUF_F64: printf("%.17g", v->as.f); break;
    case VT_GGUF_BOOL: printf("%s", v->as.b ? "true" : "false"); break;
    case VT_GGUF_STRING: print_string(v->as.str, text_limit, all); break;
    default: printf("?"); break;
    }
}

static void json_value(json_writer *w, const vt_gguf_value *v)
{
    switch (v->type) {
    case VT_GGUF_U8:
    case VT_GGUF_U16:
    case VT_GGUF_U32:
    case VT_GGUF_U64: jw_uint(w, v->as.u); break;
    case VT_GGUF_I8:
    case VT_GGUF_I16:
    case VT_GGUF_I32:
    case VT_GGUF_I64: jw_int(w, v->as.i); break;
    case VT_GGUF_F32:
    case VT_GGUF_F64: jw_double(w, v->as.f); break;
    case VT_GGUF_BOOL: jw_bool(w, v->as.b); break;
    case VT_GGUF_STRING:
        if (v->as.str.len > SIZE_MAX)
            jw_null(w);
        else
            jw_string_n(w, v->as.str.data, (size_t)v->as.str.len);
        break;
    default: jw_null(w); break;
    }
}

/* "[d0, d1, ...]" of n dims into buf. */
static const char *format_dims(const int64_t *d, uint32_t n, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "[");
    for (uint32_t i = 0; i < n && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%" PRId64, i ? ", " : "", d[i]);
    if (used < size)
        snprintf(buf + used, size - used, "]");
    return buf;
}

/* Elements of an array KV to show: all, or the first few. */
static uint64_t shown_elems(const vt_gguf_kv *kv, bool all)
{
    return all || kv->count <= PREVIEW_ELEMS ? kv->count : PREVIEW_ELEMS;
}

static void text_kv(const vt_gguf *g, const vt_gguf_kv *kv, bool all)
{
    char key[KEY_WIDTH * 4 + 8], type[48];
    vt_gguf_escape(kv->key, kv->key_len, key, sizeof key);
    if (kv->type == VT_GGUF_ARRAY)
        snprintf(type, sizeof type, "%s[%" PRIu64 "]", vt_gguf_type_name(kv->elem_type), kv->count);
    else
        snprintf(type, sizeof type, "%s", vt_gguf_type_name(kv->type));
    printf("  %-*s %-12s ", KEY_WIDTH, key, type);
    vt_gguf_value v;
    if (kv->type != VT_GGUF_ARRAY) {
        if (vt_gguf_kv_value(g, kv->index, 0, &v) == VT_OK)
            print_value(&v, PREVIEW_TEXT, all);
        printf("\n");
        return;
    }
    uint64_t n = shown_elems(kv, all);
    printf("[");
    for (uint64_t i = 0; i < n; i++) {
        if (vt_gguf_kv_value(g, kv->index, i, &v) != VT_OK)
            break;
        printf("%s", i ? ", " : "");
        print_value(&v, PREVIEW_TEXT / 3, all);
    }
    if (n < kv->count)
        printf("%s... (%" PRIu64 " more)", n ? ", " : "", kv->count - n);
    printf("]\n");
}

static void json_kv(json_writer *w, const vt_gguf *g, const vt_gguf_kv *kv, bool all)
{
    jw_object_begin(w);
    jw_key(w, "key");
    jw_string_n(w, kv->key, (size_t)kv->key_len);
    jw_key(w, "type");
    jw_string(w, vt_gguf_type_name(kv->type));
    jw_key(w, "offset");
    jw_uint(w, kv->offset);
    vt_gguf_value v;
    if (kv->type != VT_GGUF_ARRAY) {
        jw_key(w, "value");
        if (vt_gguf_kv_value(g, kv->index, 0, &v) == VT_OK)
            json_value(w, &v);
        else
            jw_null(w);
    } else {
        jw_key(w, "element_type");
        jw_string(w, vt_gguf_type_name(kv->elem_type));
        jw_key(w, "count");
        jw_uint(w, kv->count);
        uint64_t n = shown_elems(kv, all);
        jw_key(w, "values");
        jw_array_begin(w);
        for (uint64_t i = 0; i < n && vt_gguf_kv_value(g, kv->index, i, &v) == VT_OK; i++)
            json_value(w, &v);
        jw_array_end(w);
        jw_key(w, "more");
        jw_uint(w, kv->count - n);
    }
    jw_object_end(w);
}

/* Per-type totals of the tensors. */
typedef struct type_total {
    uint64_t tensors;
    uint64_t bytes;
} type_total;

static void sum_types(const vt_gguf *g, type_total *t, uint64_t *bytes)
{
    memset(t, 0, sizeof(type_total) * VT_DTYPE_COUNT);
    *bytes = 0;
    for (size_t i = 0; i < vt_gguf_tensor_count(g); i++) {
        const vt_gguf_tensor *x = vt_gguf_tensor_at(g, i);
        t[x->type].tensors++;
        t[x->type].bytes += x->n_bytes; /* no overflow: the tensors lie in the file */
        *bytes += x->n_bytes;
    }
}

static void text_inspect(const vt_gguf *g, bool all)
{
    char human[32];
    printf("%s: GGUF v%u, %" PRIu64 " bytes (%s)\n", vt_gguf_name(g), vt_gguf_version(g), vt_gguf_file_size(g),
           vt_format_bytes(vt_gguf_file_size(g), human, sizeof human));
    printf("  %-16s %u\n", "alignment", vt_gguf_alignment(g));
    printf("  %-16s %" PRIu64 "\n", "data offset", vt_gguf_data_offset(g));
    printf("  %-16s %" PRIu64 " bytes, padded\n", "data size", vt_gguf_data_size(g));

    printf("\nmetadata: %zu keys\n", vt_gguf_kv_count(g));
    for (size_t i = 0; i < vt_gguf_kv_count(g); i++)
        text_kv(g, vt_gguf_kv_at(g, i), all);

    size_t n = vt_gguf_tensor_count(g);
    int width = 4;
    for (size_t i = 0; i < n; i++) {
        const vt_gguf_tensor *t = vt_gguf_tensor_at(g, i);
        char name[VT_GGUF_MAX_NAME * 4 + 8];
        vt_gguf_escape(t->name, t->name_len, name, sizeof name);
        int len = (int)strlen(name);
        if (len > width)
            width = len;
    }
    printf("\ntensors: %zu\n", n);
    if (n)
        printf("  %-*s %-8s %-26s %-26s %14s %14s\n", width, "name", "type", "shape (row-major)", "ne (file order)",
               "bytes", "file offset");
    for (size_t i = 0; i < n; i++) {
        const vt_gguf_tensor *t = vt_gguf_tensor_at(g, i);
        char name[VT_GGUF_MAX_NAME * 4 + 8], shape[128], ne[128];
        vt_gguf_escape(t->name, t->name_len, name, sizeof name);
        printf("  %-*s %-8s %-26s %-26s %14" PRIu64 " %14" PRIu64 "\n", width, name, vt_dtype_name(t->type),
               format_dims(t->shape, t->n_dims, shape, sizeof shape), format_dims(t->ne, t->n_dims, ne, sizeof ne),
               t->n_bytes, t->file_offset);
    }

    type_total totals[VT_DTYPE_COUNT];
    uint64_t bytes;
    sum_types(g, totals, &bytes);
    printf("\ntotals: %zu tensors, %" PRIu64 " bytes (%s)\n", n, bytes, vt_format_bytes(bytes, human, sizeof human));
    for (int t = 0; t < VT_DTYPE_COUNT; t++)
        if (totals[t].tensors)
            printf("  %-8s %6" PRIu64 " tensor%s %16" PRIu64 " bytes (%s)\n", vt_dtype_name(t), totals[t].tensors,
                   totals[t].tensors == 1 ? " " : "s", totals[t].bytes,
                   vt_format_bytes(totals[t].bytes, human, sizeof human));
}

static void json_inspect(const vt_gguf *g, bool all)
{
    json_writer w;
    jw_init(&w, stdout);
    jw_object_begin(&w);
    jw_key(&w, "file");
    jw_string(&w, vt_gguf_name(g));
    jw_key(&w, "version");
    jw_uint(&w, vt_gguf_version(g));
    jw_key(&w, "file_size");
    jw_uint(&w, vt_gguf_file_size(g));
    jw_key(&w, "alignment");
    jw_uint(&w, vt_gguf_alignment(g));
    jw_key(&w, "data_offset");
    jw_uint(&w, vt_gguf_data_offset(g));
    jw_key(&w, "data_size");
    jw_uint(&w, vt_gguf_data_size(g));
    jw_key(&w, "kv_count");
    jw_uint(&w, vt_gguf_kv_count(g));
    jw_key(&w, "metadata");
    jw_array_begin(&w);
    for (size_t i = 0; i < vt_gguf_kv_count(g); i++)
        json_kv(&w, g, vt_gguf_kv_at(g, i), all);
    jw_array_end(&w);
    jw_key(&w, "tensor_count");
    jw_uint(&w, vt_gguf_tensor_count(g));
    jw_key(&w, "tensors");
    jw_array_begin(&w);
    for (size_t i = 0; i < vt_gguf_tensor_count(g); i++) {
        const vt_gguf_tensor *t = vt_gguf_tensor_at(g, i);
        jw_object_begin(&w);
        jw_key(&w, "name");
        jw_string_n(&w, t->name, t->name_len);
        jw_key(&w, "type");
        jw_string(&w, vt_dtype_name(t->type));
        jw_key(&w, "type_id");
        jw_int(&w, t->type);
        jw_key(&w, "n_dims");
        jw_uint(&w, t->n_dims);
        jw_key(&w, "ne");
        jw_array_begin(&w);
        for (uint32_t d = 0; d < t->n_dims; d++)
            jw_int(&w, t->ne[d]);
        jw_array_end(&w);
        jw_key(&w, "shape");
        jw_array_begin(&w);
        for (uint32_t d = 0; d < t->n_dims; d++)
            jw_int(&w, t->shape[d]);
        jw_array_end(&w);
        jw_key(&w, "n_elements");
        jw_int(&w, t->n_elements);
        jw_key(&w, "bytes");
        jw_uint(&w, t->n_bytes);
        jw_key(&w, "offset");
        jw_uint(&w, t->offset);
        jw_key(&w, "file_offset");
        jw_uint(&w, t->file_offset);
        jw_object_end(&w);
    }
    jw_array_end(&w);
    type_total totals[VT_DTYPE_COUNT];
    uint64_t bytes;
    sum_types(g, totals, &bytes);
    jw_key(&w, "totals");
    jw_object_begin(&w);
    jw_key(&w, "tensors");
    jw_uint(&w, vt_gguf_tensor_count(g));
    jw_key(&w, "bytes");
    jw_uint(&w, bytes);
    jw_key(&w, "by_type");
    jw_array_begin(&w);
    for (int t = 0; t < VT_DTYPE_COUNT; t++) {
        if (!totals[t].tensors)
            continue;
        jw_object_begin(&w);
        jw_key(&w, "type");
        jw_string(&w, vt_dtype_name(t));
        jw_key(&w, "tensors");
        jw_uint(&w, totals[t].tensors);
        jw_key(&w, "bytes");
        jw_uint(&w, totals[t].bytes);
        jw_object_end(&w);
    }
    jw_array_end(&w);
    jw_object_end(&w);
    jw_object_end(&w);
    jw_finish(&w);
}

int vtctl_cmd_inspect(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"all", no_argument, NULL, 'a'}, {"help", no_argument, NULL, 'h'}, {0}};
    bool json = false, all = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'j')
            json = true;
        else if (c == 'a')
            all = true;
        else if (c == 'h') {
            printf("usage: vtctl inspect FILE.gguf [--all] [--json]\n"
                   "  --all   every array element and whole strings (default: the first %d elements)\n",
                   PREVIEW_ELEMS);
            return VTCTL_EXIT_OK;
        } else
            return vtctl_usage_error("inspect", "unknown option '%s'", argv[optind - 1]);
    }
    if (argc - optind == 0)
        return vtctl_usage_error("inspect", "FILE.gguf is missing");
    if (argc - optind > 1)
        return vtctl_usage_error("inspect", "one FILE.gguf, got %d arguments", argc - optind);
    vt_gguf *g;
    vt_status st = vt_gguf_open(argv[optind], &g);
    if (st != VT_OK) {
        fprintf(stderr, "vtctl inspect: %s: %s\n", vt_status_name(st), vt_last_error());
        return VTCTL_EXIT_REFUSED;
    }
    if (json)
        json_inspect(g, all);
    else
        text_inspect(g, all);
    vt_gguf_close(g);
    return VTCTL_EXIT_OK;
}
