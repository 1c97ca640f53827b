/* test_faults.c - injected device faults through the cuda-stub: a failed
 * allocation, a failed copy, a device lost mid-sequence. Every public call
 * returns a named status, frees what it allocated (LSan/valgrind clean in
 * the sanitizer builds), leaves the registry and the other devices usable,
 * and the same work succeeds once the fault is gone. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static uint64_t live_bytes(vt_device *d)
{
    return vt_test_stats(d).backend.live_bytes;
}

/* The cpu device still works end to end. */
static void cpu_still_works(vt_registry *reg)
{
    vt_device *cpu = vt_test_device(reg, "cpu:0");
    int64_t n = 17;
    vt_tensor *a = NULL, *b = NULL, *y = NULL;
    ck_assert_int_eq(vt_tensor_create(cpu, VT_F32, 1, &n, &a), VT_OK);
    ck_assert_int_eq(vt_tensor_create(cpu, VT_F32, 1, &n, &b), VT_OK);
    ck_assert_int_eq(vt_tensor_create(cpu, VT_F32, 1, &n, &y), VT_OK);
    float av[17], bv[17], yv[17];
    for (int i = 0; i < 17; i++) {
        av[i] = (float)i;
        bv[i] = 0.5f;
    }
    ck_assert_int_eq(vt_tensor_write(a, av, sizeof av), VT_OK);
    ck_assert_int_eq(vt_tensor_write(b, bv, sizeof bv), VT_OK);
    const vt_tensor *in[2] = {a, b};
    vt_tensor *out[1] = {y};
    ck_assert_int_eq(vt_op_run(cpu, VT_OP_ADD, in, 2, out, 1, NULL, 0), VT_OK);
    ck_assert_int_eq(vt_tensor_read(y, yv, sizeof yv), VT_OK);
    for (int i = 0; i < 17; i++)
        ck_assert_float_eq(yv[i], (float)i + 0.5f);
    vt_tensor_destroy(a);
    vt_tensor_destroy(b);
    vt_tensor_destroy(y);
}

START_TEST(allocation_failure_is_named_and_recoverable)
{
    setenv("VT_CUDA_STUB_FAIL_ALLOC_AT", "2", 1);
    vt_registry *reg = vt_test_open(NULL, "cpu,cuda-stub", 0);
    vt_device *d = vt_test_device(reg, "cuda-stub:0");
    int64_t n = 1000;
    vt_tensor *t1 = NULL, *t2 = (vt_tensor *)1, *t3 = NULL;
    ck_assert_int_eq(vt_tensor_create(d, VT_F32, 1, &n, &t1), VT_OK);
    uint64_t after_one = live_bytes(d);
    ck_assert_int_eq(vt_tensor_create(d, VT_F32, 1, &n, &t2), VT_E_DEVICE_OOM);
    ck_assert_ptr_null(t2);
    ck_assert_msg(strstr(vt_last_error(), "allocating 4000 bytes on cuda-stub:0 failed") &&
                      strstr(vt_last_error(), "injected allocation failure (allocation #2)"),
                  "%s", vt_last_error());
    ck_assert_uint_eq(live_bytes(d), after_one);                      /* nothing half-allocated */
    ck_assert_int_eq(vt_tensor_create(d, VT_F32, 1, &n, &t3), VT_OK); /* the fault was one-shot */
    cpu_still_works(reg);
    vt_tensor_destroy(t1);
    vt_tensor_destroy(t3);
    ck_assert_uint_eq(live_bytes(d), 0);
    vt_registry_close(reg);

    /* Fault gone: the same work succeeds from the start. */
    unsetenv("VT_CUDA_STUB_FAIL_ALLOC_AT");
    reg = vt_test_open(NULL, "cpu,cuda-stub", 0);
    d = vt_test_device(reg, "cuda-stub:0");
    ck_assert_int_eq(vt_tensor_create(d, VT_F32, 1, &n, &t1), VT_OK);
    ck_assert_int_eq(vt_tensor_create(d, VT_F32, 1, &n, &t2), VT_OK);
    vt_tensor_destroy(t1);
    vt_tensor_destroy(t2);
    vt_registry_close(reg);
}
END_TEST

START_TEST(copy_failures_are_named_and_recoverable)
{
    setenv("VT_CUDA_STUB_FAIL_COPY_AT", "1", 1);
    vt_registry *reg = vt_test_open(NULL, "cpu,cuda-stub", 0);
    vt_device *d = vt_test_device(reg, "cuda-stub:0");
    int64_t n = 8;
    vt_tensor *t = NULL;
    ck_assert_int_eq(vt_tensor_create(d, VT_I32, 1, &n, &t), VT_OK);
    int32_t v[8] = {1, 2, 3, 4, 5, 6, 7, 8}, w[8];
    ck_assert_int_eq(vt_tensor_write(t, v, sizeof v), VT_E_DEVICE);
    ck_assert_msg(strstr(vt_last_error(), "copy of 32 bytes to cuda-stub:0 failed") &&
                      strstr(vt_last_error(), "injected copy failure (copy #1)"),
                  "%s", vt_last_error());
    ck_assert_int_eq(vt_tensor_write(t, v, sizeof v), VT_OK);
    ck_assert_int_eq(vt_tensor_read(t, w, sizeof w), VT_OK);
    ck_assert_int_eq(memcmp(v, w, sizeof v), 0);
    vt_tensor_destroy(t);
    vt_registry_close(reg);

    setenv("VT_CUDA_STUB_FAIL_COPY_AT", "2", 1); /* the read */
    reg = vt_test_open(NULL, "cpu,cuda-stub", 0);
    d = vt_test_device(reg, "cuda-stub:0");
    ck_assert_int_eq(vt_tensor_create(d, VT_I32, 1, &n, &t), VT_OK);
    ck_assert_int_eq(vt_tensor_write(t, v, sizeof v), VT_OK);
    memset(w, 0x5a, sizeof w);
    ck_assert_int_eq(vt_tensor_read(t, w, sizeof w), VT_E_DEVICE);
    ck_assert_msg(strstr(vt_last_error(), "copy of 32 bytes from cuda-stub:0 failed"), "%s", vt_last_error());
    ck_assert_uint_eq((uint32_t)w[0], 0x5a5a5a5au); /* the host buffer was not touched */
    ck_assert_int_eq(vt_tensor_read(t, w, sizeof w), VT_OK);
    ck_assert_int_eq(w[7], 8);
    cpu_still_works(reg);
    vt_tensor_destroy(t);
    vt_registry_close(reg);
}
END_TEST

START_TEST(a_lost_device_fails_by_name_and_leaves_the_others_working)
{
    setenv("VT_CUDA_STUB_DEVICES", "2", 1);
    setenv("VT_CUDA_STUB_LOSE_AT_COPY", "3", 1);
    setenv("VT_CUDA_STUB_FAULT_DEVICE", "0", 1);
    vt_registry *reg = vt_test_open(NULL, "cpu,cuda-stub", 0);
    vt_device *d0 = vt_test_device(reg, "cuda-stub:0"), *d1 = vt_test_device(reg, "cuda-stub:1");
    int64_t n = 64;
    float v[64];
    for (int i = 0; i < 64; i++)
        v[i] = (float)i;
    vt_tensor *a = NULL, *b = NULL, *c = NULL;
    ck_assert_int_eq(vt_tensor_create(d0, VT_F32, 1, &n, &a), VT_OK);
    ck_assert_int_eq(vt_tensor_create(d0, VT_F32, 1, &n, &b), VT_OK);
    ck_assert_int_eq(vt_tensor_write(a, v, sizeof v), VT_OK);
    ck_assert_int_eq(vt_tensor_write(b, v, sizeof v), VT_OK);
    ck_assert_int_eq(vt_tensor_write(a, v, sizeof v), VT_E_DEVICE_LOST); /* copy #3: lost */
    ck_assert_msg(strstr(vt_last_error(), "cuda-stub:0 is lost"), "%s", vt_last_error());
    ck_assert_int_eq(vt_tensor_read(b, v, sizeof v), VT_E_DEVICE_LOST);
    ck_assert_int_eq(vt_tensor_create(d0, VT_F32, 1, &n, &c), VT_E_DEVICE_LOST);
    ck_assert_ptr_null(c);
    vt_device_caps caps = VT_DEVICE_CAPS_INIT;
    ck_assert_int_eq(vt_device_probe(d0, &caps), VT_E_DEVICE_LOST);
    ck_assert_msg(strstr(vt_last_error(), "probe of cuda-stub:0 failed"), "%s", vt_last_error());
    vt_fit_report rep;
    vt_weight_desc w = {"w", VT_F16, VT_OP_CLASS_MATMUL, 2, {4, 32}};
    ck_assert_int_eq(vt_fit_plan(d0, &w, 1, NULL, NULL, &rep), VT_E_DEVICE_LOST);
    /* Destroying on a lost device still frees everything. */
    vt_tensor_destroy(a);
    vt_tensor_destroy(b);
    ck_assert_uint_eq(live_bytes(d0), 0);
    /* The other stub device and the cpu are untouched. */
    vt_tensor *t = NULL;
    ck_assert_int_eq(vt_tensor_create(d1, VT_F32, 1, &n, &t), VT_OK);
    ck_assert_int_eq(vt_tensor_write(t, v, sizeof v), VT_OK);
    ck_assert_int_eq(vt_tensor_write(t, v, sizeof v), VT_OK);
    ck_assert_int_eq(vt_tensor_write(t, v, sizeof v), VT_OK);
    ck_assert_int_eq(vt_device_probe(d1, &caps), VT_OK);
    vt_tensor_destroy(t);
    cpu_still_works(reg);
    vt_registry_close(reg);

    unsetenv("VT_CUDA_STUB_LOSE_AT_COPY");
    reg = vt_test_open(NULL, "cpu,cuda-stub", 0);
    d0 = vt_test_device(reg, "cuda-stub:0");
    ck_assert_int_eq(vt_tensor_create(d0, VT_F32, 1, &n, &a), VT_OK);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(vt_tensor_write(a, v, sizeof v), VT_OK);
    vt_tensor_destroy(a);
    vt_registry_close(reg);
}
END_TEST

START_TEST(the_cpu_tier_reports_a_lost_device)
{
    setenv("VT_CUDA_STUB_HOST_ADDRESSABLE", "1", 1);
    setenv("VT_CUDA_STUB_LOSE_AT_COPY", "3", 1);
    vt_registry *reg = vt_test_open(NULL, "cpu,cuda-stub", 0);
    vt_device *d = vt_test_device(reg, "cuda-stub:0");
    int64_t ns = 4, ni = 2;
    vt_tensor *src = NULL, *idx = NULL, *dst = NULL;
    ck_assert_int_eq(vt_tensor_create(d, VT_F32, 1, &ns, &src), VT_OK);
    ck_assert_int_eq(vt_tensor_create(d, VT_I32, 1, &ni, &idx), VT_OK);
    ck_assert_int_eq(vt_tensor_create(d, VT_F32, 1, &ni, &dst), VT_OK);
    float sv[4] = {1, 2, 3, 4};
    int32_t iv[2] = {3, 0};
    ck_assert_int_eq(vt_tensor_write(src, sv, sizeof sv), VT_OK);
    ck_assert_int_eq(vt_tensor_write(idx, iv, sizeof iv), VT_OK);
    vt_params_index_select p = {0};
    const vt_tensor *in[2] = {src, idx};
    vt_tensor *out[1] = {dst};
    ck_assert_int_eq(vt_op_run(d, VT_OP_INDEX_SELECT, in, 2, out, 1, &p, sizeof p), VT_OK);
    ck_assert_int_eq(vt_tensor_write(src, sv, sizeof sv), VT_E_DEVICE_LOST); /* copy #3 */
    ck_assert_int_eq(vt_op_run(d, VT_OP_INDEX_SELECT, in, 2, out, 1, &p, sizeof p), VT_E_DEVICE_LOST);
    /* Resolution probes the device first, and the probe names the loss. */
    ck_assert_msg(strstr(vt_last_error(), "cuda-stub:0 is lost"), "%s", vt_last_error());
    vt_tensor_destroy(src);
    vt_tensor_destroy(idx);
    vt_tensor_destroy(dst);
    vt_registry_close(reg);
}
END_TEST

START_TEST(bad_fault_settings_fail_the_plugin_by_name)
{
    setenv("VT_CUDA_STUB_FAIL_ALLOC_AT", "two", 1);
    vt_registry *reg = vt_test_open(NULL, "cpu,cuda-stub", 0);
    const vt_backend_info b = vt_test_backend(reg, "cuda-stub");
    ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
    ck_assert_msg(strstr(b.reason, "VT_CUDA_STUB_FAIL_ALLOC_AT='two' is not an unsigned number"), "%s", b.reason);
    cpu_still_works(reg);
    vt_registry_close(reg);
}
END_TEST

int main(void)
{
    Suite *s;
    TCase *tc;
    int gate = vt_test_suite_begin("cuda-stub", "faults", "cuda-stub", 120, &s, &tc);
    if (gate != 0)
        return gate;
    tcase_add_test(tc, allocation_failure_is_named_and_recoverable);
    tcase_add_test(tc, copy_failures_are_named_and_recoverable);
    tcase_add_test(tc, a_lost_device_fails_by_name_and_leaves_the_others_working);
    tcase_add_test(tc, the_cpu_tier_reports_a_lost_device);
    tcase_add_test(tc, bad_fault_settings_fail_the_plugin_by_name);
    return vt_test_run_suite(s);
}
