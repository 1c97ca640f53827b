/* runner_internal.h - the model runner's own structures (not installed). */
#ifndef VT_RUNNER_INTERNAL_H
#define VT_RUNNER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "vt_internal.h"
#include "vt/vt_queue.h"
#include "vt/vt_runner.h"

enum { RUN_QWEN3 = 0, RUN_QWEN3MOE = 1, RUN_QWEN3NEXT = 2 };

/* Hyper-parameters read from the metadata and the tensor shapes. */
typedef struct run_hparams {
    int arch;
    uint32_t L, H, F, nh, nkv, hd, V, n_ctx_train;
    uint32_t E, k, Fe, Fsh;                  /* MoE */
    uint32_t K, nk, nv, dk, dv, interval, C; /* DeltaNet; C = conv channels */
    uint32_t n_rot;
    float eps, theta;
    bool tied;
} run_hparams;

/* Weights, state and kind of one layer. */
typedef struct run_layer {
    bool linear; /* qwen3next DeltaNet layer */
    vt_tensor *attn_norm, *q, *k, *v, *o, *q_norm, *k_norm, *ffn_norm;
    vt_tensor *gate, *up, *down;
    vt_tensor *gate_inp, *gate_exps, *up_exps, *down_exps;
    vt_tensor *gate_inp_sh, *gate_sh, *up_sh, *down_sh;
    vt_tensor *qkv, *zgate, *ba, *conv, *dt_bias, *ssm_a, *ssm_norm, *ssm_out;
    vt_tensor *k_cache, *v_cache, *conv_state, *rec_state;
} run_layer;

/* Activations and index tables for chunks of T tokens. */
typedef struct run_ws run_ws;

struct vt_runner {
    vt_gguf *g;
    vt_device *dev;
    run_hparams hp;
    vt_runner_info info;
    vt_load_plan *plan;
    vt_model *model;
    run_layer *layers;
    vt_tensor *tok_embd, *out_norm, *output;
    vt_tensor *tok_dev; /* [1] i32: the last sampled token */
    vt_tensor *slot0;   /* [1] i32 = 0: the state slot of the sequence */
    vt_tensor *idx[4];  /* IndexSelect tables: q | gate halves, b | a halves */
    run_ws *ws1;        /* T = 1 (decode) */
    uint32_t pos, ctx, chunk;
    int kv_dtype;
    vt_tensor **views; /* views made during one step, freed at its end */
    size_t n_views, cap_views;
    vt_queue *q;             /* the device's default queue: every op is enqueued on it */
    vt_graph *graph;         /* the decode step, recorded once and replayed */
    vt_tensor **graph_views; /* views the graph's ops name, kept for its life */
    size_t n_graph_views;
    int32_t *host_io;    /* [0] a position written to the device, [1] the sampled token read back */
    vt_tensor *pos_next; /* [ctx] i32, pos_next[p] = p + 1: the decode graph advances its position */
    vt_tensor *pos_tmp;  /* [1] i32 */
    bool pos_on_device;  /* ws1's position holds r->pos (the graph keeps it so) */
    bool host_pinned, use_graph, recording;
};

/* Read and check the hyper-parameters and every tensor of g. */
vt_status run_read_hparams(vt_gguf *g, run_hparams *hp);

/* Names and ne of every tensor the forward pass reads: calls fn for each
 * (required or not). Returns the first non-OK status of fn. */
typedef vt_status (*run_tensor_fn)(void *user, const char *name, uint32_t n_dims, const int64_t *ne, bool required,
                                   vt_tensor **slot);
vt_status run_for_each_tensor(vt_runner *r, const run_hparams *hp, run_tensor_fn fn, void *user);

/* A view of base: ndim dims of base's dtype at element offset off. */
vt_tensor *run_view(vt_runner *r, vt_tensor *base, int64_t off, uint32_t ndim, const int64_t *shape);

/* Free the views of a step. */
void run_views_free(vt_runner *r);

/* Allocate the workspace for chunks of T tokens. */
vt_status run_ws_create(vt_runner *r, uint32_t T, run_ws **out);

/* Free a workspace (its work must be done). NULL is ignored. */
void run_ws_free(run_ws *ws);

/* One chunk of T tokens at positions r->pos .. r->pos + T - 1 (tokens on
 * the device in ws, already written), leaving the last token's logits in
 * the workspace when want_logits. */
vt_status run_forward(vt_runner *r, run_ws *ws, uint32_t T, bool from_device_token);

/* Sample from the logits in ws into r->tok_dev. */
vt_status run_sample(vt_runner *r, run_ws *ws, const vt_sampler *s, uint64_t step);

/* The workspace's token input, position table and logits. */
vt_tensor *run_ws_tokens(run_ws *ws);
vt_tensor *run_ws_pos(run_ws *ws);
vt_tensor *run_ws_logits(run_ws *ws);

/* The (op, signature) pairs the forward pass runs, for vt_resolve_plan. */
vt_status run_plan_ops(const vt_runner *r, vt_plan_op **ops, size_t *n);

#endif
