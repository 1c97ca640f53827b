/* json_writer.c - streaming, escaping JSON writer (see json_writer.h). */
#include "config.h"

#include <math.h>
#include <string.h>

#include <vt/vt_utf8.h>

#include "json_writer.h"

void jw_init(json_writer *w, FILE *out)
{
    memset(w, 0, sizeof *w);
    w->out = out;
}

static void indent(json_writer *w)
{
    fputc('\n', w->out);
    for (int i = 0; i < w->depth; i++)
        fputs("  ", w->out);
}

/* Separator and indentation before a value or key at the current depth. */
static void before_item(json_writer *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (w->depth > 0) {
        if (w->has_items[w->depth])
            fputc(',', w->out);
        indent(w);
        w->has_items[w->depth] = true;
    }
}

static void open_(json_writer *w, char c)
{
    before_item(w);
    fputc(c, w->out);
    if (w->depth + 1 < JW_MAX_DEPTH)
        w->depth++;
    w->has_items[w->depth] = false;
}

static void close_(json_writer *w, char c)
{
    bool had = w->has_items[w->depth];
    if (w->depth > 0)
        w->depth--;
    if (had)
        indent(w);
    fputc(c, w->out);
}

void jw_object_begin(json_writer *w)
{
    open_(w, '{');
}
void jw_object_end(json_writer *w)
{
    close_(w, '}');
}
void jw_array_begin(json_writer *w)
{
    open_(w, '[');
}
void jw_array_end(json_writer *w)
{
    close_(w, ']');
}

void jw_write_escaped(FILE *out, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', out);
    for (size_t i = 0; i < n;) {
        unsigned c = p[i];
        if (c == '"' || c == '\\') {
            fputc('\\', out);
            fputc((int)c, out);
            i++;
        } else if (c == '\n') {
            fputs("\\n", out);
            i++;
        } else if (c == '\t') {
            fputs("\\t", out);
            i++;
        } else if (c == '\r') {
            fputs("\\r", out);
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            fprintf(out, "\\u%04x", c);
            i++;
        } else {
            size_t len = vt_utf8_decode(p + i, n - i, NULL);
            if (len == 0) {
                fputs("\\ufffd", out); /* invalid UTF-8 byte */
                i++;
            } else {
                fwrite(p + i, 1, len, out);
                i += len;
            }
        }
    }
    fputc('"', out);
}

void jw_key(json_writer *w, const char *key)
{
    before_item(w);
    jw_write_escaped(w->out, key, strlen(key));
    fputs(": ", w->out);
    w->after_key = true;
}

void jw_string_n(json_writer *w, const char *s, size_t n)
{
    before_item(w);
    jw_write_escaped(w->out, s, n);
}

void jw_string(json_writer *w, const char *s)
{
    if (!s) {
        jw_null(w);
        return;
    }
    jw_string_n(w, s, strlen(s));
}

void jw_uint(json_writer *w, uint64_t v)
{
    before_item(w);
    fprintf(w->out, "%llu", (unsigned long long)v);
}

void jw_int(json_writer *w, int64_t v)
{
    before_item(w);
    fprintf(w->out, "%lld", (long long)v);
}

void jw_double(json_writer *w, double v)
{
    before_item(w);
    if (isfinite(v))
        fprintf(w->out, "%.17g", v);
    else
        fputs("null", w->out);
}

void jw_bool(json_writer *w, bool v)
{
    before_item(w);
    fputs(v ? "true" : "false", w->out);
}

void jw_null(json_writer *w)
{
    before_item(w);
    fputs("null", w->out);
}

void jw_finish(json_writer *w)
{
    fputc('\n', w->out);
    fflush(w->out);
}
