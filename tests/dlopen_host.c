/* dlopen_host.c - a host that opens libvt the way Python's ctypes does:
 * dlopen(RTLD_LOCAL), so libvt's symbols are not global and a plugin that
 * calls vt_op_name without linking libvt cannot resolve it. Opens the
 * registry (the build tree's plugins) and requires every plugin found to
 * load: ready, or loaded with no devices. Prints one line per plugin.
 *   dlopen_host LIBVT_SO [MIN_PLUGINS]
 * Exit 0 when every plugin loaded and at least MIN_PLUGINS were found. */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vt/vt.h>

typedef vt_status (*open_fn)(vt_registry **, const vt_registry_options *);
typedef void (*close_fn)(vt_registry *);
typedef size_t (*count_fn)(const vt_registry *);
typedef vt_status (*info_fn)(const vt_registry *, size_t, vt_backend_info *);

/* A function from the library; exits naming the symbol when missing. */
static void *need(void *lib, const char *name)
{
    void *sym = dlsym(lib, name);
    if (!sym) {
        fprintf(stderr, "dlopen_host: %s: %s\n", name, dlerror());
        exit(2);
    }
    return sym;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: dlopen_host LIBVT_SO [MIN_PLUGINS]\n");
        return 2;
    }
    long min_plugins = argc > 2 ? strtol(argv[2], NULL, 10) : 1;
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen_host: %s\n", dlerror());
        return 2;
    }
    open_fn vt_open;
    close_fn vt_close;
    count_fn vt_count;
    info_fn vt_info;
    /* ISO C has no void * -> function pointer cast; copy the bits. */
    void *s = need(lib, "vt_registry_open");
    memcpy(&vt_open, &s, sizeof s);
    s = need(lib, "vt_registry_close");
    memcpy(&vt_close, &s, sizeof s);
    s = need(lib, "vt_registry_backend_count");
    memcpy(&vt_count, &s, sizeof s);
    s = need(lib, "vt_registry_backend_info");
    memcpy(&vt_info, &s, sizeof s);

    vt_registry *reg = NULL;
    vt_status st = vt_open(&reg, NULL);
    if (st != VT_OK) {
        fprintf(stderr, "dlopen_host: vt_registry_open failed: status %d\n", (int)st);
        return 1;
    }
    size_t n = vt_count(reg);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        vt_backend_info b;
        if (vt_info(reg, i, &b) != VT_OK) {
            bad++;
            continue;
        }
        bool loaded = b.state == VT_BACKEND_READY || b.state == VT_BACKEND_NO_DEVICES;
        printf("%s %s: state %u%s%s\n", loaded ? "ok:" : "FAIL:", b.path, b.state, b.reason[0] ? ": " : "", b.reason);
        bad += !loaded;
    }
    vt_close(reg);
    if ((long)n < min_plugins) {
        printf("FAIL: %zu plugins found, want at least %ld\n", n, min_plugins);
        bad++;
    }
    return bad ? 1 : 0;
}
