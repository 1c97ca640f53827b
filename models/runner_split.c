/* runner_split.c - a model split by layers over several devices (issue 12
 * item 6): the plan (the first layers on the first device as far as its
 * budget goes, the next ones on the next device), and a runner executing
 * it as a chain of parts, one per device, each holding its layers'
 * weights and state and running them on its own queue. The activations
 * [T, H] cross each boundary through a host buffer: read back
 * asynchronously on one queue, written asynchronously on the next; the
 * sampled token goes from the last part back to the first. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner_internal.h"

uint64_t run_layer_state_bytes(const run_hparams *hp, uint32_t il, uint32_t ctx, int kv_dtype)
{
    bool linear = hp->arch == RUN_QWEN3NEXT && (il + 1) % hp->interval != 0;
    if (linear)
        return 4ull * hp->C * (hp->K - 1) + 4ull * hp->nv * hp->dk * hp->dv;
    return 2ull * ctx * hp->nkv * hp->hd * vt_dtype_get(kv_dtype)->block_bytes;
}

uint64_t run_scratch_bytes(const run_hparams *hp, uint32_t chunk, uint32_t ctx)
{
    /* The decode workspace, the prefill one for a full chunk, the position
     * table and the index tables. */
    uint32_t T = chunk ? chunk : 512;
    if (T > ctx)
        T = ctx;
    return run_ws_bytes(hp, 1) + (T > 1 ? run_ws_bytes(hp, T) : 0) + 4ull * ctx + 8ull * hp->hd + 16;
}

/* What one device would hold of each part of the model. */
typedef struct dev_cost {
    uint64_t *layer; /* weights + state of layer i */
    uint64_t head;   /* token_embd on the first device */
    uint64_t tail;   /* output_norm, output (token_embd again when tied) on the last */
    uint64_t scratch, budget;
    char source[96];
} dev_cost;

static vt_status cost_on(vt_gguf *g, const run_hparams *hp, vt_device *dev, const vt_runner_options *o, dev_cost *c)
{
    vt_load_options lo;
    memset(&lo, 0, sizeof lo);
    lo.struct_size = sizeof lo;
    lo.expand = (uint32_t)run_expand_of(g, o->expand);
    lo.budget_bytes = o->budget_bytes;
    lo.batch = 1;
    lo.flags = o->load_flags;
    vt_load_plan *plan = NULL;
    vt_status st = vt_load_plan_create(g, dev, &lo, &plan); /* a refusal still plans every tensor */
    if (!plan)
        return st;
    uint32_t ctx = run_ctx_of(hp, o->ctx);
    for (size_t i = 0; i < vt_load_plan_count(plan); i++) {
        const vt_gguf_tensor *t;
        const vt_weight_plan *w;
        if (vt_load_plan_entry(plan, i, &t, NULL, &w) != VT_OK)
            continue; /* i < count: cannot fail */
        uint64_t b = w->in_place ? 0 : w->resident_bytes;
        long l = run_layer_of(t->name);
        if (l >= 0 && (uint32_t)l < hp->L) {
            c->layer[l] += b;
        } else if (!strcmp(t->name, "token_embd.weight")) {
            c->head += b;
            if (hp->tied)
                c->tail += b;
        } else {
            c->tail += b;
        }
    }
    vt_load_plan_destroy(plan);
    for (uint32_t l = 0; l < hp->L; l++)
        c->layer[l] += run_layer_state_bytes(hp, l, ctx, run_kv_dtype(o->kv_type));
    c->scratch = run_scratch_bytes(hp, o->chunk, ctx);
    if (o->budget_bytes) {
        c->budget = o->budget_bytes;
        snprintf(c->source, sizeof c->source, "the options' budget");
        return VT_OK;
    }
    return vt_fit_budget(dev, &c->budget, c->source, sizeof c->source);
}

/* "layers 0-3 on rocm:0 (+ token_embd), 4-35 on cpu:0 (+ output)". */
static void describe(vt_runner_split *s, vt_device *const *devs)
{
    size_t len = 0;
    s->placement[0] = 0;
    bool first = true;
    for (uint32_t d = 0; d < s->n_devices; d++) {
        uint32_t a = s->first_layer[d], b = s->first_layer[d + 1];
        if (b <= a)
            continue;
        len += (size_t)snprintf(s->placement + len, len < sizeof s->placement ? sizeof s->placement - len : 0,
                                "%s%u-%u on %s%s%s", first ? "layers " : ", ", a, b - 1, vt_device_id(devs[d]),
                                a == 0 ? " (+ token_embd)" : "", b == s->n_layer ? " (+ output)" : "");
        first = false;
    }
}

vt_status vt_runner_plan_split(vt_gguf *g, vt_device *const *devs, uint32_t n, const vt_runner_options *options,
                               vt_runner_split *out)
{
    if (!out || !g || !devs || n == 0)
        return vt_set_error(VT_E_INVALID_ARG, "vt_runner_plan_split: NULL file, devices or output, or no device");
    memset(out, 0, sizeof *out);
    if (n > VT_RUNNER_MAX_DEVICES)
        return vt_set_error(VT_E_INVALID_ARG, "layer split over %u devices: at most %d", n, VT_RUNNER_MAX_DEVICES);
    vt_runner_options o = {sizeof o, 0, 0, 0, -1, 0, 0, NULL, NULL, 0};
    if (options) {
        if (options->struct_size < sizeof(uint32_t) || options->struct_size > sizeof o)
            return vt_set_error(VT_E_INVALID_ARG, "vt_runner_options.struct_size %u", options->struct_size);
        memcpy(&o, options, options->struct_size);
    }
    for (uint32_t d = 0; d < n; d++) {
        if (!devs[d])
            return vt_set_error(VT_E_INVALID_ARG, "vt_runner_plan_split: device %u is NULL", d);
        for (uint32_t e = 0; e < d; e++)
            if (devs[e] == devs[d])
                return vt_set_error(VT_E_INVALID_ARG, "layer split: %s is named twice", vt_device_id(devs[d]));
    }
    vt_status st = vt_runner_check_file(g, NULL);
    if (st != VT_OK)
        return st;
    run_hparams hp;
    run_read_hparams(g, &hp);
    out->n_devices = n;
    out->n_layer = hp.L;
    dev_cost c[VT_RUNNER_MAX_DEVICES];
    memset(c, 0, sizeof c);
    for (uint32_t d = 0; st == VT_OK && d < n; d++) {
        c[d].layer = calloc(hp.L, sizeof *c[d].layer);
        st = c[d].layer ? cost_on(g, &hp, devs[d], &o, &c[d])
                        : vt_set_error(VT_E_NO_MEMORY, "runner: out of host memory");
    }
    /* Greedy: device d takes layers while they (with the head on the
     * first device, the tail with the last layer) fit its budget. */
    uint32_t next = 0;
    for (uint32_t d = 0; st == VT_OK && d < n; d++) {
        out->first_layer[d] = next;
        uint64_t used = c[d].scratch + (next == 0 ? c[d].head : 0);
        uint32_t took = 0;
        while (next < hp.L) {
            uint64_t add = c[d].layer[next] + (next + 1 == hp.L ? c[d].tail : 0);
            if (used + add > c[d].budget)
                break;
            used += add;
            next++;
            took++;
        }
        out->needed_bytes[d] = took ? used : 0;
        out->budget_bytes[d] = c[d].budget;
        snprintf(out->budget_source[d], sizeof out->budget_source[d], "%s", c[d].source);
    }
    out->first_layer[n] = next;
    out->placed = next;
    out->fits = st == VT_OK && next == hp.L;
    uint64_t need_next = st == VT_OK && next < hp.L ? c[n - 1].layer[next] : 0;
    uint64_t scratch_last = c[n - 1].scratch, budget_last = c[n - 1].budget;
    uint32_t chunk_T = o.chunk ? o.chunk : 512;
    if (chunk_T > run_ctx_of(&hp, o.ctx))
        chunk_T = run_ctx_of(&hp, o.ctx);
    for (uint32_t d = 0; d < n; d++)
        free(c[d].layer);
    if (st != VT_OK)
        return st;
    describe(out, devs);
    if (!out->fits) {
        char b1[32], b2[32], b3[32];
        return vt_set_error(VT_E_DOES_NOT_FIT,
                            "layer split of %s over %u device(s): only %u of %u layers fit (%s); layer %u alone "
                            "needs %s on %s, besides the %s of workspaces each device holds for a prefill chunk of "
                            "%u tokens (budget %s): add a device, raise a budget or prefill in smaller chunks",
                            vt_gguf_name(g), n, next, hp.L, next ? out->placement : "none placed", next,
                            vt_format_bytes(need_next, b1, sizeof b1), vt_device_id(devs[n - 1]),
                            vt_format_bytes(scratch_last, b2, sizeof b2), chunk_T,
                            vt_format_bytes(budget_last, b3, sizeof b3));
    }
    return VT_OK;
}

void run_split_hint(vt_gguf *g, vt_device *dev, const vt_runner_options *o)
{
    char msg[4096];
    snprintf(msg, sizeof msg, "%s", vt_last_error());
    vt_device *cpu = NULL;
    vt_runner_split s;
    bool found = strncmp(vt_device_id(dev), "cpu:", 4) && vt_registry_find_device(dev->reg, "cpu:0", &cpu) == VT_OK;
    vt_device *devs[2] = {dev, cpu};
    if (found && vt_runner_plan_split(g, devs, 2, o, &s) == VT_OK && s.first_layer[1] > 0)
        vt_set_error(VT_E_DOES_NOT_FIT, "%s; a layer split over %s,cpu:0 fits: %s (vt_runner_create_split)", msg,
                     vt_device_id(dev), s.placement);
    else
        vt_set_error(VT_E_DOES_NOT_FIT, "%s", msg);
}

vt_status vt_runner_create_split(vt_gguf *g, vt_device *const *devs, uint32_t n, const vt_runner_options *options,
                                 vt_runner **out)
{
    if (!out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_runner_create_split: out is NULL");
    *out = NULL;
    vt_runner_split s;
    vt_status st = vt_runner_plan_split(g, devs, n, options, &s);
    if (st != VT_OK)
        return st;
    vt_runner *r = calloc(1, sizeof *r);
    if (!r)
        return vt_set_error(VT_E_NO_MEMORY, "runner: out of host memory");
    r->g = g;
    run_read_hparams(g, &r->hp);
    st = vt_runner_check_file(g, &r->info); /* checked by the plan: cannot fail */
    if (st != VT_OK) {
        free(r);
        return st;
    }
    r->part = calloc(n, sizeof *r->part);
    r->xfer = calloc(n, sizeof *r->xfer);
    r->xfer_pinned = calloc(n, sizeof *r->xfer_pinned);
    r->xfer_dev = calloc(n, sizeof *r->xfer_dev);
    if (!r->part || !r->xfer || !r->xfer_pinned || !r->xfer_dev)
        st = vt_set_error(VT_E_NO_MEMORY, "runner: out of host memory");
    for (uint32_t d = 0; st == VT_OK && d < n; d++) {
        if (s.first_layer[d + 1] == s.first_layer[d])
            continue; /* a device the split left empty */
        vt_runner *p = NULL;
        st = run_create_part(g, devs[d], options, s.first_layer[d], s.first_layer[d + 1], &p);
        if (st == VT_OK)
            r->part[r->n_part++] = p;
    }
    if (st == VT_OK && r->n_part == 0)
        st = vt_set_error(VT_E_INVALID_ARG, "layer split: no device holds a layer");
    for (uint32_t k = 0; st == VT_OK && k + 1 < r->n_part; k++) {
        /* The boundary's host buffer for the largest chunk of activations,
         * pinned for the side that is not host memory itself. */
        vt_runner *p = r->part[k];
        uint32_t T = p->chunk < p->ctx ? p->chunk : p->ctx;
        r->xfer_dev[k] = strncmp(vt_device_id(p->dev), "cpu:", 4) ? p->dev : r->part[k + 1]->dev;
        st = vt_device_host_alloc(r->xfer_dev[k], (uint64_t)T * r->hp.H * sizeof(float), (void **)&r->xfer[k],
                                  &r->xfer_pinned[k]);
    }
    if (st != VT_OK) {
        char msg[4096];
        snprintf(msg, sizeof msg, "%s", vt_last_error());
        r->n_part = r->n_part ? r->n_part : 1; /* free through run_split_free */
        vt_runner_destroy(r);
        return vt_set_error(st, "layer split (%s): %s", s.placement, msg);
    }
    vt_runner_info *in = &r->info;
    in->ctx = r->part[0]->ctx;
    r->ctx = in->ctx;
    r->chunk = r->part[0]->chunk;
    in->n_devices = r->n_part;
    for (uint32_t k = 0; k < r->n_part; k++) {
        const vt_runner_info *pi = &r->part[k]->info;
        in->n_plan_ops += pi->n_plan_ops;
        in->weight_bytes += pi->weight_bytes;
        in->state_bytes += pi->state_bytes;
        in->n_cpu_tier += pi->n_cpu_tier;
        in->n_merged += pi->n_merged;
    }
    snprintf(in->placement, sizeof in->placement, "%s", s.placement);
    *out = r;
    return VT_OK;
}

void run_split_free(vt_runner *r)
{
    for (uint32_t k = 0; r->part && k < r->n_part; k++)
        if (r->part[k] && vt_queue_synchronize(r->part[k]->q) != VT_OK) {
            /* destroy has no one to report to: a pending error is dropped */
        }
    for (uint32_t k = 0; r->xfer && r->part && k + 1 < r->n_part; k++)
        if (r->xfer[k])
            vt_device_host_free(r->xfer_dev[k], r->xfer[k], r->xfer_pinned[k]);
    for (uint32_t k = 0; r->part && k < r->n_part; k++)
        vt_runner_destroy(r->part[k]);
    free(r->part);
    free(r->xfer);
    free(r->xfer_pinned);
    free(r->xfer_dev);
    free(r);
}

vt_status run_split_reset(vt_runner *r)
{
    r->pos = 0;
    for (uint32_t k = 0; k < r->n_part; k++) {
        vt_status st = vt_runner_reset(r->part[k]);
        if (st != VT_OK)
            return st;
    }
    return VT_OK;
}

void run_split_record(vt_runner *r)
{
    bool all = true;
    r->info.graph_note[0] = 0;
    for (uint32_t k = 0; k < r->n_part; k++) {
        vt_runner *p = r->part[k];
        if (p->use_graph && !p->graph && run_record_decode(p) != VT_OK) {
            p->use_graph = false;
            snprintf(p->info.graph_note, sizeof p->info.graph_note, "%s", vt_last_error());
        }
        if (!p->use_graph && p->info.graph_note[0] && !r->info.graph_note[0])
            snprintf(r->info.graph_note, sizeof r->info.graph_note, "%s: %.200s", vt_device_id(p->dev),
                     p->info.graph_note);
        all = all && p->use_graph;
    }
    r->info.decode_graph = all;
}

/* Part k's input activations from the boundary before it (T rows). */
static vt_status take_x(vt_runner *r, uint32_t k, run_ws *ws, uint32_t T)
{
    if (r->part[k]->has_embd)
        return VT_OK;
    return vt_tensor_write_async(r->part[k]->q, run_ws_x(ws), 0, r->xfer[k - 1], (size_t)T * r->hp.H * sizeof(float));
}

/* Part k's output activations into the boundary after it, waited for. */
static vt_status give_x(vt_runner *r, uint32_t k, run_ws *ws, uint32_t T)
{
    vt_runner *p = r->part[k];
    vt_status st = VT_OK;
    if (!p->has_head) /* the last token's rows only matter to the head: all T go on */
        st = vt_tensor_read_async(p->q, run_ws_x(ws), 0, r->xfer[k], (size_t)T * r->hp.H * sizeof(float));
    vt_status sync = vt_queue_synchronize(p->q);
    return st != VT_OK ? st : sync;
}

/* One decode step of part k from its device's token (the first part) or
 * the boundary's activations. */
static vt_status part_decode(vt_runner *r, uint32_t k, const vt_sampler *s, uint64_t step)
{
    vt_runner *p = r->part[k];
    vt_status st = take_x(r, k, p->ws1, 1);
    if (st == VT_OK && p->use_graph && p->graph) {
        st = run_decode_enqueue(p, s, step, &p->host_io[1]);
    } else if (st == VT_OK) {
        st = vt_queue_synchronize(p->q);
        p->pos_on_device = false;
        if (st == VT_OK)
            st = run_write_inputs(p->ws1, NULL, 1, p->pos);
        if (st == VT_OK)
            st = run_forward(p, p->ws1, 1, true);
        if (st == VT_OK && p->has_head)
            st = run_sample(p, p->ws1, s, step);
        if (st == VT_OK && p->has_head)
            st = vt_tensor_read_async(p->q, p->tok_dev, 0, &p->host_io[1], sizeof(int32_t));
        if (st == VT_OK)
            p->pos++;
    }
    vt_status g = give_x(r, k, p->ws1, 1);
    if (st != VT_OK)
        p->pos_on_device = false;
    return st != VT_OK ? st : g;
}

/* One prefill chunk of T tokens through part k. */
static vt_status part_chunk(vt_runner *r, uint32_t k, const int32_t *tokens, uint32_t T, run_ws **used)
{
    vt_runner *p = r->part[k];
    vt_status st = vt_queue_synchronize(p->q);
    run_ws *ws = p->ws1;
    if (st == VT_OK && T > 1) {
        if (!p->wsT || vt_tensor_dim(run_ws_tokens(p->wsT), 0) != (int64_t)T) {
            run_ws_free(p->wsT);
            p->wsT = NULL;
            st = run_ws_create(p, T, &p->wsT);
        }
        ws = p->wsT;
    }
    p->pos_on_device = false;
    if (st == VT_OK)
        st = run_write_inputs(ws, p->has_embd ? tokens : NULL, T, p->pos);
    if (st == VT_OK)
        st = take_x(r, k, ws, T);
    if (st == VT_OK)
        st = run_forward(p, ws, T, false);
    vt_status g = give_x(r, k, ws, T);
    if (st == VT_OK)
        st = g;
    if (st == VT_OK)
        p->pos += T;
    *used = ws;
    return st;
}

vt_status run_split_step(vt_runner *r, const int32_t *tokens, uint32_t n, const vt_sampler *s, uint64_t sample_step,
                         int32_t *next, float *logits)
{
    vt_runner *head = r->part[r->n_part - 1], *first = r->part[0];
    run_ws *last = head->ws1;
    vt_status st = VT_OK;
    if (!tokens) {
        run_split_record(r); /* once: recorded parts are skipped */
        for (uint32_t k = 0; st == VT_OK && k < r->n_part; k++)
            st = part_decode(r, k, s, sample_step);
    } else {
        for (uint32_t done = 0; st == VT_OK && done < n;) {
            uint32_t T = n - done < r->chunk ? n - done : r->chunk;
            for (uint32_t k = 0; st == VT_OK && k < r->n_part; k++)
                st = part_chunk(r, k, tokens + done, T, &last);
            done += T;
        }
        if (st == VT_OK)
            st = run_sample(head, last, s, sample_step);
        if (st == VT_OK)
            st = vt_tensor_read_async(head->q, head->tok_dev, 0, &head->host_io[1], sizeof(int32_t));
        vt_status sync = vt_queue_synchronize(head->q);
        if (st == VT_OK)
            st = sync;
    }
    int32_t tok = head->host_io[1];
    /* The first part embeds the next decode step's token from its device. */
    if (st == VT_OK && first != head)
        st = vt_tensor_write(first->tok_dev, &tok, sizeof tok);
    if (st == VT_OK && next)
        *next = tok;
    if (st == VT_OK && logits)
        st = vt_tensor_read(run_ws_logits(last), logits, (size_t)r->hp.V * sizeof *logits);
    if (st == VT_OK)
        r->pos += n;
    return st;
}
