/* xp_totals.c: the report's aggregates: totals per process and overall, and per-call-site sums. */
#include "xp_totals.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xp_load.h"

double xp_gbps(uint64_t bytes, int64_t ns)
{
    return ns > 0 ? (double)bytes / (double)ns : NAN;
}

double xp_share(uint64_t num, uint64_t den)
{
    return den ? (double)num / (double)den : NAN;
}

static bool xp_blocks(uint8_t blocking)
{
    return blocking == XP_BL_SYNC || blocking == XP_BL_ASYNC_PAGEABLE;
}

static void xp_add_copy(struct xp_totals *t, const struct xp_copy *c)
{
    unsigned d = c->cs->direction < XP_DIR_COUNT ? c->cs->direction : XP_DIR_UNKNOWN;
    unsigned h = c->cs->host_mem < XP_HM_COUNT ? c->cs->host_mem : XP_HM_NONE;
    struct xp_dir_totals *dt = &t->dir[d];
    bool blocks = xp_blocks(c->cs->blocking);
    t->copies++;
    t->bytes += c->bytes;
    t->time_ns += c->dur_ns;
    dt->count++;
    dt->bytes += c->bytes;
    dt->time_ns += c->dur_ns;
    if (blocks) {
        t->blocked_ns += c->dur_ns;
        t->blocking_copies++;
        dt->blocked_ns += c->dur_ns;
    }
    if (h == XP_HM_PINNED)
        dt->pinned_bytes += c->bytes;
    else if (h == XP_HM_PAGEABLE)
        dt->pageable_bytes += c->bytes;
    else if (h == XP_HM_MANAGED)
        dt->managed_bytes += c->bytes;
    if (h != XP_HM_NONE) {
        t->host_bytes += c->bytes;
        if (h == XP_HM_PINNED)
            t->pinned_bytes += c->bytes;
    }
    if (c->cs->blocking == XP_BL_SYNC)
        dt->sync++;
    else if (c->cs->blocking == XP_BL_ASYNC)
        dt->async++;
    else if (c->cs->blocking == XP_BL_ASYNC_PAGEABLE)
        dt->async_pageable++;
    if (blocks && c->dur_ns > 0) {
        dt->bw_bytes += c->bytes;
        dt->bw_ns += c->dur_ns;
        t->bw[d][h].copies++;
        t->bw[d][h].bytes += c->bytes;
        t->bw[d][h].time_ns += c->dur_ns;
    }
}

static int xp_count_failure(struct xp_totals *t, const char *api, size_t *cap)
{
    t->failed_calls++;
    for (size_t i = 0; i < t->n_failed_by_api; i++)
        if (strcmp(t->failed_by_api[i].api, api) == 0) {
            t->failed_by_api[i].n++;
            return 0;
        }
    if (xp_grow(&t->failed_by_api, cap, t->n_failed_by_api + 1, sizeof *t->failed_by_api) != 0)
        return -1;
    t->failed_by_api[t->n_failed_by_api++] = (struct xp_api_count){.api = api, .n = 1};
    return 0;
}

static int xp_count_status(struct xp_totals *t, struct xp_status_count v, size_t *cap)
{
    for (size_t i = 0; i < t->n_failed_by_status; i++) {
        struct xp_status_count *x = &t->failed_by_status[i];
        if (x->status == v.status && x->driver == v.driver && strcmp(x->api, v.api) == 0) {
            x->n++;
            return 0;
        }
    }
    if (xp_grow(&t->failed_by_status, cap, t->n_failed_by_status + 1, sizeof *t->failed_by_status) != 0)
        return -1;
    v.n = 1;
    t->failed_by_status[t->n_failed_by_status++] = v;
    return 0;
}

static int xp_status_count_cmp(const void *a, const void *b)
{
    const struct xp_status_count *x = a, *y = b;
    if (x->n != y->n)
        return x->n > y->n ? -1 : 1;
    int c = strcmp(x->api, y->api);
    return c ? c : (x->status > y->status) - (x->status < y->status);
}

static int xp_api_count_cmp(const void *a, const void *b)
{
    return strcmp(((const struct xp_api_count *)a)->api, ((const struct xp_api_count *)b)->api);
}

/* +bytes at an allocation, -bytes at its free. */
struct xp_mem_event {
    int64_t t_ns, delta;
};

static int xp_mem_event_cmp(const void *a, const void *b)
{
    const struct xp_mem_event *x = a, *y = b;
    if (x->t_ns != y->t_ns)
        return x->t_ns < y->t_ns ? -1 : 1;
    /* Frees first at the same instant: a peak is what was held together. */
    return (x->delta > y->delta) - (x->delta < y->delta);
}

static bool xp_device_kind(uint8_t kind)
{
    return kind == XP_AK_DEVICE || kind == XP_AK_PHYSICAL || kind == XP_AK_ARRAY;
}

/* At most XP_TIMELINE_MAX points: the last one (memory at exit), and of the
 * others, in XP_TIMELINE_MAX - 1 runs of consecutive points, each run's
 * highest, so the peak is always kept. */
static size_t xp_downsample(struct xp_mem_point *pts, size_t n)
{
    if (n <= XP_TIMELINE_MAX)
        return n;
    size_t runs = XP_TIMELINE_MAX - 1, body = n - 1, out = 0;
    for (size_t r = 0; r < runs; r++) {
        size_t lo = body * r / runs, hi = body * (r + 1) / runs, best = lo;
        for (size_t i = lo + 1; i < hi; i++)
            if (pts[i].live_bytes > pts[best].live_bytes)
                best = i;
        if (hi > lo)
            pts[out++] = pts[best];
    }
    pts[out++] = pts[n - 1];
    return out;
}

static int xp_memory(const struct xp_process *procs, size_t n, struct xp_totals *t)
{
    size_t ne = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < procs[i].n_allocs; k++)
            if (xp_device_kind(procs[i].allocs[k].kind))
                ne += procs[i].allocs[k].free_ns >= 0 ? 2 : 1;
    if (ne == 0)
        return 0;
    struct xp_mem_event *ev = malloc(ne * sizeof *ev);
    if (!ev)
        return -1;
    size_t e = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < procs[i].n_allocs; k++) {
            const struct xp_alloc *a = &procs[i].allocs[k];
            if (!xp_device_kind(a->kind))
                continue;
            int64_t b = a->bytes > INT64_MAX ? INT64_MAX : (int64_t)a->bytes;
            t->allocations++;
            ev[e++] = (struct xp_mem_event){a->alloc_ns, b};
            if (a->free_ns >= 0) {
                t->frees++;
                ev[e++] = (struct xp_mem_event){a->free_ns, -b};
            } else {
                t->live_at_exit_count++;
                t->live_at_exit_bytes += a->bytes;
            }
        }
    xp_sort(ev, ne, sizeof *ev, xp_mem_event_cmp);
    struct xp_mem_point *pts = malloc(ne * sizeof *pts);
    if (!pts) {
        free(ev);
        return -1;
    }
    int64_t live = 0;
    size_t np = 0;
    for (size_t i = 0; i < ne; i++) {
        live += ev[i].delta;
        if (live > 0 && (uint64_t)live > t->peak_bytes) {
            t->peak_bytes = (uint64_t)live;
            t->peak_ns = ev[i].t_ns;
        }
        /* One point per instant, with what was live after it. */
        if (np && pts[np - 1].t_ns == ev[i].t_ns)
            pts[np - 1].live_bytes = live;
        else
            pts[np++] = (struct xp_mem_point){ev[i].t_ns, live};
    }
    free(ev);
    /* A peak reached and left within one instant is below the points:
     * keep it as a point of its own so the timeline shows it. */
    for (size_t i = 0; i < np; i++)
        if (pts[i].t_ns == t->peak_ns && (uint64_t)pts[i].live_bytes < t->peak_bytes)
            pts[i].live_bytes = (int64_t)t->peak_bytes;
    t->n_timeline = xp_downsample(pts, np);
    t->timeline = pts;
    return 0;
}

int xp_totals_compute(const struct xp_process *procs, size_t n, struct xp_totals *t)
{
    memset(t, 0, sizeof *t);
    size_t cap = 0, cap_status = 0;
    for (size_t i = 0; i < n; i++) {
        const struct xp_process *p = &procs[i];
        for (size_t k = 0; k < p->n_copies; k++)
            if (p->copies[k].cs->status == 0)
                xp_add_copy(t, &p->copies[k]);
        for (size_t k = 0; k < p->n_errors; k++) {
            uint32_t api = p->errors[k].api;
            const char *name = api < p->n_api ? p->api_names[api] : "unknown";
            struct xp_status_count v = {.api = name, .status = p->errors[k].status,
                                        .driver = xp_process_api_driver(p, api)};
            if (xp_count_failure(t, name, &cap) != 0 || xp_count_status(t, v, &cap_status) != 0)
                goto oom;
        }
        t->memsets += p->memsets;
        t->graph_copies += p->graph_copies;
        t->graph_launches += p->graph_launches;
        t->syncs += p->n_syncs;
        for (size_t k = 0; k < p->n_syncs; k++)
            t->sync_time_ns += p->syncs[k].dur_ns;
    }
    if (t->n_failed_by_api > 1)
        xp_sort(t->failed_by_api, t->n_failed_by_api, sizeof *t->failed_by_api, xp_api_count_cmp);
    if (t->n_failed_by_status > 1)
        xp_sort(t->failed_by_status, t->n_failed_by_status, sizeof *t->failed_by_status,
                xp_status_count_cmp);
    if (xp_memory(procs, n, t) != 0)
        goto oom;
    return 0;
oom:
    xp_totals_free(t);
    return -1;
}

void xp_totals_free(struct xp_totals *t)
{
    free(t->timeline);
    free(t->failed_by_api);
    free(t->failed_by_status);
    memset(t, 0, sizeof *t);
}

static int xp_site_by_bytes(const void *a, const void *b)
{
    const struct xp_site *x = *(const struct xp_site *const *)a, *y = *(const struct xp_site *const *)b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    if (x->blocked_ns != y->blocked_ns)
        return x->blocked_ns > y->blocked_ns ? -1 : 1;
    return (x->stack_id > y->stack_id) - (x->stack_id < y->stack_id);
}

static int xp_site_by_blocked(const void *a, const void *b)
{
    const struct xp_site *x = *(const struct xp_site *const *)a, *y = *(const struct xp_site *const *)b;
    if (x->blocked_ns != y->blocked_ns)
        return x->blocked_ns > y->blocked_ns ? -1 : 1;
    return xp_site_by_bytes(a, b);
}

int xp_sites_top(const struct xp_process *p, size_t proc_index, size_t top,
                 struct xp_site **sites, size_t *n)
{
    uint32_t max_id = 0;
    for (size_t k = 0; k < p->n_copies; k++)
        if (p->copies[k].cs->stack_id > max_id)
            max_id = p->copies[k].cs->stack_id;
    /* Stack ids are small and dense (one per distinct stack): index by id. */
    struct xp_site *all = calloc((size_t)max_id + 1, sizeof *all);
    struct xp_site **order = calloc((size_t)max_id + 1, sizeof *order);
    if (!all || !order)
        goto oom;
    size_t used = 0;
    for (size_t k = 0; k < p->n_copies; k++) {
        const struct xp_copy *c = &p->copies[k];
        if (c->cs->status != 0)
            continue;
        struct xp_site *s = &all[c->cs->stack_id];
        if (s->copies == 0) {
            s->proc = p;
            s->proc_index = proc_index;
            s->stack_id = c->cs->stack_id;
            order[used++] = s;
        }
        s->copies++;
        s->bytes += c->bytes;
        s->time_ns += c->dur_ns;
        if (xp_blocks(c->cs->blocking))
            s->blocked_ns += c->dur_ns;
        bool seen = false;
        for (uint8_t i = 0; i < s->n_apis && !seen; i++)
            seen = s->apis[i] == c->cs->api;
        if (!seen && s->n_apis < sizeof s->apis / sizeof s->apis[0])
            s->apis[s->n_apis++] = c->cs->api;
        s->directions |= (uint8_t)(1u << (c->cs->direction & 7));
        s->host_mems |= (uint8_t)(1u << (c->cs->host_mem & 7));
        s->blockings |= (uint8_t)(1u << (c->cs->blocking & 7));
    }
    /* Mark the chosen ones by their place in a second list. */
    struct xp_site **chosen = calloc(2 * (top < used ? top : used) + 1, sizeof *chosen);
    if (!chosen)
        goto oom;
    size_t nc = 0;
    xp_sort(order, used, sizeof *order, xp_site_by_bytes);
    for (size_t i = 0; i < used && i < top; i++)
        chosen[nc++] = order[i];
    xp_sort(order, used, sizeof *order, xp_site_by_blocked);
    for (size_t i = 0; i < used && i < top && order[i]->blocked_ns > 0; i++) {
        bool dup = false;
        for (size_t k = 0; k < nc && !dup; k++)
            dup = chosen[k] == order[i];
        if (!dup)
            chosen[nc++] = order[i];
    }
    xp_sort(chosen, nc, sizeof *chosen, xp_site_by_bytes);
    struct xp_site *grown = realloc(*sites, (*n + nc + 1) * sizeof *grown);
    if (!grown) {
        free(chosen);
        goto oom;
    }
    *sites = grown;
    for (size_t i = 0; i < nc; i++)
        (*sites)[(*n)++] = *chosen[i];
    free(chosen);
    free(order);
    free(all);
    return 0;
oom:
    free(order);
    free(all);
    return -1;
}
