// kernels_mmv_q8.hip - the decode products over q8_0 weights
// (kernels_mmv.h), in a translation unit of their own.
#include "kernels_mmv.h"

namespace vt_mmv
{

// Run a when dt is of this family (*taken = 1), else *taken = 0.
hipError_t run_q8(uint32_t dt, const Args &a, bool aligned, int *taken)
{
    *taken = 1;
    switch (dt) {
    case VT_Q8_0: return run_dt<VT_Q8_0>(a, aligned);
    }
    *taken = 0;
    return hipSuccess;
}

} // namespace vt_mmv
