/* test_journal.c: journal writer and reader: threads, live and final reads,
 * truncated and bad files, seeking, and fuzzed input. */
#include "journal_fixture.h"

static void test_header_and_info(void **state)
{
    (void)state;
    char path[128];
    xp_journal *j = make_journal("info.xpj", path, sizeof path);
    assert_string_equal(xp_journal_path(j), path);
    for (uint64_t i = 0; i < 3; i++)
        assert_non_null(put_rec(j, 1, i, XP_MAX_RECORD, true));  /* one chunk each */
    xp_journal_reader *r = open_reader(path);
    const xp_journal_header *h = xp_journal_info(r);
    assert_true(h->magic == XP_JOURNAL_MAGIC);
    assert_int_equal(h->version, XP_JOURNAL_VERSION);
    assert_int_equal(h->header_size, XP_JOURNAL_HEADER_SIZE);
    assert_int_equal(h->chunk_size, XP_CHUNK_SIZE);
    assert_int_equal(h->pid, 1234);
    assert_int_equal(h->ppid, 99);
    assert_int_equal(h->start_wall_ns, 111);
    assert_int_equal(h->start_mono_ns, 222);
    assert_int_equal(h->chunks_used, 3);
    collect c = {0};
    xp_read_stats st;
    assert_int_equal(xp_journal_read(r, collect_fn, &c, true, &st), 0);
    assert_int_equal(st.records, 3);
    assert_int_equal(st.chunks, 3);
    assert_int_equal(st.torn, 0);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(st.bytes, (uint64_t)sb.st_size);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(c.items[i].chunk, i);
        assert_int_equal(c.items[i].offset, sizeof(xp_chunk_header));
    }
    assert_int_equal(c.bad, 0);
    collect_reset(&c);
    xp_journal_reader_close(r);
    xp_journal_close(j);
}

static void test_single_thread_mixed_sizes(void **state)
{
    (void)state;
    char path[128];
    xp_journal *j = make_journal("mixed.xpj", path, sizeof path);
    enum { N = 5000 };
    static uint32_t sizes[N];
    uint64_t s = 42;
    for (uint64_t i = 0; i < N; i++) {
        uint64_t k = rng_next(&s) % 100;
        sizes[i] = k < 5 ? 16 : k < 6 ? (uint32_t)XP_MAX_RECORD
                                      : 24 + 8 * (uint32_t)(rng_next(&s) % 256);
        assert_non_null(put_rec(j, 7, i, sizes[i], true));
    }
    assert_int_equal(xp_journal_lost(j), 0);
    xp_journal_close(j);

    collect c = {0};
    xp_read_stats st = read_all(path, &c);
    assert_int_equal(st.records, N);
    assert_int_equal(st.torn, 0);
    assert_true(st.chunks > 5);  /* several chunks, so records crossed into new ones */
    assert_int_equal(c.n, N);
    assert_int_equal(c.bad, 0);
    uint64_t prev_chunk = 0;
    for (size_t i = 0; i < N; i++) {
        assert_int_equal(c.items[i].size, sizes[i]);
        assert_int_equal(c.items[i].thread, 7);
        if (sizes[i] >= 24)
            assert_int_equal(c.items[i].seq, i);
        else
            assert_int_equal(c.items[i].seq, (uint16_t)i);
        assert_true(c.items[i].chunk >= prev_chunk);
        assert_true(c.items[i].offset + c.items[i].size <= XP_CHUNK_SIZE);
        prev_chunk = c.items[i].chunk;
    }
    collect_reset(&c);
}

/* Records that do not fit the rest of a chunk go to the next one. */
static void test_chunk_boundaries(void **state)
{
    (void)state;
    char path[128];
    xp_journal *j = make_journal("bounds.xpj", path, sizeof path);
    for (uint64_t i = 0; i < 10; i++)
        assert_non_null(put_rec(j, 1, i, 100000, true));
    xp_journal_close(j);
    collect c = {0};
    xp_read_stats st = read_all(path, &c);
    assert_int_equal(st.records, 10);
    assert_int_equal(st.chunks, 5);
    for (size_t i = 0; i < 10; i++) {
        assert_int_equal(c.items[i].seq, i);
        assert_int_equal(c.items[i].chunk, i / 2);
        assert_int_equal(c.items[i].offset, i % 2 ? 16 + 100000 : 16);
    }
    assert_int_equal(c.bad, 0);
    collect_reset(&c);
}

/* Backpressure once exit has stopped the waits (xp_journal_stop_waits).
 * Nothing gives blocks back here, so past the bound a writer would wait
 * XP_BACKLOG_WAIT_MS per growth; stopped, it does not, and it grows the
 * file by at most a quarter of the bound, and by one chunk at a time once
 * the usual step would pass the bound (each such growth past it counted),
 * not by a quarter of the file. */
static void test_backlog_stopped_waits(void **state)
{
    (void)state;
    char path[128];
    xp_journal *j = make_journal("backlog.xpj", path, sizeof path);
    const uint64_t bound = 16u << 20, quarter = bound / 4 / XP_CHUNK_SIZE;
    xp_journal_set_backlog(j, bound);
    xp_journal_stop_waits(j);
    uint64_t self, past = 0;
    for (uint64_t i = 0; i < 2 * 96; i++) {   /* 96 chunks, 24 MiB: past the bound */
        assert_non_null(put_rec(j, 1, i, 100000, true));
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        uint64_t used = xp_journal_chunks(j, &self);
        uint64_t held = ((uint64_t)st.st_size - XP_JOURNAL_HEADER_SIZE) / XP_CHUNK_SIZE;
        assert_true(held >= used);
        assert_true(held <= used + quarter);
        if ((uint64_t)st.st_blocks * 512 > bound) {
            assert_true(held <= used + 1);
            past++;
        }
    }
    assert_true(past > 0);
    assert_true(xp_journal_backlog_overruns(j) > 0);
    xp_journal_close(j);
    collect c = {0};
    xp_read_stats st = read_all(path, &c);
    assert_int_equal(st.records, 2 * 96);
    assert_int_equal(c.bad, 0);
    collect_reset(&c);
}

enum { THREADS = 8, PER_THREAD = 20000 };

typedef struct worker {
    xp_journal *j;
    uint32_t id;
    _Atomic int *done;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    uint64_t s = w->id + 1;
    for (uint64_t i = 0; i < PER_THREAD; i++) {
        uint32_t size = 24 + 8 * (uint32_t)(rng_next(&s) % 23);
        if (put_rec(w->j, w->id, i, size, true) == NULL)
            abort();
    }
    atomic_fetch_add(w->done, 1);
    return NULL;
}

/* Delivered exactly once: every (thread, seq) once, in order within a chunk
 * (in_order: across the whole read, as a final read from scratch gives). */
static void check_exactly_once(const collect *c, bool in_order)
{
    static uint8_t seen[THREADS][PER_THREAD];
    memset(seen, 0, sizeof seen);
    int64_t last[THREADS];
    uint64_t last_chunk[THREADS];
    for (int t = 0; t < THREADS; t++) {
        last[t] = -1;
        last_chunk[t] = UINT64_MAX;
    }
    assert_int_equal(c->bad, 0);
    assert_int_equal(c->n, (size_t)THREADS * PER_THREAD);
    for (size_t i = 0; i < c->n; i++) {
        const item *it = &c->items[i];
        assert_true(it->thread < THREADS);
        assert_true(it->seq < PER_THREAD);
        assert_int_equal(seen[it->thread][it->seq], 0);
        seen[it->thread][it->seq] = 1;
        if (in_order || last_chunk[it->thread] == it->chunk)
            assert_true((int64_t)it->seq > last[it->thread]);
        last[it->thread] = (int64_t)it->seq;
        last_chunk[it->thread] = it->chunk;
    }
}

static bool spawn_plain(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    return pthread_create(t, attr, fn, arg) == 0;
}

/* Eight threads writing at once while a reader reads, with the populator
 * (populated) populating chunks ahead of them or without one. */
static void threads_exactly_once(bool populated)
{
    char path[128];
    xp_journal *j = make_journal(populated ? "threads-pop.xpj" : "threads.xpj", path, sizeof path);
    if (populated)
        assert_true(xp_journal_start_populator(j, spawn_plain));
    _Atomic int done = 0;
    pthread_t th[THREADS];
    worker w[THREADS];
    /* A live reader in this process reads while the writers write. */
    xp_journal_reader *r = open_reader(path);
    for (uint32_t t = 0; t < THREADS; t++) {
        w[t] = (worker){.j = j, .id = t, .done = &done};
        assert_int_equal(pthread_create(&th[t], NULL, worker_main, &w[t]), 0);
    }
    collect live = {0};
    int passes = 0;
    while (atomic_load(&done) < THREADS) {
        assert_int_equal(xp_journal_read(r, collect_fn, &live, false, NULL), 0);
        passes++;
    }
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    xp_read_stats st;
    assert_int_equal(xp_journal_read(r, collect_fn, &live, false, &st), 0);
    assert_int_equal(xp_journal_read(r, collect_fn, &live, true, &st), 0);
    assert_int_equal(st.torn, 0);
    assert_int_equal(st.records, (uint64_t)THREADS * PER_THREAD);
    assert_true(passes > 0);
    check_exactly_once(&live, false);
    collect_reset(&live);
    xp_journal_reader_close(r);
    assert_int_equal(xp_journal_lost(j), 0);
    xp_journal_close(j);

    collect c = {0};
    st = read_all(path, &c);
    assert_int_equal(st.torn, 0);
    check_exactly_once(&c, true);
    collect_reset(&c);
}

static void test_threads_exactly_once(void **state)
{
    (void)state;
    threads_exactly_once(false);
}

/* The same with the populator running (issue 15); xp_journal_close waits
 * for it before unmapping what it populates. */
static void test_threads_populated(void **state)
{
    (void)state;
    threads_exactly_once(true);
}

static void test_live_incremental(void **state)
{
    (void)state;
    char path[128];
    xp_journal *j = make_journal("live.xpj", path, sizeof path);
    xp_journal_reader *r = open_reader(path);
    collect c = {0};
    for (uint64_t i = 0; i < 100; i++)
        put_rec(j, 1, i, 88, true);
    xp_read_stats st;
    assert_int_equal(xp_journal_read(r, collect_fn, &c, false, &st), 0);
    assert_int_equal(c.n, 100);
    assert_int_equal(xp_journal_read(r, collect_fn, &c, false, &st), 0);
    assert_int_equal(c.n, 100);  /* nothing new, nothing again */
    /* Into more chunks than the first growth step holds (8 of ~2978), so the
     * reader must map the grown file. */
    for (uint64_t i = 100; i < 30000; i++)
        put_rec(j, 1, i, 88, true);
    assert_int_equal(xp_journal_read(r, collect_fn, &c, false, &st), 0);
    assert_int_equal(c.n, 30000);
    assert_int_equal(st.records, 30000);
    assert_true(st.chunks > 8);
    for (size_t i = 0; i < c.n; i++)
        assert_int_equal(c.items[i].seq, i);
    assert_int_equal(c.bad, 0);
    collect_reset(&c);
    xp_journal_reader_close(r);
    xp_journal_close(j);
}

/* An uncommitted record holds back its chunk in a live read until it is
 * committed; so do nested reservations (the engine reserves a call record,
 * then the stack record, and commits the stack first). */
static void test_uncommitted_live(void **state)
{
    (void)state;
    char path[128];
    xp_journal *j = make_journal("uncommitted.xpj", path, sizeof path);
    xp_journal_reader *r = open_reader(path);
    collect c = {0};
    for (uint64_t i = 0; i < 10; i++)
        put_rec(j, 1, i, 40, true);
    void *held = put_rec(j, 1, 10, 64, false);
    assert_non_null(held);
    for (uint64_t i = 11; i < 21; i++)
        put_rec(j, 1, i, 40, true);
    xp_read_stats st;
    assert_int_equal(xp_journal_read(r, collect_fn, &c, false, &st), 0);
    assert_int_equal(c.n, 10);
    assert_int_equal(xp_journal_read(r, collect_fn, &c, false, &st), 0);
    assert_int_equal(c.n, 10);
    assert_int_equal(st.torn, 0);
    xp_journal_commit(held);
    assert_int_equal(xp_journal_read(r, collect_fn, &c, false, &st), 0);
    assert_int_equal(c.n, 21);
    for (size_t i = 0; i < 21; i++)
        assert_int_equal(c.items[i].seq, i);
    assert_int_equal(c.bad, 0);
    assert_int_equal(st.torn, 0);
    collect_reset(&c);
    xp_journal_reader_close(r);
    xp_journal_close(j);
}

static void test_uncommitted_final(void **state)
{
    (void)state;
    char path[128];
    xp_journal *j = make_journal("torn.xpj", path, sizeof path);
    for (uint64_t i = 0; i < 10; i++)
        put_rec(j, 1, i, 40, true);
    assert_non_null(put_rec(j, 1, 10, 64, false));  /* filled, never committed */
    for (uint64_t i = 11; i < 16; i++)
        put_rec(j, 1, i, 40, true);
    collect c = {0};
    xp_read_stats st = read_all(path, &c);
    assert_int_equal(c.n, 10);
    assert_int_equal(st.records, 10);
    assert_int_equal(st.torn, 1);
    for (size_t i = 0; i < 10; i++)
        assert_int_equal(c.items[i].seq, i);
    collect_reset(&c);

    /* A reservation that was never written to is indistinguishable from the
     * unused rest of a chunk: nothing was lost, nothing is counted. */
    char path2[128];
    xp_journal *j2 = make_journal("torn2.xpj", path2, sizeof path2);
    for (uint64_t i = 0; i < 10; i++)
        put_rec(j2, 1, i, 40, true);
    assert_non_null(xp_journal_reserve(j2, 64));
    st = read_all(path2, &c);
    assert_int_equal(c.n, 10);
    assert_int_equal(st.torn, 0);
    collect_reset(&c);
    xp_journal_close(j2);
    xp_journal_close(j);
}

static void test_truncated_file(void **state)
{
    (void)state;
    char path[128];
    xp_journal *j = make_journal("cut.xpj", path, sizeof path);
    for (uint64_t i = 0; i < 1000; i++)
        put_rec(j, 1, i, 88, true);
    xp_journal_close(j);
    const off_t rec0 = XP_JOURNAL_HEADER_SIZE + sizeof(xp_chunk_header);

    /* A reader that is open across the cut must not fault. */
    xp_journal_reader *open_r = open_reader(path);
    collect c = {0};
    assert_int_equal(xp_journal_read(open_r, collect_fn, &c, false, NULL), 0);
    assert_int_equal(c.n, 1000);

    /* Mid-record: the 500 whole ones, and one torn. */
    assert_int_equal(truncate(path, rec0 + 500 * 88 + 40), 0);
    collect_reset(&c);
    xp_read_stats st = read_all(path, &c);
    assert_int_equal(c.n, 500);
    assert_int_equal(st.torn, 1);
    for (size_t i = 0; i < 500; i++)
        assert_int_equal(c.items[i].seq, i);
    collect_reset(&c);
    assert_int_equal(xp_journal_read(open_r, collect_fn, &c, true, &st), 0);
    assert_int_equal(c.n, 0);
    xp_journal_reader_close(open_r);

    /* Inside a record header (the size field is cut off). */
    assert_int_equal(truncate(path, rec0 + 400 * 88 + 4), 0);
    collect_reset(&c);
    st = read_all(path, &c);
    assert_int_equal(c.n, 400);
    assert_int_equal(st.torn, 1);

    /* Exactly at a record boundary: nothing to see. */
    assert_int_equal(truncate(path, rec0 + 300 * 88), 0);
    collect_reset(&c);
    st = read_all(path, &c);
    assert_int_equal(c.n, 300);
    assert_int_equal(st.torn, 0);

    /* Inside the chunk header. */
    assert_int_equal(truncate(path, XP_JOURNAL_HEADER_SIZE + 10), 0);
    collect_reset(&c);
    st = read_all(path, &c);
    assert_int_equal(c.n, 0);
    assert_int_equal(st.torn, 1);
    assert_int_equal(st.chunks, 0);

    /* Exactly the header: an empty journal. */
    assert_int_equal(truncate(path, XP_JOURNAL_HEADER_SIZE), 0);
    collect_reset(&c);
    st = read_all(path, &c);
    assert_int_equal(c.n, 0);
    assert_int_equal(st.torn, 0);

    /* Inside the header: refused. */
    assert_int_equal(truncate(path, 100), 0);
    char err[256] = "";
    xp_journal_reader *r = NULL;
    assert_int_not_equal(xp_journal_open(path, &r, err, sizeof err), 0);
    assert_null(r);
    assert_string_equal(err, "truncated header");
    collect_reset(&c);
}

static void write_file(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, len), (ssize_t)len);
    close(fd);
}

static void expect_open_error(const char *path, int want_errno, const char *want_msg)
{
    char err[256] = "";
    xp_journal_reader *r = NULL;
    int rc = xp_journal_open(path, &r, err, sizeof err);
    assert_null(r);
    if (want_errno != 0)
        assert_int_equal(rc, want_errno);
    else
        assert_int_not_equal(rc, 0);
    if (strstr(err, want_msg) == NULL)
        fail_msg("%s: error \"%s\", expected \"%s\"", path, err, want_msg);
}

static void patch_u32(const char *path, off_t off, uint32_t v)
{
    int fd = open(path, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, &v, sizeof v, off), (ssize_t)sizeof v);
    close(fd);
}

/* The fuzz callback: a delivered record must lie inside its chunk and the
 * file, and every byte of it must be readable (of damaged bytes, the header
 * the reader made for them). */
typedef struct fuzz_ctx {
    uint32_t commit;          /* the commit word of a whole record before version 5, else 0 */
    uint64_t file_size;
    uint64_t records;
    uint64_t sum;
} fuzz_ctx;

static int fuzz_fn(void *user, const xp_rec_header *rec, uint64_t chunk, uint32_t offset)
{
    fuzz_ctx *f = user;
    uint64_t start = XP_JOURNAL_HEADER_SIZE + chunk * (uint64_t)XP_CHUNK_SIZE;
    bool damaged = rec->type == XP_REC_DAMAGED && rec->commit == 0;
    if ((!damaged && rec->commit != f->commit && rec->commit != xp_record_checksum(rec, rec->size)) ||
        rec->size < 16 || rec->size % 8 || offset % 8 ||
        offset < 16 || offset + (uint64_t)rec->size > XP_CHUNK_SIZE ||
        start + offset + rec->size > f->file_size)
        abort();
    const unsigned char *p = (const unsigned char *)rec;
    for (uint32_t i = 0; i < (damaged ? sizeof *rec : rec->size); i++)
        f->sum += p[i];
    f->records++;
    return 0;
}

static void test_bad_files(void **state)
{
    (void)state;
    char path[128];
    path_of(path, sizeof path, "garbage.xpj");
    unsigned char junk[8192];
    uint64_t s = 7;
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (unsigned char)rng_next(&s);
    write_file(path, junk, sizeof junk);
    expect_open_error(path, 0, "not an xferprof journal");
    write_file(path, "hello", 5);
    expect_open_error(path, 0, "not an xferprof journal");
    write_file(path, "", 0);
    expect_open_error(path, 0, "truncated header");
    uint64_t magic = XP_JOURNAL_MAGIC;
    write_file(path, &magic, 6);
    expect_open_error(path, 0, "truncated header");
    path_of(path, sizeof path, "missing.xpj");
    expect_open_error(path, ENOENT, strerror(ENOENT));
    expect_open_error(tmpdir, 0, "not a regular file");

    xp_journal *j = make_journal("version.xpj", path, sizeof path);
    put_rec(j, 1, 0, 88, true);
    xp_journal_close(j);
    char newer[96];
    snprintf(newer, sizeof newer, "journal version %d is newer than this reader (%d)",
             XP_JOURNAL_VERSION + 1, XP_JOURNAL_VERSION);
    patch_u32(path, offsetof(xp_journal_header, version), XP_JOURNAL_VERSION + 1);
    expect_open_error(path, 0, newer);
    patch_u32(path, offsetof(xp_journal_header, version), 0);
    expect_open_error(path, 0, "not an xferprof journal");
    patch_u32(path, offsetof(xp_journal_header, version), 1);
    patch_u32(path, offsetof(xp_journal_header, chunk_size), 65536);
    expect_open_error(path, 0, "journal chunk size is 65536 bytes, this reader expects 262144");
    patch_u32(path, offsetof(xp_journal_header, chunk_size), XP_CHUNK_SIZE);
    patch_u32(path, offsetof(xp_journal_header, header_size), 8192);
    expect_open_error(path, 0, "header size");
    patch_u32(path, offsetof(xp_journal_header, header_size), XP_JOURNAL_HEADER_SIZE);
    /* A version 4 journal is read as before: commit word XP_COMMIT, no checksum. */
    patch_u32(path, offsetof(xp_journal_header, version), XP_JOURNAL_CHECKSUM_VERSION - 1);
    const uint64_t rec = XP_JOURNAL_HEADER_SIZE + sizeof(xp_chunk_header);
    patch_u32(path, rec + offsetof(xp_rec_header, commit), XP_COMMIT);
    collect c = {0};
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    fuzz_ctx f = {.commit = XP_COMMIT, .file_size = (uint64_t)sb.st_size};
    xp_journal_reader *r = open_reader(path);
    xp_read_stats st;
    assert_int_equal(xp_journal_read(r, fuzz_fn, &f, true, &st), 0);
    assert_int_equal(st.records, 1);
    assert_int_equal(st.damaged, 0);
    xp_journal_reader_close(r);
    /* ... and so is the current version (back to good), where XP_COMMIT is
     * no checksum: damaged. */
    patch_u32(path, offsetof(xp_journal_header, version), XP_JOURNAL_VERSION);
    st = read_all(path, &c);
    assert_int_equal(st.records, 0);
    assert_int_equal(st.damaged, 1);
    collect_reset(&c);
    /* A version 6 journal (its checksums XXH3's) is read as such; a CRC32C,
     * today's checksum, under version 6 is damage, and so is XXH3's under
     * today's version. */
    unsigned char body[88];
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, body, sizeof body, (off_t)rec), (ssize_t)sizeof body);
    close(fd);
    uint32_t xxh = xp_record_checksum_v(6, body, sizeof body);
    uint32_t crc = xp_record_checksum(body, sizeof body);
    assert_true(xxh != crc);
    patch_u32(path, rec + offsetof(xp_rec_header, commit), xxh);
    patch_u32(path, offsetof(xp_journal_header, version), 6);
    st = read_all(path, &c);
    assert_int_equal(st.records, 1);
    assert_int_equal(st.damaged, 0);
    collect_reset(&c);
    patch_u32(path, offsetof(xp_journal_header, version), XP_JOURNAL_VERSION);
    st = read_all(path, &c);
    assert_int_equal(st.records, 0);
    assert_int_equal(st.damaged, 1);
    collect_reset(&c);
    patch_u32(path, rec + offsetof(xp_rec_header, commit), crc);
    patch_u32(path, offsetof(xp_journal_header, version), 6);
    st = read_all(path, &c);
    assert_int_equal(st.records, 0);
    assert_int_equal(st.damaged, 1);
    collect_reset(&c);
}

/* The record checksum since version 7 is CRC32C of bytes [4, size): the
 * table's and the CPU instruction's agree with each other and with RFC
 * 3720's test vectors (B.4: 32 bytes of zeros, of 0xff, ascending). */
static void test_crc32c(void **state)
{
    (void)state;
    unsigned char rec[4 + 32];
    memset(rec, 0xee, 4);   /* the commit word: not covered */
    memset(rec + 4, 0, 32);
    assert_int_equal(xp_crc32c_record_sw(rec, sizeof rec), 0x8A9136AAu);
    memset(rec + 4, 0xff, 32);
    assert_int_equal(xp_crc32c_record_sw(rec, sizeof rec), 0x62A8AB43u);
    for (int i = 0; i < 32; i++)
        rec[4 + i] = (unsigned char)i;
    assert_int_equal(xp_crc32c_record_sw(rec, sizeof rec), 0x46DD794Eu);
    /* The machines this runs on have the instruction (x86-64 since 2008). */
    assert_true(xp_crc32c_hw);
    _Alignas(8) unsigned char r[512];
    uint64_t s = 7;
    for (uint32_t size = 16; size <= sizeof r; size += 8) {
        for (uint32_t i = 0; i < size; i++)
            r[i] = (unsigned char)rng_next(&s);
        assert_int_equal(xp_crc32c_record_hw(r, size), xp_crc32c_record_sw(r, size));
    }
}

static void test_seek_resumes(void **state)
{
    (void)state;
    char path[128];
    xp_journal *j = make_journal("seek.xpj", path, sizeof path);
    for (uint64_t i = 0; i < 4000; i++)  /* two chunks */
        put_rec(j, 1, i, 88, true);
    xp_journal_close(j);

    collect c = {0};
    read_all(path, &c);
    assert_int_equal(c.n, 4000);
    /* Progress an ingest would have stored: chunk 0 up to seq 999, and chunk
     * 1 up to seq 3499. */
    size_t k0 = 999, k1 = 3499;
    assert_int_equal(c.items[k0].chunk, 0);
    assert_int_equal(c.items[k1].chunk, 1);
    uint32_t off0 = c.items[k0].offset + c.items[k0].size;
    uint32_t off1 = c.items[k1].offset + c.items[k1].size;
    size_t first_in_1 = 0;
    while (c.items[first_in_1].chunk == 0)
        first_in_1++;
    collect_reset(&c);

    xp_journal_reader *r = open_reader(path);
    xp_journal_seek(r, 0, off0);
    xp_journal_seek(r, 1, off1);
    xp_read_stats st;
    assert_int_equal(xp_journal_read(r, collect_fn, &c, true, &st), 0);
    assert_int_equal(st.torn, 0);
    assert_int_equal(c.n, (first_in_1 - (k0 + 1)) + (4000 - (k1 + 1)));
    assert_int_equal(c.items[0].seq, k0 + 1);
    for (size_t i = 1; i < c.n; i++)
        assert_true(c.items[i].seq > c.items[i - 1].seq);
    assert_int_equal(c.items[first_in_1 - (k0 + 1)].seq, k1 + 1);
    assert_int_equal(c.items[c.n - 1].seq, 3999);

    /* Seeking back re-opens a finished chunk. */
    collect_reset(&c);
    xp_journal_seek(r, 1, off1);
    assert_int_equal(xp_journal_read(r, collect_fn, &c, true, &st), 0);
    assert_int_equal(c.n, 4000 - (k1 + 1));

    /* Nonsense positions: clamped, or refused by the next read. */
    collect_reset(&c);
    xp_journal_seek(r, 1, 3);  /* to the start of the chunk */
    assert_int_equal(xp_journal_read(r, collect_fn, &c, true, &st), 0);
    assert_int_equal(c.n, 4000 - first_in_1);
    xp_journal_seek(r, 1ull << 40, 16);
    assert_int_equal(xp_journal_read(r, collect_fn, &c, true, &st), -1);
    collect_reset(&c);
    xp_journal_reader_close(r);
}

static void test_callback_stop_redelivers(void **state)
{
    (void)state;
    char path[128];
    xp_journal *j = make_journal("stop.xpj", path, sizeof path);
    for (uint64_t i = 0; i < 20; i++)
        put_rec(j, 1, i, 48, true);
    xp_journal_reader *r = open_reader(path);
    collect c = {.stop_at = 5, .stop_rc = 7};
    xp_read_stats st;
    assert_int_equal(xp_journal_read(r, collect_fn, &c, false, &st), 7);
    assert_int_equal(c.n, 5);
    assert_int_equal(st.records, 5);
    assert_int_equal(xp_journal_read(r, collect_fn, &c, false, &st), 0);
    assert_int_equal(c.n, 20);
    for (size_t i = 0; i < 20; i++)
        assert_int_equal(c.items[i].seq, i);  /* seq 5 once, right after 4 */
    assert_int_equal(st.records, 20);
    collect_reset(&c);
    xp_journal_reader_close(r);
    xp_journal_close(j);
}


static void fuzz_one(const char *path, uint64_t seed, bool structured)
{
    uint64_t s = seed;
    uint64_t nchunks = 1 + rng_next(&s) % 3;
    uint64_t tail = rng_next(&s) % 3 == 0 ? rng_next(&s) % XP_CHUNK_SIZE : 0;
    size_t size = XP_JOURNAL_HEADER_SIZE + nchunks * XP_CHUNK_SIZE + tail;
    unsigned char *buf = calloc(1, size);
    assert_non_null(buf);
    /* Version 4 (commit word XP_COMMIT) or 5 (a checksum). */
    uint32_t version = rng_next(&s) % 2 ? XP_JOURNAL_VERSION : XP_JOURNAL_CHECKSUM_VERSION - 1;
    xp_journal_header h = {.magic = XP_JOURNAL_MAGIC, .version = version,
                           .header_size = XP_JOURNAL_HEADER_SIZE, .chunk_size = XP_CHUNK_SIZE,
                           .chunks_used = rng_next(&s)};
    memcpy(buf, &h, sizeof h);
    for (uint64_t c = 0; c * XP_CHUNK_SIZE + XP_JOURNAL_HEADER_SIZE < size; c++) {
        unsigned char *base = buf + XP_JOURNAL_HEADER_SIZE + c * XP_CHUNK_SIZE;
        size_t avail = size - (XP_JOURNAL_HEADER_SIZE + c * XP_CHUNK_SIZE);
        size_t limit = avail < XP_CHUNK_SIZE ? avail : XP_CHUNK_SIZE;
        if (!structured) {
            for (size_t i = 0; i < limit; i++)
                base[i] = (unsigned char)rng_next(&s);
            if (rng_next(&s) % 2 && limit >= 16) {  /* a valid chunk header over garbage */
                xp_chunk_header ch = {.magic = XP_CHUNK_MAGIC, .index = c};
                memcpy(base, &ch, sizeof ch);
            }
            continue;
        }
        if (limit < 16)
            continue;
        xp_chunk_header ch = {.magic = XP_CHUNK_MAGIC, .index = rng_next(&s) % 8 ? c : c + 1};
        memcpy(base, &ch, sizeof ch);
        size_t off = 16;
        while (off + 16 <= limit) {
            xp_rec_header rh = {0};
            uint64_t k = rng_next(&s) % 100;
            rh.commit = k < 90 ? XP_COMMIT : k < 95 ? 0 : (uint32_t)rng_next(&s);
            bool whole = k < 90 && version >= XP_JOURNAL_CHECKSUM_VERSION;
            uint64_t z = rng_next(&s) % 100;
            rh.size = z < 80   ? 16 + 8 * (uint32_t)(rng_next(&s) % 64)
                      : z < 90 ? (uint32_t)rng_next(&s)
                      : z < 95 ? (uint32_t)(rng_next(&s) % 600)
                               : (uint32_t)(limit - off + 8 * (rng_next(&s) % 3));
            rh.tid = (uint32_t)rng_next(&s);
            memcpy(base + off, &rh, sizeof rh);
            size_t step = rh.size >= 16 && rh.size % 8 == 0 ? rh.size : 16 + 8 * (rng_next(&s) % 8);
            for (size_t i = off + 16; i < off + step && i < limit; i++)
                base[i] = (unsigned char)rng_next(&s);
            if (whole && rh.size >= 16 && rh.size % 8 == 0 && rh.size <= limit - off) {
                rh.commit = xp_record_checksum(base + off, rh.size);
                memcpy(base + off, &rh.commit, sizeof rh.commit);
                if (rng_next(&s) % 10 == 0)   /* damaged after its commit */
                    base[off + 4 + rng_next(&s) % (rh.size - 4)] ^= 0x10;
            }
            off += step;
        }
    }
    write_file(path, buf, size);
    free(buf);

    xp_journal_reader *r = open_reader(path);
    fuzz_ctx f = {.file_size = size, .commit = version < XP_JOURNAL_CHECKSUM_VERSION ? XP_COMMIT : 0};
    xp_read_stats st;
    assert_int_equal(xp_journal_read(r, fuzz_fn, &f, false, &st), 0);
    uint64_t live = f.records;
    if (rng_next(&s) % 2)
        xp_journal_seek(r, rng_next(&s) % 4, (uint32_t)rng_next(&s));
    assert_int_equal(xp_journal_read(r, fuzz_fn, &f, true, &st), 0);
    assert_true(f.records >= live);
    assert_int_equal(st.bytes, size);
    assert_true(st.torn <= nchunks + 1);
    xp_journal_reader_close(r);
}

static void test_fuzz(void **state)
{
    (void)state;
    char path[128];
    path_of(path, sizeof path, "fuzz.xpj");
    for (uint64_t seed = 1; seed <= 30; seed++)
        fuzz_one(path, seed * 0x9e3779b97f4a7c15ull, seed % 3 != 0);

    /* Headers with the right magic and random fields: refused or read, never
     * a crash. */
    uint64_t s = 99;
    for (int i = 0; i < 200; i++) {
        unsigned char buf[XP_JOURNAL_HEADER_SIZE + 64];
        size_t len = rng_next(&s) % sizeof buf;
        for (size_t k = 0; k < len; k++)
            buf[k] = (unsigned char)rng_next(&s);
        uint64_t magic = XP_JOURNAL_MAGIC;
        memcpy(buf, &magic, len < 8 ? len : 8);
        if (i % 2 && len >= 24) {
            uint32_t v[4] = {1, XP_JOURNAL_HEADER_SIZE, XP_CHUNK_SIZE, 0};
            memcpy(buf + 8, v, 12);
        }
        write_file(path, buf, len);
        char err[256];
        xp_journal_reader *r = NULL;
        if (xp_journal_open(path, &r, err, sizeof err) == 0) {
            fuzz_ctx f = {.file_size = len, .commit = XP_COMMIT};
            assert_int_equal(xp_journal_read(r, fuzz_fn, &f, true, NULL), 0);
            assert_int_equal(f.records, 0);
            xp_journal_reader_close(r);
        } else {
            assert_null(r);
            assert_true(strlen(err) > 0);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_and_info),
        cmocka_unit_test(test_single_thread_mixed_sizes),
        cmocka_unit_test(test_chunk_boundaries),
        cmocka_unit_test(test_backlog_stopped_waits),
        cmocka_unit_test(test_threads_exactly_once),
        cmocka_unit_test(test_threads_populated),
        cmocka_unit_test(test_live_incremental),
        cmocka_unit_test(test_uncommitted_live),
        cmocka_unit_test(test_uncommitted_final),
        cmocka_unit_test(test_truncated_file),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_crc32c),
        cmocka_unit_test(test_seek_resumes),
        cmocka_unit_test(test_callback_stop_redelivers),
        cmocka_unit_test(test_fuzz),
    };
    return journal_run(tests, sizeof tests / sizeof tests[0]);
}
