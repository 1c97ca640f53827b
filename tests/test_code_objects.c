/* test_code_objects.c - a device whose backend binary holds no code for
 * its arch (the rocm probe's hipErrorNoBinaryForGpu) stays listed, runs
 * none of the backend's kernels, and every op on it is refused with the
 * probe's text: no native kernel, no keep-quant format, no CPU tier. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

#ifndef TEST_PLUGIN_DIR
#error "TEST_PLUGIN_DIR must point at the built test plugins"
#endif

static const char nocode_text[] = "vt_test_nocode.so has no code object for test (built for gfx90a,gfx1030): "
                                  "reconfigure with --with-hip-arch=test";

/* A registry over a private directory holding links to the named plugins. */
static vt_registry *open_over(char **dir, const char *const *files, size_t n)
{
    *dir = vt_test_mkdtemp();
    for (size_t i = 0; i < n; i++) {
        char target[1024], link[1024];
        snprintf(target, sizeof target, "%s/%s", TEST_PLUGIN_DIR, files[i]);
        snprintf(link, sizeof link, "%s/%s", *dir, files[i]);
        ck_assert_msg(symlink(target, link) == 0, "symlink %s", link);
    }
    return vt_test_open(*dir, NULL, VT_REGISTRY_ONLY_PLUGIN_PATH);
}

static void close_over(vt_registry *reg, char *dir)
{
    vt_registry_close(reg);
    vt_test_rmtree(dir);
    free(dir);
}

START_TEST(a_device_without_code_runs_none_of_its_kernels)
{
    static const char *const files[] = {"vt_test_quantdev.so", "vt_test_nocode.so"};
    char *dir = NULL;
    vt_registry *reg = open_over(&dir, files, 2);
    vt_device *ok = NULL, *nc = NULL;
    ck_assert_int_eq(vt_registry_find_device(reg, "test-quantdev:0", &ok), VT_OK);
    ck_assert_int_eq(vt_registry_find_device(reg, "test-nocode:0", &nc), VT_OK); /* still listed */

    /* The same kernel table: native on the control, hidden on the other. */
    const vt_kernel *k = NULL;
    uint32_t n = 0, n_ok = 0;
    ck_assert_int_eq(vt_device_kernels(ok, &k, &n_ok), VT_OK);
    ck_assert_uint_eq(n_ok, 3);
    const vt_kernel *table = k;
    ck_assert_int_eq(vt_device_kernels(nc, &k, &n), VT_OK);
    ck_assert_uint_eq(n, 0);

    vt_device_caps caps = VT_DEVICE_CAPS_INIT;
    ck_assert_int_eq(vt_device_probe(ok, &caps), VT_OK);
    ck_assert_str_eq(caps.kernels_unavailable, "");
    ck_assert_uint_ne(caps.keep_quant[VT_OP_CLASS_MATMUL], 0);
    ck_assert_int_eq(vt_device_probe(nc, &caps), VT_OK);
    ck_assert_str_eq(caps.kernels_unavailable, nocode_text);
    for (int c = 0; c < VT_OP_CLASS_COUNT; c++)
        ck_assert_uint_eq(caps.keep_quant[c], 0);

    vt_plan_op plan[3];
    vt_resolution res[3];
    for (uint32_t i = 0; i < n_ok; i++) {
        vt_resolution r;
        ck_assert_int_eq(vt_resolve(ok, table[i].op, table[i].sig, 0, &r), VT_OK);
        ck_assert_int_eq(r.tier, VT_TIER_NATIVE);
        ck_assert_int_eq(vt_resolve(nc, table[i].op, table[i].sig, 0, &r), VT_E_OP_MISSING);
        ck_assert_int_eq(r.tier, VT_TIER_REFUSED);
        char want[600];
        snprintf(want, sizeof want, "%s (%u) on test-nocode:0 refused: %s", vt_op_name(table[i].op), table[i].op,
                 nocode_text);
        ck_assert_str_eq(r.reason, want);
        ck_assert_str_eq(vt_last_error(), want);
        plan[i].op = table[i].op;
        plan[i].sig = table[i].sig;
    }
    size_t refused = 0;
    ck_assert_int_eq(vt_resolve_plan(nc, plan, 3, 0, res, &refused), VT_E_OP_MISSING);
    ck_assert_uint_eq(refused, 3);
    ck_assert_msg(strstr(vt_last_error(), "3 of 3 ops cannot run on test-nocode:0") &&
                      strstr(vt_last_error(), nocode_text),
                  "%s", vt_last_error());
    close_over(reg, dir);
}
END_TEST

/* Every signature the cpu oracle runs, on a host-addressable stub device
 * whose probe says it has no code: none falls to the CPU tier. */
START_TEST(no_code_object_refuses_every_op_even_the_cpu_tier)
{
    setenv("VT_CUDA_STUB_HOST_ADDRESSABLE", "1", 1);
    vt_registry *reg = vt_test_open(NULL, NULL, 0);
    vt_device *stub = NULL, *cpu = NULL;
    ck_assert_int_eq(vt_registry_find_device(reg, "cuda-stub:0", &stub), VT_OK);
    ck_assert_int_eq(vt_registry_find_device(reg, "cpu:0", &cpu), VT_OK);
    const vt_kernel *k = NULL;
    uint32_t n = 0;
    ck_assert_int_eq(vt_device_kernels(cpu, &k, &n), VT_OK);
    ck_assert_uint_gt(n, 50);
    vt_resolution r;
    /* Control: without the flag the CPU tier serves the host-addressable stub. */
    ck_assert_int_eq(vt_resolve(stub, k[0].op, k[0].sig, 0, &r), VT_OK);
    ck_assert_int_eq(r.tier, VT_TIER_CPU);
    vt_registry_close(reg);

    setenv("VT_CUDA_STUB_NO_CODE_OBJECT", "1", 1);
    reg = vt_test_open(NULL, NULL, 0);
    unsetenv("VT_CUDA_STUB_NO_CODE_OBJECT");
    unsetenv("VT_CUDA_STUB_HOST_ADDRESSABLE");
    ck_assert_int_eq(vt_registry_find_device(reg, "cuda-stub:0", &stub), VT_OK);
    ck_assert_int_eq(vt_registry_find_device(reg, "cpu:0", &cpu), VT_OK);
    ck_assert_int_eq(vt_device_kernels(cpu, &k, &n), VT_OK);
    const char *text = "vt_cuda_stub.so has no code object for stub (built for none: VT_CUDA_STUB_NO_CODE_OBJECT=1): "
                       "unset VT_CUDA_STUB_NO_CODE_OBJECT";
    for (uint32_t i = 0; i < n; i++) {
        ck_assert_int_eq(vt_resolve(stub, k[i].op, k[i].sig, 0, &r), VT_E_OP_MISSING);
        ck_assert_int_eq(r.tier, VT_TIER_REFUSED);
        ck_assert_msg(strstr(r.reason, " on cuda-stub:0 refused: ") && strstr(r.reason, text), "%s", r.reason);
    }
    /* vt_op_run names it too, before touching the tensors' data. */
    int64_t shape[1] = {4};
    vt_tensor *a = NULL, *b = NULL, *y = NULL;
    ck_assert_int_eq(vt_tensor_create(stub, VT_F32, 1, shape, &a), VT_OK);
    ck_assert_int_eq(vt_tensor_create(stub, VT_F32, 1, shape, &b), VT_OK);
    ck_assert_int_eq(vt_tensor_create(stub, VT_F32, 1, shape, &y), VT_OK);
    const vt_tensor *in[2] = {a, b};
    vt_tensor *out[1] = {y};
    ck_assert_int_eq(vt_op_run(stub, VT_OP_ADD, in, 2, out, 1, NULL, 0), VT_E_OP_MISSING);
    ck_assert_msg(strstr(vt_last_error(), "Add (2) on cuda-stub:0 refused: ") && strstr(vt_last_error(), text), "%s",
                  vt_last_error());
    vt_tensor_destroy(a);
    vt_tensor_destroy(b);
    vt_tensor_destroy(y);
    vt_registry_close(reg);
}
END_TEST

int main(void)
{
    Suite *s;
    TCase *tc;
    int gate = vt_test_suite_begin(NULL, "code_objects", "no_code_object", 60, &s, &tc);
    if (gate != 0)
        return gate;
    tcase_add_test(tc, a_device_without_code_runs_none_of_its_kernels);
    tcase_add_test(tc, no_code_object_refuses_every_op_even_the_cpu_tier);
    return vt_test_run_suite(s);
}
