/* xp_json.c: a small streaming JSON writer (RFC 8259) for the report's machine format. */
#include "xp_json.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

void xp_json_init(struct xp_json *j, FILE *f)
{
    memset(j, 0, sizeof *j);
    j->f = f;
    j->first[0] = true;
}

/* Separator and indentation before a value or a key at the current level. */
static void xp_json_before(struct xp_json *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (j->depth == 0)
        return;
    bool first = j->first[j->depth];
    j->first[j->depth] = false;
    if (!first)
        fputc(',', j->f);
    if (j->inline_[j->depth]) {
        if (!first)
            fputc(' ', j->f);
        return;
    }
    fputc('\n', j->f);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->f);
}

static void xp_json_open(struct xp_json *j, char c, bool inl)
{
    xp_json_before(j);
    fputc(c, j->f);
    assert(j->depth + 1 < XP_JSON_MAX_DEPTH);
    if (j->depth + 1 >= XP_JSON_MAX_DEPTH)
        return;
    j->depth++;
    j->first[j->depth] = true;
    j->close[j->depth] = c == '{' ? '}' : ']';
    /* Inside an inline array everything stays on its line. */
    j->inline_[j->depth] = inl || j->inline_[j->depth - 1];
}

void xp_json_object(struct xp_json *j) { xp_json_open(j, '{', false); }
void xp_json_array(struct xp_json *j) { xp_json_open(j, '[', false); }
void xp_json_array_inline(struct xp_json *j) { xp_json_open(j, '[', true); }

void xp_json_end(struct xp_json *j)
{
    assert(j->depth > 0);
    if (j->depth == 0)
        return;
    bool empty = j->first[j->depth], inl = j->inline_[j->depth];
    char close = j->close[j->depth];
    j->depth--;
    if (!empty && !inl) {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth; i++)
            fputs("  ", j->f);
    }
    fputc(close, j->f);
    if (j->depth == 0)
        fputc('\n', j->f);
}

/* Length of the well-formed UTF-8 sequence starting at p (at most n bytes
 * available), or 0 when it is ill-formed (overlong, surrogate, above
 * U+10FFFF, truncated, stray continuation byte): Unicode's table 3-7. */
size_t xp_json_utf8_len(const unsigned char *p, size_t n)
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

void xp_json_write_string(FILE *out, const char *s, size_t n)
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
            size_t len = xp_json_utf8_len(p + i, n - i);
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

void xp_json_key(struct xp_json *j, const char *key)
{
    xp_json_before(j);
    xp_json_write_string(j->f, key, strlen(key));
    fputs(j->inline_[j->depth] ? ":" : ": ", j->f);
    j->after_key = true;
}

void xp_json_str(struct xp_json *j, const char *s)
{
    if (!s) {
        xp_json_null(j);
        return;
    }
    xp_json_before(j);
    xp_json_write_string(j->f, s, strlen(s));
}

void xp_json_int(struct xp_json *j, int64_t v)
{
    xp_json_before(j);
    fprintf(j->f, "%" PRId64, v);
}

void xp_json_uint(struct xp_json *j, uint64_t v)
{
    xp_json_before(j);
    fprintf(j->f, "%" PRIu64, v);
}

void xp_json_double(struct xp_json *j, double v)
{
    if (!isfinite(v)) {
        xp_json_null(j);
        return;
    }
    xp_json_before(j);
    /* Integral values (byte counts compared as doubles by the diff) are
     * written whole: %.6g would round 1048577 to 1.04858e+06. */
    if (v == floor(v) && fabs(v) < 9007199254740992.0)
        fprintf(j->f, "%.0f", v);
    else
        fprintf(j->f, "%.6g", v);
}

void xp_json_bool(struct xp_json *j, bool v)
{
    xp_json_before(j);
    fputs(v ? "true" : "false", j->f);
}

void xp_json_null(struct xp_json *j)
{
    xp_json_before(j);
    fputs("null", j->f);
}
