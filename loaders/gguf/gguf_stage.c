/* gguf_stage.c - staging a planned GGUF model onto its device (SPEC 8),
 * as a client of libvt's public API.
 *
 * Each tensor is either used in place (a read-only vt_tensor_wrap of the
 * mapping, where the device is host memory and nothing changes form) or
 * copied into a device tensor through a pool of n_chunks chunks of host
 * memory (pinned where the backend offers it), piece by piece: raw bytes
 * for keep-quant and unchanged tensors, or converted on the host by the
 * Dequantize / Copy op on cpu:0 (resolved once per staging, one probe) for
 * expanded ones. The chunks take turns: the file read (and conversion) of
 * the next piece fills the next chunk while the asynchronous copy of the
 * last one is still in flight on the staging queue; a chunk is refilled
 * only once the event recorded after its copy has completed. Source pages
 * already read are dropped from the mapping, so resident memory stays
 * bounded by the pool whatever the model's size. Every byte range is
 * checked against the file before it is read; any failure waits for the
 * copies in flight and frees everything made so far. The library prints
 * nothing: progress goes to the caller's callback. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gguf_internal.h"
#include "gguf_load.h"

#define MAX_CHUNKS 16 /* vt_load_options_resolve's limit on n_chunks */
/* Kinds of conversion one staging can need: each type that expands (the
 * 13 block formats, f32, f16, bf16) to the expand dtype or to f32. */
#define MAX_CONVERSIONS 32

struct vt_model {
    vt_load_plan *plan; /* borrowed */
    size_t n;
    vt_tensor **tensors;
    vt_stage_stats stats;
};

/* One chunk of the pool and the copy out of it that may be in flight. */
typedef struct chunk {
    void *buf;      /* chunk_bytes of host memory from vt_device_host_alloc */
    bool pinned;    /* ... its kind */
    vt_event *done; /* recorded after the copy out of buf */
    bool busy;      /* a copy out of buf was put on the queue since the last wait */
    size_t tensor;  /* what that copy carries, for its error: tensor index ... */
    uint64_t at, n; /* ... and its byte range in the tensor */
} chunk;

/* The pool, the conversions and the progress of one staging run. */
typedef struct stager {
    vt_load_plan *plan;
    vt_device *dev;
    const vt_load_options *opt;
    vt_model *m;
    vt_queue *q; /* the copies to dev, in order */
    chunk chunks[MAX_CHUNKS];
    uint32_t n_chunks, next;
    bool pinned; /* every chunk is pinned */
    void *src;   /* the file bytes of one piece of a conversion */
    size_t src_size;
    vt_device *cpu; /* converts; NULL when nothing does */
    size_t n_conv;  /* the conversions, resolved on cpu:0 together: */
    vt_dtype conv_from[MAX_CONVERSIONS], conv_to[MAX_CONVERSIONS];
    vt_plan_op conv_op[MAX_CONVERSIONS];
    vt_resolution conv[MAX_CONVERSIONS];
    bool named; /* vt_last_error already names the tensor */
    uint64_t done, total;
} stager;

/* A tensor's name as safe text for a message (the file chose its bytes:
 * escape sequences and newlines must not reach a terminal). */
static const char *esc_name(const vt_gguf_tensor *t, char *buf, size_t size)
{
    vt_gguf_escape(t->name, t->name_len, buf, size);
    return buf;
}

/* Name tensor i in the failure st (vt_last_error holds its cause). */
static vt_status stage_error(stager *s, size_t i, vt_status st)
{
    if (s->named)
        return st;
    char en[256];
    s->named = true;
    return vt_set_error(st, "staging '%s' (tensor %zu of %zu) to %s failed: %s",
                        esc_name(s->plan->tensors[i], en, sizeof en), i + 1, s->plan->n, vt_device_id(s->dev),
                        vt_last_error());
}

/* Drop the pages of [p, p+n) of a file mapping once read. */
static void drop_pages(const vt_gguf *g, const void *p, uint64_t n)
{
    if (!g->map || n == 0)
        return;
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)p + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    uintptr_t b = ((uintptr_t)p + n) & ~((uintptr_t)page - 1);
    if (b > a)
        (void)madvise((void *)a, b - a, MADV_DONTNEED);
}

/* Wait until the copy out of c (if any) is done; its failure names its
 * tensor and bytes. */
static vt_status chunk_wait(stager *s, chunk *c)
{
    if (!c->busy)
        return VT_OK;
    c->busy = false;
    vt_status st = vt_event_synchronize(c->done);
    if (st != VT_OK) {
        vt_set_error(st, "the copy of bytes [%llu, +%llu) failed: %s", (unsigned long long)c->at,
                     (unsigned long long)c->n, vt_last_error());
        return stage_error(s, c->tensor, st);
    }
    return VT_OK;
}

/* The next chunk to fill, once the copy out of it is done. */
static vt_status chunk_take(stager *s, chunk **out)
{
    chunk *c = &s->chunks[s->next];
    s->next = (s->next + 1) % s->n_chunks;
    *out = c;
    return chunk_wait(s, c);
}

/* Copy the n bytes filled in c into tensor i of the model at byte at,
 * asynchronously on the staging queue, and report progress. */
static vt_status chunk_put(stager *s, chunk *c, size_t i, uint64_t at, uint64_t n)
{
    vt_tensor *t = s->m->tensors[i];
    vt_status st = vt_tensor_write_async(s->q, t, at, c->buf, (size_t)n);
    if (st == VT_OK)
        st = vt_event_record(c->done, s->q);
    if (st != VT_OK)
        return vt_set_error(st, "at byte %llu of %llu: %s", (unsigned long long)at,
                            (unsigned long long)vt_tensor_nbytes(t), vt_last_error());
    c->busy = true;
    c->tensor = i;
    c->at = at;
    c->n = n;
    s->done += n;
    if (s->opt->progress)
        s->opt->progress(s->opt->progress_user, s->done, s->total, s->plan->tensors[i]->name);
    return VT_OK;
}

/* The resolved conversion from -> to (one of stager_open's). */
static const vt_resolution *conversion_of(const stager *s, vt_dtype from, vt_dtype to)
{
    for (size_t k = 0; k < s->n_conv; k++)
        if (s->conv_from[k] == from && s->conv_to[k] == to)
            return &s->conv[k];
    return NULL;
}

/* Convert n elements of src (host memory) into dst (a chunk) by op on
 * cpu:0: both wrapped as cpu:0 tensors, run with the staging's resolution. */
static vt_status host_convert(stager *s, const char *name, vt_dtype src_type, const void *src, vt_dtype dst_type,
                              void *dst, int64_t n)
{
    const vt_resolution *r = conversion_of(s, src_type, dst_type);
    if (!r) /* stager_open resolved every conversion of the plan */
        return vt_set_error(VT_E_INVALID_ARG, "expanding '%s': %s to %s was not planned", name, vt_dtype_name(src_type),
                            vt_dtype_name(dst_type));
    vt_tensor *in = NULL, *out = NULL;
    vt_status st = vt_tensor_wrap(s->cpu, src_type, 1, &n, (void *)src, true, &in);
    if (st == VT_OK)
        st = vt_tensor_wrap(s->cpu, dst_type, 1, &n, dst, false, &out);
    if (st == VT_OK) {
        const vt_tensor *ins[1] = {in};
        vt_tensor *outs[1] = {out};
        st = vt_op_run_resolved(r, ins, 1, outs, 1, NULL, 0);
    }
    vt_tensor_destroy(in);
    vt_tensor_destroy(out);
    if (st != VT_OK)
        return vt_set_error(st, "expanding '%s' from %s to %s failed: %s", name, vt_dtype_name(src_type),
                            vt_dtype_name(dst_type), vt_last_error());
    return VT_OK;
}

/* Copy tensor i of the plan into the model's tensor through the pool. */
static vt_status copy_tensor(stager *s, size_t i)
{
    const vt_gguf_tensor *gt = s->plan->tensors[i];
    const vt_weight_plan *d = &s->plan->decisions[i];
    const vt_dtype_info *src_info = vt_dtype_get(gt->type), *dst_info = vt_dtype_get(d->resident_dtype);
    const uint8_t *src = gt->data;
    uint64_t size = s->opt->chunk_bytes;
    char en[256];
    esc_name(gt, en, sizeof en);
    if (d->resident_dtype == gt->type) {
        for (uint64_t off = 0; off < gt->n_bytes; off += size) {
            uint64_t n = gt->n_bytes - off < size ? gt->n_bytes - off : size;
            chunk *c;
            vt_status st = chunk_take(s, &c);
            if (st == VT_OK)
                st = gguf_read_tensor(s->plan->g, gt, off, c->buf, (size_t)n);
            if (st == VT_OK)
                drop_pages(s->plan->g, src + off, n);
            if (st == VT_OK)
                st = chunk_put(s, c, i, off, n);
            if (st != VT_OK)
                return st;
        }
        return VT_OK;
    }
    /* Expand piece by piece: whole blocks in, resident elements out. */
    int64_t blk = src_info->block_elems, total = gt->n_elements;
    if (total == 0)
        return VT_OK; /* nothing to read or convert */
    int64_t per = (int64_t)(size / dst_info->block_bytes) / blk * blk;
    if (per < blk)
        per = blk;
    size_t src_need = (size_t)(per / blk) * src_info->block_bytes;
    if (s->src_size < src_need) {
        void *p = realloc(s->src, src_need);
        if (!p)
            return vt_set_error(VT_E_NO_MEMORY, "no host memory for %zu bytes of '%s'", src_need, en);
        s->src = p;
        s->src_size = src_need;
    }
    for (int64_t e0 = 0; e0 < total; e0 += per) {
        int64_t n = total - e0 < per ? total - e0 : per;
        uint64_t soff = (uint64_t)(e0 / blk) * src_info->block_bytes,
                 sbytes = (uint64_t)(n / blk) * src_info->block_bytes;
        chunk *c;
        vt_status st = chunk_take(s, &c);
        if (st == VT_OK)
            st = gguf_read_tensor(s->plan->g, gt, soff, s->src, (size_t)sbytes);
        if (st == VT_OK) {
            drop_pages(s->plan->g, src + soff, sbytes);
            st = host_convert(s, en, gt->type, s->src, d->resident_dtype, c->buf, n);
        }
        if (st == VT_OK)
            st = chunk_put(s, c, i, (uint64_t)e0 * dst_info->block_bytes, (uint64_t)n * dst_info->block_bytes);
        if (st != VT_OK)
            return st;
    }
    return VT_OK;
}

/* Resolve every conversion the plan's copies need on cpu:0, in one plan
 * (one probe of cpu:0); the chunks then run them with no lookup. */
static vt_status resolve_conversions(stager *s)
{
    for (size_t i = 0; i < s->plan->n; i++) {
        const vt_gguf_tensor *gt = s->plan->tensors[i];
        const vt_weight_plan *d = &s->plan->decisions[i];
        vt_dtype to = d->resident_dtype;
        if (d->in_place || to == gt->type || conversion_of(s, gt->type, to))
            continue;
        if (s->n_conv == MAX_CONVERSIONS)
            return vt_set_error(VT_E_INVALID_ARG, "staging: more than %d kinds of conversion", MAX_CONVERSIONS);
        size_t k = s->n_conv++;
        s->conv_from[k] = gt->type;
        s->conv_to[k] = to;
        vt_dtype sig[2] = {gt->type, to};
        s->conv_op[k].op = vt_dtype_get(gt->type)->quantized ? VT_OP_DEQUANTIZE : VT_OP_COPY;
        s->conv_op[k].sig = vt_sig_make(2, sig);
    }
    if (!s->n_conv)
        return VT_OK;
    if (vt_registry_find_device(vt_device_registry(s->dev), "cpu:0", &s->cpu) != VT_OK)
        return vt_set_error(VT_E_UNSUPPORTED, "expanding %s to %s on the host needs the cpu backend (cpu:0): %s",
                            vt_dtype_name(s->conv_from[0]), vt_dtype_name(s->conv_to[0]), vt_last_error());
    size_t refused = 0;
    vt_status st = vt_resolve_plan(s->cpu, s->conv_op, s->n_conv, 0, s->conv, &refused);
    if (st != VT_OK)
        return vt_set_error(st, "expanding weights on the host: %s", vt_last_error());
    return VT_OK;
}

/* Wait for every copy in flight, then free the pool and the queue. */
static void stager_close(stager *s)
{
    vt_queue_destroy(s->q); /* waits for its work */
    for (uint32_t k = 0; k < s->n_chunks; k++) {
        vt_event_destroy(s->chunks[k].done);
        vt_device_host_free(s->dev, s->chunks[k].buf, s->chunks[k].pinned);
    }
}

/* The pool of n_chunks chunks (each pinned where the device offers it),
 * their events, the staging queue and the conversions. */
static vt_status stager_open(stager *s)
{
    s->pinned = true;
    for (uint32_t k = 0; k < s->opt->n_chunks; k++) {
        chunk *c = &s->chunks[k];
        vt_status st = vt_device_host_alloc(s->dev, s->opt->chunk_bytes, &c->buf, &c->pinned);
        if (st != VT_OK)
            return st;
        s->n_chunks = k + 1;
        s->pinned &= c->pinned;
        st = vt_event_create(s->dev, &c->done);
        if (st != VT_OK)
            return st;
    }
    vt_status st = vt_queue_create(s->dev, &s->q);
    return st != VT_OK ? st : resolve_conversions(s);
}

void vt_model_destroy(vt_model *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++)
        vt_tensor_destroy(m->tensors[i]);
    free(m->tensors);
    free(m);
}

/* Bytes the load copies onto the device for tensor i of the plan. */
static uint64_t copy_bytes(const vt_load_plan *plan, size_t i)
{
    const vt_gguf_tensor *gt = plan->tensors[i];
    const vt_weight_plan *d = &plan->decisions[i];
    if (d->in_place)
        return 0;
    return d->resident_dtype == gt->type ? gt->n_bytes
                                         : (uint64_t)gt->n_elements * vt_dtype_get(d->resident_dtype)->block_bytes;
}

/* Make tensor i of the model: a view of the mapping, or a device tensor
 * filled through the pool. */
static vt_status stage_one(stager *s, size_t i)
{
    vt_load_plan *plan = s->plan;
    vt_model *m = s->m;
    const vt_gguf_tensor *gt = plan->tensors[i];
    const vt_weight_desc *desc = &plan->descs[i];
    const vt_weight_plan *d = &plan->decisions[i];
    const uint8_t *file = vt_gguf_bytes(plan->g);
    uint64_t file_size = vt_gguf_file_size(plan->g);
    char ename[256];
    /* Verify the byte range before reading a byte of it. */
    if (gt->file_offset > file_size || gt->n_bytes > file_size - gt->file_offset ||
        (gt->n_bytes && gt->data != file + gt->file_offset)) {
        s->named = true;
        return vt_set_error(VT_E_BAD_FILE, "staging '%s': bytes [%llu, +%llu) are not inside the file (%llu bytes)",
                            esc_name(gt, ename, sizeof ename), (unsigned long long)gt->file_offset,
                            (unsigned long long)gt->n_bytes, (unsigned long long)file_size);
    }
    if (d->in_place) {
        vt_status st =
            vt_tensor_wrap(plan->dev, gt->type, desc->ndim, desc->shape, (void *)gt->data, true, &m->tensors[i]);
        if (st == VT_OK) {
            m->stats.tensors_in_place++;
            m->stats.bytes_in_place += gt->n_bytes;
        }
        return st;
    }
    vt_status st = vt_tensor_create(plan->dev, d->resident_dtype, desc->ndim, desc->shape, &m->tensors[i]);
    if (st != VT_OK)
        return st;
    uint64_t before = s->done;
    st = copy_tensor(s, i);
    m->stats.bytes_copied += s->done - before;
    m->stats.tensors_copied++;
    m->stats.tensors_expanded += d->resident_dtype != gt->type;
    return st;
}

vt_status vt_model_stage(vt_load_plan *plan, const vt_load_options *options, vt_model **out)
{
    if (!out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_model_stage: out is NULL");
    *out = NULL;
    if (!plan)
        return vt_set_error(VT_E_INVALID_ARG, "vt_model_stage: plan is NULL");
    if (plan->verdict != VT_OK) /* refused again, before any allocation */
        return vt_set_error(plan->verdict, "%s", plan->message);
    vt_load_options opt;
    vt_status st = vt_load_options_resolve(options ? options : &plan->options, &opt);
    if (st != VT_OK)
        return st;
    /* The plan decided, from the device's staging decisions, which tensors
     * are used in place and fit-checked the rest: staging follows it
     * exactly, so what it allocates is what was checked. */
    if ((opt.flags & VT_LOAD_NO_ZERO_COPY) && plan->report.n_in_place)
        return vt_set_error(VT_E_INVALID_ARG,
                            "vt_model_stage: VT_LOAD_NO_ZERO_COPY, but the plan uses %u tensors in place and was "
                            "fit-checked without them: make the plan with VT_LOAD_NO_ZERO_COPY",
                            plan->report.n_in_place);

    vt_model *m = calloc(1, sizeof *m);
    if (!m || !(m->tensors = calloc(plan->n ? plan->n : 1, sizeof *m->tensors))) {
        free(m);
        return vt_set_error(VT_E_NO_MEMORY, "vt_model_stage: out of host memory");
    }
    m->plan = plan;
    m->n = plan->n;
    stager s;
    memset(&s, 0, sizeof s);
    s.plan = plan;
    s.dev = plan->dev;
    s.opt = &opt;
    s.m = m;
    for (size_t i = 0; i < plan->n; i++)
        s.total += copy_bytes(plan, i);
    if (s.total) {
        st = stager_open(&s);
        if (st != VT_OK)
            st = vt_set_error(st, "staging to %s: %s", vt_device_id(s.dev), vt_last_error());
        m->stats.pool_bytes = (uint64_t)s.n_chunks * opt.chunk_bytes;
        m->stats.pinned = s.pinned;
    }
    for (size_t i = 0; i < plan->n && st == VT_OK; i++) {
        st = stage_one(&s, i);
        if (st != VT_OK)
            st = stage_error(&s, i, st);
    }
    for (uint32_t k = 0; k < s.n_chunks && st == VT_OK; k++) /* the last copies: their errors name their tensor */
        st = chunk_wait(&s, &s.chunks[(s.next + k) % s.n_chunks]);
    if (s.total)
        stager_close(&s);
    free(s.src); /* the file-side buffer of expansions: made even for a tensor of 0 elements, which opens no pool */
    if (st != VT_OK) {
        char msg[2048];
        snprintf(msg, sizeof msg, "%s", vt_last_error());
        vt_model_destroy(m); /* frees every tensor made so far */
        return vt_set_error(st, "%s", msg);
    }
    *out = m;
    return VT_OK;
}

size_t vt_model_tensor_count(const vt_model *m)
{
    return m ? m->n : 0;
}

vt_tensor *vt_model_tensor(const vt_model *m, size_t i)
{
    return m && i < m->n ? m->tensors[i] : NULL;
}

vt_tensor *vt_model_find(const vt_model *m, const char *name)
{
    if (!m || !name)
        return NULL;
    const vt_gguf_tensor *t;
    if (vt_gguf_find_tensor(m->plan->g, name, &t) != VT_OK)
        return NULL;
    /* The plan lists tensors in file order, possibly a selection of them. */
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->plan->tensors[mid]->index < t->index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->n && m->plan->tensors[lo] == t ? m->tensors[lo] : NULL;
}

const vt_stage_stats *vt_model_stats(const vt_model *m)
{
    return m ? &m->stats : NULL;
}
