// mma-harness.cu - the matrix-instruction decode MatMul (kernels_mmv_mma.hip)
// against a cpu f64 reference and against kernels_mmv.h's v2 kernels in the
// same run, standalone (no plugin):
//
//   F='-O3 -std=c++17 -arch=sm_90 -DVT_HIP_PLATFORM_NVIDIA -Ibackends/rocm -Icore -I.'
//   nvcc $F scripts/mma-harness.cu -o mma-harness
//   mma-harness          odd shapes (n = 1..9, m and k tails), then timings
//   mma-harness check    the odd shapes at n = 1, 3, 9 (for compute-sanitizer)
//   mma-harness time     timings only (m = 4096, k = 14336, n = 1, 2, 4, 8)
//   mma-harness prof     one launch per format at n = 1 and 8 (for ncu)
//   mma-harness stream   read-pattern probes of the decode shape's bytes
//   mma-harness shapes   n = 1 timings at the 8b-shape model's MatMuls
//   NW=8 mma-harness ... the warps per block forced
//   RING=3|4, GRID=n     the ring depth, the most blocks (persistent grid)
//   OLD=1                round 5's warps and grid (no balanced grid, no 16 warps
//                        for one group per block): the A/B of that choice
//   CHAIN=1              chained launches (backends/rocm/rocm_chain.h)
//   NOV2=1               no v2 timings
//   PRE=0 mma-harness ... n > 1 without the split of x into scratch
//   IL=n, DT=n           tile order and diagnostics, one format (main())
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
#include "harness_cuda.h"

namespace vt_mmv
{
int host_wave()
{
    return 32;
}
} // namespace vt_mmv

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
    return dt == 2 || dt == 20 ? 18 : dt == 8 ? 34 : dt == 14 ? 210 : 144;
}
static int blk_elems(int dt)
{
    return dt == 12 || dt == 14 ? 256 : 32;
}
static const char *name(int dt)
{
    return dt == 2 ? "q4_0" : dt == 8 ? "q8_0" : dt == 20 ? "iq4_nl" : dt == 14 ? "q6_k" : "q4_k";
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
        } else if (dt == 14) { /* ggml's dequantize_row_q6_K */
            double d = h2f(p[208] | p[209] << 8);
            const uint8_t *ql = p, *qh = p + 128;
            const int8_t *sc = (const int8_t *)(p + 192);
            for (int n = 0; n < 2; n++, ql += 64, qh += 32, sc += 8, o += 128)
                for (int l = 0; l < 32; l++) {
                    int is = l / 16;
                    o[l] = d * sc[is] * (((ql[l] & 15) | ((qh[l] & 3) << 4)) - 32);
                    o[l + 32] = d * sc[is + 2] * (((ql[l + 32] & 15) | (((qh[l] >> 2) & 3) << 4)) - 32);
                    o[l + 64] = d * sc[is + 4] * (((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
                    o[l + 96] = d * sc[is + 6] * (((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
                }
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
        const int od = dt == 14 ? 208 : 0;
        p[od] = d & 255, p[od + 1] = d >> 8;
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
    case 14: return run_v2<14>(x, w, rb, y, n, m, k);
    default: return run_v2<20>(x, w, rb, y, n, m, k);
    }
}
// Scratch for the split of x (n > 1), unless PRE=0.
static void *pre_scratch;
static int64_t pre_size;
static bool use_pre = true;
static cudaError_t mma(int dt, const float *x, const uint8_t *w, int64_t rb, float *y, int64_t n, int64_t m, int64_t k,
                       int *taken)
{
    vt_mmv::Args a = {x, 0, w, rb, nullptr, y, n, 1, m, k, 0};
    const int64_t need = use_pre ? vt_mmv::mma_scratch_bytes(dt, n, k) : 0;
    if (need > pre_size) {
        cudaFree(pre_scratch);
        if (cudaMalloc(&pre_scratch, need) != cudaSuccess)
            return cudaErrorMemoryAllocation;
        pre_size = need;
    }
    return vt_mmv::run_mma_scratch(dt, a, need ? pre_scratch : nullptr, taken);
}

// The one format tested (DT=), else 0: all.
static int only_dt;

// --- read-pattern probes (mode "stream"): how fast the weight bytes of
// the decode shape can come in, without any decode ---------------------

// Every thread sums its 16-byte pieces of the whole matrix (a plain
// streaming read, 4 loads in flight per thread).
__global__ void read_kernel(const uint4 *a, size_t n, unsigned *sink)
{
    unsigned acc = 0;
    const size_t step = (size_t)gridDim.x * blockDim.x;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    for (; i + 3 * step < n; i += 4 * step) {
        const uint4 v0 = __ldg(a + i), v1 = __ldg(a + i + step), v2 = __ldg(a + i + 2 * step),
                    v3 = __ldg(a + i + 3 * step);
        acc ^= v0.x ^ v1.y ^ v2.z ^ v3.w;
    }
    for (; i < n; i += step)
        acc ^= __ldg(a + i).x;
    if (acc == 0x12345678u)
        *sink = acc;
}

// The decode kernels' pattern with bulk copies (TMA): block = 32 rows, warp
// w takes every nw-th piece of span bytes of each row (lane r: row r's
// piece, one cp.async.bulk each), S pieces in flight per warp, completion
// on an mbarrier per ring slot.
template <int S> __global__ void bulk_kernel(const uint8_t *w, int64_t row_bytes, int64_t m, int span, unsigned *sink)
{
    extern __shared__ __align__(128) uint8_t sm[];
    __shared__ __align__(8) uint64_t bar[16][S];
    const int lane = threadIdx.x & 31, wv = threadIdx.x >> 5, nw = blockDim.x >> 5;
    uint8_t *ring = sm + (size_t)wv * S * 32 * span;
    const int64_t row0 = (int64_t)blockIdx.x * 32, pieces = row_bytes / span;
    const int64_t r = row0 + lane < m ? row0 + lane : m - 1;
    if (lane == 0)
        for (int i = 0; i < S; i++) {
            const unsigned b = (unsigned)__cvta_generic_to_shared(&bar[wv][i]);
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b));
        }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    __syncwarp();
    const int64_t cnt = pieces > wv ? (pieces - wv + nw - 1) / nw : 0;
    unsigned acc = 0;
    auto issue = [&](int64_t it) {
        const int slot = (int)(it % S);
        const unsigned b = (unsigned)__cvta_generic_to_shared(&bar[wv][slot]);
        if (lane == 0)
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(32 * span) : "memory");
        __syncwarp();
        const unsigned d = (unsigned)__cvta_generic_to_shared(ring + ((size_t)slot * 32 + lane) * span);
        const uint8_t *src = w + r * row_bytes + (wv + it * nw) * (int64_t)span;
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(d),
                     "l"(src), "r"(span), "r"(b)
                     : "memory");
    };
    for (int64_t i = 0; i < S && i < cnt; i++)
        issue(i);
    for (int64_t it = 0; it < cnt; it++) {
        const int slot = (int)(it % S);
        const unsigned b = (unsigned)__cvta_generic_to_shared(&bar[wv][slot]), phase = (unsigned)((it / S) & 1);
        unsigned done = 0;
        while (!done)
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                         : "=r"(done)
                         : "r"(b), "r"(phase)
                         : "memory");
        acc ^= *(const unsigned *)(ring + ((size_t)slot * 32 + lane) * span);
        __syncwarp();
        if (it + S < cnt)
            issue(it + S);
    }
    if (acc == 0x12345678u)
        *sink = acc;
}

// Times fn (launches) over 50 runs after 5, in us (median of per-run events).
template <typename F> static double time_us(F fn)
{
    cudaEvent_t ev[51];
    for (auto &e : ev)
        cudaEventCreate(&e);
    for (int i = 0; i < 5; i++)
        fn(i);
    cudaEventRecord(ev[0]);
    for (int i = 0; i < 50; i++) {
        fn(i);
        cudaEventRecord(ev[i + 1]);
    }
    cudaEventSynchronize(ev[50]);
    std::vector<float> t(50);
    for (int i = 0; i < 50; i++) {
        cudaEventElapsedTime(&t[i], ev[i], ev[i + 1]);
        t[i] *= 1000;
    }
    std::sort(t.begin(), t.end());
    for (auto &e : ev)
        cudaEventDestroy(e);
    return t[25];
}

// The probes at m = 4096, k = 14336 q4_0 (8064-byte rows), weights
// rotating over 4 copies.
static void stream_probes(double copy)
{
    const int64_t m = 4096, rb = 8064, bytes = m * rb;
    uint8_t *w;
    unsigned *sink;
    CK(cudaMalloc(&w, 4 * bytes));
    CK(cudaMalloc(&sink, 4));
    CK(cudaMemset(w, 1, 4 * bytes));
    auto report = [&](const char *what, double us) {
        if (cudaGetLastError() != cudaSuccess) {
            printf("%-40s failed\n", what);
            return;
        }
        printf("%-40s %7.2f us  %5.0f GB/s  %3.0f%% of copy\n", what, us, bytes / us / 1e3,
               100.0 * bytes / us / 1e3 / copy);
    };
    report("plain read, 132 x 8 blocks of 512", time_us([&](int i) {
               read_kernel<<<132 * 8, 512>>>((const uint4 *)(w + (i % 4) * bytes), bytes / 16, sink);
           }));
    struct Cfg {
        int span, nw, depth;
    };
    for (Cfg c : {Cfg{144, 8, 2}, Cfg{144, 14, 2}, Cfg{288, 8, 2}, Cfg{144, 8, 4}, Cfg{144, 12, 4}, Cfg{576, 4, 2}}) {
        const size_t sh = (size_t)c.nw * c.depth * 32 * c.span;
        if (sh > 220 * 1024)
            continue;
        auto kern = c.depth == 2 ? bulk_kernel<2> : bulk_kernel<4>;
        CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sh));
        char what[64];
        snprintf(what, sizeof what, "bulk copies, %d B per row, %d warps, %d deep", c.span, c.nw, c.depth);
        report(what, time_us([&](int i) {
                   kern<<<(unsigned)(m / 32), 32 * c.nw, sh>>>(w + (i % 4) * bytes, rb, m, c.span, sink);
               }));
    }
    cudaFree(w);
    cudaFree(sink);
}

// Copy bandwidth of this run (GB/s, read + write).
static double copy_gbs;

// Correctness (and timing when timed) of one shape.
static int one(int dt, int64_t m, int64_t k, int64_t n, bool timed, std::mt19937 &rng)
{
    if (only_dt && dt != only_dt)
        return 0;
    if (dt == 14) /* the mma path takes q6_k rows of a multiple of 16 bytes */
        k = (k + 2047) / 2048 * 2048;
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
        med[1] = 0;
        for (int path = 0; path < (getenv("NOV2") ? 1 : 2); path++) {
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

// chained launches (backends/rocm/rocm_chain.h): the harness's choice
// (env CHAIN; 0, plain launches, unless set)
extern "C" {
int vt_rocm_chain_mode = 0;
}

// Modes: see the top of the file.
int main(int argc, char **argv)
{
    std::mt19937 rng(1234);
    if (getenv("NW"))
        vt_mmv::vt_mma_nw_override = atoi(getenv("NW"));
    if (getenv("IL")) /* 1: interleaved tiles; + 2: no split of x; + 4: loads only; + 8: no L2 prefetch; + 16: 128 B */
        vt_mmv::vt_mma_flags = atoi(getenv("IL"));
    if (getenv("CHAIN")) /* 1: chained launches */
        vt_rocm_chain_mode = atoi(getenv("CHAIN"));
    if (getenv("DT")) /* one format only */
        only_dt = atoi(getenv("DT"));
#ifndef VT_MMA_OLD /* built against an older kernels_mmv_mma.hip for before/after */
    if (getenv("RING"))
        vt_mmv::vt_mma_ring = atoi(getenv("RING"));
    if (getenv("GRID"))
        vt_mmv::vt_mma_grid = atoi(getenv("GRID"));
    if (getenv("OLD")) /* 1: round 5's warps and grid (the A/B of the balanced grid) */
        vt_mmv::vt_mma_old_grid = atoi(getenv("OLD"));
#endif
    if (getenv("PRE")) /* 0: every kernel splits its own x */
        use_pre = atoi(getenv("PRE")) != 0;
    const bool prof = argc > 1 && !strcmp(argv[1], "prof");
    if (prof) { /* one launch of each format at n = 1, 8 for ncu */
        for (int dt : {2, 8, 20, 12, 14})
            for (int n : {1, 8}) {
                if (only_dt && dt != only_dt)
                    continue;
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
    if (argc > 1 && !strcmp(argv[1], "stream")) {
        stream_probes(copy_gbs);
        return 0;
    }
    int bad = 0;
    const bool check = argc > 1 && !strcmp(argv[1], "check");
    const bool time_only = argc > 1 && (!strcmp(argv[1], "time") || !strcmp(argv[1], "shapes"));
    /* correctness over odd shapes */
    for (int dt : {2, 8, 20, 12, 14})
        for (int n : {1, 2, 3, 4, 5, 8, 9}) {
            if (time_only)
                break;
            if (check && n != 1 && n != 3 && n != 9)
                continue;
            bad += one(dt, 100, 256, n, false, rng);
            bad += one(dt, 1000, 4352, n, false, rng);
        }
    for (int dt : {2, 8, 20, 12, 14})
        if (!time_only)
            bad += one(dt, 4100, 2304, 1, false, rng);
    if (check) {
        printf("%s: %d failures\n", bad ? "FAIL" : "PASS", bad);
        return bad != 0;
    }
    if (argc > 1 && !strcmp(argv[1], "shapes")) { /* q|k|v, o, gate|up, down */
        const int64_t shp[4][2] = {{6144, 4096}, {4096, 4096}, {28672, 4096}, {4096, 14336}};
        for (int dt : {2, 8, 12, 14})
            for (auto &s : shp)
                bad += one(dt, s[0], s[1], 1, true, rng);
        printf("%s: %d failures\n", bad ? "FAIL" : "PASS", bad);
        return bad != 0;
    }
    /* timing at the decode shape */
    for (int dt : {2, 8, 20, 12, 14})
        for (int n : {1, 2, 4, 8})
            bad += one(dt, 4096, 14336, n, true, rng);
    printf("%s: %d failures\n", bad ? "FAIL" : "PASS", bad);
    return bad != 0;
}
