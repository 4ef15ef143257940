/* rule_small_copies.c: a call site issuing many small copies, each paying the
 * fixed cost of a copy (a call, a DMA setup, a few microseconds) for few
 * bytes, and paying enough of them to be worth the user's time: their cost
 * is at least small-copies.min_share of the run.  Each copy of a site costs
 * the site's median call time, and at least small-copies.fixed_ns: an async
 * call returns before the copy engine has paid its own setup for the
 * transfer, which the call's time does not show; and the median, not each
 * call's own time, since a 1 us call preempted for 50 us on a loaded
 * machine cost the program nothing it could save by packing. */
#include <stdlib.h>

#include "xp_group.h"
#include "xp_rules.h"

static const char xp_fix[] =
    "pack the small pieces into one buffer and copy it with a single cudaMemcpy(Async), use "
    "cudaMemcpy2D(Async) for strided pieces, or keep the data on the device and let a kernel read it";
static const char xp_fix_pytorch[] =
    "combine small tensors (torch.cat/torch.stack, or one preallocated pinned buffer) and transfer "
    "them in one .to(device) instead of many small transfers; avoid per-element .item() calls";

/* The severity climbs to warning at this many times the minimum count. */
#define XP_SMALL_WARNING_FACTOR 10

static bool xp_small_copy(const struct xp_copy *c, const struct xp_thresholds *th)
{
    return c->cs->status == 0 && c->bytes <= th->small_copy_max_bytes && !c->claimed;
}

static void xp_small_copies_process(struct xp_report *r, const struct xp_process *p)
{
    uint64_t min = r->th.small_copies_min_count ? r->th.small_copies_min_count : 1;
    int64_t run_ns = xp_process_run_ns(p);   /* the capture windows' time, if any */
    struct xp_sites sites;
    xp_sites_init(&sites);
    size_t *site_of = malloc((p->n_copies ? p->n_copies : 1) * sizeof *site_of);
    size_t *start = NULL, *order = NULL;
    bool *flagged = NULL;
    double *dur = NULL;
    if (!site_of || xp_sites_of_copies(&sites, p, false, xp_small_copy, &r->th, site_of) != 0 ||
        !(flagged = calloc(sites.n ? sites.n : 1, sizeof *flagged)) ||
        xp_sites_bucket(sites.n, site_of, p->n_copies, &start, &order) != 0 ||
        !(dur = malloc((start[sites.n] ? start[sites.n] : 1) * sizeof *dur)))
        goto out;
    /* Each site's cost, in place of the calls' time. */
    double fixed = (double)r->th.small_copy_fixed_ns;
    for (size_t k = 0; k < sites.n; k++) {
        size_t n = start[k + 1] - start[k];
        for (size_t j = 0; j < n; j++)
            dur[j] = (double)xp_nonneg(p->copies[order[start[k] + j]].dur_ns);
        xp_sort(dur, n, sizeof *dur, xp_cmp_double);
        double each = xp_percentile_sorted(dur, n, 0.5);
        double cost = (each > fixed ? each : fixed) * (double)n;
        sites.v[k].time_ns = cost < (double)INT64_MAX ? (int64_t)cost : INT64_MAX;
    }
    for (size_t k = 0; k < sites.n; k++) {
        const struct xp_site_sum *s = &sites.v[k];
        /* A run of unknown length (no start recorded) is not held against the site. */
        double share = run_ns > 0 ? (double)s->time_ns / (double)run_ns : 1;
        if (s->count < min || share < r->th.small_copies_min_share)
            continue;
        flagged[k] = true;
        enum xp_severity sev = s->count / XP_SMALL_WARNING_FACTOR >= min ? XP_SEV_WARNING : XP_SEV_INFO;
        struct xp_finding *f = xp_report_add(
            r, "small-copies", sev, p, s->stack_id, s->count, s->bytes, s->time_ns, xp_fix, xp_fix_pytorch,
            "%llu copies of at most %s from one call site cost %s, %.1f%% of the run (%s in all, %s on "
            "average)",
            (unsigned long long)s->count, xp_bytes_str(r->th.small_copy_max_bytes).s,
            xp_ns_str(s->time_ns).s, 100 * share, xp_bytes_str(s->bytes).s,
            xp_bytes_str(s->bytes / s->count).s);
        xp_finding_text(f, "direction", "%s", xp_dir_mask_name(s->aux));
        xp_finding_num(f, "mean_bytes", (int64_t)(s->bytes / s->count));
        xp_finding_num(f, "per_copy_ns", s->time_ns / (int64_t)s->count);
        xp_finding_text(f, "run_share", "%.3f", share);
    }
    xp_claim_sites(r, p, site_of, flagged);
out:
    free(dur);
    free(start);
    free(order);
    free(flagged);
    free(site_of);
    xp_sites_free(&sites);
}

void xp_rule_small_copies(struct xp_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++)
        xp_small_copies_process(r, &r->procs[i]);
}
