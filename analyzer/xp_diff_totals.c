/* xp_diff_totals.c: the totals of two runs compared metric by metric, for the job and each pair (xferprof diff). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xp_diff.h"
#include "xp_diff_int.h"
#include "xp_totals.h"

/* ---- totals ------------------------------------------------------------ */

enum xp_metric_kind { XP_MK_INFO, XP_MK_BYTES, XP_MK_TIME, XP_MK_SHARE_UP_BAD,
                      XP_MK_SHARE_DOWN_BAD, XP_MK_COUNT };

/* var: the value's noise (a variance) and floor its time at each copy's
 * fastest (XP_MK_TIME only), see xp_diff_noise.c. */
struct xp_metric_value {
    const char *name; enum xp_metric_kind kind; bool null; double v; double var, floor;
};

static const xp_direction xp_dirs[] = {XP_DIR_H2D, XP_DIR_D2H, XP_DIR_D2D, XP_DIR_H2H};
#define XP_NDIRS (sizeof xp_dirs / sizeof xp_dirs[0])
#define XP_NMETRICS (4 + 5 * XP_NDIRS + 5)

/* The metrics of one side's totals, in the order they are rendered. */
static size_t xp_metric_values(const struct xp_totals *t, const struct xp_diff_noise *noise,
                               struct xp_metric_value *m, char names[][40])
{
    size_t n = 0;
#define XP_PUT(nm, k, isnull, val) \
    (m[n] = (struct xp_metric_value){(nm), (k), (isnull), (val), 0, 0}, n++)
    XP_PUT("copies", XP_MK_INFO, false, (double)t->copies);
    XP_PUT("bytes", XP_MK_BYTES, false, (double)t->bytes);
    XP_PUT("time_ns", XP_MK_INFO, false, (double)t->time_ns);
    XP_PUT("blocked_ns", XP_MK_TIME, false, (double)t->blocked_ns);
    m[n - 1].var = noise->var[0];
    m[n - 1].floor = noise->floor[0];
    for (size_t i = 0; i < XP_NDIRS; i++) {
        const struct xp_dir_totals *d = &t->dir[xp_dirs[i]];
        const char *dn = xp_dir_name(xp_dirs[i]);
        static const char *const suffix[] = {"copies", "bytes", "time_ns", "blocked_ns",
                                             "bandwidth_gbps"};
        for (size_t k = 0; k < 5; k++)
            snprintf(names[5 * i + k], 40, "%s.%s", dn, suffix[k]);
        XP_PUT(names[5 * i], XP_MK_INFO, false, (double)d->count);
        XP_PUT(names[5 * i + 1], XP_MK_BYTES, false, (double)d->bytes);
        XP_PUT(names[5 * i + 2], XP_MK_INFO, false, (double)d->time_ns);
        XP_PUT(names[5 * i + 3], XP_MK_TIME, false, (double)d->blocked_ns);
        m[n - 1].var = noise->var[1 + xp_dirs[i]];
        m[n - 1].floor = noise->floor[1 + xp_dirs[i]];
        /* Bandwidth follows from bytes and time; it is shown, not judged
         * (on a shared machine it is the noisiest number there is). */
        XP_PUT(names[5 * i + 4], XP_MK_INFO, d->bw_ns <= 0,
               d->bw_ns > 0 ? (double)d->bw_bytes / (double)d->bw_ns : 0);
    }
    XP_PUT("pinned_share", XP_MK_SHARE_DOWN_BAD, t->host_bytes == 0,
           t->host_bytes ? (double)t->pinned_bytes / (double)t->host_bytes : 0);
    XP_PUT("blocking_share", XP_MK_SHARE_UP_BAD, t->copies == 0,
           t->copies ? (double)t->blocking_copies / (double)t->copies : 0);
    XP_PUT("memory.peak_bytes", XP_MK_BYTES, false, (double)t->peak_bytes);
    XP_PUT("memory.live_at_exit_bytes", XP_MK_BYTES, false, (double)t->live_at_exit_bytes);
    XP_PUT("failed_calls", XP_MK_COUNT, false, (double)t->failed_calls);
#undef XP_PUT
    return n;
}

static enum xp_diff_class xp_metric_class(enum xp_metric_kind k, const struct xp_metric_value *b,
                                          const struct xp_metric_value *n, double threshold)
{
    if (b->null || n->null)
        return XP_DC_UNCHANGED;
    int j = 0;
    switch (k) {
    case XP_MK_BYTES: j = xp_diff_judge(b->v, n->v, XP_DIFF_BYTES_FLOOR, threshold); break;
    case XP_MK_TIME:
        j = xp_diff_judge(b->v, n->v, XP_DIFF_TIME_FLOOR_NS, threshold);
        /* Past the noise, and the floor moved too (a busy machine leaves
         * it, see xp_diff_noise.c). */
        j = j && xp_diff_past_noise(n->v - b->v, b->var, n->var) &&
                    xp_diff_judge(b->floor, n->floor, 0, threshold) == j
                ? j
                : 0;
        break;
    /* A share moves by at least a point before it counts. */
    case XP_MK_SHARE_UP_BAD: j = xp_diff_judge(b->v, n->v, 0.01, threshold); break;
    case XP_MK_SHARE_DOWN_BAD: j = -xp_diff_judge(b->v, n->v, 0.01, threshold); break;
    case XP_MK_COUNT: j = xp_diff_judge(b->v, n->v, 1, threshold); break;
    case XP_MK_INFO: break;
    }
    return j > 0 ? XP_DC_REGRESSED : j < 0 ? XP_DC_IMPROVED : XP_DC_UNCHANGED;
}

/* The report's totals over the processes of one side that are present (a
 * side's pair list has NULL where the other side has more processes). */
static int xp_totals_of(const struct xp_process *const *procs, size_t n, struct xp_totals *t)
{
    struct xp_process *present = calloc(n ? n : 1, sizeof *present);
    if (!present)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (procs[i])
            present[k++] = *procs[i]; /* shallow: xp_totals_compute only reads */
    int rc = xp_totals_compute(present, k, t);
    free(present);
    return rc;
}

/* The sum of the processes' own peaks of device memory.  The peak of their
 * merged timeline would depend on how the processes' steps happened to
 * interleave, which changes from run to run of the same job. */
static int xp_sum_of_peaks(const struct xp_process *const *procs, size_t n, uint64_t *out)
{
    *out = 0;
    for (size_t i = 0; i < n; i++) {
        if (!procs[i])
            continue;
        struct xp_totals t = {0};
        if (xp_totals_compute(procs[i], 1, &t) != 0)
            return -1;
        *out += t.peak_bytes;
        xp_totals_free(&t);
    }
    return 0;
}

int xp_diff_compare_totals(const struct xp_process *const *bp, size_t nb,
                             const struct xp_process *const *np, size_t nn, double threshold,
                             const double job_cv[2], struct xp_diff_totals_cmp *out)
{
    struct xp_totals tb = {0}, tn = {0};
    struct xp_metric_value vb[XP_NMETRICS], vn[XP_NMETRICS];
    char names_b[5 * XP_NDIRS][40], names_n[5 * XP_NDIRS][40];
    struct xp_diff_noise nzb, nzn;
    *out = (struct xp_diff_totals_cmp){0};
    if (xp_diff_noise_of(bp, nb, job_cv[0], &nzb) != 0 || xp_diff_noise_of(np, nn, job_cv[1], &nzn) != 0)
        return -1;
    if (xp_totals_of(bp, nb, &tb) != 0)
        return -1;
    if (xp_totals_of(np, nn, &tn) != 0 || xp_sum_of_peaks(bp, nb, &tb.peak_bytes) != 0 ||
        xp_sum_of_peaks(np, nn, &tn.peak_bytes) != 0) {
        xp_totals_free(&tb);
        xp_totals_free(&tn);
        return -1;
    }
    size_t n = xp_metric_values(&tb, &nzb, vb, names_b);
    xp_metric_values(&tn, &nzn, vn, names_n);
    xp_totals_free(&tb);
    xp_totals_free(&tn);
    out->m = calloc(n, sizeof *out->m);
    if (!out->m)
        return -1;
    out->n = n;
    for (size_t i = 0; i < n; i++) {
        struct xp_diff_metric *m = &out->m[i];
        snprintf(m->name, sizeof m->name, "%s", vb[i].name);
        m->base_null = vb[i].null;
        m->new_null = vn[i].null;
        m->base = vb[i].v;
        m->new_ = vn[i].v;
        m->cls = xp_metric_class(vb[i].kind, &vb[i], &vn[i], threshold);
    }
    return 0;
}

size_t xp_diff_count_class(const struct xp_diff_totals_cmp *t, enum xp_diff_class c)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        n += t->m[i].cls == c;
    return n;
}

/* ---- process pairs ----------------------------------------------------- */

static bool xp_all_ranked(const struct xp_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++)
        if (r->procs[i].rank < 0)
            return false;
    return r->n_procs > 0;
}

int xp_diff_make_pairs(const struct xp_report *b, const struct xp_report *n, struct xp_diff *d)
{
    size_t cap = b->n_procs + n->n_procs;
    d->pairs = calloc(cap ? cap : 1, sizeof *d->pairs);
    if (!d->pairs)
        return -1;
    if (xp_all_ranked(b) && xp_all_ranked(n)) {
        bool *used = calloc(n->n_procs ? n->n_procs : 1, sizeof *used);
        if (!used)
            return -1;
        for (size_t i = 0; i < b->n_procs; i++) {
            struct xp_diff_pair *p = &d->pairs[d->n_pairs++];
            p->base = &b->procs[i];
            for (size_t j = 0; j < n->n_procs; j++)
                if (!used[j] && n->procs[j].rank == b->procs[i].rank) {
                    used[j] = true;
                    p->new_ = &n->procs[j];
                    break;
                }
        }
        for (size_t j = 0; j < n->n_procs; j++)
            if (!used[j])
                d->pairs[d->n_pairs++].new_ = &n->procs[j];
        free(used);
    } else {
        size_t m = b->n_procs > n->n_procs ? b->n_procs : n->n_procs;
        for (size_t i = 0; i < m; i++) {
            struct xp_diff_pair *p = &d->pairs[d->n_pairs++];
            p->base = i < b->n_procs ? &b->procs[i] : NULL;
            p->new_ = i < n->n_procs ? &n->procs[i] : NULL;
        }
    }
    return 0;
}
