/* queue.c - vt_queue: the plugin's queue when it has them (version 2),
 * else the core's synchronous fallback; putting work on a queue and the
 * sync point that names the first error of that work. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue_internal.h"

bool vt_plugin_has_queues(const vt_plugin *p)
{
    return p && p->iface && VT_IFACE_HAS(p->iface, queue_create);
}

char *vt_iface_v2_problem(const vt_backend_iface *f)
{
    if (!VT_IFACE_COVERS(f, iface_version) || f->iface_version < 2)
        return NULL;
    if (VT_IFACE_HAS(f, queue_create)) {
        const char *missing = !VT_IFACE_HAS(f, queue_destroy)      ? "queue_destroy"
                              : !VT_IFACE_HAS(f, enqueue)          ? "enqueue"
                              : !VT_IFACE_HAS(f, queue_sync)       ? "queue_sync"
                              : !VT_IFACE_HAS(f, write_async)      ? "write_async"
                              : !VT_IFACE_HAS(f, read_async)       ? "read_async"
                              : !VT_IFACE_HAS(f, copy_async)       ? "copy_async"
                              : !VT_IFACE_HAS(f, event_create)     ? "event_create"
                              : !VT_IFACE_HAS(f, event_destroy)    ? "event_destroy"
                              : !VT_IFACE_HAS(f, event_record)     ? "event_record"
                              : !VT_IFACE_HAS(f, queue_wait_event) ? "queue_wait_event"
                              : !VT_IFACE_HAS(f, event_query)      ? "event_query"
                              : !VT_IFACE_HAS(f, event_sync)       ? "event_sync"
                              : !VT_IFACE_HAS(f, event_elapsed_ms) ? "event_elapsed_ms"
                                                                   : NULL;
        if (missing)
            return vt_strdup_printf("vtable sets queue_create but not %s (the queue set is all or nothing)", missing);
    }
    int graphs = VT_IFACE_HAS(f, graph_begin) + VT_IFACE_HAS(f, graph_end) + VT_IFACE_HAS(f, graph_launch) +
                 VT_IFACE_HAS(f, graph_destroy);
    if (graphs != 0 && (graphs != 4 || !VT_IFACE_HAS(f, queue_create)))
        return vt_strdup_printf("vtable sets %d of the 4 graph functions%s", graphs,
                                graphs == 4 ? " without queues" : " (all or nothing)");
    return NULL;
}

const char *vt_why_strip_op(const char *why, uint32_t op)
{
    const char *name = vt_op_name(op);
    if (!why || !name)
        return why ? why : "";
    char head[96];
    int n = snprintf(head, sizeof head, "%s (%u): ", name, op);
    if (n > 0 && (size_t)n < sizeof head && strncmp(why, head, (size_t)n) == 0)
        return why + n;
    return why;
}

void vt_queue_record_error(vt_queue *q, vt_status st, const char *fmt, ...)
{
    if (q->err != VT_OK)
        return; /* the first error wins */
    q->err = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(q->err_text, sizeof q->err_text, fmt, ap);
    va_end(ap);
}

static vt_status queue_new(vt_device *dev, bool is_default, vt_queue **out)
{
    *out = NULL;
    vt_queue *q = calloc(1, sizeof *q);
    if (!q)
        return vt_set_error(VT_E_NO_MEMORY, "out of host memory creating a queue on %s", dev->id);
    q->dev = dev;
    q->is_default = is_default;
    if (vt_plugin_has_queues(dev->plugin)) {
        char why[VT_WHY_SIZE] = "";
        const vt_backend_iface *f = dev->plugin->iface;
        vt_status st = f->queue_create(dev->plugin->ctx, dev->index, &q->bq, why, sizeof why);
        if (st != VT_OK || !q->bq) {
            free(q);
            return vt_set_error(st != VT_OK ? st : VT_E_PLUGIN, "creating a queue on %s failed: %s", dev->id,
                                why[0] ? why : "the backend returned no queue");
        }
    }
    pthread_mutex_init(&q->lock, NULL);
    *out = q;
    return VT_OK;
}

static void queue_free(vt_queue *q)
{
    vt_queue_unlink_events(q); /* their sync points no longer reach q */
    pthread_mutex_lock(&q->lock);
    if (q->recording == VT_REC_CORE) {
        vt_graph_items_free(q->rec);
        free(q->rec);
    }
    const vt_backend_iface *f = q->dev->plugin->iface;
    if (q->bq) {
        uint32_t failed = 0;
        char why[VT_WHY_SIZE];
        if (q->recording == VT_REC_PLUGIN) {
            vt_backend_graph *g = NULL;
            if (f->graph_end(q->dev->plugin->ctx, q->dev->index, q->bq, &g, why, sizeof why) == VT_OK && g)
                f->graph_destroy(q->dev->plugin->ctx, q->dev->index, g);
        }
        f->queue_sync(q->dev->plugin->ctx, q->dev->index, q->bq, &failed, why, sizeof why); /* errors dropped */
        f->queue_destroy(q->dev->plugin->ctx, q->dev->index, q->bq);
    }
    pthread_mutex_unlock(&q->lock);
    pthread_mutex_destroy(&q->lock);
    free(q->events);
    free(q);
}

vt_status vt_queue_create(vt_device *dev, vt_queue **out)
{
    if (!out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_queue_create: out is NULL");
    *out = NULL;
    if (!dev)
        return vt_set_error(VT_E_INVALID_ARG, "vt_queue_create: device is NULL");
    return queue_new(dev, false, out);
}

void vt_queue_destroy(vt_queue *q)
{
    if (!q || q->is_default)
        return;
    queue_free(q);
}

vt_queue *vt_device_default_queue(vt_device *dev)
{
    if (!dev) {
        vt_set_error(VT_E_INVALID_ARG, "vt_device_default_queue: device is NULL");
        return NULL;
    }
    pthread_mutex_lock(&dev->queue_lock);
    if (!dev->default_queue)
        queue_new(dev, true, &dev->default_queue);
    vt_queue *q = dev->default_queue;
    pthread_mutex_unlock(&dev->queue_lock);
    return q;
}

void vt_device_queues_fini(vt_device *dev)
{
    if (dev->default_queue)
        queue_free(dev->default_queue);
    dev->default_queue = NULL;
    pthread_mutex_destroy(&dev->queue_lock);
}

vt_device *vt_queue_device(const vt_queue *q)
{
    return q ? q->dev : NULL;
}

/* Name a failure the plugin reported for failed_op on dev. */
static vt_status named(vt_status st, const vt_device *dev, uint32_t failed_op, const char *why)
{
    const char *name = vt_op_name(failed_op);
    if (name)
        return vt_set_error(st, "%s (%u) on %s: %s", name, failed_op, dev->id, vt_why_strip_op(why, failed_op));
    return vt_set_error(st, "work on %s failed: %s", dev->id, why[0] ? why : vt_status_name(st));
}

vt_status vt_queue_sync_locked(vt_queue *q)
{
    vt_device *dev = q->dev;
    const vt_backend_iface *f = dev->plugin->iface;
    if (q->recording != VT_REC_NONE)
        return vt_set_error(VT_E_INVALID_ARG, "sync point on a queue of %s while it records a graph (end it first)",
                            dev->id);
    char why[VT_WHY_SIZE] = "";
    uint32_t failed = 0;
    vt_status st;
    if (q->bq) {
        st = f->queue_sync(dev->plugin->ctx, dev->index, q->bq, &failed, why, sizeof why);
    } else {
        /* The fallback ran everything on this thread (a kernel of a plugin
         * without queues finishes before it returns): nothing to wait for. */
        st = VT_OK;
        atomic_fetch_add(&dev->core_syncs, 1);
    }
    if (q->err != VT_OK) { /* recorded by the host before the device's later work */
        vt_status e = q->err;
        q->err = VT_OK;
        return vt_set_error(e, "%s", q->err_text);
    }
    if (st != VT_OK)
        return named(st, dev, failed, why);
    return VT_OK;
}

vt_status vt_queue_synchronize(vt_queue *q)
{
    if (!q)
        return vt_set_error(VT_E_INVALID_ARG, "vt_queue_synchronize: queue is NULL");
    pthread_mutex_lock(&q->lock);
    vt_status st = vt_queue_sync_locked(q);
    pthread_mutex_unlock(&q->lock);
    return st;
}

/* Run an op on the host's side of q: a backend without queues, or the
 * portable CPU tier. Its failure becomes q's error for the sync point. */
static void run_on_host(vt_queue *q, const vt_work *w)
{
    vt_device *dev = q->dev;
    const vt_backend_iface *f = dev->plugin->iface;
    const char *name = vt_op_name(w->args.op);
    char why[VT_WHY_SIZE] = "";
    vt_op_args a;
    vt_op_args_fold_offsets(&w->args, &a); /* a pointer-based kernel: addresses formed here */
    a.queue = NULL;
    vt_status st;
    if (w->tier == VT_TIER_NATIVE) {
        st = w->k->run(dev->plugin->ctx, dev->index, &a, why, sizeof why);
        atomic_fetch_add(&dev->core_launches, 1);
        if (st != VT_OK)
            vt_queue_record_error(q, st, "%s (%u) on %s: %s", name, w->args.op, dev->id,
                                  vt_why_strip_op(why, w->args.op));
        else
            atomic_fetch_add(&dev->native_runs, 1);
        return;
    }
    /* The portable CPU tier: the cpu backend's kernel on this device's
     * memory, once the device's earlier work on q is done. */
    uint32_t failed = 0;
    if (q->bq)
        st = f->queue_sync(dev->plugin->ctx, dev->index, q->bq, &failed, why, sizeof why);
    else
        st = f->synchronize(dev->plugin->ctx, dev->index, why, sizeof why);
    if (st != VT_OK) {
        const char *fname = vt_op_name(failed);
        if (fname)
            vt_queue_record_error(q, st, "%s (%u) on %s: %s", fname, failed, dev->id, vt_why_strip_op(why, failed));
        else
            vt_queue_record_error(q, st, "%s (%u) on %s via the portable CPU tier: %s", name, w->args.op, dev->id, why);
        return;
    }
    vt_plugin *cpu = vt_registry_cpu(dev->reg);
    st = w->k->run(cpu->ctx, 0, &a, why, sizeof why);
    if (st == VT_OK && !q->bq)
        st = f->synchronize(dev->plugin->ctx, dev->index, why, sizeof why);
    if (st != VT_OK) {
        vt_queue_record_error(q, st, "%s (%u) on %s via the portable CPU tier: %s", name, w->args.op, dev->id,
                              vt_why_strip_op(why, w->args.op));
        return;
    }
    atomic_fetch_add(&dev->cpu_tier_runs, 1);
    if (dev->reg->on_cpu_tier) { /* reported, not printed: the caller decides what to show */
        char text[160];
        snprintf(text, sizeof text, "%s (%u) on %s ran on the portable CPU tier", name, w->args.op, dev->id);
        dev->reg->on_cpu_tier(dev->reg->on_cpu_tier_user, dev, w->args.op, text);
    }
}

/* A device-to-device copy for a backend without copy_async: through host memory. */
static vt_status copy_through_host(vt_device *dev, const vt_work *w, char *why, size_t why_size)
{
    const vt_backend_iface *f = dev->plugin->iface;
    void *tmp = malloc(w->bytes ? (size_t)w->bytes : 1);
    if (!tmp)
        return vt_why(VT_E_NO_MEMORY, why, why_size, "out of host memory staging %llu bytes",
                      (unsigned long long)w->bytes);
    vt_status st =
        f->read(dev->plugin->ctx, dev->index, tmp, (const char *)w->src + w->src_off, w->bytes, why, why_size);
    if (st == VT_OK)
        st = f->write(dev->plugin->ctx, dev->index, (char *)w->dst + w->dst_off, tmp, w->bytes, why, why_size);
    free(tmp);
    return st;
}

vt_status vt_queue_submit_locked(vt_queue *q, const vt_work *w)
{
    if (q->recording == VT_REC_CORE)
        return vt_graph_append(q->rec, w);
    vt_device *dev = q->dev;
    const vt_backend_iface *f = dev->plugin->iface;
    vt_backend_ctx *ctx = dev->plugin->ctx;
    char why[VT_WHY_SIZE] = "";
    vt_status st = VT_OK;
    if (w->kind == VT_WORK_OP) {
        const char *name = vt_op_name(w->args.op);
        if (w->tier == VT_TIER_NATIVE && q->bq) {
            vt_op_args a = w->args;
            a.queue = q->bq;
            st = f->enqueue(ctx, dev->index, w->k, &a, why, sizeof why);
            if (st != VT_OK)
                return vt_set_error(st, "%s (%u) on %s: %s", name, w->args.op, dev->id,
                                    vt_why_strip_op(why, w->args.op));
            atomic_fetch_add(&dev->native_runs, 1);
            return VT_OK;
        }
        if (q->recording == VT_REC_PLUGIN)
            return vt_set_error(VT_E_UNSUPPORTED,
                                "%s (%u) on %s: the portable CPU tier waits on the host and cannot be recorded in "
                                "the device's graph",
                                name, w->args.op, dev->id);
        if (q->err == VT_OK) /* after an error the rest waits for the sync point, unrun */
            run_on_host(q, w);
        return VT_OK;
    }
    const char *what = w->kind == VT_WORK_WRITE ? "to" : w->kind == VT_WORK_READ ? "from" : "within";
    if (q->bq) {
        if (w->kind == VT_WORK_WRITE)
            st = f->write_async(ctx, dev->index, q->bq, w->dst, w->dst_off, w->src, w->bytes, why, sizeof why);
        else if (w->kind == VT_WORK_READ)
            st = f->read_async(ctx, dev->index, q->bq, w->dst, w->src, w->src_off, w->bytes, why, sizeof why);
        else
            st = f->copy_async(ctx, dev->index, q->bq, w->dst, w->dst_off, w->src, w->src_off, w->bytes, why,
                               sizeof why);
    } else if (q->err == VT_OK) {
        /* A version-1 plugin: pointer-based, blocking copies. */
        if (w->kind == VT_WORK_WRITE)
            st = f->write(ctx, dev->index, (char *)w->dst + w->dst_off, w->src, w->bytes, why, sizeof why);
        else if (w->kind == VT_WORK_READ)
            st = f->read(ctx, dev->index, w->dst, (const char *)w->src + w->src_off, w->bytes, why, sizeof why);
        else
            st = copy_through_host(dev, w, why, sizeof why);
    }
    if (st != VT_OK)
        return vt_set_error(st, "copy of %llu bytes %s %s failed: %s", (unsigned long long)w->bytes, what, dev->id,
                            why[0] ? why : vt_status_name(st));
    return VT_OK;
}
