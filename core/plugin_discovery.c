/* plugin_discovery.c - finding plugin candidates: the search path, the
 * VT_BACKENDS allow-list and the candidates of each directory.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

static void add_dirs(vt_registry *reg, search_dir **dirs, size_t *n, const char *list, const char *origin)
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
                vt_registry_warn(reg, "ignoring relative directory '%s' in %s: plugins load from absolute paths only",
                                 dir, origin);
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
            vt_registry_warn(reg, "%s (%s) is not a directory", dirs[d].path, dirs[d].origin);
            continue;
        }
        char *untrusted = vt_plugin_trust_problem(dirs[d].path, true); /* plugin_trust.c's rule */
        if (untrusted) {
            vt_registry_warn(reg, "refusing plugin directory %s (%s): %s", dirs[d].path, dirs[d].origin, untrusted);
            free(untrusted);
            continue;
        }
        strlist files = {0};
        if (!list_candidates(dirs[d].path, &files)) {
            vt_registry_warn(reg, "cannot read plugin directory %s: %s", dirs[d].path, strerror(errno));
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

vt_status vt_discover(vt_registry *reg, const char *plugin_path, const char *backends, bool only_plugin_path)
{
    bool debug = reg->debug;
    search_dir *dirs = NULL;
    size_t n_dirs = 0;
    add_dirs(reg, &dirs, &n_dirs, plugin_path, "VT_PLUGIN_PATH");
    if (!only_plugin_path) {
#ifdef VT_BUILDTREE_PLUGIN_DIRS
        if (running_from_build_tree())
            add_dirs(reg, &dirs, &n_dirs, VT_BUILDTREE_PLUGIN_DIRS, "build tree");
        else
#endif
            add_dirs(reg, &dirs, &n_dirs, VT_PKGLIBDIR, "pkglibdir");
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
    for (size_t i = 0; i < filter.names.n; i++)
        if (filter.matched && !filter.matched[i])
            vt_registry_warn(reg, "VT_BACKENDS names '%s', but no plugin of that name was found", filter.names.v[i]);
    filter_free(&filter);
    for (size_t i = 0; i < n_dirs; i++) {
        free(dirs[i].path);
        free(dirs[i].real);
    }
    free(dirs);
    return reg->search_path ? VT_OK : vt_set_error(VT_E_NO_MEMORY, "out of memory opening the registry");
}
