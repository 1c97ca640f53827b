/* op_check.c - checking a call against the op catalogue before any tier
 * is chosen: the rules every op shares (operand counts, required operands,
 * the params struct, no output overlapping another operand), then the op's
 * own rules (its family's file, core/ops/) and the call's kernel
 * signature. After these rules pass, a kernel may trust every shape; only
 * data-dependent values (indices, slots) remain for the kernel to check. */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ops/op_family.h"

int64_t vt_operand_elems(const vt_operand *o)
{
    int64_t n = 1;
    for (uint32_t i = 0; i < o->ndim; i++)
        n *= o->shape[i];
    return n;
}

bool vt_op_outputs_empty(const vt_op_args *args)
{
    for (uint32_t i = 0; i < args->n_out; i++)
        if (vt_operand_elems(&args->out[i]) != 0)
            return false;
    return args->n_out > 0;
}

/* Counts, presence of required operands, dims and the params struct. */
static vt_status check_frame(chk *c)
{
    const vt_op_args *a = c->a;
    const vt_op_info *info = c->info;
    uint32_t required = 0;
    for (uint32_t i = 0; i < info->n_in; i++)
        if (!(info->in[i].flags & VT_OPERAND_OPTIONAL))
            required = i + 1;
    if (a->n_in < required || a->n_in > info->n_in)
        return fail(c, VT_E_INVALID_ARG, "takes %u..%u inputs, got %u", required, info->n_in, a->n_in);
    if (a->n_out != info->n_out)
        return fail(c, VT_E_INVALID_ARG, "takes %u outputs, got %u", info->n_out, a->n_out);
    for (uint32_t i = 0; i < a->n_in; i++) {
        if (!a->in[i].data && !(info->in[i].flags & VT_OPERAND_OPTIONAL))
            return fail(c, VT_E_INVALID_ARG, "input %u (%s) is required", i, info->in[i].name);
        if (a->in[i].data && a->in[i].ndim > VT_MAX_DIMS)
            return fail(c, VT_E_SHAPE, "input %s has %u dims", info->in[i].name, a->in[i].ndim);
    }
    for (uint32_t i = 0; i < a->n_out; i++)
        if (!a->out[i].data)
            return fail(c, VT_E_INVALID_ARG, "output %u (%s) is required", i, info->out[i].name);
    if (info->params_size) {
        if (!a->params || a->params_size != info->params_size)
            return fail(c, VT_E_INVALID_ARG, "needs its params struct (%u bytes), got %s of %zu bytes",
                        info->params_size, a->params ? "a pointer" : "NULL", a->params_size);
    } else if (a->params || a->params_size) {
        return fail(c, VT_E_INVALID_ARG, "takes no params, got %zu bytes", a->params_size);
    }
    return VT_OK;
}

/* True when bytes [xo, xo + x.nbytes) and [yo, yo + y.nbytes) of one
 * buffer overlap (a tensor and its views share the buffer, at offsets;
 * distinct buffers never overlap; empty operands overlap nothing). */
static bool overlaps(const vt_operand *x, uint64_t xo, const vt_operand *y, uint64_t yo)
{
    if (!x->data || x->data != y->data || !x->nbytes || !y->nbytes)
        return false;
    return xo < yo ? yo - xo < x->nbytes : xo - yo < y->nbytes;
}

/* The byte offset of an operand inside its buffer (0 for a v1 args). */
static uint64_t in_off(chk *c, uint32_t i)
{
    return c->a->struct_size >= sizeof(vt_op_args) ? c->a->in_offset[i] : 0;
}
static uint64_t out_off(chk *c, uint32_t i)
{
    return c->a->struct_size >= sizeof(vt_op_args) ? c->a->out_offset[i] : 0;
}

/* Ops marked VT_OPDEF_IN_PLACE (elementwise: element i is read before it
 * is written) may write an output that is exactly one of their inputs. */
static bool in_place_ok(chk *c, uint32_t j, uint32_t i)
{
    const vt_op_def *d = vt_op_def_get(c->a->op);
    if (!d || !(d->flags & VT_OPDEF_IN_PLACE))
        return false;
    return out_off(c, j) == in_off(c, i) && out(c, j)->nbytes == in(c, i)->nbytes;
}

/* An output shares no byte with an input or another output: a kernel reads
 * its inputs while it writes, so an aliased output (GetRows writing over
 * its table) gives a wrong result. In-out states are outputs only. */
static vt_status check_overlap(chk *c)
{
    for (uint32_t j = 0; j < c->a->n_out; j++) {
        for (uint32_t i = 0; i < c->a->n_in; i++)
            if (overlaps(out(c, j), out_off(c, j), in(c, i), in_off(c, i)) && !in_place_ok(c, j, i))
                return fail(c, VT_E_INVALID_ARG, "output %s overlaps input %s: give it its own tensor", out_name(c, j),
                            in_name(c, i));
        for (uint32_t k = 0; k < j; k++)
            if (overlaps(out(c, j), out_off(c, j), out(c, k), out_off(c, k)))
                return fail(c, VT_E_INVALID_ARG, "output %s overlaps output %s: give it its own tensor", out_name(c, j),
                            out_name(c, k));
    }
    return VT_OK;
}

vt_status vt_op_check_args(const vt_op_args *args)
{
    if (!args)
        return vt_set_error(VT_E_INVALID_ARG, "vt_op_check_args: args is NULL");
    char why[VT_WHY_SIZE] = "";
    vt_sig sig;
    vt_status st = vt_op_check(args, &sig, why, sizeof why);
    return st == VT_OK ? VT_OK : vt_set_error(st, "%s", why);
}

vt_status vt_op_check(const vt_op_args *a, vt_sig *sig, char *why, size_t n)
{
    const vt_op_def *def = vt_op_def_get(a->op);
    if (!def)
        return vt_why(VT_E_NOT_FOUND, why, n, "op id %u is not in the catalogue", a->op);
    chk c = {a, &def->info, why, n};
    TRY(check_frame(&c));
    TRY(def->check(&c, sig));
    TRY(check_overlap(&c));
    if (!vt_op_sig_in_catalog(a->op, *sig)) {
        char b[128];
        return fail(&c, VT_E_SHAPE, "signature %s (%s) is not in the catalogue", vt_sig_format(*sig, b, sizeof b),
                    def->info.sig_operands);
    }
    return VT_OK;
}
