/* graph.c - vt_graph: the plugin's graph (stream capture) when it has
 * one, else the list of work the core recorded, replayed in order through
 * the queue (enqueues and async copies on a backend with queues, host runs
 * on one without). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "queue_internal.h"

vt_status vt_graph_append(vt_graph *g, const vt_work *w)
{
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 16;
        vt_work *items = realloc(g->items, cap * sizeof *items);
        if (!items)
            return vt_set_error(VT_E_NO_MEMORY, "out of host memory recording a graph on %s", g->dev->id);
        g->items = items;
        g->cap = cap;
    }
    vt_work *c = &g->items[g->n];
    *c = *w;
    if (w->kind == VT_WORK_OP && w->args.params && w->args.params_size) {
        void *p = malloc(w->args.params_size);
        if (!p)
            return vt_set_error(VT_E_NO_MEMORY, "out of host memory recording a graph on %s", g->dev->id);
        memcpy(p, w->args.params, w->args.params_size);
        c->args.params = p;
    }
    g->n++;
    return VT_OK;
}

void vt_graph_items_free(vt_graph *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->n; i++)
        if (g->items[i].kind == VT_WORK_OP)
            free((void *)g->items[i].args.params);
    free(g->items);
    g->items = NULL;
    g->n = g->cap = 0;
}

vt_status vt_graph_begin(vt_queue *q)
{
    if (!q)
        return vt_set_error(VT_E_INVALID_ARG, "vt_graph_begin: queue is NULL");
    vt_device *dev = q->dev;
    const vt_backend_iface *f = dev->plugin->iface;
    pthread_mutex_lock(&q->lock);
    vt_status st = VT_OK;
    if (q->recording != VT_REC_NONE) {
        st = vt_set_error(VT_E_INVALID_ARG, "vt_graph_begin on %s: the queue is already recording", dev->id);
    } else if (q->bq && VT_IFACE_HAS(f, graph_begin)) {
        char why[VT_WHY_SIZE] = "";
        st = f->graph_begin(dev->plugin->ctx, dev->index, q->bq, why, sizeof why);
        if (st != VT_OK)
            st = vt_set_error(st, "starting a graph on %s failed: %s", dev->id, why);
        else
            q->recording = VT_REC_PLUGIN;
    } else {
        q->rec = calloc(1, sizeof *q->rec);
        if (!q->rec) {
            st = vt_set_error(VT_E_NO_MEMORY, "out of host memory starting a graph on %s", dev->id);
        } else {
            q->rec->dev = dev;
            q->recording = VT_REC_CORE;
        }
    }
    pthread_mutex_unlock(&q->lock);
    return st;
}

vt_status vt_graph_end(vt_queue *q, vt_graph **out)
{
    if (!q || !out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_graph_end: NULL argument");
    *out = NULL;
    vt_device *dev = q->dev;
    const vt_backend_iface *f = dev->plugin->iface;
    pthread_mutex_lock(&q->lock);
    vt_status st = VT_OK;
    if (q->recording == VT_REC_NONE) {
        st = vt_set_error(VT_E_INVALID_ARG, "vt_graph_end on %s: the queue is not recording", dev->id);
    } else if (q->recording == VT_REC_CORE) {
        *out = q->rec;
        q->rec = NULL;
        q->recording = VT_REC_NONE;
    } else {
        q->recording = VT_REC_NONE;
        vt_graph *g = calloc(1, sizeof *g);
        char why[VT_WHY_SIZE] = "";
        vt_backend_graph *bg = NULL;
        st = f->graph_end(dev->plugin->ctx, dev->index, q->bq, &bg, why, sizeof why);
        if (st != VT_OK || !g) {
            if (st == VT_OK)
                f->graph_destroy(dev->plugin->ctx, dev->index, bg);
            free(g);
            st = st != VT_OK ? vt_set_error(st, "ending a graph on %s failed: %s", dev->id, why)
                             : vt_set_error(VT_E_NO_MEMORY, "out of host memory ending a graph on %s", dev->id);
        } else {
            g->dev = dev;
            g->bg = bg;
            *out = g;
        }
    }
    pthread_mutex_unlock(&q->lock);
    return st;
}

vt_status vt_graph_launch(vt_graph *g, vt_queue *q)
{
    if (!g || !q)
        return vt_set_error(VT_E_INVALID_ARG, "vt_graph_launch: NULL argument");
    vt_device *dev = q->dev;
    if (g->dev != dev)
        return vt_set_error(VT_E_INVALID_ARG, "vt_graph_launch: the graph is of %s, the queue of %s", g->dev->id,
                            dev->id);
    pthread_mutex_lock(&q->lock);
    vt_status st = VT_OK;
    if (q->recording != VT_REC_NONE) {
        st = vt_set_error(VT_E_INVALID_ARG, "vt_graph_launch on %s: the queue is recording a graph", dev->id);
    } else if (g->bg) {
        char why[VT_WHY_SIZE] = "";
        const vt_backend_iface *f = dev->plugin->iface;
        st = f->graph_launch(dev->plugin->ctx, dev->index, q->bq, g->bg, why, sizeof why);
        if (st != VT_OK)
            st = vt_set_error(st, "launching a graph on %s failed: %s", dev->id, why);
    } else {
        for (size_t i = 0; i < g->n && st == VT_OK; i++)
            st = vt_queue_submit_locked(q, &g->items[i]);
    }
    pthread_mutex_unlock(&q->lock);
    return st;
}

void vt_graph_destroy(vt_graph *g)
{
    if (!g)
        return;
    if (g->bg)
        g->dev->plugin->iface->graph_destroy(g->dev->plugin->ctx, g->dev->index, g->bg);
    vt_graph_items_free(g);
    free(g);
}
