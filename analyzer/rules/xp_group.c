/* xp_group.c: per-site accumulation, grouping by site and number formatting for the rules. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xp_group.h"

void xp_sites_init(struct xp_sites *s)
{
    *s = (struct xp_sites){.last = XP_NO_SITE};
}

void xp_sites_free(struct xp_sites *s)
{
    free(s->v);
    free(s->slot);
    xp_sites_init(s);
}

void xp_sites_clear(struct xp_sites *s)
{
    s->n = 0;
    if (s->slot)
        memset(s->slot, 0, s->nslot * sizeof *s->slot);
    s->last = XP_NO_SITE;
}

static size_t xp_sites_hash(uint32_t id, size_t mask)
{
    /* Fibonacci hashing: stack ids are small consecutive integers. */
    return (size_t)((id * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & mask;
}

static int xp_sites_rehash(struct xp_sites *s)
{
    size_t nslot = s->nslot ? s->nslot * 2 : 64;
    size_t *slot = calloc(nslot, sizeof *slot);
    if (!slot)
        return -1;
    for (size_t i = 0; i < s->n; i++) {
        size_t h = xp_sites_hash(s->v[i].stack_id, nslot - 1);
        while (slot[h])
            h = (h + 1) & (nslot - 1);
        slot[h] = i + 1;
    }
    free(s->slot);
    s->slot = slot;
    s->nslot = nslot;
    return 0;
}

size_t xp_sites_lookup(const struct xp_sites *s, uint32_t stack_id)
{
    if (!s->nslot)
        return XP_NO_SITE;
    size_t mask = s->nslot - 1;
    for (size_t h = xp_sites_hash(stack_id, mask); s->slot[h]; h = (h + 1) & mask)
        if (s->v[s->slot[h] - 1].stack_id == stack_id)
            return s->slot[h] - 1;
    return XP_NO_SITE;
}

size_t xp_sites_find(struct xp_sites *s, uint32_t stack_id)
{
    if (s->last != XP_NO_SITE && s->last_id == stack_id)
        return s->last;
    /* Keep the table at most half full so probes stay short. */
    if ((s->n + 1) * 2 > s->nslot && xp_sites_rehash(s) != 0)
        return XP_NO_SITE;
    size_t mask = s->nslot - 1, h = xp_sites_hash(stack_id, mask);
    while (s->slot[h]) {
        size_t i = s->slot[h] - 1;
        if (s->v[i].stack_id == stack_id) {
            s->last_id = stack_id;
            s->last = i;
            return i;
        }
        h = (h + 1) & mask;
    }
    void *v = s->v;
    if (xp_grow(&v, &s->cap, s->n + 1, sizeof *s->v) != 0)
        return XP_NO_SITE;
    s->v = v;
    s->v[s->n] = (struct xp_site_sum){.stack_id = stack_id};
    s->slot[h] = s->n + 1;
    s->last_id = stack_id;
    s->last = s->n;
    return s->n++;
}

struct xp_site_sum *xp_sites_add(struct xp_sites *s, uint32_t stack_id, uint64_t bytes, int64_t dur_ns)
{
    size_t i = xp_sites_find(s, stack_id);
    if (i == XP_NO_SITE)
        return NULL;
    struct xp_site_sum *site = &s->v[i];
    site->count++;
    site->bytes += bytes;
    site->time_ns = xp_add_sat(site->time_ns, xp_nonneg(dur_ns));
    return site;
}

int xp_sites_of_copies(struct xp_sites *s, const struct xp_process *p, bool with_wait,
                       bool (*keep)(const struct xp_copy *c, const struct xp_thresholds *th),
                       const struct xp_thresholds *th, size_t *site_of)
{
    for (size_t i = 0; i < p->n_copies; i++) {
        const struct xp_copy *c = &p->copies[i];
        if (site_of)
            site_of[i] = XP_NO_SITE;
        if (!keep(c, th))
            continue;
        int64_t held = c->dur_ns + (with_wait ? xp_copy_wait(p, c) : 0);
        struct xp_site_sum *site = xp_sites_add(s, c->cs->stack_id, c->bytes, held);
        if (!site)
            return -1;
        site->aux |= xp_dir_bit(c->cs->direction);
        if (site_of)
            site_of[i] = (size_t)(site - s->v);
    }
    return 0;
}

int xp_sites_bucket(size_t nsites, const size_t *site_of, size_t nitems, size_t **start_out,
                    size_t **order_out)
{
    size_t *start = calloc(nsites + 1, sizeof *start);
    if (!start)
        return -1;
    for (size_t i = 0; i < nitems; i++)
        if (site_of[i] < nsites)
            start[site_of[i] + 1]++;
    for (size_t k = 0; k < nsites; k++)
        start[k + 1] += start[k];
    size_t *order = malloc((start[nsites] ? start[nsites] : 1) * sizeof *order);
    size_t *fill = malloc((nsites ? nsites : 1) * sizeof *fill);
    if (!order || !fill) {
        free(start);
        free(order);
        free(fill);
        return -1;
    }
    memcpy(fill, start, nsites * sizeof *fill);
    for (size_t i = 0; i < nitems; i++)
        if (site_of[i] < nsites)
            order[fill[site_of[i]]++] = i;
    free(fill);
    *start_out = start;
    *order_out = order;
    return 0;
}

struct xp_numstr xp_bytes_str(uint64_t bytes)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    struct xp_numstr out;
    if (bytes < 1024) {
        snprintf(out.s, sizeof out.s, "%llu B", (unsigned long long)bytes);
        return out;
    }
    double v = (double)bytes / 1024;
    size_t u = 0;
    while (v >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
        v /= 1024;
        u++;
    }
    snprintf(out.s, sizeof out.s, v < 10 ? "%.2f %s" : v < 100 ? "%.1f %s" : "%.0f %s", v, units[u]);
    return out;
}

struct xp_numstr xp_ns_str(int64_t ns)
{
    struct xp_numstr out;
    double v = (double)xp_nonneg(ns);
    const char *unit = "ns";
    if (v >= 1e9) {
        v /= 1e9;
        unit = "s";
    } else if (v >= 1e6) {
        v /= 1e6;
        unit = "ms";
    } else if (v >= 1e3) {
        v /= 1e3;
        unit = "us";
    }
    if (unit[0] == 'n')
        snprintf(out.s, sizeof out.s, "%.0f ns", v);
    else
        snprintf(out.s, sizeof out.s, v < 10 ? "%.2f %s" : v < 100 ? "%.1f %s" : "%.0f %s", v, unit);
    return out;
}

double xp_percentile_sorted(const double *sorted, size_t n, double q)
{
    double rank = q * (double)n;
    size_t k = (size_t)rank;
    /* ceil without libm; the slack keeps 0.9 * 30 (27.000000000000004) at 27,
     * as the integer ceil(9n / 10) of the documented SQL has it. */
    if (rank - (double)k > 1e-9)
        k++;
    if (k == 0)
        k = 1;
    if (k > n)
        k = n;
    return sorted[k - 1];
}

int xp_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int xp_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

const char *xp_dir_mask_name(uint64_t mask)
{
    for (unsigned d = 0; d < XP_DIR_COUNT; d++)
        if (mask == (UINT64_C(1) << d))
            return xp_dir_name((xp_direction)d);
    return "mixed";
}

void xp_map_init(struct xp_map *m)
{
    *m = (struct xp_map){0};
}

void xp_map_free(struct xp_map *m)
{
    free(m->e);
    free(m->slot);
    xp_map_init(m);
}

static size_t xp_map_hash(uint64_t k0, uint64_t k1, uint64_t k2, uint64_t k3, size_t mask)
{
    /* Multiply-xorshift mixing of each word (the murmur3 finalizer). */
    uint64_t h = 0x9E3779B97F4A7C15u;
    uint64_t k[4] = {k0, k1, k2, k3};
    for (int i = 0; i < 4; i++) {
        h ^= k[i] + 0x9E3779B97F4A7C15u + (h << 6) + (h >> 2);
        h ^= h >> 33;
        h *= 0xFF51AFD7ED558CCDu;
        h ^= h >> 33;
    }
    return (size_t)h & mask;
}

static int xp_map_grow(struct xp_map *m)
{
    size_t nslot = m->nslot ? m->nslot * 2 : 1024;
    uint32_t *slot = calloc(nslot, sizeof *slot);
    if (!slot)
        return -1;
    for (size_t i = 0; i < m->n; i++) {
        const uint64_t *k = m->e[i].k;
        size_t h = xp_map_hash(k[0], k[1], k[2], k[3], nslot - 1);
        while (slot[h])
            h = (h + 1) & (nslot - 1);
        slot[h] = (uint32_t)(i + 1);
    }
    free(m->slot);
    m->slot = slot;
    m->nslot = nslot;
    return 0;
}

static size_t xp_map_probe(const struct xp_map *m, uint64_t k0, uint64_t k1, uint64_t k2, uint64_t k3)
{
    size_t mask = m->nslot - 1;
    size_t h = xp_map_hash(k0, k1, k2, k3, mask);
    for (; m->slot[h]; h = (h + 1) & mask) {
        const uint64_t *k = m->e[m->slot[h] - 1].k;
        if (k[0] == k0 && k[1] == k1 && k[2] == k2 && k[3] == k3)
            break;
    }
    return h;
}

struct xp_map_entry *xp_map_get(struct xp_map *m, uint64_t k0, uint64_t k1, uint64_t k2, uint64_t k3,
                                bool *added)
{
    *added = false;
    if (m->nslot) {
        size_t h = xp_map_probe(m, k0, k1, k2, k3);
        if (m->slot[h])
            return &m->e[m->slot[h] - 1];
    }
    /* New: keep the table at most half full; entry indices must fit a slot. */
    if (m->n + 1 >= UINT32_MAX)
        return NULL;
    if ((m->n + 1) * 2 > m->nslot && xp_map_grow(m) != 0)
        return NULL;
    void *e = m->e;
    if (xp_grow(&e, &m->cap, m->n + 1, sizeof *m->e) != 0)
        return NULL;
    m->e = e;
    size_t h = xp_map_probe(m, k0, k1, k2, k3);
    m->e[m->n] = (struct xp_map_entry){{k0, k1, k2, k3}, 0, 0};
    m->slot[h] = (uint32_t)(m->n + 1);
    *added = true;
    return &m->e[m->n++];
}

const struct xp_map_entry *xp_map_lookup(const struct xp_map *m, uint64_t k0, uint64_t k1, uint64_t k2,
                                         uint64_t k3)
{
    if (!m->nslot)
        return NULL;
    size_t h = xp_map_probe(m, k0, k1, k2, k3);
    return m->slot[h] ? &m->e[m->slot[h] - 1] : NULL;
}

struct xp_timed {
    int64_t t;
    size_t idx;
};

static int xp_cmp_timed(const void *a, const void *b)
{
    const struct xp_timed *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

uint32_t *xp_copies_in_time(const struct xp_process *p,
                          bool (*keep)(const struct xp_process *p, const struct xp_copy *c), size_t *n)
{
    size_t count = 0;
    bool sorted = true;
    int64_t last = INT64_MIN;
    for (size_t i = 0; i < p->n_copies; i++)
        if (keep(p, &p->copies[i])) {
            count++;
            sorted = sorted && p->copies[i].start_ns >= last;
            last = p->copies[i].start_ns;
        }
    *n = count;
    uint32_t *out = count && p->n_copies <= UINT32_MAX ? malloc(count * sizeof *out) : NULL;
    if (!out)
        return NULL;
    for (size_t i = 0, j = 0; i < p->n_copies; i++)
        if (keep(p, &p->copies[i]))
            out[j++] = (uint32_t)i;
    /* Copies are stored per thread in call order; only threads' interleaving
     * needs a sort, and a single-threaded run skips it. */
    if (sorted)
        return out;
    struct xp_timed *tmp = malloc(count * sizeof *tmp);
    if (!tmp) {
        free(out);
        return NULL;
    }
    for (size_t j = 0; j < count; j++)
        tmp[j] = (struct xp_timed){p->copies[out[j]].start_ns, out[j]};
    xp_sort(tmp, count, sizeof *tmp, xp_cmp_timed);
    for (size_t j = 0; j < count; j++)
        out[j] = (uint32_t)tmp[j].idx;
    free(tmp);
    return out;
}

struct xp_live_event {
    int64_t t;
    int64_t delta;   /* + allocated, - freed */
};

static int xp_cmp_live_event(const void *a, const void *b)
{
    const struct xp_live_event *x = a, *y = b;
    if (x->t != y->t)
        return (x->t > y->t) - (x->t < y->t);
    return (x->delta > y->delta) - (x->delta < y->delta);   /* frees first at a tie */
}

int64_t xp_allocs_peak(const struct xp_alloc *allocs, const size_t *items, size_t n, bool by_bytes)
{
    if (n == 0)
        return 0;
    struct xp_live_event *ev = malloc(2 * n * sizeof *ev);
    if (!ev)
        return -1;
    size_t m = 0;
    for (size_t j = 0; j < n; j++) {
        const struct xp_alloc *a = &allocs[items ? items[j] : j];
        int64_t w = !by_bytes ? 1 : a->bytes > INT64_MAX / 4 ? INT64_MAX / 4 : (int64_t)a->bytes;
        ev[m++] = (struct xp_live_event){a->alloc_ns, w};
        if (a->free_ns >= 0)
            ev[m++] = (struct xp_live_event){a->free_ns, -w};
    }
    qsort(ev, m, sizeof *ev, xp_cmp_live_event);
    int64_t live = 0, peak = 0;
    for (size_t i = 0; i < m; i++) {
        live = xp_add_sat(live, ev[i].delta);
        if (live > peak)
            peak = live;
    }
    free(ev);
    return peak;
}
