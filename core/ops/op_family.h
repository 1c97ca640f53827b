/* op_family.h - the op catalogue by family (internal to libvt). Each
 * family file core/ops/<family>.c holds, for every op of the family, the
 * three things the core knows about it, side by side: its catalogue entry
 * (vt_op.h), its operand rules (what vt_op_check enforces) and its output
 * shapes (what vt_op_output_shapes derives). op_catalog.c lists the
 * families; the conformance generators (tools/conformance_gen.c) are keyed
 * by the same op ids. A new op goes into its family's file (see the
 * README's contributor guide). */
#ifndef VT_OP_FAMILY_H
#define VT_OP_FAMILY_H

#include "op_rules.h"

/* Operand rules of one op: check the call, set its kernel signature. */
typedef vt_status (*vt_op_rule_fn)(chk *c, vt_sig *sig);

/* Output shapes of one op: set the dtype and shape of every output that is
 * not INOUT, from the inputs and params. */
typedef vt_status (*vt_op_shape_fn)(const shp_call *s);

/* Flags of an op. */
#define VT_OPDEF_FREE_DTYPE 0x1u /* an output's dtype is the caller's choice (free_dtype) */
#define VT_OPDEF_IN_PLACE   0x2u /* elementwise: an output may be exactly one of the inputs */

/* One op of the catalogue. */
typedef struct vt_op_def {
    vt_op_rule_fn check;   /* operand rules */
    vt_op_shape_fn shapes; /* output shapes */
    uint32_t flags;        /* VT_OPDEF_* */
    vt_op_info info;       /* the catalogue entry */
} vt_op_def;

/* A row of a family's table: rules, shapes, flags, then the entry's fields. */
#define VT_OP_DEF(check, shapes, flags, ...)                                                                           \
    {                                                                                                                  \
        check, shapes, flags,                                                                                          \
        {                                                                                                              \
            __VA_ARGS__                                                                                                \
        }                                                                                                              \
    }

/* One family: its name (what backends call their family files) and ops. */
typedef struct vt_op_family {
    const char *name;
    const vt_op_def *ops;
    uint32_t n_ops;
    void (*build)(void); /* fills the family's signature tables, once; NULL if none */
} vt_op_family;

/* The families (vt_ops_<family>, one per VT_OP_FAMILIES entry). */
#define VT_OPS_FAMILY_DECLARE(unused, family) extern const vt_op_family vt_ops_##family;
VT_OP_FAMILIES(VT_OPS_FAMILY_DECLARE, )
#undef VT_OPS_FAMILY_DECLARE

/* The definition of an op id, or NULL when it is not in the catalogue. */
const vt_op_def *vt_op_def_get(uint32_t op);

/* The one signature (f32) of the ops that take only f32. */
extern vt_sig vt_op_sig_f32[1];

/* ---- writing a family's catalogue entries ---- */

#define VT_N(a)      (uint32_t)(sizeof(a) / sizeof((a)[0]))
#define OPT          VT_OPERAND_OPTIONAL
#define INOUT        VT_OPERAND_INOUT
#define OPS(i, o)    VT_N(i), VT_N(o), i, o
#define PARAMS(t, p) (uint32_t)sizeof(t), VT_N(p), p
#define NOPARAMS     0, 0, NULL

/* One field of a params struct (vt_param_info). */
#define VT_PARAM_FIELD(type, field, kind, doc)                                                                         \
    {                                                                                                                  \
#field, kind, (uint32_t)offsetof(type, field), doc                                                             \
    }

/* How many block formats (VT_Q_FORMATS), as a constant expression. */
#define VT_ONE_(id, f) +1
#define VT_N_Q         (0 VT_Q_FORMATS(VT_ONE_))

/* The float types f32, f16, bf16, in the catalogue's order. */
static const vt_dtype vt_float_types[3] = {VT_F32, VT_F16, VT_BF16};

/* A signature of two dtypes. */
static inline vt_sig vt_sig2(vt_dtype a, vt_dtype b)
{
    vt_dtype d[2] = {a, b};
    return vt_sig_make(2, d);
}

#endif
