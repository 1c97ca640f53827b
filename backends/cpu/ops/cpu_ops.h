/* cpu_ops.h - the cpu backend's kernels, one function per op family. */
#ifndef VT_CPU_OPS_H
#define VT_CPU_OPS_H

#include <vt/vt_params.h>

#include "cpu_backend.h"

/* Copy (1): cast between f32/f16/bf16, or copy i32. */
vt_status vt_cpu_copy(vt_backend_ctx *ctx, int dev, const vt_op_args *a, char *why, size_t why_size);

/* Add (2): y = a + b, b broadcast over the leading dims of a (f32). */
vt_status vt_cpu_add(vt_backend_ctx *ctx, int dev, const vt_op_args *a, char *why, size_t why_size);

/* MatMul (20): y[n,m] = sum_k x[n,k] * W[m,k]; x f32, W f32/f16/bf16 or q. */
vt_status vt_cpu_matmul(vt_backend_ctx *ctx, int dev, const vt_op_args *a, char *why, size_t why_size);

/* IndexSelect (90): gather along one dim, any plain dtype, i32/i64 indices. */
vt_status vt_cpu_index_select(vt_backend_ctx *ctx, int dev, const vt_op_args *a, char *why, size_t why_size);

/* Elements of an operand. */
static inline int64_t vt_cpu_elems(const vt_operand *o)
{
    int64_t n = 1;
    for (uint32_t i = 0; i < o->ndim; i++)
        n *= o->shape[i];
    return n;
}

/* Element i of a float-typed buffer (f32/f16/bf16) as f32. */
static inline float vt_cpu_load(const void *p, uint32_t dtype, int64_t i)
{
    switch (dtype) {
    case VT_F16: return vt_f16_to_f32(((const uint16_t *)p)[i]);
    case VT_BF16: return vt_bf16_to_f32(((const uint16_t *)p)[i]);
    default: return ((const float *)p)[i];
    }
}

/* Store v as element i of a float-typed buffer (f32/f16/bf16). */
static inline void vt_cpu_store(void *p, uint32_t dtype, int64_t i, float v)
{
    switch (dtype) {
    case VT_F16: ((uint16_t *)p)[i] = vt_f32_to_f16(v); break;
    case VT_BF16: ((uint16_t *)p)[i] = vt_f32_to_bf16(v); break;
    default: ((float *)p)[i] = v; break;
    }
}

#endif
