/* op_rules.h - the building blocks of the op families' operand rules and
 * output shapes (internal to libvt, op_family.h): the call being checked,
 * its operands by index and name, the common requirements (dtype, dims,
 * shape, whole blocks), and the shapes under construction. */
#ifndef VT_OP_RULES_H
#define VT_OP_RULES_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "op_check.h"

/* ---- operand rules ---- */

/* The call being checked and where its reason goes. */
typedef struct chk {
    const vt_op_args *a;
    const vt_op_info *info;
    char *why;
    size_t size;
} chk;

static inline vt_status fail(chk *c, vt_status st, const char *fmt, ...) VT_PRINTF(3, 4);
static inline vt_status fail(chk *c, vt_status st, const char *fmt, ...)
{
    int n = snprintf(c->why, c->size, "%s (%u): ", c->info->name, c->info->op);
    if (n < 0 || (size_t)n >= c->size)
        return st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why + n, c->size - (size_t)n, fmt, ap);
    va_end(ap);
    return st;
}

static inline const char *shape_str(const vt_operand *o, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "[");
    for (uint32_t i = 0; i < o->ndim && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? "," : "", (long long)o->shape[i]);
    if (used < size)
        snprintf(buf + used, size - used, "]");
    return buf;
}

/* Operand accessors: inputs by index, outputs by index. */
static inline const vt_operand *in(chk *c, uint32_t i)
{
    return &c->a->in[i];
}
static inline const vt_operand *out(chk *c, uint32_t i)
{
    return &c->a->out[i];
}
static inline bool has_in(chk *c, uint32_t i)
{
    return i < c->a->n_in && c->a->in[i].data != NULL;
}
static inline const char *in_name(chk *c, uint32_t i)
{
    return c->info->in[i].name;
}
static inline const char *out_name(chk *c, uint32_t i)
{
    return c->info->out[i].name;
}

/* An operand reference for the rule helpers: which list, which index. */
typedef struct ref {
    const vt_operand *o;
    const char *name;
} ref;
static inline ref I(chk *c, uint32_t i)
{
    return (ref){in(c, i), in_name(c, i)};
}
static inline ref O(chk *c, uint32_t i)
{
    return (ref){out(c, i), out_name(c, i)};
}

static inline vt_status need_dtype(chk *c, ref r, vt_dtype t)
{
    if (r.o->dtype != (uint32_t)t)
        return fail(c, VT_E_SHAPE, "%s must be %s, got %s", r.name, vt_dtype_name(t), vt_dtype_name(r.o->dtype));
    return VT_OK;
}

static inline vt_status need_ndim(chk *c, ref r, uint32_t lo, uint32_t hi)
{
    char b[96];
    if (r.o->ndim < lo || r.o->ndim > hi) {
        if (lo == hi)
            return fail(c, VT_E_SHAPE, "%s must have %u dims, got %s", r.name, lo, shape_str(r.o, b, sizeof b));
        return fail(c, VT_E_SHAPE, "%s must have %u..%u dims, got %s", r.name, lo, hi, shape_str(r.o, b, sizeof b));
    }
    return VT_OK;
}

/* dims of r must equal want[0..n) exactly (n == ndim). */
static inline vt_status need_shape(chk *c, ref r, uint32_t n, const int64_t *want)
{
    bool ok = r.o->ndim == n;
    for (uint32_t i = 0; ok && i < n; i++)
        ok = r.o->shape[i] == want[i];
    if (!ok) {
        char b1[96], b2[96];
        vt_operand w;
        memset(&w, 0, sizeof w);
        w.ndim = n;
        for (uint32_t i = 0; i < n; i++)
            w.shape[i] = want[i];
        return fail(c, VT_E_SHAPE, "%s must be %s, got %s", r.name, shape_str(&w, b1, sizeof b1),
                    shape_str(r.o, b2, sizeof b2));
    }
    return VT_OK;
}

static inline vt_status need_same_shape(chk *c, ref r, ref like)
{
    char b1[96], b2[96];
    if (r.o->ndim != like.o->ndim || memcmp(r.o->shape, like.o->shape, sizeof(int64_t) * like.o->ndim) != 0)
        return fail(c, VT_E_SHAPE, "%s %s must have the shape of %s %s", r.name, shape_str(r.o, b1, sizeof b1),
                    like.name, shape_str(like.o, b2, sizeof b2));
    return VT_OK;
}

/* r is a 1-D vector of n elements of dtype t. */
static inline vt_status need_vec(chk *c, ref r, int64_t n, vt_dtype t)
{
    vt_status st = need_dtype(c, r, t);
    return st ? st : need_shape(c, r, 1, &n);
}

#define TRY(x)                                                                                                         \
    do {                                                                                                               \
        vt_status st_ = (x);                                                                                           \
        if (st_ != VT_OK)                                                                                              \
            return st_;                                                                                                \
    } while (0)

static inline const void *params(chk *c)
{
    return c->a->params;
}

static inline vt_sig sig_of(chk *c, ref r)
{
    (void)c;
    vt_dtype d = r.o->dtype;
    return vt_sig_make(1, &d);
}

/* y = f(x), f32 in the shape of x: the unary ops of the elementwise and
 * rows families. */
static inline vt_status r_unary(chk *c, vt_sig *sig)
{
    TRY(need_ndim(c, I(c, 0), 1, VT_MAX_DIMS));
    TRY(need_dtype(c, O(c, 0), VT_F32));
    TRY(need_same_shape(c, O(c, 0), I(c, 0)));
    *sig = sig_of(c, I(c, 0));
    return VT_OK;
}

/* The innermost dim of a weight must hold whole blocks. */
static inline vt_status need_blocks(chk *c, ref w, int64_t k)
{
    const vt_dtype_info *wi = vt_dtype_get((int)w.o->dtype);
    if (!wi)
        return fail(c, VT_E_SHAPE, "%s dtype %s is unknown", w.name, vt_dtype_name((int)w.o->dtype));
    if (k % wi->block_elems != 0)
        return fail(c, VT_E_SHAPE, "k=%lld is not a multiple of the %s block (%u)", (long long)k, wi->name,
                    wi->block_elems);
    return VT_OK;
}

/* ---- output shapes ---- */

/* A call whose outputs are being derived (vt_op_output_shapes): every
 * input (data NULL: an absent optional one), the params (NULL when the
 * op has none), the dtype of an output the op leaves to the caller. */
typedef struct shp_call {
    const vt_op_info *info;
    const vt_operand *in;
    const void *params;
    vt_dtype free_dtype;
    vt_operand *out;
} shp_call;

/* A shape under construction. */
typedef struct shp {
    uint32_t n;
    int64_t d[VT_MAX_DIMS];
} shp;

static inline vt_status shp_fail(const shp_call *s, const char *fmt, ...) VT_PRINTF(2, 3);
static inline vt_status shp_fail(const shp_call *s, const char *fmt, ...)
{
    char why[VT_WHY_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return vt_set_error(VT_E_INVALID_ARG, "%s (%u): %s", s->info->name, s->info->op, why);
}

static inline shp shape_of(const vt_operand *a)
{
    shp s = {a->ndim, {0}};
    memcpy(s.d, a->shape, sizeof(int64_t) * a->ndim);
    return s;
}

static inline void put(vt_operand *o, vt_dtype t, shp s)
{
    o->dtype = (uint32_t)t;
    o->ndim = s.n;
    memset(o->shape, 0, sizeof o->shape);
    memcpy(o->shape, s.d, sizeof(int64_t) * s.n);
}

/* The shape with its innermost dim replaced by n (or dropped when n < 0). */
static inline shp last_to(const vt_operand *a, int64_t n)
{
    shp s = shape_of(a);
    if (s.n == 0)
        return s;
    if (n < 0)
        s.n--;
    else
        s.d[s.n - 1] = n;
    return s;
}

/* y: f32 in the shape of the first input (an INOUT state is left alone). */
static inline vt_status s_like_x(const shp_call *s)
{
    put(&s->out[0], VT_F32, shape_of(&s->in[0]));
    return VT_OK;
}

#endif
