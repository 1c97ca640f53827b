// kernels_attention_gdn.hip - GatedDeltaRule (SPEC 7, op 32) on the rocm backend.
// The recurrence is independent per column of the state: one thread owns
// column c of S[:, c] for one (sequence, value head), keeps it across the
// tokens (in registers when dk = 128, gdr_cols_kernel) and sums over dk in
// index order, as the cpu oracle does.
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

// The same recurrence for dk = DK known at compile time: one block of
// GDR_COLS threads per (sequence, value head, run of GDR_COLS columns),
// the state columns in registers, each token's normalised q and k staged
// once per block in shared memory (the L2 norms summed as a tree there).
#define GDR_COLS 32
template <int DK>
__global__ void gdr_cols_kernel(const float *q, const float *k, const float *v, const float *g, const float *beta,
                                const int32_t *slots, const int32_t *accepted, int per_token, float *o, float *state,
                                int64_t T, int64_t H, int64_t HV, int64_t dv, int l2norm)
{
    __shared__ float qn[DK], kn[DK], red[2 * GDR_COLS];
    const int64_t groups = (dv + GDR_COLS - 1) / GDR_COLS;
    const int64_t grp = blockIdx.x % groups, hv = (blockIdx.x / groups) % HV, b = blockIdx.x / (groups * HV);
    const int64_t h = hv / (HV / H), c = grp * GDR_COLS + threadIdx.x;
    const bool col = c < dv;
    const float qscale = 1.0f / sqrtf((float)DK);
    int32_t rs = per_token ? slots[b * T + accepted[b] - 1] : slots[b];
    if (rs < 0) { // padding row: zero outputs, no state read or written
        for (int64_t t = 0; col && t < T; t++)
            o[((b * T + t) * HV + hv) * dv + c] = 0.0f;
        return;
    }
    float S[DK];
    const float *src = state + ((int64_t)rs * HV + hv) * DK * dv;
#pragma unroll
    for (int i = 0; i < DK; i++)
        S[i] = col ? src[i * dv + c] : 0.0f;
    for (int64_t t = 0; t < T; t++) {
        int64_t bt = b * T + t;
        const float *qv = q + (bt * H + h) * DK, *kv = k + (bt * H + h) * DK;
        float qs = 0.0f, ks = 0.0f;
        for (int i = threadIdx.x; i < DK; i += GDR_COLS) {
            float a = qv[i], bk = kv[i];
            qn[i] = a;
            kn[i] = bk;
            qs += a * a;
            ks += bk * bk;
        }
        float qinv = 1.0f, kinv = 1.0f;
        if (l2norm) {
            red[threadIdx.x] = qs;
            red[GDR_COLS + threadIdx.x] = ks;
            __syncthreads();
            for (int st = GDR_COLS / 2; st > 0; st >>= 1) {
                if ((int)threadIdx.x < st) {
                    red[threadIdx.x] += red[threadIdx.x + st];
                    red[GDR_COLS + threadIdx.x] += red[GDR_COLS + threadIdx.x + st];
                }
                __syncthreads();
            }
            qinv = 1.0f / sqrtf(red[0] + 1e-6f);
            kinv = 1.0f / sqrtf(red[GDR_COLS] + 1e-6f);
        }
        __syncthreads();
        for (int i = threadIdx.x; i < DK; i += GDR_COLS) {
            qn[i] = (qn[i] * qinv) * qscale;
            kn[i] = kn[i] * kinv;
        }
        __syncthreads();
        float decay = expf(g[bt * HV + hv]), bb = beta[bt * HV + hv];
        float sk = 0.0f;
#pragma unroll
        for (int i = 0; i < DK; i++) {
            S[i] = S[i] * decay;
            sk += S[i] * kn[i];
        }
        float u = bb * ((col ? v[(bt * HV + hv) * dv + c] : 0.0f) - sk);
        float out = 0.0f;
#pragma unroll
        for (int i = 0; i < DK; i++) {
            S[i] += kn[i] * u;
            out += S[i] * qn[i];
        }
        if (col)
            o[(bt * HV + hv) * dv + c] = out;
        if (per_token && col) {
            int32_t ws = slots[bt];
            if (ws >= 0) {
                float *dst = state + ((int64_t)ws * HV + hv) * DK * dv;
#pragma unroll
                for (int i = 0; i < DK; i++)
                    dst[i * dv + c] = S[i];
            }
        }
        __syncthreads(); // qn, kn are rewritten for the next token
    }
    if (!per_token && col) {
        float *dst = state + ((int64_t)rs * HV + hv) * DK * dv;
#pragma unroll
        for (int i = 0; i < DK; i++)
            dst[i * dv + c] = S[i];
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
    if (dk == 128) {
        int64_t blocks = B * HV * ((dv + GDR_COLS - 1) / GDR_COLS);
        hipLaunchKernelGGL(gdr_cols_kernel<128>, dim3((unsigned)blocks), dim3(GDR_COLS), 0, stream, q, k, v, g, beta,
                           slots, accepted, per_token, o, state, T, H, HV, dv, l2norm);
        return hipGetLastError();
    }
    hipLaunchKernelGGL(gdr_kernel, dim3(vt_grid_for(total, 128)), dim3(128), 0, stream, q, k, v, g, beta, slots,
                       accepted, per_token, o, state, B, T, H, HV, dk, dv, l2norm);
    return hipGetLastError();
}
