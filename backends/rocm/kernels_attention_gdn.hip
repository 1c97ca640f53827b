// kernels_attention_gdn.hip - GatedDeltaRule (SPEC 7, op 32) on the rocm backend.
// The recurrence is independent per column of the state. dk = 128 (the
// models' head): gdr_decode_kernel (any T, either slot form) holds a slab
// of columns in registers across the tokens, 256 threads per block; from
// GDR_CHUNK_MIN_T tokens with per-sequence slots and dk = dv = 128 the
// chunked form (gdr_chunk_prep_kernel, then gdr_chunk_scan_kernel) walks
// the tokens in chunks of 64. Other heads: one thread owns column c of
// S[:, c] for one (sequence, value head), keeps it across the tokens and
// sums over dk in index order, as the cpu oracle does (gdr_cols_kernel for
// dk = 128 when the decode kernel's float4 accesses do not apply).
// For decode (few slots, not the chunked form) the decode kernel checks
// the slots itself (rocm_check_gdr.h, every block, its state loads already
// in flight): one launch instead of the check kernel and the recurrence.
// Launched chained (rocm_chain.h), it asks L2 for its state slab before
// its wait.
#include "rocm_check_gdr.h"
#include "rocm_device.h"
#include "rocm_launch.h"

namespace
{

__global__ void gdr_kernel(const float *q, const float *k, const float *v, const float *g, const float *beta,
                           const int32_t *slots, const int32_t *accepted, int per_token, float *o, float *state,
                           int64_t B, int64_t T, int64_t H, int64_t HV, int64_t dk, int64_t dv, int l2norm)
{
    float S[VT_ROCM_GDR_MAX_DK];
    int64_t total = B * HV * dv, stride = (int64_t)gridDim.x * blockDim.x;
    const float qscale = 1.0f / sqrtf((float)dk);
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
        int64_t c = e % dv, hv = (e / dv) % HV, b = e / (dv * HV), h = hv / (HV / H);
        int32_t rs = per_token ? slots[b * T + accepted[b] - 1] : slots[b];
        if (rs < 0) { // padding row: zero outputs, no state read or written
            for (int64_t t = 0; t < T; t++)
                o[((b * T + t) * HV + hv) * dv + c] = 0.0f;
            continue;
        }
        const float *src = state + ((int64_t)rs * HV + hv) * dk * dv;
        for (int64_t i = 0; i < dk; i++)
            S[i] = src[i * dv + c];
        for (int64_t t = 0; t < T; t++) {
            int64_t bt = b * T + t;
            const float *qv = q + (bt * H + h) * dk, *kv = k + (bt * H + h) * dk;
            float qinv = 1.0f, kinv = 1.0f;
            if (l2norm) {
                float qs = 0.0f, ks = 0.0f;
                for (int64_t i = 0; i < dk; i++) {
                    qs += qv[i] * qv[i];
                    ks += kv[i] * kv[i];
                }
                qinv = 1.0f / sqrtf(qs + 1e-6f);
                kinv = 1.0f / sqrtf(ks + 1e-6f);
            }
            float decay = expf(g[bt * HV + hv]), bb = beta[bt * HV + hv];
            float sk = 0.0f;
            for (int64_t i = 0; i < dk; i++) {
                S[i] = S[i] * decay;
                sk += S[i] * (kv[i] * kinv);
            }
            float u = bb * (v[(bt * HV + hv) * dv + c] - sk);
            float out = 0.0f;
            for (int64_t i = 0; i < dk; i++) {
                S[i] += (kv[i] * kinv) * u;
                out += S[i] * ((qv[i] * qinv) * qscale);
            }
            o[(bt * HV + hv) * dv + c] = out;
            if (per_token) {
                int32_t ws = slots[bt];
                if (ws >= 0) {
                    float *dst = state + ((int64_t)ws * HV + hv) * dk * dv;
                    for (int64_t i = 0; i < dk; i++)
                        dst[i * dv + c] = S[i];
                }
            }
        }
        if (!per_token) {
            float *dst = state + ((int64_t)rs * HV + hv) * dk * dv;
            for (int64_t i = 0; i < dk; i++)
                dst[i * dv + c] = S[i];
        }
    }
}

// The same recurrence for dk = DK known at compile time: one block of
// GDR_COLS threads per (sequence, value head, run of GDR_COLS columns),
// the state columns in registers, each token's normalised q and k staged
// once per block in shared memory (the L2 norms summed as a tree there).
#define GDR_COLS 32
template <int DK>
__global__ void gdr_cols_kernel(const float *q, const float *k, const float *v, const float *g, const float *beta,
                                const int32_t *slots, const int32_t *accepted, int per_token, float *o, float *state,
                                int64_t T, int64_t H, int64_t HV, int64_t dv, int l2norm)
{
    __shared__ float qn[DK], kn[DK], red[2 * GDR_COLS];
    const int64_t groups = (dv + GDR_COLS - 1) / GDR_COLS;
    const int64_t grp = blockIdx.x % groups, hv = (blockIdx.x / groups) % HV, b = blockIdx.x / (groups * HV);
    const int64_t h = hv / (HV / H), c = grp * GDR_COLS + threadIdx.x;
    const bool col = c < dv;
    const float qscale = 1.0f / sqrtf((float)DK);
    int32_t rs = per_token ? slots[b * T + accepted[b] - 1] : slots[b];
    if (rs < 0) { // padding row: zero outputs, no state read or written
        for (int64_t t = 0; col && t < T; t++)
            o[((b * T + t) * HV + hv) * dv + c] = 0.0f;
        return;
    }
    float S[DK];
    const float *src = state + ((int64_t)rs * HV + hv) * DK * dv;
#pragma unroll
    for (int i = 0; i < DK; i++)
        S[i] = col ? src[i * dv + c] : 0.0f;
    for (int64_t t = 0; t < T; t++) {
        int64_t bt = b * T + t;
        const float *qv = q + (bt * H + h) * DK, *kv = k + (bt * H + h) * DK;
        float qs = 0.0f, ks = 0.0f;
        for (int i = threadIdx.x; i < DK; i += GDR_COLS) {
            float a = qv[i], bk = kv[i];
            qn[i] = a;
            kn[i] = bk;
            qs += a * a;
            ks += bk * bk;
        }
        float qinv = 1.0f, kinv = 1.0f;
        if (l2norm) {
            red[threadIdx.x] = qs;
            red[GDR_COLS + threadIdx.x] = ks;
            __syncthreads();
            for (int st = GDR_COLS / 2; st > 0; st >>= 1) {
                if ((int)threadIdx.x < st) {
                    red[threadIdx.x] += red[threadIdx.x + st];
                    red[GDR_COLS + threadIdx.x] += red[GDR_COLS + threadIdx.x + st];
                }
                __syncthreads();
            }
            qinv = 1.0f / sqrtf(red[0] + 1e-6f);
            kinv = 1.0f / sqrtf(red[GDR_COLS] + 1e-6f);
        }
        __syncthreads();
        for (int i = threadIdx.x; i < DK; i += GDR_COLS) {
            qn[i] = (qn[i] * qinv) * qscale;
            kn[i] = kn[i] * kinv;
        }
        __syncthreads();
        float decay = expf(g[bt * HV + hv]), bb = beta[bt * HV + hv];
        float sk = 0.0f;
#pragma unroll
        for (int i = 0; i < DK; i++) {
            S[i] = S[i] * decay;
            sk += S[i] * kn[i];
        }
        float u = bb * ((col ? v[(bt * HV + hv) * dv + c] : 0.0f) - sk);
        float out = 0.0f;
#pragma unroll
        for (int i = 0; i < DK; i++) {
            S[i] += kn[i] * u;
            out += S[i] * qn[i];
        }
        if (col)
            o[(bt * HV + hv) * dv + c] = out;
        if (per_token && col) {
            int32_t ws = slots[bt];
            if (ws >= 0) {
                float *dst = state + ((int64_t)ws * HV + hv) * DK * dv;
#pragma unroll
                for (int i = 0; i < DK; i++)
                    dst[i * dv + c] = S[i];
            }
        }
        __syncthreads(); // qn, kn are rewritten for the next token
    }
    if (!per_token && col) {
        float *dst = state + ((int64_t)rs * HV + hv) * DK * dv;
#pragma unroll
        for (int i = 0; i < DK; i++)
            dst[i * dv + c] = S[i];
    }
}

// ---- dk = 128: one block per (sequence, value head, slab of columns) ----
//
// The decode form (any T, either slot form): GDR_NT threads hold the slab
// [DK, SW] of the state in registers, 4 columns (one float4) and DK / TY
// rows each. Per token the block sums S^T k and S^T q in one pass over the
// old state (S'^T q = decay S^T q + u (k.q), since S' = decay S + k u^T),
// then updates its registers; two barriers per token.
#define GDR_NT 256

template <int DK, int SW>
__global__ __launch_bounds__(GDR_NT) void gdr_decode_kernel(const float *q, const float *k, const float *v,
                                                            const float *g, const float *beta, const int32_t *slots,
                                                            const int32_t *accepted, int per_token, float *o,
                                                            float *state, int64_t T, int64_t H, int64_t HV, int64_t dv,
                                                            int l2norm, vt_rocm_err *err, uint32_t op, int64_t B,
                                                            int64_t N, int chained)
{
    constexpr int TX = SW / 4, TY = GDR_NT / TX, R = DK / TY, NG = GDR_NT / 32;
    static_assert(DK % TY == 0 && DK % 32 == 0 && DK <= GDR_NT && 32 % TX == 0, "gdr_decode_kernel shape");
    __shared__ float qs[DK], ks[DK], red1[NG][3], red2[NG][SW][2];
    const int tid = (int)threadIdx.x, tx = tid % TX, ty = tid / TX, lane = tid % 32, gi = tid / 32;
    const int64_t slabs = (dv + SW - 1) / SW;
    const int64_t slab = blockIdx.x % slabs, hv = (blockIdx.x / slabs) % HV, b = blockIdx.x / (slabs * HV);
    const int64_t h = hv / (HV / H), c = slab * SW + 4 * tx;
    const bool col = c < dv; // dv % 4 == 0: a float4 of columns is all in or all out
    /* Chained (rocm_chain.h), while the kernel before still runs: the
     * lines of this block's slab of the state into L2, in the state rows
     * b, b + B, ... (so the blocks of one value head and slab ask for every
     * row once), when the B sequences read at least half of the N rows
     * (decode with a slot per sequence: all). The state is the previous
     * step's, which no kernel of this step writes before this one, so the
     * slab's loads after the wait hit L2. Which rows the slots name is not
     * read here: a load before the wait would stall the kernel by a memory
     * latency whenever nothing runs before it. H200, B = 1, HV = 32, in a
     * graph of such launches: 3.89 us a call against 4.67 without; a
     * launch with nothing before it pays 0.3 us (ncu 6.08 against 5.78),
     * hence not on plain launches. Then the wait, before any access. */
    if (chained && tx == 0 && col && N <= 2 * B)
        for (int64_t r = b; r < N; r += B)
#pragma unroll
            for (int rr = 0; rr < R; rr++)
                vt_chain_prefetch(state + ((r * HV + hv) * DK + ty + rr * TY) * dv + c);
    vt_chain_begin();
    const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    // token t's operands: loaded one token ahead (token 0's before the slot)
    float a = 0.0f, bk = 0.0f, gv, bb;
    float4 vv;
    auto fetch = [&](int64_t t) {
        const int64_t bt = b * T + t;
        if (tid < DK) {
            a = q[(bt * H + h) * DK + tid];
            bk = k[(bt * H + h) * DK + tid];
        }
        vv = col ? *(const float4 *)(v + (bt * HV + hv) * dv + c) : zero;
        gv = g[bt * HV + hv];
        bb = beta[bt * HV + hv];
    };
    fetch(0);
    // The state row read. With err, the slots and counts are the caller's,
    // unchecked: a count or row out of range reads nothing, and the block's
    // state loads go out before its check, which every block runs (block 0
    // reports); a bad call then writes zero outputs and no state.
    int32_t rs = -1;
    if (!per_token)
        rs = slots[b];
    else if (accepted[b] >= 1 && (int64_t)accepted[b] <= T)
        rs = slots[b * T + accepted[b] - 1];
    if ((int64_t)rs >= N)
        rs = -1;
    float4 S[R];
    float *src = state + ((int64_t)(rs < 0 ? 0 : rs) * HV + hv) * DK * dv + c;
#pragma unroll
    for (int r = 0; r < R; r++)
        S[r] = col && rs >= 0 ? *(const float4 *)(src + (int64_t)(ty + r * TY) * dv) : zero;
    if (err && vt_gdr_check(err, blockIdx.x == 0, op, slots, accepted, per_token, B, T, N))
        rs = -1;
    if (rs < 0) { // padding row (or a bad call): zero outputs, no state written
        for (int64_t t = 0; col && ty == 0 && t < T; t++)
            *(float4 *)(o + ((b * T + t) * HV + hv) * dv + c) = zero;
        return;
    }
    const float qscale = 1.0f / sqrtf((float)DK);
    for (int64_t t = 0; t < T; t++) {
        const int64_t bt = b * T + t;
        if (tid < DK) {
            qs[tid] = a;
            ks[tid] = bk;
        }
        float p0 = a * a, p1 = bk * bk, p2 = a * bk;
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            p0 += __shfl_xor(p0, off, 32);
            p1 += __shfl_xor(p1, off, 32);
            p2 += __shfl_xor(p2, off, 32);
        }
        if (lane == 0) {
            red1[gi][0] = p0;
            red1[gi][1] = p1;
            red1[gi][2] = p2;
        }
        const float decay = expf(gv), bbt = bb;
        const float vj[4] = {vv.x, vv.y, vv.z, vv.w};
        if (t + 1 < T)
            fetch(t + 1);
        __syncthreads();
        float qq = 0.0f, kk = 0.0f, qk = 0.0f;
#pragma unroll
        for (int j = 0; j < DK / 32; j++) {
            qq += red1[j][0];
            kk += red1[j][1];
            qk += red1[j][2];
        }
        const float qinv = l2norm ? 1.0f / sqrtf(qq + 1e-6f) : 1.0f, kinv = l2norm ? 1.0f / sqrtf(kk + 1e-6f) : 1.0f;
        float kn[R], sk[4] = {0.0f, 0.0f, 0.0f, 0.0f}, sq[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int r = 0; r < R; r++) {
            const int i = ty + r * TY;
            const float qi = qs[i];
            kn[r] = ks[i] * kinv;
            sk[0] += S[r].x * kn[r];
            sk[1] += S[r].y * kn[r];
            sk[2] += S[r].z * kn[r];
            sk[3] += S[r].w * kn[r];
            sq[0] += S[r].x * qi;
            sq[1] += S[r].y * qi;
            sq[2] += S[r].z * qi;
            sq[3] += S[r].w * qi;
        }
#pragma unroll
        for (int off = TX; off < 32; off <<= 1)
#pragma unroll
            for (int j = 0; j < 4; j++) {
                sk[j] += __shfl_xor(sk[j], off, 32);
                sq[j] += __shfl_xor(sq[j], off, 32);
            }
        if (lane < TX)
#pragma unroll
            for (int j = 0; j < 4; j++) {
                red2[gi][4 * tx + j][0] = sk[j];
                red2[gi][4 * tx + j][1] = sq[j];
            }
        __syncthreads();
        float SK[4] = {0.0f, 0.0f, 0.0f, 0.0f}, SQ[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int gg = 0; gg < NG; gg++)
#pragma unroll
            for (int j = 0; j < 4; j++) {
                SK[j] += red2[gg][4 * tx + j][0];
                SQ[j] += red2[gg][4 * tx + j][1];
            }
        const float qf = qinv * qscale, kq = qk * kinv * qf;
        float u[4], out[4];
#pragma unroll
        for (int j = 0; j < 4; j++) {
            u[j] = bbt * (vj[j] - decay * SK[j]);
            out[j] = decay * (SQ[j] * qf) + u[j] * kq;
        }
        if (col && ty == 0)
            *(float4 *)(o + (bt * HV + hv) * dv + c) = make_float4(out[0], out[1], out[2], out[3]);
#pragma unroll
        for (int r = 0; r < R; r++) {
            S[r].x = S[r].x * decay + kn[r] * u[0];
            S[r].y = S[r].y * decay + kn[r] * u[1];
            S[r].z = S[r].z * decay + kn[r] * u[2];
            S[r].w = S[r].w * decay + kn[r] * u[3];
        }
        if (per_token && col) {
            const int32_t ws = slots[bt];
            if (ws >= 0) {
                float *dst = state + ((int64_t)ws * HV + hv) * DK * dv + c;
#pragma unroll
                for (int r = 0; r < R; r++)
                    *(float4 *)(dst + (int64_t)(ty + r * TY) * dv) = S[r];
            }
        }
    }
    if (!per_token && col)
#pragma unroll
        for (int r = 0; r < R; r++)
            *(float4 *)(src + (int64_t)(ty + r * TY) * dv) = S[r];
}

// ---- the chunked form (per-sequence slots, dk = dv = 128) ----
//
// Tokens in chunks of GDR_C. Within a chunk, with G_t the running sum of
// g from the chunk's start, Gm_t = exp(G_t), kn, qn the normalised keys
// and queries (qn scaled by dk^-1/2) and S0 the state before the chunk:
//   A[t][j] = beta_t exp(G_t - G_j) kn_t.kn_j (j < t), (I + A) W = beta Gm kn,
//   (I + A) U~ = beta v, U = U~ - W S0,
//   o_t = Gm_t qn_t S0 + sum_{j<=t} exp(G_t - G_j) (qn_t.kn_j) u_j,
//   S = Gm_last S0 + sum_j exp(G_last - G_j) kn_j u_j^T,
// which is the token recurrence unrolled. gdr_chunk_prep_kernel computes,
// per (sequence, value head, chunk) in parallel, what depends on q, k, v,
// g and beta only (W, U~, the masked q.k products M, the row factors of
// qn Gm and of kn exp(G_last - G)); gdr_chunk_scan_kernel walks the chunks
// in order per (sequence, value head, slab of GDR_SW columns) with its
// slab of the state in registers.
#define GDR_C              64
#define GDR_SW             32
#define GDR_OFF_W(DK, DV)  0
#define GDR_OFF_U(DK, DV)  (GDR_C * (DK))
#define GDR_OFF_M(DK, DV)  (GDR_C * ((DK) + (DV)))
#define GDR_OFF_QF(DK, DV) (GDR_OFF_M(DK, DV) + GDR_C * GDR_C)
#define GDR_OFF_KF(DK, DV) (GDR_OFF_QF(DK, DV) + GDR_C)
#define GDR_OFF_GC(DK, DV) (GDR_OFF_KF(DK, DV) + GDR_C)
#define GDR_STRIDE(DK, DV) (GDR_OFF_GC(DK, DV) + 4)

// One block per (sequence, value head, chunk).
template <int DK, int DV>
__global__ __launch_bounds__(GDR_NT) void gdr_chunk_prep_kernel(const float *q, const float *k, const float *v,
                                                                const float *g, const float *beta, const int32_t *slots,
                                                                float *scr, int64_t T, int64_t H, int64_t HV,
                                                                int64_t tw0, int64_t TW, int l2norm)
{
    constexpr int C = GDR_C, KT = 32, P = C + 4;
    static_assert(DK + DV == GDR_NT && DK % KT == 0 && C == 64, "gdr_chunk_prep_kernel shape");
    __shared__ float kqT[2][KT][P], As[C][P];
    float(*kT)[P] = kqT[0], (*qT)[P] = kqT[1];
    float(*KK)[P] = kqT[0]; // after the Gram sums: kn.kn [C][C] over both tiles
    __shared__ float graw[C], Gs[C], Es[C], bs[C], kinv[C], qinv[C];
    const int tid = (int)threadIdx.x;
    const int64_t nc = (TW + C - 1) / C;
    const int64_t ch = blockIdx.x % nc, hv = (blockIdx.x / nc) % HV, b = blockIdx.x / (nc * HV), t0 = tw0 + ch * C;
    const int64_t h = hv / (HV / H);
    const int L = (int)(tw0 + TW - t0 < C ? tw0 + TW - t0 : C);
    if (slots[b] < 0)
        return;
    const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    // the Gram products k.k and q.k of the chunk's rows, and the norms
    const int tg = tid / 16, jg = tid % 16;
    float accA[4][4], accM[4][4], ssq = 0.0f;
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int cc = 0; cc < 4; cc++)
            accA[r][cc] = accM[r][cc] = 0.0f;
    for (int i0 = 0; i0 < DK; i0 += KT) {
#pragma unroll
        for (int p = 0; p < 2; p++) {
            const int idx = tid + GDR_NT * p, t = idx / (KT / 4), c4 = idx % (KT / 4);
            float4 kv4 = zero, qv4 = zero;
            if (t < L) {
                const int64_t off = ((b * T + t0 + t) * H + h) * DK + i0 + 4 * c4;
                kv4 = *(const float4 *)(k + off);
                qv4 = *(const float4 *)(q + off);
            }
            kT[4 * c4][t] = kv4.x;
            kT[4 * c4 + 1][t] = kv4.y;
            kT[4 * c4 + 2][t] = kv4.z;
            kT[4 * c4 + 3][t] = kv4.w;
            qT[4 * c4][t] = qv4.x;
            qT[4 * c4 + 1][t] = qv4.y;
            qT[4 * c4 + 2][t] = qv4.z;
            qT[4 * c4 + 3][t] = qv4.w;
        }
        __syncthreads();
        if (tid < C)
            for (int ii = 0; ii < KT; ii++)
                ssq += kT[ii][tid] * kT[ii][tid];
        else if (tid < 2 * C)
            for (int ii = 0; ii < KT; ii++)
                ssq += qT[ii][tid - C] * qT[ii][tid - C];
#pragma unroll 8
        for (int ii = 0; ii < KT; ii++) {
            const float4 ka = *(const float4 *)&kT[ii][4 * tg], qa = *(const float4 *)&qT[ii][4 * tg],
                         kb = *(const float4 *)&kT[ii][4 * jg];
            const float ar[4] = {ka.x, ka.y, ka.z, ka.w}, qr[4] = {qa.x, qa.y, qa.z, qa.w},
                        bc[4] = {kb.x, kb.y, kb.z, kb.w};
#pragma unroll
            for (int r = 0; r < 4; r++)
#pragma unroll
                for (int cc = 0; cc < 4; cc++) {
                    accA[r][cc] += ar[r] * bc[cc];
                    accM[r][cc] += qr[r] * bc[cc];
                }
        }
        __syncthreads();
    }
    if (tid < C)
        kinv[tid] = l2norm ? 1.0f / sqrtf(ssq + 1e-6f) : 1.0f;
    else if (tid < 2 * C)
        qinv[tid - C] = l2norm ? 1.0f / sqrtf(ssq + 1e-6f) : 1.0f;
    __syncthreads();
    const float qscale = 1.0f / sqrtf((float)DK);
#pragma unroll
    for (int r = 0; r < 4; r++) // kn.kn into KK, qn.kn (scaled) in registers
#pragma unroll
        for (int c2 = 0; c2 < 4; c2++) {
            const int t = 4 * tg + r, j = 4 * jg + c2;
            KK[t][j] = kinv[t] * kinv[j] * accA[r][c2];
            accM[r][c2] = qinv[t] * qscale * kinv[j] * accM[r][c2];
        }
    const bool isw = tid < DK;
    const int cc = isw ? tid : tid - DK;
    {
        float *base = scr + ((b * HV + hv) * nc + ch) * (int64_t)GDR_STRIDE(DK, DV);
        if (tid < C) {
            graw[tid] = tid < L ? g[(b * T + t0 + tid) * HV + hv] : 0.0f;
            bs[tid] = tid < L ? beta[(b * T + t0 + tid) * HV + hv] : 0.0f;
        }
        __syncthreads(); // graw, bs, kinv and qinv written
        if (tid < C) {   // G_t = g_0 + ... + g_t in index order
            float run = 0.0f;
            for (int j = 0; j <= tid; j++)
                run += graw[j];
            Gs[tid] = run;
            Es[tid] = expf(run);
        }
        __syncthreads();
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const int t = 4 * tg + r;
            float m[4];
#pragma unroll
            for (int c2 = 0; c2 < 4; c2++) {
                const int j = 4 * jg + c2;
                float a = 0.0f;
                m[c2] = 0.0f;
                if (t < L && j <= t) {
                    const float dec = expf(Gs[t] - Gs[j]);
                    if (j < t)
                        a = bs[t] * dec * KK[t][j];
                    m[c2] = dec * accM[r][c2];
                }
                As[t][j] = a;
            }
            *(float4 *)(base + GDR_OFF_M(DK, DV) + t * C + 4 * jg) = make_float4(m[0], m[1], m[2], m[3]);
        }
        if (tid < C) {
            const int t = tid;
            base[GDR_OFF_QF(DK, DV) + t] = t < L ? qinv[t] * qscale * Es[t] : 0.0f;
            base[GDR_OFF_KF(DK, DV) + t] = t < L ? kinv[t] * expf(Gs[L - 1] - Gs[t]) : 0.0f;
            if (t == 0)
                base[GDR_OFF_GC(DK, DV)] = Es[L - 1];
        }
        __syncthreads();
        // forward substitution, one thread per column of [W | U~]
        float X[C];
#pragma unroll
        for (int t = 0; t < C; t++) {
            float r = 0.0f;
            if (t < L) {
                const int64_t bt = b * T + t0 + t;
                r = isw ? bs[t] * Es[t] * kinv[t] * k[(bt * H + h) * DK + cc] : bs[t] * v[(bt * HV + hv) * DV + cc];
            }
            X[t] = r;
        }
#pragma unroll
        for (int t = 1; t < C; t++) {
            asm volatile("" ::: "memory"); // row t's loads of As are not hoisted above here
            float acc = X[t];
#pragma unroll
            for (int j4 = 0; j4 < t; j4 += 4) {
                const float4 a4 = *(const float4 *)&As[t][j4];
                acc -= a4.x * X[j4];
                if (j4 + 1 < t)
                    acc -= a4.y * X[j4 + 1];
                if (j4 + 2 < t)
                    acc -= a4.z * X[j4 + 2];
                if (j4 + 3 < t)
                    acc -= a4.w * X[j4 + 3];
            }
            X[t] = acc;
        }
        float *dst = base + (isw ? GDR_OFF_W(DK, DV) : GDR_OFF_U(DK, DV)) + cc;
        const int rstride = isw ? DK : DV;
#pragma unroll
        for (int t = 0; t < C; t++)
            dst[t * rstride] = X[t];
    }
}

// Loads of the chunk operands run one phase ahead of their use (the next
// X tile while a tile is multiplied, U~, M and the first k~ tile during
// the last X tile, the next chunk's first X tile during the state update),
// so that the walk waits on memory as little as possible.
template <int DK, int DV>
__global__ __launch_bounds__(GDR_NT) void gdr_chunk_scan_kernel(const float *q, const float *k, const float *scr,
                                                                const int32_t *slots, float *o, float *state, int64_t T,
                                                                int64_t H, int64_t HV, int64_t tw0, int64_t TW)
{
    constexpr int C = GDR_C, SW = GDR_SW, KT = 32, PA = 2 * C + 4, PM = C + 4, NX = DK / KT;
    static_assert(DK == 128 && DV % SW == 0 && (GDR_NT / (SW / 4)) * 4 == DK && 2 * C == DK && C == 2 * KT,
                  "gdr_chunk_scan_kernel shape");
    __shared__ float Ss[DK * SW];                             // the state slab [DK][SW], then k~ tiles [KT][DK]
    __shared__ float As[KT * PA > C * PM ? KT * PA : C * PM]; // [W; q~] tiles [KT][2C], then M [C][C]
    __shared__ float Us[C * SW];                              // U [C][SW]
    const int tid = (int)threadIdx.x, cg = tid % (SW / 4), rg = tid / (SW / 4);
    const int64_t slabs = DV / SW;
    const int64_t slab = blockIdx.x % slabs, hv = (blockIdx.x / slabs) % HV, b = blockIdx.x / (slabs * HV);
    const int64_t h = hv / (HV / H), c0 = slab * SW + 4 * cg;
    const int64_t nc = (TW + C - 1) / C;
    const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    const int32_t rs = slots[b];
    if (rs < 0) {
        for (int64_t t = tw0 + rg; t < tw0 + TW; t += GDR_NT / (SW / 4))
            *(float4 *)(o + ((b * T + t) * HV + hv) * DV + c0) = zero;
        return;
    }
    const float *scr_bh = scr + (b * HV + hv) * nc * (int64_t)GDR_STRIDE(DK, DV);
    // X tile it of chunk ch into pre / pf (raw values and their row factor)
    float4 pre[4];
    float pf[4];
    auto load_x = [&](int64_t ch, int it) {
        const float *base = scr_bh + ch * (int64_t)GDR_STRIDE(DK, DV);
        const int64_t t0 = tw0 + ch * C;
        const int L = (int)(tw0 + TW - t0 < C ? tw0 + TW - t0 : C);
#pragma unroll
        for (int p = 0; p < 4; p++) {
            const int idx = tid + GDR_NT * p, row = idx / (KT / 4), q4 = idx % (KT / 4);
            const int i = it * KT + 4 * q4;
            if (row < C) {
                pre[p] = *(const float4 *)(base + GDR_OFF_W(DK, DV) + row * DK + i);
                pf[p] = 1.0f;
            } else {
                const int t = row - C;
                pre[p] = zero;
                pf[p] = 0.0f;
                if (t < L) {
                    pf[p] = base[GDR_OFF_QF(DK, DV) + t];
                    pre[p] = *(const float4 *)(q + ((b * T + t0 + t) * H + h) * DK + i);
                }
            }
        }
    };
    // k~ rows j0 .. j0 + KT - 1 of chunk ch into kx / kfv
    float4 kx[4];
    float kfv[4];
    auto load_k = [&](int64_t ch, int j0) {
        const float *base = scr_bh + ch * (int64_t)GDR_STRIDE(DK, DV);
        const int64_t t0 = tw0 + ch * C;
        const int L = (int)(tw0 + TW - t0 < C ? tw0 + TW - t0 : C);
#pragma unroll
        for (int p = 0; p < 4; p++) {
            const int idx = tid + GDR_NT * p, row = idx / (DK / 4), q4 = idx % (DK / 4);
            const int j = j0 + row;
            kx[p] = zero;
            kfv[p] = 0.0f;
            if (j < L) {
                kfv[p] = base[GDR_OFF_KF(DK, DV) + j];
                kx[p] = *(const float4 *)(k + ((b * T + t0 + j) * H + h) * DK + 4 * q4);
            }
        }
    };
    auto store_k = [&]() {
#pragma unroll
        for (int p = 0; p < 4; p++) {
            const int idx = tid + GDR_NT * p, row = idx / (DK / 4), q4 = idx % (DK / 4);
            *(float4 *)&Ss[row * DK + 4 * q4] =
                make_float4(kx[p].x * kfv[p], kx[p].y * kfv[p], kx[p].z * kfv[p], kx[p].w * kfv[p]);
        }
    };
    auto update = [&](int j0, float4 *S) { // S += k~[j0 ..]^T U[j0 ..]
#pragma unroll 8
        for (int jj = 0; jj < KT; jj++) {
            const float4 kk = *(const float4 *)&Ss[jj * DK + 4 * rg];
            const float4 u = *(const float4 *)&Us[(j0 + jj) * SW + 4 * cg];
            const float kr[4] = {kk.x, kk.y, kk.z, kk.w};
#pragma unroll
            for (int r = 0; r < 4; r++) {
                S[r].x += kr[r] * u.x;
                S[r].y += kr[r] * u.y;
                S[r].z += kr[r] * u.z;
                S[r].w += kr[r] * u.w;
            }
        }
    };
    float *st = state + ((int64_t)rs * HV + hv) * DK * DV + c0;
    float4 S[4];
#pragma unroll
    for (int r = 0; r < 4; r++)
        S[r] = *(const float4 *)(st + (int64_t)(4 * rg + r) * DV);
    load_x(0, 0);
    for (int64_t ch = 0; ch < nc; ch++) {
        const int64_t t0 = tw0 + ch * C;
        const int L = (int)(tw0 + TW - t0 < C ? tw0 + TW - t0 : C);
        const float *base = scr_bh + ch * (int64_t)GDR_STRIDE(DK, DV);
        __syncthreads(); // the previous chunk's readers of Ss, As and Us are done
#pragma unroll
        for (int r = 0; r < 4; r++)
            *(float4 *)&Ss[(4 * rg + r) * SW + 4 * cg] = S[r];
        // X = [W; q~] S0: rows 4 rg .. 4 rg + 3 of the 2C, columns 4 cg ..
        float acc[4][4];
#pragma unroll
        for (int r = 0; r < 4; r++)
#pragma unroll
            for (int cc = 0; cc < 4; cc++)
                acc[r][cc] = 0.0f;
        float4 ureg[4], mreg[4];
#pragma unroll
        for (int it = 0; it < NX; it++) {
            if (it > 0)
                __syncthreads(); // the previous tile consumed
#pragma unroll
            for (int p = 0; p < 4; p++) {
                const int idx = tid + GDR_NT * p, row = idx / (KT / 4), q4 = idx % (KT / 4);
                As[(4 * q4) * PA + row] = pre[p].x * pf[p];
                As[(4 * q4 + 1) * PA + row] = pre[p].y * pf[p];
                As[(4 * q4 + 2) * PA + row] = pre[p].z * pf[p];
                As[(4 * q4 + 3) * PA + row] = pre[p].w * pf[p];
            }
            __syncthreads();
            if (it + 1 < NX) {
                load_x(ch, it + 1);
            } else { // U~ (W rows only), M and the first k~ tile
#pragma unroll
                for (int r = 0; r < 4; r++)
                    ureg[r] = rg < C / 4 ? *(const float4 *)(base + GDR_OFF_U(DK, DV) + (4 * rg + r) * DV + c0) : zero;
#pragma unroll
                for (int p = 0; p < 4; p++) {
                    const int idx = tid + GDR_NT * p, row = idx / (C / 4), q4 = idx % (C / 4);
                    mreg[p] = *(const float4 *)(base + GDR_OFF_M(DK, DV) + row * C + 4 * q4);
                }
                load_k(ch, 0);
            }
            const int i0 = it * KT;
#pragma unroll 8
            for (int ii = 0; ii < KT; ii++) {
                const float4 a = *(const float4 *)&As[ii * PA + 4 * rg];
                const float4 s = *(const float4 *)&Ss[(i0 + ii) * SW + 4 * cg];
                const float ar[4] = {a.x, a.y, a.z, a.w}, sc[4] = {s.x, s.y, s.z, s.w};
#pragma unroll
                for (int r = 0; r < 4; r++)
#pragma unroll
                    for (int cc = 0; cc < 4; cc++)
                        acc[r][cc] += ar[r] * sc[cc];
            }
        }
        __syncthreads();  // As and Ss free
        if (rg < C / 4) { // U = U~ - W S0
#pragma unroll
            for (int r = 0; r < 4; r++)
                *(float4 *)&Us[(4 * rg + r) * SW + 4 * cg] = make_float4(ureg[r].x - acc[r][0], ureg[r].y - acc[r][1],
                                                                         ureg[r].z - acc[r][2], ureg[r].w - acc[r][3]);
        }
#pragma unroll
        for (int p = 0; p < 4; p++) {
            const int idx = tid + GDR_NT * p, row = idx / (C / 4), q4 = idx % (C / 4);
            *(float4 *)&As[row * PM + 4 * q4] = mreg[p];
        }
        store_k();
        __syncthreads();
        load_k(ch, KT);
        const float gc = base[GDR_OFF_GC(DK, DV)];
        if (rg >= C / 4) { // o = q~ S0 + M U for rows 4 tq ..
            const int tq = rg - C / 4;
            for (int j = 0; j <= 4 * tq + 3; j++) {
                const float4 u = *(const float4 *)&Us[j * SW + 4 * cg];
                const float uc[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
                for (int r = 0; r < 4; r++) {
                    const float m = As[(4 * tq + r) * PM + j];
#pragma unroll
                    for (int cc = 0; cc < 4; cc++)
                        acc[r][cc] += m * uc[cc];
                }
            }
#pragma unroll
            for (int r = 0; r < 4; r++) {
                const int t = 4 * tq + r;
                if (t < L)
                    *(float4 *)(o + ((b * T + t0 + t) * HV + hv) * DV + c0) =
                        make_float4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
            }
        }
#pragma unroll
        for (int r = 0; r < 4; r++)
            S[r] = make_float4(S[r].x * gc, S[r].y * gc, S[r].z * gc, S[r].w * gc);
        update(0, S);
        __syncthreads(); // the first k~ tile consumed
        store_k();
        __syncthreads();
        if (ch + 1 < nc)
            load_x(ch + 1, 0);
        update(KT, S);
    }
#pragma unroll
    for (int r = 0; r < 4; r++)
        *(float4 *)(st + (int64_t)(4 * rg + r) * DV) = S[r];
}

} // namespace

namespace
{

// The chunked form from this many tokens on (below it the decode form is
// faster: one chunk costs about as much as 32 tokens of the token walk).
#define GDR_CHUNK_MIN_T 32
// Chunk-heads of scratch per window of chunks (2048 * 82 KB = 168 MB): a
// longer prompt is walked in windows of chunks, one prep and one scan each.
#ifndef GDR_WINDOW_CHUNK_HEADS // (smaller in the cpu emulation, to walk several windows)
#define GDR_WINDOW_CHUNK_HEADS 2048
#endif

bool gdr_chunked(int64_t T, int64_t dk, int64_t dv, int per_token)
{
    return !per_token && dk == 128 && dv == 128 && T >= GDR_CHUNK_MIN_T;
}

int64_t gdr_window_chunks(int64_t B, int64_t HV, int64_t T)
{
    int64_t nc = (T + GDR_C - 1) / GDR_C, wc = GDR_WINDOW_CHUNK_HEADS / (B * HV > 0 ? B * HV : 1);
    return wc < 1 ? 1 : wc > nc ? nc : wc;
}

bool aligned16(const void *p)
{
    return ((uintptr_t)p & 15) == 0;
}

// The decode kernel's slab width: slabs of 32 columns, or of 16 when that
// leaves most of the GPU idle. H200, B = 1, HV = 32 (scripts/gdn-kernels,
// BENCHMARKS.md): 128 blocks of 32 columns 5.2 us (ncu), 256 of 16 5.9 us,
// 512 of 8 8.4 us (more blocks, each with fewer loads in flight, is slower).
int decode_sw(int64_t B, int64_t HV, int64_t dv)
{
    return B * HV * ((dv + 31) / 32) >= 128 ? 32 : 16;
}

// gdr_decode_kernel<128, sw> over the call (err: the fused check, or NULL).
hipError_t launch_decode(int sw, const float *q, const float *k, const float *v, const float *g, const float *beta,
                         const int32_t *slots, const int32_t *accepted, int per_token, float *o, float *state,
                         int64_t B, int64_t T, int64_t H, int64_t HV, int64_t dv, int l2norm, vt_rocm_err *err,
                         uint32_t op, int64_t N, hipStream_t stream)
{
    const dim3 grid((unsigned)(B * HV * ((dv + sw - 1) / sw)));
    const int chained = vt_launches_chained(); /* the hint only where the launch is chained */
    if (sw == 32)
        VT_LAUNCH_CHAINED((gdr_decode_kernel<128, 32>), grid, dim3(GDR_NT), 0, stream, q, k, v, g, beta, slots,
                          accepted, per_token, o, state, T, H, HV, dv, l2norm, err, op, B, N, chained);
    else if (sw == 16)
        VT_LAUNCH_CHAINED((gdr_decode_kernel<128, 16>), grid, dim3(GDR_NT), 0, stream, q, k, v, g, beta, slots,
                          accepted, per_token, o, state, T, H, HV, dv, l2norm, err, op, B, N, chained);
    else
        VT_LAUNCH_CHAINED((gdr_decode_kernel<128, 8>), grid, dim3(GDR_NT), 0, stream, q, k, v, g, beta, slots, accepted,
                          per_token, o, state, T, H, HV, dv, l2norm, err, op, B, N, chained);
    return hipGetLastError();
}

} // namespace

extern "C" uint64_t vt_rocm_gated_delta_scratch_bytes(int64_t B, int64_t T, int64_t HV, int64_t dk, int64_t dv,
                                                      int per_token)
{
    if (B * HV <= 0 || !gdr_chunked(T, dk, dv, per_token))
        return 0;
    return (uint64_t)(B * HV * gdr_window_chunks(B, HV, T)) * GDR_STRIDE(128, 128) * sizeof(float);
}

extern "C" hipError_t vt_rocm_launch_gated_delta(const float *q, const float *k, const float *v, const float *g,
                                                 const float *beta, const int32_t *slots, const int32_t *accepted,
                                                 int per_token, float *o, float *state, int64_t B, int64_t T, int64_t H,
                                                 int64_t HV, int64_t dk, int64_t dv, int l2norm, void *scratch,
                                                 hipStream_t stream)
{
    int64_t total = B * HV * dv;
    if (total <= 0 || T <= 0)
        return hipSuccess;
    if (dk == 128 && dv % 4 == 0 && aligned16(v) && aligned16(o) && aligned16(state)) {
        if (scratch && gdr_chunked(T, dk, dv, per_token) && aligned16(q) && aligned16(k) && aligned16(scratch)) {
            const int64_t wc = gdr_window_chunks(B, HV, T);
            for (int64_t tw0 = 0; tw0 < T; tw0 += wc * GDR_C) {
                const int64_t TW = T - tw0 < wc * GDR_C ? T - tw0 : wc * GDR_C, nc = (TW + GDR_C - 1) / GDR_C;
                hipLaunchKernelGGL((gdr_chunk_prep_kernel<128, 128>), dim3((unsigned)(B * HV * nc)), dim3(GDR_NT), 0,
                                   stream, q, k, v, g, beta, slots, (float *)scratch, T, H, HV, tw0, TW, l2norm);
                hipLaunchKernelGGL((gdr_chunk_scan_kernel<128, 128>), dim3((unsigned)(B * HV * (128 / GDR_SW))),
                                   dim3(GDR_NT), 0, stream, q, k, (const float *)scratch, slots, o, state, T, H, HV,
                                   tw0, TW);
                hipError_t e = hipGetLastError();
                if (e != hipSuccess)
                    return e;
            }
            return hipSuccess;
        }
        return launch_decode(decode_sw(B, HV, dv), q, k, v, g, beta, slots, accepted, per_token, o, state, B, T, H, HV,
                             dv, l2norm, nullptr, 0, INT64_MAX, stream);
    }
    if (dk == 128) {
        int64_t blocks = B * HV * ((dv + GDR_COLS - 1) / GDR_COLS);
        hipLaunchKernelGGL(gdr_cols_kernel<128>, dim3((unsigned)blocks), dim3(GDR_COLS), 0, stream, q, k, v, g, beta,
                           slots, accepted, per_token, o, state, T, H, HV, dv, l2norm);
        return hipGetLastError();
    }
    hipLaunchKernelGGL(gdr_kernel, dim3(vt_grid_for(total, 128)), dim3(128), 0, stream, q, k, v, g, beta, slots,
                       accepted, per_token, o, state, B, T, H, HV, dk, dv, l2norm);
    return hipGetLastError();
}

extern "C" hipError_t vt_rocm_launch_gated_delta_checked(vt_rocm_err *err, uint32_t op, const float *q, const float *k,
                                                         const float *v, const float *g, const float *beta,
                                                         const int32_t *slots, const int32_t *accepted, int per_token,
                                                         float *o, float *state, int64_t B, int64_t T, int64_t H,
                                                         int64_t HV, int64_t dk, int64_t dv, int64_t N, int l2norm,
                                                         hipStream_t stream, int *taken)
{
    *taken = 0;
    const int64_t n_slots = per_token ? B * T : B;
    if (B * HV * dv <= 0 || T <= 0 || n_slots > VT_ROCM_GDR_FUSED_MAX_SLOTS || dk != 128 || dv % 4 != 0 ||
        gdr_chunked(T, dk, dv, per_token) || !aligned16(v) || !aligned16(o) || !aligned16(state))
        return hipSuccess;
    *taken = 1;
    return launch_decode(decode_sw(B, HV, dv), q, k, v, g, beta, slots, accepted, per_token, o, state, B, T, H, HV, dv,
                         l2norm, err, op, N, stream);
}
