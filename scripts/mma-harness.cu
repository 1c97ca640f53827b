// mma-harness.cu - the matrix-instruction decode MatMul (kernels_mmv_mma.hip)
// against a cpu f64 reference and against kernels_mmv.h's v2 kernels in the
// same run, standalone (no plugin):
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -x cu -DVT_HIP_PLATFORM_NVIDIA \
//        -I backends/rocm -I core -I . scripts/mma-harness.cu -o mma-harness
//   mma-harness          odd shapes (n = 1..9, m and k tails), then timings
//   mma-harness check    the odd shapes at n = 1, 3, 9 (for compute-sanitizer)
//   mma-harness time     timings only (m = 4096, k = 14336, n = 1, 2, 4, 8)
//   mma-harness prof     one launch per format at n = 1 and 8 (for ncu)
//   NW=8 mma-harness ... the warps per block forced
//
// Outputs are poisoned before each run; a second run must give the same
// bits; rel err = |y - ref| / |ref| (big shapes: every 7th row).
#define VT_MMA_HARNESS 1
#include "kernels_mmv.h"
#include "kernels_mmv_mma.hip"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <vector>
#include <algorithm>
#include <random>

namespace vt_mmv
{
int host_wave()
{
    return 32;
}
} // namespace vt_mmv

#define CK(x)                                                                                                          \
    do {                                                                                                               \
        cudaError_t e_ = (x);                                                                                          \
        if (e_ != cudaSuccess) {                                                                                       \
            printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__);                                               \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

// f16 bits -> float.
static float h2f(uint16_t h)
{
    __half_raw r;
    r.x = h;
    return __half2float(__half(r));
}
// float -> f16 bits (nearest).
static uint16_t f2h(float f)
{
    __half_raw r = __half(f);
    return r.x;
}
// IQ4_NL's code book.
static const int iq4[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// Bytes and elements per block, and the name, of the formats tested.
static int blk_bytes(int dt)
{
    return dt == 2 || dt == 20 ? 18 : dt == 8 ? 34 : 144;
}
static int blk_elems(int dt)
{
    return dt == 12 ? 256 : 32;
}
static const char *name(int dt)
{
    return dt == 2 ? "q4_0" : dt == 8 ? "q8_0" : dt == 20 ? "iq4_nl" : "q4_k";
}

// Decode one row (independent of the kernels' code).
static void decode_row(int dt, const uint8_t *r, int64_t k, std::vector<double> &out)
{
    out.resize(k);
    const int be = blk_elems(dt), bb = blk_bytes(dt);
    for (int64_t b = 0; b < k / be; b++) {
        const uint8_t *p = r + b * bb;
        double *o = &out[b * be];
        if (dt == 2 || dt == 20) {
            double d = h2f(p[0] | p[1] << 8);
            for (int i = 0; i < 16; i++) {
                int lo = p[2 + i] & 15, hi = p[2 + i] >> 4;
                o[i] = d * (dt == 2 ? lo - 8 : iq4[lo]);
                o[i + 16] = d * (dt == 2 ? hi - 8 : iq4[hi]);
            }
        } else if (dt == 8) {
            double d = h2f(p[0] | p[1] << 8);
            for (int i = 0; i < 32; i++)
                o[i] = d * (int8_t)p[2 + i];
        } else {
            double d = h2f(p[0] | p[1] << 8), dmin = h2f(p[2] | p[3] << 8);
            const uint8_t *sc = p + 4, *q = p + 16;
            for (int s = 0; s < 8; s++) {
                int scv, mv;
                if (s < 4) {
                    scv = sc[s] & 63;
                    mv = sc[s + 4] & 63;
                } else {
                    scv = (sc[s + 4] & 0xF) | ((sc[s - 4] >> 6) << 4);
                    mv = (sc[s + 4] >> 4) | ((sc[s] >> 6) << 4);
                }
                for (int l = 0; l < 32; l++) {
                    int qq = (q[32 * (s / 2) + l] >> (4 * (s & 1))) & 15;
                    o[32 * s + l] = d * scv * qq - dmin * mv;
                }
            }
        }
    }
}

// Random blocks with small finite scales.
static void fill_weights(int dt, uint8_t *w, int64_t m, int64_t k, std::mt19937 &rng)
{
    const int be = blk_elems(dt), bb = blk_bytes(dt);
    const int64_t nb = m * (k / be);
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_real_distribution<float> sc(0.001f, 0.02f);
    for (int64_t b = 0; b < nb; b++) {
        uint8_t *p = w + b * bb;
        for (int i = 0; i < bb; i++)
            p[i] = (uint8_t)byte(rng);
        uint16_t d = f2h(sc(rng) * (byte(rng) & 1 ? -1 : 1));
        p[0] = d & 255, p[1] = d >> 8;
        if (dt == 12) {
            uint16_t dm = f2h(sc(rng));
            p[2] = dm & 255, p[3] = dm >> 8;
        }
    }
}

// The copy whose read + write bandwidth is the reference.
__global__ void copy_kernel(const float4 *a, float4 *b, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        b[i] = a[i];
}

// The v2 kernels (kernels_mmv.h) and the mma path of one format.
template <uint32_t DT>
cudaError_t run_v2(const float *x, const uint8_t *w, int64_t rb, float *y, int64_t n, int64_t m, int64_t k)
{
    return vt_mmv::launch_mmv<DT>(x, w, rb, y, n, m, k, 0, true);
}
static cudaError_t v2(int dt, const float *x, const uint8_t *w, int64_t rb, float *y, int64_t n, int64_t m, int64_t k)
{
    switch (dt) {
    case 2: return run_v2<2>(x, w, rb, y, n, m, k);
    case 8: return run_v2<8>(x, w, rb, y, n, m, k);
    case 12: return run_v2<12>(x, w, rb, y, n, m, k);
    default: return run_v2<20>(x, w, rb, y, n, m, k);
    }
}
static cudaError_t mma(int dt, const float *x, const uint8_t *w, int64_t rb, float *y, int64_t n, int64_t m, int64_t k,
                       int *taken)
{
    vt_mmv::Args a = {x, 0, w, rb, nullptr, y, n, 1, m, k, 0};
    return vt_mmv::run_mma(dt, a, taken);
}

// Copy bandwidth of this run (GB/s, read + write).
static double copy_gbs;

// Correctness (and timing when timed) of one shape.
static int one(int dt, int64_t m, int64_t k, int64_t n, bool timed, std::mt19937 &rng)
{
    const int64_t rb = k / blk_elems(dt) * blk_bytes(dt);
    const int sets = timed ? 4 : 1;
    std::vector<uint8_t> hw(m * rb);
    fill_weights(dt, hw.data(), m, k, rng);
    std::vector<float> hx(n * k);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (auto &v : hx)
        v = nd(rng);
    for (int i = 0; i < 8; i++)
        hx[rng() % hx.size()] *= 60.0f; /* outliers */
    for (int64_t i = 0; i < k / 32; i += 17)
        for (int j = 0; j < 32; j++)
            hx[i * 32 + j] *= 1e-3f; /* small blocks */
    uint8_t *dw;
    float *dx, *dy;
    CK(cudaMalloc(&dw, sets * m * rb));
    CK(cudaMalloc(&dx, n * k * 4));
    CK(cudaMalloc(&dy, n * m * 4));
    for (int s = 0; s < sets; s++)
        CK(cudaMemcpy(dw + s * m * rb, hw.data(), m * rb, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dx, hx.data(), n * k * 4, cudaMemcpyHostToDevice));
    // reference
    std::vector<double> ref(n * m), row;
    const int64_t rstep = m > 2000 ? 7 : 1; /* big shapes: every 7th row checked */
    for (int64_t r = 0; r < m; r += rstep) {
        decode_row(dt, hw.data() + r * rb, k, row);
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t i = 0; i < k; i++)
                s += row[i] * hx[j * k + i];
            ref[j * m + r] = s;
        }
    }
    int bad = 0;
    double errs[2];
    for (int path = 0; path < 2; path++) {
        CK(cudaMemset(dy, 0xFF, n * m * 4));
        int taken = 1;
        if (path == 0)
            CK(mma(dt, dx, dw, rb, dy, n, m, k, &taken));
        else
            CK(v2(dt, dx, dw, rb, dy, n, m, k));
        CK(cudaDeviceSynchronize());
        if (!taken) {
            printf("  mma not taken!\n");
            bad++;
            errs[path] = -1;
            continue;
        }
        std::vector<float> hy(n * m);
        CK(cudaMemcpy(hy.data(), dy, n * m * 4, cudaMemcpyDeviceToHost));
        double num = 0, den = 0;
        int nan = 0;
        for (int64_t i = 0; i < n * m; i++) {
            if (i % m % rstep) {
                if (!std::isfinite(hy[i]))
                    nan++;
                continue;
            }
            if (!std::isfinite(hy[i]))
                nan++;
            double d = hy[i] - ref[i];
            num += d * d;
            den += ref[i] * ref[i];
        }
        errs[path] = nan ? INFINITY : sqrt(num / den);
        if (!(errs[path] <= 1e-4))
            bad++;
        // determinism
        if (path == 0) {
            std::vector<float> hy2(n * m);
            CK(cudaMemset(dy, 0xFF, n * m * 4));
            CK(mma(dt, dx, dw, rb, dy, n, m, k, &taken));
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(hy2.data(), dy, n * m * 4, cudaMemcpyDeviceToHost));
            if (memcmp(hy.data(), hy2.data(), n * m * 4)) {
                printf("  NONDETERMINISTIC\n");
                bad++;
            }
        }
    }
    printf("%-6s m=%-5lld k=%-6lld n=%lld  relerr mma %.3g v2 %.3g %s", name(dt), (long long)m, (long long)k,
           (long long)n, errs[0], errs[1], bad ? "FAIL" : "ok");
    if (timed) {
        cudaEvent_t ev[201];
        for (auto &e : ev)
            CK(cudaEventCreate(&e));
        double med[2];
        for (int path = 0; path < 2; path++) {
            int taken;
            for (int i = 0; i < 20; i++) {
                if (path == 0)
                    mma(dt, dx, dw + (i % sets) * m * rb, rb, dy, n, m, k, &taken);
                else
                    v2(dt, dx, dw + (i % sets) * m * rb, rb, dy, n, m, k);
            }
            CK(cudaEventRecord(ev[0]));
            for (int i = 0; i < 200; i++) {
                if (path == 0)
                    mma(dt, dx, dw + (i % sets) * m * rb, rb, dy, n, m, k, &taken);
                else
                    v2(dt, dx, dw + (i % sets) * m * rb, rb, dy, n, m, k);
                CK(cudaEventRecord(ev[i + 1]));
            }
            CK(cudaEventSynchronize(ev[200]));
            std::vector<float> t(200);
            for (int i = 0; i < 200; i++) {
                CK(cudaEventElapsedTime(&t[i], ev[i], ev[i + 1]));
                t[i] *= 1000;
            }
            std::sort(t.begin(), t.end());
            med[path] = t[100];
        }
        const double bytes = (double)m * rb;
        printf("  mma %.2f us (%.0f GB/s, %.0f%% of copy)  v2 %.2f us  ratio v2/mma %.2f", med[0], bytes / med[0] / 1e3,
               100.0 * bytes / med[0] / 1e3 / copy_gbs, med[1], med[1] / med[0]);
        for (auto &e : ev)
            cudaEventDestroy(e);
    }
    printf("\n");
    CK(cudaFree(dw));
    CK(cudaFree(dx));
    CK(cudaFree(dy));
    return bad;
}

// Modes: see the top of the file.
int main(int argc, char **argv)
{
    std::mt19937 rng(1234);
    if (getenv("NW"))
        vt_mmv::vt_mma_nw_override = atoi(getenv("NW"));
    const bool prof = argc > 1 && !strcmp(argv[1], "prof");
    if (prof) { /* one launch of each format at n = 1, 8 for ncu */
        for (int dt : {2, 8, 20, 12})
            for (int n : {1, 8}) {
                int64_t m = 4096, k = 14336, rb = k / blk_elems(dt) * blk_bytes(dt);
                uint8_t *dw;
                float *dx, *dy;
                int taken;
                CK(cudaMalloc(&dw, m * rb));
                CK(cudaMalloc(&dx, n * k * 4));
                CK(cudaMalloc(&dy, n * m * 4));
                CK(cudaMemset(dw, 0x11, m * rb));
                CK(cudaMemset(dx, 0, n * k * 4));
                CK(mma(dt, dx, dw, rb, dy, n, m, k, &taken));
                CK(v2(dt, dx, dw, rb, dy, n, m, k));
                CK(cudaDeviceSynchronize());
                cudaFree(dw);
                cudaFree(dx);
                cudaFree(dy);
            }
        return 0;
    }
    { /* copy bandwidth: read + write bytes over time, 1 GiB */
        size_t bytes = 1ull << 29;
        float4 *a, *b;
        CK(cudaMalloc(&a, bytes));
        CK(cudaMalloc(&b, bytes));
        cudaEvent_t e0, e1;
        cudaEventCreate(&e0);
        cudaEventCreate(&e1);
        copy_kernel<<<132 * 8, 512>>>(a, b, bytes / 16);
        cudaEventRecord(e0);
        for (int i = 0; i < 10; i++)
            copy_kernel<<<132 * 8, 512>>>(a, b, bytes / 16);
        cudaEventRecord(e1);
        CK(cudaEventSynchronize(e1));
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        copy_gbs = 2.0 * bytes * 10 / (ms * 1e-3) / 1e9;
        printf("copy bandwidth (read+write) %.0f GB/s\n", copy_gbs);
        cudaFree(a);
        cudaFree(b);
    }
    int bad = 0;
    const bool check = argc > 1 && !strcmp(argv[1], "check");
    const bool time_only = argc > 1 && !strcmp(argv[1], "time");
    /* correctness over odd shapes */
    for (int dt : {2, 8, 20, 12})
        for (int n : {1, 2, 3, 4, 5, 8, 9}) {
            if (time_only)
                break;
            if (check && n != 1 && n != 3 && n != 9)
                continue;
            bad += one(dt, 100, 256, n, false, rng);
            bad += one(dt, 1000, 4352, n, false, rng);
        }
    for (int dt : {2, 8, 20, 12})
        if (!time_only)
            bad += one(dt, 4100, 2304, 1, false, rng);
    if (check) {
        printf("%s: %d failures\n", bad ? "FAIL" : "PASS", bad);
        return bad != 0;
    }
    /* timing at the decode shape */
    for (int dt : {2, 8, 20, 12})
        for (int n : {1, 2, 4, 8})
            bad += one(dt, 4096, 14336, n, true, rng);
    printf("%s: %d failures\n", bad ? "FAIL" : "PASS", bad);
    return bad != 0;
}
