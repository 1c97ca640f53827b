// kernels_gdn.hip - GatedDeltaRule (SPEC 7, op 32) on the rocm backend.
// The recurrence is independent per column of the state: one thread owns
// column c of S[:, c] for one (sequence, value head), keeps it in local
// memory across the tokens, and sums over dk in index order, as the cpu
// oracle does.
#include "rocm_device.h"
#include "rocm_launch.h"

namespace
{

__global__ void gdr_kernel(const float *q, const float *k, const float *v, const float *g, const float *beta,
                           const int32_t *slots, const int32_t *accepted, int per_token, float *o, float *state,
                           int64_t B, int64_t T, int64_t H, int64_t HV, int64_t dk, int64_t dv, int l2norm)
{
    float S[VT_ROCM_GDR_MAX_DK];
    int64_t total = B * HV * dv, stride = (int64_t)gridDim.x * blockDim.x;
    const float qscale = 1.0f / sqrtf((float)dk);
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
        int64_t c = e % dv, hv = (e / dv) % HV, b = e / (dv * HV), h = hv / (HV / H);
        int32_t rs = per_token ? slots[b * T + accepted[b] - 1] : slots[b];
        if (rs < 0) { // padding row: zero outputs, no state read or written
            for (int64_t t = 0; t < T; t++)
                o[((b * T + t) * HV + hv) * dv + c] = 0.0f;
            continue;
        }
        const float *src = state + ((int64_t)rs * HV + hv) * dk * dv;
        for (int64_t i = 0; i < dk; i++)
            S[i] = src[i * dv + c];
        for (int64_t t = 0; t < T; t++) {
            int64_t bt = b * T + t;
            const float *qv = q + (bt * H + h) * dk, *kv = k + (bt * H + h) * dk;
            float qinv = 1.0f, kinv = 1.0f;
            if (l2norm) {
                float qs = 0.0f, ks = 0.0f;
                for (int64_t i = 0; i < dk; i++) {
                    qs += qv[i] * qv[i];
                    ks += kv[i] * kv[i];
                }
                qinv = 1.0f / sqrtf(qs + 1e-6f);
                kinv = 1.0f / sqrtf(ks + 1e-6f);
            }
            float decay = expf(g[bt * HV + hv]), bb = beta[bt * HV + hv];
            float sk = 0.0f;
            for (int64_t i = 0; i < dk; i++) {
                S[i] = S[i] * decay;
                sk += S[i] * (kv[i] * kinv);
            }
            float u = bb * (v[(bt * HV + hv) * dv + c] - sk);
            float out = 0.0f;
            for (int64_t i = 0; i < dk; i++) {
                S[i] += (kv[i] * kinv) * u;
                out += S[i] * ((qv[i] * qinv) * qscale);
            }
            o[(bt * HV + hv) * dv + c] = out;
            if (per_token) {
                int32_t ws = slots[bt];
                if (ws >= 0) {
                    float *dst = state + ((int64_t)ws * HV + hv) * dk * dv;
                    for (int64_t i = 0; i < dk; i++)
                        dst[i * dv + c] = S[i];
                }
            }
        }
        if (!per_token) {
            float *dst = state + ((int64_t)rs * HV + hv) * dk * dv;
            for (int64_t i = 0; i < dk; i++)
                dst[i * dv + c] = S[i];
        }
    }
}

} // namespace

extern "C" hipError_t vt_rocm_launch_gated_delta(const float *q, const float *k, const float *v, const float *g,
                                                 const float *beta, const int32_t *slots, const int32_t *accepted,
                                                 int per_token, float *o, float *state, int64_t B, int64_t T, int64_t H,
                                                 int64_t HV, int64_t dk, int64_t dv, int l2norm, hipStream_t stream)
{
    int64_t total = B * HV * dv;
    if (total <= 0 || T <= 0)
        return hipSuccess;
    hipLaunchKernelGGL(gdr_kernel, dim3(vt_grid_for(total, 128)), dim3(128), 0, stream, q, k, v, g, beta, slots,
                       accepted, per_token, o, state, B, T, H, HV, dk, dv, l2norm);
    return hipGetLastError();
}
