/* cpu_kernels_select.c - kernel rows of the select family of the catalogue
 * (core/ops/select.c): MoeRouter, TopK, Argmax and Sample
 * (f32). */
#include "config.h"

#include "cpu_ops.h"

#define F32(op, fn)                                                                                                    \
    {                                                                                                                  \
        op, VT_SIG1(VT_F32), fn                                                                                        \
    }

const vt_kernel vt_cpu_kernels_select[] = {
    F32(VT_OP_MOE_ROUTER, vt_cpu_moe_router),
    F32(VT_OP_TOPK, vt_cpu_topk),
    F32(VT_OP_ARGMAX, vt_cpu_argmax),
    F32(VT_OP_SAMPLE, vt_cpu_sample),
};

const uint32_t vt_cpu_n_kernels_select = sizeof vt_cpu_kernels_select / sizeof vt_cpu_kernels_select[0];
