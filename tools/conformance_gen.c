/* conformance_gen.c - per-op generators of valid random calls for the
 * conformance runner (conformance.h): shapes of the decode or prefill
 * class with odd and prime sizes, data that the op accepts (indices in
 * range, distinct state slots with padding rows, accepted counts, windows,
 * positions), and SPEC 7's comparison rule for every output. */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"
#include <vt/vt_blocks.h>
#include "op_shapes.h"

/* ---- random numbers: a splitmix64 stream ---- */

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rnext(rng *r)
{
    return vt_splitmix64_next(&r->s);
}

static double runit(rng *r)
{
    return (double)(rnext(r) >> 11) * (1.0 / 9007199254740992.0);
}

static float frand(rng *r, float lo, float hi)
{
    return (float)(lo + (hi - lo) * runit(r));
}

/* Uniform integer in [lo, hi]. */
static int64_t irange(rng *r, int64_t lo, int64_t hi)
{
    return hi <= lo ? lo : lo + (int64_t)(rnext(r) % (uint64_t)(hi - lo + 1));
}

/* True with probability percent / 100. */
static bool chance(rng *r, int percent)
{
    return (int)(rnext(r) % 100) < percent;
}

/* One of n choices. */
static int64_t pick(rng *r, const int64_t *choices, size_t n)
{
    return choices[rnext(r) % n];
}
#define PICK(r, ...) pick(r, (const int64_t[]){__VA_ARGS__}, sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))

/* Shuffle v[0..n). */
static void shuffle(rng *r, int32_t *v, int64_t n)
{
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)(rnext(r) % (uint64_t)(i + 1));
        int32_t t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

/* ---- the generation context ---- */

typedef struct gen {
    vtc_case *c;
    rng r;
    bool prefill;
    bool wide;        /* VTC_WIDE: rows for the GEMM paths */
    vt_status st;     /* first failure */
    vt_dtype free_dt; /* the dtype of an output the op leaves free */
} gen;

static void *fail_alloc(gen *g, vt_status st)
{
    if (g->st == VT_OK)
        g->st = st;
    return NULL;
}

/* Allocate input i (zeroed); NULL (and g->st set) on failure. */
static void *in_arr(gen *g, uint32_t i, vt_dtype t, uint32_t nd, const int64_t *shape)
{
    vt_status st = host_array_alloc(&g->c->in[i], t, nd, shape);
    return st == VT_OK ? g->c->in[i].data : fail_alloc(g, st);
}

/* Allocate the initial contents of INOUT output i. */
static void *inout_arr(gen *g, uint32_t i, vt_dtype t, uint32_t nd, const int64_t *shape)
{
    vt_status st = host_array_alloc(&g->c->out[i], t, nd, shape);
    return st == VT_OK ? g->c->out[i].data : fail_alloc(g, st);
}

/* Fill a plain array: floats uniform in [lo, hi) (rounded to the dtype),
 * integers with random bits. */
static void fill(gen *g, host_array *a, float lo, float hi)
{
    if (!a->data)
        return;
    int64_t n = host_array_elems(a);
    for (int64_t i = 0; i < n; i++) {
        float v = frand(&g->r, lo, hi);
        switch (a->dtype) {
        case VT_F32: ((float *)a->data)[i] = v; break;
        case VT_F16: ((uint16_t *)a->data)[i] = vt_f32_to_f16(v); break;
        case VT_BF16: ((uint16_t *)a->data)[i] = vt_f32_to_bf16(v); break;
        case VT_F64: ((double *)a->data)[i] = lo + (hi - lo) * runit(&g->r); break;
        case VT_I8: ((int8_t *)a->data)[i] = (int8_t)rnext(&g->r); break;
        case VT_I16: ((int16_t *)a->data)[i] = (int16_t)rnext(&g->r); break;
        case VT_I32: ((int32_t *)a->data)[i] = (int32_t)rnext(&g->r); break;
        case VT_I64: ((int64_t *)a->data)[i] = (int64_t)rnext(&g->r); break;
        default: break;
        }
    }
}

/* Input i of dtype t filled uniform in [lo, hi). */
static void *in_rand(gen *g, uint32_t i, vt_dtype t, uint32_t nd, const int64_t *shape, float lo, float hi)
{
    void *p = in_arr(g, i, t, nd, shape);
    fill(g, &g->c->in[i], lo, hi);
    return p;
}

/* Byte offsets of the factor fields of one block of a q format
 * (vt_blocks.h): its f16 d and dmin (or m), its E8M0 exponent (-1: none);
 * the rest of a block is random bits. */
typedef struct q_layout {
    vt_dtype t;
    int f16_off[2];
    int e8m0_off;
} q_layout;

#define Q_LAYOUT(id, f) {id, {VT_BLK_##f##_D, VT_BLK_##f##_DMIN}, VT_BLK_##f##_E8M0},
static const q_layout q_layouts[] = {VT_Q_FORMATS(Q_LAYOUT)};
#undef Q_LAYOUT

/* Fill a block-format array with random blocks whose scales are small,
 * finite f16 values (and MXFP4 exponents near 1), so that every decoded
 * value is finite. False when the format has no layout here. */
static bool fill_q(gen *g, host_array *a)
{
    const vt_dtype_info *ti = vt_dtype_get(a->dtype);
    const q_layout *lay = NULL;
    for (size_t i = 0; i < sizeof q_layouts / sizeof q_layouts[0]; i++)
        if (q_layouts[i].t == a->dtype)
            lay = &q_layouts[i];
    if (!ti || !lay)
        return false;
    if (!a->data)
        return true;
    unsigned char *p = a->data;
    for (size_t i = 0; i < a->nbytes; i++)
        p[i] = (unsigned char)rnext(&g->r);
    for (size_t b = 0; b + ti->block_bytes <= a->nbytes; b += ti->block_bytes) {
        for (int k = 0; k < 2 && lay->f16_off[k] >= 0; k++) {
            uint16_t h = vt_f32_to_f16(frand(&g->r, k ? 0.0f : -0.05f, 0.05f));
            memcpy(p + b + (size_t)lay->f16_off[k], &h, 2);
        }
        if (lay->e8m0_off >= 0)
            p[b + (size_t)lay->e8m0_off] = (unsigned char)irange(&g->r, 118, 128);
    }
    return true;
}

/* Input i of a float or block dtype t: values in [-1, 1) or random blocks. */
static void *in_weights(gen *g, uint32_t i, vt_dtype t, uint32_t nd, const int64_t *shape)
{
    void *p = in_arr(g, i, t, nd, shape);
    const vt_dtype_info *ti = vt_dtype_get(t);
    if (ti && ti->quantized) {
        if (!fill_q(g, &g->c->in[i]) && g->st == VT_OK)
            g->st = VT_E_UNSUPPORTED;
    } else {
        fill(g, &g->c->in[i], -1.0f, 1.0f);
    }
    return p;
}

/* Append to the case's description. */
static void desc(gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void desc(gen *g, const char *fmt, ...)
{
    size_t used = strlen(g->c->desc);
    if (used >= sizeof g->c->desc - 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->c->desc + used, sizeof g->c->desc - used, fmt, ap);
    va_end(ap);
}

static void set_params(gen *g, const void *p, size_t n)
{
    memcpy(g->c->params, p, n);
    g->c->params_size = n;
}

static bool is_half(uint32_t t)
{
    return t == VT_F16 || t == VT_BF16;
}

static bool is_q(uint32_t t)
{
    const vt_dtype_info *ti = vt_dtype_get(t);
    return ti && ti->quantized;
}

/* SPEC 7: 1e-5, 1e-4 for reductions over >= 1024 terms, 1e-2 when an
 * operand is f16/bf16 (block formats count as such). */
static double tol_for(int64_t reduction_terms, bool half)
{
    if (half)
        return 1e-2;
    return reduction_terms >= 1024 ? 1e-4 : 1e-5;
}

static void rule(gen *g, uint32_t out, vtc_cmp cmp, double tol)
{
    g->c->cmp[out] = cmp;
    g->c->tol[out] = tol;
}

/* Distinct slots in [0, n_slots) for rows [0, rows), some rows -1 when
 * padding is allowed (never all of them). */
static void distinct_slots(gen *g, int32_t *slots, int64_t rows, int64_t n_slots, bool padding)
{
    int32_t *perm = malloc((size_t)(n_slots > 0 ? n_slots : 1) * sizeof *perm);
    if (!perm) {
        fail_alloc(g, VT_E_NO_MEMORY);
        return;
    }
    for (int64_t i = 0; i < n_slots; i++)
        perm[i] = (int32_t)i;
    shuffle(&g->r, perm, n_slots);
    for (int64_t b = 0; b < rows; b++)
        slots[b] = padding && b > 0 && chance(&g->r, 25) ? -1 : perm[b];
    free(perm);
}

/* Rows and row length: decode 1 row, prefill a few. */
static int64_t rows_for(gen *g, int64_t lo, int64_t hi)
{
    return g->prefill ? irange(&g->r, lo, hi) : 1;
}

/* ---- generators, one per op ---- */

static void gen_copy(gen *g)
{
    vt_dtype st = g->c->sig.dtype[0], dt = g->c->sig.dtype[1];
    int64_t s[2] = {rows_for(g, 2, 9), irange(&g->r, 1, 700)};
    in_rand(g, 0, st, 2, s, -100.0f, 100.0f);
    g->free_dt = dt;
    desc(g, "%lldx%lld", (long long)s[0], (long long)s[1]);
    rule(g, 0, st == VT_I32 ? VTC_EXACT : VTC_REL, tol_for(0, is_half(st) || is_half(dt)));
}

static void gen_binary(gen *g)
{
    int64_t a[3] = {g->prefill ? irange(&g->r, 1, 3) : 1, rows_for(g, 2, 12), irange(&g->r, 1, 700)};
    in_rand(g, 0, VT_F32, 3, a, -10.0f, 10.0f);
    int64_t nbd = chance(&g->r, 10) ? 0 : irange(&g->r, 1, 2);
    in_rand(g, 1, VT_F32, (uint32_t)nbd, a + 3 - nbd, -10.0f, 10.0f);
    desc(g, "a %lldx%lldx%lld, b with %lld dims", (long long)a[0], (long long)a[1], (long long)a[2], (long long)nbd);
    rule(g, 0, VTC_REL, 1e-5);
}

static void gen_unary(gen *g, float lo, float hi)
{
    int64_t s[2] = {rows_for(g, 2, 12), irange(&g->r, 1, 900)};
    float *x = in_rand(g, 0, VT_F32, 2, s, lo, hi);
    if (x && s[1] > 2) { /* a few large magnitudes: saturation of exp and tanh */
        x[0] = 30.0f;
        x[1] = -30.0f;
    }
    desc(g, "%lldx%lld", (long long)s[0], (long long)s[1]);
    rule(g, 0, VTC_REL, 1e-5);
}

static void gen_scale(gen *g)
{
    gen_unary(g, -10.0f, 10.0f);
    vt_params_scale p = {frand(&g->r, -3.0f, 3.0f)};
    set_params(g, &p, sizeof p);
}

static void gen_swiglu(gen *g)
{
    gen_unary(g, -8.0f, 8.0f);
    in_rand(g, 1, VT_F32, 2, g->c->in[0].shape, -4.0f, 4.0f);
}

static void gen_norm(gen *g)
{
    uint32_t op = g->c->op;
    int64_t s[2] = {rows_for(g, 2, 9), PICK(&g->r, 1, 7, 64, 127, 128, 257, 1031, 2048)};
    in_rand(g, 0, VT_F32, 2, s, -3.0f, 3.0f);
    vt_params_norm p = {PICK(&g->r, 1, 2) == 1 ? 1e-6f : 1e-5f};
    set_params(g, &p, sizeof p);
    desc(g, "%lldx%lld eps=%g", (long long)s[0], (long long)s[1], (double)p.eps);
    if (op == VT_OP_RMS_NORM && chance(&g->r, 60)) {
        in_rand(g, 1, VT_F32, 1, s + 1, -2.0f, 2.0f);
        desc(g, " w");
    }
    if (op == VT_OP_GATED_RMS_NORM) {
        in_rand(g, 1, VT_F32, 2, s, -5.0f, 5.0f);
        in_rand(g, 2, VT_F32, 1, s + 1, -2.0f, 2.0f);
    }
    rule(g, 0, VTC_REL, 1e-5);
}

static void gen_softmax(gen *g)
{
    int64_t s[3] = {g->prefill ? irange(&g->r, 1, 3) : 1, rows_for(g, 2, 9), irange(&g->r, 1, 600)};
    in_rand(g, 0, VT_F32, 3, s, -8.0f, 8.0f);
    vt_params_softmax p = {frand(&g->r, 0.2f, 2.0f)};
    set_params(g, &p, sizeof p);
    desc(g, "%lldx%lldx%lld", (long long)s[0], (long long)s[1], (long long)s[2]);
    if (chance(&g->r, 75)) {
        uint32_t nd = chance(&g->r, 70) ? 2 : 1;
        float *m = in_arr(g, 1, VT_F32, nd, s + 3 - nd);
        int64_t nm = nd == 2 ? s[1] * s[2] : s[2];
        for (int64_t i = 0; m && i < nm; i++)
            m[i] = chance(&g->r, 15) ? -INFINITY : frand(&g->r, -1.0f, 0.0f);
        if (m && nd == 2 && s[1] > 1) { /* one row sees nothing: zeros */
            int64_t row = irange(&g->r, 0, s[1] - 1);
            for (int64_t i = 0; i < s[2]; i++)
                m[row * s[2] + i] = -INFINITY;
            desc(g, " all-masked row %lld", (long long)row);
        }
        desc(g, " mask %u-d", nd);
    }
    rule(g, 0, VTC_REL, 1e-5);
}

static void gen_gdn_gate(gen *g)
{
    int64_t s[2] = {rows_for(g, 2, 20), irange(&g->r, 1, 70)};
    in_rand(g, 0, VT_F32, 2, s, -6.0f, 6.0f);
    float *a = g->c->in[0].data;
    if (a && s[1] > 1) { /* far into softplus' linear tail: exact, not cut off */
        a[0] = 40.0f;
        a[1] = -40.0f;
    }
    in_rand(g, 1, VT_F32, 1, s + 1, -1.0f, 1.0f);
    float *A = in_arr(g, 2, VT_F32, 1, s + 1);
    for (int64_t h = 0; A && h < s[1]; h++)
        A[h] = -expf(frand(&g->r, -2.0f, 2.0f));
    in_rand(g, 3, VT_F32, 2, s, -6.0f, 6.0f);
    desc(g, "%lldx%lld", (long long)s[0], (long long)s[1]);
    rule(g, 0, VTC_REL, 1e-5);
    rule(g, 1, VTC_REL, 1e-5);
}

static void gen_rope(gen *g)
{
    int64_t d = 2 * irange(&g->r, 1, 64), H = irange(&g->r, 1, 6), T = rows_for(g, 2, 24);
    int64_t s[3] = {T, H, d};
    in_rand(g, 0, VT_F32, 3, s, -2.0f, 2.0f);
    int32_t *pos = in_arr(g, 1, VT_I32, 1, &T);
    int64_t pmax = g->prefill ? 4000 : 1000, seen = 0;
    for (int64_t t = 0; pos && t < T; t++) {
        pos[t] = (int32_t)irange(&g->r, 0, pmax);
        seen = pos[t] > seen ? pos[t] : seen;
    }
    vt_params_rope p = {(float)PICK(&g->r, 10000, 1000000, 500000),
                        (int32_t)(chance(&g->r, 50) ? d : 2 * irange(&g->r, 1, d / 2)), (int32_t)irange(&g->r, 0, 1)};
    set_params(g, &p, sizeof p);
    desc(g, "T=%lld H=%lld d=%lld n_rot=%d %s theta=%g p_max=%lld", (long long)T, (long long)H, (long long)d, p.n_rot,
         p.mode ? "neox" : "normal", (double)p.theta, (long long)seen);
    rule(g, 0, VTC_REL, 1e-5 * (seen > 1024 ? (double)seen / 1024.0 : 1.0));
}

/* k of a matmul: any size for float weights, whole blocks for q. */
static int64_t k_for(gen *g, vt_dtype w)
{
    const vt_dtype_info *ti = vt_dtype_get(w);
    if (ti && ti->block_elems > 1)
        return ti->block_elems * irange(&g->r, 1, ti->block_elems == 256 ? 6 : 40);
    return PICK(&g->r, 1, 7, 64, 257, 1024, 1531);
}

static void gen_matmul(gen *g)
{
    vt_dtype wt = g->c->sig.dtype[1];
    int64_t k = k_for(g, wt), n = rows_for(g, 2, 9), m = irange(&g->r, 1, 300);
    const vt_dtype_info *ti = vt_dtype_get(wt);
    /* decode of a 32-element block format: k a whole number of 256-element
     * tiles (the tiled decode kernels' path; the prefill case keeps any k) */
    if (!g->prefill && ti && ti->block_elems == 32)
        k = 256 * irange(&g->r, 1, 5);
    if (g->wide) {
        /* n from 16 (the GEMM thresholds: 16 block formats, 32 f16/bf16 in
         * the rocm backend) past a tile of 128 rows; m and k
         * not multiples of the tiles, k a multiple of 8 for float weights
         * (the 16-byte loads of the GEMM path) */
        n = irange(&g->r, 16, 300);
        m = irange(&g->r, 1, 300);
        if (!ti || ti->block_elems <= 1)
            k = PICK(&g->r, 8, 1000, 1032, 1536);
    }
    int64_t sx[2] = {n, k}, sw[2] = {m, k};
    in_rand(g, 0, VT_F32, 2, sx, -1.0f, 1.0f);
    in_weights(g, 1, wt, 2, sw);
    desc(g, "n=%lld m=%lld k=%lld", (long long)n, (long long)m, (long long)k);
    rule(g, 0, VTC_REL, tol_for(k, is_half(wt) || is_q(wt)));
}

static void gen_moe_expert(gen *g)
{
    vt_dtype wt = g->c->sig.dtype[1];
    int64_t k = k_for(g, wt), T = rows_for(g, 2, 9), E = irange(&g->r, 2, 8), K = irange(&g->r, 1, E),
            m = irange(&g->r, 1, 80);
    bool per_slot = chance(&g->r, 50);
    int64_t sx3[3] = {T, K, k}, sw[3] = {E, m, k}, si[2] = {T, K};
    in_rand(g, 0, VT_F32, per_slot ? 3 : 2, per_slot ? sx3 : (int64_t[]){T, k}, -1.0f, 1.0f);
    in_weights(g, 1, wt, 3, sw);
    int32_t *ids = in_arr(g, 2, VT_I32, 2, si);
    for (int64_t i = 0; ids && i < T * K; i++)
        ids[i] = (int32_t)irange(&g->r, 0, E - 1);
    desc(g, "T=%lld K=%lld E=%lld m=%lld k=%lld x %s", (long long)T, (long long)K, (long long)E, (long long)m,
         (long long)k, per_slot ? "[T,K,k]" : "[T,k]");
    rule(g, 0, VTC_REL, tol_for(k, is_half(wt) || is_q(wt)));
}

/* Router keys of token t in double: score (+ bias); false when two of the
 * first k+1 keys are closer than a relative 1e-4 (a near-tie). */
static bool router_keys_separated(const float *l, const float *bias, int64_t E, int64_t k, int score)
{
    double *key = malloc((size_t)E * sizeof *key);
    if (!key)
        return true;
    double mx = l[0], sum = 0;
    for (int64_t e = 1; e < E; e++)
        mx = l[e] > mx ? l[e] : mx;
    for (int64_t e = 0; e < E; e++)
        sum += exp(l[e] - mx);
    for (int64_t e = 0; e < E; e++) {
        double s = score == VT_ROUTER_SOFTMAX ? exp(l[e] - mx) / sum : 1.0 / (1.0 + exp(-(double)l[e]));
        key[e] = s + (bias ? bias[e] : 0.0);
    }
    /* sort descending (E is small) */
    for (int64_t i = 1; i < E; i++)
        for (int64_t j = i; j > 0 && key[j] > key[j - 1]; j--) {
            double t = key[j];
            key[j] = key[j - 1];
            key[j - 1] = t;
        }
    bool ok = true;
    for (int64_t i = 0; i < k && i + 1 < E; i++)
        if (fabs(key[i] - key[i + 1]) < 1e-4 * (fabs(key[i]) + 1e-3))
            ok = false;
    free(key);
    return ok;
}

static void gen_moe_router(gen *g)
{
    int64_t T = rows_for(g, 2, 16), E = PICK(&g->r, 4, 8, 16, 60, 64, 128), k = irange(&g->r, 1, E < 8 ? E : 8);
    vt_params_moe_router p = {(int32_t)k, (int32_t)irange(&g->r, 0, 1), (int32_t)irange(&g->r, 0, 1),
                              chance(&g->r, 50) ? 1.0f : 2.5f};
    set_params(g, &p, sizeof p);
    int64_t s[2] = {T, E};
    float *l = in_arr(g, 0, VT_F32, 2, s);
    float *bias = NULL;
    if (chance(&g->r, 50)) {
        bias = in_arr(g, 1, VT_F32, 1, &E);
        for (int64_t e = 0; bias && e < E; e++)
            bias[e] = frand(&g->r, -0.05f, 0.05f) * (p.score == VT_ROUTER_SOFTMAX ? 0.1f : 1.0f);
    }
    for (int64_t t = 0; l && t < T; t++)
        for (int tries = 0; tries < 1000; tries++) {
            for (int64_t e = 0; e < E; e++)
                l[t * E + e] = frand(&g->r, -4.0f, 4.0f);
            if (router_keys_separated(l + t * E, bias, E, k, p.score))
                break;
        }
    desc(g, "T=%lld E=%lld k=%lld %s%s%s scale=%g", (long long)T, (long long)E, (long long)k,
         p.score ? "sigmoid" : "softmax", p.renormalize ? " renorm" : "", bias ? " bias" : "", (double)p.routed_scale);
    rule(g, 0, VTC_EXACT, 0);
    rule(g, 1, VTC_REL, 1e-5);
}

static void gen_moe_combine(gen *g)
{
    int64_t T = rows_for(g, 2, 12), K = irange(&g->r, 1, 8), m = irange(&g->r, 1, 500);
    int64_t sh[3] = {T, K, m}, sw[2] = {T, K};
    in_rand(g, 0, VT_F32, 3, sh, -2.0f, 2.0f);
    in_rand(g, 1, VT_F32, 2, sw, 0.0f, 1.0f);
    desc(g, "T=%lld K=%lld m=%lld", (long long)T, (long long)K, (long long)m);
    rule(g, 0, VTC_REL, 1e-5);
}

static void gen_conv(gen *g)
{
    uint32_t op = g->c->op;
    int64_t B = g->prefill ? irange(&g->r, 1, 4) : irange(&g->r, 1, 5), D = irange(&g->r, 1, 40),
            W = irange(&g->r, 2, 5);
    int64_t T =
        op == VT_OP_CAUSAL_CONV1D
            ? (g->prefill ? irange(&g->r, 2, 70) : 1)
            : (g->prefill ? irange(&g->r, 2, 6) : (op == VT_OP_CAUSAL_CONV1D_SPEC_UPDATE ? irange(&g->r, 1, 4) : 1));
    int64_t sx[3] = {B, D, T}, sw[2] = {D, W};
    in_rand(g, 0, VT_F32, 3, sx, -2.0f, 2.0f);
    in_rand(g, 1, VT_F32, 2, sw, -1.0f, 1.0f);
    if (chance(&g->r, 60))
        in_rand(g, 2, VT_F32, 1, &D, -0.5f, 0.5f);
    vt_params_conv p = {(int32_t)irange(&g->r, 0, 1)};
    set_params(g, &p, sizeof p);
    desc(g, "B=%lld D=%lld T=%lld W=%lld%s%s", (long long)B, (long long)D, (long long)T, (long long)W,
         p.silu ? " silu" : "", g->c->in[2].present ? " bias" : "");
    if (op == VT_OP_CAUSAL_CONV1D) {
        if (chance(&g->r, 60)) {
            int64_t si[3] = {B, D, W - 1};
            in_rand(g, 3, VT_F32, 3, si, -2.0f, 2.0f);
            desc(g, " init_state");
        }
    } else {
        int64_t N = B + irange(&g->r, 0, 3);
        bool with_slots = op == VT_OP_CAUSAL_CONV1D_SPEC_UPDATE || chance(&g->r, 70);
        if (with_slots) {
            int32_t *slots = in_arr(g, 3, VT_I32, 1, &B);
            if (slots)
                distinct_slots(g, slots, B, N, true);
        }
        int64_t L = W - 1;
        if (op == VT_OP_CAUSAL_CONV1D_SPEC_UPDATE) {
            int64_t t_prev = irange(&g->r, 1, T + 2);
            L = W - 2 + (T > t_prev ? T : t_prev) + irange(&g->r, 0, 2);
            int32_t *acc = in_arr(g, 4, VT_I32, 1, &B);
            const int32_t *slots = g->c->in[3].data;
            for (int64_t b = 0; acc && slots && b < B; b++)
                acc[b] = slots[b] < 0 ? (int32_t)irange(&g->r, -5, 99) : (int32_t)irange(&g->r, 1, t_prev);
            desc(g, " L=%lld T_prev=%lld", (long long)L, (long long)t_prev);
        }
        int64_t ss[3] = {N, D, L};
        inout_arr(g, 1, VT_F32, 3, ss);
        fill(g, &g->c->out[1], -2.0f, 2.0f);
        desc(g, " N=%lld%s", (long long)N, with_slots ? " slots" : "");
    }
    rule(g, 0, VTC_REL, 1e-5);
    rule(g, 1, VTC_EXACT, 0);
}

static void gen_attention(gen *g)
{
    vt_dtype kt = g->c->sig.dtype[1];
    int64_t Hkv = PICK(&g->r, 1, 2, 4), Hq = Hkv * PICK(&g->r, 1, 2, 3, 4), d = PICK(&g->r, 16, 32, 64, 80, 128);
    int64_t dv = chance(&g->r, 70) ? d : PICK(&g->r, 16, 48, 96), T = rows_for(g, 2, 12);
    if (!g->prefill) { /* decode: a model's head size and kv grouping (the decode kernels' shapes) */
        Hq = Hkv * PICK(&g->r, 1, 2, 4);
        d = dv = PICK(&g->r, 64, 128);
    }
    int64_t S = g->prefill ? irange(&g->r, T, T + 90) : irange(&g->r, 1, 300);
    int64_t sq[3] = {T, Hq, d}, sk[3] = {S, Hkv, d}, sv[3] = {S, Hkv, dv};
    in_rand(g, 0, VT_F32, 3, sq, -1.0f, 1.0f);
    in_rand(g, 1, kt, 3, sk, -1.0f, 1.0f);
    in_rand(g, 2, kt, 3, sv, -1.0f, 1.0f);
    int32_t *pos = in_arr(g, 3, VT_I32, 1, &T);
    int64_t p0 = irange(&g->r, 0, S - T);
    for (int64_t t = 0; pos && t < T; t++)
        pos[t] = g->prefill ? (int32_t)(p0 + t) : (int32_t)irange(&g->r, 0, S - 1);
    if (pos && T > 1 && chance(&g->r, 50))
        pos[T - 1] = -1; /* a padding query: sees no key, outputs zeros */
    vt_params_attention p = {1.0f / sqrtf((float)d), chance(&g->r, 50) ? 0 : (int32_t)irange(&g->r, 1, S)};
    set_params(g, &p, sizeof p);
    desc(g, "T=%lld Hq=%lld Hkv=%lld d=%lld dv=%lld S=%lld window=%d", (long long)T, (long long)Hq, (long long)Hkv,
         (long long)d, (long long)dv, (long long)S, p.window);
    rule(g, 0, VTC_REL, tol_for(S, is_half(kt)));
}

static void gen_kv_write(gen *g)
{
    vt_dtype ct = g->c->sig.dtype[1];
    /* Prefill also takes T > 64, past the rocm backend's fused decode write. */
    int64_t T = g->prefill && chance(&g->r, 40) ? irange(&g->r, 65, 100) : rows_for(g, 2, 16);
    int64_t H = PICK(&g->r, 1, 2, 3, 8), d = irange(&g->r, 1, 130), dv = chance(&g->r, 70) ? d : irange(&g->r, 1, 130),
            S = T + irange(&g->r, 0, 40);
    int64_t sk[3] = {T, H, d}, sv[3] = {T, H, dv}, sck[3] = {S, H, d}, scv[3] = {S, H, dv};
    in_rand(g, 0, VT_F32, 3, sk, -3.0f, 3.0f);
    in_rand(g, 1, VT_F32, 3, sv, -3.0f, 3.0f);
    int32_t *slots = in_arr(g, 2, VT_I32, 1, &T);
    if (slots)
        distinct_slots(g, slots, T, S, true);
    inout_arr(g, 0, ct, 3, sck);
    fill(g, &g->c->out[0], -3.0f, 3.0f);
    inout_arr(g, 1, ct, 3, scv);
    fill(g, &g->c->out[1], -3.0f, 3.0f);
    desc(g, "T=%lld H=%lld d=%lld dv=%lld S=%lld", (long long)T, (long long)H, (long long)d, (long long)dv,
         (long long)S);
    rule(g, 0, VTC_EXACT, 0);
    rule(g, 1, VTC_EXACT, 0);
}

/* GatedDeltaRule: small heads of odd sizes, or (half of the calls) the
 * model head dk = 128: decode T = 1..4 with dv 128 or 100, prefill T =
 * 65..200 with per-sequence slots (several chunks of 64 tokens and a
 * partial last one, where a backend may run the chunked form) or, one call
 * in five, per-token slots over T = 65..100. Without the L2 norm, q and k
 * are scaled so that |k|^2 stays near 1 (the recurrence stays bounded). */
static void gen_gated_delta(gen *g)
{
    bool wide = chance(&g->r, 50);
    int64_t B, T, H, HV, dk, dv;
    bool per_token;
    if (!wide) {
        B = irange(&g->r, 1, 4);
        T = g->prefill ? irange(&g->r, 2, 16) : irange(&g->r, 1, 4);
        H = irange(&g->r, 1, 3);
        HV = H * PICK(&g->r, 1, 2, 3);
        dk = PICK(&g->r, 4, 8, 16, 32, 48);
        dv = PICK(&g->r, 4, 8, 16, 32, 40);
        per_token = T > 1 && chance(&g->r, 50);
    } else if (!g->prefill) {
        B = irange(&g->r, 1, 4);
        T = irange(&g->r, 1, 4);
        H = irange(&g->r, 1, 2);
        HV = H * PICK(&g->r, 1, 2);
        dk = 128;
        dv = PICK(&g->r, 128, 100);
        per_token = T > 1 && chance(&g->r, 50);
    } else {
        per_token = chance(&g->r, 20);
        B = per_token ? 1 : irange(&g->r, 1, 3);
        T = per_token ? irange(&g->r, 65, 100) : irange(&g->r, 65, 200);
        H = irange(&g->r, 1, 2);
        HV = H * PICK(&g->r, 1, 2);
        dk = 128;
        dv = 128;
    }
    vt_params_gdn p = {(int32_t)irange(&g->r, 0, 1)};
    set_params(g, &p, sizeof p);
    int64_t sq[4] = {B, T, H, dk}, sv[4] = {B, T, HV, dv}, sg[3] = {B, T, HV};
    float qk = p.l2norm ? 1.0f : dk >= 64 ? (float)sqrt(1.5 / (double)dk) : 0.3f;
    in_rand(g, 0, VT_F32, 4, sq, -qk, qk);
    in_rand(g, 1, VT_F32, 4, sq, -qk, qk);
    in_rand(g, 2, VT_F32, 4, sv, -1.0f, 1.0f);
    in_rand(g, 3, VT_F32, 3, sg, -1.0f, 0.0f);
    in_rand(g, 4, VT_F32, 3, sg, 0.0f, 1.0f);
    int64_t per_row = per_token ? T : 1, N = B * per_row + irange(&g->r, 0, 3);
    int64_t ss[2] = {B, T};
    int32_t *slots = in_arr(g, 5, VT_I32, per_token ? 2 : 1, ss);
    if (slots) {
        distinct_slots(g, slots, B * per_row, N, false);
        for (int64_t b = 1; b < B; b++) /* some padding rows, some skipped writes */
            if (chance(&g->r, 25))
                for (int64_t t = 0; t < per_row; t++)
                    slots[b * per_row + t] = -1;
        for (int64_t i = 0; per_token && i < B * T; i++)
            if (chance(&g->r, 15))
                slots[i] = -1;
    }
    if (per_token) {
        int32_t *acc = in_arr(g, 6, VT_I32, 1, &B);
        for (int64_t b = 0; acc && b < B; b++)
            acc[b] = (int32_t)irange(&g->r, 1, T);
    }
    int64_t st[4] = {N, HV, dk, dv};
    inout_arr(g, 1, VT_F32, 4, st);
    fill(g, &g->c->out[1], -0.2f, 0.2f);
    desc(g, "B=%lld T=%lld H=%lld HV=%lld dk=%lld dv=%lld N=%lld %s%s", (long long)B, (long long)T, (long long)H,
         (long long)HV, (long long)dk, (long long)dv, (long long)N, per_token ? "per-token slots" : "per-seq slots",
         p.l2norm ? " l2norm" : "");
    double tol = tol_for(T * dk, false);
    rule(g, 0, VTC_REL, tol);
    rule(g, 1, VTC_REL, tol);
}

static void gen_dsa(gen *g)
{
    vt_dtype kt = g->c->sig.dtype[1];
    int64_t T = rows_for(g, 2, 8), H = irange(&g->r, 1, 8), d = PICK(&g->r, 16, 32, 64, 128), S = irange(&g->r, 1, 300);
    int64_t sq[3] = {T, H, d}, sk[2] = {S, d}, sw[2] = {T, H};
    in_rand(g, 0, VT_F32, 3, sq, -1.0f, 1.0f);
    in_rand(g, 1, kt, 2, sk, -1.0f, 1.0f);
    in_rand(g, 2, VT_F32, 2, sw, -1.0f, 1.0f);
    int32_t *st = in_arr(g, 3, VT_I32, 1, &T), *en = in_arr(g, 4, VT_I32, 1, &T);
    bool clipped = false;
    for (int64_t t = 0; st && en && t < T; t++) {
        int64_t a = irange(&g->r, 0, S), b = irange(&g->r, 0, S);
        if (chance(&g->r, 10))
            b = a; /* an empty window: the whole row is -inf */
        st[t] = (int32_t)(a < b ? a : b);
        en[t] = (int32_t)(a < b ? b : a);
        /* Windows are clipped to [0, S); start > end is an empty row. */
        if (chance(&g->r, 10)) {
            st[t] = -(int32_t)irange(&g->r, 1, 40);
            clipped = true;
        }
        if (chance(&g->r, 10)) {
            en[t] = (int32_t)(S + irange(&g->r, 1, 40));
            clipped = true;
        }
        if (chance(&g->r, 5)) {
            int32_t tmp = st[t];
            st[t] = en[t] + 1;
            en[t] = tmp;
            clipped = true;
        }
    }
    desc(g, "T=%lld H=%lld d=%lld S=%lld%s", (long long)T, (long long)H, (long long)d, (long long)S,
         clipped ? " clipped windows" : "");
    rule(g, 0, VTC_REL, tol_for(H * d, is_half(kt)));
}

/* Rows of values with deliberate ties and signed zeros. */
static float *tied_rows(gen *g, uint32_t i, int64_t rows, int64_t n)
{
    int64_t s[2] = {rows, n};
    float *x = in_arr(g, i, VT_F32, 2, s);
    bool coarse = chance(&g->r, 50);
    for (int64_t j = 0; x && j < rows * n; j++) {
        x[j] = coarse ? (float)irange(&g->r, -20, 20) * 0.25f : frand(&g->r, -10.0f, 10.0f);
        if (chance(&g->r, 3))
            x[j] = chance(&g->r, 50) ? -0.0f : 0.0f;
        if (chance(&g->r, 1))
            x[j] = -INFINITY;
    }
    return x;
}

static void gen_topk(gen *g)
{
    int64_t rows = rows_for(g, 2, 5), n = chance(&g->r, 20) ? irange(&g->r, 2048, 3000) : irange(&g->r, 1, 700);
    int64_t kmax = n < 2048 ? n : 2048;
    int64_t k = chance(&g->r, 25) ? 1 : chance(&g->r, 30) ? kmax : irange(&g->r, 1, kmax);
    tied_rows(g, 0, rows, n);
    vt_params_topk p = {(int32_t)k};
    set_params(g, &p, sizeof p);
    desc(g, "rows=%lld n=%lld k=%lld", (long long)rows, (long long)n, (long long)k);
    rule(g, 0, VTC_EXACT, 0);
    rule(g, 1, VTC_EXACT, 0);
}

static void gen_argmax(gen *g)
{
    int64_t rows = rows_for(g, 2, 9), n = irange(&g->r, 1, 5000);
    tied_rows(g, 0, rows, n);
    desc(g, "rows=%lld n=%lld", (long long)rows, (long long)n);
    rule(g, 0, VTC_EXACT, 0);
}

static void gen_sample(gen *g)
{
    int64_t rows = rows_for(g, 2, 6), n = irange(&g->r, 1, 3000);
    int64_t s[2] = {rows, n};
    in_rand(g, 0, VT_F32, 2, s, -6.0f, 6.0f);
    vt_params_sample p;
    memset(&p, 0, sizeof p);
    p.temperature = (float)PICK(&g->r, 0, 1, 2, 3) * 0.6f;
    p.top_k = (int32_t)PICK(&g->r, 0, 1, 5, 40, 100000);
    p.top_p = (float)PICK(&g->r, 100, 95, 50, 10) / 100.0f;
    p.seed = rnext(&g->r);
    p.step = (uint64_t)irange(&g->r, 0, 1000);
    set_params(g, &p, sizeof p);
    desc(g, "rows=%lld V=%lld temperature=%g top_k=%d top_p=%g", (long long)rows, (long long)n, (double)p.temperature,
         p.top_k, (double)p.top_p);
    rule(g, 0, VTC_EXACT, 0);
}

static void gen_get_rows(gen *g)
{
    vt_dtype tt = g->c->sig.dtype[0];
    const vt_dtype_info *ti = vt_dtype_get(tt);
    int64_t n = ti && ti->block_elems > 1 ? ti->block_elems * irange(&g->r, 1, 4) : irange(&g->r, 1, 300);
    int64_t R = irange(&g->r, 1, 60), I = rows_for(g, 2, 12);
    int64_t st[2] = {R, n};
    in_weights(g, 0, tt, 2, st);
    uint32_t ind = g->prefill && chance(&g->r, 50) ? 2 : 1;
    int64_t si[2] = {I, ind == 2 ? 3 : 1};
    int32_t *idx = in_arr(g, 1, VT_I32, ind, si);
    for (int64_t i = 0; idx && i < si[0] * (ind == 2 ? si[1] : 1); i++)
        idx[i] = (int32_t)irange(&g->r, 0, R - 1);
    g->free_dt = g->c->sig.dtype[2];
    desc(g, "R=%lld n=%lld idx %u-d", (long long)R, (long long)n, ind);
    rule(g, 0, VTC_EXACT, 0);
}

static void gen_dequantize(gen *g)
{
    vt_dtype qt = g->c->sig.dtype[0];
    const vt_dtype_info *ti = vt_dtype_get(qt);
    int64_t s[2] = {rows_for(g, 2, 8), (ti ? ti->block_elems : 32) * irange(&g->r, 1, 8)};
    in_weights(g, 0, qt, 2, s);
    g->free_dt = g->c->sig.dtype[1];
    desc(g, "%lldx%lld", (long long)s[0], (long long)s[1]);
    rule(g, 0, VTC_EXACT, 0);
}

static void gen_index_select(gen *g)
{
    vt_dtype st = g->c->sig.dtype[0], it = g->c->sig.dtype[1];
    uint32_t nd = (uint32_t)irange(&g->r, 1, 4);
    int64_t s[4];
    for (uint32_t i = 0; i < nd; i++)
        s[i] = irange(&g->r, 1, nd > 2 ? 9 : 60);
    in_rand(g, 0, st, nd, s, -50.0f, 50.0f);
    int dim = (int)irange(&g->r, 0, nd - 1);
    int64_t n_idx = irange(&g->r, 1, 20);
    void *idx = in_arr(g, 1, it, 1, &n_idx);
    for (int64_t i = 0; idx && i < n_idx; i++) {
        int64_t v = irange(&g->r, 0, s[dim] - 1);
        if (it == VT_I64)
            ((int64_t *)idx)[i] = v;
        else
            ((int32_t *)idx)[i] = (int32_t)v;
    }
    vt_params_index_select p = {chance(&g->r, 50) ? dim - (int)nd : dim};
    set_params(g, &p, sizeof p);
    desc(g, "src %u-d, dim=%d, %lld indices", nd, p.dim, (long long)n_idx);
    rule(g, 0, VTC_EXACT, 0);
}

/* Silu, Gelu, Sigmoid: x in [-8, 8). */
static void gen_activation(gen *g)
{
    gen_unary(g, -8.0f, 8.0f);
}

/* The generator of each op, keyed by op id, grouped by the catalogue's
 * families (core/ops/<family>.c, vt_op_family_name). */
typedef struct generator {
    uint32_t op;
    void (*fn)(gen *g);
} generator;

static const generator generators[] = {
    /* convert */
    {VT_OP_COPY, gen_copy},
    {VT_OP_DEQUANTIZE, gen_dequantize},
    /* elementwise */
    {VT_OP_ADD, gen_binary},
    {VT_OP_MUL, gen_binary},
    {VT_OP_SCALE, gen_scale},
    {VT_OP_SILU, gen_activation},
    {VT_OP_GELU, gen_activation},
    {VT_OP_SIGMOID, gen_activation},
    {VT_OP_SWIGLU, gen_swiglu},
    {VT_OP_GDN_GATE, gen_gdn_gate},
    {VT_OP_MOE_COMBINE, gen_moe_combine},
    /* rows */
    {VT_OP_RMS_NORM, gen_norm},
    {VT_OP_L2_NORM, gen_norm},
    {VT_OP_GATED_RMS_NORM, gen_norm},
    {VT_OP_SOFTMAX, gen_softmax},
    {VT_OP_ROPE, gen_rope},
    /* conv */
    {VT_OP_CAUSAL_CONV1D_SPEC_UPDATE, gen_conv},
    {VT_OP_CAUSAL_CONV1D, gen_conv},
    {VT_OP_CAUSAL_CONV1D_UPDATE, gen_conv},
    /* matmul */
    {VT_OP_MATMUL, gen_matmul},
    {VT_OP_MOE_EXPERT_MATMUL, gen_moe_expert},
    /* attention */
    {VT_OP_ATTENTION, gen_attention},
    {VT_OP_KV_CACHE_WRITE, gen_kv_write},
    {VT_OP_GATED_DELTA_RULE, gen_gated_delta},
    {VT_OP_DSA_INDEXER_LOGITS, gen_dsa},
    /* select */
    {VT_OP_MOE_ROUTER, gen_moe_router},
    {VT_OP_TOPK, gen_topk},
    {VT_OP_ARGMAX, gen_argmax},
    {VT_OP_SAMPLE, gen_sample},
    /* gather */
    {VT_OP_GET_ROWS, gen_get_rows},
    {VT_OP_INDEX_SELECT, gen_index_select},
};

static const generator *generator_of(uint32_t op)
{
    for (size_t i = 0; i < sizeof generators / sizeof generators[0]; i++)
        if (generators[i].op == op)
            return &generators[i];
    return NULL;
}

/* Seed of one case from the run's seed, the op, the signature and the class. */
static uint64_t case_seed(uint64_t seed, uint32_t op, vt_sig sig, vtc_shape_class cls)
{
    uint64_t h = seed ^ 0x5bd1e9955bd1e995ull;
    rng r = {h ^ ((uint64_t)op << 32) ^ (uint64_t)cls};
    h = rnext(&r);
    for (uint32_t i = 0; i < sig.n && i < VT_SIG_MAX; i++) {
        r.s = h ^ sig.dtype[i] ^ ((uint64_t)i << 8);
        h = rnext(&r);
    }
    return h;
}

bool vtc_class_applies(uint32_t op, vtc_shape_class cls)
{
    return cls == VTC_DECODE || cls == VTC_PREFILL || (cls == VTC_WIDE && op == VT_OP_MATMUL);
}

vt_status vtc_case_make(uint32_t op, vt_sig sig, vtc_shape_class cls, uint64_t seed, vtc_case *c, char *why,
                        size_t why_size)
{
    memset(c, 0, sizeof *c);
    const vt_op_info *info = vt_op_get_info(op);
    char sb[96];
    if (!info || !vt_op_sig_in_catalog(op, sig))
        return vt_why(VT_E_UNSUPPORTED, why, why_size, "%s (%u) %s is not in the catalogue", info ? info->name : "op",
                      op, vt_sig_format(sig, sb, sizeof sb));
    c->op = op;
    c->sig = sig;
    c->cls = cls;
    c->n_in = info->n_in;
    c->n_out = info->n_out;
    if (!vtc_class_applies(op, cls))
        return vt_why(VT_E_UNSUPPORTED, why, why_size, "%s (%u) has no calls of the wide shape class", info->name, op);
    gen g = {c, {case_seed(seed, op, sig, cls)}, cls != VTC_DECODE, cls == VTC_WIDE, VT_OK, VT_F32};
    const generator *gf = generator_of(op);
    if (!gf) {
        vtc_case_free(c);
        return vt_why(VT_E_UNSUPPORTED, why, why_size, "no conformance generator for %s (%u)", info->name, op);
    }
    gf->fn(&g);
    if (g.st != VT_OK) {
        vtc_case_free(c);
        return vt_why(g.st, why, why_size, "generating %s (%u) %s: %s", info->name, op,
                      vt_sig_format(sig, sb, sizeof sb),
                      g.st == VT_E_NO_MEMORY ? "out of host memory" : "no block layout for this format");
    }
    vt_status st =
        op_shapes_infer(op, c->in, c->n_in, c->params_size ? c->params : NULL, g.free_dt, c->out, why, why_size);
    if (st != VT_OK) {
        vtc_case_free(c);
        return st;
    }
    return VT_OK;
}

void vtc_case_free(vtc_case *c)
{
    for (uint32_t i = 0; i < VT_MAX_INPUTS; i++)
        host_array_free(&c->in[i]);
    for (uint32_t i = 0; i < VT_MAX_OUTPUTS; i++)
        host_array_free(&c->out[i]);
}
