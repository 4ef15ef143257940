/* xp_ingest_txn.c: the transactions that make ingest exactly-once: each commits the
 * progress of the chunks it read and the records_lost counts of what it could not store. */
#include "xp_ingest_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* No journal has more chunks than this (a 4 TiB file): a larger index is a
 * damaged reader or journal, not something to allocate for. */
#define XP_MAX_CHUNKS (1u << 24)

/* What a transaction counted lives only as long as it does, whether it
 * committed (then the database holds it) or rolled back. */
static void xp_txn_ended(xp_ingest *ig)
{
    ig->in_txn = false;
    ig->txn_records = 0;
    ig->lost_corrupt = ig->lost_malformed = ig->lost_duplicate = 0;
    ig->times_fixed = 0;
    for (size_t i = 0; i < ig->ndirty; i++)
        ig->dirty[ig->dirty_list[i]] = 0;
    ig->ndirty = 0;
}

int xp_ig_begin(xp_ingest *ig)
{
    if (xp_ig_run(ig, S_BEGIN) != 0)
        return -1;
    ig->in_txn = true;
    ig->txn_records = 0;
    /* Another connection committed since this pass loaded its progress (a
     * second ingester of the same journal): storing on would store its
     * records twice. */
    if (xp_ig_data_version(ig) != ig->data_version) {
        xp_ig_run(ig, S_ROLLBACK);
        ig->in_txn = false;
        xp_ig_err(ig, "the database was changed by another process during ingest");
        return -1;
    }
    return 0;
}

/* Undoes the open transaction.  The rows it held are gone, and with them
 * what the caches and the in-memory progress said: both are rebuilt from
 * the database by the next pass. */
void xp_ig_rollback(xp_ingest *ig)
{
    if (ig->in_txn && !ig->abandoned) {
        sqlite3_stmt *s = ig->st[S_ROLLBACK];
        sqlite3_step(s);
        sqlite3_reset(s);
        /* A failed COMMIT may have rolled back by itself already. */
        if (!sqlite3_get_autocommit(ig->db))
            sqlite3_exec(ig->db, "ROLLBACK", NULL, NULL, NULL);
    }
    xp_txn_ended(ig);
    ig->copies.n = ig->syncs.n = 0;
    xp_ig_clear_caches(ig);
    xp_ig_sites_forget(ig);
}

int xp_ig_lost_in_txn(xp_ingest *ig, unsigned long long n, const char *reason)
{
    if (n == 0)
        return 0;
    if (n > INT64_MAX)
        n = INT64_MAX;
    sqlite3_bind_int64(ig->st[S_LOST_N], 1, (sqlite3_int64)n);
    if (xp_ig_run(ig, S_LOST_N) != 0)
        return -1;
    if (reason == NULL || reason[0] == '\0')
        return 0;
    sqlite3_bind_text(ig->st[S_LOST_REASON], 1, reason, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(ig->st[S_LOST_REASON], 2, XP_MAX_REASON);
    return xp_ig_run(ig, S_LOST_REASON);
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
        return xp_ig_db_fail(ig);
    char was[64], now[64];
    snprintf(was, sizeof was, "%" PRIu64 " corrupt journal record(s)", before);
    snprintf(now, sizeof now, "%" PRIu64 " corrupt journal record(s)", before + ig->lost_corrupt);
    sqlite3_bind_int64(ig->st[S_CORRUPT_ADD], 1, xp_i64(ig->lost_corrupt));
    if (xp_ig_run(ig, S_CORRUPT_ADD) != 0)
        return -1;
    if (before == 0)
        return xp_ig_lost_in_txn(ig, ig->lost_corrupt, now);
    if (xp_ig_lost_in_txn(ig, ig->lost_corrupt, NULL) != 0)
        return -1;
    sqlite3_bind_text(ig->st[S_CORRUPT_REASON], 1, was, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(ig->st[S_CORRUPT_REASON], 2, now, -1, SQLITE_TRANSIENT);
    return xp_ig_run(ig, S_CORRUPT_REASON);
}

/* Commits the open transaction with what makes it exactly-once: the
 * progress of every chunk it read from, and the count of what it could not
 * store.  On failure everything is rolled back.  Returns 0 or -1. */

int xp_ig_commit(xp_ingest *ig)
{
    char reason[128];
    if (!ig->in_txn)
        return 0;
    if (!xp_ig_fds_intact(ig))
        goto fail;
    if (xp_ig_flush(ig, &ig->copies) != 0 || xp_ig_flush(ig, &ig->syncs) != 0)
        goto fail;
    if (ig->lost_corrupt && xp_lost_corrupt(ig) != 0)
        goto fail;
    if (ig->lost_malformed) {
        snprintf(reason, sizeof reason, "%" PRIu64 " malformed record(s) skipped",
                 ig->lost_malformed);
        if (xp_ig_lost_in_txn(ig, ig->lost_malformed, reason) != 0)
            goto fail;
    }
    if (ig->times_fixed) {
        sqlite3_bind_int64(ig->st[S_TIMES_FIXED], 1, (sqlite3_int64)ig->times_fixed);
        if (xp_ig_run(ig, S_TIMES_FIXED) != 0)
            goto fail;
    }
    if (ig->lost_duplicate) {
        snprintf(reason, sizeof reason,
                 "%" PRIu64 " record(s) skipped: allocation, free or NVTX range already stored",
                 ig->lost_duplicate);
        if (xp_ig_lost_in_txn(ig, ig->lost_duplicate, reason) != 0)
            goto fail;
    }
    sqlite3_stmt *p = ig->st[S_PROGRESS_SET];
    for (size_t i = 0; i < ig->ndirty; i++) {
        uint64_t c = ig->dirty_list[i];
        sqlite3_bind_int64(p, 1, (sqlite3_int64)c);
        sqlite3_bind_int64(p, 2, ig->off[c]);
        if (xp_ig_run(ig, S_PROGRESS_SET) != 0)
            goto fail;
    }
    if (xp_ig_run(ig, S_COMMIT) != 0)
        goto fail;
    xp_txn_ended(ig);
    return 0;
fail:
    xp_ig_rollback(ig);
    return -1;
}

/* ---- progress ------------------------------------------------------------- */

/* Makes the per-chunk progress arrays (off, dirty) hold chunk. */
static int xp_ig_grow_chunks(xp_ingest *ig, uint64_t chunk)
{
    if (chunk < ig->nchunks)
        return 0;
    if (chunk >= XP_MAX_CHUNKS) {
        xp_ig_err(ig, "journal chunk %" PRIu64 " is out of range", chunk);
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
    xp_ig_err(ig, "out of memory");
    return -1;
}

int xp_ig_mark(xp_ingest *ig, uint64_t chunk, uint32_t end)
{
    if (chunk >= ig->nchunks && xp_ig_grow_chunks(ig, chunk) != 0)
        return -1;
    ig->off[chunk] = end;
    if (!ig->dirty[chunk]) {
        if (ig->ndirty == ig->dirty_cap) {
            size_t cap = ig->dirty_cap ? ig->dirty_cap * 2 : 64;
            uint64_t *l = realloc(ig->dirty_list, cap * sizeof *l);
            if (l == NULL) {
                xp_ig_err(ig, "out of memory");
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
int xp_ig_load_progress(xp_ingest *ig, xp_journal_reader *r)
{
    uint8_t *seen = NULL;
    size_t nseen = ig->nchunks;
    if (nseen) {
        seen = calloc(nseen, 1);
        if (seen == NULL) {
            xp_ig_err(ig, "out of memory");
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
            xp_ig_err(ig, "journal_progress row (%lld, %lld) is impossible", (long long)c,
                      (long long)o);
            return -1;
        }
        if (xp_ig_grow_chunks(ig, (uint64_t)c) != 0) {
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
        return xp_ig_db_fail(ig);
    }
    for (size_t c = 0; c < nseen; c++)
        if (seen[c] && ig->off[c] == 0)
            xp_journal_seek(r, c, (uint32_t)sizeof(xp_chunk_header));
    free(seen);
    return 0;
}
