/* status.c - status names, the thread-local last-error text and small
 * string helpers. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_internal.h"

#define VT_ERROR_TEXT 8192

static _Thread_local char last_error[VT_ERROR_TEXT];

const char *vt_status_name(vt_status status)
{
    switch (status) {
    case VT_OK: return "VT_OK";
    case VT_E_INVALID_ARG: return "VT_E_INVALID_ARG";
    case VT_E_NO_MEMORY: return "VT_E_NO_MEMORY";
    case VT_E_NOT_FOUND: return "VT_E_NOT_FOUND";
    case VT_E_PLUGIN: return "VT_E_PLUGIN";
    case VT_E_DEVICE: return "VT_E_DEVICE";
    case VT_E_DEVICE_OOM: return "VT_E_DEVICE_OOM";
    case VT_E_OP_MISSING: return "VT_E_OP_MISSING";
    case VT_E_DOES_NOT_FIT: return "VT_E_DOES_NOT_FIT";
    case VT_E_BAD_FILE: return "VT_E_BAD_FILE";
    case VT_E_SHAPE: return "VT_E_SHAPE";
    case VT_E_IO: return "VT_E_IO";
    case VT_E_UNSUPPORTED: return "VT_E_UNSUPPORTED";
    case VT_E_DEVICE_LOST: return "VT_E_DEVICE_LOST";
    case VT_E_NOT_READY: return "VT_E_NOT_READY";
    }
    return "VT_E_UNKNOWN";
}

const char *vt_last_error(void)
{
    return last_error;
}

void vt_clear_error(void)
{
    last_error[0] = '\0';
}

vt_status vt_set_error(vt_status status, const char *fmt, ...)
{
    /* Format aside first: the arguments may quote the previous error. */
    char text[VT_ERROR_TEXT];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    memcpy(last_error, text, sizeof text);
    return status;
}

char *vt_strdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

char *vt_strdup_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}
