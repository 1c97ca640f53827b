/* cmd_bench.c - `vtctl bench [--backend B[:DEV]] [--op NAME] [--shape
 * k=v,...] [--wtype T] [--reps N] [--warmup N] [--sync] [--json]`: time ops
 * through the public API on any backend and put each result beside the
 * device's copy bandwidth measured in the same run.
 *
 * Per op and shape, by default (stream mode, bench_stream.c): warm-up runs,
 * then reps runs enqueued back to back on one queue with an event after
 * each and one host wait at the end; the median (and min) of the runs'
 * times between their events. With --sync: the median (and min) wall time
 * of single vt_op_run calls, each followed by a 4-byte read of a fence
 * tensor, so every run pays a host synchronisation. Stream mode also times
 * the op in graph mode (bench_graph_time): its runs over the buffer sets
 * recorded once as a graph and replayed, events around each replay, so the
 * GRAPH_US column is the op's device time per run without the host's
 * enqueue of each op (which bounds the stream column of ops shorter than
 * the enqueue, about 5 us on the H200). `--op Launch` times the
 * per-op cost of a stream of 1000 tiny ops (Scale of one f32), enqueued and
 * replayed from a graph. Inputs rotate through
 * enough buffer sets that the working set is at least max(256 MiB,
 * 4 x the host's last-level cache), so weights stream from memory as in
 * a real decode step. Bytes moved are what the op must read and write at
 * least (weights, activations, outputs); GB/s = bytes / median; copy share =
 * that GB/s over the GB/s of Copy f32->f32 of 64 MiB buffers (read + write
 * counted), measured the same way before the ops. Input bytes are random
 * in [0x04, 0x7b], which makes every f16/bf16/f32/E8M0 field a normal
 * finite number (no NaN, infinity or subnormal slow paths).
 *
 * Besides the weight ops (MatMul, MoeExpertMatMul, GetRows, Dequantize,
 * Copy) it times the other decode-path ops at real-model shapes
 * (cmd_bench_ops.c): GatedDeltaRule, CausalConv1d, CausalConv1dUpdate,
 * Attention, Softmax, Argmax, TopK, Sample, RmsNorm and Rope.
 *
 * --peer PATH runs the reference library's op benchmark (bench_peer.h) on
 * each MatMul row's shape right after vt's row; --rounds R alternates vt
 * and the peer R times and reports the median of each. */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bench_peer.h"
#include "bench_plan.h"
#include "bench_stream.h"
#include "bench_time.h"
#include "vtctl.h"

#define MIB            (1024.0 * 1024.0)
#define COPY_BYTES     (64ull << 20)
#define COPY_REPS      21
#define COPY_WARMUP    3
#define MIN_WORKING    (256ull << 20)
#define MAX_SETS       64
#define MAX_SET_BYTES  (1ull << 40) /* one buffer set of a case: 1 TiB */
#define MAX_CASES      64
#define MAX_SHAPE_KEYS BENCH_MAX_KEYS

static const op_spec specs[] = {
    {VT_OP_MATMUL, "m,k,n", {{"m", 4096}, {"k", 14336}, {"n", 1}}, "f16,bf16,q4_0,q8_0,iq4_nl,q4_k,q6_k"},
    {VT_OP_MOE_EXPERT_MATMUL,
     "t,topk,e,m,k",
     {{"t", 1}, {"topk", 8}, {"e", 128}, {"m", 768}, {"k", 2048}},
     "f16,bf16,q4_0,q8_0,iq4_nl,q4_k,q6_k"},
    {VT_OP_GET_ROWS, "rows,k,n", {{"rows", 32768}, {"k", 4096}, {"n", 512}}, "f16,bf16,q4_0,q8_0,iq4_nl,q4_k,q6_k"},
    {VT_OP_DEQUANTIZE, "m,k", {{"m", 4096}, {"k", 14336}}, "q4_0,q8_0,iq4_nl,q4_k,q6_k"},
    {VT_OP_COPY, "n", {{"n", 16 << 20}}, "f32"},
    /* the other decode-path ops (cmd_bench_ops.c), at real-model shapes */
    {VT_OP_GATED_DELTA_RULE,
     "b,t,h,hv,dk,dv",
     {{"b", 1}, {"t", 1}, {"h", 16}, {"hv", 32}, {"dk", 128}, {"dv", 128}},
     "f32"},
    {VT_OP_CAUSAL_CONV1D, "b,d,t,w", {{"b", 1}, {"d", 8192}, {"t", 937}, {"w", 4}}, "f32"},
    {VT_OP_CAUSAL_CONV1D_UPDATE, "b,d,t,w", {{"b", 1}, {"d", 3328}, {"t", 1}, {"w", 4}}, "f32"},
    {VT_OP_ATTENTION, "t,hq,hkv,d,s", {{"t", 1}, {"hq", 32}, {"hkv", 8}, {"d", 128}, {"s", 4096}}, "f16"},
    {VT_OP_SOFTMAX, "rows,n", {{"rows", 1}, {"n", 151936}}, "f32"},
    {VT_OP_ARGMAX, "rows,n", {{"rows", 1}, {"n", 151936}}, "f32"},
    {VT_OP_TOPK, "rows,n,k", {{"rows", 1}, {"n", 151936}, {"k", 40}}, "f32"},
    {VT_OP_SAMPLE, "rows,n,k", {{"rows", 1}, {"n", 151936}, {"k", 40}}, "f32"},
    {VT_OP_RMS_NORM, "rows,n", {{"rows", 1}, {"n", 4096}}, "f32"},
    {VT_OP_ROPE, "t,h,d", {{"t", 1}, {"h", 32}, {"d", 128}}, "f32"},
};
#define N_SPECS (sizeof specs / sizeof specs[0])

typedef struct bench_result {
    vt_status status;
    char error[512];
    double median_us, min_us, bytes;
    double wall_us_per_op;         /* stream mode: host time from first enqueue to the wait, per run */
    double graph_us, graph_min_us; /* graph mode: median (min) device time per run, 0 when not measured */
    int graph_runs;                /* runs per replayed graph */
    char graph_error[256];         /* why graph mode failed ("" when it ran or was not tried) */
    int reps, sets;
    int rounds; /* timings this row's median_us is the median of (--rounds) */
} bench_result;

/* The peer's row of a MatMul case (--peer). */
typedef struct peer_row {
    bool ok;
    double median_us; /* median over the rounds of its per-run time */
    int rounds, runs; /* rounds measured; runs per round (the peer's last) */
    char error[256];
} peer_row;

int64_t bench_key(const bench_case *c, const char *name)
{
    for (int i = 0; i < MAX_SHAPE_KEYS && c->spec->keys[i].name; i++)
        if (!strcmp(c->spec->keys[i].name, name))
            return c->v[i];
    return 0;
}

static void shape_text(const bench_case *c, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < MAX_SHAPE_KEYS && c->spec->keys[i].name && used < size; i++)
        used +=
            (size_t)snprintf(buf + used, size - used, "%s%s=%" PRId64, i ? "," : "", c->spec->keys[i].name, c->v[i]);
}

/* Bytes of the host's largest cache level (sysfs), 0 when unknown. */
static uint64_t host_llc_bytes(void)
{
    uint64_t best = 0;
    for (int i = 0; i < 8; i++) {
        char path[128], buf[64];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (fgets(buf, sizeof buf, f)) {
            char *end = NULL;
            unsigned long long v = strtoull(buf, &end, 10);
            if (end && (*end == 'K' || *end == 'k'))
                v <<= 10;
            else if (end && (*end == 'M' || *end == 'm'))
                v <<= 20;
            if (v > best)
                best = v;
        }
        fclose(f);
    }
    return best;
}

static uint64_t rng_next(uint64_t *s)
{
    return vt_splitmix64_next(s);
}

static bool plan_bytes(const tensor_plan *t, uint64_t *bytes)
{
    return vt_dtype_tensor_bytes(t->dtype, t->ndim, t->shape, bytes);
}

/* The tensors of a case and the bytes a run must move. */
static bool plan_case(const bench_case *c, case_plan *p, char *err, size_t err_size)
{
    memset(p, 0, sizeof *p);
    uint64_t wb = 0;
    bool handled = false;
    if (bench_plan_decode_op(c, p, &handled, err, err_size))
        return true;
    if (handled)
        return false;
    switch (c->spec->op) {
    case VT_OP_MATMUL: {
        int64_t m = bench_key(c, "m"), k = bench_key(c, "k"), n = bench_key(c, "n");
        p->n_in = 2;
        p->n_out = 1;
        p->in[0] = (tensor_plan){VT_F32, 2, {n, k}, FILL_F32, 0};
        p->in[1] = (tensor_plan){c->wtype, 2, {m, k}, FILL_BYTES, 0};
        p->out[0] = (tensor_plan){VT_F32, 2, {n, m}, FILL_NONE, 0};
        if (!plan_bytes(&p->in[1], &wb))
            break;
        p->bytes = (double)wb + 4.0 * ((double)n * (double)k + (double)n * (double)m); /* no int64 product */
        return true;
    }
    case VT_OP_MOE_EXPERT_MATMUL: {
        int64_t t = bench_key(c, "t"), K = bench_key(c, "topk"), e = bench_key(c, "e"), m = bench_key(c, "m"),
                k = bench_key(c, "k");
        p->n_in = 3;
        p->n_out = 1;
        p->in[0] = (tensor_plan){VT_F32, 2, {t, k}, FILL_F32, 0};
        p->in[1] = (tensor_plan){c->wtype, 3, {e, m, k}, FILL_BYTES, 0};
        p->in[2] = (tensor_plan){VT_I32, 2, {t, K}, FILL_INDEX, e};
        p->out[0] = (tensor_plan){VT_F32, 3, {t, K, m}, FILL_NONE, 0};
        if (!plan_bytes(&p->in[1], &wb) || e <= 0 || K > e)
            break;
        /* plus the weights of the distinct experts the ids name (fill_ids) */
        p->bytes = 4.0 * ((double)t * (double)k + (double)t * (double)K * (double)m + (double)t * (double)K);
        p->expert_bytes = (double)wb / (double)e;
        return true;
    }
    case VT_OP_GET_ROWS: {
        int64_t rows = bench_key(c, "rows"), k = bench_key(c, "k"), n = bench_key(c, "n");
        p->n_in = 2;
        p->n_out = 1;
        p->in[0] = (tensor_plan){c->wtype, 2, {rows, k}, FILL_BYTES, 0};
        p->in[1] = (tensor_plan){VT_I32, 1, {n}, FILL_INDEX, rows};
        p->out[0] = (tensor_plan){VT_F32, 2, {n, k}, FILL_NONE, 0};
        if (!plan_bytes(&p->in[0], &wb) || rows <= 0)
            break;
        p->bytes = (double)n * ((double)wb / (double)rows + 4.0 * (double)k + 4.0);
        return true;
    }
    case VT_OP_DEQUANTIZE: {
        int64_t m = bench_key(c, "m"), k = bench_key(c, "k");
        p->n_in = 1;
        p->n_out = 1;
        p->in[0] = (tensor_plan){c->wtype, 2, {m, k}, FILL_BYTES, 0};
        p->out[0] = (tensor_plan){VT_F32, 2, {m, k}, FILL_NONE, 0};
        if (!plan_bytes(&p->in[0], &wb))
            break;
        p->bytes = (double)wb + 4.0 * ((double)m * (double)k);
        return true;
    }
    case VT_OP_COPY: {
        int64_t n = bench_key(c, "n");
        p->n_in = 1;
        p->n_out = 1;
        p->in[0] = (tensor_plan){c->wtype, 1, {n}, FILL_BYTES, 0};
        p->out[0] = (tensor_plan){c->wtype, 1, {n}, FILL_NONE, 0};
        if (!plan_bytes(&p->in[0], &wb))
            break;
        p->bytes = 2.0 * (double)wb;
        return true;
    }
    default: break;
    }
    snprintf(err, err_size, "shape does not fit %s (innermost dim a multiple of its block%s?)", vt_dtype_name(c->wtype),
             c->spec->op == VT_OP_MOE_EXPERT_MATMUL ? ", topk <= e" : "");
    return false;
}

/* Whether every tensor of p has a size (the one size rule) and one buffer
 * set stays under MAX_SET_BYTES: bench shapes are bounded before anything
 * is allocated (n=2^40,k=2^40 is refused, not tried). */
static bool plan_bounded(const case_plan *p)
{
    uint64_t total = 0, b;
    for (int i = 0; i < p->n_in + p->n_out; i++) {
        if (i < p->n_in && p->in[i].fill == FILL_ABSENT)
            continue;
        if (!plan_bytes(i < p->n_in ? &p->in[i] : &p->out[i - p->n_in], &b) || b > MAX_SET_BYTES - total)
            return false;
        total += b;
    }
    return true;
}

/* Host contents of a tensor: random bytes in [0x04, 0x7b], f32 in
 * [lo, hi) ([-1, 1) when both are 0), one i32 value, or indices (per row of
 * `row` values, distinct within a row when the row fits, as a router's
 * top-k ids are). */
static void *host_fill(const tensor_plan *t, size_t bytes, uint64_t *seed)
{
    uint8_t *p = malloc(bytes ? bytes : 1);
    if (!p)
        return NULL;
    if (t->fill == FILL_F32) {
        float *f = (float *)(void *)p;
        double lo = t->lo == 0 && t->hi == 0 ? -1.0 : t->lo, span = t->lo == 0 && t->hi == 0 ? 2.0 : t->hi - t->lo;
        for (size_t i = 0; i < bytes / 4; i++)
            f[i] = (float)(lo + (double)(rng_next(seed) >> 11) * (span / 9007199254740992.0));
    } else if (t->fill == FILL_I32) {
        int32_t *v = (int32_t *)(void *)p;
        for (size_t i = 0; i < bytes / 4; i++)
            v[i] = t->value;
    } else if (t->fill == FILL_INDEX) {
        int32_t *v = (int32_t *)(void *)p;
        int64_t row = t->shape[t->ndim - 1], n = (int64_t)(bytes / 4);
        /* distinct within a row: a table of the values taken, cleared after
         * each row, so filling is O(n) expected, not O(n * row) */
        bool distinct = row <= t->index_below;
        uint8_t *taken = distinct ? calloc((size_t)t->index_below, 1) : NULL;
        if (distinct && !taken) {
            free(p);
            return NULL;
        }
        for (int64_t i = 0; i < n; i++) {
            do
                v[i] = (int32_t)(rng_next(seed) % (uint64_t)t->index_below);
            while (distinct && taken[v[i]]);
            if (distinct) {
                taken[v[i]] = 1;
                if (i % row == row - 1 || i == n - 1)
                    for (int64_t j = i - i % row; j <= i; j++)
                        taken[v[j]] = 0;
            }
        }
        free(taken);
    } else {
        for (size_t i = 0; i < bytes; i++)
            p[i] = (uint8_t)(0x04 + rng_next(seed) % (0x7b - 0x04 + 1));
    }
    return p;
}

/* Distinct values among n i32 ids below limit. */
static int64_t distinct_ids(const int32_t *ids, int64_t n, int64_t limit)
{
    uint8_t *seen = calloc((size_t)limit, 1);
    int64_t d = 0;
    for (int64_t i = 0; seen && i < n; i++)
        if (!seen[ids[i]]) {
            seen[ids[i]] = 1;
            d++;
        }
    free(seen);
    return seen ? d : limit;
}

/* Run one case: allocate the rotating sets, warm up, time case c on dev
 * into r (stream mode, or one vt_op_run and a fence read per run with
 * sync_mode). */
static void run_case(vt_device *dev, const bench_case *c, int reps, int warmup, bool sync_mode, uint64_t working,
                     uint64_t free_mem, bench_result *r)
{
    memset(r, 0, sizeof *r);
    case_plan p;
    if (!plan_case(c, &p, r->error, sizeof r->error)) {
        r->status = VT_E_SHAPE;
        return;
    }
    /* host contents of the inputs, then of the INOUT outputs (states) */
    enum { N_T = BENCH_MAX_IN + BENCH_MAX_OUT };
    tensor_plan *tp[N_T];
    uint64_t bytes[N_T] = {0}, set_bytes = 0;
    for (int i = 0; i < p.n_in + p.n_out; i++) {
        tp[i] = i < p.n_in ? &p.in[i] : &p.out[i - p.n_in];
        if (tp[i]->fill != FILL_ABSENT) {
            plan_bytes(tp[i], &bytes[i]);
            set_bytes += bytes[i];
        }
    }
    int sets = set_bytes ? (int)((working + set_bytes - 1) / set_bytes) : 2;
    sets = sets < 2 ? 2 : sets > MAX_SETS ? MAX_SETS : sets;
    while (sets > 2 && free_mem && (uint64_t)sets * set_bytes > free_mem / 2)
        sets--;
    r->sets = sets;
    vt_tensor *in[MAX_SETS][BENCH_MAX_IN], *out[MAX_SETS][BENCH_MAX_OUT], *fence = NULL;
    memset(in, 0, sizeof in);
    memset(out, 0, sizeof out);
    void *host[N_T] = {NULL};
    uint64_t seed = 0x5eed;
    double *t = calloc((size_t)(reps > 0 ? reps : 1), sizeof *t);
    int64_t one = 1;
    vt_status st = t ? vt_tensor_create(dev, VT_F32, 1, &one, &fence) : VT_E_NO_MEMORY;
    for (int i = 0; st == VT_OK && i < p.n_in + p.n_out; i++) {
        if (tp[i]->fill == FILL_ABSENT || tp[i]->fill == FILL_NONE)
            continue;
        host[i] = host_fill(tp[i], (size_t)bytes[i], &seed);
        if (!host[i])
            st = VT_E_NO_MEMORY;
    }
    if (st == VT_OK && c->spec->op == VT_OP_MOE_EXPERT_MATMUL)
        p.bytes += p.expert_bytes * (double)distinct_ids(host[2], (int64_t)(bytes[2] / 4), bench_key(c, "e"));
    for (int s = 0; st == VT_OK && s < sets; s++) {
        for (int i = 0; st == VT_OK && i < p.n_in + p.n_out; i++) {
            if (tp[i]->fill == FILL_ABSENT)
                continue;
            vt_tensor **slot = i < p.n_in ? &in[s][i] : &out[s][i - p.n_in];
            st = vt_tensor_create(dev, tp[i]->dtype, tp[i]->ndim, tp[i]->shape, slot);
            if (st == VT_OK && host[i])
                st = vt_tensor_write(*slot, host[i], (size_t)bytes[i]);
        }
    }
    const void *prm = p.params_size ? p.params : NULL;
    float fence_value;
    double wall = 0;
    if (st == VT_OK && !sync_mode)
        st = bench_stream_time(dev, c->spec->op, in, p.n_in, out, p.n_out, prm, p.params_size, sets, reps, warmup, t,
                               &wall);
    for (int it = 0; sync_mode && st == VT_OK && it < warmup + reps; it++) {
        int s = it % sets;
        double t0 = bench_now_us();
        st = vt_op_run(dev, c->spec->op, (const vt_tensor *const *)in[s], (uint32_t)p.n_in, out[s], (uint32_t)p.n_out,
                       prm, p.params_size);
        if (st == VT_OK)
            st = vt_tensor_read(fence, &fence_value, sizeof fence_value);
        if (it >= warmup)
            t[it - warmup] = bench_now_us() - t0;
    }
    if (st == VT_OK && !sync_mode) { /* its own column: a refusal here leaves the stream row standing */
        double *gt = calloc((size_t)reps, sizeof *gt);
        vt_status gs = gt ? bench_graph_time(dev, c->spec->op, in, p.n_in, out, p.n_out, prm, p.params_size, sets, reps,
                                             warmup, gt, &r->graph_runs)
                          : VT_E_NO_MEMORY;
        if (gs == VT_OK)
            r->graph_us = bench_median(gt, reps, &r->graph_min_us);
        free(gt);
        if (gs != VT_OK)
            snprintf(r->graph_error, sizeof r->graph_error, "%s: %s", vt_status_name(gs), vt_last_error());
    }
    if (st != VT_OK) {
        r->status = st;
        snprintf(r->error, sizeof r->error, "%s: %s", vt_status_name(st), vt_last_error());
    } else {
        r->median_us = bench_median(t, reps, &r->min_us);
        r->wall_us_per_op = sync_mode ? 0.0 : wall / reps;
        r->reps = reps;
        r->bytes = p.bytes;
    }
    for (int s = 0; s < sets; s++) {
        for (int i = 0; i < BENCH_MAX_IN; i++)
            vt_tensor_destroy(in[s][i]);
        for (int i = 0; i < BENCH_MAX_OUT; i++)
            vt_tensor_destroy(out[s][i]);
    }
    vt_tensor_destroy(fence);
    for (int i = 0; i < N_T; i++)
        free(host[i]);
    free(t);
}

static const op_spec *spec_of(vt_op op)
{
    for (size_t i = 0; i < N_SPECS; i++)
        if (specs[i].op == op)
            return &specs[i];
    return NULL;
}

/* Apply "k=v,k=v" to a case; false (with err) on a bad key or value. */
static bool apply_shape(bench_case *c, const char *text, char *err, size_t err_size)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) {
            snprintf(err, err_size, "shape item '%s' is not key=value", tok);
            return false;
        }
        *eq = '\0';
        int64_t v = 0;
        if (!vt_parse_i64(eq + 1, 1, (int64_t)1 << 40, &v)) {
            snprintf(err, err_size, "shape value '%s' of %s must be a positive integer", eq + 1, tok);
            return false;
        }
        int i = 0;
        while (i < MAX_SHAPE_KEYS && c->spec->keys[i].name && strcmp(c->spec->keys[i].name, tok))
            i++;
        if (i == MAX_SHAPE_KEYS || !c->spec->keys[i].name) {
            snprintf(err, err_size, "%s has no shape key '%s' (keys: %s)", vt_op_name(c->spec->op), tok,
                     c->spec->keys_doc);
            return false;
        }
        c->v[i] = v;
    }
    return true;
}

/* True when the backend's catalogue row exists for the op and wtype. */
static bool wtype_fits(vt_op op, vt_dtype t)
{
    vt_dtype d[3];
    uint32_t n = 2;
    switch (op) {
    case VT_OP_MATMUL:
    case VT_OP_MOE_EXPERT_MATMUL: d[0] = VT_F32, d[1] = t; break;
    case VT_OP_GET_ROWS: d[0] = t, d[1] = VT_I32, d[2] = VT_F32, n = 3; break;
    case VT_OP_DEQUANTIZE:
    case VT_OP_COPY: d[0] = t, d[1] = op == VT_OP_COPY ? t : VT_F32; break;
    case VT_OP_ATTENTION: d[0] = VT_F32, d[1] = t; break; /* the wtype is the KV cache's */
    default: d[0] = t, n = 1; break;                      /* the f32 ops */
    }
    return vt_op_sig_in_catalog(op, vt_sig_make(n, d));
}

static void usage(FILE *f)
{
    fprintf(f, "usage: vtctl bench [--backend B[:DEV]] [--op NAME] [--shape k=v,...] [--wtype T[,T...]]\n"
               "                   [--reps N] [--warmup N] [--sync] [--rounds R] [--peer PATH] [--json]\n"
               "       vtctl bench [--backend B[:DEV]] --op Launch [--reps N] [--json]\n"
               "ops and shape keys (defaults):\n");
    for (size_t i = 0; i < N_SPECS; i++) {
        char shape[128];
        bench_case c = {&specs[i], VT_F32, {0}};
        for (int k = 0; k < MAX_SHAPE_KEYS; k++)
            c.v[k] = specs[i].keys[k].value;
        shape_text(&c, shape, sizeof shape);
        fprintf(f, "  %-16s %-34s wtypes %s\n", vt_op_name(specs[i].op), shape, specs[i].default_wtypes);
    }
    fprintf(f,
            "without --op: MatMul decode for each of its default wtypes\n"
            "default timing: a stream of enqueues with an event after each run and one wait (median of the\n"
            "  runs' times between events); --sync: one vt_op_run plus a fence read per run (a host wait each)\n"
            "GRAPH_US (stream mode): the runs over every buffer set (at least %d, at most 4 x reps) recorded\n"
            "  once as a graph, replayed reps times with an event around each replay: median device time per\n"
            "  run, without the host's enqueue of each op\n"
            "bytes: what a run must read and write at least (states read and written; Attention: the whole\n"
            "  KV cache of s positions); GatedDeltaRule L2-normalises q and k\n"
            "MatMul rows end with the arithmetic rate, 2*n*m*k flops a run (TFLOP/s): prefill shapes such as\n"
            "  --shape m=4096,k=4096,n=512 time the matrix-instruction (GEMM) path\n"
            "--op Launch: per-op cost of a stream of %d Scale ops on one f32, enqueued and replayed from a graph\n"
            "--peer PATH: after each MatMul row, PATH (ggml's test-backend-ops, ../shared/peers/build-ggml-bench)\n"
            "  on the same shape: PATH perf -b CPU -o MUL_MAT -p \"type_a=T,type_b=f32,m=M,n=N,k=K,\", its time\n"
            "  and vt's over it\n"
            "--rounds R: time each row R times (alternating with the peer) and report the medians (GRAPH_US: the\n"
            "  last round's)\n",
            BENCH_GRAPH_RUNS, BENCH_LAUNCH_OPS);
}

/* The peer's measurement of a case: JSON the "peer" member of vt's row;
 * text its own row under vt's (the line starts at the status cell). */
static void write_peer(rec_writer *w, const bench_case *c, const bench_result *r, const peer_row *pr, const char *shape,
                       double copy_gbps)
{
    const char *wt = vt_dtype_name(c->wtype);
    rec_object_begin(w, "peer", NULL);
    rec_str(w, "tool", NULL, "ggml test-backend-ops perf");
    rec_str_as(w, "status", "", pr->ok ? "ok" : "failed", "\n  %-16s %-7s %-28s ", "peer (ggml)", wt, shape);
    if (!pr->ok) {
        rec_str_as(w, "error", "", pr->error, "failed: %s", pr->error);
    } else {
        double gbps = r->bytes / pr->median_us * 1e-3;
        rec_double_as(w, "median_us", "", pr->median_us, "%10.1f %10s %10s %9.1f %7.2f %6.0f%% %4s  ", pr->median_us,
                      "-", "-", r->bytes / MIB, gbps, copy_gbps > 0 ? 100.0 * gbps / copy_gbps : 0.0, "-");
        rec_int(w, "rounds", NULL, pr->rounds);
        rec_int(w, "runs", NULL, pr->runs);
        double ratio = r->status == VT_OK ? r->median_us / pr->median_us : 0.0;
        rec_double_as(w, "vt_over_peer", "", ratio, "vt/peer %.2f", ratio);
    }
    rec_object_end(w, false);
}

/* One case's result: JSON an object (under key, or in an array); text a
 * row of the table when row is true (the copy reference has its own line). */
static void write_result(rec_writer *w, const char *key, bool row, const bench_case *c, const bench_result *r,
                         double copy_gbps, const peer_row *pr)
{
    if (!row && !rec_json(w))
        return; /* the copy reference's text is its own line */
    const char *cell = row ? "" : NULL, *op = vt_op_name(c->spec->op), *wt = vt_dtype_name(c->wtype);
    char shape[128];
    shape_text(c, shape, sizeof shape);
    rec_row_begin(w, key);
    rec_str_as(w, "op", cell, op, "%-16s ", op);
    rec_str_as(w, "wtype", cell, wt, "%-7s ", wt);
    rec_str_as(w, "shape", cell, shape, "%-28s ", shape);
    rec_object_begin(w, "dims", NULL);
    for (int i = 0; i < MAX_SHAPE_KEYS && c->spec->keys[i].name; i++)
        rec_int(w, c->spec->keys[i].name, NULL, c->v[i]);
    rec_object_end(w, false);
    rec_str(w, "status", NULL, vt_status_name(r->status));
    if (r->status != VT_OK) {
        rec_str_as(w, "error", cell, r->error, "failed: %s", r->error);
    } else {
        double gbps = r->bytes / r->median_us * 1e-3;
        rec_double_as(w, "median_us", cell, r->median_us, "%10.1f ", r->median_us);
        rec_double_as(w, "min_us", cell, r->min_us, "%10.1f ", r->min_us);
        if (r->graph_us > 0) {
            rec_double_as(w, "graph_us", cell, r->graph_us, "%10.2f ", r->graph_us);
            rec_double(w, "graph_min_us", NULL, r->graph_min_us);
            rec_int(w, "graph_runs", NULL, r->graph_runs);
        } else {
            rec_str_as(w, "graph_us", cell, NULL, "%10s ", "-");
            if (r->graph_error[0])
                rec_str(w, "graph_error", NULL, r->graph_error);
        }
        rec_int(w, "reps", NULL, r->reps);
        rec_str(w, "mode", NULL, r->wall_us_per_op > 0 ? "stream" : "sync");
        if (r->wall_us_per_op > 0)
            rec_double(w, "stream_wall_us_per_op", NULL, r->wall_us_per_op);
        rec_double_as(w, "bytes", cell, r->bytes, "%9.1f ", r->bytes / MIB);
        rec_double_as(w, "gbps", cell, gbps, "%7.2f ", gbps);
        rec_double_as(w, "copy_share", cell, copy_gbps > 0 ? gbps / copy_gbps : 0.0, "%6.0f%% ",
                      copy_gbps > 0 ? 100.0 * gbps / copy_gbps : 0.0);
        rec_int_as(w, "buffer_sets", cell, r->sets, "%4d", r->sets);
        if (c->spec->op == VT_OP_MATMUL) {
            /* the arithmetic rate, 2 n m k flops a run (prefill shapes are compute-bound) */
            double tflops = 2.0 * (double)bench_key(c, "n") * (double)bench_key(c, "m") * (double)bench_key(c, "k") /
                            r->median_us * 1e-6;
            rec_double_as(w, "tflops", cell, tflops, " %8.2f TFLOP/s", tflops);
        }
    }
    rec_int(w, "rounds", NULL, r->rounds);
    if (pr)
        write_peer(w, c, r, pr, shape, copy_gbps);
    rec_row_end(w);
}

/* `--op Launch`: the per-op cost of a stream of tiny ops on backend, enqueued
 * and replayed from a graph, as microseconds per op (median and min of reps). */
static int bench_launch(const char *backend, int reps, int warmup, bool json)
{
    vt_registry *reg;
    if (!vtctl_open(&reg))
        return VTCTL_EXIT_REFUSED;
    vt_device *dev = NULL;
    char spec_buf[160];
    snprintf(spec_buf, sizeof spec_buf, "%s%s", backend, strchr(backend, ':') ? "" : ":0");
    double *enq = calloc((size_t)reps, sizeof *enq), *graph = calloc((size_t)reps, sizeof *graph);
    vt_status st = enq && graph ? vt_registry_find_device(reg, spec_buf, &dev) : VT_E_NO_MEMORY;
    if (st == VT_OK)
        st = bench_launch_time(dev, reps, warmup, enq, graph);
    if (st != VT_OK) {
        fprintf(stderr, "vtctl bench --op Launch: %s: %s\n", vt_status_name(st), vt_last_error());
    } else {
        double enq_min, graph_min, enq_med = bench_median(enq, reps, &enq_min);
        double graph_med = bench_median(graph, reps, &graph_min);
        json_writer w;
        rec_writer r;
        rec_start(&r, &w, json, 0, 0);
        rec_object_begin(&r, NULL, NULL);
        rec_str(&r, "device", NULL, vt_device_id(dev));
        rec_str(&r, "op", NULL, "Launch");
        rec_int_as(&r, "ops_per_stream", "", BENCH_LAUNCH_OPS,
                   "vtctl bench --op Launch on %s: %d x Scale f32 [1] per stream, median (min) of %d streams",
                   vt_device_id(dev), BENCH_LAUNCH_OPS, reps);
        rec_int(&r, "reps", NULL, reps);
        rec_text_layout(&r, 2, 21);
        rec_double_as(&r, "enqueue_us_per_op", "enqueued:", enq_med, "%8.3f us/op (%.3f)", enq_med, enq_min);
        rec_double(&r, "enqueue_us_per_op_min", NULL, enq_min);
        rec_double_as(&r, "graph_us_per_op", "replayed from graph:", graph_med, "%8.3f us/op (%.3f)", graph_med,
                      graph_min);
        rec_double(&r, "graph_us_per_op_min", NULL, graph_min);
        rec_object_end(&r, false);
        rec_finish(&r);
    }
    free(enq);
    free(graph);
    vt_registry_close(reg);
    return st == VT_OK ? VTCTL_EXIT_OK : VTCTL_EXIT_REFUSED;
}

int vtctl_cmd_bench(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},         {"backend", required_argument, NULL, 'b'},
        {"op", required_argument, NULL, 'o'},     {"shape", required_argument, NULL, 's'},
        {"wtype", required_argument, NULL, 'w'},  {"reps", required_argument, NULL, 'r'},
        {"warmup", required_argument, NULL, 'u'}, {"peer", required_argument, NULL, 'P'},
        {"rounds", required_argument, NULL, 'R'}, {"sync", no_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},         {0}};
    bool json = false, sync_mode = false;
    const char *backend = "cpu", *op_name = NULL, *shape = NULL, *wtypes = NULL, *peer = NULL;
    int reps = 21, warmup = 3, rounds = 1, c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case 'P': peer = optarg; break;
        case 'S': sync_mode = true; break;
        case 'b': backend = optarg; break;
        case 'o': op_name = optarg; break;
        case 's': shape = optarg; break;
        case 'w': wtypes = optarg; break;
        case 'r':
        case 'u':
        case 'R': {
            int64_t v = 0;
            const char *name = c == 'r' ? "reps" : c == 'u' ? "warmup" : "rounds";
            if (!vt_parse_i64(optarg, c == 'u' ? 0 : 1, c == 'R' ? 99 : 100000, &v))
                return vtctl_usage_error("bench", "--%s wants a count%s, got '%s'", name,
                                         c == 'R' ? " from 1 to 99" : "", optarg);
            *(c == 'r' ? &reps : c == 'u' ? &warmup : &rounds) = (int)v;
            break;
        }
        case 'h': usage(stdout); return VTCTL_EXIT_OK;
        default: return vtctl_usage_error("bench", "unknown option or missing value '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc)
        return vtctl_usage_error("bench", "unexpected argument '%s'", argv[optind]);

    /* The cases: one op (or MatMul by default) times its wtypes. */
    const op_spec *spec = spec_of(VT_OP_MATMUL);
    if (op_name && !strcasecmp(op_name, "Launch")) {
        if (shape || wtypes || peer || rounds > 1 || sync_mode)
            return vtctl_usage_error("bench", "--op Launch takes no --shape, --wtype, --peer, --rounds or --sync");
        return bench_launch(backend, reps, warmup, json);
    }
    if (op_name) {
        vt_op op = vt_op_from_name(op_name);
        if (op == VT_OP_NONE)
            return vtctl_usage_error("bench", "no op named '%s' in the catalogue", op_name);
        if (!(spec = spec_of(op)))
            return vtctl_usage_error("bench", "bench has no plan for %s (it times the ops of vtctl bench --help)",
                                     vt_op_name(op));
    }
    bench_case cases[MAX_CASES];
    int n_cases = 0;
    char list[512], err[256];
    snprintf(list, sizeof list, "%s", wtypes ? wtypes : spec->default_wtypes);
    for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        vt_dtype t;
        if (!vt_dtype_from_name(tok, &t))
            return vtctl_usage_error("bench", "unknown wtype '%s'", tok);
        if (!wtype_fits(spec->op, t))
            return vtctl_usage_error("bench", "%s has no signature with %s", vt_op_name(spec->op), tok);
        if (n_cases == MAX_CASES)
            return vtctl_usage_error("bench", "at most %d wtypes", MAX_CASES);
        bench_case *bc = &cases[n_cases++];
        bc->spec = spec;
        bc->wtype = t;
        for (int k = 0; k < MAX_SHAPE_KEYS; k++)
            bc->v[k] = spec->keys[k].value;
        if (shape && !apply_shape(bc, shape, err, sizeof err))
            return vtctl_usage_error("bench", "%s", err);
        case_plan plan;
        if (!plan_case(bc, &plan, err, sizeof err))
            return vtctl_usage_error("bench", "%s: %s", vt_op_name(spec->op), err);
        if (!plan_bounded(&plan))
            return vtctl_usage_error("bench", "%s %s: the shape's tensors would exceed %llu GiB (or overflow 64 bits)",
                                     vt_op_name(spec->op), vt_dtype_name(bc->wtype),
                                     (unsigned long long)(MAX_SET_BYTES >> 30));
    }
    if (!n_cases)
        return vtctl_usage_error("bench", "--wtype names no type");

    vt_registry *reg;
    if (!vtctl_open(&reg))
        return VTCTL_EXIT_REFUSED;
    vt_device *dev = NULL;
    char spec_buf[160];
    snprintf(spec_buf, sizeof spec_buf, "%s%s", backend, strchr(backend, ':') ? "" : ":0");
    if (vt_registry_find_device(reg, spec_buf, &dev) != VT_OK) {
        fprintf(stderr, "vtctl bench: %s\n", vt_last_error());
        vt_registry_close(reg);
        return VTCTL_EXIT_REFUSED;
    }
    /* the peer's backend: its CPU for ours, else its CUDA device of our index */
    char peer_backend[32] = "CPU";
    if (strncmp(vt_device_id(dev), "cpu:", 4) != 0) {
        const char *colon = strchr(vt_device_id(dev), ':');
        snprintf(peer_backend, sizeof peer_backend, "CUDA%s", colon ? colon + 1 : "0");
    }
    vt_device_caps caps = VT_DEVICE_CAPS_INIT;
    if (vt_device_probe(dev, &caps) != VT_OK) {
        fprintf(stderr, "vtctl bench: probing %s: %s\n", vt_device_id(dev), vt_last_error());
        vt_registry_close(reg);
        return VTCTL_EXIT_REFUSED;
    }
    uint64_t llc = host_llc_bytes(), working = 4 * llc > MIN_WORKING ? 4 * llc : MIN_WORKING;
    /* The threads the device's kernels run on, as the device reports them
     * (the cpu backend's pool; 0 for a device that does not say). */
    const uint32_t threads = caps.host_threads;

    /* The copy bandwidth first, the same way. */
    bench_case copy = {spec_of(VT_OP_COPY), VT_F32, {(int64_t)(COPY_BYTES / 4)}};
    bench_result cr;
    /* the reference keeps its own repetitions: --reps times the cases only */
    run_case(dev, &copy, COPY_REPS, COPY_WARMUP, sync_mode, working, caps.memory_free, &cr);
    cr.rounds = 1;
    double copy_gbps = cr.status == VT_OK ? cr.bytes / cr.median_us * 1e-3 : 0.0;

    json_writer w;
    rec_writer rw;
    rec_start(&rw, &w, json, 0, 0);
    rec_object_begin(&rw, NULL, NULL);
    char thr[40] = "";
    if (threads)
        snprintf(thr, sizeof thr, ", %u host threads", threads);
    rec_str_as(&rw, "device", "", vt_device_id(dev), "vtctl bench on %s (%s, %s, %u compute units%s)",
               vt_device_id(dev), caps.name, caps.arch, caps.compute_units, thr);
    rec_str(&rw, "name", NULL, caps.name);
    rec_str(&rw, "arch", NULL, caps.arch);
    rec_uint(&rw, "compute_units", NULL, caps.compute_units);
    rec_uint(&rw, "host_threads", NULL, threads);
    rec_str_as(&rw, "mode", "", sync_mode ? "sync" : "stream",
               "median of %d runs after %d warm-up runs (%s); inputs rotate over >= %.0f MiB", reps, warmup,
               sync_mode ? "--sync: vt_op_run and a fence read each"
                         : "stream: enqueued, an event after each, one wait",
               (double)working / MIB);
    rec_uint(&rw, "working_set_bytes", NULL, working);
    write_result(&rw, "copy", false, &copy, &cr, copy_gbps, NULL);
    if (cr.status == VT_OK)
        rec_text(&rw, "copy bandwidth: Copy f32->f32 %.0f MiB: median %.1f us, %.2f GB/s (read + write)\n",
                 (double)COPY_BYTES / MIB, cr.median_us, copy_gbps);
    else
        rec_text(&rw, "copy bandwidth: unavailable: %s\n", cr.error);
    if (rounds > 1)
        rec_text(&rw, "each row: the median over %d rounds%s\n", rounds, peer ? ", vt and the peer alternating" : "");
    if (peer)
        rec_text(&rw, "peer rows: %s perf -b %s -o MUL_MAT on the same shape (its own inputs and threads)\n", peer,
                 peer_backend);
    rec_text(&rw, "  %-16s %-7s %-28s %10s %10s %10s %9s %7s %7s %4s\n", "OP", "WTYPE", "SHAPE", "MEDIAN_US", "MIN_US",
             "GRAPH_US", "MB", "GB/S", "%COPY", "SETS");
    rec_text_layout(&rw, 2, 0);
    rec_array_begin(&rw, "results");
    int failed = 0;
    for (int i = 0; i < n_cases; i++) {
        const bench_case *bc = &cases[i];
        const bool with_peer = peer && bc->spec->op == VT_OP_MATMUL;
        bench_result r;
        peer_row pr = {.ok = false, .error = "not measured"};
        double vt_us[99], peer_us[99], min_us = 0;
        int n_vt = 0, n_peer = 0;
        for (int round = 0; round < rounds; round++) {
            run_case(dev, bc, reps, warmup, sync_mode, working, caps.memory_free, &r);
            if (r.status != VT_OK)
                break;
            min_us = n_vt == 0 || r.min_us < min_us ? r.min_us : min_us;
            vt_us[n_vt++] = r.median_us;
            if (!with_peer)
                continue;
            bench_peer_result p1;
            bench_peer_matmul(peer, peer_backend, bc->wtype, bench_key(bc, "m"), bench_key(bc, "n"), bench_key(bc, "k"),
                              &p1);
            if (!p1.ok) {
                snprintf(pr.error, sizeof pr.error, "%s", p1.error);
                n_peer = -1;
                break;
            }
            peer_us[n_peer++] = p1.us;
            pr.runs = p1.runs;
        }
        if (r.status == VT_OK) {
            double ignored;
            r.median_us = bench_median(vt_us, n_vt, &ignored);
            r.min_us = min_us;
            r.rounds = n_vt;
        }
        if (with_peer && n_peer > 0) {
            double ignored;
            pr.ok = true;
            pr.median_us = bench_median(peer_us, n_peer, &ignored);
            pr.rounds = n_peer;
        }
        failed |= r.status != VT_OK || (with_peer && r.status == VT_OK && !pr.ok);
        write_result(&rw, NULL, true, bc, &r, copy_gbps, with_peer && r.status == VT_OK ? &pr : NULL);
        fflush(stdout);
    }
    rec_array_end(&rw);
    rec_object_end(&rw, false);
    rec_finish(&rw);
    vt_registry_close(reg);
    return failed ? VTCTL_EXIT_REFUSED : VTCTL_EXIT_OK;
}
