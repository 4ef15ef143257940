/* xp_export.h: `xferprof export`'s writers (export_perfetto.c, export_csv.c) and the
 * fast number writers they use (xp_export_json.c). */
#ifndef XP_EXPORT_H
#define XP_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

/* Each writer reads the documented views of db (validated by
 * xp_load_open) and streams its output to out, row by row: memory
 * does not grow with the number of rows.  Returns 0, or -1 with a one-line
 * reason in err (OUT): sqlite's message for a database that turns out to be
 * corrupt while it is read, or the write error. */

/* Chrome trace-event JSON (object form), which Perfetto UI and
 * chrome://tracing open; what it holds is described in docs/export.md.
 * note (OUT, may be set even on success) says what was left out, e.g. an
 * nvtx_ranges table of an unknown shape; empty when nothing was. */
int xp_export_perfetto(sqlite3 *db, FILE *out, char *note, size_t notelen, char *err,
                       size_t errlen);

/* The copies view as RFC 4180 CSV: a header row with every column of the
 * view in its order, then one row per copy in id order. */
int xp_export_csv(sqlite3 *db, FILE *out, char *err, size_t errlen);

/* v in decimal, and v as "0x" and lowercase hex digits: without printf's
 * format parsing, which was most of an export's time (docs/performance.md).
 * Both are valid JSON numbers / CSV fields as they are (the hex one is
 * meant to be quoted in JSON). */
void xp_export_put_i64(FILE *out, int64_t v);
void xp_export_put_hex(FILE *out, uint64_t v);

#endif
