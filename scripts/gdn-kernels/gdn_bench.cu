// gdn_bench.cu - H200 harness of the rocm backend's GatedDeltaRule and
// CausalConv1dUpdate kernels (backends/rocm/kernels_attention_gdn.hip,
// kernels_check.hip, kernels_conv.hip, compiled into this file; inputs and
// f64 references of SPEC 7's formulas from gdn_ref.h, shared with
// gdn_emu.cpp): each path against the reference (outputs poisoned first),
// bad calls through the decode kernel's folded slot check against the check
// kernel's error record (outputs zero, state kept), kernel times from CUDA
// events over a stream of launches and over a graph replay (the state
// rotating over >= 256 MiB of copies), and bytes as % of the D2D copy
// bandwidth. Modes: (none) the whole table; quick (decode and one prefill);
// ncu (each kernel launched twice, for ncu --clock-control none); san
// (small cases, for compute-sanitizer). CHAIN=1 launches chained, as the
// plugin on sm_90. Built on a machine with nvcc, run on the GPU:
//   F='-O3 -std=c++17 -arch=sm_90 -DVT_HIP_PLATFORM_NVIDIA -Ibackends/rocm -Icore -I<builddir>'
//   nvcc $F scripts/gdn-kernels/gdn_bench.cu -o gdn_bench
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <functional>
#include <vector>

#include "kernels_attention_gdn.hip"
#include "kernels_check.hip"
#include "kernels_conv.hip"

#include "gdn_ref.h"
#include "../harness_cuda.h"

struct Case {
    const char *name;
    GdrShape shape;
    int reps_old, reps_new;
};

struct Gdr : GdrHost {
    float *dq, *dk_, *dv_, *dg, *db, *dst, *do_, *dscr;
    int32_t *dsl, *dacc, *dsafe;
    vt_rocm_err *derr;
    size_t scr_bytes;
};

// chained launches (backends/rocm/rocm_chain.h): CHAIN=1 as the plugin on
// sm_90 (the decode kernel then prefetches its state before its wait)
extern "C" int vt_rocm_chain_mode = 0;

static void setup(Gdr &G, const GdrShape &c)
{
    gdr_host(c, G);
    const int64_t B = c.B, T = c.T, HV = c.HV, dk = c.dk, dv = c.dv;
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
    CK(cudaMalloc(&G.dsafe, (G.slots.size() + B) * 4));
    CK(cudaMalloc(&G.derr, sizeof(vt_rocm_err)));
    CK(cudaMemset(G.derr, 0, sizeof(vt_rocm_err)));
}

// mode: 0 gdr_cols_kernel (the kernel before the decode form), 1 decode
// SW=32, 2 decode SW=16, 3 decode SW=8 (slots unchecked), 4 chunked (one
// window), 5 the check kernel then the launcher (the plugin's path before the
// fused check), 6 / 7 / 8 decode SW=32 / 16 / 8 with the check folded in,
// 9 the plugin's path now (the fused launcher when it takes the call, else
// as mode 5)
static const char *mode_name(int mode)
{
    static const char *names[] = {"gdr_cols_kernel",  "decode SW32", "decode SW16", "decode SW8", "chunked",
                                  "check + launcher", "fused SW32",  "fused SW16",  "fused SW8",  "plugin path (now)"};
    return names[mode];
}

static void launch(Gdr &G, int mode, cudaStream_t s)
{
    const GdrShape &c = G.c;
    const int64_t B = c.B, T = c.T, H = c.H, HV = c.HV, dv = c.dv;
    const int32_t *acc = c.per_token ? G.dacc : nullptr;
    if (mode == 0) {
        gdr_cols_kernel<128><<<(unsigned)(B * HV * ((dv + GDR_COLS - 1) / GDR_COLS)), GDR_COLS, 0, s>>>(
            G.dq, G.dk_, G.dv_, G.dg, G.db, G.dsl, acc, c.per_token, G.do_, G.dst, T, H, HV, dv, c.l2norm);
    } else if (mode >= 1 && mode <= 3) {
        CK(launch_decode(mode == 1   ? 32
                         : mode == 2 ? 16
                                     : 8,
                         G.dq, G.dk_, G.dv_, G.dg, G.db, G.dsl, acc, c.per_token, G.do_, G.dst, B, T, H, HV, dv,
                         c.l2norm, nullptr, 0, INT64_MAX, s));
    } else if (mode >= 6 && mode <= 8) {
        CK(launch_decode(mode == 6   ? 32
                         : mode == 7 ? 16
                                     : 8,
                         G.dq, G.dk_, G.dv_, G.dg, G.db, G.dsl, acc, c.per_token, G.do_, G.dst, B, T, H, HV, dv,
                         c.l2norm, G.derr, 32, G.N, s));
    } else if (mode == 4) {
        int64_t nc = (T + GDR_C - 1) / GDR_C;
        gdr_chunk_prep_kernel<128, 128><<<(unsigned)(B * HV * nc), GDR_NT, 0, s>>>(
            G.dq, G.dk_, G.dv_, G.dg, G.db, G.dsl, G.dscr, T, H, HV, 0, T, c.l2norm);
        gdr_chunk_scan_kernel<128, 128><<<(unsigned)(B * HV * (128 / GDR_SW)), GDR_NT, 0, s>>>(
            G.dq, G.dk_, G.dscr, G.dsl, G.do_, G.dst, T, H, HV, 0, T);
    } else {
        int taken = 0;
        if (mode == 9)
            CK(vt_rocm_launch_gated_delta_checked(G.derr, 32, G.dq, G.dk_, G.dv_, G.dg, G.db, G.dsl, acc, c.per_token,
                                                  G.do_, G.dst, B, T, H, HV, c.dk, dv, G.N, c.l2norm, s, &taken));
        if (!taken) {
            CK(vt_rocm_launch_check_gdr(G.derr, 32, G.dsl, acc, c.per_token, B, T, G.N, G.dsafe,
                                        G.dsafe + G.slots.size(), s));
            CK(vt_rocm_launch_gated_delta(G.dq, G.dk_, G.dv_, G.dg, G.db, G.dsafe,
                                          c.per_token ? G.dsafe + G.slots.size() : nullptr, c.per_token, G.do_, G.dst,
                                          B, T, H, HV, c.dk, dv, c.l2norm, G.dscr, s));
        }
    }
    CK(cudaGetLastError());
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
static int failures;

static void run_gdr(const Case &cs, const int *modes, int nmodes, bool ncu, cudaStream_t s)
{
    Gdr G;
    const GdrShape &c = cs.shape;
    setup(G, c);
    double bytes = 4.0 * ((double)c.B * c.T * (2.0 * c.H * c.dk + 2.0 * c.HV * c.dv + 2.0 * c.HV) + c.B +
                          2.0 * c.B * c.HV * (double)c.dk * c.dv);
    printf("== GDR %s: B=%d T=%d H=%d HV=%d dk=%d dv=%d %s l2norm=%d pad=%d g>=%.2f bytes=%.0f\n", cs.name, c.B, c.T,
           c.H, c.HV, c.dk, c.dv, c.per_token ? "per-token" : "per-seq", c.l2norm, c.padrow, c.glo, bytes);
    // timing: the state rotates over copies (>= 256 MiB in all, at most 64),
    // so that it comes from device memory as in a decode step
    const size_t st_bytes = G.st0.size() * 4;
    const int nsets = ncu ? 1 : (int)std::min<size_t>(64, std::max<size_t>(1, (256u << 20) / st_bytes));
    std::vector<float *> sets(nsets);
    float *dst0 = G.dst;
    sets[0] = dst0;
    for (int i = 1; i < nsets; i++) {
        CK(cudaMalloc(&sets[i], st_bytes));
        CK(cudaMemcpy(sets[i], G.st0.data(), st_bytes, cudaMemcpyHostToDevice));
    }
    for (int mi = 0; mi < nmodes; mi++) {
        int mode = modes[mi];
        G.dst = dst0;
        CK(cudaMemcpy(G.dst, G.st0.data(), st_bytes, cudaMemcpyHostToDevice));
        CK(cudaMemset(G.do_, 0xff, (size_t)c.B * c.T * c.HV * c.dv * 4));
        CK(cudaMemset(G.dscr, 0xff, G.scr_bytes));
        launch(G, mode, s);
        CK(cudaStreamSynchronize(s));
        std::vector<float> o((size_t)c.B * c.T * c.HV * c.dv), st(G.st0.size());
        CK(cudaMemcpy(o.data(), G.do_, o.size() * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(st.data(), G.dst, st_bytes, cudaMemcpyDeviceToHost));
        vt_rocm_err he;
        CK(cudaMemcpy(&he, G.derr, sizeof he, cudaMemcpyDeviceToHost));
        double eo = relerr(o, G.o_ref), es = relerr(st, G.st_ref);
        const bool ok = eo <= 1e-5 && es <= 1e-5 && he.code == 0;
        failures += !ok;
        if (ncu) {
            launch(G, mode, s);
            CK(cudaStreamSynchronize(s));
            printf("  %s mode %d (%s): err o %.3e state %.3e, error word %u\n", ok ? "ok  " : "FAIL", mode,
                   mode_name(mode), eo, es, he.code);
            continue;
        }
        int reps = mode == 0 ? cs.reps_old : cs.reps_new, it = 0;
        auto f = [&] {
            G.dst = sets[it++ % nsets];
            launch(G, mode, s);
        };
        float us = time_it(f, reps, s, false);
        float usg = time_it(f, reps, s, true);
        printf("  %s mode %d (%s): err o %.3e state %.3e | stream %.2f us, graph %.2f us/launch, %.1f GB/s = %.1f%% "
               "of copy\n",
               ok ? "ok  " : "FAIL", mode, mode_name(mode), eo, es, us, usg, bytes / usg / 1e3,
               100.0 * bytes / usg / 1e3 / copy_gbs);
    }
    G.dst = dst0;
    for (int i = 1; i < nsets; i++)
        CK(cudaFree(sets[i]));
}

// A bad call through the fused decode kernel (modes 6, 7, 8) records the
// same offence as check_gdr_kernel, writes zero outputs and no state.
static void run_bad(const char *what, GdrShape c, const std::function<void(Gdr &)> &spoil, cudaStream_t s)
{
    Gdr G;
    setup(G, c);
    spoil(G);
    CK(cudaMemcpy(G.dsl, G.slots.data(), G.slots.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(G.dacc, G.acc.data(), G.acc.size() * 4, cudaMemcpyHostToDevice));
    const int32_t *acc = c.per_token ? G.dacc : nullptr;
    vt_rocm_err want, got;
    CK(cudaMemset(G.derr, 0, sizeof(vt_rocm_err)));
    CK(vt_rocm_launch_check_gdr(G.derr, 32, G.dsl, acc, c.per_token, c.B, c.T, G.N, G.dsafe, G.dsafe + G.slots.size(),
                                s));
    CK(cudaMemcpy(&want, G.derr, sizeof want, cudaMemcpyDeviceToHost));
    for (int mode = 6; mode <= 8; mode++) {
        CK(cudaMemset(G.derr, 0, sizeof(vt_rocm_err)));
        CK(cudaMemset(G.do_, 0xff, (size_t)c.B * c.T * c.HV * c.dv * 4));
        CK(cudaMemcpy(G.dst, G.st0.data(), G.st0.size() * 4, cudaMemcpyHostToDevice));
        launch(G, mode, s);
        CK(cudaStreamSynchronize(s));
        CK(cudaMemcpy(&got, G.derr, sizeof got, cudaMemcpyDeviceToHost));
        std::vector<float> o((size_t)c.B * c.T * c.HV * c.dv), st(G.st0.size());
        CK(cudaMemcpy(o.data(), G.do_, o.size() * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(st.data(), G.dst, st.size() * 4, cudaMemcpyDeviceToHost));
        bool zero = true;
        for (float x : o)
            zero = zero && x == 0.0f;
        const bool same = got.code == want.code && got.op == want.op && got.operand == want.operand &&
                          got.a == want.a && got.b == want.b && got.c == want.c && got.d == want.d;
        const bool kept = memcmp(st.data(), G.st0.data(), st.size() * 4) == 0;
        const bool ok = want.code != 0 && same && zero && kept;
        failures += !ok;
        printf("%s bad call (%s), %s: code %u (%lld, %lld, %lld) vs check kernel %u (%lld, %lld, %lld), outputs %s, "
               "state %s\n",
               ok ? "ok  " : "FAIL", what, mode_name(mode), got.code, (long long)got.a, (long long)got.b,
               (long long)got.c, want.code, (long long)want.a, (long long)want.b, (long long)want.c,
               zero ? "zero" : "NOT zero", kept ? "kept" : "WRITTEN");
    }
}

static void run_bad_cases(cudaStream_t s)
{
    run_bad(
        "slot 9 out of range", {3, 1, 2, 4, 128, 128, 0, 1, 0, -1}, [](Gdr &G) { G.slots[2] = 9; }, s);
    run_bad(
        "slot -2", {3, 1, 2, 4, 128, 128, 0, 1, 0, -1}, [](Gdr &G) { G.slots[1] = -2; }, s);
    run_bad(
        "rows 0 and 2 share a slot", {3, 1, 2, 4, 128, 128, 0, 1, 0, -1}, [](Gdr &G) { G.slots[2] = G.slots[0]; }, s);
    run_bad(
        "per-token accepted 0", {3, 2, 2, 4, 128, 128, 1, 1, 0, -1}, [](Gdr &G) { G.acc[1] = 0; }, s);
    run_bad(
        "per-token accepted 3 > T, and a bad slot after it", {3, 2, 2, 4, 128, 128, 1, 1, 0, -1},
        [](Gdr &G) {
            G.acc[2] = 3;
            G.slots[5] = 77;
        },
        s);
    run_bad(
        "per-token write slot shared with row 0's read slot", {2, 2, 2, 4, 128, 128, 1, 1, 0, -1},
        [](Gdr &G) { G.slots[2] = G.slots[G.acc[0] - 1]; }, s);
}

static void run_conv(int B, int D, int with_bias, int with_slots, bool ncu, cudaStream_t s)
{
    const int W = 4, T = 1;
    ConvHost C;
    conv_host(B, D, with_bias, with_slots, C);
    const std::vector<float> &x = C.x, &w = C.w, &bias = C.bias, &st0 = C.st0, &stref = C.stref;
    const std::vector<int32_t> &slots = C.slots;
    const std::vector<double> &yref = C.yref;
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
    if (getenv("CHAIN"))
        vt_rocm_chain_mode = atoi(getenv("CHAIN"));
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
    const int all[] = {0, 1, 2, 3, 4, 5, 9}, dec[] = {0, 1, 2, 3, 5, 6, 7, 8, 9}, big[] = {0, 1, 4, 5, 9},
              newonly[] = {1, 4};
    run_bad_cases(s);
    if (ncu) {
        const int m1[] = {5, 6, 7, 8}, m2[] = {0, 4};
        run_gdr({"decode", 1, 1, 16, 32, 128, 128, 0, 1, 0, -0.1, 1, 1}, m1, 4, true, s);
        run_gdr({"prefill", 1, 1024, 16, 32, 128, 128, 0, 1, 0, -0.1, 1, 1}, m2, 2, true, s);
        run_conv(1, 3328, 0, 0, true, s);
        return failures != 0;
    }
    if (san) {
        const int m[] = {1, 2, 3, 4}, d[] = {1, 2, 3, 6, 7, 8};
        run_gdr({"3 chunks partial pad", 3, 130, 2, 4, 128, 128, 0, 1, 1, -1, 1, 1}, m, 4, true, s);
        run_gdr({"per-token", 3, 5, 2, 4, 128, 128, 1, 1, 1, -1, 1, 1}, d, 6, true, s);
        run_gdr({"dv 96", 2, 3, 2, 4, 128, 96, 0, 1, 1, -1, 1, 1}, d, 6, true, s);
        run_conv(3, 3328, 1, 1, true, s);
        return failures != 0;
    }
    run_gdr({"decode", 1, 1, 16, 32, 128, 128, 0, 1, 0, -0.1, 500, 500}, dec, 9, false, s);
    run_gdr({"decode B4", 4, 1, 16, 32, 128, 128, 0, 1, 0, -1, 200, 200}, dec, 9, false, s);
    run_gdr({"prefill", 1, 1024, 16, 32, 128, 128, 0, 1, 0, -0.1, 3, 20}, big, 5, false, s);
    if (!quick) {
        run_gdr({"prefill g[-1,0]", 1, 1024, 16, 32, 128, 128, 0, 1, 0, -1, 2, 10}, big, 5, false, s);
        run_gdr({"3 chunks partial pad", 3, 130, 2, 4, 128, 128, 0, 1, 1, -1, 5, 20}, all, 7, false, s);
        run_gdr({"1 chunk exact nol2", 2, 64, 1, 2, 128, 128, 0, 0, 0, -1, 5, 20}, all, 7, false, s);
        run_gdr({"partial only", 2, 37, 2, 4, 128, 128, 0, 1, 0, -0.5, 5, 20}, all, 7, false, s);
        run_gdr({"per-token", 3, 5, 2, 4, 128, 128, 1, 1, 1, -1, 20, 20}, dec, 9, false, s);
        run_gdr({"per-token T1", 2, 1, 2, 4, 128, 128, 1, 1, 0, -1, 20, 20}, dec, 9, false, s);
        run_gdr({"dv 96", 2, 3, 2, 4, 128, 96, 0, 1, 1, -1, 20, 20}, dec, 9, false, s);
        for (int T : {4, 8, 16, 32, 64, 128, 256})
            run_gdr({"threshold", 1, T, 16, 32, 128, 128, 0, 1, 0, -0.1, 5, 20}, newonly, 2, false, s);
        run_conv(1, 3328, 0, 0, false, s);
        run_conv(3, 3328, 1, 1, false, s);
    }
    (void)all;
    printf("%d failure(s)\n", failures);
    return failures != 0;
}
