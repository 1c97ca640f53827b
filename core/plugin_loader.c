/* plugin_loader.c - loading one backend plugin with libltdl.
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

bool vt_op_disabled(const char *backend, uint32_t op)
{
    const char *spec = getenv("VT_DISABLE_OPS");
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
static bool effective_table(vt_plugin *p, bool debug)
{
    const vt_backend_iface *f = p->iface;
    p->kernels = f->kernels;
    p->n_kernels = f->n_kernels;
    uint32_t keep = 0;
    for (uint32_t i = 0; i < f->n_kernels; i++)
        keep += !vt_op_disabled(p->name, f->kernels[i].op);
    if (keep == f->n_kernels)
        return true;
    p->filtered = malloc(sizeof *p->filtered * (keep ? keep : 1));
    if (!p->filtered)
        return false;
    keep = 0;
    for (uint32_t i = 0; i < f->n_kernels; i++)
        if (!vt_op_disabled(p->name, f->kernels[i].op))
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

void vt_plugin_stage(int fd, const char *name)
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

void vt_plugin_load(vt_plugin *p, bool debug, int stage_fd)
{
    vt_plugin_stage(stage_fd, "trust check");
    char *problem = vt_plugin_trust_problem(p->path, false);
    if (problem) {
        char *why = vt_strdup_printf("untrusted: %s", problem);
        free(problem);
        vt_loader_log(debug, "%s: skipped: %s", p->path, why ? why : "untrusted");
        set_reason(p, VT_BACKEND_SKIPPED, why);
        return;
    }
    vt_plugin_stage(stage_fd, "ELF check");
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
    vt_plugin_stage(stage_fd, "dlopen");
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
    vt_plugin_stage(stage_fd, VT_PLUGIN_ENTRY_SYMBOL);
    const vt_backend_iface *f = entry_from_symbol(entry_sym)();
    char *bad = f ? vtable_problem(p, f) : vt_strdup_printf("%s returned NULL", VT_PLUGIN_ENTRY_SYMBOL);
    if (bad) {
        close_handle(p);
        set_reason(p, VT_BACKEND_SKIPPED, bad);
        vt_loader_log(debug, "%s: skipped: %s", p->path, p->reason);
        return;
    }
    p->iface = f;
    if (!effective_table(p, debug)) {
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
    vt_plugin_stage(stage_fd, "init");
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
    vt_plugin_stage(stage_fd, "device_count");
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
