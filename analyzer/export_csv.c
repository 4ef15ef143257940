/* export_csv.c: `xferprof export --format csv`, the copies view as RFC 4180 CSV. */
#include <stdbool.h>
#include <string.h>

#include "xp_export.h"
#include "xp_progress.h"

/* A field, quoted only when RFC 4180 needs it (comma, quote, CR or LF) so
 * that the common numeric and name fields stay plain. */
static void xp_csv_field(FILE *out, const char *s, size_t n)
{
    bool quote = false;
    for (size_t i = 0; i < n && !quote; i++)
        quote = s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n';
    if (!quote) {
        fwrite_unlocked(s, 1, n, out);
        return;
    }
    putc_unlocked('"', out);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"')
            putc_unlocked('"', out);
        putc_unlocked(s[i], out);
    }
    putc_unlocked('"', out);
}

int xp_export_csv(sqlite3 *db, FILE *out, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    /* SELECT * on purpose: the export is every column of the view in its
     * order, including columns a later schema adds at the end. */
    if (sqlite3_prepare_v2(db, "SELECT * FROM copies ORDER BY id", -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s", sqlite3_errmsg(db));
        return -1;
    }
    int ncol = sqlite3_column_count(st);
    for (int i = 0; i < ncol; i++) {
        const char *name = sqlite3_column_name(st, i);
        if (i)
            putc(',', out);
        xp_csv_field(out, name ? name : "", name ? strlen(name) : 0);
    }
    fputs("\r\n", out);

    int rc;
    uint64_t rows = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        for (int i = 0; i < ncol; i++) {
            if (i)
                putc_unlocked(',', out);
            switch (sqlite3_column_type(st, i)) {
            case SQLITE_NULL:
                break; /* an empty field */
            case SQLITE_INTEGER:
                xp_export_put_i64(out, (int64_t)sqlite3_column_int64(st, i));
                break;
            case SQLITE_FLOAT:
                fprintf(out, "%.17g", sqlite3_column_double(st, i));
                break;
            default: {
                const char *t = (const char *)sqlite3_column_text(st, i);
                xp_csv_field(out, t ? t : "", t ? (size_t)sqlite3_column_bytes(st, i) : 0);
            }
            }
        }
        fputs_unlocked("\r\n", out);
        xp_progress_tick(&rows, "rows written");
    }
    if (rc != SQLITE_DONE) {
        snprintf(err, errlen, "%s", sqlite3_errmsg(db));
        sqlite3_finalize(st);
        return -1;
    }
    sqlite3_finalize(st);
    return 0;
}
