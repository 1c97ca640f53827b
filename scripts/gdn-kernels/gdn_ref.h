// gdn_ref.h - what the two GatedDeltaRule / CausalConv1dUpdate instruments
// share (gdn_bench.cu on the GPU, gdn_emu.cpp on the CPU; both include the
// plugin's own kernel files): the random inputs of a case, the f64
// references of SPEC 7's formulas and the relative error of a result.
#ifndef GDN_REF_H
#define GDN_REF_H

#include <math.h>
#include <stdint.h>

#include <vector>

static uint64_t rng_s = 0x1234567887654321ull;

// A uniform draw in [lo, hi) (xorshift64, the same sequence in both tools).
static double urand(double lo, double hi)
{
    rng_s ^= rng_s << 13;
    rng_s ^= rng_s >> 7;
    rng_s ^= rng_s << 17;
    return lo + (hi - lo) * (double)(rng_s >> 11) / 9007199254740992.0;
}

// ||got - ref|| / ||ref|| (infinite when got has a non-finite value).
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

// A GatedDeltaRule case: shapes, slot form, L2 norm, row 1 padding (slot
// -1), g drawn from [glo, 0].
struct GdrShape {
    int B, T, H, HV, dk, dv, per_token, l2norm, padrow;
    double glo;
};

// A case's host data: inputs, N state rows, slots (distinct, reversed;
// per-token: every third write skipped, never the read one), accepted
// counts, and the reference outputs and final state.
struct GdrHost {
    GdrShape c;
    int64_t N;
    std::vector<float> q, k, v, g, beta, st0;
    std::vector<int32_t> slots, acc;
    std::vector<double> o_ref, st_ref;
};

static void fill_uniform(std::vector<float> &a, size_t n, double lo, double hi)
{
    a.resize(n);
    for (auto &x : a)
        x = (float)urand(lo, hi);
}

// The recurrence of SPEC 7 in f64 over G's inputs into G.o_ref, G.st_ref.
static void gdr_reference(GdrHost &G)
{
    const GdrShape &c = G.c;
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
                for (auto &x : S)
                    x *= decay;
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

// Draw case c's inputs into G and compute its reference.
static void gdr_host(const GdrShape &c, GdrHost &G)
{
    G.c = c;
    const int64_t B = c.B, T = c.T, H = c.H, HV = c.HV, dk = c.dk, dv = c.dv;
    double r = c.l2norm ? 1.0 : sqrt(1.5 / dk);
    fill_uniform(G.q, B * T * H * dk, -r, r);
    fill_uniform(G.k, B * T * H * dk, -r, r);
    fill_uniform(G.v, B * T * HV * dv, -1, 1);
    fill_uniform(G.g, B * T * HV, c.glo, 0);
    fill_uniform(G.beta, B * T * HV, 0, 1);
    int64_t per_row = c.per_token ? T : 1;
    G.N = B * per_row + 1;
    fill_uniform(G.st0, G.N * HV * dk * dv, -0.2, 0.2);
    G.slots.resize(B * per_row);
    for (int64_t i = 0; i < B * per_row; i++)
        G.slots[i] = (int32_t)(G.N - 1 - i);
    if (c.padrow && B > 1)
        for (int64_t t = 0; t < per_row; t++)
            G.slots[per_row + t] = -1;
    G.acc.assign(B, 1);
    if (c.per_token) {
        for (int64_t b = 0; b < B; b++)
            G.acc[b] = 1 + (int32_t)(b % T);
        for (int64_t i = 0; i < B * T; i += 3)
            if (G.slots[i] >= 0 && i % T != G.acc[i / T] - 1)
                G.slots[i] = -1;
    }
    gdr_reference(G);
}

// A CausalConv1dUpdate case (W = 4, T = 1, silu): inputs, N = B + 1 state
// rows, slots (row 1 padding when B > 1), reference output and state.
struct ConvHost {
    int B, D, with_bias, with_slots;
    int64_t N;
    std::vector<float> x, w, bias, st0, stref;
    std::vector<int32_t> slots;
    std::vector<double> yref;
};

static void conv_host(int B, int D, int with_bias, int with_slots, ConvHost &C)
{
    C.B = B, C.D = D, C.with_bias = with_bias, C.with_slots = with_slots, C.N = B + 1;
    fill_uniform(C.x, (size_t)B * D, -1, 1);
    fill_uniform(C.w, (size_t)D * 4, -0.5, 0.5);
    fill_uniform(C.bias, D, -0.5, 0.5);
    fill_uniform(C.st0, (size_t)C.N * D * 3, -1, 1);
    C.slots.resize(B);
    for (int b = 0; b < B; b++)
        C.slots[b] = (int32_t)(C.N - 1 - b);
    if (B > 1)
        C.slots[1] = -1;
    C.yref.assign((size_t)B * D, 0.0);
    C.stref = C.st0;
    for (int b = 0; b < B; b++)
        for (int d = 0; d < D; d++) {
            int64_t slot = with_slots ? C.slots[b] : b;
            if (slot < 0)
                continue;
            const float *sp = &C.st0[(slot * D + d) * 3];
            double e[4] = {sp[0], sp[1], sp[2], C.x[b * D + d]}, a = with_bias ? C.bias[d] : 0;
            for (int j = 0; j < 4; j++)
                a += (double)C.w[d * 4 + j] * e[j];
            C.yref[b * D + d] = a / (1 + exp(-a));
            for (int i = 0; i < 3; i++)
                C.stref[(slot * D + d) * 3 + i] = (float)e[i + 1];
        }
}

#endif
