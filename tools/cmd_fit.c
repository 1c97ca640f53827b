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

static void json_plan(json_writer *w, const vt_load_plan *plan, vt_device *dev, vt_status verdict, const char *msg)
{
    const vt_fit_report *r = vt_load_plan_report(plan);
    const vt_run_estimate *run = vt_load_plan_run(plan);
    jw_object_begin(w);
    jw_key(w, "device");
    jw_string(w, vt_device_id(dev));
    jw_key(w, "fits");
    jw_bool(w, verdict == VT_OK);
    jw_key(w, "checked");
    jw_bool(w, r->checked);
    jw_key(w, "message");
    jw_string(w, msg);
    jw_key(w, "tensors");
    jw_array_begin(w);
    for (size_t i = 0; i < vt_load_plan_count(plan); i++) {
        const vt_gguf_tensor *t;
        const vt_weight_desc *d;
        const vt_weight_plan *p;
        vt_load_plan_entry(plan, i, &t, &d, &p);
        jw_object_begin(w);
        jw_key(w, "name");
        jw_string(w, t->name);
        jw_key(w, "type");
        jw_string(w, vt_dtype_name(t->type));
        jw_key(w, "op_class");
        jw_string(w, vt_op_class_name((int)d->op_class));
        jw_key(w, "residency");
        jw_string(w, p->residency == VT_RESIDENCY_KEEP_QUANT ? "keep-quant" : "expand");
        jw_key(w, "resident_type");
        jw_string(w, vt_dtype_name((int)p->resident_dtype));
        jw_key(w, "stored_bytes");
        jw_uint(w, p->stored_bytes);
        jw_key(w, "resident_bytes");
        jw_uint(w, p->resident_bytes);
        jw_key(w, "forced_expand");
        jw_bool(w, p->forced_expand);
        jw_key(w, "in_place");
        jw_bool(w, p->in_place);
        jw_object_end(w);
    }
    jw_array_end(w);
    jw_key(w, "totals");
    jw_object_begin(w);
    jw_key(w, "keep_quant_bytes");
    jw_uint(w, r->keep_quant_bytes);
    jw_key(w, "expanded_bytes");
    jw_uint(w, r->expanded_bytes);
    jw_key(w, "f32_bytes");
    jw_uint(w, r->f32_bytes);
    jw_key(w, "weight_bytes");
    jw_uint(w, r->weight_bytes);
    jw_key(w, "run_bytes");
    jw_uint(w, r->run_bytes);
    jw_key(w, "in_place_bytes");
    jw_uint(w, r->in_place_bytes);
    jw_key(w, "needed_bytes");
    jw_uint(w, r->needed_bytes);
    jw_key(w, "budget_bytes");
    jw_uint(w, r->budget_bytes);
    jw_key(w, "budget_source");
    jw_string(w, r->budget_source);
    jw_key(w, "forced_formats");
    jw_array_begin(w);
    for (int t = 0; t < 64; t++)
        if ((r->forced_formats >> t) & 1u)
            jw_string(w, vt_dtype_name(t));
    jw_array_end(w);
    jw_object_end(w);
    jw_key(w, "run");
    jw_object_begin(w);
    jw_key(w, "kv_cache");
    jw_uint(w, run->kv_cache);
    jw_key(w, "conv_state");
    jw_uint(w, run->conv_state);
    jw_key(w, "recurrent_state");
    jw_uint(w, run->recurrent_state);
    jw_key(w, "scratch");
    jw_uint(w, run->scratch);
    jw_key(w, "detail");
    jw_string(w, run->detail);
    jw_object_end(w);
    jw_object_end(w);
}

static void text_plan(const vt_load_plan *plan, vt_device *dev, const char *file, vt_status verdict, const char *msg)
{
    const vt_fit_report *r = vt_load_plan_report(plan);
    const vt_run_estimate *run = vt_load_plan_run(plan);
    char b[6][32], name[160];
    printf("load plan of %s on %s\n", file, vt_device_id(dev));
    printf("  %-44s %-8s %-10s %-16s %12s %12s\n", "TENSOR", "TYPE", "CLASS", "RESIDENCY", "STORED", "RESIDENT");
    for (size_t i = 0; i < vt_load_plan_count(plan); i++) {
        const vt_gguf_tensor *t;
        const vt_weight_desc *d;
        const vt_weight_plan *p;
        vt_load_plan_entry(plan, i, &t, &d, &p);
        char res[32];
        if (p->residency == VT_RESIDENCY_KEEP_QUANT)
            snprintf(res, sizeof res, "keep-quant%s", p->in_place ? " in place" : "");
        else if (p->in_place)
            snprintf(res, sizeof res, "in place %s", vt_dtype_name((int)p->resident_dtype));
        else
            snprintf(res, sizeof res, "%s %s%s", (int)p->resident_dtype == t->type ? "as" : "expand",
                     vt_dtype_name((int)p->resident_dtype), p->forced_expand ? " (forced)" : "");
        escaped(t->name, name, sizeof name);
        printf("  %-44s %-8s %-10s %-16s %12s %12s\n", name, vt_dtype_name(t->type), vt_op_class_name((int)d->op_class),
               res, vt_format_bytes(p->stored_bytes, b[0], 32), vt_format_bytes(p->resident_bytes, b[1], 32));
    }
    printf("totals: keep-quant %s (%u tensors), expanded %s (%u), f32 %s (%u); weights %llu bytes\n",
           vt_format_bytes(r->keep_quant_bytes, b[0], 32), r->n_keep_quant,
           vt_format_bytes(r->expanded_bytes, b[1], 32), r->n_expanded, vt_format_bytes(r->f32_bytes, b[2], 32),
           r->n_f32, (unsigned long long)r->weight_bytes);
    if (r->forced_formats) {
        printf("expansion to %s forced by:", vt_dtype_name((int)r->expand_dtype));
        for (int t = 0; t < 64; t++)
            if ((r->forced_formats >> t) & 1u)
                printf(" %s", vt_dtype_name(t));
        printf(" (%u tensors: no native kernel consumes them on %s)\n", r->n_forced, vt_device_id(dev));
    }
    printf("run state: %s = KV %s + conv %s + recurrent %s + scratch %s (%s)\n", vt_format_bytes(run->total, b[0], 32),
           vt_format_bytes(run->kv_cache, b[1], 32), vt_format_bytes(run->conv_state, b[2], 32),
           vt_format_bytes(run->recurrent_state, b[3], 32), vt_format_bytes(run->scratch, b[4], 32), run->detail);
    printf("needed on the device: %llu bytes (%s); budget: %llu bytes (%s) from %s\n",
           (unsigned long long)r->needed_bytes, vt_format_bytes(r->needed_bytes, b[0], 32),
           (unsigned long long)r->budget_bytes, vt_format_bytes(r->budget_bytes, b[1], 32), r->budget_source);
    if (r->in_place_bytes)
        printf("in place: %s of %u weights used from host memory (not allocated on %s)\n",
               vt_format_bytes(r->in_place_bytes, b[0], 32), r->n_in_place, vt_device_id(dev));
    if (!r->checked)
        printf("verdict: fits (the load allocates nothing on %s: no fit check)\n", vt_device_id(dev));
    else if (verdict == VT_OK)
        printf("verdict: fits\n");
    else
        printf("verdict: DOES NOT FIT: %s\n", msg);
}

int vtctl_cmd_fit(int argc, char **argv)
{
    /* --devices A,B plans a layer split (fit_split.c); the rest as usual. */
    const char *devices = NULL;
    int kept = 0;
    bool expand_given = false;
    for (int i = 0; i < argc; i++) {
        expand_given |= !strncmp(argv[i], "--expand", 8);
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
    /* The runner expands as the file's token_embd unless told. */
    int expand = expand_given ? (int)a.options.expand : -1;
    if (devices)
        return vtctl_fit_split(&a, expand, devices);
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
        if (a.json) {
            json_writer w;
            jw_init(&w, stdout);
            json_plan(&w, plan, dev, verdict, msg);
            jw_finish(&w);
        } else {
            text_plan(plan, dev, a.file, verdict, msg);
        }
        rc = verdict == VT_OK ? VTCTL_EXIT_OK : VTCTL_EXIT_REFUSED;
        vt_load_plan_free(plan);
    }
    char dev_id[96];
    snprintf(dev_id, sizeof dev_id, "%s", vt_device_id(dev));
    vt_gguf_close(g);
    vt_registry_close(reg);
    if (rc == VTCTL_EXIT_REFUSED && st == VT_E_DOES_NOT_FIT && !a.json)
        vtctl_fit_split_hint(&a, expand, dev_id); /* the split that would fit, by name */
    return rc;
}
