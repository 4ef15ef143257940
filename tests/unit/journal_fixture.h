/* journal_fixture.h: what the journal tests (test_journal*.c) share: a
 * temporary folder, records written with a recognisable pattern by several
 * threads, and a reader that collects what it is given. */
#ifndef JOURNAL_FIXTURE_H
#define JOURNAL_FIXTURE_H
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xp_checksum.h"
#include "xp_journal.h"

/* ---- helpers ------------------------------------------------------------ */

static char tmpdir[64];

static inline void path_of(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", tmpdir, name);
}

static inline uint64_t rng_next(uint64_t *s)
{
    /* xorshift64*: reproducible fuzz input from a seed. */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

static inline uint8_t pattern(uint32_t thread, uint64_t seq, uint32_t i)
{
    return (uint8_t)(seq * 131u + thread * 17u + i * 7u + 1u);
}

/* A test record: the header carries the writer number in tid and the low
 * bits of seq in api; from 24 bytes on, the whole seq, then a pattern. */
static inline void *put_rec(xp_journal *j, uint32_t thread, uint64_t seq, uint32_t size, bool commit)
{
    unsigned char *p = xp_journal_reserve(j, size);
    if (p == NULL)
        return NULL;
    xp_rec_header *h = (xp_rec_header *)p;
    h->type = XP_REC_CALL;
    h->api = (uint16_t)seq;
    h->size = size;
    h->tid = thread;
    if (size >= 24)
        memcpy(p + 16, &seq, 8);
    for (uint32_t i = 24; i < size; i++)
        p[i] = pattern(thread, seq, i);
    if (commit)
        xp_journal_commit(p);
    return p;
}

/* Checks a record's contents; returns its seq (only the low 16 bits for a
 * 16-byte record), or UINT64_MAX if anything is wrong. */
static inline uint64_t check_rec(const xp_rec_header *h)
{
    const unsigned char *p = (const unsigned char *)h;
    if (h->type != XP_REC_CALL || h->size < 16 || h->size % 8 ||
        h->commit != xp_record_checksum(h, h->size))
        return UINT64_MAX;
    if (h->size < 24)
        return h->api;
    uint64_t seq;
    memcpy(&seq, p + 16, 8);
    if ((uint16_t)seq != h->api)
        return UINT64_MAX;
    for (uint32_t i = 24; i < h->size; i++)
        if (p[i] != pattern(h->tid, seq, i))
            return UINT64_MAX;
    return seq;
}

typedef struct item {
    uint32_t thread, size, offset;
    uint64_t seq, chunk;
} item;

typedef struct collect {
    item *items;
    size_t n, cap;
    size_t stop_at;     /* return stop_rc when this many have been collected (0: never) */
    int stop_rc;
    size_t bad;         /* records whose contents were wrong */
} collect;

static inline int collect_fn(void *user, const xp_rec_header *rec, uint64_t chunk, uint32_t offset)
{
    collect *c = user;
    if (c->stop_at != 0 && c->n == c->stop_at) {
        c->stop_at = 0;
        return c->stop_rc;
    }
    uint64_t seq = check_rec(rec);
    if (seq == UINT64_MAX)
        c->bad++;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 1024;
        c->items = realloc(c->items, c->cap * sizeof *c->items);
        assert_non_null(c->items);
    }
    c->items[c->n++] = (item){.thread = rec->tid, .size = rec->size, .offset = offset,
                              .seq = seq, .chunk = chunk};
    return 0;
}

static inline void collect_reset(collect *c)
{
    free(c->items);
    memset(c, 0, sizeof *c);
}

static inline xp_journal *make_journal(const char *name, char *path, size_t len)
{
    path_of(path, len, name);
    xp_journal_header h = {.pid = 1234, .ppid = 99, .start_wall_ns = 111, .start_mono_ns = 222};
    xp_journal *j = NULL;
    assert_int_equal(xp_journal_create(path, &h, &j), 0);
    assert_non_null(j);
    return j;
}

static inline xp_journal_reader *open_reader(const char *path)
{
    char err[256] = "";
    xp_journal_reader *r = NULL;
    int rc = xp_journal_open(path, &r, err, sizeof err);
    if (rc != 0)
        fail_msg("open %s: %s", path, err);
    return r;
}

/* Reads a whole journal from the start in final mode. */
static inline xp_read_stats read_all(const char *path, collect *c)
{
    xp_journal_reader *r = open_reader(path);
    xp_read_stats st;
    assert_int_equal(xp_journal_read(r, collect_fn, c, true, &st), 0);
    xp_journal_reader_close(r);
    return st;
}

static inline void remove_tmpdir(void)
{
    DIR *d = opendir(tmpdir);
    if (d != NULL) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char p[512];
            snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(tmpdir);
}

/* Runs tests in a fresh temporary folder (TMPDIR or /tmp), removed after. */
static inline int journal_run(const struct CMUnitTest *tests, size_t n)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/xpj-test.XXXXXX",
             base != NULL && strlen(base) < 32 ? base : "/tmp");
    if (mkdtemp(tmpdir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    int rc = _cmocka_run_group_tests("journal", tests, n, NULL, NULL);
    remove_tmpdir();
    return rc;
}

#endif
