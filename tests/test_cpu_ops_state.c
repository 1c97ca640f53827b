/* test_cpu_ops_state.c - the cpu oracle's stateful ops against references
 * written here: the three causal convolutions (states exact, padding
 * slots, accepted counts 1..T_prev, untouched columns, the identity
 * "L=W-1, T=1, a=1 equals op 9", speculative decode replayed token by
 * token), KvCacheWrite (-1 skips, later tokens win, f32/f16/bf16 caches)
 * and GatedDeltaRule (per-sequence and per-token slots, accepted counts,
 * GVA head ratios, L2 norm). Bad slots and counts are refused by name and
 * leave the state untouched. Exit 77 when another backend is selected. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_harness.h"

static double act(double v, int silu)
{
    return silu ? v / (1.0 + exp(-v)) : v;
}

/* ---- references of the three convolutions ---- */

/* out[t] = act(bias + sum_j w[j] e[t+j]) over a window e of W-1+T values. */
static void ref_conv_row(const double *e, const float *w, double bias, int64_t W, int64_t T, int silu, double *out)
{
    for (int64_t t = 0; t < T; t++) {
        double s = bias;
        for (int64_t j = 0; j < W; j++)
            s += (double)w[j] * e[t + j];
        out[t] = act(s, silu);
    }
}

typedef struct conv_io {
    int64_t B, D, T, W, N, L;
    float *x, *w, *bias; /* bias may be NULL */
    int32_t *slots;      /* may be NULL for op 9 */
    int32_t *acc;        /* op 7 */
    float *state;        /* [N,D,L] before */
    int silu;
} conv_io;

/* Op 7 or 9 reference: y [B,D,T] and the state after. */
static void ref_conv_slots(const conv_io *c, bool spec, double *y, float *state_after)
{
    memcpy(state_after, c->state, sizeof(float) * (size_t)(c->N * c->D * c->L));
    double *e = malloc(sizeof(double) * (size_t)(c->W - 1 + c->T));
    for (int64_t b = 0; b < c->B; b++) {
        int64_t slot = c->slots ? c->slots[b] : b;
        for (int64_t d = 0; d < c->D; d++) {
            double *yr = y + (b * c->D + d) * c->T;
            if (slot < 0) {
                for (int64_t t = 0; t < c->T; t++)
                    yr[t] = 0.0;
                continue;
            }
            const float *srow = c->state + (slot * c->D + d) * c->L;
            int64_t first = spec ? c->acc[b] - 1 : 0;
            for (int64_t j = 0; j < c->W - 1; j++)
                e[j] = srow[first + j];
            for (int64_t t = 0; t < c->T; t++)
                e[c->W - 1 + t] = c->x[(b * c->D + d) * c->T + t];
            ref_conv_row(e, c->w + d * c->W, c->bias ? c->bias[d] : 0.0, c->W, c->T, c->silu, yr);
            float *arow = state_after + (slot * c->D + d) * c->L;
            if (spec) /* new S[i] = e[i+1] for i <= W-3+T */
                for (int64_t i = 0; i <= c->W - 3 + c->T; i++)
                    arow[i] = (float)e[i + 1];
            else /* the last W-1 columns of e */
                for (int64_t i = 0; i < c->W - 1; i++)
                    arow[i] = (float)e[c->T + i];
        }
    }
    free(e);
}

/* Run op 7 (spec) or 9 on the cpu; y and the state after come back. */
static void run_conv_slots(oh *h, const conv_io *c, bool spec, float *y, float *state_after)
{
    int64_t sx[3] = {c->B, c->D, c->T}, sw[2] = {c->D, c->W}, ss[3] = {c->N, c->D, c->L};
    vt_tensor *tx = oh_tensor(h, VT_F32, 3, sx, c->x), *tw = oh_tensor(h, VT_F32, 2, sw, c->w);
    vt_tensor *tb = c->bias ? oh_tensor(h, VT_F32, 1, &c->D, c->bias) : NULL;
    vt_tensor *ts = c->slots ? oh_tensor(h, VT_I32, 1, &c->B, c->slots) : NULL;
    vt_tensor *ta = spec ? oh_tensor(h, VT_I32, 1, &c->B, c->acc) : NULL;
    vt_tensor *ty = oh_tensor(h, VT_F32, 3, sx, NULL), *tst = oh_tensor(h, VT_F32, 3, ss, c->state);
    const vt_tensor *in[5] = {tx, tw, tb, ts, ta};
    vt_tensor *out[2] = {ty, tst};
    vt_params_conv p = {c->silu};
    oh_run(h, spec ? VT_OP_CAUSAL_CONV1D_SPEC_UPDATE : VT_OP_CAUSAL_CONV1D_UPDATE, in, spec ? 5 : (c->slots ? 4 : 3),
           out, 2, &p, sizeof p);
    oh_read(ty, y);
    oh_read(tst, state_after);
    vt_tensor *all[7] = {tx, tw, tb, ts, ta, ty, tst};
    for (int i = 0; i < 7; i++)
        vt_tensor_destroy(all[i]);
}

static void random_conv(oh *h, conv_io *c, bool spec, int64_t T, int64_t t_prev)
{
    memset(c, 0, sizeof *c);
    c->B = oh_irange(h, 1, 5);
    c->D = oh_irange(h, 1, 37);
    c->W = oh_irange(h, 2, 5);
    c->T = T;
    c->N = c->B + oh_irange(h, 0, 3);
    c->L = spec ? c->W - 2 + (T > t_prev ? T : t_prev) + oh_irange(h, 0, 2) : c->W - 1;
    c->silu = (int)oh_irange(h, 0, 1);
    c->x = oh_rand(h, (size_t)(c->B * c->D * T), -2, 2);
    c->w = oh_rand(h, (size_t)(c->D * c->W), -1, 1);
    c->bias = vt_rng_below(&h->r, 2) ? oh_rand(h, (size_t)c->D, -1, 1) : NULL;
    c->state = oh_rand(h, (size_t)(c->N * c->D * c->L), -2, 2);
    c->slots = malloc(sizeof(int32_t) * (size_t)c->B);
    int32_t *perm = malloc(sizeof(int32_t) * (size_t)c->N);
    for (int64_t i = 0; i < c->N; i++)
        perm[i] = (int32_t)i;
    for (int64_t i = c->N - 1; i > 0; i--) {
        int64_t j = oh_irange(h, 0, i);
        int32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int64_t b = 0; b < c->B; b++)
        c->slots[b] = b > 0 && vt_rng_below(&h->r, 4) == 0 ? -1 : perm[b];
    free(perm);
    c->acc = malloc(sizeof(int32_t) * (size_t)c->B);
    for (int64_t b = 0; b < c->B; b++) /* cycle through 1..T_prev; garbage on padding rows */
        c->acc[b] = c->slots[b] < 0 ? 777 : (int32_t)(1 + (b + oh_irange(h, 0, t_prev)) % t_prev);
}

static void free_conv(conv_io *c)
{
    free(c->x), free(c->w), free(c->bias), free(c->state), free(c->slots), free(c->acc);
}

static void check_conv_slots(oh *h, const conv_io *c, bool spec, const char *what)
{
    size_t ny = (size_t)(c->B * c->D * c->T), ns = (size_t)(c->N * c->D * c->L);
    float *y = malloc(ny * 4), *st = malloc(ns * 4), *rst = malloc(ns * 4);
    double *ry = malloc(ny * sizeof *ry);
    run_conv_slots(h, c, spec, y, st);
    ref_conv_slots(c, spec, ry, rst);
    char buf[200];
    snprintf(buf, sizeof buf, "%s y (B=%lld D=%lld T=%lld W=%lld L=%lld)", what, (long long)c->B, (long long)c->D,
             (long long)c->T, (long long)c->W, (long long)c->L);
    oh_expect_rel(buf, y, ry, ny, 1e-5);
    for (int64_t b = 0; b < c->B; b++)
        if (c->slots && c->slots[b] < 0)
            for (int64_t i = 0; i < c->D * c->T; i++) /* padding: exact zeros */
                ck_assert_msg(y[b * c->D * c->T + i] == 0.0f, "%s: padding row %lld is not zero", what, (long long)b);
    snprintf(buf, sizeof buf, "%s state (exact)", what);
    oh_expect_bits32(buf, st, rst, ns);
    free(y), free(st), free(rst), free(ry);
}

START_TEST(conv_spec_update_accepted_and_padding)
{
    oh h;
    oh_open(&h, 201);
    for (int64_t T = 1; T <= 5; T++)
        for (int64_t t_prev = 1; t_prev <= 6; t_prev++)
            for (int rep = 0; rep < 3; rep++) {
                conv_io c;
                random_conv(&h, &c, true, T, t_prev);
                check_conv_slots(&h, &c, true, "CausalConv1dSpecUpdate");
                free_conv(&c);
            }
    oh_close(&h);
}
END_TEST

START_TEST(conv_update_slots_and_padding)
{
    oh h;
    oh_open(&h, 202);
    for (int rep = 0; rep < 40; rep++) {
        conv_io c;
        random_conv(&h, &c, false, oh_irange(&h, 1, 3), 1);
        if (rep % 3 == 0) { /* no slots: row b is state b */
            free(c.slots);
            c.slots = NULL;
        }
        check_conv_slots(&h, &c, false, "CausalConv1dUpdate");
        free_conv(&c);
    }
    oh_close(&h);
}
END_TEST

/* With L = W-1, T = 1, a = 1 op 7 is op 9, bit for bit. */
START_TEST(conv_spec_with_one_token_equals_update)
{
    oh h;
    oh_open(&h, 203);
    for (int rep = 0; rep < 30; rep++) {
        conv_io c;
        random_conv(&h, &c, true, 1, 1);
        /* L = W-1: the state holds exactly the history */
        free(c.state);
        c.L = c.W - 1;
        c.state = oh_rand(&h, (size_t)(c.N * c.D * c.L), -2, 2);
        for (int64_t b = 0; b < c.B; b++)
            c.acc[b] = 1;
        size_t ny = (size_t)(c.B * c.D), ns = (size_t)(c.N * c.D * c.L);
        float *y7 = malloc(ny * 4), *s7 = malloc(ns * 4), *y9 = malloc(ny * 4), *s9 = malloc(ns * 4);
        run_conv_slots(&h, &c, true, y7, s7);
        run_conv_slots(&h, &c, false, y9, s9);
        oh_expect_bits32("op 7 y == op 9 y", y7, y9, ny);
        oh_expect_bits32("op 7 state == op 9 state", s7, s9, ns);
        free(y7), free(s7), free(y9), free(s9);
        free_conv(&c);
    }
    oh_close(&h);
}
END_TEST

/* Speculative decode replayed: call 1 writes T tokens; call 2 accepts a of
 * them and adds T2 tokens. Its outputs must equal op 9 fed the accepted
 * tokens and then the new ones, one call each. */
START_TEST(conv_spec_replays_decode)
{
    oh h;
    oh_open(&h, 204);
    for (int rep = 0; rep < 40; rep++) {
        int64_t W = oh_irange(&h, 2, 5), D = oh_irange(&h, 1, 9), T1 = oh_irange(&h, 1, 5), T2 = oh_irange(&h, 1, 5);
        int64_t a = oh_irange(&h, 1, T1), L = W - 2 + (T1 > T2 ? T1 : T2), B = 1, N = 1;
        int32_t slot = 0, one = 1, acc = (int32_t)a;
        float *w = oh_rand(&h, (size_t)(D * W), -1, 1), *x1 = oh_rand(&h, (size_t)(D * T1), -2, 2);
        float *x2 = oh_rand(&h, (size_t)(D * T2), -2, 2), *s0 = oh_rand(&h, (size_t)(D * L), -2, 2);
        int silu = (int)oh_irange(&h, 0, 1);
        vt_params_conv p = {silu};
        /* speculative path: op 7 twice on an [1,D,L] state */
        int64_t ss[3] = {N, D, L}, sw[2] = {D, W}, sx1[3] = {B, D, T1}, sx2[3] = {B, D, T2};
        vt_tensor *tw = oh_tensor(&h, VT_F32, 2, sw, w), *tst = oh_tensor(&h, VT_F32, 3, ss, s0);
        vt_tensor *tsl = oh_tensor(&h, VT_I32, 1, &B, &slot), *ta1 = oh_tensor(&h, VT_I32, 1, &B, &one);
        vt_tensor *ta2 = oh_tensor(&h, VT_I32, 1, &B, &acc);
        vt_tensor *tx1 = oh_tensor(&h, VT_F32, 3, sx1, x1), *ty1 = oh_tensor(&h, VT_F32, 3, sx1, NULL);
        vt_tensor *tx2 = oh_tensor(&h, VT_F32, 3, sx2, x2), *ty2 = oh_tensor(&h, VT_F32, 3, sx2, NULL);
        const vt_tensor *in1[5] = {tx1, tw, NULL, tsl, ta1}, *in2[5] = {tx2, tw, NULL, tsl, ta2};
        vt_tensor *out1[2] = {ty1, tst}, *out2[2] = {ty2, tst};
        oh_run(&h, VT_OP_CAUSAL_CONV1D_SPEC_UPDATE, in1, 5, out1, 2, &p, sizeof p);
        oh_run(&h, VT_OP_CAUSAL_CONV1D_SPEC_UPDATE, in2, 5, out2, 2, &p, sizeof p);
        float *y2 = malloc((size_t)(D * T2) * 4), *z2 = malloc((size_t)(D * T2) * 4);
        oh_read(ty2, y2);
        /* plain decode: op 9 over the first W-1 columns of s0, accepted tokens, then x2 */
        int64_t su[3] = {1, D, W - 1}, sa[3] = {1, D, a};
        float *u0 = malloc((size_t)(D * (W - 1)) * 4), *xa = malloc((size_t)(D * a) * 4);
        for (int64_t d = 0; d < D; d++) {
            memcpy(u0 + d * (W - 1), s0 + d * L, (size_t)(W - 1) * 4);
            memcpy(xa + d * a, x1 + d * T1, (size_t)a * 4);
        }
        vt_tensor *tu = oh_tensor(&h, VT_F32, 3, su, u0), *txa = oh_tensor(&h, VT_F32, 3, sa, xa);
        vt_tensor *tya = oh_tensor(&h, VT_F32, 3, sa, NULL), *tz2 = oh_tensor(&h, VT_F32, 3, sx2, NULL);
        const vt_tensor *in3[3] = {txa, tw, NULL}, *in4[3] = {tx2, tw, NULL};
        vt_tensor *out3[2] = {tya, tu}, *out4[2] = {tz2, tu};
        oh_run(&h, VT_OP_CAUSAL_CONV1D_UPDATE, in3, 3, out3, 2, &p, sizeof p);
        oh_run(&h, VT_OP_CAUSAL_CONV1D_UPDATE, in4, 3, out4, 2, &p, sizeof p);
        oh_read(tz2, z2);
        char what[160];
        snprintf(what, sizeof what, "spec decode W=%lld T1=%lld accepted %lld T2=%lld equals plain decode",
                 (long long)W, (long long)T1, (long long)a, (long long)T2);
        oh_expect_bits32(what, y2, z2, (size_t)(D * T2));
        vt_tensor *all[13] = {tw, tst, tsl, ta1, ta2, tx1, ty1, tx2, ty2, tu, txa, tya, tz2};
        for (int i = 0; i < 13; i++)
            vt_tensor_destroy(all[i]);
        free(w), free(x1), free(x2), free(s0), free(y2), free(z2), free(u0), free(xa);
    }
    oh_close(&h);
}
END_TEST

START_TEST(conv_prefill_with_and_without_initial_state)
{
    oh h;
    oh_open(&h, 205);
    for (int rep = 0; rep < 30; rep++) {
        int64_t B = oh_irange(&h, 1, 4), D = oh_irange(&h, 1, 33), T = oh_irange(&h, 1, 70), W = oh_irange(&h, 2, 5);
        bool init = rep % 2, with_bias = rep % 3 != 0;
        int silu = rep % 4 < 2;
        size_t ny = (size_t)(B * D * T), ns = (size_t)(B * D * (W - 1));
        float *x = oh_rand(&h, ny, -2, 2), *w = oh_rand(&h, (size_t)(D * W), -1, 1);
        float *bias = oh_rand(&h, (size_t)D, -1, 1), *s0 = oh_rand(&h, ns, -2, 2);
        int64_t sx[3] = {B, D, T}, sw[2] = {D, W}, ss[3] = {B, D, W - 1};
        vt_tensor *tx = oh_tensor(&h, VT_F32, 3, sx, x), *tw = oh_tensor(&h, VT_F32, 2, sw, w);
        vt_tensor *tb = with_bias ? oh_tensor(&h, VT_F32, 1, &D, bias) : NULL;
        vt_tensor *ti = init ? oh_tensor(&h, VT_F32, 3, ss, s0) : NULL;
        vt_tensor *ty = oh_tensor(&h, VT_F32, 3, sx, NULL), *tst = oh_tensor(&h, VT_F32, 3, ss, NULL);
        const vt_tensor *in[4] = {tx, tw, tb, ti};
        vt_tensor *out[2] = {ty, tst};
        vt_params_conv p = {silu};
        oh_run(&h, VT_OP_CAUSAL_CONV1D, in, 4, out, 2, &p, sizeof p);
        float *y = malloc(ny * 4), *st = malloc(ns * 4), *rst = malloc(ns * 4);
        double *ry = malloc(ny * sizeof *ry), *e = malloc(sizeof(double) * (size_t)(W - 1 + T));
        oh_read(ty, y);
        oh_read(tst, st);
        for (int64_t b = 0; b < B; b++)
            for (int64_t d = 0; d < D; d++) {
                for (int64_t j = 0; j < W - 1; j++)
                    e[j] = init ? s0[(b * D + d) * (W - 1) + j] : 0.0;
                for (int64_t t = 0; t < T; t++)
                    e[W - 1 + t] = x[(b * D + d) * T + t];
                ref_conv_row(e, w + d * W, with_bias ? bias[d] : 0.0, W, T, silu, ry + (b * D + d) * T);
                for (int64_t i = 0; i < W - 1; i++)
                    rst[(b * D + d) * (W - 1) + i] = (float)e[T + i];
            }
        oh_expect_rel("CausalConv1d y", y, ry, ny, 1e-5);
        oh_expect_bits32("CausalConv1d state (exact)", st, rst, ns);
        vt_tensor *all[6] = {tx, tw, tb, ti, ty, tst};
        for (int i = 0; i < 6; i++)
            vt_tensor_destroy(all[i]);
        free(x), free(w), free(bias), free(s0), free(y), free(st), free(rst), free(ry), free(e);
    }
    oh_close(&h);
}
END_TEST

/* Bad slots and accepted counts are refused by name; the state is untouched. */
START_TEST(conv_bad_slots_are_refused)
{
    oh h;
    oh_open(&h, 206);
    int64_t B = 3, D = 4, W = 3, T = 3, N = 4, L = 4; /* accepted may be 1..L-W+2 = 3 */
    int64_t sx[3] = {B, D, T}, sw[2] = {D, W}, ss[3] = {N, D, L};
    float *x = oh_rand(&h, (size_t)(B * D * T), -1, 1), *w = oh_rand(&h, (size_t)(D * W), -1, 1);
    float *s0 = oh_rand(&h, (size_t)(N * D * L), -1, 1), *after = malloc(sizeof(float) * (size_t)(N * D * L));
    int32_t slots[3] = {0, 1, 2}, acc[3] = {1, 1, 1};
    vt_tensor *tx = oh_tensor(&h, VT_F32, 3, sx, x), *tw = oh_tensor(&h, VT_F32, 2, sw, w);
    vt_tensor *ts = oh_tensor(&h, VT_I32, 1, &B, slots), *ta = oh_tensor(&h, VT_I32, 1, &B, acc);
    vt_tensor *ty = oh_tensor(&h, VT_F32, 3, sx, NULL), *tst = oh_tensor(&h, VT_F32, 3, ss, s0);
    const vt_tensor *in[5] = {tx, tw, NULL, ts, ta};
    vt_tensor *out[2] = {ty, tst};
    vt_params_conv p = {0};
    static const struct {
        int32_t slots[3], acc[3];
        const char *needle;
    } bad[] = {
        {{0, 1, 4}, {1, 1, 1}, "slots[2] = 4 is outside [-1, 4)"},
        {{0, -2, 1}, {1, 1, 1}, "slots[1] = -2"},
        {{1, 2, 1}, {1, 1, 1}, "belongs to rows 0 and 2"},
        {{0, 1, 2}, {1, 0, 1}, "accepted[1] = 0"},
        {{0, 1, 2}, {1, 1, 4}, "accepted[2] = 4 is outside [1, L-W+2 = 3]"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(vt_tensor_write(ts, bad[i].slots, 12), VT_OK);
        ck_assert_int_eq(vt_tensor_write(ta, bad[i].acc, 12), VT_OK);
        const char *m =
            oh_run_fails(&h, VT_E_INVALID_ARG, VT_OP_CAUSAL_CONV1D_SPEC_UPDATE, in, 5, out, 2, &p, sizeof p);
        ck_assert_msg(strstr(m, "CausalConv1dSpecUpdate (7)") && strstr(m, bad[i].needle), "case %zu: %s", i, m);
        oh_read(tst, after);
        oh_expect_bits32("state untouched by a refusal", after, s0, (size_t)(N * D * L));
    }
    /* op 9 checks its slots the same way */
    int32_t dup[3] = {3, 0, 3};
    ck_assert_int_eq(vt_tensor_write(ts, dup, 12), VT_OK);
    int64_t su[3] = {N, D, W - 1}, sx1[3] = {B, D, 1};
    vt_tensor *tu = oh_tensor(&h, VT_F32, 3, su, s0), *tx1 = oh_tensor(&h, VT_F32, 3, sx1, x),
              *ty1 = oh_tensor(&h, VT_F32, 3, sx1, NULL);
    const vt_tensor *in9[4] = {tx1, tw, NULL, ts};
    vt_tensor *out9[2] = {ty1, tu};
    const char *m = oh_run_fails(&h, VT_E_INVALID_ARG, VT_OP_CAUSAL_CONV1D_UPDATE, in9, 4, out9, 2, &p, sizeof p);
    ck_assert_msg(strstr(m, "CausalConv1dUpdate (9)") && strstr(m, "state slot 3 belongs to rows 0 and 2"), "%s", m);
    /* a padding row's accepted count is not looked at */
    int32_t pad_slots[3] = {0, -1, 2}, pad_acc[3] = {1, -40, 1};
    ck_assert_int_eq(vt_tensor_write(ts, pad_slots, 12), VT_OK);
    ck_assert_int_eq(vt_tensor_write(ta, pad_acc, 12), VT_OK);
    oh_run(&h, VT_OP_CAUSAL_CONV1D_SPEC_UPDATE, in, 5, out, 2, &p, sizeof p);
    vt_tensor *all[9] = {tx, tw, ts, ta, ty, tst, tu, tx1, ty1};
    for (int i = 0; i < 9; i++)
        vt_tensor_destroy(all[i]);
    free(x), free(w), free(s0), free(after);
    oh_close(&h);
}
END_TEST

/* ---- KvCacheWrite ---- */

static uint16_t to_half(vt_dtype t, float v)
{
    return t == VT_F16 ? vt_f32_to_f16(v) : vt_f32_to_bf16(v);
}

START_TEST(kv_cache_write_skips_and_casts)
{
    oh h;
    oh_open(&h, 207);
    static const vt_dtype cts[] = {VT_F32, VT_F16, VT_BF16};
    for (int ci = 0; ci < 3; ci++)
        for (int rep = 0; rep < 8; rep++) {
            vt_dtype ct = cts[ci];
            size_t es = ct == VT_F32 ? 4 : 2;
            int64_t T = oh_irange(&h, 1, 17), H = oh_irange(&h, 1, 5), d = oh_irange(&h, 1, 67),
                    dv = oh_irange(&h, 1, 67), S = T + oh_irange(&h, 0, 20);
            float *k = oh_rand(&h, (size_t)(T * H * d), -5, 5), *v = oh_rand(&h, (size_t)(T * H * dv), -5, 5);
            int32_t *slots = malloc(sizeof(int32_t) * (size_t)T);
            for (int64_t t = 0; t < T; t++)
                slots[t] = vt_rng_below(&h.r, 4) == 0 ? -1 : (int32_t)oh_irange(&h, 0, S - 1); /* repeats allowed */
            size_t nk = (size_t)(S * H * d), nv = (size_t)(S * H * dv);
            unsigned char *kc0 = malloc(nk * es), *vc0 = malloc(nv * es), *kc = malloc(nk * es), *vc = malloc(nv * es);
            for (size_t i = 0; i < nk * es; i++)
                kc0[i] = (unsigned char)vt_rng_next(&h.r);
            for (size_t i = 0; i < nv * es; i++)
                vc0[i] = (unsigned char)vt_rng_next(&h.r);
            int64_t sk[3] = {T, H, d}, sv[3] = {T, H, dv}, sck[3] = {S, H, d}, scv[3] = {S, H, dv};
            vt_tensor *tk = oh_tensor(&h, VT_F32, 3, sk, k), *tv = oh_tensor(&h, VT_F32, 3, sv, v);
            vt_tensor *ts = oh_tensor(&h, VT_I32, 1, &T, slots);
            vt_tensor *tkc = oh_tensor(&h, ct, 3, sck, kc0), *tvc = oh_tensor(&h, ct, 3, scv, vc0);
            const vt_tensor *in[3] = {tk, tv, ts};
            vt_tensor *out[2] = {tkc, tvc};
            oh_run(&h, VT_OP_KV_CACHE_WRITE, in, 3, out, 2, NULL, 0);
            oh_read(tkc, kc);
            oh_read(tvc, vc);
            /* reference: in token order, so the later token wins a shared slot */
            for (int64_t t = 0; t < T; t++) {
                if (slots[t] < 0)
                    continue;
                for (int64_t i = 0; i < H * d; i++) {
                    float val = k[t * H * d + i];
                    if (ct == VT_F32)
                        memcpy(kc0 + ((size_t)slots[t] * (size_t)(H * d) + (size_t)i) * 4, &val, 4);
                    else
                        ((uint16_t *)kc0)[(size_t)slots[t] * (size_t)(H * d) + (size_t)i] = to_half(ct, val);
                }
                for (int64_t i = 0; i < H * dv; i++) {
                    float val = v[t * H * dv + i];
                    if (ct == VT_F32)
                        memcpy(vc0 + ((size_t)slots[t] * (size_t)(H * dv) + (size_t)i) * 4, &val, 4);
                    else
                        ((uint16_t *)vc0)[(size_t)slots[t] * (size_t)(H * dv) + (size_t)i] = to_half(ct, val);
                }
            }
            ck_assert_msg(memcmp(kc, kc0, nk * es) == 0, "KvCacheWrite %s k_cache differs", vt_dtype_name(ct));
            ck_assert_msg(memcmp(vc, vc0, nv * es) == 0, "KvCacheWrite %s v_cache differs", vt_dtype_name(ct));
            /* a slot out of range is named and nothing is written */
            slots[T - 1] = (int32_t)S;
            ck_assert_int_eq(vt_tensor_write(ts, slots, sizeof(int32_t) * (size_t)T), VT_OK);
            const char *m = oh_run_fails(&h, VT_E_INVALID_ARG, VT_OP_KV_CACHE_WRITE, in, 3, out, 2, NULL, 0);
            char needle[64];
            snprintf(needle, sizeof needle, "slots[%lld]", (long long)(T - 1));
            ck_assert_msg(strstr(m, "KvCacheWrite (31)") && strstr(m, needle), "%s", m);
            oh_read(tkc, kc);
            ck_assert_msg(memcmp(kc, kc0, nk * es) == 0, "a refused write touched the cache");
            vt_tensor *all[5] = {tk, tv, ts, tkc, tvc};
            for (int i = 0; i < 5; i++)
                vt_tensor_destroy(all[i]);
            free(k), free(v), free(slots), free(kc0), free(vc0), free(kc), free(vc);
        }
    oh_close(&h);
}
END_TEST

/* ---- GatedDeltaRule ---- */

typedef struct gdr_io {
    int64_t B, T, H, HV, dk, dv, N;
    bool per_token;
    int l2norm;
    float *q, *k, *v, *g, *beta, *state;
    int32_t *slots, *acc;
} gdr_io;

static void ref_l2(double *x, int64_t n)
{
    double ss = 0;
    for (int64_t i = 0; i < n; i++)
        ss += x[i] * x[i];
    for (int64_t i = 0; i < n; i++)
        x[i] /= sqrt(ss + 1e-6);
}

/* The recurrence in double, straight from SPEC 7. */
static void ref_gdr(const gdr_io *c, double *o, double *state)
{
    for (size_t i = 0; i < (size_t)(c->N * c->HV * c->dk * c->dv); i++)
        state[i] = c->state[i];
    double *S = malloc(sizeof(double) * (size_t)(c->dk * c->dv)), *q = malloc(sizeof(double) * (size_t)c->dk);
    double *k = malloc(sizeof(double) * (size_t)c->dk), *u = malloc(sizeof(double) * (size_t)c->dv);
    int64_t per_row = c->per_token ? c->T : 1, blk = c->dk * c->dv;
    for (int64_t b = 0; b < c->B; b++)
        for (int64_t hv = 0; hv < c->HV; hv++) {
            int64_t h = hv / (c->HV / c->H); /* repeat-interleave: value heads of one q/k head are adjacent */
            int64_t rs = c->per_token ? c->slots[b * per_row + c->acc[b] - 1] : c->slots[b];
            if (rs < 0) {
                for (int64_t t = 0; t < c->T; t++)
                    for (int64_t j = 0; j < c->dv; j++)
                        o[((b * c->T + t) * c->HV + hv) * c->dv + j] = 0;
                continue;
            }
            for (int64_t i = 0; i < blk; i++)
                S[i] = c->state[(rs * c->HV + hv) * blk + i];
            for (int64_t t = 0; t < c->T; t++) {
                int64_t bt = b * c->T + t;
                for (int64_t i = 0; i < c->dk; i++) {
                    q[i] = c->q[(bt * c->H + h) * c->dk + i];
                    k[i] = c->k[(bt * c->H + h) * c->dk + i];
                }
                if (c->l2norm) {
                    ref_l2(q, c->dk);
                    ref_l2(k, c->dk);
                }
                for (int64_t i = 0; i < c->dk; i++)
                    q[i] /= sqrt((double)c->dk);
                double decay = exp((double)c->g[bt * c->HV + hv]), beta = c->beta[bt * c->HV + hv];
                for (int64_t i = 0; i < blk; i++)
                    S[i] *= decay;
                for (int64_t j = 0; j < c->dv; j++) {
                    double sk = 0;
                    for (int64_t i = 0; i < c->dk; i++)
                        sk += S[i * c->dv + j] * k[i];
                    u[j] = beta * ((double)c->v[(bt * c->HV + hv) * c->dv + j] - sk);
                }
                for (int64_t i = 0; i < c->dk; i++)
                    for (int64_t j = 0; j < c->dv; j++)
                        S[i * c->dv + j] += k[i] * u[j];
                for (int64_t j = 0; j < c->dv; j++) {
                    double acc = 0;
                    for (int64_t i = 0; i < c->dk; i++)
                        acc += S[i * c->dv + j] * q[i];
                    o[(bt * c->HV + hv) * c->dv + j] = acc;
                }
                if (c->per_token && c->slots[bt] >= 0)
                    for (int64_t i = 0; i < blk; i++)
                        state[(c->slots[bt] * c->HV + hv) * blk + i] = S[i];
            }
            if (!c->per_token)
                for (int64_t i = 0; i < blk; i++)
                    state[(rs * c->HV + hv) * blk + i] = S[i];
        }
    free(S), free(q), free(k), free(u);
}

static vt_status run_gdr(oh *h, const gdr_io *c, float *o, float *state, vt_status want)
{
    int64_t sq[4] = {c->B, c->T, c->H, c->dk}, sv[4] = {c->B, c->T, c->HV, c->dv}, sg[3] = {c->B, c->T, c->HV};
    int64_t ss[2] = {c->B, c->T}, st[4] = {c->N, c->HV, c->dk, c->dv};
    vt_tensor *t[10] = {
        oh_tensor(h, VT_F32, 4, sq, c->q),
        oh_tensor(h, VT_F32, 4, sq, c->k),
        oh_tensor(h, VT_F32, 4, sv, c->v),
        oh_tensor(h, VT_F32, 3, sg, c->g),
        oh_tensor(h, VT_F32, 3, sg, c->beta),
        oh_tensor(h, VT_I32, c->per_token ? 2 : 1, ss, c->slots),
        c->per_token ? oh_tensor(h, VT_I32, 1, &c->B, c->acc) : NULL,
        oh_tensor(h, VT_F32, 4, sv, NULL),
        oh_tensor(h, VT_F32, 4, st, c->state),
        NULL,
    };
    const vt_tensor *in[7] = {t[0], t[1], t[2], t[3], t[4], t[5], t[6]};
    vt_tensor *out[2] = {t[7], t[8]};
    vt_params_gdn p = {c->l2norm};
    vt_status s = VT_OK;
    if (want == VT_OK) {
        oh_run(h, VT_OP_GATED_DELTA_RULE, in, c->per_token ? 7 : 6, out, 2, &p, sizeof p);
        oh_read(t[7], o);
    } else {
        oh_run_fails(h, want, VT_OP_GATED_DELTA_RULE, in, c->per_token ? 7 : 6, out, 2, &p, sizeof p);
        s = want;
    }
    oh_read(t[8], state);
    for (int i = 0; i < 10; i++)
        vt_tensor_destroy(t[i]);
    return s;
}

static void random_gdr(oh *h, gdr_io *c, int64_t ratio, bool per_token, int l2norm)
{
    memset(c, 0, sizeof *c);
    c->B = oh_irange(h, 1, 4);
    c->T = per_token ? oh_irange(h, 2, 7) : oh_irange(h, 1, 20);
    c->H = oh_irange(h, 1, 3);
    c->HV = c->H * ratio;
    c->dk = 4 * oh_irange(h, 1, 12);
    c->dv = oh_irange(h, 1, 40);
    c->per_token = per_token;
    c->l2norm = l2norm;
    int64_t per_row = per_token ? c->T : 1;
    c->N = c->B * per_row + oh_irange(h, 0, 3);
    size_t nq = (size_t)(c->B * c->T * c->H * c->dk), nv = (size_t)(c->B * c->T * c->HV * c->dv);
    size_t ng = (size_t)(c->B * c->T * c->HV);
    float qk = l2norm ? 2.0f : 0.3f;
    c->q = oh_rand(h, nq, -qk, qk);
    c->k = oh_rand(h, nq, -qk, qk);
    c->v = oh_rand(h, nv, -1, 1);
    c->g = oh_rand(h, ng, -1.5f, 0);
    c->beta = oh_rand(h, ng, 0, 1);
    c->state = oh_rand(h, (size_t)(c->N * c->HV * c->dk * c->dv), -0.2f, 0.2f);
    c->slots = malloc(sizeof(int32_t) * (size_t)(c->B * per_row));
    c->acc = malloc(sizeof(int32_t) * (size_t)c->B);
    /* distinct slots: a random permutation; some rows padding, some writes skipped */
    int32_t *perm = malloc(sizeof(int32_t) * (size_t)c->N);
    for (int64_t i = 0; i < c->N; i++)
        perm[i] = (int32_t)i;
    for (int64_t i = c->N - 1; i > 0; i--) {
        int64_t j = oh_irange(h, 0, i);
        int32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int64_t i = 0; i < c->B * per_row; i++)
        c->slots[i] = perm[i];
    free(perm);
    for (int64_t b = 0; b < c->B; b++) {
        c->acc[b] = (int32_t)oh_irange(h, 1, c->T);
        if (b > 0 && vt_rng_below(&h->r, 4) == 0) /* padding row: its read slot is -1 */
            c->slots[b * per_row + (per_token ? c->acc[b] - 1 : 0)] = -1;
        for (int64_t t = 0; per_token && t < c->T; t++)
            if (t != c->acc[b] - 1 && vt_rng_below(&h->r, 5) == 0)
                c->slots[b * per_row + t] = -1; /* this token's state is not kept */
    }
}

static void free_gdr(gdr_io *c)
{
    free(c->q), free(c->k), free(c->v), free(c->g), free(c->beta), free(c->state), free(c->slots), free(c->acc);
}

START_TEST(gated_delta_rule_slots_gva_l2)
{
    oh h;
    oh_open(&h, 208);
    for (int64_t ratio = 1; ratio <= 4; ratio++)
        for (int per_token = 0; per_token <= 1; per_token++)
            for (int l2 = 0; l2 <= 1; l2++)
                for (int rep = 0; rep < 3; rep++) {
                    gdr_io c;
                    random_gdr(&h, &c, ratio, per_token, l2);
                    size_t no = (size_t)(c.B * c.T * c.HV * c.dv), ns = (size_t)(c.N * c.HV * c.dk * c.dv);
                    float *o = malloc(no * 4), *st = malloc(ns * 4);
                    double *ro = malloc(no * sizeof *ro), *rst = malloc(ns * sizeof *rst);
                    run_gdr(&h, &c, o, st, VT_OK);
                    ref_gdr(&c, ro, rst);
                    char what[200];
                    snprintf(what, sizeof what, "GatedDeltaRule B=%lld T=%lld H=%lld HV=%lld dk=%lld dv=%lld %s%s",
                             (long long)c.B, (long long)c.T, (long long)c.H, (long long)c.HV, (long long)c.dk,
                             (long long)c.dv, per_token ? "per-token" : "per-seq", l2 ? " l2norm" : "");
                    double tol = c.T * c.dk >= 1024 ? 1e-4 : 1e-5;
                    oh_expect_rel(what, o, ro, no, tol);
                    oh_expect_rel(what, st, rst, ns, tol);
                    /* state rows nobody writes stay bit for bit */
                    for (size_t i = 0; i < ns; i++)
                        if (rst[i] == (double)c.state[i])
                            ck_assert_msg(st[i] == c.state[i], "%s: untouched state %zu changed", what, i);
                    free(o), free(st), free(ro), free(rst);
                    free_gdr(&c);
                }
    oh_close(&h);
}
END_TEST

START_TEST(gated_delta_rule_bad_slots_are_refused)
{
    oh h;
    oh_open(&h, 209);
    gdr_io c;
    random_gdr(&h, &c, 2, true, 1);
    while (c.B < 2) {
        free_gdr(&c);
        random_gdr(&h, &c, 2, true, 1);
    }
    for (int64_t i = 0; i < c.B * c.T; i++)
        c.slots[i] = (int32_t)i;
    size_t no = (size_t)(c.B * c.T * c.HV * c.dv), ns = (size_t)(c.N * c.HV * c.dk * c.dv);
    float *o = malloc(no * 4), *st = malloc(ns * 4);
    c.acc[1] = (int32_t)c.T + 1;
    run_gdr(&h, &c, o, st, VT_E_INVALID_ARG);
    ck_assert_msg(strstr(vt_last_error(), "GatedDeltaRule (32)") && strstr(vt_last_error(), "accepted[1]"), "%s",
                  vt_last_error());
    oh_expect_bits32("state untouched", st, c.state, ns);
    c.acc[1] = 1;
    c.slots[c.T] = (int32_t)c.N; /* row 1, token 0 */
    run_gdr(&h, &c, o, st, VT_E_INVALID_ARG);
    ck_assert_msg(strstr(vt_last_error(), "slots[1,0]"), "%s", vt_last_error());
    c.slots[c.T] = 0; /* row 1 writes row 0's slot */
    run_gdr(&h, &c, o, st, VT_E_INVALID_ARG);
    ck_assert_msg(strstr(vt_last_error(), "belongs to rows 0 and 1"), "%s", vt_last_error());
    oh_expect_bits32("state untouched", st, c.state, ns);
    free(o), free(st);
    free_gdr(&c);
    oh_close(&h);
}
END_TEST

int main(void)
{
    Suite *s;
    TCase *tc;
    int gate = vt_test_suite_begin("cpu", "cpu ops: convolutions, KV cache, gated delta rule", "state", 300, &s, &tc);
    if (gate != 0)
        return gate;
    tcase_add_test(tc, conv_spec_update_accepted_and_padding);
    tcase_add_test(tc, conv_update_slots_and_padding);
    tcase_add_test(tc, conv_spec_with_one_token_equals_update);
    tcase_add_test(tc, conv_spec_replays_decode);
    tcase_add_test(tc, conv_prefill_with_and_without_initial_state);
    tcase_add_test(tc, conv_bad_slots_are_refused);
    tcase_add_test(tc, kv_cache_write_skips_and_casts);
    tcase_add_test(tc, gated_delta_rule_slots_gva_l2);
    tcase_add_test(tc, gated_delta_rule_bad_slots_are_refused);
    return vt_test_run_suite(s);
}
