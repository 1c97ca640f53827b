/* op_enqueue.c - putting an op on a queue: check the operands, resolve
 * the tier (or take a resolution), hand the work to the queue; vt_op_run
 * is that on the device's default queue plus its sync point. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "op_check.h"
#include "queue_internal.h"

static void fill_operand(vt_operand *o, uint64_t *offset, const vt_tensor *t)
{
    memset(o, 0, sizeof *o);
    *offset = 0;
    if (!t)
        return;
    o->data = t->data;
    *offset = t->offset;
    o->dtype = t->dtype;
    o->ndim = t->ndim;
    for (uint32_t i = 0; i < t->ndim; i++)
        o->shape[i] = t->shape[i];
    o->nbytes = t->nbytes;
}

/* Check the call and build its work item; r, when given, is the
 * resolution to run (else the op is resolved with its shapes). */
static vt_status prepare(vt_device *dev, const vt_resolution *r, vt_op op, const vt_tensor *const *in, uint32_t n_in,
                         vt_tensor *const *out, uint32_t n_out, const void *params, size_t params_size, vt_work *w)
{
    const char *name = vt_op_name(op);
    if (!name)
        return vt_set_error(VT_E_NOT_FOUND, "op id %d on %s is not in the catalogue", (int)op, dev->id);
    if (n_in > VT_MAX_INPUTS || n_out > VT_MAX_OUTPUTS || (n_in && !in) || (n_out && !out))
        return vt_set_error(VT_E_INVALID_ARG, "%s (%d) on %s: %u inputs / %u outputs (at most %d / %d)", name, (int)op,
                            dev->id, n_in, n_out, VT_MAX_INPUTS, VT_MAX_OUTPUTS);
    memset(w, 0, sizeof *w);
    w->kind = VT_WORK_OP;
    vt_op_args *args = &w->args;
    args->struct_size = sizeof *args;
    args->op = op;
    args->n_in = n_in;
    args->n_out = n_out;
    args->params = params;
    args->params_size = params_size;
    for (uint32_t i = 0; i < n_in; i++) {
        if (in[i] && in[i]->dev != dev)
            return vt_set_error(VT_E_INVALID_ARG, "%s (%d): input %u lives on %s, the op runs on %s", name, (int)op, i,
                                in[i]->dev->id, dev->id);
        fill_operand(&args->in[i], &args->in_offset[i], in[i]);
    }
    for (uint32_t i = 0; i < n_out; i++) {
        if (!out[i])
            return vt_set_error(VT_E_INVALID_ARG, "%s (%d) on %s: output %u is NULL", name, (int)op, dev->id, i);
        if (out[i]->dev != dev)
            return vt_set_error(VT_E_INVALID_ARG, "%s (%d): output %u lives on %s, the op runs on %s", name, (int)op, i,
                                out[i]->dev->id, dev->id);
        fill_operand(&args->out[i], &args->out_offset[i], out[i]);
    }
    char why[VT_WHY_SIZE] = "";
    vt_sig sig;
    vt_status st = vt_op_check(args, &sig, why, sizeof why);
    if (st != VT_OK)
        return vt_set_error(st, "%s on %s", why, dev->id);

    vt_resolution fresh;
    if (!r) {
        st = vt_resolve_args(dev, op, sig, args, 0, &fresh);
        if (st != VT_OK) {
            if (st == VT_E_OP_MISSING)
                atomic_fetch_add(&dev->refusals, 1);
            return st; /* the message is set */
        }
        r = &fresh;
    } else {
        char want[96], got[96];
        if (r->device != dev || r->op != (uint32_t)op || !vt_sig_equal(r->sig, sig))
            return vt_set_error(
                VT_E_INVALID_ARG, "%s (%d) on %s: the resolution is for %s %s on %s, the operands are %s", name,
                (int)op, dev->id, vt_op_name(r->op) ? vt_op_name(r->op) : "?", vt_sig_format(r->sig, want, sizeof want),
                r->device ? r->device->id : "no device", vt_sig_format(sig, got, sizeof got));
        if (r->tier == VT_TIER_REFUSED || !r->kernel) {
            atomic_fetch_add(&dev->refusals, 1);
            return vt_set_error(VT_E_OP_MISSING, "%s", r->reason);
        }
        const vt_backend_iface *f = dev->plugin->iface;
        if (r->tier == VT_TIER_NATIVE && VT_IFACE_HAS(f, accepts)) {
            why[0] = '\0';
            st = f->accepts(dev->plugin->ctx, dev->index, r->kernel, args, why, sizeof why);
            if (st != VT_OK) {
                atomic_fetch_add(&dev->refusals, 1);
                return vt_set_error(VT_E_OP_MISSING,
                                    "%s (%d) on %s: the native kernel does not accept these operands: %s", name,
                                    (int)op, dev->id, vt_why_strip_op(why, op));
            }
        }
    }
    w->tier = r->tier;
    w->k = r->kernel;
    return VT_OK;
}

/* Hand w to q under one hold of its lock; with sync, q's sync point follows
 * in the same hold (so the error that comes back is this work's). */
static vt_status submit(vt_queue *q, const vt_work *w, bool sync)
{
    pthread_mutex_lock(&q->lock);
    vt_status st;
    if (sync && q->recording != VT_REC_NONE)
        st = vt_set_error(VT_E_INVALID_ARG, "%s (%u) on %s: the default queue is recording a graph (use vt_op_enqueue)",
                          vt_op_name(w->args.op), w->args.op, q->dev->id);
    else
        st = vt_queue_submit_locked(q, w);
    if (st == VT_OK && sync)
        st = vt_queue_sync_locked(q);
    pthread_mutex_unlock(&q->lock);
    return st;
}

/* Work on the default queue of dev, then its sync point. */
static vt_status run_now(vt_device *dev, const vt_work *w)
{
    if (!vt_plugin_has_queues(dev->plugin)) {
        /* The fallback runs on this thread: a private queue, so that
         * threads running ops on one device do not wait for each other. */
        vt_queue own;
        memset(&own, 0, sizeof own);
        own.dev = dev;
        vt_status st = vt_queue_submit_locked(&own, w);
        return st != VT_OK ? st : vt_queue_sync_locked(&own);
    }
    vt_queue *q = vt_device_default_queue(dev);
    if (!q)
        return VT_E_DEVICE; /* vt_last_error says why */
    return submit(q, w, true);
}

/* Every entry point: check and resolve the call (r: a resolution to run,
 * or NULL), skip it when its outputs are empty (op_check.h), then put it
 * on q, or with q NULL run it on dev's default queue to its sync point. */
static vt_status call(vt_device *dev, vt_queue *q, const vt_resolution *r, vt_op op, const vt_tensor *const *in,
                      uint32_t n_in, vt_tensor *const *out, uint32_t n_out, const void *params, size_t params_size)
{
    vt_work w;
    vt_status st = prepare(dev, r, op, in, n_in, out, n_out, params, params_size, &w);
    if (st != VT_OK)
        return st;
    if (vt_op_outputs_empty(&w.args))
        return VT_OK; /* nothing to write */
    return q ? submit(q, &w, false) : run_now(dev, &w);
}

vt_status vt_op_enqueue(vt_queue *q, vt_op op, const vt_tensor *const *in, uint32_t n_in, vt_tensor *const *out,
                        uint32_t n_out, const void *params, size_t params_size)
{
    if (!q)
        return vt_set_error(VT_E_INVALID_ARG, "vt_op_enqueue: queue is NULL");
    return call(q->dev, q, NULL, op, in, n_in, out, n_out, params, params_size);
}

vt_status vt_op_enqueue_resolved(vt_queue *q, const vt_resolution *r, const vt_tensor *const *in, uint32_t n_in,
                                 vt_tensor *const *out, uint32_t n_out, const void *params, size_t params_size)
{
    if (!q || !r)
        return vt_set_error(VT_E_INVALID_ARG, "vt_op_enqueue_resolved: NULL queue or resolution");
    return call(q->dev, q, r, r->op, in, n_in, out, n_out, params, params_size);
}

vt_status vt_op_run(vt_device *dev, vt_op op, const vt_tensor *const *in, uint32_t n_in, vt_tensor *const *out,
                    uint32_t n_out, const void *params, size_t params_size)
{
    if (!dev)
        return vt_set_error(VT_E_INVALID_ARG, "vt_op_run: device is NULL");
    return call(dev, NULL, NULL, op, in, n_in, out, n_out, params, params_size);
}

vt_status vt_op_run_resolved(const vt_resolution *r, const vt_tensor *const *in, uint32_t n_in, vt_tensor *const *out,
                             uint32_t n_out, const void *params, size_t params_size)
{
    if (!r || !r->device)
        return vt_set_error(VT_E_INVALID_ARG, "vt_op_run_resolved: NULL resolution or one without a device");
    return call(r->device, NULL, r, r->op, in, n_in, out, n_out, params, params_size);
}
