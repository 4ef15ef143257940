/* xp_journal_writer.c: writing the journal: per-thread chunks of a shared file mapping. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "xp_checksum.h"
#include "xp_fds.h"
#include "xp_journal.h"

/*
 * Layout in memory.  Chunks are mapped one by one (MAP_SHARED, MAP_FIXED) when
 * the file grows to hold them, into "windows": address ranges reserved
 * PROT_NONE ahead of time, XP_WINDOW_CHUNKS chunks each, where chunk i sits at
 * window[i / XP_WINDOW_CHUNKS] + (i % XP_WINDOW_CHUNKS) * stride.  With 4 KiB
 * pages stride == XP_CHUNK_SIZE, so neighbouring chunks are neighbouring
 * mappings of neighbouring file offsets and the kernel merges them into one
 * VMA: a 16 GiB journal does not run into vm.max_map_count (65530), and close
 * unmaps a window in one call.  Larger pages (16/64 KiB) cannot map a chunk
 * at its exact offset (the 4 KiB header shifts every chunk off a page
 * boundary), so there each chunk maps from the page below its start and gets
 * a stride of one extra page: correct, just no merging.
 *
 * Crash safety.  Records live in the page cache through a MAP_SHARED mapping
 * of the file, so once xp_journal_commit has returned, a SIGKILL or crash of
 * the process cannot lose them: the pages belong to the file, not to the
 * process.  No msync is needed for that; surviving power loss or a kernel
 * crash is out of scope (it would cost an msync per record or per chunk).
 *
 * fork.  A child must never write into the parent's chunks: its copy of a
 * thread's cached chunk is the same file pages, at the offsets the parent
 * writes next.  xp_journal_abandon_after_fork drops the cache, but a hooked
 * call could come first (from an atfork handler registered before the
 * engine's).  So the hot path compares the thread's cached generation with
 * one kept in a page marked MADV_WIPEONFORK: in a child it reads 0, no cached
 * chunk matches, and the slow path refuses the journal.  (Kernels before
 * 4.14 lack the flag; there abandoning is the only guard.)
 *
 * Threads that end.  A chunk belongs to one thread at a time, but not for
 * ever: when a thread ends (a pthread key destructor), the unused rest of
 * its chunk is handed to the next thread that needs one, which goes on
 * writing after the last record of the first.  Every record the ended
 * thread reserved is committed (a hook returns only after its commit), so a
 * reader sees one sequence of whole records, as from one writer.  Without
 * this, 4,000 short-lived threads making one copy each took 4,000 chunks:
 * a 1 GiB journal for 4,000 records (issue 14 item 5).
 *
 * Disk space.  The file grows in steps of several chunks under grow_lock.
 * Blocks are reserved with fallocate(FALLOC_FL_KEEP_SIZE) before ftruncate
 * makes them visible, because a store into a mapped hole on a full disk
 * kills the program with SIGBUS; where the file system has no fallocate the
 * growth is best effort (plain ftruncate).  ENOSPC, EDQUOT and a file size
 * limit make the reservation fail: the record is counted as lost.
 *
 * Descriptors.  None is held between uses: programs close every descriptor
 * >= 3 (daemons, close_range, launchers) and open their own files in their
 * place, and a descriptor kept here would then be the program's file, which
 * growth would extend and the next chunk's mapping would write into (issue
 * 14 item 7).  The file is created with O_EXCL | O_NOFOLLOW (a symlink or a
 * file planted at the path is refused, never followed or truncated: item
 * 11), its identity (st_dev, st_ino) is kept, and growth opens it again by
 * path with O_NOFOLLOW, checks it is still that file, extends it, maps the
 * new chunks and closes it.  Taking a chunk needs no descriptor at all.  The
 * mappings keep the inode alive, so its number cannot be reused by another
 * file while we run.  Growth also leaves XP_FD_RESERVE_GROW descriptors free
 * for the program (item 18): nearer the limit than that, records are lost
 * and counted (reason: the descriptor limit) rather than the program's own
 * open() failing for us.  What is not covered: another thread of the
 * program closing descriptors in the microseconds between our open and our
 * close (the number could then be reused under us).
 */

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
};
#define XP_MAX_CHUNKS ((uint64_t)XP_WINDOW_CHUNKS * XP_WINDOW_SLOTS)
/* After the journal failed to grow, reservations that need a new chunk fail
 * at once for this long, instead of each trying the file system again. */
#define XP_RETRY_NS 100000000ull

struct xp_journal {
    xp_journal_hot hot;            /* gen: unique per journal object; live_gen: gen, in a
                                      page zeroed in fork children (see the top) */
    xp_file_id id;                 /* the file we created (see "Descriptors" at the top) */
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
    atomic_bool backlogged;
    _Atomic uint64_t backlog_overruns;
    pthread_mutex_t grow_lock;     /* held only to grow the file (rare), never across a CUDA call */
    /* The unused rest of the chunks of threads that ended (see "Threads
     * that end" at the top), taken by the next thread that needs a chunk.
     * Under spare_lock, held for a few loads and stores only. */
    pthread_mutex_t spare_lock;
    pthread_key_t exit_key;        /* its destructor hands a thread's chunk over */
    bool has_exit_key;
    unsigned n_spare;
    struct { char *next, *end; } spare[XP_SPARE_SLOTS];
};
/* windows[w]: base of window w or NULL.  Written under grow_lock before
 * file_chunks covers it, read by takers after an acquire of file_chunks. */

/* Source of xp_journal.gen: a new value per journal, so a thread's cached
 * chunk is never used with another journal, even one malloc placed at the
 * same address (or the child's journal after fork).  Owned by this file. */
static _Atomic uint64_t xp_journal_generations;


static bool xp_valid_size(uint32_t size)
{
    return size >= sizeof(xp_rec_header) && size <= XP_MAX_RECORD && (size & 7u) == 0;
}

static uint64_t xp_coarse_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Reserves address space for the windows covering chunks [from, to). */
static int xp_make_windows(xp_journal *j, uint64_t from, uint64_t to)
{
    for (uint64_t w = from / XP_WINDOW_CHUNKS; w <= (to - 1) / XP_WINDOW_CHUNKS; w++) {
        if (j->windows[w] != NULL)
            continue;
        void *p = mmap(NULL, j->window_len, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
            return errno;
        j->windows[w] = p;
    }
    return 0;
}

/* Makes the file `chunks` chunks long; the disk blocks first (see the top). */
static int xp_extend_file(int fd, uint64_t have, uint64_t chunks)
{
    off_t from = (off_t)(XP_JOURNAL_HEADER_SIZE + have * XP_CHUNK_SIZE);
    off_t to = (off_t)(XP_JOURNAL_HEADER_SIZE + chunks * XP_CHUNK_SIZE);
    /* A file size limit would make ftruncate raise SIGXFSZ, which kills the
     * program by default: refuse before the kernel does. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (rlim_t)to > rl.rlim_cur)
        return EFBIG;
    int rc;
    do
        rc = fallocate(fd, FALLOC_FL_KEEP_SIZE, from, to - from);
    while (rc != 0 && errno == EINTR);
    if (rc != 0 && (errno == ENOSPC || errno == EDQUOT || errno == EFBIG))
        return errno;
    /* Other failures (EOPNOTSUPP, ENOSYS...): no preallocation here; go on. */
    do
        rc = ftruncate(fd, to);
    while (rc != 0 && errno == EINTR);
    return rc == 0 ? 0 : errno;
}

/* Where chunk idx is mapped: its window slot, which maps the file from the
 * page that holds the chunk's start, and (delta) how far into that page the
 * chunk starts (0 with 4 KiB pages; see "Layout in memory" at the top). */
static char *xp_chunk_slot(const xp_journal *j, uint64_t idx, size_t *delta)
{
    uint64_t off = XP_JOURNAL_HEADER_SIZE + idx * (uint64_t)XP_CHUNK_SIZE;
    *delta = (size_t)(off & (j->page - 1));
    return j->windows[idx / XP_WINDOW_CHUNKS] + (idx % XP_WINDOW_CHUNKS) * j->stride;
}

/* Maps chunks [from, to) of the file (fd) into their window slots.  Returns
 * how many were mapped (fewer when mmap fails). */
static uint64_t xp_map_chunks(xp_journal *j, int fd, uint64_t from, uint64_t to)
{
    for (uint64_t idx = from; idx < to; idx++) {
        size_t delta;
        char *slot = xp_chunk_slot(j, idx, &delta);
        uint64_t map_off = XP_JOURNAL_HEADER_SIZE + idx * (uint64_t)XP_CHUNK_SIZE - delta;
        size_t len = (XP_CHUNK_SIZE + delta + j->page - 1) & ~(j->page - 1);
        if (mmap(slot, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
                 (off_t)map_off) == MAP_FAILED)
            return idx - from;
    }
    return to - from;
}

/* Chunks one growth adds to a file of `have`: a quarter of it, from
 * XP_GROW_MIN to XP_GROW_MAX, and at most a quarter of the backlog's bound
 * (xp_journal_set_backlog), which the step must fit under. */
static uint64_t xp_grow_step(xp_journal *j, uint64_t have)
{
    uint64_t step = have / 4;
    step = step < XP_GROW_MIN ? XP_GROW_MIN : step > XP_GROW_MAX ? XP_GROW_MAX : step;
    uint64_t cap = atomic_load_explicit(&j->backlog_max, memory_order_relaxed) / 4 / XP_CHUNK_SIZE;
    if (cap != 0 && step > cap)
        step = cap;
    return step;
}

/* Grows the file to hold at least `need` chunks and maps them, through fd, or
 * (fd < 0) through the file opened again by path and checked (see
 * "Descriptors" at the top).  The only lock of the writer; taken once per
 * growth step, not per chunk or record. */
static int xp_grow(xp_journal *j, int fd, uint64_t need)
{
    if (need > XP_MAX_CHUNKS)
        return EFBIG;
    int err = 0;
    pthread_mutex_lock(&j->grow_lock);
    uint64_t have = atomic_load_explicit(&j->file_chunks, memory_order_relaxed);
    if (have < need) {
        uint64_t step = xp_grow_step(j, have);
        uint64_t want = have + step > need ? have + step : need;
        if (want > XP_MAX_CHUNKS)
            want = XP_MAX_CHUNKS;
        int own = fd < 0 ? xp_fd_reopen(j->path, O_RDWR, &j->id, XP_FD_RESERVE_GROW) : fd;
        err = own < 0 ? errno : xp_make_windows(j, have, want);
        if (err == 0) {
            err = xp_extend_file(own, have, want);
            if (err != 0 && want > need) {
                /* Near the limit of the disk: perhaps one chunk still fits. */
                want = need;
                err = xp_extend_file(own, have, want);
            }
        }
        if (err == 0) {
            /* Chunks that could not be mapped stay zero: readers skip them. */
            uint64_t mapped = xp_map_chunks(j, own, have, want);
            if (mapped == 0)
                err = errno;
            atomic_store_explicit(&j->file_chunks, have + mapped, memory_order_release);
        }
        if (fd < 0 && own >= 0)
            close(own);
    }
    pthread_mutex_unlock(&j->grow_lock);
    if (err != 0)
        atomic_store_explicit(&j->grow_err, err, memory_order_relaxed);
    return err;
}

/* Raises the header's chunks_used hint to at least n. */
static void xp_hint_chunks(xp_journal *j, uint64_t n)
{
    uint64_t cur = __atomic_load_n(&j->hdr->chunks_used, __ATOMIC_RELAXED);
    while (cur < n && !__atomic_compare_exchange_n(&j->hdr->chunks_used, &cur, n, true,
                                                   __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

/* The longest a growth waits for the ingest (xp_journal_set_backlog), and
 * how often it looks: at ~1.5 M records a second, the ingest stores about
 * 40 MiB of records in that time. */
#define XP_BACKLOG_WAIT_MS 2000
#define XP_BACKLOG_POLL_MS 2

static __thread bool xp_never_wait __attribute__((tls_model("initial-exec")));

void xp_journal_never_wait(void)
{
    xp_never_wait = true;
}

void xp_journal_set_backlog(xp_journal *j, uint64_t max_bytes)
{
    atomic_store_explicit(&j->backlog_max, max_bytes, memory_order_relaxed);
}

bool xp_journal_backlogged(xp_journal *j)
{
    return atomic_exchange_explicit(&j->backlogged, false, memory_order_relaxed);
}

uint64_t xp_journal_backlog_overruns(const xp_journal *j)
{
    return atomic_load_explicit(&j->backlog_overruns, memory_order_relaxed);
}

/* Before a growth: waits while the journal's blocks on disk and the growth
 * step would pass the bound.  Only system calls that are safe in a signal
 * handler (stat, nanosleep), errno kept: a hook may run in one. */
static void xp_wait_backlog(xp_journal *j)
{
    uint64_t max = atomic_load_explicit(&j->backlog_max, memory_order_relaxed);
    if (max == 0 || xp_never_wait)
        return;
    int saved = errno;
    for (unsigned waited = 0;; waited += XP_BACKLOG_POLL_MS) {
        struct stat st;
        uint64_t step = xp_grow_step(j, atomic_load_explicit(&j->file_chunks, memory_order_relaxed));
        if (stat(j->path, &st) != 0 || (uint64_t)st.st_blocks * 512 + step * XP_CHUNK_SIZE <= max)
            break;
        if (waited >= XP_BACKLOG_WAIT_MS) {
            atomic_fetch_add_explicit(&j->backlog_overruns, 1, memory_order_relaxed);
            break;
        }
        atomic_store_explicit(&j->backlogged, true, memory_order_relaxed);
        struct timespec ts = {0, XP_BACKLOG_POLL_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
    errno = saved;
}

/* Takes the next chunk for the calling thread and writes its header.  An
 * index is claimed only when the file already holds it, mapped (CAS, not
 * fetch_add), so failing to grow never leaves holes to be filled later. */
static char *xp_take_chunk(xp_journal *j)
{
    uint64_t idx = atomic_load_explicit(&j->next_chunk, memory_order_relaxed);
    for (;;) {
        uint64_t have = atomic_load_explicit(&j->file_chunks, memory_order_acquire);
        if (idx < have) {
            if (atomic_compare_exchange_weak_explicit(&j->next_chunk, &idx, idx + 1,
                                                      memory_order_relaxed,
                                                      memory_order_relaxed))
                break;
            continue;
        }
        xp_wait_backlog(j);
        if (xp_grow(j, -1, idx + 1) != 0)
            return NULL;
    }
    size_t delta;
    char *slot = xp_chunk_slot(j, idx, &delta);
    char *c = slot + delta;
    /* The chunk's pages in one system call, not one page fault for each
     * of its 64 pages on the records that first touch them (issue 15: the
     * faults were about half of a recorded copy's time).  Best effort:
     * kernels before 5.14 say EINVAL and the pages fault in as before (a
     * failure is reported, never raised as SIGBUS).  errno is the program's. */
    int saved = errno;
    (void)madvise(slot, (XP_CHUNK_SIZE + delta) & ~(j->page - 1), MADV_POPULATE_WRITE);
    errno = saved;
    xp_chunk_header *ch = (xp_chunk_header *)c;
    ch->tid = (uint32_t)syscall(SYS_gettid);
    ch->index = idx;
    /* Last, so a reader that sees the magic sees tid and index too. */
    __atomic_store_n(&ch->magic, XP_CHUNK_MAGIC, __ATOMIC_RELEASE);
    xp_hint_chunks(j, idx + 1);
    return c;
}

/* Whether this is (still) the process that created the journal. */
static bool xp_owned(const xp_journal *j)
{
    return *j->hot.live_gen == j->hot.gen && !atomic_load_explicit(&j->abandoned, memory_order_relaxed);
}

/* The end of the rest xp_take_spare handed out last (its caller's, read
 * right after; a thread-local would cost TLS every thread pays for). */
static __thread char *xp_spare_end __attribute__((tls_model("initial-exec")));

/* The index of the chunk that ends at end. */
static uint64_t xp_chunk_index(const char *end)
{
    return ((const xp_chunk_header *)(end - XP_CHUNK_SIZE))->index;
}

/* A rest of an ended thread's chunk with room for a record of `size`
 * bytes, after every chunk the calling thread wrote before (`after`: the
 * last one's index + 1, 0 for none): readers deliver chunks in index order,
 * and a thread's records must reach them in the order it wrote them (NVTX
 * push and pop, an allocation and its free).  NULL if none; its end in
 * xp_spare_end. */
static char *xp_take_spare(xp_journal *j, uint32_t size, uint64_t after)
{
    char *p = NULL;
    pthread_mutex_lock(&j->spare_lock);
    for (unsigned i = j->n_spare; i-- > 0;) {
        if ((size_t)(j->spare[i].end - j->spare[i].next) >= size &&
            xp_chunk_index(j->spare[i].end) + 1 > after) {
            p = j->spare[i].next;
            xp_spare_end = j->spare[i].end;
            j->spare[i] = j->spare[--j->n_spare];
            break;
        }
    }
    pthread_mutex_unlock(&j->spare_lock);
    return p;
}

/* Closes the rest [next, end) of a chunk its thread leaves for good with a
 * PAD record, so that a reader of the live journal knows nothing more will
 * come from the chunk (it can then be dropped from the file once ingested,
 * xp_journal_release_done); a rest too small for a record header is the
 * end of the chunk already. */
static void xp_close_rest(char *next, char *end, uint32_t tid)
{
    if (next == NULL || end - next < (ptrdiff_t)sizeof(xp_rec_header))
        return;
    xp_rec_header *h = (xp_rec_header *)(void *)next;
    h->type = XP_REC_PAD;
    h->api = 0;
    h->size = (uint32_t)(end - next);
    h->tid = tid;
    xp_journal_commit(h);
}

/* Lets go of the pages of chunk idx, which the calling thread has left for
 * good (no one writes a chunk after its thread moved on: only the rest of
 * an ended thread's chunk is handed on).  For a shared file mapping
 * MADV_DONTNEED drops the pages from the process, not from the file: the
 * records stay in the page cache for the reader and on disk, and the
 * program's resident memory no longer holds every record ever written
 * (issue 15: 114 MiB for a million copies). */
static void xp_release_chunk(xp_journal *j, uint64_t idx)
{
    size_t delta;
    char *slot = xp_chunk_slot(j, idx, &delta);
    size_t len = (XP_CHUNK_SIZE + delta) & ~(j->page - 1);   /* whole pages of this chunk only */
    if (len > 0)
        (void)madvise(slot, len, MADV_DONTNEED);
}

/* The key destructor of a thread that wrote into j: the rest of its chunk
 * goes to the spares (a full pool keeps the larger rests). */
static void xp_thread_ended(void *arg)
{
    xp_journal *j = arg;
    xp_writer_tls *t = &xp_writer_self;
    if (t->gen != j->hot.gen || !xp_owned(j))
        return;
    /* The rest no one will write: this thread's when too small or not
     * kept, or the kept one it displaces. */
    char *drop_next = t->next, *drop_end = t->end;
    if ((size_t)(t->end - t->next) >= XP_SPARE_MIN) {
        pthread_mutex_lock(&j->spare_lock);
        unsigned slot = j->n_spare;
        if (slot == XP_SPARE_SLOTS) {
            slot = 0;
            for (unsigned i = 1; i < XP_SPARE_SLOTS; i++)
                if (j->spare[i].end - j->spare[i].next < j->spare[slot].end - j->spare[slot].next)
                    slot = i;
            if (j->spare[slot].end - j->spare[slot].next >= t->end - t->next)
                slot = XP_SPARE_SLOTS;   /* every kept rest is larger */
            else {
                drop_next = j->spare[slot].next;
                drop_end = j->spare[slot].end;
            }
        } else {
            j->n_spare++;
            drop_next = drop_end = NULL;
        }
        if (slot < XP_SPARE_SLOTS) {
            j->spare[slot].next = t->next;
            j->spare[slot].end = t->end;
        }
        pthread_mutex_unlock(&j->spare_lock);
    }
    if (drop_end != NULL) {
        int saved = errno;
        xp_close_rest(drop_next, drop_end, (uint32_t)syscall(SYS_gettid));
        xp_release_chunk(j, xp_chunk_index(drop_end));
        errno = saved;
    }
    *t = (xp_writer_tls){0};
}

/* The calling thread leaves its chunk of j (if it has one) for good: the
 * rest is closed and the pages let go. */
static void xp_leave_chunk(xp_journal *j, xp_writer_tls *t)
{
    if (t->gen != j->hot.gen || t->chunk == 0)
        return;
    int saved = errno;
    xp_close_rest(t->next, t->end, (uint32_t)syscall(SYS_gettid));
    xp_release_chunk(j, t->chunk - 1);
    errno = saved;
}

/* Out of line, so that the hot path below stays a leaf without spills. */
__attribute__((noinline, cold)) void *xp_journal_reserve_slow(xp_journal *j, uint32_t size)
{
    if (!xp_valid_size(size) || !xp_owned(j))
        goto lost;
    xp_writer_tls *t = &xp_writer_self;
    if (j->has_exit_key && t->gen != j->hot.gen)
        pthread_setspecific(j->exit_key, j);   /* this thread's first chunk of j */
    char *rest = xp_take_spare(j, size, t->gen == j->hot.gen ? t->chunk : 0);
    if (rest != NULL) {
        xp_leave_chunk(j, t);
        t->gen = j->hot.gen;
        t->next = rest + size;
        t->end = xp_spare_end;
        t->chunk = xp_chunk_index(t->end) + 1;
        return rest;
    }
    uint64_t retry = atomic_load_explicit(&j->retry_after, memory_order_relaxed);
    if (retry != 0 && xp_coarse_ns() < retry)
        goto lost;
    char *c = xp_take_chunk(j);
    if (c == NULL) {
        atomic_store_explicit(&j->retry_after, xp_coarse_ns() + XP_RETRY_NS,
                              memory_order_relaxed);
        goto lost;
    }
    if (retry != 0)
        atomic_store_explicit(&j->retry_after, 0, memory_order_relaxed);
    xp_leave_chunk(j, t);
    t->gen = j->hot.gen;
    t->next = c + sizeof(xp_chunk_header) + size;
    t->end = c + XP_CHUNK_SIZE;
    t->chunk = ((const xp_chunk_header *)c)->index + 1;
    return c + sizeof(xp_chunk_header);
lost:
    atomic_fetch_add_explicit(&j->lost, 1, memory_order_relaxed);
    return NULL;
}

/* The hot path: a bump of the thread's own pointer.  The space is zero
 * because the file was extended with zeros and nothing is written twice. */
void xp_journal_commit(void *record)
{
    if (record == NULL)
        return;
    xp_rec_header *h = record;
    /* A size the caller got wrong must not make us hash past the chunk; the
     * checksum of the header alone then fails in the reader, which counts
     * the record as damaged. */
    uint32_t size = h->size;
    if (size < sizeof *h || size > XP_MAX_RECORD)
        size = sizeof *h;
    __atomic_store_n(&h->commit, xp_record_checksum(h, size), __ATOMIC_RELEASE);
}

uint64_t xp_journal_lost(const xp_journal *j)
{
    return atomic_load_explicit(&j->lost, memory_order_relaxed);
}

const char *xp_journal_lost_reason(const xp_journal *j)
{
    switch (atomic_load_explicit(&j->grow_err, memory_order_relaxed)) {
    case 0: return "the journal could not be written";
    case ENOSPC: return "the journal could not grow: disk full";
    case EDQUOT: return "the journal could not grow: disk quota exceeded";
    case EFBIG: return "the journal could not grow: file size limit (RLIMIT_FSIZE) or 1 TiB";
    case EMFILE:
    case ENFILE:
        return "the journal could not grow: no descriptor free below the process's "
               "descriptor limit (RLIMIT_NOFILE) without taking the program's last ones";
    case ENOENT:
    case ESTALE:
    case ELOOP:
        return "the journal could not grow: its file was removed or replaced (descriptors "
               "are reopened by path and checked)";
    default: return "the journal could not grow or be mapped";
    }
}

const char *xp_journal_path(const xp_journal *j)
{
    return j->path;
}

static void xp_free_private(xp_journal *j)
{
    if (j->hot.live_gen != NULL)
        munmap((void *)j->hot.live_gen, j->page);
    free(j->windows);
    free(j->path);
    free(j);
}

int xp_journal_create(const char *path, const xp_journal_header *header, xp_journal **out)
{
    if (out == NULL || path == NULL)
        return EINVAL;
    *out = NULL;
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || (page & (page - 1)) != 0)
        return EINVAL;
    xp_journal *j = aligned_alloc(64, (sizeof *j + 63) & ~(size_t)63);
    if (j == NULL)
        return ENOMEM;
    memset(j, 0, sizeof *j);
    j->page = (size_t)page;
    j->stride = (XP_JOURNAL_HEADER_SIZE % j->page == 0 && XP_CHUNK_SIZE % j->page == 0)
                    ? XP_CHUNK_SIZE
                    : ((XP_CHUNK_SIZE + j->page - 1) & ~(j->page - 1)) + j->page;
    j->window_len = XP_WINDOW_CHUNKS * j->stride;
    j->windows = calloc(XP_WINDOW_SLOTS, sizeof *j->windows);
    j->path = strdup(path);
    unsigned char *buf = calloc(1, XP_JOURNAL_HEADER_SIZE);
    int err = ENOMEM, fd = -1;
    bool created = false;
    if (j->windows == NULL || j->path == NULL || buf == NULL)
        goto fail;
    if (pthread_mutex_init(&j->grow_lock, NULL) != 0)
        goto fail;
    if (pthread_mutex_init(&j->spare_lock, NULL) != 0) {
        pthread_mutex_destroy(&j->grow_lock);
        goto fail;
    }
    /* Without a key (the process used them all up) chunks are just not
     * handed over. */
    j->has_exit_key = pthread_key_create(&j->exit_key, xp_thread_ended) == 0;

    /* O_EXCL | O_NOFOLLOW: whatever is at the path (a stale journal is the
     * caller's to remove first) is refused with EEXIST or ELOOP, never
     * followed or truncated: a symlink planted there would otherwise have us
     * overwrite its target. */
    fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644);
    if (fd < 0) {
        err = errno;
        goto fail_mutex;
    }
    created = true;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        err = errno;
        goto fail_mutex;
    }
    j->id = (xp_file_id){.dev = st.st_dev, .ino = st.st_ino};
    xp_journal_header h = {0};
    if (header != NULL)
        h = *header;
    h.magic = XP_JOURNAL_MAGIC;
    h.version = XP_JOURNAL_VERSION;
    h.header_size = XP_JOURNAL_HEADER_SIZE;
    h.chunk_size = XP_CHUNK_SIZE;
    h.reserved0 = 0;
    h.chunks_used = 0;
    memcpy(buf, &h, sizeof h);
    /* One write of the whole page: a process killed here leaves an empty
     * file or a whole header, never half of one. */
    for (size_t done = 0; done < XP_JOURNAL_HEADER_SIZE;) {
        ssize_t n = pwrite(fd, buf + done, XP_JOURNAL_HEADER_SIZE - done, (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            err = n < 0 ? errno : EIO;
            goto fail_mutex;
        }
        done += (size_t)n;
    }
    void *hp = mmap(NULL, XP_JOURNAL_HEADER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (hp == MAP_FAILED) {
        err = errno;
        goto fail_mutex;
    }
    j->hdr = hp;
    j->hot.gen = atomic_fetch_add(&xp_journal_generations, 1) + 1;
    void *gp = mmap(NULL, j->page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (gp == MAP_FAILED) {
        err = errno;
        munmap(j->hdr, XP_JOURNAL_HEADER_SIZE);
        goto fail_mutex;
    }
    (void)madvise(gp, j->page, MADV_WIPEONFORK);  /* best effort: see the top */
    *(uint64_t *)gp = j->hot.gen;
    j->hot.live_gen = gp;
    /* The first growth step now, so a full disk shows at start-up (where the
     * profiler can say so) rather than as lost records. */
    err = xp_grow(j, fd, XP_GROW_MIN);
    if (err != 0) {
        for (size_t w = 0; w < XP_WINDOW_SLOTS && j->windows[w] != NULL; w++)
            munmap(j->windows[w], j->window_len);
        munmap(j->hdr, XP_JOURNAL_HEADER_SIZE);
        goto fail_mutex;
    }
    close(fd);   /* none is kept: see "Descriptors" at the top */
    free(buf);
    *out = j;
    return 0;

fail_mutex:
    if (j->has_exit_key)
        pthread_key_delete(j->exit_key);
    pthread_mutex_destroy(&j->spare_lock);
    pthread_mutex_destroy(&j->grow_lock);
fail:
    if (fd >= 0)
        close(fd);
    if (created)
        unlink(path);
    free(buf);
    xp_free_private(j);
    return err;
}

void xp_journal_close(xp_journal *j)
{
    if (j == NULL)
        return;
    xp_writer_tls *t = &xp_writer_self;
    if (t->gen == j->hot.gen)
        *t = (xp_writer_tls){0};
    if (xp_owned(j)) {
        /* A window holds its chunks' mappings: one munmap takes both. */
        for (size_t w = 0; w < XP_WINDOW_SLOTS; w++)
            if (j->windows[w] != NULL)
                munmap(j->windows[w], j->window_len);
        munmap(j->hdr, XP_JOURNAL_HEADER_SIZE);
        /* No destructor may run on j once it is freed. */
        if (j->has_exit_key)
            pthread_key_delete(j->exit_key);
        pthread_mutex_destroy(&j->spare_lock);
        pthread_mutex_destroy(&j->grow_lock);
    }
    /* A fork child's copy: the mappings are left alone, and so is the
     * mutex, which a parent thread may have held at the fork. */
    xp_free_private(j);
}

/* The child has one thread, this one, so only its cache needs dropping; the
 * parent's other threads' caches were not copied into live threads.  The
 * chunk and header mappings, the windows and this object are deliberately
 * leaked: the mappings show the parent's file, which the parent still
 * writes, and grow_lock may have been held by a parent thread at the fork.
 * xp_journal_close on the object afterwards frees only the private memory. */
void xp_journal_abandon_after_fork(xp_journal *j)
{
    if (j == NULL)
        return;
    atomic_store(&j->abandoned, true);
    xp_writer_tls *t = &xp_writer_self;
    if (t->gen == j->hot.gen)
        *t = (xp_writer_tls){0};
}

void xp_journal_put_meta(xp_journal *j, uint32_t tid, const char *key, const char *value)
{
    size_t kl = strlen(key), vl = strlen(value);
    if (kl > 1000 || vl > 60000)
        return;
    uint32_t size = xp_record_size(sizeof(xp_rec_meta) + kl + 1 + vl + 1);
    xp_rec_meta *m = xp_journal_reserve(j, size);
    if (m == NULL)
        return;
    m->h.type = XP_REC_META;
    m->h.size = size;
    m->h.tid = tid;
    m->key_len = (uint16_t)kl;
    m->value_len = (uint32_t)vl;
    char *p = (char *)(m + 1);
    memcpy(p, key, kl + 1);
    memcpy(p + kl + 1, value, vl + 1);
    xp_journal_commit(m);
}
