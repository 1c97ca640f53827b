/* conformance.c - running generated calls on a device through the public
 * API and judging them against the cpu oracle (conformance.h). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

const char *vtc_outcome_name(vtc_outcome o)
{
    switch (o) {
    case VTC_PASS: return "pass";
    case VTC_FAIL: return "FAIL";
    case VTC_REFUSED: return "refused";
    case VTC_NO_ORACLE: return "no-oracle";
    }
    return "unknown";
}

/* Create a tensor on dev holding a's shape (and data when given). */
static vt_status upload(vt_device *dev, const host_array *a, bool poison, vt_tensor **t)
{
    vt_status st = vt_tensor_create(dev, a->dtype, a->ndim, a->shape, t);
    if (st != VT_OK)
        return st;
    size_t n = (size_t)vt_tensor_nbytes(*t);
    if (a->data)
        return vt_tensor_write(*t, a->data, n);
    if (!poison)
        return VT_OK;
    unsigned char *p = malloc(n ? n : 1);
    if (!p)
        return VT_E_NO_MEMORY;
    memset(p, 0xff, n); /* NaN in every float type, -1 in every integer */
    st = vt_tensor_write(*t, p, n);
    free(p);
    return st;
}

vt_status vtc_case_run(vt_device *dev, const vtc_case *c, host_array *got)
{
    vt_tensor *in[VT_MAX_INPUTS] = {NULL}, *out[VT_MAX_OUTPUTS] = {NULL};
    vt_status st = VT_OK;
    for (uint32_t i = 0; i < c->n_out; i++)
        memset(&got[i], 0, sizeof got[i]);
    for (uint32_t i = 0; i < c->n_in && st == VT_OK; i++)
        if (c->in[i].present)
            st = upload(dev, &c->in[i], false, &in[i]);
    for (uint32_t i = 0; i < c->n_out && st == VT_OK; i++)
        st = upload(dev, &c->out[i], true, &out[i]);
    if (st == VT_OK)
        st = vt_op_run(dev, c->op, (const vt_tensor *const *)in, c->n_in, out, c->n_out,
                       c->params_size ? c->params : NULL, c->params_size);
    for (uint32_t i = 0; i < c->n_out && st == VT_OK; i++) {
        st = host_array_alloc(&got[i], c->out[i].dtype, c->out[i].ndim, c->out[i].shape);
        if (st == VT_OK)
            st = vt_tensor_read(out[i], got[i].data, got[i].nbytes);
    }
    if (st != VT_OK)
        for (uint32_t i = 0; i < c->n_out; i++)
            host_array_free(&got[i]);
    for (uint32_t i = 0; i < VT_MAX_INPUTS; i++)
        vt_tensor_destroy(in[i]);
    for (uint32_t i = 0; i < VT_MAX_OUTPUTS; i++)
        vt_tensor_destroy(out[i]);
    return st;
}

static bool is_int(vt_dtype t)
{
    const vt_dtype_info *ti = vt_dtype_get(t);
    return ti && ti->is_int;
}

/* Flat index -> "[i,j,k]" in the array's shape. */
static const char *where(const host_array *a, int64_t flat, char *buf, size_t size)
{
    int64_t idx[VT_MAX_DIMS] = {0};
    for (int d = (int)a->ndim - 1; d >= 0; d--) {
        int64_t n = a->shape[d] ? a->shape[d] : 1;
        idx[d] = flat % n;
        flat /= n;
    }
    size_t used = (size_t)snprintf(buf, size, "[");
    for (uint32_t d = 0; d < a->ndim && used < size; d++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", d ? "," : "", (long long)idx[d]);
    if (used < size)
        snprintf(buf + used, size - used, "]");
    return buf;
}

/* Exact comparison of one output; false with the detail on a mismatch. */
static bool compare_exact(const char *name, const host_array *g, const host_array *r, char *detail, size_t size)
{
    int64_t n = host_array_elems(r);
    char wb[64];
    for (int64_t i = 0; i < n; i++) {
        if (is_int(r->dtype)) {
            int64_t a = host_array_get_i(g, i), b = host_array_get_i(r, i);
            if (a != b) {
                snprintf(detail, size, "%s%s = %lld, the oracle has %lld (exact)", name, where(r, i, wb, sizeof wb),
                         (long long)a, (long long)b);
                return false;
            }
        } else {
            double a = host_array_get_f(g, i), b = host_array_get_f(r, i);
            if (isnan(a) || isnan(b) || a != b) {
                snprintf(detail, size, "%s%s = %.9g, the oracle has %.9g (exact)", name, where(r, i, wb, sizeof wb), a,
                         b);
                return false;
            }
        }
    }
    return true;
}

/* Relative L2 comparison of one output over its finite entries. */
static bool compare_rel(const char *name, const host_array *g, const host_array *r, double tol, double *err,
                        char *detail, size_t size)
{
    int64_t n = host_array_elems(r);
    double num = 0, den = 0;
    char wb[64];
    for (int64_t i = 0; i < n; i++) {
        double a = host_array_get_f(g, i), b = host_array_get_f(r, i);
        if (isnan(a) || isnan(b)) {
            snprintf(detail, size, "%s%s = %.9g, the oracle has %.9g (NaN never passes)", name,
                     where(r, i, wb, sizeof wb), a, b);
            *err = INFINITY;
            return false;
        }
        if (isinf(a) || isinf(b)) {
            if (a != b) {
                snprintf(detail, size, "%s%s = %.9g, the oracle has %.9g (infinities must match)", name,
                         where(r, i, wb, sizeof wb), a, b);
                *err = INFINITY;
                return false;
            }
            continue;
        }
        num += (a - b) * (a - b);
        den += b * b;
    }
    *err = den > 0 ? sqrt(num / den) : sqrt(num);
    if (*err > tol) {
        snprintf(detail, size, "%s: relative error %.3g > %.1g", name, *err, tol);
        return false;
    }
    return true;
}

void vtc_compare(const vtc_case *c, const host_array *got, const host_array *ref, vtc_verdict *v)
{
    const vt_op_info *info = vt_op_get_info(c->op);
    memset(v, 0, sizeof *v);
    v->pass = true;
    for (uint32_t i = 0; i < c->n_out; i++) {
        const char *name = info ? info->out[i].name : "output";
        if (!got[i].data || !ref[i].data || got[i].nbytes != ref[i].nbytes || got[i].dtype != ref[i].dtype) {
            snprintf(v->detail, sizeof v->detail, "%s: missing or of another size than the oracle's", name);
            v->pass = false;
            return;
        }
        if (c->cmp[i] == VTC_EXACT) {
            if (!compare_exact(name, &got[i], &ref[i], v->detail, sizeof v->detail)) {
                v->pass = false;
                v->err = INFINITY;
                return;
            }
        } else {
            double e = 0;
            if (!compare_rel(name, &got[i], &ref[i], c->tol[i], &e, v->detail, sizeof v->detail)) {
                v->pass = false;
                v->err = e;
                return;
            }
            if (e > v->err)
                v->err = e;
        }
    }
}

static void free_outputs(host_array *a, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        host_array_free(&a[i]);
}

static const char *class_name(vtc_shape_class cls)
{
    return cls == VTC_DECODE ? "decode" : cls == VTC_PREFILL ? "prefill" : "wide";
}

void vtc_check(vt_device *dev, vt_device *oracle, uint32_t op, vt_sig sig, uint64_t seed, vtc_result *r)
{
    memset(r, 0, sizeof *r);
    r->op = op;
    r->sig = sig;
    /* A refusal by the device comes first (the device cannot run it, with
     * or without an oracle), unless the device is the oracle itself. */
    vt_resolution res;
    memset(&res, 0, sizeof res);
    vt_status rs = vt_resolve(dev, op, sig, 0, &res);
    const vt_kernel *k = NULL;
    uint32_t nk = 0;
    bool have_oracle = oracle && vt_device_kernels(oracle, &k, &nk) == VT_OK && vt_kernel_find(k, nk, op, sig);
    if (rs != VT_OK && (dev != oracle || have_oracle)) {
        r->outcome = res.tier == VT_TIER_REFUSED ? VTC_REFUSED : VTC_FAIL;
        snprintf(r->detail, sizeof r->detail, "%s", res.reason[0] ? res.reason : vt_last_error());
        return;
    }
    if (!have_oracle) {
        /* Say why the oracle has none: a kernel hidden by VT_DISABLE_OPS
         * is named as such, by op. */
        vt_resolution ores;
        memset(&ores, 0, sizeof ores);
        r->outcome = VTC_NO_ORACLE;
        if (oracle && vt_resolve(oracle, op, sig, VT_RESOLVE_STRICT, &ores) != VT_OK && ores.reason[0] &&
            strstr(ores.reason, "hidden by VT_DISABLE_OPS"))
            snprintf(r->detail, sizeof r->detail, "no cpu oracle kernel: %s", ores.reason);
        else
            snprintf(r->detail, sizeof r->detail, "no cpu oracle kernel yet");
        return;
    }
    size_t used = 0;
    for (int cls = 0; cls < VTC_N_SHAPE_CLASSES; cls++) {
        if (!vtc_class_applies(op, (vtc_shape_class)cls))
            continue;
        vtc_case c;
        char why[512] = "";
        vt_status st = vtc_case_make(op, sig, (vtc_shape_class)cls, seed, &c, why, sizeof why);
        if (st != VT_OK) {
            r->outcome = VTC_FAIL;
            snprintf(r->detail, sizeof r->detail, "%s: cannot generate a call: %s", class_name(cls), why);
            return;
        }
        host_array ref[VT_MAX_OUTPUTS], got[VT_MAX_OUTPUTS];
        st = vtc_case_run(oracle, &c, ref);
        if (st != VT_OK) {
            r->outcome = VTC_FAIL;
            snprintf(r->detail, sizeof r->detail, "%s (%s): the cpu oracle failed the generated call: %s",
                     class_name(cls), c.desc, vt_last_error());
            vtc_case_free(&c);
            return;
        }
        st = vtc_case_run(dev, &c, got);
        if (st != VT_OK) {
            r->outcome = VTC_FAIL;
            snprintf(r->detail, sizeof r->detail, "%s (%s): %s: %s", class_name(cls), c.desc, vt_status_name(st),
                     vt_last_error());
            free_outputs(ref, c.n_out);
            vtc_case_free(&c);
            return;
        }
        vtc_verdict v;
        vtc_compare(&c, got, ref, &v);
        free_outputs(ref, c.n_out);
        free_outputs(got, c.n_out);
        r->n_cases++;
        if (v.err > r->err)
            r->err = v.err;
        if (!v.pass) {
            r->outcome = VTC_FAIL;
            snprintf(r->detail, sizeof r->detail, "%s (%s): %s", class_name(cls), c.desc, v.detail);
            vtc_case_free(&c);
            return;
        }
        if (used < sizeof r->detail)
            used += (size_t)snprintf(r->detail + used, sizeof r->detail - used, "%s%s: %s", used ? "; " : "",
                                     class_name(cls), c.desc);
        vtc_case_free(&c);
    }
    r->outcome = VTC_PASS;
}
