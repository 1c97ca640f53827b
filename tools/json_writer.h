/* json_writer.h - a small streaming JSON writer for vtctl --json output.
 * Pretty-printed, two-space indent; strings escaped (control bytes and
 * invalid UTF-8 become \u escapes), so text from files is always safe. */
#ifndef VT_JSON_WRITER_H
#define VT_JSON_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JW_MAX_DEPTH 32

typedef struct json_writer {
    FILE *out;
    int depth;
    bool has_items[JW_MAX_DEPTH]; /* an item was written at this depth */
    bool after_key;               /* the next value follows "key": */
} json_writer;

/* Start writing to out. */
void jw_init(json_writer *w, FILE *out);

/* Open / close an object or array (as a value or after a key). */
void jw_object_begin(json_writer *w);
void jw_object_end(json_writer *w);
void jw_array_begin(json_writer *w);
void jw_array_end(json_writer *w);

/* Write a key inside an object; the next call writes its value. */
void jw_key(json_writer *w, const char *key);

/* Values. */
void jw_string(json_writer *w, const char *s);
void jw_string_n(json_writer *w, const char *s, size_t n);
void jw_uint(json_writer *w, uint64_t v);
void jw_int(json_writer *w, int64_t v);
void jw_double(json_writer *w, double v);
void jw_bool(json_writer *w, bool v);
void jw_null(json_writer *w);

/* Finish the document with a newline. */
void jw_finish(json_writer *w);

/* Write s to out as a JSON string literal (with quotes). */
void jw_write_escaped(FILE *out, const char *s, size_t n);

#endif
