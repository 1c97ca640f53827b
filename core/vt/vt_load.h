/* vt_load.h - loading a GGUF model onto a device: the plan, then staging.
 *
 * vt_load_plan_create decides, before anything is allocated, how every
 * tensor of a GGUF file will live on a device (SPEC 6): its op class (given
 * by the caller, else from its llama.cpp name), keep-quant or expanded,
 * used in place or copied (the device's staging decisions), the bytes it costs, plus
 * what a run of the requested context and batch needs (KV cache, conv and
 * GDN state caches, scratch), and the fit verdict against the budget.
 * vt_model_stage then copies the weights in, through a fixed pool of
 * n_chunks pinned chunks (never a copy of the whole file; the file read of
 * one chunk overlaps the asynchronous copy of the one before), or uses the
 * file's mapping in place where the device is the host's memory and
 * nothing is converted. Both name what went wrong and free everything on
 * failure. */
#ifndef VT_LOAD_H
#define VT_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vt/vt_fit.h>
#include <vt/vt_gguf.h>
#include <vt/vt_registry.h>
#include <vt/vt_status.h>
#include <vt/vt_tensor.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Progress of staging: bytes_done of bytes_total handed to the device so
 * far, the tensor being copied. libvt prints nothing: a caller that wants
 * a bar draws it from this (vtctl does). */
typedef void (*vt_progress_fn)(void *user, uint64_t bytes_done, uint64_t bytes_total, const char *tensor);

/* Accepted and ignored (libvt draws nothing): kept so callers that set it
 * still build; draw from vt_load_options.progress instead. */
#define VT_LOAD_PROGRESS_BAR 0x1u
/* Always copy, even where the file's mapping could be used in place. */
#define VT_LOAD_NO_ZERO_COPY 0x2u

/* The op class a model runner gives one tensor, by its GGUF name. */
typedef struct vt_tensor_class {
    const char *name;  /* the tensor's GGUF name */
    uint32_t op_class; /* vt_op_class it feeds, or VT_OP_CLASS_NONE */
} vt_tensor_class;

/* Options of planning and staging; zero-initialise and set struct_size.
 * NULL means all defaults. */
typedef struct vt_load_options {
    uint32_t struct_size;      /* sizeof(vt_load_options) */
    uint32_t expand;           /* VT_EXPAND_F16 (default), VT_EXPAND_BF16, VT_EXPAND_F32 */
    uint64_t budget_bytes;     /* > 0: this budget; 0: the registry's (vt_fit_budget), else the probe */
    const char *budget_origin; /* how budget_bytes was given ("--budget") */
    uint64_t ctx;              /* context length the run needs state for; 0: weights only */
    uint64_t batch;            /* sequences of the run; 0 means 1 */
    uint64_t chunk_bytes;      /* staging chunk size (default 64 MiB) */
    uint32_t n_chunks;         /* chunks in the pinned pool, 1..16 (default 2: double-buffered) */
    uint32_t flags;            /* VT_LOAD_* */
    vt_progress_fn progress;   /* called after every chunk is handed to the device, may be NULL */
    void *progress_user;
    const vt_tensor_class *classes; /* the op class of these tensors (the runner's); others: vt_gguf_op_class */
    size_t n_classes;               /* entries of classes; each must name a tensor of the file, once */
} vt_load_options;

/* Op class of a GGUF tensor from its llama.cpp name and rank (the default
 * where vt_load_options.classes does not name the tensor):
 * token_embd.weight and per_layer_token_embd.weight feed gather,
 * *_exps.weight feed moe-expert, other weights of 2+ dims feed matmul,
 * 1-D tensors (norms, biases, gates) feed none and stay f32. */
uint32_t vt_gguf_op_class(const char *name, uint32_t n_dims);

/* What a run needs on the device besides weights, from the metadata. */
typedef struct vt_run_estimate {
    uint64_t kv_cache;        /* attention layers x ctx x batch x kv heads x (k+v dims) x f16 */
    uint64_t conv_state;      /* SSM/GDN layers x batch x (kernel-1) x conv channels x f32 */
    uint64_t recurrent_state; /* GDN/SSM layers x batch x state size x f32 */
    uint64_t scratch;         /* batch x (vocab + 4 x max(embedding, ffn)) x f32 */
    uint64_t total;
    char detail[384]; /* how each term was derived */
} vt_run_estimate;

typedef struct vt_load_plan vt_load_plan;

/* Plan g on dev. *out is set whenever planning succeeded, also when the
 * verdict is a refusal: then the return is VT_E_DOES_NOT_FIT with the
 * SPEC 6 message, and the plan still describes every tensor. Other errors
 * (a bad op class, a device that cannot be probed) leave *out NULL. The
 * plan borrows g, which must outlive it. Allocates nothing on the device. */
VT_WARN_UNUSED vt_status vt_load_plan_create(vt_gguf *g, vt_device *dev, const vt_load_options *options,
                                             vt_load_plan **out);

/* Free a plan. NULL is ignored. */
void vt_load_plan_destroy(vt_load_plan *plan);

/* Number of tensors in the plan (every tensor of the file, file order). */
size_t vt_load_plan_count(const vt_load_plan *plan);

/* Tensor i: its file entry, its descriptor and its decision. */
VT_WARN_UNUSED vt_status vt_load_plan_entry(const vt_load_plan *plan, size_t i, const vt_gguf_tensor **tensor,
                                            const vt_weight_desc **desc, const vt_weight_plan **decision);

/* Totals and the budget (valid for the plan's life). */
const vt_fit_report *vt_load_plan_report(const vt_load_plan *plan);

/* The run estimate that was added to the weights. */
const vt_run_estimate *vt_load_plan_run(const vt_load_plan *plan);

/* VT_OK when what the load allocates on the device fits (or is nothing),
 * else VT_E_DOES_NOT_FIT; message (may be NULL) gets the refusal text. */
VT_WARN_UNUSED vt_status vt_load_plan_verdict(const vt_load_plan *plan, const char **message);

typedef struct vt_model vt_model;

/* How staging went. */
typedef struct vt_stage_stats {
    uint64_t bytes_copied;   /* bytes written to the device */
    uint64_t bytes_in_place; /* bytes used from the mapping without a copy */
    uint64_t pool_bytes;     /* host memory of the chunk pool: n_chunks x chunk_bytes */
    uint32_t tensors_copied, tensors_in_place, tensors_expanded;
    bool pinned; /* every chunk of the pool is pinned memory of the device */
} vt_stage_stats;

/* Stage the weights of a plan whose verdict is VT_OK onto its device,
 * copying exactly the tensors the plan counted (the rest used in place).
 * A refused plan is refused again here and nothing is allocated, as is
 * VT_LOAD_NO_ZERO_COPY in options when the plan was made without it. On any
 * failure every tensor made so far is freed and the message names the
 * tensor and the byte where it stopped. *out is owned by the caller
 * (vt_model_destroy) and borrows g, which must outlive it. */
VT_WARN_UNUSED vt_status vt_model_stage(vt_load_plan *plan, const vt_load_options *options, vt_model **out);

/* Free a model's tensors. NULL is ignored. */
void vt_model_destroy(vt_model *model);

/* Number of tensors (file order), and tensor i (owned by the model). */
size_t vt_model_tensor_count(const vt_model *model);
vt_tensor *vt_model_tensor(const vt_model *model, size_t i);

/* A tensor by its GGUF name, or NULL. */
vt_tensor *vt_model_find(const vt_model *model, const char *name);

/* What staging did. */
const vt_stage_stats *vt_model_stats(const vt_model *model);

#ifdef __cplusplus
}
#endif
#endif /* VT_LOAD_H */
