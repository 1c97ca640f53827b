/* cmd_fit.c - `vtctl fit FILE.gguf [--backend B[:DEV]] [--budget BYTES]
 * [--ctx N] [--batch B] [--expand f16|bf16|f32] [--json]`: the load plan of
 * a model on a device (SPEC 6): every tensor's op class, residency and
 * bytes, totals split keep-quant / expanded / f32, the formats that forced
 * expansion, the run state, the budget and its source, and the verdict.
 * Exit 1 when the model does not fit. Names from the file are escaped. */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vtctl.h"
#include "vtctl_load.h"

static void escaped(const char *s, char *buf, size_t size)
{
    vt_gguf_escape(s, strlen(s), buf, size);
}

/* The load plan as one record: JSON, or the text of `vtctl fit`. */
static void write_plan(rec_writer *w, const vt_load_plan *plan, vt_device *dev, const char *file, vt_status verdict,
                       const char *msg)
{
    const vt_fit_report *r = vt_load_plan_report(plan);
    const vt_run_estimate *run = vt_load_plan_run(plan);
    const char *id = vt_device_id(dev);
    char b[6][32], name[160];
    rec_object_begin(w, NULL, NULL);
    rec_text(w, "load plan of %s on %s\n", file, id);
    rec_str(w, "device", NULL, id);
    rec_bool(w, "fits", NULL, verdict == VT_OK);
    rec_bool(w, "checked", NULL, r->checked);
    rec_str(w, "message", NULL, msg);
    rec_text(w, "  %-44s %-8s %-10s %-16s %12s %12s\n", "TENSOR", "TYPE", "CLASS", "RESIDENCY", "STORED", "RESIDENT");
    rec_array_begin(w, "tensors");
    for (size_t i = 0; i < vt_load_plan_count(plan); i++) {
        const vt_gguf_tensor *t;
        const vt_weight_desc *d;
        const vt_weight_plan *p;
        if (vt_load_plan_entry(plan, i, &t, &d, &p) != VT_OK)
            continue; /* i < count: cannot fail */
        char res[32];
        bool keep = p->residency == VT_RESIDENCY_KEEP_QUANT;
        if (keep)
            snprintf(res, sizeof res, "keep-quant%s", p->in_place ? " in place" : "");
        else if (p->in_place)
            snprintf(res, sizeof res, "in place %s", vt_dtype_name(p->resident_dtype));
        else
            snprintf(res, sizeof res, "%s %s%s", p->resident_dtype == t->type ? "as" : "expand",
                     vt_dtype_name(p->resident_dtype), p->forced_expand ? " (forced)" : "");
        escaped(t->name, name, sizeof name);
        const char *op_class = vt_op_class_name((int)d->op_class);
        rec_row_begin(w, NULL);
        rec_str_as(w, "name", "", t->name, "%-44s ", name);
        rec_str_as(w, "type", "", vt_dtype_name(t->type), "%-8s ", vt_dtype_name(t->type));
        rec_str_as(w, "op_class", "", op_class, "%-10s ", op_class);
        rec_str_as(w, "residency", "", keep ? "keep-quant" : "expand", "%-16s ", res);
        rec_str(w, "resident_type", NULL, vt_dtype_name(p->resident_dtype));
        rec_uint_as(w, "stored_bytes", "", p->stored_bytes, "%12s ", vt_format_bytes(p->stored_bytes, b[0], 32));
        rec_uint_as(w, "resident_bytes", "", p->resident_bytes, "%12s", vt_format_bytes(p->resident_bytes, b[1], 32));
        rec_bool(w, "forced_expand", NULL, p->forced_expand);
        rec_bool(w, "in_place", NULL, p->in_place);
        rec_row_end(w);
    }
    rec_array_end(w);
    rec_text_layout(w, 0, 0);
    rec_object_begin(w, "totals", NULL);
    rec_uint_as(w, "keep_quant_bytes", "", r->keep_quant_bytes,
                "totals: keep-quant %s (%u tensors), expanded %s (%u), f32 %s (%u); weights %llu bytes",
                vt_format_bytes(r->keep_quant_bytes, b[0], 32), r->n_keep_quant,
                vt_format_bytes(r->expanded_bytes, b[1], 32), r->n_expanded, vt_format_bytes(r->f32_bytes, b[2], 32),
                r->n_f32, (unsigned long long)r->weight_bytes);
    rec_uint(w, "expanded_bytes", NULL, r->expanded_bytes);
    rec_uint(w, "f32_bytes", NULL, r->f32_bytes);
    rec_uint(w, "weight_bytes", NULL, r->weight_bytes);
    const char *forced[64];
    char forced_text[512] = "";
    size_t n_forced = 0, used = 0;
    for (int t = 0; t < 64; t++)
        if ((r->forced_formats >> t) & 1u) {
            forced[n_forced++] = vt_dtype_name(t);
            used += (size_t)snprintf(forced_text + used, used < sizeof forced_text ? sizeof forced_text - used : 0,
                                     " %s", vt_dtype_name(t));
        }
    rec_str_list(w, "forced_formats", NULL, forced, n_forced, "");
    if (n_forced)
        rec_text(w, "expansion to %s forced by:%s (%u tensors: no native kernel consumes them on %s)\n",
                 vt_dtype_name(r->expand_dtype), forced_text, r->n_forced, id);
    rec_uint_as(w, "run_bytes", "", r->run_bytes, "run state: %s = KV %s + conv %s + recurrent %s + scratch %s (%s)",
                vt_format_bytes(run->total, b[0], 32), vt_format_bytes(run->kv_cache, b[1], 32),
                vt_format_bytes(run->conv_state, b[2], 32), vt_format_bytes(run->recurrent_state, b[3], 32),
                vt_format_bytes(run->scratch, b[4], 32), run->detail);
    rec_uint_as(w, "needed_bytes", "", r->needed_bytes,
                "needed on the device: %llu bytes (%s); budget: %llu bytes (%s) from %s",
                (unsigned long long)r->needed_bytes, vt_format_bytes(r->needed_bytes, b[0], 32),
                (unsigned long long)r->budget_bytes, vt_format_bytes(r->budget_bytes, b[1], 32), r->budget_source);
    rec_uint(w, "budget_bytes", NULL, r->budget_bytes);
    rec_str(w, "budget_source", NULL, r->budget_source);
    rec_uint_as(w, "in_place_bytes", r->in_place_bytes ? "" : NULL, r->in_place_bytes,
                "in place: %s of %u weights used from host memory (not allocated on %s)",
                vt_format_bytes(r->in_place_bytes, b[0], 32), r->n_in_place, id);
    rec_object_end(w, false);
    rec_object_begin(w, "run", NULL);
    rec_uint(w, "kv_cache", NULL, run->kv_cache);
    rec_uint(w, "conv_state", NULL, run->conv_state);
    rec_uint(w, "recurrent_state", NULL, run->recurrent_state);
    rec_uint(w, "scratch", NULL, run->scratch);
    rec_str(w, "detail", NULL, run->detail);
    rec_object_end(w, false);
    if (!r->checked)
        rec_text(w, "verdict: fits (the load allocates nothing on %s: no fit check)\n", id);
    else if (verdict == VT_OK)
        rec_text(w, "verdict: fits\n");
    else
        rec_text(w, "verdict: DOES NOT FIT: %s\n", msg);
    rec_object_end(w, false);
}

int vtctl_cmd_fit(int argc, char **argv)
{
    /* --devices A,B plans a layer split (fit_split.c); the rest as usual. */
    const char *devices = NULL;
    int kept = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--devices") && i + 1 < argc)
            devices = argv[++i];
        else if (!strncmp(argv[i], "--devices=", 10))
            devices = argv[i] + 10;
        else
            argv[kept++] = argv[i];
    }
    argc = kept;
    vtctl_load_args a;
    int rc = vtctl_load_parse("fit", argc, argv, &a);
    if (rc >= 0)
        return rc;
    if (devices)
        return vtctl_fit_split(&a, devices);
    vt_registry *reg = NULL;
    vt_gguf *g = NULL;
    vt_device *dev = NULL;
    rc = vtctl_load_open(&a, &reg, &g, &dev);
    if (rc != VTCTL_EXIT_OK)
        return rc;
    vt_load_plan *plan = NULL;
    vt_status st = vt_load_plan_create(g, dev, &a.options, &plan);
    if (!plan) {
        fprintf(stderr, "vtctl fit: %s\n", vt_last_error());
        rc = st == VT_E_BAD_FILE ? VTCTL_EXIT_REFUSED : VTCTL_EXIT_REFUSED;
    } else {
        const char *msg = "";
        vt_status verdict = vt_load_plan_verdict(plan, &msg);
        json_writer w;
        rec_writer rw;
        rec_start(&rw, &w, a.json, 2, 0);
        write_plan(&rw, plan, dev, a.file, verdict, msg);
        rec_finish(&rw);
        rc = verdict == VT_OK ? VTCTL_EXIT_OK : VTCTL_EXIT_REFUSED;
        vt_load_plan_destroy(plan);
    }
    char dev_id[96];
    snprintf(dev_id, sizeof dev_id, "%s", vt_device_id(dev));
    vt_gguf_close(g);
    vt_registry_close(reg);
    if (rc == VTCTL_EXIT_REFUSED && st == VT_E_DOES_NOT_FIT && !a.json)
        vtctl_fit_split_hint(&a, dev_id); /* the split that would fit, by name */
    return rc;
}
