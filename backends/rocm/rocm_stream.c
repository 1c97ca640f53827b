/* rocm_stream.c - the rocm backend's version-2 vtable members: queues
 * (one HIP stream each), enqueue, sync points that surface the device
 * error word, asynchronous copies, events, graphs (stream capture) and the
 * shape predicate accepts. Nothing here waits except the sync points. */
#include "config.h"

#include <stdlib.h>

#include "rocm_common.h"

static vt_status rocm_queue_create(vt_backend_ctx *c, int dev, vt_backend_queue **q, char *why, size_t why_size)
{
    return vt_rocm_queue_new(c, dev, q, why, why_size);
}

static void rocm_queue_destroy(vt_backend_ctx *c, int dev, vt_backend_queue *q)
{
    if (dev >= 0 && dev < c->n_devices)
        vt_rocm_queue_free(c, dev, q);
}

/* The one place operand addresses are formed: handle + offset. */
static vt_status rocm_enqueue(vt_backend_ctx *c, int dev, const vt_kernel *k, const vt_op_args *args, char *why,
                              size_t why_size)
{
    if (!args->queue)
        return vt_why(VT_E_INVALID_ARG, why, why_size, "enqueue without a queue");
    vt_op_args a;
    vt_op_args_fold_offsets(args, &a);
    vt_status st = k->run(c, dev, &a, why, why_size);
    if (st == VT_OK && !args->queue->capturing)
        vt_rocm_count_launch(c, dev);
    return st;
}

static vt_status rocm_queue_sync(vt_backend_ctx *c, int dev, vt_backend_queue *q, uint32_t *failed_op, char *why,
                                 size_t why_size)
{
    return vt_rocm_queue_wait(c, dev, q, failed_op, why, why_size);
}

static void count_copy(vt_backend_ctx *c, int dev, bool h2d, uint64_t bytes)
{
    rocm_device *rd = &c->dev[dev];
    pthread_mutex_lock(&rd->lock);
    if (h2d) {
        rd->counters.h2d_copies++;
        rd->counters.h2d_bytes += bytes;
    } else {
        rd->counters.d2h_copies++;
        rd->counters.d2h_bytes += bytes;
    }
    pthread_mutex_unlock(&rd->lock);
}

static vt_status rocm_write_async(vt_backend_ctx *c, int dev, vt_backend_queue *q, void *dst, uint64_t dst_offset,
                                  const void *src, uint64_t bytes, char *why, size_t why_size)
{
    vt_status st = vt_rocm_use(c, dev, why, why_size);
    if (st != VT_OK)
        return st;
    hipError_t e = hipMemcpyAsync((char *)dst + dst_offset, src, (size_t)bytes, hipMemcpyHostToDevice, q->stream);
    if (e != hipSuccess) {
        (void)hipGetLastError();
        return vt_rocm_fail(e, "hipMemcpyAsync(host to device)", dev, why, why_size);
    }
    count_copy(c, dev, true, bytes);
    return VT_OK;
}

static vt_status rocm_read_async(vt_backend_ctx *c, int dev, vt_backend_queue *q, void *dst, const void *src,
                                 uint64_t src_offset, uint64_t bytes, char *why, size_t why_size)
{
    vt_status st = vt_rocm_use(c, dev, why, why_size);
    if (st != VT_OK)
        return st;
    hipError_t e = hipMemcpyAsync(dst, (const char *)src + src_offset, (size_t)bytes, hipMemcpyDeviceToHost, q->stream);
    if (e != hipSuccess) {
        (void)hipGetLastError();
        return vt_rocm_fail(e, "hipMemcpyAsync(device to host)", dev, why, why_size);
    }
    count_copy(c, dev, false, bytes);
    return VT_OK;
}

static vt_status rocm_copy_async(vt_backend_ctx *c, int dev, vt_backend_queue *q, void *dst, uint64_t dst_offset,
                                 const void *src, uint64_t src_offset, uint64_t bytes, char *why, size_t why_size)
{
    vt_status st = vt_rocm_use(c, dev, why, why_size);
    if (st != VT_OK)
        return st;
    hipError_t e = hipMemcpyAsync((char *)dst + dst_offset, (const char *)src + src_offset, (size_t)bytes,
                                  hipMemcpyDeviceToDevice, q->stream);
    if (e != hipSuccess) {
        (void)hipGetLastError();
        return vt_rocm_fail(e, "hipMemcpyAsync(device to device)", dev, why, why_size);
    }
    return VT_OK;
}

static vt_status rocm_event_create(vt_backend_ctx *c, int dev, vt_backend_event **out, char *why, size_t why_size)
{
    vt_status st = vt_rocm_use(c, dev, why, why_size);
    if (st != VT_OK)
        return st;
    vt_backend_event *ev = calloc(1, sizeof *ev);
    if (!ev)
        return vt_why(VT_E_NO_MEMORY, why, why_size, "out of host memory");
    hipError_t e = hipEventCreate(&ev->ev);
    if (e != hipSuccess) {
        free(ev);
        (void)hipGetLastError();
        return vt_rocm_fail(e, "hipEventCreate", dev, why, why_size);
    }
    e = hipHostMalloc((void **)&ev->mirror, sizeof *ev->mirror, hipHostMallocDefault);
    if (e != hipSuccess) {
        (void)hipEventDestroy(ev->ev);
        free(ev);
        (void)hipGetLastError();
        return vt_rocm_fail(e, "hipHostMalloc(event's error word)", dev, why, why_size);
    }
    *out = ev;
    return VT_OK;
}

static void rocm_event_destroy(vt_backend_ctx *c, int dev, vt_backend_event *ev)
{
    if (!ev)
        return;
    if (vt_rocm_use(c, dev, NULL, 0) == VT_OK) {
        (void)hipEventDestroy(ev->ev);
        (void)hipHostFree(ev->mirror);
    }
    free(ev);
}

static vt_status rocm_event_record(vt_backend_ctx *c, int dev, vt_backend_queue *q, vt_backend_event *ev, char *why,
                                   size_t why_size)
{
    vt_status st = vt_rocm_use(c, dev, why, why_size);
    if (st != VT_OK)
        return st;
    /* A copy of the error word travels with the event, so event_sync can
     * name an error without touching the queue. */
    bool mirror = q->maybe_err && !q->capturing;
    hipError_t e = hipSuccess;
    if (mirror)
        e = hipMemcpyAsync(ev->mirror, q->err, sizeof *ev->mirror, hipMemcpyDeviceToHost, q->stream);
    if (e == hipSuccess)
        e = hipEventRecord(ev->ev, q->stream);
    if (e != hipSuccess) {
        (void)hipGetLastError();
        return vt_rocm_fail(e, "hipEventRecord", dev, why, why_size);
    }
    ev->q = q;
    ev->mirrored = mirror;
    return VT_OK;
}

static vt_status rocm_queue_wait_event(vt_backend_ctx *c, int dev, vt_backend_queue *q, vt_backend_event *ev, char *why,
                                       size_t why_size)
{
    vt_status st = vt_rocm_use(c, dev, why, why_size);
    if (st != VT_OK)
        return st;
    hipError_t e = hipStreamWaitEvent(q->stream, ev->ev, 0);
    return e == hipSuccess ? VT_OK : vt_rocm_fail(e, "hipStreamWaitEvent", dev, why, why_size);
}

static vt_status rocm_event_query(vt_backend_ctx *c, int dev, vt_backend_event *ev)
{
    if (vt_rocm_use(c, dev, NULL, 0) != VT_OK)
        return VT_E_NOT_FOUND;
    hipError_t e = hipEventQuery(ev->ev);
    if (e == hipSuccess)
        return VT_OK;
    if (e == hipErrorNotReady) {
        (void)hipGetLastError();
        return VT_E_NOT_READY;
    }
    (void)hipGetLastError();
    return VT_E_DEVICE;
}

static vt_status rocm_event_sync(vt_backend_ctx *c, int dev, vt_backend_event *ev, uint32_t *failed_op, char *why,
                                 size_t why_size)
{
    if (failed_op)
        *failed_op = 0;
    vt_status st = vt_rocm_use(c, dev, why, why_size);
    if (st != VT_OK)
        return st;
    hipError_t e = hipEventSynchronize(ev->ev);
    vt_rocm_count_sync(c, dev);
    if (e != hipSuccess)
        return vt_rocm_fail(e, "hipEventSynchronize", dev, why, why_size);
    if (!ev->mirrored || ev->mirror->code == VT_ROCM_ERR_NONE)
        return VT_OK;
    vt_rocm_err word = *ev->mirror;
    /* Remember it on the queue (if it still exists) so its next sync does
     * not return it a second time. */
    vt_backend_queue *q = ev->q;
    pthread_mutex_lock(&c->dev[dev].lock);
    bool seen = false;
    if (vt_rocm_queue_live(c, dev, q)) {
        seen = q->have_reported && vt_rocm_err_same(&q->reported, &word);
        q->reported = word;
        q->have_reported = true;
    }
    pthread_mutex_unlock(&c->dev[dev].lock);
    if (seen) /* returned once already; the queue's next sync clears it */
        return VT_OK;
    if (failed_op)
        *failed_op = word.op;
    vt_rocm_err_text(&word, why, why_size);
    return VT_E_INVALID_ARG;
}

static vt_status rocm_event_elapsed_ms(vt_backend_ctx *c, int dev, vt_backend_event *start, vt_backend_event *end,
                                       float *ms, char *why, size_t why_size)
{
    vt_status st = vt_rocm_use(c, dev, why, why_size);
    if (st != VT_OK)
        return st;
    hipError_t e = hipEventElapsedTime(ms, start->ev, end->ev);
    if (e == hipErrorNotReady) {
        (void)hipGetLastError();
        return vt_why(VT_E_NOT_READY, why, why_size, "an event has not completed");
    }
    return e == hipSuccess ? VT_OK : vt_rocm_fail(e, "hipEventElapsedTime", dev, why, why_size);
}

static vt_status rocm_graph_begin(vt_backend_ctx *c, int dev, vt_backend_queue *q, char *why, size_t why_size)
{
    vt_status st = vt_rocm_use(c, dev, why, why_size);
    if (st != VT_OK)
        return st;
    if (q->capturing)
        return vt_why(VT_E_INVALID_ARG, why, why_size, "the queue is recording a graph already");
    /* Relaxed: the scratch of a first call may be allocated while recording. */
    hipError_t e = hipStreamBeginCapture(q->stream, hipStreamCaptureModeRelaxed);
    if (e != hipSuccess) {
        (void)hipGetLastError();
        return vt_rocm_fail(e, "hipStreamBeginCapture", dev, why, why_size);
    }
    q->capturing = true;
    q->captured_check = false;
    return VT_OK;
}

static vt_status rocm_graph_end(vt_backend_ctx *c, int dev, vt_backend_queue *q, vt_backend_graph **out, char *why,
                                size_t why_size)
{
    vt_status st = vt_rocm_use(c, dev, why, why_size);
    if (st != VT_OK)
        return st;
    if (!q->capturing)
        return vt_why(VT_E_INVALID_ARG, why, why_size, "the queue is not recording a graph");
    q->capturing = false;
    vt_backend_graph *g = calloc(1, sizeof *g);
    hipGraph_t graph = NULL;
    hipError_t e = hipStreamEndCapture(q->stream, &graph);
    if (e != hipSuccess) {
        (void)hipGetLastError();
        free(g);
        return vt_rocm_fail(e, "hipStreamEndCapture", dev, why, why_size);
    }
    if (!g) {
        (void)hipGraphDestroy(graph);
        return vt_why(VT_E_NO_MEMORY, why, why_size, "out of host memory");
    }
    e = hipGraphInstantiate(&g->exec, graph, NULL, NULL, 0);
    if (e != hipSuccess) {
        (void)hipGetLastError();
        (void)hipGraphDestroy(graph);
        free(g);
        return vt_rocm_fail(e, "hipGraphInstantiate", dev, why, why_size);
    }
    g->graph = graph;
    g->origin_err = q->err;
    g->has_check = q->captured_check;
    *out = g;
    return VT_OK;
}

static vt_status rocm_graph_launch(vt_backend_ctx *c, int dev, vt_backend_queue *q, vt_backend_graph *g, char *why,
                                   size_t why_size)
{
    vt_status st = vt_rocm_use(c, dev, why, why_size);
    if (st != VT_OK)
        return st;
    hipError_t e = hipGraphLaunch(g->exec, q->stream);
    /* Checks in the graph report into the word of the queue it was
     * recorded on: move an error to q's word, in q's order. */
    if (e == hipSuccess && g->has_check && g->origin_err != q->err)
        e = vt_rocm_launch_err_move(g->origin_err, q->err, q->stream);
    if (e != hipSuccess) {
        (void)hipGetLastError();
        return vt_rocm_fail(e, "hipGraphLaunch", dev, why, why_size);
    }
    if (g->has_check)
        q->maybe_err = true;
    if (!q->capturing)
        vt_rocm_count_launch(c, dev);
    return VT_OK;
}

static void rocm_graph_destroy(vt_backend_ctx *c, int dev, vt_backend_graph *g)
{
    if (!g)
        return;
    if (vt_rocm_use(c, dev, NULL, 0) == VT_OK) {
        (void)hipGraphExecDestroy(g->exec);
        (void)hipGraphDestroy(g->graph);
    }
    free(g);
}

/* The kernel limits that depend on shapes only, refused at plan time. */
static vt_status rocm_accepts(vt_backend_ctx *c, int dev, const vt_kernel *k, const vt_op_args *args, char *why,
                              size_t why_size)
{
    (void)c;
    (void)dev;
    if (k->op == VT_OP_GATED_DELTA_RULE && args->n_in > 0 && args->in[0].ndim == 4 &&
        args->in[0].shape[3] > VT_ROCM_GDR_MAX_DK)
        return vt_why(VT_E_OP_MISSING, why, why_size, "GatedDeltaRule dk = %lld > %d", (long long)args->in[0].shape[3],
                      VT_ROCM_GDR_MAX_DK);
    if (k->op == VT_OP_MOE_ROUTER && args->n_in > 0 && args->in[0].ndim == 2 &&
        args->in[0].shape[1] > VT_ROCM_ROUTER_MAX_E)
        return vt_why(VT_E_OP_MISSING, why, why_size, "MoeRouter E = %lld > %d", (long long)args->in[0].shape[1],
                      VT_ROCM_ROUTER_MAX_E);
    return VT_OK;
}

void vt_rocm_fill_iface_v2(vt_backend_iface *f)
{
    f->iface_version = VT_IFACE_VERSION;
    f->queue_create = rocm_queue_create;
    f->queue_destroy = rocm_queue_destroy;
    f->enqueue = rocm_enqueue;
    f->queue_sync = rocm_queue_sync;
    f->write_async = rocm_write_async;
    f->read_async = rocm_read_async;
    f->copy_async = rocm_copy_async;
    f->event_create = rocm_event_create;
    f->event_destroy = rocm_event_destroy;
    f->event_record = rocm_event_record;
    f->queue_wait_event = rocm_queue_wait_event;
    f->event_query = rocm_event_query;
    f->event_sync = rocm_event_sync;
    f->event_elapsed_ms = rocm_event_elapsed_ms;
    f->graph_begin = rocm_graph_begin;
    f->graph_end = rocm_graph_end;
    f->graph_launch = rocm_graph_launch;
    f->graph_destroy = rocm_graph_destroy;
    f->accepts = rocm_accepts;
}
