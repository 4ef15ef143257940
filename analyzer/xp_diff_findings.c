/* xp_diff_findings.c: the findings of two runs matched: appeared, disappeared, changed (xferprof diff). */
#include <stdlib.h>
#include <string.h>

#include "xp_diff.h"
#include "xp_diff_int.h"

/* ---- findings ---------------------------------------------------------- */

/* Rules whose verdict rests on measured time (a copy's bandwidth, the share
 * of the run small copies took): a deterministic program's finding comes
 * and goes with the machine's load, so it is listed but does not make its
 * site regressed or improved (docs/diff.md, Noise). */
static bool xp_rule_timed(const char *rule)
{
    return strcmp(rule, "low-bandwidth") == 0 || strcmp(rule, "small-copies") == 0;
}

struct xp_fentry {
    const char *rule;
    struct xp_diff_frame *frames; size_t n_frames;
    struct xp_diff_finding_side v;
    bool matched;
    size_t partner;
};

static int xp_fentry_cmp(const struct xp_fentry *a, const struct xp_fentry *b, bool exact)
{
    int c = xp_diff_strcmp0(a->rule, b->rule);
    return c ? c : xp_diff_frames_cmp(a->frames, a->n_frames, b->frames, b->n_frames, exact);
}

/* One entry per (rule, site key), findings of every process summed. */
static int xp_fside_build(const struct xp_report *r, struct xp_fentry **out, size_t *n)
{
    *n = 0;
    *out = calloc(r->n_findings ? r->n_findings : 1, sizeof **out);
    if (!*out)
        return -1;
    for (size_t i = 0; i < r->n_findings; i++) {
        const struct xp_finding *f = &r->findings[i];
        struct xp_fentry probe = {.rule = f->rule ? f->rule : "unknown"};
        if (f->proc)
            probe.frames = xp_diff_stack_key_alloc(f->proc, f->stack_id, false, &probe.n_frames);
        struct xp_fentry *e = NULL;
        for (size_t k = 0; k < *n && !e; k++)
            if (xp_fentry_cmp(&(*out)[k], &probe, true) == 0)
                e = &(*out)[k];
        if (e) {
            free(probe.frames);
        } else {
            e = &(*out)[(*n)++];
            *e = probe;
        }
        e->v.count += f->count;
        e->v.bytes += f->bytes;
        e->v.time_ns += f->time_ns;
    }
    return 0;
}

static void xp_fmatch(struct xp_fentry *a, size_t na, struct xp_fentry *b, size_t nb, bool exact)
{
    /* Findings are few (tens): a quadratic pass is simpler than sorting. */
    for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < nb && !a[i].matched; j++)
            if (!b[j].matched && xp_fentry_cmp(&a[i], &b[j], exact) == 0) {
                a[i].matched = b[j].matched = true;
                a[i].partner = j;
                b[j].partner = i;
            }
}

static int xp_add_finding(struct xp_diff *d, enum xp_diff_finding_kind kind, struct xp_fentry *src,
                          const struct xp_diff_finding_side *b, const struct xp_diff_finding_side *n)
{
    struct xp_diff_finding *f = &d->findings[d->n_findings++];
    *f = (struct xp_diff_finding){.kind = kind, .rule = src->rule, .frames = src->frames,
                                  .n_frames = src->n_frames};
    src->frames = NULL; /* moved */
    if (b)
        f->base = *b;
    if (n)
        f->new_ = *n;
    return 0;
}

/* The site a finding is about, in the diff's keying; NULL when none.  Only
 * an exact match counts: a leak's allocation in the same function as a copy
 * (same frames but the line) is not about that copy.  A matched site keeps
 * the new side's frames, so a finding of the new run on a site whose line
 * moved is still found; one of the base run then is not (it still shows in
 * the findings that disappeared). */
static struct xp_diff_site *xp_site_of(struct xp_diff *d, const struct xp_diff_frame *f, size_t n)
{
    if (d->opt.by == XP_DIFF_BY_NVTX)
        return NULL; /* a finding belongs to a call site, not to a range */
    struct xp_diff_frame one;
    if (d->opt.by == XP_DIFF_BY_FUNCTION && n > 0) {
        one = f[0];
        one.file = NULL;
        one.line = 0;
        f = &one;
        n = 1;
    }
    for (size_t i = 0; i < d->n_sites; i++)
        if (xp_diff_frames_cmp(d->sites[i].frames, d->sites[i].n_frames, f, n, true) == 0)
            return &d->sites[i];
    return NULL;
}

int xp_diff_findings_compare(struct xp_diff *d, const struct xp_report *base,
                            const struct xp_report *new_, int *worse, int *better)
{
    struct xp_fentry *fb = NULL, *fn = NULL;
    size_t nb = 0, nn = 0;
    int rc = -1;
    if (xp_fside_build(base, &fb, &nb) != 0 || xp_fside_build(new_, &fn, &nn) != 0)
        goto out;
    xp_fmatch(fb, nb, fn, nn, true);
    xp_fmatch(fb, nb, fn, nn, false);
    d->findings = calloc(nb + nn + 1, sizeof *d->findings);
    if (!d->findings)
        goto out;
    for (size_t j = 0; j < nn; j++)
        if (!fn[j].matched) {
            struct xp_diff_site *s = xp_site_of(d, fn[j].frames, fn[j].n_frames);
            if (s && s->base && !xp_rule_timed(fn[j].rule)) {
                xp_diff_reason(s, "new finding: %s", fn[j].rule);
                worse[s - d->sites]++;
            }
            xp_add_finding(d, XP_DF_APPEARED, &fn[j], NULL, &fn[j].v);
        }
    for (size_t i = 0; i < nb; i++)
        if (!fb[i].matched) {
            struct xp_diff_site *s = xp_site_of(d, fb[i].frames, fb[i].n_frames);
            if (s && s->new_ && !xp_rule_timed(fb[i].rule)) {
                xp_diff_reason(s, "finding gone: %s", fb[i].rule);
                better[s - d->sites]++;
            }
            xp_add_finding(d, XP_DF_DISAPPEARED, &fb[i], &fb[i].v, NULL);
        }
    /* Changed: count or bytes differ (time alone is noise). */
    for (size_t i = 0; i < nb; i++)
        if (fb[i].matched) {
            struct xp_fentry *o = &fn[fb[i].partner];
            if (o->v.count != fb[i].v.count || o->v.bytes != fb[i].v.bytes)
                xp_add_finding(d, XP_DF_CHANGED, o, &fb[i].v, &o->v);
        }
    rc = 0;
out:
    for (size_t i = 0; i < nb; i++)
        free(fb[i].frames);
    for (size_t i = 0; i < nn; i++)
        free(fn[i].frames);
    free(fb);
    free(fn);
    return rc;
}
