/* input_source.c - the kinds of `--in NAME=SOURCE` (input_source.h): one
 * row per kind, the first whose match says yes loads it. */
#include "config.h"

#include <string.h>

#include "input_source.h"
#include "npy.h"

/* FILE.gguf:TENSOR */
static bool is_gguf_tensor(const char *s)
{
    return strstr(s, ".gguf:") != NULL;
}

/* The tensor's bytes, copied out of the validated file, with its type and
 * vt (row-major) shape: block formats arrive as themselves. */
static vt_status load_gguf_tensor(const char *s, host_array *out, char *why, size_t why_size)
{
    const char *colon = strstr(s, ".gguf:") + 5;
    char path[4096];
    if ((size_t)(colon - s) >= sizeof path)
        return vt_why(VT_E_INVALID_ARG, why, why_size, "%s: the file name is too long", s);
    memcpy(path, s, (size_t)(colon - s));
    path[colon - s] = '\0';
    const char *name = colon + 1;
    vt_gguf *g = NULL;
    vt_status st = vt_gguf_open(path, &g);
    if (st != VT_OK)
        return vt_why(st, why, why_size, "%s", vt_last_error());
    const vt_gguf_tensor *t = NULL;
    st = vt_gguf_find_tensor(g, name, &t);
    if (st != VT_OK) {
        vt_why(st, why, why_size, "%s: no tensor named '%s'", path, name);
    } else if (t->n_dims > VT_MAX_DIMS) {
        st = vt_why(VT_E_UNSUPPORTED, why, why_size, "%s: '%s' has %u dims", path, name, t->n_dims);
    } else {
        int64_t one = 1;
        st = host_array_alloc(out, t->type, t->n_dims ? t->n_dims : 1, t->n_dims ? t->shape : &one);
        if (st != VT_OK)
            vt_why(st, why, why_size, "%s: '%s': %s", path, name, vt_last_error());
        else if (t->n_bytes)
            memcpy(out->data, t->data, (size_t)t->n_bytes);
    }
    vt_gguf_close(g);
    return st;
}

/* Anything else is read as a .npy file (the reader checks its magic). */
static bool is_npy(const char *s)
{
    (void)s;
    return true;
}

static const struct {
    const char *kind;
    bool (*match)(const char *source);
    vt_status (*load)(const char *source, host_array *out, char *why, size_t why_size);
} kinds[] = {
    {"gguf tensor", is_gguf_tensor, load_gguf_tensor},
    {"npy", is_npy, npy_read},
};

vt_status input_source_load(const char *source, host_array *out, char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (kinds[i].match(source))
            return kinds[i].load(source, out, why, why_size);
    return vt_why(VT_E_UNSUPPORTED, why, why_size, "%s: no loader reads this kind of source", source);
}
