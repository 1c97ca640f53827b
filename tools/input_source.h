/* input_source.h - where `vtctl op run --in NAME=SOURCE` reads an array
 * from. A source is chosen by the form of SOURCE; each kind is one loader
 * function in the table of input_source.c:
 *   FILE.npy            a NumPy array (npy.h)
 *   FILE.gguf:TENSOR    a tensor of a GGUF file, in its own type (block
 *                       formats included) and row-major shape
 * To add a kind, write its loader and add one row to that table. */
#ifndef VT_INPUT_SOURCE_H
#define VT_INPUT_SOURCE_H

#include "host_array.h"

/* Load SOURCE into *out (a fresh array the caller frees). Block formats may
 * come back as raw bytes (npy.h's NPY_RAW_BYTES) until --in-dtype names
 * them. VT_E_UNSUPPORTED for a kind this build cannot read, with why
 * saying so; other statuses from the loader. */
vt_status input_source_load(const char *source, host_array *out, char *why, size_t why_size);

#endif
