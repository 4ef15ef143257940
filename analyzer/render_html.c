/* render_html.c: the report as one self-contained HTML page (`--format html`, docs/report.md).
 *
 * The tables (totals, findings, call sites) are written here as HTML; the
 * charts (timeline, device memory, bandwidth) are drawn by the page's script
 * (analyzer/html/report.js) from data embedded as compact JSON arrays:
 *
 *   span      ns from the run's start (earliest process start or event) to its end
 *   strings   every name, referenced by index (-1: none)
 *   procs     [{label, streams: ["0x..."]}]
 *   copies    [t, dur, bytes, dir, hostmem, blocking, proc, stream, tid, api, site,
 *              status, more_n, more_bytes, status_name]   t relative to the start;
 *              stream an index into the process's streams; more_*: copies of the
 *              same track and pixel column not drawn, summed into this one;
 *              status_name "cudaErrorInvalidValue (1)", -1 for success
 *   syncs     [t, dur, proc, tid, api, site, stream]
 *   nvtx      [t, dur, proc, tid, depth, name]   (a range never closed ends at the end)
 *   mem       [{proc, device, peak, peak_t, allocs, live_at_exit, pts: [[t, live]],
 *               oom: [[t, requested, dev_free, dev_total, detail, api, site, status]]}]
 *   frag      [{proc, message, facts: [[key, value]]}]  from fragmentation findings
 *
 * Why sample: a run of millions of copies would make a page of hundreds of
 * megabytes that no browser draws.  At most XP_HTML_MAX_COPIES copies are
 * embedded: on every track (process and stream) the largest copy of each
 * pixel column of the whole run (the others summed into it), then the
 * largest of the rest; the page says how many of how many it draws.  The
 * tables and totals always count every copy. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "xp_html.h"
#include "xp_json.h"
#include "xp_render.h"
#include "render_html_tables.h"

#define XP_HTML_MAX_COPIES 20000
#define XP_HTML_MAX_SYNCS 5000
#define XP_HTML_MAX_RANGES 5000
#define XP_HTML_MAX_COLUMNS 10000 /* buckets per track: finer than a screen, so a zoom x5 stays exact */
#define XP_HTML_MEM_BUCKETS 400   /* time buckets of a memory chart (two points each) */

/* Interned strings: every name once in the data, by index. */
struct xp_strtab {
    char **v;
    size_t n, cap;
    int64_t *slot;           /* open addressing: index + 1, 0 empty */
    size_t nslot;
};

static uint64_t xp_str_hash(const char *s)
{
    uint64_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* The index of s (copied), -1 for NULL or when out of memory (the page then
 * shows the name as absent, never a wrong one). */
static int64_t xp_str_id(struct xp_strtab *t, const char *s)
{
    if (!s)
        return -1;
    if (2 * (t->n + 1) > t->nslot) {
        size_t ns = t->nslot ? t->nslot * 2 : 1024;
        int64_t *slot = calloc(ns, sizeof *slot);
        if (!slot)
            return -1;
        for (size_t i = 0; i < t->n; i++) {
            size_t h = (size_t)(xp_str_hash(t->v[i]) & (ns - 1));
            while (slot[h])
                h = (h + 1) & (ns - 1);
            slot[h] = (int64_t)i + 1;
        }
        free(t->slot);
        t->slot = slot;
        t->nslot = ns;
    }
    size_t h = (size_t)(xp_str_hash(s) & (t->nslot - 1));
    while (t->slot[h]) {
        if (strcmp(t->v[t->slot[h] - 1], s) == 0)
            return t->slot[h] - 1;
        h = (h + 1) & (t->nslot - 1);
    }
    if (xp_grow(&t->v, &t->cap, t->n + 1, sizeof *t->v) != 0)
        return -1;
    if (!(t->v[t->n] = strdup(s)))
        return -1;
    t->slot[h] = (int64_t)t->n + 1;
    return (int64_t)t->n++;
}

static void xp_strtab_free(struct xp_strtab *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i]);
    free(t->v);
    free(t->slot);
}

/* Per process: its streams (sorted, distinct) and the names of its apis and
 * call sites, looked up once each rather than once per copy. */
struct xp_hproc {
    uint64_t *streams;
    size_t n_streams;
    int64_t *api_id;         /* per api index, -2 not yet looked up */
    int64_t *site_id;        /* per stack position */
};

static int xp_u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int xp_i64_desc(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x > y ? -1 : x < y;
}

static size_t xp_stream_index(const struct xp_hproc *h, uint64_t stream)
{
    const uint64_t *s = bsearch(&stream, h->streams, h->n_streams, sizeof stream, xp_u64_cmp);
    return s ? (size_t)(s - h->streams) : 0;
}

static int64_t xp_api_id(struct xp_strtab *t, const struct xp_process *p, struct xp_hproc *h, uint32_t api)
{
    if (api >= p->n_api)
        return -1;
    if (h->api_id[api] == -2)
        h->api_id[api] = xp_str_id(t, p->api_names[api]);
    return h->api_id[api];
}

/* The call site: its top user frame (the innermost non-internal one
 * outside the frameworks). */
static int64_t xp_site_id(struct xp_strtab *t, const struct xp_process *p, struct xp_hproc *h,
                          uint32_t stack_id)
{
    const struct xp_stack *st = xp_site_stack(p, stack_id);
    if (!st || !st->nframes)
        return -1;
    size_t k = (size_t)(st - p->stacks);
    if (h->site_id[k] == -2) {
        char buf[1024];
        h->site_id[k] = xp_str_id(t, xp_fmt_site(st, buf, sizeof buf));
    }
    return h->site_id[k];
}

/* The value below which items are left out so that at most budget remain:
 * items with a value > the result are kept; -1 keeps all.  vals is sorted
 * (destroyed). */
static int64_t xp_keep_above(int64_t *vals, size_t n, size_t budget)
{
    if (n <= budget)
        return -1;
    xp_sort(vals, n, sizeof *vals, xp_i64_desc);
    return vals[budget];
}

/* What the page draws of the copies, decided before writing. */
struct xp_hsample {
    size_t total, drawn, bucketed;
    uint8_t *keep;           /* per copy (global index), NULL: keep all */
    size_t *best;            /* per bucket: global index + 1 of its drawn copy, 0 none */
    uint64_t *more_n, *more_bytes; /* per bucket: copies left out, summed */
    size_t cols, ntracks;
    size_t *tbase, *gbase;   /* per process: first track, first global copy index */
    int64_t min_bytes;       /* kept besides the buckets: bytes > this; -1 all */
};

static size_t xp_bucket_of(const struct xp_hsample *s, const struct xp_hproc *h, size_t pi,
                           const struct xp_copy *c, int64_t t0, int64_t span)
{
    size_t track = s->tbase[pi] + xp_stream_index(h, c->cs->stream);
    double x = span > 0 ? (double)(c->start_ns - t0) / (double)span : 0;
    size_t col = x <= 0 ? 0 : x >= 1 ? s->cols - 1 : (size_t)(x * (double)s->cols);
    return track * s->cols + (col < s->cols ? col : s->cols - 1);
}

static int xp_sample_copies(const struct xp_report *r, struct xp_hproc *hp, int64_t t0, int64_t span,
                            struct xp_hsample *s)
{
    *s = (struct xp_hsample){.min_bytes = -1};
    s->tbase = calloc(r->n_procs + 1, sizeof *s->tbase);
    s->gbase = calloc(r->n_procs + 1, sizeof *s->gbase);
    if (!s->tbase || !s->gbase)
        return -1;
    for (size_t i = 0; i < r->n_procs; i++) {
        s->tbase[i + 1] = s->tbase[i] + hp[i].n_streams;
        s->gbase[i + 1] = s->gbase[i] + r->procs[i].n_copies;
    }
    s->ntracks = s->tbase[r->n_procs];
    s->total = s->gbase[r->n_procs];
    if (s->total <= XP_HTML_MAX_COPIES) {
        s->drawn = s->total;
        return 0;
    }
    size_t per = XP_HTML_MAX_COPIES / 2 / (s->ntracks ? s->ntracks : 1);
    s->cols = per < 1 ? 1 : per > XP_HTML_MAX_COLUMNS ? XP_HTML_MAX_COLUMNS : per;
    size_t nb = s->ntracks * s->cols;
    s->keep = calloc(s->total, 1);
    s->best = calloc(nb, sizeof *s->best);
    s->more_n = calloc(nb, sizeof *s->more_n);
    s->more_bytes = calloc(nb, sizeof *s->more_bytes);
    int64_t *rest = malloc(s->total * sizeof *rest);
    if (!s->keep || !s->best || !s->more_n || !s->more_bytes || !rest) {
        free(rest);
        return -1;
    }
    for (size_t pi = 0; pi < r->n_procs; pi++) {
        const struct xp_process *p = &r->procs[pi];
        for (size_t i = 0; i < p->n_copies; i++) {
            size_t b = xp_bucket_of(s, &hp[pi], pi, &p->copies[i], t0, span), g = s->gbase[pi] + i;
            size_t cur = s->best[b];
            if (!cur) {
                s->best[b] = g + 1;
                continue;
            }
            /* Which process owns global index cur - 1: only this one, a
             * bucket's track belongs to one process. */
            if (p->copies[i].bytes > p->copies[cur - 1 - s->gbase[pi]].bytes)
                s->best[b] = g + 1;
        }
    }
    for (size_t b = 0; b < nb; b++)
        if (s->best[b])
            s->keep[s->best[b] - 1] = 1, s->bucketed++;
    size_t n_rest = 0;
    for (size_t pi = 0; pi < r->n_procs; pi++)
        for (size_t i = 0; i < r->procs[pi].n_copies; i++)
            if (!s->keep[s->gbase[pi] + i])
                rest[n_rest++] = (int64_t)r->procs[pi].copies[i].bytes;
    size_t budget = XP_HTML_MAX_COPIES > s->bucketed ? XP_HTML_MAX_COPIES - s->bucketed : 0;
    s->min_bytes = xp_keep_above(rest, n_rest, budget);
    free(rest);
    s->drawn = s->bucketed;
    for (size_t pi = 0; pi < r->n_procs; pi++) {
        const struct xp_process *p = &r->procs[pi];
        for (size_t i = 0; i < p->n_copies; i++) {
            size_t g = s->gbase[pi] + i;
            if (s->keep[g])
                continue;
            if ((int64_t)p->copies[i].bytes > s->min_bytes) {
                s->keep[g] = 1, s->drawn++;
                continue;
            }
            size_t b = xp_bucket_of(s, &hp[pi], pi, &p->copies[i], t0, span);
            s->more_n[b]++;
            s->more_bytes[b] += p->copies[i].bytes;
        }
    }
    return 0;
}

static void xp_hsample_free(struct xp_hsample *s)
{
    free(s->keep);
    free(s->best);
    free(s->more_n);
    free(s->more_bytes);
    free(s->tbase);
    free(s->gbase);
}

/* The run's span: from the earliest process start or event to the last. */
static void xp_run_span(const struct xp_report *r, int64_t *t0, int64_t *t1)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
#define XP_SEE(a, b) do { if ((a) < lo) lo = (a); if ((b) > hi) hi = (b); } while (0)
    for (size_t pi = 0; pi < r->n_procs; pi++) {
        const struct xp_process *p = &r->procs[pi];
        if (p->start_mono_ns > 0)
            XP_SEE(p->start_mono_ns, p->start_mono_ns);
        if (p->end_mono_ns > 0)
            XP_SEE(p->end_mono_ns, p->end_mono_ns);
        for (size_t i = 0; i < p->n_copies; i++)
            XP_SEE(p->copies[i].start_ns, p->copies[i].start_ns + p->copies[i].dur_ns);
        for (size_t i = 0; i < p->n_syncs; i++)
            XP_SEE(p->syncs[i].start_ns, p->syncs[i].start_ns + p->syncs[i].dur_ns);
        for (size_t i = 0; i < p->n_allocs; i++)
            XP_SEE(p->allocs[i].alloc_ns, p->allocs[i].free_ns > 0 ? p->allocs[i].free_ns : p->allocs[i].alloc_ns);
        for (size_t i = 0; i < p->n_ranges; i++)
            XP_SEE(p->ranges[i].start_ns, p->ranges[i].end_ns > 0 ? p->ranges[i].end_ns : p->ranges[i].start_ns);
        for (size_t i = 0; i < p->n_errors; i++)
            XP_SEE(p->errors[i].start_ns, p->errors[i].start_ns);
    }
#undef XP_SEE
    if (lo > hi)
        lo = hi = 0;
    *t0 = lo;
    *t1 = hi;
}

/* ------------------------------------------------------------------ data */

static void xp_d_str(FILE *d, const char *s)
{
    if (s)
        xp_json_write_string(d, s, strlen(s));
    else
        fputs("null", d);
}

static void xp_d_copies(FILE *d, const struct xp_report *r, struct xp_hproc *hp, struct xp_strtab *st,
                        const struct xp_hsample *s, int64_t t0, int64_t span)
{
    bool first = true;
    fputs(",\n\"copies\":[", d);
    for (size_t pi = 0; pi < r->n_procs; pi++) {
        const struct xp_process *p = &r->procs[pi];
        for (size_t i = 0; i < p->n_copies; i++) {
            size_t g = s->gbase[pi] + i;
            if (s->keep && !s->keep[g])
                continue;
            const struct xp_copy *c = &p->copies[i];
            const struct xp_call_site *cs = c->cs;
            uint64_t mn = 0, mb = 0;
            if (s->keep) {
                size_t b = xp_bucket_of(s, &hp[pi], pi, c, t0, span);
                if (s->best[b] == g + 1)
                    mn = s->more_n[b], mb = s->more_bytes[b];
            }
            fprintf(d, "%s\n[%" PRId64 ",%" PRId64 ",%" PRIu64 ",%u,%u,%u,%zu,%zu,%" PRId32 ",%" PRId64
                       ",%" PRId64 ",%" PRId32 ",%" PRIu64 ",%" PRIu64 ",%" PRId64 "]",
                    first ? "" : ",", c->start_ns - t0, c->dur_ns > 0 ? c->dur_ns : 0, c->bytes,
                    cs->direction < XP_DIR_COUNT ? cs->direction : 0u, cs->host_mem < XP_HM_COUNT ? cs->host_mem : 0u,
                    cs->blocking < XP_BL_COUNT ? cs->blocking : 0u, pi, xp_stream_index(&hp[pi], cs->stream),
                    cs->tid, xp_api_id(st, p, &hp[pi], cs->api), xp_site_id(st, p, &hp[pi], cs->stack_id),
                    cs->status, mn, mb,
                    cs->status ? xp_str_id(st, xp_process_status(p, cs->api, cs->status).s) : -1);
            first = false;
        }
    }
    fputs("]", d);
}

/* Syncs (longest first kept), then NVTX ranges; returns how many of each were drawn. */
static int xp_d_syncs_ranges(FILE *d, const struct xp_report *r, struct xp_hproc *hp, struct xp_strtab *st,
                             int64_t t0, int64_t t1, size_t drawn[2], size_t total[2])
{
    total[0] = total[1] = drawn[0] = drawn[1] = 0;
    for (size_t pi = 0; pi < r->n_procs; pi++)
        total[0] += r->procs[pi].n_syncs, total[1] += r->procs[pi].n_ranges;
    int64_t *v = malloc((total[0] > total[1] ? total[0] : total[1]) * sizeof *v + 1);
    if (!v)
        return -1;
    size_t k = 0;
    for (size_t pi = 0; pi < r->n_procs; pi++)
        for (size_t i = 0; i < r->procs[pi].n_syncs; i++)
            v[k++] = r->procs[pi].syncs[i].dur_ns;
    int64_t thr = xp_keep_above(v, k, XP_HTML_MAX_SYNCS);
    bool first = true;
    char hex[32];
    fputs(",\n\"syncs\":[", d);
    for (size_t pi = 0; pi < r->n_procs; pi++) {
        const struct xp_process *p = &r->procs[pi];
        for (size_t i = 0; i < p->n_syncs; i++) {
            const struct xp_sync *y = &p->syncs[i];
            if (y->dur_ns <= thr && thr >= 0)
                continue;
            snprintf(hex, sizeof hex, "0x%" PRIx64, y->stream);
            fprintf(d, "%s\n[%" PRId64 ",%" PRId64 ",%zu,%" PRId32 ",%" PRId64 ",%" PRId64 ",%" PRId64 "]",
                    first ? "" : ",", y->start_ns - t0, y->dur_ns > 0 ? y->dur_ns : 0, pi, y->tid,
                    xp_api_id(st, p, &hp[pi], y->api), xp_site_id(st, p, &hp[pi], y->stack_id),
                    xp_str_id(st, hex));
            first = false;
            drawn[0]++;
        }
    }
    k = 0;
    for (size_t pi = 0; pi < r->n_procs; pi++)
        for (size_t i = 0; i < r->procs[pi].n_ranges; i++) {
            const struct xp_nvtx_range *n = &r->procs[pi].ranges[i];
            v[k++] = (n->end_ns >= n->start_ns ? n->end_ns : t1) - n->start_ns;
        }
    thr = xp_keep_above(v, k, XP_HTML_MAX_RANGES);
    first = true;
    fputs("],\n\"nvtx\":[", d);
    for (size_t pi = 0; pi < r->n_procs; pi++)
        for (size_t i = 0; i < r->procs[pi].n_ranges; i++) {
            const struct xp_nvtx_range *n = &r->procs[pi].ranges[i];
            int64_t dur = (n->end_ns >= n->start_ns ? n->end_ns : t1) - n->start_ns;
            if (dur <= thr && thr >= 0)
                continue;
            fprintf(d, "%s\n[%" PRId64 ",%" PRId64 ",%zu,%" PRId32 ",%" PRId32 ",%" PRId64 "]",
                    first ? "" : ",", n->start_ns - t0, dur > 0 ? dur : 0, pi, n->tid,
                    n->depth > 0 ? n->depth : 0, xp_str_id(st, n->name));
            first = false;
            drawn[1]++;
        }
    fputs("]", d);
    free(v);
    return 0;
}

struct xp_mev {
    int64_t t, delta;
};

static int xp_mev_cmp(const void *a, const void *b)
{
    const struct xp_mev *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->delta < y->delta ? -1 : x->delta > y->delta; /* frees first: no false peak */
}

static int xp_i32_cmp(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

static bool xp_is_device_alloc(const struct xp_alloc *a)
{
    return a->kind == XP_AK_DEVICE || a->kind == XP_AK_PHYSICAL || a->kind == XP_AK_ARRAY;
}

static bool xp_is_alloc_error(const struct xp_error *e)
{
    return strcmp(e->record, "alloc") == 0;
}

/* One device of one process: live memory replayed, at most
 * 2 * XP_HTML_MEM_BUCKETS points (each bucket's maximum and last value). */
static int xp_d_device(FILE *d, const struct xp_process *p, size_t pi, struct xp_hproc *h,
                       struct xp_strtab *st, int32_t dev, int64_t t0, int64_t span, bool first)
{
    size_t n = 0, allocs = 0;
    for (size_t i = 0; i < p->n_allocs; i++)
        if (xp_is_device_alloc(&p->allocs[i]) && p->allocs[i].device == dev)
            n += 1 + (p->allocs[i].free_ns >= 0);
    struct xp_mev *ev = malloc((n + 1) * sizeof *ev);
    if (!ev)
        return -1;
    n = 0;
    uint64_t live_at_exit = 0;
    for (size_t i = 0; i < p->n_allocs; i++) {
        const struct xp_alloc *a = &p->allocs[i];
        if (!xp_is_device_alloc(a) || a->device != dev)
            continue;
        allocs++;
        ev[n++] = (struct xp_mev){a->alloc_ns - t0, (int64_t)a->bytes};
        if (a->free_ns >= 0)
            ev[n++] = (struct xp_mev){a->free_ns - t0, -(int64_t)a->bytes};
        else
            live_at_exit += a->bytes;
    }
    xp_sort(ev, n, sizeof *ev, xp_mev_cmp);
    int64_t live = 0, peak = 0, peak_t = 0;
    for (size_t i = 0; i < n; i++) {
        live += ev[i].delta;
        if (live > peak)
            peak = live, peak_t = ev[i].t;
    }
    fprintf(d, "%s\n{\"proc\":%zu,\"device\":%" PRId32 ",\"peak\":%" PRId64 ",\"peak_t\":%" PRId64
               ",\"allocs\":%zu,\"live_at_exit\":%" PRIu64 ",\"pts\":[",
            first ? "" : ",", pi, dev, peak, peak_t, allocs, live_at_exit);
    live = 0;
    bool pfirst = true;
    for (size_t i = 0; i < n;) {
        /* One bucket (or, with few events, one event): its maximum, then its last value. */
        size_t b = n <= 2 * XP_HTML_MEM_BUCKETS || span <= 0
                       ? i
                       : (size_t)((double)ev[i].t / (double)span * XP_HTML_MEM_BUCKETS);
        int64_t mx = INT64_MIN, mx_t = 0, last_t = ev[i].t;
        size_t j = i;
        for (; j < n; j++) {
            size_t bj = n <= 2 * XP_HTML_MEM_BUCKETS || span <= 0
                            ? j
                            : (size_t)((double)ev[j].t / (double)span * XP_HTML_MEM_BUCKETS);
            if (bj != b)
                break;
            live += ev[j].delta;
            last_t = ev[j].t;
            if (live > mx)
                mx = live, mx_t = ev[j].t;
        }
        fprintf(d, "%s[%" PRId64 ",%" PRId64 "]", pfirst ? "" : ",", mx_t, mx);
        if (last_t > mx_t || live != mx)
            fprintf(d, ",[%" PRId64 ",%" PRId64 "]", last_t, live);
        pfirst = false;
        i = j;
    }
    free(ev);
    fputs("],\"oom\":[", d);
    pfirst = true;
    for (size_t i = 0; i < p->n_errors; i++) {
        const struct xp_error *e = &p->errors[i];
        if (!xp_is_alloc_error(e) || e->device != dev)
            continue;
        fprintf(d, "%s[%" PRId64 ",%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
                   ",%" PRId64 "]",
                pfirst ? "" : ",", e->start_ns - t0, e->requested, e->dev_free, e->dev_total,
                xp_str_id(st, e->detail), xp_api_id(st, p, h, e->api), xp_site_id(st, p, h, e->stack_id),
                xp_str_id(st, xp_process_status(p, e->api, e->status).s));
        pfirst = false;
    }
    fputs("]}", d);
    return 0;
}

static int xp_d_memory(FILE *d, const struct xp_report *r, struct xp_hproc *hp, struct xp_strtab *st,
                       int64_t t0, int64_t span)
{
    bool first = true;
    fputs(",\n\"mem\":[", d);
    for (size_t pi = 0; pi < r->n_procs; pi++) {
        const struct xp_process *p = &r->procs[pi];
        int32_t *devs = malloc((p->n_allocs + p->n_errors + 1) * sizeof *devs);
        size_t nd = 0;
        if (!devs)
            return -1;
        for (size_t i = 0; i < p->n_allocs; i++)
            if (xp_is_device_alloc(&p->allocs[i]))
                devs[nd++] = p->allocs[i].device;
        for (size_t i = 0; i < p->n_errors; i++)
            if (xp_is_alloc_error(&p->errors[i]))
                devs[nd++] = p->errors[i].device;
        xp_sort(devs, nd, sizeof *devs, xp_i32_cmp);
        for (size_t i = 0; i < nd; i++) {
            if (i && devs[i] == devs[i - 1])
                continue;
            if (xp_d_device(d, p, pi, &hp[pi], st, devs[i], t0, span, first) != 0) {
                free(devs);
                return -1;
            }
            first = false;
        }
        free(devs);
    }
    fputs("]", d);
    return 0;
}

static size_t xp_proc_of(const struct xp_report *r, const struct xp_process *p)
{
    return p && p >= r->procs && p < r->procs + r->n_procs ? (size_t)(p - r->procs) : 0;
}

static void xp_d_frag(FILE *d, const struct xp_report *r)
{
    bool first = true;
    fputs(",\n\"frag\":[", d);
    for (size_t i = 0; i < r->n_findings; i++) {
        const struct xp_finding *f = &r->findings[i];
        if (!f->rule || strcmp(f->rule, "fragmentation") != 0)
            continue;
        fprintf(d, "%s\n{\"proc\":%zu,\"message\":", first ? "" : ",", xp_proc_of(r, f->proc));
        xp_d_str(d, f->message);
        fputs(",\"facts\":[", d);
        for (size_t k = 0; k < f->n_facts; k++) {
            char num[32];
            fprintf(d, "%s[", k ? "," : "");
            xp_d_str(d, f->facts[k].key);
            fputc(',', d);
            if (f->facts[k].is_text) {
                xp_d_str(d, f->facts[k].text);
            } else {
                snprintf(num, sizeof num, "%" PRId64, f->facts[k].num);
                xp_d_str(d, num);
            }
            fputc(']', d);
        }
        fputs("]}", d);
        first = false;
    }
    fputs("]", d);
}

static void xp_h_sample_note(FILE *f, const struct xp_hsample *s, const size_t drawn[2],
                             const size_t total[2])
{
    char b[32];
    fprintf(f, "<p class=\"note\" id=\"xp-sample\" data-drawn=\"%zu\" data-total=\"%zu\">", s->drawn, s->total);
    if (!s->keep) {
        fprintf(f, "All %zu copies drawn", s->total);
    } else {
        fprintf(f, "<b>%zu of %zu copies drawn</b>: on each stream, the largest copy of each of %zu "
                   "time columns (the others summed into it: hover it)",
                s->drawn, s->total, s->cols);
        if (s->min_bytes >= 0)
            fprintf(f, ", and every copy larger than %s", xp_fmt_bytes((uint64_t)s->min_bytes, b, sizeof b));
        fputs("; the tables count every copy", f);
    }
    if (drawn[0] < total[0])
        fprintf(f, "; the longest %zu of %zu synchronizations", drawn[0], total[0]);
    if (drawn[1] < total[1])
        fprintf(f, "; the longest %zu of %zu NVTX ranges", drawn[1], total[1]);
    fputs(". Async copies are drawn for the time the call held the caller; the transfer's own time on "
          "the stream is not recorded.</p>\n",
          f);
}

int xp_render_html(FILE *f, const struct xp_summary *s)
{
    const struct xp_report *r = s->r;
    struct xp_strtab st = {0};
    struct xp_hsample smp = {0};
    struct xp_hproc *hp = calloc(r->n_procs + 1, sizeof *hp);
    int rc = -1;
    int64_t t0, t1, span;
    size_t drawn[2] = {0, 0}, total[2] = {0, 0};
    FILE *d = NULL, *mem = NULL;
    char *buf = NULL;
    size_t buflen = 0;
    int drc;
    if (!hp)
        return -1;
    for (size_t i = 0; i < r->n_procs; i++) {
        const struct xp_process *p = &r->procs[i];
        struct xp_hproc *h = &hp[i];
        h->streams = malloc((p->n_copies + 1) * sizeof *h->streams);
        h->api_id = malloc((p->n_api + 1) * sizeof *h->api_id);
        h->site_id = malloc((p->n_stacks + 1) * sizeof *h->site_id);
        if (!h->streams || !h->api_id || !h->site_id)
            goto out;
        for (size_t k = 0; k < p->n_api; k++)
            h->api_id[k] = -2;
        for (size_t k = 0; k < p->n_stacks; k++)
            h->site_id[k] = -2;
        for (size_t k = 0; k < p->n_copies; k++)
            h->streams[k] = p->copies[k].cs->stream;
        xp_sort(h->streams, p->n_copies, sizeof *h->streams, xp_u64_cmp);
        for (size_t k = 0; k < p->n_copies; k++)
            if (!h->n_streams || h->streams[h->n_streams - 1] != h->streams[k])
                h->streams[h->n_streams++] = h->streams[k];
    }
    xp_run_span(r, &t0, &t1);
    span = t1 - t0;
    if (xp_sample_copies(r, hp, t0, span, &smp) != 0)
        goto out;

    xp_html_begin(f, "xferprof report");
    xp_h_header(f, r);
    fputs("<section id=\"totals\">\n<h2>Totals</h2>\n", f);
    xp_h_totals(f, s->all);
    if (r->n_procs > 1)
        for (size_t i = 0; i < r->n_procs; i++) {
            fputs("<h3>", f);
            xp_html_text(f, r->procs[i].label);
            fputs("</h3>\n", f);
            xp_h_totals(f, &s->proc[i]);
        }
    fputs("</section>\n", f);

    /* The data is written to memory first (sync and range counts come out
     * of writing it, and the note above the chart says them), then placed
     * after the sections. */
    mem = open_memstream(&buf, &buflen);
    if (!mem || !(d = xp_html_data_open(mem))) {
        if (mem)
            fclose(mem);
        free(buf);
        goto out;
    }
    fprintf(d, "{\"v\":1,\"span\":%" PRId64 ",\"limit\":%d,\"total\":%zu,\"drawn\":%zu,\n\"procs\":[",
            span, XP_HTML_MAX_COPIES, smp.total, smp.drawn);
    for (size_t i = 0; i < r->n_procs; i++) {
        fputs(i ? ",\n{\"label\":" : "\n{\"label\":", d);
        xp_d_str(d, r->procs[i].label);
        fputs(",\"streams\":[", d);
        for (size_t k = 0; k < hp[i].n_streams; k++)
            fprintf(d, "%s\"0x%" PRIx64 "\"", k ? "," : "", hp[i].streams[k]);
        fputs("]}", d);
    }
    fputs("]", d);
    xp_d_copies(d, r, hp, &st, &smp, t0, span);
    drc = xp_d_syncs_ranges(d, r, hp, &st, t0, t1, drawn, total);
    if (drc == 0)
        drc = xp_d_memory(d, r, hp, &st, t0, span);
    xp_d_frag(d, r);
    fputs(",\n\"strings\":[", d);
    for (size_t i = 0; i < st.n; i++) {
        fputs(i ? ",\n" : "\n", d);
        xp_d_str(d, st.v[i]);
    }
    fputs("]}\n", d);
    if (xp_html_data_close(d, mem) != 0 || fclose(mem) != 0 || drc != 0) {
        free(buf);
        goto out;
    }

    fputs("<section id=\"timeline\">\n<h2>Transfer timeline</h2>\n", f);
    xp_h_sample_note(f, &smp, drawn, total);
    fputs("<div class=\"toolbar\"><button id=\"xp-zoom-in\" title=\"zoom in\">+ zoom in</button>"
          "<button id=\"xp-zoom-out\" title=\"zoom out\">&minus; zoom out</button>"
          "<button id=\"xp-zoom-reset\">whole run</button>"
          "<span class=\"note\">wheel to zoom, drag across the chart to zoom to a range, hover for details</span>"
          "<span class=\"range\" id=\"xp-range\"></span></div>\n"
          "<div id=\"xp-timeline-legend\"></div>\n<div class=\"chart\" id=\"xp-timeline\"></div>\n"
          "<p class=\"note\">Stream rows: every drawn copy, by the stream it was issued on. Thread rows: the "
          "time the host thread was held, by blocking copies (sync, async_pageable) and synchronizations.</p>\n"
          "</section>\n"
          "<section>\n<h2>Device memory</h2>\n<p class=\"note\">Live bytes of allocations of kinds device "
          "and physical, replayed per device; follows the timeline's zoom.</p>\n"
          "<div id=\"xp-memory\"></div>\n</section>\n"
          "<section>\n<h2>Bandwidth by copy size</h2>\n<div id=\"xp-bw\"></div>\n</section>\n",
          f);
    xp_h_findings(f, r);
    xp_h_sites(f, s);
    fwrite(buf, 1, buflen, f);
    free(buf);
    rc = xp_html_end(f);
out:
    xp_hsample_free(&smp);
    xp_strtab_free(&st);
    for (size_t i = 0; i < r->n_procs; i++) {
        free(hp[i].streams);
        free(hp[i].api_id);
        free(hp[i].site_id);
    }
    free(hp);
    return rc;
}
