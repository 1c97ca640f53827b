/* record.c - one field list rendered as text or JSON (see record.h). */
#include "config.h"

#include <stdarg.h>
#include <string.h>

#include "record.h"

void rec_start(rec_writer *r, json_writer *jw, bool json, int indent, int width)
{
    if (json) {
        jw_init(jw, stdout);
        rec_init_json(r, jw);
    } else {
        rec_init_text(r, stdout, indent, width);
    }
}

void rec_finish(rec_writer *r)
{
    if (r->jw)
        jw_finish(r->jw);
}

void rec_init_text(rec_writer *r, FILE *out, int indent, int width)
{
    memset(r, 0, sizeof *r);
    r->out = out;
    r->indent = indent;
    r->width = width;
}

void rec_init_json(rec_writer *r, json_writer *jw)
{
    memset(r, 0, sizeof *r);
    r->jw = jw;
    r->out = jw->out;
}

bool rec_json(const rec_writer *r)
{
    return r->jw != NULL;
}

void rec_text_layout(rec_writer *r, int indent, int width)
{
    r->indent = indent;
    r->width = width;
}

/* The text line of a field: label in its column, then the text. */
static void text_line(rec_writer *r, const char *label, const char *fmt, va_list ap)
{
    if (r->in_row) {
        vfprintf(r->out, fmt, ap);
        return;
    }
    fprintf(r->out, "%*s", r->indent, "");
    if (label[0])
        fprintf(r->out, "%-*s ", r->width, label);
    vfprintf(r->out, fmt, ap);
    fputc('\n', r->out);
}

/* JSON: the key (none inside an array). Text: whether the field has a line. */
static bool json_key(rec_writer *r, const char *key)
{
    if (r->jw && key)
        jw_key(r->jw, key);
    return r->jw != NULL;
}

void rec_object_begin(rec_writer *r, const char *key, const char *heading_fmt, ...)
{
    if (json_key(r, key)) {
        jw_object_begin(r->jw);
        return;
    }
    if (!heading_fmt)
        return;
    va_list ap;
    va_start(ap, heading_fmt);
    fprintf(r->out, "%*s", r->indent, "");
    vfprintf(r->out, heading_fmt, ap);
    fputc('\n', r->out);
    va_end(ap);
    r->indent += 2;
    r->width -= 2;
}

void rec_object_end(rec_writer *r, bool had_heading)
{
    if (r->jw) {
        jw_object_end(r->jw);
    } else if (had_heading) {
        r->indent -= 2;
        r->width += 2;
    }
}

void rec_row_begin(rec_writer *r, const char *key)
{
    if (json_key(r, key)) {
        jw_object_begin(r->jw);
        return;
    }
    fprintf(r->out, "%*s", r->indent, "");
    r->in_row = true;
}

void rec_row_end(rec_writer *r)
{
    if (r->jw) {
        jw_object_end(r->jw);
        return;
    }
    fputc('\n', r->out);
    r->in_row = false;
}

void rec_array_begin(rec_writer *r, const char *key)
{
    if (json_key(r, key))
        jw_array_begin(r->jw);
}

void rec_array_end(rec_writer *r)
{
    if (r->jw)
        jw_array_end(r->jw);
}

json_writer *rec_field_json(rec_writer *r, const char *key)
{
    return json_key(r, key) ? r->jw : NULL;
}

FILE *rec_out(const rec_writer *r)
{
    return r->out;
}

void rec_text(rec_writer *r, const char *fmt, ...)
{
    if (r->jw)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(r->out, fmt, ap);
    va_end(ap);
}

/* A field's value, for the one function that writes every field. */
typedef struct rec_value {
    enum { REC_STR, REC_UINT, REC_INT, REC_DOUBLE, REC_BOOL } kind;
    union {
        const char *s;
        uint64_t u;
        int64_t i;
        double d;
        bool b;
    } as;
} rec_value;

/* JSON: key and value; text: the label's line in fmt (none without a label). */
static void field(rec_writer *r, const char *key, const char *label, rec_value v, const char *fmt, va_list ap)
{
    if (!r->jw) {
        if (label)
            text_line(r, label, fmt, ap);
        return;
    }
    json_key(r, key);
    switch (v.kind) {
    case REC_STR: v.as.s ? jw_string(r->jw, v.as.s) : jw_null(r->jw); break;
    case REC_UINT: jw_uint(r->jw, v.as.u); break;
    case REC_INT: jw_int(r->jw, v.as.i); break;
    case REC_DOUBLE: jw_double(r->jw, v.as.d); break;
    case REC_BOOL: jw_bool(r->jw, v.as.b); break;
    }
}

/* The public field functions: each wraps its value and forwards fmt. */
#define REC_FIELD_AS(fn, type, tag, member)                                                                            \
    void fn(rec_writer *r, const char *key, const char *label, type v, const char *fmt, ...)                           \
    {                                                                                                                  \
        va_list ap;                                                                                                    \
        va_start(ap, fmt);                                                                                             \
        field(r, key, label, (rec_value){.kind = tag, .as.member = v}, fmt, ap);                                       \
        va_end(ap);                                                                                                    \
    }
REC_FIELD_AS(rec_str_as, const char *, REC_STR, s)
REC_FIELD_AS(rec_uint_as, uint64_t, REC_UINT, u)
REC_FIELD_AS(rec_int_as, int64_t, REC_INT, i)
REC_FIELD_AS(rec_double_as, double, REC_DOUBLE, d)
REC_FIELD_AS(rec_bool_as, bool, REC_BOOL, b)

void rec_str(rec_writer *r, const char *key, const char *label, const char *v)
{
    rec_str_as(r, key, label, v, "%s", v ? v : "");
}

void rec_uint(rec_writer *r, const char *key, const char *label, uint64_t v)
{
    rec_uint_as(r, key, label, v, "%llu", (unsigned long long)v);
}

void rec_int(rec_writer *r, const char *key, const char *label, int64_t v)
{
    rec_int_as(r, key, label, v, "%lld", (long long)v);
}

void rec_double(rec_writer *r, const char *key, const char *label, double v)
{
    rec_double_as(r, key, label, v, "%g", v);
}

void rec_bool(rec_writer *r, const char *key, const char *label, bool v)
{
    rec_bool_as(r, key, label, v, "%s", v ? "yes" : "no");
}

/* A list of strings (strs) or ints: a JSON array, or the label's line
 * with the items joined by sep (empty when there are none). */
static void list(rec_writer *r, const char *key, const char *label, const char *const *strs, const int32_t *ints,
                 size_t n, const char *sep, const char *empty)
{
    if (json_key(r, key)) {
        jw_array_begin(r->jw);
        for (size_t i = 0; i < n; i++)
            strs ? jw_string(r->jw, strs[i]) : jw_int(r->jw, ints[i]);
        jw_array_end(r->jw);
        return;
    }
    if (!label)
        return;
    fprintf(r->out, "%*s%-*s ", r->indent, "", r->width, label);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? sep : "", r->out);
        strs ? (void)fputs(strs[i], r->out) : (void)fprintf(r->out, "%d", ints[i]);
    }
    fprintf(r->out, "%s\n", n ? "" : empty);
}

void rec_str_list(rec_writer *r, const char *key, const char *label, const char *const *items, size_t n,
                  const char *empty)
{
    list(r, key, label, items, NULL, n, " ", empty);
}

void rec_int_list(rec_writer *r, const char *key, const char *label, const int32_t *items, size_t n, const char *sep)
{
    list(r, key, label, NULL, items, n, sep, "");
}
