/* vt_mkmodel.h - writing synthetic qwen3 / qwen3moe / qwen3next GGUF files.
 *
 * Random but well-conditioned weights (unit-gain projections, logits with
 * a standard deviation near 4, routers with clear margins) in exactly the
 * layout llama.cpp's converter writes (shared/MODELS.md): names, ne order,
 * f32 for 1-D tensors, norms, ffn_gate_inp(_shexp) and ssm_conv1d, the
 * qwen3next +1 norms, ssm_a = -exp(A_log), the attn_qkv / attn_gate /
 * ssm_ba layouts. The same options and seed give the same bytes. */
#ifndef VT_MKMODEL_H
#define VT_MKMODEL_H

#include <stdint.h>

#include <vt/vt_dtype.h>
#include <vt/vt_status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What to write; zero-initialise and set struct_size. */
typedef struct vt_mkmodel_options {
    uint32_t struct_size; /* sizeof(vt_mkmodel_options) */
    const char *arch;     /* "qwen3", "qwen3moe", "qwen3next" */
    const char *preset;   /* "tiny", "small", "8b-shape" */
    vt_dtype wtype;       /* type of the matrices: f32, f16, bf16, q8_0, q4_0, iq4_nl */
    uint64_t seed;
    uint32_t n_layers; /* > 0: override the preset's block count */
} vt_mkmodel_options;

/* Write the model to path. VT_E_INVALID_ARG names an unknown arch,
 * preset or weight type, or a tensor whose rows are not whole blocks of
 * the type. The 8b-shape preset shares one buffer per tensor kind across
 * layers (and between token_embd and output) so it is written in seconds. */
VT_WARN_UNUSED vt_status vt_mkmodel_write(const vt_mkmodel_options *options, const char *path);

#ifdef __cplusplus
}
#endif
#endif /* VT_MKMODEL_H */
