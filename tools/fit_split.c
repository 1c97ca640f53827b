/* fit_split.c - `vtctl fit FILE.gguf --devices A,B,...`: an explicit layer
 * split of a model over several devices (issue 12 item 6), planned from
 * each device's own load plan: the first layers (with token_embd) on the
 * first device as far as its budget goes, the next ones on the next
 * device, output_norm and output on the last. Each layer costs its
 * tensors' resident bytes on that device (in-place weights cost nothing)
 * plus its share of the run state (KV cache or conv/recurrent state);
 * each device also keeps the scratch. A device whose load is not checked
 * (nothing allocated) takes any number of layers. Planning only: the
 * runner does not execute a split yet. Exit 1 when no split fits. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vtctl_load.h"

#define MAX_SPLIT 8

/* What one device would cost per part of the model. */
typedef struct dev_cost {
    vt_device *dev;
    vt_load_plan *plan;
    uint64_t budget;
    bool unlimited;
    uint64_t *layer; /* bytes of layer i on this device, run state included */
    uint64_t head, tail, scratch;
} dev_cost;

/* Layer index of a "blk.N." tensor, else -1. */
static long layer_of(const char *name)
{
    if (strncmp(name, "blk.", 4))
        return -1;
    char *end;
    long n = strtol(name + 4, &end, 10);
    return end != name + 4 && *end == '.' ? n : -1;
}

static int cost_on(vt_gguf *g, vt_device *dev, const vt_load_options *o, uint32_t n_layers, dev_cost *c)
{
    memset(c, 0, sizeof *c);
    c->dev = dev;
    /* a refused plan (VT_E_DOES_NOT_FIT) still describes every tensor: only no plan is an error */
    if (vt_load_plan_create(g, dev, o, &c->plan) != VT_OK && !c->plan) {
        fprintf(stderr, "vtctl fit: %s\n", vt_last_error());
        return -1;
    }
    const vt_fit_report *r = vt_load_plan_report(c->plan);
    const vt_run_estimate *run = vt_load_plan_run(c->plan);
    c->budget = r->budget_bytes;
    c->unlimited = !r->checked;
    c->layer = calloc(n_layers ? n_layers : 1, sizeof *c->layer);
    if (!c->layer)
        return -1;
    for (size_t i = 0; i < vt_load_plan_count(c->plan); i++) {
        const vt_gguf_tensor *t;
        const vt_weight_desc *d;
        const vt_weight_plan *p;
        if (vt_load_plan_entry(c->plan, i, &t, &d, &p) != VT_OK)
            continue; /* i < count: cannot fail */
        uint64_t b = p->in_place ? 0 : p->resident_bytes;
        long l = layer_of(t->name);
        if (l >= 0 && (uint32_t)l < n_layers)
            c->layer[l] += b;
        else if (!strcmp(t->name, "token_embd.weight"))
            c->head += b;
        else
            c->tail += b;
    }
    uint64_t state = run->kv_cache + run->conv_state + run->recurrent_state;
    for (uint32_t l = 0; l < n_layers; l++)
        c->layer[l] += state / n_layers;
    c->scratch = run->scratch;
    return 0;
}

/* Plan the split; quiet prints nothing and leaves in *on_first the layers
 * the first device takes. Returns the exit code. */
static int split_run(const vtctl_load_args *a, const char *devices, bool quiet, uint32_t *on_first)
{
    char list[512];
    snprintf(list, sizeof list, "%s", devices);
    char *ids[MAX_SPLIT];
    int n = 0;
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ","))
        if (n < MAX_SPLIT)
            ids[n++] = tok;
    if (n < 1)
        return vtctl_usage_error("fit", "--devices names no device");
    vt_registry *reg = NULL;
    vt_gguf *g = NULL;
    int rc = VTCTL_EXIT_REFUSED;
    dev_cost c[MAX_SPLIT];
    memset(c, 0, sizeof c);
    uint32_t L = 0;
    if (vt_gguf_open(a->file, &g) != VT_OK) {
        if (!quiet)
            fprintf(stderr, "vtctl fit: %s\n", vt_last_error());
        return VTCTL_EXIT_REFUSED;
    }
    vt_gguf_str arch;
    char key[96];
    if (vt_gguf_get_string(g, "general.architecture", &arch) == VT_OK) {
        snprintf(key, sizeof key, "%.*s.block_count", (int)(arch.len < 64 ? arch.len : 64), arch.data);
        if (vt_gguf_get_u32(g, key, &L) != VT_OK)
            L = 0; /* refused just below */
    }
    if (L == 0 || L > 4096) {
        if (!quiet)
            fprintf(stderr, "vtctl fit: %s has no <arch>.block_count: no layers to split\n", a->file);
        goto done;
    }
    if (!vtctl_open(&reg))
        goto done;
    for (int i = 0; i < n; i++) {
        vt_device *dev;
        if (vt_registry_find_device(reg, ids[i], &dev) != VT_OK) {
            if (!quiet)
                fprintf(stderr, "vtctl fit: %s\n", vt_last_error());
            goto done;
        }
        if (cost_on(g, dev, &a->options, L, &c[i]) != 0)
            goto done;
    }
    /* Greedy: layers go to device d while they fit its budget. */
    uint32_t first[MAX_SPLIT + 1] = {0}, next = 0;
    uint64_t used[MAX_SPLIT] = {0};
    for (int d = 0; d < n; d++) {
        first[d] = next;
        used[d] = c[d].scratch + (d == 0 ? c[d].head : 0);
        uint64_t tail = d == n - 1 ? c[d].tail : 0;
        while (next < L && (c[d].unlimited || used[d] + c[d].layer[next] + (next + 1 == L ? tail : 0) <= c[d].budget))
            used[d] += c[d].layer[next++];
        if (next == L)
            used[d] += tail;
    }
    first[n] = next;
    bool fits = next == L && (c[n - 1].unlimited || used[n - 1] <= c[n - 1].budget) &&
                (c[0].unlimited || used[0] <= c[0].budget);
    if (on_first)
        *on_first = first[1];
    if (quiet) {
        rc = fits ? VTCTL_EXIT_OK : VTCTL_EXIT_REFUSED;
        goto done;
    }
    printf("layer split of %s (%u layers) over %s:\n", a->file, L, devices);
    for (int d = 0; d < n; d++) {
        char b1[32], b2[32];
        printf("  %-12s ", vt_device_id(c[d].dev));
        if (first[d + 1] > first[d])
            printf("layers %u-%u", first[d], first[d + 1] - 1);
        else
            printf("no layers");
        printf("%s%s: %s of %s\n", d == 0 ? " + token_embd" : "", d == n - 1 ? " + output_norm, output" : "",
               vt_format_bytes(used[d], b1, sizeof b1),
               c[d].unlimited ? "host memory (nothing allocated)" : vt_format_bytes(c[d].budget, b2, sizeof b2));
    }
    if (fits) {
        printf("verdict: fits split as above (activations are copied between devices at each boundary)\n");
        rc = VTCTL_EXIT_OK;
    } else if (next < L) {
        printf("verdict: DOES NOT FIT: %u of %u layers placed; add a device or raise a budget\n", next, L);
    } else {
        int d = c[0].unlimited || used[0] <= c[0].budget ? n - 1 : 0;
        printf("verdict: DOES NOT FIT: %s needs more than its budget for %s\n", vt_device_id(c[d].dev),
               d == 0 ? "token_embd and the scratch" : "output and the scratch");
    }
done:
    for (int i = 0; i < n; i++) {
        vt_load_plan_destroy(c[i].plan);
        free(c[i].layer);
    }
    vt_gguf_close(g);
    if (reg)
        vt_registry_close(reg);
    return rc;
}

int vtctl_fit_split(const vtctl_load_args *a, const char *devices)
{
    return split_run(a, devices, false, NULL);
}

void vtctl_fit_split_hint(const vtctl_load_args *a, const char *dev_id)
{
    if (!strncmp(dev_id, "cpu:", 4))
        return;
    char devices[256];
    snprintf(devices, sizeof devices, "%s,cpu:0", dev_id);
    uint32_t on_first = 0;
    if (split_run(a, devices, true, &on_first) == VTCTL_EXIT_OK && on_first > 0)
        printf("a layer split fits: layers 0-%u on %s, the rest on cpu:0 (vtctl fit %s --devices %s)\n", on_first - 1,
               dev_id, a->file, devices);
}
