// decode-harness.cu - a standalone instrument for the rocm backend's
// grouped MoeExpertMatMul (kernels_matmul_moe.hip) and decode Attention
// (kernels_attention_decode.hip) on an NVIDIA GPU, next to the kernels they
// replace (vt_rocm_launch_mmv_moe, vt_rocm_launch_attention, linked from a
// build's objects): checks against a CPU reference (outputs poisoned
// first), times both with CUDA events over back-to-back launches, inputs
// rotating over >= 256 MiB (built by scripts/decode-harness-build).
//   decode-harness check | bench | profile | variants | attn
// Built with ATTN_OLD (scripts/decode-harness-build), it also times and
// profiles that earlier kernels_attention_decode.hip ("prev"). CLUSTER=0 in
// the environment: the decode Attention's chunks merge through global
// memory (as VT_ROCM_ATTN_CLUSTER=0 makes the plugin do).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "kernels_attention_decode.hip"
#ifdef ATTN_OLD
#define vt_rocm_attention_decode_scratch_bytes prev_attention_decode_scratch_bytes
#define vt_rocm_launch_attention_decode        prev_launch_attention_decode
namespace prev_attn
{
#include ATTN_OLD
}
#undef vt_rocm_attention_decode_scratch_bytes
#undef vt_rocm_launch_attention_decode
#endif
#include "kernels_matmul_moe.hip"

extern "C" {
#include "cpu_quant.h"
}

#include "harness_util.h"

struct Fmt {
    uint32_t dt;
    const char *name;
};
static const Fmt kFmts[] = {{2, "q4_0"},     {8, "q8_0"},       {12, "q4_k"},  {14, "q6_k"},
                            {VT_F16, "f16"}, {VT_BF16, "bf16"}, {20, "iq4_nl"}};

static int failures = 0;

static void report(const char *what, const std::vector<float> &got, const std::vector<double> &ref, double tol)
{
    double num = 0, den = 0;
    bool nan = false;
    for (size_t i = 0; i < got.size(); i++) {
        if (!isfinite(got[i]))
            nan = true;
        num += (got[i] - ref[i]) * (got[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    const double rel = den > 0 ? sqrt(num / den) : sqrt(num);
    const bool ok = !nan && rel <= tol;
    printf("check %-48s %s rel %.2e (tol %.0e)\n", what, ok ? "ok" : "FAIL", rel, tol);
    failures += !ok;
}

template <typename F> static double time_us(F f, int reps)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < 3; i++)
        f(i);
    CK(cudaEventRecord(a));
    for (int i = 0; i < reps; i++)
        f(i);
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1e3 / reps;
}

// ids [T, K]: distinct within a token, from `pool` experts.
static std::vector<int32_t> make_ids(int T, int K, int pool)
{
    std::vector<int32_t> ids(T * K);
    for (int t = 0; t < T; t++)
        for (int i = 0; i < K; i++) {
            bool again;
            do {
                ids[t * K + i] = (int32_t)(rnd() % pool);
                again = false;
                for (int j = 0; j < i; j++)
                    again |= ids[t * K + j] == ids[t * K + i];
            } while (again);
        }
    return ids;
}

// --- MoeExpertMatMul ---------------------------------------------------------

// How many distinct experts ids names (of E): what a step must read.
static int distinct_experts(const std::vector<int32_t> &ids, int E)
{
    std::vector<int> used(E, 0);
    int nu = 0;
    for (int32_t e : ids)
        nu += !used[e]++;
    return nu;
}

static bool variants = false;

static void moe_case(uint32_t dt, const char *name, int E, int K, int64_t m, int64_t k, int T, int per_slot, bool check,
                     bool profile, double copy)
{
    const std::vector<uint8_t> w = make_w(dt, (int64_t)E * m, k);
    const int64_t rb = (int64_t)w.size() / ((int64_t)E * m);
    const int64_t xcols = per_slot ? (int64_t)T * K : T;
    std::vector<float> x((size_t)(xcols * k));
    for (auto &f : x)
        f = frnd();
    const std::vector<int32_t> ids = make_ids(T, K, E);
    int nsets = check ? 1 : (int)((256ll << 20) / (int64_t)w.size()) + 1;
    std::vector<uint8_t *> dw(nsets);
    for (auto &p : dw) {
        CK(cudaMalloc(&p, w.size()));
        CK(cudaMemcpy(p, w.data(), w.size(), cudaMemcpyHostToDevice));
    }
    float *dx, *dy;
    int32_t *dids, *dtab, *dsafe;
    vt_rocm_err *derr;
    CK(cudaMalloc(&dsafe, ids.size() * 4));
    CK(cudaMalloc(&derr, sizeof(vt_rocm_err)));
    CK(cudaMemset(derr, 0, sizeof(vt_rocm_err)));
    CK(cudaMalloc(&dx, x.size() * 4));
    CK(cudaMalloc(&dy, (size_t)T * K * m * 4));
    CK(cudaMalloc(&dids, ids.size() * 4));
    CK(cudaMalloc(&dtab, tab_ints((int64_t)T * K) * 4 + 16));
    CK(cudaMemcpy(dx, x.data(), x.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dids, ids.data(), ids.size() * 4, cudaMemcpyHostToDevice));
    const size_t ny = (size_t)T * K * m;
    // the plugin's order: the grouped kernels where they take the shape
    // (vt_rocm_moe_grouped_scratch_bytes non-zero), else kernels_mmv*
    const bool grouped = vt_rocm_moe_grouped_scratch_bytes(dt, T, K) != 0;
    // the plugin's path now: at one token the kernel with the id check
    // folded in, up to 96 pairs its slots, else the check kernel and the
    // grouped or mmv kernels
    auto run_new = [&](int i) {
        int taken = 0;
        if (T == 1)
            CK(vt_rocm_launch_moe_one_checked(derr, 23, dx, per_slot, dw[i % nsets], dt, dids, E, dy, K, m, k, 0,
                                              &taken));
        else
            CK(vt_rocm_launch_moe_slots_checked(derr, 23, dx, per_slot, dw[i % nsets], dt, dids, E, dy, T, K, m, k, 0,
                                                &taken));
        if (taken)
            return;
        CK(vt_rocm_launch_check_range(derr, 23, VT_ROCM_NAME_IDS, dids, 0, T * K, E, -1, dsafe, 0));
        if (grouped)
            CK(vt_rocm_launch_moe_grouped(dx, per_slot, dw[i % nsets], dt, dsafe, dtab, dy, T, K, m, k, 0, &taken));
        if (!taken)
            CK(vt_rocm_launch_mmv_moe(dx, per_slot, dw[i % nsets], dt, dsafe, dy, T, K, m, k, 0, &taken));
    };
    // before: the check kernel, then kernels_mmv* (the path at one token)
    auto run_old = [&](int i) {
        int taken = 0;
        CK(vt_rocm_launch_check_range(derr, 23, VT_ROCM_NAME_IDS, dids, 0, T * K, E, -1, dsafe, 0));
        CK(vt_rocm_launch_mmv_moe(dx, per_slot, dw[i % nsets], dt, dsafe, dy, T, K, m, k, 0, &taken));
    };
    if (check) {
        CK(cudaMemset(dy, 0xff, ny * 4)); // NaN
        run_new(0);
        std::vector<float> got(ny);
        CK(cudaMemcpy(got.data(), dy, ny * 4, cudaMemcpyDeviceToHost));
        std::vector<double> ref(ny);
        std::vector<float> row(k);
        for (int p = 0; p < T * K; p++)
            for (int64_t r = 0; r < m; r++) {
                deq_row(dt, w.data() + ((int64_t)ids[p] * m + r) * rb, k, row.data());
                const float *xr = x.data() + (per_slot ? p : p / K) * k;
                double s = 0;
                for (int64_t i = 0; i < k; i++)
                    s += (double)row[i] * xr[i];
                ref[(size_t)p * m + r] = s;
            }
        char what[128];
        snprintf(what, sizeof what, "moe %s E=%d K=%d m=%lld k=%lld T=%d x_per_slot=%d%s", name, E, K, (long long)m,
                 (long long)k, T, per_slot, grouped ? " grouped" : "");
        report(what, got, ref, 1e-5);
        vt_rocm_err he;
        CK(cudaMemcpy(&he, derr, sizeof he, cudaMemcpyDeviceToHost));
        if (he.code != 0) {
            printf("check %-48s FAIL error word %u on a good call\n", what, he.code);
            failures++;
        }
        if (T == 1) { // a bad id: the fused kernel's record is the check kernel's
            std::vector<int32_t> bad(ids);
            bad[K - 1] = E + 3;
            bad[K / 2] = -1;
            CK(cudaMemcpy(dids, bad.data(), bad.size() * 4, cudaMemcpyHostToDevice));
            vt_rocm_err want, got2;
            CK(vt_rocm_launch_check_range(derr, 23, VT_ROCM_NAME_IDS, dids, 0, T * K, E, -1, dsafe, 0));
            CK(cudaMemcpy(&want, derr, sizeof want, cudaMemcpyDeviceToHost));
            CK(cudaMemset(derr, 0, sizeof(vt_rocm_err)));
            int taken = 0;
            CK(vt_rocm_launch_moe_one_checked(derr, 23, dx, per_slot, dw[0], dt, dids, E, dy, K, m, k, 0, &taken));
            CK(cudaMemcpy(&got2, derr, sizeof got2, cudaMemcpyDeviceToHost));
            CK(cudaMemset(derr, 0, sizeof(vt_rocm_err)));
            CK(cudaMemcpy(dids, ids.data(), ids.size() * 4, cudaMemcpyHostToDevice));
            const bool same = want.code == got2.code && want.op == got2.op && want.operand == got2.operand &&
                              want.a == got2.a && want.b == got2.b && want.c == got2.c && want.d == got2.d;
            const bool ok = !taken || (want.code != 0 && same);
            printf(
                "check %-48s %s bad ids: fused %s code %u a %lld b %lld c %lld d %lld, check kernel code %u a %lld\n",
                what, ok ? "ok" : "FAIL", taken ? "taken" : "not taken", got2.code, (long long)got2.a,
                (long long)got2.b, (long long)got2.c, (long long)got2.d, want.code, (long long)want.a);
            failures += !ok;
        }
    } else if (profile) {
        run_new(0);
        run_old(0);
        CK(cudaDeviceSynchronize());
    } else if (variants && T == 1) {
        const int nu = distinct_experts(ids, E);
        const double bytes = (double)nu * m * rb; // each selected expert's rows once
        const bool al = rb % 16 == 0;
        auto var = [&](auto launch, const char *what) {
            const double us = time_us(
                [&](int i) {
                    CK(launch(dx, per_slot, dw[i % nsets], rb, dids, derr, 23, E, dy, T * K, K, m, k, (cudaStream_t)0,
                              al));
                },
                200);
            printf("variant MoE %-6s T=%2d %-24s %7.2f us %5.1f%% of copy\n", name, T, what, us,
                   100.0 * bytes / us * 1e-3 / copy);
        };
        const double us_old = time_us(run_old, 200), us_new = time_us(run_new, 200);
        printf("variant MoE %-6s T=%2d %-24s %7.2f us %5.1f%% of copy\n", name, T, "check + mmv (before)", us_old,
               100.0 * bytes / us_old * 1e-3 / copy);
        printf("variant MoE %-6s T=%2d %-24s %7.2f us %5.1f%% of copy\n", name, T, "plugin path now", us_new,
               100.0 * bytes / us_new * 1e-3 / copy);
        if (dt == 2) {
            var(launch_slots<2, 1>, "fused slots R=1");
            var(launch_slots<2, 2>, "fused slots R=2");
            var(launch_slots<2, 4>, "fused slots R=4");
            var(launch_slots<2, 8>, "fused slots R=8");
        } else if (dt == 8) {
            var(launch_slots<8, 2>, "fused slots R=2");
            var(launch_slots<8, 4>, "fused slots R=4");
        } else if (dt == 12) {
            var(launch_slots<12, 2>, "fused slots R=2");
            var(launch_slots<12, 4>, "fused slots R=4");
        } else if (dt == 14) {
            var(launch_slots<14, 2>, "fused slots R=2");
            var(launch_slots<14, 4>, "fused slots R=4");
        } else if (dt == VT_F16) {
            var(launch_slots<VT_F16, 2>, "fused slots R=2");
            var(launch_slots<VT_F16, 4>, "fused slots R=4");
        }
    } else if (variants) {
        const int nu = distinct_experts(ids, E);
        const double bytes = (double)nu * m * rb; // each selected expert's rows once
        const bool al = rb % 16 == 0;
        auto var = [&](auto launch, const char *what) {
            const double us = time_us(
                [&](int i) {
                    moe_group_kernel<<<1, kGroupThreads>>>(dids, T * K, dtab);
                    CK(launch(dx, per_slot, dw[i % nsets], rb, dtab, dy, T * K, K, m, k, (cudaStream_t)0, al));
                },
                60);
            printf("variant MoE %-6s T=%2d %-10s %7.2f us %5.1f%% of copy\n", name, T, what, us,
                   100.0 * bytes / us * 1e-3 / copy);
        };
        if (dt == 2) {
            {
                var(launch_grouped<2, 1, 4>, "N=1 R=4");
                var(launch_grouped<2, 2, 4>, "N=2 R=4");
                var(launch_grouped<2, 4, 4>, "N=4 R=4");
                var(launch_grouped<2, 2, 2>, "N=2 R=2");
                var(launch_grouped<2, 4, 2>, "N=4 R=2");
            }
        }
    } else {
        const int nu = distinct_experts(ids, E);
        const double bytes = (double)nu * m * rb; // each selected expert's rows once
        const double us = time_us(run_new, 60), old = time_us(run_old, 60);
        printf("bench MoE %-6s E=%d K=%d m=%lld k=%lld T=%2d (%3d experts) %s %7.2f us %6.0f GB/s %5.1f%% of copy | "
               "old %7.2f us %5.1f%%\n",
               name, E, K, (long long)m, (long long)k, T, nu, grouped ? "new" : "mmv", us, bytes / us * 1e-3,
               100.0 * bytes / us * 1e-3 / copy, old, 100.0 * bytes / old * 1e-3 / copy);
    }
    for (auto p : dw)
        CK(cudaFree(p));
    CK(cudaFree(dx));
    CK(cudaFree(dy));
    CK(cudaFree(dids));
    CK(cudaFree(dtab));
    CK(cudaFree(dsafe));
    CK(cudaFree(derr));
}

// --- Attention ---------------------------------------------------------------

// The decode kernel of NT threads and KB keys per group per batch for f16,
// d = 128, 4 query heads per kv head only (the variants' shape).
template <int NT, int KB>
static hipError_t run_f16_128_g4(const float *q, const void *k, const void *v, uint32_t dt, const int32_t *pos,
                                 float *o, int64_t T, int64_t Hq, int64_t Hkv, int64_t S, int64_t d, int64_t dv,
                                 float scale, int32_t window, void *scratch, hipStream_t stream, int64_t want,
                                 uint32_t *done)
{
    if (dt != VT_F16 || d != 128 || dv != 128 || Hq != 4 * Hkv)
        return hipErrorInvalidValue;
    AttnArgs a;
    dim3 grid;
    hipError_t e = attn_setup(q, k, v, pos, o, T, Hq, Hkv, S, dv, scale, window, scratch, stream, want, done, a, grid);
    if (e != hipSuccess)
        return e;
    launch_g<VT_F16, 128, 4, NT, KB>(grid, stream, a);
    return hipGetLastError();
}

// Attention variants (kernels_attention_decode.hip's kernel): 0 the
// plugin's launcher; then threads / keys per group per batch / blocks
// wanted / the counters zeroed by a memset per call (0) or kept zero by the
// kernel across calls (1).
struct AttnVariant {
    const char *name;
    hipError_t (*run)(const float *, const void *, const void *, uint32_t, const int32_t *, float *, int64_t, int64_t,
                      int64_t, int64_t, int64_t, int64_t, float, int32_t, void *, hipStream_t, int64_t, uint32_t *);
    int64_t want;
    int kept;
};
static const AttnVariant kAttnVariants[] = {
    {"launcher", nullptr, 0, 0},
    {"NT256 KB4 132 counters kept", run_f16_128_g4<256, 4>, 132, 1},
    {"NT256 KB2 132 counters kept", run_f16_128_g4<256, 2>, 132, 1},
    {"NT128 KB4 264 counters kept", run_f16_128_g4<128, 4>, 264, 1},
    {"NT128 KB4 132 counters kept", run_f16_128_g4<128, 4>, 132, 1},
    {"NT512 KB2 132 counters kept", run_f16_128_g4<512, 2>, 132, 1},
    {"NT256 KB2 264 memset", run_f16_128_g4<256, 2>, 264, 0},
};
static int attn_variant = 0;

static float h2f(uint32_t dt, uint16_t h)
{
    return dt == VT_F16 ? vt_f16_to_f32(h) : vt_bf16_to_f32(h);
}

static void attn_case(uint32_t dt, int T, int Hq, int Hkv, int d, int S, const std::vector<int32_t> &pos, int window,
                      bool check, bool profile, double copy)
{
    const size_t kvn = (size_t)S * Hkv * d;
    std::vector<uint16_t> kh(kvn), vh(kvn);
    for (size_t i = 0; i < kvn; i++) {
        kh[i] = dt == VT_F16 ? vt_f32_to_f16(frnd()) : vt_f32_to_bf16(frnd());
        vh[i] = dt == VT_F16 ? vt_f32_to_f16(frnd()) : vt_f32_to_bf16(frnd());
    }
    std::vector<float> q((size_t)T * Hq * d);
    for (auto &f : q)
        f = 2.0f * frnd();
    const float scale = 1.0f / sqrtf((float)d);
    int nsets = check ? 1 : (int)((256ll << 20) / (int64_t)(2 * kvn * 2)) + 1;
    std::vector<uint16_t *> dk(nsets), dv(nsets);
    for (int i = 0; i < nsets; i++) {
        CK(cudaMalloc(&dk[i], kvn * 2));
        CK(cudaMalloc(&dv[i], kvn * 2));
        CK(cudaMemcpy(dk[i], kh.data(), kvn * 2, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dv[i], vh.data(), kvn * 2, cudaMemcpyHostToDevice));
    }
    float *dq, *dout;
    int32_t *dpos;
    const size_t no = (size_t)T * Hq * d;
    CK(cudaMalloc(&dq, q.size() * 4));
    CK(cudaMalloc(&dout, no * 4));
    CK(cudaMalloc(&dpos, T * 4));
    CK(cudaMemcpy(dq, q.data(), q.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dpos, pos.data(), T * 4, cudaMemcpyHostToDevice));
    uint64_t sb_new = vt_rocm_attention_decode_scratch_bytes(T, Hq, Hkv, S, d, d, dt);
    if (scratch_for(T, Hq, Hkv, S, d, 4096) > sb_new)
        sb_new = scratch_for(T, Hq, Hkv, S, d, 4096);
    const uint64_t sb_old = vt_rocm_attention_scratch_bytes(T, Hq, Hkv, S, d, d);
    void *scratch;
    uint32_t *dcnt; // counters kept zero by the kernel (variants)
    CK(cudaMalloc(&scratch, (sb_new > sb_old ? sb_new : sb_old) + 256));
    CK(cudaMalloc(&dcnt, 4096 * 4));
    CK(cudaMemset(dcnt, 0, 4096 * 4));
    auto run_new = [&](int i) {
        int taken = 0;
        if (attn_variant > 0) {
            const AttnVariant &av = kAttnVariants[attn_variant];
            CK(av.run(dq, dk[i % nsets], dv[i % nsets], dt, dpos, dout, T, Hq, Hkv, S, d, d, scale, window, scratch, 0,
                      av.want, av.kept ? dcnt : nullptr));
            return;
        }
        CK(vt_rocm_launch_attention_decode(dq, dk[i % nsets], dv[i % nsets], dt, dpos, dout, T, Hq, Hkv, S, d, d, scale,
                                           window, scratch, nullptr, 0, &taken));
        if (!taken) {
            fprintf(stderr, "decode attention did not take the shape\n");
            exit(2);
        }
    };
    auto run_old = [&](int i) {
        CK(vt_rocm_launch_attention(dq, dk[i % nsets], dv[i % nsets], dt, dpos, dout, T, Hq, Hkv, S, d, d, scale,
                                    window, scratch, 0));
    };
#ifdef ATTN_OLD
    const uint64_t sb_prev = prev_attn::prev_attention_decode_scratch_bytes(T, Hq, Hkv, S, d, d, dt);
    void *scratch_prev;
    CK(cudaMalloc(&scratch_prev, sb_prev + 256));
    auto run_prev = [&](int i) {
        int taken = 0;
        CK(prev_attn::prev_launch_attention_decode(dq, dk[i % nsets], dv[i % nsets], dt, dpos, dout, T, Hq, Hkv, S, d,
                                                   d, scale, window, scratch_prev, nullptr, 0, &taken));
        if (!taken) {
            fprintf(stderr, "the previous decode attention did not take the shape\n");
            exit(2);
        }
    };
#endif
    char what[160];
    snprintf(what, sizeof what, "attn %s T=%d Hq=%d Hkv=%d d=%d S=%d p0=%d win=%d %s", dt == VT_F16 ? "f16" : "bf16", T,
             Hq, Hkv, d, S, pos[0], window, kAttnVariants[attn_variant].name);
    if (check) {
        run_new(0); // twice before: the counters must be left zero
        run_new(0);
        CK(cudaMemset(dout, 0xff, no * 4));
        run_new(0);
        std::vector<float> got(no);
        CK(cudaMemcpy(got.data(), dout, no * 4, cudaMemcpyDeviceToHost));
        std::vector<double> ref(no, 0.0);
        const int G = Hq / Hkv;
        for (int t = 0; t < T; t++)
            for (int h = 0; h < Hq; h++) {
                const int kvh = h / G;
                int64_t lo = window > 0 ? pos[t] - window + 1 : 0, hi = pos[t] < S - 1 ? pos[t] : S - 1;
                if (lo < 0)
                    lo = 0;
                if (lo > hi)
                    continue;
                std::vector<double> sc(hi - lo + 1);
                double mx = -INFINITY;
                for (int64_t s = lo; s <= hi; s++) {
                    double dot = 0;
                    for (int j = 0; j < d; j++)
                        dot += (double)q[((size_t)t * Hq + h) * d + j] * h2f(dt, kh[((size_t)s * Hkv + kvh) * d + j]);
                    sc[s - lo] = dot * scale;
                    mx = fmax(mx, sc[s - lo]);
                }
                double l = 0;
                for (auto &v : sc)
                    l += (v = exp(v - mx));
                for (int j = 0; j < d; j++) {
                    double a = 0;
                    for (int64_t s = lo; s <= hi; s++)
                        a += sc[s - lo] * h2f(dt, vh[((size_t)s * Hkv + kvh) * d + j]);
                    ref[((size_t)t * Hq + h) * d + j] = a / l;
                }
            }
        report(what, got, ref, 1e-5);
    } else if (profile) {
        run_new(0);
        run_old(0);
#ifdef ATTN_OLD
        run_prev(0);
#endif
        CK(cudaDeviceSynchronize());
    } else if (variants) {
        const double bytes = 2.0 * kvn * 2, us = time_us(run_new, 200);
        printf("variant %-70s %7.2f us %6.0f GB/s %5.1f%% of copy\n", what, us, bytes / us * 1e-3,
               100.0 * bytes / us * 1e-3 / copy);
    } else {
        const double bytes = 2.0 * kvn * 2;
        for (int round = 0; round < 2; round++) {
            const double us = time_us(run_new, 100), old = time_us(run_old, 100);
#ifdef ATTN_OLD
            const double prev = time_us(run_prev, 100);
            printf("bench %s: new %7.2f us %6.0f GB/s %5.1f%% of copy | prev %7.2f us %5.1f%% | old %7.2f us %5.1f%%\n",
                   what, us, bytes / us * 1e-3, 100.0 * bytes / us * 1e-3 / copy, prev,
                   100.0 * bytes / prev * 1e-3 / copy, old, 100.0 * bytes / old * 1e-3 / copy);
#else
            printf("bench %s: new %7.2f us %6.0f GB/s %5.1f%% of copy | old %7.2f us %5.1f%%\n", what, us,
                   bytes / us * 1e-3, 100.0 * bytes / us * 1e-3 / copy, old, 100.0 * bytes / old * 1e-3 / copy);
#endif
        }
    }
    for (int i = 0; i < nsets; i++) {
        CK(cudaFree(dk[i]));
        CK(cudaFree(dv[i]));
    }
    CK(cudaFree(dq));
    CK(cudaFree(dout));
    CK(cudaFree(dpos));
    CK(cudaFree(scratch));
    CK(cudaFree(dcnt));
#ifdef ATTN_OLD
    CK(cudaFree(scratch_prev));
#endif
}

// chained launches (backends/rocm/rocm_chain.h): off in this harness
extern "C" {
int vt_rocm_chain_mode = 0;
int vt_rocm_attn_cluster = 1; // CLUSTER=0: the chunks merge through global memory
}

static double copy_gbps()
{
    const size_t n = 1ull << 30;
    void *a, *b;
    CK(cudaMalloc(&a, n));
    CK(cudaMalloc(&b, n));
    const double us = time_us([&](int) { CK(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice)); }, 10);
    CK(cudaFree(a));
    CK(cudaFree(b));
    return 2.0 * n / us * 1e-3;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "check";
    const bool check = !strcmp(mode, "check"), profile = !strcmp(mode, "profile");
    variants = !strcmp(mode, "variants");
    if (getenv("CLUSTER"))
        vt_rocm_attn_cluster = atoi(getenv("CLUSTER"));
    const double copy = check || profile ? 0 : copy_gbps();
    if (copy > 0)
        printf("copy bandwidth (cudaMemcpy d2d 1 GiB, read + write): %.0f GB/s\n", copy);
    if (check) {
        for (const Fmt &f : kFmts)
            for (int T : {1, 3, 16})
                moe_case(f.dt, f.name, 24, 8, 67, 512, T, 0, true, false, 0);
        moe_case(2, "q4_0", 24, 8, 67, 512, 5, 1, true, false, 0);
        moe_case(2, "q4_0", 24, 8, 67, 512, 1, 1, true, false, 0);    // one token, x per slot
        moe_case(2, "q4_0", 128, 8, 768, 2048, 1, 0, true, false, 0); // the bench's shape
        moe_case(2, "q4_0", 16, 3, 40, 2304, 1, 0, true, false, 0);   // k of 9 tiles, rows past 32
        moe_case(2, "q4_0", 4, 4, 33, 256, 16, 0, true, false, 0);    // many pairs per expert
        moe_case(14, "q6_k", 128, 8, 768, 2048, 16, 0, true, false, 0);
        for (uint32_t dt : {(uint32_t)VT_F16, (uint32_t)VT_BF16})
            for (int d : {64, 128, 256}) {
                attn_case(dt, 1, 32, 8, d, 1000, {999}, 0, true, false, 0);
                attn_case(dt, 1, 8, 8, d, 333, {200}, 0, true, false, 0);
            }
        attn_case(VT_F16, 3, 16, 2, 128, 700, {5, 300, 699}, 0, true, false, 0);
        attn_case(VT_F16, 2, 32, 4, 128, 4096, {4095, 1000}, 100, true, false, 0);
        attn_case(VT_F16, 1, 32, 8, 128, 4096, {4095}, 0, true, false, 0);
        const int n_av = (int)(sizeof kAttnVariants / sizeof kAttnVariants[0]);
        attn_case(VT_F16, 1, 32, 8, 128, 4096, {512}, 0, true, false, 0);
        attn_case(VT_F16, 16, 32, 8, 128, 300, {0, 1, 2, 3, 31, 32, 33, 100, 150, 200, 250, 290, 297, 298, 299, 299}, 0,
                  true, false, 0);
        attn_case(VT_F16, 1, 32, 8, 128, 4096, {4095}, 4000, true, false, 0);
        attn_case(VT_F16, 1, 32, 8, 128, 100, {5}, 0, true, false, 0); // fewer keys than chunks
        attn_case(VT_BF16, 2, 32, 4, 64, 3000, {2999, 700}, 100, true, false, 0);
        attn_case(VT_F16, 1, 8, 1, 256, 5000, {4000}, 0, true, false, 0);
        for (attn_variant = 1; attn_variant < n_av; attn_variant++) {
            attn_case(VT_F16, 1, 32, 8, 128, 4096, {4095}, 0, true, false, 0);
            attn_case(VT_F16, 1, 32, 8, 128, 4096, {512}, 0, true, false, 0);
            attn_case(VT_F16, 2, 32, 8, 128, 4096, {4095, 7}, 0, true, false, 0);
        }
        attn_variant = 0;
        printf("%d failures\n", failures);
        return failures ? 1 : 0;
    }
    if (!strcmp(mode, "attn")) { // the Attention rows of bench, then of variants
        for (int p : {4095, 512})
            attn_case(VT_F16, 1, 32, 8, 128, 4096, {p}, 0, false, false, copy);
        variants = true;
    }
    if (variants) {
        const int n_av = (int)(sizeof kAttnVariants / sizeof kAttnVariants[0]);
        for (int rep = 0; rep < 2; rep++)
            for (attn_variant = 0; attn_variant < n_av; attn_variant++)
                for (int p : {4095, 512})
                    attn_case(VT_F16, 1, 32, 8, 128, 4096, {p}, 0, false, false, copy);
        attn_variant = 0;
        if (!strcmp(mode, "attn"))
            return 0;
        for (const Fmt &f : kFmts)
            if (f.dt == 2 || f.dt == 8 || f.dt == 12 || f.dt == 14 || f.dt == VT_F16)
                moe_case(f.dt, f.name, 128, 8, 768, 2048, 1, 0, false, false, copy);
        for (int T : {4, 16})
            moe_case(2, "q4_0", 128, 8, 768, 2048, T, 0, false, false, copy);
        return 0;
    }
    for (const Fmt &f : kFmts)
        for (int T : {1, 4, 16}) {
            if ((profile && f.dt != 2) || f.dt == VT_BF16 || f.dt == 20)
                continue;
            moe_case(f.dt, f.name, 128, 8, 768, 2048, T, 0, false, profile, copy);
        }
    attn_case(VT_F16, 1, 32, 8, 128, 4096, {4095}, 0, false, profile, copy);
    if (!profile)
        attn_case(VT_F16, 1, 32, 8, 128, 640, {639}, 0, false, profile, copy);
    // decode early in a long cache (the 8b-shape step at position 512 of 4096 slots)
    attn_case(VT_F16, 1, 32, 8, 128, 4096, {512}, 0, false, profile, copy);
    return 0;
}
