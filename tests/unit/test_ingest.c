/* test_ingest.c: journal records into the run database (xp_ingest, xp_schema), exactly once. */
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

static int setup(void **state)
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

static int teardown(void **state)
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

static xp_journal *jw_create(const char *path, int pid)
{
    xp_journal_header h = {.pid = pid, .ppid = 1, .start_wall_ns = START_WALL,
                           .start_mono_ns = START_MONO};
    xp_journal *j = NULL;
    assert_int_equal(xp_journal_create(path, &h, &j), 0);
    return j;
}

static void *jw_reserve(xp_journal *j, uint16_t type, uint16_t api, uint32_t size, uint32_t tid)
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

static void jw_call(xp_call *c, uint64_t start, uint64_t dur, uint64_t stack, int status,
                    int device)
{
    c->start_ns = start;
    c->end_ns = start + dur;
    c->stack_id = stack;
    c->status = status;
    c->device = device;
}

static void put_copy(xp_journal *j, xp_api api, uint64_t start, uint64_t stack, int status,
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
static void put_simple_copy(xp_journal *j, uint64_t i)
{
    put_copy(j, XP_API_cudaMemcpy, START_MONO + 1000 * i, 0, 0, XP_DIR_H2D, XP_HOST_PAGEABLE,
             XP_BLOCK_SYNC, 0x7f0000000000ull + i, 0x7f8000000000ull, i + 1, 0);
}

static void put_alloc(xp_journal *j, xp_api api, uint8_t kind, uint64_t alloc_id, uint64_t ptr,
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

static void put_free(xp_journal *j, xp_api api, uint64_t alloc_id, uint64_t ptr, uint64_t start,
                     uint64_t stack, int status)
{
    xp_rec_free *r = jw_reserve(j, XP_REC_FREE, (uint16_t)api, sizeof *r, 4242);
    jw_call(&r->c, start, 300, stack, status, 0);
    r->alloc_id = alloc_id;
    r->ptr = ptr;
    r->kind = XP_ALLOC_DEVICE;
    xp_journal_commit(r);
}

static void put_sync(xp_journal *j, xp_api api, uint64_t stream, uint64_t start, uint64_t stack,
                     int status)
{
    xp_rec_sync *r = jw_reserve(j, XP_REC_SYNC, (uint16_t)api, sizeof *r, 4243);
    jw_call(&r->c, start, 9000, stack, status, 1);
    r->stream = stream;
    xp_journal_commit(r);
}

static void put_call(xp_journal *j, xp_api api, uint64_t arg0, uint64_t start, int status)
{
    xp_rec_call *r = jw_reserve(j, XP_REC_CALL, (uint16_t)api, sizeof *r, 4242);
    jw_call(&r->c, start, 100, 0, status, 0);
    r->arg0 = arg0;
    xp_journal_commit(r);
}

static void put_stack(xp_journal *j, uint64_t hash, const uint64_t *frames, uint32_t depth)
{
    uint32_t size = xp_record_size(sizeof(xp_rec_stack) + 8u * depth);
    xp_rec_stack *r = jw_reserve(j, XP_REC_STACK, 0, size, 4242);
    r->stack_id = hash;
    r->depth = depth;
    memcpy(r + 1, frames, 8u * depth);
    xp_journal_commit(r);
}

static void put_module(xp_journal *j, const char *path, uint64_t base, uint64_t size,
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

static void put_meta(xp_journal *j, const char *key, const char *value)
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
static void put_torn_copy(xp_journal *j)
{
    xp_rec_copy *r = jw_reserve(j, XP_REC_COPY, XP_API_cudaMemcpy, sizeof *r, 4242);
    r->bytes = 999;
}

/* ---- reading the database -------------------------------------------------- */

static sqlite3 *db_open(const char *path)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    return db;
}

static void db_exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg);
}

/* The first column of the single row sql returns, as an integer; `missing`
 * if it returned no row or NULL. */
static long long q_int(sqlite3 *db, const char *sql, long long missing)
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
static const char *q_text(sqlite3 *db, const char *sql, char *buf, size_t len)
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
static const char *q_plan(sqlite3 *db, const char *sql)
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
static void ingest_all(const fixture *f)
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

static bool exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* ---- tests ----------------------------------------------------------------- */

static const uint64_t frames_a[] = {0x7f12345678a0ull, 0x55550000401234ull, 0x7f0000000001ull};
#define HASH_A 0x9e3779b97f4a7c15ull
#define HASH_B 0xfedcba9876543210ull   /* >= 2^63: stored as a negative integer */

static void test_copy_columns(void **state)
{
    fixture *f = *state;
    xp_journal *j = jw_create(f->jpath, 777);
    /* The copy refers to a stack whose record comes later: a placeholder row
     * first, filled in when the STACK record arrives. */
    put_copy(j, XP_API_cudaMemcpyAsync, START_MONO + 5000, HASH_A, 0, XP_DIR_H2D, XP_HOST_PINNED,
             XP_BLOCK_ASYNC, 0x7f3a5c001000ull, 0x7f3a00200000ull, 4096, 0x55d0c0a01230ull);
    put_stack(j, HASH_A, frames_a, 3);
    put_copy(j, XP_API_cudaMemcpyAsync, START_MONO + 9000, HASH_A, 0, XP_DIR_D2H,
             XP_HOST_PAGEABLE, XP_BLOCK_ASYNC_PAGEABLE, 0x7f3a00200000ull, 0x7f3a5c001000ull,
             1 << 20, 0x55d0c0a01230ull);
    put_copy(j, XP_API_cudaMemcpy, START_MONO + 20000, HASH_B, 0, XP_DIR_D2D, XP_HOST_NONE,
             XP_BLOCK_SYNC, 0x7f3a00200000ull, 0x7f3a00400000ull, 64, 0);
    put_stack(j, HASH_B, frames_a, 1);
    put_copy(j, XP_API_cudaMemcpy, START_MONO + 30000, 0, 0, XP_DIR_H2H, XP_HOST_MANAGED,
             XP_BLOCK_SYNC, 1, 2, 8, 0);
    const uint8_t bid[20] = {0xde, 0xad, 0xbe, 0xef, 0x00, 0x01, 0x0a, 0xff, 1, 2,
                             3,    4,    5,    6,    7,    8,    9,    10,   11, 12};
    put_module(j, "/usr/lib/libtorch_cuda.so", 0x7f1200000000ull, 0x100000, 0x7f1200001000ull,
               bid, 20);
    put_module(j, "/usr/lib/libtorch_cuda.so", 0x7f1200000000ull, 0x100000, 0x7f1200001000ull,
               bid, 20);  /* the same object again (a rescan): one row */
    put_module(j, "/bin/train", 0x555500000000ull, 0x2000, 0x555500000000ull, NULL, 0);
    put_meta(j, "hostname", "gpu-node-3");
    put_meta(j, "cmdline", "python train.py --epochs 1");
    put_meta(j, "exit_status", "0");
    put_meta(j, "schema_version", "99");  /* not the process's to set */
    xp_journal_close(j);
    ingest_all(f);

    sqlite3 *db = db_open(f->db);
    assert_int_equal(q_int(db, "SELECT count(*) FROM copies", -1), 4);
    /* Column by column, through the view. */
    assert_string_equal(Q_TEXT(db, "SELECT api || ',' || layer || ',' || direction || ',' || "
                                   "host_mem || ',' || blocking || ',' || kind FROM copies "
                                   "WHERE id = 1"),
                        "cudaMemcpyAsync,runtime,H2D,pinned,async,1");
    assert_int_equal(q_int(db, "SELECT bytes FROM copies WHERE id = 1", -1), 4096);
    assert_int_equal(q_int(db, "SELECT src FROM copies WHERE id = 1", -1), 0x7f3a5c001000ll);
    assert_int_equal(q_int(db, "SELECT dst FROM copies WHERE id = 1", -1), 0x7f3a00200000ll);
    assert_int_equal(q_int(db, "SELECT stream FROM copies WHERE id = 1", -1), 0x55d0c0a01230ll);
    assert_int_equal(q_int(db, "SELECT device FROM copies WHERE id = 1", -1), 0);
    assert_int_equal(q_int(db, "SELECT tid FROM copies WHERE id = 1", -1), 4242);
    assert_int_equal(q_int(db, "SELECT start_ns FROM copies WHERE id = 1", -1), START_MONO + 5000);
    assert_int_equal(q_int(db, "SELECT end_ns FROM copies WHERE id = 1", -1), START_MONO + 6500);
    assert_int_equal(q_int(db, "SELECT status FROM copies WHERE id = 1", -1), 0);
    assert_string_equal(Q_TEXT(db, "SELECT direction || host_mem || blocking FROM copies "
                                   "WHERE id = 2"),
                        "D2Hpageableasync_pageable");
    assert_string_equal(Q_TEXT(db, "SELECT host_mem FROM copies WHERE id = 3"), "<NULL>");
    assert_string_equal(Q_TEXT(db, "SELECT direction || blocking FROM copies WHERE id = 3"),
                        "D2Dsync");
    assert_string_equal(Q_TEXT(db, "SELECT direction || host_mem || api FROM copies WHERE id = 4"),
                        "H2HmanagedcudaMemcpy");
    assert_string_equal(Q_TEXT(db, "SELECT stack_id FROM copies WHERE id = 4"), "<NULL>");
    assert_string_equal(Q_TEXT(db, "SELECT kind FROM copies WHERE id = 4"), "<NULL>");

    /* Stacks: one row per hash, small ids, the placeholder filled in. */
    assert_int_equal(q_int(db, "SELECT count(*) FROM stacks", -1), 2);
    assert_int_equal(q_int(db, "SELECT count(DISTINCT stack_id) FROM copies", -1), 2);
    assert_int_equal(q_int(db, "SELECT max(id) FROM stacks", -1), 2);
    assert_int_equal(q_int(db, "SELECT s.depth FROM copies c JOIN stacks s ON s.id = c.stack_id "
                               "WHERE c.id = 1", -1), 3);
    assert_int_equal(q_int(db, "SELECT count(*) FROM copies c JOIN stacks s "
                               "ON s.id = c.stack_id WHERE c.id IN (1, 2)", -1), 2);
    assert_string_equal(Q_TEXT(db, "SELECT lower(hex(s.frames)) FROM copies c JOIN stacks s "
                                   "ON s.id = c.stack_id WHERE c.id = 2"),
                        "a0785634127f0000" "3412400000555500" "01000000007f0000");
    assert_int_equal(q_int(db, "SELECT hash FROM stacks WHERE depth = 1", 0), (long long)HASH_B);
    assert_int_equal(q_int(db, "SELECT length(frames) FROM stacks WHERE depth = 1", -1), 8);

    /* Modules: one row per (path, base), build id as lowercase hex. */
    assert_int_equal(q_int(db, "SELECT count(*) FROM modules", -1), 2);
    assert_string_equal(Q_TEXT(db, "SELECT build_id FROM modules WHERE path LIKE '%torch%'"),
                        "deadbeef00010aff0102030405060708090a0b0c");
    assert_int_equal(q_int(db, "SELECT low FROM modules WHERE path LIKE '%torch%'", -1),
                     0x7f1200001000ll);
    assert_int_equal(q_int(db, "SELECT base FROM modules WHERE path LIKE '%torch%'", -1),
                     0x7f1200000000ll);
    assert_int_equal(q_int(db, "SELECT size FROM modules WHERE path LIKE '%torch%'", -1), 0x100000);
    assert_string_equal(Q_TEXT(db, "SELECT build_id FROM modules WHERE path = '/bin/train'"),
                        "<NULL>");

    /* meta: written at creation, from the journal header, from META records. */
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'schema_version'"), "1");
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'xferprof_version'"),
                        "0.1.0");
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'records_lost'"), "0");
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'pid'"), "777");
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'start_wall_ns'"),
                        "1700000000000000000");
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'hostname'"),
                        "gpu-node-3");
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'cmdline'"),
                        "python train.py --epochs 1");
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'exit_status'"), "0");
    assert_int_equal(q_int(db, "SELECT count(*) FROM errors", -1), 0);
    sqlite3_close(db);
}

/* A copy with the version 2 fields set; size 88 writes a version 1 record. */
static void put_copy_v2(xp_journal *j, uint64_t i, uint32_t size, uint8_t fp_kind, uint64_t fp,
                        uint64_t kernel_seq)
{
    xp_rec_copy *r = jw_reserve(j, XP_REC_COPY, XP_API_cudaMemcpy, size, 4242);
    jw_call(&r->c, START_MONO + 1000 * i, 100, 0, 0, 0);
    r->src = 0x7f0000000000ull;
    r->dst = 0x7f8000000000ull;
    r->bytes = i + 1;
    r->direction = XP_DIR_H2D;
    r->host_mem = XP_HOST_PAGEABLE;
    r->blocking = XP_BLOCK_SYNC;
    r->kind = 1;
    r->fingerprint_kind = fp_kind;
    if (size >= sizeof *r) {
        r->fingerprint = fp;
        r->kernel_seq = kernel_seq;
    }
    xp_journal_commit(r);
}

static void put_memset(xp_journal *j, xp_api api, uint64_t start, int status, uint64_t dst,
                       int value, uint64_t bytes, uint8_t host_mem, uint8_t blocking,
                       uint64_t kernel_seq)
{
    xp_rec_memset *r = jw_reserve(j, XP_REC_MEMSET, (uint16_t)api, sizeof *r, 4242);
    jw_call(&r->c, start, 200, 0, status, 1);
    r->dst = dst;
    r->bytes = bytes;
    r->stream = 0x5000;
    r->kernel_seq = kernel_seq;
    r->value = value;
    r->host_mem = host_mem;
    r->blocking = blocking;
    xp_journal_commit(r);
}

/* Fingerprints, kernel_seq and memsets (journal version 2), and version 1
 * copy records read alongside: their new columns are NULL. */
static void test_v2_columns(void **state)
{
    fixture *f = *state;
    xp_journal *j = jw_create(f->jpath, 778);
    /* 40 copies: one full batch of multi-row inserts, then single rows;
     * every third without a fingerprint. */
    for (uint64_t i = 0; i < 40; i++)
        put_copy_v2(j, i, sizeof(xp_rec_copy), i % 3 == 0 ? XP_FP_NONE
                                                : i % 3 == 1 ? XP_FP_FULL : XP_FP_SAMPLED,
                    0xfedcba9876543210ull + i, 7 * i);
    put_copy_v2(j, 40, XP_REC_COPY_V1_SIZE, 0, 0, 0);
    /* Not a known kind: no fingerprint either. */
    put_copy_v2(j, 41, sizeof(xp_rec_copy), 7, 0x1234, 5);
    put_memset(j, XP_API_cudaMemset, START_MONO + 100000, 0, 0x7f3a00200000ull, 0x1ff, 4096,
               XP_HOST_NONE, XP_BLOCK_ASYNC, 12);
    put_memset(j, XP_API_cudaMemsetAsync, START_MONO + 101000, 1, 0x10, 0, 64, XP_HOST_PINNED,
               XP_BLOCK_ASYNC, 13);
    xp_journal_close(j);
    ingest_all(f);

    sqlite3 *db = db_open(f->db);
    assert_int_equal(q_int(db, "SELECT count(*) FROM copies", -1), 42);
    assert_int_equal(q_int(db, "SELECT count(*) FROM copies WHERE fingerprint IS NULL", -1),
                     14 + 2);
    assert_int_equal(q_int(db, "SELECT count(*) FROM copies WHERE (fingerprint IS NULL) <> "
                               "(fingerprint_kind IS NULL)", -1), 0);
    for (int i = 0; i < 40; i++) {
        char sql[160];
        snprintf(sql, sizeof sql, "SELECT fingerprint FROM copies WHERE bytes = %d", i + 1);
        assert_int_equal(q_int(db, sql, 0), i % 3 ? (long long)(0xfedcba9876543210ull + (uint64_t)i) : 0);
        snprintf(sql, sizeof sql, "SELECT kernel_seq FROM copies WHERE bytes = %d", i + 1);
        assert_int_equal(q_int(db, sql, -1), 7 * i);
        snprintf(sql, sizeof sql, "SELECT fingerprint_kind FROM copies WHERE bytes = %d", i + 1);
        assert_string_equal(Q_TEXT(db, sql), i % 3 == 0 ? "<NULL>" : i % 3 == 1 ? "full"
                                                                              : "sampled");
    }
    assert_string_equal(Q_TEXT(db, "SELECT coalesce(kernel_seq, 'null') || ',' || "
                                   "coalesce(fingerprint, 'null') || ',' || "
                                   "coalesce(fingerprint_kind, 'null') FROM copies "
                                   "WHERE bytes = 41"),
                        "null,null,null");
    assert_string_equal(Q_TEXT(db, "SELECT kernel_seq || ',' || coalesce(fingerprint, 'null') "
                                   "FROM copies WHERE bytes = 42"),
                        "5,null");

    assert_int_equal(q_int(db, "SELECT count(*) FROM memsets", -1), 2);
    assert_string_equal(Q_TEXT(db, "SELECT api || ',' || layer || ',' || bytes || ',' || value "
                                   "|| ',' || coalesce(host_mem, 'none') || ',' || blocking || "
                                   "',' || stream || ',' || device || ',' || kernel_seq || ',' "
                                   "|| status || ',' || dur_ns FROM memsets WHERE id = 1"),
                        "cudaMemset,runtime,4096,511,none,async,20480,1,12,0,200");
    assert_int_equal(q_int(db, "SELECT dst FROM memsets WHERE id = 1", -1), 0x7f3a00200000ll);
    assert_string_equal(Q_TEXT(db, "SELECT host_mem || status FROM memsets WHERE id = 2"),
                        "pinned1");
    assert_string_equal(Q_TEXT(db, "SELECT api || ',' || record || ',' || "
                                   "coalesce(copy_id, 'null') || ',' || detail FROM errors"),
                        "cudaMemsetAsync,memset,null,memset 64 bytes dst 0x10 value 0");
    sqlite3_close(db);
}

/* ---- NVTX ranges (journal version 3, issue 4) ----------------------------- */

static void put_name(xp_journal *j, uint64_t hash, const char *name)
{
    size_t n = strlen(name);
    xp_rec_name *r = jw_reserve(j, XP_REC_NAME, 0, xp_record_size(sizeof *r + n + 1), 4242);
    r->hash = hash;
    r->len = (uint32_t)n;
    memcpy(r + 1, name, n);
    xp_journal_commit(r);
}

static void put_nvtx(xp_journal *j, uint8_t op, uint64_t t, uint64_t id, uint64_t parent,
                     uint64_t name, uint64_t domain, int depth, uint32_t tid)
{
    xp_rec_nvtx *r = jw_reserve(j, XP_REC_NVTX, 0, sizeof *r, tid);
    r->op = op;
    r->time_ns = START_MONO + t;
    r->range_id = id;
    r->parent_id = parent;
    r->name = name;
    r->domain = domain;
    r->depth = depth;
    xp_journal_commit(r);
}

/* Copy, memset and sync records carrying nvtx_range (version 3), or of a
 * version 2 size, which ends before it. */
static void put_attributed(xp_journal *j, uint16_t type, uint32_t size, uint64_t bytes,
                           uint64_t range)
{
    xp_call *c = jw_reserve(j, type, type == XP_REC_SYNC ? XP_API_cudaDeviceSynchronize
                                     : type == XP_REC_MEMSET ? XP_API_cudaMemset
                                                             : XP_API_cudaMemcpy, size, 4242);
    jw_call(c, START_MONO + 250, 10, 0, 0, 0);
    if (type == XP_REC_COPY) {
        xp_rec_copy *r = (xp_rec_copy *)c;
        r->bytes = bytes;
        r->direction = XP_DIR_H2D;
        r->host_mem = XP_HOST_PAGEABLE;
        r->blocking = XP_BLOCK_SYNC;
        r->kind = 1;
        if (size >= sizeof *r)
            r->nvtx_range = range;
    } else if (type == XP_REC_MEMSET) {
        xp_rec_memset *r = (xp_rec_memset *)c;
        r->bytes = bytes;
        if (size >= sizeof *r)
            r->nvtx_range = range;
    } else if (size >= sizeof(xp_rec_sync)) {
        ((xp_rec_sync *)c)->nvtx_range = range;
    }
    xp_journal_commit(c);
}

#define NAME_STEP 0x1111ull
#define NAME_FWD 0xf00000000000f0f0ull   /* reads back negative */
#define NAME_DOM 0x3333ull
#define NAME_LOAD 0x4444ull

static void *nvtx_starter(void *arg)
{
    xp_journal *j = arg;
    put_name(j, NAME_LOAD, "load");
    put_nvtx(j, XP_NVTX_START, 50, 3, 0, NAME_LOAD, 0, 0, 5151);
    return NULL;
}

/* Ranges opened in one pass and closed in a later one; an end stored before
 * its start (the starting thread's chunk comes later); names shared through
 * hashes; attribution columns, NULL for version 2 records. */
static void test_nvtx(void **state)
{
    fixture *f = *state;
    char err[512];
    xp_journal *j = jw_create(f->jpath, 779);
    xp_ingest *ig = NULL;
    xp_journal_reader *r = NULL;
    assert_int_equal(xp_ingest_open(f->db, &ig, err, sizeof err), 0);
    assert_int_equal(xp_journal_open(f->jpath, &r, err, sizeof err), 0);
    put_nvtx(j, XP_NVTX_END, 900, 3, 0, 0, 0, 0, 4242);
    put_name(j, NAME_STEP, "step 0");
    put_name(j, NAME_FWD, "forward");
    put_name(j, NAME_DOM, "my domain");
    put_nvtx(j, XP_NVTX_PUSH, 100, 1, 0, NAME_STEP, 0, 0, 4242);
    put_nvtx(j, XP_NVTX_PUSH, 200, 2, 1, NAME_FWD, NAME_DOM, 0, 4242);
    put_attributed(j, XP_REC_COPY, sizeof(xp_rec_copy), 10, 2);
    put_attributed(j, XP_REC_COPY, sizeof(xp_rec_copy), 11, 0);
    put_attributed(j, XP_REC_COPY, XP_REC_COPY_V2_SIZE, 12, 2);
    put_attributed(j, XP_REC_MEMSET, sizeof(xp_rec_memset), 13, 1);
    put_attributed(j, XP_REC_MEMSET, XP_REC_MEMSET_V2_SIZE, 14, 1);
    put_attributed(j, XP_REC_SYNC, sizeof(xp_rec_sync), 0, 2);
    put_attributed(j, XP_REC_SYNC, XP_REC_SYNC_V2_SIZE, 0, 2);
    assert_int_equal(xp_ingest_pass(ig, r, false, err, sizeof err), 0);

    sqlite3 *db = db_open(f->db);
    assert_int_equal(q_int(db, "SELECT count(*) FROM nvtx_ranges WHERE end_ns IS NULL", -1), 2);
    assert_string_equal(Q_TEXT(db, "SELECT group_concat(coalesce(nvtx_range, 'null')) FROM "
                                   "(SELECT nvtx_range FROM copies ORDER BY bytes)"),
                        "2,null,null");
    assert_string_equal(Q_TEXT(db, "SELECT group_concat(coalesce(nvtx_range, 'null')) FROM "
                                   "(SELECT nvtx_range FROM memsets ORDER BY bytes)"),
                        "1,null");
    assert_string_equal(Q_TEXT(db, "SELECT group_concat(coalesce(nvtx_range, 'null')) FROM "
                                   "(SELECT nvtx_range FROM syncs ORDER BY id)"),
                        "2,null");

    put_nvtx(j, XP_NVTX_POP, 300, 2, 0, 0, NAME_DOM, 0, 4242);
    put_nvtx(j, XP_NVTX_POP, 400, 1, 0, 0, 0, 0, 4242);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, nvtx_starter, j), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    xp_journal_close(j);
    assert_int_equal(xp_ingest_pass(ig, r, true, err, sizeof err), 0);
    assert_int_equal(xp_ingest_pass(ig, r, true, err, sizeof err), 0);
    xp_ingest_close(ig);
    xp_journal_reader_close(r);

    assert_int_equal(q_int(db, "SELECT count(*) FROM nvtx_ranges", -1), 3);
    static const char row_sql[] =
        "SELECT id || ',' || coalesce(name, 'null') || ',' || coalesce(domain, 'null') || ',' "
        "|| kind || ',' || tid || ',' || coalesce(end_tid, 'null') || ',' || (start_ns - ?1) "
        "|| ',' || coalesce(end_ns - ?1, 'null') || ',' || coalesce(depth, 'null') || ',' || "
        "coalesce(parent_id, 'null') FROM nvtx_ranges WHERE id = ?2";
    static const char *const want[] = {
        "1,step 0,null,push,4242,4242,100,400,0,null",
        "2,forward,my domain,push,4242,4242,200,300,0,1",
        "3,load,null,startend,5151,4242,50,900,null,null",
    };
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, row_sql, -1, &st, NULL), SQLITE_OK);
    for (int i = 0; i < 3; i++) {
        sqlite3_bind_int64(st, 1, (sqlite3_int64)START_MONO);
        sqlite3_bind_int(st, 2, i + 1);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_string_equal((const char *)sqlite3_column_text(st, 0), want[i]);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    assert_int_equal(q_int(db, "SELECT value FROM meta WHERE key = 'records_lost'", -1), 0);
    sqlite3_close(db);
}

/* Written by a second thread, so into a second chunk, which the reader
 * delivers after the first: the allocation after its free, the stack after
 * the copy that uses it. */
static void *second_thread(void *arg)
{
    xp_journal *j = arg;
    put_alloc(j, XP_API_cudaMalloc, XP_ALLOC_DEVICE, 7, 0x7f5500000000ull, 1 << 20,
              START_MONO + 100, HASH_A, 0, 0, 0, 5151);
    put_stack(j, HASH_A, frames_a, 3);
    return NULL;
}

static void test_allocations(void **state)
{
    fixture *f = *state;
    xp_journal *j = jw_create(f->jpath, 1);
    /* chunk 0 (this thread) */
    put_free(j, XP_API_cudaFree, 7, 0x7f5500000000ull, START_MONO + 900, HASH_A, 0);
    put_alloc(j, XP_API_cudaMallocHost, XP_ALLOC_PINNED, 8, 0x7f6600000000ull, 4096,
              START_MONO + 1000, 0, 0, 0, 0, 4242);
    put_alloc(j, XP_API_cudaMallocManaged, XP_ALLOC_MANAGED, 9, 0x7f7700000000ull, 8192,
              START_MONO + 1100, 0, 0, 0, 0, 4242);
    /* A failed allocation: an error, not an allocation. */
    put_alloc(j, XP_API_cudaMalloc, XP_ALLOC_DEVICE, 0, 0, 1073741824ull, START_MONO + 1200, 0,
              2, 536870912ull, 17179869184ull, 4242);
    put_alloc(j, XP_API_cudaHostRegister, XP_ALLOC_REGISTERED, 0, 0, 100, START_MONO + 1250, 0,
              1, 0, 0, 4242);
    /* A failed free of a live allocation frees nothing. */
    put_free(j, XP_API_cudaFreeHost, 8, 0x7f6600000000ull, START_MONO + 1300, 0, 1);
    /* A failed free of a pointer never allocated: an error, nothing freed. */
    put_free(j, XP_API_cudaFree, 0, 0x7fdeadbeef00ull, START_MONO + 1400, 0, 1);
    /* A successful free of a pointer xferprof never saw allocated. */
    put_free(j, XP_API_cudaFree, 0, 0x7fabc0000000ull, START_MONO + 1500, 0, 0);
    /* Freeing NULL does nothing and is recorded nowhere. */
    put_free(j, XP_API_cudaFree, 0, 0, START_MONO + 1600, 0, 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, second_thread, j), 0);
    pthread_join(t, NULL);
    xp_journal_close(j);
    ingest_all(f);

    sqlite3 *db = db_open(f->db);
    assert_int_equal(q_int(db, "SELECT count(*) FROM allocations", -1), 3);
    /* The pair met although the free came first. */
    assert_string_equal(Q_TEXT(db, "SELECT api || ',' || layer || ',' || kind || ',' || "
                                   "free_api FROM allocations WHERE id = 7"),
                        "cudaMalloc,runtime,device,cudaFree");
    assert_int_equal(q_int(db, "SELECT ptr FROM allocations WHERE id = 7", -1), 0x7f5500000000ll);
    assert_int_equal(q_int(db, "SELECT bytes FROM allocations WHERE id = 7", -1), 1 << 20);
    assert_int_equal(q_int(db, "SELECT alloc_ns FROM allocations WHERE id = 7", -1),
                     START_MONO + 100);
    assert_int_equal(q_int(db, "SELECT free_ns FROM allocations WHERE id = 7", -1),
                     START_MONO + 900);
    assert_int_equal(q_int(db, "SELECT alloc_tid FROM allocations WHERE id = 7", -1), 5151);
    assert_int_equal(q_int(db, "SELECT device FROM allocations WHERE id = 7", -2), 0);
    assert_int_equal(q_int(db, "SELECT count(*) FROM allocations a JOIN stacks s "
                               "ON s.id = a.alloc_stack_id AND s.id = a.free_stack_id "
                               "WHERE a.id = 7 AND s.depth = 3", -1), 1);
    /* Live ones: free_ns NULL, whatever failed free named them. */
    assert_string_equal(Q_TEXT(db, "SELECT kind || ',' || ifnull(free_ns, 'live') "
                                   "FROM allocations WHERE id = 8"),
                        "pinned,live");
    assert_string_equal(Q_TEXT(db, "SELECT free_api FROM allocations WHERE id = 8"), "<NULL>");
    assert_string_equal(Q_TEXT(db, "SELECT kind || ',' || ifnull(free_ns, 'live') "
                                   "FROM allocations WHERE id = 9"),
                        "managed,live");
    assert_int_equal(q_int(db, "SELECT count(*) FROM allocations WHERE free_ns IS NOT NULL", -1),
                     1);

    assert_int_equal(q_int(db, "SELECT count(*) FROM errors", -1), 4);
    assert_string_equal(Q_TEXT(db, "SELECT detail FROM errors WHERE api = 'cudaMalloc'"),
                        "requested 1073741824 bytes; device free 536870912 of 17179869184");
    assert_string_equal(Q_TEXT(db, "SELECT status || ',' || record FROM errors "
                                   "WHERE api = 'cudaMalloc'"),
                        "2,alloc");
    assert_string_equal(Q_TEXT(db, "SELECT detail FROM errors WHERE api = 'cudaHostRegister'"),
                        "requested 100 bytes");
    assert_string_equal(Q_TEXT(db, "SELECT detail FROM errors WHERE api = 'cudaFreeHost'"),
                        "ptr 0x7f6600000000");
    assert_string_equal(Q_TEXT(db, "SELECT detail || ',' || record FROM errors "
                                   "WHERE api = 'cudaFree'"),
                        "ptr 0x7fdeadbeef00,free");
    assert_int_equal(q_int(db, "SELECT start_ns FROM errors WHERE api = 'cudaFree'", -1),
                     START_MONO + 1400);
    assert_int_equal(q_int(db, "SELECT tid FROM errors WHERE api = 'cudaFree'", -1), 4242);

    assert_int_equal(q_int(db, "SELECT count(*) FROM unknown_frees", -1), 1);
    assert_int_equal(q_int(db, "SELECT ptr FROM unknown_frees", -1), 0x7fabc0000000ll);
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'records_lost'"), "0");
    /* The analyzer's lookups of an address use the index. */
    assert_non_null(strstr(q_plan(db, "SELECT * FROM allocations WHERE ptr = 1 AND alloc_ns < 5"),
                           "alloc_rows_ptr"));
    assert_non_null(strstr(q_plan(db, "SELECT count(*) FROM errors WHERE api = 'cudaFree'"),
                           "error_rows_api"));
    sqlite3_close(db);
}

static void test_errors_and_syncs(void **state)
{
    fixture *f = *state;
    xp_journal *j = jw_create(f->jpath, 1);
    put_copy(j, XP_API_cudaMemcpy, START_MONO + 10, 0, 0, XP_DIR_H2D, XP_HOST_PAGEABLE,
             XP_BLOCK_SYNC, 0x7f01, 0x7f02, 16, 0);
    /* A failed copy is a copy and an error. */
    put_copy(j, XP_API_cudaMemcpyAsync_ptsz, START_MONO + 20, HASH_A, 700, XP_DIR_H2D,
             XP_HOST_PINNED, XP_BLOCK_ASYNC, 0x7f3a5c001000ull, 0x7f3a00200000ull, 4096, 0x99);
    put_sync(j, XP_API_cudaStreamSynchronize, 0x55d0c0a01230ull, START_MONO + 30, HASH_A, 0);
    put_sync(j, XP_API_cudaDeviceSynchronize, 0, START_MONO + 40, 0, 719);
    put_sync(j, XP_API_cudaEventSynchronize, 0x55aa, START_MONO + 50, 0, 0);
    put_call(j, XP_API_cudaHostUnregister, 0x7f0000abc000ull, START_MONO + 60, 712);
    put_call(j, XP_API_cudaHostUnregister, 0x7f0000abc000ull, START_MONO + 70, 0);
    /* An id from a newer build: stored, named by number. */
    put_copy(j, (xp_api)999, START_MONO + 80, 0, 0, XP_DIR_D2H, XP_HOST_PINNED, XP_BLOCK_ASYNC,
             1, 2, 3, 0);
    put_stack(j, HASH_A, frames_a, 2);
    xp_journal_close(j);
    ingest_all(f);

    sqlite3 *db = db_open(f->db);
    assert_int_equal(q_int(db, "SELECT count(*) FROM copies", -1), 3);
    assert_int_equal(q_int(db, "SELECT status FROM copies WHERE id = 2", -1), 700);
    assert_string_equal(Q_TEXT(db, "SELECT api FROM copies WHERE id = 2"),
                        "cudaMemcpyAsync_ptsz");
    assert_string_equal(Q_TEXT(db, "SELECT api FROM copies WHERE id = 3"), "api#999");
    assert_int_equal(q_int(db, "SELECT count(*) FROM errors", -1), 3);
    assert_string_equal(Q_TEXT(db, "SELECT detail FROM errors WHERE record = 'copy'"),
                        "H2D 4096 bytes src 0x7f3a5c001000 dst 0x7f3a00200000");
    assert_string_equal(Q_TEXT(db, "SELECT api || ',' || status FROM errors "
                                   "WHERE record = 'copy'"),
                        "cudaMemcpyAsync_ptsz,700");
    assert_int_equal(q_int(db, "SELECT copy_id FROM errors WHERE record = 'copy'", -1), 2);
    assert_int_equal(q_int(db, "SELECT e.stack_id = c.stack_id FROM errors e JOIN copies c "
                               "ON c.id = e.copy_id", -1), 1);
    assert_int_equal(q_int(db, "SELECT start_ns FROM errors WHERE record = 'copy'", -1),
                     START_MONO + 20);
    assert_string_equal(Q_TEXT(db, "SELECT api || ',' || status || ',' || detail FROM errors "
                                   "WHERE record = 'sync'"),
                        "cudaDeviceSynchronize,719,device 1");
    assert_string_equal(Q_TEXT(db, "SELECT api || ',' || status || ',' || detail FROM errors "
                                   "WHERE record = 'call'"),
                        "cudaHostUnregister,712,arg 0x7f0000abc000");

    assert_int_equal(q_int(db, "SELECT count(*) FROM syncs", -1), 3);
    assert_string_equal(Q_TEXT(db, "SELECT api FROM syncs WHERE id = 1"), "cudaStreamSynchronize");
    assert_int_equal(q_int(db, "SELECT stream FROM syncs WHERE id = 1", -1), 0x55d0c0a01230ll);
    assert_int_equal(q_int(db, "SELECT tid FROM syncs WHERE id = 1", -1), 4243);
    assert_int_equal(q_int(db, "SELECT start_ns FROM syncs WHERE id = 1", -1), START_MONO + 30);
    assert_int_equal(q_int(db, "SELECT end_ns FROM syncs WHERE id = 1", -1), START_MONO + 9030);
    assert_int_equal(q_int(db, "SELECT s.depth FROM syncs y JOIN stacks s ON s.id = y.stack_id "
                               "WHERE y.id = 1", -1), 2);
    assert_string_equal(Q_TEXT(db, "SELECT stack_id FROM syncs WHERE id = 2"), "<NULL>");
    assert_int_equal(q_int(db, "SELECT status FROM syncs WHERE id = 2", -1), 719);
    sqlite3_close(db);
}

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
    db_exec(db, "UPDATE meta SET value = '2' WHERE key = 'schema_version'");
    sqlite3_close(db);
    db = NULL;
    assert_int_equal(xp_ingest_open(f->db, &ig, err, sizeof err), -1);
    assert_one_line(err, f->db, "database schema 2 is newer than this xferprof (1)");

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_copy_columns, setup, teardown),
        cmocka_unit_test_setup_teardown(test_times_backwards, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v2_columns, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nvtx, setup, teardown),
        cmocka_unit_test_setup_teardown(test_allocations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors_and_syncs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_incremental_passes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interrupted_pass, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crash_then_recover, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_record, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_records, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lost_and_meta, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_databases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recover_edges, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
