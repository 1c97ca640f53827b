/* gguf_read.c - reading a tensor's bytes for staging: pread from the file
 * (a file truncated while it is staged is a refusal naming the tensor, not
 * a SIGBUS on the mapping), or a copy from a memory image. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "gguf_internal.h"

vt_status gguf_read_tensor(const vt_gguf *g, const vt_gguf_tensor *t, uint64_t off, void *dst, size_t n)
{
    if (off > t->n_bytes || n > t->n_bytes - off)
        return vt_set_error(VT_E_INVALID_ARG, "reading bytes [%llu, +%zu) of a %llu-byte tensor",
                            (unsigned long long)off, n, (unsigned long long)t->n_bytes);
    uint64_t at = t->file_offset + off;
    if (g->fd < 0) {
        memcpy(dst, g->base + at, n);
        return VT_OK;
    }
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(g->fd, (char *)dst + done, n - done, (off_t)(at + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return vt_set_error(VT_E_IO, "reading tensor data at byte %llu of the file: %s",
                                (unsigned long long)(at + done), strerror(errno));
        if (r == 0)
            return vt_set_error(VT_E_BAD_FILE,
                                "the file ends at byte %llu, inside the tensor's data [%llu, +%llu): it shrank "
                                "after it was opened",
                                (unsigned long long)(at + done), (unsigned long long)t->file_offset,
                                (unsigned long long)t->n_bytes);
        done += (size_t)r;
    }
    return VT_OK;
}
