/* conformance.h - the conformance runner behind `vtctl check` (SPEC 7, 9):
 * per-op generators of valid random calls (decode and prefill shapes),
 * running a call on any device through the public API only, and the
 * comparison of its outputs with the cpu oracle's under SPEC 7's
 * tolerances. Tests link it too (libvtconformance). */
#ifndef VT_CONFORMANCE_H
#define VT_CONFORMANCE_H

#include "host_array.h"

/* Shapes of a generated call. */
typedef enum vtc_shape_class {
    VTC_DECODE = 0,  /* one token per sequence (T = 1, small batches) */
    VTC_PREFILL = 1, /* many tokens */
    VTC_WIDE = 2     /* rows enough for the matrix-instruction (GEMM) paths (16..300): MatMul only */
} vtc_shape_class;

#define VTC_N_SHAPE_CLASSES 3

/* Whether op has calls of shape class cls (decode and prefill: every op;
 * wide: MatMul). */
bool vtc_class_applies(uint32_t op, vtc_shape_class cls);

/* How an output is compared with the oracle's. */
typedef enum vtc_cmp {
    VTC_EXACT = 0, /* equal values (integers bit for bit; floats -0 == +0, NaN never) */
    VTC_REL = 1    /* ||got - ref|| / ||ref|| <= tol over finite entries; infinities match position for position */
} vtc_cmp;

/* One generated call of an (op, signature). Owns every array. */
typedef struct vtc_case {
    uint32_t op;
    vt_sig sig;
    vtc_shape_class cls;
    char desc[192]; /* the shapes and choices, "B=2 D=7 T=3 W=4 L=6 silu" */
    uint32_t n_in, n_out;
    host_array in[VT_MAX_INPUTS];
    host_array out[VT_MAX_OUTPUTS]; /* dtype and shape; data = initial contents of INOUT outputs, else NULL */
    vtc_cmp cmp[VT_MAX_OUTPUTS];
    double tol[VT_MAX_OUTPUTS]; /* for VTC_REL */
    unsigned char params[64];   /* the op's params struct */
    size_t params_size;
} vtc_case;

/* Generate a valid call of (op, sig) with random shapes of class cls.
 * The same (op, sig, cls, seed) always gives the same call. VT_E_UNSUPPORTED
 * when (op, sig) is not in the catalogue or has no generator. */
vt_status vtc_case_make(uint32_t op, vt_sig sig, vtc_shape_class cls, uint64_t seed, vtc_case *c, char *why,
                        size_t why_size);

/* Free every array of a case. */
void vtc_case_free(vtc_case *c);

/* Run a case on dev: create the tensors, write the inputs and the initial
 * contents of INOUT outputs, poison the other outputs, run, read every
 * output back into got[0..n_out) (fresh arrays the caller frees with
 * host_array_free). On failure the status is vt_op_run's (or the tensor
 * call's) and vt_last_error says why; got is left empty. */
vt_status vtc_case_run(vt_device *dev, const vtc_case *c, host_array *got);

/* The comparison of one run with the oracle's. */
typedef struct vtc_verdict {
    bool pass;
    double err;       /* the largest relative error over VTC_REL outputs (0 for exact ones) */
    char detail[320]; /* on failure: which output, where, what */
} vtc_verdict;

/* Compare got with ref (both c->n_out arrays) under the case's rules. */
void vtc_compare(const vtc_case *c, const host_array *got, const host_array *ref, vtc_verdict *v);

/* What checking one (op, signature) found. */
typedef enum vtc_outcome {
    VTC_PASS = 0,
    VTC_FAIL = 1,     /* an output differs beyond tolerance, or the device's run failed */
    VTC_REFUSED = 2,  /* the device resolves the op to a refusal (SPEC 5) */
    VTC_NO_ORACLE = 3 /* the cpu backend has no kernel for it yet */
} vtc_outcome;

/* "pass", "FAIL", "refused", "no-oracle". */
const char *vtc_outcome_name(vtc_outcome o);

typedef struct vtc_result {
    uint32_t op;
    vt_sig sig;
    vtc_outcome outcome;
    double err;        /* worst relative error over the cases run */
    uint32_t n_cases;  /* cases compared */
    char detail[1024]; /* refusal reason, failure, or the case shapes */
} vtc_result;

/* Check (op, sig) on dev against the oracle device (the cpu backend's):
 * resolve first (a refusal is reported, not run; on the oracle device
 * itself a missing kernel reads "no cpu oracle kernel yet"), then one
 * decode and one prefill case. seed selects the cases (mixed with op, sig
 * and class, so --op X reproduces the same calls as a full run). */
void vtc_check(vt_device *dev, vt_device *oracle, uint32_t op, vt_sig sig, uint64_t seed, vtc_result *r);

#endif
