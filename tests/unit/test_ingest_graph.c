/* test_ingest_graph.c: the ingest of CUDA graph records (journal version 7):
 * GRAPH_NODE into graph_nodes (a set stored before or after the node it
 * changes), the copies and memsets a launch ran with their node and launch
 * stack, older copy records beside them, and a schema 1 database upgraded. */
#include "ingest_fixture.h"

#define LAUNCH_STACK 0x1111111111111111ull
#define NODE_STACK 0x2222222222222222ull

static void put_node(xp_journal *j, uint64_t id, uint8_t op, uint8_t via, uint64_t start,
                     uint64_t bytes, uint32_t tid)
{
    xp_rec_graph_node *r = jw_reserve(j, XP_REC_GRAPH_NODE,
                                      via == XP_GNODE_CAPTURE ? XP_API_cudaMemcpyAsync
                                                              : XP_API_cudaGraphAddMemcpyNode1D,
                                      sizeof *r, tid);
    jw_call(&r->c, start, 300, NODE_STACK, 0, 0);
    r->node_id = id;
    r->graph = 0x6000;
    r->handle = 0x7000 + id;
    r->stream = via == XP_GNODE_CAPTURE ? 0x5000 : 0;
    r->src = op == XP_GNODE_COPY ? 0x7f0000001000ull : 0;
    r->dst = 0x7f3a00000000ull;
    r->bytes = bytes;
    r->value = op == XP_GNODE_MEMSET ? 9 : 0;
    r->op = op;
    r->via = via;
    r->direction = op == XP_GNODE_COPY ? XP_DIR_H2D : 0;
    r->host_mem = op == XP_GNODE_COPY ? XP_HOST_PINNED : 0;
    r->kind = op == XP_GNODE_COPY ? 1 : 255;
    xp_journal_commit(r);
}

/* A copy a launch ran (node != 0), or an ordinary one; size: a record of
 * that journal version's size. */
static void put_run(xp_journal *j, uint64_t start, uint64_t node, uint64_t bytes, uint32_t size)
{
    xp_rec_copy *r = jw_reserve(j, XP_REC_COPY, XP_API_cudaGraphLaunch, size, 4242);
    jw_call(&r->c, start, 100, NODE_STACK, 0, 0);
    r->src = 0x7f0000001000ull;
    r->dst = 0x7f3a00000000ull;
    r->bytes = bytes;
    r->stream = 0x5000;
    r->direction = XP_DIR_H2D;
    r->host_mem = XP_HOST_PINNED;
    r->blocking = XP_BLOCK_ASYNC;
    r->kind = 1;
    if (size >= sizeof *r) {
        r->graph_node = node;
        r->launch_stack_id = node ? LAUNCH_STACK : 0;
    }
    xp_journal_commit(r);
}

static void put_memset_run(xp_journal *j, uint64_t start, uint64_t node)
{
    xp_rec_memset *r = jw_reserve(j, XP_REC_MEMSET, XP_API_cudaGraphLaunch, sizeof *r, 4242);
    jw_call(&r->c, start, 100, NODE_STACK, 0, 0);
    r->dst = 0x7f3a00000000ull;
    r->bytes = 64;
    r->stream = 0x5000;
    r->value = 9;
    r->blocking = XP_BLOCK_ASYNC;
    r->graph_node = node;
    r->launch_stack_id = LAUNCH_STACK;
    xp_journal_commit(r);
}

static void put_graph_journal(const fixture *f)
{
    xp_journal *j = jw_create(f->jpath, 4343);
    static const uint64_t frames[] = {0x401000, 0x402000};
    put_stack(j, NODE_STACK, frames, 2);
    put_stack(j, LAUNCH_STACK, frames + 1, 1);
    put_node(j, 1, XP_GNODE_COPY, XP_GNODE_CAPTURE, START_MONO + 1000, 4096, 4242);
    /* Node 2's new parameters stored before the add that made it. */
    put_node(j, 2, XP_GNODE_COPY, XP_GNODE_SET, START_MONO + 9000, 6000, 4343);
    put_node(j, 2, XP_GNODE_COPY, XP_GNODE_ADD, START_MONO + 2000, 5000, 4242);
    /* Node 3 set after it was added. */
    put_node(j, 3, XP_GNODE_MEMSET, XP_GNODE_CAPTURE, START_MONO + 3000, 64, 4242);
    put_node(j, 3, XP_GNODE_MEMSET, XP_GNODE_SET, START_MONO + 9500, 128, 4343);
    for (uint64_t i = 0; i < 3; i++) {
        put_run(j, START_MONO + 10000 + 1000 * i, 1, 4096, sizeof(xp_rec_copy));
        put_memset_run(j, START_MONO + 10000 + 1000 * i, 3);
    }
    put_run(j, START_MONO + 20000, 0, 77, sizeof(xp_rec_copy));
    put_run(j, START_MONO + 21000, 0, 78, XP_REC_COPY_V4_SIZE);
    xp_journal_close(j);
}

static void check_graph_rows(sqlite3 *db)
{
    assert_string_equal(Q_TEXT(db, "SELECT group_concat(id || ':' || op || ':' || via || ':' || "
                                   "coalesce(direction, '-') || ':' || coalesce(host_mem, '-') "
                                   "|| ':' || bytes || ':' || coalesce(value, '-') || ':' || "
                                   "coalesce(stream, '-') || ':' || updated || ':' || tid, ' ') "
                                   "FROM (SELECT * FROM graph_nodes ORDER BY id)"),
                        "1:copy:capture:H2D:pinned:4096:-:20480:0:4242 "
                        "2:copy:add:H2D:pinned:6000:-:-:1:4242 "
                        "3:memset:capture:-:-:128:9:20480:1:4242");
    assert_string_equal(Q_TEXT(db, "SELECT api || ',' || start_ns || ',' || handle "
                                   "FROM graph_nodes WHERE id = 2"),
                        "cudaGraphAddMemcpyNode1D,1000000000002000,28674");
    assert_int_equal(q_int(db, "SELECT count(*) FROM graph_nodes g JOIN stacks s "
                               "ON s.id = g.stack_id WHERE s.hash = 2459565876494606882", -1), 3);
    /* The runs: their node, the node's stack as theirs, the launch's apart. */
    assert_int_equal(q_int(db, "SELECT count(*) FROM copies WHERE graph_node = 1", -1), 3);
    assert_int_equal(q_int(db, "SELECT count(*) FROM copies c JOIN graph_nodes g "
                               "ON g.id = c.graph_node AND g.stack_id = c.stack_id "
                               "JOIN stacks l ON l.id = c.launch_stack_id "
                               "WHERE l.hash = 1229782938247303441", -1), 3);
    assert_int_equal(q_int(db, "SELECT count(*) FROM memsets m JOIN stacks l "
                               "ON l.id = m.launch_stack_id WHERE m.graph_node = 3 "
                               "AND l.hash = 1229782938247303441", -1), 3);
    /* Ordinary copies, a version 7 and a version 4 record: no node, no launch. */
    assert_string_equal(Q_TEXT(db, "SELECT group_concat(bytes || ':' || coalesce(graph_node, "
                                   "'null') || ':' || coalesce(launch_stack_id, 'null'), ' ') "
                                   "FROM (SELECT * FROM copies WHERE bytes > 70 AND bytes < 80 "
                                   "ORDER BY bytes)"),
                        "77:null:null 78:null:null");
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'records_lost'"), "0");
}

static void test_graph_records(void **state)
{
    fixture *f = *state;
    put_graph_journal(f);
    ingest_all(f);
    sqlite3 *db = db_open(f->db);
    check_graph_rows(db);
    sqlite3_close(db);
}

/* A schema 1 database (made by a build before graphs), written by this one:
 * upgraded in place (to 2, then 3), then the same rows. */
static void test_upgrade_from_1(void **state)
{
    fixture *f = *state;
    sqlite3 *db = db_fresh(f->db);
    db_exec(db, "DROP VIEW blocks; DROP VIEW block_events; DROP TABLE block_rows; "
                "DROP VIEW graph_nodes; DROP TABLE graph_node_rows; DROP VIEW copies; "
                "DROP VIEW memsets; ALTER TABLE copy_rows DROP COLUMN graph_node; "
                "ALTER TABLE copy_rows DROP COLUMN launch_stack; "
                "ALTER TABLE memset_rows DROP COLUMN graph_node; "
                "ALTER TABLE memset_rows DROP COLUMN launch_stack; "
                "CREATE VIEW copies AS SELECT id FROM copy_rows; "
                "CREATE VIEW memsets AS SELECT id FROM memset_rows; "
                "UPDATE meta SET value = '1' WHERE key = 'schema_version'; "
                "PRAGMA user_version = 1");
    sqlite3_close(db);
    put_graph_journal(f);
    ingest_all(f);
    db = db_open(f->db);
    assert_string_equal(Q_TEXT(db, "SELECT value FROM meta WHERE key = 'schema_version'"), "3");
    assert_int_equal(q_int(db, "PRAGMA user_version", -1), 3);
    assert_int_equal(q_int(db, "SELECT count(*) FROM blocks", -1), 0);
    check_graph_rows(db);
    sqlite3_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_graph_records, setup, teardown),
        cmocka_unit_test_setup_teardown(test_upgrade_from_1, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
