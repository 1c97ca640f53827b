/* cmd_stage.c - `vtctl stage FILE.gguf [--backend B[:DEV]] [--verify] ...`:
 * plan, then stage a model's weights onto a device with a progress bar
 * (progress_bar.c, from the library's progress callback),
 * and with --verify read every tensor back and compare it byte for byte:
 * with the file for tensors copied as they are, with the cpu backend's own
 * conversion for expanded ones. Exit 1 on a refusal or a mismatch. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "progress_bar.h"
#include "vtctl.h"
#include "vtctl_load.h"

/* The bytes an expanded tensor must hold: the cpu device's conversion. */
static vt_status reference(vt_registry *reg, const vt_gguf_tensor *gt, vt_dtype dst_type, void *out, size_t bytes)
{
    vt_device *cpu;
    vt_status st = vt_registry_find_device(reg, "cpu:0", &cpu);
    if (st != VT_OK)
        return st;
    int64_t n = gt->n_elements;
    vt_tensor *src = NULL, *dst = NULL;
    st = vt_tensor_create(cpu, gt->type, 1, &n, &src);
    if (st == VT_OK)
        st = vt_tensor_create(cpu, dst_type, 1, &n, &dst);
    if (st == VT_OK)
        st = vt_tensor_write(src, gt->data, (size_t)gt->n_bytes);
    const vt_dtype_info *info = vt_dtype_get(gt->type);
    const vt_tensor *in[1] = {src};
    vt_tensor *o[1] = {dst};
    if (st == VT_OK)
        st = vt_op_run(cpu, info->quantized ? VT_OP_DEQUANTIZE : VT_OP_COPY, in, 1, o, 1, NULL, 0);
    if (st == VT_OK)
        st = vt_tensor_read(dst, out, bytes);
    vt_tensor_destroy(src);
    vt_tensor_destroy(dst);
    return st;
}

static int verify(vt_registry *reg, const vt_load_plan *plan, const vt_model *m, bool json)
{
    uint64_t raw = 0, expanded = 0;
    size_t n_ok = 0;
    for (size_t i = 0; i < vt_model_tensor_count(m); i++) {
        const vt_gguf_tensor *gt;
        if (vt_load_plan_entry(plan, i, &gt, NULL, NULL) != VT_OK)
            continue; /* i < count: cannot fail */
        vt_tensor *t = vt_model_tensor(m, i);
        size_t bytes = (size_t)vt_tensor_nbytes(t);
        unsigned char *got = malloc(bytes ? bytes : 1), *want = NULL;
        vt_status st = got ? vt_tensor_read(t, got, bytes) : VT_E_NO_MEMORY;
        bool same = false;
        if (st == VT_OK && vt_tensor_dtype(t) == gt->type) {
            same = bytes == gt->n_bytes && (!bytes || memcmp(got, gt->data, bytes) == 0);
            raw += same ? bytes : 0;
        } else if (st == VT_OK) {
            want = malloc(bytes ? bytes : 1);
            st = want ? reference(reg, gt, vt_tensor_dtype(t), want, bytes) : VT_E_NO_MEMORY;
            same = st == VT_OK && memcmp(got, want, bytes) == 0;
            expanded += same ? bytes : 0;
        }
        free(got);
        free(want);
        if (st != VT_OK) {
            fprintf(stderr, "vtctl stage: verifying '%s': %s\n", gt->name, vt_last_error());
            return VTCTL_EXIT_REFUSED;
        }
        if (!same) {
            fprintf(stderr, "vtctl stage: '%s' read back from %s differs from what was staged\n", gt->name,
                    vt_device_id(vt_tensor_device(t)));
            return VTCTL_EXIT_REFUSED;
        }
        n_ok++;
    }
    if (!json)
        printf("verified: %zu tensors read back byte-identical (%llu bytes as stored, %llu bytes expanded)\n", n_ok,
               (unsigned long long)raw, (unsigned long long)expanded);
    return VTCTL_EXIT_OK;
}

int vtctl_cmd_stage(int argc, char **argv)
{
    vtctl_load_args a;
    int rc = vtctl_load_parse("stage", argc, argv, &a);
    if (rc >= 0)
        return rc;
    vt_registry *reg = NULL;
    vt_gguf *g = NULL;
    vt_device *dev = NULL;
    rc = vtctl_load_open(&a, &reg, &g, &dev);
    if (rc != VTCTL_EXIT_OK)
        return rc;
    progress_bar bar;
    progress_bar_init(&bar, vt_device_id(dev));
    if (!a.json) {
        a.options.progress = progress_bar_update;
        a.options.progress_user = &bar;
    }
    vt_load_plan *plan = NULL;
    vt_model *m = NULL;
    vt_status st = vt_load_plan_create(g, dev, &a.options, &plan);
    if (st == VT_OK)
        st = vt_model_stage(plan, &a.options, &m);
    progress_bar_end(&bar);
    if (st != VT_OK) {
        fprintf(stderr, "vtctl stage: %s\n", vt_last_error());
        rc = VTCTL_EXIT_REFUSED;
    } else {
        const vt_stage_stats *s = vt_model_stats(m);
        char b[3][32];
        json_writer w;
        rec_writer r;
        rec_start(&r, &w, a.json, 0, 0);
        rec_object_begin(&r, NULL, NULL);
        rec_str(&r, "device", NULL, vt_device_id(dev));
        rec_uint_as(&r, "tensors_copied", "", s->tensors_copied,
                    "staged %s onto %s: %u tensors copied (%s, %u expanded), %u used in place (%s); pool %s%s", a.file,
                    vt_device_id(dev), s->tensors_copied, vt_format_bytes(s->bytes_copied, b[0], 32),
                    s->tensors_expanded, s->tensors_in_place, vt_format_bytes(s->bytes_in_place, b[1], 32),
                    vt_format_bytes(s->pool_bytes, b[2], 32), s->pinned ? " pinned" : "");
        rec_uint(&r, "tensors_in_place", NULL, s->tensors_in_place);
        rec_uint(&r, "tensors_expanded", NULL, s->tensors_expanded);
        rec_uint(&r, "bytes_copied", NULL, s->bytes_copied);
        rec_uint(&r, "bytes_in_place", NULL, s->bytes_in_place);
        rec_uint(&r, "pool_bytes", NULL, s->pool_bytes);
        rec_bool(&r, "pinned", NULL, s->pinned);
        rec_object_end(&r, false);
        rec_finish(&r);
        if (a.verify)
            rc = verify(reg, plan, m, a.json);
    }
    vt_model_destroy(m);
    vt_load_plan_destroy(plan);
    vt_gguf_close(g);
    vt_registry_close(reg);
    return rc;
}
