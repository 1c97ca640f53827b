/* gguf_stage.c - staging a planned GGUF model onto its device (SPEC 8).
 *
 * Each tensor is either used in place (a read-only view of the mapping,
 * where the device is host memory and nothing changes form) or copied into
 * a device tensor through a fixed pool of chunks (pinned where the backend
 * offers it), piece by piece: raw bytes for keep-quant and unchanged
 * tensors, or converted on the host by the cpu backend's Dequantize / Copy
 * kernel for expanded ones. Source pages already copied are dropped from
 * the mapping, so resident memory stays bounded by the pool whatever the
 * model's size. Every byte range is checked against the file before it is
 * read; any failure frees everything made so far. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gguf_internal.h"
#include "gguf_load.h"
#include "op_check.h"

struct vt_model {
    vt_load_plan *plan; /* borrowed */
    size_t n;
    vt_tensor **tensors;
    vt_stage_stats stats;
};

/* The chunk pool and the progress of one staging run. */
typedef struct stager {
    vt_load_plan *plan;
    vt_device *dev;
    const vt_load_options *opt;
    void *chunk;     /* one chunk is enough: copies are synchronous */
    void *src_chunk; /* the file bytes of one piece of a conversion */
    size_t src_size;
    bool pinned;
    uint64_t done, total;
    bool bar; /* draw a progress bar on stderr */
    int bar_last;
} stager;

static void progress(stager *s, const char *tensor)
{
    if (s->opt->progress)
        s->opt->progress(s->opt->progress_user, s->done, s->total, tensor);
    if (s->bar && s->total) {
        int pct = (int)(s->done * 100 / s->total);
        if (pct != s->bar_last || s->done == s->total) {
            s->bar_last = pct;
            int fill = pct * 30 / 100;
            fprintf(stderr, "\rstaging to %s [%.*s%*s] %3d%%", vt_device_id(s->dev), fill,
                    "==============================", 30 - fill, "", pct);
            if (s->done == s->total)
                fputc('\n', stderr);
            fflush(stderr);
        }
    }
}

/* A tensor's name as safe text for a message (the file chose its bytes:
 * escape sequences and newlines must not reach a terminal). */
static const char *esc_name(const vt_gguf_tensor *t, char *buf, size_t size)
{
    vt_gguf_escape(t->name, t->name_len, buf, size);
    return buf;
}

/* Drop the pages of [p, p+n) of a file mapping once copied. */
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

/* Run the cpu backend's kernel for (op, src -> dst) on host buffers. */
static vt_status host_convert(stager *s, const char *name, uint32_t op, int src_type, const void *src, int dst_type,
                              void *dst, int64_t elems, uint64_t src_bytes, uint64_t dst_bytes)
{
    vt_op_args a;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    a.op = op;
    a.n_in = 1;
    a.n_out = 1;
    a.in[0] = (vt_operand){(void *)src, (uint32_t)src_type, 1, {elems}, src_bytes};
    a.out[0] = (vt_operand){dst, (uint32_t)dst_type, 1, {elems}, dst_bytes};
    char why[VT_WHY_SIZE] = "";
    vt_sig sig;
    vt_status st = vt_op_check(&a, &sig, why, sizeof why);
    if (st != VT_OK)
        return vt_set_error(VT_E_UNSUPPORTED, "expanding '%s' from %s to %s: %s", name, vt_dtype_name(src_type),
                            vt_dtype_name(dst_type), why);
    vt_plugin *cpu = vt_registry_cpu(s->dev->reg);
    if (!cpu)
        return vt_set_error(VT_E_UNSUPPORTED, "expanding '%s' from %s to %s needs the cpu backend, which is not loaded",
                            name, vt_dtype_name(src_type), vt_dtype_name(dst_type));
    const vt_kernel *k = vt_kernel_find(cpu->kernels, cpu->n_kernels, op, sig);
    if (!k) {
        char sb[64];
        return vt_set_error(VT_E_UNSUPPORTED, "expanding '%s': the cpu backend has no %s %s kernel", name,
                            vt_op_name(op), vt_sig_format(sig, sb, sizeof sb));
    }
    st = k->run(cpu->ctx, 0, &a, why, sizeof why);
    if (st != VT_OK)
        return vt_set_error(st, "expanding '%s' from %s to %s failed: %s", name, vt_dtype_name(src_type),
                            vt_dtype_name(dst_type), why);
    return VT_OK;
}

/* Copy one planned tensor into t through the chunk. */
static vt_status copy_tensor(stager *s, const vt_gguf_tensor *gt, const vt_weight_plan *d, vt_tensor *t)
{
    const vt_dtype_info *src_info = vt_dtype_get(gt->type), *dst_info = vt_dtype_get(d->resident_dtype);
    const uint8_t *src = gt->data;
    uint64_t chunk = s->opt->chunk_bytes;
    char en[256];
    esc_name(gt, en, sizeof en);
    if (d->resident_dtype == gt->type) {
        for (uint64_t off = 0; off < gt->n_bytes; off += chunk) {
            uint64_t n = gt->n_bytes - off < chunk ? gt->n_bytes - off : chunk;
            vt_status st = gguf_read_tensor(s->plan->g, gt, off, s->chunk, (size_t)n);
            if (st != VT_OK)
                return st;
            st = vt_tensor_write_at(t, off, s->chunk, (size_t)n);
            if (st != VT_OK)
                return vt_set_error(st, "at byte %llu of %llu: %s", (unsigned long long)off,
                                    (unsigned long long)gt->n_bytes, vt_last_error());
            drop_pages(s->plan->g, src + off, n);
            s->done += n;
            progress(s, gt->name);
        }
        return VT_OK;
    }
    /* Expand piece by piece: whole blocks in, resident elements out. */
    uint32_t op = src_info->quantized ? VT_OP_DEQUANTIZE : VT_OP_COPY;
    int64_t blk = src_info->block_elems, total = gt->n_elements;
    int64_t per = (int64_t)(chunk / dst_info->block_bytes) / blk * blk;
    if (per < blk)
        per = blk;
    size_t src_need = (size_t)(per / blk) * src_info->block_bytes;
    if (s->src_size < src_need) {
        void *p = realloc(s->src_chunk, src_need);
        if (!p)
            return vt_set_error(VT_E_NO_MEMORY, "no host memory for %zu bytes of '%s'", src_need, en);
        s->src_chunk = p;
        s->src_size = src_need;
    }
    for (int64_t e0 = 0; e0 < total; e0 += per) {
        int64_t n = total - e0 < per ? total - e0 : per;
        uint64_t soff = (uint64_t)(e0 / blk) * src_info->block_bytes,
                 sbytes = (uint64_t)(n / blk) * src_info->block_bytes;
        uint64_t dbytes = (uint64_t)n * dst_info->block_bytes;
        vt_status st = gguf_read_tensor(s->plan->g, gt, soff, s->src_chunk, (size_t)sbytes);
        if (st == VT_OK)
            st = host_convert(s, en, op, gt->type, s->src_chunk, d->resident_dtype, s->chunk, n, sbytes, dbytes);
        if (st != VT_OK)
            return st;
        st = vt_tensor_write_at(t, (uint64_t)e0 * dst_info->block_bytes, s->chunk, (size_t)dbytes);
        if (st != VT_OK)
            return vt_set_error(st, "at element %lld of %lld: %s", (long long)e0, (long long)total, vt_last_error());
        drop_pages(s->plan->g, src + soff, sbytes);
        s->done += dbytes;
        progress(s, gt->name);
    }
    return VT_OK;
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
    stager s = {plan, plan->dev, &opt, NULL, NULL, 0, false, 0, 0, false, -1};
    s.bar = (opt.flags & VT_LOAD_PROGRESS_BAR) && isatty(2);
    const uint8_t *file = vt_gguf_bytes(plan->g);
    uint64_t file_size = vt_gguf_file_size(plan->g);
    bool need_pool = false;
    for (size_t i = 0; i < plan->n; i++) {
        const vt_gguf_tensor *gt = plan->tensors[i];
        const vt_weight_plan *d = &plan->decisions[i];
        if (!d->in_place) {
            uint64_t bytes = d->resident_dtype == gt->type
                                 ? gt->n_bytes
                                 : (uint64_t)gt->n_elements * vt_dtype_get(d->resident_dtype)->block_bytes;
            need_pool |= bytes > 0;
            s.total += bytes;
        }
    }
    if (need_pool) {
        st = vt_device_host_alloc(plan->dev, opt.chunk_bytes, &s.chunk, &s.pinned);
        if (st != VT_OK) {
            free(m->tensors);
            free(m);
            return st;
        }
        m->stats.pool_bytes = opt.chunk_bytes;
        m->stats.pinned = s.pinned;
    }
    char ename[256];
    for (size_t i = 0; i < plan->n && st == VT_OK; i++) {
        const vt_gguf_tensor *gt = plan->tensors[i];
        const vt_weight_desc *desc = &plan->descs[i];
        const vt_weight_plan *d = &plan->decisions[i];
        /* Verify the byte range before reading a byte of it. */
        if (gt->file_offset > file_size || gt->n_bytes > file_size - gt->file_offset ||
            (gt->n_bytes && gt->data != file + gt->file_offset)) {
            st = vt_set_error(VT_E_BAD_FILE, "staging '%s': bytes [%llu, +%llu) are not inside the file (%llu bytes)",
                              esc_name(gt, ename, sizeof ename), (unsigned long long)gt->file_offset,
                              (unsigned long long)gt->n_bytes, (unsigned long long)file_size);
            break;
        }
        if (d->in_place) {
            st = vt_tensor_wrap(plan->dev, gt->type, desc->ndim, desc->shape, (void *)gt->data, true, &m->tensors[i]);
            m->stats.tensors_in_place += st == VT_OK;
            m->stats.bytes_in_place += st == VT_OK ? gt->n_bytes : 0;
            continue;
        }
        st = vt_tensor_create(plan->dev, d->resident_dtype, desc->ndim, desc->shape, &m->tensors[i]);
        if (st == VT_OK) {
            uint64_t before = s.done;
            st = copy_tensor(&s, gt, d, m->tensors[i]);
            m->stats.bytes_copied += s.done - before;
            m->stats.tensors_copied++;
            m->stats.tensors_expanded += d->resident_dtype != gt->type;
        }
        if (st != VT_OK)
            st =
                vt_set_error(st, "staging '%s' (tensor %zu of %zu) to %s failed: %s", esc_name(gt, ename, sizeof ename),
                             i + 1, plan->n, vt_device_id(plan->dev), vt_last_error());
    }
    m->n = plan->n;
    if (s.chunk)
        vt_device_host_free(plan->dev, s.chunk, s.pinned);
    free(s.src_chunk);
    if (s.bar && s.done != s.total)
        fputc('\n', stderr);
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
    return t->index < m->n ? m->tensors[t->index] : NULL;
}

const vt_stage_stats *vt_model_stats(const vt_model *m)
{
    return m ? &m->stats : NULL;
}
