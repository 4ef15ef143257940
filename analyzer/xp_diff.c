/* xp_diff.c: matches the call sites of two runs and classifies every change (xferprof diff). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xp_diff.h"
#include "xp_diff_int.h"

const char *xp_diff_class_name(enum xp_diff_class c)
{
    static const char *const names[XP_DC_COUNT] = {"regressed", "new", "gone", "improved",
                                                   "unchanged"};
    return (unsigned)c < XP_DC_COUNT ? names[c] : "unchanged";
}

const char *xp_diff_match_name(enum xp_diff_match m)
{
    switch (m) {
    case XP_DM_EXACT: return "exact";
    case XP_DM_APPROXIMATE: return "approximate";
    default: return "none";
    }
}

const char *xp_diff_by_name(enum xp_diff_by b)
{
    switch (b) {
    case XP_DIFF_BY_FUNCTION: return "function";
    case XP_DIFF_BY_NVTX: return "nvtx";
    default: return "site";
    }
}

int xp_diff_by_parse(const char *s, enum xp_diff_by *out)
{
    static const enum xp_diff_by all[] = {XP_DIFF_BY_SITE, XP_DIFF_BY_FUNCTION, XP_DIFF_BY_NVTX};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(s, xp_diff_by_name(all[i])) == 0) {
            *out = all[i];
            return 0;
        }
    return -1;
}

int xp_diff_fail_on_parse(const char *s, enum xp_diff_fail_on *out)
{
    if (strcmp(s, "regression") == 0)
        *out = XP_DIFF_FAIL_REGRESSION;
    else if (strcmp(s, "any") == 0)
        *out = XP_DIFF_FAIL_ANY;
    else
        return -1;
    return 0;
}

void xp_diff_options_default(struct xp_diff_options *o)
{
    *o = (struct xp_diff_options){.threshold_pct = XP_DIFF_DEFAULT_THRESHOLD,
                                  .by = XP_DIFF_BY_SITE, .fail_on = XP_DIFF_FAIL_NEVER};
}

bool xp_diff_change_pct(double base, double new_, double *pct)
{
    if (base == 0) {
        *pct = 0;
        return new_ == 0; /* 0 -> 0 is no change; 0 -> x has no finite percentage */
    }
    *pct = (new_ - base) / fabs(base) * 100.0;
    return true;
}

/* ---- keys -------------------------------------------------------------- */

/* Paths are compared by their last component: the same program built in
 * another folder, or a library from another prefix, is the same site. */
static const char *xp_basename0(const char *s)
{
    if (!s)
        return NULL;
    const char *slash = strrchr(s, '/');
    return slash ? slash + 1 : s;
}

int xp_diff_strcmp0(const char *a, const char *b)
{
    if (!a || !b)
        return (a != NULL) - (b != NULL);
    return strcmp(a, b);
}

static int xp_u64cmp(uint64_t a, uint64_t b)
{
    return (a > b) - (a < b);
}

/* Exact: frames with a function compare (module, function, file, line);
 * frames without one (module, offset), which only ever match exactly.
 * Approximate ignores file and line of frames that have a function. */
static int xp_frame_cmp(const struct xp_diff_frame *a, const struct xp_diff_frame *b, bool exact)
{
    int c;
    if ((a->function != NULL) != (b->function != NULL))
        return a->function ? 1 : -1;
    if ((c = xp_diff_strcmp0(a->module, b->module)) != 0)
        return c;
    if (!a->function)
        return xp_u64cmp(a->offset, b->offset);
    if ((c = strcmp(a->function, b->function)) != 0 || !exact)
        return c;
    if ((c = xp_diff_strcmp0(a->file, b->file)) != 0)
        return c;
    return (a->line > b->line) - (a->line < b->line);
}

int xp_diff_frames_cmp(const struct xp_diff_frame *a, size_t na, const struct xp_diff_frame *b,
                       size_t nb, bool exact)
{
    for (size_t i = 0; i < na && i < nb; i++) {
        int c = xp_frame_cmp(&a[i], &b[i], exact);
        if (c)
            return c;
    }
    return xp_u64cmp(na, nb);
}

/* A site key on one side while aggregating. */
struct xp_entry {
    struct xp_diff_frame *frames; size_t n_frames;
    const char *range;
    struct xp_diff_stats st;
    bool matched;
    size_t partner;             /* index on the other side when matched */
    enum xp_diff_match match;
};

static int xp_entry_cmp(const struct xp_entry *a, const struct xp_entry *b, bool exact)
{
    int c = xp_diff_strcmp0(a->range, b->range);
    return c ? c : xp_diff_frames_cmp(a->frames, a->n_frames, b->frames, b->n_frames, exact);
}

static uint64_t xp_hash_str(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return (h ^ 0xff) * 0x100000001b3ull;
}

static uint64_t xp_hash_u64(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++, v >>= 8)
        h = (h ^ (v & 0xff)) * 0x100000001b3ull;
    return h;
}

/* Hash of the exact key (consistent with xp_entry_cmp(..., true)). */
static uint64_t xp_key_hash(const struct xp_diff_frame *f, size_t n, const char *range)
{
    uint64_t h = xp_hash_str(0xcbf29ce484222325ull, range);
    for (size_t i = 0; i < n; i++) {
        h = xp_hash_str(h, f[i].module);
        if (f[i].function) {
            h = xp_hash_str(h, f[i].function);
            h = xp_hash_str(h, f[i].file);
            h = xp_hash_u64(h, (uint64_t)(int64_t)f[i].line);
        } else {
            h = xp_hash_u64(h, f[i].offset);
        }
    }
    return h;
}

/* One side's distinct keys: an array plus an open-addressing index. */
struct xp_side {
    struct xp_entry *e; size_t n, cap;
    size_t *slot; size_t nslot; /* entry index + 1, 0 empty */
    bool oom;
};

static int xp_side_rehash(struct xp_side *s)
{
    size_t nslot = s->nslot ? s->nslot * 2 : 64;
    size_t *slot = calloc(nslot, sizeof *slot);
    if (!slot)
        return -1;
    for (size_t i = 0; i < s->n; i++) {
        uint64_t h = xp_key_hash(s->e[i].frames, s->e[i].n_frames, s->e[i].range);
        size_t j = (size_t)h & (nslot - 1);
        while (slot[j])
            j = (j + 1) & (nslot - 1);
        slot[j] = i + 1;
    }
    free(s->slot);
    s->slot = slot;
    s->nslot = nslot;
    return 0;
}

/* The entry for key, added when new (the frames are copied).  NULL when out
 * of memory. */
static struct xp_entry *xp_side_get(struct xp_side *s, const struct xp_diff_frame *f, size_t n,
                                    const char *range)
{
    if ((s->n + 1) * 2 > s->nslot && xp_side_rehash(s) != 0)
        return NULL;
    struct xp_entry probe = {.frames = (struct xp_diff_frame *)f, .n_frames = n, .range = range};
    size_t j = (size_t)xp_key_hash(f, n, range) & (s->nslot - 1);
    for (; s->slot[j]; j = (j + 1) & (s->nslot - 1))
        if (xp_entry_cmp(&s->e[s->slot[j] - 1], &probe, true) == 0)
            return &s->e[s->slot[j] - 1];
    if (xp_grow(&s->e, &s->cap, s->n + 1, sizeof *s->e) != 0)
        return NULL;
    struct xp_diff_frame *copy = NULL;
    if (n) {
        copy = malloc(n * sizeof *copy);
        if (!copy)
            return NULL;
        memcpy(copy, f, n * sizeof *copy);
    }
    struct xp_entry *e = &s->e[s->n];
    *e = (struct xp_entry){.frames = copy, .n_frames = n, .range = range,
                           .st = {.instances = 1}, .match = XP_DM_NONE};
    s->slot[j] = ++s->n;
    return e;
}

static void xp_side_free(struct xp_side *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->e[i].frames);
        free(s->e[i].st.apis);
    }
    free(s->e);
    free(s->slot);
    *s = (struct xp_side){0};
}

/* The key frames of a stack: every non-internal frame (the model already
 * leaves internal ones out; the flag is checked again so that a loader that
 * keeps them cannot change matching), or only the innermost for --by
 * function.  Writes at most cap frames into out; returns how many. */
static size_t xp_stack_key(const struct xp_process *p, uint32_t stack_id, bool innermost_function,
                           struct xp_diff_frame *out, size_t cap)
{
    const struct xp_stack *st = stack_id != XP_NONE_ID ? xp_process_stack(p, stack_id) : NULL;
    size_t n = 0;
    /* From the top user frame, as the report names sites. */
    for (uint32_t i = st ? st->top : 0; st && i < st->nframes && n < cap; i++) {
        const struct xp_frame *fr = &st->frames[i];
        if (fr->internal)
            continue;
        out[n] = (struct xp_diff_frame){
            .module = xp_basename0(fr->module), .function = fr->function,
            .demangled = fr->function ? xp_frame_name(fr) : NULL,
            .file = fr->function ? xp_basename0(fr->file) : NULL,
            .line = fr->function ? fr->line : 0, .inlined = fr->inlined, .offset = fr->offset,
            .addr = fr->addr};
        if (innermost_function) {
            out[n].file = NULL;
            out[n].line = 0;
            return 1;
        }
        n++;
    }
    return n;
}

/* The frames of one stack, allocated (NULL with *n 0 when there are none or
 * memory ran out: the key is then the empty one, "(no stack)"). */
struct xp_diff_frame *xp_diff_stack_key_alloc(const struct xp_process *p, uint32_t stack_id,
                                              bool innermost, size_t *n)
{
    const struct xp_stack *st = stack_id != XP_NONE_ID ? xp_process_stack(p, stack_id) : NULL;
    *n = 0;
    if (!st || st->nframes == 0)
        return NULL;
    struct xp_diff_frame *f = malloc(st->nframes * sizeof *f);
    if (f)
        *n = xp_stack_key(p, stack_id, innermost, f, st->nframes);
    return f;
}

static const struct xp_nvtx_range *xp_find_range(const struct xp_process *p, int64_t id)
{
    /* Loaders keep ranges in id order; fall back to a scan if one did not. */
    size_t lo = 0, hi = p->n_ranges;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->ranges[mid].id == id)
            return &p->ranges[mid];
        if (p->ranges[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = 0; i < p->n_ranges; i++)
        if (p->ranges[i].id == id)
            return &p->ranges[i];
    return NULL;
}

/* The innermost push range holding a copy, NULL for none.  Start/end ranges
 * are not thread-bound, so they do not say which step a copy belongs to. */
static const char *xp_copy_range(const struct xp_process *p, int64_t id)
{
    for (size_t guard = 0; id != XP_NONE_ID && guard <= p->n_ranges; guard++) {
        const struct xp_nvtx_range *r = xp_find_range(p, id);
        if (!r)
            return NULL;
        if (r->push && r->name)
            return r->name;
        id = r->parent_id;
    }
    return NULL;
}

#define XP_NO_RANGE "(no range)"

static int xp_stats_add_api(struct xp_diff_stats *st, const char *api)
{
    for (size_t i = 0; i < st->n_apis; i++)
        if (strcmp(st->apis[i], api) == 0)
            return 0;
    const char **grown = realloc(st->apis, (st->n_apis + 1) * sizeof *grown);
    if (!grown)
        return -1;
    st->apis = grown;
    st->apis[st->n_apis++] = api;
    return 0;
}

static void xp_stats_add_copy(struct xp_diff_stats *st, const struct xp_process *p,
                              const struct xp_copy *c, bool *oom)
{
    int64_t dur = c->dur_ns > 0 ? c->dur_ns : 0;
    st->copies += 1;
    st->bytes += (double)c->bytes;
    st->time_ns += (double)dur;
    if (c->cs->blocking == XP_BL_SYNC || c->cs->blocking == XP_BL_ASYNC_PAGEABLE) {
        st->blocked_ns += (double)dur;
        xp_welford_add(&st->blocked, (double)dur);
    }
    if (c->cs->host_mem < XP_HM_COUNT)
        st->host_mem |= 1u << c->cs->host_mem;
    if (c->cs->blocking < XP_BL_COUNT)
        st->blocking |= 1u << c->cs->blocking;
    const char *api = c->cs->api < p->n_api && p->api_names[c->cs->api] ? p->api_names[c->cs->api] : "unknown";
    if (xp_stats_add_api(st, api) != 0)
        *oom = true;
}

/* Aggregates every copy of every process of a side under its key. */
static int xp_side_build(struct xp_side *s, const struct xp_report *r, enum xp_diff_by by)
{
    for (size_t pi = 0; pi < r->n_procs; pi++) {
        const struct xp_process *p = &r->procs[pi];
        /* Stacks repeat: keep each stack's entry index, looked up once. */
        size_t *memo = p->n_stacks ? calloc(p->n_stacks, sizeof *memo) : NULL;
        if (p->n_stacks && !memo)
            return -1;
        for (size_t ci = 0; ci < p->n_copies; ci++) {
            const struct xp_copy *c = &p->copies[ci];
            struct xp_entry *e = NULL;
            if (by == XP_DIFF_BY_NVTX) {
                const char *name = xp_copy_range(p, c->nvtx_range);
                e = xp_side_get(s, NULL, 0, name ? name : XP_NO_RANGE);
            } else {
                const struct xp_stack *st =
                    c->cs->stack_id != XP_NONE_ID ? xp_process_stack(p, c->cs->stack_id) : NULL;
                size_t si = st ? (size_t)(st - p->stacks) : 0;
                if (st && memo[si]) {
                    e = &s->e[memo[si] - 1];
                } else {
                    size_t n = 0;
                    struct xp_diff_frame *f =
                        xp_diff_stack_key_alloc(p, c->cs->stack_id, by == XP_DIFF_BY_FUNCTION, &n);
                    e = xp_side_get(s, f, n, NULL);
                    free(f);
                    if (e && st)
                        memo[si] = (size_t)(e - s->e) + 1;
                }
            }
            if (!e) {
                free(memo);
                return -1;
            }
            xp_stats_add_copy(&e->st, p, c, &s->oom);
        }
        free(memo);
    }
    if (by == XP_DIFF_BY_NVTX) {
        /* Per range instance: a run of 8 steps against one of 4 compares
         * what one step does, not how many steps ran. */
        for (size_t i = 0; i < s->n; i++) {
            struct xp_entry *e = &s->e[i];
            if (strcmp(e->range, XP_NO_RANGE) == 0)
                continue;
            uint64_t inst = 0;
            for (size_t pi = 0; pi < r->n_procs; pi++)
                for (size_t k = 0; k < r->procs[pi].n_ranges; k++) {
                    const struct xp_nvtx_range *rg = &r->procs[pi].ranges[k];
                    inst += rg->push && rg->name && strcmp(rg->name, e->range) == 0;
                }
            if (inst > 1) {
                e->st.instances = inst;
                e->st.copies /= (double)inst;
                e->st.bytes /= (double)inst;
                e->st.time_ns /= (double)inst;
                e->st.blocked_ns /= (double)inst;
            }
        }
    }
    return s->oom ? -1 : 0;
}

/* ---- matching ---------------------------------------------------------- */

/* qsort has no context argument: the comparison mode is set around the call
 * (single-threaded; only xp_match_pass touches it). */
static bool xp_sort_exact;
static const struct xp_entry *xp_sort_base;

static int xp_index_cmp(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int c = xp_entry_cmp(&xp_sort_base[i], &xp_sort_base[j], xp_sort_exact);
    return c ? c : xp_u64cmp(i, j); /* stable: the earlier entry pairs first */
}

static int xp_sorted_unmatched(const struct xp_side *s, bool exact, size_t **out, size_t *n)
{
    *n = 0;
    *out = malloc((s->n ? s->n : 1) * sizeof **out);
    if (!*out)
        return -1;
    for (size_t i = 0; i < s->n; i++)
        if (!s->e[i].matched)
            (*out)[(*n)++] = i;
    xp_sort_exact = exact;
    xp_sort_base = s->e;
    xp_sort(*out, *n, sizeof **out, xp_index_cmp);
    return 0;
}

/* Pairs the unmatched entries of a and b whose keys are equal in this mode,
 * by a merge over both sides sorted by key. */
static int xp_match_pass(struct xp_side *a, struct xp_side *b, bool exact)
{
    size_t *ia, *ib, na, nb;
    if (xp_sorted_unmatched(a, exact, &ia, &na) != 0)
        return -1;
    if (xp_sorted_unmatched(b, exact, &ib, &nb) != 0) {
        free(ia);
        return -1;
    }
    size_t i = 0, j = 0;
    while (i < na && j < nb) {
        struct xp_entry *x = &a->e[ia[i]], *y = &b->e[ib[j]];
        int c = xp_entry_cmp(x, y, exact);
        if (c < 0) {
            i++;
        } else if (c > 0) {
            j++;
        } else {
            x->matched = y->matched = true;
            x->partner = ib[j];
            y->partner = ia[i];
            x->match = y->match = exact ? XP_DM_EXACT : XP_DM_APPROXIMATE;
            i++, j++;
        }
    }
    free(ia);
    free(ib);
    return 0;
}

/* ---- classification ---------------------------------------------------- */

void xp_diff_reason(struct xp_diff_site *s, const char *fmt, ...)
{
    if (s->n_reasons >= XP_DIFF_MAX_REASONS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->reasons[s->n_reasons++], sizeof s->reasons[0], fmt, ap);
    va_end(ap);
}

/* -1 improved, 1 regressed, 0 neither, for a value where more is worse. */
int xp_diff_judge(double base, double new_, double floor, double pct_threshold)
{
    double change = new_ - base, pct;
    if (fabs(change) < floor || change == 0)
        return 0;
    if (xp_diff_change_pct(base, new_, &pct) && fabs(pct) < pct_threshold)
        return 0;
    return change > 0 ? 1 : -1;
}

static void xp_reason_change(struct xp_diff_site *s, const char *what, double base, double new_)
{
    double pct;
    if (xp_diff_change_pct(base, new_, &pct))
        xp_diff_reason(s, "%s %+.0f%%", what, pct);
    else
        xp_diff_reason(s, "%s up from 0", what);
}

#define XP_BLOCKING_BITS ((1u << XP_BL_SYNC) | (1u << XP_BL_ASYNC_PAGEABLE))

/* The variance of a site's blocked time on one side (per range instance
 * with --by nvtx, where the sums were divided by the instances). */
static double xp_blocked_var(const struct xp_diff_stats *st, double cv)
{
    double inst = st->instances > 1 ? (double)st->instances : 1;
    return xp_welford_sum_var(&st->blocked, cv) / (inst * inst);
}

/* Classifies a matched site from its numbers (findings come later); cv_base
 * and cv_new are the runs' own relative spread of a copy's blocked time. */
static void xp_classify(struct xp_diff_site *s, double threshold, double cv_base, double cv_new, int *worse,
                        int *better)
{
    const struct xp_diff_stats *b = s->base, *n = s->new_;
    bool b_pageable = b->host_mem & (1u << XP_HM_PAGEABLE), n_pageable = n->host_mem & (1u << XP_HM_PAGEABLE);
    bool b_blocking = b->blocking & XP_BLOCKING_BITS, n_blocking = n->blocking & XP_BLOCKING_BITS;
    /* Whatever the threshold: these change how the program behaves, not
     * just how much it moves. */
    if (n_pageable && !b_pageable) {
        xp_diff_reason(s, "lost pinned memory");
        (*worse)++;
    } else if (b_pageable && !n_pageable && n->host_mem) {
        xp_diff_reason(s, "now pinned");
        (*better)++;
    }
    if (n_blocking && !b_blocking) {
        xp_diff_reason(s, "became blocking");
        (*worse)++;
    } else if (b_blocking && !n_blocking) {
        xp_diff_reason(s, "no longer blocking");
        (*better)++;
    }
    int j = xp_diff_judge(b->bytes, n->bytes, XP_DIFF_BYTES_FLOOR, threshold);
    if (j) {
        xp_reason_change(s, "bytes", b->bytes, n->bytes);
        *(j > 0 ? worse : better) += 1;
    }
    /* A change of time alone counts when it is past the runs' own noise and
     * the fastest copy moved too: a busy machine stretches most copies of a
     * run (the simulator's stream threads, a real driver's, wait for a CPU)
     * but leaves some as fast as ever, while a program that made its copies
     * slower made all of them slower. */
    j = xp_diff_judge(b->blocked_ns, n->blocked_ns, XP_DIFF_TIME_FLOOR_NS, threshold);
    if (j && b->blocked.n >= XP_DIFF_TIME_MIN_COPIES && n->blocked.n >= XP_DIFF_TIME_MIN_COPIES &&
        xp_diff_past_noise(n->blocked_ns - b->blocked_ns, xp_blocked_var(b, cv_base),
                           xp_blocked_var(n, cv_new)) &&
        xp_diff_judge(b->blocked.min, n->blocked.min, 0, threshold) == j) {
        xp_reason_change(s, "blocked time", b->blocked_ns, n->blocked_ns);
        *(j > 0 ? worse : better) += 1;
    }
}

static void xp_set_class(struct xp_diff_site *s, int worse, int better)
{
    s->cls = worse ? XP_DC_REGRESSED : better ? XP_DC_IMPROVED : XP_DC_UNCHANGED;
}

/* ---- the whole diff ---------------------------------------------------- */

static struct xp_diff_stats *xp_stats_take(struct xp_entry *e)
{
    struct xp_diff_stats *s = malloc(sizeof *s);
    if (s) {
        *s = e->st;
        e->st.apis = NULL; /* moved */
        e->st.n_apis = 0;
    }
    return s;
}

static double xp_site_weight(const struct xp_diff_site *s)
{
    double b = s->base ? s->base->bytes : 0, n = s->new_ ? s->new_->bytes : 0;
    return b > n ? b : n;
}

static int xp_site_cmp(const void *a, const void *b)
{
    const struct xp_diff_site *x = a, *y = b;
    if (x->cls != y->cls)
        return x->cls < y->cls ? -1 : 1;
    double wx = xp_site_weight(x), wy = xp_site_weight(y);
    if (wx != wy)
        return wx > wy ? -1 : 1;
    int c = xp_diff_strcmp0(x->range, y->range);
    return c ? c : xp_diff_frames_cmp(x->frames, x->n_frames, y->frames, y->n_frames, true);
}

/* Moves an entry's key and numbers into a site. */
static int xp_site_from(struct xp_diff_site *s, struct xp_entry *key, struct xp_entry *b,
                        struct xp_entry *n)
{
    *s = (struct xp_diff_site){.frames = key->frames, .n_frames = key->n_frames,
                               .range = key->range, .match = key->match};
    key->frames = NULL;
    s->base = b ? xp_stats_take(b) : NULL;
    s->new_ = n ? xp_stats_take(n) : NULL;
    return (b && !s->base) || (n && !s->new_) ? -1 : 0;
}

static int xp_build_sites(struct xp_diff *d, struct xp_side *sb, struct xp_side *sn)
{
    d->sites = calloc(sb->n + sn->n + 1, sizeof *d->sites);
    if (!d->sites)
        return -1;
    for (size_t j = 0; j < sn->n; j++) {
        struct xp_entry *n = &sn->e[j], *b = n->matched ? &sb->e[n->partner] : NULL;
        if (xp_site_from(&d->sites[d->n_sites++], n, b, n) != 0)
            return -1;
        d->n_exact += n->match == XP_DM_EXACT;
        d->n_approximate += n->match == XP_DM_APPROXIMATE;
        d->n_new += !n->matched;
    }
    for (size_t i = 0; i < sb->n; i++)
        if (!sb->e[i].matched) {
            if (xp_site_from(&d->sites[d->n_sites++], &sb->e[i], &sb->e[i], NULL) != 0)
                return -1;
            d->n_gone++;
        }
    return 0;
}

void xp_diff_free(struct xp_diff *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n_sites; i++) {
        struct xp_diff_site *s = &d->sites[i];
        free(s->frames);
        if (s->base)
            free(s->base->apis);
        if (s->new_)
            free(s->new_->apis);
        free(s->base);
        free(s->new_);
    }
    free(d->sites);
    for (size_t i = 0; i < d->n_findings; i++)
        free(d->findings[i].frames);
    free(d->findings);
    for (size_t i = 0; i < d->n_pairs; i++)
        free(d->pairs[i].totals.m);
    free(d->pairs);
    free(d->totals.m);
    *d = (struct xp_diff){0};
}

static int xp_diff_compute_inner(const struct xp_report *base, const struct xp_report *new_,
                                 struct xp_diff *d, struct xp_side *sb, struct xp_side *sn,
                                 int **worse, int **better)
{
    double th = d->opt.threshold_pct;
    const struct xp_process **bp = calloc(base->n_procs + 1, sizeof *bp);
    const struct xp_process **np = calloc(new_->n_procs + 1, sizeof *np);
    int rc = -1;
    if (!bp || !np)
        goto out;
    for (size_t i = 0; i < base->n_procs; i++)
        bp[i] = &base->procs[i];
    for (size_t i = 0; i < new_->n_procs; i++)
        np[i] = &new_->procs[i];
    if (xp_side_build(sb, base, d->opt.by) != 0 || xp_side_build(sn, new_, d->opt.by) != 0)
        goto out;
    if (xp_match_pass(sb, sn, true) != 0 || xp_match_pass(sb, sn, false) != 0)
        goto out;
    if (xp_build_sites(d, sb, sn) != 0)
        goto out;
    *worse = calloc(d->n_sites + 1, sizeof **worse);
    *better = calloc(d->n_sites + 1, sizeof **better);
    if (!*worse || !*better)
        goto out;
    /* Each run's own spread of a copy's blocked time: the noise band of time changes. */
    struct xp_diff_noise nzb, nzn;
    if (xp_diff_noise_of(bp, base->n_procs, 0, &nzb) != 0 || xp_diff_noise_of(np, new_->n_procs, 0, &nzn) != 0)
        goto out;
    for (size_t i = 0; i < d->n_sites; i++) {
        struct xp_diff_site *s = &d->sites[i];
        if (s->base && s->new_)
            xp_classify(s, th, nzb.cv, nzn.cv, &(*worse)[i], &(*better)[i]);
        else if (s->new_ && (s->new_->blocking & XP_BLOCKING_BITS))
            xp_diff_reason(s, "new blocking site");
    }
    if (xp_diff_findings_compare(d, base, new_, *worse, *better) != 0)
        goto out;
    for (size_t i = 0; i < d->n_sites; i++) {
        struct xp_diff_site *s = &d->sites[i];
        if (!s->base)
            s->cls = XP_DC_NEW;
        else if (!s->new_)
            s->cls = XP_DC_GONE;
        else
            xp_set_class(s, (*worse)[i], (*better)[i]);
    }
    xp_sort(d->sites, d->n_sites, sizeof *d->sites, xp_site_cmp);

    /* Totals: the job, then each pair of processes, each with the job's
     * spread between its ranks as noise too. */
    double job_cv[2] = {xp_diff_job_cv(bp, base->n_procs), xp_diff_job_cv(np, new_->n_procs)};
    if (xp_diff_compare_totals(bp, base->n_procs, np, new_->n_procs, th, job_cv, &d->totals) != 0)
        goto out;
    if (xp_diff_make_pairs(base, new_, d) != 0)
        goto out;
    for (size_t i = 0; i < d->n_pairs; i++) {
        struct xp_diff_pair *p = &d->pairs[i];
        if (xp_diff_compare_totals(&p->base, 1, &p->new_, 1, th, job_cv, &p->totals) != 0)
            goto out;
    }
    rc = 0;
out:
    free(bp);
    free(np);
    return rc;
}

int xp_diff_compute(const struct xp_report *base, const struct xp_report *new_,
                    const struct xp_diff_options *opt, struct xp_diff *out)
{
    struct xp_side sb = {0}, sn = {0};
    int *worse = NULL, *better = NULL;
    *out = (struct xp_diff){.opt = *opt, .base_procs = base->n_procs, .new_procs = new_->n_procs};
    if (!(out->opt.threshold_pct >= 0))
        out->opt.threshold_pct = XP_DIFF_DEFAULT_THRESHOLD; /* NaN or negative: the default */
    int rc = xp_diff_compute_inner(base, new_, out, &sb, &sn, &worse, &better);
    xp_side_free(&sb);
    xp_side_free(&sn);
    free(worse);
    free(better);
    if (rc != 0) {
        xp_diff_free(out);
        return -1;
    }
    struct xp_diff *d = out;
    for (size_t i = 0; i < d->n_sites; i++) {
        const struct xp_diff_site *s = &d->sites[i];
        /* A site that blocks where nothing did before changes how the
         * program behaves, as "became blocking" does on a matched site. */
        d->regressions += s->cls == XP_DC_REGRESSED ||
                          (s->cls == XP_DC_NEW && (s->new_->blocking & XP_BLOCKING_BITS));
        d->any_change |= s->cls != XP_DC_UNCHANGED;
    }
    /* Per range instance (--by nvtx) runs of different lengths compare fairly;
     * their totals, sums over the whole run, are shown but do not count. */
    bool totals_count = d->opt.by != XP_DIFF_BY_NVTX;
    if (totals_count) {
        d->regressions += xp_diff_count_class(&d->totals, XP_DC_REGRESSED);
        d->any_change |= xp_diff_count_class(&d->totals, XP_DC_UNCHANGED) != d->totals.n;
    }
    /* With one pair its totals are the job's: counting them again would
     * report every regression twice. */
    for (size_t i = 0; totals_count && d->n_pairs > 1 && i < d->n_pairs; i++) {
        d->regressions += xp_diff_count_class(&d->pairs[i].totals, XP_DC_REGRESSED);
        d->any_change |= xp_diff_count_class(&d->pairs[i].totals, XP_DC_UNCHANGED) !=
                         d->pairs[i].totals.n;
        d->any_change |= !d->pairs[i].base || !d->pairs[i].new_;
    }
    d->any_change |= d->n_findings > 0;
    if (d->opt.fail_on == XP_DIFF_FAIL_REGRESSION)
        d->exit_status = d->regressions > 0;
    else if (d->opt.fail_on == XP_DIFF_FAIL_ANY)
        d->exit_status = d->any_change || d->regressions > 0;
    return 0;
}
