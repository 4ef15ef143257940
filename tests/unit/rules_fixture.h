/* rules_fixture.h: hand-built models for the rules' unit tests
 * (test_rules*.c): a process, a report, copies and allocations, and running
 * one rule or all of them the way the report does. */
#ifndef RULES_FIXTURE_H
#define RULES_FIXTURE_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "xp_report.h"
#include "xt_sites.h"

#define MiB (UINT64_C(1) << 20)
#define MS INT64_C(1000000)

static char *api_names[] = {"cudaMemcpy", "cudaMemcpyAsync", "cudaMalloc", "cudaFree"};

static inline void proc_init(struct xp_process *p)
{
    *p = (struct xp_process){.label = "pid 1", .pid = 1, .rank = -1, .start_mono_ns = 0,
                             .end_mono_ns = 1000 * MS, .api_names = api_names, .n_api = 4};
}

static inline void report_init(struct xp_report *r, struct xp_process *procs, size_t n)
{
    *r = (struct xp_report){.procs = procs, .n_procs = n};
    xp_thresholds_default(&r->th);
}

static inline void report_free(struct xp_report *r)
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

static inline const struct xp_rule *rule(const char *id)
{
    for (size_t i = 0; i < xp_nrules; i++)
        if (strcmp(xp_rules[i].id, id) == 0)
            return &xp_rules[i];
    fail_msg("no rule %s", id);
    abort(); /* not reached: fail_msg jumps out of the test */
    return NULL;
}

/* Runs one rule on a fresh list of findings (no copy claimed by another
 * rule); returns how many it made. */
static inline size_t run(struct xp_report *r, const char *id)
{
    report_free(r);
    xp_report_forget_claims(r);
    rule(id)->run(r);
    for (size_t i = 0; i < r->n_findings; i++) {
        assert_string_equal(r->findings[i].rule, id);
        assert_non_null(r->findings[i].message);
        assert_non_null(r->findings[i].fix);
    }
    return r->n_findings;
}

/* Runs every rule in the report's order, claims and all. */
static inline size_t run_all(struct xp_report *r)
{
    report_free(r);
    xp_report_forget_claims(r);
    for (size_t i = 0; i < xp_nrules; i++)
        xp_rules[i].run(r);
    return r->n_findings;
}

static inline const struct xp_finding *at_site(const struct xp_report *r, uint32_t stack)
{
    for (size_t i = 0; i < r->n_findings; i++)
        if (r->findings[i].stack_id == stack)
            return &r->findings[i];
    fail_msg("no finding at stack %u", stack);
    abort(); /* not reached: fail_msg jumps out of the test */
    return NULL;
}

static inline const struct xp_fact *fact(const struct xp_finding *f, const char *key)
{
    for (size_t i = 0; i < f->n_facts; i++)
        if (strcmp(f->facts[i].key, key) == 0)
            return &f->facts[i];
    return NULL;
}

static inline int64_t num(const struct xp_finding *f, const char *key)
{
    const struct xp_fact *x = fact(f, key);
    if (!x || x->is_text) {
        fail_msg("no number %s", key);
        abort(); /* not reached: fail_msg jumps out of the test */
    }
    return x->num;
}

static inline const char *text(const struct xp_finding *f, const char *key)
{
    const struct xp_fact *x = fact(f, key);
    if (!x || !x->is_text) {
        fail_msg("no text %s", key);
        abort(); /* not reached: fail_msg jumps out of the test */
    }
    return x->text;
}

static inline struct xp_copy copy(uint8_t dir, uint8_t hm, uint8_t bl, uint64_t bytes, int64_t start, int64_t dur,
                           uint32_t stack)
{
    return (struct xp_copy){.start_ns = start, .dur_ns = dur, .bytes = bytes, .src = 0x1000, .dst = 0x2000,
                            .cs = xt_new_site((struct xp_call_site){
                                .stack_id = stack, .direction = dir, .host_mem = hm,
                                .blocking = bl, .device = 0, .tid = 1})};
}

static inline struct xp_copy upload(uint64_t fp, uint8_t kind, uint64_t bytes, uint64_t dst, uint64_t kseq,
                             int64_t start, uint32_t stack)
{
    struct xp_copy c = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_SYNC, bytes, start, 10, stack);
    c.fingerprint = fp;
    c.fp_kind = kind;
    c.dst = dst;
    c.kernel_seq = kseq;
    return c;
}

static inline struct xp_alloc alloc(uint64_t ptr, uint64_t bytes, int64_t at, int64_t freed, uint32_t stack)
{
    /* The call took 1 ns, ending no later than the last representable time
     * (test_odd_input allocates at INT64_MAX). */
    int64_t end = at < INT64_MAX ? at + 1 : at;
    return (struct xp_alloc){.alloc_ns = at, .alloc_end_ns = end, .free_ns = freed, .ptr = ptr,
                             .bytes = bytes, .alloc_stack = stack, .api = 2, .device = 0,
                             .kind = XP_AK_DEVICE};
}

#endif
