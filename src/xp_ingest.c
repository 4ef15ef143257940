/* xp_ingest.c: moving journal records into the run database, exactly once: the passes
 * and the API of xp_ingest.h (the parts they use are declared in xp_ingest_int.h). */
#include "xp_ingest_int.h"

#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xp_fds.h"

/* Records per transaction: large enough that the commit (and the WAL
 * checkpoint it may trigger) is a small share of the time, small enough
 * that readers of the live database see progress and a rolled-back batch
 * costs little to redo. */
#define XP_INGEST_BATCH 50000

static void xp_copy_err(const xp_ingest *ig, char *err, size_t errlen)
{
    if (err != NULL && errlen > 0)
        snprintf(err, errlen, "%s", ig->err);
}

/* ---- one pass -------------------------------------------------------------- */

/* The reader's callback: one record into the open batch. */
static int xp_on_record(void *user, const xp_rec_header *h, uint64_t chunk, uint32_t offset)
{
    xp_ingest *ig = user;
    if (!ig->in_txn && xp_ig_begin(ig) != 0)
        return 1;
    if (offset < sizeof(xp_chunk_header) || h->size > XP_CHUNK_SIZE - offset) {
        xp_ig_err(ig, "journal reader delivered an impossible record (chunk %" PRIu64
                      ", offset %u, size %u)", chunk, offset, h->size);
        return 1;
    }
    if (xp_ig_store(ig, h) != 0 || xp_ig_mark(ig, chunk, offset + h->size) != 0)
        return 1;
    if ((++ig->records_read & 4095) == 0 && ig->progress)
        ig->progress(ig->progress_user, ig->records_read,
                     XP_JOURNAL_HEADER_SIZE + chunk * XP_CHUNK_SIZE + offset + h->size);
    if (++ig->txn_records >= XP_INGEST_BATCH && xp_ig_commit(ig) != 0)
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
            xp_ig_err(ig, "holds the records of another journal (pid %lld, not %d)",
                      (long long)pid, (int)jh->pid);
            return -1;
        }
        return 0;
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE)
        return xp_ig_db_fail(ig);
    *torn = 0;
    if (xp_ig_begin(ig) != 0)
        return -1;
    sqlite3_bind_int64(ig->st[S_JOURNAL_ADD], 1, jh->pid);
    sqlite3_bind_int64(ig->st[S_JOURNAL_ADD], 2, xp_i64(jh->start_wall_ns));
    sqlite3_bind_int64(ig->st[S_JOURNAL_ADD], 3, xp_i64(jh->start_mono_ns));
    if (xp_ig_run(ig, S_JOURNAL_ADD) != 0)
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
        if (xp_ig_run(ig, S_META_DEFAULT) != 0)
            goto fail;
    }
    if (xp_ig_commit(ig) != 0)
        return -1;
    return 0;
fail:
    xp_ig_rollback(ig);
    return -1;
}

/* ---- the API --------------------------------------------------------------- */

int xp_ingest_open(const char *db_path, xp_ingest **out, char *err, size_t errlen)
{
    *out = NULL;
    xp_ingest *ig = calloc(1, sizeof *ig);
    if (ig == NULL || (ig->path = strdup(db_path)) == NULL) {
        free(ig);
        snprintf(err, errlen, "%s: out of memory", db_path);
        return -1;
    }
    ig->copies = (row_buf){.insert = S_COPY, .cols = 13};
    ig->syncs = (row_buf){.insert = S_SYNC, .cols = 7};
    xp_ig_sites_forget(ig);   /* the database may hold sites already: loaded at first use */
    /* Created and checked now, so that a bad path shows at start-up. */
    if (xp_ig_attach(ig, 0) != 0) {
        xp_copy_err(ig, err, errlen);
        free(ig->path);
        free(ig);
        return -1;
    }
    xp_ig_detach(ig, false);
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
    int a = xp_ig_attach(ig, final ? 0 : XP_FD_RESERVE);
    if (a != 0) {
        if (a > 0)
            return 0;   /* near the descriptor limit: the records wait */
        xp_copy_err(ig, err, errlen);
        return -1;
    }
    uint64_t torn_counted = 0, torn_before = 0;
    if (xp_check_journal(ig, r, &torn_counted) != 0 || xp_ig_load_progress(ig, r) != 0)
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
            xp_ig_err(ig, "cannot read the journal (out of memory, or the file changed)");
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
        if (!ig->in_txn && xp_ig_begin(ig) != 0)
            goto fail;
        sqlite3_bind_int64(ig->st[S_JOURNAL_TORN], 1, xp_i64(torn_found));
        if (xp_ig_lost_in_txn(ig, n, reason) != 0 || xp_ig_run(ig, S_JOURNAL_TORN) != 0)
            goto fail;
    }
    if (xp_ig_commit(ig) != 0)
        goto fail;
    xp_ig_detach(ig, false);
    if (!final)
        xp_journal_release_done(r);   /* stored: the chunks read through can go */
    return 0;
fail:
    xp_ig_rollback(ig);
    xp_ig_detach(ig, false);
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
    if (xp_ig_attach(ig, 0) != 0) {
        xp_copy_err(ig, err, errlen);
        return -1;
    }
    int rc = xp_ig_load_progress(ig, r) == 0 &&
                     xp_journal_read(r, xp_count_calls, calls, true, NULL) == 0
                 ? 0
                 : -1;
    xp_ig_detach(ig, false);
    if (rc != 0) {
        if (!ig->failed)
            xp_ig_err(ig, "cannot read the journal");
        xp_copy_err(ig, err, errlen);
    }
    return rc;
}

int xp_ingest_set_meta(xp_ingest *ig, const char *key, const char *value)
{
    if (xp_ig_attach(ig, 0) != 0)
        return -1;
    sqlite3_stmt *s = ig->st[S_META];
    sqlite3_bind_text(s, 1, key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 2, value, -1, SQLITE_TRANSIENT);
    int rc = xp_ig_fds_intact(ig) ? xp_ig_run(ig, S_META) : -1;
    xp_ig_detach(ig, false);
    return rc;
}

int xp_ingest_add_lost(xp_ingest *ig, unsigned long long n, const char *reason)
{
    if (n == 0)
        return 0;
    if (xp_ig_attach(ig, 0) != 0)
        return -1;
    int rc = -1;
    if (xp_ig_run(ig, S_BEGIN) == 0) {
        ig->in_txn = true;
        if (xp_ig_lost_in_txn(ig, n, reason) == 0 && xp_ig_fds_intact(ig) && xp_ig_run(ig, S_COMMIT) == 0)
            rc = 0;
        if (rc != 0)
            xp_ig_rollback(ig);
        ig->in_txn = false;
    }
    xp_ig_detach(ig, false);
    return rc;
}

void xp_ingest_close(xp_ingest *ig)
{
    if (ig == NULL)
        return;
    /* Back to a single self-contained file that can be copied or opened
     * read-only anywhere. */
    if (xp_ig_attach(ig, 0) == 0)
        xp_ig_detach(ig, true);
    free(ig->off);
    free(ig->dirty);
    free(ig->dirty_list);
    xp_ig_sites_free(ig);
    free(ig->path);
    free(ig);
}

int xp_recover(const char *db_path, bool *did, char *err, size_t errlen)
{
    return xp_recover_progress(db_path, did, NULL, NULL, NULL, err, errlen);
}

int xp_recover_progress(const char *db_path, bool *did, xp_recover_progress_fn progress,
                        void *user, uint64_t *records, char *err, size_t errlen)
{
    struct stat sb;
    *did = false;
    if (records != NULL)
        *records = 0;
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
    ig->progress = progress;
    ig->progress_user = user;
    if (xp_ingest_pass(ig, r, true, err, errlen) != 0)
        goto out;
    if (xp_ingest_set_meta(ig, "recovered", "1") != 0) {
        xp_copy_err(ig, err, errlen);
        goto out;
    }
    if (records != NULL)
        *records = ig->records_read;
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
