/* cpu_op_dequantize.c - Dequantize (41): every block of a q tensor decoded
 * exactly to f32 (GGUF's reference definitions, cpu_quant.h), stored as
 * f32 or rounded to nearest even f16/bf16. Parallel over blocks; each
 * element is written by one thread with one decode, so any thread count
 * gives the same bytes. */
#include "config.h"

#include "cpu_dot.h"
#include "cpu_ops.h"
#include "cpu_quant.h"

typedef struct dq_job {
    const vt_cpu_isa *isa;
    uint32_t wtype, dst_type, block_bytes, groups;
    size_t dst_block_bytes; /* bytes of one decoded block in dst */
    const uint8_t *src;
    uint8_t *dst;
} dq_job;

static void dq_range(void *arg, int64_t b0, int64_t b1)
{
    const dq_job *j = arg;
    j->isa->decode(j->wtype, j->block_bytes, j->groups, j->src + (size_t)b0 * j->block_bytes, b1 - b0,
                   j->dst + (size_t)b0 * j->dst_block_bytes, j->dst_type);
}

vt_status vt_cpu_dequantize(vt_backend_ctx *ctx, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    (void)dev;
    (void)why;
    (void)why_size;
    const vt_operand *src = &a->in[0], *dst = &a->out[0];
    const vt_dtype_info *si = vt_dtype_get(src->dtype), *di = vt_dtype_get(dst->dtype);
    dq_job j = {
        .isa = ctx->isa,
        .wtype = src->dtype,
        .dst_type = dst->dtype,
        .block_bytes = si->block_bytes,
        .groups = si->block_elems / VT_CPU_GROUP,
        .dst_block_bytes = (size_t)si->block_elems * di->block_bytes,
        .src = src->data,
        .dst = dst->data,
    };
    int64_t nblocks = vt_cpu_elems(src) / si->block_elems;
    /* about 16k elements per thread before splitting pays */
    vt_cpu_parallel(ctx->pool, nblocks, 16384 / si->block_elems, dq_range, &j);
    return VT_OK;
}
