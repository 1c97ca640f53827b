/* vt_runner.h - the reference model runner: token ids in, token ids out.
 *
 * Runs qwen3 (dense), qwen3moe and qwen3next GGUF files (shared/MODELS.md)
 * on one device, or split by layers over several (vt_runner_create_split),
 * through the public op API. vt_runner_create does all the
 * planning before any computation: it checks the file (architecture,
 * every tensor's name, shape and type; named errors before any device
 * allocation), plans residency and fit for the requested context
 * (vt_load_plan_create), resolves every op the forward pass will run on
 * the device at once (vt_resolve_plan: all refusals listed together),
 * stages the weights (vt_model_stage, with progress) and allocates the KV
 * cache, conv and recurrent state on the device. State is only ever
 * written by device kernels (KvCacheWrite, CausalConv1dUpdate,
 * GatedDeltaRule). Every op is enqueued on the device's default queue;
 * the decode step is recorded once as a graph (vt_graph) and replayed; the
 * sampled token and the position stay on the device (the graph advances
 * the position itself), so vt_runner_generate queues all decode steps
 * back to back, each token read back asynchronously (vt_tensor_read_async)
 * into pinned memory, and waits once at the end. */
#ifndef VT_RUNNER_H
#define VT_RUNNER_H

#include <stdbool.h>
#include <stdint.h>

#include <vt/vt_gguf.h>
#include <vt/vt_load.h>
#include <vt/vt_registry.h>
#include <vt/vt_status.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vt_runner vt_runner;

/* KV cache element types. */
#define VT_RUNNER_KV_F16  0 /* default */
#define VT_RUNNER_KV_BF16 1
#define VT_RUNNER_KV_F32  2

/* Options; zero-initialise and set struct_size. NULL means defaults. */
typedef struct vt_runner_options {
    uint32_t struct_size;    /* sizeof(vt_runner_options) */
    uint32_t ctx;            /* tokens of state (0: 4096, at most the model's context_length) */
    uint32_t chunk;          /* prefill chunk in tokens (0: 512) */
    int kv_type;             /* VT_RUNNER_KV_F16 (default), VT_RUNNER_KV_BF16, VT_RUNNER_KV_F32 */
    int expand;              /* -1: from the file (f16/bf16 weights stay so, others f32), else VT_EXPAND_* */
    uint64_t budget_bytes;   /* > 0: device budget for the fit check */
    uint32_t load_flags;     /* VT_LOAD_* */
    vt_progress_fn progress; /* staging progress, may be NULL */
    void *progress_user;
    uint32_t flags; /* VT_RUNNER_* */
} vt_runner_options;

/* Run every decode step op by op instead of replaying the recorded graph. */
#define VT_RUNNER_NO_GRAPH 0x1u

/* What the file is and what the runner holds. */
typedef struct vt_runner_info {
    char arch[16]; /* "qwen3", "qwen3moe", "qwen3next" */
    uint32_t n_vocab, n_layer, n_embd, n_ctx_train;
    uint32_t ctx;          /* context the state was allocated for */
    uint32_t n_plan_ops;   /* distinct (op, signature) pairs resolved */
    uint64_t weight_bytes; /* resident weight bytes (from the load plan) */
    uint64_t state_bytes;  /* KV cache + conv + recurrent state allocated */
    uint32_t n_cpu_tier;   /* plan ops that resolved to the CPU tier */
    bool decode_graph;     /* decode steps replay a recorded graph (on every device of a split) */
    char graph_note[256];  /* why recording failed, when it did */
    uint32_t n_devices;    /* 1, or the devices of a layer split */
    char placement[512];   /* a split: "layers 0-3 on rocm:0 (+ token_embd), 4-35 on cpu:0 (+ output)" */
    uint32_t n_merged;     /* weight groups (q|k|v, gate|up) staged side by side: one MatMul each per decode step */
} vt_runner_info;

/* Sampling of the next token; temperature <= 0 is greedy (Argmax). A
 * field outside its range is refused (VT_E_INVALID_ARG) before a step runs. */
typedef struct vt_sampler {
    float temperature; /* finite */
    int32_t top_k;     /* >= 0; 0: no cut */
    float top_p;       /* [0, 1]; 0 means 1 */
    uint64_t seed;
} vt_sampler;

/* Check g without a device: a known architecture, its hyper-parameters and
 * every tensor it needs (name, shape, type). info (may be NULL) is filled.
 * VT_E_UNSUPPORTED for an unknown architecture, VT_E_BAD_FILE naming a
 * missing or mis-shaped tensor or key. */
VT_WARN_UNUSED vt_status vt_runner_check_file(vt_gguf *g, vt_runner_info *info);

/* Plan, resolve, fit-check, stage and allocate (see above). The runner
 * borrows g, which must outlive it. On failure nothing stays allocated and
 * vt_last_error says why (every refused op, or the fit refusal; a model too
 * large for dev gets VT_E_DOES_NOT_FIT naming the layer split over dev and
 * cpu:0 that would fit, when one does: vt_runner_create_split). */
VT_WARN_UNUSED vt_status vt_runner_create(vt_gguf *g, vt_device *dev, const vt_runner_options *options,
                                          vt_runner **out);

/* At most this many devices in a layer split. */
#define VT_RUNNER_MAX_DEVICES 8

/* A layer split of a model over devices (vt_runner_plan_split): the first
 * layers (and token_embd) on the first device as far as its budget goes,
 * the next ones on the next device, output_norm and output with the last
 * layer. A device's cost is its layers' weights as the load plan makes
 * them resident there (weights used in place cost nothing), their state
 * (KV cache, or conv and recurrent state) for the context, and a bound on
 * the workspaces; its budget is options->budget_bytes, else the device's
 * (vt_fit_budget). */
typedef struct vt_runner_split {
    uint32_t n_devices, n_layer;
    uint32_t first_layer[VT_RUNNER_MAX_DEVICES + 1]; /* device d runs layers [first_layer[d], first_layer[d + 1]) */
    uint64_t needed_bytes[VT_RUNNER_MAX_DEVICES];    /* what device d would hold */
    uint64_t budget_bytes[VT_RUNNER_MAX_DEVICES];
    char budget_source[VT_RUNNER_MAX_DEVICES][96];
    uint32_t placed; /* layers placed (n_layer when it fits) */
    bool fits;
    char placement[512]; /* the split in words (as vt_runner_info.placement) */
} vt_runner_split;

/* Plan the split of g over devs[0..n) for options (NULL: defaults).
 * Allocates nothing. VT_OK when it fits, VT_E_DOES_NOT_FIT (the message
 * says how far it got) when not; out is filled either way. Other errors:
 * a bad file, more than VT_RUNNER_MAX_DEVICES devices. */
vt_status vt_runner_plan_split(vt_gguf *g, vt_device *const *devs, uint32_t n, const vt_runner_options *options,
                               vt_runner_split *out);

/* Plan the split (as above) and build a runner that executes it: each
 * device holds its layers' weights and their state and runs them on its
 * own queue (its decode step a replayed graph where it records one); the
 * activations cross each boundary through host memory (asynchronous
 * read-back, then an asynchronous write on the next device's queue), the
 * sampled token goes back from the last device to the first. The same
 * tokens as on one device. VT_E_DOES_NOT_FIT, naming the split, when the
 * model does not fit the devices. */
vt_status vt_runner_create_split(vt_gguf *g, vt_device *const *devs, uint32_t n, const vt_runner_options *options,
                                 vt_runner **out);

/* Free the runner, its weights and state. NULL is ignored. */
void vt_runner_destroy(vt_runner *r);

/* What the runner holds (valid for its life). */
const vt_runner_info *vt_runner_get_info(const vt_runner *r);

/* Tokens processed so far (the position of the next token). */
uint32_t vt_runner_position(const vt_runner *r);

/* Start a new sequence: position 0, conv and recurrent state zeroed. */
VT_WARN_UNUSED vt_status vt_runner_reset(vt_runner *r);

/* Run n tokens at the current position (prefill when n > 1, in chunks),
 * then sample the token after them with s (NULL: greedy) and RNG step
 * sample_step. tokens NULL with n == 1 feeds the token the previous step
 * sampled, which never left the device. next (may be NULL) receives the
 * sampled id, logits (may be NULL) the n_vocab logits of the last token.
 * VT_E_INVALID_ARG for a token >= n_vocab, a position past ctx or a
 * sampler field outside its range, before anything runs. */
VT_WARN_UNUSED vt_status vt_runner_step(vt_runner *r, const int32_t *tokens, uint32_t n, const vt_sampler *s,
                                        uint64_t sample_step, int32_t *next, float *logits);

/* Timing of vt_runner_generate. */
typedef struct vt_generate_stats {
    double prefill_s, decode_s; /* wall time of the prompt pass and of the decode steps */
    uint32_t n_prompt, n_decoded;
} vt_generate_stats;

/* Reset, prefill the prompt, then produce n_gen tokens into out (the first
 * comes from the prefill's logits, each next one from a decode step fed on
 * the device). Sampling step i uses RNG step i. n_gen = 0: the prompt only
 * (out may be NULL), the next vt_runner_step continues after it.
 * VT_E_INVALID_ARG, before the reset, when the prompt and n_gen - 1 decode
 * steps pass ctx or a sampler field is outside its range. */
VT_WARN_UNUSED vt_status vt_runner_generate(vt_runner *r, const int32_t *prompt, uint32_t n_prompt, uint32_t n_gen,
                                            const vt_sampler *s, int32_t *out, vt_generate_stats *stats);

#ifdef __cplusplus
}
#endif
#endif /* VT_RUNNER_H */
