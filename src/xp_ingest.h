/* xp_ingest.h: moving journal records into the SQLite database (schema in
 * xp_schema.h, documented in docs/schema.md). */
#ifndef XP_INGEST_H
#define XP_INGEST_H

#include <stdbool.h>
#include <stddef.h>

#include "xp_journal.h"

/* A handle is used by one thread at a time (its connection is opened
 * without SQLite's own mutex); different handles may be used concurrently. */
typedef struct xp_ingest xp_ingest;

/* The PRAGMAs every ingest connection runs after opening (why each: in
 * xp_ingest_db.c); shared with bench/bench_sqlite_floor.c. */
extern const char xp_ingest_pragmas[];

/* Opens or creates the database and its schema.  An existing file that is
 * not an xferprof database, or is newer than this build, or is corrupt, is
 * refused with a one-line reason in err.  Returns 0 or -1. */
int xp_ingest_open(const char *db_path, xp_ingest **out, char *err, size_t errlen);

/* One pass: stores every record committed since the last pass (resuming
 * from the progress recorded in the database itself, so a pass that was cut
 * short is neither lost nor stored twice), in batched transactions.  With
 * final, the writer is gone: torn records are counted into meta
 * records_lost (with the reason in meta records_lost_reason).
 * Returns 0 or -1 with err set. */
int xp_ingest_pass(xp_ingest *ig, xp_journal_reader *r, bool final, char *err, size_t errlen);

/* Whether the last xp_ingest_pass failed because the disk (or the
 * file system's quota) is full. */
bool xp_ingest_disk_full(const xp_ingest *ig);

/* The calls (copies, allocations, frees, syncs, failed calls, memsets, NVTX
 * ranges) among the records committed to r's journal that the database has
 * not stored, counted without storing them.  Returns 0, or -1 with a reason
 * in err. */
int xp_ingest_count_pending(xp_ingest *ig, xp_journal_reader *r, uint64_t *calls, char *err,
                            size_t errlen);

/* Sets meta(key) = value (insert or replace). */
int xp_ingest_set_meta(xp_ingest *ig, const char *key, const char *value);

/* Adds n to meta records_lost and appends reason to records_lost_reason. */
int xp_ingest_add_lost(xp_ingest *ig, unsigned long long n, const char *reason);

void xp_ingest_close(xp_ingest *ig);

/* If <db_path>.xpj exists, ingests what it holds that the database lacks
 * (final), marks meta recovered=1, and removes the journal.  *did is set to
 * whether there was a journal.  The database is created if missing.
 * Returns 0 or -1 with err set. */
int xp_recover(const char *db_path, bool *did, char *err, size_t errlen);

/* How far a recovery has come: records stored so far, and the bytes of the
 * journal read up to (the end of the last record stored; chunks are read
 * in order, so it grows to the journal's size). */
typedef void (*xp_recover_progress_fn)(void *user, uint64_t records, uint64_t bytes);

/* xp_recover, calling progress(user, ...) every 4096 records stored (a
 * counter test per record: the ingest is not slowed; progress may be NULL),
 * and *records (OUT, may be NULL): the records this recovery took from the
 * journal (stored, or counted in records_lost), not those an earlier pass
 * had stored already. */
int xp_recover_progress(const char *db_path, bool *did, xp_recover_progress_fn progress,
                        void *user, uint64_t *records, char *err, size_t errlen);

#endif
