/* xp_diff_noise.c: how much a run's blocked time varies by itself, so that
 * xferprof diff counts a change of time only past that noise band.
 *
 * Why: the same deterministic program run twice on a shared machine (or on
 * the simulator, whose copies take wall-clock time) blocks for 20-50% more
 * or less from one run to the next; a fixed percentage flags that as a
 * regression.  Each run shows its own variation: the copies of one call
 * site do the same work, so their spread is the noise.  A change of a sum
 * of n such copies counts when it exceeds XP_DIFF_NOISE_SIGMAS standard
 * deviations of the difference of the two sums (docs/diff.md, Noise).  The
 * ranks of a job add what their copies' spread misses: a rank slowed as a
 * whole for a while (xp_diff_job_cv). */
#include <math.h>
#include <stdlib.h>

#include "xp_diff.h"
#include "xp_group.h"

void xp_welford_add(struct xp_welford *w, double x)
{
    if (w->n == 0 || x < w->min)
        w->min = x;
    w->n += 1;
    double d = x - w->mean;
    w->mean += d / w->n;
    w->m2 += d * (x - w->mean);
}

double xp_welford_sum_var(const struct xp_welford *w, double cv)
{
    if (w->n <= 0)
        return 0;
    double var = w->n >= 2 ? w->m2 / (w->n - 1) : 0;
    /* A group of one copy (or of identical times) has no spread of its own:
     * it gets the run's relative one. */
    double floor = cv * w->mean;
    if (var < floor * floor)
        var = floor * floor;
    return w->n * var;
}

bool xp_diff_past_noise(double change, double var_base, double var_new)
{
    return fabs(change) > XP_DIFF_NOISE_SIGMAS * sqrt(var_base + var_new);
}

static bool xp_holds_caller(const struct xp_copy *c)
{
    return c->cs->blocking == XP_BL_SYNC || c->cs->blocking == XP_BL_ASYNC_PAGEABLE;
}

double xp_diff_job_cv(const struct xp_process *const *procs, size_t n)
{
    struct xp_welford per_proc = {0};
    for (size_t pi = 0; pi < n; pi++) {
        const struct xp_process *p = procs[pi];
        double sum = 0, count = 0;
        for (size_t i = 0; p && i < p->n_copies; i++)
            if (xp_holds_caller(&p->copies[i])) {
                sum += (double)xp_nonneg(p->copies[i].dur_ns);
                count++;
            }
        if (count > 0)
            xp_welford_add(&per_proc, sum / count);
    }
    if (per_proc.n < 2 || per_proc.mean <= 0)
        return 0;
    return sqrt(per_proc.m2 / (per_proc.n - 1)) / per_proc.mean;
}

int xp_diff_noise_of(const struct xp_process *const *procs, size_t n, double job_cv,
                     struct xp_diff_noise *out)
{
    *out = (struct xp_diff_noise){0};
    struct xp_map groups;
    xp_map_init(&groups);
    struct xp_welford *w = NULL;
    uint8_t *dir = NULL;
    size_t nw = 0, cap = 0;
    int rc = -1;
    /* One group per process, call site and direction: copies that do the same work. */
    for (size_t pi = 0; pi < n; pi++) {
        const struct xp_process *p = procs[pi];
        for (size_t i = 0; p && i < p->n_copies; i++) {
            const struct xp_copy *c = &p->copies[i];
            if (!xp_holds_caller(c))
                continue;
            uint8_t d = c->cs->direction < XP_DIR_COUNT ? c->cs->direction : XP_DIR_UNKNOWN;
            bool added;
            struct xp_map_entry *e = xp_map_get(&groups, pi, c->cs->stack_id, d, 0, &added);
            if (!e)
                goto out;
            if (added) {
                if (nw == cap) {
                    size_t ncap = cap ? 2 * cap : 64;
                    struct xp_welford *gw = realloc(w, ncap * sizeof *gw);
                    if (gw)
                        w = gw;
                    uint8_t *gd = realloc(dir, ncap * sizeof *gd);
                    if (gd)
                        dir = gd;
                    if (!gw || !gd)
                        goto out;
                    cap = ncap;
                }
                w[nw] = (struct xp_welford){0};
                dir[nw] = d;
                e->v0 = nw++;
            }
            xp_welford_add(&w[e->v0], (double)xp_nonneg(c->dur_ns));
        }
    }
    /* The run's relative spread, pooled over the groups that have one. */
    double m2 = 0, scale = 0;
    for (size_t k = 0; k < nw; k++)
        if (w[k].n >= 2) {
            m2 += w[k].m2;
            scale += (w[k].n - 1) * w[k].mean * w[k].mean;
        }
    out->cv = scale > 0 ? sqrt(m2 / scale) : 0;
    for (size_t k = 0; k < nw; k++) {
        double v = xp_welford_sum_var(&w[k], out->cv);
        out->var[0] += v;
        out->var[1 + dir[k]] += v;
        out->floor[0] += w[k].n * w[k].min;
        out->floor[1 + dir[k]] += w[k].n * w[k].min;
    }
    /* Each process's blocked time as a whole moves by job_cv of itself,
     * independently of the other processes'. */
    for (size_t pi = 0; job_cv > 0 && pi < n; pi++) {
        const struct xp_process *p = procs[pi];
        double sum[1 + XP_DIR_COUNT] = {0};
        for (size_t i = 0; p && i < p->n_copies; i++)
            if (xp_holds_caller(&p->copies[i])) {
                double d = (double)xp_nonneg(p->copies[i].dur_ns);
                uint8_t k = p->copies[i].cs->direction < XP_DIR_COUNT ? p->copies[i].cs->direction : XP_DIR_UNKNOWN;
                sum[0] += d;
                sum[1 + k] += d;
            }
        for (size_t k = 0; k < 1 + XP_DIR_COUNT; k++)
            out->var[k] += (job_cv * sum[k]) * (job_cv * sum[k]);
    }
    rc = 0;
out:
    free(w);
    free(dir);
    xp_map_free(&groups);
    return rc;
}
