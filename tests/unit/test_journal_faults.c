/* test_journal_faults.c: the journal under the host program's faults: fork, SIGKILL,
 * sizes it cannot grow to, planted files, descriptors closed or replaced
 * under the writer, two journals in one process, chunks given back on tmpfs. */
#include "journal_fixture.h"

#include <linux/magic.h>
#include <sys/vfs.h>

/* The child of a fork abandons the parent's journal, writes its own, and
 * leaves the parent's records alone. */
static void test_fork_child_abandons(void **state)
{
    (void)state;
    char path[128], child_path[128];
    xp_journal *j = make_journal("parent.xpj", path, sizeof path);
    path_of(child_path, sizeof child_path, "child.xpj");
    for (uint64_t i = 0; i < 100; i++)
        put_rec(j, 1, i, 88, true);  /* this thread now has a chunk cached */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        xp_journal_abandon_after_fork(j);
        int bad = 0;
        if (xp_journal_reserve(j, 88) != NULL)
            bad |= 1;
        xp_journal *cj = NULL;
        xp_journal_header h = {.pid = getpid()};
        if (xp_journal_create(child_path, &h, &cj) != 0)
            _exit(2);
        for (uint64_t i = 0; i < 200; i++)
            if (put_rec(cj, 2, i, 88, true) == NULL)
                bad |= 4;
        xp_journal_close(cj);
        xp_journal_close(j);  /* frees the child's copy only */
        _exit(bad);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);

    collect c = {0};
    xp_read_stats st = read_all(path, &c);
    assert_int_equal(c.n, 100);
    assert_int_equal(st.torn, 0);
    collect_reset(&c);
    for (uint64_t i = 100; i < 150; i++)
        assert_non_null(put_rec(j, 1, i, 88, true));
    xp_journal_close(j);
    st = read_all(path, &c);
    assert_int_equal(c.n, 150);
    assert_int_equal(c.bad, 0);
    for (size_t i = 0; i < c.n; i++) {
        assert_int_equal(c.items[i].thread, 1);
        assert_int_equal(c.items[i].seq, i);
    }
    collect_reset(&c);
    st = read_all(child_path, &c);
    assert_int_equal(c.n, 200);
    assert_int_equal(c.bad, 0);
    assert_int_equal(st.torn, 0);
    for (size_t i = 0; i < c.n; i++) {
        assert_int_equal(c.items[i].thread, 2);
        assert_int_equal(c.items[i].seq, i);
    }
    collect_reset(&c);
}

/* Even before (or without) abandoning, a fork child cannot write into the
 * parent's chunks: the hot path notices it is not the journal's process. */
static void test_fork_child_without_abandon(void **state)
{
    (void)state;
    char path[128];
    xp_journal *j = make_journal("parent2.xpj", path, sizeof path);
    for (uint64_t i = 0; i < 100; i++)
        put_rec(j, 1, i, 88, true);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int bad = 0;
        for (uint64_t i = 0; i < 300; i++)
            if (put_rec(j, 2, i, 88, true) != NULL)
                bad = 1;
        if (xp_journal_lost(j) != 300)
            bad |= 2;
        _exit(bad);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(xp_journal_lost(j), 0);
    for (uint64_t i = 100; i < 150; i++)
        assert_non_null(put_rec(j, 1, i, 88, true));
    xp_journal_close(j);
    collect c = {0};
    xp_read_stats st = read_all(path, &c);
    assert_int_equal(c.n, 150);
    assert_int_equal(st.torn, 0);
    assert_int_equal(c.bad, 0);
    for (size_t i = 0; i < c.n; i++) {
        assert_int_equal(c.items[i].thread, 1);
        assert_int_equal(c.items[i].seq, i);
    }
    collect_reset(&c);
}

/* kill -9 right after the last commit loses nothing. */
static void test_sigkill_keeps_records(void **state)
{
    (void)state;
    char path[128];
    path_of(path, sizeof path, "killed.xpj");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        xp_journal *j = NULL;
        xp_journal_header h = {.pid = getpid()};
        if (xp_journal_create(path, &h, &j) != 0)
            _exit(2);
        for (uint64_t i = 0; i < 1000; i++)
            if (put_rec(j, 3, i, 24 + 8 * (uint32_t)(i % 40), true) == NULL)
                _exit(3);
        kill(getpid(), SIGKILL);
        _exit(4);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGKILL);
    collect c = {0};
    xp_read_stats st = read_all(path, &c);
    assert_int_equal(c.n, 1000);
    assert_int_equal(st.torn, 0);
    assert_int_equal(c.bad, 0);
    for (size_t i = 0; i < c.n; i++)
        assert_int_equal(c.items[i].seq, i);
    collect_reset(&c);
}

static void test_invalid_sizes_are_lost(void **state)
{
    (void)state;
    char path[128];
    xp_journal *j = make_journal("sizes.xpj", path, sizeof path);
    const uint32_t bad[] = {0, 8, 12, 17, 20, 100, XP_MAX_RECORD + 8, XP_CHUNK_SIZE, UINT32_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_null(xp_journal_reserve(j, bad[i]));
        assert_int_equal(xp_journal_lost(j), i + 1);
    }
    /* Also with a chunk already taken (the fast path). */
    assert_non_null(put_rec(j, 1, 0, 16, true));
    assert_null(xp_journal_reserve(j, 12));
    assert_null(xp_journal_reserve(j, 4));
    assert_int_equal(xp_journal_lost(j), sizeof bad / sizeof bad[0] + 2);
    assert_non_null(put_rec(j, 1, 1, XP_MAX_RECORD, true));
    xp_journal_commit(NULL);  /* harmless */
    xp_journal_close(j);
    collect c = {0};
    xp_read_stats st = read_all(path, &c);
    assert_int_equal(c.n, 2);
    assert_int_equal(st.torn, 0);
    collect_reset(&c);
}

/* A journal that cannot grow (here a file size limit, as a full disk would)
 * fails reservations, counts them, and keeps what was written; without
 * raising SIGXFSZ in the program. */
static void test_cannot_grow(void **state)
{
    (void)state;
    char path[128];
    path_of(path, sizeof path, "full.xpj");
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        struct rlimit rl;
        if (getrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(2);
        rl.rlim_cur = XP_JOURNAL_HEADER_SIZE + 12ull * XP_CHUNK_SIZE;
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(2);
        xp_journal *j = NULL;
        xp_journal_header h = {.pid = getpid()};
        if (xp_journal_create(path, &h, &j) != 0)
            _exit(3);
        uint64_t ok = 0, failed = 0;
        for (uint64_t i = 0; i < 4000; i++) {
            if (put_rec(j, 1, i, 4096, true))
                ok++;
            else
                failed++;
        }
        int bad = xp_journal_lost(j) != failed ? 4 : 0;
        xp_journal_close(j);
        if (write(fds[1], &ok, sizeof ok) != (ssize_t)sizeof ok)
            bad |= 8;
        _exit(bad);
    }
    close(fds[1]);
    uint64_t ok = 0;
    assert_int_equal(read(fds[0], &ok, sizeof ok), (ssize_t)sizeof ok);
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    /* 12 chunks of 63 records of 4 KiB. */
    assert_int_equal(ok, 12 * 63);
    collect c = {0};
    xp_read_stats st = read_all(path, &c);
    assert_int_equal(c.n, ok);
    assert_int_equal(st.torn, 0);
    assert_int_equal(c.bad, 0);
    for (size_t i = 0; i < c.n; i++)
        assert_int_equal(c.items[i].seq, i);
    collect_reset(&c);
}

/* Whether path holds exactly `len` bytes of `content`. */
static bool file_holds(const char *path, const char *content, size_t len)
{
    char buf[256];
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    return n == (ssize_t)len && memcmp(buf, content, len) == 0;
}

static void put_file(const char *path, const char *content)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
    close(fd);
}

/* Issue 14 item 11: whatever is planted at the journal's path (a symlink to a
 * victim, a dangling one, a file) is refused, never followed or truncated. */
static void test_create_refuses_planted(void **state)
{
    (void)state;
    char victim[128], link[128], missing[128], plain[128];
    path_of(victim, sizeof victim, "victim");
    path_of(link, sizeof link, "planted.xpj");
    path_of(missing, sizeof missing, "not-there");
    path_of(plain, sizeof plain, "plain.xpj");
    static const char content[] = "the victim's own bytes";
    put_file(victim, content);
    assert_int_equal(symlink(victim, link), 0);
    xp_journal_header h = {.pid = 1};
    xp_journal *j = NULL;
    int rc = xp_journal_create(link, &h, &j);
    assert_true(rc == EEXIST || rc == ELOOP);
    assert_null(j);
    assert_true(file_holds(victim, content, strlen(content)));
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));   /* not removed either: it is not ours */

    unlink(link);
    assert_int_equal(symlink(missing, link), 0);
    rc = xp_journal_create(link, &h, &j);
    assert_true(rc == EEXIST || rc == ELOOP);
    assert_int_equal(stat(missing, &st), -1);   /* the target was not created */

    put_file(plain, content);
    assert_int_equal(xp_journal_create(plain, &h, &j), EEXIST);
    assert_true(file_holds(plain, content, strlen(content)));
    unlink(link);
    unlink(plain);
    unlink(victim);
}

/* Issue 14 item 7: the program closes every descriptor >= 3 and opens files
 * of its own, which get the numbers the writer had; the journal goes on
 * growing and being written (no SIGBUS), and the program's files keep
 * exactly what it wrote.  In a child, which owns all its descriptors. */
static void test_descriptors_closed_under_writer(void **state)
{
    (void)state;
    char path[128], mine[128];
    path_of(path, sizeof path, "closed.xpj");
    static const char content[] = "the program's file";
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        xp_journal_header h = {.pid = getpid()};
        xp_journal *j = NULL;
        if (xp_journal_create(path, &h, &j) != 0)
            _exit(2);
        for (uint64_t i = 0; i < 100; i++)
            put_rec(j, 1, i, 4096, true);
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
        for (int f = 0; f < 8; f++) {
            char p[160];
            snprintf(p, sizeof p, "%s/mine-%d", tmpdir, f);
            int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
            if (fd < 0 || write(fd, content, strlen(content)) != (ssize_t)strlen(content))
                _exit(3);
        }
        /* 16 MiB more: the file grows several times, new chunks are mapped. */
        for (uint64_t i = 100; i < 4100; i++)
            if (put_rec(j, 1, i, 4096, true) == NULL)
                _exit(4);
        xp_journal_close(j);
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    for (int f = 0; f < 8; f++) {
        snprintf(mine, sizeof mine, "%s/mine-%d", tmpdir, f);
        assert_true(file_holds(mine, content, strlen(content)));
        unlink(mine);
    }
    collect c = {0};
    xp_read_stats st = read_all(path, &c);
    assert_int_equal(c.n, 4100);
    assert_int_equal(st.torn, 0);
    assert_int_equal(c.bad, 0);
    collect_reset(&c);
}

/* The journal's path replaced by another file during the run: growth
 * refuses that file (never extends or maps it), the records are counted as
 * lost with that reason, and what was written before stays readable. */
static void test_replaced_file_is_not_grown(void **state)
{
    (void)state;
    char path[128], other[128];
    xp_journal *j = make_journal("replaced.xpj", path, sizeof path);
    xp_journal_reader *r = open_reader(path);
    path_of(other, sizeof other, "other");
    static const char content[] = "not a journal";
    put_file(other, content);
    uint64_t ok = 0;
    for (uint64_t i = 0; i < 10; i++)
        ok += put_rec(j, 1, i, 4096, true) != NULL;
    assert_int_equal(rename(other, path), 0);
    for (uint64_t i = 10; i < 4000; i++)
        ok += put_rec(j, 1, i, 4096, true) != NULL;
    assert_true(ok < 4000);
    assert_int_equal(xp_journal_lost(j), 4000 - ok);
    assert_non_null(strstr(xp_journal_lost_reason(j), "replaced"));
    assert_true(file_holds(path, content, strlen(content)));
    /* The reader no longer believes the path either. */
    collect c = {0};
    assert_int_equal(xp_journal_read(r, collect_fn, &c, false, NULL), -1);
    collect_reset(&c);
    xp_journal_reader_close(r);
    xp_journal_close(j);
    unlink(path);
}

/* A thread that writes to two journals in turn keeps each one's records in
 * that journal. */
static void test_two_journals(void **state)
{
    (void)state;
    char p1[128], p2[128];
    xp_journal *j1 = make_journal("two1.xpj", p1, sizeof p1);
    xp_journal *j2 = make_journal("two2.xpj", p2, sizeof p2);
    for (uint64_t i = 0; i < 10; i++) {
        assert_non_null(put_rec(j1, 1, i, 88, true));
        assert_non_null(put_rec(j2, 2, i, 88, true));
    }
    xp_journal_close(j1);
    xp_journal_close(j2);
    collect c = {0};
    read_all(p1, &c);
    assert_int_equal(c.n, 10);
    for (size_t i = 0; i < c.n; i++)
        assert_int_equal(c.items[i].thread, 1);
    collect_reset(&c);
    read_all(p2, &c);
    assert_int_equal(c.n, 10);
    for (size_t i = 0; i < c.n; i++)
        assert_int_equal(c.items[i].thread, 2);
    collect_reset(&c);
}

/* Chunks given back (xp_journal_release_done punches them) are never read
 * again: not after the ingest reloads its progress (which seeks them), not by
 * a reader that opens the journal afresh (recover).  On tmpfs, reading a
 * hole through a mapping allocates a zeroed page for it (st_blocks grows),
 * and on a full tmpfs kills the reader with SIGBUS (the profiled program,
 * when the reader is its own ingest).  /dev/shm is tmpfs on every Linux
 * this runs on; anything else is a failure, not a skip. */
static void test_released_chunks_stay_holes(void **state)
{
    (void)state;
    struct statfs fs;
    if (statfs("/dev/shm", &fs) != 0 || fs.f_type != TMPFS_MAGIC)
        fail_msg("/dev/shm is not a tmpfs: this test needs one");
    char path[128];
    snprintf(path, sizeof path, "/dev/shm/xpj-holes-%d.xpj", (int)getpid());
    unlink(path);
    xp_journal_header h = {.pid = 1234};
    xp_journal *j = NULL;
    assert_int_equal(xp_journal_create(path, &h, &j), 0);
    for (uint64_t i = 0; i < 7000; i++)  /* chunks 0-1 full, chunk 2 in use */
        put_rec(j, 1, i, 88, true);

    collect c = {0};
    xp_journal_reader *r = open_reader(path);
    assert_int_equal(xp_journal_read(r, collect_fn, &c, false, NULL), 0);
    assert_int_equal(c.n, 7000);
    uint32_t stored0 = c.items[10].offset;   /* a position in chunk 0 */
    assert_int_equal(c.items[10].chunk, 0);
    size_t in_open = 0;
    for (size_t i = 0; i < c.n; i++)
        in_open += c.items[i].chunk == 2;
    assert_true(in_open > 0 && in_open < 7000);
    xp_journal_release_done(r);
    struct stat before, after;
    assert_int_equal(stat(path, &before), 0);

    /* The progress reloaded from the database seeks chunk 0: it stays done. */
    collect_reset(&c);
    xp_journal_seek(r, 0, stored0);
    assert_int_equal(xp_journal_read(r, collect_fn, &c, true, NULL), 0);
    assert_int_equal(c.n, 0);
    xp_journal_reader_close(r);
    assert_int_equal(stat(path, &after), 0);
    assert_int_equal(after.st_blocks, before.st_blocks);

    /* A fresh reader skips the holes and reads the chunk still in use. */
    xp_read_stats st;
    r = open_reader(path);
    assert_int_equal(xp_journal_read(r, collect_fn, &c, true, &st), 0);
    xp_journal_reader_close(r);
    assert_int_equal(c.n, in_open);
    assert_int_equal(c.bad, 0);
    assert_int_equal(st.torn, 0);
    assert_int_equal(stat(path, &after), 0);
    assert_int_equal(after.st_blocks, before.st_blocks);
    collect_reset(&c);
    xp_journal_close(j);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fork_child_abandons),
        cmocka_unit_test(test_fork_child_without_abandon),
        cmocka_unit_test(test_sigkill_keeps_records),
        cmocka_unit_test(test_invalid_sizes_are_lost),
        cmocka_unit_test(test_cannot_grow),
        cmocka_unit_test(test_create_refuses_planted),
        cmocka_unit_test(test_descriptors_closed_under_writer),
        cmocka_unit_test(test_replaced_file_is_not_grown),
        cmocka_unit_test(test_two_journals),
        cmocka_unit_test(test_released_chunks_stay_holes),
    };
    return journal_run(tests, sizeof tests / sizeof tests[0]);
}
