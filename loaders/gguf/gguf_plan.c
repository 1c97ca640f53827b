/* gguf_plan.c - the load plan of a GGUF file on a device (SPEC 6, 8):
 * every tensor's op class (the caller's, else from its llama.cpp name),
 * residency, resident bytes and whether it is used in place, the run
 * estimate, and the fit verdict. Nothing is allocated on
 * the device. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gguf_load.h"

#define DEFAULT_CHUNK  (64ull << 20)
#define DEFAULT_CHUNKS 2

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

uint32_t vt_gguf_op_class(const char *name, uint32_t n_dims)
{
    if (!name || n_dims <= 1)
        return VT_OP_CLASS_NONE;
    if (!strcmp(name, "token_embd.weight") || ends_with(name, ".token_embd.weight") ||
        ends_with(name, "_token_embd.weight"))
        return VT_OP_CLASS_GATHER;
    if (strstr(name, "_exps."))
        return VT_OP_CLASS_MOE_EXPERT;
    if (strstr(name, "ssm_conv1d")) /* depthwise conv taps, used by the f32 conv ops */
        return VT_OP_CLASS_NONE;
    return VT_OP_CLASS_MATMUL;
}

vt_status vt_load_options_resolve(const vt_load_options *in, vt_load_options *out)
{
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    if (in) {
        if (in->struct_size < sizeof(uint32_t) || in->struct_size > sizeof *out)
            return vt_set_error(VT_E_INVALID_ARG, "vt_load_options.struct_size %u (this libvt knows %zu)",
                                in->struct_size, sizeof *out);
        memcpy(out, in, in->struct_size);
    }
    if (!out->chunk_bytes)
        out->chunk_bytes = DEFAULT_CHUNK;
    if (!out->n_chunks)
        out->n_chunks = DEFAULT_CHUNKS;
    if (out->chunk_bytes < 4096 || out->chunk_bytes > (1ull << 32))
        return vt_set_error(VT_E_INVALID_ARG, "staging chunk of %llu bytes: use 4 KiB .. 4 GiB",
                            (unsigned long long)out->chunk_bytes);
    if (out->n_chunks > 16)
        return vt_set_error(VT_E_INVALID_ARG, "%u staging chunks: at most 16", out->n_chunks);
    if (!out->batch)
        out->batch = 1;
    return VT_OK;
}

void vt_load_plan_destroy(vt_load_plan *p)
{
    if (!p)
        return;
    free(p->tensors);
    free(p->descs);
    free(p->decisions);
    free(p->message);
    free(p);
}

/* Apply the caller's per-tensor op classes over the name-derived ones.
 * Each entry must name a tensor of the file, once. */
static vt_status apply_classes(vt_load_plan *p)
{
    const vt_load_options *o = &p->options;
    if (o->n_classes && !o->classes)
        return vt_set_error(VT_E_INVALID_ARG, "vt_load_options: n_classes %zu with classes NULL", o->n_classes);
    for (size_t c = 0; c < o->n_classes; c++) {
        const vt_tensor_class *tc = &o->classes[c];
        if (!tc->name)
            return vt_set_error(VT_E_INVALID_ARG, "vt_load_options.classes[%zu]: name is NULL", c);
        if (tc->op_class >= VT_OP_CLASS_COUNT && tc->op_class != VT_OP_CLASS_NONE)
            return vt_set_error(VT_E_INVALID_ARG, "vt_load_options.classes[%zu] '%s': op class %u is not a vt_op_class",
                                c, tc->name, tc->op_class);
        for (size_t e = 0; e < c; e++)
            if (!strcmp(o->classes[e].name, tc->name))
                return vt_set_error(VT_E_INVALID_ARG, "vt_load_options.classes[%zu] '%s': named again (entry %zu)", c,
                                    tc->name, e);
        const vt_gguf_tensor *t;
        if (vt_gguf_find_tensor(p->g, tc->name, &t) != VT_OK)
            return vt_set_error(VT_E_NOT_FOUND, "vt_load_options.classes[%zu]: %s has no tensor '%s'", c,
                                vt_gguf_name(p->g), tc->name);
        for (size_t i = 0; i < p->n; i++) /* a tensor select left out has no entry */
            if (p->tensors[i] == t)
                p->descs[i].op_class = tc->op_class;
    }
    return VT_OK;
}

vt_status vt_load_plan_create(vt_gguf *g, vt_device *dev, const vt_load_options *options, vt_load_plan **out)
{
    if (!out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_load_plan_create: out is NULL");
    *out = NULL;
    if (!g || !dev)
        return vt_set_error(VT_E_INVALID_ARG, "vt_load_plan_create: NULL file or device");
    vt_load_plan *p = calloc(1, sizeof *p);
    if (!p)
        return vt_set_error(VT_E_NO_MEMORY, "vt_load_plan_create: out of host memory");
    vt_status st = vt_load_options_resolve(options, &p->options);
    if (st != VT_OK) {
        free(p);
        return st;
    }
    p->g = g;
    p->dev = dev;
    size_t n = vt_gguf_tensor_count(g) ? vt_gguf_tensor_count(g) : 1;
    p->tensors = calloc(n, sizeof *p->tensors);
    p->descs = calloc(n, sizeof *p->descs);
    p->decisions = calloc(n, sizeof *p->decisions);
    if (!p->tensors || !p->descs || !p->decisions) {
        vt_load_plan_destroy(p);
        return vt_set_error(VT_E_NO_MEMORY, "vt_load_plan_create: out of host memory for %zu tensors", p->n);
    }
    for (size_t f = 0; f < vt_gguf_tensor_count(g); f++) {
        const vt_gguf_tensor *t = vt_gguf_tensor_at(g, f);
        if (p->options.select && !p->options.select(p->options.select_user, t->name))
            continue;
        size_t i = p->n++;
        p->tensors[i] = t;
        /* general.alignment may be below a type's (1 or 2): such a tensor is
         * copied, never used in place, and so is the rest of the file */
        const uint32_t align = vt_dtype_alignment(t->type);
        if (t->n_bytes && align > 1 && (uintptr_t)t->data % align != 0)
            p->misaligned++;
        vt_weight_desc *d = &p->descs[i];
        d->name = t->name;
        d->dtype = t->type;
        d->op_class = vt_gguf_op_class(t->name, t->n_dims);
        d->ndim = t->n_dims;
        for (uint32_t k = 0; k < t->n_dims && k < VT_MAX_DIMS; k++)
            d->shape[k] = t->shape[k];
    }
    st = apply_classes(p);
    p->options.classes = NULL; /* borrowed for planning only */
    p->options.n_classes = 0;
    p->options.select = NULL;
    p->options.select_user = NULL;
    if (st != VT_OK) {
        vt_load_plan_destroy(p);
        return st;
    }
    st = vt_gguf_run_estimate(g, p->options.ctx, p->options.batch, &p->run);
    if (st != VT_OK) {
        vt_load_plan_destroy(p);
        return st;
    }
    vt_fit_options fo;
    memset(&fo, 0, sizeof fo);
    fo.struct_size = sizeof fo;
    fo.expand = p->options.expand;
    fo.budget_bytes = p->options.budget_bytes;
    fo.budget_origin = p->options.budget_origin;
    fo.run_bytes = p->run.total;
    fo.model = vt_gguf_name(g);
    fo.flags = (p->options.flags & VT_LOAD_NO_ZERO_COPY) || p->misaligned ? VT_FIT_NO_IN_PLACE : 0;
    st = vt_fit_plan(dev, p->descs, p->n, &fo, p->decisions, &p->report);
    if (st != VT_OK && st != VT_E_DOES_NOT_FIT) {
        vt_load_plan_destroy(p);
        return st;
    }
    p->verdict = st;
    p->message = strdup(st == VT_OK ? "" : vt_last_error());
    if (!p->message) {
        vt_load_plan_destroy(p);
        return vt_set_error(VT_E_NO_MEMORY, "vt_load_plan_create: out of host memory");
    }
    *out = p;
    if (st != VT_OK)
        vt_set_error(st, "%s", p->message);
    return st;
}

size_t vt_load_plan_count(const vt_load_plan *p)
{
    return p ? p->n : 0;
}

vt_status vt_load_plan_entry(const vt_load_plan *p, size_t i, const vt_gguf_tensor **tensor,
                             const vt_weight_desc **desc, const vt_weight_plan **decision)
{
    if (!p || i >= p->n)
        return vt_set_error(VT_E_NOT_FOUND, "load plan entry %zu out of range", i);
    if (tensor)
        *tensor = p->tensors[i];
    if (desc)
        *desc = &p->descs[i];
    if (decision)
        *decision = &p->decisions[i];
    return VT_OK;
}

const vt_fit_report *vt_load_plan_report(const vt_load_plan *p)
{
    return p ? &p->report : NULL;
}

const vt_run_estimate *vt_load_plan_run(const vt_load_plan *p)
{
    return p ? &p->run : NULL;
}

vt_status vt_load_plan_verdict(const vt_load_plan *p, const char **message)
{
    if (!p)
        return vt_set_error(VT_E_INVALID_ARG, "vt_load_plan_verdict: NULL plan");
    if (message)
        *message = p->message;
    return p->verdict;
}
