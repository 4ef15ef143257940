/* test_ingest_passes.c: ingest passes over a journal: incremental and interrupted
 * passes, a crash then recovery, torn and damaged records, what is lost and
 * said, bad databases: every record stored exactly once or counted. */
#include "ingest_fixture.h"

/* Passes while the journal grows, then a final one: every record once. */
static void test_incremental_passes(void **state)
{
    fixture *f = *state;
    char err[512];
    xp_journal *j = jw_create(f->jpath, 1);
    xp_ingest *ig = NULL;
    xp_journal_reader *r = NULL;
    assert_int_equal(xp_ingest_open(f->db, &ig, err, sizeof err), 0);
    assert_int_equal(xp_journal_open(f->jpath, &r, err, sizeof err), 0);
    /* Nothing yet. */
    assert_int_equal(xp_ingest_pass(ig, r, false, err, sizeof err), 0);
    uint64_t n = 0;
    for (; n < 1000; n++)
        put_simple_copy(j, n);
    assert_int_equal(xp_ingest_pass(ig, r, false, err, sizeof err), 0);
    sqlite3 *db = db_open(f->db);
    assert_int_equal(q_int(db, "SELECT count(*) FROM copies", -1), 1000);
    /* Several chunks' worth. */
    for (; n < 9000; n++)
        put_simple_copy(j, n);
    assert_int_equal(xp_ingest_pass(ig, r, false, err, sizeof err), 0);
    assert_int_equal(xp_ingest_pass(ig, r, false, err, sizeof err), 0);
    assert_int_equal(q_int(db, "SELECT count(*) FROM copies", -1), 9000);
    for (; n < 9500; n++)
        put_simple_copy(j, n);
    put_sync(j, XP_API_cudaStreamSynchronize, 0, START_MONO + 1, 0, 0);
    xp_journal_close(j);
    assert_int_equal(xp_ingest_pass(ig, r, true, err, sizeof err), 0);
    assert_int_equal(xp_ingest_pass(ig, r, true, err, sizeof err), 0);
    assert_int_equal(q_int(db, "SELECT count(*) FROM copies", -1), 9500);
    assert_int_equal(q_int(db, "SELECT count(DISTINCT bytes) FROM copies", -1), 9500);
    assert_int_equal(q_int(db, "SELECT count(*) FROM syncs", -1), 1);
    assert_int_equal(q_int(db, "SELECT min(bytes) + max(bytes) FROM copies", -1), 9501);
    /* 9500 copies (then a sync) fill this many 256 KiB chunks. */
    size_t per_chunk = (XP_CHUNK_SIZE - sizeof(xp_chunk_header)) / sizeof(xp_rec_copy);
    assert_int_equal(q_int(db, "SELECT count(*) FROM journal_progress", -1),
                     (long long)((9500 + per_chunk - 1) / per_chunk));
    xp_ingest_close(ig);
    xp_journal_reader_close(r);

    /* Another handle and another reader on the same journal: the progress
     * in the database says everything is there. */
    ingest_all(f);
    assert_int_equal(q_int(db, "SELECT count(*) FROM copies", -1), 9500);
    assert_int_equal(q_int(db, "SELECT count(*) FROM syncs", -1), 1);
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'records_lost'"), "0");
    sqlite3_close(db);
}

#define MANY 120000

/* A pass that fails part-way (a row refused by the database, injected with a
 * trigger) stores nothing of its unfinished batch; the next pass stores
 * exactly what is missing. */
static void test_interrupted_pass(void **state)
{
    fixture *f = *state;
    char err[512] = "";
    xp_journal *j = jw_create(f->jpath, 1);
    for (uint64_t n = 0; n < MANY; n++) {
        put_simple_copy(j, n);
        if (n % 1000 == 0)
            put_alloc(j, XP_API_cudaMalloc, XP_ALLOC_DEVICE, n + 1, 0x7f00000000ull + n, 1,
                      START_MONO + n, (n % 3000 == 0) ? HASH_A : 0, 0, 0, 0, 4242);
    }
    put_stack(j, HASH_A, frames_a, 3);
    xp_journal_close(j);
    xp_ingest *ig = NULL;
    xp_journal_reader *r = NULL;
    assert_int_equal(xp_ingest_open(f->db, &ig, err, sizeof err), 0);
    assert_int_equal(xp_journal_open(f->jpath, &r, err, sizeof err), 0);
    sqlite3 *db = db_open(f->db);
    /* Refused in the first batch: no chunk has progress yet, so the reader
     * must go back to the chunk's first record. */
    db_exec(db, "CREATE TRIGGER inject BEFORE INSERT ON copy_rows WHEN NEW.bytes = 1000 "
                "BEGIN SELECT RAISE(ABORT, 'injected failure'); END");
    assert_int_equal(xp_ingest_pass(ig, r, false, err, sizeof err), -1);
    assert_int_equal(q_int(db, "SELECT count(*) FROM copy_rows", -1), 0);
    assert_int_equal(q_int(db, "SELECT count(*) FROM journal_progress", -1), 0);
    db_exec(db, "DROP TRIGGER inject");
    db_exec(db, "CREATE TRIGGER inject BEFORE INSERT ON copy_rows WHEN NEW.bytes = 110000 "
                "BEGIN SELECT RAISE(ABORT, 'injected failure'); END");
    assert_int_equal(xp_ingest_pass(ig, r, false, err, sizeof err), -1);
    assert_non_null(strstr(err, "injected failure"));
    assert_non_null(strstr(err, f->db));
    long long stored = q_int(db, "SELECT count(*) FROM copy_rows", -1);
    assert_true(stored > 0 && stored < 110000);
    /* Whole batches only, with their progress. */
    assert_int_equal(q_int(db, "SELECT count(*) FROM copies", -1), stored);
    assert_int_equal(q_int(db, "SELECT count(DISTINCT bytes) FROM copies", -1), stored);
    assert_int_equal(q_int(db, "SELECT max(bytes) FROM copies", -1), stored);
    /* Still refused: nothing more, nothing twice. */
    assert_int_equal(xp_ingest_pass(ig, r, false, err, sizeof err), -1);
    assert_int_equal(q_int(db, "SELECT count(*) FROM copy_rows", -1), stored);
    db_exec(db, "DROP TRIGGER inject");
    assert_int_equal(xp_ingest_pass(ig, r, false, err, sizeof err), 0);
    assert_int_equal(xp_ingest_pass(ig, r, true, err, sizeof err), 0);
    assert_int_equal(q_int(db, "SELECT count(*) FROM copy_rows", -1), MANY);
    /* Through the views: no row lost its call site or stack to the rollback. */
    assert_int_equal(q_int(db, "SELECT count(*) FROM copies", -1), MANY);
    assert_int_equal(q_int(db, "SELECT count(DISTINCT bytes) FROM copies", -1), MANY);
    assert_int_equal(q_int(db, "SELECT count(*) FROM allocations", -1), MANY / 1000);
    assert_int_equal(q_int(db, "SELECT count(*) FROM allocations a JOIN stacks s "
                               "ON s.id = a.alloc_stack_id WHERE s.depth = 3", -1),
                     MANY / 3000);
    assert_int_equal(q_int(db, "SELECT count(*) FROM stacks", -1), 1);
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'records_lost'"), "0");
    sqlite3_close(db);
    xp_ingest_close(ig);
    xp_journal_reader_close(r);
}

/* In the child: crash() kills the process, from inside an insert. */
static void crash_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)ctx, (void)argc, (void)argv;
    raise(SIGKILL);
}

static int crash_init(sqlite3 *db, char **msg, const sqlite3_api_routines *api)
{
    (void)msg, (void)api;
    return sqlite3_create_function(db, "crash", 0, SQLITE_UTF8, NULL, crash_fn, NULL, NULL);
}

/* The ingesting process is killed in the middle of a transaction; recover
 * then stores the rest, each record once, into an intact database. */
static void test_crash_then_recover(void **state)
{
    fixture *f = *state;
    char err[512] = "";
    xp_journal *j = jw_create(f->jpath, 31337);
    for (uint64_t n = 0; n < MANY; n++)
        put_simple_copy(j, n);
    put_torn_copy(j);
    xp_journal_close(j);
    xp_ingest *ig = NULL;
    assert_int_equal(xp_ingest_open(f->db, &ig, err, sizeof err), 0);
    xp_ingest_close(ig);
    sqlite3 *db = db_open(f->db);
    db_exec(db, "CREATE TRIGGER boom BEFORE INSERT ON copy_rows WHEN NEW.bytes = 70000 "
                "BEGIN SELECT crash(); END");
    sqlite3_close(db);

    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        sqlite3_auto_extension((void (*)(void))crash_init);
        xp_journal_reader *r = NULL;
        if (xp_ingest_open(f->db, &ig, err, sizeof err) != 0 ||
            xp_journal_open(f->jpath, &r, err, sizeof err) != 0)
            _exit(3);
        xp_ingest_pass(ig, r, false, err, sizeof err);
        _exit(4);   /* not reached: crash() fired */
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    db = db_open(f->db);
    long long stored = q_int(db, "SELECT count(*) FROM copy_rows", -1);
    assert_true(stored > 0 && stored < 70000);
    db_exec(db, "DROP TRIGGER boom");
    sqlite3_close(db);

    bool did = false;
    if (xp_recover(f->db, &did, err, sizeof err) != 0)
        fail_msg("recover: %s", err);
    assert_true(did);
    assert_false(exists(f->jpath));
    db = db_open(f->db);
    assert_string_equal(Q_TEXT(db, "PRAGMA integrity_check"), "ok");
    assert_int_equal(q_int(db, "SELECT count(*) FROM copies", -1), MANY);
    assert_int_equal(q_int(db, "SELECT count(DISTINCT bytes) FROM copies", -1), MANY);
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'recovered'"), "1");
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'pid'"), "31337");
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'records_lost'"), "1");
    assert_string_equal(Q_TEXT(db, "PRAGMA journal_mode"), "delete");
    sqlite3_close(db);

    /* Again: nothing to do. */
    did = true;
    assert_int_equal(xp_recover(f->db, &did, err, sizeof err), 0);
    assert_false(did);
}

/* XORs one byte of the file at off with mask. */
static void flip_byte(const char *path, off_t off, uint8_t mask)
{
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    uint8_t b;
    assert_int_equal(pread(fd, &b, 1, off), 1);
    b ^= mask;
    assert_int_equal(pwrite(fd, &b, 1, off), 1);
    close(fd);
}

/* Records damaged after their commit, and a record whose values no writer
 * produces (issue 14 item 10): neither is stored, both are counted as lost
 * in one phrase of records_lost_reason however many passes found them, and
 * every record around them is stored. */
static void test_damaged_records(void **state)
{
    fixture *f = *state;
    char err[512] = "";
    xp_journal *j = jw_create(f->jpath, 1);
    /* Record 0: a successful copy whose range wraps past 2^64; its
     * checksum holds. */
    put_copy(j, XP_API_cudaMemcpy, START_MONO, 0, 0, XP_DIR_H2D, XP_HOST_PAGEABLE, XP_BLOCK_SYNC,
             0x7f0000000000ull, 0x7f8000000000ull, UINT64_MAX - 7, 0);
    for (uint64_t n = 0; n < 21; n++)   /* records 1..21: copies of n + 1 bytes */
        put_simple_copy(j, n);
    xp_journal_close(j);
    /* Chunk 0 holds nothing but these 120-byte records. */
    const off_t rec0 = XP_JOURNAL_HEADER_SIZE + sizeof(xp_chunk_header);
#define REC(n) (rec0 + (off_t)(n) * (off_t)sizeof(xp_rec_copy))
    flip_byte(f->jpath, REC(3) + offsetof(xp_rec_copy, bytes), 0x01);        /* a value */
    flip_byte(f->jpath, REC(7) + offsetof(xp_rec_header, size) + 3, 0x80);  /* the size */
    flip_byte(f->jpath, REC(12) + offsetof(xp_rec_header, type), 0x02);     /* the type */
    flip_byte(f->jpath, REC(15) + offsetof(xp_rec_header, commit), 0x10);   /* the checksum */
#undef REC

    xp_ingest *ig = NULL;
    xp_journal_reader *r = NULL;
    assert_int_equal(xp_ingest_open(f->db, &ig, err, sizeof err), 0);
    assert_int_equal(xp_journal_open(f->jpath, &r, err, sizeof err), 0);
    /* A live pass counts the impossible values, and waits at the first
     * damaged record: the writer could still be there. */
    assert_int_equal(xp_ingest_pass(ig, r, false, err, sizeof err), 0);
    sqlite3 *db = db_open(f->db);
    assert_int_equal(q_int(db, "SELECT count(*) FROM copies", -1), 2);
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'records_lost_reason'"),
                        "1 corrupt journal record(s)");
    assert_int_equal(xp_ingest_pass(ig, r, true, err, sizeof err), 0);
    assert_int_equal(xp_ingest_pass(ig, r, true, err, sizeof err), 0);   /* nothing twice */
    xp_ingest_close(ig);
    xp_journal_reader_close(r);

    assert_int_equal(q_int(db, "SELECT count(*) FROM copies", -1), 22 - 5);
    /* Records 3, 7, 12, 15 were the copies of 3, 7, 12 and 15 bytes. */
    assert_int_equal(q_int(db, "SELECT count(*) FROM copies WHERE bytes IN (3, 7, 12, 15) "
                               "OR bytes > 21 OR bytes < 1", -1), 0);
    assert_int_equal(q_int(db, "SELECT sum(bytes) FROM copies", -1), 21 * 22 / 2 - 37);
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'records_lost'"), "5");
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'records_corrupt'"), "5");
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'records_lost_reason'"),
                        "5 corrupt journal record(s)");
    sqlite3_close(db);
}

static void test_torn_record(void **state)
{
    fixture *f = *state;
    char err[512] = "";
    xp_journal *j = jw_create(f->jpath, 1);
    for (uint64_t n = 0; n < 10; n++)
        put_simple_copy(j, n);
    put_torn_copy(j);
    xp_journal_close(j);
    xp_ingest *ig = NULL;
    xp_journal_reader *r = NULL;
    assert_int_equal(xp_ingest_open(f->db, &ig, err, sizeof err), 0);
    assert_int_equal(xp_journal_open(f->jpath, &r, err, sizeof err), 0);
    /* A live pass does not count it: the writer may still finish it. */
    assert_int_equal(xp_ingest_pass(ig, r, false, err, sizeof err), 0);
    sqlite3 *db = db_open(f->db);
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'records_lost'"), "0");
    assert_int_equal(xp_ingest_pass(ig, r, true, err, sizeof err), 0);
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'records_lost'"), "1");
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'records_lost_reason'"),
                        "1 record(s) cut off mid-write in the journal");
    /* Found again by every final pass; counted once. */
    assert_int_equal(xp_ingest_pass(ig, r, true, err, sizeof err), 0);
    assert_int_equal(xp_ingest_pass(ig, r, true, err, sizeof err), 0);
    xp_ingest_close(ig);
    xp_journal_reader_close(r);
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'records_lost'"), "1");
    bool did = false;
    assert_int_equal(xp_recover(f->db, &did, err, sizeof err), 0);
    assert_true(did);
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'records_lost'"), "1");
    assert_int_equal(q_int(db, "SELECT count(*) FROM copies", -1), 10);
    assert_int_equal(q_int(db, "SELECT count(*) FROM copies WHERE bytes = 999", -1), 0);
    sqlite3_close(db);
}

/* Records the ingest cannot store are counted, with a reason; and
 * xp_ingest_add_lost / xp_ingest_set_meta. */
static void test_lost_and_meta(void **state)
{
    fixture *f = *state;
    char err[512] = "";
    xp_journal *j = jw_create(f->jpath, 1);
    put_simple_copy(j, 0);
    xp_rec_header *h = jw_reserve(j, 77, 0, 24, 4242);   /* a type from the future */
    xp_journal_commit(h);
    xp_rec_stack *s = jw_reserve(j, XP_REC_STACK, 0, sizeof *s, 4242);
    s->stack_id = 5;
    s->depth = 100;   /* frames that are not there */
    xp_journal_commit(s);
    put_alloc(j, XP_API_cudaMalloc, XP_ALLOC_DEVICE, 3, 0x7f00, 1, START_MONO, 0, 0, 0, 0, 1);
    put_alloc(j, XP_API_cudaMalloc, XP_ALLOC_DEVICE, 3, 0x7f00, 1, START_MONO, 0, 0, 0, 0, 1);
    put_meta(j, "records_lost", "4");
    xp_journal_close(j);
    ingest_all(f);
    sqlite3 *db = db_open(f->db);
    assert_int_equal(q_int(db, "SELECT count(*) FROM allocations", -1), 1);
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'records_lost'"), "7");
    const char *reason = Q_TEXT(db, "SELECT value FROM meta WHERE key = 'records_lost_reason'");
    /* A type no writer has, a stack with frames that are not there. */
    assert_non_null(strstr(reason, "2 corrupt journal record(s)"));
    assert_non_null(strstr(reason, "already stored"));
    assert_non_null(strstr(reason, "4 record(s) reported lost by the profiled process"));

    xp_ingest *ig = NULL;
    assert_int_equal(xp_ingest_open(f->db, &ig, err, sizeof err), 0);
    assert_int_equal(xp_ingest_add_lost(ig, 3, "the journal could not grow (disk full?)"), 0);
    assert_int_equal(xp_ingest_set_meta(ig, "exit_status", "137"), 0);
    assert_int_equal(xp_ingest_set_meta(ig, "exit_status", "1"), 0);
    xp_ingest_close(ig);
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'records_lost'"), "10");
    reason = Q_TEXT(db, "SELECT value FROM meta WHERE key = 'records_lost_reason'");
    assert_non_null(strstr(reason, "; the journal could not grow (disk full?)"));
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'exit_status'"), "1");
    sqlite3_close(db);
}

/* Times that go backwards by clock noise are stored as a call of no time
 * and counted, never as a negative duration (issue 14 item 21); by more, the
 * record is damaged: counted as lost, not stored (item 10). */
static void test_times_backwards(void **state)
{
    fixture *f = *state;
    xp_journal *j = jw_create(f->jpath, 1);
    put_simple_copy(j, 0);
    xp_rec_copy *r = jw_reserve(j, XP_REC_COPY, XP_API_cudaMemcpy, sizeof *r, 4242);
    jw_call(&r->c, START_MONO + 5000, 1500, 0, 0, 0);
    r->c.end_ns = START_MONO + 4000;   /* ends before it starts */
    r->bytes = 64;
    r->direction = XP_DIR_H2D;
    r->host_mem = XP_HOST_PAGEABLE;
    r->blocking = XP_BLOCK_SYNC;
    xp_journal_commit(r);
    xp_rec_sync *y = jw_reserve(j, XP_REC_SYNC, XP_API_cudaDeviceSynchronize, sizeof *y, 4242);
    jw_call(&y->c, START_MONO + 9000, 10, 0, 0, 0);
    y->c.end_ns = START_MONO + 9000 - 1000;   /* within clock noise */
    xp_journal_commit(y);
    y = jw_reserve(j, XP_REC_SYNC, XP_API_cudaDeviceSynchronize, sizeof *y, 4242);
    jw_call(&y->c, START_MONO + 9500, 10, 0, 0, 0);
    y->c.end_ns = 3;                   /* far in the past: damaged */
    xp_journal_commit(y);
    xp_journal_close(j);
    ingest_all(f);
    sqlite3 *db = db_open(f->db);
    assert_int_equal(q_int(db, "SELECT count(*) FROM copies", -1), 2);
    assert_int_equal(q_int(db, "SELECT min(dur_ns) FROM copies", -1), 0);
    assert_int_equal(q_int(db, "SELECT dur_ns FROM copies WHERE bytes = 64", -1), 0);
    assert_int_equal(q_int(db, "SELECT count(*) FROM syncs WHERE dur_ns < 0", -1), 0);
    assert_int_equal(q_int(db, "SELECT count(*) FROM syncs", -1), 1);
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'times_fixed'"), "2");
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'records_lost'"), "1");
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'records_lost_reason'"),
                        "1 corrupt journal record(s)");
    sqlite3_close(db);
}

static void write_file(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, len), (ssize_t)len);
    close(fd);
}

static void assert_one_line(const char *err, const char *path, const char *what)
{
    if (strstr(err, what) == NULL || strstr(err, path) == NULL || strchr(err, '\n') != NULL)
        fail_msg("expected '%s: ...%s...' in one line, got '%s'", path, what, err);
}

static void test_bad_databases(void **state)
{
    fixture *f = *state;
    char err[512] = "";
    xp_ingest *ig = NULL;
    sqlite3 *db = NULL;

    /* Garbage. */
    char junk[8192];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (char)(i * 7 + 3);
    write_file(f->db, junk, sizeof junk);
    assert_int_equal(xp_ingest_open(f->db, &ig, err, sizeof err), -1);
    assert_null(ig);
    assert_one_line(err, f->db, "file is not a database");

    /* Somebody else's SQLite database. */
    unlink(f->db);
    assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
    db_exec(db, "CREATE TABLE meta(key, value); INSERT INTO meta VALUES ('schema_version', '1')");
    sqlite3_close(db);
    db = NULL;
    assert_int_equal(xp_ingest_open(f->db, &ig, err, sizeof err), -1);
    assert_one_line(err, f->db, "not an xferprof database");

    /* A newer schema. */
    unlink(f->db);
    assert_int_equal(xp_ingest_open(f->db, &ig, err, sizeof err), 0);
    xp_ingest_close(ig);
    ig = NULL;
    db = db_open(f->db);
    db_exec(db, "UPDATE meta SET value = '4' WHERE key = 'schema_version'");
    sqlite3_close(db);
    db = NULL;
    assert_int_equal(xp_ingest_open(f->db, &ig, err, sizeof err), -1);
    assert_one_line(err, f->db, "database schema 4 is newer than this xferprof (3)");

    /* Cut short: a real database with some rows, truncated. */
    unlink(f->db);
    xp_journal *j = jw_create(f->jpath, 1);
    for (uint64_t n = 0; n < 20000; n++)
        put_simple_copy(j, n);
    xp_journal_close(j);
    ingest_all(f);
    struct stat sb;
    assert_int_equal(stat(f->db, &sb), 0);
    assert_int_equal(truncate(f->db, sb.st_size / 2), 0);
    assert_int_equal(xp_ingest_open(f->db, &ig, err, sizeof err), -1);
    assert_one_line(err, f->db, "malformed");
    /* Recover refuses too, and keeps the journal. */
    bool did = true;
    assert_int_equal(xp_recover(f->db, &did, err, sizeof err), -1);
    assert_one_line(err, f->db, "malformed");
    assert_true(exists(f->jpath));
}

/* Copy i (bytes i + 1) whose nullable columns are NULL or not by patterns
 * that do not line up with the rows of a multi-row statement, and one in 11
 * failed (its error row needs its id: the rows before it are flushed then). */
static void put_patterned_copy(xp_journal *j, uint64_t i)
{
    xp_rec_copy *r = jw_reserve(j, XP_REC_COPY, XP_API_cudaMemcpy, sizeof *r, 4242);
    jw_call(&r->c, START_MONO + 1000 * i, 1500, 0, i % 11 == 10 ? 1 : 0, 0);
    r->src = 0x7f0000000000ull;
    r->dst = 0x7f8000000000ull;
    r->bytes = i + 1;
    r->direction = XP_DIR_H2D;
    r->kind = 1;
    r->nvtx_range = i % 3 == 0 ? i + 1 : 0;
    r->fingerprint = i % 5 == 0 ? 0 : i;
    r->fingerprint_kind = i % 5 == 0 ? 0 : XP_FP_SAMPLED;
    r->full_fingerprint = i % 7 == 0 ? i + 1 : 0;
    r->graph_node = i % 2 == 0 ? i + 1 : 0;
    xp_journal_commit(r);
}

/* Every nullable cell is the record's, NULL or a value, whichever batch of
 * the row buffer it went through (full ones, the rest at a pass's end, or
 * early before a failed copy's error row): the buffer's rows reach SQLite
 * through a virtual table (xp_ingest_vtab.c) whose null mask says which
 * cells are NULL; it failed when the mask was ignored. */
static void test_null_cells(void **state)
{
    fixture *f = *state;
    char err[512];
    xp_journal *j = jw_create(f->jpath, 1);
    xp_ingest *ig = NULL;
    xp_journal_reader *r = NULL;
    assert_int_equal(xp_ingest_open(f->db, &ig, err, sizeof err), 0);
    assert_int_equal(xp_journal_open(f->jpath, &r, err, sizeof err), 0);
    uint64_t n = 0;
    for (int pass = 0; pass < 3; pass++) {
        for (uint64_t end = n + 1000 + 37 * (uint64_t)pass; n < end; n++)
            put_patterned_copy(j, n);
        assert_int_equal(xp_ingest_pass(ig, r, pass == 2, err, sizeof err), 0);
    }
    xp_journal_close(j);
    xp_ingest_close(ig);
    xp_journal_reader_close(r);
    sqlite3 *db = db_open(f->db);
    assert_int_equal(q_int(db, "SELECT count(*) FROM copy_rows", -1), (long long)n);
    /* Each cell as put_patterned_copy made it (i = bytes - 1). */
    assert_int_equal(q_int(db, "SELECT count(*) FROM copy_rows WHERE "
                               "nvtx_range IS NOT iif((bytes - 1) % 3 = 0, bytes, NULL) OR "
                               "fingerprint IS NOT iif((bytes - 1) % 5 = 0, NULL, bytes - 1) OR "
                               "fp_kind IS NOT iif((bytes - 1) % 5 = 0, NULL, 2) OR "
                               "full_fp IS NOT iif((bytes - 1) % 7 = 0, bytes, NULL) OR "
                               "graph_node IS NOT iif((bytes - 1) % 2 = 0, bytes, NULL) OR "
                               "launch_stack IS NOT NULL OR kernel_seq IS NOT 0",
                     -1),
                     0);
    assert_int_equal(q_int(db, "SELECT count(*) FROM error_rows e JOIN copy_rows c "
                               "ON c.id = e.copy_id WHERE (c.bytes - 1) % 11 = 10",
                     -1),
                     (long long)(n / 11));
    sqlite3_close(db);
}

/* `xferprof recover` says how many records it stored: the count comes from
 * the recovery's own pass, so records an earlier pass stored are not in it. */
static void test_recover_count(void **state)
{
    fixture *f = *state;
    char err[512];
    xp_journal *j = jw_create(f->jpath, 1);
    xp_ingest *ig = NULL;
    xp_journal_reader *r = NULL;
    assert_int_equal(xp_ingest_open(f->db, &ig, err, sizeof err), 0);
    assert_int_equal(xp_journal_open(f->jpath, &r, err, sizeof err), 0);
    uint64_t n = 0;
    for (; n < 700; n++)
        put_simple_copy(j, n);
    assert_int_equal(xp_ingest_pass(ig, r, false, err, sizeof err), 0);
    xp_ingest_close(ig);
    xp_journal_reader_close(r);
    for (; n < 1000; n++)
        put_simple_copy(j, n);
    put_sync(j, XP_API_cudaStreamSynchronize, 0, START_MONO + 1, 0, 0);
    xp_journal_close(j);
    bool did = false;
    uint64_t records = 0;
    if (xp_recover_progress(f->db, &did, NULL, NULL, &records, err, sizeof err) != 0)
        fail_msg("recover: %s", err);
    assert_true(did);
    assert_int_equal(records, 301);
    sqlite3 *db = db_open(f->db);
    assert_int_equal(q_int(db, "SELECT count(*) FROM copies", -1), 1000);
    sqlite3_close(db);
}

static void test_recover_edges(void **state)
{
    fixture *f = *state;
    char err[512] = "";
    bool did = true;

    /* Neither database nor journal. */
    assert_int_equal(xp_recover(f->db, &did, err, sizeof err), -1);
    assert_false(did);
    assert_one_line(err, f->db, "no such database");
    assert_false(exists(f->db));

    /* A garbage journal: an error, and nothing created or removed. */
    write_file(f->jpath, "this is not a journal at all, not even close.....", 48);
    assert_int_equal(xp_recover(f->db, &did, err, sizeof err), -1);
    assert_false(did);
    assert_one_line(err, f->jpath, "not an xferprof journal");
    assert_true(exists(f->jpath));
    assert_false(exists(f->db));
    unlink(f->jpath);

    /* A database without a journal: nothing to do. */
    xp_ingest *ig = NULL;
    assert_int_equal(xp_ingest_open(f->db, &ig, err, sizeof err), 0);
    xp_ingest_close(ig);
    did = true;
    assert_int_equal(xp_recover(f->db, &did, err, sizeof err), 0);
    assert_false(did);

    /* A journal without a database (the process died before any pass). */
    unlink(f->db);
    xp_journal *j = jw_create(f->jpath, 55);
    put_meta(j, "hostname", "h");
    put_simple_copy(j, 0);
    put_alloc(j, XP_API_cudaMalloc, XP_ALLOC_DEVICE, 1, 0x7f00, 1, START_MONO, 0, 0, 0, 0, 1);
    /* Left open, as by a killed process; its mapping outlives the file name. */
    assert_int_equal(xp_recover(f->db, &did, err, sizeof err), 0);
    assert_true(did);
    assert_false(exists(f->jpath));
    xp_journal_close(j);
    sqlite3 *db = db_open(f->db);
    assert_int_equal(q_int(db, "SELECT count(*) FROM copies", -1), 1);
    assert_int_equal(q_int(db, "SELECT count(*) FROM allocations WHERE free_ns IS NULL", -1), 1);
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'recovered'"), "1");
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'pid'"), "55");
    sqlite3_close(db);

    /* A journal of another run than the database's: refused, journal kept. */
    j = jw_create(f->jpath, 56);
    put_simple_copy(j, 1);
    xp_journal_close(j);
    assert_int_equal(xp_recover(f->db, &did, err, sizeof err), -1);
    assert_one_line(err, f->db, "another journal");
    assert_true(exists(f->jpath));
}

/* A copy from call site `site` of many (each its own stream): bytes say
 * which, so that a copy filed under another site's id shows. */
static void put_site_copy(xp_journal *j, uint64_t site, uint64_t i)
{
    put_copy(j, XP_API_cudaMemcpy, START_MONO + 1000 * i, 0, 0, XP_DIR_H2D, XP_HOST_PAGEABLE,
             XP_BLOCK_SYNC, 0x7f0000000000ull, 0x7f8000000000ull, site + 1, 0x1000 + site);
}

/* Each site stored once, every copy under its own site. */
static void check_sites(sqlite3 *db, long long sites, long long copies)
{
    assert_int_equal(q_int(db, "SELECT count(*) FROM call_sites", -1), sites);
    assert_int_equal(q_int(db, "SELECT count(DISTINCT stream) FROM call_sites", -1), sites);
    assert_int_equal(q_int(db, "SELECT count(*) FROM copies", -1), copies);
    assert_int_equal(q_int(db, "SELECT count(*) FROM copies WHERE stream != 4095 + bytes", -1), 0);
}

/* More sites than the ingest's mirror of call_sites holds (24,576:
 * xp_ingest_int.h), stored by passes of two handles in turn, as by the
 * profiled process and a recovery beside it, and a pass rolled back after
 * adding sites: no site stored twice, none under another's id.  The mirror
 * treats a site it lacks as new only while it holds every row; another
 * handle's rows and a rollback's must make it look again. */
#define SITES_MANY 30000

static void test_sites_across_passes(void **state)
{
    fixture *f = *state;
    char err[512] = "";
    xp_journal *j = jw_create(f->jpath, 1);
    xp_ingest *a = NULL, *b = NULL;
    xp_journal_reader *ra = NULL, *rb = NULL;
    assert_int_equal(xp_ingest_open(f->db, &a, err, sizeof err), 0);
    assert_int_equal(xp_journal_open(f->jpath, &ra, err, sizeof err), 0);
    sqlite3 *db = db_open(f->db);
    uint64_t i = 0, copies = 0;

    for (uint64_t s = 0; s < 10000; s++, copies++)
        put_site_copy(j, s, i++);
    assert_int_equal(xp_ingest_pass(a, ra, false, err, sizeof err), 0);
    check_sites(db, 10000, (long long)copies);

    /* A pass that adds sites, then fails: they are rolled back. */
    for (uint64_t s = 10000; s < 10101; s++, copies++)
        put_site_copy(j, s, i++);
    db_exec(db, "CREATE TRIGGER inject BEFORE INSERT ON copy_rows WHEN NEW.bytes = 10101 "
                "BEGIN SELECT RAISE(ABORT, 'injected failure'); END");
    assert_int_equal(xp_ingest_pass(a, ra, false, err, sizeof err), -1);
    db_exec(db, "DROP TRIGGER inject");
    check_sites(db, 10000, 10000);

    /* Another handle stores sites the first has not seen. */
    for (uint64_t s = 0; s < 20000; s++, copies++)
        put_site_copy(j, s, i++);
    assert_int_equal(xp_ingest_open(f->db, &b, err, sizeof err), 0);
    assert_int_equal(xp_journal_open(f->jpath, &rb, err, sizeof err), 0);
    assert_int_equal(xp_ingest_pass(b, rb, false, err, sizeof err), 0);
    check_sites(db, 20000, (long long)copies);

    /* The first handle again, past what its mirror holds. */
    for (uint64_t s = 0; s < SITES_MANY; s++, copies++)
        put_site_copy(j, s, i++);
    assert_int_equal(xp_ingest_pass(a, ra, false, err, sizeof err), 0);
    check_sites(db, SITES_MANY, (long long)copies);

    /* And the other one, to the end. */
    for (uint64_t s = SITES_MANY; s-- > 0; copies++)
        put_site_copy(j, s, i++);
    xp_journal_close(j);
    assert_int_equal(xp_ingest_pass(b, rb, true, err, sizeof err), 0);
    check_sites(db, SITES_MANY, (long long)copies);
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'records_lost'"), "0");
    sqlite3_close(db);
    xp_ingest_close(a);
    xp_ingest_close(b);
    xp_journal_reader_close(ra);
    xp_journal_reader_close(rb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_times_backwards, setup, teardown),
        cmocka_unit_test_setup_teardown(test_incremental_passes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interrupted_pass, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crash_then_recover, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_record, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_records, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lost_and_meta, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_databases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recover_edges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_null_cells, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recover_count, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sites_across_passes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
