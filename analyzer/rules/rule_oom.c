/* rule_oom.c: allocations that failed for lack of device memory, one finding
 * each, with what held the memory at that moment: the live device bytes, the
 * largest live allocations and the sites holding the most, and whether the
 * device reported enough free memory (then no contiguous block was left:
 * fragmentation).
 *
 * All failures are answered together rather than by replaying the
 * allocations once per failure (a program retrying in a loop fails
 * thousands of times): one sweep in time gives each failure its live bytes
 * and per-site totals, and the largest live allocations come from walking
 * the allocations largest first, handing each to the failures it was live
 * at until every failure has three (a failure that has them is skipped from
 * then on).  O((allocations + failures) log) plus failures x sites. */
#include <stdlib.h>
#include <string.h>

#include "xp_group.h"
#include "xp_rules.h"

static const char xp_fix[] =
    "free or reuse buffers before the large allocation, allocate big long-lived buffers first, make "
    "the working set smaller (smaller batches or tiles), or take memory from a pool "
    "(cudaMallocAsync/cudaMemPool) that can reuse freed blocks";
static const char xp_fix_pytorch[] =
    "lower the batch size, free references (del tensor) and call torch.cuda.empty_cache(); against "
    "fragmentation set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True; torch.cuda.memory_summary() "
    "shows what holds memory";

/* cudaErrorMemoryAllocation and CUDA_ERROR_OUT_OF_MEMORY are both 2. */
#define XP_STATUS_OOM 2
#define XP_TOP 3

struct xp_top {
    uint64_t bytes, count, ptr;
    uint32_t stack_id;
    bool set;
};

/* Keeps top[] (XP_TOP entries, largest first) with v if it belongs there. */
static void xp_top_offer(struct xp_top *top, struct xp_top v)
{
    for (size_t i = 0; i < XP_TOP; i++)
        if (!top[i].set || v.bytes > top[i].bytes) {
            memmove(top + i + 1, top + i, (XP_TOP - 1 - i) * sizeof *top);
            top[i] = v;
            top[i].set = true;
            return;
        }
}

static bool xp_is_oom(const struct xp_error *e)
{
    return e->status == XP_STATUS_OOM && strcmp(e->record, "alloc") == 0;
}

static void xp_oom_details(struct xp_finding *f, const struct xp_top *allocs, const struct xp_top *sites)
{
    static const char *const keys[XP_TOP][3] = {{"top1_bytes", "top1_stack_id", "top1_ptr"},
                                                {"top2_bytes", "top2_stack_id", "top2_ptr"},
                                                {"top3_bytes", "top3_stack_id", "top3_ptr"}};
    static const char *const site_keys[XP_TOP][3] = {
        {"site1_bytes", "site1_stack_id", "site1_count"},
        {"site2_bytes", "site2_stack_id", "site2_count"},
        {"site3_bytes", "site3_stack_id", "site3_count"}};
    for (size_t i = 0; i < XP_TOP && allocs[i].set; i++) {
        xp_finding_num(f, keys[i][0], (int64_t)allocs[i].bytes);
        xp_finding_num(f, keys[i][1], allocs[i].stack_id);
        xp_finding_text(f, keys[i][2], "0x%llx", (unsigned long long)allocs[i].ptr);
    }
    for (size_t i = 0; i < XP_TOP && sites[i].set; i++) {
        xp_finding_num(f, site_keys[i][0], (int64_t)sites[i].bytes);
        xp_finding_num(f, site_keys[i][1], sites[i].stack_id);
        xp_finding_num(f, site_keys[i][2], (int64_t)sites[i].count);
    }
}

/* One failure, and what the sweeps found for it. */
struct xp_oom {
    const struct xp_error *e;
    int64_t group;          /* its device, or XP_ANY_DEVICE when unknown (then all devices count) */
    uint64_t live, live_count;
    struct xp_top top[XP_TOP], sites[XP_TOP];
    size_t ntop;
};
#define XP_ANY_DEVICE INT64_MIN

static int xp_cmp_oom(const void *a, const void *b)
{
    const struct xp_oom *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    if (x->e->start_ns != y->e->start_ns)
        return x->e->start_ns < y->e->start_ns ? -1 : 1;
    return (x->e > y->e) - (x->e < y->e);
}

static bool xp_oom_alloc(const struct xp_alloc *a)
{
    return xp_alloc_is_device(a) && xp_alloc_lifetime_ok(a);
}

/* Skips the failures that have their top allocations (path halving). */
static size_t xp_next_open(size_t *next, size_t i)
{
    while (next[i] != i) {
        next[i] = next[next[i]];
        i = next[i];
    }
    return i;
}

/* The first failure of group at or after t in oom[] (sorted by group, time). */
static size_t xp_first_at(const struct xp_oom *oom, size_t k, int64_t group, int64_t t)
{
    size_t lo = 0, hi = k;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (oom[mid].group < group || (oom[mid].group == group && oom[mid].e->start_ns < t))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* An allocation by size, largest first, then in allocation order. */
struct xp_sized {
    uint64_t bytes;
    size_t idx;
};

static int xp_cmp_by_bytes_desc(const void *a, const void *b)
{
    const struct xp_sized *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Failures in time order, or in the errors' order (their addresses). */
static int xp_cmp_oom_time(const void *a, const void *b)
{
    const struct xp_oom *const *x = a, *const *y = b;
    if ((*x)->e->start_ns != (*y)->e->start_ns)
        return (*x)->e->start_ns < (*y)->e->start_ns ? -1 : 1;
    return ((*x)->e > (*y)->e) - ((*x)->e < (*y)->e);
}

static int xp_cmp_oom_error(const void *a, const void *b)
{
    const struct xp_oom *x = a, *y = b;
    return (x->e > y->e) - (x->e < y->e);
}

/* The XP_TOP largest allocations live at each failure. */
static int xp_oom_top_allocs(const struct xp_process *p, struct xp_oom *oom, size_t k)
{
    struct xp_sized *by_size = malloc((p->n_allocs ? p->n_allocs : 1) * sizeof *by_size);
    size_t *next = malloc((k + 1) * sizeof *next), n = 0;
    if (!by_size || !next) {
        free(by_size);
        free(next);
        return -1;
    }
    for (size_t i = 0; i < p->n_allocs; i++)
        if (xp_oom_alloc(&p->allocs[i]))
            by_size[n++] = (struct xp_sized){p->allocs[i].bytes, i};
    xp_sort(by_size, n, sizeof *by_size, xp_cmp_by_bytes_desc);
    for (size_t i = 0; i <= k; i++)
        next[i] = i;
    for (size_t j = 0; j < n; j++) {
        const struct xp_alloc *a = &p->allocs[by_size[j].idx];
        int64_t groups[2] = {a->device >= 0 ? a->device : XP_ANY_DEVICE, XP_ANY_DEVICE};
        for (int g = 0; g < (groups[0] == XP_ANY_DEVICE ? 1 : 2); g++) {
            for (size_t i = xp_next_open(next, xp_first_at(oom, k, groups[g], a->alloc_ns));
                 i < k && oom[i].group == groups[g] && (a->free_ns < 0 || oom[i].e->start_ns < a->free_ns);
                 i = xp_next_open(next, i + 1)) {
                oom[i].top[oom[i].ntop++] = (struct xp_top){
                    .bytes = a->bytes, .count = 1, .ptr = a->ptr, .stack_id = a->alloc_stack, .set = true};
                if (oom[i].ntop == XP_TOP)
                    next[i] = i + 1;
            }
        }
    }
    free(by_size);
    free(next);
    return 0;
}

struct xp_event {
    int64_t t;
    size_t alloc;
    bool free;
};

static int xp_cmp_event(const void *a, const void *b)
{
    const struct xp_event *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->alloc > y->alloc) - (x->alloc < y->alloc);
}

/* A failure's per-site totals from the sweep's (device, site) table. */
static void xp_oom_sites(struct xp_oom *o, const struct xp_map *held, struct xp_sites *any)
{
    xp_sites_clear(any);
    for (size_t i = 0; i < held->n; i++) {
        const struct xp_map_entry *h = &held->e[i];
        if (!h->v1 || (o->group != XP_ANY_DEVICE && (int64_t)h->k[0] != o->group))
            continue;
        if (o->group != XP_ANY_DEVICE) {
            xp_top_offer(o->sites, (struct xp_top){.bytes = h->v0, .count = h->v1, .stack_id = (uint32_t)h->k[1]});
            continue;
        }
        size_t s = xp_sites_find(any, (uint32_t)h->k[1]);
        if (s != XP_NO_SITE) {
            any->v[s].bytes += h->v0;
            any->v[s].count += h->v1;
        }
    }
    for (size_t s = 0; o->group == XP_ANY_DEVICE && s < any->n; s++)
        xp_top_offer(o->sites, (struct xp_top){.bytes = any->v[s].bytes, .count = any->v[s].count,
                                                .stack_id = any->v[s].stack_id});
}

/* Live bytes and per-site totals at each failure: one sweep in time. */
static int xp_oom_sweep(const struct xp_process *p, struct xp_oom *oom, size_t k)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n_allocs; i++)
        if (xp_oom_alloc(&p->allocs[i]))
            n += 1 + (p->allocs[i].free_ns >= 0);
    struct xp_event *ev = malloc((n ? n : 1) * sizeof *ev);
    struct xp_oom **by_time = malloc(k * sizeof *by_time);
    struct xp_map held; /* (device, site) -> v0 live bytes, v1 live count */
    struct xp_sites any;
    xp_map_init(&held);
    xp_sites_init(&any);
    int rc = -1;
    if (!ev || !by_time)
        goto out;
    n = 0;
    for (size_t i = 0; i < p->n_allocs; i++) {
        const struct xp_alloc *a = &p->allocs[i];
        if (!xp_oom_alloc(a))
            continue;
        ev[n++] = (struct xp_event){a->alloc_ns, i, false};
        if (a->free_ns >= 0)
            ev[n++] = (struct xp_event){a->free_ns, i, true};
    }
    xp_sort(ev, n, sizeof *ev, xp_cmp_event);
    for (size_t i = 0; i < k; i++)
        by_time[i] = &oom[i];
    xp_sort(by_time, k, sizeof *by_time, xp_cmp_oom_time);
    size_t e = 0;
    for (size_t i = 0; i < k; i++) {
        struct xp_oom *o = by_time[i];
        /* Everything allocated or freed by the failure's start: live means allocated by then and not freed. */
        for (; e < n && ev[e].t <= o->e->start_ns; e++) {
            const struct xp_alloc *a = &p->allocs[ev[e].alloc];
            bool added;
            struct xp_map_entry *h = xp_map_get(&held, (uint64_t)(int64_t)a->device, a->alloc_stack, 0, 0, &added);
            if (!h)
                goto out;
            h->v0 += ev[e].free ? -a->bytes : a->bytes;
            h->v1 += ev[e].free ? UINT64_MAX : 1; /* -1 modulo 2^64 */
        }
        for (size_t j = 0; j < held.n; j++)
            if (o->group == XP_ANY_DEVICE || (int64_t)held.e[j].k[0] == o->group) {
                o->live += held.e[j].v0;
                o->live_count += held.e[j].v1;
            }
        xp_oom_sites(o, &held, &any);
    }
    rc = 0;
out:
    free(ev);
    free(by_time);
    xp_map_free(&held);
    xp_sites_free(&any);
    return rc;
}

static void xp_oom_report(struct xp_report *r, const struct xp_process *p, const struct xp_oom *o)
{
    const struct xp_error *e = o->e;
    bool fragmented = e->dev_free >= 0 && e->requested <= (uint64_t)e->dev_free;
    const char *api = xp_process_api(p, e->api);
    struct xp_status_str status = xp_process_status(p, e->api, e->status);
    struct xp_finding *f;
    if (e->dev_free >= 0 && e->dev_total >= 0)
        f = xp_report_add(r, "oom", XP_SEV_ERROR, p, e->stack_id, 1, e->requested, 0, xp_fix, xp_fix_pytorch,
                          "%s of %s failed for lack of device memory (%s) with %s live on device %d; the "
                          "device reported %s free of %s%s",
                          api, xp_bytes_str(e->requested).s, status.s, xp_bytes_str(o->live).s, (int)e->device,
                          xp_bytes_str((uint64_t)e->dev_free).s, xp_bytes_str((uint64_t)e->dev_total).s,
                          fragmented ? ", so no free block was large enough (fragmentation)" : "");
    else
        f = xp_report_add(r, "oom", XP_SEV_ERROR, p, e->stack_id, 1, e->requested, 0, xp_fix, xp_fix_pytorch,
                          "%s of %s failed for lack of device memory (%s) with %s live on device %d", api,
                          xp_bytes_str(e->requested).s, status.s, xp_bytes_str(o->live).s, (int)e->device);
    xp_finding_num(f, "requested_bytes", (int64_t)e->requested);
    xp_finding_num(f, "live_bytes", (int64_t)o->live);
    xp_finding_num(f, "live_count", (int64_t)o->live_count);
    xp_finding_num(f, "device", e->device);
    if (e->dev_free >= 0)
        xp_finding_num(f, "device_free_bytes", e->dev_free);
    if (e->dev_total >= 0)
        xp_finding_num(f, "device_total_bytes", e->dev_total);
    xp_finding_num(f, "fragmentation", fragmented);
    xp_finding_text(f, "api", "%s", api);
    xp_finding_num(f, "status", e->status);
    const char *name = xp_process_status_name(p, e->api, e->status);
    if (name)
        xp_finding_text(f, "status_name", "%s", name);
    xp_finding_num(f, "at_ns", xp_sub_sat(e->start_ns, p->start_mono_ns));
    xp_oom_details(f, o->top, o->sites);
}

static void xp_oom_process(struct xp_report *r, const struct xp_process *p)
{
    size_t k = 0;
    for (size_t i = 0; i < p->n_errors; i++)
        k += xp_is_oom(&p->errors[i]);
    if (!k)
        return;
    struct xp_oom *oom = calloc(k, sizeof *oom);
    if (!oom)
        return;
    for (size_t i = 0, j = 0; i < p->n_errors; i++)
        if (xp_is_oom(&p->errors[i]))
            oom[j++] = (struct xp_oom){.e = &p->errors[i],
                                       .group = p->errors[i].device >= 0 ? p->errors[i].device : XP_ANY_DEVICE};
    xp_sort(oom, k, sizeof *oom, xp_cmp_oom);
    if (xp_oom_top_allocs(p, oom, k) == 0 && xp_oom_sweep(p, oom, k) == 0) {
        /* Findings in the errors' order, as the program met them. */
        xp_sort(oom, k, sizeof *oom, xp_cmp_oom_error);
        for (size_t i = 0; i < k; i++)
            xp_oom_report(r, p, &oom[i]);
    }
    free(oom);
}

void xp_rule_oom(struct xp_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++)
        xp_oom_process(r, &r->procs[i]);
}
