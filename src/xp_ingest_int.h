/* xp_ingest_int.h: what the parts of ingest share among themselves
 * (xp_ingest_db.c the connection, xp_ingest_txn.c transactions and
 * progress, xp_ingest_store.c records into rows, xp_ingest.c the passes and
 * the API of xp_ingest.h); included by those files only. */
#ifndef XP_INGEST_INT_H
#define XP_INGEST_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "xp_fds.h"
#include "xp_format.h"
#include "xp_ingest.h"

/* The longest records_lost_reason kept: reasons only repeat after that. */
#define XP_MAX_REASON 2000

/* The cache of stacks ids already in the database, direct-mapped (a
 * collision only costs a query).  Only ever a shortcut for a lookup: emptied
 * when a transaction rolls back (the rows it names are gone) and at every
 * attach (another connection may have written to the database). */
#define STACK_CACHE 2048

/* The call_sites mirror (xp_ingest_sites.c) grows from XP_SITE_SLOTS_MIN
 * slots to XP_SITE_SLOTS_MAX (48 bytes each: 1.5 MiB of the profiled
 * process at most, 24,576 sites at 3/4 full); past that it is a cache of the
 * sites it holds and the others are looked up in the database. */
#define XP_SITE_SLOTS_MIN 1024
#define XP_SITE_SLOTS_MAX 32768

/* Copies and syncs wait in a row_buf and are inserted XP_ROW_BATCH rows at a
 * time by one INSERT ... SELECT from a virtual table over the buffer
 * (xp_ingest_vtab.c): most of an insert's cost is the statement's own
 * (cursors opened and closed, the last rowid looked up), not the row's, and
 * SQLite reads the values through xColumn instead of a sqlite3_bind_* call
 * each.  Measured (callgrind, xferprof recover of 1,001,028 records):
 * 5,117 instructions per record with 32-row INSERT ... VALUES, 4,833 with
 * this at 32 rows, 4,523 at 256, 4,472 at 1,024 (docs/performance.md).  The
 * statement's text no longer grows with the batch, so a connection opened
 * for each pass pays nothing more to prepare it. */
#define XP_ROW_BATCH 256
#define XP_ROW_COLS 13            /* the most columns of a buffered row (copies) */

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
    S_COPY, S_SYNC, S_SITE_FIND, S_SITE_ADD, S_SITE_MAX, S_SITE_ALL, S_STACK_FIND, S_STACK_ADD, S_STACK_SET,
    S_MODULE, S_META, S_ALLOC, S_FREE, S_UNKNOWN_FREE, S_ERROR, S_MEMSET,
    S_PROGRESS_SET, S_PROGRESS_GET, S_LOST_N, S_LOST_REASON, S_TIMES_FIXED,
    S_JOURNAL_GET, S_JOURNAL_ADD, S_JOURNAL_TORN, S_META_DEFAULT,
    S_NVTX_NAME, S_NVTX_RANGE, S_NVTX_END, S_PYCODE, S_GRAPH_NODE, S_BLOCK,
    S_CORRUPT_GET, S_CORRUPT_ADD, S_CORRUPT_REASON,
    S_COUNT
};

/* Rows waiting for a multi-row insert; always flushed before a commit. */
typedef struct row_buf {
    int insert;               /* the statement inserting every row waiting */
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

    xp_recover_progress_fn progress; /* NULL but in a recovery that shows progress */
    void *progress_user;
    uint64_t records_read;           /* records the passes took from the journal (stored
                                        or counted lost), over the handle's life */

    /* The call_sites mirror: open addressing over site_slots slots (a power
     * of two; NULL until the first site), site_count of them used. */
    site_slot *sites;
    uint32_t site_slots, site_count;
    bool sites_all;           /* it holds every row of call_sites: a miss is a new site */
    bool sites_checked;       /* compared with the database since the attach */
    int64_t sites_max;        /* max(call_sites.id) as the mirror last knew it; -1: unknown */
    stack_slot stacks[STACK_CACHE];
};

/* The journal's unsigned 64-bit values are stored as SQLite's signed
 * integers (two's complement: values from 2^63 read back negative). */
static inline sqlite3_int64 xp_i64(uint64_t v)
{
    return (sqlite3_int64)v;
}

/* Binds a stacks.id, 0 meaning none (NULL). */
static inline void xp_ig_bind_stack(sqlite3_stmt *s, int i, sqlite3_int64 stack)
{
    if (stack > 0)
        sqlite3_bind_int64(s, i, stack);
    else
        sqlite3_bind_null(s, i);
}

/* Shared by the parts as xp_ig_* (the public API is xp_ingest_*).  All
 * that return int return 0, or -1 with ig->err set (ig->failed). */

/* ---- the connection (xp_ingest_db.c) ---- */

/* Sets ig->err to "PATH: message" and marks the call failed. */
void xp_ig_err(xp_ingest *ig, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* ig->err from SQLite's message (noting a full disk); returns -1. */
int xp_ig_db_fail(xp_ingest *ig);
/* Steps a statement that returns no row, then resets it. */
int xp_ig_run(xp_ingest *ig, int which);
/* Empties the stacks cache and has the call_sites mirror checked against the
 * database before its next use (another connection may have written). */
void xp_ig_clear_caches(xp_ingest *ig);
/* PRAGMA data_version of the connection (-1 if it cannot be read). */
long long xp_ig_data_version(xp_ingest *ig);
/* Opens the connection for one call, `reserve` descriptors left free for
 * the program; returns 0, 1 (skipped: too close to the limit) or -1. */
int xp_ig_attach(xp_ingest *ig, unsigned reserve);
/* Whether the connection's descriptors are still its own (if not, it is
 * abandoned). */
bool xp_ig_fds_intact(xp_ingest *ig);
/* Closes the connection; tidy: back to a single file, WAL removed. */
void xp_ig_detach(xp_ingest *ig, bool tidy);

/* ---- transactions and progress (xp_ingest_txn.c) ---- */

int xp_ig_begin(xp_ingest *ig);
/* Commits the open transaction with its progress and loss counts (rolled
 * back on failure). */
int xp_ig_commit(xp_ingest *ig);
void xp_ig_rollback(xp_ingest *ig);
/* Adds n to meta records_lost and reason to records_lost_reason, inside the
 * open transaction. */
int xp_ig_lost_in_txn(xp_ingest *ig, unsigned long long n, const char *reason);
/* Records that chunk is stored up to end in the open transaction. */
int xp_ig_mark(xp_ingest *ig, uint64_t chunk, uint32_t end);
/* Seeks r to where the database says each chunk stands. */
int xp_ig_load_progress(xp_ingest *ig, xp_journal_reader *r);

/* ---- call sites (xp_ingest_sites.c) ---- */

/* call_sites.id for k (zero-filled before its fields were set: keys are
 * compared word by word, padding too), the row added if new.  Only inside a transaction.
 * Returns the id or -1. */
sqlite3_int64 xp_ig_site_ref(xp_ingest *ig, const site_key *k);
/* At attach: another process may have written since the last connection;
 * the mirror is compared with the database before it is used again. */
void xp_ig_sites_recheck(xp_ingest *ig);
/* After a rollback: rows the mirror names may be gone; it is reloaded. */
void xp_ig_sites_forget(xp_ingest *ig);
/* Frees the mirror (xp_ingest_close). */
void xp_ig_sites_free(xp_ingest *ig);

/* ---- records into rows (xp_ingest_store.c) ---- */

/* Stores one record (or counts it lost); -1 only when the database failed. */
int xp_ig_store(xp_ingest *ig, const xp_rec_header *h);
/* Inserts the rows waiting in b. */
int xp_ig_flush(xp_ingest *ig, row_buf *b);

/* ---- the row buffers as tables (xp_ingest_vtab.c) ---- */

/* Registers the virtual tables xp_copy_buf and xp_sync_buf (the rows
 * waiting in ig->copies, ig->syncs) on the connection.  0 or -1. */
int xp_ig_rows_module(xp_ingest *ig);

#endif
