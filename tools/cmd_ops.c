/* cmd_ops.c - `vtctl ops BACKEND[:DEV] [--op NAME] [--strict] [--json]`:
 * every op and signature of the catalogue with the tier it resolves to on
 * the device (native, cpu-tier, refused and why). A backend without a
 * device still shows its static kernel table (native or absent). */
#include "config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "vtctl.h"

/* The refusal message without its "missing op X (id) on dev (...): " head. */
static const char *reason_tail(const char *reason)
{
    const char *p = strstr(reason, "): ");
    return p ? p + 3 : reason;
}

typedef struct row_counts {
    unsigned native, cpu, refused, absent;
} row_counts;

static void emit_row(rec_writer *r, const vt_op_info *info, vt_sig sig, const char *tier, const char *reason,
                     row_counts *counts)
{
    char sigbuf[96];
    vt_sig_format(sig, sigbuf, sizeof sigbuf);
    if (!strcmp(tier, "native"))
        counts->native++;
    else if (!strcmp(tier, "cpu-tier"))
        counts->cpu++;
    else if (!strcmp(tier, "refused"))
        counts->refused++;
    else
        counts->absent++;
    rec_row_begin(r, NULL);
    rec_uint_as(r, "id", "", info->op, "%3u  ", info->op);
    rec_str_as(r, "name", "", info->name, "%-22s  ", info->name);
    rec_str_as(r, "signature", "", sigbuf, "%-22s  ", sigbuf);
    rec_str_as(r, "tier", "", tier, "%-9s", tier);
    rec_str_as(r, "reason", "", reason, "%s%s", reason[0] ? "  " : "", reason);
    rec_row_end(r);
}

int vtctl_cmd_ops(int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                         {"op", required_argument, NULL, 'o'},
                                         {"strict", no_argument, NULL, 's'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    bool json = false, strict = false;
    const char *only = NULL;
    vtctl_opts o = {"ops", "usage: vtctl ops BACKEND[:DEV] [--op NAME] [--strict] [--json]\n", opts, argc, argv};
    int c;
    while ((c = vtctl_option(&o)) > 0) {
        if (c == 'j')
            json = true;
        else if (c == 's')
            strict = true;
        else if (c == 'o')
            only = optarg;
    }
    if (c < 0)
        return o.exit_code;
    if (argc - optind != 1)
        return vtctl_usage_error("ops", "name one BACKEND[:DEV]");
    const char *spec = argv[optind];
    vt_op only_op = VT_OP_NONE;
    if (only && (only_op = vt_op_from_name(only)) == VT_OP_NONE)
        return vtctl_usage_error("ops", "no op named '%s' in the catalogue", only);
    /* --strict is the registry's policy option: it overrides $VT_TIER_POLICY */
    vt_registry *reg;
    int rc = vtctl_open_policy("ops", strict ? VT_TIER_POLICY_STRICT : VT_TIER_POLICY_ENV, &reg, &strict);
    if (rc != VTCTL_EXIT_OK)
        return rc;
    char backend[128];
    snprintf(backend, sizeof backend, "%.*s", (int)strcspn(spec, ":"), spec);
    const vt_kernel *kernels = NULL;
    uint32_t n_kernels = 0;
    if (vt_registry_backend_kernels(reg, backend, &kernels, &n_kernels) != VT_OK) {
        fprintf(stderr, "vtctl ops: %s\n", vt_last_error());
        vt_registry_close(reg);
        return VTCTL_EXIT_REFUSED;
    }
    vt_device *dev = NULL;
    char no_device[512] = "";
    if (vt_registry_find_device(reg, spec, &dev) != VT_OK) {
        if (strchr(spec, ':')) {
            fprintf(stderr, "vtctl ops: %s\n", vt_last_error());
            vt_registry_close(reg);
            return VTCTL_EXIT_REFUSED;
        }
        snprintf(no_device, sizeof no_device, "%s", vt_last_error());
        dev = NULL;
    }
    vt_device_caps caps = VT_DEVICE_CAPS_INIT;
    if (dev && vt_device_probe(dev, &caps) != VT_OK) {
        fprintf(stderr, "vtctl ops: %s\n", vt_last_error());
        vt_registry_close(reg);
        return VTCTL_EXIT_REFUSED;
    }

    json_writer w;
    rec_writer r;
    rec_start(&r, &w, json, 2, 0);
    const char *policy_name = strict ? "strict" : "portable";
    rec_object_begin(&r, NULL, NULL);
    rec_str(&r, "backend", NULL, backend);
    rec_str(&r, "device", NULL, dev ? vt_device_id(dev) : NULL);
    rec_str(&r, "policy", NULL, policy_name);
    if (dev) {
        rec_text(&r, "ops on %s (device type %u, %s %s): host-addressable %s, tier policy %s\n", vt_device_id(dev),
                 caps.type, caps.name, caps.arch, caps.host_addressable ? "yes" : "no", policy_name);
        rec_text(&r, "  %3s  %-22s  %-22s  %-9s  %s\n", "ID", "OP", "SIGNATURE", "TIER", "WHY (when refused)");
    } else {
        rec_str(&r, "no_device_reason", NULL, no_device);
        rec_text(&r, "kernel table of %s (no device to resolve on: %s)\n", backend, no_device);
        rec_text(&r, "  %3s  %-22s  %-22s  %s\n", "ID", "OP", "SIGNATURE", "KERNEL");
    }
    rec_array_begin(&r, "ops");
    /* One plan of every (op, signature): resolved at once, one probe. */
    size_t n_rows = 0;
    for (uint32_t i = 0; i < vt_op_catalog_size(); i++) {
        const vt_op_info *info = vt_op_catalog_entry(i);
        if (!only_op || info->op == only_op)
            n_rows += info->n_sigs;
    }
    vt_plan_op *plan = calloc(n_rows ? n_rows : 1, sizeof *plan);
    vt_resolution *res = calloc(n_rows ? n_rows : 1, sizeof *res);
    if (!plan || !res) {
        fprintf(stderr, "vtctl ops: out of memory\n");
        free(plan);
        free(res);
        vt_registry_close(reg);
        return VTCTL_EXIT_REFUSED;
    }
    size_t k = 0;
    for (uint32_t i = 0; i < vt_op_catalog_size(); i++) {
        const vt_op_info *info = vt_op_catalog_entry(i);
        if (only_op && info->op != only_op)
            continue;
        for (uint32_t s = 0; s < info->n_sigs; s++, k++) {
            plan[k].op = info->op;
            plan[k].sig = info->sigs[s];
        }
    }
    size_t n_refused = 0;
    /* VT_E_OP_MISSING only says some rows are refused: each row shows why */
    vt_status rs = dev ? vt_resolve_plan(dev, plan, n_rows, 0, res, &n_refused) : VT_OK;
    if (rs != VT_OK && rs != VT_E_OP_MISSING) {
        fprintf(stderr, "vtctl ops: %s\n", vt_last_error());
        free(plan);
        free(res);
        vt_registry_close(reg);
        return VTCTL_EXIT_REFUSED;
    }
    row_counts counts = {0};
    for (k = 0; k < n_rows; k++) {
        const vt_op_info *info = vt_op_get_info(plan[k].op);
        if (!dev) {
            bool native = vt_kernel_find(kernels, n_kernels, plan[k].op, plan[k].sig) != NULL;
            emit_row(&r, info, plan[k].sig, native ? "native" : "absent", "", &counts);
        } else {
            emit_row(&r, info, plan[k].sig, vt_tier_name((int)res[k].tier),
                     res[k].tier == VT_TIER_REFUSED ? reason_tail(res[k].reason) : "", &counts);
        }
    }
    free(plan);
    free(res);
    rec_array_end(&r);
    rec_text_layout(&r, 0, 0);
    rec_object_begin(&r, "summary", NULL);
    if (dev)
        rec_uint_as(&r, "native", "", counts.native,
                    "%u signatures: %u native, %u on the portable CPU tier, %u refused",
                    counts.native + counts.cpu + counts.refused, counts.native, counts.cpu, counts.refused);
    else
        rec_uint_as(&r, "native", "", counts.native, "%u signatures: %u native, %u absent",
                    counts.native + counts.absent, counts.native, counts.absent);
    rec_uint(&r, "cpu_tier", NULL, counts.cpu);
    rec_uint(&r, "refused", NULL, counts.refused);
    rec_uint(&r, "absent", NULL, counts.absent);
    rec_object_end(&r, false);
    rec_object_end(&r, false);
    rec_finish(&r);
    vt_registry_close(reg);
    return VTCTL_EXIT_OK;
}
