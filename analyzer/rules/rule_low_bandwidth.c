/* rule_low_bandwidth.c: call sites whose blocking copies typically ran far
 * below the bandwidth the same kind of copy reached elsewhere in the run.
 *
 * Only evidence that measures the transfer counts (docs/findings.md argues
 * for each test):
 *  - blocking copies (class sync): their call covers the transfer.  The call
 *    time of an async copy says nothing about the link, and a pageable async
 *    copy's is the staging memcpy (async-pageable's finding);
 *  - not the first copy into a destination: a fresh buffer pays page faults
 *    and lazy mapping once;
 *  - per site, its median bandwidth against what the other sites of its
 *    class reach (never its own copies), so a few outliers (a preempted
 *    thread) do not make a finding, from at least low-bandwidth.min_count copies
 *    that held the caller for at least low-bandwidth.min_share of the run;
 *  - one finding per copy problem: a site whose copies a rule before it
 *    reported (sync-in-loop, async-pageable, redundant-upload...: their
 *    fix covers the slowness) gets no second one. */
#include <stdlib.h>
#include <sys/types.h>

#include "xp_group.h"
#include "xp_rules.h"

static const char xp_fix[] =
    "a large copy that is slow compared with the others of its kind is usually waiting: a synchronous "
    "cudaMemcpy first waits for the kernels and copies queued before it, a pageable buffer is staged "
    "through a bounce buffer, or the link is shared; use pinned memory and cudaMemcpyAsync on its own "
    "stream, and check the link (nvidia-smi -q: PCIe generation and width)";
static const char xp_fix_pytorch[] =
    "pin the host tensor (.pin_memory()) and use .to(device, non_blocking=True); a slow .cpu() often "
    "includes the kernels still queued before it, so call torch.cuda.synchronize() before timing it";

/* The reference is the 90th percentile of the class's per-copy bandwidth. */
#define XP_REFERENCE_QUANTILE 0.9

static bool xp_measurable(const struct xp_copy *c, uint64_t min_bytes)
{
    return c->cs->status == 0 && c->dur_ns > 0 && c->bytes >= min_bytes && c->bytes > 0 &&
           c->cs->blocking == XP_BL_SYNC;
}

static size_t xp_class(const struct xp_copy *c)
{
    size_t d = c->cs->direction < XP_DIR_COUNT ? c->cs->direction : 0;
    size_t h = c->cs->host_mem < XP_HM_COUNT ? c->cs->host_mem : 0;
    return d * XP_HM_COUNT + h;
}

/* Bytes per nanosecond is GB/s. */
static double xp_gbps(uint64_t bytes, int64_t ns)
{
    return ns > 0 ? (double)bytes / (double)ns : 0;
}

/* Marks the copies that are evidence: measurable and not the first into
 * their destination.  Returns how many, or -1 out of memory. */
static ssize_t xp_evidence(const struct xp_process *p, uint64_t min_bytes, bool *keep)
{
    struct xp_map seen;
    xp_map_init(&seen);
    size_t n = 0, nt = 0;
    uint32_t *order = xp_copies_in_time(p, xp_copy_succeeded, &nt);
    if (!order && p->n_copies) {
        xp_map_free(&seen);
        return -1;
    }
    for (size_t k = 0; k < nt; k++) {
        const struct xp_copy *c = &p->copies[order[k]];
        bool added;
        if (!xp_map_get(&seen, c->dst, (uint64_t)(int64_t)c->cs->device, c->cs->direction, 0, &added)) {
            free(order);
            xp_map_free(&seen);
            return -1;
        }
        if (!added && xp_measurable(c, min_bytes)) {
            keep[order[k]] = true;
            n++;
        }
    }
    free(order);
    xp_map_free(&seen);
    return (ssize_t)n;
}

/* The reference for a site: the XP_REFERENCE_QUANTILE bandwidth of the
 * evidence of its class from the *other* sites (its own copies are what is
 * judged: a site alone in its class, preempted on a loaded machine more often
 * than not, would otherwise be measured against its own lucky copies).  0
 * when the other sites have fewer than min_count copies of the class: no
 * reference, no finding.  bw: room for every evidence copy. */
static double xp_reference(const struct xp_process *p, const bool *keep, size_t cls,
                           uint32_t stack_id, uint64_t min_count, double *bw)
{
    size_t m = 0;
    for (size_t i = 0; i < p->n_copies; i++)
        if (keep[i] && xp_class(&p->copies[i]) == cls && p->copies[i].cs->stack_id != stack_id)
            bw[m++] = xp_gbps(p->copies[i].bytes, p->copies[i].dur_ns);
    if (m == 0 || m < min_count)
        return 0;
    xp_sort(bw, m, sizeof *bw, xp_cmp_double);
    return xp_percentile_sorted(bw, m, XP_REFERENCE_QUANTILE);
}

/* One site's evidence (items, all of one class or the first copy's class
 * decides): a finding when its median copy is slow against the other sites
 * of its class and it cost enough. */
static void xp_low_bandwidth_site(struct xp_report *r, const struct xp_process *p, const struct xp_site_sum *s,
                                  const size_t *items, size_t n, const bool *keep, double *bw)
{
    size_t cls = xp_class(&p->copies[items[0]]);
    for (size_t j = 0; j < n; j++)
        bw[j] = xp_gbps(p->copies[items[j]].bytes, p->copies[items[j]].dur_ns);
    xp_sort(bw, n, sizeof *bw, xp_cmp_double);
    double median = xp_percentile_sorted(bw, n, 0.5);
    int64_t run_ns = xp_process_run_ns(p);   /* the capture windows' time, if any */
    double share = run_ns > 0 ? (double)s->time_ns / (double)run_ns : 1;
    /* A site whose copies a rule before reported (they block in a loop, they
     * need not be sent) has its finding: one per copy problem. */
    size_t claimed = 0;
    for (size_t j = 0; j < n; j++)
        claimed += p->copies[items[j]].claimed;
    if (s->count < r->th.low_bandwidth_min_count || share < r->th.low_bandwidth_min_share ||
        claimed * 2 > n)
        return;
    double ref = xp_reference(p, keep, cls, s->stack_id, r->th.low_bandwidth_min_count, bw);
    if (!(median < r->th.low_bandwidth_fraction * ref))
        return;
    const char *dir = xp_dir_name((xp_direction)(cls / XP_HM_COUNT));
    const char *hm = xp_hostmem_name((enum xp_hostmem)(cls % XP_HM_COUNT));
    struct xp_finding *f = xp_report_add(
        r, "low-bandwidth", XP_SEV_WARNING, p, s->stack_id, s->count, s->bytes, s->time_ns, xp_fix,
        xp_fix_pytorch,
        "%llu blocking copies of at least %s ran at a median %.2f GB/s, under %.0f%% of the %.2f GB/s "
        "other sites of this run reach for %s %s copies (%s, %s, %.0f%% of the run)",
        (unsigned long long)s->count, xp_bytes_str(r->th.low_bandwidth_min_bytes).s, median,
        r->th.low_bandwidth_fraction * 100, ref, dir, hm, xp_bytes_str(s->bytes).s,
        xp_ns_str(s->time_ns).s, 100 * share);
    xp_finding_text(f, "gbps", "%.3f", median);
    xp_finding_text(f, "reference_gbps", "%.3f", ref);
    xp_finding_text(f, "direction", "%s", dir);
    xp_finding_text(f, "host_mem", "%s", hm);
    xp_finding_text(f, "run_share", "%.3f", share);
}

static void xp_low_bandwidth_process(struct xp_report *r, const struct xp_process *p)
{
    struct xp_sites sites;
    xp_sites_init(&sites);
    bool *keep = calloc(p->n_copies ? p->n_copies : 1, sizeof *keep);
    size_t *site_of = calloc(p->n_copies ? p->n_copies : 1, sizeof *site_of);
    size_t *start = NULL, *order = NULL;
    double *bw = NULL;
    ssize_t n = keep && site_of ? xp_evidence(p, r->th.low_bandwidth_min_bytes, keep) : -1;
    if (n <= 0)
        goto out;
    for (size_t i = 0; i < p->n_copies; i++) {
        site_of[i] = XP_NO_SITE;
        if (!keep[i])
            continue;
        const struct xp_copy *c = &p->copies[i];
        if (!xp_sites_add(&sites, c->cs->stack_id, c->bytes, c->dur_ns))
            goto out;
        site_of[i] = xp_sites_lookup(&sites, c->cs->stack_id);
    }
    bw = malloc((size_t)n * sizeof *bw);
    if (!bw || xp_sites_bucket(sites.n, site_of, p->n_copies, &start, &order) != 0)
        goto out;
    for (size_t k = 0; k < sites.n; k++)
        xp_low_bandwidth_site(r, p, &sites.v[k], order + start[k], start[k + 1] - start[k], keep, bw);
out:
    free(keep);
    free(site_of);
    free(start);
    free(order);
    free(bw);
    xp_sites_free(&sites);
}

void xp_rule_low_bandwidth(struct xp_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++)
        xp_low_bandwidth_process(r, &r->procs[i]);
}
