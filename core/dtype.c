/* dtype.c - the one type table: every ggml type id with its block size. */
#include "config.h"

#include <ctype.h>
#include <stdio.h>

#include "vt_internal.h"
#include <vt/vt_blocks.h>

/* A block format of VT_Q_FORMATS: its geometry from vt_blocks.h. */
#define Q_ROW(id, f) [id] = {#f, VT_BLK_##f##_ELEMS, VT_BLK_##f##_BYTES, true, false, false},

/* name, block elements, block bytes, quantized, float, int */
/* clang-format off */
static const vt_dtype_info table[VT_DTYPE_COUNT] = {
    VT_Q_FORMATS(Q_ROW)
    [VT_F32] = {"f32", 1, 4, false, true, false},
    [VT_F16] = {"f16", 1, 2, false, true, false},
    [VT_Q8_1] = {"q8_1", 32, 36, true, false, false},
    [VT_Q8_K] = {"q8_k", 256, 292, true, false, false},
    [VT_IQ2_XXS] = {"iq2_xxs", 256, 66, true, false, false},
    [VT_IQ2_XS] = {"iq2_xs", 256, 74, true, false, false},
    [VT_IQ3_XXS] = {"iq3_xxs", 256, 98, true, false, false},
    [VT_IQ1_S] = {"iq1_s", 256, 50, true, false, false},
    [VT_IQ3_S] = {"iq3_s", 256, 110, true, false, false},
    [VT_IQ2_S] = {"iq2_s", 256, 82, true, false, false},
    [VT_I8] = {"i8", 1, 1, false, false, true},
    [VT_I16] = {"i16", 1, 2, false, false, true},
    [VT_I32] = {"i32", 1, 4, false, false, true},
    [VT_I64] = {"i64", 1, 8, false, false, true},
    [VT_F64] = {"f64", 1, 8, false, true, false},
    [VT_IQ1_M] = {"iq1_m", 256, 56, true, false, false},
    [VT_BF16] = {"bf16", 1, 2, false, true, false},
    [VT_TQ1_0] = {"tq1_0", 256, 54, true, false, false},
    [VT_TQ2_0] = {"tq2_0", 256, 66, true, false, false},
};
/* clang-format on */

bool vt_dtype_is_removed(vt_dtype id)
{
    return id == 4 || id == 5 || (id >= 31 && id <= 33) || (id >= 36 && id <= 38);
}

const vt_dtype_info *vt_dtype_get(vt_dtype id)
{
    if (id < 0 || id >= VT_DTYPE_COUNT || !table[id].name)
        return NULL;
    return &table[id];
}

const char *vt_dtype_name(vt_dtype id)
{
    static _Thread_local char buf[32];
    const vt_dtype_info *info = vt_dtype_get(id);
    if (info)
        return info->name;
    snprintf(buf, sizeof buf, "%s(%d)", vt_dtype_is_removed(id) ? "removed" : "unknown", id);
    return buf;
}

bool vt_dtype_from_name(const char *name, vt_dtype *out)
{
    if (!name)
        return false;
    for (vt_dtype id = 0; id < VT_DTYPE_COUNT; id++) {
        const char *n = table[id].name;
        if (!n)
            continue;
        size_t i = 0;
        while (n[i] && name[i] && tolower((unsigned char)name[i]) == n[i])
            i++;
        if (!n[i] && !name[i]) {
            *out = id;
            return true;
        }
    }
    return false;
}

uint32_t vt_dtype_alignment(vt_dtype id)
{
    const vt_dtype_info *info = vt_dtype_get(id);
    return !info ? 0 : info->quantized ? 2u : info->block_bytes;
}

bool vt_dtype_row_bytes(vt_dtype id, int64_t n, uint64_t *bytes)
{
    const vt_dtype_info *info = vt_dtype_get(id);
    if (!info || n < 0 || (uint64_t)n % info->block_elems != 0)
        return false;
    uint64_t blocks = (uint64_t)n / info->block_elems;
    if (blocks > UINT64_MAX / info->block_bytes)
        return false;
    *bytes = blocks * info->block_bytes;
    return true;
}

vt_size_result vt_dtype_shape_size(vt_dtype id, uint32_t ndim, const int64_t *shape, int64_t *elems, uint64_t *bytes)
{
    const vt_dtype_info *info = vt_dtype_get(id);
    if (!info || ndim > 8 || (ndim && !shape))
        return VT_SIZE_BAD_TYPE;
    bool zero = false;
    for (uint32_t d = 0; d < ndim; d++) {
        if (shape[d] < 0)
            return VT_SIZE_NEGATIVE;
        zero |= shape[d] == 0;
    }
    int64_t n = 1;
    for (uint32_t d = 0; d < ndim; d++) {
        int64_t dim = shape[d] ? shape[d] : 1;
        if (dim > INT64_MAX / n)
            return VT_SIZE_ELEMENTS_OVERFLOW;
        n *= dim;
    }
    int64_t inner = ndim ? shape[ndim - 1] : 1;
    if (inner % info->block_elems != 0)
        return VT_SIZE_NOT_BLOCKS;
    uint64_t blocks = (uint64_t)(inner ? inner : info->block_elems) / info->block_elems;
    if (blocks > UINT64_MAX / info->block_bytes)
        return VT_SIZE_BYTES_OVERFLOW;
    uint64_t total = blocks * info->block_bytes;
    for (uint32_t d = 0; d + 1 < ndim; d++) {
        uint64_t dim = shape[d] ? (uint64_t)shape[d] : 1;
        if (total > UINT64_MAX / dim)
            return VT_SIZE_BYTES_OVERFLOW;
        total *= dim;
    }
    if (elems)
        *elems = zero ? 0 : n;
    if (bytes)
        *bytes = zero ? 0 : total;
    return VT_SIZE_OK;
}

bool vt_dtype_tensor_bytes(vt_dtype id, uint32_t ndim, const int64_t *shape, uint64_t *bytes)
{
    return ndim <= VT_MAX_DIMS && vt_dtype_shape_size(id, ndim, shape, NULL, bytes) == VT_SIZE_OK;
}
