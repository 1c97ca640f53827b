/* test_policy.c - the core's rules on a device (SPEC 4-6): named
 * refusals of missing ops, the portable CPU tier on a host-addressable
 * device, strict mode, whole-plan resolution, and the device-fit refusal
 * before any allocation, over what the load allocates there.
 *
 *   test_policy BACKEND        (cuda-stub or rocm; 77 when absent)
 *
 * The host-addressable variant of each device: cuda-stub with
 * VT_CUDA_STUB_HOST_ADDRESSABLE=1, rocm with VT_ROCM_MANAGED_ALLOC=1. A
 * rocm device may be host-addressable as probed (an APU:
 * hipDeviceAttributePageableMemoryAccess=1) or not support managed
 * memory: each test asserts the branch the probe reports. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

static const char *backend;

/* Make the backend's device host-addressable (before opening). */
static void host_addressable_mode(void)
{
    if (!strcmp(backend, "cuda-stub"))
        setenv("VT_CUDA_STUB_HOST_ADDRESSABLE", "1", 1);
    else if (!strcmp(backend, "rocm"))
        setenv("VT_ROCM_MANAGED_ALLOC", "1", 1);
}

static vt_device *device0(vt_registry *reg)
{
    char spec[64];
    snprintf(spec, sizeof spec, "%s:0", backend);
    return vt_test_device(reg, spec);
}

static vt_tensor *make(vt_device *d, vt_dtype t, uint32_t nd, const int64_t *shape)
{
    return vt_test_tensor(d, t, nd, shape, NULL);
}

static bool contains(const char *hay, const char *needle)
{
    return strstr(hay, needle) != NULL;
}

static vt_sig sig2(vt_dtype a, vt_dtype b)
{
    vt_dtype d[2] = {a, b};
    return vt_sig_make(2, d);
}

/* The op the tier tests run: one this device lacks natively while the cpu
 * oracle has it, with a call the test can build and check by hand. */
typedef struct op_case {
    vt_op op;
    vt_sig sig;
    const char *head; /* "IndexSelect (90)" */
    const char *sigtext;
} op_case;

static op_case pick_case(vt_device *d)
{
    const vt_kernel *k;
    uint32_t nk;
    ck_assert_int_eq(vt_device_kernels(d, &k, &nk), VT_OK);
    vt_dtype f32 = VT_F32;
    op_case cases[2] = {
        {VT_OP_INDEX_SELECT, sig2(VT_F32, VT_I32), "IndexSelect (90)", "(f32, i32)"},
        {VT_OP_ARGMAX, vt_sig_make(1, &f32), "Argmax (50)", "(f32)"},
    };
    for (int i = 0; i < 2; i++)
        if (!vt_kernel_find(k, nk, cases[i].op, cases[i].sig))
            return cases[i];
    ck_abort_msg("%s has native IndexSelect and Argmax: no op left to exercise the CPU tier with", vt_device_id(d));
    return cases[0];
}

/* Argmax through vt_op_run, checked against a loop here (ties: lower index). */
static void argmax_case(vt_device *d, vt_rng *r, vt_status want)
{
    int64_t shape[2] = {7, 131}, rows = 7;
    float x[7 * 131];
    for (int i = 0; i < 7 * 131; i++)
        x[i] = (float)(int)vt_rng_below(r, 50); /* many ties */
    vt_tensor *tx = make(d, VT_F32, 2, shape), *ti = make(d, VT_I32, 1, &rows);
    ck_assert_int_eq(vt_tensor_write(tx, x, sizeof x), VT_OK);
    int32_t got[7];
    vt_poison(got, sizeof got);
    ck_assert_int_eq(vt_tensor_write(ti, got, sizeof got), VT_OK);
    const vt_tensor *in[1] = {tx};
    vt_tensor *out[1] = {ti};
    vt_status st = vt_op_run(d, VT_OP_ARGMAX, in, 1, out, 1, NULL, 0);
    ck_assert_msg(st == want, "Argmax: %s: %s", vt_status_name(st), vt_last_error());
    if (want == VT_OK) {
        ck_assert_int_eq(vt_tensor_read(ti, got, sizeof got), VT_OK);
        for (int row = 0; row < 7; row++) {
            int best = 0;
            for (int j = 1; j < 131; j++)
                if (x[row * 131 + j] > x[row * 131 + best])
                    best = j;
            ck_assert_int_eq(got[row], best);
        }
    }
    vt_tensor_destroy(tx);
    vt_tensor_destroy(ti);
}

/* ---- tiers ---- */

START_TEST(missing_op_is_refused_by_name)
{
    vt_registry *reg = vt_test_open(NULL, NULL, 0);
    vt_device *d = device0(reg);
    vt_device_caps caps = VT_DEVICE_CAPS_INIT;
    ck_assert_int_eq(vt_device_probe(d, &caps), VT_OK);
    /* A device the host cannot address refuses a missing op outright; a
     * host-addressable one (an APU) would run it on the CPU tier, so there
     * strict policy makes the refusal. The stub is discrete by default. */
    bool ha = caps.host_addressable;
    if (!strcmp(backend, "cuda-stub"))
        ck_assert(!ha);
    if (ha) { /* the policy is the registry's, read at open */
        setenv("VT_TIER_POLICY", "strict", 1);
        vt_registry_close(reg);
        reg = vt_test_open(NULL, NULL, 0);
        d = device0(reg);
    }
    op_case oc = pick_case(d);
    vt_device_stats before = VT_DEVICE_STATS_INIT, after = VT_DEVICE_STATS_INIT;
    before = vt_test_stats(d);
    float poison[6], got[6];
    vt_poison(poison, sizeof poison);
    if (oc.op == VT_OP_INDEX_SELECT) {
        int64_t ss[2] = {4, 3}, is[1] = {2}, ds[2] = {2, 3};
        vt_tensor *src = make(d, VT_F32, 2, ss), *idx = make(d, VT_I32, 1, is), *dst = make(d, VT_F32, 2, ds);
        ck_assert_int_eq(vt_tensor_write(dst, poison, sizeof poison), VT_OK);
        before = vt_test_stats(d);
        vt_params_index_select p = {0};
        const vt_tensor *in[2] = {src, idx};
        vt_tensor *out[1] = {dst};
        ck_assert_int_eq(vt_op_run(d, VT_OP_INDEX_SELECT, in, 2, out, 1, &p, sizeof p), VT_E_OP_MISSING);
        ck_assert_int_eq(vt_tensor_read(dst, got, sizeof got), VT_OK);
        ck_assert_int_eq(memcmp(got, poison, sizeof got), 0); /* nothing written */
        vt_tensor_destroy(src);
        vt_tensor_destroy(idx);
        vt_tensor_destroy(dst);
    } else {
        vt_rng r;
        vt_rng_init(&r, 40);
        argmax_case(d, &r, VT_E_OP_MISSING);
    }
    char *m = strdup(vt_last_error());
    char head[200];
    snprintf(head, sizeof head, "missing op %s on %s:0 (device type %u, ", oc.head, backend, caps.type);
    ck_assert_msg(contains(m, head), "%s", m);
    snprintf(head, sizeof head, "no native kernel for %s", oc.sigtext);
    ck_assert_msg(contains(m, head), "%s", m);
    if (ha) {
        ck_assert_msg(contains(m, "portable CPU tier refused: strict tier policy"), "%s", m);
        if (!strcmp(backend, "rocm"))
            ck_assert_msg(contains(caps.host_addressable_reason, "hipDeviceAttributePageableMemoryAccess=1"), "%s",
                          caps.host_addressable_reason);
    } else {
        ck_assert_msg(contains(m, "portable CPU tier refused: device memory is not host-addressable"), "%s", m);
        ck_assert_msg(contains(m, caps.host_addressable_reason), "the probe fact is named: %s", m);
        if (!strcmp(backend, "rocm"))
            ck_assert_msg(contains(m, "hipDeviceAttributePageableMemoryAccess=0, hipMalloc"), "%s", m);
    }
    if (!strcmp(backend, "rocm"))
        ck_assert_msg(contains(m, "(hidden by VT_DISABLE_OPS)"), "a hidden kernel says so: %s", m);
    fprintf(stderr, "refusal: %s\n", m);
    free(m);
    after = vt_test_stats(d);
    ck_assert_uint_ge(after.refusals, before.refusals + 1);
    ck_assert_uint_eq(after.cpu_tier_runs, before.cpu_tier_runs);
    vt_registry_close(reg);
    unsetenv("VT_TIER_POLICY");
}
END_TEST

/* IndexSelect on the host-addressable device via the CPU tier, checked
 * against a reference loop written here. */
static void index_select_case(vt_device *d, vt_rng *r, int dim, vt_dtype idx_t)
{
    int64_t ss[3] = {5, 7, 3};
    int64_t n_idx = 9;
    int64_t ds[3] = {5, 7, 3};
    ds[dim] = n_idx;
    int64_t n_src = ss[0] * ss[1] * ss[2], n_dst = ds[0] * ds[1] * ds[2];
    float *sv = malloc(sizeof(float) * (size_t)n_src), *got = malloc(sizeof(float) * (size_t)n_dst);
    vt_rng_fill(r, sv, (size_t)n_src, -5, 5);
    int64_t iv[9];
    int32_t iv32[9];
    for (int j = 0; j < n_idx; j++)
        iv32[j] = (int32_t)(iv[j] = (int64_t)vt_rng_below(r, (uint64_t)ss[dim]));
    vt_tensor *src = make(d, VT_F32, 3, ss), *idx = make(d, idx_t, 1, &n_idx), *dst = make(d, VT_F32, 3, ds);
    ck_assert_int_eq(vt_tensor_write(src, sv, sizeof(float) * (size_t)n_src), VT_OK);
    ck_assert_int_eq(vt_tensor_write(idx, idx_t == VT_I64 ? (void *)iv : (void *)iv32, vt_tensor_nbytes(idx)), VT_OK);
    vt_poison(got, sizeof(float) * (size_t)n_dst);
    ck_assert_int_eq(vt_tensor_write(dst, got, sizeof(float) * (size_t)n_dst), VT_OK);
    vt_params_index_select p = {dim - 3}; /* negative dims count from the end */
    const vt_tensor *in[2] = {src, idx};
    vt_tensor *out[1] = {dst};
    ck_assert_msg(vt_op_run(d, VT_OP_INDEX_SELECT, in, 2, out, 1, &p, sizeof p) == VT_OK, "%s", vt_last_error());
    ck_assert_int_eq(vt_tensor_read(dst, got, sizeof(float) * (size_t)n_dst), VT_OK);
    for (int64_t a = 0; a < ds[0]; a++)
        for (int64_t b = 0; b < ds[1]; b++)
            for (int64_t c = 0; c < ds[2]; c++) {
                int64_t s[3] = {a, b, c};
                s[dim] = iv[(dim == 0 ? a : dim == 1 ? b : c)];
                float want = sv[(s[0] * ss[1] + s[1]) * ss[2] + s[2]];
                float have = got[(a * ds[1] + b) * ds[2] + c];
                ck_assert_msg(memcmp(&want, &have, 4) == 0, "dim %d [%lld,%lld,%lld]: %g want %g", dim, (long long)a,
                              (long long)b, (long long)c, (double)have, (double)want);
            }
    /* An index out of range is named, and nothing is written. */
    iv32[4] = (int32_t)ss[dim];
    iv[4] = ss[dim];
    ck_assert_int_eq(vt_tensor_write(idx, idx_t == VT_I64 ? (void *)iv : (void *)iv32, vt_tensor_nbytes(idx)), VT_OK);
    ck_assert_int_eq(vt_op_run(d, VT_OP_INDEX_SELECT, in, 2, out, 1, &p, sizeof p), VT_E_INVALID_ARG);
    ck_assert_msg(contains(vt_last_error(), "idx[4]"), "%s", vt_last_error());
    free(sv);
    free(got);
    vt_tensor_destroy(src);
    vt_tensor_destroy(idx);
    vt_tensor_destroy(dst);
}

/* With VT_ROCM_MANAGED_ALLOC=1 set: a rocm device without managed memory
 * and without pageable access stays discrete, says the opt-in was ignored,
 * and refuses the missing op instead of serving it on the CPU tier; false
 * then (the branch asserted), true when the device is host-addressable. */
static bool refuses_without_managed(vt_device *d, const vt_device_caps *caps)
{
    if (caps->host_addressable)
        return true;
    ck_assert_msg(!strcmp(backend, "rocm") && !caps->managed_memory_supported, "%s: not host-addressable: %s",
                  vt_device_id(d), caps->host_addressable_reason);
    ck_assert_msg(
        contains(caps->host_addressable_reason, "VT_ROCM_MANAGED_ALLOC=1 ignored: hipDeviceAttributeManagedMemory=0"),
        "%s", caps->host_addressable_reason);
    op_case oc = pick_case(d);
    vt_resolution res;
    ck_assert_int_eq(vt_resolve(d, oc.op, oc.sig, 0, &res), VT_E_OP_MISSING);
    ck_assert_msg(contains(res.reason, "portable CPU tier refused: device memory is not host-addressable"), "%s",
                  res.reason);
    return false;
}

/* What the registry's on_cpu_tier callback was told. */
typedef struct tier_notes {
    int n;
    const vt_device *dev;
    vt_op op;
    char text[200];
} tier_notes;

static void note_cpu_tier(void *user, const vt_device *dev, vt_op op, const char *text)
{
    tier_notes *t = user;
    t->n++;
    t->dev = dev;
    t->op = op;
    snprintf(t->text, sizeof t->text, "%s", text);
}

START_TEST(cpu_tier_serves_a_host_addressable_device)
{
    host_addressable_mode();
    /* CPU-tier runs are reported to the callback and counted; the library
     * prints nothing, whatever $VT_TIER_LOG says (vtctl prints the lines). */
    setenv("VT_TIER_LOG", "1", 1);
    tier_notes notes = {0};
    vt_registry_options ro = {.struct_size = sizeof ro, .loader_debug = 0};
    ro.on_cpu_tier = note_cpu_tier;
    ro.on_cpu_tier_user = &notes;
    vt_registry *reg = NULL;
    ck_assert_msg(vt_registry_open(&reg, &ro) == VT_OK, "%s", vt_last_error());
    vt_device *d = device0(reg);
    vt_device_caps caps = VT_DEVICE_CAPS_INIT;
    ck_assert_int_eq(vt_device_probe(d, &caps), VT_OK);
    if (!refuses_without_managed(d, &caps)) {
        vt_registry_close(reg);
        return;
    }
    ck_assert_msg(caps.host_addressable, "%s", caps.host_addressable_reason);
    ck_assert(!caps.needs_weight_staging);
    if (!strcmp(backend, "rocm")) {
        ck_assert_int_eq(caps.managed_memory_enabled, caps.managed_memory_supported); /* opted in */
        /* The probe names the fact that makes it host-addressable: shared
         * pageable memory (an APU), else the managed opt-in. */
        ck_assert_msg(
            contains(caps.host_addressable_reason, "hipDeviceAttributePageableMemoryAccess=1") ||
                contains(caps.host_addressable_reason, "managed allocation opted in (VT_ROCM_MANAGED_ALLOC=1"),
            "%s", caps.host_addressable_reason);
    } else {
        ck_assert_msg(contains(caps.host_addressable_reason, "VT_CUDA_STUB_HOST_ADDRESSABLE=1"), "%s",
                      caps.host_addressable_reason);
    }
    op_case oc = pick_case(d);
    vt_resolution res;
    ck_assert_int_eq(vt_resolve(d, oc.op, oc.sig, 0, &res), VT_OK);
    ck_assert_int_eq(res.tier, VT_TIER_CPU);
    ck_assert_msg(contains(res.reason, "portable CPU tier"), "%s", res.reason);
    vt_device_stats before = VT_DEVICE_STATS_INIT, after = VT_DEVICE_STATS_INIT;
    before = vt_test_stats(d);
    vt_rng r;
    vt_rng_init(&r, 41);
    char err_path[] = "/tmp/vt-policy-stderr-XXXXXX";
    int err_fd = mkstemp(err_path);
    ck_assert_int_ge(err_fd, 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(err_fd, 2);
    if (oc.op == VT_OP_INDEX_SELECT) {
        index_select_case(d, &r, 0, VT_I32);
        index_select_case(d, &r, 1, VT_I64);
        index_select_case(d, &r, 2, VT_I32);
    } else {
        argmax_case(d, &r, VT_OK);
        argmax_case(d, &r, VT_OK);
        argmax_case(d, &r, VT_OK);
    }
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    off_t printed = lseek(err_fd, 0, SEEK_END);
    close(err_fd);
    unlink(err_path);
    unsetenv("VT_TIER_LOG");
    after = vt_test_stats(d);
    ck_assert_uint_eq(after.cpu_tier_runs, before.cpu_tier_runs + 3); /* counted, never silent */
    ck_assert_int_eq(notes.n, 3);                                     /* and reported, once a run */
    ck_assert_ptr_eq(notes.dev, d);
    ck_assert_int_eq(notes.op, oc.op);
    char want[200];
    snprintf(want, sizeof want, "%s on %s:0 ran on the portable CPU tier", oc.head, backend);
    ck_assert_str_eq(notes.text, want);
    ck_assert_int_eq(printed, 0);
    vt_registry_close(reg);
}
END_TEST

START_TEST(strict_mode_refuses_the_cpu_tier)
{
    host_addressable_mode();
    vt_registry *reg = vt_test_open(NULL, NULL, 0);
    vt_device *d = device0(reg);
    vt_device_caps caps = VT_DEVICE_CAPS_INIT;
    ck_assert_int_eq(vt_device_probe(d, &caps), VT_OK);
    op_case oc = pick_case(d);
    vt_resolution res;
    if (!refuses_without_managed(d, &caps)) {
        vt_registry_close(reg);
        return;
    }
    ck_assert_int_eq(vt_resolve(d, oc.op, oc.sig, VT_RESOLVE_STRICT, &res), VT_E_OP_MISSING);
    ck_assert_int_eq(res.tier, VT_TIER_REFUSED);
    ck_assert_msg(contains(res.reason, "portable CPU tier refused: strict tier policy"), "%s", res.reason);
    /* The policy is the registry's, read at open: a later setenv does not
     * change an open registry, a registry opened under it is strict. */
    setenv("VT_TIER_POLICY", "strict", 1);
    ck_assert_int_eq(vt_resolve(d, oc.op, oc.sig, 0, &res), VT_OK);
    ck_assert_int_eq(res.tier, VT_TIER_CPU);
    vt_registry_close(reg);
    reg = vt_test_open(NULL, NULL, 0);
    d = device0(reg);
    ck_assert_int_eq(vt_registry_tier_policy(reg), VT_TIER_POLICY_STRICT);
    ck_assert_int_eq(vt_resolve(d, oc.op, oc.sig, 0, &res), VT_E_OP_MISSING);
    char head[64];
    snprintf(head, sizeof head, "missing op %s", oc.head);
    ck_assert_msg(contains(vt_last_error(), head) && contains(vt_last_error(), "strict"), "%s", vt_last_error());
    vt_rng r;
    vt_rng_init(&r, 42);
    if (oc.op == VT_OP_ARGMAX) {
        argmax_case(d, &r, VT_E_OP_MISSING);
    } else {
        int64_t ss[1] = {4}, is[1] = {2};
        vt_tensor *src = make(d, VT_F32, 1, ss), *idx = make(d, VT_I32, 1, is), *dst = make(d, VT_F32, 1, is);
        vt_params_index_select p = {0};
        const vt_tensor *in[2] = {src, idx};
        vt_tensor *out[1] = {dst};
        ck_assert_int_eq(vt_op_run(d, VT_OP_INDEX_SELECT, in, 2, out, 1, &p, sizeof p), VT_E_OP_MISSING);
        vt_tensor_destroy(src);
        vt_tensor_destroy(idx);
        vt_tensor_destroy(dst);
    }
    vt_registry_close(reg);
    /* options.tier_policy overrides the environment. */
    vt_registry_options o = {.struct_size = sizeof o, .tier_policy = VT_TIER_POLICY_PORTABLE};
    ck_assert_int_eq(vt_registry_open(&reg, &o), VT_OK);
    d = device0(reg);
    ck_assert_int_eq(vt_resolve(d, oc.op, oc.sig, 0, &res), VT_OK);
    ck_assert_int_eq(res.tier, VT_TIER_CPU);
    vt_registry_close(reg);
    setenv("VT_TIER_POLICY", "sloppy", 1);
    reg = vt_test_open(NULL, NULL, 0);
    d = device0(reg);
    ck_assert_int_eq(vt_resolve(d, oc.op, oc.sig, 0, &res), VT_E_INVALID_ARG);
    ck_assert_msg(contains(vt_last_error(), "VT_TIER_POLICY='sloppy'"), "%s", vt_last_error());
    /* a tool asks the registry, which answers the same refusal */
    uint32_t policy = 0;
    ck_assert_int_eq(vt_registry_tier_policy_get(reg, &policy), VT_E_INVALID_ARG);
    ck_assert_msg(contains(vt_last_error(), "VT_TIER_POLICY='sloppy' is not a policy"), "%s", vt_last_error());
    vt_registry_close(reg);
    /* the option overrides even a bad environment: the registry is the one source */
    o.tier_policy = VT_TIER_POLICY_STRICT;
    ck_assert_int_eq(vt_registry_open(&reg, &o), VT_OK);
    ck_assert_int_eq(vt_registry_tier_policy_get(reg, &policy), VT_OK);
    ck_assert_int_eq(policy, VT_TIER_POLICY_STRICT);
    ck_assert_int_eq(vt_resolve(device0(reg), oc.op, oc.sig, 0, &res), VT_E_OP_MISSING);
    vt_registry_close(reg);
    setenv("VT_TIER_POLICY", "portable", 1);
    reg = vt_test_open(NULL, NULL, 0);
    d = device0(reg);
    ck_assert_int_eq(vt_resolve(d, oc.op, oc.sig, 0, &res), VT_OK);
    ck_assert_int_eq(res.tier, VT_TIER_CPU);
    unsetenv("VT_TIER_POLICY");
    vt_registry_close(reg);
}
END_TEST

START_TEST(a_plan_reports_every_refused_op)
{
    vt_registry *reg = vt_test_open(NULL, NULL, 0);
    vt_device *d = device0(reg);
    const vt_kernel *k;
    uint32_t nk;
    ck_assert_int_eq(vt_device_kernels(d, &k, &nk), VT_OK);
    /* Three ops (their first catalogue signature) this device lacks, and
     * Copy (f32, f16), native or not. */
    vt_plan_op plan[4];
    const vt_op_info *lacking[3];
    int n = 0;
    for (uint32_t i = 0; i < vt_op_catalog_size() && n < 3; i++) {
        const vt_op_info *info = vt_op_catalog_entry(i);
        if (info->op != VT_OP_COPY && !vt_kernel_find(k, nk, info->op, info->sigs[0])) {
            lacking[n] = info;
            plan[n].op = info->op;
            plan[n].sig = info->sigs[0];
            n++;
        }
    }
    ck_assert_int_eq(n, 3);
    plan[3].op = VT_OP_COPY;
    plan[3].sig = sig2(VT_F32, VT_F16);
    bool copy_native = vt_kernel_find(k, nk, VT_OP_COPY, plan[3].sig) != NULL;
    vt_resolution res[4];
    size_t refused = 99;
    vt_device_stats before = VT_DEVICE_STATS_INIT, after = VT_DEVICE_STATS_INIT;
    before = vt_test_stats(d);
    /* On a host-addressable device (an APU) the CPU tier would serve the
     * lacking ops: strict makes them refusals there. */
    vt_device_caps caps = VT_DEVICE_CAPS_INIT;
    ck_assert_int_eq(vt_device_probe(d, &caps), VT_OK);
    uint32_t flags = caps.host_addressable ? VT_RESOLVE_STRICT : 0;
    ck_assert_int_eq(vt_resolve_plan(d, plan, 4, flags, res, &refused), VT_E_OP_MISSING);
    ck_assert_uint_eq(refused, copy_native ? 3 : 4);
    const char *m = vt_last_error();
    char head[128];
    snprintf(head, sizeof head, "%zu of 4 ops cannot run on %s:0", refused, backend);
    ck_assert_msg(contains(m, head), "%s", m);
    for (int i = 0; i < 3; i++) {
        snprintf(head, sizeof head, "missing op %s (%u)", lacking[i]->name, lacking[i]->op);
        ck_assert_msg(contains(m, head), "%s not in: %s", head, m);
        ck_assert_int_eq(res[i].tier, VT_TIER_REFUSED);
    }
    ck_assert_int_eq(res[3].tier, copy_native ? VT_TIER_NATIVE : VT_TIER_REFUSED);
    after = vt_test_stats(d);
    ck_assert_uint_eq(after.backend.allocs, before.backend.allocs);
    fprintf(stderr, "plan refusal:\n%s\n", m);
    vt_registry_close(reg);
}
END_TEST

/* ---- device fit ---- */

/* A small model: Q4_0 experts, a Q4_0 embedding, a Q4_0 projection, an
 * f16 output projection, two f32 1-D tensors. */
static const vt_weight_desc model[] = {
    {"blk.0.ffn_gate_exps.weight", VT_Q4_0, VT_OP_CLASS_MOE_EXPERT, 3, {8, 512, 1024}},
    {"token_embd.weight", VT_Q4_0, VT_OP_CLASS_GATHER, 2, {1000, 256}},
    {"blk.0.attn_q.weight", VT_Q4_0, VT_OP_CLASS_MATMUL, 2, {256, 256}},
    {"output.weight", VT_F16, VT_OP_CLASS_MATMUL, 2, {1000, 256}},
    {"blk.0.attn_norm.weight", VT_F32, VT_OP_CLASS_NONE, 1, {256}},
    {"blk.0.ssm_a", VT_F32, VT_OP_CLASS_NONE, 1, {7}},
};
#define N_MODEL (sizeof model / sizeof model[0])

START_TEST(budget_one_refuses_without_allocating)
{
    setenv("VT_DEVICE_WEIGHT_BUDGET_BYTES", "1", 1);
    vt_registry *reg = vt_test_open(NULL, NULL, 0);
    unsetenv("VT_DEVICE_WEIGHT_BUDGET_BYTES"); /* read once, at open */
    vt_device *d = device0(reg);
    vt_device_stats before = VT_DEVICE_STATS_INIT, after = VT_DEVICE_STATS_INIT;
    before = vt_test_stats(d);
    /* Every weight copied onto the device (what a device that stages
     * weights does anyway): the split by staging decision is below. */
    vt_fit_options o = {sizeof o, VT_EXPAND_F16, 0, NULL, 0, "tiny.gguf", VT_FIT_NO_IN_PLACE};
    vt_fit_report rep;
    vt_weight_plan plans[N_MODEL];
    ck_assert_int_eq(vt_fit_plan(d, model, N_MODEL, &o, plans, &rep), VT_E_DOES_NOT_FIT);
    const char *m = vt_last_error();
    char head[96];
    snprintf(head, sizeof head, "tiny.gguf does not fit on %s:0", backend);
    ck_assert_msg(contains(m, head), "%s", m);
    ck_assert_msg(contains(m, "budget 1 bytes (1 B) from VT_DEVICE_WEIGHT_BUDGET_BYTES=1"), "%s", m);
    ck_assert_msg(contains(m, "largest: blk.0.ffn_gate_exps.weight"), "%s", m);
    ck_assert_msg(contains(m, "nothing was allocated"), "%s", m);
    ck_assert(rep.checked && !rep.fits);
    ck_assert_uint_eq(rep.budget_bytes, 1);
    after = vt_test_stats(d);
    ck_assert_uint_eq(after.backend.allocs, before.backend.allocs);
    ck_assert_uint_eq(after.backend.live_bytes, before.backend.live_bytes);
    fprintf(stderr, "fit refusal: %s\n", m);
    vt_registry_close(reg);
    /* A malformed environment value is named, not guessed at. */
    setenv("VT_DEVICE_WEIGHT_BUDGET_BYTES", "12x", 1);
    reg = vt_test_open(NULL, NULL, 0);
    d = device0(reg);
    ck_assert_int_eq(vt_fit_plan(d, model, N_MODEL, &o, plans, &rep), VT_E_INVALID_ARG);
    ck_assert_msg(contains(vt_last_error(), "VT_DEVICE_WEIGHT_BUDGET_BYTES='12x'"), "%s", vt_last_error());
    vt_registry_close(reg);
    /* The registry option overrides the environment. */
    vt_registry_options ro = {.struct_size = sizeof ro, .loader_debug = 0, .weight_budget_bytes = 1};
    ck_assert_msg(vt_registry_open(&reg, &ro) == VT_OK, "%s", vt_last_error());
    unsetenv("VT_DEVICE_WEIGHT_BUDGET_BYTES");
    d = device0(reg);
    ck_assert_int_eq(vt_fit_plan(d, model, N_MODEL, &o, plans, &rep), VT_E_DOES_NOT_FIT);
    ck_assert_msg(contains(vt_last_error(), "budget 1 bytes (1 B) from vt_registry_options.weight_budget_bytes=1"),
                  "%s", vt_last_error());
    vt_registry_close(reg);
}
END_TEST

START_TEST(forced_expansion_costs_the_expanded_size)
{
    vt_registry *reg = vt_test_open(NULL, NULL, 0);
    vt_device *d = device0(reg);
    vt_device_caps caps = VT_DEVICE_CAPS_INIT;
    ck_assert_int_eq(vt_device_probe(d, &caps), VT_OK);
    ck_assert_uint_eq(caps.alloc_alignment, 256);
    bool keeps = vt_caps_keeps_quant(&caps, VT_OP_CLASS_MOE_EXPERT, VT_Q4_0) &&
                 vt_caps_keeps_quant(&caps, VT_OP_CLASS_GATHER, VT_Q4_0) &&
                 vt_caps_keeps_quant(&caps, VT_OP_CLASS_MATMUL, VT_Q4_0);
    vt_device_stats before = VT_DEVICE_STATS_INIT, after = VT_DEVICE_STATS_INIT;
    before = vt_test_stats(d);
    /* Hand arithmetic of every weight copied onto the device (in place:
     * the_fit_counts_what_staging_allocates). */
    vt_fit_options o = {sizeof o, VT_EXPAND_F16, 4000000, "--budget", 0, "tiny.gguf", VT_FIT_NO_IN_PLACE};
    vt_fit_report rep;
    vt_weight_plan plans[N_MODEL];
    if (keeps) {
        /* A device with native q4_0 kernels for every class keeps them
         * (hand arithmetic, alignment 256):
         *   experts  8*512*(1024/32)*18 = 2359296
         *   embd     1000*(256/32)*18   =  144000 -> padded 144128
         *   attn_q   256*(256/32)*18    =   36864
         *   output   f16 1000*256*2     =  512000
         *   norm     256*4 = 1024, ssm_a 28 -> 256 */
        ck_assert_int_eq(vt_fit_plan(d, model, N_MODEL, &o, plans, &rep), VT_OK);
        ck_assert_int_eq(plans[0].residency, VT_RESIDENCY_KEEP_QUANT);
        ck_assert_uint_eq(plans[0].resident_bytes, 2359296);
        ck_assert_uint_eq(plans[1].resident_bytes, 144128);
        ck_assert_uint_eq(rep.keep_quant_bytes, 2359296 + 144128 + 36864);
        ck_assert_uint_eq(rep.expanded_bytes, 512000);
        ck_assert_uint_eq(rep.f32_bytes, 1024 + 256);
        ck_assert_uint_eq(rep.needed_bytes, 3053568);
        ck_assert_uint_eq(rep.n_forced, 0);
        /* The same model with the experts in a format it does not keep
         * would cost their expanded size: q8_1 is not one vt can expand. */
        vt_weight_desc odd[1] = {{"x.weight", VT_Q8_1, VT_OP_CLASS_MATMUL, 2, {4, 32}}};
        ck_assert_int_eq(vt_fit_plan(d, odd, 1, &o, NULL, &rep), VT_E_UNSUPPORTED);
        ck_assert_msg(contains(vt_last_error(), "'x.weight' is q8_1"), "%s", vt_last_error());
        o.budget_bytes = 3000000;
        ck_assert_int_eq(vt_fit_plan(d, model, N_MODEL, &o, plans, &rep), VT_E_DOES_NOT_FIT);
        ck_assert_msg(contains(vt_last_error(), "keep-quant 2.4 MiB"), "%s", vt_last_error());
    } else {
        /* Hand arithmetic, alignment 256, nothing admitted: every q4_0
         * tensor expands to f16 at 2 bytes per element (32*2/18 = 3.56x).
         *   experts  8*512*1024*2 = 8388608   (file 2359296)
         *   embd     1000*256*2   =  512000
         *   attn_q   256*256*2    =  131072
         *   output   1000*256*2   =  512000
         *   norm     256*4        =    1024
         *   ssm_a    7*4 = 28 -> padded 256  */
        ck_assert_int_eq(vt_fit_plan(d, model, N_MODEL, &o, plans, &rep), VT_E_DOES_NOT_FIT);
        ck_assert_uint_eq(plans[0].stored_bytes, 2359296);
        ck_assert_uint_eq(plans[0].resident_bytes, 8388608);
        ck_assert(plans[0].forced_expand && plans[0].residency == VT_RESIDENCY_EXPAND);
        ck_assert_uint_eq(plans[0].resident_dtype, VT_F16);
        ck_assert_uint_eq(plans[5].resident_bytes, 256);
        ck_assert_uint_eq(rep.keep_quant_bytes, 0);
        ck_assert_uint_eq(rep.expanded_bytes, 8388608 + 512000 + 131072 + 512000);
        ck_assert_uint_eq(rep.f32_bytes, 1024 + 256);
        ck_assert_uint_eq(rep.needed_bytes, 9544960);
        ck_assert_uint_eq(rep.n_forced, 3);
        ck_assert_uint_eq(rep.forced_formats, 1ull << VT_Q4_0);
        const char *m = vt_last_error();
        ck_assert_msg(contains(m, "needs 9544960 bytes"), "%s", m);
        ck_assert_msg(
            contains(m, "expansion to f16 forced for q4_0 (3 tensors; not admitted for matmul gather moe-expert)"),
            "%s", m);
        ck_assert_msg(contains(m, "from --budget (4000000 bytes)"), "%s", m);
    }
    /* bf16 expansion costs the same; f32 twice as much. */
    o.expand = VT_EXPAND_F32;
    o.budget_bytes = 1ull << 40;
    ck_assert_int_eq(vt_fit_plan(d, model, N_MODEL, &o, plans, &rep), VT_OK);
    ck_assert_uint_eq(plans[0].resident_bytes, keeps ? 2359296 : 8388608 * 2);
    ck_assert(rep.fits && rep.checked);
    /* The probed budget: free memory minus max(5% of total, 512 MiB). */
    uint64_t budget;
    char source[192];
    ck_assert_int_eq(vt_fit_budget(d, &budget, source, sizeof source), VT_OK);
    ck_assert_msg(contains(source, "probed free memory"), "%s", source);
    uint64_t headroom = caps.memory_total / 100 * 5 > (512ull << 20) ? caps.memory_total / 100 * 5 : 512ull << 20;
    ck_assert_msg(budget <= caps.memory_total - headroom, "budget %llu, total %llu", (unsigned long long)budget,
                  (unsigned long long)caps.memory_total);
    after = vt_test_stats(d);
    ck_assert_uint_eq(after.backend.allocs, before.backend.allocs);
    vt_registry_close(reg);
}
END_TEST

/* Keep-quant where the kernel table admits it (the planning double), and
 * the same plan refused where it does not (cuda-stub). */
START_TEST(q4_0_experts_fit_keep_quant_but_not_expanded)
{
    char *dir = vt_test_mkdtemp();
    char link[1024];
    snprintf(link, sizeof link, "%s/vt_test_quantdev.so", dir);
    ck_assert_int_eq(symlink(TEST_PLUGIN_DIR "/vt_test_quantdev.so", link), 0);
    vt_registry *reg = vt_test_open(dir, NULL, VT_REGISTRY_ONLY_PLUGIN_PATH);
    vt_device *q = NULL;
    ck_assert_msg(vt_registry_find_device(reg, "test-quantdev:0", &q) == VT_OK, "%s", vt_last_error());
    vt_device_caps caps = VT_DEVICE_CAPS_INIT;
    ck_assert_int_eq(vt_device_probe(q, &caps), VT_OK);
    ck_assert(caps.needs_weight_staging);
    ck_assert(vt_caps_keeps_quant(&caps, VT_OP_CLASS_MOE_EXPERT, VT_Q4_0));
    ck_assert(!vt_caps_keeps_quant(&caps, VT_OP_CLASS_MOE_EXPERT, VT_Q8_0));
    /* Hand arithmetic, alignment 64:
     *   experts keep  8*512*(1024/32)*18 = 2359296
     *   embd    keep  1000*(256/32)*18   =  144000
     *   attn_q  keep  256*(256/32)*18    =   36864
     *   output  f16   1000*256*2         =  512000
     *   norm    f32   256*4              =    1024
     *   ssm_a   f32   28 -> 64                       */
    vt_fit_options o = {sizeof o, VT_EXPAND_F16, 4000000, "--budget", 0, "tiny.gguf"};
    vt_fit_report rep;
    vt_weight_plan plans[N_MODEL];
    ck_assert_msg(vt_fit_plan(q, model, N_MODEL, &o, plans, &rep) == VT_OK, "%s", vt_last_error());
    ck_assert_uint_eq(rep.keep_quant_bytes, 2359296 + 144000 + 36864);
    ck_assert_uint_eq(rep.expanded_bytes, 512000);
    ck_assert_uint_eq(rep.f32_bytes, 1024 + 64);
    ck_assert_uint_eq(rep.needed_bytes, 3053248);
    ck_assert_uint_eq(rep.n_keep_quant, 3);
    ck_assert_uint_eq(rep.n_forced, 0);
    ck_assert(rep.fits && rep.checked);
    ck_assert_int_eq(plans[0].residency, VT_RESIDENCY_KEEP_QUANT);
    ck_assert_uint_eq(plans[0].resident_dtype, VT_Q4_0);
    ck_assert_int_eq(plans[3].residency, VT_RESIDENCY_EXPAND);
    /* Run state counts against the same budget. */
    o.run_bytes = 1000000;
    ck_assert_int_eq(vt_fit_plan(q, model, N_MODEL, &o, plans, &rep), VT_E_DOES_NOT_FIT);
    ck_assert_msg(contains(vt_last_error(), "run state"), "%s", vt_last_error());
    vt_registry_close(reg);
    vt_test_rmtree(dir);
    free(dir);

    /* The same plan on the stub, which admits no block format: refused. */
    reg = vt_test_open(NULL, NULL, 0);
    vt_device *d = device0(reg);
    o.run_bytes = 0;
    ck_assert_int_eq(vt_fit_plan(d, model, N_MODEL, &o, plans, &rep), VT_E_DOES_NOT_FIT);
    ck_assert_uint_eq(rep.needed_bytes, 9544960);
    vt_registry_close(reg);
}
END_TEST

/* The fit counts what staging will allocate on the device, from the
 * staging decisions of its caps: every weight where the device stages
 * weights or allocates managed memory (rocm with VT_ROCM_MANAGED_ALLOC=1),
 * only the copies (expanded weights) where weights are used in place (the
 * host-addressable stub, an APU); budget 1 refuses exactly the loads that
 * allocate. */
static void fit_follows_staging(void)
{
    setenv("VT_DEVICE_WEIGHT_BUDGET_BYTES", "1", 1); /* read at open; used where the fit options leave it */
    vt_registry *reg = vt_test_open(NULL, NULL, 0);
    vt_device *d = device0(reg);
    vt_device_caps caps = VT_DEVICE_CAPS_INIT;
    ck_assert_int_eq(vt_device_probe(d, &caps), VT_OK);
    vt_staging_decisions sd = vt_caps_staging_decisions(&caps);
    ck_assert_int_eq(sd.weights_in_place, !caps.needs_weight_staging && !caps.managed_memory_enabled);
    ck_assert_int_eq(sd.device_fit_all_weights, !sd.weights_in_place);
    vt_device_stats before = VT_DEVICE_STATS_INIT, after = VT_DEVICE_STATS_INIT;
    before = vt_test_stats(d);
    vt_fit_options o = {sizeof o, VT_EXPAND_F16, 1ull << 40, "--budget", 0, "tiny.gguf", 0};
    vt_weight_plan plans[N_MODEL];
    vt_fit_report rep;
    ck_assert_msg(vt_fit_plan(d, model, N_MODEL, &o, plans, &rep) == VT_OK, "%s", vt_last_error());
    uint64_t in_place = 0, copied = 0;
    uint32_t n_in_place = 0;
    for (size_t i = 0; i < N_MODEL; i++) {
        bool want = sd.weights_in_place && plans[i].resident_dtype == model[i].dtype;
        ck_assert_msg(plans[i].in_place == want, "%s: in place %d", model[i].name, plans[i].in_place);
        if (want) {
            in_place += plans[i].resident_bytes;
            n_in_place++;
        } else {
            copied += plans[i].resident_bytes;
        }
    }
    ck_assert_uint_eq(rep.in_place_bytes, in_place);
    ck_assert_uint_eq(rep.n_in_place, n_in_place);
    ck_assert_uint_eq(rep.weight_bytes, in_place + copied);
    ck_assert_uint_eq(rep.needed_bytes, copied);
    ck_assert_int_eq(rep.checked, copied > 0);
    if (caps.needs_weight_staging || caps.managed_memory_enabled)
        ck_assert_uint_eq(in_place, 0);
    if (!strcmp(backend, "cuda-stub") && caps.host_addressable) /* no format admitted: q4_0 expands, f16/f32 stay */
        ck_assert(n_in_place == 3 && copied > 0);
    o.budget_bytes = 0;
    vt_status st = vt_fit_plan(d, model, N_MODEL, &o, plans, &rep);
    ck_assert_msg(st == (copied ? VT_E_DOES_NOT_FIT : VT_OK), "%s: %s", vt_status_name(st), vt_last_error());
    if (in_place && copied)
        ck_assert_msg(contains(vt_last_error(), "used in place from host memory"), "%s", vt_last_error());
    o.flags = VT_FIT_NO_IN_PLACE; /* every weight copied: counted, refused */
    ck_assert_int_eq(vt_fit_plan(d, model, N_MODEL, &o, plans, &rep), VT_E_DOES_NOT_FIT);
    ck_assert_uint_eq(rep.needed_bytes, rep.weight_bytes);
    ck_assert_uint_eq(rep.n_in_place, 0);
    unsetenv("VT_DEVICE_WEIGHT_BUDGET_BYTES");
    after = vt_test_stats(d);
    ck_assert_uint_eq(after.backend.allocs, before.backend.allocs);
    fprintf(stderr, "%s (%s): %u weights in place (%llu bytes), %llu bytes allocated\n", vt_device_id(d),
            caps.host_addressable_reason, n_in_place, (unsigned long long)in_place, (unsigned long long)copied);
    vt_registry_close(reg);
}

START_TEST(the_fit_counts_what_staging_allocates)
{
    fit_follows_staging();
}
END_TEST

START_TEST(the_fit_counts_what_staging_allocates_host_addressable)
{
    host_addressable_mode();
    fit_follows_staging();
}
END_TEST

START_TEST(bad_weight_descriptors_are_named)
{
    vt_registry *reg = vt_test_open(NULL, NULL, 0);
    vt_device *d = device0(reg);
    vt_weight_desc bad[2] = {{"ok", VT_F16, VT_OP_CLASS_MATMUL, 2, {4, 32}}, {"odd.weight", VT_Q4_0, 0, 2, {4, 33}}};
    vt_fit_report rep;
    ck_assert_int_eq(vt_fit_plan(d, bad, 2, NULL, NULL, &rep), VT_E_INVALID_ARG);
    ck_assert_msg(contains(vt_last_error(), "weight 1 'odd.weight'"), "%s", vt_last_error());
    bad[1].dtype = 4; /* removed q4_2 */
    bad[1].shape[1] = 32;
    ck_assert_int_eq(vt_fit_plan(d, bad, 2, NULL, NULL, &rep), VT_E_INVALID_ARG);
    ck_assert_msg(contains(vt_last_error(), "removed(4)"), "%s", vt_last_error());
    vt_registry_close(reg);
}
END_TEST

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_policy BACKEND\n");
        return 2;
    }
    backend = argv[1];
    /* rocm has every catalogue op natively: hide four so the tier and
     * refusal paths have ops to exercise (the refusal names the switch). */
    if (!strcmp(backend, "rocm"))
        setenv("VT_DISABLE_OPS", "rocm:IndexSelect,rocm:Argmax,rocm:TopK,rocm:MoeRouter", 1);
    Suite *s;
    TCase *tc;
    int gate = vt_test_suite_begin(backend, backend, "policy", 300, &s, &tc);
    if (gate != 0)
        return gate;
    tcase_add_test(tc, missing_op_is_refused_by_name);
    tcase_add_test(tc, cpu_tier_serves_a_host_addressable_device);
    tcase_add_test(tc, strict_mode_refuses_the_cpu_tier);
    tcase_add_test(tc, a_plan_reports_every_refused_op);
    tcase_add_test(tc, budget_one_refuses_without_allocating);
    tcase_add_test(tc, forced_expansion_costs_the_expanded_size);
    tcase_add_test(tc, bad_weight_descriptors_are_named);
    tcase_add_test(tc, the_fit_counts_what_staging_allocates);
    tcase_add_test(tc, the_fit_counts_what_staging_allocates_host_addressable);
    if (!strcmp(backend, "cuda-stub"))
        tcase_add_test(tc, q4_0_experts_fit_keep_quant_but_not_expanded);
    return vt_test_run_suite(s);
}
