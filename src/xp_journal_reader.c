/* xp_journal_reader.c: reading a journal, live (its writer running) or final (writer gone). */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xp_checksum.h"
#include "xp_fds.h"
#include "xp_journal.h"

/*
 * The whole file is mapped read-only and shared, and mapped again whenever
 * its size has changed (checked on every read: the writer grows it during the
 * run).  Reading through a shared mapping of the same page cache pages the
 * writer stores into is what makes the release store of `commit` pair with
 * our acquire load, in this process or another; pread would copy with no
 * such ordering.
 *
 * No descriptor is held: the file is mapped when opened, and its new size
 * comes from lstat of its path, believed only while the path names the same
 * file (st_dev, st_ino), after which mremap extends the mapping of that very
 * file.  A program that closes every descriptor >= 3 and opens its own files
 * in their place (issue 14 item 7) cannot make us read its files, and the
 * live reader in the profiled process costs it no descriptor (item 18).
 * Only when mremap fails is the file opened again by path (O_NOFOLLOW,
 * checked to be the same file, closed at once).
 *
 * Every access stays below the file size seen at the start of the read, so
 * garbage cannot send us out of the mapping.  (A file truncated by somebody
 * else *during* a read could still fault; the writer itself never shrinks the
 * file.)
 *
 * Damage (version 5).  A committed record is believed only when its checksum
 * holds.  One that fails is not the writer's doing (the commit word is
 * stored last, once the record is whole), so a final read skips it, and
 * finds where the next record starts: at the damaged record's own size when
 * a whole record (or the zero tail of the chunk) is there, for a size is
 * the field most likely intact; else at the first 8-byte offset where a
 * record's checksum holds, which a stretch of garbage matches with odds of
 * 2^-32 per offset tried.  A live read stops there instead: the writer may
 * still be writing after it, and the final read settles it.
 */

enum {
    XP_CUR_SEEN = 1,     /* the chunk header was valid */
    XP_CUR_DONE = 2,     /* nothing more can come from this chunk */
    XP_CUR_TORN = 4,     /* counted in stats.torn already */
    XP_CUR_RELEASED = 8, /* its blocks given back (xp_journal_release_done) */
};

/* Seek targets beyond this are nonsense (a 16 TiB journal). */
#define XP_READER_MAX_CHUNKS (1ull << 26)

typedef struct xp_cursor {
    uint32_t offset;     /* next record, from the chunk's start */
    uint32_t flags;
} xp_cursor;

struct xp_journal_reader {
    char *path;
    xp_file_id id;       /* what path must still name */
    xp_journal_header info;
    const unsigned char *map;
    size_t map_len;
    xp_cursor *cur;      /* one per chunk, [0, ncur) */
    uint64_t ncur;
    uint64_t cap;
    uint64_t first_open; /* every chunk below it is done */
    bool failed;         /* a seek could not be recorded: the next read says so */
    bool checksums;      /* version 5 or later: commit words are checksums */
    size_t page;         /* the page size, for letting go of what was read */
    xp_rec_header damaged;  /* what the callback gets for damaged bytes */
    xp_read_stats stats;
};

static void xp_set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void xp_set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (err == NULL || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

int xp_journal_open(const char *path, xp_journal_reader **out, char *err, size_t errlen)
{
    if (out == NULL || path == NULL) {
        xp_set_err(err, errlen, "%s", strerror(EINVAL));
        return EINVAL;
    }
    *out = NULL;
    /* O_NONBLOCK: a FIFO named like a journal must not hang us (it is then
     * refused as not a regular file). */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        xp_set_err(err, errlen, "%s", strerror(e));
        return e;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        xp_set_err(err, errlen, "%s", strerror(e));
        return e;
    }
    int e = EINVAL;
    if (!S_ISREG(st.st_mode)) {
        xp_set_err(err, errlen, "not a regular file");
        goto fail;
    }
    xp_journal_header h;
    memset(&h, 0, sizeof h);
    size_t got = 0;
    while (got < sizeof h) {
        ssize_t n = pread(fd, (char *)&h + got, sizeof h - got, (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            e = errno;
            xp_set_err(err, errlen, "%s", strerror(e));
            goto fail;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    /* As much of the magic as the file has must match: a short file of
     * something else is not a journal, a short journal is truncated. */
    uint64_t magic = XP_JOURNAL_MAGIC;
    size_t cmp = got < sizeof magic ? got : sizeof magic;
    if (memcmp(&h.magic, &magic, cmp) != 0) {
        xp_set_err(err, errlen, "not an xferprof journal");
        goto fail;
    }
    if (got < sizeof h || (uint64_t)st.st_size < XP_JOURNAL_HEADER_SIZE) {
        xp_set_err(err, errlen, "truncated header");
        goto fail;
    }
    if (h.version > XP_JOURNAL_VERSION) {
        e = ENOTSUP;
        xp_set_err(err, errlen, "journal version %u is newer than this reader (%d)",
                   h.version, XP_JOURNAL_VERSION);
        goto fail;
    }
    if (h.version == 0) {
        xp_set_err(err, errlen, "not an xferprof journal (version 0)");
        goto fail;
    }
    if (h.header_size != XP_JOURNAL_HEADER_SIZE) {
        xp_set_err(err, errlen, "journal header size is %u bytes, this reader expects %u",
                   h.header_size, XP_JOURNAL_HEADER_SIZE);
        goto fail;
    }
    if (h.chunk_size != XP_CHUNK_SIZE) {
        xp_set_err(err, errlen, "journal chunk size is %u bytes, this reader expects %u",
                   h.chunk_size, XP_CHUNK_SIZE);
        goto fail;
    }
    xp_journal_reader *r = calloc(1, sizeof *r);
    if (r == NULL || (r->path = strdup(path)) == NULL) {
        free(r);
        e = ENOMEM;
        xp_set_err(err, errlen, "%s", strerror(e));
        goto fail;
    }
    r->id = (xp_file_id){.dev = st.st_dev, .ino = st.st_ino};
    r->info = h;
    r->checksums = h.version >= XP_JOURNAL_CHECKSUM_VERSION;
    r->page = (size_t)sysconf(_SC_PAGESIZE);
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        e = errno;
        xp_set_err(err, errlen, "%s", strerror(e));
        free(r->path);
        free(r);
        goto fail;
    }
    r->map = p;
    r->map_len = (size_t)st.st_size;
    close(fd);   /* the mapping is what we read through (see the top) */
    *out = r;
    return 0;
fail:
    close(fd);
    return e;
}

const xp_journal_header *xp_journal_info(const xp_journal_reader *r)
{
    return &r->info;
}

/* Makes cursors exist for chunks [0, n). */
static bool xp_cursors(xp_journal_reader *r, uint64_t n)
{
    if (n <= r->ncur)
        return true;
    if (n > r->cap) {
        uint64_t cap = r->cap ? r->cap : 64;
        while (cap < n)
            cap *= 2;
        xp_cursor *c = realloc(r->cur, cap * sizeof *c);
        if (c == NULL)
            return false;
        r->cur = c;
        r->cap = cap;
    }
    for (uint64_t i = r->ncur; i < n; i++)
        r->cur[i] = (xp_cursor){.offset = sizeof(xp_chunk_header), .flags = 0};
    r->ncur = n;
    return true;
}

void xp_journal_seek(xp_journal_reader *r, uint64_t chunk, uint32_t offset)
{
    if (chunk >= XP_READER_MAX_CHUNKS || !xp_cursors(r, chunk + 1)) {
        r->failed = true;
        return;
    }
    /* Offsets come from records we delivered, so they are aligned and inside
     * the chunk; anything else is clamped, and a position in the middle of a
     * record then reads as torn rather than as records. */
    offset &= ~7u;
    if (offset < sizeof(xp_chunk_header))
        offset = sizeof(xp_chunk_header);
    if (offset > XP_CHUNK_SIZE)
        offset = XP_CHUNK_SIZE;
    xp_cursor *c = &r->cur[chunk];
    /* Given back, so stored: its records are in the database this progress
     * comes from, and its blocks are a hole now (see xp_chunk_is_hole). */
    if (c->flags & XP_CUR_RELEASED)
        return;
    c->offset = offset;
    c->flags &= ~(uint32_t)(XP_CUR_DONE | XP_CUR_TORN);
    if (chunk < r->first_open)
        r->first_open = chunk;
}

/* Maps the file as it is now.  Returns its size, or -1 (the path no longer
 * names our file, or mapping failed). */
static int64_t xp_remap(xp_journal_reader *r)
{
    struct stat st;
    if (lstat(r->path, &st) != 0 || !S_ISREG(st.st_mode) || !xp_same_file(&st, &r->id))
        return -1;
    size_t size = st.st_size > 0 ? (size_t)st.st_size : 0;
    if (size == r->map_len)
        return (int64_t)size;
    /* mremap keeps the page tables of what was read already; a plain new
     * mapping is the fallback. */
    if (r->map != NULL && size > 0) {
        void *p = mremap((void *)r->map, r->map_len, size, MREMAP_MAYMOVE);
        if (p != MAP_FAILED) {
            r->map = p;
            r->map_len = size;
            return (int64_t)size;
        }
    }
    if (r->map != NULL)
        munmap((void *)r->map, r->map_len);
    r->map = NULL;
    r->map_len = 0;
    if (size > 0) {
        int fd = xp_fd_reopen(r->path, O_RDONLY | O_NONBLOCK, &r->id, XP_FD_RESERVE);
        if (fd < 0)
            return -1;
        void *p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
        close(fd);
        if (p == MAP_FAILED)
            return -1;
        r->map = p;
        r->map_len = size;
    }
    return (int64_t)size;
}

/* Lets go of the pages of chunk i the reader has in memory.  The mapping
 * is shared and read-only: the pages stay in the file and the page cache,
 * and a later read faults in only what it touches (a live chunk's new
 * records), so a reader of a growing journal, the profiled process's own
 * ingest, does not keep every page of it resident (issue 15). */
static void xp_release_chunk_pages(const xp_journal_reader *r, uint64_t i)
{
    size_t page = r->page;
    uint64_t from = XP_JOURNAL_HEADER_SIZE + i * (uint64_t)XP_CHUNK_SIZE;
    uint64_t to = from + XP_CHUNK_SIZE < r->map_len ? from + XP_CHUNK_SIZE : r->map_len;
    from = (from + page - 1) & ~(uint64_t)(page - 1);
    to &= ~(uint64_t)(page - 1);
    if (to > from)
        (void)madvise((void *)(r->map + from), (size_t)(to - from), MADV_DONTNEED);
}

/* Whether chunk i is a hole in the file: given back by an ingest
 * (xp_journal_release_done, in this process or in the one that wrote the
 * journal), or never written.  Reading one through the map makes tmpfs
 * allocate zeroed pages for it: memory, and on a full tmpfs a SIGBUS that
 * kills the reader, the profiled program's own ingest included.  *fd is
 * opened on first use, once per pass (-2: could not be; then the chunk is
 * read as before).  A file system without SEEK_DATA reports no holes. */
static bool xp_chunk_is_hole(const xp_journal_reader *r, int *fd, uint64_t i)
{
    if (*fd == -2)
        return false;
    if (*fd < 0 &&
        (*fd = xp_fd_reopen(r->path, O_RDONLY | O_NONBLOCK, &r->id, XP_FD_RESERVE)) < 0) {
        *fd = -2;
        return false;
    }
    off_t from = (off_t)(XP_JOURNAL_HEADER_SIZE + i * (uint64_t)XP_CHUNK_SIZE);
    off_t data = lseek(*fd, from, SEEK_DATA);
    if (data < 0)
        return errno == ENXIO;   /* no data from here to the end of the file */
    return data >= from + (off_t)XP_CHUNK_SIZE;
}

/* Whether [p, p + n) holds anything but zero (p 8-aligned).  The loads are
 * atomic because a final read may race with a writer thread that is still
 * running (an exit-time pass while other threads go on). */
static bool xp_nonzero(const unsigned char *p, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        if (__atomic_load_n((const uint64_t *)(const void *)(p + i), __ATOMIC_RELAXED) != 0)
            return true;
    for (; i < n; i++)
        if (__atomic_load_n(p + i, __ATOMIC_RELAXED) != 0)
            return true;
    return false;
}

/* Final read: the chunk ends at `off`.  The `n` bytes there (a would-be
 * record header, cut short by the end of the file) are a torn record unless
 * they are all zero, the unused rest of a chunk. */
static void xp_end_chunk(xp_journal_reader *r, xp_cursor *c, const unsigned char *base,
                         uint32_t off, uint32_t n)
{
    c->flags |= XP_CUR_DONE;
    if (!(c->flags & XP_CUR_TORN) && xp_nonzero(base + off, n)) {
        c->flags |= XP_CUR_TORN;
        r->stats.torn++;
    }
}

/* The bytes from off to the end of the record header, or of the file. */
static uint32_t xp_head_bytes(uint32_t off, uint32_t limit)
{
    uint32_t n = limit > off ? limit - off : 0;
    return n < sizeof(xp_rec_header) ? n : (uint32_t)sizeof(xp_rec_header);
}

/* Whether [off, off + size) can hold a record of a chunk whose bytes end at limit. */
static bool xp_fits(uint32_t off, uint32_t size, uint32_t limit)
{
    return size >= sizeof(xp_rec_header) && (size & 7u) == 0 && size <= limit - off;
}

/* Whether a whole version 5 record starts at off: committed, inside the
 * chunk's bytes, its checksum right. */
static bool xp_intact(uint32_t version, const unsigned char *base, uint32_t off,
                      uint32_t limit)
{
    if (off + sizeof(xp_rec_header) > limit)
        return false;
    const xp_rec_header *h = (const void *)(base + off);
    uint32_t commit = __atomic_load_n(&h->commit, __ATOMIC_ACQUIRE);
    return commit != 0 && xp_fits(off, h->size, limit) &&
           commit == xp_record_checksum_v(version, h, h->size);
}

/* Final read: the length of the damaged bytes from off, where a record
 * claiming `size` bytes failed its checksum (see "Damage" at the top). */
static uint32_t xp_damaged_span(uint32_t version, const unsigned char *base, uint32_t off,
                                uint32_t limit, uint32_t size)
{
    if (xp_fits(off, size, limit) &&
        (size == limit - off || xp_intact(version, base, off + size, limit) ||
         !xp_nonzero(base + off + size, limit - off - size)))
        return size;
    /* No record is shorter than its header. */
    for (uint32_t q = off + sizeof(xp_rec_header); q + sizeof(xp_rec_header) <= limit; q += 8)
        if (xp_intact(version, base, q, limit))
            return q - off;
    /* A file cut at an odd length leaves a few bytes for the torn count. */
    return (limit - off) & ~7u;
}

static int xp_read_chunk(xp_journal_reader *r, uint64_t chunk, uint64_t size, xp_record_fn fn,
                         void *user, bool final)
{
    xp_cursor *c = &r->cur[chunk];
    uint64_t start = XP_JOURNAL_HEADER_SIZE + chunk * (uint64_t)XP_CHUNK_SIZE;
    uint64_t avail = size - start;
    /* Bytes of this chunk inside the file: less than a chunk only when the
     * file was cut (the writer grows it by whole chunks). */
    uint32_t limit = avail < XP_CHUNK_SIZE ? (uint32_t)avail : XP_CHUNK_SIZE;
    const unsigned char *base = r->map + start;

    if (!(c->flags & XP_CUR_SEEN)) {
        /* A chunk whose header is not there yet was just taken (live: look
         * again next time) or never was (final: skip it; count it only if
         * something other than zeros is there). */
        if (limit < sizeof(xp_chunk_header)) {
            if (final)
                xp_end_chunk(r, c, base, 0, limit);
            return 0;
        }
        const xp_chunk_header *ch = (const void *)base;
        uint32_t magic = __atomic_load_n(&ch->magic, __ATOMIC_ACQUIRE);
        if (magic != XP_CHUNK_MAGIC || ch->index != chunk) {
            /* Final: garbage where the chunk header and the first record
             * header would be is counted once. */
            if (final)
                xp_end_chunk(r, c, base, 0, limit < 32 ? limit : 32);
            return 0;
        }
        c->flags |= XP_CUR_SEEN;
        r->stats.chunks++;
    }

    for (;;) {
        uint32_t off = c->offset;
        if (off > XP_CHUNK_SIZE - sizeof(xp_rec_header)) {
            c->flags |= XP_CUR_DONE;  /* full: no record fits in the rest */
            return 0;
        }
        if (off + sizeof(xp_rec_header) > limit) {
            if (final)
                xp_end_chunk(r, c, base, off, xp_head_bytes(off, limit));
            return 0;
        }
        const xp_rec_header *h = (const void *)(base + off);
        uint32_t commit = __atomic_load_n(&h->commit, __ATOMIC_ACQUIRE);
        uint32_t rsize = h->size;
        /* Not committed; or before version 5 impossible; or it runs past the
         * end of a cut file. */
        if (commit == 0 || (!r->checksums && (commit != XP_COMMIT || !xp_fits(off, rsize, limit))) ||
            (!xp_fits(off, rsize, limit) && xp_fits(off, rsize, XP_CHUNK_SIZE) &&
             limit < XP_CHUNK_SIZE)) {
            if (final)
                xp_end_chunk(r, c, base, off, xp_head_bytes(off, limit));
            return 0;
        }
        if (r->checksums &&
            (!xp_fits(off, rsize, limit) || commit != xp_record_checksum_v(r->info.version, h, rsize))) {
            if (!final)
                return 0;
            const xp_chunk_header *ch = (const void *)base;
            r->damaged = (xp_rec_header){
                .type = XP_REC_DAMAGED,
                .size = xp_damaged_span(r->info.version, base, off, limit, rsize),
                .tid = ch->tid,
            };
            int rc = fn(user, &r->damaged, chunk, off);
            if (rc != 0)
                return rc;
            c->offset = off + r->damaged.size;
            r->stats.damaged++;
            continue;
        }
        if (h->type == XP_REC_PAD && r->info.version >= 6) {
            c->offset = off + rsize;   /* the writer left the chunk: nothing follows */
            continue;
        }
        int rc = fn(user, h, chunk, off);
        if (rc != 0)
            return rc;  /* the cursor stays: delivered again next time */
        c->offset = off + rsize;
        r->stats.records++;
    }
}

int xp_journal_read(xp_journal_reader *r, xp_record_fn fn, void *user, bool final,
                    xp_read_stats *stats)
{
    int rc = 0;
    if (r->failed) {
        rc = -1;
        goto out;
    }
    int64_t size = xp_remap(r);
    if (size < 0) {
        rc = -1;
        goto out;
    }
    r->stats.bytes = (uint64_t)size;
    if (r->map_len >= sizeof(xp_journal_header))
        r->info.chunks_used =
            __atomic_load_n(&((const xp_journal_header *)(const void *)r->map)->chunks_used,
                            __ATOMIC_RELAXED);
    uint64_t nchunks = (uint64_t)size > XP_JOURNAL_HEADER_SIZE
                           ? ((uint64_t)size - XP_JOURNAL_HEADER_SIZE + XP_CHUNK_SIZE - 1) /
                                 XP_CHUNK_SIZE
                           : 0;
    if (!xp_cursors(r, nchunks)) {
        rc = -1;
        goto out;
    }
    int fd = -1;
    for (uint64_t i = r->first_open; i < nchunks; i++) {
        if (r->cur[i].flags & XP_CUR_DONE)
            continue;
        /* A hole has nothing to read: done when final; while the journal
         * is live, a hole may still be a chunk not yet taken (ext4 counts
         * fallocated blocks never written as a hole), so look next time. */
        if (!(r->cur[i].flags & XP_CUR_SEEN) && xp_chunk_is_hole(r, &fd, i)) {
            if (final)
                r->cur[i].flags |= XP_CUR_DONE;
            continue;
        }
        rc = xp_read_chunk(r, i, (uint64_t)size, fn, user, final);
        xp_release_chunk_pages(r, i);
        if (rc != 0)
            break;
    }
    if (fd >= 0)
        close(fd);
    while (r->first_open < r->ncur && (r->cur[r->first_open].flags & XP_CUR_DONE))
        r->first_open++;
out:
    if (stats != NULL)
        *stats = r->stats;
    return rc;
}

void xp_journal_release_done(xp_journal_reader *r)
{
    /* Chunk by chunk, not below first_open only: one chunk kept open for
     * the whole run (a spare rest no thread took) must not hold back the
     * blocks of every chunk after it. */
    int fd = -1;
    for (uint64_t i = 0; i < r->ncur;) {
        if ((r->cur[i].flags & (XP_CUR_DONE | XP_CUR_RELEASED)) != XP_CUR_DONE) {
            i++;
            continue;
        }
        uint64_t end = i + 1;
        while (end < r->ncur && (r->cur[end].flags & (XP_CUR_DONE | XP_CUR_RELEASED)) == XP_CUR_DONE)
            end++;
        if (fd < 0 && (fd = xp_fd_reopen(r->path, O_WRONLY | O_NONBLOCK, &r->id, XP_FD_RESERVE)) < 0)
            return;   /* another time */
        off_t from = (off_t)(XP_JOURNAL_HEADER_SIZE + i * (uint64_t)XP_CHUNK_SIZE);
        off_t len = (off_t)((end - i) * (uint64_t)XP_CHUNK_SIZE);
        if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, from, len) != 0 &&
            errno != EOPNOTSUPP) {
            close(fd);
            return;   /* another time */
        }
        for (; i < end; i++)
            r->cur[i].flags |= XP_CUR_RELEASED;   /* done, or never possible here */
    }
    if (fd >= 0)
        close(fd);
}

void xp_journal_reader_close(xp_journal_reader *r)
{
    if (r == NULL)
        return;
    if (r->map != NULL)
        munmap((void *)r->map, r->map_len);
    free(r->path);
    free(r->cur);
    free(r);
}

int xp_journal_writer(const char *path, bool *running)
{
    *running = false;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return 0;
    struct stat st;
    xp_journal_header h;
    int pid = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h && h.magic == XP_JOURNAL_MAGIC &&
        h.pid > 0) {
        pid = h.pid;
        *running = kill(pid, 0) == 0 || errno == EPERM;
    }
    close(fd);
    return pid;
}
