/* test_rules.c: the report's rules over hand-built models: what none may find in a
 * clean process, odd input, stacks off, thresholds and the rule table. */
#include "rules_fixture.h"

/* ---- a clean process, empty processes, odd input ---- */

/* Pinned async uploads on streams, a few big sync downloads, everything
 * freed: what a well-behaved program looks like to every rule. */
static void clean_process(struct xp_process *p, struct xp_copy *c, size_t nc, struct xp_alloc *a, size_t na)
{
    proc_init(p);
    for (size_t i = 0; i < nc; i++) {
        c[i] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, 8 * MiB, (int64_t)i * MS, 20000, 1 + (uint32_t)(i % 2));
        xt_site_of(&c[i])->stream = 0x100 + i % 2;
        c[i].fingerprint = 1000 + i; /* new content every time */
        c[i].fp_kind = 2;
        c[i].kernel_seq = i;
        c[i].dst = 0x10000000 + (i % 2) * 8 * MiB;
    }
    for (size_t i = 0; i < na; i++)
        a[i] = alloc(0x10000000 + i * 8 * MiB, 8 * MiB, (int64_t)i, 900 * MS + (int64_t)i, 3);
    p->copies = c;
    p->n_copies = nc;
    p->allocs = a;
    p->n_allocs = na;
}

static void test_clean_process_has_no_findings(void **state)
{
    struct xp_process p;
    struct xp_copy c[200];
    struct xp_alloc a[2];
    clean_process(&p, c, 200, a, 2);
    struct xp_sync s[3] = {{.start_ns = 5, .dur_ns = 100, .stream = 0x100, .stack_id = 4}};
    p.syncs = s;
    p.n_syncs = 3;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run_all(&r), 0);
    report_free(&r);
    (void)state;
}

static void test_empty_processes(void **state)
{
    struct xp_process procs[3];
    proc_init(&procs[0]);
    proc_init(&procs[2]);
    procs[1] = (struct xp_process){0}; /* no api names, no times, nothing */
    struct xp_copy c[12];
    for (size_t i = 0; i < 12; i++)
        c[i] = copy(XP_DIR_H2D, XP_HM_PAGEABLE, XP_BL_ASYNC_PAGEABLE, 100, (int64_t)i, 5, 7);
    procs[2].copies = c;
    procs[2].n_copies = 12;
    struct xp_report r;
    report_init(&r, procs, 3);
    /* Only the third process has anything to say, and it says it as itself. */
    run_all(&r);
    assert_true(r.n_findings > 0);
    for (size_t i = 0; i < r.n_findings; i++)
        assert_ptr_equal(r.findings[i].proc, &procs[2]);
    report_free(&r);
    report_init(&r, procs, 2);
    assert_int_equal(run_all(&r), 0);
    report_free(&r);
    report_init(&r, NULL, 0);
    assert_int_equal(run_all(&r), 0);
    report_free(&r);
    (void)state;
}

/* Zero and negative durations, zero bytes, frees before allocations, NULL
 * strings, unknown codes: nothing crashes, sums never go negative. */
static void test_odd_input(void **state)
{
    struct xp_process p;
    proc_init(&p);
    p.api_names = NULL;
    p.n_api = 0;
    p.start_mono_ns = 500;
    p.end_mono_ns = 100;
    struct xp_copy c[40];
    for (size_t i = 0; i < 40; i++) {
        c[i] = copy((uint8_t)(i % 7), (uint8_t)(i % 5), (uint8_t)(i % 6), i % 3 ? 0 : 2 * MiB, -(int64_t)i,
                    i % 2 ? 0 : -5, 0);
        c[i].fp_kind = (uint8_t)(i % 4);
        c[i].fingerprint = 9;
        xt_site_of(&c[i])->api = 99;
    }
    struct xp_alloc a[6] = {
        alloc(0x1000, 0, 10, 5, 1),           /* freed before it was made */
        alloc(0x1000, 4 * MiB, 10, 10, 1),    /* freed when made */
        alloc(0x1000, 4 * MiB, 10, -1, 1),    /* overlaps the next */
        alloc(0x1800, 4 * MiB, 20, -1, 1),
        alloc(UINT64_MAX - 10, 4 * MiB, 30, -1, 2),
        alloc(0, 0, -5, -1, 0),
    };
    a[4].kind = 200;
    struct xp_error e[3] = {
        {.start_ns = 15, .status = 2, .record = "alloc", .detail = NULL, .requested = 0, .dev_free = -1, .dev_total = -1},
        {.start_ns = 15, .status = 1, .record = "free", .detail = NULL, .api = 77, .device = -1},
        {.start_ns = 15, .status = 2, .record = "", .detail = NULL},
    };
    p.copies = c;
    p.n_copies = 40;
    p.allocs = a;
    p.n_allocs = 6;
    p.errors = e;
    p.n_errors = 3;
    struct xp_report r;
    report_init(&r, &p, 1);
    run_all(&r);
    for (size_t i = 0; i < r.n_findings; i++)
        assert_true(r.findings[i].time_ns >= 0);
    /* Times at the ends of 64 bits saturate rather than wrap. */
    c[0] = copy(XP_DIR_H2D, XP_HM_PAGEABLE, XP_BL_ASYNC_PAGEABLE, 1, INT64_MIN, INT64_MAX, 3);
    c[1] = copy(XP_DIR_H2D, XP_HM_PAGEABLE, XP_BL_ASYNC_PAGEABLE, 1, INT64_MAX, INT64_MAX, 3);
    a[0] = alloc(0x1000, 1, INT64_MIN, -1, 9);
    a[1] = alloc(0x2000, 1, INT64_MAX, -1, 9);
    run(&r, "async-pageable");
    assert_int_equal(at_site(&r, 3)->time_ns, INT64_MAX);
    run(&r, "leak");
    assert_int_equal(num(at_site(&r, 9), "run_ns"), INT64_MAX);
    report_free(&r);
    (void)state;
}

/* ---- stacks off, symbols missing ---- */

/* Without stacks every call is stack 0: each rule still finds its pattern,
 * as one site; without symbols (no stacks array at all) nothing changes. */
static void test_stacks_off(void **state)
{
    struct xp_process p;
    proc_init(&p);
    p.stacks_off = true;
    p.stacks = NULL;
    p.n_stacks = 0;
    static struct xp_copy c[300];
    size_t n = 0;
    for (size_t i = 0; i < 150; i++)
        c[n++] = copy(XP_DIR_H2D, XP_HM_PAGEABLE, XP_BL_ASYNC_PAGEABLE, 64, (int64_t)i, 100000, 0);
    for (size_t i = 0; i < 3; i++)
        c[n++] = upload(0x42, 1, 64, 0x8000 + i, i, 1000 + (int64_t)i, 0);
    p.copies = c;
    p.n_copies = n;
    struct xp_alloc a[10];
    for (size_t i = 0; i < 10; i++)
        a[i] = alloc(0x1000 * (i + 1), 100, (int64_t)i * 100 * MS, -1, 0);
    p.allocs = a;
    p.n_allocs = 10;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "async-pageable"), 1);
    assert_int_equal(at_site(&r, XP_NONE_ID)->count, 150);
    /* The async_pageable copies are async-pageable's alone (one finding per
     * copy); 3 synchronous ones are below the threshold. */
    assert_int_equal(run(&r, "sync-in-loop"), 0);
    assert_int_equal(run(&r, "small-copies"), 1);
    assert_int_equal(at_site(&r, XP_NONE_ID)->count, 153);
    assert_int_equal(run(&r, "redundant-upload"), 1);
    assert_int_equal(at_site(&r, XP_NONE_ID)->count, 2);
    assert_int_equal(run(&r, "leak"), 1);
    assert_string_equal(text(at_site(&r, XP_NONE_ID), "kind"), "growing");
    assert_null(xp_process_stack(&p, 0));
    report_free(&r);
    (void)state;
}

/* ---- thresholds ---- */

static void test_thresholds(void **state)
{
    struct xp_thresholds t, before;
    xp_thresholds_default(&t);
    assert_int_equal(t.low_bandwidth_min_count, 3);
    assert_true(t.low_bandwidth_min_share == 0.02);
    assert_true(t.small_copies_min_share == 0.01);
    assert_int_equal(t.sync_in_loop_min_count, 10);
    assert_int_equal(t.sync_in_loop_result_min_bytes, 4096);
    assert_int_equal(t.redundant_min_repeats, 3);
    assert_int_equal(t.small_copy_max_bytes, 4096);
    assert_int_equal(t.small_copies_min_count, 100);
    assert_true(t.low_bandwidth_fraction == 0.25);
    assert_int_equal(t.low_bandwidth_min_bytes, MiB);
    assert_true(t.leak_growing_fraction == 0.5);
    assert_int_equal(t.leak_min_count, 3);
    assert_true(t.fragmentation_min_ratio == 0.5);
    assert_int_equal(t.fragmentation_min_free, 32 * MiB);
    char err[300];
    assert_int_equal(xp_thresholds_set(&t, "sync-in-loop.min_count=20", err, sizeof err), 0);
    assert_int_equal(t.sync_in_loop_min_count, 20);
    assert_int_equal(xp_thresholds_set(&t, "low-bandwidth.fraction=0.3", err, sizeof err), 0);
    assert_true(t.low_bandwidth_fraction == 0.3);
    assert_int_equal(xp_thresholds_set(&t, "fragmentation.min_free=64MiB", err, sizeof err), 0);
    assert_int_equal(t.fragmentation_min_free, 64 * MiB);
    assert_int_equal(xp_thresholds_set(&t, "low-bandwidth.min_bytes=1g", err, sizeof err), 0);
    assert_int_equal(t.low_bandwidth_min_bytes, 1024 * MiB);
    assert_int_equal(xp_thresholds_set(&t, "sync-in-loop.result_min_bytes=64K", err, sizeof err), 0);
    assert_int_equal(t.sync_in_loop_result_min_bytes, 64 * 1024);
    static const char *const bad[][2] = {
        {"nonsense", "expected RULE.KEY=VALUE"},
        {"sync-in-loop.min_count", "expected RULE.KEY=VALUE"},
        {".min_count=3", "expected RULE.KEY=VALUE"},
        {"sync-in-loop.=3", "expected RULE.KEY=VALUE"},
        {"nope.min_count=3", "unknown rule 'nope'"},
        {"sync-in-loop.nope=3", "rule sync-in-loop has no setting 'nope' (it has: min_count, sparse_every, result_min_bytes)"},
        {"sync-in-loop.sparse_every=1", "at least 2"},
        {"oom.min_count=3", "rule oom has no settings"},
        {"sync-in-loop.min_count=abc", "sync-in-loop.min_count: 'abc' is not a whole number"},
        {"sync-in-loop.min_count=", "is not a whole number"},
        {"sync-in-loop.min_count=-1", "is not a whole number"},
        {"sync-in-loop.min_count=0", "at least 1"},
        {"sync-in-loop.min_count=1.5", "is not a whole number"},
        {"sync-in-loop.min_count=99999999999999999999", "is not a whole number"},
        {"fragmentation.min_free=20000000T", "is not a whole number"},
        {"fragmentation.min_free=4X", "is not a whole number"},
        {"low-bandwidth.fraction=2", "is not a number from 0 to 1"},
        {"low-bandwidth.fraction=nan", "is not a number"},
        {"low-bandwidth.fraction=0.5x", "is not a number"},
        {"redundant-upload.min_repeats=1", "at least 2"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        before = t;
        err[0] = '\0';
        assert_int_equal(xp_thresholds_set(&t, bad[i][0], err, sizeof err), -1);
        if (!strstr(err, bad[i][1]))
            fail_msg("'%s' said '%s'", bad[i][0], err);
        assert_memory_equal(&t, &before, sizeof t);
    }
    assert_int_equal(xp_thresholds_set(&t, NULL, NULL, 0), -1);
    (void)state;
}

static void test_rule_table(void **state)
{
    /* In the order they run: what claims a copy first tells its problem. */
    static const char *const ids[] = {"redundant-upload", "reupload-fresh", "round-trip", "sync-in-loop",
                                      "async-pageable", "small-copies", "low-bandwidth", "leak",
                                      "alloc-churn", "invalid-free", "fragmentation", "oom", "device-placement"};
    assert_int_equal(xp_nrules, sizeof ids / sizeof ids[0]);
    for (size_t i = 0; i < xp_nrules; i++) {
        assert_string_equal(xp_rules[i].id, ids[i]);
        assert_non_null(xp_rules[i].run);
        assert_non_null(xp_rules[i].summary);
    }
    (void)state;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule_table),
        cmocka_unit_test(test_clean_process_has_no_findings),
        cmocka_unit_test(test_empty_processes),
        cmocka_unit_test(test_odd_input),
        cmocka_unit_test(test_stacks_off),
        cmocka_unit_test(test_thresholds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
