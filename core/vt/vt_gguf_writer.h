/* vt_gguf_writer.h - writing GGUF files (v3 by default, or v2).
 *
 * Collect KVs and tensors, then write the file (or a memory image) in one
 * go: header, KVs in the order added, tensor infos, then each tensor's data
 * aligned to the alignment. The writer only writes valid files: keys are
 * non-empty and unique, names 1..VT_GGUF_MAX_NAME bytes and unique, types
 * in the type table, byte sizes matching the shape; anything else is
 * VT_E_INVALID_ARG at the call that adds it.
 *
 * Ownership: keys, names and KV values are copied at the call. Tensor data
 * is NOT copied: the caller keeps it alive until the last write call. */
#ifndef VT_GGUF_WRITER_H
#define VT_GGUF_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vt/vt_gguf.h>
#include <vt/vt_status.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vt_gguf_writer vt_gguf_writer;

/* A new, empty writer (GGUF v3, alignment 32). Free with vt_gguf_writer_destroy. */
VT_WARN_UNUSED vt_status vt_gguf_writer_create(vt_gguf_writer **out);

/* Free the writer and its copies. NULL is ignored. */
void vt_gguf_writer_destroy(vt_gguf_writer *w);

/* GGUF version written: 2 or 3 (the little-endian layouts are the same). */
VT_WARN_UNUSED vt_status vt_gguf_writer_set_version(vt_gguf_writer *w, uint32_t version);

/* Data alignment: a power of two, 1..VT_GGUF_MAX_ALIGNMENT. Adds (or
 * updates) the general.alignment u32 KV. */
VT_WARN_UNUSED vt_status vt_gguf_writer_set_alignment(vt_gguf_writer *w, uint32_t alignment);

/* Add a scalar KV of any type (not VT_GGUF_ARRAY); a string value may hold
 * any bytes. general.alignment must be a valid u32 (as set_alignment). */
VT_WARN_UNUSED vt_status vt_gguf_writer_add_value(vt_gguf_writer *w, const char *key, const vt_gguf_value *value);

/* Shorthands for vt_gguf_writer_add_value. */
VT_WARN_UNUSED vt_status vt_gguf_writer_add_u32(vt_gguf_writer *w, const char *key, uint32_t v);
VT_WARN_UNUSED vt_status vt_gguf_writer_add_u64(vt_gguf_writer *w, const char *key, uint64_t v);
VT_WARN_UNUSED vt_status vt_gguf_writer_add_i32(vt_gguf_writer *w, const char *key, int32_t v);
VT_WARN_UNUSED vt_status vt_gguf_writer_add_f32(vt_gguf_writer *w, const char *key, float v);
VT_WARN_UNUSED vt_status vt_gguf_writer_add_bool(vt_gguf_writer *w, const char *key, bool v);
VT_WARN_UNUSED vt_status vt_gguf_writer_add_string(vt_gguf_writer *w, const char *key, const char *s);

/* Add an array KV of count elements of elem_type (any type but
 * VT_GGUF_ARRAY). elems is a C array of the element's host type: uint8_t,
 * int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool, vt_gguf_str
 * (strings), uint64_t, int64_t or double. May be NULL when count is 0. */
VT_WARN_UNUSED vt_status vt_gguf_writer_add_array(vt_gguf_writer *w, const char *key, vt_gguf_type elem_type,
                                                  const void *elems, uint64_t count);

/* Add a tensor: ggml type id, n_dims 0..4 and ne in GGUF order (innermost
 * FIRST); n_bytes must equal the size the type table gives. data (borrowed
 * until the last write) may be NULL to write zeros. */
VT_WARN_UNUSED vt_status vt_gguf_writer_add_tensor(vt_gguf_writer *w, const char *name, vt_dtype type, uint32_t n_dims,
                                                   const int64_t *ne, const void *data, uint64_t n_bytes);

/* Bytes the file will have. */
VT_WARN_UNUSED vt_status vt_gguf_writer_size(const vt_gguf_writer *w, uint64_t *size);

/* Write the file at path (created or truncated; removed again on failure). */
VT_WARN_UNUSED vt_status vt_gguf_writer_write_file(const vt_gguf_writer *w, const char *path);

/* Write into a fresh malloc'd buffer: *data is the caller's (free()). */
VT_WARN_UNUSED vt_status vt_gguf_writer_write_memory(const vt_gguf_writer *w, void **data, size_t *size);

#ifdef __cplusplus
}
#endif
#endif /* VT_GGUF_WRITER_H */
