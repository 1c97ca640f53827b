/* vt_tensor.h - tensors on a device, and running one op.
 *
 * A vt_tensor is a contiguous row-major array in one device's memory. The
 * caller owns each tensor it creates and destroys it before the registry
 * is closed. Data moves only through vt_tensor_write / vt_tensor_read (and
 * the async copies of vt_queue.h), so the same code works for
 * host-addressable and discrete devices. */
#ifndef VT_TENSOR_H
#define VT_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vt/vt_backend.h>
#include <vt/vt_dtype.h>
#include <vt/vt_op.h>
#include <vt/vt_registry.h>
#include <vt/vt_status.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vt_tensor vt_tensor;

/* Allocate a tensor of dtype and shape (ndim <= 4, innermost last) on dev.
 * The contents are undefined. *out is owned by the caller. */
VT_WARN_UNUSED vt_status vt_tensor_create(vt_device *dev, vt_dtype dtype, uint32_t ndim, const int64_t *shape,
                                          vt_tensor **out);

/* A tensor over host memory the caller owns, e.g. a file mapping or a
 * buffer from vt_device_host_alloc: dtype and shape as vt_tensor_create,
 * data holding vt_dtype_tensor_bytes of them and outliving the tensor
 * (vt_tensor_destroy never frees it). Only on a host-addressable device
 * (vt_device_caps.host_addressable: its kernels read host memory), else
 * VT_E_UNSUPPORTED naming the device; the device's latest probe answers,
 * so a device already probed is not probed again. read_only refuses
 * writes into it. *out is owned by the caller. */
vt_status vt_tensor_wrap(vt_device *dev, vt_dtype dtype, uint32_t ndim, const int64_t *shape, void *data,
                         bool read_only, vt_tensor **out);

/* Free a tensor. NULL is ignored. */
void vt_tensor_destroy(vt_tensor *t);

/* Copy nbytes (must equal vt_tensor_nbytes) from host memory into t. */
VT_WARN_UNUSED vt_status vt_tensor_write(vt_tensor *t, const void *src, size_t nbytes);

/* Copy nbytes from host memory into t at byte offset (bounds-checked). */
VT_WARN_UNUSED vt_status vt_tensor_write_at(vt_tensor *t, uint64_t offset, const void *src, size_t nbytes);

/* Copy the whole tensor (nbytes must equal vt_tensor_nbytes) to host memory. */
VT_WARN_UNUSED vt_status vt_tensor_read(const vt_tensor *t, void *dst, size_t nbytes);

/* Bytes of the tensor's data. */
uint64_t vt_tensor_nbytes(const vt_tensor *t);

/* Element type. */
vt_dtype vt_tensor_dtype(const vt_tensor *t);

/* Number of dims. */
uint32_t vt_tensor_ndim(const vt_tensor *t);

/* Extent of dim i (0 = outermost); 0 when i >= ndim. */
int64_t vt_tensor_dim(const vt_tensor *t, uint32_t i);

/* The device the tensor lives on. */
vt_device *vt_tensor_device(const vt_tensor *t);

/* Check a call's operand counts, dtypes, shapes and params against the
 * catalogue without running it, e.g. before allocating its tensors: a
 * present operand has a non-NULL data pointer (never read); give nbytes 0
 * to skip the overlap rule. VT_OK, or the catalogue's refusal with its
 * reason in vt_last_error(). */
VT_WARN_UNUSED vt_status vt_op_check_args(const vt_op_args *args);

/* The dtypes and shapes of a call's outputs as the catalogue derives them
 * from its inputs and params (SPEC 7), for a caller that allocates the
 * outputs before the call. in[0..n_in) describes the inputs (dtype, ndim,
 * shape; a present operand has a non-NULL data pointer, never read; NULL
 * marks an absent optional input); params is the op's params struct of
 * params_size bytes (NULL, 0 when it has none). For every output that is
 * not INOUT, out[i].dtype, ndim and shape are set (data and nbytes are
 * left alone); INOUT outputs (states, caches) are the caller's and are
 * not touched. free_dtype is the dtype of the output the op leaves to the
 * caller (vt_op_output_dtype_free), ignored by other ops. n_out must be the
 * op's output count. The shapes are a proposal: vt_op_run still checks the
 * call. VT_OK; VT_E_NOT_FOUND for an op not in the catalogue;
 * VT_E_INVALID_ARG when a required input or the params are missing or an
 * input's rank leaves no shape to derive; the reason in vt_last_error(). */
vt_status vt_op_output_shapes(vt_op op, const vt_operand *in, uint32_t n_in, const void *params, size_t params_size,
                              vt_dtype free_dtype, vt_operand *out, uint32_t n_out);

/* True when op leaves an output's dtype to the caller (Copy's and
 * Dequantize's dst, GetRows' dst): the free_dtype of vt_op_output_shapes. */
bool vt_op_output_dtype_free(vt_op op);

/* Run op on dev over inputs in[0..n_in) and outputs out[0..n_out), all on
 * dev (an absent optional input is NULL). params is the op's params struct
 * or NULL. The op is resolved first (SPEC 5, with the registry's tier
 * policy); a refusal returns VT_E_OP_MISSING with the reason in
 * vt_last_error and touches nothing. Then it is vt_op_enqueue on the
 * device's default queue and vt_queue_synchronize (vt_queue.h): an error
 * the kernel finds in the data comes back named, "GetRows (40) on rocm:0:
 * idx[1] = 7 is outside [0, 3)". */
VT_WARN_UNUSED vt_status vt_op_run(vt_device *dev, vt_op op, const vt_tensor *const *in, uint32_t n_in,
                                   vt_tensor *const *out, uint32_t n_out, const void *params, size_t params_size);

#ifdef __cplusplus
}
#endif
#endif /* VT_TENSOR_H */
