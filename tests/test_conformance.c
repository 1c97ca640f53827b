/* test_conformance.c - the conformance runner itself (tools/conformance.h):
 * a generated call exists for every op and signature of the catalogue and
 * passes the core's operand rules; the comparison catches a perturbed
 * value, NaN, an unwritten (poisoned) output, a moved infinity and a wrong
 * index; vtc_check refuses on the discrete stub, passes on the
 * host-addressable stub's CPU tier, and says "no cpu oracle kernel yet"
 * where the cpu table has no kernel. Exit 77 when another backend is
 * selected. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"
#include "test_util.h"

static vt_device *device(vt_registry *reg, const char *spec)
{
    return vt_test_device(reg, spec);
}

/* Every (op, sig) has a generator whose call the core accepts: it runs,
 * or it is refused as missing (never as a shape error). */
START_TEST(every_signature_has_a_valid_call)
{
    vt_registry *reg = vt_test_open(NULL, "cpu", 0);
    vt_device *cpu = device(reg, "cpu:0");
    uint32_t n = 0;
    for (uint32_t i = 0; i < vt_op_catalog_size(); i++) {
        const vt_op_info *info = vt_op_catalog_entry(i);
        for (uint32_t s = 0; s < info->n_sigs; s++)
            for (int cls = 0; cls < VTC_N_SHAPE_CLASSES; cls++) {
                vtc_case c;
                char why[512], sb[96];
                vt_sig_format(info->sigs[s], sb, sizeof sb);
                if (!vtc_class_applies(info->op, (vtc_shape_class)cls)) {
                    /* refused by name, never generated */
                    ck_assert_int_eq(vtc_case_make(info->op, info->sigs[s], (vtc_shape_class)cls, vt_test_seed(), &c,
                                                   why, sizeof why),
                                     VT_E_UNSUPPORTED);
                    continue;
                }
                vt_status st =
                    vtc_case_make(info->op, info->sigs[s], (vtc_shape_class)cls, vt_test_seed(), &c, why, sizeof why);
                ck_assert_msg(st == VT_OK, "%s %s: %s", info->name, sb, why);
                for (uint32_t o = 0; o < c.n_out; o++)
                    ck_assert_msg(c.out[o].present, "%s %s: output %u declared", info->name, sb, o);
                host_array got[VT_MAX_OUTPUTS];
                st = vtc_case_run(cpu, &c, got);
                ck_assert_msg(st == VT_OK || st == VT_E_OP_MISSING, "%s %s (%s): %s: %s", info->name, sb, c.desc,
                              vt_status_name(st), vt_last_error());
                for (uint32_t o = 0; st == VT_OK && o < c.n_out; o++)
                    host_array_free(&got[o]);
                vtc_case_free(&c);
                n++;
            }
    }
    fprintf(stderr, "%u generated calls accepted by the core\n", n);
    vt_registry_close(reg);
}
END_TEST

/* Run a case on cpu:0 and return the oracle's outputs. */
static void oracle_run(vt_device *cpu, uint32_t op, vt_sig sig, vtc_case *c, host_array *ref)
{
    char why[512];
    ck_assert_int_eq(vtc_case_make(op, sig, VTC_PREFILL, vt_test_seed(), c, why, sizeof why), VT_OK);
    ck_assert_msg(vtc_case_run(cpu, c, ref) == VT_OK, "%s", vt_last_error());
}

static void copy_outputs(const vtc_case *c, const host_array *ref, host_array *got)
{
    for (uint32_t o = 0; o < c->n_out; o++)
        ck_assert_int_eq(host_array_copy(&got[o], &ref[o]), VT_OK);
}

static void free_outputs(const vtc_case *c, host_array *a)
{
    for (uint32_t o = 0; o < c->n_out; o++)
        host_array_free(&a[o]);
}

START_TEST(the_comparison_catches_what_spec_7_forbids)
{
    vt_registry *reg = vt_test_open(NULL, "cpu", 0);
    vt_device *cpu = device(reg, "cpu:0");
    vt_dtype f32 = VT_F32;
    vt_sig s1 = vt_sig_make(1, &f32);
    vtc_case c;
    host_array ref[VT_MAX_OUTPUTS], got[VT_MAX_OUTPUTS];
    vtc_verdict v;

    /* Softmax: tolerance 1e-5 */
    oracle_run(cpu, VT_OP_SOFTMAX, s1, &c, ref);
    copy_outputs(&c, ref, got);
    vtc_compare(&c, got, ref, &v);
    ck_assert_msg(v.pass && v.err == 0, "identical outputs pass: %s", v.detail);
    float *y = got[0].data;
    int64_t n = host_array_elems(&got[0]), at = 0;
    for (int64_t i = 1; i < n; i++) /* the largest entry */
        if (y[i] > y[at])
            at = i;
    y[at] *= 1.5f;
    vtc_compare(&c, got, ref, &v);
    ck_assert_msg(!v.pass && strstr(v.detail, "relative error"), "a perturbed value fails: %s", v.detail);
    y[at] = NAN;
    vtc_compare(&c, got, ref, &v);
    ck_assert_msg(!v.pass && strstr(v.detail, "NaN never passes"), "NaN fails: %s", v.detail);
    memset(got[0].data, 0xff, got[0].nbytes); /* an output never written */
    vtc_compare(&c, got, ref, &v);
    ck_assert_msg(!v.pass, "a poisoned output fails");
    free_outputs(&c, got);
    free_outputs(&c, ref);
    vtc_case_free(&c);

    /* DsaIndexerLogits: -inf outside the windows must match position for position */
    vt_dtype dd[2] = {VT_F32, VT_F32};
    oracle_run(cpu, VT_OP_DSA_INDEXER_LOGITS, vt_sig_make(2, dd), &c, ref);
    copy_outputs(&c, ref, got);
    y = got[0].data;
    n = host_array_elems(&got[0]);
    int64_t inf_at = -1;
    for (int64_t i = 0; i < n && inf_at < 0; i++)
        if (isinf(y[i]))
            inf_at = i;
    if (inf_at >= 0) {
        y[inf_at] = 0.0f;
        vtc_compare(&c, got, ref, &v);
        ck_assert_msg(!v.pass && strstr(v.detail, "infinities must match"), "a moved -inf fails: %s", v.detail);
    }
    free_outputs(&c, got);
    free_outputs(&c, ref);
    vtc_case_free(&c);

    /* TopK: indices exact */
    oracle_run(cpu, VT_OP_TOPK, s1, &c, ref);
    copy_outputs(&c, ref, got);
    ((int32_t *)got[1].data)[0] ^= 1;
    vtc_compare(&c, got, ref, &v);
    ck_assert_msg(!v.pass && strstr(v.detail, "indices[") && strstr(v.detail, "(exact)"), "a wrong index fails: %s",
                  v.detail);
    free_outputs(&c, got);
    free_outputs(&c, ref);
    vtc_case_free(&c);
    vt_registry_close(reg);
}
END_TEST

START_TEST(check_outcomes_by_device)
{
    vt_registry *reg = vt_test_open(NULL, "cpu,cuda-stub", 0);
    vt_device *cpu = device(reg, "cpu:0"), *stub = device(reg, "cuda-stub:0");
    const vt_kernel *k;
    uint32_t nk;
    ck_assert_int_eq(vt_device_kernels(cpu, &k, &nk), VT_OK);
    for (uint32_t i = 0; i < vt_op_catalog_size(); i++) {
        const vt_op_info *info = vt_op_catalog_entry(i);
        for (uint32_t s = 0; s < info->n_sigs; s++) {
            vtc_result r;
            bool oracle = vt_kernel_find(k, nk, info->op, info->sigs[s]) != NULL;
            vtc_check(cpu, cpu, info->op, info->sigs[s], 5, &r);
            ck_assert_msg(r.outcome == (oracle ? VTC_PASS : VTC_NO_ORACLE), "cpu %s: %s: %s", info->name,
                          vtc_outcome_name(r.outcome), r.detail);
            vtc_check(stub, cpu, info->op, info->sigs[s], 5, &r);
            ck_assert_msg(r.outcome == VTC_REFUSED && strstr(r.detail, "not host-addressable"), "stub %s: %s: %s",
                          info->name, vtc_outcome_name(r.outcome), r.detail);
        }
    }
    vt_registry_close(reg);
    /* the host-addressable stub runs every cpu kernel on the CPU tier */
    setenv("VT_CUDA_STUB_HOST_ADDRESSABLE", "1", 1);
    reg = vt_test_open(NULL, "cpu,cuda-stub", 0);
    cpu = device(reg, "cpu:0");
    stub = device(reg, "cuda-stub:0");
    ck_assert_int_eq(vt_device_kernels(cpu, &k, &nk), VT_OK);
    uint64_t runs = 0;
    for (uint32_t j = 0; j < nk; j++) {
        vtc_result r;
        vtc_check(stub, cpu, k[j].op, k[j].sig, 9, &r);
        /* MatMul has a third (wide) case */
        const uint32_t want = k[j].op == VT_OP_MATMUL ? 3 : 2;
        ck_assert_msg(r.outcome == VTC_PASS && r.n_cases == want, "stub %s: %s: %u cases: %s", vt_op_name(k[j].op),
                      vtc_outcome_name(r.outcome), r.n_cases, r.detail);
        runs += want;
    }
    vt_device_stats st = VT_DEVICE_STATS_INIT;
    ck_assert_int_eq(vt_device_stats_get(stub, &st), VT_OK);
    ck_assert_uint_eq(st.cpu_tier_runs, runs); /* counted, never silent */
    vt_registry_close(reg);
}
END_TEST

int main(void)
{
    int gate = vt_test_backend_gate("cpu");
    if (gate != 0)
        return gate;
    vt_test_seed();
    Suite *s = suite_create("conformance runner");
    TCase *tc = tcase_create("conformance");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, every_signature_has_a_valid_call);
    tcase_add_test(tc, the_comparison_catches_what_spec_7_forbids);
    tcase_add_test(tc, check_outcomes_by_device);
    suite_add_tcase(s, tc);
    return vt_test_run_suite(s);
}
