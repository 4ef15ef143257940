/* rule_leak.c: allocations still live at exit, per allocation site, told
 * apart as "growing" (a leak that grows while the program runs),
 * "caching-allocator" (segments an allocator keeps for reuse) or
 * "held-to-exit" (memory taken once and simply never given back).
 *
 * A site is growing when its live bytes keep rising through the run
 * (docs/findings.md argues for each test):
 *  1. it left at least leak.min_count allocations live at exit;
 *  2. cut the run into XP_LEAK_WINDOWS equal windows: the site's live bytes
 *     at the end of a window exceed those at the end of the one before in at
 *     least leak.growing_fraction of the windows (a cache that fills once,
 *     early or late, rises in one or two);
 *  3. they still rise in the last quarter of the run (a cache that filled
 *     over the first half and then stayed flat is not growing);
 *  4. the second half of the run adds at least a third of what the first
 *     half added (a leak keeps its pace; a cache that warmed up over the
 *     first half and took one more block late, PyTorch's pinned blocks as
 *     the host ran ahead, has not);
 *  5. for a caching allocator's pinned host blocks: the blocks are not
 *     reused (more than XP_LEAK_REUSED copies per block is a cache at work,
 *     whatever its live bytes did over a short run).
 * The run is the process's CUDA activity: its first allocation to its last
 * event (process start-up, imports say, is not part of any trend). */
#include <stdlib.h>
#include <string.h>

#include "xp_group.h"
#include "xp_rules.h"

static const char xp_fix_growing[] =
    "free each allocation (cudaFree/cudaFreeHost) once it is no longer needed, or allocate the buffer "
    "once and reuse it across iterations instead of allocating in the loop";
static const char xp_fix_pytorch_growing[] =
    "do not keep references to CUDA tensors across iterations (e.g. append loss.item(), not loss, to a "
    "list: the tensor keeps its graph alive); torch.cuda.memory_summary() shows what holds memory";
static const char xp_fix_tensors_growing[] =
    "do not keep references to the CUDA tensors made here across iterations: accumulate what you need "
    "on the device (total += loss.detach()) and read it once, or move what must be kept to the host "
    "every N steps (.cpu()); a kept tensor that requires grad also keeps its graph alive; "
    "torch.cuda.memory_summary() shows what holds memory";
static const char xp_fix_held[] =
    "free long-lived buffers at teardown (cudaFree/cudaFreeHost) so tools and other processes see the "
    "memory returned; harmless if intended, but a sign of a missing free on some path";
static const char xp_fix_pytorch_held[] =
    "tensors still referenced at exit hold their memory; del them (or let them go out of scope) before "
    "the end if another process needs the device";
static const char xp_fix_cache[] =
    "nothing to fix: the allocator keeps its segments to reuse them instead of calling cudaMalloc again; "
    "release them through the allocator's own call if another process needs the memory";
static const char xp_fix_pytorch_cache[] =
    "nothing to fix: torch.cuda.empty_cache() returns the cached segments to the device; "
    "torch.cuda.memory_stats() shows reserved against allocated bytes";

/* Windows the run is cut into for the live-bytes curve: enough that a leak
 * of one allocation per step rises in nearly all of them, few enough that a
 * run of 8 steps still shows it. */
#define XP_LEAK_WINDOWS 8

/* Copies per live host block above which a caching allocator's blocks are
 * reused, not kept: a kept pinned tensor is copied once, or twice (there and
 * back). */
#define XP_LEAK_REUSED 2.0

struct xp_run {
    int64_t start, end;
};

/* From the first allocation to the last event (or allocation or free). */
static struct xp_run xp_run_span(const struct xp_process *p)
{
    struct xp_run run = {INT64_MAX, p->end_mono_ns};
    for (size_t i = 0; i < p->n_allocs; i++) {
        const struct xp_alloc *a = &p->allocs[i];
        int64_t last = a->free_ns > a->alloc_ns ? a->free_ns : a->alloc_ns;
        if (a->alloc_ns < run.start)
            run.start = a->alloc_ns;
        if (last > run.end)
            run.end = last;
    }
    if (run.start == INT64_MAX)
        run.start = p->start_mono_ns;
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

/* An address range reserved (cuMemAddressReserve) is address space, and a
 * mapping (cuMemMap) points at physical memory (cuMemCreate) reported by its
 * own site: counting them too would report one segment three times, the
 * reservation (often many GiB of nothing) as the largest.  Memory opened
 * from another process (cudaIpcOpenMemHandle) is that process's. */
static bool xp_holds_memory(const struct xp_alloc *a)
{
    return a->kind != XP_AK_RESERVED && a->kind != XP_AK_MAPPED && a->kind != XP_AK_IPC;
}

/* The allocators whose blocks PyTorch reports (block_events): their
 * segments' growth is told by the blocks (xp_is_pytorch_device_cache). */
static const char xp_pytorch_cache[] = "PyTorch's caching allocator";
static const char xp_vm_pool[] =
    "a virtual-memory pool (cuMemCreate/cuMemMap, e.g. PyTorch's expandable segments)";

/* Caching allocators by the frames that call CUDA for them: their segments
 * are held on purpose until the allocator is told to let go. */
static const struct {
    const char *needle, *name;
} xp_allocators[] = {
    {"CUDACachingAllocator", xp_pytorch_cache},
    {"c10::cuda::", xp_pytorch_cache},
    /* Pinned host blocks behind .pin_memory() and DataLoader(pin_memory=True). */
    {"CachingHostAllocator", "PyTorch's pinned-memory cache"},
    {"CachingDeviceAllocator", "CUB's caching allocator"},
    {"rmm::mr::", "an RMM memory resource"},
    {"BFCAllocator", "a BFC allocator (TensorFlow/XLA)"},
    {"cupy.cuda.memory", "CuPy's memory pool"},
};

static const char *xp_allocator_of(const struct xp_process *p, uint32_t stack_id, uint64_t kinds)
{
    const struct xp_stack *st = xp_process_stack(p, stack_id);
    for (uint32_t i = 0; st && i < st->nframes; i++) {
        const struct xp_frame *f = &st->frames[i];
        const char *names[] = {f->demangled, f->function};
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
            for (size_t j = 0; names[k] && j < sizeof xp_allocators / sizeof xp_allocators[0]; j++)
                if (strstr(names[k], xp_allocators[j].needle))
                    return xp_allocators[j].name;
        if (f->module && strncmp(f->module, "libc10_cuda", 11) == 0)
            return xp_pytorch_cache;
    }
    /* Physical memory for mapping into reserved address ranges (cuMemCreate)
     * is how pools that grow in place work, PyTorch's expandable segments
     * among them: a program does not do that for one buffer. */
    if (kinds == xp_kind_bit(XP_AK_PHYSICAL))
        return xp_vm_pool;
    return NULL;
}

/* The ends of the run's XP_LEAK_WINDOWS parts (ends[1..]; ends[0] its
 * start), of equal time. */
static void xp_windows_in_time(struct xp_run run, int64_t ends[XP_LEAK_WINDOWS + 1])
{
    int64_t len = xp_sub_sat(run.end, run.start);
    ends[0] = run.start;
    for (unsigned w = 1; w <= XP_LEAK_WINDOWS; w++)
        /* The last window ends at the run's end, where what is live at exit counts. */
        ends[w] = w == XP_LEAK_WINDOWS ? run.end
                                       : run.start + (int64_t)((double)len * w / XP_LEAK_WINDOWS);
}

/* How many windows (ending at ends[1..]) the site's live bytes rose in, and
 * whether they rose in the last quarter of the run and kept their pace over
 * its second half. */
static unsigned xp_rises(const struct xp_alloc *allocs, const size_t *items, size_t n,
                         const int64_t ends[XP_LEAK_WINDOWS + 1], bool *rising_at_end)
{
    uint64_t live[XP_LEAK_WINDOWS + 1] = {0};
    for (unsigned w = 1; w <= XP_LEAK_WINDOWS; w++)
        for (size_t j = 0; j < n; j++) {
            const struct xp_alloc *a = &allocs[items[j]];
            if (xp_alloc_live_at(a, ends[w]))
                live[w] += a->bytes;
        }
    unsigned rises = 0;
    for (unsigned w = 1; w <= XP_LEAK_WINDOWS; w++)
        rises += live[w] > live[w - 1];
    uint64_t first = live[XP_LEAK_WINDOWS / 2] > live[0] ? live[XP_LEAK_WINDOWS / 2] - live[0] : 0;
    uint64_t second = live[XP_LEAK_WINDOWS] > live[XP_LEAK_WINDOWS / 2]
                          ? live[XP_LEAK_WINDOWS] - live[XP_LEAK_WINDOWS / 2] : 0;
    *rising_at_end = live[XP_LEAK_WINDOWS] > live[XP_LEAK_WINDOWS * 3 / 4] && second >= first / 3;
    return rises;
}

/* Copies per block, over the site's host blocks live at exit: how many
 * copies read from or wrote into one of them after it was allocated, divided
 * by their number.  A cache hands its blocks out again and again (PyTorch's
 * pinned blocks each stage many batches); a leak's blocks each serve the one
 * tensor kept in them. */
static double xp_host_block_uses(const struct xp_process *p, const size_t *items, size_t n)
{
    uint64_t blocks = 0, uses = 0;
    for (size_t j = 0; j < n; j++) {
        const struct xp_alloc *a = &p->allocs[items[j]];
        if (a->free_ns >= 0)
            continue;
        blocks++;
        for (size_t i = 0; i < p->n_copies; i++) {
            const struct xp_copy *c = &p->copies[i];
            if (c->start_ns >= a->alloc_ns &&
                ((c->src >= a->ptr && c->src - a->ptr < a->bytes) ||
                 (c->dst >= a->ptr && c->dst - a->ptr < a->bytes)))
                uses++;
        }
    }
    return blocks ? (double)uses / (double)blocks : 0;
}

/* What a caching allocator holds at exit, over all its sites that stopped
 * growing: one finding per allocator and process, not one per segment site
 * (PyTorch asks for segments from wherever the pool ran short). */
struct xp_cache_held {
    const char *allocator;
    uint64_t count, bytes, sites;
    const struct xp_site_sum *largest;   /* the site the finding is shown at */
    unsigned rises;
    uint64_t kinds;
    bool grew;   /* a site of it grew: the blocks tell which tensors hold it */
};
#define XP_MAX_ALLOCATORS 8

static void xp_cache_add(struct xp_cache_held *held, size_t *n, const char *allocator,
                         const struct xp_site_sum *s, unsigned rises, bool grew)
{
    size_t i = 0;
    while (i < *n && strcmp(held[i].allocator, allocator) != 0)
        i++;
    if (i == *n) {
        if (*n == XP_MAX_ALLOCATORS)
            i = *n - 1;   /* (more allocators than that in one process: lumped) */
        else
            held[(*n)++] = (struct xp_cache_held){.allocator = allocator};
    }
    struct xp_cache_held *h = &held[i];
    h->count += s->count;
    h->bytes += s->bytes;
    h->sites++;
    h->kinds |= s->aux;
    h->grew |= grew;
    if (!h->largest || s->bytes > h->largest->bytes) {
        h->largest = s;
        h->rises = rises;
    }
}

static void xp_cache_findings(struct xp_report *r, const struct xp_process *p,
                              const struct xp_cache_held *held, size_t n, struct xp_run run)
{
    for (size_t i = 0; i < n; i++) {
        const struct xp_cache_held *h = &held[i];
        struct xp_finding *f = xp_report_add(
            r, "leak", XP_SEV_INFO, p, h->largest->stack_id, h->count, h->bytes, 0, xp_fix_cache,
            xp_fix_pytorch_cache,
            "%llu segment%s (%s) from %llu site%s held at exit by %s: memory it keeps for reuse, "
            "%s",
            (unsigned long long)h->count, h->count == 1 ? "" : "s", xp_bytes_str(h->bytes).s,
            (unsigned long long)h->sites, h->sites == 1 ? "" : "s", h->allocator,
            h->grew ? "which grew with the tensors the program kept (its blocks name the lines "
                      "that made them)"
                    : "not a leak (it stopped growing)");
        xp_finding_text(f, "kind", "caching-allocator");
        xp_finding_text(f, "allocator", "%s", h->allocator);
        xp_finding_num(f, "live_count", (int64_t)h->count);
        xp_finding_num(f, "sites", (int64_t)h->sites);
        xp_finding_num(f, "rising_windows", (int64_t)h->rises);
        xp_finding_num(f, "windows", XP_LEAK_WINDOWS);
        xp_finding_num(f, "run_ns", xp_sub_sat(run.end, run.start));
        xp_finding_text(f, "memory", "%s", xp_kind_mask_name(h->kinds));
    }
}

static bool xp_is_pytorch_device_cache(const char *allocator, uint64_t kinds)
{
    return allocator != NULL && (kinds & xp_kind_bit(XP_AK_PINNED)) == 0 &&
           (allocator == xp_pytorch_cache || allocator == xp_vm_pool);
}

/* One site: its allocations (all of them, in allocation order) decide whether
 * it grows.  A caching allocator's site that stopped growing goes to held
 * (one finding per allocator, xp_cache_findings) instead of its own.  When
 * PyTorch's blocks were recorded, its segments are never the growing site
 * themselves: the blocks name the line that keeps the memory
 * (xp_leak_blocks). */
static void xp_leak_site(struct xp_report *r, const struct xp_process *p, const struct xp_site_sum *s,
                         const size_t *items, size_t n, struct xp_run run, struct xp_cache_held *held,
                         size_t *n_held)
{
    uint32_t api = 0;
    int64_t first = INT64_MAX;
    for (size_t j = 0; j < n; j++) {
        const struct xp_alloc *a = &p->allocs[items[j]];
        if (a->free_ns < 0 && a->alloc_ns < first) {
            first = a->alloc_ns;
            api = a->api;
        }
    }
    bool rising_at_end = false;
    int64_t ends[XP_LEAK_WINDOWS + 1];
    xp_windows_in_time(run, ends);
    unsigned rises = xp_rises(p->allocs, items, n, ends, &rising_at_end);
    bool growing = s->count >= r->th.leak_min_count && rising_at_end &&
                   (double)rises >= r->th.leak_growing_fraction * XP_LEAK_WINDOWS;
    const char *allocator = xp_allocator_of(p, s->stack_id, s->aux);
    /* A cache of host blocks whose blocks are in use again and again was
     * still warming up (a loader thread running ahead wants more staging
     * blocks), however its live bytes looked over a short run. */
    if (growing && allocator && s->aux == xp_kind_bit(XP_AK_PINNED) &&
        xp_host_block_uses(p, items, n) > XP_LEAK_REUSED)
        growing = false;
    bool grew = growing && p->n_blocks > 0 && xp_is_pytorch_device_cache(allocator, s->aux);
    if (grew)
        growing = false;
    if (!growing && allocator) {
        xp_cache_add(held, n_held, allocator, s, rises, grew);
        return;
    }
    struct xp_finding *f;
    const char *kind = growing ? "growing" : "held-to-exit";
    if (growing)
        f = xp_report_add(r, "leak", XP_SEV_WARNING, p, s->stack_id, s->count, s->bytes, 0, xp_fix_growing,
                          xp_fix_pytorch_growing,
                          "%llu allocations from this site (%s) were never freed%s%s%s: its live memory "
                          "rose in %u of %u parts of the run, and was still rising at exit%s",
                          (unsigned long long)s->count, xp_bytes_str(s->bytes).s, allocator ? " (by " : "",
                          allocator ? allocator : "", allocator ? ")" : "", rises, XP_LEAK_WINDOWS,
                          /* The allocator asks CUDA for more wherever its pool ran
                           * short: the line that keeps the memory is elsewhere. */
                          allocator ? "; this is where the allocator's pool ran short, the memory is "
                                      "held by what the program keeps alive across iterations"
                                    : "");
    else
        f = xp_report_add(r, "leak", XP_SEV_INFO, p, s->stack_id, s->count, s->bytes, 0, xp_fix_held,
                          xp_fix_pytorch_held, "%llu allocation%s from this site (%s) %s still live at exit",
                          (unsigned long long)s->count, s->count == 1 ? "" : "s", xp_bytes_str(s->bytes).s,
                          s->count == 1 ? "was" : "were");
    xp_finding_text(f, "kind", "%s", kind);
    if (allocator)
        xp_finding_text(f, "allocator", "%s", allocator);
    xp_finding_num(f, "live_count", (int64_t)s->count);
    xp_finding_num(f, "rising_windows", (int64_t)rises);
    xp_finding_num(f, "windows", XP_LEAK_WINDOWS);
    xp_finding_num(f, "run_ns", xp_sub_sat(run.end, run.start));
    xp_finding_text(f, "memory", "%s", xp_kind_mask_name(s->aux));
    xp_finding_text(f, "api", "%s", xp_process_api(p, api));
}

/* The end of the program's own work: its last CUDA event or block taken.
 * Blocks returned after it were returned by the interpreter's teardown
 * (Python frees every tensor as it exits, after the script's last line):
 * for the program they were held to its end. */
static int64_t xp_work_end(const struct xp_process *p)
{
    int64_t end = p->end_mono_ns;
    for (size_t i = 0; i < p->n_blocks; i++)
        if (p->blocks[i].alloc_ns > end)
            end = p->blocks[i].alloc_ns;
    return end;
}

struct xp_block_event {
    int64_t t;
    uint32_t stack;
};

static int xp_by_event_time(const void *a, const void *b)
{
    const struct xp_block_event *x = a, *y = b;
    return (x->t > y->t) - (x->t < y->t);
}

/* The ends of the parts of the run for blocks: equal numbers of *turns* of
 * the allocator's events, not equal times.  A turn is a run of consecutive
 * events (blocks taken and returned up to the end) from one line: a loop's
 * step takes and returns tensors at line after line, turn after turn, while
 * a list of 2,000 tensors made in one comprehension is one turn, and so is
 * the model's weights moved at start.  In parts of equal time, a script's
 * seconds of set-up between its first tensors and its loop (the optimizer,
 * the data, compiled code warming up) leave the loop a few parts; in parts
 * of equal events, a burst of tensors at the end takes most of them.  Turns
 * follow the program's progress through its loop.  -1 out of memory. */
static int xp_windows_in_blocks(const struct xp_alloc *blocks, size_t n, struct xp_run run,
                                int64_t ends[XP_LEAK_WINDOWS + 1])
{
    struct xp_block_event *ev = malloc(2 * n * sizeof *ev);
    if (!ev)
        return -1;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        ev[m++] = (struct xp_block_event){blocks[i].alloc_ns, blocks[i].alloc_stack};
        if (blocks[i].free_ns >= 0)
            ev[m++] = (struct xp_block_event){blocks[i].free_ns, blocks[i].free_stack};
    }
    qsort(ev, m, sizeof *ev, xp_by_event_time);
    /* The turns' first events, in place. */
    size_t turns = 0;
    for (size_t i = 0; i < m; i++)
        if (i == 0 || ev[i].stack != ev[i - 1].stack)
            ev[turns++] = ev[i];
    ends[0] = run.start;
    for (unsigned w = 1; w < XP_LEAK_WINDOWS; w++)
        ends[w] = turns ? ev[turns * w / XP_LEAK_WINDOWS].t : run.end;
    ends[XP_LEAK_WINDOWS] = run.end;
    free(ev);
    return 0;
}

/* PyTorch's blocks, by the line that made each tensor: a line whose tensors
 * still held at the end keep growing through the run is the leak the
 * caching allocator's segments only showed the symptom of.  Tensors held at
 * the end that stopped growing (the model, the optimizer's state) are what
 * a program holds, and say nothing here. */
static void xp_leak_blocks(struct xp_report *r, const struct xp_process *p)
{
    struct xp_sites sites;
    xp_sites_init(&sites);
    size_t *site_of = NULL, *start = NULL, *order = NULL;
    struct xp_alloc *blocks = malloc(p->n_blocks * sizeof *blocks);
    if (!blocks)
        goto out;
    struct xp_run run = {p->n_blocks ? p->blocks[0].alloc_ns : 0, xp_work_end(p)};
    for (size_t i = 0; i < p->n_blocks; i++) {
        blocks[i] = p->blocks[i];
        if (blocks[i].free_ns > run.end)
            blocks[i].free_ns = -1;
        if (blocks[i].free_ns < 0 && !xp_sites_add(&sites, blocks[i].alloc_stack, blocks[i].bytes, 0))
            goto out;
    }
    int64_t ends[XP_LEAK_WINDOWS + 1];
    if (!sites.n || xp_windows_in_blocks(blocks, p->n_blocks, run, ends) != 0 ||
        !(site_of = malloc(p->n_blocks * sizeof *site_of)))
        goto out;
    for (size_t i = 0; i < p->n_blocks; i++)
        site_of[i] = xp_sites_lookup(&sites, blocks[i].alloc_stack);
    if (xp_sites_bucket(sites.n, site_of, p->n_blocks, &start, &order) != 0)
        goto out;
    for (size_t k = 0; k < sites.n; k++) {
        const struct xp_site_sum *s = &sites.v[k];
        bool rising_at_end = false;
        unsigned rises = xp_rises(blocks, order + start[k], start[k + 1] - start[k], ends,
                                  &rising_at_end);
        if (s->count < r->th.leak_min_count || !rising_at_end ||
            (double)rises < r->th.leak_growing_fraction * XP_LEAK_WINDOWS)
            continue;
        struct xp_finding *f = xp_report_add(
            r, "leak", XP_SEV_WARNING, p, s->stack_id, s->count, s->bytes, 0, xp_fix_tensors_growing,
            NULL, "%llu tensors made here (%s) were still held at the end: the memory they hold in "
            "PyTorch's caching allocator rose in %u of %u parts of the run, and was still "
            "rising at the end",
            (unsigned long long)s->count, xp_bytes_str(s->bytes).s, rises, XP_LEAK_WINDOWS);
        xp_finding_text(f, "kind", "growing");
        xp_finding_text(f, "allocator", "%s", xp_pytorch_cache);
        xp_finding_num(f, "live_count", (int64_t)s->count);
        xp_finding_num(f, "rising_windows", (int64_t)rises);
        xp_finding_num(f, "windows", XP_LEAK_WINDOWS);
        xp_finding_num(f, "run_ns", xp_sub_sat(run.end, run.start));
        xp_finding_text(f, "memory", "device");
        xp_finding_text(f, "api", "tensor");
    }
out:
    free(blocks);
    free(site_of);
    free(start);
    free(order);
    xp_sites_free(&sites);
}

static void xp_leak_process(struct xp_report *r, const struct xp_process *p)
{
    struct xp_sites sites;
    xp_sites_init(&sites);
    size_t *site_of = NULL, *start = NULL, *order = NULL;
    for (size_t i = 0; i < p->n_allocs; i++) {
        const struct xp_alloc *a = &p->allocs[i];
        if (a->free_ns >= 0 || !xp_holds_memory(a))
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
    struct xp_cache_held held[XP_MAX_ALLOCATORS];
    size_t n_held = 0;
    for (size_t k = 0; k < sites.n; k++)
        xp_leak_site(r, p, &sites.v[k], order + start[k], start[k + 1] - start[k], run, held,
                     &n_held);
    xp_cache_findings(r, p, held, n_held, run);
out:
    free(site_of);
    free(start);
    free(order);
    xp_sites_free(&sites);
}

void xp_rule_leak(struct xp_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++) {
        xp_leak_process(r, &r->procs[i]);
        xp_leak_blocks(r, &r->procs[i]);
    }
}
