/* op_shapes.c - libvt's output shapes over host arrays (op_shapes.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "op_shapes.h"

bool op_shapes_has_free_dtype(uint32_t op)
{
    return vt_op_output_dtype_free((vt_op)op);
}

/* A host array as an operand description: data non-NULL (never read) when
 * it is present. */
static vt_operand operand_of(const host_array *a)
{
    static const unsigned char present;
    vt_operand o;
    memset(&o, 0, sizeof o);
    o.data = a->present ? (void *)&present : NULL;
    o.dtype = (uint32_t)a->dtype;
    o.ndim = a->ndim;
    memcpy(o.shape, a->shape, sizeof o.shape);
    return o;
}

vt_status op_shapes_infer(uint32_t op, const host_array *in, uint32_t n_in, const void *params, vt_dtype free_dtype,
                          host_array *out, char *why, size_t why_size)
{
    const vt_op_info *info = vt_op_get_info(op);
    if (!info)
        return vt_why(VT_E_UNSUPPORTED, why, why_size, "op id %u is not in the catalogue", op);
    vt_operand ins[VT_MAX_INPUTS], outs[VT_MAX_OUTPUTS];
    memset(outs, 0, sizeof outs);
    for (uint32_t i = 0; i < n_in && i < VT_MAX_INPUTS; i++)
        ins[i] = operand_of(&in[i]);
    vt_status st = vt_op_output_shapes((vt_op)op, ins, n_in < VT_MAX_INPUTS ? n_in : VT_MAX_INPUTS, params,
                                       params ? info->params_size : 0, free_dtype, outs, info->n_out);
    if (st != VT_OK)
        return vt_why(st, why, why_size, "%s", vt_last_error());
    for (uint32_t i = 0; i < info->n_out; i++)
        if (!(info->out[i].flags & VT_OPERAND_INOUT))
            host_array_declare(&out[i], (vt_dtype)outs[i].dtype, outs[i].ndim, outs[i].shape);
    return VT_OK;
}
