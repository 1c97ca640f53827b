/* cpu_kernels_conv.c - kernel rows of the conv family of the catalogue
 * (core/ops/conv.c): the causal depthwise convolutions
 * CausalConv1dSpecUpdate, CausalConv1d and CausalConv1dUpdate (f32). */
#include "config.h"

#include "cpu_ops.h"

#define F32(op, fn)                                                                                                    \
    {                                                                                                                  \
        op, VT_SIG1(VT_F32), fn                                                                                        \
    }

const vt_kernel vt_cpu_kernels_conv[] = {
    F32(VT_OP_CAUSAL_CONV1D_SPEC_UPDATE, vt_cpu_conv_spec_update),
    F32(VT_OP_CAUSAL_CONV1D, vt_cpu_conv),
    F32(VT_OP_CAUSAL_CONV1D_UPDATE, vt_cpu_conv_update),
};

const uint32_t vt_cpu_n_kernels_conv = sizeof vt_cpu_kernels_conv / sizeof vt_cpu_kernels_conv[0];
