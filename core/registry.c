/* registry.c - opening and closing the registry (discovery in
 * plugin_discovery.c, each plugin's load, vetting and isolation in
 * plugin_loader.c), its warnings, and the lookups of backends and devices
 * (what a device answers is device.c's). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_internal.h"

void vt_registry_warn(vt_registry *reg, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    vt_loader_log(reg->debug, "warning: %s", text);
    char **w = realloc(reg->warnings, (reg->n_warnings + 1) * sizeof *w);
    if (!w)
        return;
    reg->warnings = w;
    char *copy = vt_strdup(text);
    if (copy)
        reg->warnings[reg->n_warnings++] = copy;
}

static vt_status build_devices(vt_registry *reg)
{
    size_t n = 0;
    for (size_t i = 0; i < reg->n_plugins; i++)
        if (reg->plugins[i].state == VT_BACKEND_READY)
            n += reg->plugins[i].n_devices;
    if (!n)
        return VT_OK;
    reg->devices = calloc(n, sizeof *reg->devices);
    if (!reg->devices)
        return vt_set_error(VT_E_NO_MEMORY, "out of memory listing %zu devices", n);
    for (size_t i = 0; i < reg->n_plugins; i++) {
        vt_plugin *p = &reg->plugins[i];
        if (p->state != VT_BACKEND_READY)
            continue;
        if (strcmp(p->name, "cpu") == 0 && !reg->cpu)
            reg->cpu = p;
        for (uint32_t d = 0; d < p->n_devices; d++) {
            vt_device *dev = &reg->devices[reg->n_devices++];
            dev->reg = reg;
            dev->plugin = p;
            dev->index = (int)d;
            snprintf(dev->id, sizeof dev->id, "%s:%u", p->name, d);
            dev->no_kernels = p->no_kernels ? p->no_kernels[d] : NULL;
            atomic_init(&dev->native_runs, 0);
            atomic_init(&dev->cpu_tier_runs, 0);
            atomic_init(&dev->refusals, 0);
            atomic_init(&dev->core_syncs, 0);
            atomic_init(&dev->core_launches, 0);
            pthread_mutex_init(&dev->queue_lock, NULL);
            dev->default_queue = NULL;
        }
    }
    return VT_OK;
}

/* The settings a registry keeps: each option, else its environment
 * variable, read here once (never on a run path). */
static vt_status read_settings(vt_registry *reg, const vt_registry_options *opt)
{
    const char *hide = opt->disable_ops ? opt->disable_ops : getenv("VT_DISABLE_OPS");
    if (hide && *hide && !(reg->disable_ops = vt_strdup(hide)))
        return vt_set_error(VT_E_NO_MEMORY, "out of memory opening the registry");

    reg->isolate_timeout_s = 60;
    if (opt->isolate_timeout_s) {
        if (opt->isolate_timeout_s > 3599)
            return vt_set_error(VT_E_INVALID_ARG, "vt_registry_open: options.isolate_timeout_s %u is not in 1..3599",
                                opt->isolate_timeout_s);
        reg->isolate_timeout_s = opt->isolate_timeout_s;
    } else {
        const char *e = getenv("VT_LOADER_ISOLATE_TIMEOUT");
        int64_t v = 0;
        if (e && *e && !vt_parse_i64(e, 1, 3599, &v))
            return vt_set_error(VT_E_INVALID_ARG,
                                "VT_LOADER_ISOLATE_TIMEOUT='%s' is not a number of seconds in 1..3599", e);
        if (e && *e)
            reg->isolate_timeout_s = (uint32_t)v;
    }

    if (opt->weight_budget_bytes) {
        reg->weight_budget = opt->weight_budget_bytes;
        snprintf(reg->weight_budget_source, sizeof reg->weight_budget_source,
                 "vt_registry_options.weight_budget_bytes=%llu", (unsigned long long)reg->weight_budget);
        return VT_OK;
    }
    const char *env = getenv("VT_DEVICE_WEIGHT_BUDGET_BYTES");
    if (!env || !*env)
        return VT_OK;
    uint64_t v = 0;
    if (!vt_parse_u64(env, &v) || v == 0) {
        reg->weight_budget_error =
            vt_strdup_printf("VT_DEVICE_WEIGHT_BUDGET_BYTES='%s' is not a positive number of bytes", env);
        return reg->weight_budget_error ? VT_OK : vt_set_error(VT_E_NO_MEMORY, "out of memory opening the registry");
    }
    reg->weight_budget = v;
    snprintf(reg->weight_budget_source, sizeof reg->weight_budget_source, "VT_DEVICE_WEIGHT_BUDGET_BYTES=%llu",
             (unsigned long long)v);
    return VT_OK;
}

static void free_settings(vt_registry *reg)
{
    free(reg->disable_ops);
    free(reg->weight_budget_error);
}

static int env_debug(void)
{
    const char *v = getenv("VT_LOADER_DEBUG");
    return v && *v && strcmp(v, "0") != 0;
}

vt_status vt_registry_open(vt_registry **out, const vt_registry_options *options)
{
    if (!out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_registry_open: out is NULL");
    *out = NULL;
    vt_registry_options opt = {sizeof opt, NULL, NULL, -1, 0, VT_TIER_POLICY_ENV};
    if (options) {
        /* Versioned like sqlite3_vfs: an older, shorter struct keeps the
         * defaults for the fields it lacks; a longer one is from the future. */
        if (options->struct_size < sizeof(uint32_t) || options->struct_size > sizeof opt)
            return vt_set_error(VT_E_INVALID_ARG, "vt_registry_open: options.struct_size %u (this libvt knows %zu)",
                                options->struct_size, sizeof opt);
        memcpy(&opt, options, options->struct_size);
    }
    const char *plugin_path = opt.plugin_path ? opt.plugin_path : getenv("VT_PLUGIN_PATH");
    const char *backends = opt.backends ? opt.backends : getenv("VT_BACKENDS");
    bool debug = opt.loader_debug < 0 ? env_debug() : opt.loader_debug != 0;
    const char *iso = getenv("VT_LOADER_ISOLATE");
    bool isolate = (opt.flags & VT_REGISTRY_ISOLATE) || (iso && *iso && strcmp(iso, "0") != 0);

    vt_registry *reg = calloc(1, sizeof *reg);
    if (!reg)
        return vt_set_error(VT_E_NO_MEMORY, "out of memory opening the registry");
    reg->debug = debug;
    reg->on_cpu_tier = opt.on_cpu_tier;
    reg->on_cpu_tier_user = opt.on_cpu_tier_user;
    vt_status st = read_settings(reg, &opt);
    if (st != VT_OK) {
        free_settings(reg);
        free(reg);
        return st;
    }
    /* The tier policy is the registry's, fixed now: the option, else the
     * environment (a bad value is reported by every resolution). */
    if (opt.tier_policy == VT_TIER_POLICY_STRICT) {
        reg->tier_flags = VT_RESOLVE_STRICT;
    } else if (opt.tier_policy == VT_TIER_POLICY_ENV) {
        reg->policy_status = vt_tier_policy_from_env(&reg->tier_flags);
        if (reg->policy_status != VT_OK)
            reg->policy_error = vt_strdup(vt_last_error());
    } else if (opt.tier_policy != VT_TIER_POLICY_PORTABLE) {
        free_settings(reg);
        free(reg);
        return vt_set_error(VT_E_INVALID_ARG, "vt_registry_open: options.tier_policy %u is not a policy",
                            opt.tier_policy);
    }

    vt_ltdl_lock();
    int init_err = lt_dlinit();
    vt_ltdl_unlock();
    if (init_err) {
        free_settings(reg);
        free(reg);
        return vt_set_error(VT_E_PLUGIN, "lt_dlinit failed");
    }

    st = vt_discover(reg, plugin_path, backends, (opt.flags & VT_REGISTRY_ONLY_PLUGIN_PATH) != 0);
    if (st == VT_OK) {
        /* Isolated probes first, all of them, before any plugin runs in this
         * process (device runtimes do not survive a fork after their init). */
        if (isolate)
            for (size_t i = 0; i < reg->n_plugins; i++)
                if (reg->plugins[i].pending)
                    vt_plugin_probe_isolated(reg, &reg->plugins[i], debug);
        for (size_t i = 0; i < reg->n_plugins; i++)
            if (reg->plugins[i].pending)
                vt_plugin_open(reg, &reg->plugins[i], debug);
        st = build_devices(reg);
    }
    if (st != VT_OK) {
        vt_registry_close(reg);
        return st;
    }
    *out = reg;
    return VT_OK;
}

void vt_registry_close(vt_registry *reg)
{
    if (!reg)
        return;
    for (size_t i = 0; i < reg->n_devices; i++)
        vt_device_queues_fini(&reg->devices[i]);
    for (size_t i = 0; i < reg->n_plugins; i++) {
        vt_plugin *p = &reg->plugins[i];
        vt_plugin_unload(p);
        free(p->name);
        free(p->path);
        free(p->reason);
        free(p->description);
    }
    for (size_t i = 0; i < reg->n_warnings; i++)
        free(reg->warnings[i]);
    free(reg->warnings);
    free(reg->plugins);
    free(reg->devices);
    free(reg->search_path);
    free(reg->policy_error);
    free_settings(reg);
    free(reg);
    vt_ltdl_lock();
    lt_dlexit();
    vt_ltdl_unlock();
}

const char *vt_registry_search_path(const vt_registry *reg)
{
    return reg && reg->search_path ? reg->search_path : "";
}

size_t vt_registry_warning_count(const vt_registry *reg)
{
    return reg ? reg->n_warnings : 0;
}

const char *vt_registry_warning(const vt_registry *reg, size_t i)
{
    return reg && i < reg->n_warnings ? reg->warnings[i] : NULL;
}

const char *vt_backend_state_name(int state)
{
    switch (state) {
    case VT_BACKEND_READY: return "ready";
    case VT_BACKEND_NO_DEVICES: return "no devices";
    case VT_BACKEND_SKIPPED: return "skipped";
    case VT_BACKEND_EXCLUDED: return "excluded";
    case VT_BACKEND_SHADOWED: return "shadowed";
    }
    return "unknown";
}

size_t vt_registry_backend_count(const vt_registry *reg)
{
    return reg ? reg->n_plugins : 0;
}

vt_status vt_registry_backend_info(const vt_registry *reg, size_t i, vt_backend_info *out)
{
    if (!reg || !out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_registry_backend_info: NULL argument");
    if (i >= reg->n_plugins)
        return vt_set_error(VT_E_NOT_FOUND, "backend index %zu out of range (%zu candidates)", i, reg->n_plugins);
    const vt_plugin *p = &reg->plugins[i];
    out->name = p->name ? p->name : "";
    out->path = p->path ? p->path : "";
    out->origin = p->origin;
    out->state = p->state;
    out->reason = p->reason ? p->reason : "";
    out->description = p->description ? p->description : "";
    out->abi_found = p->abi_found;
    out->device_count = p->state == VT_BACKEND_READY ? p->n_devices : 0;
    out->device_type = p->iface ? (int)p->iface->device_type : -1;
    return VT_OK;
}

static const vt_plugin *find_loaded(const vt_registry *reg, const char *name, size_t len)
{
    for (size_t i = 0; i < reg->n_plugins; i++) {
        const vt_plugin *p = &reg->plugins[i];
        if (p->iface && p->name && strlen(p->name) == len && strncmp(p->name, name, len) == 0)
            return p;
    }
    return NULL;
}

vt_status vt_registry_backend_kernels(const vt_registry *reg, const char *backend, const vt_kernel **kernels,
                                      uint32_t *n_kernels)
{
    if (!reg || !backend || !kernels || !n_kernels)
        return vt_set_error(VT_E_INVALID_ARG, "vt_registry_backend_kernels: NULL argument");
    const vt_plugin *p = find_loaded(reg, backend, strlen(backend));
    if (!p)
        return vt_set_error(VT_E_NOT_FOUND, "backend '%s' is not loaded", backend);
    *kernels = p->kernels;
    *n_kernels = p->n_kernels;
    return VT_OK;
}

size_t vt_registry_device_count(const vt_registry *reg)
{
    return reg ? reg->n_devices : 0;
}

vt_device *vt_registry_device(vt_registry *reg, size_t i)
{
    return reg && i < reg->n_devices ? &reg->devices[i] : NULL;
}

vt_status vt_registry_find_device(vt_registry *reg, const char *spec, vt_device **out)
{
    if (!reg || !spec || !out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_registry_find_device: NULL argument");
    *out = NULL;
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    int64_t index = 0;
    if (colon) {
        if (!vt_parse_i64(colon + 1, 0, INT32_MAX, &index))
            return vt_set_error(VT_E_INVALID_ARG, "device '%s': the index after ':' must be a number >= 0", spec);
    }
    for (size_t i = 0; i < reg->n_devices; i++) {
        vt_device *d = &reg->devices[i];
        if (strlen(d->plugin->name) == len && strncmp(d->plugin->name, spec, len) == 0 && d->index == index) {
            *out = d;
            return VT_OK;
        }
    }
    for (size_t i = 0; i < reg->n_plugins; i++) {
        const vt_plugin *p = &reg->plugins[i];
        if (p->name && strlen(p->name) == len && strncmp(p->name, spec, len) == 0 && p->state != VT_BACKEND_SHADOWED) {
            if (p->state == VT_BACKEND_READY)
                return vt_set_error(VT_E_NOT_FOUND, "device %s not found: backend %.*s has %u device%s", spec, (int)len,
                                    spec, p->n_devices, p->n_devices == 1 ? "" : "s");
            return vt_set_error(VT_E_NOT_FOUND, "device %s not found: backend %.*s %s: %s", spec, (int)len, spec,
                                p->state == VT_BACKEND_NO_DEVICES ? "has no devices"
                                : p->state == VT_BACKEND_SKIPPED  ? "was skipped"
                                                                  : "was not loaded",
                                p->reason);
        }
    }
    return vt_set_error(VT_E_NOT_FOUND, "device %s not found: no backend named '%.*s' (searched %s)", spec, (int)len,
                        spec, reg->search_path ? reg->search_path : "");
}

vt_plugin *vt_registry_cpu(vt_registry *reg)
{
    return reg ? reg->cpu : NULL;
}

uint32_t vt_registry_tier_policy(const vt_registry *reg)
{
    return reg && (reg->tier_flags & VT_RESOLVE_STRICT) ? VT_TIER_POLICY_STRICT : VT_TIER_POLICY_PORTABLE;
}

vt_status vt_registry_tier_policy_get(const vt_registry *reg, uint32_t *policy)
{
    if (!reg || !policy)
        return vt_set_error(VT_E_INVALID_ARG, "vt_registry_tier_policy_get: NULL argument");
    *policy = vt_registry_tier_policy(reg);
    if (reg->policy_status != VT_OK)
        return vt_set_error(reg->policy_status, "%s", reg->policy_error ? reg->policy_error : "bad tier policy");
    return VT_OK;
}
