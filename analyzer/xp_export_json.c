/* xp_export_json.c: the JSON string escaping of `xferprof export` (RFC 8259), kept
 * minimal and on its own so that a general JSON writer can replace it. */
#include <stdint.h>

#include "xp_export.h"

/* Length of the well-formed UTF-8 sequence starting at p (at most n bytes
 * available), or 0 when it is ill-formed (overlong, surrogate, above
 * U+10FFFF, truncated, stray continuation byte): Unicode's table 3-7. */
static size_t xp_utf8_len(const unsigned char *p, size_t n)
{
    unsigned char c = p[0];
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */

    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0; /* overlong */
        else if (c == 0xED)
            hi = 0x9F; /* UTF-16 surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90; /* overlong */
        else if (c == 0xF4)
            hi = 0x8F; /* above U+10FFFF */
    } else
        return 0;
    if (n < len || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
    return len;
}

void xp_export_json_string(FILE *out, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;

    if (s == NULL) {
        fputs("null", out);
        return;
    }
    putc('"', out);
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        if (c == '"' || c == '\\') {
            putc('\\', out);
            putc(c, out);
            i++;
        } else if (c < 0x20) {
            putc('\\', out);
            switch (c) {
            case '\n': putc('n', out); break;
            case '\r': putc('r', out); break;
            case '\t': putc('t', out); break;
            case '\b': putc('b', out); break;
            case '\f': putc('f', out); break;
            default:
                fputs("u00", out);
                putc(hex[c >> 4], out);
                putc(hex[c & 15], out);
            }
            i++;
        } else {
            size_t len = xp_utf8_len(p + i, n - i);
            if (len == 0) {
                /* One replacement per ill-formed byte: simple, and what
                 * Python's errors='replace' does for most inputs. */
                fputs("\xEF\xBF\xBD", out);
                i++;
            } else {
                fwrite(p + i, 1, len, out);
                i += len;
            }
        }
    }
    putc('"', out);
}
