/* rule_fragmentation.c: device memory that is free only in holes between
 * live allocations, so a large request cannot be served although the total
 * free would suffice; and the note that a caching allocator hides its own.
 *
 * The replay walks each device's allocations (kinds device and physical) in
 * time, keeping the live ranges in a segment tree ordered by address whose
 * nodes know their ranges' first start, last end, largest gap and sum of
 * gaps: each allocation and free costs O(log n), so the span, the holes and
 * the free memory inside the span are known after every event.  The state is
 * judged at each allocation request, granted or failed (failed ones are the
 * errors of allocating calls), when a request meets the memory as it is
 * (frees at teardown in any order create holes nobody asks for). */
#include <stdlib.h>
#include <string.h>

#include "xp_group.h"
#include "xp_rules.h"

static const char xp_fix[] =
    "allocate long-lived and large buffers first and free short-lived ones in reverse order, reuse "
    "buffers of the same size instead of freeing and reallocating, or take memory from a pool "
    "(cudaMallocAsync with a cudaMemPool, or one big allocation carved up by the program)";
static const char xp_fix_pytorch[] =
    "set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True so the caching allocator can grow segments "
    "instead of leaving holes; keep tensor shapes stable between steps; torch.cuda.memory_snapshot() "
    "shows the segments";
static const char xp_fix_caching[] =
    "nothing to fix in itself: the allocator reuses its segments; look at its own statistics for "
    "fragmentation inside them";
static const char xp_fix_pytorch_caching[] =
    "torch.cuda.memory_stats() (reserved vs allocated bytes) and torch.cuda.memory_snapshot() show "
    "fragmentation inside the caching allocator's segments";

/* A segment of a caching allocator (PyTorch's large pool rounds to 2 MiB). */
#define XP_SEGMENT_BYTES (UINT64_C(2) << 20)

struct xp_node {
    bool has;
    uint64_t lo, hi;        /* first start, highest end of the live ranges below */
    uint64_t gap_max, gap_sum;
};

static uint64_t xp_max(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

static struct xp_node xp_join(struct xp_node l, struct xp_node r)
{
    if (!l.has)
        return r;
    if (!r.has)
        return l;
    uint64_t gap = r.lo > l.hi ? r.lo - l.hi : 0; /* overlapping ranges (odd input) leave no gap */
    return (struct xp_node){
        .has = true, .lo = l.lo, .hi = xp_max(l.hi, r.hi),
        .gap_max = xp_max(gap, xp_max(l.gap_max, r.gap_max)),
        .gap_sum = l.gap_sum + r.gap_sum + gap,
    };
}

/* An iterative segment tree over m leaves (positions by address). */
struct xp_tree {
    struct xp_node *n;
    size_t size;            /* leaves rounded up to a power of two */
};

static void xp_tree_set(struct xp_tree *t, size_t pos, struct xp_node leaf)
{
    size_t i = pos + t->size;
    t->n[i] = leaf;
    for (i /= 2; i >= 1; i /= 2)
        t->n[i] = xp_join(t->n[2 * i], t->n[2 * i + 1]);
}

/* The memory of one device at a moment. */
struct xp_state {
    int64_t t;
    uint64_t span, live, hole, free;
    uint64_t live_count, request;
    uint32_t stack_id;
    double ratio;
};

/* One device allocation in address order, and the events of the replay. */
struct xp_slot {
    int32_t device;
    uint64_t ptr;
    int64_t t;
    size_t alloc;           /* index into p->allocs */
};
struct xp_event {
    int32_t device;
    int64_t t;
    int type;               /* 0 free, 1 alloc, 2 failed allocation: a free at t makes room for an allocation at t */
    size_t pos;             /* the allocation's position by address within its device;
                             * for a failed allocation, its index into p->errors */
};

static int xp_cmp_slot(const void *a, const void *b)
{
    const struct xp_slot *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    if (x->ptr != y->ptr)
        return x->ptr < y->ptr ? -1 : 1;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->alloc > y->alloc) - (x->alloc < y->alloc);
}

static int xp_cmp_event(const void *a, const void *b)
{
    const struct xp_event *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->type != y->type)
        return x->type - y->type;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

static bool xp_replayable(const struct xp_alloc *a)
{
    return xp_alloc_is_device(a) && a->bytes > 0 && xp_alloc_lifetime_ok(a);
}

static void xp_state_of(const struct xp_tree *tree, struct xp_state *s)
{
    const struct xp_node *root = &tree->n[1];
    s->span = root->has ? root->hi - root->lo : 0;
    s->hole = root->gap_max;
    s->free = root->gap_sum;
    s->ratio = s->free ? 1.0 - (double)s->hole / (double)s->free : 0;
}

static void xp_report_device(struct xp_report *r, const struct xp_process *p, int32_t device,
                             const struct xp_state *worst, const struct xp_state *peak)
{
    struct xp_finding *f = xp_report_add(
        r, "fragmentation", XP_SEV_WARNING, p, worst->stack_id, worst->live_count, worst->free, 0, xp_fix,
        xp_fix_pytorch,
        "device %d: when %s was requested, %s lay free between live allocations but the largest hole "
        "was %s (fragmentation %.2f); at the peak %s live spanned %s",
        (int)device, xp_bytes_str(worst->request).s, xp_bytes_str(worst->free).s,
        xp_bytes_str(worst->hole).s, worst->ratio, xp_bytes_str(peak->live).s, xp_bytes_str(peak->span).s);
    xp_finding_text(f, "kind", "address-space");
    xp_finding_num(f, "device", device);
    xp_finding_num(f, "peak_span_bytes", (int64_t)peak->span);
    xp_finding_num(f, "peak_live_bytes", (int64_t)peak->live);
    xp_finding_num(f, "peak_largest_hole_bytes", (int64_t)peak->hole);
    xp_finding_num(f, "peak_free_in_span_bytes", (int64_t)peak->free);
    xp_finding_num(f, "largest_hole_bytes", (int64_t)worst->hole);
    xp_finding_num(f, "free_in_span_bytes", (int64_t)worst->free);
    xp_finding_num(f, "live_bytes", (int64_t)worst->live);
    xp_finding_num(f, "span_bytes", (int64_t)worst->span);
    xp_finding_num(f, "request_bytes", (int64_t)worst->request);
    xp_finding_text(f, "worst_ratio", "%.3f", worst->ratio);
    xp_finding_num(f, "worst_ns", xp_sub_sat(worst->t, p->start_mono_ns));
}

/* Replays one device's events (its allocations at positions < m by address). */
static void xp_replay_device(struct xp_report *r, const struct xp_process *p, const struct xp_slot *slots,
                             const struct xp_event *ev, size_t nev, size_t m, struct xp_tree *tree)
{
    tree->size = 1;
    while (tree->size < m)
        tree->size *= 2;
    for (size_t i = 0; i < 2 * tree->size; i++)
        tree->n[i] = (struct xp_node){0};
    struct xp_state cur = {0}, worst = {.ratio = -1}, peak = {0};
    for (size_t e = 0; e < nev; e++) {
        /* A request, granted or not, meets the memory as it is: judge it then.
         * A failed one matters most (it is often the last request of all, after
         * the frees that made the holes). */
        uint64_t request = 0;
        uint32_t request_stack = XP_NONE_ID;
        if (ev[e].type == 2) {
            request = p->errors[ev[e].pos].requested;
            request_stack = p->errors[ev[e].pos].stack_id;
        } else if (ev[e].type == 1) {
            request = p->allocs[slots[ev[e].pos].alloc].bytes;
            request_stack = p->allocs[slots[ev[e].pos].alloc].alloc_stack;
        }
        if (ev[e].type != 0 && cur.live_count) {
            xp_state_of(tree, &cur);
            if (cur.free >= r->th.fragmentation_min_free &&
                (cur.ratio > worst.ratio || (cur.ratio == worst.ratio && cur.free > worst.free))) {
                worst = cur;
                worst.t = ev[e].t;
                worst.request = request;
                worst.stack_id = request_stack;
            }
        }
        if (ev[e].type == 2)
            continue;
        const struct xp_alloc *a = &p->allocs[slots[ev[e].pos].alloc];
        if (ev[e].type == 1) {
            xp_tree_set(tree, ev[e].pos,
                        (struct xp_node){.has = true, .lo = a->ptr, .hi = a->ptr + a->bytes});
            cur.live += a->bytes;
            cur.live_count++;
            if (cur.live > peak.live) {
                xp_state_of(tree, &peak);
                peak.live = cur.live;
                peak.t = ev[e].t;
            }
        } else {
            xp_tree_set(tree, ev[e].pos, (struct xp_node){0});
            cur.live -= a->bytes;
            cur.live_count--;
        }
    }
    if (worst.ratio >= r->th.fragmentation_min_ratio && worst.free > 0)
        xp_report_device(r, p, slots[0].device, &worst, &peak);
}

static bool xp_failed_request(const struct xp_error *e)
{
    return strcmp(e->record, "alloc") == 0 && e->requested > 0;
}

static void xp_fragmentation_replay(struct xp_report *r, const struct xp_process *p)
{
    size_t m = 0, nev = 0;
    for (size_t i = 0; i < p->n_allocs; i++)
        if (xp_replayable(&p->allocs[i])) {
            m++;
            nev += 1 + (p->allocs[i].free_ns >= 0);
        }
    for (size_t i = 0; i < p->n_errors; i++)
        nev += xp_failed_request(&p->errors[i]);
    if (m < 2)
        return;
    struct xp_slot *slots = malloc(m * sizeof *slots);
    struct xp_event *ev = malloc(nev * sizeof *ev);
    struct xp_tree tree = {.n = NULL};
    size_t cap = 1;
    while (cap < m)
        cap *= 2;
    tree.n = malloc(2 * cap * sizeof *tree.n);
    if (!slots || !ev || !tree.n)
        goto out;
    for (size_t i = 0, j = 0; i < p->n_allocs; i++)
        if (xp_replayable(&p->allocs[i]))
            slots[j++] = (struct xp_slot){p->allocs[i].device, p->allocs[i].ptr, p->allocs[i].alloc_ns, i};
    xp_sort(slots, m, sizeof *slots, xp_cmp_slot);
    /* Positions count from each device's first slot, so one tree serves every device in turn. */
    size_t dev_first = 0;
    for (size_t j = 0, k = 0; j < m; j++) {
        if (slots[j].device != slots[dev_first].device)
            dev_first = j;
        const struct xp_alloc *a = &p->allocs[slots[j].alloc];
        ev[k++] = (struct xp_event){a->device, a->alloc_ns, 1, j - dev_first};
        if (a->free_ns >= 0)
            ev[k++] = (struct xp_event){a->device, a->free_ns, 0, j - dev_first};
    }
    for (size_t i = 0, k = nev; i < p->n_errors; i++)
        if (xp_failed_request(&p->errors[i]))
            ev[--k] = (struct xp_event){p->errors[i].device, p->errors[i].start_ns, 2, i};
    xp_sort(ev, nev, sizeof *ev, xp_cmp_event);
    for (size_t j = 0, e = 0; j < m;) {
        size_t end = j, eend;
        while (end < m && slots[end].device == slots[j].device)
            end++;
        /* Failed requests on a device with no allocation to replay are left out. */
        while (e < nev && ev[e].device < slots[j].device)
            e++;
        eend = e;
        while (eend < nev && ev[eend].device == slots[j].device)
            eend++;
        xp_replay_device(r, p, slots + j, ev + e, eend - e, end - j, &tree);
        j = end;
        e = eend;
    }
out:
    free(slots);
    free(ev);
    free(tree.n);
}

/* Big device allocations and not one device free in the whole run: how a
 * caching allocator looks from outside (its frees never reach CUDA).  With
 * PyTorch's blocks recorded, how much of its segments its tensors ever
 * used at once: the rest was held and never in use together, the
 * allocator's own fragmentation and rounding. */
static void xp_caching_allocator(struct xp_report *r, const struct xp_process *p)
{
    uint64_t segments = 0, segment_bytes = 0, device_allocs = 0;
    for (size_t i = 0; i < p->n_allocs; i++) {
        const struct xp_alloc *a = &p->allocs[i];
        if (!xp_alloc_is_device(a))
            continue;
        if (a->free_ns >= 0)
            return;
        device_allocs++;
        if (a->bytes >= XP_SEGMENT_BYTES) {
            segments++;
            segment_bytes += a->bytes;
        }
    }
    if (!segments)
        return;
    /* The most bytes PyTorch's blocks (tensors) held at once (-1: none
     * recorded, or out of memory). */
    int64_t peak = p->n_blocks ? xp_allocs_peak(p->blocks, NULL, p->n_blocks, true) : -1;
    if (peak >= 0) {
        uint64_t unused = segment_bytes > (uint64_t)peak ? segment_bytes - (uint64_t)peak : 0;
        struct xp_finding *f = xp_report_add(
            r, "fragmentation", XP_SEV_INFO, p, XP_NONE_ID, segments, segment_bytes, 0,
            xp_fix_caching, xp_fix_pytorch_caching,
            "PyTorch's caching allocator took %llu segments (%s) and never gave one back; its "
            "tensors held at most %s at once, so %s (%.0f%%) of the segments was never in use "
            "at the same time (rounding, blocks split and cached, memory of the tensors' peak "
            "that was spread over more segments)",
            (unsigned long long)segments, xp_bytes_str(segment_bytes).s,
            xp_bytes_str((uint64_t)peak).s, xp_bytes_str(unused).s,
            segment_bytes ? 100.0 * (double)unused / (double)segment_bytes : 0.0);
        xp_finding_text(f, "kind", "caching-allocator");
        xp_finding_num(f, "segments", (int64_t)segments);
        xp_finding_num(f, "segment_bytes", (int64_t)segment_bytes);
        xp_finding_num(f, "device_allocations", (int64_t)device_allocs);
        xp_finding_num(f, "tensors_peak_bytes", peak);
        xp_finding_num(f, "never_used_bytes", (int64_t)unused);
        return;
    }
    struct xp_finding *f = xp_report_add(
        r, "fragmentation", XP_SEV_INFO, p, XP_NONE_ID, segments, segment_bytes, 0, xp_fix_caching,
        xp_fix_pytorch_caching,
        "%llu device allocations of at least %s (%s) were never freed, nor was any other: the pattern "
        "of a caching allocator (PyTorch, CuPy, JAX), whose fragmentation inside its segments xferprof "
        "cannot see",
        (unsigned long long)segments, xp_bytes_str(XP_SEGMENT_BYTES).s, xp_bytes_str(segment_bytes).s);
    xp_finding_text(f, "kind", "caching-allocator");
    xp_finding_num(f, "segments", (int64_t)segments);
    xp_finding_num(f, "segment_bytes", (int64_t)segment_bytes);
    xp_finding_num(f, "device_allocations", (int64_t)device_allocs);
}

void xp_rule_fragmentation(struct xp_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++) {
        xp_fragmentation_replay(r, &r->procs[i]);
        xp_caching_allocator(r, &r->procs[i]);
    }
}
