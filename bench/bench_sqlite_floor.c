/* bench_sqlite_floor.c: what SQLite alone costs per row inserted, the floor
 * under the ingest's cost per record (issue 15; numbers, not pass/fail).
 *
 *   bench_sqlite_floor DB ROWS COLUMNS ROWS_PER_STATEMENT
 *
 * Inserts ROWS rows of COLUMNS integer columns (and the rowid) into a new
 * table in DB, through one prepared multi-row INSERT of ROWS_PER_STATEMENT
 * rows bound again and again, in one transaction, WAL and synchronous off
 * (as the ingest does, or cheaper).  Run it under callgrind at two ROWS and
 * divide the difference: bench/run_sqlite_floor.sh does. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(sqlite3 *db, const char *what)
{
    fprintf(stderr, "bench_sqlite_floor: %s: %s\n", what, db ? sqlite3_errmsg(db) : "out of memory");
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s DB ROWS COLUMNS ROWS_PER_STATEMENT\n", argv[0]);
        return 2;
    }
    long rows = atol(argv[2]), cols = atol(argv[3]), per = atol(argv[4]);
    if (rows < 1 || cols < 1 || cols > 64 || per < 1 || per > 512 || cols * per > 32766) {
        fprintf(stderr, "bench_sqlite_floor: out of range\n");
        return 2;
    }
    sqlite3 *db = NULL;
    if (sqlite3_open(argv[1], &db) != SQLITE_OK)
        return fail(db, "open");
    char *sql = sqlite3_mprintf("PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; "
                                "DROP TABLE IF EXISTS t; CREATE TABLE t(id INTEGER PRIMARY KEY");
    for (long c = 0; sql && c < cols; c++)
        sql = sqlite3_mprintf("%z, c%ld INTEGER NOT NULL", sql, c);
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
    if (!sql || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return fail(db, "prepare");
    sqlite3_free(sql);
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        return fail(db, "begin");
    /* Values of a copy's magnitude: times near 1e15 ns, addresses near 2^47,
     * sizes of a few KiB. */
    for (long i = 0; i < rows / per; i++) {
        for (long k = 0; k < cols * per; k++) {
            long c = k % cols;
            sqlite3_int64 v = c % 3 == 0   ? 1000000000000000ll + i * 1000 + k
                              : c % 3 == 1 ? 0x7f0000000000ll + i * 4096
                                           : 4096 + k;
            sqlite3_bind_int64(st, (int)k + 1, v);
        }
        if (sqlite3_step(st) != SQLITE_DONE)
            return fail(db, "insert");
        sqlite3_reset(st);
    }
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        return fail(db, "commit");
    sqlite3_finalize(st);
    sqlite3_close(db);
    return 0;
}
