/* cpu_kernels_elementwise.c - kernel rows of the elementwise family of the catalogue
 * (core/ops/elementwise.c): the f32 ops Add, Mul, Scale, Silu,
 * Gelu, Sigmoid, SwiGlu, GdnGate and MoeCombine. */
#include "config.h"

#include "cpu_ops.h"

#define F32(op, fn)                                                                                                    \
    {                                                                                                                  \
        op, VT_SIG1(VT_F32), fn                                                                                        \
    }

const vt_kernel vt_cpu_kernels_elementwise[] = {
    F32(VT_OP_ADD, vt_cpu_add),       F32(VT_OP_MUL, vt_cpu_mul),           F32(VT_OP_SCALE, vt_cpu_scale),
    F32(VT_OP_SILU, vt_cpu_silu),     F32(VT_OP_GELU, vt_cpu_gelu),         F32(VT_OP_SIGMOID, vt_cpu_sigmoid),
    F32(VT_OP_SWIGLU, vt_cpu_swiglu), F32(VT_OP_GDN_GATE, vt_cpu_gdn_gate), F32(VT_OP_MOE_COMBINE, vt_cpu_moe_combine),
};

const uint32_t vt_cpu_n_kernels_elementwise = sizeof vt_cpu_kernels_elementwise / sizeof vt_cpu_kernels_elementwise[0];
