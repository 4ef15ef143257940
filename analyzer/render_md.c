/* render_md.c: the report as GitHub Markdown (`--format markdown`), tables that paste into an issue. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "xp_render.h"

/* A table cell: | and newlines would end the cell or the row. */
static void xp_md_cell(FILE *f, const char *s)
{
    fputs(" ", f);
    for (; s && *s; s++) {
        if (*s == '|')
            fputs("\\|", f);
        else if (*s == '\n' || *s == '\r')
            fputc(' ', f);
        else
            fputc(*s, f);
    }
    fputs(" |", f);
}

static void xp_md_totals(FILE *f, const struct xp_totals *t)
{
    char b1[32], b2[32], b3[32], b4[32], n[32];
    fprintf(f, "| direction | copies | bytes | time | blocked | pinned bytes | bandwidth |\n"
               "|---|---:|---:|---:|---:|---:|---:|\n");
    for (int d = XP_DIR_H2D; d < XP_DIR_COUNT; d++) {
        const struct xp_dir_totals *x = &t->dir[d];
        if (!x->count)
            continue;
        fprintf(f, "| %s | %" PRIu64 " | %s | %s | %s | %s | %s |\n", xp_dir_name((xp_direction)d),
                x->count, xp_fmt_bytes(x->bytes, b1, sizeof b1), xp_fmt_ns(x->time_ns, b2, sizeof b2),
                xp_fmt_ns(x->blocked_ns, b3, sizeof b3), xp_fmt_bytes(x->pinned_bytes, n, sizeof n),
                xp_fmt_gbps(xp_gbps(x->bw_bytes, x->bw_ns), b4, sizeof b4));
    }
    fprintf(f, "| **all** | %" PRIu64 " | %s | %s | %s | | |\n\n", t->copies,
            xp_fmt_bytes(t->bytes, b1, sizeof b1), xp_fmt_ns(t->time_ns, b2, sizeof b2),
            xp_fmt_ns(t->blocked_ns, b3, sizeof b3));
    double ps = xp_share(t->pinned_bytes, t->host_bytes), bs = xp_share(t->blocking_copies, t->copies);
    if (isfinite(ps))
        fprintf(f, "Pinned host memory: %.0f%% of host bytes. ", 100 * ps);
    if (isfinite(bs))
        fprintf(f, "Blocking copies: %.0f%%. ", 100 * bs);
    if (t->allocations)
        fprintf(f, "Device memory peak: %s; %" PRIu64 " allocation(s) live at exit (%s).",
                xp_fmt_bytes(t->peak_bytes, b1, sizeof b1), t->live_at_exit_count,
                xp_fmt_bytes(t->live_at_exit_bytes, b2, sizeof b2));
    fprintf(f, "\n\n");
    if (!t->n_failed_by_status)
        return;
    fprintf(f, "| failed calls | status | calls |\n|---|---|---:|\n");
    for (size_t i = 0; i < t->n_failed_by_status; i++) {
        const struct xp_status_count *x = &t->failed_by_status[i];
        fprintf(f, "| `%s` | %s | %" PRIu64 " |\n", x->api, xp_cuda_status_str(x->driver, x->status).s, x->n);
    }
    fprintf(f, "\n");
}

/* The call site from its top user frame (xp_fmt_site), in backticks. */
static void xp_md_site_cell(FILE *f, const struct xp_process *p, uint32_t stack_id)
{
    const struct xp_stack *s = xp_site_stack(p, stack_id);
    char buf[1024], cell[1040];
    if (!s || !s->nframes) {
        xp_md_cell(f, "(no stack)");
        return;
    }
    snprintf(cell, sizeof cell, "`%s`", xp_fmt_site(s, buf, sizeof buf));
    xp_md_cell(f, cell);
}

int xp_render_markdown(FILE *f, const struct xp_summary *s)
{
    const struct xp_report *r = s->r;
    char b1[32], b2[32], b3[32];
    fprintf(f, "# xferprof report\n\n");
    for (size_t i = 0; i < r->n_procs; i++) {
        const struct xp_process *p = &r->procs[i];
        fprintf(f, "## %s%s%s\n\n", p->label, p->hostname ? " on " : "", p->hostname ? p->hostname : "");
        fprintf(f, "Database `%s`", p->db_path);
        if (p->cmdline)
            fprintf(f, ", command `%s`", p->cmdline);
        if (p->exit_status >= 0)
            fprintf(f, ", exit status %" PRId64, p->exit_status);
        if (p->recovered)
            fprintf(f, ", recovered after the process died");
        fprintf(f, ".\n\n");
        if (p->records_lost)
            fprintf(f, "> **%" PRId64 " record(s) lost**: %s\n\n", p->records_lost,
                    p->records_lost_reason ? p->records_lost_reason : "");
        for (size_t k = 0; k < p->n_notes; k++)
            fprintf(f, "> Note: %s\n\n", p->notes[k]);
        xp_md_totals(f, &s->proc[i]);
        bool header = false;
        for (size_t k = 0; k < s->n_sites; k++) {
            const struct xp_site *x = &s->sites[k];
            if (x->proc_index != i)
                continue;
            if (!header)
                fprintf(f, "### Top call sites\n\n| # | call site | copies | bytes | held | blocked |\n"
                           "|---:|---|---:|---:|---:|---:|\n");
            header = true;
            fprintf(f, "| %zu |", k + 1);
            xp_md_site_cell(f, p, x->stack_id);
            fprintf(f, " %" PRIu64 " | %s | %s | %s |\n", x->copies, xp_fmt_bytes(x->bytes, b1, sizeof b1),
                    xp_fmt_ns(x->time_ns, b2, sizeof b2), xp_fmt_ns(x->blocked_ns, b3, sizeof b3));
        }
        if (header)
            fprintf(f, "\n");
    }
    if (r->n_procs > 1) {
        fprintf(f, "## All %zu processes\n\n", r->n_procs);
        xp_md_totals(f, s->all);
    }
    fprintf(f, "## Findings\n\n");
    if (!r->n_findings)
        fprintf(f, "No findings.\n");
    else
        fprintf(f, "| severity | rule | process | call site | count | bytes | cost | finding | fix |\n"
                   "|---|---|---|---|---:|---:|---:|---|---|\n");
    for (size_t i = 0; i < r->n_findings; i++) {
        const struct xp_finding *x = &r->findings[i];
        fprintf(f, "| %s | `%s` |", xp_severity_name(x->severity), x->rule);
        xp_md_cell(f, x->proc ? x->proc->label : "");
        xp_md_site_cell(f, x->proc, x->stack_id);
        fprintf(f, " %" PRIu64 " | %s | %s |", x->count, xp_fmt_bytes(x->bytes, b1, sizeof b1),
                xp_fmt_ns(x->time_ns, b2, sizeof b2));
        xp_md_cell(f, x->message);
        xp_md_cell(f, x->fix);
        fputc('\n', f);
    }
    return ferror(f) ? -1 : 0;
}
