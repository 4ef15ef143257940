/* bench_sqlite_floor.c: what SQLite alone costs per row inserted, the floor
 * under the ingest's cost per record (issue 15; numbers, not pass/fail).
 *
 *   bench_sqlite_floor DB ROWS COLUMNS ROWS_PER_STATEMENT [NULLS]
 *
 * Inserts ROWS rows of COLUMNS integer columns (and the rowid) into a new
 * table in DB, through one prepared multi-row INSERT of ROWS_PER_STATEMENT
 * rows bound again and again, in one transaction.  The last NULLS columns
 * (default 0) are NULL in every row, bound once: bindings outlive
 * sqlite3_reset, so the cheapest way to insert them binds nothing per row.
 * COLUMNS "copy" is the row of bench_overhead's copies as the ingest stores
 * it in copy_rows: 13 columns, the last 4 NULL, with the values of such a
 * copy (small site id and size, addresses near 2^47, times near 4e13 ns,
 * a 64-bit fingerprint): what SQLite alone costs for the ingest's rows.
 * The database is opened as the ingest opens it (XP_DB_WRITE_FLAGS: no
 * per-connection mutex, which otherwise every bind and step takes) and runs
 * its PRAGMAs (xp_ingest_pragmas): the floor is fair only when SQLite is
 * asked to do the same work.  Run it under callgrind at two ROWS and divide
 * the difference: bench/run_sqlite_floor.sh does. */
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xp_ingest.h"
#include "xp_schema.h"

static int fail(sqlite3 *db, const char *what)
{
    fprintf(stderr, "bench_sqlite_floor: %s: %s\n", what, db ? sqlite3_errmsg(db) : "out of memory");
    return 1;
}

/* Column c of copy n as bench_overhead's copies are stored: site, bytes,
 * src, dst, start_ns, dur_ns, kernel_seq, fingerprint, fp_kind. */
static sqlite3_int64 copy_value(long c, long n)
{
    static const sqlite3_int64 fixed[] = {1, 8, 140004593045504ll, 139987209158656ll, 0, 0, 0,
                                          8207532009971195238ll, 1};
    return c == 4 ? 41845797255941ll + n * 3800 : c == 5 ? 3700 + n % 200 : fixed[c];
}

int main(int argc, char **argv)
{
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: %s DB ROWS COLUMNS ROWS_PER_STATEMENT [NULLS]\n", argv[0]);
        return 2;
    }
    bool copy = strcmp(argv[3], "copy") == 0;
    long rows = atol(argv[2]), cols = copy ? 13 : atol(argv[3]), per = atol(argv[4]);
    long nulls = copy ? 4 : argc == 6 ? atol(argv[5]) : 0;
    if (rows < 1 || cols < 1 || cols > 64 || per < 1 || per > 512 || cols * per > 32766 ||
        nulls < 0 || nulls >= cols) {
        fprintf(stderr, "bench_sqlite_floor: out of range\n");
        return 2;
    }
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(argv[1], &db, XP_DB_WRITE_FLAGS, NULL) != SQLITE_OK)
        return fail(db, "open");
    if (sqlite3_exec(db, xp_ingest_pragmas, NULL, NULL, NULL) != SQLITE_OK)
        return fail(db, "pragmas");
    char *sql = sqlite3_mprintf("DROP TABLE IF EXISTS t; CREATE TABLE t(id INTEGER PRIMARY KEY");
    for (long c = 0; sql && c < cols; c++)
        sql = sqlite3_mprintf("%z, c%ld INTEGER%s", sql, c, c < cols - nulls ? " NOT NULL" : "");
    sql = sql ? sqlite3_mprintf("%z)", sql) : NULL;
    if (!sql || sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return fail(db, "create");
    sqlite3_free(sql);
    sql = sqlite3_mprintf("INSERT INTO t(c0");
    for (long c = 1; sql && c < cols; c++)
        sql = sqlite3_mprintf("%z, c%ld", sql, c);
    sql = sql ? sqlite3_mprintf("%z) VALUES ", sql) : NULL;
    for (long r = 0; sql && r < per; r++) {
        sql = sqlite3_mprintf("%z%s(?", sql, r ? ", " : "");
        for (long c = 1; sql && c < cols; c++)
            sql = sqlite3_mprintf("%z, ?", sql);
        sql = sql ? sqlite3_mprintf("%z)", sql) : NULL;
    }
    sqlite3_stmt *st = NULL;
    if (!sql || sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK)
        return fail(db, "prepare");
    sqlite3_free(sql);
    /* The values, made once: what SQLite costs depends on their sizes, not on
     * whether they change, and a floor should not count our loop computing
     * them.  Generic columns: times near 1e15 ns, addresses near 2^47, sizes
     * of a few KiB. */
    sqlite3_int64 *val = malloc((size_t)(cols * per) * sizeof *val);
    if (val == NULL)
        return fail(NULL, "values");
    for (long k = 0; k < cols * per; k++) {
        long c = k % cols;
        val[k] = copy         ? copy_value(c, k / cols)
                 : c % 3 == 0 ? 1000000000000000ll + k
                 : c % 3 == 1 ? 0x7f0000000000ll + k * 4096
                              : 4096 + k;
    }
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        return fail(db, "begin");
    for (long i = 0; i < rows / per; i++) {
        /* The NULL columns are never bound: unbound parameters are NULL, and
         * bindings outlive sqlite3_reset. */
        for (long r = 0; r < per; r++)
            for (long c = 0; c < cols - nulls; c++)
                sqlite3_bind_int64(st, (int)(r * cols + c) + 1, val[r * cols + c]);
        if (sqlite3_step(st) != SQLITE_DONE)
            return fail(db, "insert");
        sqlite3_reset(st);
    }
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        return fail(db, "commit");
    sqlite3_finalize(st);
    sqlite3_close(db);
    free(val);
    return 0;
}
