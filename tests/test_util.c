/* test_util.c - helpers for the Check suites (see test_util.h). */
#include "config.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

uint64_t vt_test_seed(void)
{
    static uint64_t seed;
    static bool have;
    if (!have) {
        const char *e = getenv("VT_TEST_SEED");
        seed = e && *e ? strtoull(e, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
        have = true;
        fprintf(stderr, "test seed: VT_TEST_SEED=%llu\n", (unsigned long long)seed);
    }
    return seed;
}

uint64_t vt_rng_next(vt_rng *r)
{
    return vt_splitmix64_next(&r->s);
}

void vt_rng_init(vt_rng *r, uint64_t stream)
{
    r->s = vt_test_seed() ^ (stream * 0xd1b54a32d192ed03ull);
    vt_rng_next(r);
}

float vt_rng_uniform(vt_rng *r, float lo, float hi)
{
    double u = (double)(vt_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
    return (float)(lo + (hi - lo) * u);
}

uint64_t vt_rng_below(vt_rng *r, uint64_t n)
{
    return n ? vt_rng_next(r) % n : 0;
}

void vt_rng_fill(vt_rng *r, float *x, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++)
        x[i] = vt_rng_uniform(r, lo, hi);
}

void vt_poison(void *p, size_t bytes)
{
    memset(p, 0xff, bytes);
}

double vt_rel_l2(const float *out, const double *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(out[i]) || isinf(out[i]))
            return INFINITY;
        double d = (double)out[i] - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

char *vt_test_mkdtemp(void)
{
    const char *base = getenv("TMPDIR");
    char *path = malloc(512);
    ck_assert_ptr_nonnull(path);
    snprintf(path, 512, "%s/vt-test-XXXXXX", base && *base ? base : "/tmp");
    ck_assert_msg(mkdtemp(path) != NULL, "mkdtemp(%s) failed", path);
    return path;
}

void vt_test_rmtree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char p[1024];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

vt_registry *vt_test_open(const char *plugin_path, const char *backends, uint32_t flags)
{
    vt_registry_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.plugin_path = plugin_path;
    o.backends = backends;
    o.loader_debug = 0;
    o.flags = flags;
    vt_registry *reg = NULL;
    vt_status st = vt_registry_open(&reg, &o);
    ck_assert_msg(st == VT_OK, "vt_registry_open: %s: %s", vt_status_name(st), vt_last_error());
    return reg;
}

int vt_test_backend_gate(const char *backend)
{
    const char *only = getenv("VT_TEST_BACKEND");
    if (only && *only && strcmp(only, backend) != 0) {
        fprintf(stderr, "SKIP: VT_TEST_BACKEND=%s selects another backend\n", only);
        return VT_TEST_SKIP;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        vt_registry *reg = NULL;
        if (vt_registry_open(&reg, NULL) != VT_OK) {
            fprintf(stderr, "SKIP: registry: %s\n", vt_last_error());
            _exit(VT_TEST_SKIP);
        }
        int rc = VT_TEST_SKIP;
        bool seen = false;
        for (size_t i = 0; i < vt_registry_backend_count(reg); i++) {
            vt_backend_info b;
            if (vt_registry_backend_info(reg, i, &b) != VT_OK || strcmp(b.name, backend) != 0 ||
                b.state == VT_BACKEND_SHADOWED)
                continue;
            seen = true;
            if (b.state == VT_BACKEND_READY)
                rc = 0;
            else
                fprintf(stderr, "SKIP: backend %s is %s here: %s\n", backend, vt_backend_state_name((int)b.state),
                        b.reason);
            break;
        }
        if (!seen)
            fprintf(stderr, "SKIP: backend %s was not built or not found (searched %s)\n", backend,
                    vt_registry_search_path(reg));
        vt_registry_close(reg);
        _exit(rc);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    fprintf(stderr, "FAIL: the presence probe of %s crashed\n", backend);
    return 1;
}

vt_device *vt_test_device(vt_registry *reg, const char *spec)
{
    vt_device *d = NULL;
    ck_assert_msg(vt_registry_find_device(reg, spec, &d) == VT_OK, "%s: %s", spec, vt_last_error());
    return d;
}

vt_tensor *vt_test_tensor(vt_device *d, vt_dtype t, uint32_t nd, const int64_t *shape, const void *data)
{
    vt_tensor *x = NULL;
    vt_status st = vt_tensor_create(d, t, nd, shape, &x);
    ck_assert_msg(st == VT_OK, "vt_tensor_create %s: %s", vt_dtype_name(t), vt_last_error());
    if (data)
        ck_assert_msg(vt_tensor_write(x, data, (size_t)vt_tensor_nbytes(x)) == VT_OK, "vt_tensor_write %s: %s",
                      vt_dtype_name(t), vt_last_error());
    return x;
}

vt_device_stats vt_test_stats(vt_device *d)
{
    vt_device_stats s = VT_DEVICE_STATS_INIT;
    ck_assert_msg(vt_device_stats_get(d, &s) == VT_OK, "vt_device_stats_get: %s", vt_last_error());
    return s;
}

double vt_test_decode(const void *p, vt_dtype t, int64_t i)
{
    if (t == VT_F16) {
        uint16_t x = ((const uint16_t *)p)[i];
        int s = x >> 15, e = (x >> 10) & 31, m = x & 1023;
        double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
        return s ? -v : v;
    }
    if (t == VT_BF16) {
        uint32_t b = (uint32_t)((const uint16_t *)p)[i] << 16;
        float f;
        memcpy(&f, &b, 4);
        return f;
    }
    return ((const float *)p)[i];
}

int vt_test_suite_begin(const char *backend, const char *name, const char *tc_name, double timeout_s, Suite **s,
                        TCase **tc)
{
    if (backend) {
        int gate = vt_test_backend_gate(backend);
        if (gate != 0)
            return gate;
    }
    vt_test_seed();
    *s = suite_create(name);
    *tc = tcase_create(tc_name);
    if (timeout_s > 0)
        tcase_set_timeout(*tc, timeout_s);
    suite_add_tcase(*s, *tc);
    return 0;
}

int vt_test_run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
/* The candidate with backend name, or fail. */
vt_backend_info vt_test_backend(vt_registry *reg, const char *name)
{
    vt_backend_info b;
    for (size_t i = 0; i < vt_registry_backend_count(reg); i++) {
        ck_assert_int_eq(vt_registry_backend_info(reg, i, &b), VT_OK);
        if (strcmp(b.name, name) == 0)
            return b;
    }
    ck_abort_msg("backend %s not among the %zu candidates", name, vt_registry_backend_count(reg));
    return b;
}
