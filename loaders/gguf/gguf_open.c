/* gguf_open.c - opening GGUF files (read-only mmap) and memory images,
 * and closing handles. Validation itself is gguf_parse's. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gguf_internal.h"

/* Parse g (base, size, name set); on failure free it. */
static vt_status finish_open(vt_gguf *g, vt_gguf **out)
{
    vt_status st = gguf_parse(g);
    if (st != VT_OK) {
        vt_gguf_close(g);
        return st;
    }
    *out = g;
    return VT_OK;
}

static vt_gguf *new_handle(const char *name)
{
    vt_gguf *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->fd = -1;
    g->name = strdup(name);
    if (!g->name) {
        free(g);
        return NULL;
    }
    return g;
}

vt_status vt_gguf_open_memory(const void *data, size_t size, const char *name, vt_gguf **out)
{
    if (!out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_gguf_open_memory: out is NULL");
    *out = NULL;
    if (!data && size)
        return vt_set_error(VT_E_INVALID_ARG, "vt_gguf_open_memory: NULL data of %zu bytes", size);
    vt_gguf *g = new_handle(name ? name : "<memory>");
    if (!g)
        return vt_set_error(VT_E_NO_MEMORY, "vt_gguf_open_memory: out of memory");
    static const uint8_t empty[1];
    g->base = data ? data : empty;
    g->size = size;
    return finish_open(g, out);
}

vt_status vt_gguf_open(const char *path, vt_gguf **out)
{
    if (!out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_gguf_open: out is NULL");
    *out = NULL;
    if (!path)
        return vt_set_error(VT_E_INVALID_ARG, "vt_gguf_open: path is NULL");
    /* O_NONBLOCK: a FIFO or a device is refused below, not waited on. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        int e = errno;
        return vt_set_error(e == ENOENT ? VT_E_NOT_FOUND : VT_E_IO, "cannot open GGUF file '%s': %s", path,
                            strerror(e));
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return vt_set_error(VT_E_IO, "cannot stat GGUF file '%s': %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return vt_set_error(VT_E_IO, "GGUF file '%s' is not a regular file (a FIFO, device or directory is refused)",
                            path);
    }
    if ((uint64_t)sb.st_size > SIZE_MAX) {
        close(fd);
        return vt_set_error(VT_E_IO, "GGUF file '%s' (%lld bytes) is too large to map", path, (long long)sb.st_size);
    }
    vt_gguf *g = new_handle(path);
    if (!g) {
        close(fd);
        return vt_set_error(VT_E_NO_MEMORY, "vt_gguf_open: out of memory");
    }
    static const uint8_t empty[1];
    g->base = empty;
    g->size = (uint64_t)sb.st_size;
    if (sb.st_size > 0) {
        void *m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            int e = errno;
            close(fd);
            vt_gguf_close(g);
            return vt_set_error(VT_E_IO, "cannot map GGUF file '%s' (%lld bytes): %s", path, (long long)sb.st_size,
                                strerror(e));
        }
        g->map = m;
        g->map_size = (size_t)sb.st_size;
        g->base = m;
    }
    g->fd = fd; /* staging reads tensors with pread: a shrunk file is an error, not SIGBUS */
    return finish_open(g, out);
}

void vt_gguf_close(vt_gguf *g)
{
    if (!g)
        return;
    gguf_release(g);
    if (g->map)
        munmap(g->map, g->map_size);
    if (g->fd >= 0)
        close(g->fd);
    free(g->name);
    free(g);
}
