/* test_placement.c: the device-placement rule over hand-built ranks: which
 * share a GPU, which use another than their LOCAL_RANK says, and when it
 * must stay quiet. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "xp_rules.h"

#define MAX_RANKS 4

/* A rank that allocated once on `ordinal`: rank and LOCAL_RANK k, host, its
 * CUDA_VISIBLE_DEVICES (NULL: unset), the ordinal's UUID (NULL: unknown). */
struct rank {
    struct xp_process p;
    struct xp_alloc alloc;
    char *uuids[1];
};

static void rank_init(struct rank *r, int64_t k, char *host, char *visible, int ordinal,
                      char *uuid)
{
    memset(r, 0, sizeof *r);
    r->alloc = (struct xp_alloc){.alloc_ns = 10 + k, .free_ns = -1, .bytes = 1 << 20,
                                 .alloc_stack = 7, .device = ordinal, .kind = XP_AK_DEVICE};
    r->uuids[0] = uuid;
    r->p = (struct xp_process){.label = "rank", .pid = 100 + k, .rank = k, .local_rank = k,
                               .hostname = host, .cuda_visible_devices = visible,
                               .allocs = &r->alloc, .n_allocs = 1,
                               .device_uuids = ordinal == 0 && uuid ? r->uuids : NULL,
                               .n_device_uuids = ordinal == 0 && uuid ? 1 : 0};
}

/* Runs the rule over ranks[0..n); returns the findings (caller frees r). */
static size_t placement(struct xp_report *r, struct rank *ranks, size_t n,
                        struct xp_process *procs)
{
    for (size_t i = 0; i < n; i++)
        procs[i] = ranks[i].p;
    *r = (struct xp_report){.procs = procs, .n_procs = n};
    xp_thresholds_default(&r->th);
    xp_rule_device_placement(r);
    return r->n_findings;
}

static const char *text_fact(const struct xp_finding *f, const char *key)
{
    for (size_t i = 0; i < f->n_facts; i++)
        if (strcmp(f->facts[i].key, key) == 0 && f->facts[i].is_text)
            return f->facts[i].text;
    return NULL;
}

static void report_free(struct xp_report *r)
{
    for (size_t i = 0; i < r->n_findings; i++) {
        for (size_t k = 0; k < r->findings[i].n_facts; k++)
            if (r->findings[i].facts[k].is_text)
                free(r->findings[i].facts[k].text);
        free(r->findings[i].facts);
        free(r->findings[i].message);
    }
    free(r->findings);
}

static void test_shared_by_uuid(void **state)
{
    struct rank ranks[2];
    struct xp_process procs[2];
    struct xp_report r;
    rank_init(&ranks[0], 0, "h", NULL, 0, "GPU-aaaa");
    rank_init(&ranks[1], 1, "h", NULL, 0, "GPU-aaaa");
    assert_int_equal(placement(&r, ranks, 2, procs), 1);
    assert_string_equal(r.findings[0].rule, "device-placement");
    assert_string_equal(text_fact(&r.findings[0], "ranks"), "0,1");
    assert_string_equal(text_fact(&r.findings[0], "uuid"), "GPU-aaaa");
    /* The site shown is the rank on a GPU that is not its own. */
    assert_ptr_equal(r.findings[0].proc, &procs[1]);
    report_free(&r);
    (void)state;
}

/* Without UUIDs: ordinal 0 under CUDA_VISIBLE_DEVICES=2,3 and under =2 is device 2. */
static void test_shared_without_uuid(void **state)
{
    struct rank ranks[2];
    struct xp_process procs[2];
    struct xp_report r;
    rank_init(&ranks[0], 0, "h", "2,3", 0, NULL);
    rank_init(&ranks[1], 1, "h", "2", 0, NULL);
    assert_int_equal(placement(&r, ranks, 2, procs), 1);
    assert_string_equal(text_fact(&r.findings[0], "uuid"), "device 2");
    report_free(&r);
    rank_init(&ranks[1], 1, "h", "3", 0, NULL);
    assert_int_equal(placement(&r, ranks, 2, procs), 0);
    report_free(&r);
    (void)state;
}

/* One rank alone on a GPU that is not its LOCAL_RANK's. */
static void test_elsewhere(void **state)
{
    struct rank ranks[2];
    struct xp_process procs[2];
    struct xp_report r;
    rank_init(&ranks[0], 0, "h", NULL, 1, NULL);
    rank_init(&ranks[1], 1, "h", NULL, 0, NULL);   /* swapped: each alone, both wrong */
    assert_int_equal(placement(&r, ranks, 2, procs), 2);
    report_free(&r);
    /* Several devices visible: LOCAL_RANK still says which. */
    rank_init(&ranks[0], 2, "h", "0,1,2,3", 0, NULL);
    assert_int_equal(placement(&r, ranks, 1, procs), 1);
    report_free(&r);
    (void)state;
}

static void test_quiet(void **state)
{
    struct rank ranks[MAX_RANKS];
    struct xp_process procs[MAX_RANKS];
    struct xp_report r;
    /* Distinct GPUs, each rank on its LOCAL_RANK's. */
    for (int k = 0; k < MAX_RANKS; k++)
        rank_init(&ranks[k], k, "h", NULL, k, NULL);
    assert_int_equal(placement(&r, ranks, MAX_RANKS, procs), 0);
    report_free(&r);
    /* One visible GPU per rank, ordinal 0 in each. */
    char *visible[MAX_RANKS] = {"0", "1", "2", "3"};
    for (int k = 0; k < MAX_RANKS; k++)
        rank_init(&ranks[k], k, "h", visible[k], 0, NULL);
    assert_int_equal(placement(&r, ranks, MAX_RANKS, procs), 0);
    report_free(&r);
    /* Two hosts, one rank each on its device 0. */
    rank_init(&ranks[0], 0, "h1", NULL, 0, NULL);
    rank_init(&ranks[1], 0, "h2", NULL, 0, NULL);
    assert_int_equal(placement(&r, ranks, 2, procs), 0);
    report_free(&r);
    /* A single process, no rank; and two processes of one rank (a parent and its child). */
    rank_init(&ranks[0], 0, "h", NULL, 0, NULL);
    ranks[0].p.rank = ranks[0].p.local_rank = -1;
    assert_int_equal(placement(&r, ranks, 1, procs), 0);
    report_free(&r);
    rank_init(&ranks[0], 0, "h", NULL, 0, NULL);
    rank_init(&ranks[1], 0, "h", NULL, 0, NULL);
    assert_int_equal(placement(&r, ranks, 2, procs), 0);
    report_free(&r);
    (void)state;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared_by_uuid),
        cmocka_unit_test(test_shared_without_uuid),
        cmocka_unit_test(test_elsewhere),
        cmocka_unit_test(test_quiet),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
