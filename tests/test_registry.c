/* test_registry.c - discovery, the ABI word, broken plugins, selection,
 * shadowing, directory rules, loader debug output and thread safety. */
#include "config.h"

#include <fcntl.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

#ifndef TEST_PLUGIN_DIR
#error "TEST_PLUGIN_DIR must point at the built test plugins"
#endif

/* Link a built test plugin (or any file) into dir under name. */
static void link_into(const char *dir, const char *target, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ck_assert_msg(symlink(target, path) == 0, "symlink %s -> %s failed", path, target);
}

static void link_test_plugin(const char *dir, const char *file)
{
    char target[1024];
    snprintf(target, sizeof target, "%s/%s", TEST_PLUGIN_DIR, file);
    link_into(dir, target, file);
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* The candidate with backend name, or fail. */
static vt_backend_info find_backend(vt_registry *reg, const char *name)
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

START_TEST(broken_plugins_are_skipped_with_reasons)
{
    char *dir = vt_test_mkdtemp();
    write_file(dir, "vt_bogus.so", "not a shared object, just text\n");
    link_test_plugin(dir, "vt_test_badabi.so");
    link_test_plugin(dir, "vt_test_noabi.so");
    link_test_plugin(dir, "vt_test_noentry.so");
    link_test_plugin(dir, "vt_test_initfail.so");
    link_test_plugin(dir, "vt_test_zerodev.so");
    unsetenv("VT_TEST_ENTRY_CALLED_test-badabi");
    unsetenv("VT_TEST_ENTRY_CALLED_test-zerodev");

    vt_registry *reg = vt_test_open(dir, NULL, VT_REGISTRY_ONLY_PLUGIN_PATH);
    ck_assert_uint_eq(vt_registry_backend_count(reg), 6);
    ck_assert_uint_eq(vt_registry_device_count(reg), 0);

    vt_backend_info b = find_backend(reg, "bogus");
    ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
    ck_assert_msg(strstr(b.reason, "not an ELF file"), "reason: %s", b.reason);
    ck_assert_msg(strstr(b.reason, "6e 6f 74 20"), "reason names the bytes: %s", b.reason);
    ck_assert_str_eq(b.origin, "VT_PLUGIN_PATH");

    b = find_backend(reg, "test-badabi");
    ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
    ck_assert_str_eq(b.reason, "ABI 999, core wants 1");
    ck_assert_uint_eq(b.abi_found, 999);
    /* The ABI word is read before any plugin code: the entry never ran. */
    ck_assert_ptr_null(getenv("VT_TEST_ENTRY_CALLED_test-badabi"));
    ck_assert_ptr_nonnull(getenv("VT_TEST_ENTRY_CALLED_test-zerodev")); /* the marker works */

    b = find_backend(reg, "test-noabi");
    ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
    ck_assert_str_eq(b.reason, "missing symbol vt_plugin_abi");

    b = find_backend(reg, "test-noentry");
    ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
    ck_assert_str_eq(b.reason, "missing symbol vt_plugin_entry");

    b = find_backend(reg, "test-initfail");
    ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
    ck_assert_msg(strstr(b.reason, "init failed: VT_E_DEVICE: test plugin init fails on purpose"), "reason: %s",
                  b.reason);

    b = find_backend(reg, "test-zerodev");
    ck_assert_int_eq(b.state, VT_BACKEND_NO_DEVICES);
    ck_assert_uint_eq(b.device_count, 0);
    ck_assert_str_eq(b.reason, "test plugin has no devices on purpose");

    vt_device *dev = NULL;
    ck_assert_int_eq(vt_registry_find_device(reg, "test-zerodev:0", &dev), VT_E_NOT_FOUND);
    ck_assert_msg(strstr(vt_last_error(), "no devices"), "%s", vt_last_error());
    vt_registry_close(reg);
    vt_test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(build_tree_plugins_are_found)
{
    vt_registry *reg = vt_test_open(NULL, NULL, 0);
    vt_backend_info b = find_backend(reg, "cpu");
    ck_assert_int_eq(b.state, VT_BACKEND_READY);
    ck_assert_str_eq(b.origin, "build tree");
    ck_assert_uint_eq(b.abi_found, VT_PLUGIN_ABI);
    ck_assert_uint_eq(b.device_count, 1);
    b = find_backend(reg, "cuda-stub");
    ck_assert_int_eq(b.state, VT_BACKEND_READY);
    ck_assert_int_eq(b.device_type, VT_DEVICE_CUDA);
    vt_device *dev = NULL;
    ck_assert_int_eq(vt_registry_find_device(reg, "cpu:0", &dev), VT_OK);
    ck_assert_str_eq(vt_device_id(dev), "cpu:0");
    ck_assert_int_eq(vt_device_type_of(dev), VT_DEVICE_CPU);
    ck_assert_int_eq(vt_registry_find_device(reg, "cpu", &dev), VT_OK);
    ck_assert_str_eq(vt_device_id(dev), "cpu:0");
    ck_assert_int_eq(vt_registry_find_device(reg, "cpu:1", &dev), VT_E_NOT_FOUND);
    ck_assert_int_eq(vt_registry_find_device(reg, "cpu:x", &dev), VT_E_INVALID_ARG);
    ck_assert_int_eq(vt_registry_find_device(reg, "nosuch:0", &dev), VT_E_NOT_FOUND);
    ck_assert_msg(strstr(vt_last_error(), "no backend named 'nosuch'"), "%s", vt_last_error());
    vt_registry_close(reg);
}
END_TEST

START_TEST(vt_backends_selects_and_excludes)
{
    vt_registry *reg = vt_test_open(NULL, "cpu", 0);
    ck_assert_int_eq(find_backend(reg, "cpu").state, VT_BACKEND_READY);
    vt_backend_info b = find_backend(reg, "cuda-stub");
    ck_assert_int_eq(b.state, VT_BACKEND_EXCLUDED);
    ck_assert_str_eq(b.reason, "not selected by VT_BACKENDS");
    ck_assert_uint_eq(vt_registry_device_count(reg), 1);
    vt_registry_close(reg);

    reg = vt_test_open(NULL, "^cuda-stub", 0);
    ck_assert_int_eq(find_backend(reg, "cpu").state, VT_BACKEND_READY);
    b = find_backend(reg, "cuda-stub");
    ck_assert_int_eq(b.state, VT_BACKEND_EXCLUDED);
    ck_assert_str_eq(b.reason, "excluded by VT_BACKENDS");
    vt_registry_close(reg);

    /* The environment variable is honoured when the options leave it open. */
    setenv("VT_BACKENDS", "cuda-stub,nosuch", 1);
    reg = vt_test_open(NULL, NULL, 0);
    unsetenv("VT_BACKENDS");
    ck_assert_int_eq(find_backend(reg, "cpu").state, VT_BACKEND_EXCLUDED);
    ck_assert_int_eq(find_backend(reg, "cuda-stub").state, VT_BACKEND_READY);
    bool warned = false;
    for (size_t i = 0; i < vt_registry_warning_count(reg); i++)
        warned |= strstr(vt_registry_warning(reg, i), "'nosuch'") != NULL;
    ck_assert_msg(warned, "a VT_BACKENDS name that matches nothing is warned about");
    vt_registry_close(reg);
}
END_TEST

START_TEST(first_plugin_of_a_name_wins)
{
    char *d1 = vt_test_mkdtemp(), *d2 = vt_test_mkdtemp();
    link_into(d1, TEST_CPU_PLUGIN, "vt_cpu.so");
    link_into(d2, TEST_CPU_PLUGIN, "vt_cpu.so");
    char path[2048];
    snprintf(path, sizeof path, "%s:%s", d1, d2);
    vt_registry *reg = vt_test_open(path, NULL, VT_REGISTRY_ONLY_PLUGIN_PATH);
    ck_assert_uint_eq(vt_registry_backend_count(reg), 2);
    vt_backend_info a, b;
    ck_assert_int_eq(vt_registry_backend_info(reg, 0, &a), VT_OK);
    ck_assert_int_eq(vt_registry_backend_info(reg, 1, &b), VT_OK);
    ck_assert_int_eq(a.state, VT_BACKEND_READY);
    ck_assert_int_eq(b.state, VT_BACKEND_SHADOWED);
    ck_assert_msg(strstr(b.reason, "shadowed by ") && strstr(b.reason, d1), "%s", b.reason);
    ck_assert_uint_eq(vt_registry_device_count(reg), 1);
    vt_registry_close(reg);
    vt_test_rmtree(d1);
    vt_test_rmtree(d2);
    free(d1);
    free(d2);
}
END_TEST

START_TEST(current_and_relative_directories_are_never_searched)
{
    char *dir = vt_test_mkdtemp();
    link_into(dir, TEST_CPU_PLUGIN, "vt_cpu.so");
    char cwd[1024];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    ck_assert_int_eq(chdir(dir), 0);
    vt_registry *reg = vt_test_open(":.::./", NULL, VT_REGISTRY_ONLY_PLUGIN_PATH);
    ck_assert_uint_eq(vt_registry_backend_count(reg), 0);
    ck_assert_str_eq(vt_registry_search_path(reg), "");
    ck_assert_uint_eq(vt_registry_warning_count(reg), 2); /* "." and "./" */
    ck_assert_msg(strstr(vt_registry_warning(reg, 0), "ignoring relative directory '.'"), "%s",
                  vt_registry_warning(reg, 0));
    vt_registry_close(reg);
    ck_assert_int_eq(chdir(cwd), 0);
    vt_test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(world_writable_directory_is_refused)
{
    char *dir = vt_test_mkdtemp();
    link_into(dir, TEST_CPU_PLUGIN, "vt_cpu.so");
    ck_assert_int_eq(chmod(dir, 0777), 0);
    vt_registry *reg = vt_test_open(dir, NULL, VT_REGISTRY_ONLY_PLUGIN_PATH);
    ck_assert_uint_eq(vt_registry_backend_count(reg), 0);
    ck_assert_uint_eq(vt_registry_warning_count(reg), 1);
    ck_assert_msg(strstr(vt_registry_warning(reg, 0), "world-writable"), "%s", vt_registry_warning(reg, 0));
    vt_registry_close(reg);
    ck_assert_int_eq(chmod(dir, 0700), 0);
    reg = vt_test_open(dir, NULL, VT_REGISTRY_ONLY_PLUGIN_PATH);
    ck_assert_uint_eq(vt_registry_backend_count(reg), 1);
    vt_registry_close(reg);
    vt_test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(loader_debug_logs_every_candidate_and_verdict)
{
    char *dir = vt_test_mkdtemp();
    write_file(dir, "vt_bogus.so", "text");
    link_test_plugin(dir, "vt_test_badabi.so");
    link_into(dir, TEST_CPU_PLUGIN, "vt_cpu.so");
    char log[1100];
    snprintf(log, sizeof log, "%s/log.txt", dir);
    fflush(stderr);
    int saved = dup(2);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    dup2(fd, 2);
    close(fd);
    setenv("VT_LOADER_DEBUG", "1", 1);
    vt_registry_options o = {sizeof o, dir, NULL, -1, VT_REGISTRY_ONLY_PLUGIN_PATH};
    vt_registry *reg = NULL;
    vt_status st = vt_registry_open(&reg, &o);
    unsetenv("VT_LOADER_DEBUG");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ck_assert_int_eq(st, VT_OK);
    vt_registry_close(reg);

    FILE *f = fopen(log, "r");
    ck_assert_ptr_nonnull(f);
    char text[16384];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    ck_assert_msg(strstr(text, "vt-loader: candidate ") && strstr(text, "vt_bogus.so (backend bogus"), "%s", text);
    ck_assert_msg(strstr(text, "vt_bogus.so: skipped: not an ELF file"), "%s", text);
    ck_assert_msg(strstr(text, "vt_test_badabi.so: skipped: ABI 999, core wants 1"), "%s", text);
    ck_assert_msg(strstr(text, "vt_cpu.so: loaded backend cpu, ABI 1, 1 device"), "%s", text);
    vt_test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(liar_plugin_is_refused)
{
    char *dir = vt_test_mkdtemp();
    link_test_plugin(dir, "vt_test_liar.so");
    vt_registry *reg = vt_test_open(dir, NULL, VT_REGISTRY_ONLY_PLUGIN_PATH);
    vt_backend_info b = find_backend(reg, "test-liar");
    ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
    ck_assert_msg(strstr(b.reason, "claims needs_weight_staging=false while not host-addressable"), "%s", b.reason);
    ck_assert_msg(strstr(b.reason, "test device memory is opaque"), "the probe fact is named: %s", b.reason);
    ck_assert_uint_eq(vt_registry_device_count(reg), 0);
    vt_registry_close(reg);
    vt_test_rmtree(dir);
    free(dir);
}
END_TEST

/* Write a 64-byte ELF header for another machine (aarch64). */
static void write_foreign_elf(const char *dir, const char *name)
{
    unsigned char h[64] = {0x7f, 'E', 'L', 'F', 2 /* 64-bit */, 1 /* LE */, 1 /* version */};
    h[16] = 3;   /* ET_DYN */
    h[18] = 183; /* EM_AARCH64 */
    h[20] = 1;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fwrite(h, 1, sizeof h, f);
    fclose(f);
}

START_TEST(foreign_and_truncated_objects_are_named)
{
    char *dir = vt_test_mkdtemp();
    write_foreign_elf(dir, "vt_arm.so");
    write_file(dir, "vt_empty.so", "");
    write_file(dir, "vt_short.so",
               "\x7f"
               "ELF");
    vt_registry *reg = vt_test_open(dir, NULL, VT_REGISTRY_ONLY_PLUGIN_PATH);
    vt_backend_info b = find_backend(reg, "arm");
    ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
#if defined(__x86_64__)
    ck_assert_str_eq(b.reason, "wrong architecture: ELF machine 183 (aarch64), this process is x86_64 (62)");
#else
    ck_assert_msg(strstr(b.reason, "ELF machine 183") || strstr(b.reason, "dlopen"), "%s", b.reason);
#endif
    b = find_backend(reg, "empty");
    ck_assert_msg(strstr(b.reason, "not an ELF file (first bytes: none, empty file)"), "%s", b.reason);
    b = find_backend(reg, "short");
    ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
    vt_registry_close(reg);
    vt_test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(isolation_contains_a_crashing_and_a_hanging_plugin)
{
    char *dir = vt_test_mkdtemp();
    link_test_plugin(dir, "vt_test_crash.so");
    link_test_plugin(dir, "vt_test_hang.so");
    link_test_plugin(dir, "vt_test_zerodev.so");
    link_into(dir, TEST_CPU_PLUGIN, "vt_cpu.so");
    setenv("VT_LOADER_ISOLATE_TIMEOUT", "2", 1);
    vt_registry *reg = vt_test_open(dir, NULL, VT_REGISTRY_ONLY_PLUGIN_PATH | VT_REGISTRY_ISOLATE);
    vt_backend_info b = find_backend(reg, "test-crash");
    ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
    /* A plain build dies of SIGSEGV; under ASan its handler exits 1: both
     * are attributed to the stage. */
    ck_assert_msg(strstr(b.reason, "during init in an isolated probe process; not loaded"), "%s", b.reason);
    b = find_backend(reg, "test-hang");
    ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
    ck_assert_msg(strstr(b.reason, "hung for 2 s during init"), "%s", b.reason);
    ck_assert_int_eq(find_backend(reg, "test-zerodev").state, VT_BACKEND_NO_DEVICES);
    ck_assert_int_eq(find_backend(reg, "cpu").state, VT_BACKEND_READY);
    ck_assert_uint_eq(vt_registry_device_count(reg), 1);
    vt_registry_close(reg);
    vt_test_rmtree(dir);
    free(dir);
}
END_TEST

static void *open_close_loop(void *arg)
{
    (void)arg;
    for (int i = 0; i < 10; i++) {
        vt_registry_options o = {sizeof o, NULL, "cpu,cuda-stub", 0, 0};
        vt_registry *reg = NULL;
        if (vt_registry_open(&reg, &o) != VT_OK)
            return (void *)1;
        size_t n = vt_registry_device_count(reg);
        vt_device *dev = NULL;
        vt_status st = vt_registry_find_device(reg, "cuda-stub:0", &dev);
        vt_registry_close(reg);
        if (n != 2 || st != VT_OK)
            return (void *)2;
    }
    return NULL;
}

START_TEST(open_and_close_from_many_threads)
{
    pthread_t t[6];
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, open_close_loop, NULL), 0);
    for (int i = 0; i < 6; i++) {
        void *r = (void *)99;
        pthread_join(t[i], &r);
        ck_assert_ptr_null(r);
    }
}
END_TEST

START_TEST(options_are_validated)
{
    vt_registry *reg = (vt_registry *)1;
    ck_assert_int_eq(vt_registry_open(NULL, NULL), VT_E_INVALID_ARG);
    vt_registry_options o = {sizeof o + 8, NULL, NULL, 0, 0};
    ck_assert_int_eq(vt_registry_open(&reg, &o), VT_E_INVALID_ARG); /* from a newer header */
    ck_assert_ptr_null(reg);
    ck_assert_msg(strstr(vt_last_error(), "struct_size"), "%s", vt_last_error());
    /* An older, shorter struct keeps the defaults for what it lacks. */
    o.struct_size = offsetof(vt_registry_options, backends);
    o.backends = "nothing-matches";
    ck_assert_int_eq(vt_registry_open(&reg, &o), VT_OK);
    ck_assert_uint_ge(vt_registry_device_count(reg), 2); /* the filter was not read */
    vt_registry_close(reg);
    vt_registry_close(NULL);
}
END_TEST

static Suite *registry_suite(void)
{
    Suite *s = suite_create("registry");
    TCase *tc = tcase_create("loader");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, broken_plugins_are_skipped_with_reasons);
    tcase_add_test(tc, build_tree_plugins_are_found);
    tcase_add_test(tc, vt_backends_selects_and_excludes);
    tcase_add_test(tc, first_plugin_of_a_name_wins);
    tcase_add_test(tc, current_and_relative_directories_are_never_searched);
    tcase_add_test(tc, world_writable_directory_is_refused);
    tcase_add_test(tc, loader_debug_logs_every_candidate_and_verdict);
    tcase_add_test(tc, liar_plugin_is_refused);
    tcase_add_test(tc, open_and_close_from_many_threads);
    tcase_add_test(tc, options_are_validated);
    tcase_add_test(tc, foreign_and_truncated_objects_are_named);
    tcase_add_test(tc, isolation_contains_a_crashing_and_a_hanging_plugin);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    vt_test_seed();
    SRunner *sr = srunner_create(registry_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
