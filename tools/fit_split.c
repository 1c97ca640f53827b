/* fit_split.c - `vtctl fit FILE.gguf --devices A,B,...`: the explicit
 * layer split the model runner would execute over several devices (issue
 * 12 item 6; vt_runner_plan_split): the first layers (with token_embd) on
 * the first device as far as its budget goes, the next ones on the next
 * device, output_norm and output with the last layer. Each device's cost
 * is its layers' weights as its load plan makes them resident (in-place
 * weights cost nothing), their KV cache or conv/recurrent state for the
 * context, and the workspaces; --json gives the same as an object.
 * `vtctl generate --devices` runs it. Exit 1 when no split fits. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vt/vt_runner.h>

#include "vtctl_load.h"

int vtctl_parse_devices(vt_registry *reg, const char *cmd, const char *list, vt_device **devs, uint32_t *n)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    *n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (*n == VT_RUNNER_MAX_DEVICES) {
            fprintf(stderr, "vtctl %s: --devices names more than %d devices\n", cmd, VT_RUNNER_MAX_DEVICES);
            return VTCTL_EXIT_REFUSED;
        }
        if (vt_registry_find_device(reg, tok, &devs[*n]) != VT_OK) {
            fprintf(stderr, "vtctl %s: --devices: %s\n", cmd, vt_last_error());
            return VTCTL_EXIT_REFUSED;
        }
        (*n)++;
    }
    if (*n == 0)
        return vtctl_usage_error(cmd, "--devices names no device");
    return VTCTL_EXIT_OK;
}

/* The runner options the load arguments describe. */
static vt_runner_options runner_options(const vtctl_load_args *a, int expand)
{
    vt_runner_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.ctx = a->options.ctx > UINT32_MAX ? UINT32_MAX : (uint32_t)a->options.ctx;
    o.expand = expand;
    o.budget_bytes = a->options.budget_bytes;
    o.load_flags = a->options.flags & VT_LOAD_NO_ZERO_COPY;
    return o;
}

/* Plan over devs; quiet prints nothing. Returns the exit code. */
static int split_run(const vtctl_load_args *a, int expand, const char *devices, bool quiet, vt_runner_split *s)
{
    vt_registry *reg = NULL;
    vt_gguf *g = NULL;
    int rc = VTCTL_EXIT_REFUSED;
    vt_device *devs[VT_RUNNER_MAX_DEVICES];
    uint32_t n = 0;
    if (vt_gguf_open(a->file, &g) != VT_OK) {
        if (!quiet)
            fprintf(stderr, "vtctl fit: %s\n", vt_last_error());
        return VTCTL_EXIT_REFUSED;
    }
    if (!vtctl_open(&reg))
        goto done;
    rc = vtctl_parse_devices(reg, "fit", devices, devs, &n);
    if (rc != VTCTL_EXIT_OK)
        goto done;
    vt_runner_options o = runner_options(a, expand);
    vt_status st = vt_runner_plan_split(g, devs, n, &o, s);
    rc = st == VT_OK ? VTCTL_EXIT_OK : VTCTL_EXIT_REFUSED;
    if (quiet)
        goto done;
    if (st != VT_OK && st != VT_E_DOES_NOT_FIT) {
        fprintf(stderr, "vtctl fit: %s\n", vt_last_error());
        goto done;
    }
    if (a->json) {
        json_writer w;
        jw_init(&w, stdout);
        jw_object_begin(&w);
        jw_key(&w, "layers");
        jw_uint(&w, s->n_layer);
        jw_key(&w, "fits");
        jw_bool(&w, st == VT_OK);
        jw_key(&w, "placement");
        jw_string(&w, s->placement);
        jw_key(&w, "message");
        jw_string(&w, st == VT_OK ? "" : vt_last_error());
        jw_key(&w, "devices");
        jw_array_begin(&w);
        for (uint32_t d = 0; d < n; d++) {
            jw_object_begin(&w);
            jw_key(&w, "device");
            jw_string(&w, vt_device_id(devs[d]));
            jw_key(&w, "first_layer");
            jw_uint(&w, s->first_layer[d]);
            jw_key(&w, "n_layers");
            jw_uint(&w, s->first_layer[d + 1] - s->first_layer[d]);
            jw_key(&w, "needed_bytes");
            jw_uint(&w, s->needed_bytes[d]);
            jw_key(&w, "budget_bytes");
            jw_uint(&w, s->budget_bytes[d]);
            jw_key(&w, "budget_source");
            jw_string(&w, s->budget_source[d]);
            jw_object_end(&w);
        }
        jw_array_end(&w);
        jw_object_end(&w);
        jw_finish(&w);
        goto done;
    }
    printf("layer split of %s (%u layers, ctx %u) over %s:\n", a->file, s->n_layer, o.ctx ? o.ctx : 4096, devices);
    for (uint32_t d = 0; d < n; d++) {
        char b1[32], b2[32];
        uint32_t f = s->first_layer[d], l = s->first_layer[d + 1];
        printf("  %-12s ", vt_device_id(devs[d]));
        if (l > f)
            printf("layers %u-%u%s%s: %s of %s (%s)\n", f, l - 1, f == 0 ? " + token_embd" : "",
                   l == s->n_layer ? " + output_norm, output" : "", vt_format_bytes(s->needed_bytes[d], b1, sizeof b1),
                   vt_format_bytes(s->budget_bytes[d], b2, sizeof b2), s->budget_source[d]);
        else
            printf("no layers (budget %s)\n", vt_format_bytes(s->budget_bytes[d], b2, sizeof b2));
    }
    if (st == VT_OK)
        printf("verdict: fits split as above: %s (activations are copied between devices at each boundary; "
               "vtctl generate --devices %s runs it)\n",
               s->placement, devices);
    else
        printf("verdict: DOES NOT FIT: %s\n", vt_last_error());
done:
    vt_gguf_close(g);
    if (reg)
        vt_registry_close(reg);
    return rc;
}

int vtctl_fit_split(const vtctl_load_args *a, int expand, const char *devices)
{
    vt_runner_split s;
    return split_run(a, expand, devices, false, &s);
}

void vtctl_fit_split_hint(const vtctl_load_args *a, int expand, const char *dev_id)
{
    if (!strncmp(dev_id, "cpu:", 4))
        return;
    char devices[256];
    snprintf(devices, sizeof devices, "%s,cpu:0", dev_id);
    vt_runner_split s;
    if (split_run(a, expand, devices, true, &s) == VTCTL_EXIT_OK && s.first_layer[1] > 0)
        printf("a layer split fits: layers 0-%u on %s, the rest on cpu:0 (vtctl fit %s --devices %s)\n",
               s.first_layer[1] - 1, dev_id, a->file, devices);
}
