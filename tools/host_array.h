/* host_array.h - an array in host memory with a vt dtype and shape: what
 * vtctl's loaders read, what the conformance runner generates, and what
 * comes back from a device. */
#ifndef VT_HOST_ARRAY_H
#define VT_HOST_ARRAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vt/vt.h>

/* One array. Zero-initialised it is absent and owns nothing. */
typedef struct host_array {
    bool present;               /* false: an absent optional operand */
    vt_dtype dtype;             /* any vt dtype, block formats included */
    uint32_t ndim;              /* 0..VT_MAX_DIMS */
    int64_t shape[VT_MAX_DIMS]; /* row-major, innermost last */
    void *data;                 /* nbytes of malloc'd memory owned by the array, or NULL */
    size_t nbytes;
} host_array;

/* Product of the shape (1 for 0 dims). */
int64_t host_array_elems(const host_array *a);

/* Make a present array of dtype and shape with zeroed data (the shape's
 * innermost dim must hold whole blocks). VT_E_INVALID_ARG for a bad
 * shape, VT_E_NO_MEMORY when the allocation fails. */
vt_status host_array_alloc(host_array *a, vt_dtype dtype, uint32_t ndim, const int64_t *shape);

/* Set dtype and shape only (present, no data). */
void host_array_declare(host_array *a, vt_dtype dtype, uint32_t ndim, const int64_t *shape);

/* Free the data and reset to absent. */
void host_array_free(host_array *a);

/* Deep copy of src into *dst (which owns nothing yet). */
vt_status host_array_copy(host_array *dst, const host_array *src);

/* "[2,3,4]" into buf; returns buf. */
const char *host_array_shape_str(const host_array *a, char *buf, size_t size);

/* Element i of a float array (f32/f16/bf16/f64) as double. */
double host_array_get_f(const host_array *a, int64_t i);

/* Element i of an integer array (i8/i16/i32/i64) as int64. */
int64_t host_array_get_i(const host_array *a, int64_t i);

#endif
