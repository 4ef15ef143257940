/* xp_json_diffstub.c: minimal JSON writer for the diff (MERGE: replace with the report's xp_json). */
#include <math.h>
#include <inttypes.h>

#include "xp_json_diffstub.h"

void xp_jw_init(struct xp_jw *j, FILE *f)
{
    *j = (struct xp_jw){.f = f};
    j->first[0] = true;
}

/* The separator before a value (or a key) at the current depth. */
static void xp_jw_sep(struct xp_jw *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (!j->first[j->depth])
        fputc(',', j->f);
    j->first[j->depth] = false;
}

static void xp_jw_open(struct xp_jw *j, char c)
{
    xp_jw_sep(j);
    fputc(c, j->f);
    if (j->depth + 1 >= XP_JW_MAX_DEPTH) {
        j->failed = true;
        return;
    }
    j->first[++j->depth] = true;
}

static void xp_jw_close(struct xp_jw *j, char c)
{
    if (j->depth == 0 || j->after_key)
        j->failed = true;
    else
        j->depth--;
    fputc(c, j->f);
}

void xp_jw_begin_object(struct xp_jw *j) { xp_jw_open(j, '{'); }
void xp_jw_end_object(struct xp_jw *j) { xp_jw_close(j, '}'); }
void xp_jw_begin_array(struct xp_jw *j) { xp_jw_open(j, '['); }
void xp_jw_end_array(struct xp_jw *j) { xp_jw_close(j, ']'); }

static void xp_jw_raw_string(struct xp_jw *j, const char *s)
{
    fputc('"', j->f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", j->f); break;
        case '\\': fputs("\\\\", j->f); break;
        case '\n': fputs("\\n", j->f); break;
        case '\t': fputs("\\t", j->f); break;
        case '\r': fputs("\\r", j->f); break;
        default:
            /* Control bytes escaped; other bytes as they are (paths and
             * symbol names are UTF-8 or close to it). */
            if (*p < 0x20)
                fprintf(j->f, "\\u%04x", *p);
            else
                fputc(*p, j->f);
        }
    }
    fputc('"', j->f);
}

void xp_jw_key(struct xp_jw *j, const char *key)
{
    xp_jw_sep(j);
    xp_jw_raw_string(j, key);
    fputc(':', j->f);
    j->after_key = true;
}

void xp_jw_string(struct xp_jw *j, const char *s)
{
    xp_jw_sep(j);
    if (s)
        xp_jw_raw_string(j, s);
    else
        fputs("null", j->f);
}

void xp_jw_int(struct xp_jw *j, int64_t v)
{
    xp_jw_sep(j);
    fprintf(j->f, "%" PRId64, v);
}

void xp_jw_uint(struct xp_jw *j, uint64_t v)
{
    xp_jw_sep(j);
    fprintf(j->f, "%" PRIu64, v);
}

void xp_jw_double(struct xp_jw *j, double v)
{
    xp_jw_sep(j);
    if (!isfinite(v))
        fputs("null", j->f);
    else if (v == floor(v) && fabs(v) < 9007199254740992.0)
        fprintf(j->f, "%.0f", v); /* counts and bytes stay integers */
    else
        fprintf(j->f, "%.10g", v); /* ten digits: more is noise, and fewer keep ratios readable */
}

void xp_jw_bool(struct xp_jw *j, bool v)
{
    xp_jw_sep(j);
    fputs(v ? "true" : "false", j->f);
}

void xp_jw_null(struct xp_jw *j)
{
    xp_jw_sep(j);
    fputs("null", j->f);
}

int xp_jw_finish(struct xp_jw *j)
{
    fputc('\n', j->f);
    if (fflush(j->f) != 0 || ferror(j->f))
        return -1;
    return j->failed || j->depth != 0 ? -1 : 0;
}
