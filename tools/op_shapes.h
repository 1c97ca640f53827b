/* op_shapes.h - the dtypes and shapes of an op's outputs, derived from its
 * inputs and params (SPEC 7), for callers that must allocate the outputs
 * of a call: `vtctl op run` and the conformance generators. The core
 * still checks every call; this only proposes the outputs. */
#ifndef VT_OP_SHAPES_H
#define VT_OP_SHAPES_H

#include "host_array.h"

/* Declare (host_array_declare) every output of op that is not INOUT from
 * the inputs in[0..n_in) (absent optional inputs have present false) and
 * the params struct. free_dtype is the dtype of an output the catalogue
 * leaves to the caller (Copy's dst, GetRows' dst, Dequantize's dst).
 * INOUT outputs (states, caches) are left alone: the caller supplies them.
 * VT_E_INVALID_ARG with the reason in why when a needed input is absent,
 * VT_E_UNSUPPORTED for an op this file does not know. */
vt_status op_shapes_infer(uint32_t op, const host_array *in, uint32_t n_in, const void *params, vt_dtype free_dtype,
                          host_array *out, char *why, size_t why_size);

/* True when op leaves an output's dtype to the caller (see free_dtype). */
bool op_shapes_has_free_dtype(uint32_t op);

#endif
