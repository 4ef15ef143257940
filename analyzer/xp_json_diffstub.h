/* xp_json_diffstub.h: a minimal streaming JSON writer for `xferprof diff`.
 *
 * MERGE: STAND-IN, TO BE REPLACED.  The report branch adds analyzer/xp_json.h
 * with the project's JSON writer; at merge, point render_diff_json.c at it
 * (the calls map one to one: begin/end object/array, key, string, int, uint,
 * double, bool, null) and delete this file and xp_json_diffstub.c.  The names
 * carry an xp_jw_ prefix so both writers can be linked side by side until
 * then. */
#ifndef XP_JSON_DIFFSTUB_H
#define XP_JSON_DIFFSTUB_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define XP_JW_MAX_DEPTH 32

struct xp_jw {
    FILE *f;
    int depth;
    bool first[XP_JW_MAX_DEPTH]; /* no member written yet at this depth */
    bool after_key;              /* a key was written: the value needs no comma */
    bool failed;                 /* nesting too deep or unbalanced */
};

void xp_jw_init(struct xp_jw *j, FILE *f);
void xp_jw_begin_object(struct xp_jw *j);
void xp_jw_end_object(struct xp_jw *j);
void xp_jw_begin_array(struct xp_jw *j);
void xp_jw_end_array(struct xp_jw *j);
void xp_jw_key(struct xp_jw *j, const char *key);
void xp_jw_string(struct xp_jw *j, const char *s); /* NULL writes null */
void xp_jw_int(struct xp_jw *j, int64_t v);
void xp_jw_uint(struct xp_jw *j, uint64_t v);
void xp_jw_double(struct xp_jw *j, double v);      /* integral values without a fraction; NaN/inf: null */
void xp_jw_bool(struct xp_jw *j, bool v);
void xp_jw_null(struct xp_jw *j);
/* Ends the document with a newline.  0, or -1 when a write failed or the
 * document was malformed. */
int xp_jw_finish(struct xp_jw *j);

#endif
