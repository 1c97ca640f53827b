// kernels_probe.hip - does this binary hold device code for the current
// GPU? Every .hip file of the plugin is compiled for the same targets
// (--with-hip-arch), so one kernel's attributes answer for all of them:
// hipErrorNoBinaryForGpu (NVIDIA: cudaErrorNoKernelImageForDevice) when the
// fat binary has no code object for the device's arch.
#include "rocm_device.h"

namespace
{

__global__ void code_object_probe_kernel(int *flag)
{
    if (flag)
        *flag = 1;
}

} // namespace

// The runtime's answer for the current device: hipSuccess when the binary
// holds code for it. Launches nothing.
extern "C" hipError_t vt_rocm_code_object_status(void)
{
    hipFuncAttributes attr;
    hipError_t e = hipFuncGetAttributes(&attr, reinterpret_cast<const void *>(&code_object_probe_kernel));
    if (e != hipSuccess)
        (void)hipGetLastError(); // the answer is the result, not a pending error
    return e;
}
