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
    case 10: return run_dt<10>(a, aligned);
    case 11: return run_dt<11>(a, aligned);
    case 13: return run_dt<13>(a, aligned);
    case 23: return run_dt<23>(a, aligned);
    }
    *taken = 0;
    return hipSuccess;
}

} // namespace vt_mmv
