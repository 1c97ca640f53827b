/* vt_queue.h - queues, events, async copies and graphs (issue 9).
 *
 * A vt_queue is an ordered stream of work on one device: ops
 * (vt_op_enqueue), copies (vt_tensor_*_async) and event records. Calls that
 * put work on a queue MAY RETURN BEFORE THE WORK IS DONE; the host learns
 * the outcome at a sync point: vt_queue_synchronize, vt_event_synchronize,
 * or vt_op_run (enqueue on the device's default queue, then synchronize).
 *
 * Errors. A call that puts work on a queue fails at once only for what the
 * host can see (operands, shapes, dtypes, resolution, a launch error).
 * Errors of the work itself - data-dependent values the kernel validates
 * on the device (an index out of range, a bad slot) or a kernel's failure
 * - surface at the next sync point of that queue with the op named:
 * "GetRows (40) on rocm:0: idx[1] = 7 is outside [0, 3)". After such an
 * error the rest of the work up to the sync point may have run on bad data
 * (outputs are poison-safe, never out of range) or not at all.
 *
 * Backends without queues (version-1 plugins, and the cpu backend, which
 * runs queued work synchronously on the caller's thread) get this API
 * through the core: their work is done when the enqueue returns, events
 * complete at once (timed with the host clock), and a graph is the list of
 * calls the core recorded, replayed in order.
 *
 * Threading: a queue is used by one thread at a time per call (the core
 * locks it; calls naming one queue from several threads are serialised, in
 * no defined order). Events may be queried and waited on from any thread.
 * Destroy queues, events and graphs before the registry is closed. */
#ifndef VT_QUEUE_H
#define VT_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vt/vt_op.h>
#include <vt/vt_registry.h>
#include <vt/vt_resolve.h>
#include <vt/vt_status.h>
#include <vt/vt_tensor.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vt_queue vt_queue;
typedef struct vt_event vt_event;
typedef struct vt_graph vt_graph;

/* Create a queue on dev (several per device). *out is the caller's. */
VT_WARN_UNUSED vt_status vt_queue_create(vt_device *dev, vt_queue **out);

/* Wait for a queue's work, then free it (a pending error is dropped). NULL
 * is ignored; the default queue is the device's and is never destroyed. */
void vt_queue_destroy(vt_queue *q);

/* The device's default queue (vt_op_run uses it), owned by the device;
 * NULL when it cannot be created (vt_last_error says why). */
vt_queue *vt_device_default_queue(vt_device *dev);

/* The device a queue belongs to. */
vt_device *vt_queue_device(const vt_queue *q);

/* Sync point: the host waits until all work on q is done; returns the
 * first error of that work since the last sync point, named. */
VT_WARN_UNUSED vt_status vt_queue_synchronize(vt_queue *q);

/* Put op on q over inputs in[0..n_in) and outputs out[0..n_out) (all on
 * q's device; an absent optional input is NULL). The op is checked and
 * resolved (tier policy of the registry, the kernel's accepts predicate)
 * before anything is queued; may return before the work is done. */
VT_WARN_UNUSED vt_status vt_op_enqueue(vt_queue *q, vt_op op, const vt_tensor *const *in, uint32_t n_in,
                                       vt_tensor *const *out, uint32_t n_out, const void *params, size_t params_size);

/* Put an op resolved earlier (vt_resolve, vt_resolve_call, vt_resolve_plan
 * on q's device) on q: its kernel runs with no lookup, probe or getenv.
 * Operand shapes are still checked, and must have r's signature. */
VT_WARN_UNUSED vt_status vt_op_enqueue_resolved(vt_queue *q, const vt_resolution *r, const vt_tensor *const *in,
                                                uint32_t n_in, vt_tensor *const *out, uint32_t n_out,
                                                const void *params, size_t params_size);

/* vt_op_enqueue_resolved on the default queue of r's device, then
 * vt_queue_synchronize. */
VT_WARN_UNUSED vt_status vt_op_run_resolved(const vt_resolution *r, const vt_tensor *const *in, uint32_t n_in,
                                            vt_tensor *const *out, uint32_t n_out, const void *params,
                                            size_t params_size);

/* Copy n bytes of host memory src into t at byte offset, in q's order. src
 * must stay valid and unchanged until the copy is done (an event recorded
 * after it completes); memory from vt_device_host_alloc copies fastest. */
VT_WARN_UNUSED vt_status vt_tensor_write_async(vt_queue *q, vt_tensor *t, uint64_t offset, const void *src, size_t n);

/* Copy n bytes of t at byte offset into host memory dst, in q's order; dst
 * holds them once an event recorded after the copy completes. */
VT_WARN_UNUSED vt_status vt_tensor_read_async(vt_queue *q, const vt_tensor *t, uint64_t offset, void *dst, size_t n);

/* Copy n bytes from src at src_off to dst at dst_off (same device), in q's order. */
VT_WARN_UNUSED vt_status vt_tensor_copy_async(vt_queue *q, vt_tensor *dst, uint64_t dst_off, const vt_tensor *src,
                                              uint64_t src_off, size_t n);

/* A tensor over part of base's memory: dtype and shape starting at byte
 * offset (checked: the view fits inside base, starts on a whole element or
 * block of dtype, at that element's alignment in the buffer: its size, 2
 * for a block format). The view shares
 * base's buffer (destroy it before base) and never frees it; ops and copies
 * pass it as (buffer, offset), so it works on every device. */
VT_WARN_UNUSED vt_status vt_tensor_view(vt_tensor *base, uint64_t offset, vt_dtype dtype, uint32_t ndim,
                                        const int64_t *shape, vt_tensor **out);

/* Host memory the device copies from fastest (its pinned memory when the
 * backend has it: *pinned true), else 64-byte aligned host memory. Free
 * with vt_device_host_free. */
VT_WARN_UNUSED vt_status vt_device_host_alloc(vt_device *dev, uint64_t bytes, void **ptr, bool *pinned);

/* Free memory from vt_device_host_alloc (the same pinned flag). NULL is ignored. */
void vt_device_host_free(vt_device *dev, void *ptr, bool pinned);

/* Create an event on dev. *out is the caller's. */
VT_WARN_UNUSED vt_status vt_event_create(vt_device *dev, vt_event **out);

/* Free an event. NULL is ignored. */
void vt_event_destroy(vt_event *e);

/* Record e on q: e completes when the work put on q before it is done. */
VT_WARN_UNUSED vt_status vt_event_record(vt_event *e, vt_queue *q);

/* Make q wait (on the device) for e before its later work; the host
 * returns at once. e may come from another queue of the same device; an
 * event of another device is waited for by the host (vt_event_synchronize). */
VT_WARN_UNUSED vt_status vt_queue_wait_event(vt_queue *q, vt_event *e);

/* VT_OK when e has completed (or was never recorded), VT_E_NOT_READY when
 * not yet (no error text is set); never waits. */
VT_WARN_UNUSED vt_status vt_event_query(vt_event *e);

/* Sync point: the host waits for e; returns the first error of the work of
 * the queue e was recorded on, named (as vt_queue_synchronize). */
VT_WARN_UNUSED vt_status vt_event_synchronize(vt_event *e);

/* Milliseconds between two completed events of one device;
 * VT_E_INVALID_ARG when either was never recorded. */
VT_WARN_UNUSED vt_status vt_event_elapsed_ms(vt_event *start, vt_event *end, float *ms);

/* Start recording q: the ops and async copies put on q until vt_graph_end
 * are recorded, not run (sync points and events on q are refused while it
 * records). Host memory named by recorded copies must stay valid for
 * every replay; the tensors must outlive the graph. */
VT_WARN_UNUSED vt_status vt_graph_begin(vt_queue *q);

/* Stop recording q; *out replays what was recorded. */
VT_WARN_UNUSED vt_status vt_graph_end(vt_queue *q, vt_graph **out);

/* Replay g on q (any queue of g's device) without re-recording; may
 * return before the work is done. */
VT_WARN_UNUSED vt_status vt_graph_launch(vt_graph *g, vt_queue *q);

/* Free a graph. NULL is ignored. */
void vt_graph_destroy(vt_graph *g);

#ifdef __cplusplus
}
#endif
#endif /* VT_QUEUE_H */
