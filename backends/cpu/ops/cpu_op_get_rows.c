/* cpu_op_get_rows.c - GetRows (40): dst[i] = table[idx[i]] for a table of
 * f32/f16/bf16 or a q block format, decoded to f32 or f16 (exact decode,
 * then round to nearest even). Every index is checked before any row is
 * written; rows are spread over the pool, one thread per row. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cpu_dot.h"
#include "cpu_ops.h"
#include "cpu_quant.h"

typedef struct gr_job {
    const vt_cpu_isa *isa;
    const vt_operand *table, *dst;
    const int32_t *idx;
    int64_t n;               /* elements per row */
    size_t row_bytes;        /* bytes of a table row */
    size_t dst_row_bytes;    /* bytes of a dst row */
    const vt_dtype_info *ti; /* table dtype */
} gr_job;

static void gr_range(void *arg, int64_t i0, int64_t i1)
{
    const gr_job *j = arg;
    const uint32_t tt = j->table->dtype, dt = j->dst->dtype;
    for (int64_t i = i0; i < i1; i++) {
        const uint8_t *row = (const uint8_t *)j->table->data + (size_t)j->idx[i] * j->row_bytes;
        uint8_t *out = (uint8_t *)j->dst->data + (size_t)i * j->dst_row_bytes;
        if (j->ti->quantized) {
            j->isa->decode(tt, j->ti->block_bytes, j->ti->block_elems / VT_CPU_GROUP, row, j->n / j->ti->block_elems,
                           out, dt);
        } else {
            j->isa->convert(tt, row, j->n, out, dt);
        }
    }
}

/* "idx[2,5]" for flat position p of an index tensor of the given shape. */
static void position_text(const vt_operand *idx, int64_t p, char *buf, size_t size)
{
    int64_t coord[VT_MAX_DIMS];
    for (int d = (int)idx->ndim - 1; d >= 0; d--) {
        coord[d] = idx->shape[d] ? p % idx->shape[d] : 0;
        p = idx->shape[d] ? p / idx->shape[d] : 0;
    }
    size_t used = (size_t)snprintf(buf, size, "idx[");
    for (uint32_t d = 0; d < idx->ndim && used < size; d++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", d ? "," : "", (long long)coord[d]);
    if (used < size)
        snprintf(buf + used, size - used, "]");
}

vt_status vt_cpu_get_rows(vt_backend_ctx *ctx, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    (void)dev;
    const vt_operand *table = &a->in[0], *idx = &a->in[1], *dst = &a->out[0];
    const int64_t rows = table->shape[0], n = table->shape[1], count = vt_cpu_elems(idx);
    const int32_t *ix = idx->data;
    for (int64_t p = 0; p < count; p++) {
        if (ix[p] < 0 || ix[p] >= rows) {
            char pos[96];
            position_text(idx, p, pos, sizeof pos);
            return vt_why(VT_E_INVALID_ARG, why, why_size,
                          "GetRows (40): %s (flat position %lld) = %d is outside [0, %lld) of the table's rows; "
                          "nothing was written",
                          pos, (long long)p, ix[p], (long long)rows);
        }
    }
    uint64_t row_bytes;
    if (!vt_dtype_row_bytes(table->dtype, n, &row_bytes))
        return vt_why(VT_E_SHAPE, why, why_size, "GetRows (40): table rows of %lld are not whole %s blocks",
                      (long long)n, vt_dtype_name(table->dtype));
    gr_job j = {
        .isa = ctx->isa,
        .table = table,
        .dst = dst,
        .idx = ix,
        .n = n,
        .row_bytes = (size_t)row_bytes,
        .dst_row_bytes = (size_t)n * vt_dtype_get(dst->dtype)->block_bytes,
        .ti = vt_dtype_get(table->dtype),
    };
    int64_t per_row = n > 0 ? n : 1;
    vt_cpu_parallel(ctx->pool, count, per_row >= 16384 ? 1 : 16384 / per_row, gr_range, &j);
    return VT_OK;
}
