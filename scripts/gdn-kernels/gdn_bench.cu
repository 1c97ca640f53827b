// gdn_bench.cu - H200 harness of the rocm backend's GatedDeltaRule and
// CausalConv1dUpdate kernels (backends/rocm/kernels_attention_gdn.hip,
// kernels_conv.hip, compiled into this file): each path against an f64
// reference of SPEC 7's formula (outputs poisoned first), kernel times from
// CUDA events over a stream of launches and over a graph replay, and bytes
// as % of the D2D copy bandwidth. Modes: (none) the whole table; ncu (each
// kernel launched twice, for ncu --clock-control none); san (small cases,
// for compute-sanitizer). Built on a machine with nvcc, run on the GPU:
//   nvcc -O3 -std=c++17 -arch=sm_90 -x cu -DVT_HIP_PLATFORM_NVIDIA -I backends/rocm -I core -I <builddir> \
//        scripts/gdn-kernels/gdn_bench.cu -o gdn_bench
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <functional>
#include <vector>

#include "kernels_attention_gdn.hip"
#include "kernels_conv.hip"

#define CK(x)                                                                                                          \
    do {                                                                                                               \
        cudaError_t e_ = (x);                                                                                          \
        if (e_ != cudaSuccess) {                                                                                       \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));                         \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

static uint64_t rng_s = 0x1234567887654321ull;
static double urand(double lo, double hi)
{
    rng_s ^= rng_s << 13;
    rng_s ^= rng_s >> 7;
    rng_s ^= rng_s << 17;
    return lo + (hi - lo) * (double)(rng_s >> 11) / 9007199254740992.0;
}

struct Case {
    const char *name;
    int B, T, H, HV, dk, dv, per_token, l2norm, padrow;
    double glo;
    int reps_old, reps_new;
};

struct Gdr {
    Case c;
    int64_t N;
    std::vector<float> q, k, v, g, beta, st0;
    std::vector<int32_t> slots, acc;
    std::vector<double> o_ref, st_ref;
    float *dq, *dk_, *dv_, *dg, *db, *dst, *do_, *dscr;
    int32_t *dsl, *dacc;
    size_t scr_bytes;
};

static void reference(Gdr &G)
{
    const Case &c = G.c;
    const int64_t B = c.B, T = c.T, H = c.H, HV = c.HV, dk = c.dk, dv = c.dv;
    G.o_ref.assign(B * T * HV * dv, 0.0);
    G.st_ref.assign(G.st0.begin(), G.st0.end());
    std::vector<double> S(dk * dv), qn(dk), kn(dk), u(dv);
    for (int64_t b = 0; b < B; b++)
        for (int64_t hv = 0; hv < HV; hv++) {
            int64_t h = hv / (HV / H);
            int32_t rs = c.per_token ? G.slots[b * T + G.acc[b] - 1] : G.slots[b];
            if (rs < 0)
                continue;
            for (int64_t i = 0; i < dk * dv; i++)
                S[i] = G.st0[(rs * HV + hv) * dk * dv + i];
            for (int64_t t = 0; t < T; t++) {
                int64_t bt = b * T + t;
                double qs = 0, ks = 0;
                for (int64_t i = 0; i < dk; i++) {
                    qn[i] = G.q[(bt * H + h) * dk + i];
                    kn[i] = G.k[(bt * H + h) * dk + i];
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
                double decay = exp((double)G.g[bt * HV + hv]), bb = G.beta[bt * HV + hv];
                for (int64_t i = 0; i < dk * dv; i++)
                    S[i] *= decay;
                for (int64_t cc = 0; cc < dv; cc++) {
                    double s = 0;
                    for (int64_t i = 0; i < dk; i++)
                        s += S[i * dv + cc] * kn[i];
                    u[cc] = bb * (G.v[(bt * HV + hv) * dv + cc] - s);
                }
                for (int64_t i = 0; i < dk; i++)
                    for (int64_t cc = 0; cc < dv; cc++)
                        S[i * dv + cc] += kn[i] * u[cc];
                for (int64_t cc = 0; cc < dv; cc++) {
                    double s = 0;
                    for (int64_t i = 0; i < dk; i++)
                        s += S[i * dv + cc] * qn[i];
                    G.o_ref[(bt * HV + hv) * dv + cc] = s;
                }
                if (c.per_token && G.slots[bt] >= 0)
                    for (int64_t i = 0; i < dk * dv; i++)
                        G.st_ref[(G.slots[bt] * HV + hv) * dk * dv + i] = S[i];
            }
            if (!c.per_token)
                for (int64_t i = 0; i < dk * dv; i++)
                    G.st_ref[(rs * HV + hv) * dk * dv + i] = S[i];
        }
}

static void setup(Gdr &G, const Case &c)
{
    G.c = c;
    const int64_t B = c.B, T = c.T, H = c.H, HV = c.HV, dk = c.dk, dv = c.dv;
    double r = c.l2norm ? 1.0 : sqrt(1.5 / dk);
    auto fill = [](std::vector<float> &a, size_t n, double lo, double hi) {
        a.resize(n);
        for (auto &x : a)
            x = (float)urand(lo, hi);
    };
    fill(G.q, B * T * H * dk, -r, r);
    fill(G.k, B * T * H * dk, -r, r);
    fill(G.v, B * T * HV * dv, -1, 1);
    fill(G.g, B * T * HV, c.glo, 0);
    fill(G.beta, B * T * HV, 0, 1);
    int64_t per_row = c.per_token ? T : 1;
    G.N = B * per_row + 1;
    fill(G.st0, G.N * HV * dk * dv, -0.2, 0.2);
    G.slots.resize(B * per_row);
    for (int64_t i = 0; i < B * per_row; i++)
        G.slots[i] = (int32_t)(G.N - 1 - i); // distinct, reversed
    if (c.padrow && B > 1)
        for (int64_t t = 0; t < per_row; t++)
            G.slots[1 * per_row + t] = -1;
    G.acc.assign(B, 1);
    if (c.per_token) {
        for (int64_t b = 0; b < B; b++)
            G.acc[b] = 1 + (int32_t)(b % T);
        for (int64_t i = 0; i < B * T; i += 3)
            if (G.slots[i] >= 0 && i % T != G.acc[i / T] - 1)
                G.slots[i] = -1; // a skipped write (never the read slot)
    }
    reference(G);
    auto up = [](float **d, const std::vector<float> &h) {
        CK(cudaMalloc(d, h.size() * 4 + 16));
        CK(cudaMemcpy(*d, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
    };
    up(&G.dq, G.q);
    up(&G.dk_, G.k);
    up(&G.dv_, G.v);
    up(&G.dg, G.g);
    up(&G.db, G.beta);
    up(&G.dst, G.st0);
    CK(cudaMalloc(&G.do_, B * T * HV * dv * 4));
    CK(cudaMalloc(&G.dsl, G.slots.size() * 4));
    CK(cudaMemcpy(G.dsl, G.slots.data(), G.slots.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&G.dacc, B * 4));
    CK(cudaMemcpy(G.dacc, G.acc.data(), B * 4, cudaMemcpyHostToDevice));
    int64_t nc = (T + GDR_C - 1) / GDR_C;
    G.scr_bytes = (size_t)B * HV * nc * GDR_STRIDE(128, 128) * 4;
    if (G.scr_bytes < vt_rocm_gated_delta_scratch_bytes(B, T, HV, dk, dv, c.per_token))
        G.scr_bytes = vt_rocm_gated_delta_scratch_bytes(B, T, HV, dk, dv, c.per_token);
    CK(cudaMalloc(&G.dscr, G.scr_bytes + 16));
}

// mode: 0 gdr_cols_kernel (the kernel before the decode form), 1 decode
// SW=32, 2 decode SW=16, 3 decode SW=8, 4 chunked (one window), 5 the launcher
static void launch(Gdr &G, int mode, cudaStream_t s)
{
    const Case &c = G.c;
    const int64_t B = c.B, T = c.T, H = c.H, HV = c.HV, dv = c.dv;
    const int32_t *acc = c.per_token ? G.dacc : nullptr;
    if (mode == 0) {
        gdr_cols_kernel<128><<<(unsigned)(B * HV * ((dv + GDR_COLS - 1) / GDR_COLS)), GDR_COLS, 0, s>>>(
            G.dq, G.dk_, G.dv_, G.dg, G.db, G.dsl, acc, c.per_token, G.do_, G.dst, T, H, HV, dv, c.l2norm);
    } else if (mode == 1) {
        gdr_decode_kernel<128, 32><<<(unsigned)(B * HV * ((dv + 31) / 32)), GDR_NT, 0, s>>>(
            G.dq, G.dk_, G.dv_, G.dg, G.db, G.dsl, acc, c.per_token, G.do_, G.dst, T, H, HV, dv, c.l2norm);
    } else if (mode == 2) {
        gdr_decode_kernel<128, 16><<<(unsigned)(B * HV * ((dv + 15) / 16)), GDR_NT, 0, s>>>(
            G.dq, G.dk_, G.dv_, G.dg, G.db, G.dsl, acc, c.per_token, G.do_, G.dst, T, H, HV, dv, c.l2norm);
    } else if (mode == 3) {
        gdr_decode_kernel<128, 8><<<(unsigned)(B * HV * ((dv + 7) / 8)), GDR_NT, 0, s>>>(
            G.dq, G.dk_, G.dv_, G.dg, G.db, G.dsl, acc, c.per_token, G.do_, G.dst, T, H, HV, dv, c.l2norm);
    } else if (mode == 4) {
        int64_t nc = (T + GDR_C - 1) / GDR_C;
        gdr_chunk_prep_kernel<128, 128><<<(unsigned)(B * HV * nc), GDR_NT, 0, s>>>(
            G.dq, G.dk_, G.dv_, G.dg, G.db, G.dsl, G.dscr, T, H, HV, 0, T, c.l2norm);
        gdr_chunk_scan_kernel<128, 128><<<(unsigned)(B * HV * (128 / GDR_SW)), GDR_NT, 0, s>>>(
            G.dq, G.dk_, G.dscr, G.dsl, G.do_, G.dst, T, H, HV, 0, T);
    } else {
        CK(vt_rocm_launch_gated_delta(G.dq, G.dk_, G.dv_, G.dg, G.db, G.dsl, acc, c.per_token, G.do_, G.dst, B, T, H,
                                      HV, c.dk, dv, c.l2norm, G.dscr, s));
    }
    CK(cudaGetLastError());
}

static double relerr(const std::vector<float> &got, const std::vector<double> &ref)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < got.size(); i++) {
        if (!isfinite(got[i]))
            return INFINITY;
        double d = got[i] - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static float time_it(const std::function<void()> &f, int reps, cudaStream_t s, bool graph)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    f();
    CK(cudaStreamSynchronize(s));
    float ms = 0;
    if (graph) {
        cudaGraph_t gr;
        cudaGraphExec_t ge;
        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
        for (int i = 0; i < reps; i++)
            f();
        CK(cudaStreamEndCapture(s, &gr));
        CK(cudaGraphInstantiate(&ge, gr, 0));
        CK(cudaGraphLaunch(ge, s));
        CK(cudaStreamSynchronize(s));
        CK(cudaEventRecord(a, s));
        CK(cudaGraphLaunch(ge, s));
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
        CK(cudaGraphExecDestroy(ge));
        CK(cudaGraphDestroy(gr));
    } else {
        CK(cudaEventRecord(a, s));
        for (int i = 0; i < reps; i++)
            f();
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
    }
    CK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1000.0f / reps;
}

static double copy_gbs;

static void run_gdr(const Case &c, const int *modes, int nmodes, bool ncu, cudaStream_t s)
{
    Gdr G;
    setup(G, c);
    double bytes = 4.0 * ((double)c.B * c.T * (2.0 * c.H * c.dk + 2.0 * c.HV * c.dv + 2.0 * c.HV) + c.B +
                          2.0 * c.B * c.HV * (double)c.dk * c.dv);
    printf("== GDR %s: B=%d T=%d H=%d HV=%d dk=%d dv=%d %s l2norm=%d pad=%d g>=%.2f bytes=%.0f\n", c.name, c.B, c.T,
           c.H, c.HV, c.dk, c.dv, c.per_token ? "per-token" : "per-seq", c.l2norm, c.padrow, c.glo, bytes);
    for (int mi = 0; mi < nmodes; mi++) {
        int mode = modes[mi];
        CK(cudaMemcpy(G.dst, G.st0.data(), G.st0.size() * 4, cudaMemcpyHostToDevice));
        CK(cudaMemset(G.do_, 0xff, (size_t)c.B * c.T * c.HV * c.dv * 4));
        CK(cudaMemset(G.dscr, 0xff, G.scr_bytes));
        launch(G, mode, s);
        CK(cudaStreamSynchronize(s));
        std::vector<float> o((size_t)c.B * c.T * c.HV * c.dv), st(G.st0.size());
        CK(cudaMemcpy(o.data(), G.do_, o.size() * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(st.data(), G.dst, st.size() * 4, cudaMemcpyDeviceToHost));
        double eo = relerr(o, G.o_ref), es = relerr(st, G.st_ref);
        if (ncu) {
            launch(G, mode, s);
            CK(cudaStreamSynchronize(s));
            printf("  mode %d: err o %.3e state %.3e\n", mode, eo, es);
            continue;
        }
        int reps = mode == 0 ? c.reps_old : c.reps_new;
        float us = time_it([&] { launch(G, mode, s); }, reps, s, false);
        float usg = time_it([&] { launch(G, mode, s); }, reps, s, true);
        printf("  mode %d (%s): err o %.3e state %.3e | stream %.2f us, graph %.2f us/launch, %.1f GB/s = %.1f%% of "
               "copy\n",
               mode,
               mode == 0   ? "gdr_cols_kernel"
               : mode == 5 ? "launcher"
               : mode == 4 ? "chunked"
                           : (mode == 1   ? "decode SW32"
                              : mode == 2 ? "decode SW16"
                                          : "decode SW8"),
               eo, es, us, usg, bytes / usg / 1e3, 100.0 * bytes / usg / 1e3 / copy_gbs);
    }
}

static void run_conv(int B, int D, int with_bias, int with_slots, bool ncu, cudaStream_t s)
{
    const int W = 4, T = 1;
    int64_t N = B + 1;
    std::vector<float> x(B * D * T), w(D * W), bias(D), st0(N * D * 3);
    for (auto &a : x)
        a = (float)urand(-1, 1);
    for (auto &a : w)
        a = (float)urand(-0.5, 0.5);
    for (auto &a : bias)
        a = (float)urand(-0.5, 0.5);
    for (auto &a : st0)
        a = (float)urand(-1, 1);
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
            if (slot < 0) {
                yref[b * D + d] = 0;
                continue;
            }
            const float *sp = &st0[(slot * D + d) * 3];
            double e[4] = {sp[0], sp[1], sp[2], x[b * D + d]};
            double a = with_bias ? bias[d] : 0;
            for (int j = 0; j < 4; j++)
                a += (double)w[d * 4 + j] * e[j];
            yref[b * D + d] = a / (1 + exp(-a));
            for (int i = 0; i < 3; i++)
                stref[(slot * D + d) * 3 + i] = (float)e[i + 1];
        }
    float *dx, *dw, *dbias, *dy, *dst;
    int32_t *dsl;
    CK(cudaMalloc(&dx, x.size() * 4));
    CK(cudaMalloc(&dw, w.size() * 4));
    CK(cudaMalloc(&dbias, bias.size() * 4));
    CK(cudaMalloc(&dy, B * D * 4));
    CK(cudaMalloc(&dst, st0.size() * 4));
    CK(cudaMalloc(&dsl, B * 4));
    CK(cudaMemcpy(dx, x.data(), x.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dw, w.data(), w.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dbias, bias.data(), bias.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dsl, slots.data(), B * 4, cudaMemcpyHostToDevice));
    const float *bp = with_bias ? dbias : nullptr;
    const int32_t *sp = with_slots ? dsl : nullptr;
    double bytes = 4.0 * (2.0 * B * D * T + (double)D * W) + 2.0 * 4.0 * B * D * 3;
    printf("== CausalConv1dUpdate B=%d D=%d W=4 T=1 bias=%d slots=%d bytes=%.0f\n", B, D, with_bias, with_slots, bytes);
    for (int mode = 0; mode < 4; mode++) {
        int nt = mode == 1 ? 64 : mode == 2 ? 128 : 256;
        auto f = [&] {
            if (mode == 0)
                conv_update_kernel<<<vt_grid_for(B * D, VT_ROCM_BLOCK), VT_ROCM_BLOCK, 0, s>>>(dx, dw, bp, sp, dy, dst,
                                                                                               B, D, T, W, 1);
            else
                conv_update_w4t1_kernel<<<(B * D + nt - 1) / nt, nt, 0, s>>>(dx, dw, bp, sp, dy, dst, (uint32_t)B,
                                                                             (uint32_t)D, 1);
        };
        CK(cudaMemcpy(dst, st0.data(), st0.size() * 4, cudaMemcpyHostToDevice));
        CK(cudaMemset(dy, 0xff, B * D * 4));
        f();
        CK(cudaStreamSynchronize(s));
        std::vector<float> y(B * D), st(st0.size());
        CK(cudaMemcpy(y.data(), dy, y.size() * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(st.data(), dst, st.size() * 4, cudaMemcpyDeviceToHost));
        double ey = relerr(y, yref);
        size_t mism = 0;
        for (size_t i = 0; i < st.size(); i++)
            mism += memcmp(&st[i], &stref[i], 4) != 0;
        if (ncu) {
            f();
            CK(cudaStreamSynchronize(s));
            printf("  mode %d: err y %.3e, state mismatches %zu\n", mode, ey, mism);
            continue;
        }
        float us = time_it(f, 200, s, false), usg = time_it(f, 200, s, true);
        printf("  mode %d (%s): err y %.3e, state mismatches %zu | stream %.2f us, graph %.2f us/launch\n", mode,
               mode == 0   ? "old"
               : mode == 1 ? "new nt64"
               : mode == 2 ? "new nt128"
                           : "new nt256",
               ey, mism, us, usg);
    }
}

int main(int argc, char **argv)
{
    bool ncu = argc > 1 && !strcmp(argv[1], "ncu");
    bool quick = argc > 1 && !strcmp(argv[1], "quick");
    bool san = argc > 1 && !strcmp(argv[1], "san");
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    {
        size_t n = 256u << 20;
        void *a, *b;
        CK(cudaMalloc(&a, n));
        CK(cudaMalloc(&b, n));
        CK(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, s));
        float us = time_it([&] { CK(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, s)); }, 10, s, false);
        copy_gbs = 2.0 * n / us / 1e3;
        printf("copy bandwidth (D2D memcpy 256 MiB, read+write): %.0f GB/s\n", copy_gbs);
        CK(cudaFree(a));
        CK(cudaFree(b));
    }
    const int all[] = {0, 1, 2, 3, 4, 5}, dec[] = {0, 1, 2, 3, 5}, big[] = {0, 1, 4, 5}, newonly[] = {1, 4};
    if (ncu) {
        const int m1[] = {0, 1}, m2[] = {0, 4};
        run_gdr({"decode", 1, 1, 16, 32, 128, 128, 0, 1, 0, -0.1, 1, 1}, m1, 2, true, s);
        run_gdr({"prefill", 1, 1024, 16, 32, 128, 128, 0, 1, 0, -0.1, 1, 1}, m2, 2, true, s);
        run_conv(1, 3328, 0, 0, true, s);
        return 0;
    }
    if (san) {
        const int m[] = {1, 2, 3, 4}, d[] = {1, 2, 3};
        run_gdr({"3 chunks partial pad", 3, 130, 2, 4, 128, 128, 0, 1, 1, -1, 1, 1}, m, 4, true, s);
        run_gdr({"per-token", 3, 5, 2, 4, 128, 128, 1, 1, 1, -1, 1, 1}, d, 3, true, s);
        run_gdr({"dv 96", 2, 3, 2, 4, 128, 96, 0, 1, 1, -1, 1, 1}, d, 3, true, s);
        run_conv(3, 3328, 1, 1, true, s);
        return 0;
    }
    run_gdr({"decode", 1, 1, 16, 32, 128, 128, 0, 1, 0, -0.1, 500, 500}, dec, 5, false, s);
    run_gdr({"decode B4", 4, 1, 16, 32, 128, 128, 0, 1, 0, -1, 200, 200}, dec, 5, false, s);
    run_gdr({"prefill", 1, 1024, 16, 32, 128, 128, 0, 1, 0, -0.1, 3, 20}, big, 4, false, s);
    if (!quick) {
        run_gdr({"prefill g[-1,0]", 1, 1024, 16, 32, 128, 128, 0, 1, 0, -1, 2, 10}, big, 4, false, s);
        run_gdr({"3 chunks partial pad", 3, 130, 2, 4, 128, 128, 0, 1, 1, -1, 5, 20}, all, 6, false, s);
        run_gdr({"1 chunk exact nol2", 2, 64, 1, 2, 128, 128, 0, 0, 0, -1, 5, 20}, all, 6, false, s);
        run_gdr({"partial only", 2, 37, 2, 4, 128, 128, 0, 1, 0, -0.5, 5, 20}, all, 6, false, s);
        run_gdr({"per-token", 3, 5, 2, 4, 128, 128, 1, 1, 1, -1, 20, 20}, dec, 5, false, s);
        run_gdr({"per-token T1", 2, 1, 2, 4, 128, 128, 1, 1, 0, -1, 20, 20}, dec, 5, false, s);
        run_gdr({"dv 96", 2, 3, 2, 4, 128, 96, 0, 1, 1, -1, 20, 20}, dec, 5, false, s);
        for (int T : {4, 8, 16, 32, 64, 128, 256})
            run_gdr({"threshold", 1, T, 16, 32, 128, 128, 0, 1, 0, -0.1, 5, 20}, newonly, 2, false, s);
        run_conv(1, 3328, 0, 0, false, s);
        run_conv(3, 3328, 1, 1, false, s);
    }
    (void)all;
    return 0;
}
