/* event.c - vt_event: the plugin's events when it has queues, else events
 * that complete when recorded (the fallback queue's work is done by then),
 * timed with the host clock. */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "queue_internal.h"

struct vt_event {
    vt_device *dev;
    vt_backend_event *be; /* the plugin's event, or NULL: the fallback */
    vt_queue *q;          /* the queue it was last recorded on, or NULL (guarded by dev->queue_lock) */
    double host_ms;       /* fallback: host clock at the record */
    bool recorded;        /* recorded at least once (elapsed time needs it) */
};

/* Drop e from its queue's list (caller holds dev->queue_lock). */
static void unlink_locked(vt_event *e)
{
    vt_queue *q = e->q;
    if (!q)
        return;
    for (size_t i = 0; i < q->n_events; i++)
        if (q->events[i] == e) {
            q->events[i] = q->events[--q->n_events];
            break;
        }
    e->q = NULL;
}

/* Make q e's queue (the one its sync point reports on). */
static vt_status link_event(vt_event *e, vt_queue *q)
{
    vt_device *dev = e->dev;
    vt_status st = VT_OK;
    pthread_mutex_lock(&dev->queue_lock);
    if (e->q != q) {
        unlink_locked(e);
        if (q->n_events == q->cap_events) {
            size_t cap = q->cap_events ? q->cap_events * 2 : 4;
            vt_event **v = realloc(q->events, cap * sizeof *v);
            if (v) {
                q->events = v;
                q->cap_events = cap;
            }
        }
        if (q->n_events < q->cap_events) {
            q->events[q->n_events++] = e;
            e->q = q;
        } else {
            st = vt_set_error(VT_E_NO_MEMORY, "out of host memory recording an event on %s", dev->id);
        }
    }
    pthread_mutex_unlock(&dev->queue_lock);
    return st;
}

void vt_queue_unlink_events(vt_queue *q)
{
    pthread_mutex_lock(&q->dev->queue_lock);
    for (size_t i = 0; i < q->n_events; i++)
        q->events[i]->q = NULL;
    q->n_events = 0;
    pthread_mutex_unlock(&q->dev->queue_lock);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

vt_status vt_event_create(vt_device *dev, vt_event **out)
{
    if (!out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_event_create: out is NULL");
    *out = NULL;
    if (!dev)
        return vt_set_error(VT_E_INVALID_ARG, "vt_event_create: device is NULL");
    vt_event *e = calloc(1, sizeof *e);
    if (!e)
        return vt_set_error(VT_E_NO_MEMORY, "out of host memory creating an event on %s", dev->id);
    e->dev = dev;
    if (vt_plugin_has_queues(dev->plugin)) {
        char why[VT_WHY_SIZE] = "";
        const vt_backend_iface *f = dev->plugin->iface;
        vt_status st = f->event_create(dev->plugin->ctx, dev->index, &e->be, why, sizeof why);
        if (st != VT_OK || !e->be) {
            free(e);
            return vt_set_error(st != VT_OK ? st : VT_E_PLUGIN, "creating an event on %s failed: %s", dev->id,
                                why[0] ? why : "the backend returned no event");
        }
    }
    e->host_ms = now_ms();
    *out = e;
    return VT_OK;
}

void vt_event_destroy(vt_event *e)
{
    if (!e)
        return;
    pthread_mutex_lock(&e->dev->queue_lock);
    unlink_locked(e);
    pthread_mutex_unlock(&e->dev->queue_lock);
    if (e->be)
        e->dev->plugin->iface->event_destroy(e->dev->plugin->ctx, e->dev->index, e->be);
    free(e);
}

vt_status vt_event_record(vt_event *e, vt_queue *q)
{
    if (!e || !q)
        return vt_set_error(VT_E_INVALID_ARG, "vt_event_record: NULL argument");
    if (e->dev != q->dev)
        return vt_set_error(VT_E_INVALID_ARG, "vt_event_record: the event is of %s, the queue of %s", e->dev->id,
                            q->dev->id);
    pthread_mutex_lock(&q->lock);
    vt_status st = VT_OK;
    if (q->recording != VT_REC_NONE) {
        st = vt_set_error(VT_E_INVALID_ARG, "vt_event_record on %s: the queue is recording a graph", q->dev->id);
    } else if (e->be) {
        char why[VT_WHY_SIZE] = "";
        const vt_backend_iface *f = q->dev->plugin->iface;
        st = f->event_record(q->dev->plugin->ctx, q->dev->index, q->bq, e->be, why, sizeof why);
        if (st != VT_OK)
            st = vt_set_error(st, "recording an event on %s failed: %s", q->dev->id, why);
    } else {
        e->host_ms = now_ms(); /* the fallback queue's work is done by now */
    }
    if (st == VT_OK)
        e->recorded = true;
    pthread_mutex_unlock(&q->lock);
    return st == VT_OK ? link_event(e, q) : st;
}

vt_status vt_queue_wait_event(vt_queue *q, vt_event *e)
{
    if (!e || !q)
        return vt_set_error(VT_E_INVALID_ARG, "vt_queue_wait_event: NULL argument");
    if (e->dev != q->dev)
        return vt_event_synchronize(e); /* another device: the host waits */
    if (!e->be)
        return VT_OK; /* the fallback's events complete when recorded */
    pthread_mutex_lock(&q->lock);
    vt_status st = VT_OK;
    if (q->recording != VT_REC_NONE) {
        st = vt_set_error(VT_E_INVALID_ARG, "vt_queue_wait_event on %s: the queue is recording a graph", q->dev->id);
    } else {
        char why[VT_WHY_SIZE] = "";
        const vt_backend_iface *f = q->dev->plugin->iface;
        st = f->queue_wait_event(q->dev->plugin->ctx, q->dev->index, q->bq, e->be, why, sizeof why);
        if (st != VT_OK)
            st = vt_set_error(st, "a queue of %s cannot wait for the event: %s", q->dev->id, why);
    }
    pthread_mutex_unlock(&q->lock);
    return st;
}

vt_status vt_event_query(vt_event *e)
{
    if (!e)
        return vt_set_error(VT_E_INVALID_ARG, "vt_event_query: event is NULL");
    if (!e->be)
        return VT_OK;
    vt_status st = e->dev->plugin->iface->event_query(e->dev->plugin->ctx, e->dev->index, e->be);
    if (st != VT_OK && st != VT_E_NOT_READY)
        return vt_set_error(st, "querying an event on %s failed", e->dev->id);
    return st;
}

vt_status vt_event_synchronize(vt_event *e)
{
    if (!e)
        return vt_set_error(VT_E_INVALID_ARG, "vt_event_synchronize: event is NULL");
    vt_device *dev = e->dev;
    vt_status st = VT_OK;
    uint32_t failed = 0;
    char why[VT_WHY_SIZE] = "";
    if (e->be)
        st = dev->plugin->iface->event_sync(dev->plugin->ctx, dev->index, e->be, &failed, why, sizeof why);
    else
        atomic_fetch_add(&dev->core_syncs, 1);
    vt_status qe = VT_OK;
    char text[VT_QUEUE_ERROR_TEXT];
    pthread_mutex_lock(&dev->queue_lock); /* e->q stays alive while held */
    vt_queue *q = e->q;
    if (q) { /* the host-recorded error of that queue comes first */
        pthread_mutex_lock(&q->lock);
        qe = q->err;
        if (qe != VT_OK) {
            memcpy(text, q->err_text, sizeof text);
            q->err = VT_OK;
        }
        pthread_mutex_unlock(&q->lock);
    }
    pthread_mutex_unlock(&dev->queue_lock);
    if (qe != VT_OK)
        return vt_set_error(qe, "%s", text);
    if (st != VT_OK) {
        const char *name = vt_op_name(failed);
        if (name)
            return vt_set_error(st, "%s (%u) on %s: %s", name, failed, dev->id, vt_why_strip_op(why, failed));
        return vt_set_error(st, "waiting for an event on %s failed: %s", dev->id, why[0] ? why : vt_status_name(st));
    }
    return VT_OK;
}

vt_status vt_event_elapsed_ms(vt_event *start, vt_event *end, float *ms)
{
    if (!start || !end || !ms)
        return vt_set_error(VT_E_INVALID_ARG, "vt_event_elapsed_ms: NULL argument");
    if (start->dev != end->dev)
        return vt_set_error(VT_E_INVALID_ARG, "vt_event_elapsed_ms: events of %s and %s", start->dev->id, end->dev->id);
    if (!start->recorded || !end->recorded)
        return vt_set_error(VT_E_INVALID_ARG, "vt_event_elapsed_ms on %s: the %s event was never recorded",
                            start->dev->id, start->recorded ? "end" : "start");
    if (!start->be || !end->be) {
        *ms = (float)(end->host_ms - start->host_ms);
        return VT_OK;
    }
    char why[VT_WHY_SIZE] = "";
    vt_device *dev = start->dev;
    vt_status st =
        dev->plugin->iface->event_elapsed_ms(dev->plugin->ctx, dev->index, start->be, end->be, ms, why, sizeof why);
    if (st != VT_OK)
        return vt_set_error(st, "elapsed time between events on %s: %s", dev->id, why);
    return VT_OK;
}
