/* fuzz_db.c: the fuzzer's bytes as a run database: opened and validated by
 * xp_ingest_open (the check every reader makes: application id, schema
 * version, integrity), then read through the documented views; and, valid
 * or not, given to the report's loader (xp_load: its own validation, every
 * table, the symbolizer), the rules, the totals and the call sites. */
#include <limits.h>
#include <stdlib.h>
#include <sqlite3.h>

#include "fuzz_common.h"
#include "xp_analysis.h"
#include "xp_ingest.h"
#include "xp_totals.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What `xferprof report` does with a database, short of writing it out. */
static void analyze(char *path)
{
    struct xp_report r = {0};
    char err[1200];
    xp_thresholds_default(&r.th);
    if (xp_analysis_load(&r, &path, 1, err, sizeof err) != 0)
        return;
    xp_analysis_findings(&r, XP_SEV_INFO);
    struct xp_totals t;
    if (xp_totals_compute(r.procs, r.n_procs, &t) == 0)
        xp_totals_free(&t);
    struct xp_site *sites = NULL;
    size_t n_sites = 0;
    (void)xp_sites_top(&r.procs[0], 0, 10, &sites, &n_sites);
    free(sites);
    xp_analysis_free(&r);
}

/* Every row of each view, every column read: what a loader does. */
static void read_views(const char *path)
{
    static const char *queries[] = {
        "SELECT key, value FROM meta",
        "SELECT * FROM copies",
        "SELECT * FROM memsets",
        "SELECT * FROM allocations",
        "SELECT * FROM unknown_frees",
        "SELECT * FROM syncs",
        "SELECT * FROM errors",
        "SELECT id, hash, depth, frames FROM stacks",
        "SELECT * FROM modules",
        "SELECT * FROM stack_frames",
        "SELECT stack_id, count(*), sum(bytes), sum(dur_ns) FROM copies GROUP BY stack_id",
    };
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++) {
            sqlite3_stmt *st = NULL;
            if (sqlite3_prepare_v2(db, queries[i], -1, &st, NULL) != SQLITE_OK)
                continue;
            /* Bounded: a crafted file can claim huge tables. */
            for (int row = 0; row < 10000 && sqlite3_step(st) == SQLITE_ROW; row++)
                for (int c = 0; c < sqlite3_column_count(st); c++)
                    (void)sqlite3_column_bytes(st, c), (void)sqlite3_column_blob(st, c);
            sqlite3_finalize(st);
        }
    }
    sqlite3_close(db);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char dbpath[PATH_MAX];
    snprintf(dbpath, sizeof dbpath, "%s/run.db", fuzz_dir());
    fuzz_remove_db(dbpath);
    fuzz_write("run.db", data, size, dbpath, sizeof dbpath);
    char err[256];
    xp_ingest *ig = NULL;
    if (xp_ingest_open(dbpath, &ig, err, sizeof err) == 0) {
        xp_ingest_close(ig);
        read_views(dbpath);
    }
    analyze(dbpath);
    fuzz_remove_db(dbpath);
    return 0;
}
