/* xp_journal.h: writing and reading the crash-safe journal (format in xp_format.h). */
#ifndef XP_JOURNAL_H
#define XP_JOURNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xp_checksum.h"
#include "xp_format.h"
#include "xp_tls.h"

/* ---- writer (in the profiled process) ---------------------------------- */

typedef struct xp_journal xp_journal;

/* What every reservation reads of the journal, its first member (the rest
 * is xp_journal_writer.c's): its generation, and where to read whether it
 * is still this process's (a page zeroed in fork children). */
typedef struct xp_journal_hot {
    uint64_t gen;
    const uint64_t *live_gen;
} xp_journal_hot;

/* The calling thread's chunk: where its next record goes (xp_tls.h: the
 * hot path must not call __tls_get_addr). */
#define xp_writer_self (xp_tls.writer)

/* xp_journal_reserve past the thread's chunk (out of line). */
void *xp_journal_reserve_slow(xp_journal *j, uint32_t size) __attribute__((visibility("hidden")));

/* Creates the journal at path, which must not exist (O_EXCL | O_NOFOLLOW:
 * EEXIST, or ELOOP for a symlink, when something is there), and writes its
 * header from `header` (magic, version, sizes are filled in here).  No
 * descriptor is kept: the file grows through path opened again and checked
 * to be the same file, so path should be absolute if the program may
 * chdir.  Returns 0, or an errno value (nothing is left behind on
 * failure). */
int xp_journal_create(const char *path, const xp_journal_header *header, xp_journal **out);

/* Space for one record of `size` bytes (a multiple of 8, at least 16, at
 * most XP_MAX_RECORD) in the calling thread's chunk, taking a new chunk when
 * the current one is full.  The space is zeroed.  The caller fills the
 * record, header included (type, api, size, tid) except `commit`, then calls
 * xp_journal_commit.  A thread may hold several reservations at once (they
 * lie in reservation order; a live reader waits at the first uncommitted
 * one).  Returns NULL for an invalid size, in a fork child (see
 * xp_journal_abandon_after_fork), or when the journal cannot grow (disk
 * full, mapping failed): the record is counted as lost.  Lock-free except
 * when the file must grow.  Never allocates with malloc, never prints.
 * Inline: the common case is a bump of the thread's pointer (issue 15). */
static inline void *xp_journal_reserve(xp_journal *j, uint32_t size)
{
    xp_writer_tls *t = &xp_writer_self;
    const xp_journal_hot *h = (const xp_journal_hot *)(const void *)j;
    if (__builtin_expect(t->gen == *h->live_gen && (size_t)(t->end - t->next) >= size &&
                             size >= sizeof(xp_rec_header) && (size & 7u) == 0,
                         1)) {
        char *p = t->next;
        /* A chunk with room is never at address 0: callers' NULL checks
         * fold away on this path (issue 15). */
        if (p == NULL)
            __builtin_unreachable();
        t->next = p + size;
        return p;
    }
    return xp_journal_reserve_slow(j, size);
}

/* Publishes a record written into space from xp_journal_reserve (its
 * header's size set): stores its checksum (xp_checksum.h) into its header's
 * commit word with release ordering.  Nothing may write into the record
 * afterwards. */
void xp_journal_commit(void *record);

/* xp_journal_commit of a record whose size (its header's, a multiple of 8)
 * the caller knows at compile time: inlined, so that the checksum unrolls
 * (the copy and sync records, issue 15). */
static inline void xp_journal_commit_sized(void *record, uint32_t size)
{
    xp_rec_header *h = record;
    __atomic_store_n(&h->commit, xp_record_checksum(h, size), __ATOMIC_RELEASE);
}

/* Writes a META record (key, value) from thread tid; keys over 1000 bytes or
 * values over 60000 are not written. */
void xp_journal_put_meta(xp_journal *j, uint32_t tid, const char *key, const char *value);

/* Records that could not be written (xp_journal_reserve returned NULL). */
uint64_t xp_journal_lost(const xp_journal *j);

/* Why, as one phrase for meta records_lost_reason (from the last failure to
 * grow: disk full, descriptor limit, file replaced...). */
const char *xp_journal_lost_reason(const xp_journal *j);

/* Path given at creation. */
const char *xp_journal_path(const xp_journal *j);

/* Unmaps everything; the file stays.  No thread may write afterwards. */
void xp_journal_close(xp_journal *j);

/* Backpressure (issue 15: the journal on disk stays bounded while the
 * program runs, and no record is dropped).  With max_bytes > 0, a thread
 * that must grow the file while the journal's blocks on disk, plus the
 * growth step, exceed max_bytes waits for the ingest to store records and
 * give their blocks back (xp_journal_release_done), at most
 * XP_BACKLOG_WAIT_MS in all per growth; then it grows the file anyway: a
 * burst faster than the ingest is slowed, never stopped.  0 turns it off.
 * The bound also keeps each growth step at most a quarter of it. */
void xp_journal_set_backlog(xp_journal *j, uint64_t max_bytes);

/* From now on no thread waits for the backlog (exit: the ingest thread is
 * stopping, no one is left to give blocks back), while growth steps stay
 * within the bound's quarter: the few records written after it (exit's own
 * meta) take a small step, not a quarter of the file in allocated blocks. */
void xp_journal_stop_waits(xp_journal *j);

/* The calling thread never waits for the backlog: the ingest's own thread,
 * whose records (modules) could otherwise wait for itself. */
void xp_journal_never_wait(void);

/* Whether a writer waited for the backlog since the last call: the ingest
 * then starts its next pass at once. */
bool xp_journal_backlogged(xp_journal *j);

/* Growths that found the backlog over its bound and waited it out to the
 * limit (grew anyway). */
uint64_t xp_journal_backlog_overruns(const xp_journal *j);

/* How the caller makes its background threads (the preload's: every signal
 * blocked); true if the thread was made. */
typedef bool (*xp_spawn_fn)(pthread_t *thread, const pthread_attr_t *attr,
                            void *(*fn)(void *), void *arg);

/* Starts the populator (issue 15): a detached thread, made by spawn, that
 * keeps the next few chunks in the file and their pages populated before a
 * writer takes them, so that the threads that record never populate pages
 * themselves while it keeps up (without it, or when it is behind, they do).
 * Chunks it grows the file for count against the backlog's bound like any.
 * Returns whether it runs. */
bool xp_journal_start_populator(xp_journal *j, xp_spawn_fn spawn);

/* At exit: tells the populator to stop, without waiting for it (exit must
 * not): it leaves within one chunk's work. */
void xp_journal_stop_populator(xp_journal *j);

/* Chunks taken so far, and (*self_populated) how many of them the thread
 * that took one had to populate itself: meta journal_chunks and
 * journal_chunks_populated_by_writers. */
uint64_t xp_journal_chunks(const xp_journal *j, uint64_t *self_populated);

/* In a child after fork(): forget the parent's journal without touching its
 * mappings' contents (the parent still writes there) and without freeing
 * anything the parent owns; the calling thread's cached chunk is dropped.
 * (The writer also refuses, by itself, to write into a parent's journal
 * from a child.)  Later reservations on j fail; xp_journal_close(j) then
 * frees only the child's private memory. */
void xp_journal_abandon_after_fork(xp_journal *j);

/* ---- reader (ingest, recover) ------------------------------------------ */

typedef struct xp_journal_reader xp_journal_reader;

typedef struct xp_read_stats {
    uint64_t records;         /* committed records delivered so far */
    uint64_t chunks;          /* chunks seen */
    uint64_t torn;            /* final reads: records found incomplete (a
                                 writer died mid-record, or the file was cut) */
    uint64_t bytes;           /* file size at the last read */
    uint64_t damaged;         /* final reads: stretches of damaged bytes handed to the
                                 callback as XP_REC_DAMAGED (see xp_journal_read) */
} xp_read_stats;

/* Opens a journal for reading.  Returns 0, or an errno value with a one-line
 * reason in err ("not an xferprof journal", "journal version 3 is newer than
 * this reader (1)", "truncated header", strerror...). */
int xp_journal_open(const char *path, xp_journal_reader **out, char *err, size_t errlen);

const xp_journal_header *xp_journal_info(const xp_journal_reader *r);

/* Called for each committed record, in each chunk's order (chunks in index
 * order).  A non-zero return stops the read and is returned by
 * xp_journal_read (the record is then delivered again by the next read).
 * Records of a version 5 journal arrive only when their checksum holds; the
 * damaged bytes of a final read arrive as a header (not in the file) of type
 * XP_REC_DAMAGED whose size spans them, at their offset, so that the
 * consumer counts them and resumes after them like after any record. */
typedef int (*xp_record_fn)(void *user, const xp_rec_header *record, uint64_t chunk,
                            uint32_t offset);

/* Delivers the records committed since the previous call (or since the
 * positions given with xp_journal_seek).  With final, the writer is known to
 * be gone: an uncommitted record, or one cut off by the end of the file, ends
 * its chunk for good and is counted in stats->torn if its header holds
 * anything.  A committed record whose checksum fails, or whose size is
 * impossible (version 5), is damaged: a live read waits there (the final one
 * decides); a final read delivers it as XP_REC_DAMAGED together with what
 * follows up to the next whole record (its own size when a whole record or
 * the chunk's zero tail is there, else the first offset where a record's
 * checksum holds, else the rest of the chunk).  Before version 5 a committed
 * record with an impossible size ends its chunk as torn.  stats (may be
 * NULL) receives running totals.  Returns 0, the callback's non-zero value,
 * or -1 if the file could not be mapped or a seek could not be recorded (out
 * of memory). */
int xp_journal_read(xp_journal_reader *r, xp_record_fn fn, void *user, bool final,
                    xp_read_stats *stats);

/* Resumes chunk `chunk` at byte `offset` (from the chunk's start; as given to
 * the callback plus the record's size): what an earlier, interrupted ingest
 * already stored. */
void xp_journal_seek(xp_journal_reader *r, uint64_t chunk, uint32_t offset);

void xp_journal_reader_close(xp_journal_reader *r);

/* Gives the disk blocks of every chunk read to its end (closed by its
 * writer and all delivered) back to the file system (a hole reads as
 * zeros: an empty chunk).  Only once what was delivered is stored for good:
 * the ingest calls it after committing a pass (issue 15: the journal of a
 * long run stays the size of what is not ingested yet). */
void xp_journal_release_done(xp_journal_reader *r);

/* The pid the journal at path was written by (its header's), and in
 * *running (OUT) whether that process exists now (kill(pid, 0); EPERM counts:
 * another user's).  0 (and *running false) when path is not a regular file
 * holding a journal header.  Never follows a link, never blocks on a FIFO. */
int xp_journal_writer(const char *path, bool *running);

#endif
