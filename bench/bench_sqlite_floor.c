/* bench_sqlite_floor.c: what SQLite alone costs per row inserted, the floor
 * under the ingest's cost per record (issue 15; numbers, not pass/fail).
 *
 *   bench_sqlite_floor DB ROWS COLUMNS [v]ROWS_PER_STATEMENT [NULLS]
 *
 * Inserts ROWS rows of COLUMNS integer columns (and the rowid) into a new
 * table in DB, through one prepared multi-row INSERT of ROWS_PER_STATEMENT
 * rows bound again and again, in one transaction.  With a `v` before the
 * count, through one INSERT ... SELECT * from an eponymous virtual table
 * that hands SQLite that many rows of the values, as the ingest stores its
 * rows (src/xp_ingest_vtab.c), with nothing bound: that path's floor.  The
 * last NULLS columns (default 0) are NULL in every row, bound once:
 * bindings outlive sqlite3_reset, so the cheapest way to insert them binds
 * nothing per row (the virtual table returns no value for them).
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

/* The virtual table of `v` mode: ROWS_PER_STATEMENT rows of the values,
 * the last NULLS columns NULL; as small as a table SQLite can read. */
typedef struct floor_rows {
    const sqlite3_int64 *val;
    long cols, nulls, per;
} floor_rows;

typedef struct floor_vtab {
    sqlite3_vtab base;
    const floor_rows *t;
} floor_vtab;

typedef struct floor_cursor {
    sqlite3_vtab_cursor base;
    const floor_rows *t;
    long r;
} floor_cursor;

static int rows_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                        sqlite3_vtab **out, char **err)
{
    (void)argc, (void)argv, (void)err;
    const floor_rows *t = aux;
    char *sql = sqlite3_mprintf("CREATE TABLE x(c0");
    for (long c = 1; sql && c < t->cols; c++)
        sql = sqlite3_mprintf("%z, c%ld", sql, c);
    sql = sql ? sqlite3_mprintf("%z)", sql) : NULL;
    int rc = sql ? sqlite3_declare_vtab(db, sql) : SQLITE_NOMEM;
    sqlite3_free(sql);
    if (rc != SQLITE_OK)
        return rc;
    floor_vtab *v = sqlite3_malloc(sizeof *v);
    if (v == NULL)
        return SQLITE_NOMEM;
    memset(v, 0, sizeof *v);
    v->t = t;
    *out = &v->base;
    return SQLITE_OK;
}

static int rows_disconnect(sqlite3_vtab *v)
{
    sqlite3_free(v);
    return SQLITE_OK;
}

static int rows_best_index(sqlite3_vtab *v, sqlite3_index_info *info)
{
    (void)v;
    info->estimatedCost = info->estimatedRows = 256;
    return SQLITE_OK;
}

static int rows_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
    floor_cursor *c = sqlite3_malloc(sizeof *c);
    if (c == NULL)
        return SQLITE_NOMEM;
    memset(c, 0, sizeof *c);
    c->t = ((const floor_vtab *)v)->t;
    *out = &c->base;
    return SQLITE_OK;
}

static int rows_close(sqlite3_vtab_cursor *c)
{
    sqlite3_free(c);
    return SQLITE_OK;
}

static int rows_filter(sqlite3_vtab_cursor *c, int idx, const char *idx_str, int argc,
                       sqlite3_value **argv)
{
    (void)idx, (void)idx_str, (void)argc, (void)argv;
    ((floor_cursor *)c)->r = 0;
    return SQLITE_OK;
}

static int rows_next(sqlite3_vtab_cursor *c)
{
    ((floor_cursor *)c)->r++;
    return SQLITE_OK;
}

static int rows_eof(sqlite3_vtab_cursor *c)
{
    const floor_cursor *k = (const floor_cursor *)c;
    return k->r >= k->t->per;
}

static int rows_column(sqlite3_vtab_cursor *c, sqlite3_context *ctx, int col)
{
    const floor_cursor *k = (const floor_cursor *)c;
    if (col < k->t->cols - k->t->nulls)
        sqlite3_result_int64(ctx, k->t->val[k->r * k->t->cols + col]);
    return SQLITE_OK;
}

static int rows_rowid(sqlite3_vtab_cursor *c, sqlite3_int64 *id)
{
    *id = ((const floor_cursor *)c)->r;
    return SQLITE_OK;
}

static const sqlite3_module rows_module = {
    .xConnect = rows_connect, .xBestIndex = rows_best_index, .xDisconnect = rows_disconnect,
    .xOpen = rows_open, .xClose = rows_close, .xFilter = rows_filter, .xNext = rows_next,
    .xEof = rows_eof, .xColumn = rows_column, .xRowid = rows_rowid,
};

int main(int argc, char **argv)
{
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: %s DB ROWS COLUMNS ROWS_PER_STATEMENT [NULLS]\n", argv[0]);
        return 2;
    }
    bool copy = strcmp(argv[3], "copy") == 0;
    bool vtab = argv[4][0] == 'v';
    long rows = atol(argv[2]), cols = copy ? 13 : atol(argv[3]), per = atol(argv[4] + vtab);
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
    /* From the virtual table, the text does not grow with the rows. */
    sql = sql ? sqlite3_mprintf(vtab ? "%z) SELECT * FROM floor_rows" : "%z) VALUES ", sql) : NULL;
    for (long r = 0; sql && !vtab && r < per; r++) {
        sql = sqlite3_mprintf("%z%s(?", sql, r ? ", " : "");
        for (long c = 1; sql && c < cols; c++)
            sql = sqlite3_mprintf("%z, ?", sql);
        sql = sql ? sqlite3_mprintf("%z)", sql) : NULL;
    }
    floor_rows table = {.cols = cols, .nulls = nulls, .per = per};
    if (vtab && sqlite3_create_module(db, "floor_rows", &rows_module, &table) != SQLITE_OK)
        return fail(db, "module");
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
    table.val = val;
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
        for (long r = 0; r < per && !vtab; r++)
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
