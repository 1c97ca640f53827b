/* bench_stream.c - stream-mode timings of `vtctl bench` (bench_stream.h). */
#include "config.h"

#include "bench_stream.h"

#include <stdlib.h>

#include "bench_time.h"

/* One case of an op as bench_stream_time / bench_graph_time take it. */
typedef struct {
    vt_op op;
    vt_tensor *(*in)[BENCH_MAX_IN];
    int n_in;
    vt_tensor *(*out)[BENCH_MAX_OUT];
    int n_out;
    const void *params;
    size_t params_size;
    int sets;
} op_case;

/* Enqueue run i of c (buffer set i % sets) on q. */
static vt_status enqueue_run(vt_queue *q, const op_case *c, int i)
{
    return vt_op_enqueue(q, c->op, (const vt_tensor *const *)c->in[i % c->sets], (uint32_t)c->n_in, c->out[i % c->sets],
                         (uint32_t)c->n_out, c->params, c->params_size);
}

/* A step of a timed loop: what goes on q between two events. */
typedef vt_status (*step_fn)(vt_queue *q, void *ctx, int i);

/* Step i: run i of the case ctx. */
static vt_status step_run(vt_queue *q, void *ctx, int i)
{
    return enqueue_run(q, ctx, i);
}

/* Step i: one replay of the graph ctx. */
static vt_status step_replay(vt_queue *q, void *ctx, int i)
{
    (void)i;
    return vt_graph_launch(ctx, q);
}

/* The timed loop both modes share: on q (idle), an event, then steps
 * 0..reps-1 each followed by an event, and one host wait at the end;
 * t[i] = step i's microseconds between its events over per, *wall_us
 * (when not NULL) the host's microseconds from the first event to the end
 * of the wait. The events are created and destroyed here. */
static vt_status time_steps(vt_device *dev, vt_queue *q, step_fn step, void *ctx, int reps, double per, double *t,
                            double *wall_us)
{
    vt_event **ev = calloc((size_t)reps + 1, sizeof *ev);
    vt_status st = ev ? VT_OK : VT_E_NO_MEMORY;
    for (int i = 0; st == VT_OK && i <= reps; i++)
        st = vt_event_create(dev, &ev[i]);
    double t0 = bench_now_us();
    if (st == VT_OK)
        st = vt_event_record(ev[0], q);
    for (int i = 0; st == VT_OK && i < reps; i++) {
        st = step(q, ctx, i);
        if (st == VT_OK)
            st = vt_event_record(ev[i + 1], q);
    }
    if (st == VT_OK)
        st = vt_event_synchronize(ev[reps]);
    if (wall_us)
        *wall_us = bench_now_us() - t0;
    for (int i = 0; st == VT_OK && i < reps; i++) {
        float ms = 0;
        st = vt_event_elapsed_ms(ev[i], ev[i + 1], &ms);
        t[i] = (double)ms * 1e3 / per;
    }
    for (int i = 0; ev && i <= reps; i++)
        vt_event_destroy(ev[i]);
    free(ev);
    return st;
}

vt_status bench_stream_time(vt_device *dev, vt_op op, vt_tensor *(*in)[BENCH_MAX_IN], int n_in,
                            vt_tensor *(*out)[BENCH_MAX_OUT], int n_out, const void *params, size_t params_size,
                            int sets, int reps, int warmup, double *t, double *wall_us)
{
    op_case c = {op, in, n_in, out, n_out, params, params_size, sets};
    vt_queue *q = NULL;
    vt_status st = vt_queue_create(dev, &q);
    for (int i = 0; st == VT_OK && i < warmup; i++)
        st = enqueue_run(q, &c, i);
    if (st == VT_OK)
        st = vt_queue_synchronize(q);
    if (st == VT_OK)
        st = time_steps(dev, q, step_run, &c, reps, 1.0, t, wall_us);
    vt_queue_destroy(q);
    return st;
}

vt_status bench_graph_time(vt_device *dev, vt_op op, vt_tensor *(*in)[BENCH_MAX_IN], int n_in,
                           vt_tensor *(*out)[BENCH_MAX_OUT], int n_out, const void *params, size_t params_size,
                           int sets, int reps, int warmup, double *t, int *runs)
{
    op_case c = {op, in, n_in, out, n_out, params, params_size, sets};
    int n = sets > BENCH_GRAPH_RUNS ? sets : BENCH_GRAPH_RUNS;
    if (n > 4 * reps) /* a slow op with few reps stays within a few times the stream mode's work */
        n = 4 * reps;
    vt_queue *q = NULL;
    vt_graph *g = NULL;
    vt_status st = vt_queue_create(dev, &q);
    if (st == VT_OK)
        st = vt_graph_begin(q);
    if (st == VT_OK) {
        vt_status rec = VT_OK;
        for (int i = 0; rec == VT_OK && i < n; i++)
            rec = enqueue_run(q, &c, i);
        st = vt_graph_end(q, &g);
        st = rec != VT_OK ? rec : st;
    }
    if (st == VT_OK && warmup > 0)
        st = vt_graph_launch(g, q);
    if (st == VT_OK)
        st = vt_queue_synchronize(q);
    if (st == VT_OK)
        st = time_steps(dev, q, step_replay, g, reps, n, t, NULL);
    *runs = n;
    vt_graph_destroy(g);
    vt_queue_destroy(q);
    return st;
}

/* Enqueue n Scale ops x -> y on q. */
static vt_status enqueue_tiny(vt_queue *q, vt_tensor *x, vt_tensor *y, int n)
{
    vt_params_scale p = {1.0f};
    const vt_tensor *in[1] = {x};
    vt_tensor *out[1] = {y};
    vt_status st = VT_OK;
    for (int i = 0; st == VT_OK && i < n; i++)
        st = vt_op_enqueue(q, VT_OP_SCALE, in, 1, out, 1, &p, sizeof p);
    return st;
}

vt_status bench_launch_time(vt_device *dev, int reps, int warmup, double *enq, double *graph)
{
    int64_t one = 1;
    float v = 1.0f;
    vt_tensor *x = NULL, *y = NULL;
    vt_queue *q = NULL;
    vt_graph *g = NULL;
    vt_status st = vt_tensor_create(dev, VT_F32, 1, &one, &x);
    if (st == VT_OK)
        st = vt_tensor_create(dev, VT_F32, 1, &one, &y);
    if (st == VT_OK)
        st = vt_tensor_write(x, &v, sizeof v);
    if (st == VT_OK)
        st = vt_queue_create(dev, &q);
    for (int r = -warmup; st == VT_OK && r < reps; r++) {
        double t0 = bench_now_us();
        st = enqueue_tiny(q, x, y, BENCH_LAUNCH_OPS);
        if (st == VT_OK)
            st = vt_queue_synchronize(q);
        if (r >= 0)
            enq[r] = (bench_now_us() - t0) / BENCH_LAUNCH_OPS;
    }
    if (st == VT_OK)
        st = vt_graph_begin(q);
    if (st == VT_OK) {
        vt_status rec = enqueue_tiny(q, x, y, BENCH_LAUNCH_OPS);
        st = vt_graph_end(q, &g);
        st = rec != VT_OK ? rec : st;
    }
    for (int r = -warmup; st == VT_OK && r < reps; r++) {
        double t0 = bench_now_us();
        st = vt_graph_launch(g, q);
        if (st == VT_OK)
            st = vt_queue_synchronize(q);
        if (r >= 0)
            graph[r] = (bench_now_us() - t0) / BENCH_LAUNCH_OPS;
    }
    vt_graph_destroy(g);
    vt_queue_destroy(q);
    vt_tensor_destroy(x);
    vt_tensor_destroy(y);
    return st;
}
