/* ingest_fixture.h: what the ingest tests (test_ingest*.c) share: a
 * directory with run.db and its journal, journals written with the real
 * writer, and queries of the database they become. */
#ifndef INGEST_FIXTURE_H
#define INGEST_FIXTURE_H
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "xp_api.h"
#include "xp_format.h"
#include "xp_ingest.h"
#include "xp_journal.h"
#include "xp_schema.h"

#define START_MONO 1000000000000000ull   /* ~1e15 ns, as on a machine up for days */
#define START_WALL 1700000000000000000ull

/* ---- fixture: a directory with run.db and run.db.xpj --------------------- */

typedef struct fixture {
    char dir[64];
    char db[128];
    char jpath[160];
} fixture;

static inline int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (f == NULL)
        return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/xp_ingest_XXXXXX");
    if (mkdtemp(f->dir) == NULL)
        return -1;
    snprintf(f->db, sizeof f->db, "%s/run.db", f->dir);
    snprintf(f->jpath, sizeof f->jpath, "%s%s", f->db, XP_JOURNAL_SUFFIX);
    *state = f;
    return 0;
}

static inline int teardown(void **state)
{
    fixture *f = *state;
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal", XP_JOURNAL_SUFFIX};
    char p[200];
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(p, sizeof p, "%s%s", f->db, suffixes[i]);
        unlink(p);
    }
    rmdir(f->dir);
    free(f);
    return 0;
}

/* ---- writing journals with the real writer -------------------------------- */

static inline xp_journal *jw_create(const char *path, int pid)
{
    xp_journal_header h = {.pid = pid, .ppid = 1, .start_wall_ns = START_WALL,
                           .start_mono_ns = START_MONO};
    xp_journal *j = NULL;
    assert_int_equal(xp_journal_create(path, &h, &j), 0);
    return j;
}

static inline void *jw_reserve(xp_journal *j, uint16_t type, uint16_t api, uint32_t size, uint32_t tid)
{
    xp_rec_header *h = xp_journal_reserve(j, size);
    assert_non_null(h);
    memset(h, 0, size);
    h->type = type;
    h->api = api;
    h->size = size;
    h->tid = tid;
    return h;
}

static inline void jw_call(xp_call *c, uint64_t start, uint64_t dur, uint64_t stack, int status,
                    int device)
{
    c->start_ns = start;
    c->end_ns = start + dur;
    c->stack_id = stack;
    c->status = status;
    c->device = device;
}

static inline void put_copy(xp_journal *j, xp_api api, uint64_t start, uint64_t stack, int status,
                     uint8_t dir, uint8_t host, uint8_t blocking, uint64_t src, uint64_t dst,
                     uint64_t bytes, uint64_t stream)
{
    xp_rec_copy *r = jw_reserve(j, XP_REC_COPY, (uint16_t)api, sizeof *r, 4242);
    jw_call(&r->c, start, 1500, stack, status, 0);
    r->src = src;
    r->dst = dst;
    r->bytes = bytes;
    r->stream = stream;
    r->direction = dir;
    r->host_mem = host;
    r->blocking = blocking;
    r->kind = dir == XP_DIR_H2D ? 1 : dir == XP_DIR_D2H ? 2 : dir == XP_DIR_D2D ? 3 : 255;
    xp_journal_commit(r);
}

/* The copy most tests use: an H2D cudaMemcpy of `bytes`, no stack. */
static inline void put_simple_copy(xp_journal *j, uint64_t i)
{
    put_copy(j, XP_API_cudaMemcpy, START_MONO + 1000 * i, 0, 0, XP_DIR_H2D, XP_HOST_PAGEABLE,
             XP_BLOCK_SYNC, 0x7f0000000000ull + i, 0x7f8000000000ull, i + 1, 0);
}

static inline void put_alloc(xp_journal *j, xp_api api, uint8_t kind, uint64_t alloc_id, uint64_t ptr,
                      uint64_t bytes, uint64_t start, uint64_t stack, int status,
                      uint64_t mem_free, uint64_t mem_total, uint32_t tid)
{
    xp_rec_alloc *r = jw_reserve(j, XP_REC_ALLOC, (uint16_t)api, sizeof *r, tid);
    jw_call(&r->c, start, 700, stack, status, 0);
    r->alloc_id = alloc_id;
    r->ptr = ptr;
    r->bytes = bytes;
    r->mem_free = mem_free;
    r->mem_total = mem_total;
    r->kind = kind;
    xp_journal_commit(r);
}

static inline void put_free(xp_journal *j, xp_api api, uint64_t alloc_id, uint64_t ptr, uint64_t start,
                     uint64_t stack, int status)
{
    xp_rec_free *r = jw_reserve(j, XP_REC_FREE, (uint16_t)api, sizeof *r, 4242);
    jw_call(&r->c, start, 300, stack, status, 0);
    r->alloc_id = alloc_id;
    r->ptr = ptr;
    r->kind = XP_ALLOC_DEVICE;
    xp_journal_commit(r);
}

static inline void put_sync(xp_journal *j, xp_api api, uint64_t stream, uint64_t start, uint64_t stack,
                     int status)
{
    xp_rec_sync *r = jw_reserve(j, XP_REC_SYNC, (uint16_t)api, sizeof *r, 4243);
    jw_call(&r->c, start, 9000, stack, status, 1);
    r->stream = stream;
    xp_journal_commit(r);
}

static inline void put_call(xp_journal *j, xp_api api, uint64_t arg0, uint64_t start, int status)
{
    xp_rec_call *r = jw_reserve(j, XP_REC_CALL, (uint16_t)api, sizeof *r, 4242);
    jw_call(&r->c, start, 100, 0, status, 0);
    r->arg0 = arg0;
    xp_journal_commit(r);
}

static inline void put_stack(xp_journal *j, uint64_t hash, const uint64_t *frames, uint32_t depth)
{
    uint32_t size = xp_record_size(sizeof(xp_rec_stack) + 8u * depth);
    xp_rec_stack *r = jw_reserve(j, XP_REC_STACK, 0, size, 4242);
    r->stack_id = hash;
    r->depth = depth;
    memcpy(r + 1, frames, 8u * depth);
    xp_journal_commit(r);
}

static inline void put_module(xp_journal *j, const char *path, uint64_t base, uint64_t size,
                       uint64_t low, const uint8_t *build_id, uint16_t build_id_len)
{
    size_t plen = strlen(path);
    uint32_t rsize = xp_record_size(sizeof(xp_rec_module) + plen + 1);
    xp_rec_module *r = jw_reserve(j, XP_REC_MODULE, 0, rsize, 4242);
    r->base = base;
    r->size = size;
    r->low = low;
    r->build_id_len = build_id_len;
    r->path_len = (uint16_t)plen;
    if (build_id_len)
        memcpy(r->build_id, build_id, build_id_len);
    memcpy(r + 1, path, plen + 1);
    xp_journal_commit(r);
}

static inline void put_meta(xp_journal *j, const char *key, const char *value)
{
    size_t kl = strlen(key), vl = strlen(value);
    uint32_t size = xp_record_size(sizeof(xp_rec_meta) + kl + 1 + vl + 1);
    xp_rec_meta *r = jw_reserve(j, XP_REC_META, 0, size, 4242);
    r->key_len = (uint16_t)kl;
    r->value_len = (uint32_t)vl;
    char *p = (char *)(r + 1);
    memcpy(p, key, kl + 1);
    memcpy(p + kl + 1, value, vl + 1);
    xp_journal_commit(r);
}

/* A record the writer was killed in the middle of: filled, never committed. */
static inline void put_torn_copy(xp_journal *j)
{
    xp_rec_copy *r = jw_reserve(j, XP_REC_COPY, XP_API_cudaMemcpy, sizeof *r, 4242);
    r->bytes = 999;
}

/* ---- reading the database -------------------------------------------------- */

static inline sqlite3 *db_open(const char *path)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    return db;
}

/* A new database with this build's schema and no rows (what the ingest
 * creates at its first open), opened: for tests that then make it older. */
static inline sqlite3 *db_fresh(const char *path)
{
    xp_ingest *ig = NULL;
    char err[256];
    assert_int_equal(xp_ingest_open(path, &ig, err, sizeof err), 0);
    xp_ingest_close(ig);
    return db_open(path);
}

static inline void db_exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg);
}

/* The first column of the single row sql returns, as an integer; `missing`
 * if it returned no row or NULL. */
static inline long long q_int(sqlite3 *db, const char *sql, long long missing)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    long long v = missing;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = sqlite3_column_int64(st, 0);
    else if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return v;
}

/* Same, as text ("<NULL>" for NULL, "<none>" for no row); buf holds it. */
static inline const char *q_text(sqlite3 *db, const char *sql, char *buf, size_t len)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_NULL)
        snprintf(buf, len, "<NULL>");
    else if (rc == SQLITE_ROW)
        snprintf(buf, len, "%s", (const char *)sqlite3_column_text(st, 0));
    else
        snprintf(buf, len, "<none>");
    sqlite3_finalize(st);
    return buf;
}

/* The details of sql's query plan, joined. */
static inline const char *q_plan(sqlite3 *db, const char *sql)
{
    static char plan[1024];
    char text[512];
    snprintf(text, sizeof text, "EXPLAIN QUERY PLAN %s", sql);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, text, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", text, sqlite3_errmsg(db));
    plan[0] = '\0';
    while (sqlite3_step(st) == SQLITE_ROW) {
        size_t n = strlen(plan);
        snprintf(plan + n, sizeof plan - n, "%s; ", (const char *)sqlite3_column_text(st, 3));
    }
    sqlite3_finalize(st);
    return plan;
}

#define Q_TEXT(db, sql) q_text((db), (sql), (char[512]){0}, 512)

/* Ingests the whole journal (a final pass) into f->db with fresh handles. */
static inline void ingest_all(const fixture *f)
{
    char err[512] = "";
    xp_ingest *ig = NULL;
    xp_journal_reader *r = NULL;
    if (xp_ingest_open(f->db, &ig, err, sizeof err) != 0)
        fail_msg("open: %s", err);
    assert_int_equal(xp_journal_open(f->jpath, &r, err, sizeof err), 0);
    if (xp_ingest_pass(ig, r, true, err, sizeof err) != 0)
        fail_msg("pass: %s", err);
    xp_ingest_close(ig);
    xp_journal_reader_close(r);
}

static inline bool exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}


static const uint64_t frames_a[] = {0x7f12345678a0ull, 0x55550000401234ull, 0x7f0000000001ull};
#define HASH_A 0x9e3779b97f4a7c15ull
#define HASH_B 0xfedcba9876543210ull   /* >= 2^63: stored as a negative integer */

#endif
