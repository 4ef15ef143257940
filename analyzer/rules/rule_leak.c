/* rule_leak.c: allocations still live at exit, per allocation site, told
 * apart as "growing" (a leak that grows while the program runs) or
 * "held-to-exit" (memory taken once and simply never given back).
 *
 * A site is growing when all three hold (docs/findings.md argues for them):
 *  1. it left at least leak.min_count allocations live at exit;
 *  2. those were made across the run: the times of the first and last of
 *     them lie more than leak.growing_fraction of the run apart (a burst at
 *     start-up, model weights say, is not growth however large);
 *  3. it kept adding: at exit the site holds more live allocations than it
 *     did at the middle of that span (a bounded cache that frees its oldest
 *     entries as it adds new ones holds the same number, and is not growing).
 * The run is the process's start to its last event, widened to take in every
 * allocation and free. */
#include <stdlib.h>

#include "xp_group.h"
#include "xp_rules.h"

static const char xp_fix_growing[] =
    "free each allocation (cudaFree/cudaFreeHost) once it is no longer needed, or allocate the buffer "
    "once and reuse it across iterations instead of allocating in the loop";
static const char xp_fix_pytorch_growing[] =
    "do not keep references to CUDA tensors across iterations (e.g. append loss.item(), not loss, to a "
    "list: the tensor keeps its graph alive); torch.cuda.memory_summary() shows what holds memory";
static const char xp_fix_held[] =
    "free long-lived buffers at teardown (cudaFree/cudaFreeHost) so tools and other processes see the "
    "memory returned; harmless if intended, but a sign of a missing free on some path";
static const char xp_fix_pytorch_held[] =
    "PyTorch's caching allocator keeps freed blocks reserved until exit: torch.cuda.empty_cache() "
    "returns them; tensors still referenced at exit hold theirs";

struct xp_run {
    int64_t start, end;
};

static struct xp_run xp_run_span(const struct xp_process *p)
{
    struct xp_run run = {p->start_mono_ns, p->end_mono_ns};
    bool have = p->start_mono_ns > 0 || p->end_mono_ns > 0;
    for (size_t i = 0; i < p->n_allocs; i++) {
        const struct xp_alloc *a = &p->allocs[i];
        int64_t last = a->free_ns > a->alloc_ns ? a->free_ns : a->alloc_ns;
        if (!have || a->alloc_ns < run.start)
            run.start = a->alloc_ns;
        if (!have || last > run.end)
            run.end = last;
        have = true;
    }
    if (run.end < run.start)
        run.end = run.start;
    return run;
}

static uint64_t xp_kind_bit(uint8_t kind)
{
    return UINT64_C(1) << (kind < XP_AK_COUNT ? kind : XP_AK_OTHER);
}

static const char *xp_kind_mask_name(uint64_t mask)
{
    for (unsigned k = 0; k < XP_AK_COUNT; k++)
        if (mask == (UINT64_C(1) << k))
            return xp_alloc_kind_name((enum xp_mem_kind)k);
    return "mixed";
}

/* One site: its allocations (all of them, in allocation order) decide whether it grows. */
static void xp_leak_site(struct xp_report *r, const struct xp_process *p, const struct xp_site_sum *s,
                         const size_t *items, size_t n, struct xp_run run)
{
    int64_t first = INT64_MAX, last = INT64_MIN;
    uint32_t api = 0;
    for (size_t j = 0; j < n; j++) {
        const struct xp_alloc *a = &p->allocs[items[j]];
        if (a->free_ns >= 0)
            continue;
        if (a->alloc_ns < first) {
            first = a->alloc_ns;
            api = a->api;
        }
        if (a->alloc_ns > last)
            last = a->alloc_ns;
    }
    int64_t span = xp_sub_sat(last, first), run_ns = xp_sub_sat(run.end, run.start);
    int64_t mid = first + span / 2; /* span >= 0 and first + span <= last: no overflow */
    uint64_t live_at_mid = 0;
    for (size_t j = 0; j < n; j++)
        live_at_mid += xp_alloc_live_at(&p->allocs[items[j]], mid);
    bool growing = s->count >= r->th.leak_min_count &&
                   (double)span > r->th.leak_growing_fraction * (double)run_ns && s->count > live_at_mid;
    struct xp_finding *f;
    if (growing)
        f = xp_report_add(r, "leak", XP_SEV_WARNING, p, s->stack_id, s->count, s->bytes, 0, xp_fix_growing,
                          xp_fix_pytorch_growing,
                          "%llu allocations from this site (%s) were never freed: made across %.0f%% of the "
                          "run, and still growing at exit",
                          (unsigned long long)s->count, xp_bytes_str(s->bytes).s,
                          run_ns > 0 ? 100.0 * (double)span / (double)run_ns : 0.0);
    else
        f = xp_report_add(r, "leak", XP_SEV_INFO, p, s->stack_id, s->count, s->bytes, 0, xp_fix_held,
                          xp_fix_pytorch_held, "%llu allocation%s from this site (%s) %s still live at exit",
                          (unsigned long long)s->count, s->count == 1 ? "" : "s", xp_bytes_str(s->bytes).s,
                          s->count == 1 ? "was" : "were");
    xp_finding_text(f, "kind", "%s", growing ? "growing" : "held-to-exit");
    xp_finding_num(f, "live_count", (int64_t)s->count);
    xp_finding_num(f, "live_at_mid_count", (int64_t)live_at_mid);
    xp_finding_num(f, "span_ns", span);
    xp_finding_num(f, "run_ns", run_ns);
    xp_finding_text(f, "memory", "%s", xp_kind_mask_name(s->aux));
    xp_finding_text(f, "api", "%s", xp_process_api(p, api));
}

static void xp_leak_process(struct xp_report *r, const struct xp_process *p)
{
    struct xp_sites sites;
    xp_sites_init(&sites);
    size_t *site_of = NULL, *start = NULL, *order = NULL;
    for (size_t i = 0; i < p->n_allocs; i++) {
        const struct xp_alloc *a = &p->allocs[i];
        if (a->free_ns >= 0)
            continue;
        struct xp_site_sum *s = xp_sites_add(&sites, a->alloc_stack, a->bytes, 0);
        if (!s)
            goto out;
        s->aux |= xp_kind_bit(a->kind);
    }
    if (!sites.n)
        goto out;
    site_of = malloc(p->n_allocs * sizeof *site_of);
    if (!site_of)
        goto out;
    for (size_t i = 0; i < p->n_allocs; i++)
        site_of[i] = xp_sites_lookup(&sites, p->allocs[i].alloc_stack);
    if (xp_sites_bucket(sites.n, site_of, p->n_allocs, &start, &order) != 0)
        goto out;
    struct xp_run run = xp_run_span(p);
    for (size_t k = 0; k < sites.n; k++)
        xp_leak_site(r, p, &sites.v[k], order + start[k], start[k + 1] - start[k], run);
out:
    free(site_of);
    free(start);
    free(order);
    xp_sites_free(&sites);
}

void xp_rule_leak(struct xp_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++)
        xp_leak_process(r, &r->procs[i]);
}
