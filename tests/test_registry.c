/* test_registry.c - discovery, the ABI word, broken plugins, selection,
 * shadowing, directory rules, loader debug output and thread safety; the
 * ABI word read from the file before any plugin code runs, hostile ELF
 * files, and the trust rule for plugin files and directories. */
#include "config.h"

#include <elf.h>
#include <fcntl.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"
#include "vt_internal.h"

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

/* The one plugin file, alone in a fresh directory that is the only one
 * searched: its backend's entry, asserted skipped (close_and_remove ends it). */
static vt_backend_info skipped_alone(const char *file, const char *backend, vt_registry **reg, char **dir)
{
    *dir = vt_test_mkdtemp();
    link_test_plugin(*dir, file);
    *reg = vt_test_open(*dir, NULL, VT_REGISTRY_ONLY_PLUGIN_PATH);
    vt_backend_info b = vt_test_backend(*reg, backend);
    ck_assert_msg(b.state == VT_BACKEND_SKIPPED, "%s: state %d, want skipped", file, (int)b.state);
    return b;
}

/* Close reg, then remove and free its plugin directory dir. */
static void close_and_remove(vt_registry *reg, char *dir)
{
    vt_registry_close(reg);
    vt_test_rmtree(dir);
    free(dir);
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

    vt_backend_info b = vt_test_backend(reg, "bogus");
    ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
    ck_assert_msg(strstr(b.reason, "not an ELF file"), "reason: %s", b.reason);
    ck_assert_msg(strstr(b.reason, "6e 6f 74 20"), "reason names the bytes: %s", b.reason);
    ck_assert_str_eq(b.origin, "VT_PLUGIN_PATH");

    b = vt_test_backend(reg, "test-badabi");
    ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
    ck_assert_str_eq(b.reason, "ABI 999, core wants 1");
    ck_assert_uint_eq(b.abi_found, 999);
    /* The ABI word is read before any plugin code: the entry never ran. */
    ck_assert_ptr_null(getenv("VT_TEST_ENTRY_CALLED_test-badabi"));
    ck_assert_ptr_nonnull(getenv("VT_TEST_ENTRY_CALLED_test-zerodev")); /* the marker works */

    b = vt_test_backend(reg, "test-noabi");
    ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
    ck_assert_str_eq(b.reason, "missing symbol vt_plugin_abi");

    b = vt_test_backend(reg, "test-noentry");
    ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
    ck_assert_str_eq(b.reason, "missing symbol vt_plugin_entry");

    b = vt_test_backend(reg, "test-initfail");
    ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
    ck_assert_msg(strstr(b.reason, "init failed: VT_E_DEVICE: test plugin init fails on purpose"), "reason: %s",
                  b.reason);

    b = vt_test_backend(reg, "test-zerodev");
    ck_assert_int_eq(b.state, VT_BACKEND_NO_DEVICES);
    ck_assert_uint_eq(b.device_count, 0);
    ck_assert_str_eq(b.reason, "test plugin has no devices on purpose");

    vt_device *dev = NULL;
    ck_assert_int_eq(vt_registry_find_device(reg, "test-zerodev:0", &dev), VT_E_NOT_FOUND);
    ck_assert_msg(strstr(vt_last_error(), "no devices"), "%s", vt_last_error());
    close_and_remove(reg, dir);
}
END_TEST

START_TEST(build_tree_plugins_are_found)
{
    vt_registry *reg = vt_test_open(NULL, NULL, 0);
    vt_backend_info b = vt_test_backend(reg, "cpu");
    ck_assert_int_eq(b.state, VT_BACKEND_READY);
    ck_assert_str_eq(b.origin, "build tree");
    ck_assert_uint_eq(b.abi_found, VT_PLUGIN_ABI);
    ck_assert_uint_eq(b.device_count, 1);
    b = vt_test_backend(reg, "cuda-stub");
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
    ck_assert_int_eq(vt_test_backend(reg, "cpu").state, VT_BACKEND_READY);
    vt_backend_info b = vt_test_backend(reg, "cuda-stub");
    ck_assert_int_eq(b.state, VT_BACKEND_EXCLUDED);
    ck_assert_str_eq(b.reason, "not selected by VT_BACKENDS");
    ck_assert_uint_eq(vt_registry_device_count(reg), 1);
    vt_registry_close(reg);

    reg = vt_test_open(NULL, "^cuda-stub", 0);
    ck_assert_int_eq(vt_test_backend(reg, "cpu").state, VT_BACKEND_READY);
    b = vt_test_backend(reg, "cuda-stub");
    ck_assert_int_eq(b.state, VT_BACKEND_EXCLUDED);
    ck_assert_str_eq(b.reason, "excluded by VT_BACKENDS");
    vt_registry_close(reg);

    /* The environment variable is honoured when the options leave it open. */
    setenv("VT_BACKENDS", "cuda-stub,nosuch", 1);
    reg = vt_test_open(NULL, NULL, 0);
    unsetenv("VT_BACKENDS");
    ck_assert_int_eq(vt_test_backend(reg, "cpu").state, VT_BACKEND_EXCLUDED);
    ck_assert_int_eq(vt_test_backend(reg, "cuda-stub").state, VT_BACKEND_READY);
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
    close_and_remove(reg, dir);
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
    vt_registry *reg;
    char *dir;
    vt_backend_info b = skipped_alone("vt_test_liar.so", "test-liar", &reg, &dir);
    ck_assert_msg(strstr(b.reason, "claims needs_weight_staging=false while not host-addressable"), "%s", b.reason);
    ck_assert_msg(strstr(b.reason, "test device memory is opaque"), "the probe fact is named: %s", b.reason);
    ck_assert_uint_eq(vt_registry_device_count(reg), 0);
    close_and_remove(reg, dir);
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
    vt_backend_info b = vt_test_backend(reg, "arm");
    ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
#if defined(__x86_64__)
    ck_assert_str_eq(b.reason, "wrong architecture: ELF machine 183 (aarch64), this process is x86_64 (62)");
#else
    ck_assert_msg(strstr(b.reason, "ELF machine 183") || strstr(b.reason, "dlopen"), "%s", b.reason);
#endif
    b = vt_test_backend(reg, "empty");
    ck_assert_msg(strstr(b.reason, "not an ELF file (first bytes: none, empty file)"), "%s", b.reason);
    b = vt_test_backend(reg, "short");
    ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
    close_and_remove(reg, dir);
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
    vt_backend_info b = vt_test_backend(reg, "test-crash");
    ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
    /* A plain build dies of SIGSEGV; under ASan its handler exits 1: both
     * are attributed to the stage. */
    ck_assert_msg(strstr(b.reason, "during init in an isolated probe process; not loaded"), "%s", b.reason);
    b = vt_test_backend(reg, "test-hang");
    ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
    ck_assert_msg(strstr(b.reason, "hung for 2 s during init"), "%s", b.reason);
    ck_assert_int_eq(vt_test_backend(reg, "test-zerodev").state, VT_BACKEND_NO_DEVICES);
    ck_assert_int_eq(vt_test_backend(reg, "cpu").state, VT_BACKEND_READY);
    ck_assert_uint_eq(vt_registry_device_count(reg), 1);
    close_and_remove(reg, dir);
}
END_TEST

/* Begin catching fd 2 in dir/name; returns the saved fd for stderr_end. */
static int stderr_begin(const char *dir, const char *name)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    fflush(stderr);
    int saved = dup(2);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(saved, 0);
    ck_assert_int_ge(fd, 0);
    dup2(fd, 2);
    close(fd);
    return saved;
}

/* Restore fd 2; returns how many bytes were written to it meanwhile. */
static long stderr_end(int saved, const char *dir, const char *name)
{
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char path[1100];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    return (long)st.st_size;
}

/* An isolated probe that cannot start (no descriptors left for its pipe)
 * loads the plugin in process, and says so in the registry's warnings, not
 * on stderr: the library does not print. */
START_TEST(isolation_that_cannot_start_is_a_registry_warning)
{
    char *dir = vt_test_mkdtemp();
    link_into(dir, TEST_CPU_PLUGIN, "vt_cpu.so");
    int saved = stderr_begin(dir, "stderr.txt");
    /* One descriptor left: enough for reading a directory or a file at a
     * time, not for a pipe's two. */
    int lowest = dup(0);
    ck_assert_int_ge(lowest, 0);
    close(lowest);
    struct rlimit old, tight;
    ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
    tight = old;
    tight.rlim_cur = (rlim_t)lowest + 1;
    ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &tight), 0);
    vt_registry_options o = {sizeof o, dir, NULL, 0, VT_REGISTRY_ONLY_PLUGIN_PATH | VT_REGISTRY_ISOLATE};
    vt_registry *reg = NULL;
    vt_status st = vt_registry_open(&reg, &o);
    ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &old), 0);
    long printed = stderr_end(saved, dir, "stderr.txt");
    ck_assert_int_eq(st, VT_OK);
    ck_assert_int_eq(vt_test_backend(reg, "cpu").state, VT_BACKEND_READY);
    ck_assert_uint_eq(vt_registry_warning_count(reg), 1);
    const char *w = vt_registry_warning(reg, 0);
    ck_assert_msg(strstr(w, "/vt_cpu.so: cannot isolate: pipe failed (") && strstr(w, "); loading in process"), "%s",
                  w);
    ck_assert_int_eq(printed, 0);
    close_and_remove(reg, dir);
}
END_TEST

/* Rows of op in dev's kernel table. */
static int rows_of(vt_device *dev, vt_op op)
{
    const vt_kernel *k = NULL;
    uint32_t n = 0;
    ck_assert_int_eq(vt_device_kernels(dev, &k, &n), VT_OK);
    int rows = 0;
    for (uint32_t i = 0; i < n; i++)
        rows += k[i].op == (uint32_t)op;
    return rows;
}

/* The core's settings are read once, at open: the environment is the
 * default, an option overrides it, and changing the environment later
 * changes nothing. */
START_TEST(settings_are_read_at_open_and_options_override_them)
{
    vt_dtype f32 = VT_F32;
    vt_sig s1 = vt_sig_make(1, &f32);
    setenv("VT_DISABLE_OPS", "cpu:Argmax", 1);
    vt_registry *reg = vt_test_open(NULL, "cpu", 0);
    unsetenv("VT_DISABLE_OPS");
    vt_device *cpu = NULL;
    ck_assert_int_eq(vt_registry_find_device(reg, "cpu:0", &cpu), VT_OK);
    ck_assert_int_eq(rows_of(cpu, VT_OP_ARGMAX), 0);
    vt_resolution res;
    ck_assert_int_eq(vt_resolve(cpu, VT_OP_ARGMAX, s1, 0, &res), VT_E_OP_MISSING);
    ck_assert_msg(strstr(res.reason, "no native kernel for (f32) (hidden by VT_DISABLE_OPS)"), "%s", res.reason);
    vt_registry_close(reg);

    setenv("VT_DISABLE_OPS", "cpu:Argmax", 1);
    vt_registry_options o = {.struct_size = sizeof o, .backends = "cpu", .loader_debug = 0, .disable_ops = "cpu:TopK"};
    ck_assert_msg(vt_registry_open(&reg, &o) == VT_OK, "%s", vt_last_error());
    unsetenv("VT_DISABLE_OPS");
    ck_assert_int_eq(vt_registry_find_device(reg, "cpu:0", &cpu), VT_OK);
    ck_assert_int_gt(rows_of(cpu, VT_OP_ARGMAX), 0);
    ck_assert_int_eq(rows_of(cpu, VT_OP_TOPK), 0);
    ck_assert_int_eq(vt_resolve(cpu, VT_OP_ARGMAX, s1, 0, &res), VT_OK);
    ck_assert_int_eq(res.tier, VT_TIER_NATIVE);
    vt_registry_close(reg);

    /* The isolated probe's time limit: the option over the environment. */
    char *dir = vt_test_mkdtemp();
    link_test_plugin(dir, "vt_test_hang.so");
    setenv("VT_LOADER_ISOLATE_TIMEOUT", "30", 1);
    vt_registry_options iso = {.struct_size = sizeof iso,
                               .plugin_path = dir,
                               .loader_debug = 0,
                               .flags = VT_REGISTRY_ONLY_PLUGIN_PATH | VT_REGISTRY_ISOLATE,
                               .isolate_timeout_s = 1};
    ck_assert_msg(vt_registry_open(&reg, &iso) == VT_OK, "%s", vt_last_error());
    vt_backend_info b = vt_test_backend(reg, "test-hang");
    ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
    ck_assert_msg(strstr(b.reason, "hung for 1 s during init"), "%s", b.reason);
    vt_registry_close(reg);
    iso.isolate_timeout_s = 3600;
    ck_assert_int_eq(vt_registry_open(&reg, &iso), VT_E_INVALID_ARG);
    ck_assert_ptr_null(reg);
    ck_assert_msg(strstr(vt_last_error(), "options.isolate_timeout_s 3600 is not in 1..3599"), "%s", vt_last_error());
    /* Without the option, a bad environment value is named at the open
     * (it was the default in silence). */
    iso.isolate_timeout_s = 0;
    static const char *const bad_timeout[] = {"abc", "0", "3600", "1.5", " 5"};
    for (size_t i = 0; i < sizeof bad_timeout / sizeof bad_timeout[0]; i++) {
        setenv("VT_LOADER_ISOLATE_TIMEOUT", bad_timeout[i], 1);
        reg = (vt_registry *)1;
        ck_assert_int_eq(vt_registry_open(&reg, &iso), VT_E_INVALID_ARG);
        ck_assert_ptr_null(reg);
        char want[96];
        snprintf(want, sizeof want, "VT_LOADER_ISOLATE_TIMEOUT='%s' is not a number of seconds in 1..3599",
                 bad_timeout[i]);
        ck_assert_msg(strstr(vt_last_error(), want), "%s", vt_last_error());
    }
    unsetenv("VT_LOADER_ISOLATE_TIMEOUT");
    vt_test_rmtree(dir);
    free(dir);
}
END_TEST

/* True when the file dir/name exists. */
static bool exists_in(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

/* Read a whole file into a fresh buffer. */
static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    ck_assert_int_gt(n, 0);
    rewind(f);
    unsigned char *buf = malloc((size_t)n);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return buf;
}

/* Write bytes to dir/name with mode; returns the path (static buffer). */
static const char *spit(const char *dir, const char *name, const void *bytes, size_t n, mode_t mode)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, bytes, n), (ssize_t)n);
    close(fd);
    ck_assert_int_eq(chmod(path, mode), 0);
    return path;
}

/* Open a registry over dir with the constructor markers going to marks;
 * isolate also sets VT_LOADER_ISOLATE=1. */
static vt_registry *open_with_markers(const char *dir, const char *marks, bool isolate)
{
    setenv("VT_TEST_CTOR_DIR", marks, 1);
    if (isolate)
        setenv("VT_LOADER_ISOLATE", "1", 1);
    vt_registry *reg = vt_test_open(dir, NULL, VT_REGISTRY_ONLY_PLUGIN_PATH);
    unsetenv("VT_LOADER_ISOLATE");
    unsetenv("VT_TEST_CTOR_DIR");
    return reg;
}

START_TEST(refused_abi_runs_no_plugin_code)
{
    for (int isolate = 0; isolate < 2; isolate++) {
        char *dir = vt_test_mkdtemp(), *marks = vt_test_mkdtemp();
        link_test_plugin(dir, "vt_test_badabi.so");
        link_test_plugin(dir, "vt_test_noabi.so");
        link_test_plugin(dir, "vt_test_abibyte.so");
        link_test_plugin(dir, "vt_test_abifunc.so");
        link_test_plugin(dir, "vt_test_zerodev.so");
        vt_registry *reg = open_with_markers(dir, marks, isolate);

        vt_backend_info b = vt_test_backend(reg, "test-badabi");
        ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
        ck_assert_str_eq(b.reason, "ABI 999, core wants 1");
        ck_assert_uint_eq(b.abi_found, 999);
        b = vt_test_backend(reg, "test-noabi");
        ck_assert_str_eq(b.reason, "missing symbol vt_plugin_abi");
        b = vt_test_backend(reg, "test-abibyte");
        ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
        ck_assert_str_eq(b.reason, "symbol vt_plugin_abi is 1 byte, the ABI word is 4 (uint32_t)");
        b = vt_test_backend(reg, "test-abifunc");
        ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
        ck_assert_str_eq(b.reason, "symbol vt_plugin_abi is a function (STT_FUNC), not the 4-byte data word; "
                                   "not called");
        ck_assert_int_eq(vt_test_backend(reg, "test-zerodev").state, VT_BACKEND_NO_DEVICES);
        vt_registry_close(reg);

        /* No constructor of a refused plugin ran, in this process or in an
         * isolated probe; the loaded one's did (the marker works). */
        ck_assert_msg(!exists_in(marks, "test-badabi"), "ABI 999 plugin's constructor ran (isolate=%d)", isolate);
        ck_assert_msg(!exists_in(marks, "test-noabi"), "ABI-less plugin's constructor ran (isolate=%d)", isolate);
        ck_assert_msg(!exists_in(marks, "test-abibyte"), "1-byte-word plugin's constructor ran (isolate=%d)", isolate);
        ck_assert_msg(!exists_in(marks, "test-abifunc"), "function-word plugin's constructor ran (isolate=%d)",
                      isolate);
        ck_assert_msg(exists_in(marks, "test-zerodev"), "the marker of a loaded plugin is missing (isolate=%d)",
                      isolate);
        vt_test_rmtree(dir);
        vt_test_rmtree(marks);
        free(dir);
        free(marks);
    }
}
END_TEST

/* Offsets of the parts of a plugin image the mutations below aim at. */
typedef struct elf_map {
    size_t dynsym_hdr; /* file offset of .dynsym's section header */
    size_t abi_sym;    /* file offset of vt_plugin_abi's Elf64_Sym */
    uint16_t text_idx; /* index of an executable section */
} elf_map;

static elf_map map_plugin(const unsigned char *img, size_t n)
{
    elf_map m = {0, 0, 0};
    Elf64_Ehdr eh;
    ck_assert_uint_ge(n, sizeof eh);
    memcpy(&eh, img, sizeof eh);
    ck_assert_uint_le(eh.e_shoff + (size_t)eh.e_shnum * sizeof(Elf64_Shdr), n);
    Elf64_Shdr ds = {0}, ss = {0};
    for (size_t i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr s;
        memcpy(&s, img + eh.e_shoff + i * sizeof s, sizeof s);
        if (s.sh_type == SHT_DYNSYM) {
            m.dynsym_hdr = eh.e_shoff + i * sizeof s;
            ds = s;
        }
        if ((s.sh_flags & SHF_EXECINSTR) && !m.text_idx)
            m.text_idx = (uint16_t)i;
    }
    ck_assert_uint_ne(m.dynsym_hdr, 0);
    memcpy(&ss, img + eh.e_shoff + (size_t)ds.sh_link * sizeof ss, sizeof ss);
    for (size_t i = 0; i < ds.sh_size / sizeof(Elf64_Sym); i++) {
        Elf64_Sym sym;
        memcpy(&sym, img + ds.sh_offset + i * sizeof sym, sizeof sym);
        if (!strcmp((const char *)img + ss.sh_offset + sym.st_name, "vt_plugin_abi"))
            m.abi_sym = ds.sh_offset + i * sizeof sym;
    }
    ck_assert_uint_ne(m.abi_sym, 0);
    return m;
}

/* Overwrite a field of width bytes at off (little-endian host). */
static void poke(unsigned char *img, size_t off, uint64_t value, size_t width)
{
    memcpy(img + off, &value, width);
}

START_TEST(hostile_elf_files_are_refused_by_name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/vt_test_zerodev.so", TEST_PLUGIN_DIR);
    size_t n = 0;
    unsigned char *orig = slurp(path, &n);
    elf_map m = map_plugin(orig, n);
    unsigned char *img = malloc(n);
    ck_assert_ptr_nonnull(img);
    const size_t sym_name = 0, sym_shndx = 6, sym_value = 8, sym_size = 16;
    const size_t sh_offset = offsetof(Elf64_Shdr, sh_offset), sh_link = offsetof(Elf64_Shdr, sh_link),
                 sh_entsize = offsetof(Elf64_Shdr, sh_entsize);
    struct {
        size_t off;
        uint64_t value;
        size_t width;
        size_t truncate; /* keep only this many bytes when nonzero */
        const char *want;
    } cases[] = {
        {offsetof(Elf64_Ehdr, e_shoff), (uint64_t)n + 8, 8, 0, "section headers at offset"},
        {offsetof(Elf64_Ehdr, e_shoff), UINT64_MAX - 16, 8, 0, "lie outside the file"},
        {offsetof(Elf64_Ehdr, e_shnum), 0xfff0, 2, 0, "the section header table (offset"},
        {offsetof(Elf64_Ehdr, e_shentsize), 40, 2, 0, "section header size 40, ELF64 needs 64"},
        {m.dynsym_hdr + sh_offset, UINT64_MAX - 8, 8, 0, ".dynsym (offset"},
        {m.dynsym_hdr + sh_link, 0xffff, 4, 0, "names string table section 65535"},
        {m.dynsym_hdr + sh_entsize, 16, 8, 0, "has entries of 16 bytes"},
        {m.abi_sym + sym_name, 0x7fffffff, 4, 0, "names offset 2147483647 outside .dynstr"},
        {m.abi_sym + sym_value, 0xdead00000000ull, 8, 0, "lies outside its section"},
        {m.abi_sym + sym_value, UINT64_MAX - 1, 8, 0, "lies outside its section"},
        {m.abi_sym + sym_size, 1, 8, 0, "is 1 byte, the ABI word is 4"},
        {m.abi_sym + sym_size, UINT64_MAX, 8, 0, "the ABI word is 4"},
        {m.abi_sym + sym_shndx, SHN_ABS, 2, 0, "lies in no section of the file"},
        {m.abi_sym + sym_shndx, 0xfeff, 2, 0, "lies in no section of the file"},
        {m.abi_sym + sym_shndx, m.text_idx, 2, 0, "which is not a loaded data section"},
        {m.abi_sym + sym_shndx, SHN_UNDEF, 2, 0, "is undefined in the plugin"},
        {0, 0, 0, 100, "lie outside the file"},
        {0, 0, 0, 63, "truncated ELF header (63 bytes)"},
    };
    char *dir = vt_test_mkdtemp(), *marks = vt_test_mkdtemp();
    size_t n_cases = sizeof cases / sizeof cases[0];
    for (size_t i = 0; i < n_cases; i++) {
        memcpy(img, orig, n);
        size_t len = cases[i].truncate ? cases[i].truncate : n;
        if (!cases[i].truncate)
            poke(img, cases[i].off, cases[i].value, cases[i].width);
        char name[32];
        snprintf(name, sizeof name, "vt_m%02zu.so", i);
        spit(dir, name, img, len, 0644);
    }
    vt_registry *reg = open_with_markers(dir, marks, false);
    for (size_t i = 0; i < n_cases; i++) {
        char name[32];
        snprintf(name, sizeof name, "m%02zu", i);
        vt_backend_info b = vt_test_backend(reg, name);
        ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
        ck_assert_msg(strstr(b.reason, cases[i].want), "case %zu: want '%s' in: %s", i, cases[i].want, b.reason);
    }
    vt_registry_close(reg);
    ck_assert_msg(!exists_in(marks, "test-zerodev"), "a malformed copy was opened (its constructor ran)");

    /* Random damage to the header, the section headers and the symbols:
     * every answer is a reason or a word, never a crash (ASan builds check
     * every read) or an allocation beyond the caps. */
    vt_rng r;
    vt_rng_init(&r, 0xe1f);
    Elf64_Ehdr eh;
    memcpy(&eh, orig, sizeof eh);
    size_t regions[3][2] = {{0, sizeof eh}, {eh.e_shoff, (size_t)eh.e_shnum * sizeof(Elf64_Shdr)}, {m.abi_sym, 24}};
    int refused = 0;
    for (int it = 0; it < 400; it++) {
        memcpy(img, orig, n);
        for (int k = 0; k < 4; k++) {
            size_t *reg_ = regions[vt_rng_below(&r, 3)];
            img[reg_[0] + vt_rng_below(&r, reg_[1])] = (unsigned char)vt_rng_next(&r);
        }
        const char *p = spit(dir, "vt_fuzz.so", img, n, 0644);
        uint32_t abi = 0;
        char *why = vt_plugin_elf_abi(p, &abi);
        refused += why != NULL;
        free(why);
    }
    ck_assert_int_gt(refused, 0);
    free(img);
    free(orig);
    vt_test_rmtree(dir);
    vt_test_rmtree(marks);
    free(dir);
    free(marks);
}
END_TEST

START_TEST(dlopen_failure_names_the_linker_error)
{
    vt_registry *reg;
    char *dir;
    vt_backend_info b = skipped_alone("vt_test_undefdata.so", "test-undefdata", &reg, &dir);
    ck_assert_msg(strstr(b.reason, "dlopen failed: ") && strstr(b.reason, "undefined symbol: vt_test_no_such_data"),
                  "%s", b.reason);
    ck_assert_msg(!strstr(b.reason, "file not found"), "%s", b.reason);
    close_and_remove(reg, dir);
}
END_TEST

/* Copy the cpu plugin to dir/name with mode; returns the path. */
static const char *copy_cpu(const char *dir, const char *name, mode_t mode)
{
    size_t n = 0;
    unsigned char *img = slurp(TEST_CPU_PLUGIN, &n);
    const char *p = spit(dir, name, img, n, mode);
    free(img);
    return p;
}

/* The only warning of reg contains text. */
static void assert_warning(vt_registry *reg, const char *text)
{
    ck_assert_uint_eq(vt_registry_warning_count(reg), 1);
    ck_assert_msg(strstr(vt_registry_warning(reg, 0), text), "want '%s' in: %s", text, vt_registry_warning(reg, 0));
}

/* Another user's uid and gid for the ownership cases (root may chown). */
#define OTHER_ID 54321

START_TEST(untrusted_files_and_directories_are_refused)
{
    char *dir = vt_test_mkdtemp();
    char want[2048];

    /* Control: a private copy under sticky, root-owned /tmp loads. */
    copy_cpu(dir, "vt_cpu.so", 0755);
    vt_registry *reg = vt_test_open(dir, NULL, VT_REGISTRY_ONLY_PLUGIN_PATH);
    ck_assert_int_eq(vt_test_backend(reg, "cpu").state, VT_BACKEND_READY);
    vt_registry_close(reg);

    /* A 0666 plugin file. */
    const char *f = copy_cpu(dir, "vt_cpu.so", 0666);
    reg = vt_test_open(dir, NULL, VT_REGISTRY_ONLY_PLUGIN_PATH);
    vt_backend_info b = vt_test_backend(reg, "cpu");
    ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
    snprintf(want, sizeof want, "untrusted: file %s is world-writable (mode 0666)", f);
    ck_assert_str_eq(b.reason, want);
    vt_registry_close(reg);
    /* A group-writable one (group not root's). */
    ck_assert_int_eq(chmod(f, 0664), 0);
    ck_assert_int_eq(chown(f, 0 + geteuid(), OTHER_ID), 0);
    reg = vt_test_open(dir, NULL, VT_REGISTRY_ONLY_PLUGIN_PATH);
    b = vt_test_backend(reg, "cpu");
    ck_assert_msg(strstr(b.reason, "is writable by group 54321 (mode 0664)"), "%s", b.reason);
    vt_registry_close(reg);
    /* One owned by another user. */
    ck_assert_int_eq(chmod(f, 0644), 0);
    ck_assert_int_eq(chown(f, OTHER_ID, 0), 0);
    reg = vt_test_open(dir, NULL, VT_REGISTRY_ONLY_PLUGIN_PATH);
    b = vt_test_backend(reg, "cpu");
    snprintf(want, sizeof want, "untrusted: file %s is owned by uid 54321, not by root or this process's user", f);
    ck_assert_msg(strstr(b.reason, want), "%s", b.reason);
    vt_registry_close(reg);
    unlink(f);

    /* A link to a 0666 file in /tmp: the target is what counts. */
    char target[256];
    snprintf(target, sizeof target, "/tmp/vt-trust-XXXXXX");
    int fd = mkstemp(target);
    ck_assert_int_ge(fd, 0);
    close(fd);
    size_t n = 0;
    unsigned char *img = slurp(TEST_CPU_PLUGIN, &n);
    fd = open(target, O_WRONLY);
    ck_assert_int_eq(write(fd, img, n), (ssize_t)n);
    close(fd);
    free(img);
    ck_assert_int_eq(chmod(target, 0666), 0);
    link_into(dir, target, "vt_cpu.so");
    reg = vt_test_open(dir, NULL, VT_REGISTRY_ONLY_PLUGIN_PATH);
    b = vt_test_backend(reg, "cpu");
    ck_assert_int_eq(b.state, VT_BACKEND_SKIPPED);
    snprintf(want, sizeof want, "untrusted: file %s is world-writable (mode 0666)", target);
    ck_assert_str_eq(b.reason, want);
    vt_registry_close(reg);
    /* Made safe, the same link loads; a link owned by another user does not. */
    ck_assert_int_eq(chmod(target, 0644), 0);
    reg = vt_test_open(dir, NULL, VT_REGISTRY_ONLY_PLUGIN_PATH);
    ck_assert_int_eq(vt_test_backend(reg, "cpu").state, VT_BACKEND_READY);
    vt_registry_close(reg);
    char lpath[1100];
    snprintf(lpath, sizeof lpath, "%s/vt_cpu.so", dir);
    ck_assert_int_eq(lchown(lpath, OTHER_ID, OTHER_ID), 0);
    reg = vt_test_open(dir, NULL, VT_REGISTRY_ONLY_PLUGIN_PATH);
    b = vt_test_backend(reg, "cpu");
    snprintf(want, sizeof want, "untrusted: symbolic link %s is owned by uid 54321", lpath);
    ck_assert_msg(strstr(b.reason, want), "%s", b.reason);
    vt_registry_close(reg);
    unlink(lpath);
    unlink(target);

    /* A plugin directory under a 0777 parent. */
    char sub[600];
    snprintf(sub, sizeof sub, "%s/plugins", dir);
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    link_into(sub, TEST_CPU_PLUGIN, "vt_cpu.so");
    ck_assert_int_eq(chmod(dir, 0777), 0);
    reg = vt_test_open(sub, NULL, VT_REGISTRY_ONLY_PLUGIN_PATH);
    ck_assert_uint_eq(vt_registry_backend_count(reg), 0);
    snprintf(want, sizeof want, "refusing plugin directory %s (VT_PLUGIN_PATH): directory %s is world-writable", sub,
             dir);
    assert_warning(reg, want);
    vt_registry_close(reg);
    ck_assert_int_eq(chmod(dir, 0700), 0);
    /* A group-writable plugin directory. */
    ck_assert_int_eq(chown(sub, 0 + geteuid(), OTHER_ID), 0);
    ck_assert_int_eq(chmod(sub, 0775), 0);
    reg = vt_test_open(sub, NULL, VT_REGISTRY_ONLY_PLUGIN_PATH);
    ck_assert_uint_eq(vt_registry_backend_count(reg), 0);
    snprintf(want, sizeof want, "directory %s is writable by group 54321 (mode 0775)", sub);
    assert_warning(reg, want);
    vt_registry_close(reg);
    /* One owned by another user. */
    ck_assert_int_eq(chmod(sub, 0755), 0);
    ck_assert_int_eq(chown(sub, OTHER_ID, 0), 0);
    reg = vt_test_open(sub, NULL, VT_REGISTRY_ONLY_PLUGIN_PATH);
    ck_assert_uint_eq(vt_registry_backend_count(reg), 0);
    snprintf(want, sizeof want, "directory %s is owned by uid 54321", sub);
    assert_warning(reg, want);
    vt_registry_close(reg);
    /* A sticky world-writable plugin directory (like /tmp) is refused too. */
    ck_assert_int_eq(chown(sub, 0 + geteuid(), 0), 0);
    ck_assert_int_eq(chmod(sub, 01777), 0);
    reg = vt_test_open(sub, NULL, VT_REGISTRY_ONLY_PLUGIN_PATH);
    ck_assert_uint_eq(vt_registry_backend_count(reg), 0);
    assert_warning(reg, "a sticky directory still lets anyone add a plugin to it");
    vt_registry_close(reg);
    ck_assert_int_eq(chmod(sub, 0755), 0);

    /* /proc/self/cwd names the current directory: never searched. */
    char cwd[1024];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    ck_assert_int_eq(chdir(sub), 0);
    reg = vt_test_open("/proc/self/cwd", NULL, VT_REGISTRY_ONLY_PLUGIN_PATH);
    ck_assert_int_eq(chdir(cwd), 0);
    ck_assert_uint_eq(vt_registry_backend_count(reg), 0);
    assert_warning(reg, "refusing plugin directory /proc/self/cwd (VT_PLUGIN_PATH): /proc is on procfs");
    vt_registry_close(reg);

    snprintf(lpath, sizeof lpath, "%s/vt_cpu.so", sub);
    unlink(lpath);
    rmdir(sub);
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

int main(void)
{
    Suite *s;
    TCase *tc;
    int gate = vt_test_suite_begin(NULL, "registry", "loader", 120, &s, &tc);
    if (gate != 0)
        return gate;
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
    tcase_add_test(tc, isolation_that_cannot_start_is_a_registry_warning);
    tcase_add_test(tc, settings_are_read_at_open_and_options_override_them);
    tcase_add_test(tc, refused_abi_runs_no_plugin_code);
    tcase_add_test(tc, hostile_elf_files_are_refused_by_name);
    tcase_add_test(tc, dlopen_failure_names_the_linker_error);
    tcase_add_test(tc, untrusted_files_and_directories_are_refused);
    return vt_test_run_suite(s);
}
