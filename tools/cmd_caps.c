/* cmd_caps.c - `vtctl caps [BACKEND[:DEV]]`: every capability of a device,
 * probed at the call, with the reason behind each yes/no and the staging
 * decisions derived from needs_weight_staging. */
#include "config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "vtctl.h"

/* "q4_0 q8_0" for a keep-quant mask; "(none)" when empty. */
static void format_mask(uint64_t mask, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int t = 0; t < 64 && used < size; t++)
        if ((mask >> t) & 1u)
            used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? " " : "", vt_dtype_name(t));
    if (!used)
        snprintf(buf, size, "(none)");
}

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

void vtctl_json_caps(json_writer *w, vt_device *dev, const vt_device_caps *c)
{
    jw_object_begin(w);
    jw_key(w, "id");
    jw_string(w, vt_device_id(dev));
    jw_key(w, "backend");
    jw_string(w, vt_device_backend_name(dev));
    jw_key(w, "index");
    jw_int(w, vt_device_index(dev));
    jw_key(w, "type");
    jw_uint(w, c->type);
    jw_key(w, "type_name");
    jw_string(w, vt_device_type_name((int)c->type));
    jw_key(w, "name");
    jw_string(w, c->name);
    jw_key(w, "arch");
    jw_string(w, c->arch);
    jw_key(w, "platform");
    jw_string(w, c->platform);
    jw_key(w, "warp_size");
    jw_uint(w, c->warp_size);
    jw_key(w, "compute_units");
    jw_uint(w, c->compute_units);
    jw_key(w, "host_threads");
    jw_uint(w, c->host_threads);
    jw_key(w, "memory_total");
    jw_uint(w, c->memory_total);
    jw_key(w, "memory_free");
    jw_uint(w, c->memory_free);
    jw_key(w, "alloc_alignment");
    jw_uint(w, c->alloc_alignment);
    jw_key(w, "host_addressable");
    jw_bool(w, c->host_addressable);
    jw_key(w, "host_addressable_reason");
    jw_string(w, c->host_addressable_reason);
    jw_key(w, "needs_weight_staging");
    jw_bool(w, c->needs_weight_staging);
    jw_key(w, "sampled_token_readback");
    jw_bool(w, c->sampled_token_readback);
    jw_key(w, "sampled_token_readback_reason");
    jw_string(w, c->sampled_token_readback_reason);
    jw_key(w, "managed_memory_supported");
    jw_bool(w, c->managed_memory_supported);
    jw_key(w, "managed_memory_enabled");
    jw_bool(w, c->managed_memory_enabled);
    jw_key(w, "kernels_unavailable");
    jw_string(w, c->kernels_unavailable);
    jw_key(w, "keep_quant");
    jw_object_begin(w);
    for (int cl = 0; cl < VT_OP_CLASS_COUNT; cl++) {
        jw_key(w, vt_op_class_name(cl));
        jw_array_begin(w);
        for (int t = 0; t < 64; t++)
            if ((c->keep_quant[cl] >> t) & 1u)
                jw_string(w, vt_dtype_name(t));
        jw_array_end(w);
    }
    jw_object_end(w);
    uint32_t nk, no;
    count_ops(dev, &nk, &no);
    jw_key(w, "native_kernels");
    jw_uint(w, nk);
    jw_key(w, "native_ops");
    jw_uint(w, no);
    vt_staging_decisions d = vt_caps_staging_decisions(c);
    jw_key(w, "staging_decisions");
    jw_object_begin(w);
    jw_key(w, "direct_to_device_load");
    jw_bool(w, d.direct_to_device_load);
    jw_key(w, "device_state_cache_io");
    jw_bool(w, d.device_state_cache_io);
    jw_key(w, "merged_projection");
    jw_bool(w, d.merged_projection);
    jw_key(w, "packed_decode");
    jw_bool(w, d.packed_decode);
    jw_key(w, "resident_weight_prepare");
    jw_bool(w, d.resident_weight_prepare);
    jw_key(w, "weights_in_place");
    jw_bool(w, d.weights_in_place);
    jw_key(w, "device_fit_all_weights");
    jw_bool(w, d.device_fit_all_weights);
    jw_object_end(w);
    jw_object_end(w);
}

static void text_caps(vt_device *dev, const vt_device_caps *c, const vt_backend_info *b)
{
    char f[24], t[24], mask[512];
    printf("%s  %s\n", vt_device_id(dev), c->name);
    printf("  %-26s %s (%s)\n", "backend", vt_device_backend_name(dev), b ? b->path : "?");
    printf("  %-26s %s (%u)\n", "device type", vt_device_type_name((int)c->type), c->type);
    printf("  %-26s %s\n", "platform", c->platform);
    printf("  %-26s %s\n", "arch", c->arch);
    printf("  %-26s %u\n", "warp size", c->warp_size);
    printf("  %-26s %u\n", "compute units", c->compute_units);
    if (c->host_threads)
        printf("  %-26s %u\n", "host threads", c->host_threads);
    printf("  %-26s %llu bytes (%s)\n", "memory total", (unsigned long long)c->memory_total,
           vt_format_bytes(c->memory_total, t, sizeof t));
    printf("  %-26s %llu bytes (%s)\n", "memory free", (unsigned long long)c->memory_free,
           vt_format_bytes(c->memory_free, f, sizeof f));
    printf("  %-26s %llu bytes\n", "allocation alignment", (unsigned long long)c->alloc_alignment);
    printf("  %-26s %s: %s\n", "host addressable", c->host_addressable ? "yes" : "no", c->host_addressable_reason);
    printf("  %-26s %s\n", "needs weight staging", c->needs_weight_staging ? "yes" : "no");
    printf("  %-26s %s: %s\n", "sampled token readback", c->sampled_token_readback ? "yes" : "no",
           c->sampled_token_readback_reason);
    printf("  %-26s %s%s\n", "managed memory", c->managed_memory_supported ? "supported" : "not supported",
           c->managed_memory_enabled ? ", ENABLED (VT_ROCM_MANAGED_ALLOC=1 opt-in)" : "");
    if (c->kernels_unavailable[0])
        printf("  %-26s NONE: %s\n", "kernels", c->kernels_unavailable);
    printf("  keep-quant formats (from the kernel table)\n");
    for (int cl = 0; cl < VT_OP_CLASS_COUNT; cl++) {
        format_mask(c->keep_quant[cl], mask, sizeof mask);
        printf("    %-24s %s\n", vt_op_class_name(cl), mask);
    }
    uint32_t nk, no;
    count_ops(dev, &nk, &no);
    printf("  %-26s %u native kernels over %u ops ('vtctl ops %s' lists them)\n", "op table", nk, no,
           vt_device_backend_name(dev));
    vt_staging_decisions d = vt_caps_staging_decisions(c);
    printf("  staging decisions (from needs_weight_staging = %s%s; the loader reads these)\n",
           c->needs_weight_staging ? "yes" : "no", c->managed_memory_enabled ? ", managed allocation" : "");
    printf("    %-24s %s\n", "weight load", d.direct_to_device_load ? "direct to device memory" : "via host memory");
    printf("    %-24s %s\n", "state-cache I/O", d.device_state_cache_io ? "device-side kernels" : "host row copies");
    printf("    %-24s %s\n", "merged projections", d.merged_projection ? "eligible" : "not eligible");
    printf("    %-24s %s\n", "packed decode", d.packed_decode ? "eligible" : "not eligible");
    printf("    %-24s %s\n", "resident weight prep",
           d.resident_weight_prepare ? "on the device at load" : "none (weights used in place)");
    printf("    %-24s %s\n", "weights in place",
           d.weights_in_place ? "yes: weights that keep their stored form are used from host memory"
                              : "no: every weight is copied into a device allocation");
    printf("    %-24s %s\n", "device-fit check",
           d.device_fit_all_weights ? "before any allocation: every weight + run state"
                                    : "before any allocation: expanded copies + run state (weights in place not "
                                      "counted)");
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
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'j')
            json = true;
        else if (c == 'h') {
            printf("usage: vtctl caps [BACKEND[:DEV]] [--json]\n");
            return VTCTL_EXIT_OK;
        } else
            return vtctl_usage_error("caps", "unknown option '%s'", argv[optind - 1]);
    }
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
    if (json) {
        jw_init(&w, stdout);
        jw_object_begin(&w);
        if (named) {
            jw_key(&w, "backend");
            jw_string(&w, named->name);
            jw_key(&w, "state");
            jw_string(&w, vt_backend_state_name((int)named->state));
            jw_key(&w, "reason");
            jw_string(&w, named->reason);
        }
        jw_key(&w, "devices");
        jw_array_begin(&w);
    } else if (named && n == 0) {
        printf("%s: %s, 0 devices%s%s\n", named->name,
               named->state == VT_BACKEND_NO_DEVICES ? "loaded" : vt_backend_state_name((int)named->state),
               named->reason[0] ? ": " : "", named->reason);
    } else if (n == 0) {
        printf("no devices\n");
    }
    for (size_t i = 0; i < n; i++) {
        vt_device_caps caps = {.struct_size = sizeof caps};
        if (vt_device_probe(devs[i], &caps) != VT_OK) {
            fprintf(stderr, "vtctl caps: %s\n", vt_last_error());
            rc = VTCTL_EXIT_REFUSED;
            continue;
        }
        if (json) {
            vtctl_json_caps(&w, devs[i], &caps);
        } else {
            vt_backend_info bi;
            if (i)
                printf("\n");
            text_caps(devs[i], &caps, info_of(reg, vt_device_backend_name(devs[i]), &bi));
        }
    }
    if (json) {
        jw_array_end(&w);
        jw_object_end(&w);
        jw_finish(&w);
    } else {
        vtctl_print_warnings(reg);
    }
    vt_registry_close(reg);
    return rc;
}
