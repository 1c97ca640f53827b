/* vt_params.h - parameter structs of the ops in the catalogue (SPEC 7).
 *
 * An op that takes parameters is run with a pointer to its struct and
 * sizeof that struct; the core checks the size and the values before any
 * kernel runs. Ops without parameters take NULL, 0. Fields are only ever
 * appended; reserved fields must be zero. */
#ifndef VT_PARAMS_H
#define VT_PARAMS_H

#include <stdint.h>

#include <vt/vt_dtype.h> /* VT_HOST_DEVICE */

#ifdef __cplusplus
extern "C" {
#endif

/* Scale (4): y = x * s. */
typedef struct vt_params_scale {
    float s;
} vt_params_scale;

/* RmsNorm (5), L2Norm (6), GatedRmsNorm (15): the epsilon under the root. */
typedef struct vt_params_norm {
    float eps;
} vt_params_norm;

/* CausalConv1dSpecUpdate (7), CausalConv1d (8), CausalConv1dUpdate (9). */
typedef struct vt_params_conv {
    int32_t silu; /* 1: out = silu(conv), 0: out = conv */
} vt_params_conv;

/* Softmax (10): y = softmax(x * scale + mask) over the last axis. */
typedef struct vt_params_softmax {
    float scale;
} vt_params_softmax;

/* Rope (18) pairing. */
#define VT_ROPE_NORMAL 0 /* pairs (2i, 2i+1) */
#define VT_ROPE_NEOX   1 /* pairs (i, i + n_rot/2) */

/* Rope (18): angle = p * theta^(-2i/n_rot) for pair i < n_rot/2. */
typedef struct vt_params_rope {
    float theta;   /* frequency base, > 0 (10000, 1e6 ...) */
    int32_t n_rot; /* rotated dims, even, 0 < n_rot <= head dim */
    int32_t mode;  /* VT_ROPE_NORMAL or VT_ROPE_NEOX */
} vt_params_rope;

/* MoeRouter (22) scoring. */
#define VT_ROUTER_SOFTMAX 0
#define VT_ROUTER_SIGMOID 1

/* MoeRouter (22). */
typedef struct vt_params_moe_router {
    int32_t k;           /* experts per token, 1 <= k <= E */
    int32_t score;       /* VT_ROUTER_SOFTMAX or VT_ROUTER_SIGMOID */
    int32_t renormalize; /* 1: weights /= max(sum of the k weights, 2^-14) */
    float routed_scale;  /* weights *= routed_scale (1 for none) */
} vt_params_moe_router;

/* Attention (30). */
typedef struct vt_params_attention {
    float scale;    /* logits = scale * q.k */
    int32_t window; /* > 0: key s visible only if p - s < window; 0: no window */
} vt_params_attention;

/* GatedDeltaRule (32). */
typedef struct vt_params_gdn {
    int32_t l2norm; /* 1: L2-normalise q and k (x / sqrt(sum x^2 + 1e-6)) first */
} vt_params_gdn;

/* TopK (35). */
typedef struct vt_params_topk {
    int32_t k; /* 1 <= k <= min(n, 2048) */
} vt_params_topk;

/* Sample (51): the same token on every backend.
 *
 * Per row: temperature <= 0 means argmax (ties to the lower index).
 * Otherwise candidates are sorted by logit descending (ties: lower index
 * first), cut to top_k (0: all), then to the shortest prefix whose
 * probability mass reaches top_p (at least one); probabilities are
 * exp((l - l_max) / temperature) in double precision, normalised over the
 * kept prefix. u = vt_sample_uniform(seed, step, row) in [0, 1); the token
 * is the first candidate whose cumulative probability exceeds u. */
typedef struct vt_params_sample {
    float temperature;
    int32_t top_k;
    float top_p;       /* 0 < top_p <= 1 */
    uint32_t reserved; /* zero */
    uint64_t seed;
    uint64_t step;
} vt_params_sample;

/* IndexSelect (90): torch.index_select(src, dim, idx). */
typedef struct vt_params_index_select {
    int32_t dim; /* -ndim <= dim < ndim */
} vt_params_index_select;

/* splitmix64's increment (the golden ratio in 64 bits). */
#define VT_SPLITMIX64_GAMMA 0x9e3779b97f4a7c15ull

/* The counter-based uniform of Sample: a splitmix64 chain over
 * (seed, step, row), 53 bits -> [0, 1). Identical on every backend. */
static inline VT_HOST_DEVICE uint64_t vt_sample_mix(uint64_t z)
{
    z += VT_SPLITMIX64_GAMMA;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The next value of the splitmix64 stream *state (advanced): the one
 * splitmix64 generator of the tree (model writer, vtctl, tests). */
static inline VT_HOST_DEVICE uint64_t vt_splitmix64_next(uint64_t *state)
{
    uint64_t z = vt_sample_mix(*state);
    *state += VT_SPLITMIX64_GAMMA;
    return z;
}

/* Uniform in [0, 1) for (seed, step, row). */
static inline VT_HOST_DEVICE double vt_sample_uniform(uint64_t seed, uint64_t step, uint64_t row)
{
    uint64_t h = vt_sample_mix(vt_sample_mix(vt_sample_mix(seed) ^ step) ^ row);
    return (double)(h >> 11) * (1.0 / 9007199254740992.0);
}

#ifdef __cplusplus
}
#endif
#endif /* VT_PARAMS_H */
