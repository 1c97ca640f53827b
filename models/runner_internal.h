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
    /* q | k | v and gate | up side by side (runner_merge.c): the members
     * above are then views of these, owned by the runner. */
    vt_tensor *wqkv, *wgu;
    bool merge[2]; /* whether each group is staged so */
} run_layer;

/* Activations and index tables for chunks of T tokens. */
typedef struct run_ws run_ws;

struct vt_runner {
    vt_gguf *g;
    vt_device *dev;
    run_hparams hp;
    vt_runner_info info;
    vt_load_plan *plan;       /* every tensor of the runner (fit, dtypes, report) */
    vt_load_plan *plan_stage; /* the tensors the model stages when groups are merged, else NULL */
    uint32_t n_merged;        /* groups staged side by side */
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
    /* The layers this runner holds, [l0, l1): all of them on one device; in
     * a layer split each part holds its range, the first the embedding, the
     * last the output head (and the sampled token). */
    uint32_t l0, l1;
    bool has_embd, has_head;
    run_ws *wsT; /* a part's prefill workspace (T > 1), kept between chunks */
    /* A layer split (runner_split.c): the parts, one per device, and the
     * host buffers the activations cross each boundary through. */
    struct vt_runner **part;
    uint32_t n_part;
    float **xfer;
    bool *xfer_pinned;
    vt_device **xfer_dev; /* the device each buffer is pinned for */
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

/* Bytes run_ws_create allocates for T tokens. */
uint64_t run_ws_bytes(const run_hparams *hp, uint32_t T);

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

/* Write positions pos .. pos + T - 1 and (when given) the tokens into ws. */
vt_status run_write_inputs(run_ws *ws, const int32_t *tokens, uint32_t T, uint32_t pos);

/* Record the decode step of r as a graph (once). */
vt_status run_record_decode(vt_runner *r);

/* Queue one decode step of r from the token (or, in a later part of a
 * split, the activations) on the device; the head samples and reads the
 * token into slot (may be NULL) asynchronously. Does not wait. */
vt_status run_decode_enqueue(vt_runner *r, const vt_sampler *s, uint64_t sample_step, int32_t *slot);

/* The workspace's activations [T, H]. */
vt_tensor *run_ws_x(run_ws *ws);

/* Create the part of a runner holding layers [l0, l1) on dev (the whole
 * model when l0 == 0 and l1 == L): plan (only its tensors when a part),
 * resolve, fit-check, stage, allocate its state. */
vt_status run_create_part(vt_gguf *g, vt_device *dev, const vt_runner_options *o, uint32_t l0, uint32_t l1,
                          vt_runner **out);

/* Bytes of layer il's state, and of a part's workspaces and tables, for
 * the split planner (what the part allocates). */
uint64_t run_layer_state_bytes(const run_hparams *hp, uint32_t il, uint32_t ctx, int kv_dtype);
uint64_t run_scratch_bytes(const run_hparams *hp, uint32_t chunk, uint32_t ctx);

/* Layer index of a "blk.N." tensor name, else -1. */
long run_layer_of(const char *name);

/* The state element type of a VT_RUNNER_KV_*, the context a request
 * gets, the expansion of the file's weights (-1: from token_embd). */
int run_kv_dtype(int kv_type);
uint32_t run_ctx_of(const run_hparams *hp, uint32_t ctx);
int run_expand_of(vt_gguf *g, int expand);

/* After a single device refused the model for its size: append to the
 * error the layer split over it and cpu:0 that would fit, when one does. */
void run_split_hint(vt_gguf *g, vt_device *dev, const vt_runner_options *o);

/* A split runner's step, reset and free (runner_split.c). */
vt_status run_split_step(vt_runner *r, const int32_t *tokens, uint32_t n, const vt_sampler *s, uint64_t sample_step,
                         int32_t *next, float *logits);
vt_status run_split_reset(vt_runner *r);
void run_split_record(vt_runner *r); /* each part's decode graph, where its device records one */
void run_split_free(vt_runner *r);

/* Weights staged side by side (runner_merge.c): decide the groups from
 * r->plan; whether a tensor is a member (the model does not stage it);
 * allocate and write the groups, pointing the members' slots at views;
 * free them (views first). */
vt_status run_merge_plan(vt_runner *r);
bool run_merge_member(const vt_runner *r, const char *name);
vt_status run_merge_stage(vt_runner *r);
void run_merge_free(vt_runner *r);

/* The (op, signature) pairs the forward pass runs, for vt_resolve_plan. */
vt_status run_plan_ops(const vt_runner *r, vt_plan_op **ops, size_t *n);

#endif
