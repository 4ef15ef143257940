/* xp_journal_space.c: room ahead of the journal's writers: growth, backlog bound, populated pages. */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "xp_journal_int.h"

/*
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

/* xp_journal_int.h.  The only lock of the writer; taken once per growth
 * step, not per chunk or record. */
int xp_journal_grow(xp_journal *j, int fd, uint64_t need, uint64_t step)
{
    if (need > XP_MAX_CHUNKS)
        return EFBIG;
    int err = 0;
    pthread_mutex_lock(&j->grow_lock);
    uint64_t have = atomic_load_explicit(&j->file_chunks, memory_order_relaxed);
    if (have < need) {
        if (step == 0)
            step = xp_grow_step(j, have);
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

void xp_journal_stop_waits(xp_journal *j)
{
    atomic_store_explicit(&j->backlog_no_waits, true, memory_order_relaxed);
}

bool xp_journal_backlogged(xp_journal *j)
{
    return atomic_exchange_explicit(&j->backlogged, false, memory_order_relaxed);
}

uint64_t xp_journal_backlog_overruns(const xp_journal *j)
{
    return atomic_load_explicit(&j->backlog_overruns, memory_order_relaxed);
}

/* The journal's blocks on disk, in bytes: every chunk the file holds, the
 * ones populated ahead of the writers included (0 when stat fails: no
 * backlog is then seen). */
static uint64_t xp_backlog_bytes(const xp_journal *j)
{
    struct stat st;
    return stat(j->path, &st) == 0 ? (uint64_t)st.st_blocks * 512 : 0;
}

/* The usual growth step of the file as it is now. */
static uint64_t xp_usual_step(xp_journal *j)
{
    return xp_grow_step(j, atomic_load_explicit(&j->file_chunks, memory_order_relaxed));
}

/* Whether the journal's blocks on disk and a growth by `step` chunks (0: the
 * usual step) would pass max bytes (0: no bound). */
static bool xp_backlog_over(xp_journal *j, uint64_t max, uint64_t step)
{
    if (max == 0)
        return false;
    if (step == 0)
        step = xp_usual_step(j);
    return xp_backlog_bytes(j) + step * XP_CHUNK_SIZE > max;
}

/* Before a growth: waits while the journal's blocks on disk and the growth
 * step would pass the bound.  Only system calls that are safe in a signal
 * handler (stat, nanosleep), errno kept: a hook may run in one. */
uint64_t xp_wait_backlog(xp_journal *j, uint64_t need)
{
    uint64_t max = atomic_load_explicit(&j->backlog_max, memory_order_relaxed);
    if (max == 0)
        return 0;
    int saved = errno;
    if (xp_never_wait || atomic_load_explicit(&j->backlog_no_waits, memory_order_relaxed)) {
        /* The least growth, not the usual step (up to a quarter of the bound
         * in allocated blocks) for what may be a few records, such as exit's
         * meta; past the bound even so, counted like a wait that ran out. */
        uint64_t on_disk = xp_backlog_bytes(j), step = 0;
        if (on_disk + xp_usual_step(j) * XP_CHUNK_SIZE > max) {
            step = 1;
            if (on_disk + step * XP_CHUNK_SIZE > max)
                atomic_fetch_add_explicit(&j->backlog_overruns, 1, memory_order_relaxed);
        }
        errno = saved;
        return step;
    }
    for (unsigned waited = 0;; waited += XP_BACKLOG_POLL_MS) {
        /* Grown meanwhile, by the populator, under the same bound. */
        if (atomic_load_explicit(&j->file_chunks, memory_order_acquire) >= need ||
            !xp_backlog_over(j, max, 0))
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
    return 0;
}

/*
 * The populator.  Populating a fresh chunk's pages (the page cache's new
 * pages of the file: 85 us per 256 KiB chunk on ext4) was a quarter of a
 * recorded copy's time in the thread that took the chunk, 44 ns a record
 * (issue 15).  A thread of ours does it before the writers get there: it
 * keeps the XP_POP_AHEAD chunks past next_chunk in the file (growing it
 * when the backlog's bound allows that without waiting) and populated, and
 * publishes how far in `populated`.  A writer that claims a chunk below it
 * writes into pages already there; above it (the populator behind, asleep
 * for lack of room, or absent: fork children before their first call, unit
 * tests, a kernel without MADV_POPULATE_WRITE) the writer populates the
 * chunk itself, as before: nothing ever waits for the populator.
 *
 * Waking.  The populator sleeps on pop_state once the chunks ahead are
 * ready; the writer that finds fewer than XP_POP_LOW left (once a chunk, in
 * xp_chunk_ready) wakes it with one FUTEX_WAKE, and only when it sleeps:
 * in a steady stream one system call per XP_POP_AHEAD - XP_POP_LOW chunks,
 * none while it works, none per record.  Lost wake-ups are excluded by
 * Dekker's pattern: the writer's claim of next_chunk, then its load of
 * pop_state; the populator's store of XP_POP_IDLE, then its load of
 * next_chunk (all seq_cst).  A futex and an atomic: safe in a signal
 * handler, errno kept.
 *
 * Races it leaves.  A chunk claimed while the populator populates it is
 * populated twice (the second is quick: the pages are there).  A writer
 * that claims, fills and leaves such a chunk (MADV_DONTNEED) before the
 * populator's madvise is done gets its pages mapped again, page cache the
 * process keeps mapped until exit: at most a chunk per such race, which
 * needs 256 KiB of records written in under ~85 us.
 *
 * Lifetime.  Started by the session (xp_journal_start_populator, on a
 * thread with every signal blocked) and told to stop at exit without being
 * waited for (it then leaves at its next look at pop_state, within one
 * chunk's work; it touches only the journal, which stays mapped until the
 * process is gone).  xp_journal_close waits for it: that frees the journal.
 * A fork child has no populator until its own session starts one with its
 * own journal.
 */

/* The longest the populator sleeps when it could not make room ahead (the
 * backlog over its bound, or growth failed): as often as a waiting writer
 * looks, so that it grows the file as soon as the ingest has made room,
 * ahead of the writers again.  A chunk taken wakes it sooner (a wake-up
 * per chunk while it is stuck, not per record). */
#define XP_POP_RETRY_NS (XP_BACKLOG_POLL_MS * 1000000L)

static long xp_futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
    return syscall(SYS_futex, (uint32_t *)word, op | FUTEX_PRIVATE_FLAG, val, timeout, NULL, 0);
}

/* Populates chunk idx's pages, writable, in one system call instead of a
 * page fault for each of its 64 pages on the records that first touch them.
 * Returns 0 or madvise's errno (EINVAL: a kernel before 5.14; a failure is
 * reported, never raised as SIGBUS); the caller's errno is kept. */
static int xp_populate(xp_journal *j, uint64_t idx)
{
    size_t delta;
    char *slot = xp_chunk_slot(j, idx, &delta);
    int saved = errno;
    int rc = madvise(slot, (XP_CHUNK_SIZE + delta) & ~(j->page - 1), MADV_POPULATE_WRITE);
    rc = rc == 0 ? 0 : errno;
    errno = saved;
    return rc;
}

_Static_assert(XP_MAX_CHUNKS <= UINT32_MAX, "chunk indexes fit xp_journal.populated's halves");

void xp_chunk_ready(xp_journal *j, uint64_t idx)
{
    uint64_t range = atomic_load_explicit(&j->populated, memory_order_acquire);
    uint64_t ready = range & UINT32_MAX;
    if (idx < range >> 32 || idx >= ready) {
        (void)xp_populate(j, idx);   /* the populator is behind, or there is none */
        atomic_fetch_add_explicit(&j->self_populated, 1, memory_order_relaxed);
    }
    uint32_t idle = XP_POP_IDLE;
    if (ready < idx + 1 + XP_POP_LOW &&
        atomic_load_explicit(&j->pop_state, memory_order_seq_cst) == XP_POP_IDLE &&
        atomic_compare_exchange_strong(&j->pop_state, &idle, XP_POP_BUSY)) {
        int saved = errno;
        (void)xp_futex(&j->pop_state, FUTEX_WAKE, 1, NULL);
        errno = saved;
    }
}

/* Whether the file holds chunk need - 1, grown if needed and the backlog's
 * bound allows it now: the populator never waits for the ingest.  It grows
 * the file by small steps (XP_POP_STEP), so that the file's end stays at
 * most XP_POP_AHEAD + XP_POP_STEP chunks past next_chunk (6 MiB), where the
 * writers' steps left up to a quarter of the file (16 MiB) ahead. */
static bool xp_pop_room(xp_journal *j, uint64_t need)
{
    if (need <= atomic_load_explicit(&j->file_chunks, memory_order_acquire))
        return true;
    if (xp_backlog_over(j, atomic_load_explicit(&j->backlog_max, memory_order_relaxed),
                        XP_POP_STEP))
        return false;
    return xp_journal_grow(j, -1, need, XP_POP_STEP) == 0;
}

/* Sleeps (XP_POP_IDLE: a writer that takes a chunk wakes it) at most
 * timeout (NULL: until woken), unless told to stop, or (`recheck`) a writer
 * claimed a chunk between its last look and its store of XP_POP_IDLE and
 * did not wake it because it was busy then: Dekker's other half.
 * populated: the end of what it has populated. */
static void xp_pop_sleep(xp_journal *j, uint64_t populated, bool recheck,
                         const struct timespec *timeout)
{
    uint32_t busy = XP_POP_BUSY;
    if (!atomic_compare_exchange_strong(&j->pop_state, &busy, XP_POP_IDLE))
        return;   /* told to stop */
    if (!recheck || populated >= atomic_load(&j->next_chunk) + XP_POP_LOW)
        (void)xp_futex(&j->pop_state, FUTEX_WAIT, XP_POP_IDLE, timeout);
    uint32_t idle = XP_POP_IDLE;
    atomic_compare_exchange_strong(&j->pop_state, &idle, XP_POP_BUSY);
}

static void *xp_populator_main(void *arg)
{
    xp_journal *j = arg;
    (void)prctl(PR_SET_NAME, "xferprof-pop", 0, 0, 0);
    uint64_t from = 0, p = 0;   /* it has populated chunks [from, p) */
    while (atomic_load(&j->pop_state) != XP_POP_STOP) {
        uint64_t next = atomic_load_explicit(&j->next_chunk, memory_order_relaxed);
        /* Behind (chunks taken before it got there: their writers populated
         * them): on from the chunk after the one being taken now, not
         * racing its writer for it. */
        if (p <= next)
            from = p = next + 1;
        if (p < next + XP_POP_AHEAD) {
            if (!xp_pop_room(j, p + 1)) {
                /* Until a writer takes a chunk (perhaps one it grew the
                 * file for, after waiting for the ingest), or a while. */
                struct timespec ts = {0, XP_POP_RETRY_NS};
                xp_pop_sleep(j, p, false, &ts);
                continue;
            }
            /* Taken meanwhile: its writer populates it (see "Races"). */
            if (p < atomic_load_explicit(&j->next_chunk, memory_order_relaxed))
                continue;
            if (xp_populate(j, p) == EINVAL)
                break;   /* not on this kernel: the writers go on as before it */
            p++;
            atomic_store_explicit(&j->populated, from << 32 | p, memory_order_release);
            continue;
        }
        xp_pop_sleep(j, p, true, NULL);
    }
    /* The last touch of j: xp_journal_close may free it once it reads this. */
    atomic_store(&j->pop_state, XP_POP_NONE);
    (void)xp_futex(&j->pop_state, FUTEX_WAKE, 1, NULL);
    return NULL;
}

bool xp_journal_start_populator(xp_journal *j, xp_spawn_fn spawn)
{
    pthread_attr_t attr;
    if (j == NULL || pthread_attr_init(&attr) != 0)
        return false;
    pthread_t t;
    /* Detached: exit does not wait for it (see "Lifetime"); a small stack,
     * it calls nothing deep. */
    bool made = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0 &&
                pthread_attr_setstacksize(&attr, 64 * 1024) == 0;
    atomic_store(&j->pop_state, XP_POP_BUSY);
    made = made && spawn(&t, &attr, xp_populator_main, j);
    if (!made)
        atomic_store(&j->pop_state, XP_POP_NONE);
    pthread_attr_destroy(&attr);
    return made;
}

void xp_journal_stop_populator(xp_journal *j)
{
    if (j == NULL)
        return;
    uint32_t s = atomic_load(&j->pop_state);
    while (s != XP_POP_NONE && s != XP_POP_STOP &&
           !atomic_compare_exchange_weak(&j->pop_state, &s, XP_POP_STOP)) {
    }
    if (s != XP_POP_NONE)
        (void)xp_futex(&j->pop_state, FUTEX_WAKE, 1, NULL);
}

uint64_t xp_journal_chunks(const xp_journal *j, uint64_t *self_populated)
{
    *self_populated = atomic_load_explicit(&j->self_populated, memory_order_relaxed);
    return atomic_load_explicit(&j->next_chunk, memory_order_relaxed);
}

void xp_populator_join(xp_journal *j)
{
    xp_journal_stop_populator(j);
    uint32_t s;
    while ((s = atomic_load(&j->pop_state)) == XP_POP_STOP)
        (void)xp_futex(&j->pop_state, FUTEX_WAIT, s, NULL);
}
