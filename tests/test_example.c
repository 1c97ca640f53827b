/* test_example.c - the example backend (backends/example) through the
 * registry: it loads from its build folder like any plugin, is listed with
 * its description, runs its one op (Add on f32, b broadcast) to the exact
 * sums, counts its allocations and copies, refuses by name an op its
 * kernel table does not hold, and is excluded by name. The registry is
 * strict (no portable CPU tier) and sees only the example's folder, so
 * every answer is the example's own. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* A strict registry that searches only the example backend's build folder. */
static vt_registry *open_example(void)
{
    vt_registry_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.plugin_path = TEST_EXAMPLE_PLUGIN_DIR;
    o.loader_debug = 0;
    o.flags = VT_REGISTRY_ONLY_PLUGIN_PATH;
    o.tier_policy = VT_TIER_POLICY_STRICT;
    vt_registry *reg = NULL;
    vt_status st = vt_registry_open(&reg, &o);
    ck_assert_msg(st == VT_OK, "vt_registry_open: %s: %s", vt_status_name(st), vt_last_error());
    return reg;
}

/* vt.pc's plugin_abi and plugin_iface (configure read them from
 * core/vt/vt_backend.h) are the header's values as the compiler sees them. */
START_TEST(test_pc_exports_the_headers_abi)
{
    ck_assert_uint_eq(TEST_PC_PLUGIN_ABI, VT_PLUGIN_ABI);
    ck_assert_uint_eq(TEST_PC_PLUGIN_IFACE, VT_IFACE_VERSION);
}
END_TEST

START_TEST(test_example_loads)
{
    vt_registry *reg = open_example();
    ck_assert_uint_eq(vt_registry_backend_count(reg), 1);
    vt_backend_info b;
    ck_assert_int_eq(vt_registry_backend_info(reg, 0, &b), VT_OK);
    ck_assert_str_eq(b.name, "example");
    ck_assert_msg(b.state == VT_BACKEND_READY, "example: state %s: %s", vt_backend_state_name((int)b.state),
                  b.reason ? b.reason : "");
    ck_assert_uint_eq(b.abi_found, VT_PLUGIN_ABI);
    ck_assert_uint_eq(b.device_count, 1);
    ck_assert_str_eq(b.description, "minimal example backend: one host-memory device, Add on f32");

    vt_device *dev = vt_test_device(reg, "example:0");
    vt_device_caps caps = VT_DEVICE_CAPS_INIT;
    ck_assert_int_eq(vt_device_probe(dev, &caps), VT_OK);
    ck_assert_uint_eq(caps.type, VT_DEVICE_CPU);
    ck_assert_str_eq(caps.arch, "example");
    ck_assert(caps.host_addressable);
    ck_assert(!caps.needs_weight_staging);
    ck_assert_uint_eq(caps.alloc_alignment, 64);
    ck_assert_uint_gt(caps.memory_total, 0);

    const vt_kernel *k = NULL;
    uint32_t nk = 0;
    ck_assert_int_eq(vt_device_kernels(dev, &k, &nk), VT_OK);
    ck_assert_uint_eq(nk, 1);
    ck_assert_uint_eq(k[0].op, VT_OP_ADD);
    vt_registry_close(reg);
}
END_TEST

START_TEST(test_example_add)
{
    vt_registry *reg = open_example();
    vt_device *dev = vt_test_device(reg, "example:0");
    /* a [3, 4] + b [4]: b is added to each of a's 3 rows */
    enum { R = 3, C = 4 };
    float a[R * C], b[C], y[R * C], want[R * C];
    for (int i = 0; i < R * C; i++)
        a[i] = 0.5f * (float)i - 2.0f;
    for (int j = 0; j < C; j++)
        b[j] = 100.0f * (float)(j + 1);
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++)
            want[i * C + j] = a[i * C + j] + b[j];
    int64_t sa[2] = {R, C}, sb[1] = {C};
    vt_tensor *ta = vt_test_tensor(dev, VT_F32, 2, sa, a);
    vt_tensor *tb = vt_test_tensor(dev, VT_F32, 1, sb, b);
    float poison[R * C];
    vt_poison(poison, sizeof poison);
    vt_tensor *ty = vt_test_tensor(dev, VT_F32, 2, sa, poison);

    const vt_tensor *in[2] = {ta, tb};
    vt_tensor *out[1] = {ty};
    vt_status st = vt_op_run(dev, VT_OP_ADD, in, 2, out, 1, NULL, 0);
    ck_assert_msg(st == VT_OK, "Add on example:0: %s: %s", vt_status_name(st), vt_last_error());
    ck_assert_int_eq(vt_tensor_read(ty, y, sizeof y), VT_OK);
    for (int i = 0; i < R * C; i++)
        ck_assert_msg(y[i] == want[i], "y[%d] = %g, want %g", i, (double)y[i], (double)want[i]);

    /* The run was the example's kernel, and its counters saw the traffic:
     * three allocations (64-byte padded), three writes and one read. */
    vt_device_stats s = vt_test_stats(dev);
    ck_assert_uint_eq(s.native_runs, 1);
    ck_assert_uint_eq(s.cpu_tier_runs, 0);
    ck_assert_uint_eq(s.backend.allocs, 3);
    ck_assert_uint_eq(s.backend.live_bytes, 64 + 64 + 64);
    ck_assert_uint_eq(s.backend.h2d_copies, 3);
    ck_assert_uint_eq(s.backend.h2d_bytes, sizeof a + sizeof b + sizeof poison);
    ck_assert_uint_eq(s.backend.d2h_copies, 1);
    ck_assert_uint_eq(s.backend.d2h_bytes, sizeof y);

    vt_tensor_destroy(ta);
    vt_tensor_destroy(tb);
    vt_tensor_destroy(ty);
    s = vt_test_stats(dev);
    ck_assert_uint_eq(s.backend.frees, 3);
    ck_assert_uint_eq(s.backend.live_bytes, 0);
    vt_registry_close(reg);
}
END_TEST

START_TEST(test_example_refuses_by_name)
{
    vt_registry *reg = open_example();
    vt_device *dev = vt_test_device(reg, "example:0");
    int64_t shape[1] = {4};
    float x[4] = {1, 2, 3, 4};
    vt_tensor *ta = vt_test_tensor(dev, VT_F32, 1, shape, x);
    vt_tensor *tb = vt_test_tensor(dev, VT_F32, 1, shape, x);
    vt_tensor *ty = vt_test_tensor(dev, VT_F32, 1, shape, x);
    const vt_tensor *in[2] = {ta, tb};
    vt_tensor *out[1] = {ty};

    /* Mul: an op of the catalogue the example has no kernel for. */
    vt_status st = vt_op_run(dev, VT_OP_MUL, in, 2, out, 1, NULL, 0);
    ck_assert_msg(st == VT_E_OP_MISSING, "Mul: got %s: %s", vt_status_name(st), vt_last_error());
    const char *err = vt_last_error();
    ck_assert_msg(strstr(err, "Mul") && strstr(err, "example:0"), "the refusal names the op and device: %s", err);
    float y[4];
    ck_assert_int_eq(vt_tensor_read(ty, y, sizeof y), VT_OK);
    ck_assert_msg(!memcmp(y, x, sizeof y), "a refused op wrote its output");

    vt_device_stats s = vt_test_stats(dev);
    ck_assert_uint_eq(s.native_runs, 0);
    ck_assert_uint_eq(s.refusals, 1);

    vt_tensor_destroy(ta);
    vt_tensor_destroy(tb);
    vt_tensor_destroy(ty);
    vt_registry_close(reg);
}
END_TEST

/* Deselected by name (VT_BACKENDS syntax): listed as excluded, never loaded. */
START_TEST(test_example_excluded_by_name)
{
    vt_registry_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.plugin_path = TEST_EXAMPLE_PLUGIN_DIR;
    o.backends = "^example";
    o.flags = VT_REGISTRY_ONLY_PLUGIN_PATH;
    vt_registry *reg = NULL;
    ck_assert_msg(vt_registry_open(&reg, &o) == VT_OK, "%s", vt_last_error());
    ck_assert_uint_eq(vt_registry_backend_count(reg), 1);
    vt_backend_info b;
    ck_assert_int_eq(vt_registry_backend_info(reg, 0, &b), VT_OK);
    ck_assert_str_eq(b.name, "example");
    ck_assert_uint_eq(b.state, VT_BACKEND_EXCLUDED);
    ck_assert_uint_eq(vt_registry_device_count(reg), 0);
    vt_device *dev = NULL;
    ck_assert_int_ne(vt_registry_find_device(reg, "example:0", &dev), VT_OK);
    vt_registry_close(reg);
}
END_TEST

int main(void)
{
    Suite *s;
    TCase *tc;
    int gate = vt_test_suite_begin(NULL, "example backend", "registry", 0, &s, &tc);
    if (gate != 0)
        return gate;
    tcase_add_test(tc, test_pc_exports_the_headers_abi);
    tcase_add_test(tc, test_example_loads);
    tcase_add_test(tc, test_example_add);
    tcase_add_test(tc, test_example_refuses_by_name);
    tcase_add_test(tc, test_example_excluded_by_name);
    return vt_test_run_suite(s);
}
