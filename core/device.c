/* device.c - what a device is and how it is doing: its id, backend, kernel
 * table, capabilities (the backend's probe, checked) and counters. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "vt_internal.h"

const char *vt_device_id(const vt_device *dev)
{
    return dev ? dev->id : "";
}

const char *vt_device_backend_name(const vt_device *dev)
{
    return dev ? dev->plugin->name : "";
}

int vt_device_index(const vt_device *dev)
{
    return dev ? dev->index : -1;
}

vt_registry *vt_device_registry(const vt_device *dev)
{
    return dev ? dev->reg : NULL;
}

const vt_kernel *vt_device_table(const vt_device *dev, uint32_t *n)
{
    if (dev->no_kernels) {
        *n = 0;
        return NULL;
    }
    *n = dev->plugin->n_kernels;
    return dev->plugin->kernels;
}

vt_status vt_device_kernels(const vt_device *dev, const vt_kernel **kernels, uint32_t *n_kernels)
{
    if (!dev || !kernels || !n_kernels)
        return vt_set_error(VT_E_INVALID_ARG, "vt_device_kernels: NULL argument");
    *kernels = vt_device_table(dev, n_kernels);
    return VT_OK;
}

int vt_device_type_of(const vt_device *dev)
{
    return dev ? (int)dev->plugin->iface->device_type : -1;
}

vt_status vt_device_probe(vt_device *dev, vt_device_caps *out)
{
    if (!dev || !out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_device_probe: NULL argument");
    vt_device_caps caps;
    memset(&caps, 0, sizeof caps);
    caps.struct_size = sizeof caps;
    char why[VT_WHY_SIZE] = "";
    const vt_backend_iface *f = dev->plugin->iface;
    vt_status st = f->probe(dev->plugin->ctx, dev->index, &caps, why, sizeof why);
    if (st != VT_OK)
        return vt_set_error(st, "probe of %s failed: %s", dev->id, why[0] ? why : "no reason given");
    atomic_store(&dev->host_addressable, caps.host_addressable ? 1 : 2);
    char *bad = vt_staging_claim_problem(dev->id, &caps);
    if (bad) {
        vt_set_error(VT_E_PLUGIN, "%s", bad);
        free(bad);
        return VT_E_PLUGIN;
    }
    uint32_t n_kernels = 0;
    const vt_kernel *kernels = vt_device_table(dev, &n_kernels);
    vt_caps_derive_keep_quant(&caps, kernels, n_kernels);
    /* The caller's struct_size says how much of the struct it has. */
    size_t size = out->struct_size && out->struct_size < sizeof caps ? out->struct_size : sizeof caps;
    caps.struct_size = (uint32_t)size;
    memcpy(out, &caps, size);
    return VT_OK;
}

vt_status vt_device_stats_get(vt_device *dev, vt_device_stats *out)
{
    if (!dev || !out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_device_stats_get: NULL argument");
    vt_device_stats s;
    memset(&s, 0, sizeof s);
    dev->plugin->iface->counters(dev->plugin->ctx, dev->index, &s.backend); /* a v1 plugin leaves syncs, launches 0 */
    if (!vt_plugin_has_queues(dev->plugin)) {                               /* the core ran the queue: its own counts */
        s.backend.syncs += atomic_load(&dev->core_syncs);
        s.backend.launches += atomic_load(&dev->core_launches);
    }
    s.native_runs = atomic_load(&dev->native_runs);
    s.cpu_tier_runs = atomic_load(&dev->cpu_tier_runs);
    s.refusals = atomic_load(&dev->refusals);
    /* The caller's struct_size says how much of the struct it has. */
    size_t size = out->struct_size && out->struct_size < sizeof s ? out->struct_size : sizeof s;
    s.struct_size = (uint32_t)size;
    memcpy(out, &s, size);
    return VT_OK;
}
