/* op_shapes.c - the dtypes and shapes of a call's outputs (vt_tensor.h),
 * derived by the op's family (core/ops/) from the inputs and params, for
 * a caller that allocates the outputs: an engine, `vtctl op run`, the
 * conformance generators. */
#include "config.h"

#include <string.h>

#include "ops/op_family.h"

bool vt_op_output_dtype_free(vt_op op)
{
    const vt_op_def *d = vt_op_def_get((uint32_t)op);
    return d && (d->flags & VT_OPDEF_FREE_DTYPE);
}

vt_status vt_op_output_shapes(vt_op op, const vt_operand *in, uint32_t n_in, const void *params, size_t params_size,
                              vt_dtype free_dtype, vt_operand *out, uint32_t n_out)
{
    const vt_op_def *d = vt_op_def_get((uint32_t)op);
    if (!d)
        return vt_set_error(VT_E_NOT_FOUND, "vt_op_output_shapes: op id %u is not in the catalogue", (unsigned)op);
    const vt_op_info *info = &d->info;
    if ((n_in && !in) || n_in > info->n_in)
        return vt_set_error(VT_E_INVALID_ARG, "%s (%u) takes at most %u inputs, got %u%s", info->name, info->op,
                            info->n_in, n_in, n_in && !in ? " (in is NULL)" : "");
    if (!out || n_out != info->n_out)
        return vt_set_error(VT_E_INVALID_ARG, "%s (%u) has %u outputs, got room for %u", info->name, info->op,
                            info->n_out, out ? n_out : 0);
    vt_operand ins[VT_MAX_INPUTS];
    memset(ins, 0, sizeof ins);
    for (uint32_t i = 0; i < n_in; i++) {
        if (in[i].data && in[i].ndim > VT_MAX_DIMS)
            return vt_set_error(VT_E_SHAPE, "%s (%u): input %s has %u dims", info->name, info->op, info->in[i].name,
                                in[i].ndim);
        ins[i] = in[i];
    }
    for (uint32_t i = 0; i < info->n_in; i++)
        if (!(info->in[i].flags & VT_OPERAND_OPTIONAL) && !ins[i].data)
            return vt_set_error(VT_E_INVALID_ARG, "%s (%u) needs input %s (%s)", info->name, info->op, info->in[i].name,
                                info->in[i].doc);
    if (info->params_size && (!params || params_size != info->params_size))
        return vt_set_error(VT_E_INVALID_ARG, "%s (%u) needs its params (%u bytes)", info->name, info->op,
                            info->params_size);
    shp_call s = {info, ins, info->params_size ? params : NULL, free_dtype, out};
    return d->shapes(&s);
}
