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

static vt_status load_gguf_tensor(const char *s, host_array *out, char *why, size_t why_size)
{
    (void)out;
    return vt_why(VT_E_UNSUPPORTED, why, why_size,
                  "%s: GGUF tensor inputs (FILE.gguf:TENSOR) are not supported yet: this vtctl has no GGUF loader", s);
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
