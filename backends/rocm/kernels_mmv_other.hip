// kernels_mmv_other.hip - the decode products over the other block formats
// of 32 elements (q4_1, q5_0, q5_1, mxfp4), decoded element by element
// (kernels_mmv.h), in a translation unit of their own.
#include "kernels_mmv.h"

namespace vt_mmv
{

// Run a when dt is of this family (*taken = 1), else *taken = 0.
hipError_t run_other(uint32_t dt, const Args &a, bool aligned, int *taken)
{
    *taken = 1;
    switch (dt) {
    case VT_Q4_1: return run_dt<VT_Q4_1>(a, aligned);
    case VT_Q5_0: return run_dt<VT_Q5_0>(a, aligned);
    case VT_Q5_1: return run_dt<VT_Q5_1>(a, aligned);
    case VT_MXFP4: return run_dt<VT_MXFP4>(a, aligned);
    }
    *taken = 0;
    return hipSuccess;
}

} // namespace vt_mmv
