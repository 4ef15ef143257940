/* xp_analysis.c: loading run databases into a report and running the rules on it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xp_analysis.h"
#include "xp_load.h"
#include "xp_progress.h"

int xp_analysis_load(struct xp_report *r, char *const *paths, size_t n, char *err,
                     size_t errlen)
{
    if (n && !(r->procs = calloc(n, sizeof *r->procs))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        char why[1024];
        xp_progress_stage("reading %s (%zu of %zu)", paths[i], i + 1, n);
        int rc = xp_load(paths[i], &r->procs[r->n_procs], why, sizeof why);
        if (rc != 0) {
            snprintf(err, errlen, "%s: %s", paths[i], why);
            xp_analysis_free(r);
            return -1;
        }
        r->n_procs++;
    }
    return 0;
}

static void xp_finding_free(struct xp_finding *f)
{
    free(f->message);
    for (size_t i = 0; i < f->n_facts; i++)
        if (f->facts[i].is_text)
            free(f->facts[i].text);
    free(f->facts);
}

static int xp_finding_cmp(const void *a, const void *b)
{
    const struct xp_finding *x = a, *y = b;
    if (x->severity != y->severity)
        return x->severity > y->severity ? -1 : 1;
    if (x->time_ns != y->time_ns)
        return x->time_ns > y->time_ns ? -1 : 1;
    if (x->proc != y->proc)
        return x->proc < y->proc ? -1 : 1;
    int c = strcmp(x->rule, y->rule);
    if (c)
        return c;
    return (x->stack_id > y->stack_id) - (x->stack_id < y->stack_id);
}

void xp_analysis_findings(struct xp_report *r, enum xp_severity min)
{
    xp_report_forget_claims(r);
    for (size_t i = 0; i < xp_nrules; i++)
        if (xp_rules[i].run) {
            xp_progress_stage("running rules (%zu of %zu: %s)", i + 1, xp_nrules, xp_rules[i].id);
            xp_rules[i].run(r);
        }
    size_t kept = 0;
    for (size_t i = 0; i < r->n_findings; i++) {
        if (r->findings[i].severity >= min)
            r->findings[kept++] = r->findings[i];
        else
            xp_finding_free(&r->findings[i]);
    }
    r->n_findings = kept;
    if (kept > 1)
        xp_sort(r->findings, kept, sizeof *r->findings, xp_finding_cmp);
}

void xp_analysis_free(struct xp_report *r)
{
    for (size_t i = 0; i < r->n_findings; i++)
        xp_finding_free(&r->findings[i]);
    free(r->findings);
    for (size_t i = 0; i < r->n_procs; i++)
        xp_process_free(&r->procs[i]);
    free(r->procs);
    struct xp_thresholds th = r->th;
    *r = (struct xp_report){.th = th};
}
