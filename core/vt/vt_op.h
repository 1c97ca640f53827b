/* vt_op.h - the op catalogue (SPEC 7): stable op ids and kernel signatures.
 *
 * Op ids are stable numbers: they appear in refusal messages, logs and
 * JSON, and never change meaning. A kernel signature is the tuple of dtypes
 * of an op's signature operands (the operands that select a kernel, named
 * per op by vt_op_sig_operands); the remaining operands have fixed dtypes
 * checked by the op's shape rules. */
#ifndef VT_OP_H
#define VT_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vt/vt_dtype.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vt_op {
    VT_OP_NONE = 0,
    VT_OP_COPY = 1,
    VT_OP_ADD = 2,
    VT_OP_MUL = 3,
    VT_OP_SCALE = 4,
    VT_OP_RMS_NORM = 5,
    VT_OP_L2_NORM = 6,
    VT_OP_CAUSAL_CONV1D_SPEC_UPDATE = 7,
    VT_OP_CAUSAL_CONV1D = 8,
    VT_OP_CAUSAL_CONV1D_UPDATE = 9,
    VT_OP_SOFTMAX = 10,
    VT_OP_SILU = 11,
    VT_OP_GELU = 12,
    VT_OP_SIGMOID = 13,
    VT_OP_SWIGLU = 14,
    VT_OP_GATED_RMS_NORM = 15,
    VT_OP_GDN_GATE = 16,
    VT_OP_ROPE = 18,
    VT_OP_MATMUL = 20,
    VT_OP_MOE_ROUTER = 22,
    VT_OP_MOE_EXPERT_MATMUL = 23,
    VT_OP_MOE_COMBINE = 24,
    VT_OP_ATTENTION = 30,
    VT_OP_KV_CACHE_WRITE = 31,
    VT_OP_GATED_DELTA_RULE = 32,
    VT_OP_DSA_INDEXER_LOGITS = 34,
    VT_OP_TOPK = 35,
    VT_OP_GET_ROWS = 40,
    VT_OP_DEQUANTIZE = 41,
    VT_OP_ARGMAX = 50,
    VT_OP_SAMPLE = 51,
    VT_OP_INDEX_SELECT = 90,
    VT_OP_ID_LIMIT = 91 /* one past the largest id; not an op */
} vt_op;

/* Largest number of signature operands of any op. */
#define VT_SIG_MAX 6

/* A kernel signature: the dtypes of an op's signature operands, in the
 * order vt_op_sig_operands names them. Unused slots are zero. */
typedef struct vt_sig {
    uint8_t n;                 /* number of slots used */
    uint8_t dtype[VT_SIG_MAX]; /* vt_dtype of each slot */
} vt_sig;

/* Build a signature from n dtypes (n <= VT_SIG_MAX). */
vt_sig vt_sig_make(uint32_t n, const vt_dtype *dtypes);

/* True when two signatures are equal. */
bool vt_sig_equal(vt_sig a, vt_sig b);

/* Writes "(f32, i32)" into buf; returns buf. */
char *vt_sig_format(vt_sig sig, char *buf, size_t size);

/* Name of an op id as the catalogue spells it ("IndexSelect"), or NULL for
 * an id that is not in the catalogue. */
const char *vt_op_name(vt_op op);

/* Op id for a catalogue name (case-insensitive), or VT_OP_NONE. */
vt_op vt_op_from_name(const char *name);

/* Operand flags. */
#define VT_OPERAND_OPTIONAL 0x1u /* may be absent (NULL) */
#define VT_OPERAND_INOUT    0x2u /* an output that is also read (a state updated in place) */

/* One operand of an op, as the catalogue names it. */
typedef struct vt_operand_info {
    const char *name; /* "x", "W", "state" */
    uint32_t flags;   /* VT_OPERAND_* */
    const char *doc;  /* shape and dtype, e.g. "[B,D,T] f32" */
} vt_operand_info;

/* Types of parameter fields. */
typedef enum vt_param_type { VT_PARAM_F32 = 0, VT_PARAM_I32 = 1, VT_PARAM_U64 = 2 } vt_param_type;

/* One field of an op's params struct (vt_params.h). */
typedef struct vt_param_info {
    const char *name; /* "eps", "k" */
    uint32_t type;    /* vt_param_type */
    uint32_t offset;  /* offsetof in the params struct */
    const char *doc;
} vt_param_info;

/* An op of the catalogue: its operands, signatures and parameters. All
 * pointers are static. */
typedef struct vt_op_info {
    vt_op op;            /* its id */
    const char *name;    /* "IndexSelect" */
    const char *summary; /* one line */
    uint32_t n_in, n_out;
    const vt_operand_info *in;  /* inputs, in call order */
    const vt_operand_info *out; /* outputs, in call order */
    const char *sig_operands;   /* which operands make the signature: "x, W" */
    uint32_t n_sigs;
    const vt_sig *sigs;   /* every signature the catalogue defines */
    uint32_t params_size; /* sizeof its params struct, 0 if none */
    uint32_t n_params;
    const vt_param_info *params;
} vt_op_info;

/* Catalogue entry of an op id, or NULL. */
const vt_op_info *vt_op_get_info(vt_op op);

/* Number of ops in the catalogue. */
uint32_t vt_op_catalog_size(void);

/* The i-th op of the catalogue, in id order (0 <= i < size). */
const vt_op_info *vt_op_catalog_entry(uint32_t i);

/* The family of an op id ("convert", "elementwise", "rows", "conv",
 * "matmul", "attention", "select", "gather"): where its entry, operand
 * rules and output shapes are (core/ops/<family>.c), and the name backends
 * give their family files. NULL for an id not in the catalogue. */
const char *vt_op_family_name(vt_op op);

/* The catalogue's op families in its order, as an X-macro: X(arg, family)
 * for each, family a bare name (the one vt_op_family_name returns). The
 * one list of them: core/op_catalog.c joins its family files with it, and
 * backends join their per-family kernel tables with it (vt_backend.h). */
/* clang-format off */
#define VT_OP_FAMILIES(X, arg) \
    X(arg, convert) X(arg, elementwise) X(arg, rows) X(arg, conv) \
    X(arg, matmul) X(arg, attention) X(arg, select) X(arg, gather)
/* clang-format on */

/* True when (op, sig) is one of the catalogue's signatures. */
bool vt_op_sig_in_catalog(vt_op op, vt_sig sig);

/* The GGUF block formats the catalogue calls "q" (SPEC 7), in catalogue
 * order, written once: X(id, f) for each, id its vt_dtype and f its name
 * (vt_dtype_name's spelling, and the suffix of its section in
 * vt_blocks.h). Kernel tables, decoders and tools expand this list instead
 * of restating it. */
#define VT_Q_FORMATS(X)                                                                                                \
    X(VT_Q4_0, q4_0)                                                                                                   \
    X(VT_Q4_1, q4_1)                                                                                                   \
    X(VT_Q5_0, q5_0)                                                                                                   \
    X(VT_Q5_1, q5_1)                                                                                                   \
    X(VT_Q8_0, q8_0)                                                                                                   \
    X(VT_Q2_K, q2_k)                                                                                                   \
    X(VT_Q3_K, q3_k)                                                                                                   \
    X(VT_Q4_K, q4_k)                                                                                                   \
    X(VT_Q5_K, q5_k)                                                                                                   \
    X(VT_Q6_K, q6_k)                                                                                                   \
    X(VT_IQ4_NL, iq4_nl)                                                                                               \
    X(VT_IQ4_XS, iq4_xs)                                                                                               \
    X(VT_MXFP4, mxfp4)

/* VT_Q_FORMATS as an array, and how many. */
extern const vt_dtype vt_q_formats[];
extern const uint32_t vt_n_q_formats;

#ifdef __cplusplus
}
#endif
#endif /* VT_OP_H */
