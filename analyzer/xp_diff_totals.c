/* xp_diff_totals.c: minimal totals for `xferprof diff` (MERGE: replace with the report's xp_totals). */
#include <stdlib.h>

#include "xp_diff_totals.h"

struct xp_mem_event {
    int64_t t;
    int64_t delta;
};

static int xp_mem_event_cmp(const void *a, const void *b)
{
    const struct xp_mem_event *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    /* A free and an allocation at the same instant: the free first, so that
     * reuse of memory does not read as a higher peak than there was. */
    return (x->delta > y->delta) - (x->delta < y->delta);
}

static bool xp_is_device_memory(uint8_t kind)
{
    return kind == XP_AK_DEVICE || kind == XP_AK_PHYSICAL;
}

/* Peak of live device memory over the process's allocations. */
static int xp_peak_bytes(const struct xp_process *p, uint64_t *peak)
{
    *peak = 0;
    if (p->n_allocs == 0)
        return 0;
    struct xp_mem_event *ev = malloc(2 * p->n_allocs * sizeof *ev);
    if (!ev)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < p->n_allocs; i++) {
        const struct xp_alloc *a = &p->allocs[i];
        if (!xp_is_device_memory(a->kind))
            continue;
        ev[n++] = (struct xp_mem_event){a->alloc_ns, (int64_t)a->bytes};
        if (a->free_ns >= 0)
            ev[n++] = (struct xp_mem_event){a->free_ns, -(int64_t)a->bytes};
    }
    qsort(ev, n, sizeof *ev, xp_mem_event_cmp);
    int64_t live = 0, best = 0;
    for (size_t i = 0; i < n; i++) {
        live += ev[i].delta;
        if (live > best)
            best = live;
    }
    free(ev);
    *peak = (uint64_t)best;
    return 0;
}

int xp_diff_totals_add(struct xp_diff_totals *t, const struct xp_process *p)
{
    for (size_t i = 0; i < p->n_copies; i++) {
        const struct xp_copy *c = &p->copies[i];
        unsigned d = c->direction < XP_DIR_COUNT ? c->direction : XP_DIR_UNKNOWN;
        struct xp_diff_dir_totals *dt = &t->dir[d];
        bool blocking = c->blocking == XP_BL_SYNC || c->blocking == XP_BL_ASYNC_PAGEABLE;
        int64_t dur = c->dur_ns > 0 ? c->dur_ns : 0;
        t->copies++;
        t->bytes += c->bytes;
        t->time_ns += dur;
        dt->copies++;
        dt->bytes += c->bytes;
        dt->time_ns += dur;
        if (blocking) {
            t->blocked_ns += dur;
            dt->blocked_ns += dur;
            t->blocking_copies++;
            if (c->status == 0 && dur > 0) {
                dt->bw_bytes += c->bytes;
                dt->bw_ns += dur;
            }
        }
        if (c->host_mem != XP_HM_NONE) {
            t->host_bytes += c->bytes;
            if (c->host_mem == XP_HM_PINNED)
                t->pinned_bytes += c->bytes;
        }
    }
    for (size_t i = 0; i < p->n_allocs; i++)
        if (p->allocs[i].free_ns < 0 && xp_is_device_memory(p->allocs[i].kind))
            t->live_at_exit_bytes += p->allocs[i].bytes;
    t->failed_calls += p->n_errors;
    uint64_t peak;
    int rc = xp_peak_bytes(p, &peak);
    t->peak_bytes += peak;
    return rc;
}
