/* format.c - the library version and human-readable sizes. */
#include "config.h"

#include <stdio.h>

#include "vt_internal.h"

const char *vt_version(void)
{
    return PACKAGE_VERSION;
}

const char *vt_format_bytes(uint64_t bytes, char *buf, size_t size)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024.0 && u < 6) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, size, "%llu B", (unsigned long long)bytes);
    else
        snprintf(buf, size, "%.1f %s", v, unit[u]);
    return buf;
}
