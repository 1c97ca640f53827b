/* bench_plan.h - what `vtctl bench` allocates and fills for one case (op,
 * wtype, shape): the tensors of a run, the op's params and the bytes a run
 * must move at least. cmd_bench.c plans the weight ops (MatMul,
 * MoeExpertMatMul, GetRows, Dequantize, Copy); cmd_bench_ops.c the other
 * decode-path ops (GatedDeltaRule, the causal convolutions, Attention, the
 * vocabulary-row ops, RmsNorm, Rope). */
#ifndef VTCTL_BENCH_PLAN_H
#define VTCTL_BENCH_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vt/vt.h>

#define BENCH_MAX_KEYS   6
#define BENCH_MAX_IN     7
#define BENCH_MAX_OUT    2
#define BENCH_MAX_PARAMS 64

/* Shape keys per op, with defaults. */
typedef struct shape_key {
    const char *name;
    int64_t value;
} shape_key;

typedef struct op_spec {
    vt_op op;
    const char *keys_doc;
    shape_key keys[BENCH_MAX_KEYS];
    const char *default_wtypes; /* comma list */
} op_spec;

typedef struct bench_case {
    const op_spec *spec;
    vt_dtype wtype;
    int64_t v[BENCH_MAX_KEYS]; /* shape values, in spec key order */
} bench_case;

/* How a tensor of a buffer set is filled: random bytes in [0x04, 0x7b]
 * (weights, caches), f32 uniform in [lo, hi), indices below index_below,
 * every i32 element = value, not at all (an output), or absent (an
 * optional input left out: NULL in the call). */
enum { FILL_BYTES, FILL_F32, FILL_INDEX, FILL_NONE, FILL_ABSENT, FILL_I32 };

/* One tensor of a buffer set: its dtype, shape and how to fill it. An
 * output with a fill other than FILL_NONE is an INOUT state, written once
 * per set before the runs. */
typedef struct tensor_plan {
    vt_dtype dtype;
    uint32_t ndim;
    int64_t shape[4];
    int fill;
    int64_t index_below; /* FILL_INDEX: values in [0, index_below) */
    float lo, hi;        /* FILL_F32: the range; both 0: [-1, 1) */
    int32_t value;       /* FILL_I32 */
} tensor_plan;

typedef struct case_plan {
    int n_in, n_out;
    tensor_plan in[BENCH_MAX_IN], out[BENCH_MAX_OUT];
    double bytes;        /* bytes moved per run */
    double expert_bytes; /* MoeExpertMatMul: bytes of one expert, added per distinct id */
    unsigned char params[BENCH_MAX_PARAMS];
    size_t params_size; /* 0: the op takes no params */
} case_plan;

/* The value of shape key name in case c (0 when the op has no such key). */
int64_t bench_key(const bench_case *c, const char *name);

/* Plan a case of the decode-path ops of cmd_bench_ops.c into p: false when
 * c's op is not one of them, or (with err) when the shape does not fit the
 * op. */
bool bench_plan_decode_op(const bench_case *c, case_plan *p, bool *handled, char *err, size_t err_size);

#endif
