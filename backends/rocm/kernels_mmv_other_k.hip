// kernels_mmv_other_k.hip - the decode products over the other block
// formats of 256 elements (q2_k, q3_k, q5_k, iq4_xs), decoded element by
// element (kernels_mmv.h), in a translation unit of their own.
#include "kernels_mmv.h"

namespace vt_mmv
{

// Run a when dt is of this family (*taken = 1), else *taken = 0.
hipError_t run_other_k(uint32_t dt, const Args &a, bool aligned, int *taken)
{
    *taken = 1;
    switch (dt) {
    case VT_Q2_K: return run_dt<VT_Q2_K>(a, aligned);
    case VT_Q3_K: return run_dt<VT_Q3_K>(a, aligned);
    case VT_Q5_K: return run_dt<VT_Q5_K>(a, aligned);
    case VT_IQ4_XS: return run_dt<VT_IQ4_XS>(a, aligned);
    }
    *taken = 0;
    return hipSuccess;
}

} // namespace vt_mmv
