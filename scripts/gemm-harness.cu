// gemm-harness.cu - the prefill MatMul instrument (scripts/gemm-harness-build):
// kernels_gemm.hip's GEMM for bf16, f16, q4_0, q8_0 at m = k = 4096 and n = 16..2048,
// 2-pass (x = hi + lo, the plugin's path) and 1-pass (x rounded), against the
// plugin's row kernels (kernels_matmul.hip with the decode kernels declined) and
// cuBLAS bf16/f16 GEMM in the same run; the --with-vendor-blas route
// (rocm_vendor_blas.c); relative errors against a CPU reference (double sums)
// on sampled outputs, outputs poisoned first; an edge shape (n 77, m 1000,
// k not a multiple of 32). With an argument: one launch each, for ncu.
#include "kernels_gemm.hip"
#include <cublas_v2.h>
#include "rocm_launch.h"
#include "rocm_vendor_blas.h"
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
#include <vt/vt_blocks.h>

#define CK(e) do { cudaError_t r_ = (e); if (r_ != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(r_), __LINE__); exit(1);} } while (0)
static uint64_t rng = 88172645463325252ull;
static uint32_t rnd() { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return (uint32_t)rng; }
static float frand() { return (rnd() >> 8) * (1.0f / 16777216.0f) * 2.f - 1.f; }

struct W { uint32_t dt; std::vector<uint8_t> host; int64_t row_bytes; const char *name; };

static float welem(const W &w, int64_t k, int64_t r, int64_t c) {
    const uint8_t *row = w.host.data() + r * w.row_bytes;
    if (w.dt == VT_BF16) return vt_bf16_to_f32(((const uint16_t *)row)[c]);
    if (w.dt == VT_F16) return vt_f16_to_f32(((const uint16_t *)row)[c]);
    int bb = w.dt == VT_Q4_0 ? 18 : 34;
    return vt_block_value(w.dt, row + (c / 32) * bb, (int)(c % 32));
}

static W make_w(uint32_t dt, int64_t m, int64_t k) {
    W w; w.dt = dt;
    if (dt == VT_BF16 || dt == VT_F16) {
        w.row_bytes = 2 * k; w.host.resize(m * w.row_bytes);
        uint16_t *p = (uint16_t *)w.host.data();
        for (int64_t i = 0; i < m * k; i++) p[i] = dt == VT_BF16 ? vt_f32_to_bf16(frand() * 0.05f) : vt_f32_to_f16(frand() * 0.05f);
        w.name = dt == VT_BF16 ? "bf16" : "f16";
    } else {
        int bb = dt == VT_Q4_0 ? 18 : 34;
        w.row_bytes = k / 32 * bb; w.host.resize(m * w.row_bytes);
        for (size_t i = 0; i < w.host.size(); i++) w.host[i] = rnd() & 255;
        for (int64_t b = 0; b < m * (k / 32); b++) { uint16_t d = vt_f32_to_f16(0.001f + 0.01f * fabsf(frand())); memcpy(&w.host[b * bb], &d, 2); }
        w.name = dt == VT_Q4_0 ? "q4_0" : "q8_0";
    }
    return w;
}

static void *g_scratch;
template <int P> static cudaError_t run_vt(uint32_t dt, const float *x, const void *w, float *y, int64_t n, int64_t m, int64_t k) {
    if (n >= VT_ROCM_GEMM_MIN_N && !vt_rocm_gemm_takes(dt, n, m, k, x, w)) { printf("not taken\n"); exit(1); }
    if (vt_rocm_gemm_scratch_bytes(n, k) > (64ull << 20)) { printf("scratch\n"); exit(1); }
    switch (dt) {
    case VT_BF16: return launch<kWBf16, P>(x, w, y, n, m, k, g_scratch, 0);
    case VT_F16: return launch<kWF16, P>(x, w, y, n, m, k, g_scratch, 0);
    case VT_Q4_0: return launch<kWQ40, P>(x, w, y, n, m, k, g_scratch, 0);
    default: return launch<kWQ80, P>(x, w, y, n, m, k, g_scratch, 0);
    }
}

// returns rel error over sampled rows; checks every output written (no NaN)
static double check(const W &w, const std::vector<float> &x, const float *dy, int64_t n, int64_t m, int64_t k, int *unwritten) {
    std::vector<float> y(n * m); CK(cudaMemcpy(y.data(), dy, n * m * 4, cudaMemcpyDeviceToHost));
    *unwritten = 0;
    for (int64_t i = 0; i < n * m; i++) if (!(y[i] == y[i])) (*unwritten)++;
    double num = 0, den = 0;
    int rows[] = {0, 1, 7, 63, 64, 127, 128, 200, 255, 300, 511, 777, 1023, 1500, 2047};
    std::vector<float> wr(k);
    for (int64_t c = 0; c < m; c += (m > 1024 ? 7 : 1)) {
        for (int64_t kk = 0; kk < k; kk++) wr[kk] = welem(w, k, c, kk);
        for (int ri = 0; ri < 15; ri++) { int64_t r = rows[ri]; if (r >= n) continue;
            double s = 0; for (int64_t kk = 0; kk < k; kk++) s += (double)x[r * k + kk] * wr[kk];
            double d = y[r * m + c] - s; num += d * d; den += s * s; }
    }
    return sqrt(num / den);
}

int main(int argc, char **argv) {
    cublasHandle_t h; cublasCreate(&h);
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    const int64_t M = 4096, K = 4096, NMAX = 2048;
    float *dx, *dy; void *dw; __nv_bfloat16 *dxb; __half *dxh;
    CK(cudaMalloc(&dx, NMAX * K * 4)); CK(cudaMalloc(&dy, NMAX * M * 4)); CK(cudaMalloc(&dw, M * K * 2));
    CK(cudaMalloc(&dxb, NMAX * K * 2)); CK(cudaMalloc(&g_scratch, 64ull << 20)); CK(cudaMalloc(&dxh, NMAX * K * 2));
    std::vector<float> x(NMAX * K); for (auto &v : x) v = frand() * 2.f; 
    for (int i = 0; i < 64; i++) x[rnd() % x.size()] = 3000.f * frand(); // some large activations
    CK(cudaMemcpy(dx, x.data(), x.size() * 4, cudaMemcpyHostToDevice));
    { std::vector<__nv_bfloat16> xb(x.size()); std::vector<__half> xh(x.size());
      for (size_t i = 0; i < x.size(); i++) { xb[i] = __float2bfloat16(x[i]); xh[i] = __float2half(x[i]); }
      CK(cudaMemcpy(dxb, xb.data(), xb.size() * 2, cudaMemcpyHostToDevice)); CK(cudaMemcpy(dxh, xh.data(), xh.size() * 2, cudaMemcpyHostToDevice)); }
    uint32_t dts[] = {VT_BF16, VT_F16, VT_Q4_0, VT_Q8_0};
    auto timeit = [&](auto fn) { for (int i = 0; i < 3; i++) fn(); CK(cudaDeviceSynchronize()); cudaEventRecord(e0); const int it = 20; for (int i = 0; i < it; i++) fn(); cudaEventRecord(e1); CK(cudaEventSynchronize(e1)); float ms; cudaEventElapsedTime(&ms, e0, e1); return ms / it; };
    float alpha = 1, beta = 0;
    if (argc > 1) goto ncu;
    // cuBLAS dense rates
    for (int64_t n : {64, 128, 512, 2048}) {
        double fl = 2.0 * n * M * K;
        float tb = timeit([&] { cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, M, n, K, &alpha, dw, CUDA_R_16BF, K, dxb, CUDA_R_16BF, K, &beta, dy, CUDA_R_32F, M, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT); });
        float th = timeit([&] { cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, M, n, K, &alpha, dw, CUDA_R_16F, K, dxh, CUDA_R_16F, K, &beta, dy, CUDA_R_32F, M, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT); });
        printf("cublas m=k=4096 n=%ld bf16 %.1f us %.1f TFLOP/s | f16 %.1f us %.1f TFLOP/s\n", (long)n, tb * 1e3, fl / tb / 1e9, th * 1e3, fl / th / 1e9);
    }
    CK(cudaGetLastError());
    for (uint32_t dt : dts) {
        W w = make_w(dt, M, K);
        CK(cudaMemcpy(dw, w.host.data(), w.host.size(), cudaMemcpyHostToDevice));
        for (int64_t n : {16, 32, 64, 128, 512, 2048}) {
            double fl = 2.0 * n * M * K;
            float t2 = timeit([&] { CK(run_vt<2>(dt, dx, dw, dy, n, M, K)); });
            float t1 = timeit([&] { CK(run_vt<1>(dt, dx, dw, dy, n, M, K)); });
            float to = timeit([&] { CK(dt == VT_BF16 || dt == VT_F16 ? vt_rocm_launch_matmul_dense(dx, dw, dt, dy, n, M, K, 0) : vt_rocm_launch_matmul_q(dx, dw, dt, 32, dt == VT_Q4_0 ? 18 : 34, dy, n, M, K, 0)); });
            printf("old   %-5s m=k=4096 n=%-5ld %7.1f us %6.1f TFLOP/s\n", w.name, (long)n, to * 1e3, fl / to / 1e9);
            printf("vt %-5s m=k=4096 n=%-5ld 2-pass %7.1f us %6.1f TFLOP/s | 1-pass %7.1f us %6.1f TFLOP/s\n", w.name, (long)n, t2 * 1e3, fl / t2 / 1e9, t1 * 1e3, fl / t1 / 1e9);
        }
        if (dt == VT_BF16 || dt == VT_F16) { // the --with-vendor-blas route (cuBLASLt, x rounded)
            int64_t n = 512; int unw;
            uint64_t sb = vt_rocm_vendor_gemm_scratch_bytes(dt, n, M, K);
            if (!sb || sb > (64ull << 20)) { printf("vendor route declined (%llu)\n", (unsigned long long)sb); }
            else {
                float tv = timeit([&] { CK(vt_rocm_vendor_gemm(dx, dw, dt, dy, n, M, K, g_scratch, 0)); });
                CK(cudaMemset(dy, 0xFF, n * M * 4)); CK(vt_rocm_vendor_gemm(dx, dw, dt, dy, n, M, K, g_scratch, 0)); CK(cudaDeviceSynchronize());
                double re = check(w, x, dy, n, M, K, &unw);
                printf("vendor-blas route %-5s n=512 %.1f us %.1f TFLOP/s rel err %.3g unwritten %d\n", w.name, tv * 1e3, 2.0 * n * M * K / tv / 1e9, re, unw);
            }
        }
        for (int P = 1; P <= 2; P++) {
            int64_t n = 512; int unw;
            CK(cudaMemset(dy, 0xFF, n * M * 4));
            CK(P == 2 ? run_vt<2>(dt, dx, dw, dy, n, M, K) : run_vt<1>(dt, dx, dw, dy, n, M, K)); CK(cudaDeviceSynchronize());
            double re = check(w, x, dy, n, M, K, &unw);
            printf("vt %-5s n=512 %d-pass rel err %.3g unwritten %d\n", w.name, P, re, unw);
        }
        // edges: m, k, n not multiples of the tile
        { int64_t n = 77, m = 1000, k = (dt == VT_BF16 || dt == VT_F16) ? 4040 : 4064; int unw;
          W w2 = make_w(dt, m, k); CK(cudaMemcpy(dw, w2.host.data(), w2.host.size(), cudaMemcpyHostToDevice));
          std::vector<float> x2(n * k); for (auto &v : x2) v = frand(); CK(cudaMemcpy(dx, x2.data(), x2.size() * 4, cudaMemcpyHostToDevice));
          CK(cudaMemset(dy, 0xFF, n * m * 4)); CK(run_vt<2>(dt, dx, dw, dy, n, m, k)); CK(cudaDeviceSynchronize());
          double re = check(w2, x2, dy, n, m, k, &unw);
          printf("vt %-5s edge n=77 m=1000 k=%ld rel err %.3g unwritten %d\n", w.name, (long)k, re, unw);
          CK(cudaMemcpy(dx, x.data(), x.size() * 4, cudaMemcpyHostToDevice)); }
    }
    ncu:
    if (argc > 1) { // one launch each for ncu
        for (uint32_t dt : {VT_BF16, VT_Q4_0}) { W w = make_w(dt, M, K); CK(cudaMemcpy(dw, w.host.data(), w.host.size(), cudaMemcpyHostToDevice)); CK(run_vt<2>(dt, dx, dw, dy, 512, M, K)); }
        cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, M, 512, K, &alpha, dw, CUDA_R_16BF, K, dxb, CUDA_R_16BF, K, &beta, dy, CUDA_R_32F, M, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        CK(cudaDeviceSynchronize());
    }
    printf("done\n");
    return 0;
}
