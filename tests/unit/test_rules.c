/* test_rules.c: the report's rules over hand-built models: what each finds
 * (counts, bytes and times exactly), what none may find, and odd input. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "xp_report.h"

#define MiB (UINT64_C(1) << 20)
#define MS INT64_C(1000000)

/* ---- helpers ---- */

static char *api_names[] = {"cudaMemcpy", "cudaMemcpyAsync", "cudaMalloc", "cudaFree"};

static void proc_init(struct xp_process *p)
{
    *p = (struct xp_process){.label = "pid 1", .pid = 1, .rank = -1, .start_mono_ns = 0,
                             .end_mono_ns = 1000 * MS, .api_names = api_names, .n_api = 4};
}

static void report_init(struct xp_report *r, struct xp_process *procs, size_t n)
{
    *r = (struct xp_report){.procs = procs, .n_procs = n};
    xp_thresholds_default(&r->th);
}

static void report_free(struct xp_report *r)
{
    for (size_t i = 0; i < r->n_findings; i++) {
        struct xp_finding *f = &r->findings[i];
        for (size_t k = 0; k < f->n_facts; k++)
            if (f->facts[k].is_text)
                free(f->facts[k].text);
        free(f->facts);
        free(f->message);
    }
    free(r->findings);
    r->findings = NULL;
    r->n_findings = r->cap_findings = 0;
}

static const struct xp_rule *rule(const char *id)
{
    for (size_t i = 0; i < xp_nrules; i++)
        if (strcmp(xp_rules[i].id, id) == 0)
            return &xp_rules[i];
    fail_msg("no rule %s", id);
    abort(); /* not reached: fail_msg jumps out of the test */
    return NULL;
}

/* Runs one rule on a fresh list of findings; returns how many it made. */
static size_t run(struct xp_report *r, const char *id)
{
    report_free(r);
    rule(id)->run(r);
    for (size_t i = 0; i < r->n_findings; i++) {
        assert_string_equal(r->findings[i].rule, id);
        assert_non_null(r->findings[i].message);
        assert_non_null(r->findings[i].fix);
    }
    return r->n_findings;
}

static size_t run_all(struct xp_report *r)
{
    report_free(r);
    for (size_t i = 0; i < xp_nrules; i++)
        xp_rules[i].run(r);
    return r->n_findings;
}

static const struct xp_finding *at_site(const struct xp_report *r, uint32_t stack)
{
    for (size_t i = 0; i < r->n_findings; i++)
        if (r->findings[i].stack_id == stack)
            return &r->findings[i];
    fail_msg("no finding at stack %u", stack);
    abort(); /* not reached: fail_msg jumps out of the test */
    return NULL;
}

static const struct xp_fact *fact(const struct xp_finding *f, const char *key)
{
    for (size_t i = 0; i < f->n_facts; i++)
        if (strcmp(f->facts[i].key, key) == 0)
            return &f->facts[i];
    return NULL;
}

static int64_t num(const struct xp_finding *f, const char *key)
{
    const struct xp_fact *x = fact(f, key);
    if (!x || x->is_text) {
        fail_msg("no number %s", key);
        abort(); /* not reached: fail_msg jumps out of the test */
    }
    return x->num;
}

static const char *text(const struct xp_finding *f, const char *key)
{
    const struct xp_fact *x = fact(f, key);
    if (!x || !x->is_text) {
        fail_msg("no text %s", key);
        abort(); /* not reached: fail_msg jumps out of the test */
    }
    return x->text;
}

static struct xp_copy copy(uint8_t dir, uint8_t hm, uint8_t bl, uint64_t bytes, int64_t start, int64_t dur,
                           uint32_t stack)
{
    return (struct xp_copy){.start_ns = start, .dur_ns = dur, .bytes = bytes, .src = 0x1000, .dst = 0x2000,
                            .stack_id = stack, .direction = dir, .host_mem = hm, .blocking = bl,
                            .device = 0, .tid = 1};
}

static struct xp_copy upload(uint64_t fp, uint8_t kind, uint64_t bytes, uint64_t dst, uint64_t kseq,
                             int64_t start, uint32_t stack)
{
    struct xp_copy c = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_SYNC, bytes, start, 10, stack);
    c.fingerprint = fp;
    c.fp_kind = kind;
    c.dst = dst;
    c.kernel_seq = kseq;
    return c;
}

static struct xp_alloc alloc(uint64_t ptr, uint64_t bytes, int64_t at, int64_t freed, uint32_t stack)
{
    return (struct xp_alloc){.alloc_ns = at, .alloc_end_ns = at + 1, .free_ns = freed, .ptr = ptr,
                             .bytes = bytes, .alloc_stack = stack, .api = 2, .device = 0,
                             .kind = XP_AK_DEVICE};
}

/* ---- a clean process, empty processes, odd input ---- */

/* Pinned async uploads on streams, a few big sync downloads, everything
 * freed: what a well-behaved program looks like to every rule. */
static void clean_process(struct xp_process *p, struct xp_copy *c, size_t nc, struct xp_alloc *a, size_t na)
{
    proc_init(p);
    for (size_t i = 0; i < nc; i++) {
        c[i] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, 8 * MiB, (int64_t)i * MS, 20000, 1 + (uint32_t)(i % 2));
        c[i].stream = 0x100 + i % 2;
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
        c[i].api = 99;
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

/* ---- async-pageable ---- */

static void test_async_pageable(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_copy c[16];
    for (size_t i = 0; i < 12; i++)
        c[i] = copy(XP_DIR_H2D, XP_HM_PAGEABLE, XP_BL_ASYNC_PAGEABLE, 4 * MiB, (int64_t)i * MS, 1000 + (int64_t)i, 5);
    c[12] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, 4 * MiB, 0, 7, 5);
    c[13] = copy(XP_DIR_H2D, XP_HM_PAGEABLE, XP_BL_ASYNC_PAGEABLE, 4 * MiB, 0, 7, 5);
    c[13].status = 1; /* failed: moved nothing */
    c[14] = copy(XP_DIR_D2H, XP_HM_PAGEABLE, XP_BL_ASYNC_PAGEABLE, 100, 0, 50, 6);
    c[15] = copy(XP_DIR_D2H, XP_HM_PAGEABLE, XP_BL_SYNC, 100, 0, 50, 6);
    p.copies = c;
    p.n_copies = 16;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "async-pageable"), 2);
    const struct xp_finding *f = at_site(&r, 5);
    assert_int_equal(f->severity, XP_SEV_WARNING);
    assert_int_equal(f->count, 12);
    assert_int_equal(f->bytes, 48 * MiB);
    assert_int_equal(f->time_ns, 12 * 1000 + 66);
    assert_string_equal(text(f, "direction"), "H2D");
    assert_non_null(strstr(f->message, "12 async copies from pageable memory"));
    assert_non_null(f->fix_pytorch);
    assert_non_null(strstr(f->fix, "cudaHostRegister"));
    f = at_site(&r, 6);
    assert_int_equal(f->count, 1);
    assert_int_equal(f->time_ns, 50);
    assert_string_equal(text(f, "direction"), "D2H");
    report_free(&r);
    (void)state;
}

/* ---- sync-in-loop ---- */

/* The fix follows what the blocking copies were: reads of results completed
 * by a sync (.item(), .cpu()): keep the value on the device; uploads
 * completed by a sync (.to(device) without non_blocking): pin and do not
 * synchronize; synchronous copies: async copies from pinned memory. */
static void test_sync_in_loop_fix(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_copy c[30];
    size_t n = 0;
    for (size_t i = 0; i < 10; i++) {
        c[n] = copy(XP_DIR_D2H, XP_HM_PINNED, XP_BL_ASYNC, 4, (int64_t)i, 100, 1);
        c[n++].paired = true;
        c[n] = copy(XP_DIR_H2D, XP_HM_PAGEABLE, XP_BL_ASYNC_PAGEABLE, 1 << 20, (int64_t)i, 100, 2);
        c[n++].paired = true;
        c[n++] = copy(XP_DIR_H2D, XP_HM_PAGEABLE, XP_BL_SYNC, 1 << 20, (int64_t)i, 100, 3);
    }
    p.copies = c;
    p.n_copies = n;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "sync-in-loop"), 3);
    assert_non_null(strstr(at_site(&r, 1)->fix, "keep the value on the device"));
    assert_non_null(strstr(at_site(&r, 2)->fix, "pinned"));
    assert_null(strstr(at_site(&r, 2)->fix, "keep the value on the device"));
    assert_non_null(strstr(at_site(&r, 2)->fix_pytorch, "non_blocking=True"));
    assert_non_null(strstr(at_site(&r, 3)->fix, "cudaMemcpyAsync"));
    report_free(&r);
    (void)state;
}

static void test_sync_in_loop(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_copy c[40];
    size_t n = 0;
    /* Site 1: 10 blocking (8 sync + 2 async_pageable completed at once by a
     * sync), sizes 1..10 KiB: flagged.  (An async_pageable copy that was not
     * synchronized at once is async-pageable's, not this rule's.) */
    for (size_t i = 0; i < 10; i++) {
        c[n] = copy(XP_DIR_D2H, XP_HM_PAGEABLE, i < 8 ? XP_BL_SYNC : XP_BL_ASYNC_PAGEABLE, (i + 1) * 1024,
                    (int64_t)i, 100, 1);
        c[n++].paired = i >= 8;
    }
    /* Site 2: 9 blocking, 5 async, 3 failed: below the threshold. */
    for (size_t i = 0; i < 9; i++)
        c[n++] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_SYNC, 64, (int64_t)i, 100, 2);
    for (size_t i = 0; i < 5; i++)
        c[n++] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, 64, (int64_t)i, 100, 2);
    for (size_t i = 0; i < 3; i++) {
        c[n] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_SYNC, 64, (int64_t)i, 100, 2);
        c[n++].status = 700;
    }
    p.copies = c;
    p.n_copies = n;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "sync-in-loop"), 1);
    const struct xp_finding *f = at_site(&r, 1);
    assert_int_equal(f->count, 10);
    assert_int_equal(f->bytes, 55 * 1024);
    assert_int_equal(f->time_ns, 1000);
    assert_int_equal(num(f, "median_bytes"), 5 * 1024); /* lower middle of an even count */
    assert_int_equal(num(f, "per_copy_ns"), 100);
    assert_string_equal(text(f, "direction"), "D2H");
    char err[200];
    assert_int_equal(xp_thresholds_set(&r.th, "sync-in-loop.min_count=20", err, sizeof err), 0);
    assert_int_equal(run(&r, "sync-in-loop"), 0);
    assert_int_equal(xp_thresholds_set(&r.th, "sync-in-loop.min_count=9", err, sizeof err), 0);
    assert_int_equal(run(&r, "sync-in-loop"), 2);
    assert_int_equal(at_site(&r, 2)->count, 9);
    report_free(&r);
    (void)state;
}

/* ---- redundant-upload ---- */

static void test_redundant_same_dst(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_copy c[8] = {
        upload(0xAA, 1, 4096, 0x5000, 3, 10, 1),
        upload(0xAA, 1, 4096, 0x5000, 3, 20, 2), /* same dst, no kernel since: redundant */
        upload(0xAA, 1, 4096, 0x5000, 4, 30, 3), /* a kernel ran since: not redundant */
        upload(0xAA, 1, 4096, 0x6000, 4, 40, 4), /* another dst, only one upload from its site */
        upload(0xAA, 2, 4096, 0x6000, 4, 50, 5), /* sampled vs full: never compared */
        upload(0xAA, 1, 2048, 0x6000, 4, 60, 6), /* other size: other content */
        upload(0xBB, 1, 4096, 0x6000, 4, 70, 7), /* other content... */
        upload(0xAA, 1, 4096, 0x6000, 4, 80, 8), /* ...overwrote 0x6000: this one is not redundant */
    };
    p.copies = c;
    p.n_copies = 8;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "redundant-upload"), 1);
    const struct xp_finding *f = at_site(&r, 2);
    assert_int_equal(f->count, 1);
    assert_int_equal(f->bytes, 4096);
    assert_int_equal(f->time_ns, 10);
    assert_int_equal(num(f, "same_dst_no_kernel"), 1);
    assert_int_equal(num(f, "site_repeats"), 0);
    /* A different device is a different destination. */
    c[1].device = 1;
    assert_int_equal(run(&r, "redundant-upload"), 0);
    /* The D2H direction and failed or unfingerprinted uploads are no uploads of content. */
    c[1].device = 0;
    c[1].fp_kind = 0;
    assert_int_equal(run(&r, "redundant-upload"), 0);
    c[1].fp_kind = 1;
    c[1].status = 1;
    assert_int_equal(run(&r, "redundant-upload"), 0);
    report_free(&r);
    (void)state;
}

static void test_redundant_site_repeats(void **state)
{
    struct xp_process p;
    proc_init(&p);
    /* One site uploads the same content to fresh buffers, a kernel between each. */
    struct xp_copy c[6];
    for (size_t i = 0; i < 3; i++) {
        c[i] = upload(0xCC, 2, 1 * MiB, 0x100000 * (i + 1), i, 100 * (int64_t)(3 - i), 9);
        c[i].full_fp = 0xF00D;   /* sampled: confirmed by the full hash */
    }
    /* Another site does it twice only, across a kernel launch: not redundant. */
    c[3] = upload(0xDD, 1, 512, 0x9000, 1, 5, 10);
    c[4] = upload(0xDD, 1, 512, 0x9000, 2, 6, 10);
    /* Same fingerprint value, different kind, same site: never the same content. */
    c[5] = upload(0xCC, 1, 1 * MiB, 0x700000, 7, 1000, 9);
    p.copies = c;
    p.n_copies = 6;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "redundant-upload"), 1);
    const struct xp_finding *f = at_site(&r, 9);
    assert_int_equal(f->count, 2); /* the first of three is needed */
    assert_int_equal(f->bytes, 2 * MiB);
    assert_int_equal(f->time_ns, 20);
    assert_int_equal(num(f, "site_repeats"), 2);
    assert_int_equal(num(f, "max_uploads_of_one_content"), 3);
    /* At two repeats the second site's second upload is redundant too. */
    char err[200];
    assert_int_equal(xp_thresholds_set(&r.th, "redundant-upload.min_repeats=2", err, sizeof err), 0);
    assert_int_equal(run(&r, "redundant-upload"), 2);
    assert_int_equal(at_site(&r, 10)->count, 1);
    assert_int_equal(at_site(&r, 10)->bytes, 512);
    assert_int_equal(xp_thresholds_set(&r.th, "redundant-upload.min_repeats=4", err, sizeof err), 0);
    assert_int_equal(run(&r, "redundant-upload"), 0);
    report_free(&r);
    (void)state;
}

/* ---- round-trip ---- */

static void test_round_trip(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_copy c[6];
    c[0] = copy(XP_DIR_D2H, XP_HM_PINNED, XP_BL_SYNC, 8192, 100, 30, 4);
    c[0].fingerprint = 0x77;
    c[0].fp_kind = 1;
    c[1] = upload(0x77, 1, 8192, 0x5000, 1, 200, 5); /* came back: round trip */
    c[2] = upload(0x77, 1, 8192, 0x6000, 1, 300, 5);
    c[3] = upload(0x77, 1, 8192, 0x6000, 1, 50, 6);  /* uploaded before the download: not */
    c[4] = upload(0x77, 2, 8192, 0x6000, 1, 400, 7); /* other fingerprint kind: not */
    c[5] = upload(0x77, 1, 4096, 0x6000, 1, 400, 8); /* other size: not */
    p.copies = c;
    p.n_copies = 6;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "round-trip"), 1);
    const struct xp_finding *f = at_site(&r, 5);
    assert_int_equal(f->count, 2);
    assert_int_equal(f->bytes, 16384);
    assert_int_equal(f->time_ns, 20);
    assert_int_equal(num(f, "d2h_stack_id"), 4);
    /* An async download has no fingerprint: nothing to match. */
    c[0].fp_kind = 0;
    assert_int_equal(run(&r, "round-trip"), 0);
    report_free(&r);
    (void)state;
}

/* ---- small-copies ---- */

static void test_small_copies(void **state)
{
    struct xp_process p;
    proc_init(&p); /* a run of 1 s */
    static struct xp_copy c[2400];
    size_t n = 0;
    /* Site 1: 100 copies of 100 us each: 10 ms, 1% of the run. */
    for (size_t i = 0; i < 100; i++)
        c[n++] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, i % 2 ? 4096 : 0, (int64_t)i, 100000, 1);
    for (size_t i = 0; i < 99; i++) /* 99 small and some large ones: below the count */
        c[n++] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, 4096, (int64_t)i, 100000, 2);
    for (size_t i = 0; i < 50; i++)
        c[n++] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, 4097, (int64_t)i, 100000, 2);
    for (size_t i = 0; i < 1000; i++)
        c[n++] = copy(XP_DIR_D2H, XP_HM_PINNED, XP_BL_SYNC, 8, (int64_t)i, 20000, 3);
    /* Site 4: 1000 copies that cost 2 us each, 2 ms in all: not worth reading about. */
    for (size_t i = 0; i < 1000; i++)
        c[n++] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, 64, (int64_t)i, 2000, 4);
    p.copies = c;
    p.n_copies = n;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "small-copies"), 2);
    const struct xp_finding *f = at_site(&r, 1);
    assert_int_equal(f->severity, XP_SEV_INFO);
    assert_int_equal(f->count, 100);
    assert_int_equal(f->bytes, 50 * 4096);
    assert_int_equal(f->time_ns, 10 * MS);
    assert_int_equal(num(f, "mean_bytes"), 2048);
    assert_int_equal(num(f, "per_copy_ns"), 100000);
    assert_string_equal(text(f, "run_share"), "0.010");
    f = at_site(&r, 3);
    assert_int_equal(f->severity, XP_SEV_WARNING); /* 10x the minimum */
    assert_int_equal(f->count, 1000);
    assert_int_equal(f->time_ns, 20 * MS);
    char err[200];
    assert_int_equal(xp_thresholds_set(&r.th, "small-copies.max_bytes=4K", err, sizeof err), 0);
    assert_int_equal(r.th.small_copy_max_bytes, 4096);
    assert_int_equal(xp_thresholds_set(&r.th, "small-copies.max_bytes=4097", err, sizeof err), 0);
    assert_int_equal(run(&r, "small-copies"), 3);
    assert_int_equal(at_site(&r, 2)->count, 149);
    /* The cheap site is one once asked for a fifth of a percent. */
    assert_int_equal(xp_thresholds_set(&r.th, "small-copies.min_share=0.002", err, sizeof err), 0);
    assert_int_equal(run(&r, "small-copies"), 4);
    assert_int_equal(at_site(&r, 4)->count, 1000);
    report_free(&r);
    (void)state;
}

/* ---- low-bandwidth ---- */

static void test_low_bandwidth(void **state)
{
    struct xp_process p;
    proc_init(&p); /* a run of 1 s */
    static struct xp_copy c[64];
    size_t n = 0;
    /* Nine pinned sync uploads of 1 MiB at 1 MiB per 100 us (10.5 GB/s), into one buffer. */
    for (size_t i = 0; i < 9; i++)
        c[n++] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_SYNC, MiB, (int64_t)i * MS, 100000, 1);
    /* Site 2: four at a fortieth of that (32 ms, 3.2% of the run), into a
     * buffer written before: slow. */
    for (size_t i = 0; i < 4; i++)
        c[n++] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_SYNC, 2 * MiB, (int64_t)(20 + i) * MS, 8000000, 2);
    /* Pageable copies are their own class: all equally slow, none flagged. */
    for (size_t i = 0; i < 4; i++) {
        c[n] = copy(XP_DIR_H2D, XP_HM_PAGEABLE, XP_BL_SYNC, MiB, (int64_t)i * MS, 3000000, 3);
        c[n++].dst = 0x3000;
    }
    /* Site 5: one slow copy among fast ones: an outlier, its median is fast. */
    for (size_t i = 0; i < 5; i++) {
        c[n] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_SYNC, MiB, (int64_t)(30 + i) * MS, i == 2 ? 5000000 : 100000, 5);
        c[n++].dst = 0x5000;
    }
    /* Site 6: only the first copy into each fresh buffer was slow. */
    for (size_t i = 0; i < 4; i++) {
        c[n] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_SYNC, MiB, (int64_t)(40 + i) * MS, 5000000, 6);
        c[n++].dst = 0x60000000 + i * MiB;
        c[n] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_SYNC, MiB, (int64_t)(50 + i) * MS, 100000, 6);
        c[n++].dst = 0x60000000 + i * MiB;
    }
    /* Site 7: async copies whose call time is long: the call is not the transfer. */
    for (size_t i = 0; i < 4; i++) {
        c[n] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, 8 * MiB, (int64_t)(60 + i) * MS, 9000000, 7);
        c[n++].dst = 0x7000;
    }
    /* Below the size, unmeasurable (zero time), failed: left out. */
    c[n++] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_SYNC, MiB - 1, 0, 9000000, 4);
    c[n++] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_SYNC, 8 * MiB, 0, 0, 4);
    c[n] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_SYNC, 8 * MiB, 0, 9000000, 4);
    c[n++].status = 1;
    p.copies = c;
    p.n_copies = n;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "low-bandwidth"), 1);
    const struct xp_finding *f = at_site(&r, 2);
    assert_int_equal(f->count, 4);
    assert_int_equal(f->bytes, 8 * MiB);
    assert_int_equal(f->time_ns, 32 * MS);
    assert_string_equal(text(f, "reference_gbps"), "10.486");
    assert_string_equal(text(f, "gbps"), "0.262");
    assert_string_equal(text(f, "run_share"), "0.032");
    assert_string_equal(text(f, "direction"), "H2D");
    assert_string_equal(text(f, "host_mem"), "pinned");
    char err[200];
    /* Fewer copies than the minimum, or too small a share of the run: nothing. */
    assert_int_equal(xp_thresholds_set(&r.th, "low-bandwidth.min_count=5", err, sizeof err), 0);
    assert_int_equal(run(&r, "low-bandwidth"), 0);
    xp_thresholds_default(&r.th);
    assert_int_equal(xp_thresholds_set(&r.th, "low-bandwidth.min_share=0.05", err, sizeof err), 0);
    assert_int_equal(run(&r, "low-bandwidth"), 0);
    xp_thresholds_default(&r.th);
    assert_int_equal(xp_thresholds_set(&r.th, "low-bandwidth.fraction=0.02", err, sizeof err), 0);
    assert_int_equal(run(&r, "low-bandwidth"), 0);
    assert_int_equal(xp_thresholds_set(&r.th, "low-bandwidth.fraction=0.3", err, sizeof err), 0);
    assert_int_equal(xp_thresholds_set(&r.th, "low-bandwidth.min_bytes=4M", err, sizeof err), 0);
    assert_int_equal(run(&r, "low-bandwidth"), 0);
    /* Copies sync-in-loop reports are not reported again. */
    xp_thresholds_default(&r.th);
    assert_int_equal(xp_thresholds_set(&r.th, "sync-in-loop.min_count=4", err, sizeof err), 0);
    report_free(&r);
    rule("sync-in-loop")->run(&r);
    size_t before = r.n_findings;
    rule("low-bandwidth")->run(&r);
    assert_int_equal(r.n_findings, before);
    report_free(&r);
    (void)state;
}

/* ---- leak ---- */

static void test_leak_growing_and_held(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_alloc a[20];
    size_t n = 0;
    /* Site 1: one allocation every 100 ms, none freed: growing. */
    for (size_t i = 0; i < 10; i++)
        a[n++] = alloc(0x10000 * (i + 1), MiB, (int64_t)i * 100 * MS, -1, 1);
    /* Site 2: three buffers at start-up, held: held-to-exit. */
    for (size_t i = 0; i < 3; i++)
        a[n++] = alloc(0x1000000 + 0x10000 * i, 2 * MiB, (int64_t)i, -1, 2);
    /* Site 3: two allocations only, across the run: held-to-exit. */
    a[n++] = alloc(0x3000000, 100, 0, -1, 3);
    a[n++] = alloc(0x3001000, 100, 900 * MS, -1, 3);
    /* Site 4: freed: nothing. */
    a[n++] = alloc(0x4000000, 100, 0, 5 * MS, 4);
    a[n - 1].kind = XP_AK_PINNED;
    p.allocs = a;
    p.n_allocs = n;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "leak"), 3);
    const struct xp_finding *f = at_site(&r, 1);
    assert_int_equal(f->severity, XP_SEV_WARNING);
    assert_string_equal(text(f, "kind"), "growing");
    assert_int_equal(f->count, 10);
    assert_int_equal(num(f, "live_count"), 10);
    assert_int_equal(f->bytes, 10 * MiB);
    assert_int_equal(num(f, "rising_windows"), 8);
    assert_int_equal(num(f, "windows"), 8);
    assert_int_equal(num(f, "run_ns"), 1000 * MS);
    assert_string_equal(text(f, "memory"), "device");
    assert_string_equal(text(f, "api"), "cudaMalloc");
    f = at_site(&r, 2);
    assert_int_equal(f->severity, XP_SEV_INFO);
    assert_string_equal(text(f, "kind"), "held-to-exit");
    assert_int_equal(f->count, 3);
    assert_int_equal(f->bytes, 6 * MiB);
    f = at_site(&r, 3);
    assert_string_equal(text(f, "kind"), "held-to-exit");
    assert_int_equal(num(f, "rising_windows"), 2);
    /* Two rises in eight windows are growth only when asked for a quarter,
     * and two live allocations only once the minimum is two. */
    char err[200];
    assert_int_equal(xp_thresholds_set(&r.th, "leak.growing_fraction=0.25", err, sizeof err), 0);
    run(&r, "leak");
    assert_string_equal(text(at_site(&r, 3), "kind"), "held-to-exit");
    assert_int_equal(xp_thresholds_set(&r.th, "leak.min_count=2", err, sizeof err), 0);
    run(&r, "leak");
    assert_string_equal(text(at_site(&r, 3), "kind"), "growing");
    report_free(&r);
    (void)state;
}

/* Caches: live bytes that rose once and stayed flat are not growth, however
 * far apart the allocations lie. */
static void test_leak_bounded_cache_is_not_growing(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_alloc a[64];
    size_t n = 0;
    /* Site 1: a cache that fills in the first 100 ms, then one more entry at
     * 900 ms (an evaluation pass); none freed.  Its allocations span 90% of
     * the run and it holds more at exit than at the middle, yet it rose in
     * two windows of eight. */
    for (size_t i = 0; i < 10; i++)
        a[n++] = alloc(0x100000 * (i + 1), MiB, (int64_t)i * 10 * MS, -1, 1);
    a[n++] = alloc(0x2000000, MiB, 900 * MS, -1, 1);
    /* Site 2: an LRU cache of 4 entries replacing its oldest every 50 ms:
     * as many live at exit as all along. */
    for (size_t i = 0; i < 20; i++)
        a[n++] = alloc(0x4000000 + 0x10000 * i, MiB, (int64_t)i * 50 * MS,
                       i + 4 < 20 ? (int64_t)(i + 4) * 50 * MS : -1, 2);
    /* Site 3: fills over the first half, then flat: rose in four windows,
     * not in the last quarter. */
    for (size_t i = 0; i < 5; i++)
        a[n++] = alloc(0x8000000 + 0x10000 * i, MiB, (int64_t)i * 100 * MS + 50 * MS, -1, 3);
    p.allocs = a;
    p.n_allocs = n;
    p.end_mono_ns = 1000 * MS;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "leak"), 3);
    for (uint32_t site = 1; site <= 3; site++)
        assert_string_equal(text(at_site(&r, site), "kind"), "held-to-exit");
    assert_int_equal(num(at_site(&r, 1), "rising_windows"), 2);
    assert_int_equal(num(at_site(&r, 2), "rising_windows"), 2); /* filling up */
    assert_int_equal(num(at_site(&r, 3), "rising_windows"), 4);
    /* The same cache, leaking one more entry every 50 ms from the middle on:
     * rising in the last four windows and at the end: growing. */
    for (size_t i = 0; i < 10; i++)
        a[n++] = alloc(0xa000000 + 0x10000 * i, MiB, 500 * MS + (int64_t)i * 50 * MS, -1, 3);
    p.n_allocs = n;
    run(&r, "leak");
    assert_string_equal(text(at_site(&r, 3), "kind"), "growing");
    report_free(&r);
    (void)state;
}

/* Segments of a caching allocator held to exit are said to be that, by the
 * allocator's frames or by virtual-memory mapping; growing ones still warn. */
static void test_leak_caching_allocator(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_frame torch_frames[2] = {
        {.addr = 0x10, .module = "libc10_cuda.so", .function = "_ZN3c104cuda20CUDACachingAllocator6Native5mallocEv",
         .demangled = "c10::cuda::CUDACachingAllocator::Native::malloc()"},
        {.addr = 0x20, .module = "train.py", .function = "step", .file = "train.py", .line = 40},
    };
    struct xp_frame torch_frames2[2] = {torch_frames[0],
        {.addr = 0x28, .module = "train.py", .function = "evaluate", .file = "train.py", .line = 77}};
    struct xp_frame user_frame = {.addr = 0x30, .module = "app", .function = "main", .file = "app.c", .line = 9};
    struct xp_stack stacks[4] = {{.id = 1, .nframes = 2, .frames = torch_frames},
                                 {.id = 2, .nframes = 1, .frames = &user_frame},
                                 {.id = 3, .nframes = 1, .frames = &user_frame},
                                 {.id = 6, .nframes = 2, .frames = torch_frames2}};
    p.stacks = stacks;
    p.n_stacks = 4;
    struct xp_alloc a[40];
    size_t n = 0;
    /* PyTorch's segments: 2 MiB and 20 MiB ones in the first steps, then flat. */
    for (size_t i = 0; i < 6; i++)
        a[n++] = alloc(0x10000000 + 0x2000000 * i, i % 2 ? 2 * MiB : 20 * MiB, (int64_t)i * 20 * MS, -1, 1);
    a[n++] = alloc(0x30000000, 20 * MiB, 950 * MS, -1, 1); /* an evaluation pass at the end */
    /* The pool ran short at another line too: the same allocator, one finding. */
    a[n++] = alloc(0x38000000, 2 * MiB, 500 * MS, -1, 6);
    /* Expandable segments: physical memory (site 2) mapped (site 4) into a
     * reserved range (site 5); only the physical memory is held. */
    a[n] = alloc(0x40000000, 1024 * MiB, 0, -1, 5);
    a[n++].kind = XP_AK_RESERVED;
    for (size_t i = 0; i < 3; i++) {
        a[n] = alloc(0x70000000 + 0x2000000 * i, 20 * MiB, (int64_t)i * 30 * MS, -1, 2);
        a[n++].kind = XP_AK_PHYSICAL;
        a[n] = alloc(0x40000000 + 0x2000000 * i, 20 * MiB, (int64_t)i * 30 * MS, -1, 4);
        a[n++].kind = XP_AK_MAPPED;
    }
    /* A plain cudaMalloc held to exit. */
    a[n++] = alloc(0x50000000, MiB, 0, -1, 3);
    p.allocs = a;
    p.n_allocs = n;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "leak"), 3);
    const struct xp_finding *f = at_site(&r, 1);
    assert_int_equal(f->severity, XP_SEV_INFO);
    assert_string_equal(text(f, "kind"), "caching-allocator");
    assert_string_equal(text(f, "allocator"), "PyTorch's caching allocator");
    assert_non_null(strstr(f->message, "not a leak"));
    assert_int_equal(f->count, 8);              /* both sites' segments */
    assert_int_equal(num(f, "sites"), 2);
    for (size_t i = 0; i < r.n_findings; i++)
        assert_int_not_equal(r.findings[i].stack_id, 6);
    f = at_site(&r, 2);
    assert_string_equal(text(f, "kind"), "caching-allocator");
    assert_non_null(strstr(text(f, "allocator"), "expandable segments"));
    assert_int_equal(f->bytes, 60 * MiB);
    f = at_site(&r, 3);
    assert_string_equal(text(f, "kind"), "held-to-exit");
    assert_null(fact(f, "allocator"));
    /* Segments added in every part of the run: tensors kept alive. */
    for (size_t i = 0; i < 10; i++)
        a[n++] = alloc(0x60000000 + 0x2000000 * i, 2 * MiB, 100 * MS + (int64_t)i * 100 * MS, -1, 1);
    p.n_allocs = n;
    run(&r, "leak");
    f = at_site(&r, 1);
    assert_int_equal(f->severity, XP_SEV_WARNING);
    assert_string_equal(text(f, "kind"), "growing");
    assert_string_equal(text(f, "allocator"), "PyTorch's caching allocator");
    report_free(&r);
    (void)state;
}

/* ---- invalid-free ---- */

static void test_invalid_free(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_unknown_free u[2] = {
        {.start_ns = 1, .ptr = 0xdead0000, .stack_id = 5, .api = 3, .kind = XP_AK_DEVICE},
        {.start_ns = 2, .ptr = 0xdead1000, .stack_id = 5, .api = 3, .kind = XP_AK_DEVICE},
    };
    struct xp_error e[4] = {
        {.start_ns = 3, .stack_id = 5, .api = 3, .status = 1, .record = "free", .detail = "ptr 0xbeef"},
        {.start_ns = 4, .stack_id = 6, .api = 3, .status = 1, .record = "free", .detail = NULL},
        {.start_ns = 5, .stack_id = 6, .api = 3, .status = 1, .record = "sync", .detail = "stream 0x1"},
        {.start_ns = 6, .stack_id = 6, .api = 2, .status = 2, .record = "alloc"},
    };
    p.unknown_frees = u;
    p.n_unknown_frees = 2;
    p.errors = e;
    p.n_errors = 4;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "invalid-free"), 2);
    const struct xp_finding *f = at_site(&r, 5);
    assert_int_equal(f->severity, XP_SEV_ERROR);
    assert_int_equal(f->count, 3);
    assert_int_equal(num(f, "unknown_count"), 2);
    assert_int_equal(num(f, "failed_count"), 1);
    assert_int_equal(num(f, "failed_status"), 1);
    assert_string_equal(text(f, "first"), "ptr 0xdead0000");
    assert_string_equal(text(f, "api"), "cudaFree");
    f = at_site(&r, 6);
    assert_int_equal(f->count, 1);
    assert_int_equal(num(f, "unknown_count"), 0);
    assert_string_equal(text(f, "first"), "?");
    report_free(&r);
    (void)state;
}

/* ---- fragmentation ---- */

/* Eight 16 MiB buffers side by side, every other one freed at 100 ms, then
 * a 32 MiB request at 200 ms: 64 MiB free in the span, largest hole 16 MiB. */
static size_t fragmented_heap(struct xp_alloc *a, int64_t request_at)
{
    size_t n = 0;
    for (size_t i = 0; i < 8; i++)
        a[n++] = alloc(0x100000000 + i * 16 * MiB, 16 * MiB, (int64_t)i, i % 2 ? -1 : 100 * MS, 1 + (uint32_t)i % 2);
    a[n++] = alloc(0x100000000 + 8 * 16 * MiB, 32 * MiB, request_at, -1, 7);
    return n;
}

static void test_fragmentation(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_alloc a[12];
    p.allocs = a;
    p.n_allocs = fragmented_heap(a, 200 * MS);
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "fragmentation"), 1);
    const struct xp_finding *f = &r.findings[0];
    assert_int_equal(f->severity, XP_SEV_WARNING);
    assert_int_equal(f->stack_id, 7); /* the request that met the holes */
    assert_string_equal(text(f, "kind"), "address-space");
    assert_int_equal(num(f, "free_in_span_bytes"), 48 * MiB); /* the lowest buffer's space is outside the span */
    assert_int_equal(num(f, "largest_hole_bytes"), 16 * MiB);
    assert_int_equal(num(f, "live_bytes"), 64 * MiB);
    assert_int_equal(num(f, "span_bytes"), 112 * MiB);
    assert_int_equal(num(f, "request_bytes"), 32 * MiB);
    assert_string_equal(text(f, "worst_ratio"), "0.667");
    assert_int_equal(num(f, "peak_live_bytes"), 128 * MiB);
    assert_int_equal(num(f, "peak_span_bytes"), 128 * MiB);
    assert_int_equal(num(f, "peak_largest_hole_bytes"), 0);
    assert_int_equal(num(f, "worst_ns"), 200 * MS);
    assert_int_equal(f->count, 4);
    assert_int_equal(f->bytes, 48 * MiB);
    char err[200];
    assert_int_equal(xp_thresholds_set(&r.th, "fragmentation.min_free=49M", err, sizeof err), 0);
    assert_int_equal(run(&r, "fragmentation"), 0);
    xp_thresholds_default(&r.th);
    assert_int_equal(xp_thresholds_set(&r.th, "fragmentation.min_ratio=0.7", err, sizeof err), 0);
    assert_int_equal(run(&r, "fragmentation"), 0);
    report_free(&r);
    (void)state;
}

/* The same holes met by a request that failed (an out-of-memory error, not
 * an allocation): it is judged too, and is the site of the finding. */
static void test_fragmentation_failed_request(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_alloc a[12];
    p.allocs = a;
    p.n_allocs = fragmented_heap(a, 200 * MS) - 1; /* no granted request after the frees */
    struct xp_error e[1] = {
        {.start_ns = 300 * MS, .stack_id = 9, .api = 2, .status = 2, .device = 0,
         .record = "alloc", .requested = 32 * MiB, .dev_free = -1, .dev_total = -1},
    };
    p.errors = e;
    p.n_errors = 1;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "fragmentation"), 1);
    const struct xp_finding *f = &r.findings[0];
    assert_int_equal(f->stack_id, 9);
    assert_int_equal(num(f, "request_bytes"), 32 * MiB);
    assert_int_equal(num(f, "free_in_span_bytes"), 48 * MiB);
    assert_int_equal(num(f, "largest_hole_bytes"), 16 * MiB);
    assert_int_equal(num(f, "worst_ns"), 300 * MS);
    /* On another device the failure meets no holes of this one. */
    e[0].device = 1;
    assert_int_equal(run(&r, "fragmentation"), 0);
    report_free(&r);
    (void)state;
}

static void test_fragmentation_negatives(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_alloc a[12];
    p.allocs = a;
    /* The holes made by frees with no request after them (teardown) are not judged. */
    p.n_allocs = fragmented_heap(a, 50 * MS);
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "fragmentation"), 0);
    /* Other devices do not share an address space with each other. */
    p.n_allocs = fragmented_heap(a, 200 * MS);
    a[8].device = 1;
    assert_int_equal(run(&r, "fragmentation"), 0);
    /* Host memory is no device memory. */
    a[8].device = 0;
    for (size_t i = 0; i < p.n_allocs; i++)
        a[i].kind = XP_AK_PINNED;
    assert_int_equal(run(&r, "fragmentation"), 0);
    report_free(&r);
    (void)state;
}

static void test_caching_allocator(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_alloc a[4] = {
        alloc(0x10000000, 2 * MiB, 1, -1, 1),
        alloc(0x10200000, 20 * MiB, 2, -1, 1),
        alloc(0x20000000, 512, 3, -1, 2),
        alloc(0x30000000, 64 * MiB, 4, -1, 3),
    };
    a[3].kind = XP_AK_PINNED; /* host memory does not count */
    p.allocs = a;
    p.n_allocs = 4;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "fragmentation"), 1);
    const struct xp_finding *f = &r.findings[0];
    assert_int_equal(f->severity, XP_SEV_INFO);
    assert_string_equal(text(f, "kind"), "caching-allocator");
    assert_int_equal(f->count, 2);
    assert_int_equal(f->bytes, 22 * MiB);
    assert_int_equal(f->stack_id, XP_NONE_ID);
    assert_int_equal(num(f, "device_allocations"), 3);
    /* One device free and it is no caching allocator. */
    a[2].free_ns = 10;
    assert_int_equal(run(&r, "fragmentation"), 0);
    /* Nor are small allocations alone. */
    a[2].free_ns = -1;
    a[0].bytes = a[1].bytes = 2 * MiB - 1;
    assert_int_equal(run(&r, "fragmentation"), 0);
    report_free(&r);
    (void)state;
}

/* ---- oom ---- */

static void test_oom(void **state)
{
    struct xp_process p;
    proc_init(&p);
    p.start_mono_ns = 1000;
    struct xp_alloc a[7] = {
        alloc(0x1000000, 30 * MiB, 10, -1, 1),
        alloc(0x3000000, 20 * MiB, 20, -1, 1),
        alloc(0x5000000, 50 * MiB, 30, -1, 2),
        alloc(0x9000000, 5 * MiB, 40, 60, 3),   /* freed before the failure */
        alloc(0xa000000, 1 * MiB, 45, -1, 4),
        alloc(0xb000000, 99 * MiB, 500, -1, 5), /* made after it */
        alloc(0xc000000, 99 * MiB, 45, -1, 6),  /* host memory */
    };
    a[6].kind = XP_AK_PINNED;
    struct xp_error e[4] = {
        {.start_ns = 100, .stack_id = 9, .api = 2, .status = 2, .record = "alloc", .device = 0,
         .detail = "requested 67108864 bytes; device free 104857600 of 268435456",
         .requested = 64 * MiB, .dev_free = 100 * MiB, .dev_total = 256 * MiB},
        {.start_ns = 101, .stack_id = 9, .api = 2, .status = 2, .record = "alloc", .device = 0,
         .requested = 200 * MiB, .dev_free = 100 * MiB, .dev_total = 256 * MiB},
        {.start_ns = 102, .stack_id = 8, .api = 2, .status = 2, .record = "alloc", .device = 0,
         .requested = 8 * MiB, .dev_free = -1, .dev_total = -1},
        {.start_ns = 103, .stack_id = 8, .api = 2, .status = 1, .record = "alloc", .device = 0},
    };
    p.allocs = a;
    p.n_allocs = 7;
    p.errors = e;
    p.n_errors = 4;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "oom"), 3);
    const struct xp_finding *f = &r.findings[0];
    assert_int_equal(f->severity, XP_SEV_ERROR);
    assert_int_equal(f->stack_id, 9);
    assert_int_equal(f->count, 1);
    assert_int_equal(f->bytes, 64 * MiB);
    assert_int_equal(num(f, "requested_bytes"), 64 * MiB);
    assert_int_equal(num(f, "live_bytes"), 101 * MiB);
    assert_int_equal(num(f, "live_count"), 4);
    assert_int_equal(num(f, "device_free_bytes"), 100 * MiB);
    assert_int_equal(num(f, "device_total_bytes"), 256 * MiB);
    assert_int_equal(num(f, "fragmentation"), 1);
    assert_int_equal(num(f, "at_ns"), -900);
    assert_int_equal(num(f, "top1_bytes"), 50 * MiB);
    assert_int_equal(num(f, "top1_stack_id"), 2);
    assert_string_equal(text(f, "top1_ptr"), "0x5000000");
    assert_int_equal(num(f, "top2_bytes"), 30 * MiB);
    assert_int_equal(num(f, "top3_bytes"), 20 * MiB);
    assert_int_equal(num(f, "site1_stack_id"), 1);
    assert_int_equal(num(f, "site1_bytes"), 50 * MiB);
    assert_int_equal(num(f, "site1_count"), 2);
    assert_int_equal(num(f, "site2_stack_id"), 2);
    assert_int_equal(num(f, "site3_stack_id"), 4);
    assert_int_equal(num(f, "site3_bytes"), 1 * MiB);
    assert_non_null(strstr(f->message, "fragmentation"));
    f = &r.findings[1];
    assert_int_equal(num(f, "fragmentation"), 0);
    assert_null(strstr(f->message, "fragmentation"));
    f = &r.findings[2];
    assert_int_equal(num(f, "fragmentation"), 0);
    assert_null(fact(f, "device_free_bytes"));
    assert_int_equal(num(f, "live_bytes"), 101 * MiB);
    /* Another device's memory is not what ran out. */
    e[0].device = 1;
    run(&r, "oom");
    assert_int_equal(num(&r.findings[0], "live_bytes"), 0);
    assert_null(fact(&r.findings[0], "top1_bytes"));
    report_free(&r);
    (void)state;
}

/* Many failures over a changing heap on two devices (and failures of no
 * known device): each finding agrees with a plain replay up to its time. */
static void test_oom_many_against_replay(void **state)
{
    struct xp_process p;
    proc_init(&p);
    enum { NA = 300, NE = 60 };
    static struct xp_alloc a[NA];
    static struct xp_error e[NE];
    uint64_t seed = 12345;
    for (size_t i = 0; i < NA; i++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        int64_t at = (int64_t)(seed >> 40) % 1000;
        int64_t life = (int64_t)(seed >> 20) % 400;
        a[i] = alloc(0x1000 * (i + 1), 1 + (seed >> 8) % 64 * MiB, at, (seed >> 60) % 3 ? at + life + 1 : -1,
                     1 + (uint32_t)(seed >> 33) % 7);
        a[i].device = (int32_t)(seed >> 50) % 2;
        if ((seed >> 55) % 11 == 0)
            a[i].kind = XP_AK_MANAGED;
    }
    for (size_t i = 0; i < NE; i++)
        e[i] = (struct xp_error){.start_ns = (int64_t)((i * 7919) % 1000), .stack_id = 1, .status = 2,
                                 .record = "alloc", .device = (int32_t)(i % 3) - 1, .requested = MiB,
                                 .dev_free = -1, .dev_total = -1};
    p.allocs = a;
    p.n_allocs = NA;
    p.errors = e;
    p.n_errors = NE;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "oom"), NE);
    for (size_t i = 0; i < NE; i++) {
        const struct xp_finding *f = &r.findings[i];
        uint64_t live = 0, count = 0, top[3] = {0};
        uint64_t site_bytes[8] = {0};
        for (size_t j = 0; j < NA; j++) {
            const struct xp_alloc *x = &a[j];
            bool on = x->kind == XP_AK_DEVICE && (e[i].device < 0 || x->device == e[i].device) &&
                      x->alloc_ns <= e[i].start_ns && (x->free_ns < 0 || x->free_ns > e[i].start_ns);
            if (!on)
                continue;
            live += x->bytes;
            count++;
            site_bytes[x->alloc_stack] += x->bytes;
            uint64_t v = x->bytes;
            for (int k = 0; k < 3; k++)
                if (v > top[k]) {
                    uint64_t t = top[k];
                    top[k] = v;
                    v = t;
                }
        }
        assert_int_equal(num(f, "live_bytes"), live);
        assert_int_equal(num(f, "live_count"), count);
        assert_int_equal(num(f, "device"), e[i].device);
        static const char *const keys[3] = {"top1_bytes", "top2_bytes", "top3_bytes"};
        for (int k = 0; k < 3; k++) {
            if (top[k])
                assert_int_equal(num(f, keys[k]), top[k]);
            else
                assert_null(fact(f, keys[k]));
        }
        uint64_t best = 0;
        for (size_t k = 0; k < 8; k++)
            best = site_bytes[k] > best ? site_bytes[k] : best;
        if (best)
            assert_int_equal(num(f, "site1_bytes"), best);
    }
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
    static const char *const bad[][2] = {
        {"nonsense", "expected RULE.KEY=VALUE"},
        {"sync-in-loop.min_count", "expected RULE.KEY=VALUE"},
        {".min_count=3", "expected RULE.KEY=VALUE"},
        {"sync-in-loop.=3", "expected RULE.KEY=VALUE"},
        {"nope.min_count=3", "unknown rule 'nope'"},
        {"sync-in-loop.nope=3", "rule sync-in-loop has no setting 'nope' (it has: min_count)"},
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
    static const char *const ids[] = {"async-pageable", "sync-in-loop", "redundant-upload", "reupload-fresh", "round-trip",
                                      "small-copies", "low-bandwidth", "leak", "invalid-free",
                                      "fragmentation", "oom", "device-placement"};
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
        cmocka_unit_test(test_async_pageable),
        cmocka_unit_test(test_sync_in_loop),
        cmocka_unit_test(test_sync_in_loop_fix),
        cmocka_unit_test(test_redundant_same_dst),
        cmocka_unit_test(test_redundant_site_repeats),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_small_copies),
        cmocka_unit_test(test_low_bandwidth),
        cmocka_unit_test(test_leak_growing_and_held),
        cmocka_unit_test(test_leak_bounded_cache_is_not_growing),
        cmocka_unit_test(test_leak_caching_allocator),
        cmocka_unit_test(test_invalid_free),
        cmocka_unit_test(test_fragmentation),
        cmocka_unit_test(test_fragmentation_failed_request),
        cmocka_unit_test(test_fragmentation_negatives),
        cmocka_unit_test(test_caching_allocator),
        cmocka_unit_test(test_oom),
        cmocka_unit_test(test_oom_many_against_replay),
        cmocka_unit_test(test_stacks_off),
        cmocka_unit_test(test_thresholds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
