/* plugin_loader.c - the life of one backend plugin: loaded with libltdl,
 * its devices vetted, optionally first in an isolated child process, and
 * unloaded.
 *
 * Order of checks, each a named reason when it fails:
 *   1. the file and every directory on its resolved path are trusted
 *      (plugin_trust.c: owned by root or this user, writable by no other);
 *   2. the file is an ELF shared object for this machine and its
 *      vt_plugin_abi word, read from the file (plugin_elf.c), equals
 *      VT_PLUGIN_ABI - before dlopen, so no plugin code (not even a
 *      constructor) runs for a plugin of another ABI;
 *   3. lt_dlopen succeeds (a failure carries the dynamic linker's text);
 *   4. the loaded word still equals the file's, vt_plugin_entry exists and
 *      returns a vtable that is complete and names the backend its file
 *      name says;
 *   5. init succeeds; device_count gives the devices (0 is recorded with
 *      the runtime's reason). */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vt_internal.h"

static pthread_mutex_t ltdl_mutex = PTHREAD_MUTEX_INITIALIZER;

/* Handles of resident modules: kept for the life of the process (and so
 * reachable, not leaked). Guarded by ltdl_mutex. */
#define MAX_RESIDENT 32
static lt_dlhandle resident[MAX_RESIDENT];
static int n_resident;

/* Make h resident and remember it; caller holds ltdl_mutex. */
static void keep_resident(lt_dlhandle h)
{
    for (int i = 0; i < n_resident; i++)
        if (resident[i] == h)
            return;
    if (n_resident < MAX_RESIDENT && lt_dlmakeresident(h) == 0)
        resident[n_resident++] = h;
}

void vt_ltdl_lock(void)
{
    pthread_mutex_lock(&ltdl_mutex);
}

void vt_ltdl_unlock(void)
{
    pthread_mutex_unlock(&ltdl_mutex);
}

void vt_loader_log(bool enabled, const char *fmt, ...)
{
    if (!enabled)
        return;
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "vt-loader: %s\n", line);
    fflush(stderr);
}

static void set_reason(vt_plugin *p, vt_backend_state state, char *reason)
{
    free(p->reason);
    p->state = state;
    p->reason = reason ? reason : vt_strdup("(out of memory describing the failure)");
}

/* Close the module; the caller holds no lock. */
static void close_handle(vt_plugin *p)
{
    if (!p->handle)
        return;
    vt_ltdl_lock();
    lt_dlclose(p->handle);
    vt_ltdl_unlock();
    p->handle = NULL;
    p->iface = NULL;
}

bool vt_op_disabled(const char *spec, const char *backend, uint32_t op)
{
    const char *name = vt_op_name(op);
    size_t blen = strlen(backend);
    for (const char *e = spec; e && *e;) {
        const char *end = strchr(e, ',');
        size_t len = end ? (size_t)(end - e) : strlen(e);
        const char *colon = memchr(e, ':', len);
        if (colon && (size_t)(colon - e) == blen && !strncmp(e, backend, blen)) {
            size_t olen = len - blen - 1;
            if ((olen == 1 && colon[1] == '*') || (name && strlen(name) == olen && !strncasecmp(colon + 1, name, olen)))
                return true;
        }
        e = end ? end + 1 : NULL;
    }
    return false;
}

/* The plugin's kernel table less the rows VT_DISABLE_OPS hides (a test and
 * triage switch: a hidden kernel resolves as missing). */
static bool effective_table(vt_plugin *p, const char *disable_ops, bool debug)
{
    const vt_backend_iface *f = p->iface;
    p->kernels = f->kernels;
    p->n_kernels = f->n_kernels;
    uint32_t keep = 0;
    for (uint32_t i = 0; i < f->n_kernels; i++)
        keep += !vt_op_disabled(disable_ops, p->name, f->kernels[i].op);
    if (keep == f->n_kernels)
        return true;
    p->filtered = malloc(sizeof *p->filtered * (keep ? keep : 1));
    if (!p->filtered)
        return false;
    keep = 0;
    for (uint32_t i = 0; i < f->n_kernels; i++)
        if (!vt_op_disabled(disable_ops, p->name, f->kernels[i].op))
            p->filtered[keep++] = f->kernels[i];
    vt_loader_log(debug, "%s: VT_DISABLE_OPS hides %u of %u kernels", p->path, f->n_kernels - keep, f->n_kernels);
    p->kernels = p->filtered;
    p->n_kernels = keep;
    return true;
}

/* Function pointers cannot be cast from void * in ISO C; copy the bits. */
static vt_plugin_entry_fn entry_from_symbol(void *sym)
{
    vt_plugin_entry_fn fn;
    memcpy(&fn, &sym, sizeof fn);
    return fn;
}

static char *vtable_problem(const vt_plugin *p, const vt_backend_iface *f)
{
    if (f->abi_version != VT_PLUGIN_ABI)
        return vt_strdup_printf("vtable ABI %u, core wants %u", f->abi_version, VT_PLUGIN_ABI);
    if (f->struct_size < VT_IFACE_V1_SIZE) /* version 1 is the least the core runs */
        return vt_strdup_printf("vtable is %u bytes, core needs %zu", f->struct_size, (size_t)VT_IFACE_V1_SIZE);
    if (!f->name || strcmp(f->name, p->name) != 0)
        return vt_strdup_printf("vtable names backend '%s' but the file is for '%s'", f->name ? f->name : "(null)",
                                p->name);
    const char *missing = !f->init           ? "init"
                          : !f->fini         ? "fini"
                          : !f->device_count ? "device_count"
                          : !f->probe        ? "probe"
                          : !f->alloc        ? "alloc"
                          : !f->release      ? "release"
                          : !f->write        ? "write"
                          : !f->read         ? "read"
                          : !f->synchronize  ? "synchronize"
                          : !f->counters     ? "counters"
                                             : NULL;
    if (missing)
        return vt_strdup_printf("vtable function %s is NULL", missing);
    if (!f->host_alloc != !f->host_free)
        return vt_strdup_printf("vtable sets only one of host_alloc and host_free");
    char *v2 = vt_iface_v2_problem(f);
    if (v2)
        return v2;
    if (f->n_kernels && !f->kernels)
        return vt_strdup_printf("vtable lists %u kernels but no table", f->n_kernels);
    for (uint32_t i = 0; i < f->n_kernels; i++) {
        const vt_kernel *k = &f->kernels[i];
        if (!vt_op_name(k->op) || !k->run || k->sig.n > VT_SIG_MAX)
            return vt_strdup_printf("kernel table row %u is malformed (op %u)", i, k->op);
        if (!vt_op_sig_in_catalog(k->op, k->sig)) {
            char sig[96];
            return vt_strdup_printf("kernel table row %u: %s (%u) %s is not a signature of the catalogue", i,
                                    vt_op_name(k->op), k->op, vt_sig_format(k->sig, sig, sizeof sig));
        }
    }
    return NULL;
}

/* Write "stage NAME\n" to fd when fd >= 0. */
static void report_stage(int fd, const char *name)
{
    if (fd < 0)
        return;
    char line[64];
    int n = snprintf(line, sizeof line, "stage %s\n", name);
    if (n > 0 && write(fd, line, (size_t)n) < 0)
        return; /* the parent reads what arrives; nothing more to do */
}

/* Why dlopen refused path: libltdl reports its own last step ("file not
 * found") when the dynamic linker failed, so ask the linker itself. Only
 * called after the ABI word matched (plugin code may run here). */
static char *dlopen_failure(const char *path, const char *lt_text)
{
    dlerror();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        return vt_strdup_printf("dlopen failed: %s", e ? e : lt_text ? lt_text : "unknown error");
    }
    dlclose(h);
    return vt_strdup_printf("dlopen failed: %s (libltdl; the dynamic linker itself loads the file)",
                            lt_text ? lt_text : "unknown error");
}

/* Load one candidate: ELF check, dlopen, ABI word, entry, vtable checks,
 * init, device count. Fills p->state/reason; never fatal. When stage_fd
 * >= 0, "stage NAME\n" is written to it before each step (isolated
 * probes report where a crash happened). */
static void load_steps(const vt_registry *reg, vt_plugin *p, bool debug, int stage_fd)
{
    report_stage(stage_fd, "trust check");
    char *problem = vt_plugin_trust_problem(p->path, false);
    if (problem) {
        char *why = vt_strdup_printf("untrusted: %s", problem);
        free(problem);
        vt_loader_log(debug, "%s: skipped: %s", p->path, why ? why : "untrusted");
        set_reason(p, VT_BACKEND_SKIPPED, why);
        return;
    }
    report_stage(stage_fd, "ELF check");
    uint32_t file_abi = 0;
    problem = vt_plugin_elf_abi(p->path, &file_abi);
    if (problem) {
        vt_loader_log(debug, "%s: skipped: %s", p->path, problem);
        set_reason(p, VT_BACKEND_SKIPPED, problem);
        return;
    }
    /* The ABI word, from the file, before any plugin code runs. */
    p->abi_found = file_abi;
    if (file_abi != VT_PLUGIN_ABI) {
        set_reason(p, VT_BACKEND_SKIPPED, vt_strdup_printf("ABI %u, core wants %u", p->abi_found, VT_PLUGIN_ABI));
        vt_loader_log(debug, "%s: skipped: %s", p->path, p->reason);
        return;
    }

    lt_dladvise advise;
    report_stage(stage_fd, "dlopen");
    vt_ltdl_lock();
    lt_dlhandle h = NULL;
    if (lt_dladvise_init(&advise) == 0) {
        lt_dladvise_local(&advise);
        h = lt_dlopenadvise(p->path, advise);
        lt_dladvise_destroy(&advise);
    }
    if (!h) {
        char *why = dlopen_failure(p->path, lt_dlerror());
        vt_ltdl_unlock();
        vt_loader_log(debug, "%s: skipped: %s", p->path, why ? why : "dlopen failed");
        set_reason(p, VT_BACKEND_SKIPPED, why);
        return;
    }
    const uint32_t *abi = lt_dlsym(h, VT_PLUGIN_ABI_SYMBOL);
    void *entry_sym = abi ? lt_dlsym(h, VT_PLUGIN_ENTRY_SYMBOL) : NULL;
    vt_ltdl_unlock();
    p->handle = h;

    if (!abi || *abi != file_abi) {
        close_handle(p);
        set_reason(
            p, VT_BACKEND_SKIPPED,
            abi ? vt_strdup_printf("loaded %s is %u but the file's word is %u", VT_PLUGIN_ABI_SYMBOL, *abi, file_abi)
                : vt_strdup_printf("missing symbol %s once loaded", VT_PLUGIN_ABI_SYMBOL));
        vt_loader_log(debug, "%s: skipped: %s", p->path, p->reason);
        return;
    }
    if (!entry_sym) {
        close_handle(p);
        set_reason(p, VT_BACKEND_SKIPPED, vt_strdup_printf("missing symbol %s", VT_PLUGIN_ENTRY_SYMBOL));
        vt_loader_log(debug, "%s: skipped: %s", p->path, p->reason);
        return;
    }
    vt_loader_log(debug, "%s: ABI %u matches; calling %s", p->path, p->abi_found, VT_PLUGIN_ENTRY_SYMBOL);
    report_stage(stage_fd, VT_PLUGIN_ENTRY_SYMBOL);
    const vt_backend_iface *f = entry_from_symbol(entry_sym)();
    char *bad = f ? vtable_problem(p, f) : vt_strdup_printf("%s returned NULL", VT_PLUGIN_ENTRY_SYMBOL);
    if (bad) {
        close_handle(p);
        set_reason(p, VT_BACKEND_SKIPPED, bad);
        vt_loader_log(debug, "%s: skipped: %s", p->path, p->reason);
        return;
    }
    p->iface = f;
    if (!effective_table(p, reg->disable_ops, debug)) {
        close_handle(p);
        set_reason(p, VT_BACKEND_SKIPPED, vt_strdup("out of memory filtering the kernel table"));
        return;
    }
    if (f->flags & VT_BACKEND_FLAG_RESIDENT) {
        vt_ltdl_lock();
        keep_resident(p->handle);
        vt_ltdl_unlock();
    }
    free(p->description);
    p->description = vt_strdup(f->description ? f->description : "");

    char why[VT_WHY_SIZE] = "";
    vt_loader_log(debug, "%s: calling init of backend %s", p->path, p->name);
    report_stage(stage_fd, "init");
    vt_status st = f->init(&p->ctx, why, sizeof why);
    if (st != VT_OK) {
        p->ctx = NULL;
        close_handle(p);
        set_reason(p, VT_BACKEND_SKIPPED,
                   vt_strdup_printf("init failed: %s: %s", vt_status_name(st), why[0] ? why : "no reason given"));
        vt_loader_log(debug, "%s: skipped: %s", p->path, p->reason);
        return;
    }
    why[0] = '\0';
    report_stage(stage_fd, "device_count");
    int n = f->device_count(p->ctx, why, sizeof why);
    if (n <= 0) {
        p->n_devices = 0;
        set_reason(p, VT_BACKEND_NO_DEVICES, vt_strdup(why[0] ? why : "the backend reports zero devices"));
        vt_loader_log(debug, "%s: loaded backend %s with no devices: %s", p->path, p->name, p->reason);
        return;
    }
    p->n_devices = (uint32_t)n;
    set_reason(p, VT_BACKEND_READY, vt_strdup(""));
    vt_loader_log(debug, "%s: loaded backend %s, ABI %u, %d device%s", p->path, p->name, p->abi_found, n,
                  n == 1 ? "" : "s");
}

void vt_plugin_unload(vt_plugin *p)
{
    for (uint32_t i = 0; p->no_kernels && i < p->n_devices; i++)
        free(p->no_kernels[i]);
    free(p->no_kernels);
    p->no_kernels = NULL;
    free(p->filtered);
    p->filtered = NULL;
    p->kernels = NULL;
    p->n_kernels = 0;
    if (p->iface && p->ctx)
        p->iface->fini(p->ctx);
    p->ctx = NULL;
    close_handle(p);
}

/* SPEC 4 consistency: a device that is not host-addressable must stage
 * weights. Returns NULL or a malloc'd reason. */
char *vt_staging_claim_problem(const char *dev_id, const vt_device_caps *c)
{
    if (!c->host_addressable && !c->needs_weight_staging)
        return vt_strdup_printf("device %s claims needs_weight_staging=false while not host-addressable (%s); "
                                "a discrete device must stage weights",
                                dev_id, c->host_addressable_reason[0] ? c->host_addressable_reason : "no reason given");
    return NULL;
}

/* Probe every device of a freshly loaded plugin once and refuse the plugin
 * if any answer breaks the staging rule or the probe fails. */
static void vet_devices(vt_plugin *p, bool debug, int stage_fd)
{
    report_stage(stage_fd, "probe");
    for (uint32_t i = 0; i < p->n_devices; i++) {
        vt_device_caps caps;
        memset(&caps, 0, sizeof caps);
        caps.struct_size = sizeof caps;
        char why[VT_WHY_SIZE] = "";
        char id[96];
        snprintf(id, sizeof id, "%s:%u", p->name, i);
        vt_status st = p->iface->probe(p->ctx, (int)i, &caps, why, sizeof why);
        char *bad = st != VT_OK ? vt_strdup_printf("probe of %s failed: %s: %s", id, vt_status_name(st), why)
                                : vt_staging_claim_problem(id, &caps);
        if (!bad && caps.type != p->iface->device_type)
            bad = vt_strdup_printf("device %s reports type %u but the backend declares %u", id, caps.type,
                                   p->iface->device_type);
        if (!bad && caps.kernels_unavailable[0]) {
            caps.kernels_unavailable[sizeof caps.kernels_unavailable - 1] = '\0';
            if (!p->no_kernels)
                p->no_kernels = calloc(p->n_devices, sizeof *p->no_kernels);
            if (!p->no_kernels || !(p->no_kernels[i] = vt_strdup(caps.kernels_unavailable)))
                bad = vt_strdup_printf("out of memory recording why %s runs no kernel", id);
            else
                vt_loader_log(debug, "%s: device %s runs none of its kernels: %s", p->path, id, p->no_kernels[i]);
        }
        if (bad) {
            vt_plugin_unload(p);
            free(p->reason);
            p->reason = bad;
            p->state = VT_BACKEND_SKIPPED;
            p->n_devices = 0;
            vt_loader_log(debug, "%s: refused: %s", p->path, bad);
            return;
        }
    }
}

/* A note on a candidate that does not change its verdict: a registry
 * warning naming the plugin file. */
static void warn_plugin(vt_registry *reg, const vt_plugin *p, const char *fmt, ...) VT_PRINTF(3, 4);
static void warn_plugin(vt_registry *reg, const vt_plugin *p, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    vt_registry_warn(reg, "%s: %s", p->path, text);
}

/* Load one pending candidate in this process. */
void vt_plugin_open(const vt_registry *reg, vt_plugin *p, bool debug)
{
    p->pending = false;
    load_steps(reg, p, debug, -1);
    if (p->state == VT_BACKEND_READY)
        vet_devices(p, debug, -1);
}

/* Load a candidate in a child process first (VT_REGISTRY_ISOLATE): the
 * child reports each stage on a pipe, so a crash or hang is attributed to
 * the stage it happened in, and the plugin is then not loaded here. */
void vt_plugin_probe_isolated(vt_registry *reg, vt_plugin *p, bool debug)
{
    int fds[2];
    if (pipe(fds) != 0) {
        warn_plugin(reg, p, "cannot isolate: pipe failed (%s); loading in process", strerror(errno));
        return;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        warn_plugin(reg, p, "cannot isolate: fork failed (%s); loading in process", strerror(errno));
        return;
    }
    if (pid == 0) {
        close(fds[0]);
        load_steps(reg, p, debug, fds[1]);
        if (p->state == VT_BACKEND_READY)
            vet_devices(p, debug, fds[1]);
        report_stage(fds[1], "fini");
        vt_plugin_unload(p);
        report_stage(fds[1], "done");
        _exit(0);
    }
    close(fds[1]);
    char buf[4096], stage[64] = "start";
    size_t have = 0;
    int timeout_ms = (int)reg->isolate_timeout_s * 1000, waited = 0;
    bool hung = false;
    for (;;) {
        struct pollfd pfd = {fds[0], POLLIN, 0};
        int r = poll(&pfd, 1, 200);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0) {
            waited += 200;
            if (waited >= timeout_ms) {
                hung = true;
                kill(pid, SIGKILL);
                break;
            }
            continue;
        }
        ssize_t got = read(fds[0], buf + have, sizeof buf - 1 - have);
        if (got <= 0)
            break;
        have += (size_t)got;
        buf[have] = '\0';
        /* Remember the last complete "stage X" line. */
        char *line = buf, *nl;
        while ((nl = strchr(line, '\n'))) {
            *nl = '\0';
            if (!strncmp(line, "stage ", 6))
                snprintf(stage, sizeof stage, "%s", line + 6);
            line = nl + 1;
        }
        have = strlen(line);
        memmove(buf, line, have + 1);
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    char *why = NULL;
    if (hung)
        why = vt_strdup_printf("hung for %d s during %s in an isolated probe process (killed); not loaded",
                               (int)reg->isolate_timeout_s, stage);
    else if (WIFSIGNALED(status))
        why = vt_strdup_printf("crashed with signal %d (%s) during %s in an isolated probe process; not loaded",
                               WTERMSIG(status), strsignal(WTERMSIG(status)), stage);
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || strcmp(stage, "done") != 0)
        why = vt_strdup_printf("exited with status %d during %s in an isolated probe process; not loaded",
                               WIFEXITED(status) ? WEXITSTATUS(status) : -1, stage);
    if (why) {
        free(p->reason);
        p->reason = why;
        p->state = VT_BACKEND_SKIPPED;
        p->pending = false;
        vt_loader_log(debug, "%s: %s", p->path, why);
    } else {
        vt_loader_log(debug, "%s: isolated probe passed", p->path);
    }
}
