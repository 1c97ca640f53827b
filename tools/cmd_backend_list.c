/* cmd_backend_list.c - `vtctl backend-list`: every plugin candidate with
 * its verdict and reason, then every device with memory and the key
 * capabilities, on one screen (clinfo -l in spirit). */
#include "config.h"

#include <getopt.h>
#include <string.h>

#include "vtctl.h"

/* Every plugin candidate: a JSON array, or the BACKENDS table. */
static void write_backends(rec_writer *r, vt_registry *reg)
{
    char t1[1024], t2[4096], t3[1024];
    size_t nb = vt_registry_backend_count(reg);
    rec_text(r, "\nBACKENDS\n  %-11s %-11s %-7s %-4s %s\n", "NAME", "STATE", "DEVICES", "ABI", "FILE");
    rec_array_begin(r, "backends");
    for (size_t i = 0; i < nb; i++) {
        vt_backend_info b;
        if (vt_registry_backend_info(reg, i, &b) != VT_OK)
            continue;
        char abi[16] = "-", ndev[16] = "-";
        if (b.abi_found)
            snprintf(abi, sizeof abi, "%u", b.abi_found);
        if (b.state == VT_BACKEND_READY || b.state == VT_BACKEND_NO_DEVICES)
            snprintf(ndev, sizeof ndev, "%u", b.device_count);
        rec_row_begin(r, NULL);
        rec_str_as(r, "name", "", b.name, "%-11s ", vtctl_text(b.name, t1, sizeof t1));
        rec_str_as(r, "state", "", vt_backend_state_name(b.state), "%-11s ", vt_backend_state_name(b.state));
        rec_uint_as(r, "device_count", "", b.device_count, "%-7s ", ndev);
        if (b.abi_found)
            rec_uint_as(r, "abi", "", b.abi_found, "%-4s ", abi);
        else
            rec_str_as(r, "abi", "", NULL, "%-4s ", abi);
        rec_str_as(r, "path", "", b.path, "%s", vtctl_text(b.path, t2, sizeof t2));
        rec_str(r, "origin", NULL, b.origin);
        if (b.device_type >= 0)
            rec_int(r, "device_type", NULL, b.device_type);
        else
            rec_str(r, "device_type", NULL, NULL);
        rec_str(r, "reason", NULL, b.reason);
        rec_str(r, "description", NULL, b.description);
        rec_array_begin(r, "devices");
        for (size_t d = 0; d < vt_registry_device_count(reg); d++) {
            vt_device *dev = vt_registry_device(reg, d);
            if (strcmp(vt_device_backend_name(dev), b.name) == 0)
                rec_str(r, NULL, NULL, vt_device_id(dev));
        }
        rec_array_end(r);
        rec_row_end(r);
        if (b.reason[0])
            rec_text(r, "  %-11s why: %s\n", "", vtctl_text(b.reason, t3, sizeof t3));
    }
    rec_array_end(r);
    if (!nb)
        rec_text(r, "  (no plugins found)\n");
}

/* Every device: JSON its caps record (or its probe error); text one row
 * of the DEVICES table (a summary of the same probe). Returns the failures. */
static int write_devices(rec_writer *r, vt_registry *reg)
{
    size_t nd = vt_registry_device_count(reg);
    rec_text(r, "\nDEVICES\n");
    if (!nd)
        rec_text(r, "  (none)\n");
    else
        rec_text(r, "  %-12s %-9s %-21s %-9s %-7s %-22s %s\n", "DEVICE", "TYPE", "MEMORY FREE/TOTAL", "HOST-ADDR",
                 "STAGING", "ARCH", "NAME");
    int failures = 0;
    rec_array_begin(r, "devices");
    for (size_t d = 0; d < nd; d++) {
        vt_device *dev = vt_registry_device(reg, d);
        vt_device_caps c = VT_DEVICE_CAPS_INIT;
        if (vt_device_probe(dev, &c) != VT_OK) {
            rec_row_begin(r, NULL);
            rec_str_as(r, "id", "", vt_device_id(dev), "%-12s ", vt_device_id(dev));
            rec_str_as(r, "error", "", vt_last_error(), "probe failed: %s", vt_last_error());
            rec_row_end(r);
            failures++;
            continue;
        }
        if (rec_json(r)) {
            vtctl_write_caps(r, dev, &c, NULL);
            continue;
        }
        char type[24], f[24], t[24], mem[48];
        snprintf(type, sizeof type, "%s (%u)", vt_device_type_name(c.type), c.type);
        snprintf(mem, sizeof mem, "%s / %s", vt_format_bytes(c.memory_free, f, sizeof f),
                 vt_format_bytes(c.memory_total, t, sizeof t));
        rec_text(r, "  %-12s %-9s %-21s %-9s %-7s %-22s %s\n", vt_device_id(dev), type, mem,
                 c.host_addressable ? "yes" : "no", c.needs_weight_staging ? "yes" : "no", c.arch, c.name);
        if (c.kernels_unavailable[0])
            rec_text(r, "  %-12s every op refused: %s\n", "", c.kernels_unavailable);
    }
    rec_array_end(r);
    return failures;
}

/* The whole listing as one record: text or JSON. */
static int list(vt_registry *reg, bool json)
{
    size_t nb = vt_registry_backend_count(reg), nd = vt_registry_device_count(reg), ready = 0;
    for (size_t i = 0; i < nb; i++) {
        vt_backend_info b;
        if (vt_registry_backend_info(reg, i, &b) == VT_OK && b.state == VT_BACKEND_READY)
            ready++;
    }
    char text[4096];
    const char *path = vt_registry_search_path(reg);
    json_writer w;
    rec_writer r;
    rec_start(&r, &w, json, 0, 0);
    rec_object_begin(&r, NULL, NULL);
    rec_str_as(&r, "vt_version", "", vt_version(),
               "vt %s (plugin ABI %u): %zu plugin%s found, %zu backend%s ready, %zu device%s", vt_version(),
               VT_PLUGIN_ABI, nb, nb == 1 ? "" : "s", ready, ready == 1 ? "" : "s", nd, nd == 1 ? "" : "s");
    rec_uint(&r, "plugin_abi", NULL, VT_PLUGIN_ABI);
    rec_str_as(&r, "search_path", "search path:", path, "%s", path[0] ? vtctl_text(path, text, sizeof text) : "(none)");
    rec_text_layout(&r, 2, 0);
    write_backends(&r, reg);
    int failures = write_devices(&r, reg);
    size_t nw = vt_registry_warning_count(reg);
    if (nw)
        rec_text(&r, "\nWARNINGS\n");
    rec_array_begin(&r, "warnings");
    for (size_t i = 0; i < nw; i++)
        rec_str_as(&r, NULL, "", vt_registry_warning(reg, i), "%s",
                   vtctl_text(vt_registry_warning(reg, i), text, sizeof text));
    rec_array_end(&r);
    rec_object_end(&r, false);
    rec_finish(&r);
    return failures ? VTCTL_EXIT_REFUSED : VTCTL_EXIT_OK;
}

int vtctl_cmd_backend_list(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"isolate", no_argument, NULL, 'i'}, {"help", no_argument, NULL, 'h'}, {0}};
    bool json = false;
    uint32_t flags = 0;
    vtctl_opts o = {"backend-list",
                    "usage: vtctl backend-list [--isolate] [--json]\n"
                    "  --isolate  probe each plugin in a child process first: one that crashes or hangs\n"
                    "             is listed as skipped with the signal and stage, never loaded here\n",
                    opts, argc, argv};
    int c;
    while ((c = vtctl_option(&o)) > 0) {
        if (c == 'j')
            json = true;
        else if (c == 'i')
            flags |= VT_REGISTRY_ISOLATE;
    }
    if (c < 0)
        return o.exit_code;
    if (optind < argc)
        return vtctl_usage_error("backend-list", "unexpected argument '%s'", argv[optind]);
    vt_registry *reg;
    if (!vtctl_open_flags(&reg, flags))
        return VTCTL_EXIT_REFUSED;
    int rc = list(reg, json);
    vt_registry_close(reg);
    return rc;
}
