/* test_totals_model.c: totals and call sites on hand-built processes: every
 * sum, share and the memory replay are known from the rows put in. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "xp_totals.h"

static char *api_names[] = {"api#0", "cudaMemcpy", "cudaMemcpyAsync", "cudaMalloc"};

static struct xp_copy copies[] = {
    /* start, dur, bytes: H2D pageable sync x2 from stack 1 */
    {.start_ns = 0, .dur_ns = 100, .bytes = 1000,
     .cs = &(struct xp_call_site){.stack_id = 1, .api = 1,
         .direction = XP_DIR_H2D, .host_mem = XP_HM_PAGEABLE, .blocking = XP_BL_SYNC}},
    {.start_ns = 10, .dur_ns = 300, .bytes = 3000,
     .cs = &(struct xp_call_site){.stack_id = 1, .api = 1,
         .direction = XP_DIR_H2D, .host_mem = XP_HM_PAGEABLE, .blocking = XP_BL_SYNC}},
    /* D2H pinned async from stack 2: not blocking, not in bandwidth */
    {.start_ns = 20, .dur_ns = 5, .bytes = 4000,
     .cs = &(struct xp_call_site){.stack_id = 2, .api = 2,
         .direction = XP_DIR_D2H, .host_mem = XP_HM_PINNED, .blocking = XP_BL_ASYNC}},
    /* H2D async_pageable from stack 2 */
    {.start_ns = 30, .dur_ns = 50, .bytes = 2000,
     .cs = &(struct xp_call_site){.stack_id = 2, .api = 2,
         .direction = XP_DIR_H2D, .host_mem = XP_HM_PAGEABLE, .blocking = XP_BL_ASYNC_PAGEABLE}},
    /* D2D, no host side, no stack */
    {.start_ns = 40, .dur_ns = 0, .bytes = 500,
     .cs = &(struct xp_call_site){.stack_id = 0, .api = 1,
         .direction = XP_DIR_D2D, .host_mem = XP_HM_NONE, .blocking = XP_BL_SYNC}},
    /* failed: left out of every sum */
    {.start_ns = 50, .dur_ns = 7, .bytes = 99999,
     .cs = &(struct xp_call_site){.stack_id = 1, .api = 1, .status = 1,
         .direction = XP_DIR_H2D, .host_mem = XP_HM_PAGEABLE, .blocking = XP_BL_SYNC}},
};

static struct xp_alloc allocs[] = {
    {.alloc_ns = 0, .free_ns = 100, .bytes = 1000, .kind = XP_AK_DEVICE, .api = 3},
    {.alloc_ns = 50, .free_ns = -1, .bytes = 500, .kind = XP_AK_DEVICE, .api = 3},
    {.alloc_ns = 60, .free_ns = 70, .bytes = 1 << 20, .kind = XP_AK_PINNED, .api = 3},
    {.alloc_ns = 80, .free_ns = 90, .bytes = 2000, .kind = XP_AK_PHYSICAL, .api = 3},
    {.alloc_ns = 81, .free_ns = -1, .bytes = 7777, .kind = XP_AK_RESERVED, .api = 3},
};

static struct xp_error errors[] = {
    {.api = 1, .status = 1}, {.api = 3, .status = 2}, {.api = 3, .status = 2},
};

static struct xp_sync syncs[] = {{.dur_ns = 11}, {.dur_ns = 22}};

static struct xp_process proc(void)
{
    return (struct xp_process){
        .api_names = api_names, .n_api = 4,
        .copies = copies, .n_copies = sizeof copies / sizeof copies[0],
        .allocs = allocs, .n_allocs = sizeof allocs / sizeof allocs[0],
        .errors = errors, .n_errors = 3, .syncs = syncs, .n_syncs = 2, .memsets = 4,
    };
}

static void test_totals(void **state)
{
    (void)state;
    struct xp_process p = proc();
    struct xp_totals t;
    assert_int_equal(xp_totals_compute(&p, 1, &t), 0);
    assert_int_equal(t.copies, 5);
    assert_int_equal(t.bytes, 1000 + 3000 + 4000 + 2000 + 500);
    assert_int_equal(t.time_ns, 100 + 300 + 5 + 50 + 0);
    assert_int_equal(t.blocked_ns, 100 + 300 + 50 + 0);
    assert_int_equal(t.dir[XP_DIR_H2D].count, 3);
    assert_int_equal(t.dir[XP_DIR_H2D].bytes, 6000);
    assert_int_equal(t.dir[XP_DIR_H2D].sync, 2);
    assert_int_equal(t.dir[XP_DIR_H2D].async_pageable, 1);
    assert_int_equal(t.dir[XP_DIR_D2H].pinned_bytes, 4000);
    assert_int_equal(t.dir[XP_DIR_D2H].async, 1);
    assert_int_equal(t.dir[XP_DIR_D2D].count, 1);
    /* pinned share: 4000 of the 10000 bytes with a host side */
    assert_true(fabs(xp_share(t.pinned_bytes, t.host_bytes) - 0.4) < 1e-12);
    /* blocking: 2 sync + 1 async_pageable + 1 D2D sync of 5 */
    assert_true(fabs(xp_share(t.blocking_copies, t.copies) - 0.8) < 1e-12);
    /* bandwidth: blocking, dur > 0: the three H2D pageable copies (6000 B in 450 ns) */
    assert_int_equal(t.bw[XP_DIR_H2D][XP_HM_PAGEABLE].copies, 3);
    assert_true(fabs(xp_gbps(t.bw[XP_DIR_H2D][XP_HM_PAGEABLE].bytes,
                             t.bw[XP_DIR_H2D][XP_HM_PAGEABLE].time_ns) - 6000.0 / 450) < 1e-9);
    assert_int_equal(t.bw[XP_DIR_D2D][XP_HM_NONE].copies, 0);
    assert_int_equal(t.bw[XP_DIR_D2H][XP_HM_PINNED].copies, 0);
    /* memory: device + physical only: 1000 @0, +500 @50 -> 1500 peak, -1000 @100,
     * physical +2000 @80 -> 3500 peak @80, -2000 @90 */
    assert_int_equal(t.peak_bytes, 3500);
    assert_int_equal(t.peak_ns, 80);
    assert_int_equal(t.allocations, 3);
    assert_int_equal(t.frees, 2);
    assert_int_equal(t.live_at_exit_count, 1);
    assert_int_equal(t.live_at_exit_bytes, 500);
    assert_int_equal(t.n_timeline, 5);
    assert_int_equal(t.timeline[t.n_timeline - 1].live_bytes, 500);
    assert_int_equal(t.failed_calls, 3);
    assert_int_equal(t.n_failed_by_api, 2);
    assert_string_equal(t.failed_by_api[0].api, "cudaMalloc");
    assert_int_equal(t.failed_by_api[0].n, 2);
    assert_int_equal(t.syncs, 2);
    assert_int_equal(t.sync_time_ns, 33);
    assert_int_equal(t.memsets, 4);
    xp_totals_free(&t);

    /* Two processes: sums; memory replayed together. */
    struct xp_process two[2] = {proc(), proc()};
    assert_int_equal(xp_totals_compute(two, 2, &t), 0);
    assert_int_equal(t.copies, 10);
    assert_int_equal(t.dir[XP_DIR_H2D].bytes, 12000);
    assert_int_equal(t.peak_bytes, 7000);
    assert_int_equal(t.live_at_exit_bytes, 1000);
    assert_int_equal(t.failed_by_api[0].n, 4);
    xp_totals_free(&t);
}

static void test_timeline_downsampled(void **state)
{
    (void)state;
    enum { N = 5000 };
    struct xp_alloc *a = calloc(N, sizeof *a);
    assert_non_null(a);
    for (int i = 0; i < N; i++)
        a[i] = (struct xp_alloc){.alloc_ns = 2 * i, .free_ns = 2 * i + 1,
                                 .bytes = i == 3333 ? 1 << 30 : 100, .kind = XP_AK_DEVICE};
    struct xp_process p = {.allocs = a, .n_allocs = N};
    struct xp_totals t;
    assert_int_equal(xp_totals_compute(&p, 1, &t), 0);
    assert_true(t.n_timeline <= XP_TIMELINE_MAX);
    assert_int_equal(t.peak_bytes, 1 << 30);
    int64_t best = 0;
    for (size_t i = 0; i < t.n_timeline; i++)
        if (t.timeline[i].live_bytes > best)
            best = t.timeline[i].live_bytes;
    assert_int_equal(best, 1 << 30);
    assert_int_equal(t.timeline[t.n_timeline - 1].live_bytes, 0);
    xp_totals_free(&t);
    free(a);
}

static void test_sites(void **state)
{
    (void)state;
    struct xp_process p = proc();
    struct xp_site *sites = NULL;
    size_t n = 0;
    /* top 1 by bytes is stack 2 (6000 B); top 1 by blocked is stack 1 (400 ns) */
    assert_int_equal(xp_sites_top(&p, 7, 1, &sites, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(sites[0].stack_id, 2);
    assert_int_equal(sites[0].bytes, 6000);
    assert_int_equal(sites[0].copies, 2);
    assert_int_equal(sites[0].blocked_ns, 50);
    assert_int_equal(sites[0].n_apis, 1);
    assert_int_equal(sites[0].directions, (1 << XP_DIR_H2D) | (1 << XP_DIR_D2H));
    assert_int_equal(sites[1].stack_id, 1);
    assert_int_equal(sites[1].copies, 2); /* the failed copy is not counted */
    assert_int_equal(sites[1].blocked_ns, 400);
    assert_int_equal(sites[1].proc_index, 7);
    free(sites);
    sites = NULL, n = 0;
    assert_int_equal(xp_sites_top(&p, 0, 10, &sites, &n), 0);
    assert_int_equal(n, 3); /* stacks 2, 1 and the stackless D2D */
    assert_int_equal(sites[2].stack_id, XP_NONE_ID);
    free(sites);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_totals),
        cmocka_unit_test(test_timeline_downsampled),
        cmocka_unit_test(test_sites),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
