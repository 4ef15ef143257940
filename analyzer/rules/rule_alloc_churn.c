/* rule_alloc_churn.c: memory allocated and freed again and again from one
 * call site through the run: a buffer made and dropped every iteration
 * (cudaMalloc/cudaFree, cudaMallocHost/cudaFreeHost, cudaHostRegister/
 * cudaHostUnregister), or a caching allocator told to let go of its
 * segments every step (torch.cuda.empty_cache() in the loop).
 *
 * A site churns (docs/findings.md argues for each test):
 *  1. at least alloc-churn.min_count of its allocations were freed;
 *  2. they came throughout the run: freed allocations in at least half of
 *     XP_CHURN_WINDOWS equal parts of it (set-up that makes and drops
 *     temporaries in a burst is not a loop);
 *  3. few were live at once: at most a quarter of them (a buffer or two
 *     made and dropped in turn, not a collection that grows and shrinks);
 *  4. not stream-ordered (cudaMallocAsync, cuMemAllocFromPoolAsync, ...:
 *     made for per-iteration temporaries, served from a pool without a
 *     device-wide wait) and memory the program holds (not address space,
 *     mappings, arrays, another process's memory);
 *  5. not mostly buffers filled by copies a rule before already reported
 *     (reupload-fresh: the same table uploaded into a buffer made for it
 *     every step; keeping it on the device, that finding's fix, ends the
 *     churn too: one finding per problem). */
#include <stdlib.h>
#include <string.h>

#include "xp_group.h"
#include "xp_rules.h"

static const char xp_fix_pinned[] =
    "allocate the page-locked buffers once, before the loop, and reuse them (or keep a few in turn "
    "with an event each): page-locking costs about as much as copying the bytes, and cudaFreeHost "
    "(cudaHostUnregister) waits for the whole device";
static const char xp_fix_device[] =
    "allocate the buffer once, before the loop, and reuse it, or take per-iteration temporaries "
    "from a stream-ordered pool (cudaMallocAsync/cudaFreeAsync): cudaFree waits for the whole "
    "device, and cudaMalloc of fresh memory maps pages";
static const char xp_fix_pytorch[] =
    "do not call torch.cuda.empty_cache() inside the loop: the caching allocator then returns "
    "its segments and asks CUDA for them again every step (cudaFree waits for the whole device); "
    "call it once, if at all, after the loop";

#define XP_CHURN_WINDOWS 8

/* Memory a program holds and frees by a call that may wait for the device. */
static bool xp_churn_kind(const struct xp_process *p, const struct xp_alloc *a)
{
    if (a->kind != XP_AK_DEVICE && a->kind != XP_AK_PINNED && a->kind != XP_AK_REGISTERED &&
        a->kind != XP_AK_MANAGED && a->kind != XP_AK_PHYSICAL)
        return false;
    const char *api = xp_process_api(p, a->api);
    return !(api && strstr(api, "Async"));
}

/* A freed allocation of a churn kind, by address then time: what each copy
 * an earlier rule reported (claimed) is looked up in. */
struct xp_window {
    uint64_t ptr;
    int64_t alloc_ns, free_ns;
    size_t alloc;
};

static int xp_by_ptr_time(const void *a, const void *b)
{
    const struct xp_window *x = a, *y = b;
    if (x->ptr != y->ptr)
        return (x->ptr > y->ptr) - (x->ptr < y->ptr);
    return (x->alloc_ns > y->alloc_ns) - (x->alloc_ns < y->alloc_ns);
}

/* filled[i] = 1 for each churn candidate (site_of[i] != XP_NO_SITE) that
 * received, while it lived, a claimed copy at its address: a buffer filled
 * from its start, what a table re-sent into a fresh buffer is.  Held by
 * allocation, not by copy: a million claimed copies of a small run cost
 * nothing here (they once cost the report 32 MB, issue 15's budget).  An
 * address is live once at a time, so a copy is looked up in the last
 * window opened at its address before it.  -1 out of memory. */
static int xp_claimed_fills(const struct xp_process *p, const size_t *site_of, uint8_t *filled)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n_allocs; i++)
        n += site_of[i] != XP_NO_SITE;
    if (!n)
        return 0;
    struct xp_window *w = malloc(n * sizeof *w);
    if (!w)
        return -1;
    n = 0;
    for (size_t i = 0; i < p->n_allocs; i++)
        if (site_of[i] != XP_NO_SITE)
            w[n++] = (struct xp_window){p->allocs[i].ptr, p->allocs[i].alloc_ns, p->allocs[i].free_ns, i};
    qsort(w, n, sizeof *w, xp_by_ptr_time);
    for (size_t i = 0; i < p->n_copies; i++) {
        const struct xp_copy *c = &p->copies[i];
        if (!c->claimed)
            continue;
        size_t lo = 0, hi = n;   /* the first window after (dst, start) */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (w[mid].ptr < c->dst || (w[mid].ptr == c->dst && w[mid].alloc_ns <= c->start_ns))
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo > 0 && w[lo - 1].ptr == c->dst && c->start_ns <= w[lo - 1].free_ns)
            filled[w[lo - 1].alloc] = 1;
    }
    free(w);
    return 0;
}

static void xp_churn_process(struct xp_report *r, const struct xp_process *p)
{
    struct xp_sites sites;
    xp_sites_init(&sites);
    size_t *site_of = NULL, *start = NULL, *order = NULL;
    uint8_t *filled = NULL;
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (size_t i = 0; i < p->n_allocs; i++) {
        const struct xp_alloc *a = &p->allocs[i];
        first = a->alloc_ns < first ? a->alloc_ns : first;
        last = a->alloc_ns > last ? a->alloc_ns : last;
        last = a->free_ns > last ? a->free_ns : last;
        if (a->free_ns < 0 || !xp_churn_kind(p, a))
            continue;
        /* aux: the kinds seen, for the fix and the details. */
        struct xp_site_sum *s = xp_sites_add(&sites, a->alloc_stack, a->bytes,
                                             xp_sub_sat(a->alloc_end_ns, a->alloc_ns));
        if (!s)
            goto out;
        s->aux |= UINT64_C(1) << (a->kind < 64 ? a->kind : 63);
    }
    if (!sites.n || !(site_of = malloc(p->n_allocs * sizeof *site_of)) ||
        !(filled = calloc(p->n_allocs, 1)))
        goto out;
    for (size_t i = 0; i < p->n_allocs; i++) {
        const struct xp_alloc *a = &p->allocs[i];
        site_of[i] = a->free_ns >= 0 && xp_churn_kind(p, a) ? xp_sites_lookup(&sites, a->alloc_stack)
                                                             : XP_NO_SITE;
    }
    if (xp_claimed_fills(p, site_of, filled) != 0)
        goto out;
    if (xp_sites_bucket(sites.n, site_of, p->n_allocs, &start, &order) != 0)
        goto out;
    int64_t len = xp_sub_sat(last, first);
    for (size_t k = 0; k < sites.n; k++) {
        const struct xp_site_sum *s = &sites.v[k];
        const size_t *items = order + start[k];
        size_t n = start[k + 1] - start[k];
        if (s->count < r->th.alloc_churn_min_count)
            continue;
        unsigned windows = 0;
        bool in[XP_CHURN_WINDOWS] = {false};
        for (size_t j = 0; j < n && len > 0; j++) {
            int64_t at = xp_sub_sat(p->allocs[items[j]].alloc_ns, first);
            size_t w = (size_t)((double)at / (double)len * XP_CHURN_WINDOWS);
            w = w < XP_CHURN_WINDOWS ? w : XP_CHURN_WINDOWS - 1;
            windows += !in[w];
            in[w] = true;
        }
        /* (The site's items are its freed allocations.) */
        int64_t live = xp_allocs_peak(p->allocs, items, n, false);
        if (live < 0)
            goto out;
        uint64_t peak = (uint64_t)live;
        size_t n_filled = 0;
        for (size_t j = 0; j < n; j++)
            n_filled += filled[items[j]];
        if (windows * 2 < XP_CHURN_WINDOWS || peak * 4 > s->count || n_filled * 2 > n)
            continue;
        bool pinned = (s->aux & ((UINT64_C(1) << XP_AK_PINNED) | (UINT64_C(1) << XP_AK_REGISTERED))) != 0;
        uint32_t api = p->allocs[items[0]].api;
        struct xp_finding *f = xp_report_add(
            r, "alloc-churn", XP_SEV_WARNING, p, s->stack_id, s->count, s->bytes, s->time_ns,
            pinned ? xp_fix_pinned : xp_fix_device, pinned ? NULL : xp_fix_pytorch,
            "%llu allocations from this site (%s) were each freed again, %llu at most live at "
            "once, throughout the run (in %u of %u parts of it): memory made and dropped every "
            "iteration, each time %s",
            (unsigned long long)s->count, xp_bytes_str(s->bytes).s, (unsigned long long)peak,
            windows, XP_CHURN_WINDOWS,
            pinned ? "page-locked anew and given back with a wait for the whole device"
                   : "given back with a wait for the whole device");
        xp_finding_num(f, "cycles", (int64_t)s->count);
        xp_finding_num(f, "peak_live", (int64_t)peak);
        xp_finding_num(f, "windows", (int64_t)windows);
        xp_finding_text(f, "memory", "%s",
                        pinned ? (s->aux & (UINT64_C(1) << XP_AK_REGISTERED) ? "registered" : "pinned")
                               : "device");
        xp_finding_text(f, "api", "%s", xp_process_api(p, api));
    }
out:
    free(filled);
    free(site_of);
    free(start);
    free(order);
    xp_sites_free(&sites);
}

void xp_rule_alloc_churn(struct xp_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++)
        xp_churn_process(r, &r->procs[i]);
}
