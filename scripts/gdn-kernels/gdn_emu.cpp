// gdn_emu.cpp - runs the rocm backend's GatedDeltaRule and CausalConv1dUpdate
// launchers (backends/rocm/kernels_attention_gdn.hip, kernels_conv.hip) on
// the CPU, one std::thread per GPU thread, std::barrier for __syncthreads
// and shuffles through a block buffer, and compares them with an f64
// reference of SPEC 7's formulas: a check of the kernels' indexing, paths
// and windows without a GPU (not of their speed). Not part of the build:
//   g++ -O1 -std=c++20 -pthread -DGDR_WINDOW_CHUNK_HEADS=4 -I backends/rocm -I core
//       scripts/gdn-kernels/gdn_emu.cpp -o /tmp/gdn_emu && /tmp/gdn_emu
// (minutes: 256 threads a block; with GDR_WINDOW_CHUNK_HEADS=4 the chunked form
// walks windows of 4 / (B HV) chunks, at least one).
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

// ---- the device language, emulated ----
#define VT_ROCM_DEVICE_H
#define VT_ROCM_LAUNCH_H
#define VT_ROCM_GDR_MAX_DK 256
#define VT_ROCM_BLOCK      256
#define __global__
#define __device__
#define __shared__ static
#define __launch_bounds__(n)
typedef int hipError_t;
typedef void *hipStream_t;
#define hipSuccess 0
static hipError_t hipGetLastError()
{
    return hipSuccess;
}
struct float4 {
    float x, y, z, w;
};
static inline float4 make_float4(float a, float b, float c, float d)
{
    return float4{a, b, c, d};
}
struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
thread_local dim3 threadIdx, blockIdx;
static dim3 gridDim, blockDim;
static std::barrier<> *bar;
static float xbuf[1024];
static inline void __syncthreads()
{
    bar->arrive_and_wait();
}
static inline float __shfl_xor(float v, int off, int width)
{
    (void)width;
    xbuf[threadIdx.x] = v;
    bar->arrive_and_wait();
    float r = xbuf[threadIdx.x ^ off];
    bar->arrive_and_wait();
    return r;
}
static inline float vt_silu(float v)
{
    return v / (1.0f + expf(-v));
}
static inline unsigned vt_grid_for(int64_t items, int64_t per_block)
{
    int64_t g = (items + per_block - 1) / per_block;
    return (unsigned)(g < 1 ? 1 : g > (1 << 20) ? 1 << 20 : g);
}
static void emu_launch(unsigned blocks, unsigned nt, const std::function<void()> &body)
{
    static std::barrier<> *b;
    b = new std::barrier<>((ptrdiff_t)nt);
    bar = b;
    gridDim = dim3(blocks);
    blockDim = dim3(nt);
    for (unsigned bi = 0; bi < blocks; bi++) {
        std::vector<std::thread> th;
        for (unsigned t = 0; t < nt; t++)
            th.emplace_back([&, t, bi] {
                threadIdx = dim3(t);
                blockIdx = dim3(bi);
                body();
            });
        for (auto &x : th)
            x.join();
    }
    delete b;
    bar = nullptr;
}
#define hipLaunchKernelGGL(kernel, grid, block, shmem, stream, ...)                                                    \
    emu_launch(dim3(grid).x, dim3(block).x, [&] { kernel(__VA_ARGS__); })

#include "kernels_attention_gdn.hip"
#include "kernels_conv.hip"

// ---- the reference and the cases ----
static uint64_t rng_s = 0x1234567887654321ull;
static double urand(double lo, double hi)
{
    rng_s ^= rng_s << 13;
    rng_s ^= rng_s >> 7;
    rng_s ^= rng_s << 17;
    return lo + (hi - lo) * (double)(rng_s >> 11) / 9007199254740992.0;
}

static double relerr(const std::vector<float> &got, const std::vector<double> &ref)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < got.size(); i++) {
        if (!std::isfinite(got[i]))
            return INFINITY;
        double d = got[i] - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

struct Case {
    int B, T, H, HV, dk, dv, per_token, l2norm, padrow;
    double glo;
};

static int failures;

static void run_gdr(const Case &c)
{
    const int64_t B = c.B, T = c.T, H = c.H, HV = c.HV, dk = c.dk, dv = c.dv;
    double r = c.l2norm ? 1.0 : sqrt(1.5 / dk);
    auto fill = [](std::vector<float> &a, size_t n, double lo, double hi) {
        a.resize(n);
        for (auto &x : a)
            x = (float)urand(lo, hi);
    };
    std::vector<float> q, k, v, g, beta, st0;
    fill(q, B * T * H * dk, -r, r);
    fill(k, B * T * H * dk, -r, r);
    fill(v, B * T * HV * dv, -1, 1);
    fill(g, B * T * HV, c.glo, 0);
    fill(beta, B * T * HV, 0, 1);
    int64_t per_row = c.per_token ? T : 1, N = B * per_row + 1;
    fill(st0, N * HV * dk * dv, -0.2, 0.2);
    std::vector<int32_t> slots(B * per_row), acc(B, 1);
    for (int64_t i = 0; i < B * per_row; i++)
        slots[i] = (int32_t)(N - 1 - i);
    if (c.padrow && B > 1)
        for (int64_t t = 0; t < per_row; t++)
            slots[per_row + t] = -1;
    if (c.per_token) {
        for (int64_t b = 0; b < B; b++)
            acc[b] = 1 + (int32_t)(b % T);
        for (int64_t i = 0; i < B * T; i += 3)
            if (slots[i] >= 0 && i % T != acc[i / T] - 1)
                slots[i] = -1;
    }
    std::vector<double> o_ref(B * T * HV * dv, 0.0), st_ref(st0.begin(), st0.end());
    std::vector<double> S(dk * dv), qn(dk), kn(dk), u(dv);
    for (int64_t b = 0; b < B; b++)
        for (int64_t hv = 0; hv < HV; hv++) {
            int64_t h = hv / (HV / H);
            int32_t rs = c.per_token ? slots[b * T + acc[b] - 1] : slots[b];
            if (rs < 0)
                continue;
            for (int64_t i = 0; i < dk * dv; i++)
                S[i] = st0[(rs * HV + hv) * dk * dv + i];
            for (int64_t t = 0; t < T; t++) {
                int64_t bt = b * T + t;
                double qs = 0, ks = 0;
                for (int64_t i = 0; i < dk; i++) {
                    qn[i] = q[(bt * H + h) * dk + i];
                    kn[i] = k[(bt * H + h) * dk + i];
                    qs += qn[i] * qn[i];
                    ks += kn[i] * kn[i];
                }
                for (int64_t i = 0; i < dk; i++) {
                    if (c.l2norm) {
                        qn[i] /= sqrt(qs + 1e-6);
                        kn[i] /= sqrt(ks + 1e-6);
                    }
                    qn[i] /= sqrt((double)dk);
                }
                double decay = exp((double)g[bt * HV + hv]), bb = beta[bt * HV + hv];
                for (auto &x : S)
                    x *= decay;
                for (int64_t cc = 0; cc < dv; cc++) {
                    double s = 0;
                    for (int64_t i = 0; i < dk; i++)
                        s += S[i * dv + cc] * kn[i];
                    u[cc] = bb * (v[(bt * HV + hv) * dv + cc] - s);
                }
                for (int64_t i = 0; i < dk; i++)
                    for (int64_t cc = 0; cc < dv; cc++)
                        S[i * dv + cc] += kn[i] * u[cc];
                for (int64_t cc = 0; cc < dv; cc++) {
                    double s = 0;
                    for (int64_t i = 0; i < dk; i++)
                        s += S[i * dv + cc] * qn[i];
                    o_ref[(bt * HV + hv) * dv + cc] = s;
                }
                if (c.per_token && slots[bt] >= 0)
                    for (int64_t i = 0; i < dk * dv; i++)
                        st_ref[(slots[bt] * HV + hv) * dk * dv + i] = S[i];
            }
            if (!c.per_token)
                for (int64_t i = 0; i < dk * dv; i++)
                    st_ref[(rs * HV + hv) * dk * dv + i] = S[i];
        }
    std::vector<float> o(B * T * HV * dv, NAN), st(st0);
    uint64_t sb = vt_rocm_gated_delta_scratch_bytes(B, T, HV, dk, dv, c.per_token);
    std::vector<float> scr(sb / 4 + 4, NAN);
    vt_rocm_launch_gated_delta(q.data(), k.data(), v.data(), g.data(), beta.data(), slots.data(),
                               c.per_token ? acc.data() : nullptr, c.per_token, o.data(), st.data(), B, T, H, HV, dk,
                               dv, c.l2norm, sb ? scr.data() : nullptr, nullptr);
    double eo = relerr(o, o_ref), es = relerr(st, st_ref);
    bool ok = eo <= 1e-5 && es <= 1e-5;
    failures += !ok;
    printf("%s GatedDeltaRule B=%d T=%d H=%d HV=%d dk=%d dv=%d %s l2norm=%d pad=%d scratch=%llu: err o %.3e state "
           "%.3e\n",
           ok ? "ok  " : "FAIL", c.B, c.T, c.H, c.HV, c.dk, c.dv, c.per_token ? "per-token" : "per-seq", c.l2norm,
           c.padrow, (unsigned long long)sb, eo, es);
}

static void run_conv(int B, int D, int with_bias, int with_slots)
{
    const int W = 4, T = 1;
    int64_t N = B + 1;
    std::vector<float> x(B * D), w(D * W), bias(D), st0(N * D * 3);
    for (auto *a : {&x, &w, &bias, &st0})
        for (auto &e : *a)
            e = (float)urand(-1, 1);
    std::vector<int32_t> slots(B);
    for (int b = 0; b < B; b++)
        slots[b] = (int32_t)(N - 1 - b);
    if (B > 1)
        slots[1] = -1;
    std::vector<double> yref(B * D);
    std::vector<float> stref(st0);
    for (int b = 0; b < B; b++)
        for (int d = 0; d < D; d++) {
            int64_t slot = with_slots ? slots[b] : b;
            if (slot < 0)
                continue;
            const float *sp = &st0[(slot * D + d) * 3];
            double e[4] = {sp[0], sp[1], sp[2], x[b * D + d]}, a = with_bias ? bias[d] : 0;
            for (int j = 0; j < 4; j++)
                a += (double)w[d * 4 + j] * e[j];
            yref[b * D + d] = a / (1 + exp(-a));
            for (int i = 0; i < 3; i++)
                stref[(slot * D + d) * 3 + i] = (float)e[i + 1];
        }
    std::vector<float> y(B * D, NAN), st(st0);
    vt_rocm_launch_conv_update(x.data(), w.data(), with_bias ? bias.data() : nullptr,
                               with_slots ? slots.data() : nullptr, y.data(), st.data(), B, D, T, W, 1, nullptr);
    double ey = relerr(y, yref);
    bool ok = ey <= 1e-6 && memcmp(st.data(), stref.data(), st.size() * 4) == 0;
    failures += !ok;
    printf("%s CausalConv1dUpdate B=%d D=%d W=4 T=1 bias=%d slots=%d: err y %.3e, state %s\n", ok ? "ok  " : "FAIL", B,
           D, with_bias, with_slots, ey, memcmp(st.data(), stref.data(), st.size() * 4) ? "differs" : "exact");
}

int main()
{
    run_gdr({2, 1, 1, 2, 128, 128, 0, 1, 1, -1});     // decode, slabs of 16
    run_gdr({3, 4, 2, 4, 128, 100, 1, 1, 1, -1});     // per-token, columns past dv
    run_gdr({3, 300, 1, 2, 128, 128, 0, 1, 1, -0.2}); // chunked: 3 windows of 2 chunks, a partial one, padding
    run_gdr({1, 64, 1, 2, 128, 128, 0, 0, 0, -1});    // chunked: one full chunk, no L2 norm
    run_gdr({2, 20, 2, 2, 128, 128, 0, 1, 0, -0.1});  // below GDR_CHUNK_MIN_T: the decode form
    run_gdr({2, 70, 1, 2, 128, 128, 1, 1, 0, -0.5});  // per-token over 70 tokens: the decode form
    run_gdr({2, 5, 1, 2, 48, 40, 0, 1, 1, -1});       // dk = 48: gdr_kernel
    run_conv(1, 333, 0, 0);
    run_conv(3, 200, 1, 1);
    printf("%d failure(s)\n", failures);
    return failures != 0;
}
