/* op_check.h - operand rules of the catalogue (internal to libvt). */
#ifndef VT_OP_CHECK_H
#define VT_OP_CHECK_H

#include "vt_internal.h"

/* Elements of an operand (product of its shape). */
int64_t vt_operand_elems(const vt_operand *o);

/* True when the call has outputs and every one holds zero elements: there
 * is nothing to compute, and a kernel must not loop over the other dims of
 * an empty operand (a [0, 2^61] tensor is valid and empty). */
bool vt_op_outputs_empty(const vt_op_args *args);

/* Check a call's operand counts, dtypes and shapes against the catalogue
 * and compute its kernel signature. VT_E_SHAPE / VT_E_INVALID_ARG with the
 * reason in why (naming the op and its id) otherwise. */
vt_status vt_op_check(const vt_op_args *args, vt_sig *sig, char *why, size_t why_size);

#endif
