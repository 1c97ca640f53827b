/* vt_utf8.h - the one UTF-8 validator of the tree (GGUF text rendering,
 * vtctl's JSON strings). */
#ifndef VT_UTF8_H
#define VT_UTF8_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Length (1..4) of the valid UTF-8 sequence at s, of which n >= 1 bytes
 * may be read, and its code point in *cp (may be NULL); 0 for a byte that
 * starts no valid sequence (a stray continuation, an overlong form, a
 * surrogate, beyond U+10FFFF, or cut short by n). */
static inline size_t vt_utf8_decode(const unsigned char *s, uint64_t n, uint32_t *cp)
{
    uint32_t c = s[0], min, v;
    size_t len;
    if (c < 0x80) {
        len = 1;
        min = 0;
    } else if ((c & 0xe0) == 0xc0) {
        len = 2;
        min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
        len = 3;
        min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
        len = 4;
        min = 0x10000;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    v = len == 1 ? c : c & (0x7fu >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3fu);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    if (cp)
        *cp = v;
    return len;
}

#ifdef __cplusplus
}
#endif
#endif /* VT_UTF8_H */
