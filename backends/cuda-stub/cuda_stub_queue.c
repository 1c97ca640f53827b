/* cuda_stub_queue.c - the cuda-stub's queues, events and async copies
 * (contract version 2). Work is recorded per queue and run by the "device"
 * only when the host waits; see cuda_stub.h. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_stub.h"

typedef enum { CMD_KERNEL, CMD_WRITE, CMD_READ, CMD_COPY, CMD_RECORD, CMD_WAIT } cmd_kind;

struct stub_cmd {
    cmd_kind kind;
    const vt_kernel *k;
    vt_op_args args; /* params point at params_copy */
    void *params_copy;
    unsigned char *dst;       /* write, copy: device address; read: host */
    const unsigned char *src; /* write: host; read, copy: device address */
    uint64_t bytes;
    vt_backend_event *ev;     /* record */
    vt_backend_queue *wait_q; /* wait: run this queue ... */
    uint64_t wait_seq;        /* ... up to here first */
};

struct vt_backend_queue {
    int dev;
    stub_cmd *cmds;      /* recorded, not yet run: cmds[head] is number done + 1 */
    size_t head, n, cap; /* n: commands not yet run, from head */
    uint64_t done;       /* commands run, ever */
    vt_status err;       /* the error word: first error since the last sync */
    uint32_t err_op;
    char err_why[256];
};

struct vt_backend_event {
    int dev;
    vt_backend_queue *q; /* recorded on; NULL: never, or its queue is gone */
    uint64_t seq;        /* complete when q->done >= seq */
    double ms;           /* host clock when the device reached it */
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void set_error(vt_backend_queue *q, vt_status st, uint32_t op, const char *why)
{
    if (q->err != VT_OK)
        return; /* first error wins */
    q->err = st;
    q->err_op = op;
    snprintf(q->err_why, sizeof q->err_why, "%s", why);
}

/* Run one kernel command: operands resolved to host memory. */
static void run_kernel(vt_backend_ctx *c, vt_backend_queue *q, stub_cmd *cmd)
{
    vt_op_args a = cmd->args;
    char why[256] = "";
    vt_status st = VT_OK;
    for (uint32_t i = 0; i < a.n_in && st == VT_OK; i++) {
        unsigned char *h = NULL;
        if (a.in[i].data)
            st = stub_resolve_range(c, q->dev, (char *)a.in[i].data + a.in_offset[i], a.in[i].nbytes, &h, why,
                                    sizeof why);
        a.in[i].data = h;
        a.in_offset[i] = 0;
    }
    for (uint32_t i = 0; i < a.n_out && st == VT_OK; i++) {
        unsigned char *h = NULL;
        st = stub_resolve_range(c, q->dev, (char *)a.out[i].data + a.out_offset[i], a.out[i].nbytes, &h, why,
                                sizeof why);
        a.out[i].data = h;
        a.out_offset[i] = 0;
    }
    if (st == VT_OK)
        st = cmd->k->run(c, q->dev, &a, why, sizeof why);
    if (st != VT_OK)
        set_error(q, st, a.op, why);
}

static void run_queue(vt_backend_ctx *c, vt_backend_queue *q, uint64_t upto);

/* Run the first recorded command of q. */
static void run_one(vt_backend_ctx *c, vt_backend_queue *q)
{
    stub_cmd cmd = q->cmds[q->head++];
    if (--q->n == 0)
        q->head = 0;
    q->done++; /* counted before it runs: a wait inside sees consistent numbers */
    stub_device *sd = &c->dev[q->dev];
    char why[256] = "";
    unsigned char *h = NULL;
    switch (cmd.kind) {
    case CMD_KERNEL: run_kernel(c, q, &cmd); break;
    case CMD_WRITE:
        if (stub_resolve_range(c, q->dev, cmd.dst, cmd.bytes, &h, why, sizeof why) == VT_OK)
            memcpy(h, cmd.src, (size_t)cmd.bytes);
        else
            set_error(q, VT_E_INVALID_ARG, 0, why);
        break;
    case CMD_READ:
        if (stub_resolve_range(c, q->dev, cmd.src, cmd.bytes, &h, why, sizeof why) == VT_OK)
            memcpy(cmd.dst, h, (size_t)cmd.bytes);
        else
            set_error(q, VT_E_INVALID_ARG, 0, why);
        break;
    case CMD_COPY: {
        unsigned char *hs = NULL;
        if (stub_resolve_range(c, q->dev, cmd.dst, cmd.bytes, &h, why, sizeof why) == VT_OK &&
            stub_resolve_range(c, q->dev, cmd.src, cmd.bytes, &hs, why, sizeof why) == VT_OK)
            memmove(h, hs, (size_t)cmd.bytes);
        else
            set_error(q, VT_E_INVALID_ARG, 0, why);
        break;
    }
    case CMD_RECORD: cmd.ev->ms = now_ms(); break;
    case CMD_WAIT:
        for (size_t i = 0; i < sd->n_queues; i++) /* the other queue may be gone: then it ran to its end */
            if (sd->queues[i] == cmd.wait_q)
                run_queue(c, cmd.wait_q, cmd.wait_seq);
        break;
    }
    free(cmd.params_copy);
}

/* The device runs q up to command number upto (caller holds the lock). */
static void run_queue(vt_backend_ctx *c, vt_backend_queue *q, uint64_t upto)
{
    while (q->n && q->done < upto)
        run_one(c, q);
}

void stub_drain_all(vt_backend_ctx *c, int dev)
{
    stub_device *sd = &c->dev[dev];
    for (size_t i = 0; i < sd->n_queues; i++)
        run_queue(c, sd->queues[i], UINT64_MAX);
}

/* Append a command to q (caller holds the lock). */
static vt_status push(vt_backend_queue *q, const stub_cmd *cmd, char *why, size_t why_size)
{
    if (q->head && q->head + q->n == q->cap) { /* slide the pending commands down */
        memmove(q->cmds, q->cmds + q->head, q->n * sizeof *q->cmds);
        q->head = 0;
    }
    if (q->n == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 32;
        stub_cmd *v = realloc(q->cmds, cap * sizeof *v);
        if (!v)
            return vt_why(VT_E_NO_MEMORY, why, why_size, "out of host memory recording queue work");
        q->cmds = v;
        q->cap = cap;
    }
    q->cmds[q->head + q->n++] = *cmd;
    return VT_OK;
}

static uint64_t submitted(const vt_backend_queue *q)
{
    return q->done + q->n;
}

vt_status stub_queue_create(vt_backend_ctx *c, int dev, vt_backend_queue **out, char *why, size_t why_size)
{
    stub_device *sd = &c->dev[dev];
    vt_backend_queue *q = calloc(1, sizeof *q);
    if (!q)
        return vt_why(VT_E_NO_MEMORY, why, why_size, "out of host memory");
    q->dev = dev;
    pthread_mutex_lock(&sd->lock);
    if (sd->n_queues == sd->cap_queues) {
        size_t cap = sd->cap_queues ? sd->cap_queues * 2 : 8;
        vt_backend_queue **v = realloc(sd->queues, cap * sizeof *v);
        if (!v) {
            pthread_mutex_unlock(&sd->lock);
            free(q);
            return vt_why(VT_E_NO_MEMORY, why, why_size, "out of host memory");
        }
        sd->queues = v;
        sd->cap_queues = cap;
    }
    sd->queues[sd->n_queues++] = q;
    pthread_mutex_unlock(&sd->lock);
    *out = q;
    return VT_OK;
}

void stub_queue_destroy(vt_backend_ctx *c, int dev, vt_backend_queue *q)
{
    if (!q)
        return;
    stub_device *sd = &c->dev[dev];
    pthread_mutex_lock(&sd->lock);
    run_queue(c, q, UINT64_MAX);
    for (size_t i = 0; i < sd->n_queues; i++)
        if (sd->queues[i] == q) {
            sd->queues[i] = sd->queues[--sd->n_queues];
            break;
        }
    for (size_t i = 0; i < sd->n_events; i++)
        if (sd->events[i]->q == q)
            sd->events[i]->q = NULL; /* it ran to its end: complete */
    pthread_mutex_unlock(&sd->lock);
    free(q->cmds);
    free(q);
}

vt_status stub_enqueue(vt_backend_ctx *c, int dev, const vt_kernel *k, const vt_op_args *args, char *why,
                       size_t why_size)
{
    stub_device *sd = &c->dev[dev];
    stub_cmd cmd = {.kind = CMD_KERNEL, .k = k, .args = *args};
    if (args->params && args->params_size) { /* the caller's params may change before the device runs */
        cmd.params_copy = malloc(args->params_size);
        if (!cmd.params_copy)
            return vt_why(VT_E_NO_MEMORY, why, why_size, "out of host memory");
        memcpy(cmd.params_copy, args->params, args->params_size);
        cmd.args.params = cmd.params_copy;
    }
    pthread_mutex_lock(&sd->lock);
    vt_status st = sd->lost ? vt_why(VT_E_DEVICE_LOST, why, why_size, "cuda-stub:%d is lost", dev)
                            : push(args->queue, &cmd, why, why_size);
    if (st == VT_OK)
        sd->counters.launches++;
    pthread_mutex_unlock(&sd->lock);
    if (st != VT_OK)
        free(cmd.params_copy);
    return st;
}

/* Hand q's error word out and clear it; caller holds the lock. */
static vt_status take_error(vt_backend_queue *q, uint32_t *failed_op, char *why, size_t why_size)
{
    vt_status st = q->err;
    if (st == VT_OK)
        return VT_OK;
    *failed_op = q->err_op;
    vt_why(st, why, why_size, "%s", q->err_why);
    q->err = VT_OK;
    return st;
}

vt_status stub_queue_sync(vt_backend_ctx *c, int dev, vt_backend_queue *q, uint32_t *failed_op, char *why,
                          size_t why_size)
{
    stub_device *sd = &c->dev[dev];
    pthread_mutex_lock(&sd->lock);
    run_queue(c, q, UINT64_MAX);
    sd->counters.syncs++;
    vt_status st = take_error(q, failed_op, why, why_size);
    pthread_mutex_unlock(&sd->lock);
    return st;
}

/* Record one async copy: counted and fault-injected now, run later. */
static vt_status push_copy(vt_backend_ctx *c, int dev, vt_backend_queue *q, const stub_cmd *cmd, char *why,
                           size_t why_size)
{
    stub_device *sd = &c->dev[dev];
    pthread_mutex_lock(&sd->lock);
    vt_status st = stub_copy_fault(c, sd, dev, why, why_size); /* lost device, injected failures */
    if (st == VT_OK)
        st = push(q, cmd, why, why_size);
    if (st == VT_OK && cmd->kind == CMD_WRITE) {
        sd->counters.h2d_copies++;
        sd->counters.h2d_bytes += cmd->bytes;
    } else if (st == VT_OK && cmd->kind == CMD_READ) {
        sd->counters.d2h_copies++;
        sd->counters.d2h_bytes += cmd->bytes;
    }
    pthread_mutex_unlock(&sd->lock);
    return st;
}

vt_status stub_write_async(vt_backend_ctx *c, int dev, vt_backend_queue *q, void *dst, uint64_t dst_offset,
                           const void *src, uint64_t bytes, char *why, size_t why_size)
{
    stub_cmd cmd = {.kind = CMD_WRITE, .dst = (unsigned char *)dst + dst_offset, .src = src, .bytes = bytes};
    return push_copy(c, dev, q, &cmd, why, why_size);
}

vt_status stub_read_async(vt_backend_ctx *c, int dev, vt_backend_queue *q, void *dst, const void *src,
                          uint64_t src_offset, uint64_t bytes, char *why, size_t why_size)
{
    stub_cmd cmd = {.kind = CMD_READ, .dst = dst, .src = (const unsigned char *)src + src_offset, .bytes = bytes};
    return push_copy(c, dev, q, &cmd, why, why_size);
}

vt_status stub_copy_async(vt_backend_ctx *c, int dev, vt_backend_queue *q, void *dst, uint64_t dst_offset,
                          const void *src, uint64_t src_offset, uint64_t bytes, char *why, size_t why_size)
{
    stub_cmd cmd = {.kind = CMD_COPY,
                    .dst = (unsigned char *)dst + dst_offset,
                    .src = (const unsigned char *)src + src_offset,
                    .bytes = bytes};
    return push_copy(c, dev, q, &cmd, why, why_size);
}

vt_status stub_event_create(vt_backend_ctx *c, int dev, vt_backend_event **out, char *why, size_t why_size)
{
    stub_device *sd = &c->dev[dev];
    vt_backend_event *e = calloc(1, sizeof *e);
    if (!e)
        return vt_why(VT_E_NO_MEMORY, why, why_size, "out of host memory");
    e->dev = dev;
    e->ms = now_ms();
    pthread_mutex_lock(&sd->lock);
    if (sd->n_events == sd->cap_events) {
        size_t cap = sd->cap_events ? sd->cap_events * 2 : 8;
        vt_backend_event **v = realloc(sd->events, cap * sizeof *v);
        if (!v) {
            pthread_mutex_unlock(&sd->lock);
            free(e);
            return vt_why(VT_E_NO_MEMORY, why, why_size, "out of host memory");
        }
        sd->events = v;
        sd->cap_events = cap;
    }
    sd->events[sd->n_events++] = e;
    pthread_mutex_unlock(&sd->lock);
    *out = e;
    return VT_OK;
}

void stub_event_destroy(vt_backend_ctx *c, int dev, vt_backend_event *e)
{
    if (!e)
        return;
    stub_device *sd = &c->dev[dev];
    pthread_mutex_lock(&sd->lock);
    if (e->q) /* its record must not outlive it */
        run_queue(c, e->q, e->seq);
    for (size_t i = 0; i < sd->n_events; i++)
        if (sd->events[i] == e) {
            sd->events[i] = sd->events[--sd->n_events];
            break;
        }
    pthread_mutex_unlock(&sd->lock);
    free(e);
}

vt_status stub_event_record(vt_backend_ctx *c, int dev, vt_backend_queue *q, vt_backend_event *e, char *why,
                            size_t why_size)
{
    stub_device *sd = &c->dev[dev];
    pthread_mutex_lock(&sd->lock);
    if (e->q && e->q != q) /* re-recorded elsewhere: the old record must not dangle */
        run_queue(c, e->q, e->seq);
    stub_cmd cmd = {.kind = CMD_RECORD, .ev = e};
    vt_status st = push(q, &cmd, why, why_size);
    if (st == VT_OK) {
        e->q = q;
        e->seq = submitted(q);
    }
    pthread_mutex_unlock(&sd->lock);
    return st;
}

vt_status stub_queue_wait_event(vt_backend_ctx *c, int dev, vt_backend_queue *q, vt_backend_event *e, char *why,
                                size_t why_size)
{
    stub_device *sd = &c->dev[dev];
    pthread_mutex_lock(&sd->lock);
    vt_status st = VT_OK;
    if (e->q && e->q != q) {
        stub_cmd cmd = {.kind = CMD_WAIT, .wait_q = e->q, .wait_seq = e->seq};
        st = push(q, &cmd, why, why_size);
    }
    pthread_mutex_unlock(&sd->lock);
    return st;
}

vt_status stub_event_query(vt_backend_ctx *c, int dev, vt_backend_event *e)
{
    stub_device *sd = &c->dev[dev];
    pthread_mutex_lock(&sd->lock);
    bool done = !e->q || e->q->done >= e->seq;
    pthread_mutex_unlock(&sd->lock);
    return done ? VT_OK : VT_E_NOT_READY;
}

vt_status stub_event_sync(vt_backend_ctx *c, int dev, vt_backend_event *e, uint32_t *failed_op, char *why,
                          size_t why_size)
{
    stub_device *sd = &c->dev[dev];
    pthread_mutex_lock(&sd->lock);
    vt_status st = VT_OK;
    sd->counters.syncs++;
    if (e->q) {
        run_queue(c, e->q, e->seq);
        st = take_error(e->q, failed_op, why, why_size);
    }
    pthread_mutex_unlock(&sd->lock);
    return st;
}

vt_status stub_event_elapsed_ms(vt_backend_ctx *c, int dev, vt_backend_event *start, vt_backend_event *end, float *ms,
                                char *why, size_t why_size)
{
    stub_device *sd = &c->dev[dev];
    pthread_mutex_lock(&sd->lock);
    bool done = (!start->q || start->q->done >= start->seq) && (!end->q || end->q->done >= end->seq);
    if (done)
        *ms = (float)(end->ms - start->ms);
    pthread_mutex_unlock(&sd->lock);
    return done ? VT_OK : vt_why(VT_E_NOT_READY, why, why_size, "an event has not completed");
}
