/* record.c - one field list rendered as text or JSON (see record.h). */
#include "config.h"

#include <stdarg.h>
#include <string.h>

#include "record.h"

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

void rec_text(rec_writer *r, const char *fmt, ...)
{
    if (r->jw)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(r->out, fmt, ap);
    va_end(ap);
}

/* The text of a field in its own format, when it has a label. */
#define TEXT_AS(r, label, fmt)                                                                                         \
    do {                                                                                                               \
        if (label) {                                                                                                   \
            va_list ap;                                                                                                \
            va_start(ap, fmt);                                                                                         \
            text_line(r, label, fmt, ap);                                                                              \
            va_end(ap);                                                                                                \
        }                                                                                                              \
    } while (0)

/* The text of a field printed plainly. */
static void text_plain(rec_writer *r, const char *label, const char *fmt, ...)
{
    TEXT_AS(r, label, fmt);
}

void rec_str(rec_writer *r, const char *key, const char *label, const char *v)
{
    if (json_key(r, key))
        jw_string(r->jw, v);
    else
        text_plain(r, label, "%s", v);
}

void rec_uint(rec_writer *r, const char *key, const char *label, uint64_t v)
{
    if (json_key(r, key))
        jw_uint(r->jw, v);
    else
        text_plain(r, label, "%llu", (unsigned long long)v);
}

void rec_int(rec_writer *r, const char *key, const char *label, int64_t v)
{
    if (json_key(r, key))
        jw_int(r->jw, v);
    else
        text_plain(r, label, "%lld", (long long)v);
}

void rec_bool(rec_writer *r, const char *key, const char *label, bool v)
{
    if (json_key(r, key))
        jw_bool(r->jw, v);
    else
        text_plain(r, label, "%s", v ? "yes" : "no");
}

void rec_double(rec_writer *r, const char *key, const char *label, double v)
{
    if (json_key(r, key))
        jw_double(r->jw, v);
    else
        text_plain(r, label, "%g", v);
}

void rec_str_as(rec_writer *r, const char *key, const char *label, const char *v, const char *fmt, ...)
{
    if (json_key(r, key))
        jw_string(r->jw, v);
    else
        TEXT_AS(r, label, fmt);
}

void rec_uint_as(rec_writer *r, const char *key, const char *label, uint64_t v, const char *fmt, ...)
{
    if (json_key(r, key))
        jw_uint(r->jw, v);
    else
        TEXT_AS(r, label, fmt);
}

void rec_int_as(rec_writer *r, const char *key, const char *label, int64_t v, const char *fmt, ...)
{
    if (json_key(r, key))
        jw_int(r->jw, v);
    else
        TEXT_AS(r, label, fmt);
}

void rec_double_as(rec_writer *r, const char *key, const char *label, double v, const char *fmt, ...)
{
    if (json_key(r, key))
        jw_double(r->jw, v);
    else
        TEXT_AS(r, label, fmt);
}

void rec_bool_as(rec_writer *r, const char *key, const char *label, bool v, const char *fmt, ...)
{
    if (json_key(r, key))
        jw_bool(r->jw, v);
    else
        TEXT_AS(r, label, fmt);
}

void rec_str_list(rec_writer *r, const char *key, const char *label, const char *const *items, size_t n,
                  const char *empty)
{
    if (json_key(r, key)) {
        jw_array_begin(r->jw);
        for (size_t i = 0; i < n; i++)
            jw_string(r->jw, items[i]);
        jw_array_end(r->jw);
        return;
    }
    if (!label)
        return;
    fprintf(r->out, "%*s%-*s ", r->indent, "", r->width, label);
    for (size_t i = 0; i < n; i++)
        fprintf(r->out, "%s%s", i ? " " : "", items[i]);
    fprintf(r->out, "%s\n", n ? "" : empty);
}

void rec_int_list(rec_writer *r, const char *key, const char *label, const int32_t *items, size_t n, const char *sep)
{
    if (json_key(r, key)) {
        jw_array_begin(r->jw);
        for (size_t i = 0; i < n; i++)
            jw_int(r->jw, items[i]);
        jw_array_end(r->jw);
        return;
    }
    if (!label)
        return;
    fprintf(r->out, "%*s%-*s ", r->indent, "", r->width, label);
    for (size_t i = 0; i < n; i++)
        fprintf(r->out, "%s%d", i ? sep : "", items[i]);
    fputc('\n', r->out);
}
