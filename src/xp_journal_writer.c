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
#include "xp_journal_int.h"

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
 * The file's growth, its descriptors, the backlog bound and the populator
 * that faults chunks in before writers take them: xp_journal_space.c.
 */

/* After the journal failed to grow, reservations that need a new chunk fail
 * at once for this long, instead of each trying the file system again. */
#define XP_RETRY_NS 100000000ull

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

/* Raises the header's chunks_used hint to at least n. */
static void xp_hint_chunks(xp_journal *j, uint64_t n)
{
    uint64_t cur = __atomic_load_n(&j->hdr->chunks_used, __ATOMIC_RELAXED);
    while (cur < n && !__atomic_compare_exchange_n(&j->hdr->chunks_used, &cur, n, true,
                                                   __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
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
            /* seq_cst: ordered before xp_chunk_ready's look at whether the
             * populator sleeps (the same locked instruction on x86). */
            if (atomic_compare_exchange_weak_explicit(&j->next_chunk, &idx, idx + 1,
                                                      memory_order_seq_cst,
                                                      memory_order_relaxed))
                break;
            continue;
        }
        if (xp_journal_grow(j, -1, idx + 1, xp_wait_backlog(j, idx + 1)) != 0)
            return NULL;
    }
    xp_chunk_ready(j, idx);
    size_t delta;
    char *c = xp_chunk_slot(j, idx, &delta) + delta;
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
    err = xp_journal_grow(j, fd, XP_GROW_MIN, 0);
    if (err != 0) {
        for (size_t w = 0; w < XP_WINDOW_SLOTS && j->windows[w] != NULL; w++)
            munmap(j->windows[w], j->window_len);
        munmap(j->hdr, XP_JOURNAL_HEADER_SIZE);
        goto fail_mutex;
    }
    close(fd);   /* none is kept: see "Descriptors" in xp_journal_space.c */
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
        xp_populator_join(j);   /* it works on what is unmapped and freed below */
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
    /* The parent's populator was not copied into the child. */
    atomic_store(&j->pop_state, XP_POP_NONE);
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
