// kernels_mmv_dense.hip - the decode products over f32, f16 and bf16 weights
// (kernels_mmv.h), in a translation unit of their own.
#include "kernels_mmv.h"

namespace vt_mmv
{

// Run a when dt is of this family (*taken = 1), else *taken = 0.
hipError_t run_dense(uint32_t dt, const Args &a, bool aligned, int *taken)
{
    *taken = 1;
    switch (dt) {
    case VT_F32: return run_dt<VT_F32>(a, aligned);
    case VT_F16: return run_dt<VT_F16>(a, aligned);
    case VT_BF16: return run_dt<VT_BF16>(a, aligned);
    }
    *taken = 0;
    return hipSuccess;
}

} // namespace vt_mmv
