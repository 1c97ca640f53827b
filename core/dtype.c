/* dtype.c - the one type table: every ggml type id with its block size. */
#include "config.h"

#include <ctype.h>
#include <stdio.h>

#include "vt_internal.h"

/* name, block elements, block bytes, quantized, float, int */
static const vt_dtype_info table[VT_DTYPE_COUNT] = {
    [VT_F32] = {"f32", 1, 4, false, true, false},
    [VT_F16] = {"f16", 1, 2, false, true, false},
    [VT_Q4_0] = {"q4_0", 32, 18, true, false, false},
    [VT_Q4_1] = {"q4_1", 32, 20, true, false, false},
    [VT_Q5_0] = {"q5_0", 32, 22, true, false, false},
    [VT_Q5_1] = {"q5_1", 32, 24, true, false, false},
    [VT_Q8_0] = {"q8_0", 32, 34, true, false, false},
    [VT_Q8_1] = {"q8_1", 32, 36, true, false, false},
    [VT_Q2_K] = {"q2_k", 256, 84, true, false, false},
    [VT_Q3_K] = {"q3_k", 256, 110, true, false, false},
    [VT_Q4_K] = {"q4_k", 256, 144, true, false, false},
    [VT_Q5_K] = {"q5_k", 256, 176, true, false, false},
    [VT_Q6_K] = {"q6_k", 256, 210, true, false, false},
    [VT_Q8_K] = {"q8_k", 256, 292, true, false, false},
    [VT_IQ2_XXS] = {"iq2_xxs", 256, 66, true, false, false},
    [VT_IQ2_XS] = {"iq2_xs", 256, 74, true, false, false},
    [VT_IQ3_XXS] = {"iq3_xxs", 256, 98, true, false, false},
    [VT_IQ1_S] = {"iq1_s", 256, 50, true, false, false},
    [VT_IQ4_NL] = {"iq4_nl", 32, 18, true, false, false},
    [VT_IQ3_S] = {"iq3_s", 256, 110, true, false, false},
    [VT_IQ2_S] = {"iq2_s", 256, 82, true, false, false},
    [VT_IQ4_XS] = {"iq4_xs", 256, 136, true, false, false},
    [VT_I8] = {"i8", 1, 1, false, false, true},
    [VT_I16] = {"i16", 1, 2, false, false, true},
    [VT_I32] = {"i32", 1, 4, false, false, true},
    [VT_I64] = {"i64", 1, 8, false, false, true},
    [VT_F64] = {"f64", 1, 8, false, true, false},
    [VT_IQ1_M] = {"iq1_m", 256, 56, true, false, false},
    [VT_BF16] = {"bf16", 1, 2, false, true, false},
    [VT_TQ1_0] = {"tq1_0", 256, 54, true, false, false},
    [VT_TQ2_0] = {"tq2_0", 256, 66, true, false, false},
    [VT_MXFP4] = {"mxfp4", 32, 17, true, false, false},
};

bool vt_dtype_is_removed(int id)
{
    return id == 4 || id == 5 || (id >= 31 && id <= 33) || (id >= 36 && id <= 38);
}

const vt_dtype_info *vt_dtype_get(int id)
{
    if (id < 0 || id >= VT_DTYPE_COUNT || !table[id].name)
        return NULL;
    return &table[id];
}

const char *vt_dtype_name(int id)
{
    static _Thread_local char buf[32];
    const vt_dtype_info *info = vt_dtype_get(id);
    if (info)
        return info->name;
    snprintf(buf, sizeof buf, "%s(%d)", vt_dtype_is_removed(id) ? "removed" : "unknown", id);
    return buf;
}

int vt_dtype_from_name(const char *name)
{
    if (!name)
        return -1;
    for (int id = 0; id < VT_DTYPE_COUNT; id++) {
        const char *n = table[id].name;
        if (!n)
            continue;
        size_t i = 0;
        while (n[i] && name[i] && tolower((unsigned char)name[i]) == n[i])
            i++;
        if (!n[i] && !name[i])
            return id;
    }
    return -1;
}

bool vt_dtype_row_bytes(int id, int64_t n, uint64_t *bytes)
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

bool vt_dtype_tensor_bytes(int id, uint32_t ndim, const int64_t *shape, uint64_t *bytes)
{
    if (ndim > VT_MAX_DIMS)
        return false;
    uint64_t total;
    if (ndim == 0)
        return vt_dtype_row_bytes(id, 1, bytes);
    if (!vt_dtype_row_bytes(id, shape[ndim - 1], &total))
        return false;
    for (uint32_t i = 0; i + 1 < ndim; i++) {
        if (shape[i] < 0)
            return false;
        uint64_t d = (uint64_t)shape[i];
        if (d != 0 && total > UINT64_MAX / d)
            return false;
        total *= d;
    }
    *bytes = total;
    return true;
}
