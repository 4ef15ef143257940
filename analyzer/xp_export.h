/* xp_export.h: `xferprof export`'s writers (export_perfetto.c, export_csv.c) and the
 * fast number writers they use (xp_export_json.c). */
#ifndef XP_EXPORT_H
#define XP_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

/* Each writer reads the documented views of db (validated by
 * xp_load_open) and streams its output to out, row by row: memory
 * does not grow with the number of rows.  Returns 0, or -1 with a one-line
 * reason in err (OUT): sqlite's message for a database that turns out to be
 * corrupt while it is read, or the write error. */

/* Each stack's call site as the report names it (its top user frame:
 * `train.py:42 in train_step`, `upload (loader.c:88)`), and the rule ids of
 * the report's findings at that site ("async-pageable, small-copies"), by
 * stacks.id; NULL for an id without frames / without findings. */
struct xp_sites {
    char **name;
    char **findings;
    size_t n;                 /* entries in each: the largest id + 1 */
};

/* Loads db (opened by xp_load_open from path) as the report does, using and,
 * when writable, filling the symbols cache, runs the report's rules with
 * their default thresholds and names each site and its findings into out.
 * Memory grows with the run here (the rules need every row), not in the
 * writers.  When the report cannot read db (a table of another build's
 * shape) the sites are named without findings and note (OUT) says why.
 * Returns 0, or -1 with err (OUT) set. */
int xp_export_sites(sqlite3 *db, const char *path, bool writable, struct xp_sites *out,
                    char *note, size_t notelen, char *err, size_t errlen);
void xp_export_sites_free(struct xp_sites *s);

/* Chrome trace-event JSON (object form), which Perfetto UI and
 * chrome://tracing open, or with proto Perfetto's protobuf trace (a Trace
 * message: its TracePackets); what it holds is described in docs/export.md.
 * Copies, memsets and syncs name their call site from sites (may be NULL).
 * note (OUT, may be set even on success) says what was left out, e.g. an
 * nvtx_ranges table of an unknown shape; empty when nothing was. */
int xp_export_perfetto(sqlite3 *db, const struct xp_sites *sites, bool proto, FILE *out,
                       char *note, size_t notelen, char *err, size_t errlen);

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
