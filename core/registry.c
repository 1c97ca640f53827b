/* registry.c - discovering plugin candidates, opening and closing the
 * registry, and answering questions about backends and devices.
 *
 * Search order (SPEC 3): each absolute directory of VT_PLUGIN_PATH, then,
 * when this libvt is the uninstalled one of a build tree, that tree's
 * plugin directories, else $(pkglibdir). Empty and relative entries (which
 * would mean the current directory) are never searched; a directory that
 * another user can write or owns, or one on procfs, is refused with a
 * warning (plugin_trust.c). Within a directory candidates are
 * vt_<name>.so in name order; the first candidate of a name wins. */
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vt_internal.h"

#ifndef VT_PKGLIBDIR
#error "VT_PKGLIBDIR must be defined by the build"
#endif

typedef struct strlist {
    char **v;
    size_t n, cap;
} strlist;

static bool strlist_push(strlist *l, char *s)
{
    if (!s)
        return false;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        char **v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            free(s);
            return false;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = s;
    return true;
}

static void strlist_free(strlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static void warn(vt_registry *reg, bool debug, const char *fmt, ...) VT_PRINTF(3, 4);
static void warn(vt_registry *reg, bool debug, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    vt_loader_log(debug, "warning: %s", text);
    char **w = realloc(reg->warnings, (reg->n_warnings + 1) * sizeof *w);
    if (!w)
        return;
    reg->warnings = w;
    char *copy = vt_strdup(text);
    if (copy)
        reg->warnings[reg->n_warnings++] = copy;
}

/* Is this libvt the uninstalled one in its own build tree? */
static bool running_from_build_tree(void)
{
#ifdef VT_BUILDTREE_LIBDIR
    Dl_info info;
    void *self = (void *)(uintptr_t)&vt_registry_open;
    if (!dladdr(self, &info) || !info.dli_fname)
        return false;
    char lib[PATH_MAX], tree[PATH_MAX];
    if (!realpath(info.dli_fname, lib) || !realpath(VT_BUILDTREE_LIBDIR, tree))
        return false;
    char *slash = strrchr(lib, '/');
    if (!slash)
        return false;
    *slash = '\0';
    return strcmp(lib, tree) == 0;
#else
    return false;
#endif
}

/* One directory to search and where it came from. */
typedef struct search_dir {
    char *path; /* as given */
    char *real; /* realpath, for de-duplication */
    const char *origin;
} search_dir;

static void add_dirs(vt_registry *reg, bool debug, search_dir **dirs, size_t *n, const char *list, const char *origin)
{
    if (!list)
        return;
    const char *p = list;
    while (1) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > 0) {
            char *dir = strndup(p, len);
            if (!dir)
                return;
            if (dir[0] != '/') {
                warn(reg, debug, "ignoring relative directory '%s' in %s: plugins load from absolute paths only", dir,
                     origin);
                free(dir);
            } else {
                char real[PATH_MAX];
                real[0] = '\0';
                bool dup = false;
                if (realpath(dir, real)) {
                    for (size_t i = 0; i < *n && !dup; i++)
                        dup = (*dirs)[i].real && strcmp((*dirs)[i].real, real) == 0;
                }
                search_dir *d = dup ? NULL : realloc(*dirs, (*n + 1) * sizeof **dirs);
                if (!d) {
                    free(dir);
                } else {
                    *dirs = d;
                    d[*n].path = dir;
                    d[*n].real = vt_strdup(real[0] == '/' ? real : NULL);
                    d[*n].origin = origin;
                    (*n)++;
                }
            }
        }
        if (!end)
            break;
        p = end + 1;
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names of vt_*.so files in dir, sorted; returns false if unreadable. */
static bool list_candidates(const char *dir, strlist *out)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len > 6 && strncmp(e->d_name, "vt_", 3) == 0 && strcmp(e->d_name + len - 3, ".so") == 0)
            strlist_push(out, vt_strdup(e->d_name));
    }
    closedir(d);
    if (out->n)
        qsort(out->v, out->n, sizeof *out->v, cmp_str);
    return true;
}

/* "vt_cuda_stub.so" -> "cuda-stub" */
static char *backend_name_of(const char *file)
{
    size_t len = strlen(file) - 3 - 3;
    char *name = strndup(file + 3, len);
    if (!name)
        return NULL;
    for (char *c = name; *c; c++)
        if (*c == '_')
            *c = '-';
    return name;
}

/* VT_BACKENDS: "a,b" selects, "^a,b" excludes. */
typedef struct backend_filter {
    bool exclude;
    strlist names;
    bool *matched;
} backend_filter;

static void filter_parse(backend_filter *f, const char *spec)
{
    memset(f, 0, sizeof *f);
    if (!spec)
        return;
    while (*spec == ' ')
        spec++;
    if (*spec == '^') {
        f->exclude = true;
        spec++;
    }
    const char *p = spec;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len && (*p == ' ' || *p == '^')) {
            p++;
            len--;
        }
        while (len && p[len - 1] == ' ')
            len--;
        if (len)
            strlist_push(&f->names, strndup(p, len));
        if (!end)
            break;
        p = end + 1;
    }
    f->matched = calloc(f->names.n ? f->names.n : 1, sizeof *f->matched);
}

/* NULL when allowed, otherwise a static reason. */
static const char *filter_verdict(backend_filter *f, const char *name)
{
    if (!f->names.n)
        return NULL;
    bool listed = false;
    for (size_t i = 0; i < f->names.n; i++)
        if (strcmp(f->names.v[i], name) == 0) {
            listed = true;
            if (f->matched)
                f->matched[i] = true;
        }
    if (f->exclude)
        return listed ? "excluded by VT_BACKENDS" : NULL;
    return listed ? NULL : "not selected by VT_BACKENDS";
}

static void filter_free(backend_filter *f)
{
    strlist_free(&f->names);
    free(f->matched);
}

static vt_plugin *add_candidate(vt_registry *reg, size_t *cap)
{
    if (reg->n_plugins == *cap) {
        size_t ncap = *cap ? *cap * 2 : 8;
        vt_plugin *v = realloc(reg->plugins, ncap * sizeof *v);
        if (!v)
            return NULL;
        reg->plugins = v;
        *cap = ncap;
    }
    vt_plugin *p = &reg->plugins[reg->n_plugins++];
    memset(p, 0, sizeof *p);
    return p;
}

/* SPEC 4 consistency: a device that is not host-addressable must stage
 * weights. Returns NULL or a malloc'd reason. */
static char *staging_claim_problem(const char *dev_id, const vt_device_caps *c)
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
    vt_plugin_stage(stage_fd, "probe");
    for (uint32_t i = 0; i < p->n_devices; i++) {
        vt_device_caps caps;
        memset(&caps, 0, sizeof caps);
        caps.struct_size = sizeof caps;
        char why[VT_WHY_SIZE] = "";
        char id[96];
        snprintf(id, sizeof id, "%s:%u", p->name, i);
        vt_status st = p->iface->probe(p->ctx, (int)i, &caps, why, sizeof why);
        char *bad = st != VT_OK ? vt_strdup_printf("probe of %s failed: %s: %s", id, vt_status_name(st), why)
                                : staging_claim_problem(id, &caps);
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

static void discover_all(vt_registry *reg, search_dir *dirs, size_t n_dirs, backend_filter *filter, bool debug)
{
    size_t cap = 0;
    for (size_t d = 0; d < n_dirs; d++) {
        struct stat st;
        if (stat(dirs[d].path, &st) != 0) {
            vt_loader_log(debug, "directory %s (%s): %s", dirs[d].path, dirs[d].origin, strerror(errno));
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            warn(reg, debug, "%s (%s) is not a directory", dirs[d].path, dirs[d].origin);
            continue;
        }
        char *untrusted = vt_plugin_trust_problem(dirs[d].path, true); /* plugin_trust.c's rule */
        if (untrusted) {
            warn(reg, debug, "refusing plugin directory %s (%s): %s", dirs[d].path, dirs[d].origin, untrusted);
            free(untrusted);
            continue;
        }
        strlist files = {0};
        if (!list_candidates(dirs[d].path, &files)) {
            warn(reg, debug, "cannot read plugin directory %s: %s", dirs[d].path, strerror(errno));
            continue;
        }
        vt_loader_log(debug, "directory %s (%s): %zu candidate%s", dirs[d].path, dirs[d].origin, files.n,
                      files.n == 1 ? "" : "s");
        for (size_t i = 0; i < files.n; i++) {
            vt_plugin *p = add_candidate(reg, &cap);
            if (!p)
                break;
            p->name = backend_name_of(files.v[i]);
            p->path = vt_strdup_printf("%s/%s", dirs[d].path, files.v[i]);
            p->origin = dirs[d].origin;
            p->description = vt_strdup("");
            p->reason = vt_strdup("");
            if (!p->name || !p->path || !p->description || !p->reason) {
                p->state = VT_BACKEND_SKIPPED;
                continue;
            }
            vt_loader_log(debug, "candidate %s (backend %s, from %s)", p->path, p->name, p->origin);
            const vt_plugin *first = NULL;
            for (size_t j = 0; j + 1 < reg->n_plugins && !first; j++)
                if (reg->plugins[j].name && strcmp(reg->plugins[j].name, p->name) == 0)
                    first = &reg->plugins[j];
            if (first) {
                free(p->reason);
                p->reason = vt_strdup_printf("shadowed by %s", first->path);
                p->state = VT_BACKEND_SHADOWED;
                vt_loader_log(debug, "%s: not loaded: %s", p->path, p->reason);
                continue;
            }
            const char *excluded = filter_verdict(filter, p->name);
            if (excluded) {
                free(p->reason);
                p->reason = vt_strdup(excluded);
                p->state = VT_BACKEND_EXCLUDED;
                vt_loader_log(debug, "%s: not loaded: %s", p->path, excluded);
                continue;
            }
            p->pending = true;
        }
        strlist_free(&files);
    }
}

/* A note on a candidate that does not change its verdict. */
static void warn_plugin(vt_plugin *p, const char *fmt, ...) VT_PRINTF(2, 3);
static void warn_plugin(vt_plugin *p, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    fprintf(stderr, "vt-loader: %s: %s\n", p->path, text);
}

/* Load one pending candidate in this process. */
static void load_one(vt_plugin *p, bool debug)
{
    p->pending = false;
    vt_plugin_load(p, debug, -1);
    if (p->state == VT_BACKEND_READY)
        vet_devices(p, debug, -1);
}

/* Seconds an isolated probe may take before it is killed. */
static int isolate_timeout(void)
{
    const char *e = getenv("VT_LOADER_ISOLATE_TIMEOUT");
    int64_t v = 0;
    return e && vt_parse_i64(e, 1, 3599, &v) ? (int)v : 60;
}

/* Load a candidate in a child process first (VT_REGISTRY_ISOLATE): the
 * child reports each stage on a pipe, so a crash or hang is attributed to
 * the stage it happened in, and the plugin is then not loaded here. */
static void probe_isolated(vt_plugin *p, bool debug)
{
    int fds[2];
    if (pipe(fds) != 0) {
        warn_plugin(p, "cannot isolate: pipe failed (%s); loading in process", strerror(errno));
        return;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        warn_plugin(p, "cannot isolate: fork failed (%s); loading in process", strerror(errno));
        return;
    }
    if (pid == 0) {
        close(fds[0]);
        vt_plugin_load(p, debug, fds[1]);
        if (p->state == VT_BACKEND_READY)
            vet_devices(p, debug, fds[1]);
        vt_plugin_stage(fds[1], "fini");
        vt_plugin_unload(p);
        vt_plugin_stage(fds[1], "done");
        _exit(0);
    }
    close(fds[1]);
    char buf[4096], stage[64] = "start";
    size_t have = 0;
    int timeout_ms = isolate_timeout() * 1000, waited = 0;
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
                               isolate_timeout(), stage);
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

static vt_status build_devices(vt_registry *reg)
{
    size_t n = 0;
    for (size_t i = 0; i < reg->n_plugins; i++)
        if (reg->plugins[i].state == VT_BACKEND_READY)
            n += reg->plugins[i].n_devices;
    if (!n)
        return VT_OK;
    reg->devices = calloc(n, sizeof *reg->devices);
    if (!reg->devices)
        return vt_set_error(VT_E_NO_MEMORY, "out of memory listing %zu devices", n);
    for (size_t i = 0; i < reg->n_plugins; i++) {
        vt_plugin *p = &reg->plugins[i];
        if (p->state != VT_BACKEND_READY)
            continue;
        if (strcmp(p->name, "cpu") == 0 && !reg->cpu)
            reg->cpu = p;
        for (uint32_t d = 0; d < p->n_devices; d++) {
            vt_device *dev = &reg->devices[reg->n_devices++];
            dev->reg = reg;
            dev->plugin = p;
            dev->index = (int)d;
            snprintf(dev->id, sizeof dev->id, "%s:%u", p->name, d);
            dev->no_kernels = p->no_kernels ? p->no_kernels[d] : NULL;
            atomic_init(&dev->native_runs, 0);
            atomic_init(&dev->cpu_tier_runs, 0);
            atomic_init(&dev->refusals, 0);
            atomic_init(&dev->core_syncs, 0);
            atomic_init(&dev->core_launches, 0);
            pthread_mutex_init(&dev->queue_lock, NULL);
            dev->default_queue = NULL;
        }
    }
    return VT_OK;
}

static int env_debug(void)
{
    const char *v = getenv("VT_LOADER_DEBUG");
    return v && *v && strcmp(v, "0") != 0;
}

vt_status vt_registry_open(vt_registry **out, const vt_registry_options *options)
{
    if (!out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_registry_open: out is NULL");
    *out = NULL;
    vt_registry_options opt = {sizeof opt, NULL, NULL, -1, 0, VT_TIER_POLICY_ENV};
    if (options) {
        /* Versioned like sqlite3_vfs: an older, shorter struct keeps the
         * defaults for the fields it lacks; a longer one is from the future. */
        if (options->struct_size < sizeof(uint32_t) || options->struct_size > sizeof opt)
            return vt_set_error(VT_E_INVALID_ARG, "vt_registry_open: options.struct_size %u (this libvt knows %zu)",
                                options->struct_size, sizeof opt);
        memcpy(&opt, options, options->struct_size);
    }
    const char *plugin_path = opt.plugin_path ? opt.plugin_path : getenv("VT_PLUGIN_PATH");
    const char *backends = opt.backends ? opt.backends : getenv("VT_BACKENDS");
    bool debug = opt.loader_debug < 0 ? env_debug() : opt.loader_debug != 0;
    const char *iso = getenv("VT_LOADER_ISOLATE");
    bool isolate = (opt.flags & VT_REGISTRY_ISOLATE) || (iso && *iso && strcmp(iso, "0") != 0);

    vt_registry *reg = calloc(1, sizeof *reg);
    if (!reg)
        return vt_set_error(VT_E_NO_MEMORY, "out of memory opening the registry");
    reg->debug = debug;
    const char *tier_log = getenv("VT_TIER_LOG");
    reg->tier_log = tier_log && *tier_log && strcmp(tier_log, "0") != 0;
    /* The tier policy is the registry's, fixed now: the option, else the
     * environment (a bad value is reported by every resolution). */
    if (opt.tier_policy == VT_TIER_POLICY_STRICT) {
        reg->tier_flags = VT_RESOLVE_STRICT;
    } else if (opt.tier_policy == VT_TIER_POLICY_ENV) {
        reg->policy_status = vt_tier_policy_from_env(&reg->tier_flags);
        if (reg->policy_status != VT_OK)
            reg->policy_error = vt_strdup(vt_last_error());
    } else if (opt.tier_policy != VT_TIER_POLICY_PORTABLE) {
        free(reg);
        return vt_set_error(VT_E_INVALID_ARG, "vt_registry_open: options.tier_policy %u is not a policy",
                            opt.tier_policy);
    }

    vt_ltdl_lock();
    int init_err = lt_dlinit();
    vt_ltdl_unlock();
    if (init_err) {
        free(reg);
        return vt_set_error(VT_E_PLUGIN, "lt_dlinit failed");
    }

    search_dir *dirs = NULL;
    size_t n_dirs = 0;
    add_dirs(reg, debug, &dirs, &n_dirs, plugin_path, "VT_PLUGIN_PATH");
    if (!(opt.flags & VT_REGISTRY_ONLY_PLUGIN_PATH)) {
#ifdef VT_BUILDTREE_PLUGIN_DIRS
        if (running_from_build_tree())
            add_dirs(reg, debug, &dirs, &n_dirs, VT_BUILDTREE_PLUGIN_DIRS, "build tree");
        else
#endif
            add_dirs(reg, debug, &dirs, &n_dirs, VT_PKGLIBDIR, "pkglibdir");
    }
    size_t path_len = 1;
    for (size_t i = 0; i < n_dirs; i++)
        path_len += strlen(dirs[i].path) + 1;
    reg->search_path = calloc(path_len, 1);
    for (size_t i = 0; reg->search_path && i < n_dirs; i++) {
        if (i)
            strcat(reg->search_path, ":");
        strcat(reg->search_path, dirs[i].path);
    }

    backend_filter filter;
    filter_parse(&filter, backends);
    discover_all(reg, dirs, n_dirs, &filter, debug);
    /* Isolated probes first, all of them, before any plugin runs in this
     * process (device runtimes do not survive a fork after their init). */
    if (isolate)
        for (size_t i = 0; i < reg->n_plugins; i++)
            if (reg->plugins[i].pending)
                probe_isolated(&reg->plugins[i], debug);
    for (size_t i = 0; i < reg->n_plugins; i++)
        if (reg->plugins[i].pending)
            load_one(&reg->plugins[i], debug);
    for (size_t i = 0; i < filter.names.n; i++)
        if (filter.matched && !filter.matched[i])
            warn(reg, debug, "VT_BACKENDS names '%s', but no plugin of that name was found", filter.names.v[i]);
    filter_free(&filter);
    for (size_t i = 0; i < n_dirs; i++) {
        free(dirs[i].path);
        free(dirs[i].real);
    }
    free(dirs);

    vt_status st =
        reg->search_path ? build_devices(reg) : vt_set_error(VT_E_NO_MEMORY, "out of memory opening the registry");
    if (st != VT_OK) {
        vt_registry_close(reg);
        return st;
    }
    *out = reg;
    return VT_OK;
}

void vt_registry_close(vt_registry *reg)
{
    if (!reg)
        return;
    for (size_t i = 0; i < reg->n_devices; i++)
        vt_device_queues_fini(&reg->devices[i]);
    for (size_t i = 0; i < reg->n_plugins; i++) {
        vt_plugin *p = &reg->plugins[i];
        vt_plugin_unload(p);
        free(p->name);
        free(p->path);
        free(p->reason);
        free(p->description);
    }
    for (size_t i = 0; i < reg->n_warnings; i++)
        free(reg->warnings[i]);
    free(reg->warnings);
    free(reg->plugins);
    free(reg->devices);
    free(reg->search_path);
    free(reg->policy_error);
    free(reg);
    vt_ltdl_lock();
    lt_dlexit();
    vt_ltdl_unlock();
}

const char *vt_registry_search_path(const vt_registry *reg)
{
    return reg && reg->search_path ? reg->search_path : "";
}

size_t vt_registry_warning_count(const vt_registry *reg)
{
    return reg ? reg->n_warnings : 0;
}

const char *vt_registry_warning(const vt_registry *reg, size_t i)
{
    return reg && i < reg->n_warnings ? reg->warnings[i] : NULL;
}

const char *vt_backend_state_name(int state)
{
    switch (state) {
    case VT_BACKEND_READY: return "ready";
    case VT_BACKEND_NO_DEVICES: return "no devices";
    case VT_BACKEND_SKIPPED: return "skipped";
    case VT_BACKEND_EXCLUDED: return "excluded";
    case VT_BACKEND_SHADOWED: return "shadowed";
    }
    return "unknown";
}

size_t vt_registry_backend_count(const vt_registry *reg)
{
    return reg ? reg->n_plugins : 0;
}

vt_status vt_registry_backend_info(const vt_registry *reg, size_t i, vt_backend_info *out)
{
    if (!reg || !out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_registry_backend_info: NULL argument");
    if (i >= reg->n_plugins)
        return vt_set_error(VT_E_NOT_FOUND, "backend index %zu out of range (%zu candidates)", i, reg->n_plugins);
    const vt_plugin *p = &reg->plugins[i];
    out->name = p->name ? p->name : "";
    out->path = p->path ? p->path : "";
    out->origin = p->origin;
    out->state = p->state;
    out->reason = p->reason ? p->reason : "";
    out->description = p->description ? p->description : "";
    out->abi_found = p->abi_found;
    out->device_count = p->state == VT_BACKEND_READY ? p->n_devices : 0;
    out->device_type = p->iface ? (int)p->iface->device_type : -1;
    return VT_OK;
}

static const vt_plugin *find_loaded(const vt_registry *reg, const char *name, size_t len)
{
    for (size_t i = 0; i < reg->n_plugins; i++) {
        const vt_plugin *p = &reg->plugins[i];
        if (p->iface && p->name && strlen(p->name) == len && strncmp(p->name, name, len) == 0)
            return p;
    }
    return NULL;
}

vt_status vt_registry_backend_kernels(const vt_registry *reg, const char *backend, const vt_kernel **kernels,
                                      uint32_t *n_kernels)
{
    if (!reg || !backend || !kernels || !n_kernels)
        return vt_set_error(VT_E_INVALID_ARG, "vt_registry_backend_kernels: NULL argument");
    const vt_plugin *p = find_loaded(reg, backend, strlen(backend));
    if (!p)
        return vt_set_error(VT_E_NOT_FOUND, "backend '%s' is not loaded", backend);
    *kernels = p->kernels;
    *n_kernels = p->n_kernels;
    return VT_OK;
}

size_t vt_registry_device_count(const vt_registry *reg)
{
    return reg ? reg->n_devices : 0;
}

vt_device *vt_registry_device(vt_registry *reg, size_t i)
{
    return reg && i < reg->n_devices ? &reg->devices[i] : NULL;
}

vt_status vt_registry_find_device(vt_registry *reg, const char *spec, vt_device **out)
{
    if (!reg || !spec || !out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_registry_find_device: NULL argument");
    *out = NULL;
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    int64_t index = 0;
    if (colon) {
        if (!vt_parse_i64(colon + 1, 0, INT32_MAX, &index))
            return vt_set_error(VT_E_INVALID_ARG, "device '%s': the index after ':' must be a number >= 0", spec);
    }
    for (size_t i = 0; i < reg->n_devices; i++) {
        vt_device *d = &reg->devices[i];
        if (strlen(d->plugin->name) == len && strncmp(d->plugin->name, spec, len) == 0 && d->index == index) {
            *out = d;
            return VT_OK;
        }
    }
    for (size_t i = 0; i < reg->n_plugins; i++) {
        const vt_plugin *p = &reg->plugins[i];
        if (p->name && strlen(p->name) == len && strncmp(p->name, spec, len) == 0 && p->state != VT_BACKEND_SHADOWED) {
            if (p->state == VT_BACKEND_READY)
                return vt_set_error(VT_E_NOT_FOUND, "device %s not found: backend %.*s has %u device%s", spec, (int)len,
                                    spec, p->n_devices, p->n_devices == 1 ? "" : "s");
            return vt_set_error(VT_E_NOT_FOUND, "device %s not found: backend %.*s %s: %s", spec, (int)len, spec,
                                p->state == VT_BACKEND_NO_DEVICES ? "has no devices"
                                : p->state == VT_BACKEND_SKIPPED  ? "was skipped"
                                                                  : "was not loaded",
                                p->reason);
        }
    }
    return vt_set_error(VT_E_NOT_FOUND, "device %s not found: no backend named '%.*s' (searched %s)", spec, (int)len,
                        spec, reg->search_path ? reg->search_path : "");
}

vt_plugin *vt_registry_cpu(vt_registry *reg)
{
    return reg ? reg->cpu : NULL;
}

const char *vt_device_id(const vt_device *dev)
{
    return dev ? dev->id : "";
}

const char *vt_device_backend_name(const vt_device *dev)
{
    return dev ? dev->plugin->name : "";
}

int vt_device_index(const vt_device *dev)
{
    return dev ? dev->index : -1;
}

vt_registry *vt_device_registry(const vt_device *dev)
{
    return dev ? dev->reg : NULL;
}

const vt_kernel *vt_device_table(const vt_device *dev, uint32_t *n)
{
    if (dev->no_kernels) {
        *n = 0;
        return NULL;
    }
    *n = dev->plugin->n_kernels;
    return dev->plugin->kernels;
}

vt_status vt_device_kernels(const vt_device *dev, const vt_kernel **kernels, uint32_t *n_kernels)
{
    if (!dev || !kernels || !n_kernels)
        return vt_set_error(VT_E_INVALID_ARG, "vt_device_kernels: NULL argument");
    *kernels = vt_device_table(dev, n_kernels);
    return VT_OK;
}

int vt_device_type_of(const vt_device *dev)
{
    return dev ? (int)dev->plugin->iface->device_type : -1;
}

vt_status vt_device_probe(vt_device *dev, vt_device_caps *out)
{
    if (!dev || !out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_device_probe: NULL argument");
    vt_device_caps caps;
    memset(&caps, 0, sizeof caps);
    caps.struct_size = sizeof caps;
    char why[VT_WHY_SIZE] = "";
    const vt_backend_iface *f = dev->plugin->iface;
    vt_status st = f->probe(dev->plugin->ctx, dev->index, &caps, why, sizeof why);
    if (st != VT_OK)
        return vt_set_error(st, "probe of %s failed: %s", dev->id, why[0] ? why : "no reason given");
    atomic_store(&dev->host_addressable, caps.host_addressable ? 1 : 2);
    char *bad = staging_claim_problem(dev->id, &caps);
    if (bad) {
        vt_set_error(VT_E_PLUGIN, "%s", bad);
        free(bad);
        return VT_E_PLUGIN;
    }
    uint32_t n_kernels = 0;
    const vt_kernel *kernels = vt_device_table(dev, &n_kernels);
    vt_caps_derive_keep_quant(&caps, kernels, n_kernels);
    /* The caller's struct_size says how much of the struct it has. */
    size_t size = out->struct_size && out->struct_size < sizeof caps ? out->struct_size : sizeof caps;
    caps.struct_size = (uint32_t)size;
    memcpy(out, &caps, size);
    return VT_OK;
}

vt_status vt_device_stats_get(vt_device *dev, vt_device_stats *out)
{
    if (!dev || !out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_device_stats_get: NULL argument");
    vt_device_stats s;
    memset(&s, 0, sizeof s);
    dev->plugin->iface->counters(dev->plugin->ctx, dev->index, &s.backend); /* a v1 plugin leaves syncs, launches 0 */
    if (!vt_plugin_has_queues(dev->plugin)) {                               /* the core ran the queue: its own counts */
        s.backend.syncs += atomic_load(&dev->core_syncs);
        s.backend.launches += atomic_load(&dev->core_launches);
    }
    s.native_runs = atomic_load(&dev->native_runs);
    s.cpu_tier_runs = atomic_load(&dev->cpu_tier_runs);
    s.refusals = atomic_load(&dev->refusals);
    /* The caller's struct_size says how much of the struct it has. */
    size_t size = out->struct_size && out->struct_size < sizeof s ? out->struct_size : sizeof s;
    s.struct_size = (uint32_t)size;
    memcpy(out, &s, size);
    return VT_OK;
}

uint32_t vt_registry_tier_policy(const vt_registry *reg)
{
    return reg && (reg->tier_flags & VT_RESOLVE_STRICT) ? VT_TIER_POLICY_STRICT : VT_TIER_POLICY_PORTABLE;
}
