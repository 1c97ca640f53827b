/* gguf_text.c - rendering bytes from a GGUF file as safe one-line text. */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <vt/vt_utf8.h>

#include "gguf_internal.h"

/* Length of a valid UTF-8 sequence at s (n bytes left) that encodes a
 * printable code point (U+00A0 and up: U+0080..U+009F are C1 controls), or 0. */
static size_t printable_utf8(const unsigned char *s, uint64_t n)
{
    uint32_t cp;
    size_t len = vt_utf8_decode(s, n, &cp);
    return len && cp >= 0xa0 ? len : 0;
}

/* The rendering of the byte at p[0] (n bytes left) into piece (8 bytes);
 * returns its length and sets *in to the input bytes it covers. */
static size_t render_one(const unsigned char *p, uint64_t n, char *piece, size_t *in)
{
    unsigned c = p[0];
    *in = 1;
    if (c == '\\' || c == '"') {
        piece[0] = '\\';
        piece[1] = (char)c;
        return 2;
    }
    if (c >= 0x20 && c < 0x7f) {
        piece[0] = (char)c;
        return 1;
    }
    size_t len = c >= 0x80 ? printable_utf8(p, n) : 0;
    if (len) {
        memcpy(piece, p, len);
        *in = len;
        return len;
    }
    snprintf(piece, 8, "\\x%02x", c);
    return 4;
}

uint64_t vt_gguf_escape(const char *s, uint64_t len, char *buf, size_t size)
{
    const unsigned char *p = (const unsigned char *)s;
    char piece[8];
    size_t in;
    if (size == 0)
        return 0;
    /* Does all of it fit? (Stops counting as soon as it cannot.) */
    size_t need = 0;
    for (uint64_t i = 0; i < len && need < size; i += in)
        need += render_one(p + i, len - i, piece, &in);
    bool cut = need >= size;
    size_t used = 0;
    uint64_t i = 0;
    while (i < len) {
        size_t n = render_one(p + i, len - i, piece, &in);
        /* When cutting, keep room for "..." and the NUL. */
        if (used + n + (cut ? 4 : 1) > size)
            break;
        memcpy(buf + used, piece, n);
        used += n;
        i += in;
    }
    if (cut && used + 4 <= size) {
        memcpy(buf + used, "...", 3);
        used += 3;
    }
    buf[used] = '\0';
    return i;
}
