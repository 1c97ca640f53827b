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
#define TEXT_(x)      #x
#define TEXT(x)       TEXT_(x) /* a number macro as a string literal */

/* Rendered bytes of a string value shown before it is cut (text mode). */
#define PREVIEW_TEXT 96

/* Width of the key column: keys longer than this push their value right. */
#define KEY_WIDTH 40

/* Print s escaped and quoted; at most limit rendered bytes unless all. */
static void print_string(FILE *f, vt_gguf_str s, size_t limit, bool all)
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
    fprintf(f, "\"%s\"", buf);
    if (shown < s.len)
        fprintf(f, " (%" PRIu64 " bytes)", s.len);
    if (buf != small)
        free(buf);
}

static void print_value(FILE *f, const vt_gguf_value *v, size_t text_limit, bool all)
{
    switch (v->type) {
    case VT_GGUF_U8:
    case VT_GGUF_U16:
    case VT_GGUF_U32:
    case VT_GGUF_U64: fprintf(f, "%" PRIu64, v->as.u); break;
    case VT_GGUF_I8:
    case VT_GGUF_I16:
    case VT_GGUF_I32:
    case VT_GGUF_I64: fprintf(f, "%" PRId64, v->as.i); break;
    case VT_GGUF_F32: fprintf(f, "%.9g", v->as.f); break;
    case VT_GGUF_F64: fprintf(f, "%.17g", v->as.f); break;
    case VT_GGUF_BOOL: fprintf(f, "%s", v->as.b ? "true" : "false"); break;
    case VT_GGUF_STRING: print_string(f, v->as.str, text_limit, all); break;
    default: fprintf(f, "?"); break;
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

/* One metadata KV: a row of the metadata table, or a JSON object. */
static void write_kv(rec_writer *r, const vt_gguf *g, const vt_gguf_kv *kv, bool all)
{
    char key[KEY_WIDTH * 4 + 8], type[48];
    vt_gguf_escape(kv->key, kv->key_len, key, sizeof key);
    bool array = kv->type == VT_GGUF_ARRAY;
    if (array)
        snprintf(type, sizeof type, "%s[%" PRIu64 "]", vt_gguf_type_name(kv->elem_type), kv->count);
    else
        snprintf(type, sizeof type, "%s", vt_gguf_type_name(kv->type));
    rec_row_begin(r, NULL);
    rec_str_as(r, "key", "", kv->key, "%-*s ", KEY_WIDTH, key);
    rec_str_as(r, "type", "", vt_gguf_type_name(kv->type), "%-12s ", type);
    rec_uint(r, "offset", NULL, kv->offset);
    vt_gguf_value v;
    json_writer *jw;
    FILE *f = rec_out(r);
    if (!array) {
        bool have = vt_gguf_kv_value(g, kv->index, 0, &v) == VT_OK;
        if ((jw = rec_field_json(r, "value")) != NULL)
            have ? json_value(jw, &v) : jw_null(jw);
        else if (have)
            print_value(f, &v, PREVIEW_TEXT, all);
        rec_row_end(r);
        return;
    }
    uint64_t n = shown_elems(kv, all);
    rec_str(r, "element_type", NULL, vt_gguf_type_name(kv->elem_type));
    rec_uint(r, "count", NULL, kv->count);
    jw = rec_field_json(r, "values");
    if (jw)
        jw_array_begin(jw);
    else
        fputc('[', f);
    for (uint64_t i = 0; i < n && vt_gguf_kv_value(g, kv->index, i, &v) == VT_OK; i++) {
        if (jw) {
            json_value(jw, &v);
        } else {
            fputs(i ? ", " : "", f);
            print_value(f, &v, PREVIEW_TEXT / 3, all);
        }
    }
    if (jw)
        jw_array_end(jw);
    if (n < kv->count)
        rec_uint_as(r, "more", "", kv->count - n, "%s... (%" PRIu64 " more)]", n ? ", " : "", kv->count - n);
    else
        rec_uint_as(r, "more", "", 0, "]");
    rec_row_end(r);
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

/* A tensor's dims: a JSON array of ints, or a text cell "[d0, d1]". */
static void write_dims(rec_writer *r, const char *key, const int64_t *d, uint32_t n)
{
    json_writer *jw = rec_field_json(r, key);
    if (!jw) {
        char buf[128];
        fprintf(rec_out(r), "%-26s ", format_dims(d, n, buf, sizeof buf));
        return;
    }
    jw_array_begin(jw);
    for (uint32_t i = 0; i < n; i++)
        jw_int(jw, d[i]);
    jw_array_end(jw);
}

/* What the file holds, as one record: text or JSON. */
static void write_inspect(rec_writer *r, const vt_gguf *g, bool all)
{
    char human[32];
    rec_object_begin(r, NULL, NULL);
    rec_str_as(r, "file", "", vt_gguf_name(g), "%s: GGUF v%u, %" PRIu64 " bytes (%s)", vt_gguf_name(g),
               vt_gguf_version(g), vt_gguf_file_size(g), vt_format_bytes(vt_gguf_file_size(g), human, sizeof human));
    rec_uint(r, "version", NULL, vt_gguf_version(g));
    rec_uint(r, "file_size", NULL, vt_gguf_file_size(g));
    rec_text_layout(r, 2, 16);
    rec_uint(r, "alignment", "alignment", vt_gguf_alignment(g));
    rec_uint(r, "data_offset", "data offset", vt_gguf_data_offset(g));
    rec_uint_as(r, "data_size", "data size", vt_gguf_data_size(g), "%" PRIu64 " bytes, padded", vt_gguf_data_size(g));
    rec_text_layout(r, 0, 0);
    rec_uint_as(r, "kv_count", "", vt_gguf_kv_count(g), "\nmetadata: %zu keys", vt_gguf_kv_count(g));
    rec_text_layout(r, 2, 0);
    rec_array_begin(r, "metadata");
    for (size_t i = 0; i < vt_gguf_kv_count(g); i++)
        write_kv(r, g, vt_gguf_kv_at(g, i), all);
    rec_array_end(r);

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
    rec_text_layout(r, 0, 0);
    rec_uint_as(r, "tensor_count", "", n, "\ntensors: %zu", n);
    if (n)
        rec_text(r, "  %-*s %-8s %-26s %-26s %14s %14s\n", width, "name", "type", "shape (row-major)",
                 "ne (file order)", "bytes", "file offset");
    rec_text_layout(r, 2, 0);
    rec_array_begin(r, "tensors");
    for (size_t i = 0; i < n; i++) {
        const vt_gguf_tensor *t = vt_gguf_tensor_at(g, i);
        char name[VT_GGUF_MAX_NAME * 4 + 8];
        vt_gguf_escape(t->name, t->name_len, name, sizeof name);
        rec_row_begin(r, NULL);
        rec_str_as(r, "name", "", t->name, "%-*s ", width, name);
        rec_str_as(r, "type", "", vt_dtype_name(t->type), "%-8s ", vt_dtype_name(t->type));
        rec_int(r, "type_id", NULL, t->type);
        rec_uint(r, "n_dims", NULL, t->n_dims);
        write_dims(r, "shape", t->shape, t->n_dims);
        write_dims(r, "ne", t->ne, t->n_dims);
        rec_int(r, "n_elements", NULL, t->n_elements);
        rec_uint_as(r, "bytes", "", t->n_bytes, "%14" PRIu64 " ", t->n_bytes);
        rec_uint(r, "offset", NULL, t->offset);
        rec_uint_as(r, "file_offset", "", t->file_offset, "%14" PRIu64, t->file_offset);
        rec_row_end(r);
    }
    rec_array_end(r);

    type_total totals[VT_DTYPE_COUNT];
    uint64_t bytes;
    sum_types(g, totals, &bytes);
    rec_text_layout(r, 0, 0);
    rec_object_begin(r, "totals", NULL);
    rec_uint_as(r, "tensors", "", n, "\ntotals: %zu tensors, %" PRIu64 " bytes (%s)", n, bytes,
                vt_format_bytes(bytes, human, sizeof human));
    rec_uint(r, "bytes", NULL, bytes);
    rec_text_layout(r, 2, 0);
    rec_array_begin(r, "by_type");
    for (int t = 0; t < VT_DTYPE_COUNT; t++) {
        if (!totals[t].tensors)
            continue;
        rec_row_begin(r, NULL);
        rec_str_as(r, "type", "", vt_dtype_name(t), "%-8s ", vt_dtype_name(t));
        rec_uint_as(r, "tensors", "", totals[t].tensors, "%6" PRIu64 " tensor%s ", totals[t].tensors,
                    totals[t].tensors == 1 ? " " : "s");
        rec_uint_as(r, "bytes", "", totals[t].bytes, "%16" PRIu64 " bytes (%s)", totals[t].bytes,
                    vt_format_bytes(totals[t].bytes, human, sizeof human));
        rec_row_end(r);
    }
    rec_array_end(r);
    rec_object_end(r, false);
    rec_object_end(r, false);
}

int vtctl_cmd_inspect(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"all", no_argument, NULL, 'a'}, {"help", no_argument, NULL, 'h'}, {0}};
    bool json = false, all = false;
    vtctl_opts o = {
        "inspect",
        "usage: vtctl inspect FILE.gguf [--all] [--json]\n"
        "  --all   every array element and whole strings (default: the first " TEXT(PREVIEW_ELEMS) " elements)\n",
        opts, argc, argv};
    int c;
    while ((c = vtctl_option(&o)) > 0) {
        if (c == 'j')
            json = true;
        else if (c == 'a')
            all = true;
    }
    if (c < 0)
        return o.exit_code;
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
    json_writer w;
    rec_writer r;
    rec_start(&r, &w, json, 0, 0);
    write_inspect(&r, g, all);
    rec_finish(&r);
    vt_gguf_close(g);
    return VTCTL_EXIT_OK;
}
