/* number.c - the strict number parser (vt_number.h): strtoull and strtol
 * skip leading space and accept a sign on unsigned numbers (" -5" becomes
 * 2^64 - 5), so every numeric option, param and variable goes through here. */
#include "config.h"

#include "vt/vt_number.h"

bool vt_parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s)
        return false;
    unsigned base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
        if (!*s)
            return false;
    }
    uint64_t v = 0;
    for (; *s; s++) {
        unsigned d;
        if (*s >= '0' && *s <= '9')
            d = (unsigned)(*s - '0');
        else if (base == 16 && *s >= 'a' && *s <= 'f')
            d = (unsigned)(*s - 'a' + 10);
        else if (base == 16 && *s >= 'A' && *s <= 'F')
            d = (unsigned)(*s - 'A' + 10);
        else
            return false;
        if (v > (UINT64_MAX - d) / base)
            return false;
        v = v * base + d;
    }
    *out = v;
    return true;
}

bool vt_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
    if (!s)
        return false;
    bool neg = s[0] == '-';
    uint64_t m;
    if (!vt_parse_u64(s + neg, &m))
        return false;
    int64_t v;
    if (neg) {
        if (m > (uint64_t)INT64_MAX + 1)
            return false;
        v = m == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)m;
    } else {
        if (m > (uint64_t)INT64_MAX)
            return false;
        v = (int64_t)m;
    }
    if (v < min || v > max)
        return false;
    *out = v;
    return true;
}
