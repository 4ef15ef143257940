/* xp_json.h: a small streaming JSON writer (RFC 8259) for the report's machine format. */
#ifndef XP_JSON_H
#define XP_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define XP_JSON_MAX_DEPTH 32

/* Writes one JSON value to f, pretty-printed (two spaces per level); an
 * array begun with xp_json_array_inline keeps its elements on one line.
 * Nesting deeper than XP_JSON_MAX_DEPTH is a caller bug (asserted). */
struct xp_json {
    FILE *f;
    int depth;
    bool first[XP_JSON_MAX_DEPTH];  /* no member written yet at this level */
    bool inline_[XP_JSON_MAX_DEPTH]; /* this level's elements stay on one line */
    char close[XP_JSON_MAX_DEPTH];  /* the bracket that ends this level */
    bool after_key;                 /* the next value completes "key": */
};

void xp_json_init(struct xp_json *j, FILE *f);
void xp_json_object(struct xp_json *j);
void xp_json_array(struct xp_json *j);
void xp_json_array_inline(struct xp_json *j);
void xp_json_end(struct xp_json *j);   /* closes the innermost object or array */
void xp_json_key(struct xp_json *j, const char *key);

void xp_json_str(struct xp_json *j, const char *s);  /* NULL writes null */
void xp_json_int(struct xp_json *j, int64_t v);
void xp_json_uint(struct xp_json *j, uint64_t v);
void xp_json_double(struct xp_json *j, double v);    /* %.6g; NaN and infinities write null */
void xp_json_bool(struct xp_json *j, bool v);
void xp_json_null(struct xp_json *j);

/* Length of the well-formed UTF-8 sequence starting at p (at most n bytes
 * available), or 0 when it is ill-formed (overlong, surrogate, above
 * U+10FFFF, truncated, stray continuation byte): Unicode's table 3-7. */
size_t xp_json_utf8_len(const unsigned char *p, size_t n);

/* Writes s (n bytes) as a JSON string literal with its quotes: ", \ and
 * control characters escaped, each byte of ill-formed UTF-8 replaced by
 * U+FFFD; NULL writes null.  Fast enough for millions of strings (the
 * export's trace): plain ASCII goes out in one write. */
void xp_json_write_string(FILE *f, const char *s, size_t n);

#endif
