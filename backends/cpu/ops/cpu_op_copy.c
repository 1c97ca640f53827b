/* cpu_op_copy.c - Copy (1): casts between f32/f16/bf16 (the SIMD path's
 * conversion, the same bits on every path) and i32 copies, split over the
 * pool in contiguous element ranges (each element is written once by one
 * thread, so the bytes do not depend on the split). */
#include "config.h"

#include <string.h>

#include "cpu_dot.h"
#include "cpu_ops.h"

typedef struct copy_job {
    const vt_operand *src, *dst;
    size_t esize; /* bytes per element when the dtypes match */
    vt_cpu_convert_fn convert;
} copy_job;

static void copy_range(void *arg, int64_t b, int64_t e)
{
    const copy_job *j = arg;
    if (j->src->dtype == j->dst->dtype) {
        memcpy((char *)j->dst->data + (size_t)b * j->esize, (const char *)j->src->data + (size_t)b * j->esize,
               (size_t)(e - b) * j->esize);
        return;
    }
    size_t ss = vt_dtype_get(j->src->dtype)->block_bytes, ds = vt_dtype_get(j->dst->dtype)->block_bytes;
    j->convert(j->src->dtype, (const char *)j->src->data + (size_t)b * ss, e - b, (char *)j->dst->data + (size_t)b * ds,
               j->dst->dtype);
}

vt_status vt_cpu_copy(vt_backend_ctx *ctx, int dev, const vt_op_args *a, char *why, size_t why_size)
{
    (void)dev;
    (void)why;
    (void)why_size;
    const vt_operand *src = &a->in[0], *dst = &a->out[0];
    int64_t n = vt_cpu_elems(src);
    if (src->dtype == dst->dtype && (char *)dst->data < (char *)src->data + src->nbytes &&
        (char *)src->data < (char *)dst->data + src->nbytes) {
        memmove(dst->data, src->data, (size_t)src->nbytes); /* overlapping: one thread, memmove order */
        return VT_OK;
    }
    copy_job j = {src, dst, vt_dtype_get(src->dtype)->block_bytes, ctx->isa->convert};
    /* about 256 KiB per thread before splitting pays */
    vt_cpu_parallel(ctx->pool, n, (int64_t)((256u << 10) / j.esize), copy_range, &j);
    return VT_OK;
}
