/* record.h - one field list, two renderings. A vtctl command describes its
 * output once, field by field (JSON key, text label, value), and the writer
 * emits either the JSON document (through json_writer) or the command's
 * text, so the two cannot drift: a field, its value and whether the text
 * shows it are written on one line, not in two printers.
 *
 * Text lines are "<indent><label padded to width> <text>" (just
 * "<indent><text>" for the label ""); inside a row (rec_row_begin) a
 * field's text is a cell appended to the row's line. A field whose label
 * is NULL is JSON-only (its value shows inside another field's text); a
 * line without a key (rec_text) is text-only. The *_as variants give a
 * field's text its own printf format; the plain ones print the value. */
#ifndef VT_RECORD_H
#define VT_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json_writer.h"

typedef struct rec_writer {
    json_writer *jw; /* JSON when non-NULL, else text */
    FILE *out;       /* text output */
    int indent;      /* text: spaces before a label */
    int width;       /* text: label column width */
    bool in_row;     /* text: fields are cells of one line (rec_row_begin) */
} rec_writer;

/* Start a command's output on stdout: JSON through jw (initialised here)
 * when json, else text with labels indented by indent, padded to width. */
void rec_start(rec_writer *r, json_writer *jw, bool json, int indent, int width);

/* Finish a command's output (JSON: the document's final newline). */
void rec_finish(rec_writer *r);

/* A text writer to out: labels indented by indent, padded to width. */
void rec_init_text(rec_writer *r, FILE *out, int indent, int width);

/* A JSON writer into jw (owned by the caller, already begun). */
void rec_init_json(rec_writer *r, json_writer *jw);

/* True when r writes JSON. */
bool rec_json(const rec_writer *r);

/* Text: indent and label width of the lines that follow. */
void rec_text_layout(rec_writer *r, int indent, int width);

/* Open a nested object: JSON key: { (key NULL inside an array); text: the
 * heading line (printf format; NULL: none) at the current indent, then the
 * fields are indented two more (the column stays). */
void rec_object_begin(rec_writer *r, const char *key, const char *heading_fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Close what rec_object_begin opened. */
void rec_object_end(rec_writer *r, bool had_heading);

/* Open / close a table row: JSON an object (key NULL inside an array);
 * text one line at the current indent, each field's text a cell appended
 * to it (the label is not shown; NULL still means JSON-only). */
void rec_row_begin(rec_writer *r, const char *key);
void rec_row_end(rec_writer *r);

/* Open / close a JSON array under key (text: nothing; its rows or fields
 * are the text). */
void rec_array_begin(rec_writer *r, const char *key);
void rec_array_end(rec_writer *r);

/* A field whose value the caller renders itself: JSON writes key and
 * returns the writer for the value; text returns NULL and the caller
 * prints the field's text (a cell of the row, or a line) to rec_out(r). */
json_writer *rec_field_json(rec_writer *r, const char *key);

/* Where text goes. */
FILE *rec_out(const rec_writer *r);

/* A text-only line (printf format, newline included by the caller). */
void rec_text(rec_writer *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Fields (rec_str with v NULL is JSON null, text ""). */
void rec_str(rec_writer *r, const char *key, const char *label, const char *v);
void rec_uint(rec_writer *r, const char *key, const char *label, uint64_t v);
void rec_int(rec_writer *r, const char *key, const char *label, int64_t v);
void rec_bool(rec_writer *r, const char *key, const char *label, bool v); /* text: "yes" / "no" */
void rec_double(rec_writer *r, const char *key, const char *label, double v);

/* Fields whose text is its own format (the JSON value is v). */
void rec_str_as(rec_writer *r, const char *key, const char *label, const char *v, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void rec_uint_as(rec_writer *r, const char *key, const char *label, uint64_t v, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void rec_int_as(rec_writer *r, const char *key, const char *label, int64_t v, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void rec_double_as(rec_writer *r, const char *key, const char *label, double v, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void rec_bool_as(rec_writer *r, const char *key, const char *label, bool v, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* A list of strings: a JSON array; text: the items joined by spaces, or
 * empty when there are none. */
void rec_str_list(rec_writer *r, const char *key, const char *label, const char *const *items, size_t n,
                  const char *empty);

/* A list of ints: a JSON array; text: the items joined by sep. */
void rec_int_list(rec_writer *r, const char *key, const char *label, const int32_t *items, size_t n, const char *sep);

#endif
