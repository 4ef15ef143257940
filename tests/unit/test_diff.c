/* test_diff.c: xferprof diff's matching and classification (analyzer/xp_diff.c) on hand-built models.
 *
 * Each model says what a program did (copies from call sites with known
 * frames); the expectations follow from that, not from the diff's output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "xp_diff.h"
#include "xt_sites.h"

#define MiB (1024u * 1024u)

/* ---- building models --------------------------------------------------- */

static void *xt_grow(void *p, size_t n, size_t sz)
{
    void *g = realloc(p, (n + 1) * sz);
    assert_non_null(g);
    return g;
}

static struct xp_process *xt_proc(struct xp_report *r, int64_t rank)
{
    r->procs = xt_grow(r->procs, r->n_procs, sizeof *r->procs);
    struct xp_process *p = &r->procs[r->n_procs++];
    *p = (struct xp_process){.rank = rank, .pid = 1000 + (int64_t)r->n_procs};
    static char *apis[] = {"cudaMemcpy", "cudaMemcpyAsync"};
    p->api_names = apis;
    p->n_api = 2;
    p->label = rank >= 0 ? (rank == 0 ? "rank 0" : rank == 1 ? "rank 1" : "rank n") : "pid";
    return p;
}

/* A frame with a function (and source line) or, with function NULL, a bare
 * module + offset. */
static struct xp_frame xt_fn(const char *fn, int line, uint64_t offset)
{
    return (struct xp_frame){.addr = 0x555500000000ull + offset, .module = "train",
                             .module_path = "/opt/app/train", .offset = offset, .function = fn,
                             .file = fn ? "/src/train.c" : NULL, .line = fn ? line : 0};
}

/* A stack of the given frames, innermost first, with the runtime's frame
 * (internal) on top as a loader that keeps it would leave it. */
static void xt_stack(struct xp_process *p, uint32_t id, size_t n, const struct xp_frame *frames)
{
    p->stacks = xt_grow(p->stacks, p->n_stacks, sizeof *p->stacks);
    struct xp_stack *s = &p->stacks[p->n_stacks++];
    *s = (struct xp_stack){.id = id};   /* top 0: no framework frames */
    s->nframes = (uint32_t)n + 1;
    s->frames = calloc(n + 1, sizeof *s->frames);
    assert_non_null(s->frames);
    s->frames[0] = (struct xp_frame){.addr = 0x7f0000001234ull + id, .module = "libcudart.so.13",
                                     .offset = 0x1234 + id, .function = "cudaMemcpy",
                                     .internal = true};
    memcpy(s->frames + 1, frames, n * sizeof *frames);
}

/* The usual two-frame stack: the copy in `fn` at line, called from main. */
static void xt_site(struct xp_process *p, uint32_t id, const char *fn, int line, uint64_t off)
{
    struct xp_frame f[2] = {xt_fn(fn, line, off), xt_fn("main", 50, 0x900)};
    xt_stack(p, id, 2, f);
}

static void xt_copy(struct xp_process *p, uint32_t stack, uint8_t dir, uint8_t hm, uint8_t bl,
                    uint64_t bytes, int64_t dur, int64_t range)
{
    p->copies = xt_grow(p->copies, p->n_copies, sizeof *p->copies);
    p->copies[p->n_copies] = (struct xp_copy){
        .start_ns = (int64_t)p->n_copies * 1000, .dur_ns = dur, .bytes = bytes,
        .cs = xt_new_site((struct xp_call_site){.stack_id = stack, .direction = dir,
                                                .host_mem = hm, .blocking = bl,
                                                .api = bl == XP_BL_SYNC ? 0 : 1}),
        .nvtx_range = (uint32_t)range};
    p->n_copies++;
}

static void xt_alloc(struct xp_process *p, uint32_t stack, uint64_t bytes, int64_t at, int64_t freed)
{
    p->allocs = xt_grow(p->allocs, p->n_allocs, sizeof *p->allocs);
    p->allocs[p->n_allocs++] = (struct xp_alloc){.alloc_ns = at, .alloc_end_ns = at + 1,
                                                 .free_ns = freed, .bytes = bytes,
                                                 .alloc_stack = stack, .kind = XP_AK_DEVICE};
}

static void xt_range(struct xp_process *p, int64_t id, const char *name)
{
    p->ranges = xt_grow(p->ranges, p->n_ranges, sizeof *p->ranges);
    p->ranges[p->n_ranges++] = (struct xp_nvtx_range){.id = id, .name = (char *)name,
                                                      .push = true, .end_ns = id * 10};
}

static void xt_free(struct xp_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++) {
        struct xp_process *p = &r->procs[i];
        for (size_t k = 0; k < p->n_stacks; k++)
            free(p->stacks[k].frames);
        free(p->stacks);
        free(p->copies);
        free(p->allocs);
        free(p->ranges);
    }
    free(r->procs);
    for (size_t i = 0; i < r->n_findings; i++)
        free(r->findings[i].message);
    free(r->findings);
    *r = (struct xp_report){0};
}

/* A training loop: `steps` steps, each uploading 1 MiB from load_batch
 * (pinned, async) and downloading the loss (4 bytes, sync) from main. */
static void xt_training(struct xp_report *r, int steps, int uploads_per_step, uint8_t upload_hm)
{
    struct xp_process *p = xt_proc(r, -1);
    xt_site(p, 1, "load_batch", 20, 0x1100);
    struct xp_frame loss[1] = {xt_fn("main", 60, 0x950)};
    xt_stack(p, 2, 1, loss);
    uint8_t bl = upload_hm == XP_HM_PINNED ? XP_BL_ASYNC : XP_BL_ASYNC_PAGEABLE;
    for (int s = 0; s < steps; s++) {
        for (int u = 0; u < uploads_per_step; u++)
            xt_copy(p, 1, XP_DIR_H2D, upload_hm, bl, MiB, 100000, XP_NONE_ID);
        xt_copy(p, 2, XP_DIR_D2H, XP_HM_PAGEABLE, XP_BL_SYNC, 4, 20000, XP_NONE_ID);
    }
}

static struct xp_diff_options xt_opt(double threshold, enum xp_diff_fail_on fail)
{
    struct xp_diff_options o;
    xp_diff_options_default(&o);
    o.threshold_pct = threshold;
    o.fail_on = fail;
    return o;
}

static const struct xp_diff_site *xt_find_site(const struct xp_diff *d, const char *fn)
{
    for (size_t i = 0; i < d->n_sites; i++)
        if (d->sites[i].n_frames && d->sites[i].frames[0].function &&
            strcmp(d->sites[i].frames[0].function, fn) == 0)
            return &d->sites[i];
    /* fail_msg does not return; the dummy keeps the compiler's null checks quiet. */
    static const struct xp_diff_site none = {.cls = XP_DC_COUNT};
    fail_msg("no site in %s", fn);
    return &none;
}

static const struct xp_diff_metric *xt_metric(const struct xp_diff_totals_cmp *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->m[i].name, name) == 0)
            return &t->m[i];
    static const struct xp_diff_metric none = {.cls = XP_DC_COUNT};
    fail_msg("no metric %s", name);
    return &none;
}

static bool xt_has_reason(const struct xp_diff_site *s, const char *prefix)
{
    for (size_t i = 0; i < s->n_reasons; i++)
        if (strncmp(s->reasons[i], prefix, strlen(prefix)) == 0)
            return true;
    return false;
}

/* ---- tests ------------------------------------------------------------- */

static void test_self_is_unchanged(void **state)
{
    (void)state;
    struct xp_report r = {0};
    xt_training(&r, 4, 1, XP_HM_PINNED);
    struct xp_diff_options o = xt_opt(10, XP_DIFF_FAIL_ANY);
    struct xp_diff d;
    assert_int_equal(xp_diff_compute(&r, &r, &o, &d), 0);
    assert_int_equal(d.n_sites, 2);
    assert_int_equal(d.n_exact, 2);
    assert_int_equal(d.n_approximate + d.n_gone + d.n_new, 0);
    for (size_t i = 0; i < d.n_sites; i++)
        assert_int_equal(d.sites[i].cls, XP_DC_UNCHANGED);
    for (size_t i = 0; i < d.totals.n; i++)
        assert_int_equal(d.totals.m[i].cls, XP_DC_UNCHANGED);
    assert_int_equal(d.regressions, 0);
    assert_false(d.any_change);
    assert_int_equal(d.exit_status, 0);
    /* The internal runtime frame is not part of the key. */
    const struct xp_diff_site *s = xt_find_site(&d, "load_batch");
    assert_non_null(s);
    assert_int_equal(s->n_frames, 2);
    assert_true(s->new_->bytes == 4.0 * MiB);
    xp_diff_free(&d);
    xt_free(&r);
}

static void test_pinned_to_pageable_regresses_whatever_threshold(void **state)
{
    (void)state;
    struct xp_report b = {0}, n = {0};
    xt_training(&b, 4, 1, XP_HM_PINNED);
    xt_training(&n, 4, 1, XP_HM_PAGEABLE);
    struct xp_diff_options o = xt_opt(1e6, XP_DIFF_FAIL_REGRESSION);
    struct xp_diff d;
    assert_int_equal(xp_diff_compute(&b, &n, &o, &d), 0);
    const struct xp_diff_site *s = xt_find_site(&d, "load_batch");
    assert_non_null(s);
    assert_int_equal(s->cls, XP_DC_REGRESSED);
    assert_int_equal(s->match, XP_DM_EXACT);
    assert_true(xt_has_reason(s, "lost pinned memory"));
    assert_true(xt_has_reason(s, "became blocking")); /* async from pageable holds the caller */
    assert_int_equal(d.sites[0].cls, XP_DC_REGRESSED); /* regressions listed first */
    assert_int_equal(xt_find_site(&d, "main")->cls, XP_DC_UNCHANGED);
    assert_true(d.regressions >= 1);
    assert_int_equal(d.exit_status, 1);
    xp_diff_free(&d);
    xt_free(&b);
    xt_free(&n);
}

static void test_extra_upload_per_step(void **state)
{
    (void)state;
    struct xp_report b = {0}, n = {0};
    xt_training(&b, 4, 1, XP_HM_PINNED);
    xt_training(&n, 4, 2, XP_HM_PINNED);
    struct xp_diff d;
    struct xp_diff_options o = xt_opt(10, XP_DIFF_FAIL_REGRESSION);
    assert_int_equal(xp_diff_compute(&b, &n, &o, &d), 0);
    const struct xp_diff_site *s = xt_find_site(&d, "load_batch");
    assert_int_equal(s->cls, XP_DC_REGRESSED);
    assert_true(xt_has_reason(s, "bytes +100%"));
    assert_int_equal(xt_metric(&d.totals, "H2D.bytes")->cls, XP_DC_REGRESSED);
    assert_true(xt_metric(&d.totals, "H2D.bytes")->new_ == 8.0 * MiB);
    assert_int_equal(xt_find_site(&d, "main")->cls, XP_DC_UNCHANGED);
    assert_int_equal(d.exit_status, 1);
    xp_diff_free(&d);

    o = xt_opt(1000, XP_DIFF_FAIL_REGRESSION);
    assert_int_equal(xp_diff_compute(&b, &n, &o, &d), 0);
    assert_int_equal(xt_find_site(&d, "load_batch")->cls, XP_DC_UNCHANGED);
    assert_int_equal(d.regressions, 0);
    assert_int_equal(d.exit_status, 0);
    xp_diff_free(&d);
    xt_free(&b);
    xt_free(&n);
}

static void test_moved_to_other_function(void **state)
{
    (void)state;
    struct xp_report b = {0}, n = {0};
    struct xp_process *pb = xt_proc(&b, -1), *pn = xt_proc(&n, -1);
    xt_site(pb, 1, "load_batch", 20, 0x1100);
    xt_site(pn, 1, "prefetch_batch", 20, 0x1100); /* even at the same offset */
    xt_copy(pb, 1, XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, MiB, 1000, XP_NONE_ID);
    xt_copy(pn, 1, XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, MiB, 1000, XP_NONE_ID);
    struct xp_diff d;
    struct xp_diff_options o = xt_opt(10, XP_DIFF_FAIL_ANY);
    assert_int_equal(xp_diff_compute(&b, &n, &o, &d), 0);
    assert_int_equal(d.n_gone, 1);
    assert_int_equal(d.n_new, 1);
    assert_int_equal(d.n_exact + d.n_approximate, 0);
    assert_int_equal(xt_find_site(&d, "load_batch")->cls, XP_DC_GONE);
    assert_int_equal(xt_find_site(&d, "prefetch_batch")->cls, XP_DC_NEW);
    assert_null(xt_find_site(&d, "load_batch")->new_);
    assert_null(xt_find_site(&d, "prefetch_batch")->base);
    assert_int_equal(d.exit_status, 1);
    xp_diff_free(&d);
    xt_free(&b);
    xt_free(&n);
}

static void test_rebuilt_elsewhere_matches_exactly(void **state)
{
    (void)state;
    struct xp_report b = {0}, n = {0};
    xt_training(&b, 4, 1, XP_HM_PINNED);
    xt_training(&n, 4, 1, XP_HM_PINNED);
    /* Another load address and another build: every address and offset
     * differs, the module lives in another folder; functions and lines are
     * the same. */
    struct xp_process *p = &n.procs[0];
    for (size_t i = 0; i < p->n_stacks; i++)
        for (size_t k = 1; k < p->stacks[i].nframes; k++) {
            p->stacks[i].frames[k].addr += 0x1000000;
            p->stacks[i].frames[k].offset += 0x40;
            p->stacks[i].frames[k].module_path = "/home/ci/build/train";
            p->stacks[i].frames[k].file = "/home/ci/src/train.c";
        }
    struct xp_diff d;
    struct xp_diff_options o = xt_opt(10, XP_DIFF_FAIL_ANY);
    assert_int_equal(xp_diff_compute(&b, &n, &o, &d), 0);
    assert_int_equal(d.n_exact, 2);
    assert_int_equal(d.n_approximate + d.n_gone + d.n_new, 0);
    assert_false(d.any_change);
    assert_int_equal(d.exit_status, 0);
    xp_diff_free(&d);
    xt_free(&b);
    xt_free(&n);
}

static void test_moved_line_is_approximate(void **state)
{
    (void)state;
    struct xp_report b = {0}, n = {0};
    struct xp_process *pb = xt_proc(&b, -1), *pn = xt_proc(&n, -1);
    xt_site(pb, 1, "load_batch", 20, 0x1100);
    xt_site(pn, 1, "load_batch", 23, 0x1130); /* a comment added above the copy */
    xt_copy(pb, 1, XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, MiB, 1000, XP_NONE_ID);
    xt_copy(pn, 1, XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, MiB, 1000, XP_NONE_ID);
    struct xp_diff d;
    struct xp_diff_options o = xt_opt(10, XP_DIFF_FAIL_ANY);
    assert_int_equal(xp_diff_compute(&b, &n, &o, &d), 0);
    assert_int_equal(d.n_approximate, 1);
    assert_int_equal(d.n_exact + d.n_gone + d.n_new, 0);
    assert_int_equal(d.sites[0].match, XP_DM_APPROXIMATE);
    assert_int_equal(d.sites[0].cls, XP_DC_UNCHANGED);
    assert_int_equal(d.sites[0].frames[0].line, 23); /* shown as it is now */
    xp_diff_free(&d);
    xt_free(&b);
    xt_free(&n);
}

static void test_frames_without_function_match_by_offset_only(void **state)
{
    (void)state;
    struct xp_report b = {0}, n = {0};
    struct xp_process *pb = xt_proc(&b, -1), *pn = xt_proc(&n, -1);
    struct xp_frame f1[1] = {xt_fn(NULL, 0, 0x1100)}, f2[1] = {xt_fn(NULL, 0, 0x2200)};
    xt_stack(pb, 1, 1, f1);
    xt_stack(pb, 2, 1, f2);
    struct xp_frame g1[1] = {xt_fn(NULL, 0, 0x1100)}, g2[1] = {xt_fn(NULL, 0, 0x2204)};
    g1[0].addr += 0x7000000; /* ASLR: another address, the same offset */
    xt_stack(pn, 1, 1, g1);
    xt_stack(pn, 2, 1, g2);
    for (uint32_t s = 1; s <= 2; s++) {
        xt_copy(pb, s, XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, MiB, 1000, XP_NONE_ID);
        xt_copy(pn, s, XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, MiB, 1000, XP_NONE_ID);
    }
    struct xp_diff d;
    struct xp_diff_options o = xt_opt(10, XP_DIFF_FAIL_NEVER);
    assert_int_equal(xp_diff_compute(&b, &n, &o, &d), 0);
    assert_int_equal(d.n_exact, 1);
    assert_int_equal(d.n_approximate, 0); /* an offset 4 bytes off is not "near" */
    assert_int_equal(d.n_gone, 1);
    assert_int_equal(d.n_new, 1);
    xp_diff_free(&d);
    xt_free(&b);
    xt_free(&n);
}

static void test_leak_added(void **state)
{
    (void)state;
    struct xp_report b = {0}, n = {0};
    xt_training(&b, 4, 1, XP_HM_PINNED);
    xt_training(&n, 4, 1, XP_HM_PINNED);
    struct xp_frame af[1] = {xt_fn("alloc_scratch", 80, 0x1500)};
    for (int side = 0; side < 2; side++) {
        struct xp_process *p = side ? &n.procs[0] : &b.procs[0];
        xt_stack(p, 3, 1, af);
        for (int s = 0; s < 4; s++)
            /* The new build forgets to free the scratch buffer. */
            xt_alloc(p, 3, 4 * MiB, s * 1000, side ? -1 : s * 1000 + 500);
    }
    assert_non_null(xp_report_add(&n, "leak", XP_SEV_WARNING, &n.procs[0], 3, 4, 16 * MiB, 0,
                                  "free it", NULL, "4 allocations live at exit"));
    struct xp_diff d;
    struct xp_diff_options o = xt_opt(10, XP_DIFF_FAIL_REGRESSION);
    assert_int_equal(xp_diff_compute(&b, &n, &o, &d), 0);
    const struct xp_diff_metric *m = xt_metric(&d.totals, "memory.live_at_exit_bytes");
    assert_true(m->base == 0 && m->new_ == 16.0 * MiB);
    assert_int_equal(m->cls, XP_DC_REGRESSED);
    assert_int_equal(xt_metric(&d.totals, "memory.peak_bytes")->cls, XP_DC_REGRESSED);
    assert_true(xt_metric(&d.totals, "memory.peak_bytes")->base == 4.0 * MiB);
    assert_int_equal(d.n_findings, 1);
    assert_int_equal(d.findings[0].kind, XP_DF_APPEARED);
    assert_string_equal(d.findings[0].rule, "leak");
    assert_int_equal(d.findings[0].n_frames, 1);
    assert_string_equal(d.findings[0].frames[0].function, "alloc_scratch");
    assert_int_equal(d.findings[0].new_.bytes, 16 * MiB);
    /* Copies did not change. */
    for (size_t i = 0; i < d.n_sites; i++)
        assert_int_equal(d.sites[i].cls, XP_DC_UNCHANGED);
    assert_int_equal(d.exit_status, 1);
    xp_diff_free(&d);

    /* Swapped: the finding disappeared and memory improved. */
    assert_int_equal(xp_diff_compute(&n, &b, &o, &d), 0);
    assert_int_equal(d.n_findings, 1);
    assert_int_equal(d.findings[0].kind, XP_DF_DISAPPEARED);
    assert_int_equal(xt_metric(&d.totals, "memory.live_at_exit_bytes")->cls, XP_DC_IMPROVED);
    assert_int_equal(d.exit_status, 0);
    xp_diff_free(&d);
    xt_free(&b);
    xt_free(&n);
}

static void test_finding_on_site_regresses_it(void **state)
{
    (void)state;
    struct xp_report b = {0}, n = {0};
    xt_training(&b, 4, 1, XP_HM_PINNED);
    xt_training(&n, 4, 1, XP_HM_PINNED);
    assert_non_null(xp_report_add(&n, "redundant-upload", XP_SEV_WARNING, &n.procs[0], 1, 3,
                                  3 * MiB, 0, "fix", NULL, "same bytes again"));
    struct xp_diff d;
    struct xp_diff_options o = xt_opt(1e6, XP_DIFF_FAIL_REGRESSION);
    assert_int_equal(xp_diff_compute(&b, &n, &o, &d), 0);
    const struct xp_diff_site *s = xt_find_site(&d, "load_batch");
    assert_int_equal(s->cls, XP_DC_REGRESSED);
    assert_true(xt_has_reason(s, "new finding: redundant-upload"));
    assert_int_equal(d.exit_status, 1);
    xp_diff_free(&d);
    xt_free(&b);
    xt_free(&n);
}

/* Four ranks, each making 8 blocking pageable uploads of 1 MiB from one
 * site, whose times (ms) follow pattern[] shifted by the rank: one
 * deterministic program on a loaded machine. */
static void xt_jittery_job(struct xp_report *r, const int *pattern_ms, double scale)
{
    for (int64_t rank = 0; rank < 4; rank++) {
        struct xp_process *p = xt_proc(r, rank);
        xt_site(p, 1, "upload", 30, 0x1200);
        for (int i = 0; i < 8; i++)
            xt_copy(p, 1, XP_DIR_H2D, XP_HM_PAGEABLE, XP_BL_SYNC, MiB,
                    (int64_t)(scale * pattern_ms[(i + rank) % 8] * 1e6), XP_NONE_ID);
    }
}

/* Blocked time that moves by 40% within the spread each run shows by itself
 * is noise: no site, pair or total regresses.  A slowdown well past that
 * spread still does. */
static void test_blocked_time_within_noise_band(void **state)
{
    (void)state;
    static const int base_ms[8] = {250, 150, 40, 40, 25, 70, 60, 30};  /* 665 ms */
    static const int new_ms[8] = {80, 70, 30, 40, 60, 60, 60, 4};      /* 404 ms: -40% */
    struct xp_report b = {0}, n = {0};
    xt_jittery_job(&b, base_ms, 1);
    xt_jittery_job(&n, new_ms, 1);
    struct xp_diff_options o = xt_opt(10, XP_DIFF_FAIL_REGRESSION);
    struct xp_diff d;
    /* Both ways round: the slower run as the new one too. */
    for (int way = 0; way < 2; way++) {
        assert_int_equal(xp_diff_compute(way ? &n : &b, way ? &b : &n, &o, &d), 0);
        assert_int_equal(xt_find_site(&d, "upload")->cls, XP_DC_UNCHANGED);
        assert_int_equal(xt_metric(&d.totals, "blocked_ns")->cls, XP_DC_UNCHANGED);
        assert_int_equal(xt_metric(&d.totals, "H2D.blocked_ns")->cls, XP_DC_UNCHANGED);
        for (size_t i = 0; i < d.n_pairs; i++)
            assert_int_equal(xt_metric(&d.pairs[i].totals, "blocked_ns")->cls, XP_DC_UNCHANGED);
        assert_int_equal(d.regressions, 0);
        assert_int_equal(d.exit_status, 0);
        xp_diff_free(&d);
    }
    xt_free(&n);
    /* Every copy four times slower: far past the spread. */
    xt_jittery_job(&n, base_ms, 4);
    assert_int_equal(xp_diff_compute(&b, &n, &o, &d), 0);
    const struct xp_diff_site *s = xt_find_site(&d, "upload");
    assert_int_equal(s->cls, XP_DC_REGRESSED);
    assert_true(xt_has_reason(s, "blocked time +300%"));
    assert_int_equal(xt_metric(&d.totals, "blocked_ns")->cls, XP_DC_REGRESSED);
    assert_int_equal(d.exit_status, 1);
    xp_diff_free(&d);
    xt_free(&b);
    xt_free(&n);
}

/* One process making 40 pageable uploads of 512 KiB, 130 us each (+-5%),
 * of which `slowed` took `factor` times as long (a busy machine: the copies
 * waited for a CPU). */
static void xt_loaded_run(struct xp_report *r, int slowed, double factor)
{
    struct xp_process *p = xt_proc(r, -1);
    xt_site(p, 1, "upload", 23, 0x1200);
    for (int i = 0; i < 40; i++)
        xt_copy(p, 1, XP_DIR_H2D, XP_HM_PAGEABLE, XP_BL_ASYNC_PAGEABLE, 512 * 1024,
                (int64_t)((i < slowed ? factor : 1.0) * (130e3 + (i % 3 - 1) * 6.5e3)), XP_NONE_ID);
}

/* A run on a busy machine: 36 of its 40 copies took 8.5 times as long, far
 * past the spread of the quiet run, but 4 were as fast as ever: the
 * program did not change, the machine did.  When all 40 took longer, the
 * copies themselves got slower: a regression. */
static void test_loaded_machine_is_not_a_regression(void **state)
{
    (void)state;
    struct xp_report b = {0}, n = {0};
    xt_loaded_run(&b, 0, 1.0);
    xt_loaded_run(&n, 36, 8.5);
    struct xp_diff_options o = xt_opt(10, XP_DIFF_FAIL_REGRESSION);
    struct xp_diff d;
    assert_int_equal(xp_diff_compute(&b, &n, &o, &d), 0);
    assert_int_equal(xt_find_site(&d, "upload")->cls, XP_DC_UNCHANGED);
    assert_int_equal(d.exit_status, 0);
    xp_diff_free(&d);
    xt_free(&n);
    xt_loaded_run(&n, 40, 8.5);
    assert_int_equal(xp_diff_compute(&b, &n, &o, &d), 0);
    assert_int_equal(xt_find_site(&d, "upload")->cls, XP_DC_REGRESSED);
    assert_int_equal(d.exit_status, 1);
    xp_diff_free(&d);
    xt_free(&b);
    xt_free(&n);
}

/* Four ranks making 8 pageable uploads of 5 ms (+-0.5) each, ranks
 * slowed as a whole by the factors of slow[] (their CPU taken for a while
 * on a loaded machine: every copy of theirs slower, their own spread
 * unchanged). */
static void xt_slowed_job(struct xp_report *r, const double *slow)
{
    for (int64_t rank = 0; rank < 4; rank++) {
        struct xp_process *p = xt_proc(r, rank);
        xt_site(p, 1, "upload", 30, 0x1200);
        for (int i = 0; i < 8; i++)
            xt_copy(p, 1, XP_DIR_H2D, XP_HM_PAGEABLE, XP_BL_SYNC, MiB,
                    (int64_t)(slow[rank] * (5e6 + (i % 2 ? 5e5 : -5e5))), XP_NONE_ID);
    }
}

/* A rank whose copies all took 2.8 times as long in one run, where the
 * job's ranks differ that much from each other: noise of the job, not a
 * regression of the rank.  Every rank 2.8 times slower is one. */
static void test_rank_slowed_as_a_whole_is_noise(void **state)
{
    (void)state;
    static const double base[4] = {1, 1.2, 0.9, 1.1}, new_[4] = {1.1, 0.9, 2.8, 1};
    struct xp_report b = {0}, n = {0};
    xt_slowed_job(&b, base);
    xt_slowed_job(&n, new_);
    struct xp_diff_options o = xt_opt(10, XP_DIFF_FAIL_REGRESSION);
    struct xp_diff d;
    for (int way = 0; way < 2; way++) {
        assert_int_equal(xp_diff_compute(way ? &n : &b, way ? &b : &n, &o, &d), 0);
        for (size_t i = 0; i < d.n_pairs; i++)
            assert_int_equal(xt_metric(&d.pairs[i].totals, "blocked_ns")->cls, XP_DC_UNCHANGED);
        assert_int_equal(d.regressions, 0);
        xp_diff_free(&d);
    }
    xt_free(&n);
    static const double all_slow[4] = {2.8, 3.4, 2.5, 3.1};
    xt_slowed_job(&n, all_slow);
    assert_int_equal(xp_diff_compute(&b, &n, &o, &d), 0);
    assert_int_equal(xt_metric(&d.totals, "blocked_ns")->cls, XP_DC_REGRESSED);
    assert_true(d.regressions > 0);
    xp_diff_free(&d);
    xt_free(&b);
    xt_free(&n);
}

/* Two ranks each holding 1 MiB for a while: in one run at the same time, in
 * the other one after the other.  The job's peak is the sum of the ranks'
 * peaks, not that of their interleaving, so nothing changed. */
static void test_job_peak_is_not_interleaving(void **state)
{
    (void)state;
    struct xp_report b = {0}, n = {0};
    for (int64_t rank = 0; rank < 2; rank++) {
        xt_alloc(xt_proc(&b, rank), 1, MiB, 100, 200);
        xt_alloc(xt_proc(&n, rank), 1, MiB, 100 + rank * 1000, 200 + rank * 1000);
    }
    struct xp_diff_options o = xt_opt(10, XP_DIFF_FAIL_REGRESSION);
    struct xp_diff d;
    assert_int_equal(xp_diff_compute(&n, &b, &o, &d), 0);
    const struct xp_diff_metric *m = xt_metric(&d.totals, "memory.peak_bytes");
    assert_true(m->base == 2.0 * MiB && m->new_ == 2.0 * MiB);
    assert_int_equal(m->cls, XP_DC_UNCHANGED);
    assert_int_equal(d.regressions, 0);
    xp_diff_free(&d);
    xt_free(&b);
    xt_free(&n);
}

/* A call site that blocks where none was is a regression, as a matched site
 * that became blocking is; a new site of async copies is not. */
static void test_new_blocking_site_regresses(void **state)
{
    (void)state;
    struct xp_report b = {0}, n = {0};
    xt_training(&b, 4, 1, XP_HM_PINNED);
    xt_training(&n, 4, 1, XP_HM_PINNED);
    xt_site(&n.procs[0], 3, "log_metrics", 70, 0x1300);
    xt_copy(&n.procs[0], 3, XP_DIR_D2H, XP_HM_PINNED, XP_BL_ASYNC, 64, 1000, XP_NONE_ID);
    struct xp_diff_options o = xt_opt(10, XP_DIFF_FAIL_REGRESSION);
    struct xp_diff d;
    assert_int_equal(xp_diff_compute(&b, &n, &o, &d), 0);
    assert_int_equal(xt_find_site(&d, "log_metrics")->cls, XP_DC_NEW);
    assert_int_equal(d.regressions, 0);
    xp_diff_free(&d);
    xt_copy(&n.procs[0], 3, XP_DIR_D2H, XP_HM_PINNED, XP_BL_SYNC, 64, 1000, XP_NONE_ID);
    assert_int_equal(xp_diff_compute(&b, &n, &o, &d), 0);
    const struct xp_diff_site *s = xt_find_site(&d, "log_metrics");
    assert_int_equal(s->cls, XP_DC_NEW);
    assert_true(xt_has_reason(s, "new blocking site"));
    assert_int_equal(d.regressions, 1);
    assert_int_equal(d.exit_status, 1);
    xp_diff_free(&d);
    xt_free(&b);
    xt_free(&n);
}

/* A finding of a rule that rests on measured time comes and goes with the
 * machine's load: listed, but not a regression. */
static void test_timed_finding_is_not_a_regression(void **state)
{
    (void)state;
    struct xp_report b = {0}, n = {0};
    xt_training(&b, 4, 1, XP_HM_PINNED);
    xt_training(&n, 4, 1, XP_HM_PINNED);
    assert_non_null(xp_report_add(&n, "low-bandwidth", XP_SEV_WARNING, &n.procs[0], 1, 4,
                                  4 * MiB, 0, "fix", NULL, "slow"));
    assert_non_null(xp_report_add(&b, "small-copies", XP_SEV_INFO, &b.procs[0], 2, 4,
                                  16, 0, "fix", NULL, "small"));
    struct xp_diff_options o = xt_opt(10, XP_DIFF_FAIL_REGRESSION);
    struct xp_diff d;
    assert_int_equal(xp_diff_compute(&b, &n, &o, &d), 0);
    assert_int_equal(xt_find_site(&d, "load_batch")->cls, XP_DC_UNCHANGED);
    assert_int_equal(d.n_findings, 2);
    assert_int_equal(d.regressions, 0);
    assert_int_equal(d.exit_status, 0);
    xp_diff_free(&d);
    xt_free(&b);
    xt_free(&n);
}

/* Rank 0 moves 1 MiB, rank 1 moves 3 MiB, in both runs; the new run's
 * databases come in the other order. */
static void xt_ranked(struct xp_report *r, const int64_t *ranks)
{
    for (int i = 0; i < 2; i++) {
        struct xp_process *p = xt_proc(r, ranks[i]);
        xt_site(p, 1, "load_batch", 20, 0x1100);
        xt_copy(p, 1, XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, ranks[i] == 0 ? MiB : 3 * MiB,
                1000, XP_NONE_ID);
    }
}

static void test_pairs_by_rank(void **state)
{
    (void)state;
    struct xp_report b = {0}, n = {0};
    const int64_t rb[2] = {0, 1}, rn[2] = {1, 0};
    xt_ranked(&b, rb);
    xt_ranked(&n, rn);
    struct xp_diff d;
    struct xp_diff_options o = xt_opt(10, XP_DIFF_FAIL_ANY);
    assert_int_equal(xp_diff_compute(&b, &n, &o, &d), 0);
    assert_int_equal(d.n_pairs, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(d.pairs[i].base->rank, d.pairs[i].new_->rank);
        assert_int_equal(xt_metric(&d.pairs[i].totals, "bytes")->cls, XP_DC_UNCHANGED);
    }
    assert_false(d.any_change);
    assert_int_equal(d.exit_status, 0);
    xp_diff_free(&d);

    /* Without ranks the same files pair by order: rank 0's 1 MiB against
     * rank 1's 3 MiB shows as a change in each pair. */
    for (size_t i = 0; i < 2; i++)
        n.procs[i].rank = -1;
    assert_int_equal(xp_diff_compute(&b, &n, &o, &d), 0);
    assert_ptr_equal(d.pairs[0].new_, &n.procs[0]);
    assert_int_equal(xt_metric(&d.pairs[0].totals, "bytes")->cls, XP_DC_REGRESSED);
    assert_int_equal(xt_metric(&d.pairs[1].totals, "bytes")->cls, XP_DC_IMPROVED);
    assert_int_equal(xt_metric(&d.totals, "bytes")->cls, XP_DC_UNCHANGED);
    assert_int_equal(d.exit_status, 1);
    xp_diff_free(&d);
    xt_free(&b);
    xt_free(&n);
}

/* steps steps named "step", each uploading 2 MiB from one site, plus a
 * "setup" range once. */
static void xt_nvtx_run(struct xp_report *r, int steps)
{
    struct xp_process *p = xt_proc(r, -1);
    xt_site(p, 1, "load_batch", 20, 0x1100);
    xt_range(p, 1, "setup");
    xt_copy(p, 1, XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, MiB, 1000, 1);
    for (int s = 0; s < steps; s++) {
        xt_range(p, 2 + s, "step");
        xt_copy(p, 1, XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, MiB, 1000, 2 + s);
        xt_copy(p, 1, XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, MiB, 1000, 2 + s);
    }
    xt_copy(p, 1, XP_DIR_D2H, XP_HM_PINNED, XP_BL_ASYNC, 4, 1000, XP_NONE_ID);
}

static void test_by_nvtx_normalizes_per_instance(void **state)
{
    (void)state;
    struct xp_report b = {0}, n = {0};
    xt_nvtx_run(&b, 4);
    xt_nvtx_run(&n, 8);
    struct xp_diff d;
    struct xp_diff_options o = xt_opt(10, XP_DIFF_FAIL_REGRESSION);
    o.by = XP_DIFF_BY_NVTX;
    assert_int_equal(xp_diff_compute(&b, &n, &o, &d), 0);
    assert_int_equal(d.n_sites, 3); /* step, setup, (no range) */
    assert_int_equal(d.n_exact, 3);
    bool seen_step = false;
    for (size_t i = 0; i < d.n_sites; i++) {
        const struct xp_diff_site *s = &d.sites[i];
        assert_non_null(s->range);
        assert_int_equal(s->n_frames, 0);
        assert_int_equal(s->cls, XP_DC_UNCHANGED);
        if (strcmp(s->range, "step") == 0) {
            seen_step = true;
            assert_true(s->base->bytes == 2.0 * MiB && s->new_->bytes == 2.0 * MiB);
            assert_int_equal(s->base->instances, 4);
            assert_int_equal(s->new_->instances, 8);
        }
    }
    assert_true(seen_step);
    /* Per site the longer run moves twice the bytes. */
    xp_diff_free(&d);
    o.by = XP_DIFF_BY_SITE;
    assert_int_equal(xp_diff_compute(&b, &n, &o, &d), 0);
    assert_int_equal(xt_find_site(&d, "load_batch")->cls, XP_DC_REGRESSED);
    xp_diff_free(&d);
    xt_free(&b);
    xt_free(&n);
}

static void test_by_function_merges_callers(void **state)
{
    (void)state;
    struct xp_report b = {0}, n = {0};
    struct xp_process *pb = xt_proc(&b, -1), *pn = xt_proc(&n, -1);
    /* The base calls load_batch from one caller, the new one from two. */
    xt_site(pb, 1, "load_batch", 20, 0x1100);
    struct xp_frame two[2] = {xt_fn("load_batch", 20, 0x1100), xt_fn("warmup", 70, 0x990)};
    xt_site(pn, 1, "load_batch", 20, 0x1100);
    xt_stack(pn, 2, 2, two);
    xt_copy(pb, 1, XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, 2 * MiB, 1000, XP_NONE_ID);
    xt_copy(pn, 1, XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, MiB, 1000, XP_NONE_ID);
    xt_copy(pn, 2, XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, MiB, 1000, XP_NONE_ID);
    struct xp_diff d;
    struct xp_diff_options o = xt_opt(10, XP_DIFF_FAIL_ANY);
    o.by = XP_DIFF_BY_FUNCTION;
    assert_int_equal(xp_diff_compute(&b, &n, &o, &d), 0);
    assert_int_equal(d.n_sites, 1);
    assert_int_equal(d.sites[0].n_frames, 1);
    assert_int_equal(d.sites[0].cls, XP_DC_UNCHANGED);
    assert_true(d.sites[0].new_->copies == 2);
    xp_diff_free(&d);
    o.by = XP_DIFF_BY_SITE;
    assert_int_equal(xp_diff_compute(&b, &n, &o, &d), 0);
    assert_int_equal(d.n_new, 1);
    xp_diff_free(&d);
    xt_free(&b);
    xt_free(&n);
}

static void test_empty_and_renderers(void **state)
{
    (void)state;
    struct xp_report e = {0}, n = {0};
    xt_training(&n, 2, 1, XP_HM_PINNED);
    struct xp_diff d;
    struct xp_diff_options o = xt_opt(10, XP_DIFF_FAIL_ANY);
    assert_int_equal(xp_diff_compute(&e, &n, &o, &d), 0);
    assert_int_equal(d.n_new, 2);
    assert_int_equal(d.n_pairs, 1);
    assert_null(d.pairs[0].base);
    assert_int_equal(d.exit_status, 1);
    char *db = "new.db";
    struct xp_diff_inputs in = {NULL, 0, &db, 1};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(xp_render_diff_json(f, &d, &in), 0);
    fclose(f);
    /* The writer pretty-prints; the checks below read the JSON without its layout. */
    size_t w = 0;
    for (size_t r = 0; buf[r]; r++)
        if (buf[r] != ' ' && buf[r] != '\n')
            buf[w++] = buf[r];
    buf[w] = '\0';
    assert_non_null(strstr(buf, "\"format\":\"xferprof-diff\""));
    assert_non_null(strstr(buf, "\"base_process\":null"));
    assert_non_null(strstr(buf, "\"class\":\"new\",\"match\":\"none\""));
    assert_non_null(strstr(buf, "\"blocking_share\":{\"base\":null,\"new\":0.5,\"change\":null,\"change_pct\":null}"));
    free(buf);
    f = open_memstream(&buf, &len);
    assert_int_equal(xp_render_diff_text(f, &d, &in, false), 0);
    fclose(f);
    assert_non_null(strstr(buf, "new        load_batch (train.c:20) [train]"));
    assert_null(strchr(buf, '\033'));
    free(buf);
    f = open_memstream(&buf, &len);
    assert_int_equal(xp_render_diff_md(f, &d, &in), 0);
    fclose(f);
    assert_non_null(strstr(buf, "| new | `load_batch (train.c:20) [train]` |"));
    free(buf);
    xp_diff_free(&d);
    assert_int_equal(xp_diff_compute(&e, &e, &o, &d), 0);
    assert_int_equal(d.n_sites, 0);
    assert_int_equal(d.exit_status, 0);
    xp_diff_free(&d);
    xt_free(&n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_self_is_unchanged),
        cmocka_unit_test(test_pinned_to_pageable_regresses_whatever_threshold),
        cmocka_unit_test(test_extra_upload_per_step),
        cmocka_unit_test(test_moved_to_other_function),
        cmocka_unit_test(test_rebuilt_elsewhere_matches_exactly),
        cmocka_unit_test(test_moved_line_is_approximate),
        cmocka_unit_test(test_frames_without_function_match_by_offset_only),
        cmocka_unit_test(test_leak_added),
        cmocka_unit_test(test_finding_on_site_regresses_it),
        cmocka_unit_test(test_blocked_time_within_noise_band),
        cmocka_unit_test(test_loaded_machine_is_not_a_regression),
        cmocka_unit_test(test_rank_slowed_as_a_whole_is_noise),
        cmocka_unit_test(test_job_peak_is_not_interleaving),
        cmocka_unit_test(test_new_blocking_site_regresses),
        cmocka_unit_test(test_timed_finding_is_not_a_regression),
        cmocka_unit_test(test_pairs_by_rank),
        cmocka_unit_test(test_by_nvtx_normalizes_per_instance),
        cmocka_unit_test(test_by_function_merges_callers),
        cmocka_unit_test(test_empty_and_renderers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
