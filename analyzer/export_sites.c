/* export_sites.c: each stack's call site for `xferprof export`, named as the report names it, with the rule ids of the report's findings there. */
#include <stdlib.h>
#include <string.h>

#include "xp_analysis.h"
#include "xp_export.h"
#include "xp_load.h"
#include "xp_pyframes.h"
#include "xp_render.h"
#include "xp_symbols.h"

/* Whether finding i repeats the rule of an earlier finding at its site. */
static bool xp_rule_repeats(const struct xp_report *r, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (r->findings[j].stack_id == r->findings[i].stack_id &&
            strcmp(r->findings[j].rule, r->findings[i].rule) == 0)
            return true;
    return false;
}

/* The rule ids of r's findings at stack id, ", "-separated in the report's
 * order (severity, then cost); NULL (with *oom false) when there is none. */
static char *xp_site_rules(const struct xp_report *r, uint32_t id, bool *oom)
{
    size_t len = 0;
    for (size_t i = 0; i < r->n_findings; i++)
        if (r->findings[i].stack_id == id)
            len += strlen(r->findings[i].rule) + 2;
    if (len == 0)
        return NULL;
    char *s = malloc(len + 1);
    if (!s) {
        *oom = true;
        return NULL;
    }
    size_t n = 0;
    for (size_t i = 0; i < r->n_findings; i++)
        if (r->findings[i].stack_id == id && !xp_rule_repeats(r, i))
            n += (size_t)snprintf(s + n, len + 1 - n, "%s%s", n ? ", " : "", r->findings[i].rule);
    s[n] = '\0';
    return s;
}

/* Names p's sites into out, with r's findings when r is not NULL. */
static int xp_name_sites(const struct xp_process *p, const struct xp_report *r,
                         struct xp_sites *out)
{
    uint32_t max = p->n_stacks ? p->stacks[p->n_stacks - 1].id : 0;
    if (max && (!(out->name = calloc((size_t)max + 1, sizeof *out->name)) ||
                !(out->findings = calloc((size_t)max + 1, sizeof *out->findings))))
        return -1;
    out->n = max ? (size_t)max + 1 : 0;
    for (size_t i = 0; i < p->n_stacks; i++) {
        const struct xp_stack *s = &p->stacks[i];
        char buf[1024];
        bool oom = false;
        if (!s->nframes)
            continue;
        if (!(out->name[s->id] = strdup(xp_fmt_site(s, buf, sizeof buf))))
            return -1;
        if (r)
            out->findings[s->id] = xp_site_rules(r, s->id, &oom);
        if (oom)
            return -1;
    }
    return 0;
}

int xp_export_sites(sqlite3 *db, const char *path, bool writable, struct xp_sites *out,
                    char *note, size_t notelen, char *err, size_t errlen)
{
    *out = (struct xp_sites){0};
    note[0] = '\0';
    /* The run as the report reads it, and the report's rules with their
     * default thresholds, so that a trace names the findings the report
     * shows. */
    struct xp_report r = {0};
    char why[512];
    int rc = -1;
    xp_thresholds_default(&r.th);
    if (!(r.procs = calloc(1, sizeof *r.procs)))
        goto oom;
    if (xp_load_db(db, path, writable, false, &r.procs[0], why, sizeof why) == 0) {
        r.n_procs = 1;
        xp_analysis_findings(&r, XP_SEV_INFO);
        if (xp_name_sites(&r.procs[0], &r, out) != 0)
            goto oom;
        rc = 0;
        goto out;
    }
    /* A table the report cannot read (another build's nvtx_ranges) costs the
     * trace its findings, not its sites: the writer reads what it can. */
    snprintf(note, notelen, "findings left out (%s)", why);
    struct xp_process p = {.rank = -1, .exit_status = -1};
    if (xp_symbols_resolve(db, writable, &p, err, errlen) == 0 &&
        xp_pyframes_merge(db, &p, err, errlen) == 0) {
        rc = xp_name_sites(&p, NULL, out);
        if (rc != 0)
            snprintf(err, errlen, "out of memory");
    }
    xp_process_free(&p);
    goto out;
oom:
    snprintf(err, errlen, "out of memory");
out:
    if (rc != 0)
        xp_export_sites_free(out);
    xp_analysis_free(&r);
    return rc;
}

void xp_export_sites_free(struct xp_sites *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->name[i]);
        if (s->findings)
            free(s->findings[i]);
    }
    free(s->name);
    free(s->findings);
    *s = (struct xp_sites){0};
}
