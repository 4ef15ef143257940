/* xp_ingest_vtab.c: the rows waiting in a row_buf as a virtual table, so that one
 * INSERT ... SELECT stores them all with no sqlite3_bind_* per value. */
#include "xp_ingest_int.h"

#include <stdio.h>
#include <string.h>

/* Eponymous-only (no xCreate): the tables exist on our connection alone,
 * only while it is open, and never in the database's schema, so every
 * other reader sees plain tables.  Each table's columns are c0, c1, ...,
 * in the order of the row_buf's values (xp_store_copy, xp_store_sync); a
 * column whose bit is set in the row's null mask reads as NULL. */

typedef struct xp_rows_vtab {
    sqlite3_vtab base;
    const row_buf *b;
} xp_rows_vtab;

typedef struct xp_rows_cursor {
    sqlite3_vtab_cursor base;
    const row_buf *b;
    unsigned r;
} xp_rows_cursor;

static int xp_rows_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                           sqlite3_vtab **out, char **err)
{
    (void)argc, (void)argv, (void)err;
    const row_buf *b = aux;
    char sql[256];
    size_t n = (size_t)snprintf(sql, sizeof sql, "CREATE TABLE x(");
    for (unsigned c = 0; c < b->cols; c++)
        n += (size_t)snprintf(sql + n, sizeof sql - n, "%sc%u", c ? ", " : "", c);
    snprintf(sql + n, sizeof sql - n, ")");
    int rc = sqlite3_declare_vtab(db, sql);
    if (rc != SQLITE_OK)
        return rc;
    xp_rows_vtab *v = sqlite3_malloc(sizeof *v);
    if (v == NULL)
        return SQLITE_NOMEM;
    memset(v, 0, sizeof *v);
    v->b = b;
    *out = &v->base;
    return SQLITE_OK;
}

static int xp_rows_disconnect(sqlite3_vtab *v)
{
    sqlite3_free(v);
    return SQLITE_OK;
}

static int xp_rows_best_index(sqlite3_vtab *v, sqlite3_index_info *info)
{
    (void)v;
    info->estimatedCost = XP_ROW_BATCH;
    info->estimatedRows = XP_ROW_BATCH;
    return SQLITE_OK;
}

static int xp_rows_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
    xp_rows_cursor *c = sqlite3_malloc(sizeof *c);
    if (c == NULL)
        return SQLITE_NOMEM;
    memset(c, 0, sizeof *c);
    c->b = ((xp_rows_vtab *)v)->b;
    *out = &c->base;
    return SQLITE_OK;
}

static int xp_rows_close(sqlite3_vtab_cursor *c)
{
    sqlite3_free(c);
    return SQLITE_OK;
}

static int xp_rows_filter(sqlite3_vtab_cursor *c, int idx, const char *idx_str, int argc,
                          sqlite3_value **argv)
{
    (void)idx, (void)idx_str, (void)argc, (void)argv;
    ((xp_rows_cursor *)c)->r = 0;
    return SQLITE_OK;
}

static int xp_rows_next(sqlite3_vtab_cursor *c)
{
    ((xp_rows_cursor *)c)->r++;
    return SQLITE_OK;
}

static int xp_rows_eof(sqlite3_vtab_cursor *c)
{
    const xp_rows_cursor *k = (const xp_rows_cursor *)c;
    return k->r >= k->b->n;
}

static int xp_rows_column(sqlite3_vtab_cursor *c, sqlite3_context *ctx, int col)
{
    const xp_rows_cursor *k = (const xp_rows_cursor *)c;
    if (!(k->b->null[k->r] & (1u << col)))
        sqlite3_result_int64(ctx, k->b->v[k->r * k->b->cols + (unsigned)col]);
    return SQLITE_OK;
}

static int xp_rows_rowid(sqlite3_vtab_cursor *c, sqlite3_int64 *rowid)
{
    *rowid = ((const xp_rows_cursor *)c)->r;
    return SQLITE_OK;
}

static const sqlite3_module xp_rows_module = {
    .iVersion = 1,
    .xConnect = xp_rows_connect,
    .xBestIndex = xp_rows_best_index,
    .xDisconnect = xp_rows_disconnect,
    .xOpen = xp_rows_open,
    .xClose = xp_rows_close,
    .xFilter = xp_rows_filter,
    .xNext = xp_rows_next,
    .xEof = xp_rows_eof,
    .xColumn = xp_rows_column,
    .xRowid = xp_rows_rowid,
};

int xp_ig_rows_module(xp_ingest *ig)
{
    if (sqlite3_create_module(ig->db, "xp_copy_buf", &xp_rows_module, &ig->copies) != SQLITE_OK ||
        sqlite3_create_module(ig->db, "xp_sync_buf", &xp_rows_module, &ig->syncs) != SQLITE_OK)
        return -1;
    return 0;
}
