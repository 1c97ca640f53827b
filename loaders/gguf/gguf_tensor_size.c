/* gguf_tensor_size.c - a tensor's element count and byte size from its
 * GGUF ne[] and type, with the overflow rules shared by parser and writer. */
#include "config.h"

#include "gguf_internal.h"

/* The GGUF order (ne[0] innermost) turned row-major for the one size rule,
 * vt_dtype_shape_size, whose reasons map one to one. */
gguf_size_result gguf_tensor_size(int type, uint32_t n_dims, const int64_t *ne, int64_t *n_elements, uint64_t *n_bytes)
{
    if (n_dims > VT_GGUF_MAX_DIMS)
        return GGUF_SIZE_BAD_TYPE;
    int64_t shape[VT_GGUF_MAX_DIMS];
    for (uint32_t d = 0; d < n_dims; d++)
        shape[d] = ne[n_dims - 1 - d];
    switch (vt_dtype_shape_size(type, n_dims, shape, n_elements, n_bytes)) {
    case VT_SIZE_OK: return GGUF_SIZE_OK;
    case VT_SIZE_NEGATIVE: return GGUF_SIZE_NEGATIVE;
    case VT_SIZE_ELEMENTS_OVERFLOW: return GGUF_SIZE_ELEMENTS_OVERFLOW;
    case VT_SIZE_NOT_BLOCKS: return GGUF_SIZE_NOT_BLOCKS;
    case VT_SIZE_BYTES_OVERFLOW: return GGUF_SIZE_BYTES_OVERFLOW;
    default: return GGUF_SIZE_BAD_TYPE;
    }
}
