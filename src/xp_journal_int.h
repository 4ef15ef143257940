/* xp_journal_int.h: the journal writer's state, shared by xp_journal_writer.c and _space.c. */
#ifndef XP_JOURNAL_INT_H
#define XP_JOURNAL_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xp_fds.h"
#include "xp_journal.h"

enum {
    XP_WINDOW_CHUNKS = 256,        /* 64 MiB of address space per window */
    XP_WINDOW_SLOTS = 16384,       /* 4M chunks: a 1 TiB journal at most */
    XP_GROW_MIN = 8,               /* chunks per growth step: 2 MiB ... */
    XP_GROW_MAX = 64,              /* ... to 16 MiB, a quarter of the file between */
    /* Descriptors left to the program when growth takes one for a few
     * microseconds: fewer than XP_FD_RESERVE, because failing here loses
     * records where a skipped ingest pass only delays them. */
    XP_FD_RESERVE_GROW = 4,
    XP_SPARE_SLOTS = 64,           /* rests of chunks of ended threads kept for others */
    XP_SPARE_MIN = 4096,           /* a rest smaller than this is not worth keeping */
    /* The populator (xp_journal_space.c) keeps this many chunks past
     * next_chunk populated (4 MiB of page cache, mapped in the process), and
     * a writer wakes it when it finds fewer than XP_POP_LOW left: early,
     * because on a busy machine a woken thread may wait a scheduler slice
     * (3 ms: a dozen chunks of a burst) for a CPU. */
    XP_POP_AHEAD = 16,
    XP_POP_LOW = 12,
    XP_POP_STEP = 8,               /* chunks it grows the file by (2 MiB) */
};

/* xp_journal.pop_state, the word the populator sleeps on (a futex). */
enum {
    XP_POP_NONE = 0,               /* no populator: writers populate their chunks */
    XP_POP_BUSY,                   /* at work, or asleep for a while (no room ahead) */
    XP_POP_IDLE,                   /* asleep until a writer wakes it */
    XP_POP_STOP,                   /* told to stop; XP_POP_NONE once it has */
};
#define XP_MAX_CHUNKS ((uint64_t)XP_WINDOW_CHUNKS * XP_WINDOW_SLOTS)

struct xp_journal {
    xp_journal_hot hot;            /* gen: unique per journal object; live_gen: gen, in a
                                      page zeroed in fork children (see "fork" in
                                      xp_journal_writer.c) */
    xp_file_id id;                 /* the file we created ("Descriptors", xp_journal_space.c) */
    size_t page;
    size_t stride;                 /* bytes between chunk slots in a window */
    size_t window_len;             /* XP_WINDOW_CHUNKS * stride */
    xp_journal_header *hdr;        /* the mapped header page (chunks_used hint) */
    char **windows;                /* see below */
    char *path;
    /* What changes, on a cache line of its own: the line above is read by
     * every reservation of every thread. */
    _Alignas(64) _Atomic uint64_t next_chunk;  /* next chunk index to hand out */
    _Atomic uint64_t file_chunks;  /* chunks the file holds; release-stored after growth */
    _Atomic uint64_t lost;
    _Atomic uint64_t retry_after;  /* CLOCK_MONOTONIC_COARSE ns; 0: no growth failure */
    _Atomic int grow_err;          /* errno of the last failed growth: the loss's reason */
    atomic_bool abandoned;
    /* Backpressure (xp_journal_set_backlog): the bound on the blocks on
     * disk (0: none), whether a writer waited since the ingest last asked,
     * and how often one waited to the limit. */
    _Atomic uint64_t backlog_max;
    atomic_bool backlog_no_waits;  /* xp_journal_stop_waits */
    atomic_bool backlogged;
    _Atomic uint64_t backlog_overruns;
    /* The populator: chunks [from, to) had their pages populated by it,
     * as from << 32 | to (only it stores; chunk indexes stay under 2^32,
     * XP_MAX_CHUNKS); pop_state is XP_POP_*; how many chunks their writers
     * populated themselves (meta, at stop). */
    _Atomic uint64_t populated;
    _Atomic uint32_t pop_state;
    _Atomic uint64_t self_populated;
    pthread_mutex_t grow_lock;     /* held only to grow the file (rare), never across a CUDA call */
    /* The unused rest of the chunks of threads that ended (see "Threads
     * that end" in xp_journal_writer.c), taken by the next thread that needs a chunk.
     * Under spare_lock, held for a few loads and stores only. */
    pthread_mutex_t spare_lock;
    pthread_key_t exit_key;        /* its destructor hands a thread's chunk over */
    bool has_exit_key;
    unsigned n_spare;
    struct { char *next, *end; } spare[XP_SPARE_SLOTS];
};
/* windows[w]: base of window w or NULL.  Written under grow_lock before
 * file_chunks covers it, read by takers after an acquire of file_chunks. */


/* Where chunk idx is mapped: its window slot, which maps the file from the
 * page that holds the chunk's start, and (delta) how far into that page the
 * chunk starts (0 with 4 KiB pages; see "Layout in memory" in
 * xp_journal_writer.c). */
static inline char *xp_chunk_slot(const xp_journal *j, uint64_t idx, size_t *delta)
{
    uint64_t off = XP_JOURNAL_HEADER_SIZE + idx * (uint64_t)XP_CHUNK_SIZE;
    *delta = (size_t)(off & (j->page - 1));
    return j->windows[idx / XP_WINDOW_CHUNKS] + (idx % XP_WINDOW_CHUNKS) * j->stride;
}

/* Grows the file to hold at least `need` chunks, by `step` chunks at least
 * (0: a quarter of the file, XP_GROW_MIN to XP_GROW_MAX, and at most a
 * quarter of the backlog's bound), and maps them, through fd, or (fd < 0)
 * through the file opened again by path and checked (see "Descriptors" in
 * xp_journal_space.c).  Returns 0 or an errno value (also kept in
 * grow_err). */
int xp_journal_grow(xp_journal *j, int fd, uint64_t need, uint64_t step);

/* Before a growth to `need` chunks: waits while the journal's blocks on
 * disk and the growth step would pass the backlog's bound
 * (xp_journal_set_backlog) and no one else grew the file that far.
 * Returns the step to grow by (xp_journal_grow's): 0, the usual one, or 1 for a
 * thread that may not wait (the ingest's own, or any once exit stopped the
 * waits) when the usual one would pass the bound: the least growth. */
uint64_t xp_wait_backlog(xp_journal *j, uint64_t need);

/* Called by the writer that has just claimed chunk idx: makes its pages
 * ready (populated by the populator ahead of time, or now by the calling
 * thread) and wakes the populator when few chunks are left ready ahead. */
void xp_chunk_ready(xp_journal *j, uint64_t idx);

/* Stops the populator (xp_journal_stop_populator) and waits until it has
 * left: before the journal is freed. */
void xp_populator_join(xp_journal *j);

#endif
