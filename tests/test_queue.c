/* test_queue.c - contract version 2: queues, events, async copies and
 * graphs on cpu (the core's synchronous fallback) and cuda-stub (deferred
 * queues: work runs when the host waits), a version-1 plugin built against
 * the frozen header, device errors named at the sync point, zero host
 * syncs inside a replayed step, sampled-token readback, views, shape-aware
 * resolution with accepts, and struct_size truncation of caps and stats. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#ifndef TEST_PLUGIN_DIR
#error "TEST_PLUGIN_DIR must be defined"
#endif

static const char *const devices[] = {"cpu:0", "cuda-stub:0"};

static vt_registry *open_reg(void)
{
    setenv("VT_CUDA_STUB_KERNELS", "1", 1);
    return vt_test_open(TEST_PLUGIN_DIR, "cpu,cuda-stub,test-v1", 0);
}

/* open_reg, and its device spec in *d. */
static vt_registry *open_on(const char *spec, vt_device **d)
{
    vt_registry *reg = open_reg();
    *d = vt_test_device(reg, spec);
    return reg;
}

static vt_tensor *mk(vt_device *d, vt_dtype t, uint32_t nd, int64_t a, int64_t b)
{
    int64_t shape[2] = {a, b};
    return vt_test_tensor(d, t, nd, shape, NULL);
}

static vt_device_stats stats(vt_device *d)
{
    return vt_test_stats(d);
}

/* Occurrences of needle in hay. */
static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static vt_status scale(vt_queue *q, vt_tensor *x, vt_tensor *y, float s)
{
    vt_params_scale p = {s};
    const vt_tensor *in[1] = {x};
    vt_tensor *out[1] = {y};
    return vt_op_enqueue(q, VT_OP_SCALE, in, 1, out, 1, &p, sizeof p);
}

static vt_status get_rows(vt_queue *q, vt_tensor *table, vt_tensor *idx, vt_tensor *dst)
{
    const vt_tensor *in[2] = {table, idx};
    vt_tensor *out[1] = {dst};
    return vt_op_enqueue(q, VT_OP_GET_ROWS, in, 2, out, 1, NULL, 0);
}

/* A 3x2 table and idx {0, 7}: the 7 is outside [0, 3). */
typedef struct bad_rows {
    vt_tensor *table, *idx, *dst;
} bad_rows;

static bad_rows bad_rows_make(vt_device *d)
{
    bad_rows b = {mk(d, VT_F32, 2, 3, 2), mk(d, VT_I32, 1, 2, 0), mk(d, VT_F32, 2, 2, 2)};
    float t[6] = {1, 2, 3, 4, 5, 6};
    int32_t idx[2] = {0, 7};
    ck_assert_int_eq(vt_tensor_write(b.table, t, sizeof t), VT_OK);
    ck_assert_int_eq(vt_tensor_write(b.idx, idx, sizeof idx), VT_OK);
    return b;
}

static void bad_rows_free(bad_rows *b)
{
    vt_tensor_destroy(b->table);
    vt_tensor_destroy(b->idx);
    vt_tensor_destroy(b->dst);
}

/* The sync point's message: the op, its id and the device once, then what went wrong. */
static void assert_named(const char *devid)
{
    char head[96];
    snprintf(head, sizeof head, "GetRows (40) on %s: ", devid);
    const char *e = vt_last_error();
    ck_assert_msg(strncmp(e, head, strlen(head)) == 0, "message: %s", e);
    ck_assert_msg(strstr(e, "= 7 is outside [0, 3)"), "message: %s", e);
    ck_assert_msg(count(e, "GetRows") == 1, "the op is named once: %s", e);
}

START_TEST(v1_plugin_loads_and_runs_ops_through_the_fallback)
{
    vt_device *d;
    vt_registry *reg = open_on("test-v1:0", &d);
    vt_tensor *x = mk(d, VT_F32, 1, 4, 0), *y = mk(d, VT_F32, 1, 4, 0);
    float xv[4] = {1, 2, 3, 4}, yv[4];
    ck_assert_int_eq(vt_tensor_write(x, xv, sizeof xv), VT_OK);
    vt_params_scale p = {2};
    const vt_tensor *in[1] = {x};
    vt_tensor *out[1] = {y};
    ck_assert_msg(vt_op_run(d, VT_OP_SCALE, in, 1, out, 1, &p, sizeof p) == VT_OK, "%s", vt_last_error());
    ck_assert_int_eq(vt_tensor_read(y, yv, sizeof yv), VT_OK);
    for (int i = 0; i < 4; i++)
        ck_assert_float_eq(yv[i], 2 * xv[i]);

    /* A queue, an event and a graph, all from the core's fallback. */
    vt_queue *q = NULL;
    vt_event *e0 = NULL, *e1 = NULL;
    ck_assert_int_eq(vt_queue_create(d, &q), VT_OK);
    ck_assert_int_eq(vt_event_create(d, &e0), VT_OK);
    ck_assert_int_eq(vt_event_create(d, &e1), VT_OK);
    ck_assert_int_eq(vt_event_record(e0, q), VT_OK);
    ck_assert_int_eq(scale(q, x, y, 3), VT_OK);
    ck_assert_int_eq(vt_event_record(e1, q), VT_OK);
    ck_assert_int_eq(vt_event_query(e1), VT_OK);
    ck_assert_int_eq(vt_event_synchronize(e1), VT_OK);
    float ms = -1;
    ck_assert_int_eq(vt_event_elapsed_ms(e0, e1, &ms), VT_OK);
    ck_assert(ms >= 0);
    ck_assert_int_eq(vt_tensor_read(y, yv, sizeof yv), VT_OK);
    ck_assert_float_eq(yv[3], 12);

    /* A view passes (buffer, offset); the core folds the offset for v1. */
    vt_tensor *v = NULL, *vy = mk(d, VT_F32, 1, 2, 0);
    int64_t two = 2;
    ck_assert_int_eq(vt_tensor_view(x, 8, VT_F32, 1, &two, &v), VT_OK);
    ck_assert_int_eq(scale(q, v, vy, 10), VT_OK);
    vt_graph *g = NULL;
    ck_assert_int_eq(vt_graph_begin(q), VT_OK);
    ck_assert_int_eq(scale(q, x, y, -1), VT_OK);
    ck_assert_int_eq(vt_graph_end(q, &g), VT_OK);
    ck_assert_int_eq(vt_graph_launch(g, q), VT_OK);
    ck_assert_int_eq(vt_queue_synchronize(q), VT_OK);
    float vv[2];
    ck_assert_int_eq(vt_tensor_read(vy, vv, sizeof vv), VT_OK);
    ck_assert_float_eq(vv[0], 30);
    ck_assert_float_eq(vv[1], 40);
    ck_assert_int_eq(vt_tensor_read(y, yv, sizeof yv), VT_OK);
    ck_assert_float_eq(yv[0], -1);

    /* A v1 kernel's own error, named once at the sync point. */
    bad_rows b = bad_rows_make(d);
    const vt_tensor *bin[2] = {b.table, b.idx};
    vt_tensor *bout[1] = {b.dst};
    ck_assert_int_eq(vt_op_run(d, VT_OP_GET_ROWS, bin, 2, bout, 1, NULL, 0), VT_E_INVALID_ARG);
    assert_named("test-v1:0");
    ck_assert_str_eq(vt_last_error(), "GetRows (40) on test-v1:0: idx[1] = 7 is outside [0, 3)");
    ck_assert_int_eq(get_rows(q, b.table, b.idx, b.dst), VT_OK);
    ck_assert_int_eq(vt_queue_synchronize(q), VT_E_INVALID_ARG);
    assert_named("test-v1:0");
    ck_assert_int_eq(vt_queue_synchronize(q), VT_OK); /* cleared at the sync point */

    vt_device_stats s = stats(d);
    ck_assert_uint_ge(s.backend.launches, 5); /* counted by the core for a v1 plugin */
    ck_assert_uint_ge(s.backend.syncs, 4);
    bad_rows_free(&b);
    vt_graph_destroy(g);
    vt_event_destroy(e0);
    vt_event_destroy(e1);
    vt_queue_destroy(q);
    vt_tensor_destroy(v);
    vt_tensor_destroy(vy);
    vt_tensor_destroy(x);
    vt_tensor_destroy(y);
    vt_registry_close(reg);
}
END_TEST

START_TEST(an_error_inside_enqueued_and_replayed_work_is_named_at_the_sync)
{
    vt_device *d;
    vt_registry *reg = open_on(devices[_i], &d);
    vt_queue *q = NULL;
    ck_assert_int_eq(vt_queue_create(d, &q), VT_OK);
    bad_rows b = bad_rows_make(d);
    ck_assert_int_eq(get_rows(q, b.table, b.idx, b.dst), VT_OK); /* returns before the check can report */
    ck_assert_int_eq(vt_queue_synchronize(q), VT_E_INVALID_ARG);
    assert_named(devices[_i]);
    ck_assert_int_eq(vt_queue_synchronize(q), VT_OK);

    vt_graph *g = NULL;
    ck_assert_int_eq(vt_graph_begin(q), VT_OK);
    ck_assert_int_eq(get_rows(q, b.table, b.idx, b.dst), VT_OK);
    ck_assert_int_eq(vt_queue_synchronize(q), VT_E_INVALID_ARG); /* no sync point while recording */
    ck_assert_int_eq(vt_graph_end(q, &g), VT_OK);
    ck_assert_int_eq(vt_graph_launch(g, q), VT_OK);
    vt_event *e = NULL;
    ck_assert_int_eq(vt_event_create(d, &e), VT_OK);
    ck_assert_int_eq(vt_event_record(e, q), VT_OK);
    ck_assert_int_eq(vt_event_synchronize(e), VT_E_INVALID_ARG); /* an event wait is a sync point too */
    assert_named(devices[_i]);

    /* vt_op_run on the default queue gives the same text. */
    const vt_tensor *in[2] = {b.table, b.idx};
    vt_tensor *out[1] = {b.dst};
    ck_assert_int_eq(vt_op_run(d, VT_OP_GET_ROWS, in, 2, out, 1, NULL, 0), VT_E_INVALID_ARG);
    assert_named(devices[_i]);
    vt_event_destroy(e);
    vt_graph_destroy(g);
    bad_rows_free(&b);
    vt_queue_destroy(q);
    vt_registry_close(reg);
}
END_TEST

/* A decode-like step: GetRows(emb, tok) -> Scale -> Add(bias) -> Argmax,
 * recorded once and replayed per token; the token id reaches the device by
 * an async copy outside the graph, the sampled id comes back by one. */
START_TEST(a_replayed_step_does_no_host_sync_until_the_final_wait)
{
    vt_device *d;
    vt_registry *reg = open_on(devices[_i], &d);
    enum { V = 4, H = 8 };
    vt_tensor *emb = mk(d, VT_F32, 2, V, H), *tok = mk(d, VT_I32, 1, 1, 0), *h = mk(d, VT_F32, 2, 1, H);
    vt_tensor *h2 = mk(d, VT_F32, 2, 1, H), *bias = mk(d, VT_F32, 1, H, 0), *h3 = mk(d, VT_F32, 2, 1, H);
    vt_tensor *id = mk(d, VT_I32, 1, 1, 0);
    float ev[V * H], bv[H];
    for (int r = 0; r < V; r++)
        for (int j = 0; j < H; j++)
            ev[r * H + j] = j == (3 * r + 1) % H ? 10.0f : (float)j * 0.1f;
    for (int j = 0; j < H; j++)
        bv[j] = 0.01f * (float)j;
    ck_assert_int_eq(vt_tensor_write(emb, ev, sizeof ev), VT_OK);
    ck_assert_int_eq(vt_tensor_write(bias, bv, sizeof bv), VT_OK);
    vt_queue *q = NULL;
    ck_assert_int_eq(vt_queue_create(d, &q), VT_OK);
    int32_t *host = NULL;
    bool pinned = false;
    ck_assert_int_eq(vt_device_host_alloc(d, 2 * sizeof(int32_t), (void **)&host, &pinned), VT_OK);

    vt_graph *g = NULL;
    ck_assert_int_eq(vt_graph_begin(q), VT_OK);
    ck_assert_int_eq(get_rows(q, emb, tok, h), VT_OK);
    ck_assert_int_eq(scale(q, h, h2, 0.5f), VT_OK);
    const vt_tensor *ain[2] = {h2, bias};
    vt_tensor *aout[1] = {h3};
    ck_assert_int_eq(vt_op_enqueue(q, VT_OP_ADD, ain, 2, aout, 1, NULL, 0), VT_OK);
    const vt_tensor *xin[1] = {h3};
    vt_tensor *xout[1] = {id};
    ck_assert_int_eq(vt_op_enqueue(q, VT_OP_ARGMAX, xin, 1, xout, 1, NULL, 0), VT_OK);
    ck_assert_int_eq(vt_graph_end(q, &g), VT_OK);

    vt_event *done = NULL;
    ck_assert_int_eq(vt_event_create(d, &done), VT_OK);
    for (int32_t step = 0; step < 3; step++) {
        int32_t t = (step * 3 + 2) % V;
        host[0] = t;
        host[1] = -1;
        vt_device_stats s0 = stats(d);
        ck_assert_int_eq(vt_tensor_write_async(q, tok, 0, &host[0], sizeof(int32_t)), VT_OK);
        ck_assert_int_eq(vt_graph_launch(g, q), VT_OK);
        ck_assert_int_eq(vt_tensor_read_async(q, id, 0, &host[1], sizeof(int32_t)), VT_OK);
        ck_assert_int_eq(vt_event_record(done, q), VT_OK);
        vt_device_stats s1 = stats(d);
        ck_assert_uint_eq(s1.backend.syncs, s0.backend.syncs); /* zero host syncs in the step */
        ck_assert_uint_eq(s1.backend.launches - s0.backend.launches, 4);
        ck_assert_int_eq(vt_event_synchronize(done), VT_OK);
        ck_assert_uint_eq(stats(d).backend.syncs, s0.backend.syncs + 1); /* the one wait */
        ck_assert_int_eq(host[1], (3 * t + 1) % H);
    }
    vt_event_destroy(done);
    vt_graph_destroy(g);
    vt_device_host_free(d, host, pinned);
    vt_queue_destroy(q);
    vt_tensor *all[] = {emb, tok, h, h2, bias, h3, id};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        vt_tensor_destroy(all[i]);
    vt_registry_close(reg);
}
END_TEST

/* Argmax -> read_async into vt_device_host_alloc memory -> event: the ids
 * arrive; on cuda-stub the host is back before the device ran anything. */
START_TEST(sampled_token_readback_through_an_event)
{
    vt_device *d;
    vt_registry *reg = open_on(devices[_i], &d);
    bool stub = strcmp(devices[_i], "cuda-stub:0") == 0;
    vt_device_caps caps = VT_DEVICE_CAPS_INIT;
    ck_assert_int_eq(vt_device_probe(d, &caps), VT_OK);
    if (stub)
        ck_assert_msg(caps.sampled_token_readback, "%s", caps.sampled_token_readback_reason);
    enum { R = 3, N = 50 };
    vt_tensor *logits = mk(d, VT_F32, 2, R, N), *ids = mk(d, VT_I32, 1, R, 0);
    float lv[R * N];
    vt_rng rng;
    vt_rng_init(&rng, 91);
    vt_rng_fill(&rng, lv, R * N, -1, 1);
    int32_t want[R] = {7, 0, 49};
    for (int r = 0; r < R; r++)
        lv[r * N + want[r]] = 5;
    ck_assert_int_eq(vt_tensor_write(logits, lv, sizeof lv), VT_OK);
    vt_queue *q = vt_device_default_queue(d);
    ck_assert_ptr_nonnull(q);
    int32_t *host = NULL;
    bool pinned = false;
    ck_assert_int_eq(vt_device_host_alloc(d, R * sizeof(int32_t), (void **)&host, &pinned), VT_OK);
    for (int r = 0; r < R; r++)
        host[r] = -1;
    vt_event *e = NULL;
    ck_assert_int_eq(vt_event_create(d, &e), VT_OK);
    const vt_tensor *in[1] = {logits};
    vt_tensor *out[1] = {ids};
    ck_assert_int_eq(vt_op_enqueue(q, VT_OP_ARGMAX, in, 1, out, 1, NULL, 0), VT_OK);
    ck_assert_int_eq(vt_tensor_read_async(q, ids, 0, host, R * sizeof(int32_t)), VT_OK);
    ck_assert_int_eq(vt_event_record(e, q), VT_OK);
    if (stub) { /* returned before the work was done: not ready, nothing written yet */
        ck_assert_int_eq(vt_event_query(e), VT_E_NOT_READY);
        ck_assert_int_eq(host[0], -1);
    }
    ck_assert_int_eq(vt_event_synchronize(e), VT_OK);
    ck_assert_int_eq(vt_event_query(e), VT_OK);
    for (int r = 0; r < R; r++)
        ck_assert_int_eq(host[r], want[r]);
    vt_event_destroy(e);
    vt_device_host_free(d, host, pinned);
    vt_tensor_destroy(logits);
    vt_tensor_destroy(ids);
    vt_registry_close(reg);
}
END_TEST

/* One queue waits on another's event (on the device); views and offset
 * writes work on a handle-based device (the core adds no offsets). */
START_TEST(queues_wait_on_events_and_views_pass_offsets)
{
    vt_device *d;
    vt_registry *reg = open_on(devices[_i], &d);
    vt_queue *q1 = NULL, *q2 = NULL;
    ck_assert_int_eq(vt_queue_create(d, &q1), VT_OK);
    ck_assert_int_eq(vt_queue_create(d, &q2), VT_OK);
    vt_tensor *x = mk(d, VT_F32, 1, 8, 0), *y = mk(d, VT_F32, 1, 4, 0), *v = NULL;
    float xv[8] = {1, 2, 3, 4, 5, 6, 7, 8}, got[4] = {0};
    ck_assert_int_eq(vt_tensor_write_async(q1, x, 0, xv, sizeof xv), VT_OK);
    int64_t four = 4;
    ck_assert_int_eq(vt_tensor_view(x, 4 * sizeof(float), VT_F32, 1, &four, &v), VT_OK);
    ck_assert_int_eq(vt_tensor_view(x, 5 * sizeof(float), VT_F32, 1, &four, &(vt_tensor *){NULL}), VT_E_INVALID_ARG);
    /* A view starts on a whole element or block, aligned in the buffer
     * (a device faults on a misaligned load). */
    int64_t one = 1, bytes4 = 4, q32 = 32;
    vt_tensor *b8 = NULL, *qb = mk(d, VT_Q4_0, 1, 64, 0), *qv = NULL;
    ck_assert_int_eq(vt_tensor_view(x, 2, VT_F32, 1, &one, &(vt_tensor *){NULL}), VT_E_INVALID_ARG);
    ck_assert_msg(strstr(vt_last_error(), ": offset 2 is not a whole number of f32 elements (4 bytes)"), "%s",
                  vt_last_error());
    ck_assert_int_eq(vt_tensor_view(x, 1, VT_I8, 1, &bytes4, &b8), VT_OK);
    ck_assert_int_eq(vt_tensor_view(b8, 0, VT_F32, 1, &one, &(vt_tensor *){NULL}), VT_E_INVALID_ARG);
    ck_assert_msg(strstr(vt_last_error(), ": byte 1 of the buffer (the base's own view at 1, plus 0) is not aligned "
                                          "to the 4 bytes of f32"),
                  "%s", vt_last_error());
    ck_assert_int_eq(vt_tensor_view(qb, 9, VT_Q4_0, 1, &q32, &(vt_tensor *){NULL}), VT_E_INVALID_ARG);
    ck_assert_msg(strstr(vt_last_error(), ": offset 9 is not a whole number of q4_0 blocks (18 bytes)"), "%s",
                  vt_last_error());
    ck_assert_int_eq(vt_tensor_view(qb, 18, VT_Q4_0, 1, &q32, &qv), VT_OK);
    vt_tensor_destroy(qv);
    vt_tensor_destroy(qb);
    vt_tensor_destroy(b8);
    ck_assert_int_eq(scale(q1, v, y, 2), VT_OK);
    vt_event *e = NULL, *e2 = NULL;
    ck_assert_int_eq(vt_event_create(d, &e), VT_OK);
    ck_assert_int_eq(vt_event_create(d, &e2), VT_OK);
    ck_assert_int_eq(vt_event_record(e, q1), VT_OK);
    ck_assert_int_eq(vt_queue_wait_event(q2, e), VT_OK);
    ck_assert_int_eq(vt_tensor_read_async(q2, y, 0, got, sizeof got), VT_OK);
    ck_assert_int_eq(vt_event_record(e2, q2), VT_OK);
    ck_assert_int_eq(vt_event_synchronize(e2), VT_OK);
    for (int i = 0; i < 4; i++)
        ck_assert_float_eq(got[i], 2 * xv[4 + i]);
    /* A blocking write at an offset, and a device-to-device copy. */
    float nine = 9;
    ck_assert_int_eq(vt_tensor_write_at(v, 4, &nine, sizeof nine), VT_OK);
    ck_assert_int_eq(vt_tensor_copy_async(q1, y, 0, x, 5 * sizeof(float), sizeof(float)), VT_OK);
    ck_assert_int_eq(vt_queue_synchronize(q1), VT_OK);
    ck_assert_int_eq(vt_tensor_read(y, got, sizeof got), VT_OK);
    ck_assert_float_eq(got[0], 9);
    ck_assert_int_eq(vt_tensor_write_async(q1, y, 8, xv, sizeof xv), VT_E_INVALID_ARG); /* past the end */
    vt_event_destroy(e);
    vt_event_destroy(e2);
    vt_queue_destroy(q1);
    vt_queue_destroy(q2);
    vt_tensor_destroy(v);
    vt_tensor_destroy(x);
    vt_tensor_destroy(y);
    vt_registry_close(reg);
}
END_TEST

/* vt_resolve_call resolves with shapes before allocation and asks the
 * kernel's accepts; the resolution carries its kernel and runs as is. */
START_TEST(shape_aware_resolution_asks_accepts_and_runs_resolved)
{
    vt_device *d;
    vt_registry *reg = open_on("cuda-stub:0", &d);
    uint64_t allocs = stats(d).backend.allocs;
    vt_shape big = {VT_F32, 2, {1, 1 << 21}}, big_out = {VT_I32, 1, {1}};
    const vt_shape *in[1] = {&big}, *out[1] = {&big_out};
    vt_resolution r;
    ck_assert_int_eq(vt_resolve_call(d, VT_OP_ARGMAX, in, 1, out, 1, NULL, 0, 0, &r), VT_E_OP_MISSING);
    ck_assert_int_eq(r.tier, VT_TIER_REFUSED);
    ck_assert_msg(strstr(r.reason, "Argmax row of 2097152 elements > 1048576"), "%s", r.reason);
    ck_assert_msg(strstr(vt_last_error(), "missing op Argmax (50) on cuda-stub:0"), "%s", vt_last_error());
    ck_assert_uint_eq(stats(d).backend.allocs, allocs); /* refused before anything was allocated */

    vt_shape ok = {VT_F32, 2, {2, 16}}, ok_out = {VT_I32, 1, {2}};
    in[0] = &ok;
    out[0] = &ok_out;
    ck_assert_msg(vt_resolve_call(d, VT_OP_ARGMAX, in, 1, out, 1, NULL, 0, 0, &r) == VT_OK, "%s", vt_last_error());
    ck_assert_int_eq(r.tier, VT_TIER_NATIVE);
    ck_assert_ptr_nonnull(r.kernel);
    ck_assert_ptr_eq(r.device, d);
    ck_assert_uint_eq(r.shapes_checked, 1);
    vt_shape bad_out = {VT_F32, 1, {2}};
    out[0] = &bad_out;
    ck_assert_int_eq(vt_resolve_call(d, VT_OP_ARGMAX, in, 1, out, 1, NULL, 0, 0, &r), VT_E_SHAPE);
    out[0] = &ok_out;
    ck_assert_int_eq(vt_resolve_call(d, VT_OP_ARGMAX, in, 1, out, 1, NULL, 0, 0, &r), VT_OK);

    vt_tensor *x = mk(d, VT_F32, 2, 2, 16), *ids = mk(d, VT_I32, 1, 2, 0), *wrong = mk(d, VT_F32, 1, 2, 0);
    float xv[32] = {0};
    xv[5] = 1;
    xv[16 + 11] = 1;
    ck_assert_int_eq(vt_tensor_write(x, xv, sizeof xv), VT_OK);
    const vt_tensor *tin[1] = {x};
    vt_tensor *tout[1] = {ids};
    ck_assert_msg(vt_op_run_resolved(&r, tin, 1, tout, 1, NULL, 0) == VT_OK, "%s", vt_last_error());
    int32_t got[2];
    ck_assert_int_eq(vt_tensor_read(ids, got, sizeof got), VT_OK);
    ck_assert_int_eq(got[0], 5);
    ck_assert_int_eq(got[1], 11);
    /* Operands of another signature than the resolution's are refused. */
    const vt_tensor *win[3] = {x, ids, wrong};
    ck_assert_int_ne(vt_op_enqueue_resolved(vt_device_default_queue(d), &r, win, 1, &wrong, 1, NULL, 0), VT_OK);
    vt_tensor_destroy(x);
    vt_tensor_destroy(ids);
    vt_tensor_destroy(wrong);
    vt_registry_close(reg);
}
END_TEST

/* A registry opened strict never runs the CPU tier, whatever the call;
 * a portable one's resolution carries the cpu kernel and runs it. */
START_TEST(tier_policy_is_registry_state)
{
    setenv("VT_CUDA_STUB_HOST_ADDRESSABLE", "1", 1);
    unsetenv("VT_CUDA_STUB_KERNELS");
    vt_registry_options o = {
        .struct_size = sizeof o, .backends = "cpu,cuda-stub", .loader_debug = 0, .tier_policy = VT_TIER_POLICY_STRICT};
    vt_registry *reg = NULL;
    ck_assert_int_eq(vt_registry_open(&reg, &o), VT_OK);
    vt_device *d = vt_test_device(reg, "cuda-stub:0");
    vt_resolution r;
    vt_sig sig = {1, {VT_F32}};
    ck_assert_int_eq(vt_resolve(d, VT_OP_SCALE, sig, 0, &r), VT_E_OP_MISSING);
    ck_assert_msg(strstr(r.reason, "strict"), "%s", r.reason);
    vt_tensor *x = mk(d, VT_F32, 1, 4, 0), *y = mk(d, VT_F32, 1, 4, 0);
    float xv[4] = {1, 2, 3, 4};
    ck_assert_int_eq(vt_tensor_write(x, xv, sizeof xv), VT_OK);
    vt_params_scale p = {3};
    const vt_tensor *in[1] = {x};
    vt_tensor *out[1] = {y};
    ck_assert_int_eq(vt_op_run(d, VT_OP_SCALE, in, 1, out, 1, &p, sizeof p), VT_E_OP_MISSING);
    vt_tensor_destroy(x);
    vt_tensor_destroy(y);
    vt_registry_close(reg);

    o.tier_policy = VT_TIER_POLICY_PORTABLE;
    ck_assert_int_eq(vt_registry_open(&reg, &o), VT_OK);
    d = vt_test_device(reg, "cuda-stub:0");
    ck_assert_int_eq(vt_resolve(d, VT_OP_SCALE, sig, 0, &r), VT_OK);
    ck_assert_int_eq(r.tier, VT_TIER_CPU);
    ck_assert_ptr_nonnull(r.kernel);
    x = mk(d, VT_F32, 1, 4, 0);
    y = mk(d, VT_F32, 1, 4, 0);
    ck_assert_int_eq(vt_tensor_write(x, xv, sizeof xv), VT_OK);
    in[0] = x;
    out[0] = y;
    ck_assert_msg(vt_op_run_resolved(&r, in, 1, out, 1, &p, sizeof p) == VT_OK, "%s", vt_last_error());
    float yv[4];
    ck_assert_int_eq(vt_tensor_read(y, yv, sizeof yv), VT_OK);
    ck_assert_float_eq(yv[3], 12);
    ck_assert_uint_eq(stats(d).cpu_tier_runs, 1);
    vt_tensor_destroy(x);
    vt_tensor_destroy(y);
    vt_registry_close(reg);
}
END_TEST

/* Caller-allocated structs: the core writes only struct_size bytes. */
START_TEST(caps_and_stats_honour_the_callers_struct_size)
{
    vt_device *d;
    vt_registry *reg = open_on(devices[_i], &d);
    vt_device_caps caps;
    memset(&caps, 0xab, sizeof caps);
    caps.struct_size = (uint32_t)offsetof(vt_device_caps, arch);
    ck_assert_int_eq(vt_device_probe(d, &caps), VT_OK);
    ck_assert_uint_eq(caps.struct_size, offsetof(vt_device_caps, arch));
    ck_assert_msg(caps.name[0] && memchr(caps.name, '\0', sizeof caps.name), "name filled");
    ck_assert_uint_eq((unsigned char)caps.arch[0], 0xab); /* beyond struct_size: untouched */
    ck_assert_uint_eq((unsigned char)caps.platform[0], 0xab);

    vt_device_stats s;
    memset(&s, 0xab, sizeof s);
    s.struct_size = (uint32_t)offsetof(vt_device_stats, native_runs);
    ck_assert_int_eq(vt_device_stats_get(d, &s), VT_OK);
    ck_assert_uint_eq(s.struct_size, offsetof(vt_device_stats, native_runs));
    ck_assert_uint_ne(s.backend.allocs, 0xababababababababull);
    ck_assert_uint_eq(s.native_runs, 0xababababababababull);
    ck_assert_uint_eq(s.refusals, 0xababababababababull);
    vt_registry_close(reg);
}
END_TEST

/* The loader refuses half a queue set by name; an event outlives its queue. */
START_TEST(half_a_queue_set_is_refused_and_events_outlive_queues)
{
    vt_registry *reg = vt_test_open(TEST_PLUGIN_DIR, "cpu,test-v2half", 0);
    const vt_backend_info b = vt_test_backend(reg, "test-v2half");
    ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
    ck_assert_msg(strstr(b.reason, "vtable sets queue_create but not queue_destroy"), "%s", b.reason);
    vt_device *d = vt_test_device(reg, "cpu:0");
    vt_queue *q = NULL;
    vt_event *e = NULL;
    ck_assert_int_eq(vt_queue_create(d, &q), VT_OK);
    ck_assert_int_eq(vt_event_create(d, &e), VT_OK);
    ck_assert_int_eq(vt_event_record(e, q), VT_OK);
    vt_queue_destroy(q);
    ck_assert_int_eq(vt_event_synchronize(e), VT_OK); /* its queue is gone: done, nothing to report */
    ck_assert_int_eq(vt_event_query(e), VT_OK);
    vt_event_destroy(e);
    vt_registry_close(reg);
}
END_TEST

/* The time between two events needs both recorded: an event only created
 * has no time (it gave the time since its creation), on a plugin's events
 * (cpu) and on the core's fallback (a v1 plugin) alike. */
START_TEST(elapsed_time_needs_recorded_events)
{
    static const char *const devs[] = {"cpu:0", "test-v1:0"};
    for (size_t i = 0; i < sizeof devs / sizeof devs[0]; i++) {
        vt_device *d;
        vt_registry *reg = open_on(devs[i], &d);
        vt_queue *q = NULL;
        vt_event *e0 = NULL, *e1 = NULL;
        ck_assert_int_eq(vt_queue_create(d, &q), VT_OK);
        ck_assert_int_eq(vt_event_create(d, &e0), VT_OK);
        ck_assert_int_eq(vt_event_create(d, &e1), VT_OK);
        float ms = -1;
        ck_assert_int_eq(vt_event_elapsed_ms(e0, e1, &ms), VT_E_INVALID_ARG);
        ck_assert_msg(strstr(vt_last_error(), "vt_event_elapsed_ms on ") &&
                          strstr(vt_last_error(), ": the start event was never recorded"),
                      "%s: %s", devs[i], vt_last_error());
        ck_assert_int_eq(vt_event_record(e0, q), VT_OK);
        ck_assert_int_eq(vt_event_elapsed_ms(e0, e1, &ms), VT_E_INVALID_ARG);
        ck_assert_msg(strstr(vt_last_error(), ": the end event was never recorded"), "%s: %s", devs[i],
                      vt_last_error());
        ck_assert(ms == -1.0f);
        ck_assert_int_eq(vt_event_record(e1, q), VT_OK);
        ck_assert_int_eq(vt_event_synchronize(e1), VT_OK);
        ck_assert_msg(vt_event_elapsed_ms(e0, e1, &ms) == VT_OK, "%s: %s", devs[i], vt_last_error());
        ck_assert(ms >= 0.0f);
        vt_event_destroy(e0);
        vt_event_destroy(e1);
        vt_queue_destroy(q);
        vt_registry_close(reg);
    }
}
END_TEST

/* The four ways to put an op on a device share one path: an op with empty
 * outputs launches nothing and succeeds through each; the two that wait
 * run to the sync point (one host wait each on the stub); the default
 * queue recording a graph refuses vt_op_run by name, while vt_op_enqueue
 * on it records. */
START_TEST(every_entry_point_skips_empty_outputs_and_waits_only_when_it_runs)
{
    vt_device *d;
    vt_registry *reg = open_on("cuda-stub:0", &d);
    vt_tensor *x = mk(d, VT_F32, 2, 0, 4), *y = mk(d, VT_F32, 2, 0, 4); /* [0, 4]: empty */
    vt_tensor *a = mk(d, VT_F32, 1, 4, 0), *b = mk(d, VT_F32, 1, 4, 0);
    float v[4] = {1, 2, 3, 4}, got[4];
    ck_assert_int_eq(vt_tensor_write(a, v, sizeof v), VT_OK);
    vt_params_scale p = {2.0f};
    vt_queue *q = vt_device_default_queue(d);
    ck_assert_ptr_nonnull(q);
    vt_resolution r;
    vt_shape sx = vt_tensor_shape(a);
    const vt_shape *sin[1] = {&sx}, *sout[1] = {&sx};
    ck_assert_int_eq(vt_resolve_call(d, VT_OP_SCALE, sin, 1, sout, 1, &p, sizeof p, 0, &r), VT_OK);
    for (int full = 0; full < 2; full++) {
        const vt_tensor *in[1] = {full ? a : x};
        vt_tensor *out[1] = {full ? b : y};
        for (int way = 0; way < 4; way++) {
            vt_device_stats s0 = stats(d);
            vt_status st = way == 0   ? vt_op_enqueue(q, VT_OP_SCALE, in, 1, out, 1, &p, sizeof p)
                           : way == 1 ? vt_op_enqueue_resolved(q, &r, in, 1, out, 1, &p, sizeof p)
                           : way == 2 ? vt_op_run(d, VT_OP_SCALE, in, 1, out, 1, &p, sizeof p)
                                      : vt_op_run_resolved(&r, in, 1, out, 1, &p, sizeof p);
            ck_assert_msg(st == VT_OK, "way %d: %s", way, vt_last_error());
            vt_device_stats s1 = stats(d);
            ck_assert_uint_eq(s1.backend.launches - s0.backend.launches, full ? 1 : 0);
            ck_assert_uint_eq(s1.backend.syncs - s0.backend.syncs, full && way >= 2 ? 1 : 0);
        }
    }
    ck_assert_int_eq(vt_queue_synchronize(q), VT_OK);
    ck_assert_int_eq(vt_tensor_read(b, got, sizeof got), VT_OK);
    for (int i = 0; i < 4; i++)
        ck_assert_float_eq(got[i], 2.0f * v[i]);

    const vt_tensor *in[1] = {a};
    vt_tensor *out[1] = {b};
    vt_graph *g = NULL;
    ck_assert_int_eq(vt_graph_begin(q), VT_OK);
    ck_assert_int_eq(vt_op_run(d, VT_OP_SCALE, in, 1, out, 1, &p, sizeof p), VT_E_INVALID_ARG);
    ck_assert_msg(strstr(vt_last_error(), "Scale (4) on cuda-stub:0: the default queue is recording a graph"), "%s",
                  vt_last_error());
    ck_assert_int_eq(vt_op_enqueue(q, VT_OP_SCALE, in, 1, out, 1, &p, sizeof p), VT_OK);
    ck_assert_int_eq(vt_graph_end(q, &g), VT_OK);
    vt_graph_destroy(g);
    vt_tensor *all[] = {x, y, a, b};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        vt_tensor_destroy(all[i]);
    vt_registry_close(reg);
}
END_TEST

/* vt_tensor_wrap: host memory as a tensor of a host-addressable device,
 * read in place and never freed by vt_tensor_destroy; refused by name on
 * an opaque device and for bad arguments. */
START_TEST(host_memory_wraps_only_on_a_host_addressable_device)
{
    vt_registry *reg = open_reg();
    vt_device *cpu = vt_test_device(reg, "cpu:0"), *stub = vt_test_device(reg, "cuda-stub:0");
    float mem[6] = {1, 2, 3, 4, 5, 6}, got[6];
    int64_t shape[2] = {2, 3};
    vt_tensor *t = NULL;
    ck_assert_int_eq(vt_tensor_wrap(cpu, VT_F32, 2, shape, mem, true, &t), VT_OK);
    ck_assert_uint_eq(vt_tensor_nbytes(t), sizeof mem);
    ck_assert_int_eq(vt_tensor_read(t, got, sizeof got), VT_OK);
    ck_assert_int_eq(memcmp(got, mem, sizeof mem), 0);
    ck_assert_int_eq(vt_tensor_write(t, got, sizeof got), VT_E_INVALID_ARG); /* read-only */
    vt_tensor_destroy(t);
    ck_assert_float_eq(mem[5], 6.0f); /* still ours */
    ck_assert_int_eq(vt_tensor_wrap(stub, VT_F32, 2, shape, mem, false, &t), VT_E_UNSUPPORTED);
    ck_assert_ptr_null(t);
    ck_assert_msg(strstr(vt_last_error(), "vt_tensor_wrap on cuda-stub:0: the device is not host-addressable"), "%s",
                  vt_last_error());
    ck_assert_int_eq(vt_tensor_wrap(cpu, VT_F32, 2, shape, NULL, false, &t), VT_E_INVALID_ARG);
    ck_assert_msg(strstr(vt_last_error(), "data is NULL for 24 bytes"), "%s", vt_last_error());
    int64_t bad[1] = {-1};
    ck_assert_int_eq(vt_tensor_wrap(cpu, VT_F32, 1, bad, mem, false, &t), VT_E_INVALID_ARG);
    ck_assert_int_eq(vt_tensor_wrap(cpu, VT_Q4_0, 1, shape, mem, false, &t), VT_E_INVALID_ARG); /* not whole blocks */
    ck_assert_int_eq(vt_tensor_wrap(NULL, VT_F32, 2, shape, mem, false, &t), VT_E_INVALID_ARG);
    ck_assert_int_eq(vt_tensor_wrap(cpu, VT_F32, 2, shape, mem, false, NULL), VT_E_INVALID_ARG);
    vt_registry_close(reg);
}
END_TEST

int main(void)
{
    Suite *s;
    TCase *tc;
    int gate = vt_test_suite_begin(NULL, "queue", "queue", 0, &s, &tc);
    if (gate != 0)
        return gate;
    tcase_add_test(tc, v1_plugin_loads_and_runs_ops_through_the_fallback);
    tcase_add_loop_test(tc, an_error_inside_enqueued_and_replayed_work_is_named_at_the_sync, 0, 2);
    tcase_add_loop_test(tc, a_replayed_step_does_no_host_sync_until_the_final_wait, 0, 2);
    tcase_add_loop_test(tc, sampled_token_readback_through_an_event, 0, 2);
    tcase_add_loop_test(tc, queues_wait_on_events_and_views_pass_offsets, 0, 2);
    tcase_add_test(tc, shape_aware_resolution_asks_accepts_and_runs_resolved);
    tcase_add_test(tc, tier_policy_is_registry_state);
    tcase_add_loop_test(tc, caps_and_stats_honour_the_callers_struct_size, 0, 2);
    tcase_add_test(tc, half_a_queue_set_is_refused_and_events_outlive_queues);
    tcase_add_test(tc, elapsed_time_needs_recorded_events);
    tcase_add_test(tc, every_entry_point_skips_empty_outputs_and_waits_only_when_it_runs);
    tcase_add_test(tc, host_memory_wraps_only_on_a_host_addressable_device);
    return vt_test_run_suite(s);
}
