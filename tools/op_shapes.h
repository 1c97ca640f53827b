/* op_shapes.h - libvt's output shapes (vt_op_output_shapes) over host
 * arrays, for the tools that allocate the outputs of a call: `vtctl op
 * run` and the conformance generators. The core still checks every call;
 * this only proposes the outputs. */
#ifndef VT_OP_SHAPES_H
#define VT_OP_SHAPES_H

#include "host_array.h"

/* Declare (host_array_declare) every output of op that is not INOUT from
 * the inputs in[0..n_in) (absent optional inputs have present false) and
 * the params struct (the op's own size, or NULL when it has none), by
 * vt_op_output_shapes. INOUT outputs (states, caches) are left alone: the
 * caller supplies them. Its status with the reason in why otherwise. */
vt_status op_shapes_infer(uint32_t op, const host_array *in, uint32_t n_in, const void *params, vt_dtype free_dtype,
                          host_array *out, char *why, size_t why_size);

/* True when op leaves an output's dtype to the caller (vt_op_output_dtype_free). */
bool op_shapes_has_free_dtype(uint32_t op);

#endif
