/* gguf_tensor_size.c - a tensor's element count and byte size from its
 * GGUF ne[] and type, with the overflow rules shared by parser and writer. */
#include "config.h"

#include "gguf_internal.h"

/* Every overflow check counts a zero dim as 1: a shape is refused when it
 * would overflow whatever its zero dims, so the result does not depend on
 * the order of the products, and vt_dtype_tensor_bytes (any order) agrees
 * on every shape accepted here. */
gguf_size_result gguf_tensor_size(int type, uint32_t n_dims, const int64_t *ne, int64_t *n_elements, uint64_t *n_bytes)
{
    const vt_dtype_info *info = vt_dtype_get(type);
    if (!info || n_dims > VT_GGUF_MAX_DIMS)
        return GGUF_SIZE_BAD_TYPE;
    int64_t dims[VT_GGUF_MAX_DIMS] = {1, 1, 1, 1};
    bool zero = false;
    for (uint32_t d = 0; d < n_dims; d++) {
        if (ne[d] < 0)
            return GGUF_SIZE_NEGATIVE;
        dims[d] = ne[d];
        zero |= ne[d] == 0;
    }
    int64_t n = 1;
    for (uint32_t d = 0; d < VT_GGUF_MAX_DIMS; d++) {
        int64_t dim = dims[d] ? dims[d] : 1;
        if (dim > INT64_MAX / n)
            return GGUF_SIZE_ELEMENTS_OVERFLOW;
        n *= dim;
    }
    if (dims[0] % info->block_elems != 0)
        return GGUF_SIZE_NOT_BLOCKS;
    /* (ne0/blck)*type_size*ne1*ne2*ne3 */
    uint64_t blocks = (uint64_t)dims[0] / info->block_elems;
    if (blocks > UINT64_MAX / info->block_bytes)
        return GGUF_SIZE_BYTES_OVERFLOW;
    uint64_t bytes = blocks * info->block_bytes;
    for (uint32_t d = 1; d < VT_GGUF_MAX_DIMS; d++) {
        uint64_t dim = dims[d] ? (uint64_t)dims[d] : 1;
        if (bytes > UINT64_MAX / dim)
            return GGUF_SIZE_BYTES_OVERFLOW;
        bytes *= dim;
    }
    *n_elements = zero ? 0 : n;
    *n_bytes = zero ? 0 : bytes;
    return GGUF_SIZE_OK;
}
