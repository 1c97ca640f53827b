// kernels_mmv_kq.hip - the decode products over q4_k and q6_k weights
// (kernels_mmv.h), in a translation unit of their own.
#include "kernels_mmv.h"

namespace vt_mmv
{

// Run a when dt is of this family (*taken = 1), else *taken = 0.
hipError_t run_kq(uint32_t dt, const Args &a, bool aligned, int *taken)
{
    *taken = 1;
    switch (dt) {
    case VT_Q4_K: return run_dt<VT_Q4_K>(a, aligned);
    case VT_Q6_K: return run_dt<VT_Q6_K>(a, aligned);
    }
    *taken = 0;
    return hipSuccess;
}

} // namespace vt_mmv
