/* xp_export_json.c: the JSON string escaping (RFC 8259) and fast number writing of
 * `xferprof export`, kept minimal and on its own so that a general JSON writer
 * can replace it. */
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
        fputs_unlocked("null", out);
        return;
    }
    putc_unlocked('"', out);
    for (size_t i = 0; i < n;) {
        /* Plain ASCII in one write: names and paths are mostly that, and a
         * write per byte was most of an export's time. */
        size_t run = i;
        while (run < n && p[run] >= 0x20 && p[run] < 0x80 && p[run] != '"' && p[run] != '\\')
            run++;
        if (run > i) {
            fwrite_unlocked(p + i, 1, run - i, out);
            i = run;
            continue;
        }
        unsigned char c = p[i];
        if (c == '"' || c == '\\') {
            putc_unlocked('\\', out);
            putc_unlocked(c, out);
            i++;
        } else if (c < 0x20) {
            char e[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
            switch (c) {
            case '\n': e[1] = 'n', e[2] = 0; break;
            case '\r': e[1] = 'r', e[2] = 0; break;
            case '\t': e[1] = 't', e[2] = 0; break;
            case '\b': e[1] = 'b', e[2] = 0; break;
            case '\f': e[1] = 'f', e[2] = 0; break;
            default: break;
            }
            fputs_unlocked(e, out);
            i++;
        } else {
            size_t len = xp_utf8_len(p + i, n - i);
            if (len == 0) {
                /* One replacement per ill-formed byte: simple, and what
                 * Python's errors='replace' does for most inputs. */
                fputs_unlocked("\xEF\xBF\xBD", out);
                i++;
            } else {
                fwrite_unlocked(p + i, 1, len, out);
                i += len;
            }
        }
    }
    putc_unlocked('"', out);
}

void xp_export_put_i64(FILE *out, int64_t v)
{
    char buf[24], *e = buf + sizeof buf, *q = e;
    /* Negate in unsigned arithmetic: -INT64_MIN does not fit an int64_t. */
    uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do
        *--q = (char)('0' + a % 10);
    while ((a /= 10) != 0);
    if (v < 0)
        *--q = '-';
    fwrite_unlocked(q, 1, (size_t)(e - q), out);
}

void xp_export_put_hex(FILE *out, uint64_t v)
{
    static const char hex[] = "0123456789abcdef";
    char buf[20], *e = buf + sizeof buf, *q = e;
    do
        *--q = hex[v & 15];
    while ((v >>= 4) != 0);
    *--q = 'x';
    *--q = '0';
    fwrite_unlocked(q, 1, (size_t)(e - q), out);
}
