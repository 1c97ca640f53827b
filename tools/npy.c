/* npy.c - the .npy reader and writer (npy.h). The header is a Python dict
 * literal; this parser accepts exactly the three keys NumPy writes, in any
 * order, with single- or double-quoted strings. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npy.h"

static const unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* descr <-> vt dtype */
static const struct {
    const char *descr;
    uint32_t dtype;
} types[] = {
    {"<f4", VT_F32}, {"<f2", VT_F16}, {"<i4", VT_I32}, {"<i8", VT_I64},        {"<f8", VT_F64},
    {"|i1", VT_I8},  {"<i1", VT_I8},  {"<i2", VT_I16}, {"|u1", NPY_RAW_BYTES}, {"<u1", NPY_RAW_BYTES},
};

typedef struct cursor {
    const char *p, *end;
} cursor;

static void skip_ws(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static bool take(cursor *c, char ch)
{
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    return false;
}

/* A quoted string into buf. */
static bool string_lit(cursor *c, char *buf, size_t size)
{
    skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return false;
    char q = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != q) {
        if (n + 1 < size)
            buf[n++] = *c->p;
        c->p++;
    }
    if (c->p >= c->end)
        return false;
    c->p++;
    buf[n] = '\0';
    return true;
}

/* Write the reason of a header refusal; returns false. */
static bool hfail(char *why, size_t why_size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool hfail(char *why, size_t why_size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_size, fmt, ap);
    va_end(ap);
    return false;
}

bool npy_parse_header(const char *text, size_t len, char *descr, size_t descr_size, bool *fortran, uint32_t *ndim,
                      int64_t *shape, char *why, size_t why_size)
{
    cursor c = {text, text + len};
    bool have_descr = false, have_fortran = false, have_shape = false;
    if (!take(&c, '{'))
        return hfail(why, why_size, "header does not start with '{'");
    while (!take(&c, '}')) {
        char key[32];
        if (!string_lit(&c, key, sizeof key) || !take(&c, ':'))
            return hfail(why, why_size, "header: expected 'key': value at character %ld", (long)(c.p - text));
        if (!strcmp(key, "descr")) {
            skip_ws(&c);
            if (c.p < c.end && *c.p == '[')
                return hfail(why, why_size, "structured dtypes (descr is a list) are refused");
            if (!string_lit(&c, descr, descr_size))
                return hfail(why, why_size, "header: descr is not a string");
            have_descr = true;
        } else if (!strcmp(key, "fortran_order")) {
            skip_ws(&c);
            if ((size_t)(c.end - c.p) >= 4 && !strncmp(c.p, "True", 4)) {
                *fortran = true;
                c.p += 4;
            } else if ((size_t)(c.end - c.p) >= 5 && !strncmp(c.p, "False", 5)) {
                *fortran = false;
                c.p += 5;
            } else {
                return hfail(why, why_size, "header: fortran_order is not True or False");
            }
            have_fortran = true;
        } else if (!strcmp(key, "shape")) {
            if (!take(&c, '('))
                return hfail(why, why_size, "header: shape is not a tuple");
            *ndim = 0;
            while (!take(&c, ')')) {
                skip_ws(&c);
                if (c.p >= c.end || !isdigit((unsigned char)*c.p))
                    return hfail(why, why_size, "header: shape holds a non-integer");
                int64_t v = 0;
                while (c.p < c.end && isdigit((unsigned char)*c.p)) {
                    if (v > (INT64_MAX - 9) / 10)
                        return hfail(why, why_size, "header: a shape dim overflows");
                    v = v * 10 + (*c.p++ - '0');
                }
                while (c.p < c.end && (*c.p == 'L' || *c.p == 'l')) /* Python 2 longs */
                    c.p++;
                if (*ndim >= VT_MAX_DIMS)
                    return hfail(why, why_size, "more than %d dims are refused", VT_MAX_DIMS);
                shape[(*ndim)++] = v;
                if (!take(&c, ',')) {
                    if (!take(&c, ')'))
                        return hfail(why, why_size, "header: shape tuple is not closed");
                    break;
                }
            }
            have_shape = true;
        } else {
            return hfail(why, why_size, "header: unexpected key '%s'", key);
        }
        if (!take(&c, ',')) {
            if (!take(&c, '}'))
                return hfail(why, why_size, "header: expected ',' or '}' at character %ld", (long)(c.p - text));
            break;
        }
    }
    if (!have_descr || !have_fortran || !have_shape)
        return hfail(why, why_size, "header lacks %s",
                     !have_descr     ? "descr"
                     : !have_fortran ? "fortran_order"
                                     : "shape");
    return true;
}

static vt_status fail_file(vt_status st, char *why, size_t why_size, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static vt_status fail_file(vt_status st, char *why, size_t why_size, const char *path, const char *fmt, ...)
{
    int n = snprintf(why, why_size, "%s: ", path);
    if (n >= 0 && (size_t)n < why_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why + n, why_size - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return st;
}

vt_status npy_read(const char *path, host_array *out, char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    /* O_NONBLOCK and fstat: a FIFO or a device is refused, not waited on. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return fail_file(VT_E_IO, why, why_size, path, "cannot open: %s", strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return fail_file(VT_E_IO, why, why_size, path, "not a regular file (a FIFO, device or directory is refused)");
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return fail_file(VT_E_IO, why, why_size, path, "cannot open: %s", strerror(errno));
    }
    unsigned char pre[12];
    size_t got = fread(pre, 1, 10, f);
    vt_status st = VT_OK;
    char *hdr = NULL;
    if (got < 10 || memcmp(pre, magic, 6) != 0) {
        st = fail_file(VT_E_BAD_FILE, why, why_size, path, "not a .npy file (no \\x93NUMPY magic at byte 0)");
        goto out;
    }
    unsigned major = pre[6], minor = pre[7];
    uint64_t hlen, hstart;
    if (major == 1) {
        hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8;
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (fread(pre + 10, 1, 2, f) != 2) {
            st = fail_file(VT_E_BAD_FILE, why, why_size, path, "truncated header length at byte 8");
            goto out;
        }
        hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8 | (uint64_t)pre[10] << 16 | (uint64_t)pre[11] << 24;
        hstart = 12;
    } else {
        st = fail_file(VT_E_UNSUPPORTED, why, why_size, path, "format version %u.%u is not 1.0, 2.0 or 3.0", major,
                       minor);
        goto out;
    }
    if (hlen > (1u << 20)) {
        st = fail_file(VT_E_BAD_FILE, why, why_size, path, "header length %llu at byte 8 is implausible",
                       (unsigned long long)hlen);
        goto out;
    }
    hdr = malloc((size_t)hlen + 1);
    if (!hdr || fread(hdr, 1, (size_t)hlen, f) != hlen) {
        st = fail_file(hdr ? VT_E_BAD_FILE : VT_E_NO_MEMORY, why, why_size, path,
                       "header of %llu bytes at byte %llu is truncated", (unsigned long long)hlen,
                       (unsigned long long)hstart);
        goto out;
    }
    hdr[hlen] = '\0';
    char descr[32] = "", pwhy[256] = "";
    bool fortran = false;
    uint32_t ndim = 0;
    int64_t shape[VT_MAX_DIMS] = {0};
    if (!npy_parse_header(hdr, (size_t)hlen, descr, sizeof descr, &fortran, &ndim, shape, pwhy, sizeof pwhy)) {
        st = fail_file(strstr(pwhy, "refused") ? VT_E_UNSUPPORTED : VT_E_BAD_FILE, why, why_size, path,
                       "%s (header at byte %llu)", pwhy, (unsigned long long)hstart);
        goto out;
    }
    if (fortran) {
        st = fail_file(VT_E_UNSUPPORTED, why, why_size, path,
                       "Fortran-order arrays are refused: save a C-order array (numpy.ascontiguousarray)");
        goto out;
    }
    uint32_t dtype = UINT32_MAX;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (!strcmp(types[i].descr, descr))
            dtype = types[i].dtype;
    if (dtype == UINT32_MAX) {
        if (descr[0] == '>')
            st = fail_file(VT_E_UNSUPPORTED, why, why_size, path,
                           "big-endian data (descr '%s') is refused: save it little-endian ('<%s')", descr, descr + 1);
        else
            st = fail_file(VT_E_UNSUPPORTED, why, why_size, path,
                           "dtype '%s' is not supported: use <f4, <f2, <i4 or <i8 (also <f8, |i1, <i2, |u1)", descr);
        goto out;
    }
    /* The one size rule (zero dims count as 1 in every overflow check). */
    uint64_t n;
    if (vt_dtype_shape_size(dtype == NPY_RAW_BYTES ? VT_I8 : (int)dtype, ndim, shape, NULL, &n) != VT_SIZE_OK ||
        n > SIZE_MAX - 1) {
        st = fail_file(VT_E_BAD_FILE, why, why_size, path, "shape overflows (zero dims count as 1)");
        goto out;
    }
    size_t bytes = (size_t)n;
    out->present = true;
    out->dtype = dtype;
    out->ndim = ndim;
    memcpy(out->shape, shape, sizeof shape);
    out->data = malloc(bytes + 1);
    out->nbytes = bytes;
    if (!out->data) {
        st = fail_file(VT_E_NO_MEMORY, why, why_size, path, "no memory for %zu bytes", bytes);
        goto out;
    }
    size_t r = fread(out->data, 1, bytes, f);
    if (r != bytes) {
        st = fail_file(VT_E_BAD_FILE, why, why_size, path, "data at byte %llu holds %zu of the %zu bytes of shape",
                       (unsigned long long)(hstart + hlen), r, bytes);
        goto out;
    }
    if (fgetc(f) != EOF) {
        st = fail_file(VT_E_BAD_FILE, why, why_size, path, "bytes after the data at byte %llu",
                       (unsigned long long)(hstart + hlen + bytes));
        goto out;
    }
out:
    free(hdr);
    fclose(f);
    if (st != VT_OK)
        host_array_free(out);
    return st;
}

vt_status npy_write(const char *path, const host_array *a, char *why, size_t why_size)
{
    const char *descr = NULL;
    bool widen = a->dtype == VT_BF16;
    for (size_t i = 0; i < sizeof types / sizeof types[0] && !widen; i++)
        if (types[i].dtype == a->dtype && types[i].dtype != NPY_RAW_BYTES) {
            descr = types[i].descr;
            break;
        }
    if (widen)
        descr = "<f4";
    if (!descr)
        return fail_file(VT_E_UNSUPPORTED, why, why_size, path, "dtype %s has no .npy type", vt_dtype_name(a->dtype));
    char dict[256];
    int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (uint32_t i = 0; i < a->ndim; i++)
        len += snprintf(dict + len, sizeof dict - (size_t)len, "%s%lld", i ? ", " : "", (long long)a->shape[i]);
    len += snprintf(dict + len, sizeof dict - (size_t)len, "%s), }", a->ndim == 1 ? "," : "");
    size_t total = 10 + (size_t)len + 1; /* magic, version, length, dict, '\n' */
    size_t pad = (64 - total % 64) % 64;
    uint16_t hlen = (uint16_t)((size_t)len + pad + 1);
    FILE *f = fopen(path, "wb");
    if (!f)
        return fail_file(VT_E_IO, why, why_size, path, "cannot create: %s", strerror(errno));
    unsigned char pre[10] = {
        0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xff), (unsigned char)(hlen >> 8)};
    bool ok = fwrite(pre, 1, 10, f) == 10 && fwrite(dict, 1, (size_t)len, f) == (size_t)len;
    for (size_t i = 0; ok && i < pad; i++)
        ok = fputc(' ', f) != EOF;
    ok = ok && fputc('\n', f) != EOF;
    if (ok && widen) {
        int64_t n = host_array_elems(a);
        for (int64_t i = 0; ok && i < n; i++) {
            float v = vt_bf16_to_f32(((const uint16_t *)a->data)[i]);
            ok = fwrite(&v, 4, 1, f) == 1;
        }
    } else if (ok && a->nbytes) {
        ok = fwrite(a->data, 1, a->nbytes, f) == a->nbytes;
    }
    if (fclose(f) != 0)
        ok = false;
    if (!ok)
        return fail_file(VT_E_IO, why, why_size, path, "write failed: %s", strerror(errno));
    return VT_OK;
}
