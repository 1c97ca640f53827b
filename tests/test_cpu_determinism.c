/* test_cpu_determinism.c - every kernel of the cpu backend's table (read
 * from the table itself, so kernels added later are covered too) gives
 * bit-identical outputs with VT_NUM_THREADS=1, 2 and 3, on the
 * conformance generators' decode and prefill calls for three seeds. The
 * pool reads VT_NUM_THREADS when the registry is opened, so each thread
 * count opens its own registry, and the device reports the pool's size
 * (caps.host_threads). Exit 77 when another backend is selected. */
#include "config.h"

#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"
#include "test_util.h"

#define N_SEEDS 3
#define N_RUNS  3 /* thread counts 1, 2, 3 */

/* The outputs of one call under one thread count. */
typedef struct run_out {
    uint32_t op;
    vt_sig sig;
    int cls;
    uint64_t seed;
    uint32_t n_out;
    host_array out[VT_MAX_OUTPUTS];
} run_out;

/* Run every (kernel row, class, seed) with n_threads; returns the count. */
static size_t run_all(int n_threads, run_out **outs)
{
    char nt[16];
    snprintf(nt, sizeof nt, "%d", n_threads);
    setenv("VT_NUM_THREADS", nt, 1);
    vt_registry *reg = vt_test_open(NULL, "cpu", 0);
    vt_device *dev = NULL;
    ck_assert_msg(vt_registry_find_device(reg, "cpu:0", &dev) == VT_OK, "%s", vt_last_error());
    /* the runs below really use n_threads: the device says so */
    vt_device_caps caps = VT_DEVICE_CAPS_INIT;
    ck_assert_int_eq(vt_device_probe(dev, &caps), VT_OK);
    ck_assert_uint_eq(caps.host_threads, (uint32_t)n_threads);
    const vt_kernel *k;
    uint32_t nk;
    ck_assert_int_eq(vt_device_kernels(dev, &k, &nk), VT_OK);
    size_t n = 0, cap = (size_t)nk * VTC_N_SHAPE_CLASSES * N_SEEDS;
    *outs = calloc(cap ? cap : 1, sizeof **outs);
    ck_assert_ptr_nonnull(*outs);
    for (uint32_t j = 0; j < nk; j++)
        for (int cls = 0; cls < VTC_N_SHAPE_CLASSES; cls++)
            for (int s = 0; s < N_SEEDS && vtc_class_applies(k[j].op, (vtc_shape_class)cls); s++) {
                uint64_t seed = vt_test_seed() + 1000003ull * (uint64_t)s;
                vtc_case c;
                char why[512] = "", sb[96];
                vt_status st = vtc_case_make(k[j].op, k[j].sig, (vtc_shape_class)cls, seed, &c, why, sizeof why);
                ck_assert_msg(st == VT_OK, "no call for %s %s: %s", vt_op_name(k[j].op),
                              vt_sig_format(k[j].sig, sb, sizeof sb), why);
                run_out *r = &(*outs)[n++];
                r->op = k[j].op;
                r->sig = k[j].sig;
                r->cls = cls;
                r->seed = seed;
                r->n_out = c.n_out;
                st = vtc_case_run(dev, &c, r->out);
                ck_assert_msg(st == VT_OK, "%s %s (%s) with %d threads: %s", vt_op_name(k[j].op),
                              vt_sig_format(k[j].sig, sb, sizeof sb), c.desc, n_threads, vt_last_error());
                vtc_case_free(&c);
            }
    vt_registry_close(reg);
    return n;
}

static void free_runs(run_out *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (uint32_t o = 0; o < r[i].n_out; o++)
            host_array_free(&r[i].out[o]);
    free(r);
}

START_TEST(every_kernel_is_bit_identical_over_thread_counts)
{
    run_out *runs[N_RUNS];
    size_t n[N_RUNS];
    for (int t = 0; t < N_RUNS; t++)
        n[t] = run_all(t + 1, &runs[t]);
    ck_assert_msg(n[0] > 0, "the cpu table has kernels");
    for (int t = 1; t < N_RUNS; t++) {
        ck_assert_uint_eq(n[t], n[0]);
        for (size_t i = 0; i < n[0]; i++) {
            const run_out *a = &runs[0][i], *b = &runs[t][i];
            const vt_op_info *info = vt_op_get_info(a->op);
            char sb[96];
            for (uint32_t o = 0; o < a->n_out; o++) {
                ck_assert_uint_eq(a->out[o].nbytes, b->out[o].nbytes);
                const unsigned char *pa = a->out[o].data, *pb = b->out[o].data;
                for (size_t byte = 0; byte < a->out[o].nbytes; byte++)
                    ck_assert_msg(pa[byte] == pb[byte],
                                  "%s %s %s seed %llu: output %s differs at byte %zu between 1 and %d threads",
                                  info->name, vt_sig_format(a->sig, sb, sizeof sb),
                                  a->cls == VTC_DECODE    ? "decode"
                                  : a->cls == VTC_PREFILL ? "prefill"
                                                          : "wide",
                                  (unsigned long long)a->seed, info->out[o].name, byte, t + 1);
            }
        }
    }
    fprintf(stderr, "%zu calls over the kernels bit-identical with 1, 2 and 3 threads\n", n[0]);
    for (int t = 0; t < N_RUNS; t++)
        free_runs(runs[t], n[t]);
}
END_TEST

/* The pool's size is the cpu device's to say (caps.host_threads): the
 * $VT_NUM_THREADS it read at open, else the CPUs this process may run on;
 * a caller whose struct ends before the member gets nothing written there,
 * and a GPU-like device (cuda-stub) says 0. */
START_TEST(the_cpu_device_reports_its_pool_size)
{
    const char *saved = getenv("VT_NUM_THREADS");
    char *keep = saved ? strdup(saved) : NULL;

    setenv("VT_NUM_THREADS", "5", 1);
    vt_registry *reg = vt_test_open(NULL, "cpu,cuda-stub", 0);
    setenv("VT_NUM_THREADS", "2", 1); /* read at open only: no effect now */
    vt_device *dev = NULL;
    ck_assert_msg(vt_registry_find_device(reg, "cpu:0", &dev) == VT_OK, "%s", vt_last_error());
    vt_device_caps caps = VT_DEVICE_CAPS_INIT;
    ck_assert_int_eq(vt_device_probe(dev, &caps), VT_OK);
    ck_assert_uint_eq(caps.host_threads, 5);

    vt_device_caps old;
    memset(&old, 0xab, sizeof old);
    old.struct_size = (uint32_t)offsetof(vt_device_caps, host_threads);
    ck_assert_int_eq(vt_device_probe(dev, &old), VT_OK);
    ck_assert_uint_eq(old.host_threads, 0xababababu);

    vt_device *stub = NULL;
    if (vt_registry_find_device(reg, "cuda-stub:0", &stub) == VT_OK) {
        vt_device_caps sc = VT_DEVICE_CAPS_INIT;
        ck_assert_int_eq(vt_device_probe(stub, &sc), VT_OK);
        ck_assert_uint_eq(sc.host_threads, 0);
    }
    vt_registry_close(reg);

    unsetenv("VT_NUM_THREADS");
    reg = vt_test_open(NULL, "cpu", 0);
    ck_assert_msg(vt_registry_find_device(reg, "cpu:0", &dev) == VT_OK, "%s", vt_last_error());
    caps = (vt_device_caps)VT_DEVICE_CAPS_INIT;
    ck_assert_int_eq(vt_device_probe(dev, &caps), VT_OK);
    cpu_set_t set;
    CPU_ZERO(&set);
    ck_assert_int_eq(sched_getaffinity(0, sizeof set, &set), 0);
    ck_assert_uint_eq(caps.host_threads, (uint32_t)CPU_COUNT(&set));
    ck_assert_uint_eq(caps.compute_units, (uint32_t)CPU_COUNT(&set));
    vt_registry_close(reg);

    if (keep)
        setenv("VT_NUM_THREADS", keep, 1);
    free(keep);
}
END_TEST

/* A $VT_NUM_THREADS outside 1..1024 or not a whole number is not taken
 * as "the default" in silence: the cpu backend is skipped at the
 * registry's open with the value and the range named (as VT_CPU_SIMD). */
START_TEST(a_bad_thread_count_is_named)
{
    const char *saved = getenv("VT_NUM_THREADS");
    char *keep = saved ? strdup(saved) : NULL;
    static const char *const bad[] = {"0", "1025", "nan", "2x", " 4", "-3", "+4", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("VT_NUM_THREADS", bad[i], 1);
        vt_registry *reg = vt_test_open(NULL, "cpu", 0);
        vt_device *d;
        ck_assert_int_ne(vt_registry_find_device(reg, "cpu:0", &d), VT_OK);
        char want[96];
        snprintf(want, sizeof want, "VT_NUM_THREADS=%s: expected a whole number from 1 to 1024", bad[i]);
        const vt_backend_info info = vt_test_backend(reg, "cpu");
        ck_assert_msg(strstr(info.reason, want), "'%s': reason: %s", bad[i], info.reason);
        vt_registry_close(reg);
    }
    setenv("VT_NUM_THREADS", "", 1); /* empty: the default, as unset */
    vt_registry *reg = vt_test_open(NULL, "cpu", 0);
    vt_device *d;
    ck_assert_msg(vt_registry_find_device(reg, "cpu:0", &d) == VT_OK, "%s", vt_last_error());
    vt_registry_close(reg);
    if (keep)
        setenv("VT_NUM_THREADS", keep, 1);
    else
        unsetenv("VT_NUM_THREADS");
    free(keep);
}
END_TEST

int main(void)
{
    Suite *s;
    TCase *tc;
    int gate = vt_test_suite_begin("cpu", "cpu determinism", "threads", 600, &s, &tc);
    if (gate != 0)
        return gate;
    tcase_add_test(tc, the_cpu_device_reports_its_pool_size);
    tcase_add_test(tc, a_bad_thread_count_is_named);
    tcase_add_test(tc, every_kernel_is_bit_identical_over_thread_counts);
    return vt_test_run_suite(s);
}
