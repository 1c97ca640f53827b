// mmv-harness.cu - a standalone instrument for the rocm backend's decode
// MatMul / MoeExpertMatMul kernels (backends/rocm/kernels_mmv*.hip) on an
// NVIDIA GPU: checks every weight format and n = 1..11 (and MoE slots)
// against the cpu plugin's scalar decoders, then times the products at
// decode shapes with CUDA events (back-to-back launches on one stream).
// Built on a machine with nvcc (see scripts/mmv-harness-build):
//   mmv-harness check | bench | profile | variants
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "kernels_mmv.h"

extern "C" {
#include "cpu_quant.h"
}

#if defined(VT_MMV_OLD)
extern "C" hipError_t old_launch_mmv(const float *x, const void *w, uint32_t w_dtype, float *y, int64_t n, int64_t m,
                                     int64_t k, hipStream_t stream, int *taken);
extern "C" hipError_t old_launch_mmv_moe(const float *x, int x_per_slot, const void *w, uint32_t w_dtype,
                                         const int32_t *ids, float *y, int64_t T, int64_t K, int64_t m, int64_t k,
                                         hipStream_t stream, int *taken);
#else
// Without the previous kernels (no OLD revision given): no before figure.
static hipError_t old_launch_mmv(const float *, const void *, uint32_t, float *, int64_t, int64_t, int64_t, hipStream_t,
                                 int *taken)
{
    *taken = 0;
    return hipSuccess;
}
static hipError_t old_launch_mmv_moe(const float *, int, const void *, uint32_t, const int32_t *, float *, int64_t,
                                     int64_t, int64_t, int64_t, hipStream_t, int *taken)
{
    *taken = 0;
    return hipSuccess;
}
#endif

#include "harness_util.h"

struct Fmt {
    uint32_t dt;
    const char *name;
};
static const Fmt kFmts[] = {{VT_F32, "f32"}, {VT_F16, "f16"}, {VT_BF16, "bf16"}, {2, "q4_0"},
                            {3, "q4_1"},     {6, "q5_0"},     {7, "q5_1"},       {8, "q8_0"},
                            {10, "q2_k"},    {11, "q3_k"},    {12, "q4_k"},      {13, "q5_k"},
                            {14, "q6_k"},    {20, "iq4_nl"},  {23, "iq4_xs"},    {39, "mxfp4"}};

static const char *fname(uint32_t dt)
{
    for (const Fmt &f : kFmts)
        if (f.dt == dt)
            return f.name;
    return "?";
}

// Row r of w as floats (harness_util.h's deq_row).
static void deq_row(uint32_t dt, const uint8_t *w, int64_t r, int64_t k, float *out)
{
    deq_row(dt, w + r * (k / vt_mmv::blk_elems(dt)) * vt_mmv::blk_bytes(dt), k, out);
}

static int failures = 0;

// Compare y [cols, m] against x [cols, k] . W[rows of wsel]: every value
// within 2e-5 of sum |w x| (plus a tiny floor).
static void compare(const char *what, const float *y, const std::vector<float> &deq, const float *x, int cols,
                    const int *wrow, const int *xcol, int64_t m, int64_t k)
{
    int bad = 0;
    double worst = 0;
    for (int c = 0; c < cols; c++)
        for (int64_t r = 0; r < m; r++) {
            const float *wr = deq.data() + (size_t)(wrow[c] * m + r) * k, *xr = x + (size_t)xcol[c] * k;
            double s = 0, a = 0;
            for (int64_t i = 0; i < k; i++) {
                s += (double)wr[i] * xr[i];
                a += fabs((double)wr[i] * xr[i]);
            }
            const double got = y[(size_t)c * m + r], err = fabs(got - s), tol = 2e-5 * a + 1e-30;
            if (!(err <= tol)) {
                if (bad < 3)
                    fprintf(stderr, "  %s: col %d row %lld got %.9g want %.9g (tol %.3g)\n", what, c, (long long)r, got,
                            s, tol);
                bad++;
            }
            if (a > 0 && err / a > worst)
                worst = err / a;
        }
    printf("check %-34s %s (worst |err|/sum|wx| %.2e)\n", what, bad ? "FAIL" : "ok", worst);
    if (bad)
        failures++;
}

static int check()
{
    const int64_t m = 67;
    const int E = 5;
    for (const Fmt &f : kFmts) {
        const int be = vt_mmv::blk_elems(f.dt);
        // an aligned k (rows a multiple of 16 bytes for most formats) and an odd one
        const int64_t ks[2] = {be == 256 ? 2304 : 2304, be == 256 ? 2560 + 256 : 2336};
        for (int64_t k : ks) {
            std::vector<uint8_t> w = make_w(f.dt, E * m, k);
            std::vector<float> deq((size_t)(E * m * k));
            for (int64_t r = 0; r < E * m; r++)
                deq_row(f.dt, w.data(), r, k, deq.data() + r * k);
            const int nmax = 11;
            std::vector<float> x((size_t)(32 * k));
            for (auto &v : x)
                v = frnd();
            uint8_t *dw;
            float *dx, *dy;
            int32_t *dids;
            CK(cudaMalloc(&dw, w.size()));
            CK(cudaMalloc(&dx, x.size() * 4));
            CK(cudaMalloc(&dy, 16 * E * m * 4));
            CK(cudaMalloc(&dids, 64 * 4));
            CK(cudaMemcpy(dw, w.data(), w.size(), cudaMemcpyHostToDevice));
            CK(cudaMemcpy(dx, x.data(), x.size() * 4, cudaMemcpyHostToDevice));
            const int64_t rb = (int64_t)w.size() / (E * m);
            char what[96];
            for (int n = 1; n <= nmax; n++) {
                CK(cudaMemset(dy, 0xFF, 16 * m * 4));
                int taken = 0;
                CK(vt_rocm_launch_mmv(dx, dw, f.dt, dy, n, m, k, 0, &taken));
                CK(cudaDeviceSynchronize());
                if (!taken) {
                    printf("check %s k=%lld n=%d: not taken\n", f.name, (long long)k, n);
                    failures++;
                    continue;
                }
                std::vector<float> y((size_t)(n * m));
                CK(cudaMemcpy(y.data(), dy, y.size() * 4, cudaMemcpyDeviceToHost));
                int wrow[16], xcol[16];
                for (int c = 0; c < n; c++)
                    wrow[c] = 0, xcol[c] = c;
                snprintf(what, sizeof what, "%s k=%lld rb%%16=%d n=%d", f.name, (long long)k, (int)(rb % 16), n);
                compare(what, y.data(), deq, x.data(), n, wrow, xcol, m, k);
            }
            // MoE: T tokens, K = 2 slots each, experts from E (a token may not repeat one)
            for (int T : {1, 3, 5, 9}) {
                for (int per_slot = 0; per_slot < 2; per_slot++) {
                    const int K = 2, TK = T * K;
                    std::vector<int32_t> ids(TK);
                    for (int t = 0; t < T; t++) {
                        ids[t * K] = (int)(rnd() % E);
                        ids[t * K + 1] = (ids[t * K] + 1 + (int)(rnd() % (E - 1))) % E;
                    }
                    CK(cudaMemcpy(dids, ids.data(), TK * 4, cudaMemcpyHostToDevice));
                    CK(cudaMemset(dy, 0xFF, (size_t)TK * m * 4));
                    int taken = 0;
                    CK(vt_rocm_launch_mmv_moe(dx, per_slot, dw, f.dt, dids, dy, T, K, m, k, 0, &taken));
                    CK(cudaDeviceSynchronize());
                    std::vector<float> y((size_t)(TK * m));
                    CK(cudaMemcpy(y.data(), dy, y.size() * 4, cudaMemcpyDeviceToHost));
                    int wrow[64], xcol[64];
                    for (int s = 0; s < TK; s++)
                        wrow[s] = ids[s], xcol[s] = per_slot ? s : s / K;
                    snprintf(what, sizeof what, "moe %s k=%lld T=%d x_per_slot=%d", f.name, (long long)k, T, per_slot);
                    if (!taken) {
                        printf("check %s: not taken\n", what);
                        failures++;
                        continue;
                    }
                    compare(what, y.data(), deq, x.data(), TK, wrow, xcol, m, k);
                }
            }
            CK(cudaFree(dw));
            CK(cudaFree(dx));
            CK(cudaFree(dy));
            CK(cudaFree(dids));
        }
    }
    printf("check: %d failure(s)\n", failures);
    return failures ? 1 : 0;
}

// Device-to-device copy bandwidth (read + write bytes over time), GB/s.
static double copy_gbs()
{
    const size_t bytes = (size_t)1 << 30;
    void *a, *b;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    CK(cudaMemset(a, 1, bytes));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
    CK(cudaEventRecord(e0));
    for (int i = 0; i < 10; i++)
        CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice));
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    CK(cudaFree(a));
    CK(cudaFree(b));
    return 2.0 * bytes * 10 / (ms * 1e-3) / 1e9;
}

// Mean µs of `iters` back-to-back runs of fn (after 3 warm-up runs).
template <typename F> static double time_us(F fn, int iters)
{
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int i = 0; i < 3; i++)
        fn();
    CK(cudaEventRecord(e0));
    for (int i = 0; i < iters; i++)
        fn();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    CK(cudaGetLastError());
    return ms * 1e3 / iters;
}

// A buffer of several copies of the weights so that back-to-back runs
// stream from DRAM (the H200's 50 MiB L2 would hold one copy of a small
// weight).
struct Weights {
    uint8_t *d;
    size_t bytes;
    int copies;
    int next = 0;
    const uint8_t *get()
    {
        const uint8_t *p = d + (size_t)(next % copies) * bytes;
        next++;
        return p;
    }
};
static Weights upload(const std::vector<uint8_t> &w)
{
    Weights W;
    W.bytes = (w.size() + 255) / 256 * 256;
    W.copies = (int)((size_t)(256u << 20) / W.bytes) + 1;
    if (W.copies < 2)
        W.copies = 2;
    CK(cudaMalloc(&W.d, W.bytes * W.copies));
    for (int c = 0; c < W.copies; c++)
        CK(cudaMemcpy(W.d + (size_t)c * W.bytes, w.data(), w.size(), cudaMemcpyHostToDevice));
    return W;
}

static int bench(int profile)
{
    const double copy = profile ? 0 : copy_gbs();
    if (!profile)
        printf("copy bandwidth (device-to-device, read+write): %.0f GB/s\n", copy);
    const int64_t m = 4096, k = 14336;
    float *dx, *dy;
    CK(cudaMalloc(&dx, 16 * k * 4));
    CK(cudaMalloc(&dy, 16 * m * 4));
    {
        std::vector<float> x((size_t)(16 * k));
        for (auto &v : x)
            v = frnd();
        CK(cudaMemcpy(dx, x.data(), x.size() * 4, cudaMemcpyHostToDevice));
    }
    const uint32_t dts[] = {VT_F16, VT_BF16, 2, 20, 8, 12, 14, VT_F32, 3, 6, 10, 11, 13, 23, 39};
    for (uint32_t dt : dts) {
        if (profile && !(dt == VT_F16 || dt == 2 || dt == 8 || dt == 12 || dt == 14 || dt == 20))
            continue;
        std::vector<uint8_t> w = make_w(dt, m, k);
        Weights W = upload(w);
        for (int n : {1, 2, 4, 8}) {
            if (profile) {
                if (n != 1 && n != 8)
                    continue;
                int taken;
                CK(vt_rocm_launch_mmv(dx, W.get(), dt, dy, n, m, k, 0, &taken));
                CK(cudaDeviceSynchronize());
                continue;
            }
            int taken = 0;
            const double us = time_us([&] { CK(vt_rocm_launch_mmv(dx, W.get(), dt, dy, n, m, k, 0, &taken)); }, 50);
            const double old = time_us([&] { CK(old_launch_mmv(dx, W.get(), dt, dy, n, m, k, 0, &taken)); }, 50);
            const double gbs = (double)w.size() / (us * 1e-6) / 1e9;
            printf("bench MatMul %-6s m=%lld k=%lld n=%d: %8.2f us  %7.0f GB/s  %5.1f%% of copy   (before: %8.2f us)\n",
                   fname(dt), (long long)m, (long long)k, n, us, gbs, 100.0 * gbs / copy, old);
        }
        CK(cudaFree(W.d));
    }
    // MoE: E = 128 experts of 768 x 2048 q4_0, 8 per token
    {
        const int E = 128, K = 8;
        const int64_t me = 768, ke = 2048;
        for (uint32_t dt : {2u, 12u, 8u}) {
            if (profile && dt != 2)
                continue;
            std::vector<uint8_t> w = make_w(dt, E * me, ke);
            Weights W = upload(w);
            const int64_t rb = (int64_t)w.size() / (E * me);
            for (int T : {1, 4, 8, 16}) {
                if (profile && T != 1 && T != 16)
                    continue;
                std::vector<int32_t> ids(T * K);
                std::vector<int> used(E, 0);
                for (int t = 0; t < T; t++)
                    for (int i = 0; i < K; i++) {
                        int e;
                        bool again;
                        do { /* distinct within a token; tokens share experts often (a skewed router) */
                            e = (int)(rnd() % 24);
                            again = false;
                            for (int j = 0; j < i; j++)
                                again |= ids[t * K + j] == e;
                        } while (again);
                        ids[t * K + i] = e;
                        used[e] = 1;
                    }
                int nu = 0;
                for (int e = 0; e < E; e++)
                    nu += used[e];
                int32_t *dids;
                float *dyy, *dxx;
                CK(cudaMalloc(&dids, T * K * 4));
                CK(cudaMalloc(&dyy, (size_t)T * K * me * 4));
                CK(cudaMalloc(&dxx, (size_t)T * ke * 4));
                CK(cudaMemcpy(dids, ids.data(), T * K * 4, cudaMemcpyHostToDevice));
                CK(cudaMemcpy(dxx, dx, (size_t)T * ke * 4, cudaMemcpyDeviceToDevice));
                int taken = 0;
                if (profile) {
                    CK(vt_rocm_launch_mmv_moe(dxx, 0, W.get(), dt, dids, dyy, T, K, me, ke, 0, &taken));
                    CK(cudaDeviceSynchronize());
                } else {
                    const double us = time_us(
                        [&] { CK(vt_rocm_launch_mmv_moe(dxx, 0, W.get(), dt, dids, dyy, T, K, me, ke, 0, &taken)); },
                        50);
                    const double old = time_us(
                        [&] { CK(old_launch_mmv_moe(dxx, 0, W.get(), dt, dids, dyy, T, K, me, ke, 0, &taken)); }, 50);
                    const double bytes = (double)nu * me * rb;
                    printf("bench MoE %-6s E=%d K=%d m=%lld k=%lld T=%2d (%2d experts used): %7.2f us  %6.0f GB/s  "
                           "%5.1f%% of copy   (before: %7.2f us)\n",
                           fname(dt), E, K, (long long)me, (long long)ke, T, nu, us, bytes / (us * 1e-6) / 1e9,
                           100.0 * bytes / (us * 1e-6) / 1e9 / copy, old);
                }
                CK(cudaFree(dids));
                CK(cudaFree(dyy));
                CK(cudaFree(dxx));
            }
            CK(cudaFree(W.d));
        }
    }
    CK(cudaFree(dx));
    CK(cudaFree(dy));
    return 0;
}

// Other geometries (rows per block R) of the same kernel, timed against
// the shipped choice (R = 4).
template <uint32_t DT, int N, int R>
static void variant(Weights &Wt, const float *dx, float *dy, int64_t m, int64_t k, int64_t rb, double copy,
                    size_t bytes)
{
    constexpr int wmax = vt_mmv::max_waves<DT, R>();
    const int64_t tiles = (k + vt_mmv::tile_elems(DT) - 1) / vt_mmv::tile_elems(DT);
    const int64_t per = (tiles + wmax - 1) / wmax, nw = (tiles + per - 1) / per;
    const double us = time_us(
        [&] {
            vt_mmv::mmv_kernel<DT, N, R>
                <<<dim3((unsigned)((m + R - 1) / R)), dim3((unsigned)(nw * 32))>>>(dx, Wt.get(), rb, dy, N, m, k, true);
        },
        50);
    const double gbs = (double)bytes / (us * 1e-6) / 1e9;
    printf("variant %-6s n=%d R=%d W=%d: %8.2f us  %5.1f%% of copy\n", fname(DT), N, R, (int)nw, us,
           100.0 * gbs / copy);
}

template <uint32_t DT> static void variants_of(const float *dx, float *dy, double copy)
{
    const int64_t m = 4096, k = 14336;
    std::vector<uint8_t> w = make_w(DT, m, k);
    Weights Wt = upload(w);
    const int64_t rb = (int64_t)w.size() / m;
    variant<DT, 1, 2>(Wt, dx, dy, m, k, rb, copy, w.size());
    variant<DT, 1, 4>(Wt, dx, dy, m, k, rb, copy, w.size());
    variant<DT, 1, 8>(Wt, dx, dy, m, k, rb, copy, w.size());
    variant<DT, 4, 2>(Wt, dx, dy, m, k, rb, copy, w.size());
    variant<DT, 4, 4>(Wt, dx, dy, m, k, rb, copy, w.size());
    variant<DT, 8, 2>(Wt, dx, dy, m, k, rb, copy, w.size());
    variant<DT, 8, 4>(Wt, dx, dy, m, k, rb, copy, w.size());
    if constexpr (DT == VT_F16) { // the dense kernels' n = 2..8 geometries
        variant<DT, 8, 1>(Wt, dx, dy, m, k, rb, copy, w.size());
        variant<DT, 4, 1>(Wt, dx, dy, m, k, rb, copy, w.size());
        variant<DT, 2, 2>(Wt, dx, dy, m, k, rb, copy, w.size());
        variant<DT, 2, 4>(Wt, dx, dy, m, k, rb, copy, w.size());
        variant<DT, 8, 8>(Wt, dx, dy, m, k, rb, copy, w.size());
        variant<DT, 4, 8>(Wt, dx, dy, m, k, rb, copy, w.size());
    }
    CK(cudaFree(Wt.d));
}

// chained launches (backends/rocm/rocm_chain.h): off in this harness
extern "C" {
int vt_rocm_chain_mode = 0;
}

static int variants()
{
    const double copy = copy_gbs();
    float *dx, *dy;
    CK(cudaMalloc(&dx, 16 * 14336 * 4));
    CK(cudaMalloc(&dy, 16 * 4096 * 4));
    CK(cudaMemset(dx, 0, 16 * 14336 * 4));
    variants_of<2>(dx, dy, copy);
    variants_of<VT_F16>(dx, dy, copy);
    variants_of<8>(dx, dy, copy);
    variants_of<14>(dx, dy, copy);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "check";
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("device: %s, %d SMs\n", p.name, p.multiProcessorCount);
    if (!strcmp(mode, "check"))
        return check();
    if (!strcmp(mode, "bench"))
        return bench(0);
    if (!strcmp(mode, "profile"))
        return bench(1);
    if (!strcmp(mode, "variants"))
        return variants();
    fprintf(stderr, "usage: mmv-harness check|bench|profile|variants\n");
    return 2;
}
