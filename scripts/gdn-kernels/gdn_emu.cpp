// gdn_emu.cpp - runs the rocm backend's GatedDeltaRule and CausalConv1dUpdate
// launchers (backends/rocm/kernels_attention_gdn.hip, kernels_conv.hip) on
// the CPU, one std::thread per GPU thread, std::barrier for __syncthreads
// and shuffles through a block buffer, and compares them with the f64
// references of SPEC 7's formulas (gdn_ref.h, shared with gdn_bench.cu),
// the decode launcher with the folded slot check too: a check of the
// kernels' indexing, paths and windows without a GPU (not of their speed).
// Not part of the build:
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
#include <mutex>
#include <thread>
#include <vector>

#include "rocm_error.h"

// ---- the device language, emulated ----
#define VT_ROCM_DEVICE_H
#define VT_ROCM_LAUNCH_H
#define VT_ROCM_GDR_MAX_DK          256
#define VT_ROCM_BLOCK               256
#define VT_ROCM_GDR_FUSED_MAX_SLOTS 64
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
static std::mutex atomics;
static inline unsigned long long atomicMin(unsigned long long *p, unsigned long long v)
{
    std::lock_guard<std::mutex> g(atomics);
    unsigned long long old = *p;
    if (v < old)
        *p = v;
    return old;
}
static inline void vt_rocm_err_set(vt_rocm_err *e, uint32_t code, uint32_t op, uint32_t name, int64_t a, int64_t b,
                                   int64_t c, int64_t d)
{
    std::lock_guard<std::mutex> g(atomics);
    if (e->code != 0u)
        return;
    *e = vt_rocm_err{code, op, name, 0, a, b, c, d, ~0ull};
}

#include "kernels_attention_gdn.hip"
#include "kernels_conv.hip"

// ---- the reference and the cases (gdn_ref.h) ----
#include "gdn_ref.h"

static int failures;

static void run_gdr(const GdrShape &c)
{
    GdrHost G;
    gdr_host(c, G);
    const int64_t B = c.B, T = c.T, H = c.H, HV = c.HV, dk = c.dk, dv = c.dv;
    std::vector<float> o(B * T * HV * dv, NAN), st(G.st0);
    uint64_t sb = vt_rocm_gated_delta_scratch_bytes(B, T, HV, dk, dv, c.per_token);
    std::vector<float> scr(sb / 4 + 4, NAN);
    const int32_t *acc = c.per_token ? G.acc.data() : nullptr;
    vt_rocm_launch_gated_delta(G.q.data(), G.k.data(), G.v.data(), G.g.data(), G.beta.data(), G.slots.data(), acc,
                               c.per_token, o.data(), st.data(), B, T, H, HV, dk, dv, c.l2norm,
                               sb ? scr.data() : nullptr, nullptr);
    double eo = relerr(o, G.o_ref), es = relerr(st, G.st_ref);
    // the decode launcher with the slot check folded in, where it takes the call
    vt_rocm_err err = {};
    std::vector<float> o2(B * T * HV * dv, NAN), st2(G.st0);
    int taken = 0;
    vt_rocm_launch_gated_delta_checked(&err, 32, G.q.data(), G.k.data(), G.v.data(), G.g.data(), G.beta.data(),
                                       G.slots.data(), acc, c.per_token, o2.data(), st2.data(), B, T, H, HV, dk, dv,
                                       G.N, c.l2norm, nullptr, &taken);
    double eo2 = taken ? relerr(o2, G.o_ref) : 0, es2 = taken ? relerr(st2, G.st_ref) : 0;
    bool ok = eo <= 1e-5 && es <= 1e-5 && eo2 <= 1e-5 && es2 <= 1e-5 && err.code == 0;
    failures += !ok;
    printf("%s GatedDeltaRule B=%d T=%d H=%d HV=%d dk=%d dv=%d %s l2norm=%d pad=%d scratch=%llu: err o %.3e state "
           "%.3e; fused check %s: err o %.3e state %.3e, error word %u\n",
           ok ? "ok  " : "FAIL", c.B, c.T, c.H, c.HV, c.dk, c.dv, c.per_token ? "per-token" : "per-seq", c.l2norm,
           c.padrow, (unsigned long long)sb, eo, es, taken ? "taken" : "not taken", eo2, es2, err.code);
}

static void run_conv(int B, int D, int with_bias, int with_slots)
{
    const int W = 4, T = 1;
    ConvHost C;
    conv_host(B, D, with_bias, with_slots, C);
    const std::vector<float> &x = C.x, &w = C.w, &bias = C.bias, &st0 = C.st0, &stref = C.stref;
    const std::vector<int32_t> &slots = C.slots;
    const std::vector<double> &yref = C.yref;
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
    setvbuf(stdout, nullptr, _IOLBF, 0);              // each case's line as it finishes
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
