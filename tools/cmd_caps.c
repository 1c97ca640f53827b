/* cmd_caps.c - `vtctl caps [BACKEND[:DEV]]`: every capability of a device,
 * probed at the call, with the reason behind each yes/no and the staging
 * decisions derived from needs_weight_staging. */
#include "config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "vtctl.h"

static void count_ops(vt_device *dev, uint32_t *n_kernels, uint32_t *n_ops)
{
    const vt_kernel *k = NULL;
    uint32_t n = 0;
    *n_kernels = *n_ops = 0;
    if (vt_device_kernels(dev, &k, &n) != VT_OK)
        return;
    *n_kernels = n;
    bool seen[VT_OP_ID_LIMIT] = {false};
    for (uint32_t i = 0; i < n; i++)
        if (k[i].op < VT_OP_ID_LIMIT && !seen[k[i].op]) {
            seen[k[i].op] = true;
            (*n_ops)++;
        }
}

void vtctl_write_caps(rec_writer *r, vt_device *dev, const vt_device_caps *c, const vt_backend_info *b)
{
    char f[24], t[24];
    const char *id = vt_device_id(dev), *backend = vt_device_backend_name(dev);
    const char *type_name = vt_device_type_name(c->type);
    rec_object_begin(r, NULL, NULL);
    rec_text(r, "%s  %s\n", id, c->name);
    rec_str(r, "id", NULL, id);
    rec_str_as(r, "backend", "backend", backend, "%s (%s)", backend, b ? b->path : "?");
    rec_int(r, "index", NULL, vt_device_index(dev));
    rec_uint(r, "type", NULL, c->type);
    rec_str_as(r, "type_name", "device type", type_name, "%s (%u)", type_name, c->type);
    rec_str(r, "name", NULL, c->name);
    rec_str(r, "platform", "platform", c->platform);
    rec_str(r, "arch", "arch", c->arch);
    rec_uint(r, "warp_size", "warp size", c->warp_size);
    rec_uint(r, "compute_units", "compute units", c->compute_units);
    rec_uint(r, "host_threads", c->host_threads ? "host threads" : NULL, c->host_threads);
    rec_uint_as(r, "memory_total", "memory total", c->memory_total, "%llu bytes (%s)",
                (unsigned long long)c->memory_total, vt_format_bytes(c->memory_total, t, sizeof t));
    rec_uint_as(r, "memory_free", "memory free", c->memory_free, "%llu bytes (%s)", (unsigned long long)c->memory_free,
                vt_format_bytes(c->memory_free, f, sizeof f));
    rec_uint_as(r, "alloc_alignment", "allocation alignment", c->alloc_alignment, "%llu bytes",
                (unsigned long long)c->alloc_alignment);
    rec_bool_as(r, "host_addressable", "host addressable", c->host_addressable, "%s: %s",
                c->host_addressable ? "yes" : "no", c->host_addressable_reason);
    rec_str(r, "host_addressable_reason", NULL, c->host_addressable_reason);
    rec_bool(r, "needs_weight_staging", "needs weight staging", c->needs_weight_staging);
    rec_bool_as(r, "sampled_token_readback", "sampled token readback", c->sampled_token_readback, "%s: %s",
                c->sampled_token_readback ? "yes" : "no", c->sampled_token_readback_reason);
    rec_str(r, "sampled_token_readback_reason", NULL, c->sampled_token_readback_reason);
    rec_bool_as(r, "managed_memory_supported", "managed memory", c->managed_memory_supported, "%s%s",
                c->managed_memory_supported ? "supported" : "not supported",
                c->managed_memory_enabled ? ", ENABLED (VT_ROCM_MANAGED_ALLOC=1 opt-in)" : "");
    rec_bool(r, "managed_memory_enabled", NULL, c->managed_memory_enabled);
    rec_str_as(r, "kernels_unavailable", c->kernels_unavailable[0] ? "kernels" : NULL, c->kernels_unavailable,
               "NONE: %s", c->kernels_unavailable);
    rec_object_begin(r, "keep_quant", "keep-quant formats (from the kernel table)");
    for (int cl = 0; cl < VT_OP_CLASS_COUNT; cl++) {
        const char *names[64];
        size_t n = 0;
        for (int d = 0; d < 64; d++)
            if ((c->keep_quant[cl] >> d) & 1u)
                names[n++] = vt_dtype_name(d);
        rec_str_list(r, vt_op_class_name(cl), vt_op_class_name(cl), names, n, "(none)");
    }
    rec_object_end(r, true);
    uint32_t nk, no;
    count_ops(dev, &nk, &no);
    rec_uint_as(r, "native_kernels", "op table", nk, "%u native kernels over %u ops ('vtctl ops %s' lists them)", nk,
                no, backend);
    rec_uint(r, "native_ops", NULL, no);
    vt_staging_decisions d = vt_caps_staging_decisions(c);
    rec_object_begin(r, "staging_decisions",
                     "staging decisions (from needs_weight_staging = %s%s; the loader reads these)",
                     c->needs_weight_staging ? "yes" : "no", c->managed_memory_enabled ? ", managed allocation" : "");
    rec_bool_as(r, "direct_to_device_load", "weight load", d.direct_to_device_load, "%s",
                d.direct_to_device_load ? "direct to device memory" : "via host memory");
    rec_bool_as(r, "device_state_cache_io", "state-cache I/O", d.device_state_cache_io, "%s",
                d.device_state_cache_io ? "device-side kernels" : "host row copies");
    rec_bool_as(r, "merged_projection", "merged projections", d.merged_projection, "%s",
                d.merged_projection ? "eligible" : "not eligible");
    rec_bool_as(r, "packed_decode", "packed decode", d.packed_decode, "%s",
                d.packed_decode ? "eligible" : "not eligible");
    rec_bool_as(r, "resident_weight_prepare", "resident weight prep", d.resident_weight_prepare, "%s",
                d.resident_weight_prepare ? "on the device at load" : "none (weights used in place)");
    rec_bool_as(r, "weights_in_place", "weights in place", d.weights_in_place, "%s",
                d.weights_in_place ? "yes: weights that keep their stored form are used from host memory"
                                   : "no: every weight is copied into a device allocation");
    rec_bool_as(r, "device_fit_all_weights", "device-fit check", d.device_fit_all_weights, "%s",
                d.device_fit_all_weights ? "before any allocation: every weight + run state"
                                         : "before any allocation: expanded copies + run state (weights in place not "
                                           "counted)");
    rec_object_end(r, true);
    rec_object_end(r, false);
}

static const vt_backend_info *info_of(vt_registry *reg, const char *name, vt_backend_info *out)
{
    for (size_t i = 0; i < vt_registry_backend_count(reg); i++)
        if (vt_registry_backend_info(reg, i, out) == VT_OK && strcmp(out->name, name) == 0 &&
            out->state != VT_BACKEND_SHADOWED)
            return out;
    return NULL;
}

int vtctl_cmd_caps(int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0}};
    bool json = false;
    vtctl_opts o = {"caps", "usage: vtctl caps [BACKEND[:DEV]] [--json]\n", opts, argc, argv};
    int c;
    while ((c = vtctl_option(&o)) > 0)
        json |= c == 'j';
    if (c < 0)
        return o.exit_code;
    if (argc - optind > 1)
        return vtctl_usage_error("caps", "at most one BACKEND[:DEV], got '%s' and '%s'", argv[optind],
                                 argv[optind + 1]);
    const char *spec = optind < argc ? argv[optind] : NULL;

    vt_registry *reg;
    if (!vtctl_open(&reg))
        return VTCTL_EXIT_REFUSED;
    int rc = VTCTL_EXIT_OK;

    /* Which devices: all, all of one backend, or one. */
    vt_device *devs[256];
    size_t n = 0;
    char backend[128] = "";
    if (spec) {
        size_t len = strcspn(spec, ":");
        snprintf(backend, sizeof backend, "%.*s", (int)len, spec);
    }
    if (spec && strchr(spec, ':')) {
        vt_device *d;
        if (vt_registry_find_device(reg, spec, &d) != VT_OK) {
            fprintf(stderr, "vtctl caps: %s\n", vt_last_error());
            vt_registry_close(reg);
            return VTCTL_EXIT_REFUSED;
        }
        devs[n++] = d;
    } else {
        for (size_t i = 0; i < vt_registry_device_count(reg) && n < 256; i++) {
            vt_device *d = vt_registry_device(reg, i);
            if (!spec || strcmp(vt_device_backend_name(d), backend) == 0)
                devs[n++] = d;
        }
    }
    vt_backend_info binfo;
    const vt_backend_info *named = spec ? info_of(reg, backend, &binfo) : NULL;
    if (spec && !named) {
        fprintf(stderr, "vtctl caps: no backend named '%s' (searched %s)\n", backend, vt_registry_search_path(reg));
        vt_registry_close(reg);
        return VTCTL_EXIT_REFUSED;
    }

    json_writer w;
    rec_writer r;
    rec_start(&r, &w, json, 2, 26);
    rec_object_begin(&r, NULL, NULL);
    if (named) {
        rec_str(&r, "backend", NULL, named->name);
        rec_str(&r, "state", NULL, vt_backend_state_name(named->state));
        rec_str(&r, "reason", NULL, named->reason);
    }
    if (named && n == 0)
        rec_text(&r, "%s: %s, 0 devices%s%s\n", named->name,
                 named->state == VT_BACKEND_NO_DEVICES ? "loaded" : vt_backend_state_name(named->state),
                 named->reason[0] ? ": " : "", named->reason);
    else if (n == 0)
        rec_text(&r, "no devices\n");
    rec_array_begin(&r, "devices");
    for (size_t i = 0; i < n; i++) {
        vt_device_caps caps = VT_DEVICE_CAPS_INIT;
        if (vt_device_probe(devs[i], &caps) != VT_OK) {
            fprintf(stderr, "vtctl caps: %s\n", vt_last_error());
            rc = VTCTL_EXIT_REFUSED;
            continue;
        }
        rec_text(&r, "%s", i ? "\n" : "");
        vt_backend_info bi;
        vtctl_write_caps(&r, devs[i], &caps, info_of(reg, vt_device_backend_name(devs[i]), &bi));
    }
    rec_array_end(&r);
    rec_object_end(&r, false);
    rec_finish(&r);
    if (!json)
        vtctl_print_warnings(reg);
    vt_registry_close(reg);
    return rc;
}
