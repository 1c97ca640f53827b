/* runner_step.c - stepping a runner: prefill in chunks, decode steps
 * replaying the recorded graph (or op by op), generate with all decode
 * steps queued back to back and timing. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runner_internal.h"

vt_status run_write_inputs(run_ws *ws, const int32_t *tokens, uint32_t T, uint32_t pos)
{
    int32_t *p = malloc(T * sizeof *p);
    if (!p)
        return vt_set_error(VT_E_NO_MEMORY, "runner: out of host memory");
    for (uint32_t i = 0; i < T; i++)
        p[i] = (int32_t)(pos + i);
    vt_status st = vt_tensor_write(run_ws_pos(ws), p, T * sizeof *p);
    free(p);
    if (st == VT_OK && tokens)
        st = vt_tensor_write(run_ws_tokens(ws), tokens, T * sizeof *tokens);
    return st;
}

/* The decode step as a graph: the forward pass from the token and the
 * position on the device, then the position advanced on the device
 * (IndexSelect from pos_next, Copy back), so steps can be queued back to
 * back without the host. */
vt_status run_record_decode(vt_runner *r)
{
    vt_status st = vt_graph_begin(r->q);
    if (st != VT_OK)
        return st;
    r->recording = true;
    st = run_forward(r, r->ws1, 1, true);
    vt_params_index_select p0 = {0};
    vt_tensor *pos = run_ws_pos(r->ws1);
    if (st == VT_OK)
        st = vt_op_enqueue(r->q, VT_OP_INDEX_SELECT, (const vt_tensor *const[]){r->pos_next, pos}, 2,
                           (vt_tensor *const[]){r->pos_tmp}, 1, &p0, sizeof p0);
    if (st == VT_OK)
        st = vt_op_enqueue(r->q, VT_OP_COPY, (const vt_tensor *const[]){r->pos_tmp}, 1, (vt_tensor *const[]){pos}, 1,
                           NULL, 0);
    r->recording = false;
    vt_graph *g = NULL;
    vt_status end = vt_graph_end(r->q, &g);
    if (st == VT_OK)
        st = end;
    if (st != VT_OK) {
        vt_graph_destroy(g);
        run_views_free(r);
        return st;
    }
    r->graph = g;
    r->graph_views = r->views; /* the graph names these views: keep them */
    r->n_graph_views = r->n_views;
    r->views = NULL;
    r->n_views = r->cap_views = 0;
    return VT_OK;
}

/* One decode step from the token on the device: replay the graph, sample,
 * and (slot not NULL) read the token back into slot asynchronously.
 * Returns without waiting; the caller synchronises. */
vt_status run_decode_enqueue(vt_runner *r, const vt_sampler *s, uint64_t sample_step, int32_t *slot)
{
    vt_status st = VT_OK;
    if (!r->pos_on_device) { /* after a prefill: the position from the host, once */
        st = vt_queue_synchronize(r->q);
        r->host_io[0] = (int32_t)r->pos;
        if (st == VT_OK)
            st = vt_tensor_write(run_ws_pos(r->ws1), &r->host_io[0], sizeof(int32_t));
        if (st != VT_OK)
            return st;
        r->pos_on_device = true;
    }
    st = vt_graph_launch(r->graph, r->q);
    if (st == VT_OK && r->has_head)
        st = run_sample(r, r->ws1, s, sample_step);
    if (st == VT_OK && slot && r->has_head)
        st = vt_tensor_read_async(r->q, r->tok_dev, 0, slot, sizeof(int32_t));
    if (st == VT_OK)
        r->pos++;
    else
        r->pos_on_device = false;
    return st;
}

/* One decode step, waited for. */
static vt_status decode_graph(vt_runner *r, const vt_sampler *s, uint64_t sample_step, int32_t *next)
{
    vt_status st = run_decode_enqueue(r, s, sample_step, next ? &r->host_io[1] : NULL);
    vt_status sync = vt_queue_synchronize(r->q);
    if (st == VT_OK)
        st = sync;
    if (st == VT_OK && next)
        *next = r->host_io[1];
    if (st != VT_OK)
        r->pos_on_device = false;
    return st;
}

/* VT_E_INVALID_ARG naming the field of s (NULL: greedy) outside its range
 * (vt_sampler): a NaN temperature is not greedy, a NaN or negative top_p
 * is not "no cut". fn names the caller in the message. */
static vt_status check_sampler(const char *fn, const vt_sampler *s)
{
    if (!s)
        return VT_OK;
    if (!isfinite(s->temperature))
        return vt_set_error(VT_E_INVALID_ARG, "%s: sampler temperature %g is not finite", fn, (double)s->temperature);
    if (s->top_k < 0)
        return vt_set_error(VT_E_INVALID_ARG, "%s: sampler top_k %d is negative (0: no cut)", fn, (int)s->top_k);
    if (!(s->top_p >= 0.0f && s->top_p <= 1.0f))
        return vt_set_error(VT_E_INVALID_ARG, "%s: sampler top_p %g is outside [0, 1] (0 means 1)", fn,
                            (double)s->top_p);
    return VT_OK;
}

vt_status vt_runner_step(vt_runner *r, const int32_t *tokens, uint32_t n, const vt_sampler *s, uint64_t sample_step,
                         int32_t *next, float *logits)
{
    if (!r || n == 0 || (!tokens && n != 1))
        return vt_set_error(VT_E_INVALID_ARG, "vt_runner_step: NULL runner, no tokens, or n = %u without tokens", n);
    if (check_sampler("vt_runner_step", s) != VT_OK)
        return VT_E_INVALID_ARG;
    if ((uint64_t)r->pos + n > r->ctx)
        return vt_set_error(VT_E_INVALID_ARG, "runner: %u tokens at position %u exceed the context of %u", n, r->pos,
                            r->ctx);
    for (uint32_t i = 0; tokens && i < n; i++)
        if (tokens[i] < 0 || (uint32_t)tokens[i] >= r->hp.V)
            return vt_set_error(VT_E_INVALID_ARG, "runner: token %d (index %u) is outside the vocabulary of %u",
                                tokens[i], i, r->hp.V);
    if (r->n_part)
        return run_split_step(r, tokens, n, s, sample_step, next, logits);
    vt_status st = VT_OK;
    run_ws *last = r->ws1, *big = NULL;
    if (!tokens && r->use_graph && !r->graph && run_record_decode(r) != VT_OK) {
        /* A device that cannot record: run the step op by op (nothing ran). */
        r->use_graph = false;
        snprintf(r->info.graph_note, sizeof r->info.graph_note, "%s", vt_last_error());
    }
    r->info.decode_graph = r->use_graph;
    if (!tokens && r->use_graph) {
        st = decode_graph(r, s, sample_step, next);
    } else {
        for (uint32_t done = 0; st == VT_OK && done < n;) {
            uint32_t T = n - done < r->chunk ? n - done : r->chunk;
            run_ws *ws = r->ws1;
            if (T > 1) {
                if (!big || vt_tensor_dim(run_ws_tokens(big), 0) != (int64_t)T) {
                    st = vt_queue_synchronize(r->q);
                    run_ws_free(big);
                    big = NULL;
                    if (st == VT_OK)
                        st = run_ws_create(r, T, &big);
                    if (st != VT_OK)
                        break;
                }
                ws = big;
            }
            /* The inputs are written with blocking copies once the queue's
             * earlier work (which reads them) is done. */
            st = vt_queue_synchronize(r->q);
            r->pos_on_device = false;
            if (st == VT_OK)
                st = run_write_inputs(ws, tokens ? tokens + done : NULL, T, r->pos);
            if (st == VT_OK)
                st = run_forward(r, ws, T, tokens == NULL);
            if (st == VT_OK) {
                r->pos += T;
                done += T;
                last = ws;
            }
        }
        if (st == VT_OK)
            st = run_sample(r, last, s, sample_step);
        vt_status sync = vt_queue_synchronize(r->q);
        if (st == VT_OK)
            st = sync;
        if (st == VT_OK && next)
            st = vt_tensor_read(r->tok_dev, next, sizeof *next);
    }
    if (st == VT_OK && logits)
        st = vt_tensor_read(run_ws_logits(last), logits, (size_t)r->hp.V * sizeof *logits);
    if (big) {
        vt_status drained = vt_queue_synchronize(r->q);
        if (st == VT_OK)
            st = drained;
        run_ws_free(big);
    }
    return st;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

vt_status vt_runner_generate(vt_runner *r, const int32_t *prompt, uint32_t n_prompt, uint32_t n_gen,
                             const vt_sampler *s, int32_t *out, vt_generate_stats *stats)
{
    if (!r || !prompt || n_prompt == 0 || (n_gen && !out))
        return vt_set_error(VT_E_INVALID_ARG, "vt_runner_generate: NULL runner, prompt or output, or empty prompt");
    /* The prompt's positions, then one per decode step (the last token
     * sampled is not fed). */
    if ((uint64_t)n_prompt + (n_gen ? n_gen - 1 : 0) > r->ctx)
        return vt_set_error(VT_E_INVALID_ARG, "runner: %u prompt + %u generated tokens exceed the context of %u",
                            n_prompt, n_gen, r->ctx);
    if (check_sampler("vt_runner_generate", s) != VT_OK)
        return VT_E_INVALID_ARG;
    vt_generate_stats z = {0, 0, n_prompt, 0};
    vt_status st = vt_runner_reset(r);
    if (st != VT_OK)
        return st;
    if (n_gen == 0) { /* the prompt only: the next step continues after it */
        double t0 = now_s();
        st = vt_runner_step(r, prompt, n_prompt, s, 0, NULL, NULL);
        z.prefill_s = now_s() - t0;
        if (stats)
            *stats = z;
        return st;
    }
    /* The decode graph is recorded once, outside the timed passes. */
    if (r->n_part) {
        if (n_gen > 1)
            run_split_record(r);
    } else if (n_gen > 1 && r->use_graph && !r->graph && run_record_decode(r) != VT_OK) {
        r->use_graph = false;
        snprintf(r->info.graph_note, sizeof r->info.graph_note, "%s", vt_last_error());
    }
    if (!r->n_part)
        r->info.decode_graph = r->use_graph;
    double t0 = now_s();
    st = vt_runner_step(r, prompt, n_prompt, s, 0, &out[0], NULL);
    double t1 = now_s();
    z.prefill_s = t1 - t0;
    int32_t *ring = NULL;
    bool pinned = false;
    if (st == VT_OK && n_gen > 1 && r->use_graph)
        st = vt_device_host_alloc(r->dev, (uint64_t)n_gen * sizeof *ring, (void **)&ring, &pinned);
    if (st == VT_OK && ring) {
        /* Every step queued back to back: the token and the position stay
         * on the device, each token read back asynchronously into ring;
         * the host waits once at the end. */
        for (uint32_t i = 1; st == VT_OK && i < n_gen; i++) {
            st = run_decode_enqueue(r, s, i, &ring[i]);
            z.n_decoded += st == VT_OK;
        }
        vt_status sync = vt_queue_synchronize(r->q);
        if (st == VT_OK)
            st = sync;
        if (st == VT_OK)
            memcpy(out + 1, ring + 1, (size_t)(n_gen - 1) * sizeof *out);
        else
            r->pos_on_device = false;
        vt_device_host_free(r->dev, ring, pinned);
    } else {
        for (uint32_t i = 1; st == VT_OK && i < n_gen; i++) {
            st = vt_runner_step(r, NULL, 1, s, i, &out[i], NULL);
            z.n_decoded++;
        }
    }
    z.decode_s = now_s() - t1;
    if (stats)
        *stats = z;
    return st;
}
