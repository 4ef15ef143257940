/* rule_invalid_free.c: frees that named no live allocation: successful frees
 * of pointers the profiler never saw allocated (unknown_frees) and frees that
 * failed (a double free, a pointer into the middle of an allocation, the
 * wrong API for the memory), per call site. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xp_group.h"
#include "xp_rules.h"

static const char xp_fix[] =
    "free each pointer exactly once, with the API that matches its allocation (cudaFree for "
    "cudaMalloc, cudaFreeHost for cudaMallocHost/cudaHostAlloc, cudaHostUnregister for "
    "cudaHostRegister), and only the pointer the allocation returned; set it to NULL after freeing. "
    "A pointer allocated before profiling started or by an API xferprof does not hook also shows here";

/* What a site's first bad free was, for its details. */
struct xp_bad_free {
    char first[64];
    uint32_t api;
    uint32_t status_api;    /* the first failed free's api (api may be an unknown free's) */
    int32_t status;
};

static struct xp_bad_free *xp_first_of(struct xp_bad_free **firsts, size_t *cap, size_t k)
{
    void *v = *firsts;
    if (xp_grow(&v, cap, k + 1, sizeof **firsts) != 0)
        return NULL;
    *firsts = v;
    return &(*firsts)[k];
}

static void xp_invalid_free_process(struct xp_report *r, const struct xp_process *p)
{
    struct xp_sites sites;
    xp_sites_init(&sites);
    struct xp_bad_free *firsts = NULL;
    size_t cap = 0;
    /* count: all bad frees; aux: the failed ones among them. */
    for (size_t i = 0; i < p->n_unknown_frees; i++) {
        const struct xp_unknown_free *u = &p->unknown_frees[i];
        struct xp_site_sum *s = xp_sites_add(&sites, u->stack_id, 0, 0);
        struct xp_bad_free *b = s ? xp_first_of(&firsts, &cap, (size_t)(s - sites.v)) : NULL;
        if (b && s->count == 1) {
            snprintf(b->first, sizeof b->first, "ptr 0x%llx", (unsigned long long)u->ptr);
            b->api = u->api;
        }
    }
    for (size_t i = 0; i < p->n_errors; i++) {
        const struct xp_error *e = &p->errors[i];
        if (strcmp(e->record, "free") != 0)
            continue;
        struct xp_site_sum *s = xp_sites_add(&sites, e->stack_id, 0, 0);
        struct xp_bad_free *b = s ? xp_first_of(&firsts, &cap, (size_t)(s - sites.v)) : NULL;
        if (!b)
            continue;
        if (s->aux++ == 0)
            b->status = e->status, b->status_api = e->api;
        if (s->count == 1) {
            snprintf(b->first, sizeof b->first, "%s", e->detail ? e->detail : "?");
            b->api = e->api;
        }
    }
    for (size_t k = 0; k < sites.n && k < cap; k++) {
        const struct xp_site_sum *s = &sites.v[k];
        uint64_t failed = s->aux, unknown = s->count - failed;
        /* The first failure's status, named by its own API's layer. */
        struct xp_status_str status = xp_process_status(p, firsts[k].status_api, firsts[k].status);
        struct xp_finding *f = xp_report_add(
            r, "invalid-free", XP_SEV_ERROR, p, s->stack_id, s->count, 0, 0, xp_fix, NULL,
            "%llu free%s named no live allocation (%llu of pointers never seen allocated, %llu failed%s%s; "
            "first: %s %s)",
            (unsigned long long)s->count, s->count == 1 ? "" : "s", (unsigned long long)unknown,
            (unsigned long long)failed, failed ? " with " : "", failed ? status.s : "",
            xp_process_api(p, firsts[k].api), firsts[k].first);
        xp_finding_num(f, "unknown_count", (int64_t)unknown);
        xp_finding_num(f, "failed_count", (int64_t)failed);
        if (failed) {
            xp_finding_num(f, "failed_status", firsts[k].status);
            const char *name = xp_process_status_name(p, firsts[k].status_api, firsts[k].status);
            if (name)
                xp_finding_text(f, "failed_status_name", "%s", name);
        }
        xp_finding_text(f, "first", "%s", firsts[k].first);
        xp_finding_text(f, "api", "%s", xp_process_api(p, firsts[k].api));
    }
    free(firsts);
    xp_sites_free(&sites);
}

void xp_rule_invalid_free(struct xp_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++)
        xp_invalid_free_process(r, &r->procs[i]);
}
