/* xp_group.h: what the rules share: accumulating per call site (stack id),
 * grouping items by site, and the numbers of their messages. */
#ifndef XP_GROUP_H
#define XP_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xp_report.h"

#define XP_NO_SITE SIZE_MAX

/* What one call site (stack id) adds up to for a rule (the report's own
 * per-site totals are struct xp_site, xp_totals.h).  aux is the rule's own counter. */
struct xp_site_sum {
    uint32_t stack_id;
    uint64_t count, bytes;
    int64_t time_ns;
    uint64_t aux;
};

/* Sites in the order first seen (so findings come out in a stable order),
 * found by stack id through an open-addressing table. */
struct xp_sites {
    struct xp_site_sum *v;
    size_t n, cap;
    size_t *slot;           /* site index + 1; 0 empty */
    size_t nslot;           /* a power of two, or 0 before the first site */
    uint32_t last_id;       /* one-entry cache: consecutive copies mostly share a site */
    size_t last;
};

void xp_sites_init(struct xp_sites *s);
void xp_sites_free(struct xp_sites *s);
/* Forgets every site but keeps the memory, for a table used over and over. */
void xp_sites_clear(struct xp_sites *s);
/* The index of stack_id's site, added when new; XP_NO_SITE when out of memory. */
size_t xp_sites_find(struct xp_sites *s, uint32_t stack_id);
/* The index of stack_id's site, XP_NO_SITE when it has none (adds nothing). */
size_t xp_sites_lookup(const struct xp_sites *s, uint32_t stack_id);
/* Adds one item to stack_id's site; NULL when out of memory.  A negative
 * duration (clock oddities) adds nothing to the time. */
struct xp_site_sum *xp_sites_add(struct xp_sites *s, uint32_t stack_id, uint64_t bytes, int64_t dur_ns);

/* Adds every copy of p that keep() accepts to its site, each site's aux
 * collecting the directions seen (xp_dir_bit).  A copy's time is its call's
 * duration, plus, with_wait, the wait of the sync that completed it at once
 * (what a blocking copy cost its caller; not a cost of the copy's own size,
 * since the sync also waits for all the work queued before it).  site_of,
 * when not NULL, gets each copy's site index or XP_NO_SITE.  Returns 0, or
 * -1 out of memory. */
int xp_sites_of_copies(struct xp_sites *s, const struct xp_process *p, bool with_wait,
                       bool (*keep)(const struct xp_copy *c, const struct xp_thresholds *th),
                       const struct xp_thresholds *th, size_t *site_of);


/* Groups items by site with one counting sort, keeping the items' order
 * within each site: the items of site k are order[start[k] .. start[k+1]).
 * site_of[i] is item i's site index or XP_NO_SITE (left out).  Returns 0, or
 * -1 when out of memory (nothing to free then). */
int xp_sites_bucket(size_t nsites, const size_t *site_of, size_t nitems, size_t **start, size_t **order);

/* The most of allocs[items[0..n)] (of allocs[0..n) when items is NULL) live
 * at once, in bytes when by_bytes, else in allocations: a free at the same
 * moment as an allocation comes first, one never freed (free_ns < 0) stays
 * live.  -1 out of memory. */
int64_t xp_allocs_peak(const struct xp_alloc *allocs, const size_t *items, size_t n, bool by_bytes);

/* A number as people read it, for messages: "48.0 MiB", "340 ms". */
struct xp_numstr {
    char s[32];
};
struct xp_numstr xp_bytes_str(uint64_t bytes);
struct xp_numstr xp_ns_str(int64_t ns);

static inline int64_t xp_nonneg(int64_t v)
{
    return v > 0 ? v : 0;
}

/* Sums and differences of times that saturate instead of overflowing: a
 * corrupt or odd database may hold any 64-bit value. */
static inline int64_t xp_add_sat(int64_t a, int64_t b)
{
    int64_t v;
    return __builtin_add_overflow(a, b, &v) ? (b > 0 ? INT64_MAX : INT64_MIN) : v;
}
static inline int64_t xp_sub_sat(int64_t a, int64_t b)
{
    int64_t v;
    return __builtin_sub_overflow(a, b, &v) ? (b < 0 ? INT64_MAX : INT64_MIN) : v;
}

/* Nearest-rank percentile of sorted values (n > 0): the value at rank ceil(q * n). */
double xp_percentile_sorted(const double *sorted, size_t n, double q);
int xp_cmp_double(const void *a, const void *b);
int xp_cmp_u64(const void *a, const void *b);

/* The device allocations (what cudaMalloc, cuMemCreate and CUDA arrays take). */
static inline bool xp_alloc_is_device(const struct xp_alloc *a)
{
    return a->kind == XP_AK_DEVICE || a->kind == XP_AK_PHYSICAL || a->kind == XP_AK_ARRAY;
}
/* Whether an allocation was live at t: allocated by then and not yet freed.
 * An allocation whose free time is not after its allocation (clock oddities)
 * is never live, so a replay never sees it freed before it existed. */
static inline bool xp_alloc_lifetime_ok(const struct xp_alloc *a)
{
    return a->free_ns < 0 || a->free_ns > a->alloc_ns;
}
static inline bool xp_alloc_live_at(const struct xp_alloc *a, int64_t t)
{
    return xp_alloc_lifetime_ok(a) && a->alloc_ns <= t && (a->free_ns < 0 || a->free_ns > t);
}

/* A set of directions as bits in a site's aux, and its name: the one
 * direction, or "mixed". */
static inline uint64_t xp_dir_bit(uint8_t direction)
{
    return UINT64_C(1) << (direction < XP_DIR_COUNT ? direction : XP_DIR_UNKNOWN);
}
const char *xp_dir_mask_name(uint64_t mask);

/* A hash map from four 64-bit words to two of the caller's: grouping by
 * content or destination in one pass, where sorting 10 million copies would
 * cost seconds. */
struct xp_map_entry {
    uint64_t k[4];
    uint64_t v0, v1;
};
struct xp_map {
    struct xp_map_entry *e;
    size_t n, cap;
    uint32_t *slot;         /* entry index + 1; 0 empty */
    size_t nslot;           /* a power of two, or 0 */
};
void xp_map_init(struct xp_map *m);
void xp_map_free(struct xp_map *m);
/* The entry of key, added (values 0) when new, *added telling which;
 * NULL when out of memory.  The pointer is good until the next xp_map_get. */
struct xp_map_entry *xp_map_get(struct xp_map *m, uint64_t k0, uint64_t k1, uint64_t k2, uint64_t k3,
                                bool *added);
/* The entry of key, NULL when absent. */
const struct xp_map_entry *xp_map_lookup(const struct xp_map *m, uint64_t k0, uint64_t k1, uint64_t k2,
                                         uint64_t k3);

/* Marks copy i of p as reported (struct xp_copy.claimed): the rules run
 * later in xp_rules[] leave it out, so one problem of a copy gives one
 * finding, told by the rule that says most about it. */
static inline void xp_claim(struct xp_report *r, const struct xp_process *p, size_t i)
{
    r->procs[p - r->procs].copies[i].claimed = true;
}

/* Claims every copy of p whose site (site_of[i], from xp_sites_of_copies)
 * got a finding: flagged[site], or every site when flagged is NULL. */
static inline void xp_claim_sites(struct xp_report *r, const struct xp_process *p, const size_t *site_of,
                                  const bool *flagged)
{
    for (size_t i = 0; i < p->n_copies; i++)
        if (site_of[i] != XP_NO_SITE && (!flagged || flagged[site_of[i]]))
            xp_claim(r, p, i);
}

/* The indices of the copies that pass keep(), in time order (start_ns, then
 * index); *n gets their number.  NULL when out of memory (or none: *n 0).
 * 32 bits each: one per copy, held while a rule runs (a process's copies
 * are far fewer than four billion, 72 bytes each in memory). */
uint32_t *xp_copies_in_time(const struct xp_process *p,
                          bool (*keep)(const struct xp_process *p, const struct xp_copy *c), size_t *n);

/* A successful copy: a failed one moved nothing (for xp_copies_in_time). */
static inline bool xp_copy_succeeded(const struct xp_process *p, const struct xp_copy *c)
{
    (void)p;
    return c->cs->status == 0;
}

/* A successful copy whose content has a fingerprint. */
static inline bool xp_fingerprinted(const struct xp_copy *c, uint8_t direction)
{
    return c->cs->direction == direction && c->cs->status == 0 && c->fp_kind != 0;
}

/* An upload whose content is known for sure: a sampled fingerprint counts
 * only once confirmed by a full hash (copies.full_fingerprint), since a
 * change between the sampled blocks is invisible to it.  (Also a filter for
 * xp_copies_in_time.) */
static inline bool xp_upload_known(const struct xp_process *p, const struct xp_copy *c)
{
    return xp_fingerprinted(c, XP_DIR_H2D) && (c->fp_kind != 2 || xp_copy_full_fp(p, c) != 0);
}

/* The content's key of an upload xp_upload_known: the full hash when there
 * is one. */
static inline uint64_t xp_upload_content(const struct xp_process *p, const struct xp_copy *c)
{
    return c->fp_kind == 2 ? xp_copy_full_fp(p, c) : c->fingerprint;
}


#endif
