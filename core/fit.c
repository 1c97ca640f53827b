/* fit.c - residency planning and the device-fit refusal (SPEC 6). Pure
 * arithmetic over the weight descriptors and one probe of the device:
 * nothing is allocated here. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_internal.h"

#define HEADROOM_MIN     (512ull << 20)
#define HEADROOM_PERCENT 5

/* vt_fit_budget over caps already probed (NULL: probe dev now). */
static vt_status fit_budget(vt_device *dev, const vt_device_caps *probed, uint64_t *budget, char *source,
                            size_t source_size)
{
    char dummy[8];
    if (!source) {
        source = dummy;
        source_size = sizeof dummy;
    }
    if (!dev || !budget)
        return vt_set_error(VT_E_INVALID_ARG, "vt_fit_budget: NULL argument");
    const vt_registry *reg = dev->reg; /* its budget setting was read at open */
    if (reg->weight_budget_error)
        return vt_set_error(VT_E_INVALID_ARG, "%s", reg->weight_budget_error);
    if (reg->weight_budget) {
        *budget = reg->weight_budget;
        snprintf(source, source_size, "%s", reg->weight_budget_source);
        return VT_OK;
    }
    vt_device_caps caps = {.struct_size = sizeof caps};
    if (probed)
        caps = *probed;
    else {
        vt_status st = vt_device_probe(dev, &caps);
        if (st != VT_OK)
            return st;
    }
    uint64_t headroom = caps.memory_total / 100 * HEADROOM_PERCENT;
    bool by_percent = headroom >= HEADROOM_MIN;
    if (!by_percent)
        headroom = HEADROOM_MIN;
    *budget = caps.memory_free > headroom ? caps.memory_free - headroom : 0;
    char f[32], h[32];
    snprintf(source, source_size, "probed free memory %s minus headroom %s (%s)",
             vt_format_bytes(caps.memory_free, f, sizeof f), vt_format_bytes(headroom, h, sizeof h),
             by_percent ? "5% of total" : "the 512 MiB minimum");
    return VT_OK;
}

vt_status vt_fit_budget(vt_device *dev, uint64_t *budget, char *source, size_t source_size)
{
    return fit_budget(dev, NULL, budget, source, source_size);
}

static uint32_t expand_dtype_of(uint32_t expand)
{
    return expand == VT_EXPAND_BF16 ? VT_BF16 : expand == VT_EXPAND_F32 ? VT_F32 : VT_F16;
}

/* A block format vt can expand (the catalogue's "q"). */
static bool is_q_format(uint32_t dtype)
{
    for (uint32_t i = 0; i < vt_n_q_formats; i++)
        if ((uint32_t)vt_q_formats[i] == dtype)
            return true;
    return false;
}

/* Decide one tensor. Returns VT_E_INVALID_ARG naming the tensor on a bad
 * descriptor or an overflow. */
static vt_status plan_one(const vt_weight_desc *w, size_t i, const vt_device_caps *caps, uint32_t expand_dtype,
                          vt_weight_plan *p)
{
    const char *name = w->name ? w->name : "(unnamed)";
    const vt_dtype_info *info = vt_dtype_get(w->dtype);
    memset(p, 0, sizeof *p);
    if (!info)
        return vt_set_error(VT_E_INVALID_ARG, "weight %zu '%s': dtype %s", i, name, vt_dtype_name(w->dtype));
    if (w->ndim > VT_MAX_DIMS)
        return vt_set_error(VT_E_INVALID_ARG, "weight %zu '%s': %u dims, at most %d", i, name, w->ndim, VT_MAX_DIMS);
    uint64_t n = 1;
    for (uint32_t d = 0; d < w->ndim; d++) {
        if (w->shape[d] < 0 || (w->shape[d] && n > UINT64_MAX / (uint64_t)w->shape[d]))
            return vt_set_error(VT_E_INVALID_ARG, "weight %zu '%s': shape dim %u (%lld) is negative or overflows", i,
                                name, d, (long long)w->shape[d]);
        n *= (uint64_t)w->shape[d];
    }
    if (!vt_dtype_tensor_bytes(w->dtype, w->ndim, w->shape, &p->stored_bytes))
        return vt_set_error(VT_E_INVALID_ARG, "weight %zu '%s': %s shape is not whole blocks or overflows", i, name,
                            info->name);
    uint64_t elem_bytes;
    if (w->op_class == VT_OP_CLASS_NONE) {
        p->residency = VT_RESIDENCY_EXPAND;
        p->resident_dtype = info->is_int ? w->dtype : VT_F32;
    } else if (w->op_class < VT_OP_CLASS_COUNT) {
        if (info->quantized && vt_caps_keeps_quant(caps, (int)w->op_class, w->dtype)) {
            p->residency = VT_RESIDENCY_KEEP_QUANT;
            p->resident_dtype = w->dtype;
        } else {
            p->residency = VT_RESIDENCY_EXPAND;
            p->resident_dtype = info->is_int ? w->dtype : expand_dtype;
            p->forced_expand = info->quantized;
        }
    } else {
        return vt_set_error(VT_E_INVALID_ARG, "weight %zu '%s': op class %u is not a vt_op_class", i, name,
                            w->op_class);
    }
    /* Only conversions the catalogue has (Copy between f32/f16/bf16,
     * Dequantize of a q format) can expand a tensor at load. */
    bool plain_float = w->dtype == VT_F32 || w->dtype == VT_F16 || w->dtype == VT_BF16;
    if (p->resident_dtype != w->dtype && !plain_float && !is_q_format(w->dtype))
        return vt_set_error(VT_E_UNSUPPORTED,
                            "weight %zu '%s' is %s: no native kernel on this device consumes it for %s, and vt cannot "
                            "convert it to %s at load (only f32/f16/bf16 and SPEC 7's block formats expand)",
                            i, name, info->name, vt_op_class_name((int)w->op_class), vt_dtype_name(p->resident_dtype));
    if (p->residency == VT_RESIDENCY_KEEP_QUANT) {
        p->resident_bytes = p->stored_bytes;
    } else {
        /* Expanded: every element at the resident dtype's size. */
        elem_bytes = vt_dtype_get(p->resident_dtype)->block_bytes;
        if (n > UINT64_MAX / elem_bytes)
            return vt_set_error(VT_E_INVALID_ARG, "weight %zu '%s': expanded size overflows", i, name);
        p->resident_bytes = n * elem_bytes;
    }
    uint64_t a = caps->alloc_alignment ? caps->alloc_alignment : 1;
    uint64_t padded = (p->resident_bytes + a - 1) / a * a;
    if (padded < p->resident_bytes)
        return vt_set_error(VT_E_INVALID_ARG, "weight %zu '%s': padded size overflows", i, name);
    p->resident_bytes = padded;
    return VT_OK;
}

static bool add_ok(uint64_t *sum, uint64_t v)
{
    return !__builtin_add_overflow(*sum, v, sum);
}

/* Keep the indices of the VT_FIT_LARGEST largest tensors the load
 * allocates on the device. */
static void note_largest(vt_fit_report *r, const vt_weight_plan *plans, uint32_t i)
{
    if (plans[i].in_place)
        return;
    uint32_t pos = r->n_largest;
    while (pos > 0 && plans[r->largest[pos - 1]].resident_bytes < plans[i].resident_bytes)
        pos--;
    if (pos >= VT_FIT_LARGEST)
        return;
    uint32_t last = r->n_largest < VT_FIT_LARGEST ? r->n_largest : VT_FIT_LARGEST - 1;
    for (uint32_t j = last; j > pos; j--)
        r->largest[j] = r->largest[j - 1];
    r->largest[pos] = i;
    if (r->n_largest < VT_FIT_LARGEST)
        r->n_largest++;
}

/* The refusal text of SPEC 6. */
static void refusal(vt_device *dev, const vt_device_caps *caps, const vt_weight_desc *w, const vt_weight_plan *plans,
                    size_t n_weights, const vt_fit_report *r, const char *model)
{
    char msg[6144], b[8][32];
    size_t used = 0;
#define APPEND(...)                                                                                                    \
    do {                                                                                                               \
        if (used < sizeof msg)                                                                                         \
            used += (size_t)snprintf(msg + used, sizeof msg - used, __VA_ARGS__);                                      \
    } while (0)
    APPEND("%s does not fit on %s (%s): needs %llu bytes (%s) on the device = keep-quant %s + expanded %s", model,
           vt_device_id(dev), caps->name, (unsigned long long)r->needed_bytes,
           vt_format_bytes(r->needed_bytes, b[0], 32), vt_format_bytes(r->keep_quant_bytes, b[1], 32),
           vt_format_bytes(r->expanded_bytes, b[2], 32));
    if (r->f32_bytes)
        APPEND(" + f32 %s", vt_format_bytes(r->f32_bytes, b[3], 32));
    if (r->run_bytes)
        APPEND(" + run state %s", vt_format_bytes(r->run_bytes, b[4], 32));
    if (r->in_place_bytes)
        APPEND(" - %s of %u weight%s used in place from host memory", vt_format_bytes(r->in_place_bytes, b[7], 32),
               r->n_in_place, r->n_in_place == 1 ? "" : "s");
    APPEND("; budget %llu bytes (%s) from %s", (unsigned long long)r->budget_bytes,
           vt_format_bytes(r->budget_bytes, b[5], 32), r->budget_source);
    if (r->forced_formats) {
        APPEND("; expansion to %s forced for", vt_dtype_name(r->expand_dtype));
        for (int t = 0; t < 64; t++) {
            if (!((r->forced_formats >> t) & 1u))
                continue;
            uint32_t count = 0, classes = 0;
            for (size_t i = 0; i < n_weights; i++)
                if (plans[i].forced_expand && w[i].dtype == (uint32_t)t) {
                    count++;
                    classes |= 1u << w[i].op_class;
                }
            APPEND(" %s (%u tensor%s; not admitted for", vt_dtype_name(t), count, count == 1 ? "" : "s");
            for (int c = 0; c < VT_OP_CLASS_COUNT; c++)
                if ((classes >> c) & 1u)
                    APPEND(" %s", vt_op_class_name(c));
            APPEND(")");
        }
    }
    if (r->n_largest) {
        APPEND("; largest:");
        for (uint32_t j = 0; j < r->n_largest; j++) {
            const vt_weight_plan *p = &plans[r->largest[j]];
            const vt_weight_desc *d = &w[r->largest[j]];
            APPEND("%s %s %s (%s%s%s)", j ? "," : "", d->name ? d->name : "(unnamed)",
                   vt_format_bytes(p->resident_bytes, b[6], 32), vt_dtype_name(d->dtype),
                   p->residency == VT_RESIDENCY_KEEP_QUANT ? " kept" : " -> ",
                   p->residency == VT_RESIDENCY_KEEP_QUANT ? "" : vt_dtype_name(p->resident_dtype));
        }
    }
    APPEND("; nothing was allocated");
#undef APPEND
    vt_set_error(VT_E_DOES_NOT_FIT, "%s", msg);
}

vt_status vt_fit_plan(vt_device *dev, const vt_weight_desc *weights, size_t n, const vt_fit_options *options,
                      vt_weight_plan *plans, vt_fit_report *report)
{
    if (!dev || (n && !weights) || !report)
        return vt_set_error(VT_E_INVALID_ARG, "vt_fit_plan: NULL argument");
    if (n > UINT32_MAX)
        return vt_set_error(VT_E_INVALID_ARG, "vt_fit_plan: %zu weights, at most %u", n, UINT32_MAX);
    vt_fit_options opt;
    memset(&opt, 0, sizeof opt);
    if (options) {
        if (options->struct_size < sizeof(uint32_t) || options->struct_size > sizeof opt)
            return vt_set_error(VT_E_INVALID_ARG, "vt_fit_plan: options.struct_size %u (this libvt knows %zu)",
                                options->struct_size, sizeof opt);
        memcpy(&opt, options, options->struct_size);
    }
    if (opt.expand > VT_EXPAND_F32)
        return vt_set_error(VT_E_INVALID_ARG, "vt_fit_plan: expand=%u is not VT_EXPAND_F16/BF16/F32", opt.expand);
    const char *model = opt.model ? opt.model : "model";
    memset(report, 0, sizeof *report);
    report->expand_dtype = expand_dtype_of(opt.expand);

    vt_device_caps caps = {.struct_size = sizeof caps};
    vt_status st = vt_device_probe(dev, &caps);
    if (st != VT_OK)
        return st;
    /* SPEC 4, 6: which weights the load copies onto the device is the
     * staging decision the caps derive, the one `vtctl caps` prints. */
    vt_staging_decisions staging = vt_caps_staging_decisions(&caps);
    bool in_place_ok = staging.weights_in_place && !(opt.flags & VT_FIT_NO_IN_PLACE);
    vt_weight_plan *own = NULL;
    if (!plans && n) {
        own = calloc(n, sizeof *own);
        if (!own)
            return vt_set_error(VT_E_NO_MEMORY, "vt_fit_plan: out of host memory for %zu plans", n);
        plans = own;
    }
    for (size_t i = 0; i < n; i++) {
        st = plan_one(&weights[i], i, &caps, report->expand_dtype, &plans[i]);
        if (st != VT_OK)
            goto done;
        vt_weight_plan *p = &plans[i];
        p->in_place = in_place_ok && p->resident_dtype == weights[i].dtype;
        if (p->in_place) {
            report->n_in_place++;
            report->in_place_bytes += p->resident_bytes; /* <= weight_bytes, which is overflow-checked */
        }
        uint64_t *bucket;
        if (p->residency == VT_RESIDENCY_KEEP_QUANT) {
            bucket = &report->keep_quant_bytes;
            report->n_keep_quant++;
        } else if (weights[i].op_class == VT_OP_CLASS_NONE) {
            bucket = &report->f32_bytes;
            report->n_f32++;
        } else {
            bucket = &report->expanded_bytes;
            report->n_expanded++;
        }
        if (p->forced_expand) {
            report->n_forced++;
            report->forced_formats |= (uint64_t)1 << weights[i].dtype;
        }
        if (!add_ok(bucket, p->resident_bytes) || !add_ok(&report->weight_bytes, p->resident_bytes)) {
            st = vt_set_error(VT_E_INVALID_ARG, "vt_fit_plan: total resident bytes overflow at weight %zu '%s'", i,
                              weights[i].name ? weights[i].name : "(unnamed)");
            goto done;
        }
        note_largest(report, plans, (uint32_t)i);
    }
    report->run_bytes = opt.run_bytes;
    report->needed_bytes = report->weight_bytes - report->in_place_bytes;
    if (!add_ok(&report->needed_bytes, opt.run_bytes)) {
        st = vt_set_error(VT_E_INVALID_ARG, "vt_fit_plan: weights plus run bytes overflow");
        goto done;
    }

    /* SPEC 6: the fit runs whenever the load allocates device memory. */
    report->checked = report->needed_bytes > 0;
    if (opt.budget_bytes) {
        report->budget_bytes = opt.budget_bytes;
        snprintf(report->budget_source, sizeof report->budget_source, "%s (%llu bytes)",
                 opt.budget_origin ? opt.budget_origin : "options", (unsigned long long)opt.budget_bytes);
    } else {
        st = fit_budget(dev, &caps, &report->budget_bytes, report->budget_source, sizeof report->budget_source);
        if (st != VT_OK)
            goto done;
    }
    report->fits = !report->checked || report->needed_bytes <= report->budget_bytes;
    if (!report->fits) {
        refusal(dev, &caps, weights, plans, n, report, model);
        st = VT_E_DOES_NOT_FIT;
    }
done:
    free(own);
    return st;
}
