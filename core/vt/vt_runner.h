/* vt_runner.h - the reference model runner: token ids in, token ids out.
 *
 * Runs qwen3 (dense), qwen3moe and qwen3next GGUF files (shared/MODELS.md)
 * on one device through the public op API. vt_runner_create does all the
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
    bool decode_graph;     /* decode steps replay a recorded graph */
    char graph_note[256];  /* why recording failed, when it did */
} vt_runner_info;

/* Sampling of the next token; temperature <= 0 is greedy (Argmax). */
typedef struct vt_sampler {
    float temperature;
    int32_t top_k; /* 0: no cut */
    float top_p;   /* (0, 1]; 0 means 1 */
    uint64_t seed;
} vt_sampler;

/* Check g without a device: a known architecture, its hyper-parameters and
 * every tensor it needs (name, shape, type). info (may be NULL) is filled.
 * VT_E_UNSUPPORTED for an unknown architecture, VT_E_BAD_FILE naming a
 * missing or mis-shaped tensor or key. */
VT_WARN_UNUSED vt_status vt_runner_check_file(vt_gguf *g, vt_runner_info *info);

/* Plan, resolve, fit-check, stage and allocate (see above). The runner
 * borrows g, which must outlive it. On failure nothing stays allocated and
 * vt_last_error says why (every refused op, or the fit refusal). */
VT_WARN_UNUSED vt_status vt_runner_create(vt_gguf *g, vt_device *dev, const vt_runner_options *options,
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
 * VT_E_INVALID_ARG for a token >= n_vocab or a position past ctx. */
VT_WARN_UNUSED vt_status vt_runner_step(vt_runner *r, const int32_t *tokens, uint32_t n, const vt_sampler *s,
                                        uint64_t sample_step, int32_t *next, float *logits);

/* Timing of vt_runner_generate. */
typedef struct vt_generate_stats {
    double prefill_s, decode_s; /* wall time of the prompt pass and of the decode steps */
    uint32_t n_prompt, n_decoded;
} vt_generate_stats;

/* Reset, prefill the prompt, then produce n_gen tokens into out (the first
 * comes from the prefill's logits, each next one from a decode step fed on
 * the device). Sampling step i uses RNG step i. */
VT_WARN_UNUSED vt_status vt_runner_generate(vt_runner *r, const int32_t *prompt, uint32_t n_prompt, uint32_t n_gen,
                                            const vt_sampler *s, int32_t *out, vt_generate_stats *stats);

#ifdef __cplusplus
}
#endif
#endif /* VT_RUNNER_H */
