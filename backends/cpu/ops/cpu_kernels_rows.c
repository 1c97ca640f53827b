/* cpu_kernels_rows.c - kernel rows of the rows family of the catalogue
 * (core/ops/rows.c): the f32 ops over the last axis RmsNorm,
 * L2Norm, GatedRmsNorm, Softmax and Rope. */
#include "config.h"

#include "cpu_ops.h"

#define F32(op, fn)                                                                                                    \
    {                                                                                                                  \
        op, VT_SIG1(VT_F32), fn                                                                                        \
    }

const vt_kernel vt_cpu_kernels_rows[] = {
    F32(VT_OP_RMS_NORM, vt_cpu_rms_norm),
    F32(VT_OP_L2_NORM, vt_cpu_l2_norm),
    F32(VT_OP_GATED_RMS_NORM, vt_cpu_gated_rms_norm),
    F32(VT_OP_SOFTMAX, vt_cpu_softmax),
    F32(VT_OP_ROPE, vt_cpu_rope),
};

const uint32_t vt_cpu_n_kernels_rows = sizeof vt_cpu_kernels_rows / sizeof vt_cpu_kernels_rows[0];
