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

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 when invalid:
 * overlong forms, surrogates and code points above U+10FFFF are invalid. */
static size_t xp_utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    uint32_t cp, min;
    if (c < 0x80)
        return 1;
    if ((c & 0xe0) == 0xc0)
        len = 2, cp = c & 0x1f, min = 0x80;
    else if ((c & 0xf0) == 0xe0)
        len = 3, cp = c & 0x0f, min = 0x800;
    else if ((c & 0xf8) == 0xf0)
        len = 4, cp = c & 0x07, min = 0x10000;
    else
        return 0;
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

void xp_json_write_string(FILE *f, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', f);
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        if (c >= 0x80) {
            size_t len = xp_utf8_len(s + i, n - i);
            if (len == 0) {
                fputs("\xef\xbf\xbd", f); /* U+FFFD for the one bad byte, then go on */
                i++;
            } else {
                fwrite(s + i, 1, len, f);
                i += len;
            }
            continue;
        }
        i++;
        switch (c) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        default:
            if (c < 0x20)
                fprintf(f, "\\u%04x", c);
            else
                fputc((int)c, f);
        }
    }
    fputc('"', f);
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
