// kernels_select.hip - selection ops of the rocm backend, matching the cpu
// oracle's order exactly (value descending, ties to the lower index, -0 ==
// +0): Argmax, TopK and Sample per row, MoeRouter per token, and the scan
// that refuses NaN (and, for sampling, +inf and rows with nothing finite)
// into the queue's error word. TopK and Sample sort each row's candidates
// with a block-wide bitonic sort in device scratch.
#include "rocm_device.h"
#include "rocm_launch.h"

#include <vt/vt_params.h>

namespace
{

struct cand {
    float v;
    int32_t i;
};

__device__ inline bool before(cand a, cand b)
{
    return a.v > b.v || (a.v == b.v && a.i < b.i);
}

// Minimum of v over the block through shared memory (fixed order).
__device__ inline int64_t block_min(int64_t v, int64_t *shm)
{
    shm[threadIdx.x] = v;
    __syncthreads();
    for (int s = VT_ROCM_BLOCK / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s && shm[threadIdx.x + s] < shm[threadIdx.x])
            shm[threadIdx.x] = shm[threadIdx.x + s];
        __syncthreads();
    }
    int64_t r = shm[0];
    __syncthreads();
    return r;
}

// One block per row: the first NaN (always), and when sampling the first
// +inf and whether the row has a finite value. The first offence of the
// whole call (row-major) wins through atomicMin on err->scan; the last
// block to finish turns it into the queue's error word and resets scan.
__global__ void scan_kernel(const float *x, int64_t rows, int64_t n, int sampling, vt_rocm_err *err, uint32_t op,
                            uint32_t name)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    __shared__ int64_t shm[VT_ROCM_BLOCK];
    __shared__ bool last;
    unsigned long long first = ~0ull;
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        int64_t first_nan = n, first_inf = n, first_finite = n;
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
            float v = x[r * n + i];
            if (v != v && i < first_nan)
                first_nan = i;
            if (v == INFINITY && i < first_inf)
                first_inf = i;
            if (v - v == 0.0f && i < first_finite)
                first_finite = i;
        }
        first_nan = block_min(first_nan, shm);
        first_inf = block_min(first_inf, shm);
        first_finite = block_min(first_finite, shm);
        if (threadIdx.x == 0) {
            unsigned long long code = ~0ull;
            if (first_nan < n) /* NaN first, in row-major order */
                code = ((unsigned long long)r << 32) | (unsigned long long)first_nan;
            else if (sampling && first_inf < n)
                code = (1ull << 63) | ((unsigned long long)r << 34) | (1ull << 32) | (unsigned long long)first_inf;
            else if (sampling && first_finite == n)
                code = (1ull << 63) | ((unsigned long long)r << 34) | (2ull << 32);
            if (code < first)
                first = code;
        }
    }
    if (threadIdx.x == 0) {
        if (first != ~0ull)
            atomicMin(&err->scan, first);
        __threadfence();
        last = atomicAdd(&err->blocks_done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last || threadIdx.x != 0)
        return;
    unsigned long long w = atomicExch(&err->scan, ~0ull);
    err->blocks_done = 0;
    if (w == ~0ull)
        return;
    if (!(w >> 63))
        vt_rocm_err_set(err, VT_ROCM_ERR_NAN, op, name, (int64_t)(w >> 32), (int64_t)(w & 0xffffffffu), 0, 0);
    else if (((w >> 32) & 3) == 1)
        vt_rocm_err_set(err, VT_ROCM_ERR_INF, op, name, (int64_t)((w >> 34) & ((1ull << 29) - 1)),
                        (int64_t)(w & 0xffffffffu), 0, 0);
    else
        vt_rocm_err_set(err, VT_ROCM_ERR_NO_FINITE, op, name, (int64_t)((w >> 34) & ((1ull << 29) - 1)), 0, 0, 0);
}

// scan_kernel for few long rows: nb blocks per row, each over a slice; a
// slice's NaN and +inf go to err->scan as scan_kernel's codes (their
// minimum is the same first offence), whether it holds a finite value to
// fin[row * nb + slice]; the last block adds "no finite value" for the rows
// where no slice had one (when sampling) and reports as scan_kernel.
__global__ void scan_split_kernel(const float *x, int64_t rows, int64_t n, int64_t nb, int sampling, uint8_t *fin,
                                  vt_rocm_err *err, uint32_t op, uint32_t name)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    __shared__ int64_t shm[VT_ROCM_BLOCK];
    __shared__ bool last;
    int64_t r = blockIdx.x / nb, b = blockIdx.x % nb, per = (n + nb - 1) / nb;
    int64_t i0 = b * per, i1 = i0 + per < n ? i0 + per : n;
    int64_t first_nan = n, first_inf = n, first_finite = n;
    for (int64_t i = i0 + threadIdx.x; i < i1; i += blockDim.x) {
        float v = x[r * n + i];
        if (v != v && i < first_nan)
            first_nan = i;
        if (v == INFINITY && i < first_inf)
            first_inf = i;
        if (v - v == 0.0f && i < first_finite)
            first_finite = i;
    }
    first_nan = block_min(first_nan, shm);
    first_inf = block_min(first_inf, shm);
    first_finite = block_min(first_finite, shm);
    if (threadIdx.x == 0) {
        unsigned long long code = ~0ull;
        if (first_nan < n)
            code = ((unsigned long long)r << 32) | (unsigned long long)first_nan;
        else if (sampling && first_inf < n)
            code = (1ull << 63) | ((unsigned long long)r << 34) | (1ull << 32) | (unsigned long long)first_inf;
        if (code != ~0ull)
            atomicMin(&err->scan, code);
        fin[blockIdx.x] = first_finite < n;
        __threadfence();
        last = atomicAdd(&err->blocks_done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last || threadIdx.x != 0)
        return;
    __threadfence();
    for (int64_t row = 0; sampling && row < rows; row++) {
        bool any = false;
        for (int64_t j = 0; j < nb && !any; j++)
            any = ((volatile uint8_t *)fin)[row * nb + j] != 0;
        if (!any)
            atomicMin(&err->scan, (1ull << 63) | ((unsigned long long)row << 34) | (2ull << 32));
    }
    unsigned long long w = atomicExch(&err->scan, ~0ull);
    err->blocks_done = 0;
    if (w == ~0ull)
        return;
    if (!(w >> 63))
        vt_rocm_err_set(err, VT_ROCM_ERR_NAN, op, name, (int64_t)(w >> 32), (int64_t)(w & 0xffffffffu), 0, 0);
    else if (((w >> 32) & 3) == 1)
        vt_rocm_err_set(err, VT_ROCM_ERR_INF, op, name, (int64_t)((w >> 34) & ((1ull << 29) - 1)),
                        (int64_t)(w & 0xffffffffu), 0, 0);
    else
        vt_rocm_err_set(err, VT_ROCM_ERR_NO_FINITE, op, name, (int64_t)((w >> 34) & ((1ull << 29) - 1)), 0, 0, 0);
}

__global__ void argmax_kernel(const float *x, int64_t rows, int64_t n, int32_t *out)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    __shared__ float sv[VT_ROCM_BLOCK];
    __shared__ int32_t si[VT_ROCM_BLOCK];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        cand best = {-INFINITY, INT32_MAX};
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
            cand c = {x[r * n + i], (int32_t)i};
            if (best.i == INT32_MAX || before(c, best))
                best = c;
        }
        sv[threadIdx.x] = best.v;
        si[threadIdx.x] = best.i;
        __syncthreads();
        for (int s = VT_ROCM_BLOCK / 2; s > 0; s >>= 1) {
            if ((int)threadIdx.x < s) {
                cand a = {sv[threadIdx.x], si[threadIdx.x]}, b = {sv[threadIdx.x + s], si[threadIdx.x + s]};
                if (b.i != INT32_MAX && (a.i == INT32_MAX || before(b, a))) {
                    sv[threadIdx.x] = b.v;
                    si[threadIdx.x] = b.i;
                }
            }
            __syncthreads();
        }
        if (threadIdx.x == 0)
            out[r] = si[0];
        __syncthreads();
    }
}

// Argmax and its NaN refusal in one pass, for few rows: nb blocks per row
// each take a slice, put their best into part and their first NaN into
// err->scan (row-major first wins, as scan_kernel); the last block to
// finish picks each row's best over its nb slices (ties to the lower
// index) and turns the NaN into the queue's error word.
__global__ void argmax_split_kernel(const float *x, int64_t rows, int64_t n, int64_t nb, cand *part, int32_t *out,
                                    vt_rocm_err *err, uint32_t op, uint32_t name)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    __shared__ float sv[VT_ROCM_BLOCK];
    __shared__ int32_t si[VT_ROCM_BLOCK];
    __shared__ int64_t shm[VT_ROCM_BLOCK];
    __shared__ bool last;
    int64_t r = blockIdx.x / nb, b = blockIdx.x % nb, per = (n + nb - 1) / nb;
    int64_t i0 = b * per, i1 = i0 + per < n ? i0 + per : n;
    cand best = {-INFINITY, INT32_MAX};
    int64_t first_nan = n;
    for (int64_t i = i0 + threadIdx.x; i < i1; i += blockDim.x) {
        cand c = {x[r * n + i], (int32_t)i};
        if (c.v != c.v && i < first_nan)
            first_nan = i;
        if (best.i == INT32_MAX || before(c, best))
            best = c;
    }
    first_nan = block_min(first_nan, shm);
    sv[threadIdx.x] = best.v;
    si[threadIdx.x] = best.i;
    __syncthreads();
    for (int st = VT_ROCM_BLOCK / 2; st > 0; st >>= 1) {
        if ((int)threadIdx.x < st) {
            cand a = {sv[threadIdx.x], si[threadIdx.x]}, c = {sv[threadIdx.x + st], si[threadIdx.x + st]};
            if (c.i != INT32_MAX && (a.i == INT32_MAX || before(c, a))) {
                sv[threadIdx.x] = c.v;
                si[threadIdx.x] = c.i;
            }
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        part[blockIdx.x] = cand{sv[0], si[0]};
        if (first_nan < n)
            atomicMin(&err->scan, ((unsigned long long)r << 32) | (unsigned long long)first_nan);
        __threadfence();
        last = atomicAdd(&err->blocks_done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last)
        return;
    __threadfence();
    for (int64_t row = 0; row < rows; row++) {
        cand c = {-INFINITY, INT32_MAX};
        for (int64_t j = threadIdx.x; j < nb; j += blockDim.x) {
            const volatile cand *vp = part + row * nb + j; // other blocks wrote it
            cand pj = {vp->v, vp->i};
            if (pj.i != INT32_MAX && (c.i == INT32_MAX || before(pj, c)))
                c = pj;
        }
        sv[threadIdx.x] = c.v;
        si[threadIdx.x] = c.i;
        __syncthreads();
        for (int st = VT_ROCM_BLOCK / 2; st > 0; st >>= 1) {
            if ((int)threadIdx.x < st) {
                cand a = {sv[threadIdx.x], si[threadIdx.x]}, o = {sv[threadIdx.x + st], si[threadIdx.x + st]};
                if (o.i != INT32_MAX && (a.i == INT32_MAX || before(o, a))) {
                    sv[threadIdx.x] = o.v;
                    si[threadIdx.x] = o.i;
                }
            }
            __syncthreads();
        }
        if (threadIdx.x == 0)
            out[row] = si[0];
        __syncthreads();
    }
    if (threadIdx.x != 0)
        return;
    unsigned long long w = atomicExch(&err->scan, ~0ull);
    err->blocks_done = 0;
    if (w != ~0ull)
        vt_rocm_err_set(err, VT_ROCM_ERR_NAN, op, name, (int64_t)(w >> 32), (int64_t)(w & 0xffffffffu), 0, 0);
}

// Bitonic sort of each row's candidates (padded to p, a power of two, with
// entries that come after every real one), one block per row.
__global__ void sort_kernel(const float *x, int64_t rows, int64_t n, int64_t p, cand *scratch)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        cand *c = scratch + r * p;
        for (int64_t i = threadIdx.x; i < p; i += blockDim.x)
            c[i] = i < n ? cand{x[r * n + i], (int32_t)i} : cand{-INFINITY, INT32_MAX};
        __syncthreads();
        for (int64_t size = 2; size <= p; size <<= 1)
            for (int64_t stride = size >> 1; stride > 0; stride >>= 1) {
                for (int64_t i = threadIdx.x; i < p; i += blockDim.x) {
                    int64_t j = i ^ stride;
                    if (j > i) {
                        bool ascending_block = (i & size) == 0; // "before" order in this block
                        cand a = c[i], b = c[j];
                        bool swap = ascending_block ? before(b, a) : before(a, b);
                        if (swap) {
                            c[i] = b;
                            c[j] = a;
                        }
                    }
                }
                __syncthreads();
            }
        __syncthreads();
    }
}

// One pass of the sliced selection of TopK and Sample: block (row, slice)
// takes sl candidates of its row (from x with their indices on the first
// pass, else from in), padded with entries that come after every real
// one, sorts them in shared memory (bitonic, "before" order) and writes
// its first kk to out[row][slice]. The top k of a row are among the top k
// of its slices, so passes shrink a row to one sorted run of kk.
__global__ void slice_topk_kernel(const float *x, const cand *in, int64_t m, int64_t sl, int64_t kk, int64_t nslices,
                                  cand *out)
{
    vt_chain_begin();            /* chained launch: before any memory access (rocm_chain.h) */
    extern __shared__ cand sc[]; // sl
    int64_t row = blockIdx.x / nslices, base = (blockIdx.x % nslices) * sl;
    for (int64_t i = threadIdx.x; i < sl; i += blockDim.x) {
        int64_t j = base + i;
        sc[i] = j >= m ? cand{-INFINITY, INT32_MAX} : x ? cand{x[row * m + j], (int32_t)j} : in[row * m + j];
    }
    __syncthreads();
    for (int64_t size = 2; size <= sl; size <<= 1)
        for (int64_t stride = size >> 1; stride > 0; stride >>= 1) {
            for (int64_t i = threadIdx.x; i < sl; i += blockDim.x) {
                int64_t j = i ^ stride;
                if (j > i) {
                    cand a = sc[i], b = sc[j];
                    bool swap = (i & size) == 0 ? before(b, a) : before(a, b);
                    if (swap) {
                        sc[i] = b;
                        sc[j] = a;
                    }
                }
            }
            __syncthreads();
        }
    for (int64_t i = threadIdx.x; i < kk; i += blockDim.x)
        out[blockIdx.x * kk + i] = sc[i];
}

__global__ void topk_out_kernel(const cand *scratch, int64_t rows, int64_t p, int64_t k, float *values,
                                int32_t *indices)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    int64_t total = rows * k, stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
        cand c = scratch[(e / k) * p + e % k];
        values[e] = c.v;
        indices[e] = c.i;
    }
}

// Sample (vt_params.h) on sorted candidates: one thread per row, the cpu
// oracle's double-precision sums in candidate order.
__global__ void sample_kernel(const cand *scratch, int64_t rows, int64_t n, int64_t p, vt_params_sample sp,
                              double *prob, int32_t *tokens)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += stride) {
        const cand *c = scratch + r * p;
        double *pr = prob + r * p;
        int64_t k = sp.top_k > 0 && sp.top_k < n ? sp.top_k : n;
        double lmax = c[0].v, temp = sp.temperature, z = 0.0;
        for (int64_t i = 0; i < k; i++) {
            pr[i] = exp(((double)c[i].v - lmax) / temp);
            z += pr[i];
        }
        int64_t m = k;
        double run = 0.0;
        for (int64_t i = 0; i < k; i++) {
            run += pr[i];
            if (run / z >= (double)sp.top_p) {
                m = i + 1;
                break;
            }
        }
        double total = 0.0;
        for (int64_t i = 0; i < m; i++)
            total += pr[i];
        double u = vt_sample_uniform(sp.seed, sp.step, (uint64_t)r);
        int32_t token = c[m - 1].i;
        run = 0.0;
        for (int64_t i = 0; i < m; i++) {
            run += pr[i];
            if (run / total > u) {
                token = c[i].i;
                break;
            }
        }
        tokens[r] = token;
    }
}

// MoeRouter (op 22): one thread per token, the oracle's order of sums.
__global__ void router_kernel(const float *logits, const float *bias, int64_t T, int64_t E, int32_t k, int32_t score,
                              int32_t renorm, float routed_scale, int32_t *ids, float *weights)
{
    vt_chain_begin(); /* chained launch: before any memory access (rocm_chain.h) */
    float sc[VT_ROCM_ROUTER_MAX_E], key[VT_ROCM_ROUTER_MAX_E];
    unsigned char taken[VT_ROCM_ROUTER_MAX_E];
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < T; t += stride) {
        const float *l = logits + t * E;
        if (score == 0) {
            float mx = l[0];
            for (int64_t e = 1; e < E; e++)
                if (l[e] > mx)
                    mx = l[e];
            float sum = 0.0f;
            for (int64_t e = 0; e < E; e++) {
                sc[e] = expf(l[e] - mx);
                sum += sc[e];
            }
            for (int64_t e = 0; e < E; e++)
                sc[e] = sc[e] / sum;
        } else {
            for (int64_t e = 0; e < E; e++)
                sc[e] = 1.0f / (1.0f + expf(-l[e]));
        }
        for (int64_t e = 0; e < E; e++) {
            key[e] = bias ? sc[e] + bias[e] : sc[e];
            taken[e] = 0;
        }
        int32_t *id = ids + t * k;
        float *w = weights + t * k;
        for (int32_t i = 0; i < k; i++) {
            int64_t best = -1;
            for (int64_t e = 0; e < E; e++)
                if (!taken[e] && (best < 0 || key[e] > key[best]))
                    best = e;
            taken[best] = 1;
            id[i] = (int32_t)best;
            w[i] = sc[best];
        }
        if (renorm) {
            float sum = 0.0f;
            for (int32_t i = 0; i < k; i++)
                sum += w[i];
            float denom = sum > 0x1p-14f ? sum : 0x1p-14f;
            for (int32_t i = 0; i < k; i++)
                w[i] = w[i] / denom;
        }
        for (int32_t i = 0; i < k; i++)
            w[i] = w[i] * routed_scale;
    }
}

unsigned row_blocks(int64_t rows)
{
    return (unsigned)(rows < 65535 ? (rows > 0 ? rows : 1) : 65535);
}

} // namespace

extern "C" hipError_t vt_rocm_launch_scan(const float *x, int64_t rows, int64_t n, int sampling, vt_rocm_err *err,
                                          uint32_t op, uint32_t name, hipStream_t stream)
{
    if (rows <= 0 || n <= 0)
        return hipSuccess;
    VT_LAUNCH_CHAINED(scan_kernel, dim3(row_blocks(rows)), dim3(VT_ROCM_BLOCK), 0, stream, x, rows, n, sampling, err,
                      op, name);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_scan_split(const float *x, int64_t rows, int64_t n, int64_t nb, int sampling,
                                                void *fin, vt_rocm_err *err, uint32_t op, uint32_t name,
                                                hipStream_t stream)
{
    if (rows <= 0 || n <= 0)
        return hipSuccess;
    VT_LAUNCH_CHAINED(scan_split_kernel, dim3((unsigned)(rows * nb)), dim3(VT_ROCM_BLOCK), 0, stream, x, rows, n, nb,
                      sampling, (uint8_t *)fin, err, op, name);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_argmax(const float *x, int64_t rows, int64_t n, int32_t *out, hipStream_t stream)
{
    if (rows <= 0 || n <= 0)
        return hipSuccess;
    VT_LAUNCH_CHAINED(argmax_kernel, dim3(row_blocks(rows)), dim3(VT_ROCM_BLOCK), 0, stream, x, rows, n, out);
    return hipGetLastError();
}

extern "C" int64_t vt_rocm_argmax_split_blocks(int64_t rows, int64_t n)
{
    int64_t nb = (n + 2047) / 2048;
    nb = nb > 128 ? 128 : nb;
    return rows > 0 && rows <= 64 && nb >= 2 ? nb : 0;
}

extern "C" hipError_t vt_rocm_launch_argmax_checked(const float *x, int64_t rows, int64_t n, int64_t nb, void *part,
                                                    int32_t *out, vt_rocm_err *err, uint32_t op, uint32_t name,
                                                    hipStream_t stream)
{
    if (rows <= 0 || n <= 0)
        return hipSuccess;
    VT_LAUNCH_CHAINED(argmax_split_kernel, dim3((unsigned)(rows * nb)), dim3(VT_ROCM_BLOCK), 0, stream, x, rows, n, nb,
                      (cand *)part, out, err, op, name);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_sort_rows(const float *x, int64_t rows, int64_t n, int64_t p, void *scratch,
                                               hipStream_t stream)
{
    if (rows <= 0 || n <= 0)
        return hipSuccess;
    VT_LAUNCH_CHAINED(sort_kernel, dim3(row_blocks(rows)), dim3(VT_ROCM_BLOCK), 0, stream, x, rows, n, p,
                      (cand *)scratch);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_slice_topk(const float *x, const void *in, int64_t rows, int64_t m, int64_t sl,
                                                int64_t kk, void *out, hipStream_t stream)
{
    int64_t nslices = (m + sl - 1) / sl;
    if (rows <= 0 || m <= 0)
        return hipSuccess;
    VT_LAUNCH_CHAINED(slice_topk_kernel, dim3((unsigned)(rows * nslices)), dim3(VT_ROCM_BLOCK),
                      (size_t)sl * sizeof(cand), stream, x, (const cand *)in, m, sl, kk, nslices, (cand *)out);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_topk_out(const void *scratch, int64_t rows, int64_t p, int64_t k, float *values,
                                              int32_t *indices, hipStream_t stream)
{
    if (rows <= 0 || k <= 0)
        return hipSuccess;
    VT_LAUNCH_CHAINED(topk_out_kernel, dim3(vt_grid_for(rows * k, VT_ROCM_BLOCK)), dim3(VT_ROCM_BLOCK), 0, stream,
                      (const cand *)scratch, rows, p, k, values, indices);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_sample(const void *scratch, int64_t rows, int64_t n, int64_t p,
                                            const vt_params_sample *sp, void *prob, int32_t *tokens, hipStream_t stream)
{
    if (rows <= 0)
        return hipSuccess;
    VT_LAUNCH_CHAINED(sample_kernel, dim3(vt_grid_for(rows, 64)), dim3(64), 0, stream, (const cand *)scratch, rows, n,
                      p, *sp, (double *)prob, tokens);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_router(const float *logits, const float *bias, int64_t T, int64_t E, int32_t k,
                                            int32_t score, int32_t renormalize, float routed_scale, int32_t *ids,
                                            float *weights, hipStream_t stream)
{
    if (T <= 0)
        return hipSuccess;
    VT_LAUNCH_CHAINED(router_kernel, dim3(vt_grid_for(T, 64)), dim3(64), 0, stream, logits, bias, T, E, k, score,
                      renormalize, routed_scale, ids, weights);
    return hipGetLastError();
}
