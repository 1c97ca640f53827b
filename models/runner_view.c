/* runner_view.c - views of device tensors (a shape over part of another
 * tensor's memory, vt_tensor_view) for the runner's splits and reshapes;
 * freed at the end of each step, or kept with the decode graph that names
 * them. */
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
    vt_dtype dt = vt_tensor_dtype(base);
    uint64_t esize = vt_dtype_get(dt)->block_bytes;
    vt_tensor *t;
    if (vt_tensor_view(base, (uint64_t)off * esize, dt, ndim, shape, &t) != VT_OK)
        return NULL;
    r->views[r->n_views++] = t;
    return t;
}

void run_views_free(vt_runner *r)
{
    if (r->recording)
        return; /* the graph being recorded names them */
    for (size_t i = 0; i < r->n_views; i++)
        vt_tensor_destroy(r->views[i]);
    r->n_views = 0;
}
