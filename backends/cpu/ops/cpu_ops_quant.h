/* cpu_ops_quant.h - the cpu backend's block-format kernels: Dequantize,
 * GetRows and MoeExpertMatMul (MatMul over q weights is vt_cpu_matmul in
 * cpu_ops.h). */
#ifndef VT_CPU_OPS_QUANT_H
#define VT_CPU_OPS_QUANT_H

#include "cpu_backend.h"

/* Dequantize (41): a whole q tensor to f32/f16/bf16 (exact decode, then
 * round to nearest even for f16/bf16). */
vt_status vt_cpu_dequantize(vt_backend_ctx *ctx, int dev, const vt_op_args *a, char *why, size_t why_size);

/* GetRows (40): dst[i] = table[idx[i]] decoded to f32/f16; every index is
 * checked before anything is written. */
vt_status vt_cpu_get_rows(vt_backend_ctx *ctx, int dev, const vt_op_args *a, char *why, size_t why_size);

/* MoeExpertMatMul (23): y[t,i] = W[ids[t,i]] . x[t] (or x[t,i]); every id
 * is checked before anything is written. */
vt_status vt_cpu_moe_expert_matmul(vt_backend_ctx *ctx, int dev, const vt_op_args *a, char *why, size_t why_size);

#endif
