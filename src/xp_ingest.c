/* xp_ingest.c: moving journal records into the run database, exactly once. */
#include "xp_ingest.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "xp_api.h"
#include "xp_fds.h"
#include "xp_format.h"
#include "xp_ingest_py.h"
#include "xp_schema.h"
#include "xp_validate.h"

/* Records per transaction: large enough that the commit (and the WAL
 * checkpoint it may trigger) is a small share of the time, small enough
 * that readers of the live database see progress and a rolled-back batch
 * costs little to redo. */
#define XP_INGEST_BATCH 50000

/* No journal has more chunks than this (a 4 TiB file): a larger index is a
 * damaged reader or journal, not something to allocate for. */
#define XP_MAX_CHUNKS (1u << 24)

/* The longest records_lost_reason kept: reasons only repeat after that. */
#define XP_MAX_REASON 2000

/* Caches of ids already in the database, direct-mapped (a collision only
 * costs a query).  They are only ever a shortcut for a lookup: emptied when a
 * transaction rolls back (the rows they name are gone) and when another
 * connection wrote to the database. */
#define SITE_CACHE 4096
#define STACK_CACHE 2048

/* Copies and syncs are inserted XP_ROW_BATCH rows per statement: most of
 * an insert's cost is the statement's own (cursors opened and closed, the
 * last rowid looked up), not the row's. */
#define XP_ROW_BATCH 32
#define XP_ROW_COLS 11            /* the most columns of a buffered row (copies) */

/* What call_sites interns: everything about a call that tends to repeat. */
typedef struct site_key {
    int64_t stream;
    int64_t stack;            /* stacks.id, 0 for none (NULL in the database) */
    int32_t api, status, device;
    uint32_t tid;
    uint8_t direction, host_mem, blocking, kind;
} site_key;

typedef struct site_slot {
    site_key key;
    int64_t id;               /* 0: empty */
} site_slot;

typedef struct stack_slot {
    uint64_t hash;            /* 0: empty (no stack hashes to 0) */
    int64_t id;
} stack_slot;

enum {
    S_BEGIN, S_COMMIT, S_ROLLBACK, S_DATA_VERSION,
    S_COPY, S_SYNC, S_SITE_FIND, S_SITE_ADD, S_STACK_FIND, S_STACK_ADD, S_STACK_SET,
    S_MODULE, S_META, S_ALLOC, S_FREE, S_UNKNOWN_FREE, S_ERROR, S_MEMSET,
    S_PROGRESS_SET, S_PROGRESS_GET, S_LOST_N, S_LOST_REASON, S_TIMES_FIXED,
    S_JOURNAL_GET, S_JOURNAL_ADD, S_JOURNAL_TORN, S_META_DEFAULT,
    S_NVTX_NAME, S_NVTX_RANGE, S_NVTX_END, S_PYCODE,
    S_CORRUPT_GET, S_CORRUPT_ADD, S_CORRUPT_REASON,
    S_COPY_MANY, S_SYNC_MANY,   /* XP_ROW_BATCH rows at once, text made at open */
    S_COUNT
};

static const char *const sql_text[S_COUNT] = {
    [S_BEGIN] = "BEGIN IMMEDIATE",
    [S_COMMIT] = "COMMIT",
    [S_ROLLBACK] = "ROLLBACK",
    [S_DATA_VERSION] = "PRAGMA data_version",
    [S_COPY] = "INSERT INTO copy_rows(site, bytes, src, dst, start_ns, dur_ns, kernel_seq, "
               "fingerprint, fp_kind, nvtx_range, full_fp) "
               "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    [S_MEMSET] = "INSERT INTO memset_rows(site, bytes, dst, value, kernel_seq, start_ns, dur_ns, "
                 "nvtx_range) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    [S_SYNC] = "INSERT INTO sync_rows(site, start_ns, dur_ns, nvtx_range, copy_start_ns, "
               "fingerprint, fp_kind) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [S_SITE_FIND] = "SELECT id FROM call_sites WHERE api = ?1 AND status = ?2 AND device = ?3 "
                    "AND tid = ?4 AND stream = ?5 AND stack IS ?6 AND direction = ?7 "
                    "AND host_mem = ?8 AND blocking = ?9 AND kind = ?10",
    [S_SITE_ADD] = "INSERT INTO call_sites(api, status, device, tid, stream, stack, direction, "
                   "host_mem, blocking, kind) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    [S_STACK_FIND] = "SELECT id FROM stacks WHERE hash = ?1",
    [S_STACK_ADD] = "INSERT INTO stacks(hash) VALUES (?1)",
    [S_STACK_SET] = "INSERT INTO stacks(hash, depth, frames, pyframes) VALUES (?1, ?2, ?3, ?4) "
                    "ON CONFLICT(hash) DO UPDATE SET depth = excluded.depth, "
                    "frames = excluded.frames, pyframes = excluded.pyframes "
                    "WHERE frames IS NULL",
    [S_MODULE] = "INSERT OR IGNORE INTO modules(path, base, size, low, build_id) "
                 "VALUES (?1, ?2, ?3, ?4, ?5)",
    [S_META] = "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)",
    [S_ALLOC] = "INSERT OR IGNORE INTO alloc_rows(id, api, kind, device, ptr, bytes, alloc_ns, "
                "alloc_end_ns, tid, stack) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    [S_FREE] = "INSERT OR IGNORE INTO free_rows(alloc_id, api, free_ns, free_end_ns, tid, stack) "
               "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    [S_UNKNOWN_FREE] = "INSERT INTO unknown_free_rows(api, ptr, kind, device, tid, start_ns, "
                       "end_ns, stack) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    [S_ERROR] = "INSERT INTO error_rows(record, api, status, device, tid, start_ns, end_ns, "
                "stack, copy_id, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    [S_PROGRESS_SET] = "INSERT OR REPLACE INTO journal_progress(chunk, offset) VALUES (?1, ?2)",
    [S_PROGRESS_GET] = "SELECT chunk, offset FROM journal_progress",
    [S_TIMES_FIXED] = "INSERT INTO meta(key, value) VALUES ('times_fixed', ?1) "
                      "ON CONFLICT(key) DO UPDATE SET value = "
                      "CAST(CAST(value AS INTEGER) + CAST(excluded.value AS INTEGER) AS TEXT)",
    [S_LOST_N] = "INSERT INTO meta(key, value) VALUES ('records_lost', ?1) "
                 "ON CONFLICT(key) DO UPDATE SET value = "
                 "CAST(CAST(value AS INTEGER) + CAST(excluded.value AS INTEGER) AS TEXT)",
    [S_CORRUPT_GET] = "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'records_corrupt'",
    [S_CORRUPT_ADD] = "INSERT INTO meta(key, value) VALUES ('records_corrupt', ?1) "
                      "ON CONFLICT(key) DO UPDATE SET value = "
                      "CAST(CAST(value AS INTEGER) + CAST(excluded.value AS INTEGER) AS TEXT)",
    [S_CORRUPT_REASON] = "UPDATE meta SET value = replace(value, ?1, ?2) "
                         "WHERE key = 'records_lost_reason'",
    [S_LOST_REASON] = "INSERT INTO meta(key, value) VALUES ('records_lost_reason', ?1) "
                      "ON CONFLICT(key) DO UPDATE SET value = CASE "
                      "WHEN value IS NULL OR value = '' THEN excluded.value "
                      "WHEN length(value) >= ?2 THEN value "
                      "WHEN length(value) + length(excluded.value) > ?2 THEN value || '; ...' "
                      "ELSE value || '; ' || excluded.value END",
    [S_JOURNAL_GET] = "SELECT pid, start_wall_ns, start_mono_ns, torn FROM journal WHERE id = 1",
    [S_JOURNAL_ADD] = "INSERT INTO journal(id, pid, start_wall_ns, start_mono_ns) "
                      "VALUES (1, ?1, ?2, ?3)",
    [S_JOURNAL_TORN] = "UPDATE journal SET torn = ?1 WHERE id = 1",
    [S_META_DEFAULT] = "INSERT OR IGNORE INTO meta(key, value) VALUES (?1, ?2)",
    [S_NVTX_NAME] = "INSERT OR IGNORE INTO nvtx_names(hash, name) VALUES (?1, ?2)",
    [S_NVTX_RANGE] = "INSERT OR IGNORE INTO nvtx_range_rows(id, kind, name, domain, tid, "
                     "start_ns, depth, parent) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    [S_NVTX_END] = "INSERT OR IGNORE INTO nvtx_end_rows(range_id, tid, end_ns) VALUES (?1, ?2, ?3)",
    [S_PYCODE] = "INSERT OR IGNORE INTO py_code(key, file, name, first_line, line_table, "
                 "py_version, line_format) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
};

/* Rows waiting for a multi-row insert; always flushed before a commit. */
typedef struct row_buf {
    int one, many;            /* statements inserting one row, XP_ROW_BATCH rows */
    unsigned cols, n;
    sqlite3_int64 v[XP_ROW_BATCH * XP_ROW_COLS];
    uint16_t null[XP_ROW_BATCH]; /* per row, bit c: column c is NULL (v ignored) */
} row_buf;
_Static_assert(XP_ROW_COLS <= 16, "row_buf.null has a bit per column");

/* SQLite's descriptors of one connection: the database, its -wal, its -shm. */
#define XP_DB_FILES 3

struct xp_ingest {
    sqlite3 *db;              /* NULL between calls (see "Descriptors" below) */
    char *path;
    sqlite3_stmt *st[S_COUNT];
    int fds[XP_DB_FILES];     /* the connection's descriptors, as found at attach */
    xp_file_id fd_ids[XP_DB_FILES];
    unsigned nfds;
    bool abandoned;           /* a connection's descriptors were the program's: see below */

    bool in_txn;
    unsigned txn_records;     /* records stored in the open transaction */
    long long data_version;   /* PRAGMA data_version after our last look */
    bool failed;              /* a record callback hit an error: ig->err says */
    bool full;                /* ... and that error was SQLite's "disk is full" */
    char err[512];

    /* Where each chunk stands: offset just past the last record stored
     * (0: nothing yet).  Mirrors journal_progress plus the open
     * transaction; reloaded from the database at every pass. */
    uint32_t *off;
    uint8_t *dirty;           /* changed in the open transaction */
    size_t nchunks;           /* entries in off and dirty */
    uint64_t *dirty_list;
    size_t ndirty, dirty_cap;

    /* Records the open transaction could not store, by reason: counted into
     * records_lost at its commit, so they too are counted exactly once. */
    uint64_t lost_corrupt, lost_malformed, lost_duplicate;
    uint64_t times_fixed;     /* calls stored with end_ns set to start_ns (see xp_store) */

    row_buf copies, syncs;

    site_slot sites[SITE_CACHE];
    stack_slot stacks[STACK_CACHE];
};

/* ---- errors and small helpers ------------------------------------------ */

static void xp_set_err(xp_ingest *ig, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void xp_set_err(xp_ingest *ig, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(ig->err, sizeof ig->err, "%s: %s", ig->path, msg);
    ig->failed = true;
}

static int xp_db_fail(xp_ingest *ig)
{
    if ((sqlite3_errcode(ig->db) & 0xff) == SQLITE_FULL)
        ig->full = true;
    xp_set_err(ig, "%s", sqlite3_errmsg(ig->db));
    return -1;
}

static void xp_copy_err(const xp_ingest *ig, char *err, size_t errlen)
{
    if (err != NULL && errlen > 0)
        snprintf(err, errlen, "%s", ig->err);
}

/* Steps a statement that returns no row, then resets it.  Returns 0 or -1
 * with ig->err set. */
static int xp_run(xp_ingest *ig, int which)
{
    sqlite3_stmt *s = ig->st[which];
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return xp_db_fail(ig);
    return 0;
}

/* Runs a statement whose row is keyed by a record id (INSERT OR IGNORE): a
 * row already there means the journal held the record twice. */
static int xp_run_keyed(xp_ingest *ig, int which)
{
    if (xp_run(ig, which) != 0)
        return -1;
    if (sqlite3_changes(ig->db) == 0)
        ig->lost_duplicate++;
    return 0;
}

static void xp_clear_caches(xp_ingest *ig)
{
    memset(ig->sites, 0, sizeof ig->sites);
    memset(ig->stacks, 0, sizeof ig->stacks);
}

/* The journal's unsigned 64-bit values are stored as SQLite's signed
 * integers (two's complement: values from 2^63 read back negative). */
static inline sqlite3_int64 xp_i64(uint64_t v)
{
    return (sqlite3_int64)v;
}

/* ---- transactions --------------------------------------------------------- */

static long long xp_data_version(xp_ingest *ig)
{
    sqlite3_stmt *s = ig->st[S_DATA_VERSION];
    long long v = -1;
    if (sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_int64(s, 0);
    sqlite3_reset(s);
    return v;
}

static int xp_begin(xp_ingest *ig)
{
    if (xp_run(ig, S_BEGIN) != 0)
        return -1;
    ig->in_txn = true;
    ig->txn_records = 0;
    /* Another connection committed since this pass loaded its progress (a
     * second ingester of the same journal): storing on would store its
     * records twice. */
    if (xp_data_version(ig) != ig->data_version) {
        xp_run(ig, S_ROLLBACK);
        ig->in_txn = false;
        xp_set_err(ig, "the database was changed by another process during ingest");
        return -1;
    }
    return 0;
}

/* Undoes the open transaction.  The rows it held are gone, and with them
 * what the caches and the in-memory progress said: both are rebuilt from
 * the database by the next pass. */
static void xp_rollback(xp_ingest *ig)
{
    if (ig->in_txn && !ig->abandoned) {
        sqlite3_stmt *s = ig->st[S_ROLLBACK];
        sqlite3_step(s);
        sqlite3_reset(s);
        /* A failed COMMIT may have rolled back by itself already. */
        if (!sqlite3_get_autocommit(ig->db))
            sqlite3_exec(ig->db, "ROLLBACK", NULL, NULL, NULL);
    }
    ig->in_txn = false;
    ig->txn_records = 0;
    ig->copies.n = ig->syncs.n = 0;
    ig->lost_corrupt = ig->lost_malformed = ig->lost_duplicate = 0;
    ig->times_fixed = 0;
    ig->times_fixed = 0;
    for (size_t i = 0; i < ig->ndirty; i++)
        ig->dirty[ig->dirty_list[i]] = 0;
    ig->ndirty = 0;
    xp_clear_caches(ig);
}

static void xp_bind_cell(sqlite3_stmt *s, int i, const row_buf *b, unsigned r, unsigned c)
{
    if (b->null[r] & (1u << c))
        sqlite3_bind_null(s, i);
    else
        sqlite3_bind_int64(s, i, b->v[r * b->cols + c]);
}

/* Inserts the rows waiting in b.  Returns 0 or -1. */
static int xp_flush(xp_ingest *ig, row_buf *b)
{
    if (b->n == XP_ROW_BATCH) {
        sqlite3_stmt *s = ig->st[b->many];
        for (unsigned r = 0; r < XP_ROW_BATCH; r++)
            for (unsigned c = 0; c < b->cols; c++)
                xp_bind_cell(s, (int)(r * b->cols + c) + 1, b, r, c);
        b->n = 0;
        return xp_run(ig, b->many);
    }
    sqlite3_stmt *s = ig->st[b->one];
    for (unsigned r = 0; r < b->n; r++) {
        for (unsigned c = 0; c < b->cols; c++)
            xp_bind_cell(s, (int)c + 1, b, r, c);
        if (xp_run(ig, b->one) != 0) {
            b->n = 0;
            return -1;
        }
    }
    b->n = 0;
    return 0;
}

/* Where the next row of b goes (flushing a full buffer first), or NULL.
 * Its columns are not NULL unless *nulls (OUT, may be NULL) gets bits set. */
static sqlite3_int64 *xp_row(xp_ingest *ig, row_buf *b, uint16_t **nulls)
{
    if (b->n == XP_ROW_BATCH && xp_flush(ig, b) != 0)
        return NULL;
    b->null[b->n] = 0;
    if (nulls != NULL)
        *nulls = &b->null[b->n];
    return &b->v[b->n++ * b->cols];
}

static int xp_lost_in_txn(xp_ingest *ig, unsigned long long n, const char *reason)
{
    if (n == 0)
        return 0;
    if (n > INT64_MAX)
        n = INT64_MAX;
    sqlite3_bind_int64(ig->st[S_LOST_N], 1, (sqlite3_int64)n);
    if (xp_run(ig, S_LOST_N) != 0)
        return -1;
    if (reason == NULL || reason[0] == '\0')
        return 0;
    sqlite3_bind_text(ig->st[S_LOST_REASON], 1, reason, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(ig->st[S_LOST_REASON], 2, XP_MAX_REASON);
    return xp_run(ig, S_LOST_REASON);
}

/* Counts the open transaction's damaged records (xp_validate.h, and what
 * the reader hands over as XP_REC_DAMAGED) into records_lost.  They are one
 * phrase of records_lost_reason however many transactions and passes found
 * them, "N corrupt journal record(s)" with N the run's total (meta
 * records_corrupt), rewritten in place.  Returns 0 or -1. */
static int xp_lost_corrupt(xp_ingest *ig)
{
    sqlite3_stmt *g = ig->st[S_CORRUPT_GET];
    int rc = sqlite3_step(g);
    uint64_t before = rc == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(g, 0) : 0;
    sqlite3_reset(g);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return xp_db_fail(ig);
    char was[64], now[64];
    snprintf(was, sizeof was, "%" PRIu64 " corrupt journal record(s)", before);
    snprintf(now, sizeof now, "%" PRIu64 " corrupt journal record(s)", before + ig->lost_corrupt);
    sqlite3_bind_int64(ig->st[S_CORRUPT_ADD], 1, xp_i64(ig->lost_corrupt));
    if (xp_run(ig, S_CORRUPT_ADD) != 0)
        return -1;
    if (before == 0)
        return xp_lost_in_txn(ig, ig->lost_corrupt, now);
    if (xp_lost_in_txn(ig, ig->lost_corrupt, NULL) != 0)
        return -1;
    sqlite3_bind_text(ig->st[S_CORRUPT_REASON], 1, was, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(ig->st[S_CORRUPT_REASON], 2, now, -1, SQLITE_TRANSIENT);
    return xp_run(ig, S_CORRUPT_REASON);
}

/* Commits the open transaction with what makes it exactly-once: the
 * progress of every chunk it read from, and the count of what it could not
 * store.  On failure everything is rolled back.  Returns 0 or -1. */
static bool xp_fds_intact(xp_ingest *ig);

static int xp_commit(xp_ingest *ig)
{
    char reason[128];
    if (!ig->in_txn)
        return 0;
    if (!xp_fds_intact(ig))
        goto fail;
    if (xp_flush(ig, &ig->copies) != 0 || xp_flush(ig, &ig->syncs) != 0)
        goto fail;
    if (ig->lost_corrupt && xp_lost_corrupt(ig) != 0)
        goto fail;
    if (ig->lost_malformed) {
        snprintf(reason, sizeof reason, "%" PRIu64 " malformed record(s) skipped",
                 ig->lost_malformed);
        if (xp_lost_in_txn(ig, ig->lost_malformed, reason) != 0)
            goto fail;
    }
    if (ig->times_fixed) {
        sqlite3_bind_int64(ig->st[S_TIMES_FIXED], 1, (sqlite3_int64)ig->times_fixed);
        if (xp_run(ig, S_TIMES_FIXED) != 0)
            goto fail;
    }
    if (ig->lost_duplicate) {
        snprintf(reason, sizeof reason,
                 "%" PRIu64 " record(s) skipped: allocation, free or NVTX range already stored",
                 ig->lost_duplicate);
        if (xp_lost_in_txn(ig, ig->lost_duplicate, reason) != 0)
            goto fail;
    }
    sqlite3_stmt *p = ig->st[S_PROGRESS_SET];
    for (size_t i = 0; i < ig->ndirty; i++) {
        uint64_t c = ig->dirty_list[i];
        sqlite3_bind_int64(p, 1, (sqlite3_int64)c);
        sqlite3_bind_int64(p, 2, ig->off[c]);
        if (xp_run(ig, S_PROGRESS_SET) != 0)
            goto fail;
    }
    if (xp_run(ig, S_COMMIT) != 0)
        goto fail;
    ig->in_txn = false;
    ig->txn_records = 0;
    ig->lost_corrupt = ig->lost_malformed = ig->lost_duplicate = 0;
    ig->times_fixed = 0;
    for (size_t i = 0; i < ig->ndirty; i++)
        ig->dirty[ig->dirty_list[i]] = 0;
    ig->ndirty = 0;
    return 0;
fail:
    xp_rollback(ig);
    return -1;
}

/* ---- progress ------------------------------------------------------------- */

static int xp_grow(xp_ingest *ig, uint64_t chunk)
{
    if (chunk < ig->nchunks)
        return 0;
    if (chunk >= XP_MAX_CHUNKS) {
        xp_set_err(ig, "journal chunk %" PRIu64 " is out of range", chunk);
        return -1;
    }
    size_t n = ig->nchunks ? ig->nchunks : 64;
    while (n <= chunk)
        n *= 2;
    uint32_t *off = realloc(ig->off, n * sizeof *off);
    if (off == NULL)
        goto oom;
    ig->off = off;
    uint8_t *dirty = realloc(ig->dirty, n);
    if (dirty == NULL)
        goto oom;
    ig->dirty = dirty;
    memset(ig->off + ig->nchunks, 0, (n - ig->nchunks) * sizeof *off);
    memset(ig->dirty + ig->nchunks, 0, n - ig->nchunks);
    ig->nchunks = n;
    return 0;
oom:
    xp_set_err(ig, "out of memory");
    return -1;
}

static int xp_mark(xp_ingest *ig, uint64_t chunk, uint32_t end)
{
    if (chunk >= ig->nchunks && xp_grow(ig, chunk) != 0)
        return -1;
    ig->off[chunk] = end;
    if (!ig->dirty[chunk]) {
        if (ig->ndirty == ig->dirty_cap) {
            size_t cap = ig->dirty_cap ? ig->dirty_cap * 2 : 64;
            uint64_t *l = realloc(ig->dirty_list, cap * sizeof *l);
            if (l == NULL) {
                xp_set_err(ig, "out of memory");
                return -1;
            }
            ig->dirty_list = l;
            ig->dirty_cap = cap;
        }
        ig->dirty[chunk] = 1;
        ig->dirty_list[ig->ndirty++] = chunk;
    }
    return 0;
}

/* Puts the reader where the database says each chunk stands.  A chunk the
 * database has no progress for, but that this handle read from (in a
 * transaction that rolled back), goes back to its first record. */
static int xp_load_progress(xp_ingest *ig, xp_journal_reader *r)
{
    uint8_t *seen = NULL;
    size_t nseen = ig->nchunks;
    if (nseen) {
        seen = calloc(nseen, 1);
        if (seen == NULL) {
            xp_set_err(ig, "out of memory");
            return -1;
        }
        for (size_t c = 0; c < nseen; c++)
            seen[c] = ig->off[c] != 0;
        memset(ig->off, 0, nseen * sizeof *ig->off);
    }
    sqlite3_stmt *s = ig->st[S_PROGRESS_GET];
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        sqlite3_int64 c = sqlite3_column_int64(s, 0);
        sqlite3_int64 o = sqlite3_column_int64(s, 1);
        if (c < 0 || o < (sqlite3_int64)sizeof(xp_chunk_header) || o > XP_CHUNK_SIZE) {
            sqlite3_reset(s);
            free(seen);
            xp_set_err(ig, "journal_progress row (%lld, %lld) is impossible", (long long)c,
                       (long long)o);
            return -1;
        }
        if (xp_grow(ig, (uint64_t)c) != 0) {
            sqlite3_reset(s);
            free(seen);
            return -1;
        }
        ig->off[c] = (uint32_t)o;
        xp_journal_seek(r, (uint64_t)c, (uint32_t)o);
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        free(seen);
        return xp_db_fail(ig);
    }
    for (size_t c = 0; c < nseen; c++)
        if (seen[c] && ig->off[c] == 0)
            xp_journal_seek(r, c, (uint32_t)sizeof(xp_chunk_header));
    free(seen);
    return 0;
}

/* ---- interning ------------------------------------------------------------ */

static inline uint64_t xp_mix(uint64_t h, uint64_t v)
{
    h = (h ^ v) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 31);
}

/* stacks.id for a journal stack hash, adding a placeholder row (depth and
 * frames NULL) when its STACK record has not been stored yet: another
 * thread's chunk may hold it further on.  Returns the id (0 for hash 0), or
 * -1 with ig->err set. */
static sqlite3_int64 xp_stack_ref(xp_ingest *ig, uint64_t hash)
{
    if (hash == 0)
        return 0;
    stack_slot *slot = &ig->stacks[xp_mix(0, hash) & (STACK_CACHE - 1)];
    if (slot->hash == hash)
        return slot->id;
    sqlite3_stmt *f = ig->st[S_STACK_FIND];
    sqlite3_bind_int64(f, 1, xp_i64(hash));
    int rc = sqlite3_step(f);
    sqlite3_int64 id = rc == SQLITE_ROW ? sqlite3_column_int64(f, 0) : 0;
    sqlite3_reset(f);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return xp_db_fail(ig);
    if (rc == SQLITE_DONE) {
        sqlite3_bind_int64(ig->st[S_STACK_ADD], 1, xp_i64(hash));
        if (xp_run(ig, S_STACK_ADD) != 0)
            return -1;
        id = sqlite3_last_insert_rowid(ig->db);
    }
    slot->hash = hash;
    slot->id = id;
    return id;
}

/* Binds a stacks.id, 0 meaning none. */
static void xp_bind_stack(sqlite3_stmt *s, int i, sqlite3_int64 stack)
{
    if (stack > 0)
        sqlite3_bind_int64(s, i, stack);
    else
        sqlite3_bind_null(s, i);
}

static void xp_bind_site(sqlite3_stmt *s, const site_key *k)
{
    sqlite3_bind_int(s, 1, k->api);
    sqlite3_bind_int(s, 2, k->status);
    sqlite3_bind_int(s, 3, k->device);
    sqlite3_bind_int64(s, 4, k->tid);
    sqlite3_bind_int64(s, 5, k->stream);
    xp_bind_stack(s, 6, k->stack);
    sqlite3_bind_int(s, 7, k->direction);
    sqlite3_bind_int(s, 8, k->host_mem);
    sqlite3_bind_int(s, 9, k->blocking);
    sqlite3_bind_int(s, 10, k->kind);
}

/* call_sites.id for k (which must be zero-filled before its fields are
 * set: it is compared with memcmp), added if new.  Returns the id or -1. */
static sqlite3_int64 xp_site_ref(xp_ingest *ig, const site_key *k)
{
    uint64_t h = xp_mix(xp_mix(xp_mix(0, (uint64_t)k->stream), (uint64_t)k->stack),
                        ((uint64_t)k->tid << 32) ^ ((uint64_t)(uint32_t)k->api << 16) ^
                            (uint64_t)(uint32_t)k->status);
    h = xp_mix(h, ((uint64_t)(uint32_t)k->device << 32) | ((uint64_t)k->direction << 24) |
                      ((uint64_t)k->host_mem << 16) | ((uint64_t)k->blocking << 8) | k->kind);
    site_slot *slot = &ig->sites[h & (SITE_CACHE - 1)];
    if (slot->id != 0 && memcmp(&slot->key, k, sizeof *k) == 0)
        return slot->id;
    sqlite3_stmt *f = ig->st[S_SITE_FIND];
    xp_bind_site(f, k);
    int rc = sqlite3_step(f);
    sqlite3_int64 id = rc == SQLITE_ROW ? sqlite3_column_int64(f, 0) : 0;
    sqlite3_reset(f);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return xp_db_fail(ig);
    if (rc == SQLITE_DONE) {
        xp_bind_site(ig->st[S_SITE_ADD], k);
        if (xp_run(ig, S_SITE_ADD) != 0)
            return -1;
        id = sqlite3_last_insert_rowid(ig->db);
    }
    slot->key = *k;
    slot->id = id;
    return id;
}

/* ---- NVTX (issue 4) ------------------------------------------------------- */

/* Binds a journal id or hash, 0 meaning none (NULL). */
static void xp_bind_nonzero(sqlite3_stmt *s, int i, uint64_t v)
{
    if (v != 0)
        sqlite3_bind_int64(s, i, xp_i64(v));
    else
        sqlite3_bind_null(s, i);
}

/* Column c of a buffered row: an nvtx_range id, NULL for 0 (no range open,
 * or a record from before journal version 3). */
static void xp_nvtx_cell(sqlite3_int64 *v, uint16_t *nulls, unsigned c, uint64_t range)
{
    v[c] = xp_i64(range);
    if (range == 0)
        *nulls |= (uint16_t)(1u << c);
}

/* A push or start opens a range row; a pop or end stores the range's end,
 * keyed by the range's id (whichever is stored first, they meet in the
 * view).  A range or end stored twice is refused (a damaged journal). */
static int xp_store_nvtx(xp_ingest *ig, const xp_rec_nvtx *r)
{
    if (r->range_id == 0 || r->range_id > INT64_MAX || r->op < XP_NVTX_PUSH ||
        r->op > XP_NVTX_END) {
        ig->lost_malformed++;
        return 0;
    }
    if (r->op == XP_NVTX_POP || r->op == XP_NVTX_END) {
        sqlite3_stmt *s = ig->st[S_NVTX_END];
        sqlite3_bind_int64(s, 1, (sqlite3_int64)r->range_id);
        sqlite3_bind_int64(s, 2, r->h.tid);
        sqlite3_bind_int64(s, 3, xp_i64(r->time_ns));
        /* Not counted as a duplicate: a program may end a range twice. */
        return xp_run(ig, S_NVTX_END);
    }
    bool push = r->op == XP_NVTX_PUSH;
    sqlite3_stmt *s = ig->st[S_NVTX_RANGE];
    sqlite3_bind_int64(s, 1, (sqlite3_int64)r->range_id);
    sqlite3_bind_int(s, 2, r->op);
    xp_bind_nonzero(s, 3, r->name);
    xp_bind_nonzero(s, 4, r->domain);
    sqlite3_bind_int64(s, 5, r->h.tid);
    sqlite3_bind_int64(s, 6, xp_i64(r->time_ns));
    if (push)
        sqlite3_bind_int(s, 7, r->depth);
    else
        sqlite3_bind_null(s, 7);
    xp_bind_nonzero(s, 8, push ? r->parent_id : 0);
    return xp_run_keyed(ig, S_NVTX_RANGE);
}

static int xp_store_name(xp_ingest *ig, const xp_rec_name *r)
{
    if (r->hash == 0 || r->len > XP_NVTX_NAME_MAX || sizeof *r + (size_t)r->len + 1 > r->h.size) {
        ig->lost_malformed++;
        return 0;
    }
    sqlite3_stmt *s = ig->st[S_NVTX_NAME];
    sqlite3_bind_int64(s, 1, xp_i64(r->hash));
    sqlite3_bind_text(s, 2, (const char *)(r + 1), (int)r->len, SQLITE_TRANSIENT);
    return xp_run(ig, S_NVTX_NAME);   /* a name written again (a full seen-set) is no loss */
}

/* ---- records -------------------------------------------------------------- */

static const char *xp_dir_name(unsigned d)
{
    static const char *const names[] = {"copy", "H2D", "D2H", "D2D", "H2H"};
    return d < sizeof names / sizeof names[0] ? names[d] : "copy";
}

static int xp_error_row(xp_ingest *ig, const xp_call *c, sqlite3_int64 stack,
                        sqlite3_int64 copy_id, const char *detail)
{
    sqlite3_stmt *s = ig->st[S_ERROR];
    sqlite3_bind_int(s, 1, c->h.type);
    sqlite3_bind_int(s, 2, c->h.api);
    sqlite3_bind_int(s, 3, c->status);
    sqlite3_bind_int(s, 4, c->device);
    sqlite3_bind_int64(s, 5, c->h.tid);
    sqlite3_bind_int64(s, 6, xp_i64(c->start_ns));
    sqlite3_bind_int64(s, 7, xp_i64(c->end_ns));
    xp_bind_stack(s, 8, stack);
    if (copy_id > 0)
        sqlite3_bind_int64(s, 9, copy_id);
    else
        sqlite3_bind_null(s, 9);
    sqlite3_bind_text(s, 10, detail, -1, SQLITE_TRANSIENT);
    return xp_run(ig, S_ERROR);
}

/* call_sites.id of call c: its api, status, device, thread, stream and stack,
 * with the parts only some records have (syncs and memsets pass 0 for what
 * they lack, and kind 255: none).  Returns the id or -1. */
static sqlite3_int64 xp_call_site(xp_ingest *ig, const xp_call *c, uint64_t stream,
                                  sqlite3_int64 stack, uint8_t direction, uint8_t host_mem,
                                  uint8_t blocking, uint8_t kind)
{
    site_key k;
    memset(&k, 0, sizeof k); /* padding too: keys are compared with memcmp */
    k.api = c->h.api;
    k.status = c->status;
    k.device = c->device;
    k.tid = c->h.tid;
    k.stream = xp_i64(stream);
    k.stack = stack;
    k.direction = direction;
    k.host_mem = host_mem;
    k.blocking = blocking;
    k.kind = kind;
    return xp_site_ref(ig, &k);
}

static int xp_store_copy(xp_ingest *ig, const xp_rec_copy *r)
{
    sqlite3_int64 stack = xp_stack_ref(ig, r->c.stack_id);
    if (stack < 0)
        return -1;
    sqlite3_int64 site =
        xp_call_site(ig, &r->c, r->stream, stack, r->direction, r->host_mem, r->blocking, r->kind);
    if (site < 0)
        return -1;
    /* A failed copy's error row names it: its id is needed now. */
    if (r->c.status != 0 && xp_flush(ig, &ig->copies) != 0)
        return -1;
    uint16_t *nulls;
    sqlite3_int64 *v = xp_row(ig, &ig->copies, &nulls);
    if (v == NULL)
        return -1;
    v[0] = site;
    v[1] = xp_i64(r->bytes);
    v[2] = xp_i64(r->src);
    v[3] = xp_i64(r->dst);
    v[4] = xp_i64(r->c.start_ns);
    v[5] = xp_i64(r->c.end_ns - r->c.start_ns);
    /* A version 1 record (88 bytes) ends before kernel_seq and fingerprint;
     * its fingerprint_kind byte was reserved, zero.  A version 2 one (104)
     * before nvtx_range. */
    bool v2 = r->c.h.size >= XP_REC_COPY_V2_SIZE;
    unsigned fp_kind = r->fingerprint_kind;
    v[6] = v2 ? xp_i64(r->kernel_seq) : 0;
    v[7] = v2 ? xp_i64(r->fingerprint) : 0;
    v[8] = fp_kind;
    if (!v2)
        *nulls |= 1u << 6;
    if (!v2 || (fp_kind != XP_FP_FULL && fp_kind != XP_FP_SAMPLED))
        *nulls |= 1u << 7 | 1u << 8;
    xp_nvtx_cell(v, nulls, 9, r->c.h.size >= XP_REC_COPY_V3_SIZE ? r->nvtx_range : 0);
    /* Version 4: the full hash confirming a sampled upload, NULL when not taken. */
    v[10] = r->c.h.size >= sizeof *r ? xp_i64(r->full_fingerprint) : 0;
    if (v[10] == 0)
        *nulls |= 1u << 10;
    if (r->c.status == 0)
        return 0;
    if (xp_flush(ig, &ig->copies) != 0)
        return -1;
    char detail[160];
    snprintf(detail, sizeof detail, "%s %" PRIu64 " bytes src 0x%" PRIx64 " dst 0x%" PRIx64,
             xp_dir_name(r->direction), r->bytes, r->src, r->dst);
    return xp_error_row(ig, &r->c, stack, sqlite3_last_insert_rowid(ig->db), detail);
}

static int xp_store_alloc(xp_ingest *ig, const xp_rec_alloc *r)
{
    sqlite3_int64 stack = xp_stack_ref(ig, r->c.stack_id);
    if (stack < 0)
        return -1;
    if (r->c.status != 0) {
        char detail[160];
        if (r->mem_total != 0)
            snprintf(detail, sizeof detail,
                     "requested %" PRIu64 " bytes; device free %" PRIu64 " of %" PRIu64,
                     r->bytes, r->mem_free, r->mem_total);
        else
            snprintf(detail, sizeof detail, "requested %" PRIu64 " bytes", r->bytes);
        return xp_error_row(ig, &r->c, stack, 0, detail);
    }
    /* A successful allocation without an id cannot be paired with its
     * free; one whose id is taken was stored already (or the journal is
     * damaged).  Either is counted, never stored twice. */
    if (r->alloc_id == 0 || r->alloc_id > INT64_MAX) {
        ig->lost_malformed++;
        return 0;
    }
    sqlite3_stmt *s = ig->st[S_ALLOC];
    sqlite3_bind_int64(s, 1, (sqlite3_int64)r->alloc_id);
    sqlite3_bind_int(s, 2, r->c.h.api);
    sqlite3_bind_int(s, 3, r->kind);
    sqlite3_bind_int(s, 4, r->c.device);
    sqlite3_bind_int64(s, 5, xp_i64(r->ptr));
    sqlite3_bind_int64(s, 6, xp_i64(r->bytes));
    sqlite3_bind_int64(s, 7, xp_i64(r->c.start_ns));
    sqlite3_bind_int64(s, 8, xp_i64(r->c.end_ns));
    sqlite3_bind_int64(s, 9, r->c.h.tid);
    xp_bind_stack(s, 10, stack);
    return xp_run_keyed(ig, S_ALLOC);
}

static int xp_store_free(xp_ingest *ig, const xp_rec_free *r)
{
    sqlite3_int64 stack = xp_stack_ref(ig, r->c.stack_id);
    if (stack < 0)
        return -1;
    if (r->c.status != 0) {
        /* A failed free frees nothing, whatever it names. */
        char detail[64];
        snprintf(detail, sizeof detail, "ptr 0x%" PRIx64, r->ptr);
        return xp_error_row(ig, &r->c, stack, 0, detail);
    }
    if (r->alloc_id == 0) {
        if (r->ptr == 0)
            return 0;   /* freeing NULL: nothing happened */
        sqlite3_stmt *s = ig->st[S_UNKNOWN_FREE];
        sqlite3_bind_int(s, 1, r->c.h.api);
        sqlite3_bind_int64(s, 2, xp_i64(r->ptr));
        sqlite3_bind_int(s, 3, r->kind);
        sqlite3_bind_int(s, 4, r->c.device);
        sqlite3_bind_int64(s, 5, r->c.h.tid);
        sqlite3_bind_int64(s, 6, xp_i64(r->c.start_ns));
        sqlite3_bind_int64(s, 7, xp_i64(r->c.end_ns));
        xp_bind_stack(s, 8, stack);
        return xp_run(ig, S_UNKNOWN_FREE);
    }
    if (r->alloc_id > INT64_MAX) {
        ig->lost_malformed++;
        return 0;
    }
    sqlite3_stmt *s = ig->st[S_FREE];
    sqlite3_bind_int64(s, 1, (sqlite3_int64)r->alloc_id);
    sqlite3_bind_int(s, 2, r->c.h.api);
    sqlite3_bind_int64(s, 3, xp_i64(r->c.start_ns));
    sqlite3_bind_int64(s, 4, xp_i64(r->c.end_ns));
    sqlite3_bind_int64(s, 5, r->c.h.tid);
    xp_bind_stack(s, 6, stack);
    return xp_run_keyed(ig, S_FREE);
}

static int xp_store_sync(xp_ingest *ig, const xp_rec_sync *r)
{
    sqlite3_int64 stack = xp_stack_ref(ig, r->c.stack_id);
    if (stack < 0)
        return -1;
    sqlite3_int64 site = xp_call_site(ig, &r->c, r->stream, stack, 0, 0, 0, 255);
    if (site < 0)
        return -1;
    uint16_t *nulls;
    sqlite3_int64 *v = xp_row(ig, &ig->syncs, &nulls);
    if (v == NULL)
        return -1;
    v[0] = site;
    v[1] = xp_i64(r->c.start_ns);
    v[2] = xp_i64(r->c.end_ns - r->c.start_ns);
    xp_nvtx_cell(v, nulls, 3, r->c.h.size >= XP_REC_SYNC_V3_SIZE ? r->nvtx_range : 0);
    /* Version 4: the copy this sync completed (NULLs when none, or an older record). */
    bool v4 = r->c.h.size >= sizeof *r && r->copy_start_ns != 0;
    unsigned fp_kind = v4 ? r->fingerprint_kind : 0;
    v[4] = v4 ? xp_i64(r->copy_start_ns) : 0;
    v[5] = xp_i64(r->fingerprint);
    v[6] = fp_kind;
    if (!v4)
        *nulls |= 1u << 4;
    if (fp_kind != XP_FP_FULL && fp_kind != XP_FP_SAMPLED)
        *nulls |= 1u << 5 | 1u << 6;
    if (r->c.status == 0)
        return 0;
    char detail[64];
    if (r->c.h.api == XP_API_cudaEventSynchronize)
        snprintf(detail, sizeof detail, "event 0x%" PRIx64, r->stream);
    else if (r->c.h.api == XP_API_cudaDeviceSynchronize)
        snprintf(detail, sizeof detail, "device %d", (int)r->c.device);
    else
        snprintf(detail, sizeof detail, "stream 0x%" PRIx64, r->stream);
    return xp_error_row(ig, &r->c, stack, 0, detail);
}

static int xp_store_memset(xp_ingest *ig, const xp_rec_memset *r)
{
    sqlite3_int64 stack = xp_stack_ref(ig, r->c.stack_id);
    if (stack < 0)
        return -1;
    sqlite3_int64 site = xp_call_site(ig, &r->c, r->stream, stack, 0, r->host_mem, r->blocking, 255);
    if (site < 0)
        return -1;
    sqlite3_stmt *s = ig->st[S_MEMSET];
    sqlite3_bind_int64(s, 1, site);
    sqlite3_bind_int64(s, 2, xp_i64(r->bytes));
    sqlite3_bind_int64(s, 3, xp_i64(r->dst));
    sqlite3_bind_int(s, 4, r->value);
    sqlite3_bind_int64(s, 5, xp_i64(r->kernel_seq));
    sqlite3_bind_int64(s, 6, xp_i64(r->c.start_ns));
    sqlite3_bind_int64(s, 7, xp_i64(r->c.end_ns - r->c.start_ns));
    xp_bind_nonzero(s, 8, r->c.h.size >= sizeof *r ? r->nvtx_range : 0);
    if (xp_run(ig, S_MEMSET) != 0)
        return -1;
    if (r->c.status == 0)
        return 0;
    char detail[160];
    snprintf(detail, sizeof detail, "memset %" PRIu64 " bytes dst 0x%" PRIx64 " value %d",
             r->bytes, r->dst, (int)r->value);
    return xp_error_row(ig, &r->c, stack, 0, detail);
}

static int xp_store_call(xp_ingest *ig, const xp_rec_call *r)
{
    if (r->c.status == 0)
        return 0;   /* only failures are recorded; a success says nothing */
    sqlite3_int64 stack = xp_stack_ref(ig, r->c.stack_id);
    if (stack < 0)
        return -1;
    char detail[64];
    snprintf(detail, sizeof detail, "arg 0x%" PRIx64, r->arg0);
    return xp_error_row(ig, &r->c, stack, 0, detail);
}

static int xp_store_stack(xp_ingest *ig, const xp_rec_stack *r)
{
    if (r->stack_id == 0 || r->depth > XP_MAX_FRAMES ||
        sizeof *r + (size_t)r->depth * 8u > r->h.size || !xp_ingest_py_stack_ok(r)) {
        ig->lost_malformed++;
        return 0;
    }
    /* frames: little-endian uint64 whatever the host, so a database reads
     * the same on any machine. */
    uint8_t buf[XP_MAX_FRAMES * 8];
    const uint8_t *src = (const uint8_t *)(r + 1);
    for (uint32_t i = 0; i < r->depth; i++) {
        uint64_t v;
        memcpy(&v, src + 8u * i, 8);
        for (int b = 0; b < 8; b++)
            buf[8u * i + (unsigned)b] = (uint8_t)(v >> (8 * b));
    }
    sqlite3_stmt *s = ig->st[S_STACK_SET];
    sqlite3_bind_int64(s, 1, xp_i64(r->stack_id));
    sqlite3_bind_int(s, 2, (int)r->depth);
    sqlite3_bind_blob(s, 3, buf, (int)(r->depth * 8u), SQLITE_TRANSIENT);
    uint8_t py[XP_PY_MAX_FRAMES * XP_PYFRAME_BLOB];
    if (r->py_depth)
        sqlite3_bind_blob(s, 4, py, (int)xp_ingest_py_frames(r, py), SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(s, 4);
    return xp_run(ig, S_STACK_SET);
}

static int xp_store_pycode(xp_ingest *ig, const xp_rec_pycode *r)
{
    if (!xp_ingest_py_bind_code(ig->st[S_PYCODE], r)) {
        ig->lost_malformed++;
        return 0;
    }
    return xp_run(ig, S_PYCODE);   /* written again (a full seen-set): no loss */
}

static int xp_store_module(xp_ingest *ig, const xp_rec_module *r)
{
    if (r->build_id_len > sizeof r->build_id || sizeof *r + r->path_len + 1u > r->h.size) {
        ig->lost_malformed++;
        return 0;
    }
    char hex[2 * sizeof r->build_id + 1];
    for (unsigned i = 0; i < r->build_id_len; i++)
        snprintf(hex + 2 * i, 3, "%02x", r->build_id[i]);
    hex[2 * r->build_id_len] = '\0';
    sqlite3_stmt *s = ig->st[S_MODULE];
    sqlite3_bind_text(s, 1, (const char *)(r + 1), r->path_len, SQLITE_TRANSIENT);
    sqlite3_bind_int64(s, 2, xp_i64(r->base));
    sqlite3_bind_int64(s, 3, xp_i64(r->size));
    sqlite3_bind_int64(s, 4, xp_i64(r->low));
    if (r->build_id_len)
        sqlite3_bind_text(s, 5, hex, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(s, 5);
    return xp_run(ig, S_MODULE);
}

static int xp_store_meta(xp_ingest *ig, const xp_rec_meta *r)
{
    size_t need = sizeof *r + (size_t)r->key_len + 1 + (size_t)r->value_len + 1;
    if (r->key_len == 0 || need > r->h.size) {
        ig->lost_malformed++;
        return 0;
    }
    const char *key = (const char *)(r + 1);
    const char *value = key + r->key_len + 1;
    /* Keys the database keeps itself: the schema's version is not the
     * profiled process's to set, and loss counts add up rather than
     * replace one another. */
    if (r->key_len == 14 && memcmp(key, "schema_version", 14) == 0)
        return 0;
    if (r->key_len == 12 && memcmp(key, "records_lost", 12) == 0) {
        char num[32];
        size_t n = r->value_len < sizeof num - 1 ? r->value_len : sizeof num - 1;
        memcpy(num, value, n);
        num[n] = '\0';
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(num, &end, 10);
        if (end == num || *end != '\0' || errno != 0) {
            ig->lost_malformed++;
            return 0;
        }
        char reason[96];
        snprintf(reason, sizeof reason, "%llu record(s) reported lost by the profiled process", v);
        return xp_lost_in_txn(ig, v, reason);
    }
    if (r->key_len == 19 && memcmp(key, "records_lost_reason", 19) == 0) {
        char reason[XP_MAX_REASON / 4];
        size_t n = r->value_len < sizeof reason - 1 ? r->value_len : sizeof reason - 1;
        memcpy(reason, value, n);
        reason[n] = '\0';
        if (reason[0] == '\0')
            return 0;
        sqlite3_bind_text(ig->st[S_LOST_REASON], 1, reason, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int(ig->st[S_LOST_REASON], 2, XP_MAX_REASON);
        return xp_run(ig, S_LOST_REASON);
    }
    sqlite3_stmt *s = ig->st[S_META];
    sqlite3_bind_text(s, 1, key, r->key_len, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 2, value, (int)r->value_len, SQLITE_TRANSIENT);
    return xp_run(ig, S_META);
}

/* Stores one record.  Returns 0 (stored, or counted as lost when it cannot
 * be: the journal is the profiled process's and may be damaged) or -1 when
 * the database failed. */
static int xp_store(xp_ingest *ig, const xp_rec_header *h)
{
    /* Damaged bytes the reader skipped (XP_REC_DAMAGED is no type the
     * validator knows), or values no writer produces: never stored. */
    if (xp_validate_record(h) != NULL) {
        ig->lost_corrupt++;
        return 0;
    }
    /* A call that ends before it starts by no more than clock noise (the
     * validator refuses more) is stored as taking no time and counted in meta
     * times_fixed: a negative duration would be nonsense in every sum and
     * report. */
    _Alignas(8) unsigned char fixed[256];
    switch ((xp_rec_type)h->type) {
    case XP_REC_COPY: case XP_REC_ALLOC: case XP_REC_FREE: case XP_REC_SYNC:
    case XP_REC_CALL: case XP_REC_MEMSET: {
        const xp_call *c = (const xp_call *)h;
        if (c->end_ns >= c->start_ns && c->start_ns <= INT64_MAX && c->end_ns <= INT64_MAX)
            break;
        if (h->size > sizeof fixed || c->start_ns > INT64_MAX) {
            ig->lost_malformed++;
            return 0;
        }
        memcpy(fixed, h, h->size);
        ((xp_call *)fixed)->end_ns = c->start_ns;
        h = (const xp_rec_header *)fixed;
        ig->times_fixed++;
        break;
    }
    default:
        break;
    }
    switch ((xp_rec_type)h->type) {
    case XP_REC_COPY: return xp_store_copy(ig, (const xp_rec_copy *)h);
    case XP_REC_ALLOC: return xp_store_alloc(ig, (const xp_rec_alloc *)h);
    case XP_REC_FREE: return xp_store_free(ig, (const xp_rec_free *)h);
    case XP_REC_SYNC: return xp_store_sync(ig, (const xp_rec_sync *)h);
    case XP_REC_CALL: return xp_store_call(ig, (const xp_rec_call *)h);
    case XP_REC_MEMSET: return xp_store_memset(ig, (const xp_rec_memset *)h);
    case XP_REC_STACK: return xp_store_stack(ig, (const xp_rec_stack *)h);
    case XP_REC_MODULE: return xp_store_module(ig, (const xp_rec_module *)h);
    case XP_REC_META: return xp_store_meta(ig, (const xp_rec_meta *)h);
    case XP_REC_NVTX: return xp_store_nvtx(ig, (const xp_rec_nvtx *)h);
    case XP_REC_NAME: return xp_store_name(ig, (const xp_rec_name *)h);
    case XP_REC_PYCODE: return xp_store_pycode(ig, (const xp_rec_pycode *)h);
    case XP_REC_DAMAGED: break;
    }
    ig->lost_corrupt++;
    return 0;
}

/* The reader's callback: one record into the open batch. */
static int xp_on_record(void *user, const xp_rec_header *h, uint64_t chunk, uint32_t offset)
{
    xp_ingest *ig = user;
    if (!ig->in_txn && xp_begin(ig) != 0)
        return 1;
    if (offset < sizeof(xp_chunk_header) || h->size > XP_CHUNK_SIZE - offset) {
        xp_set_err(ig, "journal reader delivered an impossible record (chunk %" PRIu64
                       ", offset %u, size %u)", chunk, offset, h->size);
        return 1;
    }
    if (xp_store(ig, h) != 0 || xp_mark(ig, chunk, offset + h->size) != 0)
        return 1;
    if (++ig->txn_records >= XP_INGEST_BATCH && xp_commit(ig) != 0)
        return 1;
    return 0;
}

static int xp_stop_at_first(void *user, const xp_rec_header *h, uint64_t chunk, uint32_t offset)
{
    (void)user, (void)h, (void)chunk, (void)offset;
    return 1;
}

/* ---- the journal this database is fed from ------------------------------- */

/* Checks that the database's records come from this journal (recording
 * it, and the run's identity in meta, on first sight).  *torn (OUT): the
 * torn records already counted into records_lost.  Returns 0 or -1. */
static int xp_check_journal(xp_ingest *ig, xp_journal_reader *r, uint64_t *torn)
{
    const xp_journal_header *jh = xp_journal_info(r);
    sqlite3_stmt *s = ig->st[S_JOURNAL_GET];
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        sqlite3_int64 pid = sqlite3_column_int64(s, 0);
        sqlite3_int64 wall = sqlite3_column_int64(s, 1);
        sqlite3_int64 mono = sqlite3_column_int64(s, 2);
        *torn = (uint64_t)sqlite3_column_int64(s, 3);
        sqlite3_reset(s);
        if (pid != jh->pid || wall != xp_i64(jh->start_wall_ns) ||
            mono != xp_i64(jh->start_mono_ns)) {
            xp_set_err(ig, "holds the records of another journal (pid %lld, not %d)",
                       (long long)pid, (int)jh->pid);
            return -1;
        }
        return 0;
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE)
        return xp_db_fail(ig);
    *torn = 0;
    if (xp_begin(ig) != 0)
        return -1;
    sqlite3_bind_int64(ig->st[S_JOURNAL_ADD], 1, jh->pid);
    sqlite3_bind_int64(ig->st[S_JOURNAL_ADD], 2, xp_i64(jh->start_wall_ns));
    sqlite3_bind_int64(ig->st[S_JOURNAL_ADD], 3, xp_i64(jh->start_mono_ns));
    if (xp_run(ig, S_JOURNAL_ADD) != 0)
        goto fail;
    /* The process's own META records say the same and replace these; the
     * header's copy is there for a journal that died before writing them. */
    char v[32];
    const struct {
        const char *key;
        long long value;
    } defaults[] = {
        {"pid", jh->pid},
        {"ppid", jh->ppid},
        {"start_wall_ns", (long long)jh->start_wall_ns},
        {"start_mono_ns", (long long)jh->start_mono_ns},
    };
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
        snprintf(v, sizeof v, "%lld", defaults[i].value);
        sqlite3_bind_text(ig->st[S_META_DEFAULT], 1, defaults[i].key, -1, SQLITE_STATIC);
        sqlite3_bind_text(ig->st[S_META_DEFAULT], 2, v, -1, SQLITE_TRANSIENT);
        if (xp_run(ig, S_META_DEFAULT) != 0)
            goto fail;
    }
    if (xp_commit(ig) != 0)
        return -1;
    return 0;
fail:
    xp_rollback(ig);
    return -1;
}

/* ---- the API --------------------------------------------------------------- */

/* The one-row statement `one` extended to XP_ROW_BATCH rows of `cols`
 * parameters: "INSERT ... VALUES (?1, ...), (?7, ...), ...". */
static const char *xp_many_sql(char *buf, size_t len, int one, unsigned cols)
{
    const char *values = strstr(sql_text[one], "VALUES");
    size_t n = (size_t)(values - sql_text[one]) + 7;
    memcpy(buf, sql_text[one], n);
    for (unsigned r = 0; r < XP_ROW_BATCH; r++)
        for (unsigned c = 0; c < cols; c++)
            n += (size_t)snprintf(buf + n, len - n, "%s?%u%s", c == 0 ? (r ? ", (" : "(") : ", ",
                                  r * cols + c + 1, c == cols - 1 ? ")" : "");
    assert(n < len);          /* the caller's buffer is sized for XP_ROW_COLS columns */
    return buf;
}

/*
 * Descriptors.  Programs close every descriptor >= 3 (daemons, close_range,
 * launchers) and open their own files, which then get the numbers SQLite
 * held: its next write would land in the program's file (issue 14 item 7).
 * And a program that keeps only a few descriptors spare must not find them
 * taken by us (item 18).  So no connection is held between calls: each
 * call opens the database by path, finds the connection's descriptors
 * (fstat of each number, matched against the st_dev/st_ino of the database,
 * -wal and -shm), checks them before every COMMIT and before closing, and
 * closes it before returning.  Measured: opening, preparing and closing
 * cost about 3 ms per pass that has records to store (0.3 us for one that
 * has none, which opens nothing); closing with a checkpoint cost 20 ms,
 * hence SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE below.  A pass during
 * the run is skipped (its records wait in the journal) when fewer than
 * XP_FD_RESERVE descriptors would stay free; the final pass only needs the
 * three.
 *
 * If a check fails, the program closed SQLite's descriptors in the middle
 * of a pass: the connection is abandoned, never closed (sqlite3_close would
 * close the program's descriptors, a rollback would unlock through them),
 * its memory leaked.  Its transaction never committed, so its records are
 * still in the journal and nothing is lost.  No SQLite connection to this
 * database is opened again in this process: SQLite shares per-inode state
 * (locks, the -shm descriptor) between the connections of a process, and
 * the abandoned one's would be inherited.  Every later call fails; the
 * journal stays for `xferprof recover` (which `xferprof run` runs by
 * itself).  Not covered: descriptors closed and reused by another thread
 * between a check and the write that follows it.
 */

/* Opens the connection for one call, with `reserve` descriptors left free
 * for the program beside SQLite's three.  Returns 0, 1 (skipped: too close
 * to the descriptor limit) or -1 with ig->err set. */
static int xp_attach(xp_ingest *ig, unsigned reserve)
{
    if (ig->abandoned) {
        xp_set_err(ig, "the program closed or reused the database's descriptors during an "
                       "ingest pass; the journal is kept for xferprof recover");
        return -1;
    }
    if (ig->db != NULL)
        return 0;
    if (!xp_fd_spare(XP_DB_FILES + reserve)) {
        if (reserve > 0)
            return 1;
        xp_set_err(ig, "no descriptor free below the descriptor limit (RLIMIT_NOFILE)");
        return -1;
    }
    char why[512];
    if (xp_db_open_write(ig->path, &ig->db, why, sizeof why) != 0) {
        snprintf(ig->err, sizeof ig->err, "%s", why);
        ig->failed = true;
        return -1;
    }
    /* WAL with synchronous=NORMAL: a process killed at any point (the
     * profiled program, or recover) leaves a consistent database, whose last
     * transactions a power cut could lose (never corrupt).  Losing them is
     * no worse than what such a cut does to the journal, which is not synced
     * either; and until a transaction commits its records are still in the
     * journal, where recover finds them. */
    static const char pragmas[] = "PRAGMA journal_mode = WAL;"
                                  "PRAGMA synchronous = NORMAL;"
                                  "PRAGMA cache_size = -16384;"
                                  "PRAGMA temp_store = MEMORY;";
    if (sqlite3_exec(ig->db, pragmas, NULL, NULL, NULL) != SQLITE_OK)
        goto fail;
    for (int i = 0; i < S_COUNT; i++) {
        char many[XP_ROW_BATCH * XP_ROW_COLS * 8 + 256];
        const char *text = sql_text[i];
        if (i == S_COPY_MANY || i == S_SYNC_MANY)
            text = xp_many_sql(many, sizeof many, i == S_COPY_MANY ? S_COPY : S_SYNC,
                               i == S_COPY_MANY ? ig->copies.cols : ig->syncs.cols);
        if (sqlite3_prepare_v3(ig->db, text, -1, SQLITE_PREPARE_PERSISTENT, &ig->st[i],
                               NULL) != SQLITE_OK)
            goto fail;
    }
    /* The version is per connection, and another process may have written
     * since the last call: the caches start again. */
    ig->data_version = xp_data_version(ig);
    xp_clear_caches(ig);
    /* journal_mode = WAL opened the -wal and -shm: all three are open now. */
    static const char *const suffix[XP_DB_FILES] = {"", "-wal", "-shm"};
    unsigned nid = 0;
    for (unsigned i = 0; i < XP_DB_FILES; i++) {
        char p[4096];
        struct stat st;
        if ((size_t)snprintf(p, sizeof p, "%s%s", ig->path, suffix[i]) < sizeof p &&
            lstat(p, &st) == 0)
            ig->fd_ids[nid++] = (xp_file_id){.dev = st.st_dev, .ino = st.st_ino};
    }
    ig->nfds = xp_fd_find(ig->fd_ids, nid, ig->fds, XP_DB_FILES);
    for (unsigned i = 0; i < ig->nfds; i++) {
        struct stat st;
        if (fstat(ig->fds[i], &st) == 0)
            ig->fd_ids[i] = (xp_file_id){.dev = st.st_dev, .ino = st.st_ino};
    }
    return 0;
fail:
    xp_set_err(ig, "%s", sqlite3_errmsg(ig->db));
    for (int i = 0; i < S_COUNT; i++) {
        sqlite3_finalize(ig->st[i]);
        ig->st[i] = NULL;
    }
    sqlite3_close(ig->db);
    ig->db = NULL;
    return -1;
}

/* Whether the connection's descriptors still name its files; if not, the
 * connection is abandoned (see "Descriptors" above). */
static bool xp_fds_intact(xp_ingest *ig)
{
    if (ig->db == NULL)
        return !ig->abandoned;
    for (unsigned i = 0; i < ig->nfds; i++)
        if (!xp_fd_is(ig->fds[i], &ig->fd_ids[i])) {
            ig->abandoned = true;
            ig->db = NULL;          /* leaked on purpose, with its statements */
            memset(ig->st, 0, sizeof ig->st);
            xp_set_err(ig, "the program closed or reused the database's descriptors (fd %d) "
                           "during an ingest pass; the journal is kept for xferprof recover",
                       ig->fds[i]);
            return false;
        }
    return true;
}

/* Closes the connection, unless its descriptors are no longer its own.
 * `tidy`: back to a single self-contained file (the WAL checkpointed and
 * removed), as the database is left at the end. */
static void xp_detach(xp_ingest *ig, bool tidy)
{
    if (ig->db == NULL || !xp_fds_intact(ig))
        return;
    if (ig->in_txn)
        xp_rollback(ig);
    for (int i = 0; i < S_COUNT; i++) {
        sqlite3_finalize(ig->st[i]);
        ig->st[i] = NULL;
    }
    if (tidy) {
        /* If a reader holds it open this fails harmlessly and the WAL stays.
         * The profiled program is exiting: don't hold it. */
        sqlite3_busy_timeout(ig->db, 200);
        sqlite3_exec(ig->db, "PRAGMA journal_mode = DELETE", NULL, NULL, NULL);
    } else {
        /* Between calls the WAL stays as it is: closing the last connection
         * would otherwise checkpoint it (and sync) on every pass.  The next
         * attach reads it back; SQLite's own auto-checkpoint at commit keeps
         * it bounded.  A setting of this connection only. */
        sqlite3_db_config(ig->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
    }
    sqlite3_close(ig->db);
    ig->db = NULL;
    ig->nfds = 0;
}

int xp_ingest_open(const char *db_path, xp_ingest **out, char *err, size_t errlen)
{
    *out = NULL;
    xp_ingest *ig = calloc(1, sizeof *ig);
    if (ig == NULL || (ig->path = strdup(db_path)) == NULL) {
        free(ig);
        snprintf(err, errlen, "%s: out of memory", db_path);
        return -1;
    }
    ig->copies = (row_buf){.one = S_COPY, .many = S_COPY_MANY, .cols = 11};
    ig->syncs = (row_buf){.one = S_SYNC, .many = S_SYNC_MANY, .cols = 7};
    /* Created and checked now, so that a bad path shows at start-up. */
    if (xp_attach(ig, 0) != 0) {
        xp_copy_err(ig, err, errlen);
        free(ig->path);
        free(ig);
        return -1;
    }
    xp_detach(ig, false);
    *out = ig;
    return 0;
}

int xp_ingest_pass(xp_ingest *ig, xp_journal_reader *r, bool final, char *err, size_t errlen)
{
    ig->failed = false;
    ig->full = false;
    ig->err[0] = '\0';
    /* During the run, a pass with nothing new to store opens nothing. */
    if (!final && xp_journal_read(r, xp_stop_at_first, NULL, false, NULL) == 0)
        return 0;
    int a = xp_attach(ig, final ? 0 : XP_FD_RESERVE);
    if (a != 0) {
        if (a > 0)
            return 0;   /* near the descriptor limit: the records wait */
        xp_copy_err(ig, err, errlen);
        return -1;
    }
    uint64_t torn_counted = 0, torn_before = 0;
    if (xp_check_journal(ig, r, &torn_counted) != 0 || xp_load_progress(ig, r) != 0)
        goto fail;
    xp_read_stats stats;
    memset(&stats, 0, sizeof stats);
    if (final) {
        /* The reader's counts are totals over its life, and a seek makes it
         * look at (and count) a torn record again: a read that stops at the
         * first record, consuming nothing, gives the total before this pass.
         * Not final, so it counts nothing itself. */
        xp_journal_read(r, xp_stop_at_first, NULL, false, &stats);
        torn_before = stats.torn;
    }
    int rc = xp_journal_read(r, xp_on_record, ig, final, &stats);
    if (rc != 0) {
        if (!ig->failed)
            xp_set_err(ig, "cannot read the journal (out of memory, or the file changed)");
        goto fail;
    }
    /* A record the writer did not finish stays in the journal, and every
     * final read from before it finds it again (progress cannot pass it):
     * what this pass found is the journal's number, of which the database
     * remembers how many it has counted. */
    uint64_t torn_found = stats.torn - torn_before;
    if (final && torn_found > torn_counted) {
        char reason[96];
        uint64_t n = torn_found - torn_counted;
        snprintf(reason, sizeof reason, "%" PRIu64 " record(s) cut off mid-write in the journal",
                 n);
        if (!ig->in_txn && xp_begin(ig) != 0)
            goto fail;
        sqlite3_bind_int64(ig->st[S_JOURNAL_TORN], 1, xp_i64(torn_found));
        if (xp_lost_in_txn(ig, n, reason) != 0 || xp_run(ig, S_JOURNAL_TORN) != 0)
            goto fail;
    }
    if (xp_commit(ig) != 0)
        goto fail;
    xp_detach(ig, false);
    return 0;
fail:
    xp_rollback(ig);
    xp_detach(ig, false);
    xp_copy_err(ig, err, errlen);
    return -1;
}

bool xp_ingest_disk_full(const xp_ingest *ig)
{
    return ig->full;
}

/* Counts the calls among the records it is given. */
static int xp_count_calls(void *user, const xp_rec_header *h, uint64_t chunk, uint32_t offset)
{
    (void)chunk, (void)offset;
    switch (h->type) {
    case XP_REC_COPY: case XP_REC_ALLOC: case XP_REC_FREE: case XP_REC_SYNC:
    case XP_REC_CALL: case XP_REC_MEMSET: case XP_REC_NVTX:
        ++*(uint64_t *)user;
        break;
    default:
        break;
    }
    return 0;
}

int xp_ingest_count_pending(xp_ingest *ig, xp_journal_reader *r, uint64_t *calls, char *err,
                            size_t errlen)
{
    *calls = 0;
    ig->failed = false;
    if (xp_attach(ig, 0) != 0) {
        xp_copy_err(ig, err, errlen);
        return -1;
    }
    int rc = xp_load_progress(ig, r) == 0 &&
                     xp_journal_read(r, xp_count_calls, calls, true, NULL) == 0
                 ? 0
                 : -1;
    xp_detach(ig, false);
    if (rc != 0) {
        if (!ig->failed)
            xp_set_err(ig, "cannot read the journal");
        xp_copy_err(ig, err, errlen);
    }
    return rc;
}

int xp_ingest_set_meta(xp_ingest *ig, const char *key, const char *value)
{
    if (xp_attach(ig, 0) != 0)
        return -1;
    sqlite3_stmt *s = ig->st[S_META];
    sqlite3_bind_text(s, 1, key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 2, value, -1, SQLITE_TRANSIENT);
    int rc = xp_fds_intact(ig) ? xp_run(ig, S_META) : -1;
    xp_detach(ig, false);
    return rc;
}

int xp_ingest_add_lost(xp_ingest *ig, unsigned long long n, const char *reason)
{
    if (n == 0)
        return 0;
    if (xp_attach(ig, 0) != 0)
        return -1;
    int rc = -1;
    if (xp_run(ig, S_BEGIN) == 0) {
        ig->in_txn = true;
        if (xp_lost_in_txn(ig, n, reason) == 0 && xp_fds_intact(ig) && xp_run(ig, S_COMMIT) == 0)
            rc = 0;
        if (rc != 0)
            xp_rollback(ig);
        ig->in_txn = false;
    }
    xp_detach(ig, false);
    return rc;
}

void xp_ingest_close(xp_ingest *ig)
{
    if (ig == NULL)
        return;
    /* Back to a single self-contained file that can be copied or opened
     * read-only anywhere. */
    if (xp_attach(ig, 0) == 0)
        xp_detach(ig, true);
    free(ig->off);
    free(ig->dirty);
    free(ig->dirty_list);
    free(ig->path);
    free(ig);
}

int xp_recover(const char *db_path, bool *did, char *err, size_t errlen)
{
    struct stat sb;
    *did = false;
    size_t n = strlen(db_path);
    char *jpath = malloc(n + sizeof XP_JOURNAL_SUFFIX);
    if (jpath == NULL) {
        snprintf(err, errlen, "%s: out of memory", db_path);
        return -1;
    }
    memcpy(jpath, db_path, n);
    memcpy(jpath + n, XP_JOURNAL_SUFFIX, sizeof XP_JOURNAL_SUFFIX);
    int rc = -1;
    xp_journal_reader *r = NULL;
    xp_ingest *ig = NULL;
    if (stat(jpath, &sb) != 0) {
        if (errno != ENOENT)
            snprintf(err, errlen, "%s: %s", jpath, strerror(errno));
        else if (stat(db_path, &sb) != 0)
            snprintf(err, errlen, "%s: no such database", db_path);
        else
            rc = 0;   /* nothing to recover */
        goto out;
    }
    /* The dead writer's reserve (PATH.xpr) is room this recovery may need:
     * given back first (only a regular file; it is ours by its name). */
    char rpath[PATH_MAX + sizeof XP_RESERVE_SUFFIX];
    struct stat rs;
    if ((size_t)snprintf(rpath, sizeof rpath, "%s%s", db_path, XP_RESERVE_SUFFIX) < sizeof rpath &&
        lstat(rpath, &rs) == 0 && S_ISREG(rs.st_mode))
        unlink(rpath);
    char why[256] = "";
    if (xp_journal_open(jpath, &r, why, sizeof why) != 0) {
        /* Nothing is removed: the journal may be all that is left. */
        snprintf(err, errlen, "%s: %s", jpath, why[0] ? why : "cannot read the journal");
        goto out;
    }
    if (xp_ingest_open(db_path, &ig, err, errlen) != 0)
        goto out;
    if (xp_ingest_pass(ig, r, true, err, errlen) != 0)
        goto out;
    if (xp_ingest_set_meta(ig, "recovered", "1") != 0) {
        xp_copy_err(ig, err, errlen);
        goto out;
    }
    xp_ingest_close(ig);
    ig = NULL;
    xp_journal_reader_close(r);
    r = NULL;
    *did = true;
    if (unlink(jpath) != 0) {
        snprintf(err, errlen, "%s: stored, but cannot remove the journal: %s", jpath,
                 strerror(errno));
        goto out;
    }
    rc = 0;
out:
    xp_ingest_close(ig);
    if (r != NULL)
        xp_journal_reader_close(r);
    free(jpath);
    return rc;
}
