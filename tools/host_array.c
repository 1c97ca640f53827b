/* host_array.c - host arrays with a vt dtype and shape (host_array.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_array.h"

int64_t host_array_elems(const host_array *a)
{
    int64_t n = 1;
    for (uint32_t i = 0; i < a->ndim; i++)
        n *= a->shape[i];
    return n;
}

void host_array_declare(host_array *a, vt_dtype dtype, uint32_t ndim, const int64_t *shape)
{
    memset(a, 0, sizeof *a);
    a->present = true;
    a->dtype = dtype;
    a->ndim = ndim > VT_MAX_DIMS ? VT_MAX_DIMS : ndim;
    for (uint32_t i = 0; i < a->ndim; i++)
        a->shape[i] = shape[i];
}

vt_status host_array_alloc(host_array *a, vt_dtype dtype, uint32_t ndim, const int64_t *shape)
{
    memset(a, 0, sizeof *a);
    uint64_t bytes = 0;
    if (ndim > VT_MAX_DIMS || !vt_dtype_tensor_bytes(dtype, ndim, shape, &bytes) || bytes > SIZE_MAX - 1)
        return VT_E_INVALID_ARG;
    host_array_declare(a, dtype, ndim, shape);
    a->data = calloc(1, (size_t)bytes + 1);
    if (!a->data) {
        memset(a, 0, sizeof *a);
        return VT_E_NO_MEMORY;
    }
    a->nbytes = (size_t)bytes;
    return VT_OK;
}

void host_array_free(host_array *a)
{
    free(a->data);
    memset(a, 0, sizeof *a);
}

vt_status host_array_copy(host_array *dst, const host_array *src)
{
    *dst = *src;
    dst->data = NULL;
    if (!src->data)
        return VT_OK;
    dst->data = malloc(src->nbytes + 1);
    if (!dst->data) {
        memset(dst, 0, sizeof *dst);
        return VT_E_NO_MEMORY;
    }
    memcpy(dst->data, src->data, src->nbytes);
    return VT_OK;
}

const char *host_array_shape_str(const host_array *a, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "[");
    for (uint32_t i = 0; i < a->ndim && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? "," : "", (long long)a->shape[i]);
    if (used < size)
        snprintf(buf + used, size - used, "]");
    return buf;
}

double host_array_get_f(const host_array *a, int64_t i)
{
    switch (a->dtype) {
    case VT_F16: return vt_f16_to_f32(((const uint16_t *)a->data)[i]);
    case VT_BF16: return vt_bf16_to_f32(((const uint16_t *)a->data)[i]);
    case VT_F64: return ((const double *)a->data)[i];
    default: return ((const float *)a->data)[i];
    }
}

int64_t host_array_get_i(const host_array *a, int64_t i)
{
    switch (a->dtype) {
    case VT_I8: return ((const int8_t *)a->data)[i];
    case VT_I16: return ((const int16_t *)a->data)[i];
    case VT_I64: return ((const int64_t *)a->data)[i];
    default: return ((const int32_t *)a->data)[i];
    }
}
