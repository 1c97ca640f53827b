/* runner_view.c - views of device tensors (a shape over part of another
 * tensor's memory) for the runner's splits and reshapes. Until the core's
 * vt_tensor_view (CONTRACT-v2) lands, built on the internal borrowed-tensor
 * wrap; freed at the end of each step. */
#include "config.h"

#include <stdlib.h>

#include "runner_internal.h"

vt_tensor *run_view(vt_runner *r, vt_tensor *base, int64_t off, uint32_t ndim, const int64_t *shape)
{
    if (!base)
        return NULL;
    if (r->n_views == r->cap_views) {
        size_t cap = r->cap_views ? 2 * r->cap_views : 64;
        vt_tensor **nv = realloc(r->views, cap * sizeof *nv);
        if (!nv) {
            vt_set_error(VT_E_NO_MEMORY, "runner: out of host memory");
            return NULL;
        }
        r->views = nv;
        r->cap_views = cap;
    }
    uint64_t esize = vt_dtype_get(base->dtype)->block_bytes, bytes;
    if (!vt_dtype_tensor_bytes(base->dtype, ndim, shape, &bytes) || (uint64_t)off * esize + bytes > base->nbytes) {
        vt_set_error(VT_E_INVALID_ARG, "runner: view of %llu bytes at element %lld outside a tensor of %llu bytes",
                     (unsigned long long)bytes, (long long)off, (unsigned long long)base->nbytes);
        return NULL;
    }
    vt_tensor *t;
    if (vt_tensor_wrap(base->dev, base->dtype, ndim, shape, (char *)base->data + (uint64_t)off * esize, false, &t) !=
        VT_OK)
        return NULL;
    r->views[r->n_views++] = t;
    return t;
}

void run_views_free(vt_runner *r)
{
    for (size_t i = 0; i < r->n_views; i++)
        vt_tensor_destroy(r->views[i]);
    r->n_views = 0;
}
