/* rule_redundant_upload.c: uploads of content sent before: redundant-upload
 * when the device still had it (the same place, the same allocation, no
 * kernel or memset since; or one call site sending it over and over into a
 * buffer that lived through), reupload-fresh when it goes into a buffer
 * allocated since (the device forgot it when the old buffer was freed). */
#include <stdlib.h>

#include "xp_group.h"
#include "xp_rules.h"

static const char xp_fix[] =
    "keep the data on the device and reuse the device buffer instead of copying it again: upload it "
    "once before the loop, or copy only when the host data changed";
static const char xp_fix_pytorch[] =
    "move the tensor to the GPU once (outside the training loop, or cache the result of "
    ".to(device)/.cuda()) instead of transferring the same data every step";

static const char xp_fix_fresh[] =
    "keep the buffer (or a device copy of the data) alive instead of freeing it and uploading the "
    "same bytes into a new allocation: allocate once, upload once, reuse it";
static const char xp_fix_fresh_pytorch[] =
    "keep the GPU tensor (cache the result of .to(device)/.cuda(), or register it as a buffer) "
    "instead of dropping it and moving the same data to the GPU again";

/* Why a copy is marked: bits in marks[]. */
enum { XP_RED_SAME_DST = 1, XP_RED_REPEAT = 2, XP_RED_FRESH = 4 };

static bool xp_same_upload(const struct xp_process *p, const struct xp_copy *a,
                           const struct xp_copy *b)
{
    return xp_upload_content(p, a) == xp_upload_content(p, b) && a->fp_kind == b->fp_kind &&
           a->bytes == b->bytes;
}

/* Device allocations by address, to tell which one held a destination when. */
struct xp_lifetimes {
    const struct xp_process *p;
    size_t *by_ptr, n;
};

static const struct xp_alloc *xp_sort_allocs;
static int xp_cmp_alloc_ptr(const void *a, const void *b)
{
    uint64_t x = xp_sort_allocs[*(const size_t *)a].ptr, y = xp_sort_allocs[*(const size_t *)b].ptr;
    return (x > y) - (x < y);
}

static int xp_lifetimes_init(struct xp_lifetimes *L, const struct xp_process *p)
{
    L->p = p;
    L->n = 0;
    L->by_ptr = malloc((p->n_allocs ? p->n_allocs : 1) * sizeof *L->by_ptr);
    if (!L->by_ptr)
        return -1;
    for (size_t i = 0; i < p->n_allocs; i++)
        if (p->allocs[i].kind == XP_AK_DEVICE || p->allocs[i].kind == XP_AK_MAPPED ||
            p->allocs[i].kind == XP_AK_MANAGED || p->allocs[i].kind == XP_AK_IPC)
            L->by_ptr[L->n++] = i;
    xp_sort_allocs = p->allocs;
    qsort(L->by_ptr, L->n, sizeof *L->by_ptr, xp_cmp_alloc_ptr);
    return 0;
}

/* How far below a destination to look for the allocation holding it: live
 * device allocations never overlap, so the one holding dst at a time is
 * among the nearest below it (older ones at the same address come first). */
#define XP_ALLOC_SCAN 64

/* Index + 1 of the allocation holding dst at time t, 0 if none is known
 * (32 bits, held per copy: four billion allocations would not fit in
 * memory as struct xp_alloc either). */
static uint32_t xp_alloc_at(const struct xp_lifetimes *L, uint64_t dst, int64_t t)
{
    size_t lo = 0, hi = L->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (L->p->allocs[L->by_ptr[mid]].ptr <= dst)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = lo, seen = 0; k > 0 && seen < XP_ALLOC_SCAN; k--, seen++) {
        const struct xp_alloc *a = &L->p->allocs[L->by_ptr[k - 1]];
        if (dst - a->ptr < a->bytes && a->alloc_ns <= t && (a->free_ns < 0 || a->free_ns > t))
            return L->by_ptr[k - 1] < UINT32_MAX ? (uint32_t)(L->by_ptr[k - 1] + 1) : 0;
    }
    return 0;
}

/* Whether a memset that began in (from, to) covered dst. */
static bool xp_memset_between(const struct xp_process *p, uint64_t dst, int64_t from, int64_t to)
{
    size_t lo = 0, hi = p->n_memset_spans;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->memset_spans[mid].start_ns <= from)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = lo; k < p->n_memset_spans && p->memset_spans[k].start_ns < to; k++)
        if (dst - p->memset_spans[k].dst < p->memset_spans[k].bytes)
            return true;
    return false;
}

/* Whether copy c went into an allocation made after time t (its alloc_of). */
static bool xp_fresh_since(const struct xp_process *p, const uint32_t *alloc_of, size_t i, int64_t t)
{
    return alloc_of[i] && p->allocs[alloc_of[i] - 1].alloc_ns > t;
}

/* Uploads to the same (device, dst) in time order: one that repeats the
 * previous upload's content into the same allocation, with the same
 * kernel_seq and no memset of dst in between, wrote bytes already there (no
 * kernel ran that could have used or changed them).  Into a buffer
 * allocated since (freed and allocated again at that address) it is a
 * fresh re-upload instead. */
static int xp_mark_same_dst(const struct xp_process *p, const uint32_t *ord, size_t n,
                            const uint32_t *alloc_of, uint8_t *marks)
{
    struct xp_map last; /* (device, dst) -> v0: index + 1 of its latest upload */
    xp_map_init(&last);
    for (size_t j = 0; j < n; j++) {
        const struct xp_copy *c = &p->copies[ord[j]];
        bool added;
        struct xp_map_entry *e = xp_map_get(&last, (uint32_t)c->cs->device, c->dst, 0, 0, &added);
        if (!e) {
            xp_map_free(&last);
            return -1;
        }
        if (!added) {
            const struct xp_copy *prev = &p->copies[e->v0 - 1];
            if (!xp_same_upload(p, prev, c))
                ;
            else if (xp_fresh_since(p, alloc_of, ord[j], prev->start_ns))
                marks[ord[j]] |= XP_RED_FRESH;
            else if (prev->kernel_seq == c->kernel_seq &&
                     !xp_memset_between(p, c->dst, prev->start_ns, c->start_ns))
                marks[ord[j]] |= XP_RED_SAME_DST;
        }
        e->v0 = ord[j] + 1;
    }
    xp_map_free(&last);
    return 0;
}

/* One site's uploads of one content: from min_repeats on, every upload after
 * the first (in time) is redundant, or a fresh re-upload when it went into a
 * buffer allocated after the previous upload of that content.  group[]
 * gets, per copy, how many uploads its group had (for the
 * max_uploads_of_one_content detail). */
static int xp_mark_repeats(const struct xp_process *p, const uint32_t *ord, size_t n, uint64_t min,
                           const uint32_t *alloc_of, uint8_t *marks, uint32_t *group)
{
    struct xp_map groups; /* (content, bytes, stack and kind) -> v0 count, v1 first upload */
    xp_map_init(&groups);
    uint32_t *entry = malloc(n * sizeof *entry);
    if (!entry)
        return -1;
    for (size_t j = 0; j < n; j++) {
        const struct xp_copy *c = &p->copies[ord[j]];
        bool added;
        struct xp_map_entry *e = xp_map_get(&groups, xp_upload_content(p, c), c->bytes,
                                            (uint64_t)c->cs->stack_id << 8 | c->fp_kind, 0, &added);
        if (!e) {
            free(entry);
            xp_map_free(&groups);
            return -1;
        }
        if (added)
            e->v1 = ord[j];
        e->v0++;
        entry[j] = (uint32_t)(e - groups.e);
    }
    /* Per group, the start of its latest upload so far, walking in time. */
    int64_t *latest = malloc((groups.n ? groups.n : 1) * sizeof *latest);
    if (!latest) {
        free(entry);
        xp_map_free(&groups);
        return -1;
    }
    for (size_t j = 0; j < n; j++) {
        const struct xp_map_entry *e = &groups.e[entry[j]];
        group[ord[j]] = e->v0 > UINT32_MAX ? UINT32_MAX : (uint32_t)e->v0;
        if (e->v0 >= min && e->v1 != ord[j])
            marks[ord[j]] |= xp_fresh_since(p, alloc_of, ord[j], latest[entry[j]]) ? XP_RED_FRESH
                                                                                    : XP_RED_REPEAT;
        latest[entry[j]] = p->copies[ord[j]].start_ns;
    }
    free(latest);
    free(entry);
    xp_map_free(&groups);
    return 0;
}

static bool xp_redundant(uint8_t m)
{
    return (m & (XP_RED_SAME_DST | XP_RED_REPEAT)) != 0;
}

/* Per site, which of the two rules tells its re-uploads: a copy is
 * redundant when the device still had its content by either test, else a
 * fresh re-upload; a site with both (PyTorch's allocator hands the same
 * tensor's upload a new segment now and then) is one problem, told by the
 * rule of most of its copies (redundant-upload on a tie).  fresh_site[k]
 * says it for site k of sites, which gets every marked copy. */
static int xp_site_verdicts(const struct xp_process *p, const uint8_t *marks, struct xp_sites *sites,
                            bool **fresh_site)
{
    for (size_t i = 0; i < p->n_copies; i++)
        if (marks[i] & (XP_RED_SAME_DST | XP_RED_REPEAT | XP_RED_FRESH)) {
            struct xp_site_sum *s = xp_sites_add(sites, p->copies[i].cs->stack_id, 0, 0);
            if (!s)
                return -1;
            s->aux += xp_redundant(marks[i]);
        }
    *fresh_site = calloc(sites->n ? sites->n : 1, sizeof **fresh_site);
    if (!*fresh_site)
        return -1;
    for (size_t k = 0; k < sites->n; k++)
        (*fresh_site)[k] = sites->v[k].aux * 2 < sites->v[k].count;
    return 0;
}

static void xp_redundant_process(struct xp_report *r, const struct xp_process *p, bool fresh)
{
    size_t n;
    uint32_t *ord = xp_copies_in_time(p, xp_upload_known, &n);
    if (n < 2) {
        free(ord);
        return;
    }
    uint8_t *marks = calloc(p->n_copies, 1);
    uint32_t *group = calloc(p->n_copies, sizeof *group);
    uint32_t *alloc_of = calloc(p->n_copies, sizeof *alloc_of);
    struct xp_lifetimes L = {0};
    struct xp_sites sites, verdict;
    xp_sites_init(&sites);
    xp_sites_init(&verdict);
    bool *fresh_site = NULL;
    /* Per site: count, bytes, time of reported copies; aux the same-dst
     * ones; repeats and max_repeats alongside. */
    uint64_t *repeats = NULL, *max_group = NULL;
    if (!ord || !marks || !group || !alloc_of || xp_lifetimes_init(&L, p) != 0)
        goto out;
    for (size_t j = 0; j < n; j++)
        alloc_of[ord[j]] = xp_alloc_at(&L, p->copies[ord[j]].dst, p->copies[ord[j]].start_ns);
    if (xp_mark_same_dst(p, ord, n, alloc_of, marks) != 0 ||
        xp_mark_repeats(p, ord, n, r->th.redundant_min_repeats, alloc_of, marks, group) != 0 ||
        xp_site_verdicts(p, marks, &verdict, &fresh_site) != 0)
        goto out;
    for (size_t i = 0; i < p->n_copies; i++) {
        size_t v = xp_sites_lookup(&verdict, p->copies[i].cs->stack_id);
        if (!marks[i] || v == XP_NO_SITE || fresh_site[v] != fresh || p->copies[i].claimed)
            continue;
        const struct xp_copy *c = &p->copies[i];
        struct xp_site_sum *s = xp_sites_add(&sites, c->cs->stack_id, c->bytes, c->dur_ns);
        if (!s)
            goto out;
        s->aux += (marks[i] & XP_RED_SAME_DST) != 0;
        xp_claim(r, p, i);   /* every site with a reported copy gets its finding below */
    }
    repeats = calloc(sites.n ? sites.n : 1, sizeof *repeats);
    max_group = calloc(sites.n ? sites.n : 1, sizeof *max_group);
    if (!repeats || !max_group)
        goto out;
    for (size_t i = 0; i < p->n_copies; i++) {
        size_t k = xp_sites_lookup(&sites, p->copies[i].cs->stack_id);
        if (!marks[i] || k == XP_NO_SITE)
            continue;
        repeats[k] += (marks[i] & XP_RED_REPEAT) != 0;
        if (group[i] > max_group[k])
            max_group[k] = group[i];
    }
    for (size_t k = 0; k < sites.n; k++) {
        const struct xp_site_sum *s = &sites.v[k];
        if (fresh) {
            struct xp_finding *f = xp_report_add(
                r, "reupload-fresh", XP_SEV_WARNING, p, s->stack_id, s->count, s->bytes, s->time_ns,
                xp_fix_fresh, xp_fix_fresh_pytorch,
                "%llu uploads sent again, into a newly allocated buffer, content this site had "
                "uploaded before (%s, %s)",
                (unsigned long long)s->count, xp_bytes_str(s->bytes).s, xp_ns_str(s->time_ns).s);
            xp_finding_num(f, "max_uploads_of_one_content", (int64_t)max_group[k]);
            continue;
        }
        struct xp_finding *f = xp_report_add(
            r, "redundant-upload", XP_SEV_WARNING, p, s->stack_id, s->count, s->bytes, s->time_ns, xp_fix,
            xp_fix_pytorch, "%llu uploads sent bytes the device already had (%s wasted, %s)",
            (unsigned long long)s->count, xp_bytes_str(s->bytes).s, xp_ns_str(s->time_ns).s);
        xp_finding_num(f, "same_dst_no_kernel", (int64_t)s->aux);
        xp_finding_num(f, "site_repeats", (int64_t)repeats[k]);
        xp_finding_num(f, "max_uploads_of_one_content", (int64_t)max_group[k]);
    }
out:
    free(L.by_ptr);
    free(fresh_site);
    xp_sites_free(&verdict);
    free(repeats);
    free(max_group);
    free(ord);
    free(marks);
    free(group);
    free(alloc_of);
    xp_sites_free(&sites);
}

void xp_rule_redundant_upload(struct xp_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++)
        xp_redundant_process(r, &r->procs[i], false);
}

void xp_rule_reupload_fresh(struct xp_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++)
        xp_redundant_process(r, &r->procs[i], true);
}
