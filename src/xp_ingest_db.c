/* xp_ingest_db.c: an ingest handle's SQLite connection: opened for each call, its
 * descriptors watched, its statements prepared. */
#include "xp_ingest_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "xp_fds.h"
#include "xp_schema.h"

/* Every statement of a connection, prepared at each attach (the S_ names are in
 * xp_ingest_int.h). */
static const char *const sql_text[S_COUNT] = {
    [S_BEGIN] = "BEGIN IMMEDIATE",
    [S_COMMIT] = "COMMIT",
    [S_ROLLBACK] = "ROLLBACK",
    [S_DATA_VERSION] = "PRAGMA data_version",
    /* Every row waiting in ig->copies (ig->syncs), columns in this order: see
     * xp_ingest_vtab.c. */
    [S_COPY] = "INSERT INTO copy_rows(site, bytes, src, dst, start_ns, dur_ns, kernel_seq, "
               "fingerprint, fp_kind, nvtx_range, full_fp, graph_node, launch_stack) "
               "SELECT * FROM xp_copy_buf",
    [S_MEMSET] = "INSERT INTO memset_rows(site, bytes, dst, value, kernel_seq, start_ns, dur_ns, "
                 "nvtx_range, graph_node, launch_stack) "
                 "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    [S_SYNC] = "INSERT INTO sync_rows(site, start_ns, dur_ns, nvtx_range, copy_start_ns, "
               "fingerprint, fp_kind) SELECT * FROM xp_sync_buf",
    [S_SITE_FIND] = "SELECT id FROM call_sites WHERE api = ?1 AND status = ?2 AND device = ?3 "
                    "AND tid = ?4 AND stream = ?5 AND stack IS ?6 AND direction = ?7 "
                    "AND host_mem = ?8 AND blocking = ?9 AND kind = ?10",
    [S_SITE_ADD] = "INSERT INTO call_sites(api, status, device, tid, stream, stack, direction, "
                   "host_mem, blocking, kind) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    [S_SITE_MAX] = "SELECT coalesce(max(id), 0) FROM call_sites",
    [S_SITE_ALL] = "SELECT id, api, status, device, tid, stream, stack, direction, host_mem, "
                   "blocking, kind FROM call_sites ORDER BY id",
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
    [S_BLOCK] = "INSERT OR IGNORE INTO block_rows(id, op, allocator, device, ptr, bytes, "
                "time_ns, tid, stack, allocated, reserved) "
                "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    /* A node's row: a set (via 3) after its capture or add changes its parameters
     * only; a capture or add stored after a set of the same node keeps the set's
     * parameters and says how the node was made. */
    [S_GRAPH_NODE] = "INSERT INTO graph_node_rows(id, api, op, via, graph, handle, stream, "
                     "direction, host_mem, kind, src, dst, bytes, value, device, tid, start_ns, "
                     "end_ns, stack, updated) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
                     "?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?4 = 3) "
                     "ON CONFLICT(id) DO UPDATE SET "
                     "api = iif(excluded.via = 3, api, excluded.api), "
                     "via = iif(excluded.via = 3, via, excluded.via), "
                     "stream = iif(excluded.via = 3, stream, excluded.stream), "
                     "tid = iif(excluded.via = 3, tid, excluded.tid), "
                     "start_ns = iif(excluded.via = 3, start_ns, excluded.start_ns), "
                     "end_ns = iif(excluded.via = 3, end_ns, excluded.end_ns), "
                     "direction = iif(excluded.via = 3, excluded.direction, direction), "
                     "host_mem = iif(excluded.via = 3, excluded.host_mem, host_mem), "
                     "kind = iif(excluded.via = 3, excluded.kind, kind), "
                     "src = iif(excluded.via = 3, excluded.src, src), "
                     "dst = iif(excluded.via = 3, excluded.dst, dst), "
                     "bytes = iif(excluded.via = 3, excluded.bytes, bytes), "
                     "value = iif(excluded.via = 3, excluded.value, value), "
                     "updated = 1",
    [S_PYCODE] = "INSERT OR IGNORE INTO py_code(key, file, name, first_line, line_table, "
                 "py_version, line_format) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
};

/* ---- errors and small helpers ------------------------------------------ */

void xp_ig_err(xp_ingest *ig, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(ig->err, sizeof ig->err, "%s: %s", ig->path, msg);
    ig->failed = true;
}

int xp_ig_db_fail(xp_ingest *ig)
{
    if ((sqlite3_errcode(ig->db) & 0xff) == SQLITE_FULL)
        ig->full = true;
    xp_ig_err(ig, "%s", sqlite3_errmsg(ig->db));
    return -1;
}

/* Steps a statement that returns no row, then resets it.  Returns 0 or -1
 * with ig->err set. */
int xp_ig_run(xp_ingest *ig, int which)
{
    sqlite3_stmt *s = ig->st[which];
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return xp_ig_db_fail(ig);
    return 0;
}

void xp_ig_clear_caches(xp_ingest *ig)
{
    xp_ig_sites_recheck(ig);
    memset(ig->stacks, 0, sizeof ig->stacks);
}

long long xp_ig_data_version(xp_ingest *ig)
{
    sqlite3_stmt *s = ig->st[S_DATA_VERSION];
    long long v = -1;
    if (sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_int64(s, 0);
    sqlite3_reset(s);
    return v;
}

/* ---- the connection ------------------------------------------------------ */

/* WAL with synchronous=NORMAL: a process killed at any point (the
 * profiled program, or recover) leaves a consistent database, whose last
 * transactions a power cut could lose (never corrupt).  Losing them is
 * no worse than what such a cut does to the journal, which is not synced
 * either; and until a transaction commits its records are still in the
 * journal, where recover finds them. */
/* The WAL is kept small: checkpointed once it holds 256 pages (1 MiB;
 * SQLite's default is 1000) and its file cut back to 1 MiB when it
 * starts over.  A large WAL is room the database file needs to grow
 * into: on a disk that fills up, the closing checkpoint then found none
 * and left the database and its WAL side by side.  Measured: the same
 * instructions per record (make_db -n 200000, xferprof recover). */
const char xp_ingest_pragmas[] = "PRAGMA journal_mode = WAL;"
                                "PRAGMA wal_autocheckpoint = 256;"
                                "PRAGMA journal_size_limit = 1048576;"
                                "PRAGMA synchronous = NORMAL;"
                                "PRAGMA cache_size = -16384;"
                                "PRAGMA temp_store = MEMORY;";

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
int xp_ig_attach(xp_ingest *ig, unsigned reserve)
{
    if (ig->abandoned) {
        xp_ig_err(ig, "the program closed or reused the database's descriptors during an "
                      "ingest pass; the journal is kept for xferprof recover");
        return -1;
    }
    if (ig->db != NULL)
        return 0;
    if (!xp_fd_spare(XP_DB_FILES + reserve)) {
        if (reserve > 0)
            return 1;
        xp_ig_err(ig, "no descriptor free below the descriptor limit (RLIMIT_NOFILE)");
        return -1;
    }
    char why[512];
    if (xp_db_open_write(ig->path, &ig->db, why, sizeof why) != 0) {
        snprintf(ig->err, sizeof ig->err, "%s", why);
        ig->failed = true;
        return -1;
    }
    if (sqlite3_exec(ig->db, xp_ingest_pragmas, NULL, NULL, NULL) != SQLITE_OK)
        goto fail;
    if (xp_ig_rows_module(ig) != 0)
        goto fail;
    for (int i = 0; i < S_COUNT; i++)
        if (sqlite3_prepare_v3(ig->db, sql_text[i], -1, SQLITE_PREPARE_PERSISTENT, &ig->st[i],
                               NULL) != SQLITE_OK)
            goto fail;
    /* The version is per connection, and another process may have written
     * since the last call: the caches start again. */
    ig->data_version = xp_ig_data_version(ig);
    xp_ig_clear_caches(ig);
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
    xp_ig_err(ig, "%s", sqlite3_errmsg(ig->db));
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
bool xp_ig_fds_intact(xp_ingest *ig)
{
    if (ig->db == NULL)
        return !ig->abandoned;
    for (unsigned i = 0; i < ig->nfds; i++)
        if (!xp_fd_is(ig->fds[i], &ig->fd_ids[i])) {
            ig->abandoned = true;
            ig->db = NULL;          /* leaked on purpose, with its statements */
            memset(ig->st, 0, sizeof ig->st);
            xp_ig_err(ig, "the program closed or reused the database's descriptors (fd %d) "
                          "during an ingest pass; the journal is kept for xferprof recover",
                      ig->fds[i]);
            return false;
        }
    return true;
}

/* Closes the connection, unless its descriptors are no longer its own.
 * `tidy`: back to a single self-contained file (the WAL checkpointed and
 * removed), as the database is left at the end. */
void xp_ig_detach(xp_ingest *ig, bool tidy)
{
    if (ig->db == NULL || !xp_ig_fds_intact(ig))
        return;
    if (ig->in_txn)
        xp_ig_rollback(ig);
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
