/* test_rocm_queue.c - the rocm plugin's version-2 members, called through
 * its vtable: enqueue returns before the work is done (a long queue of
 * MatMuls, then Argmax, an async read into pinned memory and an event that
 * is not ready when the host gets control back, and ids that arrive
 * right), data errors found on the device surface by name at the next sync
 * point (queue or event), a graph replays a step with zero host syncs and
 * the results of direct runs, and accepts refuses the kernel limits.
 *
 * Exit 77 (skip) without a rocm device (or when VT_TEST_BACKEND selects
 * another backend). */
#include "config.h"

#include <ltdl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vt/vt_backend.h>
#include <vt/vt_params.h>

#include "test_util.h"

typedef struct plugin {
    lt_dlhandle h;
    const vt_backend_iface *f;
    vt_backend_ctx *ctx;
    vt_backend_queue *q;
} plugin;

static char why[512];

/* Load vt_rocm.so where the registry finds it and start it (device 0). */
static void plugin_open(plugin *p)
{
    memset(p, 0, sizeof *p);
    vt_registry *reg = vt_test_open(NULL, NULL, 0);
    char path[4096] = "";
    for (size_t i = 0; i < vt_registry_backend_count(reg); i++) {
        vt_backend_info b;
        if (vt_registry_backend_info(reg, i, &b) == VT_OK && !strcmp(b.name, "rocm") && b.state == VT_BACKEND_READY)
            snprintf(path, sizeof path, "%s", b.path);
    }
    vt_registry_close(reg);
    ck_assert_msg(path[0], "the registry has a ready rocm backend");
    ck_assert_int_eq(lt_dlinit(), 0);
    p->h = lt_dlopen(path);
    ck_assert_msg(p->h != NULL, "lt_dlopen %s: %s", path, lt_dlerror());
    vt_plugin_entry_fn entry = (vt_plugin_entry_fn)(uintptr_t)lt_dlsym(p->h, VT_PLUGIN_ENTRY_SYMBOL);
    ck_assert_ptr_nonnull(entry);
    p->f = entry();
    ck_assert(VT_IFACE_HAS(p->f, queue_create) && VT_IFACE_HAS(p->f, graph_launch) && VT_IFACE_HAS(p->f, accepts));
    ck_assert_int_eq(p->f->init(&p->ctx, why, sizeof why), VT_OK);
    ck_assert_int_gt(p->f->device_count(p->ctx, why, sizeof why), 0);
    ck_assert_msg(p->f->queue_create(p->ctx, 0, &p->q, why, sizeof why) == VT_OK, "queue_create: %s", why);
}

static void plugin_close(plugin *p)
{
    p->f->queue_destroy(p->ctx, 0, p->q);
    p->f->fini(p->ctx);
    lt_dlexit(); /* the module is resident (HIP cannot unload) */
}

static void *dalloc(plugin *p, uint64_t bytes)
{
    void *d = NULL;
    ck_assert_msg(p->f->alloc(p->ctx, 0, bytes, &d, why, sizeof why) == VT_OK, "alloc: %s", why);
    return d;
}

static void *halloc(plugin *p, uint64_t bytes)
{
    void *h = NULL;
    ck_assert_msg(p->f->host_alloc(p->ctx, 0, bytes, &h, why, sizeof why) == VT_OK, "host_alloc: %s", why);
    return h;
}

static vt_operand operand(void *data, vt_dtype t, int64_t d0, int64_t d1)
{
    vt_operand o;
    memset(&o, 0, sizeof o);
    o.data = data;
    o.dtype = t;
    o.ndim = d1 ? 2 : 1;
    o.shape[0] = d0;
    o.shape[1] = d1;
    int64_t n = d0 * (d1 ? d1 : 1);
    o.nbytes = (uint64_t)n * (t == VT_F16 ? 2 : 4);
    return o;
}

/* Enqueue op (sig) on p's queue with one output. */
static vt_status enqueue(plugin *p, vt_op op, vt_sig sig, const vt_operand *in, uint32_t n_in, vt_operand out)
{
    const vt_kernel *k = vt_kernel_find(p->f->kernels, p->f->n_kernels, op, sig);
    ck_assert_msg(k != NULL, "rocm has a kernel for %s", vt_op_name(op));
    vt_op_args a;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    a.op = op;
    a.n_in = n_in;
    a.n_out = 1;
    for (uint32_t i = 0; i < n_in; i++)
        a.in[i] = in[i];
    a.out[0] = out;
    a.queue = p->q;
    return p->f->enqueue(p->ctx, 0, k, &a, why, sizeof why);
}

static const vt_sig sig_mm_f16 = VT_SIG2(VT_F32, VT_F16);
static const vt_sig sig_mm_f32 = VT_SIG2(VT_F32, VT_F32);
static const vt_sig sig_argmax = VT_SIG1(VT_F32);
static const vt_sig sig_rows = VT_SIG3(VT_F32, VT_I32, VT_F32);

static uint64_t syncs(plugin *p)
{
    vt_backend_counters c;
    p->f->counters(p->ctx, 0, &c);
    return c.syncs;
}

static uint64_t launches(plugin *p)
{
    vt_backend_counters c;
    p->f->counters(p->ctx, 0, &c);
    return c.launches;
}

START_TEST(enqueue_returns_before_the_work_is_done)
{
    plugin p;
    plugin_open(&p);
    /* 200 decode MatMuls over a 256 MiB f16 weight: milliseconds of work. */
    const int64_t m = 16384, k = 8192, n_logits = 1000;
    void *w = dalloc(&p, (uint64_t)(m * k * 2)), *x = dalloc(&p, (uint64_t)k * 4), *y = dalloc(&p, (uint64_t)m * 4);
    float *hx = calloc((size_t)k, sizeof *hx);
    ck_assert_int_eq(p.f->write(p.ctx, 0, x, hx, (uint64_t)k * 4, why, sizeof why), VT_OK);
    free(hx);
    /* Logits for Argmax: two rows with known maxima, from pinned memory. */
    float *hl = halloc(&p, (uint64_t)(2 * n_logits) * 4);
    for (int64_t i = 0; i < 2 * n_logits; i++)
        hl[i] = (float)((i * 37) % 101) * 0.01f;
    hl[123] = 5.0f;
    hl[n_logits + 999] = 7.0f;
    void *logits = dalloc(&p, (uint64_t)(2 * n_logits) * 4), *ids = dalloc(&p, 8);
    int32_t *hids = halloc(&p, 8);
    hids[0] = hids[1] = -5;
    vt_backend_event *ev = NULL;
    ck_assert_int_eq(p.f->event_create(p.ctx, 0, &ev, why, sizeof why), VT_OK);
    ck_assert_int_eq(p.f->queue_sync(p.ctx, 0, p.q, NULL, why, sizeof why), VT_OK);

    vt_operand mm_in[2] = {operand(x, VT_F32, 1, k), operand(w, VT_F16, m, k)};
    vt_operand am_in[1] = {operand(logits, VT_F32, 2, n_logits)};
    /* Warm-up: the first launch of a kernel may load its module, and that
     * waits for the device (CUDA's lazy loading), once per process. */
    ck_assert_int_eq(p.f->write(p.ctx, 0, logits, hl, (uint64_t)(2 * n_logits) * 4, why, sizeof why), VT_OK);
    ck_assert_int_eq(enqueue(&p, VT_OP_MATMUL, sig_mm_f16, mm_in, 2, operand(y, VT_F32, 1, m)), VT_OK);
    ck_assert_int_eq(enqueue(&p, VT_OP_ARGMAX, sig_argmax, am_in, 1, operand(ids, VT_I32, 2, 0)), VT_OK);
    ck_assert_int_eq(p.f->queue_sync(p.ctx, 0, p.q, NULL, why, sizeof why), VT_OK);

    /* New maxima for the measured run (the warm-up left 123 and 999). */
    hl[123] = hl[n_logits + 999] = 0.0f;
    hl[456] = 9.0f;
    hl[n_logits + 7] = 8.0f;
    uint64_t s0 = syncs(&p), l0 = launches(&p);
    for (int i = 0; i < 200; i++)
        ck_assert_msg(enqueue(&p, VT_OP_MATMUL, sig_mm_f16, mm_in, 2, operand(y, VT_F32, 1, m)) == VT_OK, "%s", why);
    ck_assert_int_eq(p.f->write_async(p.ctx, 0, p.q, logits, 0, hl, (uint64_t)(2 * n_logits) * 4, why, sizeof why),
                     VT_OK);
    ck_assert_msg(enqueue(&p, VT_OP_ARGMAX, sig_argmax, am_in, 1, operand(ids, VT_I32, 2, 0)) == VT_OK, "%s", why);
    ck_assert_int_eq(p.f->read_async(p.ctx, 0, p.q, hids, ids, 0, 8, why, sizeof why), VT_OK);
    ck_assert_int_eq(p.f->event_record(p.ctx, 0, p.q, ev, why, sizeof why), VT_OK);
    /* The host has control back while the device is still busy. */
    ck_assert_int_eq(p.f->event_query(p.ctx, 0, ev), VT_E_NOT_READY);
    ck_assert_uint_eq(syncs(&p), s0);
    ck_assert_uint_eq(launches(&p) - l0, 201);
    uint32_t failed = 99;
    ck_assert_msg(p.f->event_sync(p.ctx, 0, ev, &failed, why, sizeof why) == VT_OK, "%s", why);
    ck_assert_int_eq(p.f->event_query(p.ctx, 0, ev), VT_OK);
    ck_assert_int_eq(hids[0], 456);
    ck_assert_int_eq(hids[1], 7);
    ck_assert_uint_eq(syncs(&p), s0 + 1);

    p.f->event_destroy(p.ctx, 0, ev);
    p.f->host_free(p.ctx, 0, hl);
    p.f->host_free(p.ctx, 0, hids);
    p.f->release(p.ctx, 0, w);
    p.f->release(p.ctx, 0, x);
    p.f->release(p.ctx, 0, y);
    p.f->release(p.ctx, 0, logits);
    p.f->release(p.ctx, 0, ids);
    plugin_close(&p);
}
END_TEST

/* Enqueue GetRows of a [3, 4] table with idx on p's queue. */
static vt_status get_rows(plugin *p, void *table, void *idx, int64_t n_idx, void *out)
{
    vt_operand in[2] = {operand(table, VT_F32, 3, 4), operand(idx, VT_I32, n_idx, 0)};
    return enqueue(p, VT_OP_GET_ROWS, sig_rows, in, 2, operand(out, VT_F32, n_idx, 4));
}

START_TEST(device_errors_surface_at_the_sync_by_name)
{
    plugin p;
    plugin_open(&p);
    float tab[12];
    for (int i = 0; i < 12; i++)
        tab[i] = (float)i;
    void *table = dalloc(&p, sizeof tab), *idx = dalloc(&p, 8), *out = dalloc(&p, 32), *nan = dalloc(&p, 40),
         *am = dalloc(&p, 8);
    ck_assert_int_eq(p.f->write(p.ctx, 0, table, tab, sizeof tab, why, sizeof why), VT_OK);
    int32_t bad[2] = {0, 7}, good[2] = {2, 1};
    ck_assert_int_eq(p.f->write(p.ctx, 0, idx, bad, sizeof bad, why, sizeof why), VT_OK);
    float hn[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    hn[5] = NAN; /* row 1, index 0 of a [2, 5] input, and a later one */
    hn[9] = NAN;
    ck_assert_int_eq(p.f->write(p.ctx, 0, nan, hn, sizeof hn, why, sizeof why), VT_OK);

    /* The bad call is accepted; the sync names it; the next sync is clean. */
    ck_assert_msg(get_rows(&p, table, idx, 2, out) == VT_OK, "%s", why);
    uint32_t failed = 0;
    why[0] = 0;
    ck_assert_int_eq(p.f->queue_sync(p.ctx, 0, p.q, &failed, why, sizeof why), VT_E_INVALID_ARG);
    ck_assert_str_eq(why, "idx[1] = 7 is outside [0, 3)");
    ck_assert_uint_eq(failed, VT_OP_GET_ROWS);
    ck_assert_int_eq(p.f->queue_sync(p.ctx, 0, p.q, &failed, why, sizeof why), VT_OK);

    /* The first error of the queue wins; later good work still runs. */
    vt_operand am_in[1] = {operand(nan, VT_F32, 2, 5)};
    ck_assert_int_eq(enqueue(&p, VT_OP_ARGMAX, sig_argmax, am_in, 1, operand(am, VT_I32, 2, 0)), VT_OK);
    ck_assert_int_eq(get_rows(&p, table, idx, 2, out), VT_OK);
    ck_assert_int_eq(p.f->queue_sync(p.ctx, 0, p.q, &failed, why, sizeof why), VT_E_INVALID_ARG);
    ck_assert_str_eq(why, "x row 1 has NaN at index 0");
    ck_assert_uint_eq(failed, VT_OP_ARGMAX);

    /* An event recorded after a bad call names it; the queue's sync then
     * does not report it twice. */
    ck_assert_int_eq(p.f->write(p.ctx, 0, idx, bad, sizeof bad, why, sizeof why), VT_OK);
    vt_backend_event *ev = NULL;
    ck_assert_int_eq(p.f->event_create(p.ctx, 0, &ev, why, sizeof why), VT_OK);
    ck_assert_int_eq(get_rows(&p, table, idx, 2, out), VT_OK);
    ck_assert_int_eq(p.f->event_record(p.ctx, 0, p.q, ev, why, sizeof why), VT_OK);
    ck_assert_int_eq(p.f->event_sync(p.ctx, 0, ev, &failed, why, sizeof why), VT_E_INVALID_ARG);
    ck_assert_str_eq(why, "idx[1] = 7 is outside [0, 3)");
    ck_assert_int_eq(p.f->queue_sync(p.ctx, 0, p.q, &failed, why, sizeof why), VT_OK);

    /* An event outlives the queue it was recorded on and still names the
     * error (the queue's memory is gone, not the event's copy). */
    vt_backend_queue *q2 = NULL;
    ck_assert_int_eq(p.f->queue_create(p.ctx, 0, &q2, why, sizeof why), VT_OK);
    vt_backend_queue *q1 = p.q;
    p.q = q2;
    ck_assert_int_eq(p.f->write(p.ctx, 0, idx, bad, sizeof bad, why, sizeof why), VT_OK);
    ck_assert_int_eq(get_rows(&p, table, idx, 2, out), VT_OK);
    ck_assert_int_eq(p.f->event_record(p.ctx, 0, q2, ev, why, sizeof why), VT_OK);
    p.q = q1;
    p.f->queue_destroy(p.ctx, 0, q2);
    ck_assert_int_eq(p.f->event_sync(p.ctx, 0, ev, &failed, why, sizeof why), VT_E_INVALID_ARG);
    ck_assert_str_eq(why, "idx[1] = 7 is outside [0, 3)");

    /* A good call after the errors is right. */
    ck_assert_int_eq(p.f->write(p.ctx, 0, idx, good, sizeof good, why, sizeof why), VT_OK);
    ck_assert_int_eq(get_rows(&p, table, idx, 2, out), VT_OK);
    ck_assert_int_eq(p.f->queue_sync(p.ctx, 0, p.q, &failed, why, sizeof why), VT_OK);
    float got[8];
    ck_assert_int_eq(p.f->read(p.ctx, 0, got, out, sizeof got, why, sizeof why), VT_OK);
    for (int j = 0; j < 4; j++) {
        ck_assert_float_eq(got[j], tab[8 + j]);
        ck_assert_float_eq(got[4 + j], tab[4 + j]);
    }

    p.f->event_destroy(p.ctx, 0, ev);
    p.f->release(p.ctx, 0, table);
    p.f->release(p.ctx, 0, idx);
    p.f->release(p.ctx, 0, out);
    p.f->release(p.ctx, 0, nan);
    p.f->release(p.ctx, 0, am);
    plugin_close(&p);
}
END_TEST

/* An operand of up to 3 dims (d1, d2 0 when absent) over fresh device memory. */
static vt_operand buf3(plugin *p, vt_dtype t, int64_t d0, int64_t d1, int64_t d2, void **keep)
{
    vt_operand o;
    memset(&o, 0, sizeof o);
    o.dtype = t;
    o.ndim = d2 ? 3 : d1 ? 2 : 1;
    o.shape[0] = d0;
    o.shape[1] = d1;
    o.shape[2] = d2;
    int64_t n = d0 * (d1 ? d1 : 1) * (d2 ? d2 : 1);
    o.nbytes = (uint64_t)n * (t == VT_I64 ? 8 : 4);
    o.data = dalloc(p, o.nbytes);
    void *zero = calloc(1, (size_t)o.nbytes);
    ck_assert_int_eq(p->f->write(p->ctx, 0, o.data, zero, o.nbytes, why, sizeof why), VT_OK);
    free(zero);
    *keep = o.data;
    return o;
}

/* Queue op on p's queue with these operands (no sync). */
static vt_status enqueue_op(plugin *p, vt_op op, vt_sig sig, const vt_operand *in, uint32_t n_in, const vt_operand *out,
                            uint32_t n_out, const void *params, size_t params_size)
{
    const vt_kernel *k = vt_kernel_find(p->f->kernels, p->f->n_kernels, op, sig);
    ck_assert_ptr_nonnull(k);
    vt_op_args a;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    a.op = op;
    a.n_in = n_in;
    a.n_out = n_out;
    for (uint32_t i = 0; i < n_in; i++)
        a.in[i] = in[i];
    for (uint32_t i = 0; i < n_out; i++)
        a.out[i] = out[i];
    a.params = params;
    a.params_size = params_size;
    a.queue = p->q;
    return p->f->enqueue(p->ctx, 0, k, &a, why, sizeof why);
}

/* Run op on p's queue; the sync must fail with exactly want (op id too). */
static void expect_device_error(plugin *p, vt_op op, vt_sig sig, const vt_operand *in, uint32_t n_in,
                                const vt_operand *out, uint32_t n_out, const void *params, size_t params_size,
                                const char *want)
{
    ck_assert_msg(enqueue_op(p, op, sig, in, n_in, out, n_out, params, params_size) == VT_OK, "%s: %s", vt_op_name(op),
                  why);
    uint32_t failed = 0;
    why[0] = 0;
    ck_assert_int_eq(p->f->queue_sync(p->ctx, 0, p->q, &failed, why, sizeof why), VT_E_INVALID_ARG);
    ck_assert_str_eq(why, want);
    ck_assert_uint_eq(failed, op);
}

START_TEST(each_device_check_names_the_bad_value)
{
    plugin p;
    plugin_open(&p);
    void *keep[24];
    /* KvCacheWrite: k, v [T=3, H=2, d=4], slots [3]; caches [N=4, 2, 4]. */
    vt_operand kv_in[3] = {buf3(&p, VT_F32, 3, 2, 4, &keep[0]), buf3(&p, VT_F32, 3, 2, 4, &keep[1]),
                           buf3(&p, VT_I32, 3, 0, 0, &keep[2])};
    vt_operand kv_out[2] = {buf3(&p, VT_F32, 4, 2, 4, &keep[3]), buf3(&p, VT_F32, 4, 2, 4, &keep[4])};
    float ones[24];
    for (int i = 0; i < 24; i++)
        ones[i] = 1.0f;
    ck_assert_int_eq(p.f->write(p.ctx, 0, kv_in[0].data, ones, sizeof ones, why, sizeof why), VT_OK);
    int32_t slots[3] = {0, 5, -1};
    ck_assert_int_eq(p.f->write(p.ctx, 0, kv_in[2].data, slots, sizeof slots, why, sizeof why), VT_OK);
    expect_device_error(&p, VT_OP_KV_CACHE_WRITE, (vt_sig)VT_SIG2(VT_F32, VT_F32), kv_in, 3, kv_out, 2, NULL, 0,
                        "slots[1] = 5 is outside [-1, 4)");

    /* CausalConv1dUpdate: x [B=3, D=2, T=1], w [2, W=4], no bias, slots
     * [3]; y [3, 2, 1], state [N=4, 2, 3]: a slot named twice. */
    vt_operand cv_in[4] = {buf3(&p, VT_F32, 3, 2, 1, &keep[5]),
                           buf3(&p, VT_F32, 2, 4, 0, &keep[6]),
                           {0},
                           buf3(&p, VT_I32, 3, 0, 0, &keep[7])};
    vt_operand cv_out[2] = {buf3(&p, VT_F32, 3, 2, 1, &keep[8]), buf3(&p, VT_F32, 4, 2, 3, &keep[9])};
    int32_t cs[3] = {3, 1, 3};
    ck_assert_int_eq(p.f->write(p.ctx, 0, cv_in[3].data, cs, sizeof cs, why, sizeof why), VT_OK);
    vt_params_conv pc = {1};
    expect_device_error(&p, VT_OP_CAUSAL_CONV1D_UPDATE, (vt_sig)VT_SIG1(VT_F32), cv_in, 4, cv_out, 2, &pc, sizeof pc,
                        "slots[0] and slots[2] both name slot 3");

    /* IndexSelect over dim 0 of src [3, 2] with i64 idx [2]. */
    vt_operand is_in[2] = {buf3(&p, VT_F32, 3, 2, 0, &keep[10]), buf3(&p, VT_I64, 2, 0, 0, &keep[11])};
    vt_operand is_out[1] = {buf3(&p, VT_F32, 2, 2, 0, &keep[12])};
    const int nk = 13; /* the operands above use keep[0..13) */
    int64_t iv[2] = {2, -1};
    ck_assert_int_eq(p.f->write(p.ctx, 0, is_in[1].data, iv, sizeof iv, why, sizeof why), VT_OK);
    vt_params_index_select pi = {0};
    expect_device_error(&p, VT_OP_INDEX_SELECT, (vt_sig)VT_SIG2(VT_F32, VT_I64), is_in, 2, is_out, 1, &pi, sizeof pi,
                        "idx[1] = -1 is outside [0, 3) of src dim 0");

    /* A bad KvCacheWrite writes no row, not even the good slot 0's. */
    float cache[32];
    ck_assert_int_eq(p.f->read(p.ctx, 0, cache, kv_out[0].data, sizeof cache, why, sizeof why), VT_OK);
    for (int i = 0; i < 32; i++)
        ck_assert_float_eq(cache[i], 0.0f);
    for (int i = 0; i < nk; i++)
        p.f->release(p.ctx, 0, keep[i]);
    plugin_close(&p);
}
END_TEST

/* KvCacheWrite has two paths on the rocm backend: up to
 * VT_ROCM_KV_FUSED_MAX_T tokens one kernel checks and writes K and V; more
 * tokens go through the check kernel and two writes. Both name the same
 * offence and write no row of a bad call; both write the good calls. */
START_TEST(kv_cache_write_checks_on_both_paths)
{
    plugin p;
    plugin_open(&p);
    const int64_t Ts[2] = {3, 70}, N = 80, H = 2, d = 4;
    for (int c = 0; c < 2; c++) {
        const int64_t T = Ts[c];
        void *keep[5];
        vt_operand in[3] = {buf3(&p, VT_F32, T, H, d, &keep[0]), buf3(&p, VT_F32, T, H, d, &keep[1]),
                            buf3(&p, VT_I32, T, 0, 0, &keep[2])};
        vt_operand out[2] = {buf3(&p, VT_F32, N, H, d, &keep[3]), buf3(&p, VT_F32, N, H, d, &keep[4])};
        float kv[70 * 8], cache[80 * 8];
        int32_t slots[70];
        for (int64_t i = 0; i < T * H * d; i++)
            kv[i] = (float)(i + 1);
        for (int64_t t = 0; t < T; t++)
            slots[t] = (int32_t)(N - 1 - t); /* rows written backwards */
        size_t kvb = (size_t)(T * H * d) * 4, sb = (size_t)T * 4, cb = sizeof cache;
        ck_assert_int_eq(p.f->write(p.ctx, 0, in[0].data, kv, kvb, why, sizeof why), VT_OK);
        ck_assert_int_eq(p.f->write(p.ctx, 0, in[1].data, kv, kvb, why, sizeof why), VT_OK);
        /* A bad slot in the last row: nothing written, the offence named. */
        slots[T - 1] = 99;
        ck_assert_int_eq(p.f->write(p.ctx, 0, in[2].data, slots, sb, why, sizeof why), VT_OK);
        char want[64];
        snprintf(want, sizeof want, "slots[%lld] = 99 is outside [-1, 80)", (long long)(T - 1));
        expect_device_error(&p, VT_OP_KV_CACHE_WRITE, (vt_sig)VT_SIG2(VT_F32, VT_F32), in, 3, out, 2, NULL, 0, want);
        ck_assert_int_eq(p.f->read(p.ctx, 0, cache, out[1].data, cb, why, sizeof why), VT_OK);
        for (int64_t i = 0; i < N * H * d; i++)
            ck_assert_msg(cache[i] == 0.0f, "T=%lld: bad call wrote v_cache[%lld]", (long long)T, (long long)i);
        /* Valid slots (the last token skipped with -1): rows land in place. */
        slots[T - 1] = -1;
        ck_assert_int_eq(p.f->write(p.ctx, 0, in[2].data, slots, sb, why, sizeof why), VT_OK);
        ck_assert_msg(enqueue_op(&p, VT_OP_KV_CACHE_WRITE, (vt_sig)VT_SIG2(VT_F32, VT_F32), in, 3, out, 2, NULL, 0) ==
                          VT_OK,
                      "%s", why);
        ck_assert_int_eq(p.f->queue_sync(p.ctx, 0, p.q, NULL, why, sizeof why), VT_OK);
        for (int o = 0; o < 2; o++) {
            ck_assert_int_eq(p.f->read(p.ctx, 0, cache, out[o].data, cb, why, sizeof why), VT_OK);
            for (int64_t t = 0; t < T; t++)
                for (int64_t i = 0; i < H * d; i++) {
                    float want_v = t == T - 1 ? 0.0f : kv[t * H * d + i];
                    ck_assert_msg(cache[(N - 1 - t) * H * d + i] == want_v, "T=%lld cache %d token %lld [%lld]: %g",
                                  (long long)T, o, (long long)t, (long long)i, cache[(N - 1 - t) * H * d + i]);
                }
        }
        for (int i = 0; i < 5; i++)
            p.f->release(p.ctx, 0, keep[i]);
    }
    plugin_close(&p);
}
END_TEST

/* One decode-like step: h = table[idx], logits = h W^T, id = argmax. */
typedef struct step {
    void *table, *idx, *h, *w, *logits, *id;
} step;

enum { V = 16, D = 64, M = 40, STEPS = 8 };

static void enqueue_step(plugin *p, const step *s)
{
    vt_operand r_in[2] = {operand(s->table, VT_F32, V, D), operand(s->idx, VT_I32, 1, 0)};
    ck_assert_msg(enqueue(p, VT_OP_GET_ROWS, sig_rows, r_in, 2, operand(s->h, VT_F32, 1, D)) == VT_OK, "%s", why);
    vt_operand m_in[2] = {operand(s->h, VT_F32, 1, D), operand(s->w, VT_F32, M, D)};
    ck_assert_msg(enqueue(p, VT_OP_MATMUL, sig_mm_f32, m_in, 2, operand(s->logits, VT_F32, 1, M)) == VT_OK, "%s", why);
    vt_operand a_in[1] = {operand(s->logits, VT_F32, 1, M)};
    ck_assert_msg(enqueue(p, VT_OP_ARGMAX, sig_argmax, a_in, 1, operand(s->id, VT_I32, 1, 0)) == VT_OK, "%s", why);
}

START_TEST(graph_replays_a_step_without_host_syncs)
{
    plugin p;
    plugin_open(&p);
    vt_rng r;
    vt_rng_init(&r, 91);
    float *ht = malloc(sizeof(float) * V * D), *hw = malloc(sizeof(float) * M * D);
    vt_rng_fill(&r, ht, V * D, -1, 1);
    vt_rng_fill(&r, hw, M * D, -1, 1);
    step s = {dalloc(&p, sizeof(float) * V * D), dalloc(&p, 4),     dalloc(&p, sizeof(float) * D),
              dalloc(&p, sizeof(float) * M * D), dalloc(&p, 4 * M), dalloc(&p, 4)};
    ck_assert_int_eq(p.f->write(p.ctx, 0, s.table, ht, sizeof(float) * V * D, why, sizeof why), VT_OK);
    ck_assert_int_eq(p.f->write(p.ctx, 0, s.w, hw, sizeof(float) * M * D, why, sizeof why), VT_OK);

    /* Direct runs: each step enqueued and synchronised. */
    int32_t want_id[STEPS];
    float want_logits[STEPS][M];
    for (int32_t t = 0; t < STEPS; t++) {
        int32_t tok = (t * 5 + 3) % V;
        ck_assert_int_eq(p.f->write(p.ctx, 0, s.idx, &tok, 4, why, sizeof why), VT_OK);
        enqueue_step(&p, &s);
        ck_assert_msg(p.f->queue_sync(p.ctx, 0, p.q, NULL, why, sizeof why) == VT_OK, "%s", why);
        ck_assert_int_eq(p.f->read(p.ctx, 0, &want_id[t], s.id, 4, why, sizeof why), VT_OK);
        ck_assert_int_eq(p.f->read(p.ctx, 0, want_logits[t], s.logits, 4 * M, why, sizeof why), VT_OK);
    }

    /* Record the step once. */
    vt_backend_graph *g = NULL;
    ck_assert_msg(p.f->graph_begin(p.ctx, 0, p.q, why, sizeof why) == VT_OK, "%s", why);
    enqueue_step(&p, &s);
    ck_assert_msg(p.f->graph_end(p.ctx, 0, p.q, &g, why, sizeof why) == VT_OK, "%s", why);

    /* Replay it: per-step token ids written by async copies from pinned
     * memory, results read back asynchronously; not one host sync. */
    int32_t *tok = halloc(&p, 4 * STEPS), *ids = halloc(&p, 4 * STEPS);
    float *logits = halloc(&p, sizeof(float) * M * STEPS);
    uint64_t s0 = syncs(&p), l0 = launches(&p);
    for (int32_t t = 0; t < STEPS; t++) {
        tok[t] = (t * 5 + 3) % V;
        ids[t] = -1;
        ck_assert_int_eq(p.f->write_async(p.ctx, 0, p.q, s.idx, 0, &tok[t], 4, why, sizeof why), VT_OK);
        ck_assert_msg(p.f->graph_launch(p.ctx, 0, p.q, g, why, sizeof why) == VT_OK, "%s", why);
        ck_assert_int_eq(p.f->read_async(p.ctx, 0, p.q, &ids[t], s.id, 0, 4, why, sizeof why), VT_OK);
        ck_assert_int_eq(p.f->read_async(p.ctx, 0, p.q, &logits[t * M], s.logits, 0, 4 * M, why, sizeof why), VT_OK);
    }
    ck_assert_uint_eq(syncs(&p), s0);
    ck_assert_uint_eq(launches(&p) - l0, STEPS);
    ck_assert_msg(p.f->queue_sync(p.ctx, 0, p.q, NULL, why, sizeof why) == VT_OK, "%s", why);
    ck_assert_uint_eq(syncs(&p), s0 + 1);
    for (int t = 0; t < STEPS; t++) {
        ck_assert_int_eq(ids[t], want_id[t]);
        ck_assert_mem_eq(&logits[t * M], want_logits[t], sizeof(float) * M);
    }

    /* A bad per-step value in a replay surfaces at the sync by name. */
    tok[0] = V + 4;
    uint32_t failed = 0;
    ck_assert_int_eq(p.f->write_async(p.ctx, 0, p.q, s.idx, 0, &tok[0], 4, why, sizeof why), VT_OK);
    ck_assert_int_eq(p.f->graph_launch(p.ctx, 0, p.q, g, why, sizeof why), VT_OK);
    ck_assert_int_eq(p.f->queue_sync(p.ctx, 0, p.q, &failed, why, sizeof why), VT_E_INVALID_ARG);
    ck_assert_str_eq(why, "idx[0] = 20 is outside [0, 16)");
    ck_assert_uint_eq(failed, VT_OP_GET_ROWS);

    p.f->graph_destroy(p.ctx, 0, g);
    p.f->host_free(p.ctx, 0, tok);
    p.f->host_free(p.ctx, 0, ids);
    p.f->host_free(p.ctx, 0, logits);
    void *bufs[] = {s.table, s.idx, s.h, s.w, s.logits, s.id};
    for (size_t i = 0; i < 6; i++)
        p.f->release(p.ctx, 0, bufs[i]);
    free(ht);
    free(hw);
    plugin_close(&p);
}
END_TEST

/* A device operand of ndim dims (shape), every element v (f32) or zero. */
static vt_operand bufn(plugin *p, vt_dtype t, int ndim, const int64_t *shape, float v, void **keep)
{
    vt_operand o;
    memset(&o, 0, sizeof o);
    o.dtype = t;
    o.ndim = (uint32_t)ndim;
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= (o.shape[i] = shape[i]);
    o.nbytes = (uint64_t)n * 4;
    o.data = dalloc(p, o.nbytes);
    float *h = malloc((size_t)o.nbytes);
    for (int64_t i = 0; i < n; i++)
        h[i] = t == VT_F32 ? v : 0.0f;
    ck_assert_int_eq(p->f->write(p->ctx, 0, o.data, h, o.nbytes, why, sizeof why), VT_OK);
    free(h);
    *keep = o.data;
    return o;
}

/* GatedDeltaRule checks its slots on two paths of the rocm backend: for
 * decode (dk = 128, few slots) the recurrence kernel checks them itself in
 * one launch; other heads (dk = 48 here) run a check kernel first. Both
 * name the same offence, write zero outputs and leave the whole state as
 * it was; a good call with a padding row runs (its output row zero). */
START_TEST(gated_delta_rule_checks_on_both_paths)
{
    plugin p;
    plugin_open(&p);
    struct {
        int per_token;
        int32_t slots[4], acc[2];
        const char *want;
    } bad[3] = {
        {0, {0, 5, 1}, {0}, "slots value 5 at 1 is outside [-1, 4)"},
        {0, {2, 1, 2}, {0}, "state slot 2 belongs to rows 0 and 2"},
        {1, {0, 1, 2, 3}, {1, 3}, "accepted[1] = 3 is outside [1, T=2]"},
    };
    const int64_t dks[2] = {128, 48}, N = 4;
    vt_params_gdn prm = {0};
    for (int path = 0; path < 2; path++)
        for (int c = 0; c < 4; c++) {
            const int good = c == 3, per_token = good ? 0 : bad[c].per_token;
            const int64_t dk = dks[path], B = per_token ? 2 : 3, T = per_token ? 2 : 1;
            void *keep[8];
            const int64_t sq[4] = {B, T, 1, dk}, sg[3] = {B, T, 1}, ss[2] = {B, T}, sst[4] = {N, 1, dk, dk};
            vt_operand in[7] = {bufn(&p, VT_F32, 4, sq, 1.0f, &keep[0]),
                                bufn(&p, VT_F32, 4, sq, 1.0f, &keep[1]),
                                bufn(&p, VT_F32, 4, sq, 1.0f, &keep[2]),
                                bufn(&p, VT_F32, 3, sg, 0.0f, &keep[3]),
                                bufn(&p, VT_F32, 3, sg, 1.0f, &keep[4]),
                                bufn(&p, VT_I32, per_token ? 2 : 1, ss, 0.0f, &keep[5]),
                                {0}};
            const int n_in = 7; /* accepted absent ({0}) with per-sequence slots */
            if (per_token) {
                in[6] = bufn(&p, VT_I32, 1, &B, 0.0f, &keep[6]);
                ck_assert_int_eq(p.f->write(p.ctx, 0, in[6].data, bad[c].acc, (size_t)B * 4, why, sizeof why), VT_OK);
            }
            void *state_keep = NULL;
            vt_operand out[2] = {bufn(&p, VT_F32, 4, sq, 7.0f, &keep[7]), bufn(&p, VT_F32, 4, sst, 1.0f, &state_keep)};
            const int32_t good_slots[3] = {0, -1, 1};
            ck_assert_int_eq(p.f->write(p.ctx, 0, in[5].data, good ? good_slots : bad[c].slots, (size_t)(B * T) * 4,
                                        why, sizeof why),
                             VT_OK);
            const vt_sig sig = (vt_sig)VT_SIG1(VT_F32);
            if (good) {
                ck_assert_msg(
                    enqueue_op(&p, VT_OP_GATED_DELTA_RULE, sig, in, (uint32_t)n_in, out, 2, &prm, sizeof prm) == VT_OK,
                    "%s", why);
                ck_assert_msg(p.f->queue_sync(p.ctx, 0, p.q, NULL, why, sizeof why) == VT_OK, "%s", why);
            } else {
                expect_device_error(&p, VT_OP_GATED_DELTA_RULE, sig, in, (uint32_t)n_in, out, 2, &prm, sizeof prm,
                                    bad[c].want);
            }
            const int64_t no = B * T * dk, ns = N * dk * dk;
            float *o = malloc((size_t)no * 4), *st = malloc((size_t)ns * 4);
            ck_assert_int_eq(p.f->read(p.ctx, 0, o, out[0].data, (size_t)no * 4, why, sizeof why), VT_OK);
            ck_assert_int_eq(p.f->read(p.ctx, 0, st, out[1].data, (size_t)ns * 4, why, sizeof why), VT_OK);
            for (int64_t i = 0; i < no; i++) {
                const bool zero = !good || (i / dk) == 1; /* a bad call, or the padding row */
                ck_assert_msg(zero ? o[i] == 0.0f : o[i] != 0.0f && isfinite(o[i]), "dk=%lld case %d o[%lld] = %g",
                              (long long)dk, c, (long long)i, o[i]);
            }
            for (int64_t i = 0; i < ns; i++) {
                const bool kept = !good || i / (dk * dk) >= 2; /* rows 0, 1 are the good call's */
                ck_assert_msg(kept ? st[i] == 1.0f : st[i] != 1.0f, "dk=%lld case %d state[%lld] = %g", (long long)dk,
                              c, (long long)i, st[i]);
            }
            free(o);
            free(st);
            for (int i = 0; i < 6; i++)
                p.f->release(p.ctx, 0, keep[i]);
            if (per_token)
                p.f->release(p.ctx, 0, keep[6]);
            p.f->release(p.ctx, 0, keep[7]);
            p.f->release(p.ctx, 0, state_keep);
        }
    plugin_close(&p);
}
END_TEST

START_TEST(accepts_refuses_kernel_limits_by_name)
{
    plugin p;
    plugin_open(&p);
    vt_op_args a;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    a.op = VT_OP_GATED_DELTA_RULE;
    a.n_in = 1;
    a.in[0] = operand(NULL, VT_F32, 1, 1);
    a.in[0].ndim = 4;
    a.in[0].shape[2] = 2;
    a.in[0].shape[3] = 512;
    const vt_kernel *k = vt_kernel_find(p.f->kernels, p.f->n_kernels, VT_OP_GATED_DELTA_RULE, (vt_sig)VT_SIG1(VT_F32));
    ck_assert_ptr_nonnull(k);
    ck_assert_int_eq(p.f->accepts(p.ctx, 0, k, &a, why, sizeof why), VT_E_OP_MISSING);
    ck_assert_str_eq(why, "GatedDeltaRule dk = 512 > 256");
    a.in[0].shape[3] = 128;
    ck_assert_int_eq(p.f->accepts(p.ctx, 0, k, &a, why, sizeof why), VT_OK);
    a.op = VT_OP_MOE_ROUTER;
    a.in[0] = operand(NULL, VT_F32, 4, 2048);
    k = vt_kernel_find(p.f->kernels, p.f->n_kernels, VT_OP_MOE_ROUTER, (vt_sig)VT_SIG1(VT_F32));
    ck_assert_ptr_nonnull(k);
    ck_assert_int_eq(p.f->accepts(p.ctx, 0, k, &a, why, sizeof why), VT_E_OP_MISSING);
    ck_assert_str_eq(why, "MoeRouter E = 2048 > 1024");
    plugin_close(&p);
}
END_TEST

int main(void)
{
    int gate = vt_test_backend_gate("rocm");
    if (gate != 0)
        return gate;
    vt_test_seed();
    Suite *s = suite_create("rocm-queue");
    TCase *tc = tcase_create("queue");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, enqueue_returns_before_the_work_is_done);
    tcase_add_test(tc, device_errors_surface_at_the_sync_by_name);
    tcase_add_test(tc, each_device_check_names_the_bad_value);
    tcase_add_test(tc, kv_cache_write_checks_on_both_paths);
    tcase_add_test(tc, gated_delta_rule_checks_on_both_paths);
    tcase_add_test(tc, graph_replays_a_step_without_host_syncs);
    tcase_add_test(tc, accepts_refuses_kernel_limits_by_name);
    suite_add_tcase(s, tc);
    return vt_test_run_suite(s);
}
