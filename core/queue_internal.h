/* queue_internal.h - what queue.c, event.c, graph.c and op_enqueue.c
 * share: the queue, one unit of queued work, the graph. Not installed. */
#ifndef VT_QUEUE_INTERNAL_H
#define VT_QUEUE_INTERNAL_H

#include "vt_internal.h"

/* Size of the core-recorded error text of a queue. */
#define VT_QUEUE_ERROR_TEXT 1024

/* What a queue is recording. */
enum { VT_REC_NONE = 0, VT_REC_CORE = 1, VT_REC_PLUGIN = 2 };

typedef enum vt_work_kind { VT_WORK_OP = 0, VT_WORK_WRITE, VT_WORK_READ, VT_WORK_COPY } vt_work_kind;

/* One unit of work on a queue (also one recorded step of a core graph). */
typedef struct vt_work {
    vt_work_kind kind;
    uint32_t tier;      /* op: VT_TIER_NATIVE or VT_TIER_CPU */
    const vt_kernel *k; /* op: the kernel (the device's, or the cpu backend's) */
    vt_op_args args;    /* op: operands as (buffer, offset); params points at caller memory */
    void *dst;          /* write, copy: device buffer; read: host memory */
    uint64_t dst_off;   /* write, copy: offset in dst */
    const void *src;    /* write: host memory; read, copy: device buffer */
    uint64_t src_off;   /* read, copy: offset in src */
    uint64_t bytes;     /* copies */
} vt_work;

struct vt_queue {
    vt_device *dev;
    vt_backend_queue *bq; /* the plugin's queue; NULL: the core's synchronous fallback */
    pthread_mutex_t lock; /* held for every call naming the queue */
    bool is_default;
    vt_status err;                      /* first core-recorded error since the last sync point */
    char err_text[VT_QUEUE_ERROR_TEXT]; /* its message, named */
    int recording;                      /* VT_REC_* */
    vt_graph *rec;                      /* the graph being recorded (VT_REC_CORE) */
    vt_event **events;                  /* events last recorded here (guarded by dev->queue_lock) */
    size_t n_events, cap_events;
};

struct vt_graph {
    vt_device *dev;
    vt_backend_graph *bg; /* the plugin's graph, or NULL: replay items */
    vt_work *items;
    size_t n, cap;
};

/* Put w on q (caller holds q->lock): run, enqueue, or record it. */
vt_status vt_queue_submit_locked(vt_queue *q, const vt_work *w);

/* Sync point of q (caller holds q->lock). */
vt_status vt_queue_sync_locked(vt_queue *q);

/* Record a core-detected error of q's work (the first one wins); caller
 * holds q->lock. */
void vt_queue_record_error(vt_queue *q, vt_status st, const char *fmt, ...) VT_PRINTF(3, 4);

/* Forget every event recorded on q (q is being destroyed); takes
 * dev->queue_lock. */
void vt_queue_unlink_events(vt_queue *q);

/* Append w to a graph being recorded (params copied). */
vt_status vt_graph_append(vt_graph *g, const vt_work *w);

/* Free a core graph's items (their params copies). */
void vt_graph_items_free(vt_graph *g);

#endif
