/* test_ingest_blocks.c: the ingest of a caching allocator's block records
 * (journal version 9): BLOCK into block_events, the blocks view pairing each
 * block taken with its return at the same address in the allocator's order
 * (an address handed out again, another device's same address, a return
 * never seen), a record stored twice counted and not doubled, a malformed
 * one refused, and a schema 2 database upgraded in place. */
#include "ingest_fixture.h"

#define BLOCK_STACK 0x3333333333333333ull

static void put_block(xp_journal *j, uint64_t seq, bool taken, uint64_t ptr, uint64_t bytes,
                      int device, uint64_t at)
{
    xp_rec_block *r = jw_reserve(j, XP_REC_BLOCK, 0, sizeof *r, 4242);
    jw_call(&r->c, at, 100, BLOCK_STACK, 0, device);
    r->seq = seq;
    r->ptr = ptr;
    r->bytes = bytes;
    r->allocated = 1000 + seq;
    r->reserved_bytes = 2u << 20;
    r->op = taken ? XP_BLOCK_TAKEN : XP_BLOCK_RETURNED;
    r->allocator = XP_BLOCKS_PYTORCH;
    xp_journal_commit(r);
}

static void put_block_journal(const fixture *f)
{
    xp_journal *j = jw_create(f->jpath, 4343);
    static const uint64_t frames[] = {0x401000, 0x402000};
    put_stack(j, BLOCK_STACK, frames, 2);
    const uint64_t a = 0x7f3a00000000ull, b = 0x7f3a00100000ull;
    put_block(j, 1, true, a, 512, 0, START_MONO + 100);
    put_block(j, 2, true, a, 1024, 1, START_MONO + 110);      /* device 1, same address */
    put_block(j, 3, false, a, 512, 0, START_MONO + 200);
    put_block(j, 4, true, a, 2048, 0, START_MONO + 300);      /* handed out again */
    put_block(j, 5, true, b, 4096, 0, START_MONO + 400);      /* kept */
    put_block(j, 6, false, a, 2048, 0, START_MONO + 500);
    put_block(j, 3, false, a, 512, 0, START_MONO + 200);      /* stored twice */
    put_block(j, 7, false, 0x7f3a00200000ull, 64, 0, START_MONO + 600); /* never taken here */
    /* Malformed: an unknown op. */
    xp_rec_block *r = jw_reserve(j, XP_REC_BLOCK, 0, sizeof *r, 4242);
    jw_call(&r->c, START_MONO + 700, 100, BLOCK_STACK, 0, 0);
    r->seq = 8;
    r->ptr = b;
    r->bytes = 64;
    r->op = 9;
    r->allocator = XP_BLOCKS_PYTORCH;
    xp_journal_commit(r);
    xp_journal_close(j);
}

static void check_block_rows(sqlite3 *db)
{
    assert_string_equal(Q_TEXT(db, "SELECT group_concat(seq || ':' || op || ':' || device || ':' "
                                   "|| bytes || ':' || allocated, ' ') "
                                   "FROM (SELECT * FROM block_events ORDER BY seq)"),
                        "1:taken:0:512:1001 2:taken:1:1024:1002 3:returned:0:512:1003 "
                        "4:taken:0:2048:1004 5:taken:0:4096:1005 6:returned:0:2048:1006 "
                        "7:returned:0:64:1007");
    assert_string_equal(Q_TEXT(db, "SELECT group_concat(seq || ':' || allocator || ':' || "
                                   "taken_ns || ':' || coalesce(returned_ns, '-'), ' ') "
                                   "FROM (SELECT * FROM blocks ORDER BY seq)"),
                        "1:pytorch:1000000000000100:1000000000000200 "
                        "2:pytorch:1000000000000110:- "
                        "4:pytorch:1000000000000300:1000000000000500 "
                        "5:pytorch:1000000000000400:-");
    assert_int_equal(q_int(db, "SELECT count(*) FROM blocks b JOIN stacks s ON s.id = b.stack_id "
                               "WHERE s.hash = 3689348814741910323", -1), 4);
    assert_int_equal(q_int(db, "SELECT count(*) FROM blocks WHERE return_stack_id IS NOT NULL", -1), 2);
}

static void test_block_records(void **state)
{
    fixture *f = *state;
    put_block_journal(f);
    ingest_all(f);
    sqlite3 *db = db_open(f->db);
    check_block_rows(db);
    /* The duplicate and the malformed record: counted, not stored. */
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'records_lost'"), "2");
    sqlite3_close(db);
}

/* A schema 2 database (made by a build before blocks), written by this one:
 * upgraded in place, then the same rows. */
static void test_upgrade_from_2(void **state)
{
    fixture *f = *state;
    sqlite3 *db = db_fresh(f->db);
    db_exec(db, "DROP VIEW blocks; DROP VIEW block_events; DROP TABLE block_rows; "
                "UPDATE meta SET value = '2' WHERE key = 'schema_version'; "
                "PRAGMA user_version = 2");
    sqlite3_close(db);
    put_block_journal(f);
    ingest_all(f);
    db = db_open(f->db);
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'schema_version'"), "3");
    assert_int_equal(q_int(db, "PRAGMA user_version", -1), 3);
    check_block_rows(db);
    sqlite3_close(db);
}

/* xp_schema_has, which the analyzer asks before reading a table an older
 * schema lacks: tables and views count, an index does not. */
static void test_schema_has(void **state)
{
    fixture *f = *state;
    sqlite3 *db = db_fresh(f->db);
    int has = -1;
    assert_int_equal(xp_schema_has(db, "block_rows", &has), SQLITE_OK);
    assert_int_equal(has, 1);
    assert_int_equal(xp_schema_has(db, "blocks", &has), SQLITE_OK);
    assert_int_equal(has, 1);
    assert_int_equal(xp_schema_has(db, "block_rows_ptr", &has), SQLITE_OK);
    assert_int_equal(has, 0);
    db_exec(db, "DROP VIEW blocks; DROP VIEW block_events; DROP TABLE block_rows");
    has = -1;
    assert_int_equal(xp_schema_has(db, "block_rows", &has), SQLITE_OK);
    assert_int_equal(has, 0);
    sqlite3_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_block_records, setup, teardown),
        cmocka_unit_test_setup_teardown(test_schema_has, setup, teardown),
        cmocka_unit_test_setup_teardown(test_upgrade_from_2, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
