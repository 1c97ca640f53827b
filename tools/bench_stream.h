/* bench_stream.h - the queue-based timings of `vtctl bench`: an op timed
 * as a stream of enqueues with an event after each and one wait at the
 * end (the default mode), and the per-op cost of a stream of tiny ops,
 * enqueued and replayed from a graph (`--op Launch`). */
#ifndef VTCTL_BENCH_STREAM_H
#define VTCTL_BENCH_STREAM_H

#include <vt/vt.h>

#include "bench_plan.h"

/* Ops in the Launch stream. */
#define BENCH_LAUNCH_OPS 1000

/* Time reps runs of op on dev as one stream on a fresh queue, after warmup
 * runs: run i uses in[i % sets] (n_in inputs, NULL for an absent optional
 * one), out[i % sets] (n_out outputs) and the params; an event is recorded
 * before the first and after every run, and the host waits once, at the
 * end. t[i] gets run i's microseconds between its two events; *wall_us the
 * host's microseconds from the first enqueue to the end of the wait. */
vt_status bench_stream_time(vt_device *dev, vt_op op, vt_tensor *(*in)[BENCH_MAX_IN], int n_in,
                            vt_tensor *(*out)[BENCH_MAX_OUT], int n_out, const void *params, size_t params_size,
                            int sets, int reps, int warmup, double *t, double *wall_us);

/* Runs per recorded graph in graph mode at least (more when the case
 * rotates over more buffer sets: one run per set; at most 4 x reps). */
#define BENCH_GRAPH_RUNS 16

/* Graph mode: record the runs of op over the buffer sets (*runs =
 * max(sets, BENCH_GRAPH_RUNS) runs, at most 4 x reps, run i on set i % sets)
 * once into a graph on a fresh queue, replay it once to warm up (when
 * warmup > 0), then replay it reps times back to back with an event before
 * and after each replay and one host wait at the end: t[r] = replay r's
 * microseconds between its events over *runs, the op's device time per run
 * without the host's enqueue of each op (only the device's gap between a
 * graph's kernels remains). */
vt_status bench_graph_time(vt_device *dev, vt_op op, vt_tensor *(*in)[BENCH_MAX_IN], int n_in,
                           vt_tensor *(*out)[BENCH_MAX_OUT], int n_out, const void *params, size_t params_size,
                           int sets, int reps, int warmup, double *t, int *runs);

/* The per-op cost of BENCH_LAUNCH_OPS Scale ops on one f32 element, reps
 * times each way: enq[r] = microseconds per op enqueued one by one (from the
 * first enqueue to the end of the wait), graph[r] = per op replayed from a
 * graph recorded once. */
vt_status bench_launch_time(vt_device *dev, int reps, int warmup, double *enq, double *graph);

#endif
