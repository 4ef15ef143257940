/* test_ingest.c: journal records into the run database (xp_ingest, xp_schema):
 * what each record type becomes, column by column. */
#include "ingest_fixture.h"

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
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'schema_version'"), "3");
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_copy_columns, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v2_columns, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nvtx, setup, teardown),
        cmocka_unit_test_setup_teardown(test_allocations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors_and_syncs, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
