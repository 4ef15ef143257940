/* xp_export_json.c: the fast number writing of `xferprof export` (strings go
 * through the report's xp_json_write_string). */
#include <stdint.h>

#include "xp_export.h"

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
