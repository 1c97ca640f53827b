/* test_concurrency.c - registries opened and closed from several threads
 * while other threads run ops on two devices (cpu:0 natively, cuda-stub:0
 * through the portable CPU tier) of one shared registry, checking every
 * result. Run under ThreadSanitizer by the TSan build
 * (./configure CC=clang --enable-sanitizers=thread). */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define ROUNDS 30

typedef struct job {
    vt_registry *reg;   /* shared */
    const char *device; /* "cpu:0" or "cuda-stub:0" */
    int seed;
    int failures;
    char what[256];
} job;

static void fail_job(job *j, const char *what)
{
    if (!j->failures++)
        snprintf(j->what, sizeof j->what, "%s on %s: %s", what, j->device, vt_last_error());
}

/* Each round: MatMul (cpu) or IndexSelect (stub, CPU tier) on fresh data,
 * checked against a loop here. */
static void *op_worker(void *arg)
{
    job *j = arg;
    vt_device *d = NULL;
    if (vt_registry_find_device(j->reg, j->device, &d) != VT_OK) {
        fail_job(j, "find");
        return NULL;
    }
    bool cpu = strcmp(j->device, "cpu:0") == 0;
    for (int r = 0; r < ROUNDS && !j->failures; r++) {
        float src[6 * 5], got[6 * 5], w[3 * 5];
        for (int i = 0; i < 30; i++)
            src[i] = (float)((i * 7 + r + j->seed) % 13) - 6.0f;
        for (int i = 0; i < 15; i++)
            w[i] = (float)((i * 3 + j->seed) % 5) - 2.0f;
        vt_tensor *a = NULL, *b = NULL, *y = NULL;
        int64_t sa[2] = {6, 5};
        vt_status st = vt_tensor_create(d, VT_F32, 2, sa, &a);
        if (st == VT_OK)
            st = vt_tensor_write(a, src, sizeof src);
        if (cpu) {
            int64_t sw[2] = {3, 5}, sy[2] = {6, 3};
            if (st == VT_OK)
                st = vt_tensor_create(d, VT_F32, 2, sw, &b);
            if (st == VT_OK)
                st = vt_tensor_write(b, w, sizeof w);
            if (st == VT_OK)
                st = vt_tensor_create(d, VT_F32, 2, sy, &y);
            const vt_tensor *in[2] = {a, b};
            vt_tensor *out[1] = {y};
            if (st == VT_OK)
                st = vt_op_run(d, VT_OP_MATMUL, in, 2, out, 1, NULL, 0);
            if (st == VT_OK)
                st = vt_tensor_read(y, got, sizeof(float) * 18);
            for (int i = 0; st == VT_OK && i < 6; i++)
                for (int c = 0; c < 3; c++) {
                    float want = 0;
                    for (int k = 0; k < 5; k++)
                        want += src[i * 5 + k] * w[c * 5 + k];
                    if (got[i * 3 + c] != want)
                        st = VT_E_SHAPE;
                }
        } else {
            int64_t ni = 4, sy[2] = {4, 5};
            int32_t idx[4] = {5, (r + j->seed) % 6, 0, 3};
            if (st == VT_OK)
                st = vt_tensor_create(d, VT_I32, 1, &ni, &b);
            if (st == VT_OK)
                st = vt_tensor_write(b, idx, sizeof idx);
            if (st == VT_OK)
                st = vt_tensor_create(d, VT_F32, 2, sy, &y);
            vt_params_index_select p = {0};
            const vt_tensor *in[2] = {a, b};
            vt_tensor *out[1] = {y};
            if (st == VT_OK)
                st = vt_op_run(d, VT_OP_INDEX_SELECT, in, 2, out, 1, &p, sizeof p);
            if (st == VT_OK)
                st = vt_tensor_read(y, got, sizeof(float) * 20);
            for (int i = 0; st == VT_OK && i < 20; i++)
                if (got[i] != src[idx[i / 5] * 5 + i % 5])
                    st = VT_E_SHAPE;
        }
        if (st != VT_OK)
            fail_job(j, st == VT_E_SHAPE ? "wrong result" : "op");
        vt_tensor_destroy(a);
        vt_tensor_destroy(b);
        vt_tensor_destroy(y);
    }
    return NULL;
}

static void *registry_worker(void *arg)
{
    job *j = arg;
    for (int r = 0; r < ROUNDS / 3 && !j->failures; r++) {
        vt_registry_options o = {sizeof o, NULL, "cpu,cuda-stub", 0, 0};
        vt_registry *reg = NULL;
        if (vt_registry_open(&reg, &o) != VT_OK) {
            fail_job(j, "open");
            break;
        }
        vt_device *d = NULL;
        vt_device_caps caps = VT_DEVICE_CAPS_INIT;
        if (vt_registry_device_count(reg) != 2 || vt_registry_find_device(reg, "cuda-stub:0", &d) != VT_OK ||
            vt_device_probe(d, &caps) != VT_OK)
            fail_job(j, "query");
        vt_registry_close(reg);
    }
    return NULL;
}

START_TEST(registries_and_ops_from_many_threads)
{
    setenv("VT_CUDA_STUB_HOST_ADDRESSABLE", "1", 1);
    vt_registry *shared = vt_test_open(NULL, "cpu,cuda-stub", 0);
    job jobs[7] = {
        {shared, "cpu:0", 1, 0, ""},       {shared, "cpu:0", 2, 0, ""},  {shared, "cuda-stub:0", 3, 0, ""},
        {shared, "cuda-stub:0", 4, 0, ""}, {NULL, "registry", 5, 0, ""}, {NULL, "registry", 6, 0, ""},
        {NULL, "registry", 7, 0, ""},
    };
    pthread_t t[7];
    for (int i = 0; i < 7; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, jobs[i].reg ? op_worker : registry_worker, &jobs[i]), 0);
    for (int i = 0; i < 7; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < 7; i++)
        ck_assert_msg(jobs[i].failures == 0, "thread %d: %s", i, jobs[i].what);
    vt_device *d = NULL;
    ck_assert_int_eq(vt_registry_find_device(shared, "cuda-stub:0", &d), VT_OK);
    vt_device_stats s = vt_test_stats(d);
    ck_assert_uint_eq(s.cpu_tier_runs, 2 * ROUNDS); /* every fallback counted, none lost */
    ck_assert_uint_eq(s.backend.live_bytes, 0);
    vt_registry_close(shared);
}
END_TEST

int main(void)
{
    Suite *s;
    TCase *tc;
    int gate = vt_test_suite_begin("cuda-stub", "concurrency", "threads", 300, &s, &tc);
    if (gate != 0)
        return gate;
    tcase_add_test(tc, registries_and_ops_from_many_threads);
    return vt_test_run_suite(s);
}
