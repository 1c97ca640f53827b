/* npy.h - NumPy .npy files for vtctl op run: format versions 1.0, 2.0 and
 * 3.0, little-endian, C order. Element types: '<f4' f32, '<f2' f16, '<i4'
 * i32, '<i8' i64, plus '<f8' f64, '|i1' i8, '<i2' i16 and '|u1' (raw bytes,
 * for block formats named with --in-dtype). Anything else (big-endian,
 * Fortran order, structured or other types, more than 4 dims) is refused
 * by name. */
#ifndef VT_NPY_H
#define VT_NPY_H

#include "host_array.h"

/* dtype of a '|u1' array as read: raw bytes (not a vt dtype). */
#define NPY_RAW_BYTES VT_DTYPE_COUNT

/* Read path into *out (a fresh array the caller frees). Raw '|u1' data
 * comes back with dtype NPY_RAW_BYTES. VT_E_IO when the file cannot be
 * read, VT_E_BAD_FILE for a malformed one, VT_E_UNSUPPORTED for a layout
 * or type this reader refuses; why names the file, the field and the
 * byte offset. */
vt_status npy_read(const char *path, host_array *out, char *why, size_t why_size);

/* Write a as a version 1.0 .npy file. f32, f16, f64, i8, i16, i32 and i64
 * are written as they are; bf16 is widened to '<f4' (exactly). VT_E_IO or
 * VT_E_UNSUPPORTED with the reason in why. */
vt_status npy_write(const char *path, const host_array *a, char *why, size_t why_size);

/* Parse the header dictionary text of a .npy file (exposed for tests):
 * descr, fortran_order and shape. False with the reason in why. */
bool npy_parse_header(const char *text, size_t len, char *descr, size_t descr_size, bool *fortran, uint32_t *ndim,
                      int64_t *shape, char *why, size_t why_size);

#endif
