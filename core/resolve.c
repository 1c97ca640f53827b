/* resolve.c - the tier rules of SPEC 5: native, portable CPU tier, or a
 * refusal that names the op, the device and the reason. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_check.h"
#include "vt_internal.h"

const char *vt_tier_name(int tier)
{
    switch (tier) {
    case VT_TIER_NATIVE: return "native";
    case VT_TIER_CPU: return "cpu-tier";
    case VT_TIER_REFUSED: return "refused";
    }
    return "unknown";
}

vt_status vt_tier_policy_from_env(uint32_t *flags)
{
    const char *v = getenv("VT_TIER_POLICY");
    *flags = 0;
    if (!v || !*v || strcmp(v, "portable") == 0)
        return VT_OK;
    if (strcmp(v, "strict") == 0) {
        *flags = VT_RESOLVE_STRICT;
        return VT_OK;
    }
    return vt_set_error(VT_E_INVALID_ARG, "VT_TIER_POLICY='%s' is not a policy: use strict or portable", v);
}

/* Resolve without touching the device's counters. args, when not NULL,
 * are the checked operands: the native kernel's accepts is asked. */
static vt_status resolve_one(vt_device *dev, vt_op op, vt_sig sig, const vt_op_args *args, uint32_t flags,
                             const vt_device_caps *caps_or_null, vt_resolution *out)
{
    memset(out, 0, sizeof *out);
    out->op = op;
    out->sig = sig;
    out->device = dev;
    out->flags = flags;
    out->shapes_checked = args != NULL;
    const char *name = vt_op_name(op);
    if (!name) {
        out->tier = VT_TIER_REFUSED;
        snprintf(out->reason, sizeof out->reason, "op id %d is not in the catalogue", (int)op);
        return VT_E_NOT_FOUND;
    }
    if (dev->no_kernels) { /* no code for this device: nothing runs, not even the CPU tier */
        out->tier = VT_TIER_REFUSED;
        snprintf(out->reason, sizeof out->reason, "%s (%d) on %s refused: %s", name, (int)op, dev->id, dev->no_kernels);
        return VT_E_OP_MISSING;
    }
    uint32_t n_kernels = 0;
    const vt_kernel *kernels = vt_device_table(dev, &n_kernels);
    const vt_kernel *native = vt_kernel_find(kernels, n_kernels, op, sig);
    char refused[VT_WHY_SIZE] = "";
    const vt_backend_iface *f = dev->plugin->iface;
    if (native && args && VT_IFACE_HAS(f, accepts)) {
        char why[VT_WHY_SIZE] = "";
        if (f->accepts(dev->plugin->ctx, dev->index, native, args, why, sizeof why) != VT_OK) {
            snprintf(refused, sizeof refused, "%s", why[0] ? vt_why_strip_op(why, op) : "no reason given");
            native = NULL;
        }
    }
    if (native) {
        out->tier = VT_TIER_NATIVE;
        out->kernel = native;
        snprintf(out->reason, sizeof out->reason, "native kernel of %s", dev->plugin->name);
        return VT_OK;
    }

    vt_device_caps caps = {.struct_size = sizeof caps};
    if (caps_or_null) {
        caps = *caps_or_null;
    } else {
        vt_status st = vt_device_probe(dev, &caps);
        if (st != VT_OK) {
            out->tier = VT_TIER_REFUSED;
            snprintf(out->reason, sizeof out->reason, "%s", vt_last_error());
            return st;
        }
    }
    char sigbuf[160];
    vt_sig_format(sig, sigbuf, sizeof sigbuf);
    if (vt_op_disabled(dev->reg->disable_ops, dev->plugin->name, op)) {
        size_t len = strlen(sigbuf);
        snprintf(sigbuf + len, sizeof sigbuf - len, " (hidden by VT_DISABLE_OPS)");
    }
    int n = refused[0] ? snprintf(out->reason, sizeof out->reason,
                                  "missing op %s (%d) on %s (device type %u, %s%s%s): the native kernel for %s does "
                                  "not accept these operands: %s",
                                  name, (int)op, dev->id, caps.type, caps.name, caps.arch[0] ? " " : "", caps.arch,
                                  sigbuf, refused)
                       : snprintf(out->reason, sizeof out->reason,
                                  "missing op %s (%d) on %s (device type %u, %s%s%s): no native kernel for %s", name,
                                  (int)op, dev->id, caps.type, caps.name, caps.arch[0] ? " " : "", caps.arch, sigbuf);
    size_t used = n < 0 ? 0 : (size_t)n;
    if (used >= sizeof out->reason)
        used = sizeof out->reason - 1;
    char *tail = out->reason + used;
    size_t room = sizeof out->reason - used;

    vt_plugin *cpu = vt_registry_cpu(dev->reg);
    if (dev->plugin == cpu) {
        out->tier = VT_TIER_REFUSED;
        snprintf(tail, room, "; the cpu backend is the portable tier itself");
    } else if (flags & VT_RESOLVE_STRICT) {
        out->tier = VT_TIER_REFUSED;
        snprintf(tail, room,
                 "; portable CPU tier refused: strict tier policy (VT_TIER_POLICY=strict, or the "
                 "registry's or the call's strict flag)");
    } else if (!caps.host_addressable) {
        out->tier = VT_TIER_REFUSED;
        snprintf(tail, room, "; portable CPU tier refused: device memory is not host-addressable (%s)",
                 caps.host_addressable_reason);
    } else if (!cpu) {
        out->tier = VT_TIER_REFUSED;
        snprintf(tail, room, "; portable CPU tier unavailable: the cpu backend is not loaded");
    } else if (!vt_kernel_find(cpu->kernels, cpu->n_kernels, op, sig)) {
        out->tier = VT_TIER_REFUSED;
        snprintf(tail, room, "; the portable CPU tier has no kernel for %s either", sigbuf);
    } else {
        out->tier = VT_TIER_CPU;
        out->kernel = vt_kernel_find(cpu->kernels, cpu->n_kernels, op, sig);
        snprintf(out->reason, sizeof out->reason,
                 "portable CPU tier: no native kernel for %s; device memory is host-addressable (%s)", sigbuf,
                 caps.host_addressable_reason);
        return VT_OK;
    }
    return VT_E_OP_MISSING;
}

vt_status vt_resolve(vt_device *dev, vt_op op, vt_sig sig, uint32_t flags, vt_resolution *out)
{
    if (!dev || !out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_resolve: NULL argument");
    return vt_resolve_args(dev, op, sig, NULL, flags, out);
}

/* The registry's policy: its flags, or the error of a bad $VT_TIER_POLICY. */
static vt_status registry_policy(const vt_device *dev, uint32_t *flags)
{
    uint32_t policy;
    vt_status st = vt_registry_tier_policy_get(dev->reg, &policy);
    if (st == VT_OK && policy == VT_TIER_POLICY_STRICT)
        *flags |= VT_RESOLVE_STRICT;
    return st;
}

vt_status vt_resolve_args(vt_device *dev, vt_op op, vt_sig sig, const vt_op_args *args, uint32_t flags,
                          vt_resolution *res)
{
    vt_status st = registry_policy(dev, &flags);
    if (st != VT_OK)
        return st;
    st = resolve_one(dev, op, sig, args, flags, NULL, res);
    if (st != VT_OK)
        return vt_set_error(st, "%s", res->reason);
    return VT_OK;
}

/* Fill o from a shape descriptor; data is a placeholder the check sees as
 * "present" (never dereferenced), cleared before accepts is asked. */
static bool operand_from_shape(vt_operand *o, const vt_shape *s)
{
    memset(o, 0, sizeof *o);
    if (!s)
        return true;
    if (s->ndim > VT_MAX_DIMS)
        return false;
    o->data = (void *)s;
    o->dtype = s->dtype;
    o->ndim = s->ndim;
    for (uint32_t i = 0; i < s->ndim; i++) {
        if (s->shape[i] < 0)
            return false;
        o->shape[i] = s->shape[i];
    }
    return vt_dtype_get(s->dtype) && vt_dtype_tensor_bytes(s->dtype, s->ndim, s->shape, &o->nbytes);
}

vt_status vt_resolve_call(vt_device *dev, vt_op op, const vt_shape *const *in, uint32_t n_in,
                          const vt_shape *const *out, uint32_t n_out, const void *params, size_t params_size,
                          uint32_t flags, vt_resolution *res)
{
    if (!dev || !res || (n_in && !in) || (n_out && !out))
        return vt_set_error(VT_E_INVALID_ARG, "vt_resolve_call: NULL argument");
    const char *name = vt_op_name(op);
    if (!name)
        return vt_set_error(VT_E_NOT_FOUND, "vt_resolve_call on %s: op id %d is not in the catalogue", dev->id,
                            (int)op);
    if (n_in > VT_MAX_INPUTS || n_out > VT_MAX_OUTPUTS)
        return vt_set_error(VT_E_INVALID_ARG, "%s (%d) on %s: %u inputs / %u outputs (at most %d / %d)", name, (int)op,
                            dev->id, n_in, n_out, VT_MAX_INPUTS, VT_MAX_OUTPUTS);
    vt_op_args args;
    memset(&args, 0, sizeof args);
    args.struct_size = sizeof args;
    args.op = op;
    args.n_in = n_in;
    args.n_out = n_out;
    args.params = params;
    args.params_size = params_size;
    for (uint32_t i = 0; i < n_in; i++)
        if (!operand_from_shape(&args.in[i], in[i]))
            return vt_set_error(VT_E_INVALID_ARG, "%s (%d) on %s: input %u has a bad shape or dtype", name, (int)op,
                                dev->id, i);
    for (uint32_t i = 0; i < n_out; i++)
        if (!out[i] || !operand_from_shape(&args.out[i], out[i]))
            return vt_set_error(VT_E_INVALID_ARG, "%s (%d) on %s: output %u is NULL or has a bad shape or dtype", name,
                                (int)op, dev->id, i);
    char why[VT_WHY_SIZE] = "";
    vt_sig sig;
    vt_status st = vt_op_check(&args, &sig, why, sizeof why);
    if (st != VT_OK)
        return vt_set_error(st, "%s on %s", why, dev->id);
    for (uint32_t i = 0; i < n_in; i++)
        args.in[i].data = NULL; /* shapes only: nothing to dereference */
    for (uint32_t i = 0; i < n_out; i++)
        args.out[i].data = NULL;
    return vt_resolve_args(dev, op, sig, &args, flags, res);
}

vt_status vt_resolve_plan(vt_device *dev, const vt_plan_op *ops, size_t n_ops, uint32_t flags, vt_resolution *results,
                          size_t *n_refused)
{
    if (!dev || (n_ops && (!ops || !results)) || !n_refused)
        return vt_set_error(VT_E_INVALID_ARG, "vt_resolve_plan: NULL argument");
    *n_refused = 0;
    uint32_t env_flags = 0;
    vt_status st = registry_policy(dev, &env_flags);
    if (st != VT_OK)
        return st;
    vt_device_caps caps = {.struct_size = sizeof caps};
    st = vt_device_probe(dev, &caps); /* one probe for the whole plan */
    if (st != VT_OK)
        return st;
    for (size_t i = 0; i < n_ops; i++) {
        vt_status s = resolve_one(dev, ops[i].op, ops[i].sig, NULL, flags | env_flags, &caps, &results[i]);
        if (s != VT_OK)
            (*n_refused)++;
    }
    if (!*n_refused)
        return VT_OK;
    /* Every refused op, one per line. */
    char msg[8000];
    size_t used = (size_t)snprintf(msg, sizeof msg, "%zu of %zu ops cannot run on %s:", *n_refused, n_ops, dev->id);
    for (size_t i = 0; i < n_ops && used < sizeof msg; i++)
        if (results[i].tier == VT_TIER_REFUSED)
            used += (size_t)snprintf(msg + used, sizeof msg - used, "\n  %s", results[i].reason);
    return vt_set_error(VT_E_OP_MISSING, "%s", msg);
}
