/* render_html_tables.c: the tables of the HTML report (totals, findings, call
 * sites) and its header, written as HTML; the charts are render_html.c's. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render_html_tables.h"
#include "xp_cuda_status.h"
#include "xp_html.h"
#include "xp_render.h"

/* Frames shown per call site; the rest are counted. */
#define XP_HTML_FRAMES 12

static void xp_h_num(FILE *f, uint64_t v, const char *shown)
{
    fprintf(f, "<td class=\"n\" data-v=\"%" PRIu64 "\">", v);
    xp_html_text(f, shown);
    fputs("</td>", f);
}

static void xp_h_card(FILE *f, const char *value, const char *key)
{
    fputs("<div class=\"card\"><div class=\"v\">", f);
    xp_html_text(f, value);
    fputs("</div><div class=\"k\">", f);
    xp_html_text(f, key);
    fputs("</div></div>\n", f);
}

void xp_h_totals(FILE *f, const struct xp_totals *t)
{
    char b[64], k[64];
    fputs("<div class=\"cards\">\n", f);
    snprintf(b, sizeof b, "%" PRIu64, t->copies);
    xp_h_card(f, b, "copies");
    xp_h_card(f, xp_fmt_bytes(t->bytes, b, sizeof b), "bytes copied");
    xp_h_card(f, xp_fmt_ns(t->blocked_ns, b, sizeof b), "host blocked by copies");
    double ps = xp_share(t->pinned_bytes, t->host_bytes);
    snprintf(b, sizeof b, isfinite(ps) ? "%.0f%%" : "-", 100 * ps);
    xp_h_card(f, b, "host bytes pinned");
    snprintf(b, sizeof b, "%" PRIu64, t->syncs);
    snprintf(k, sizeof k, "syncs (%s waited)", xp_fmt_ns(t->sync_time_ns, k + 40, 24));
    xp_h_card(f, b, k);
    xp_h_card(f, t->allocations ? xp_fmt_bytes(t->peak_bytes, b, sizeof b) : "-", "device memory peak");
    snprintf(b, sizeof b, "%" PRIu64, t->failed_calls);
    xp_h_card(f, b, "failed calls");
    fputs("</div>\n<table>\n<thead><tr><th>direction</th><th class=\"n\">copies</th><th class=\"n\">bytes</th>"
          "<th class=\"n\">held</th><th class=\"n\">blocked</th><th class=\"n\">pinned bytes</th>"
          "<th class=\"n\">pageable bytes</th><th class=\"n\">bandwidth</th></tr></thead>\n<tbody>\n",
          f);
    for (int dir = XP_DIR_H2D; dir < XP_DIR_COUNT; dir++) {
        const struct xp_dir_totals *x = &t->dir[dir];
        if (!x->count)
            continue;
        fprintf(f, "<tr><td>%s</td>", xp_dir_name((xp_direction)dir));
        snprintf(b, sizeof b, "%" PRIu64, x->count);
        xp_h_num(f, x->count, b);
        xp_h_num(f, x->bytes, xp_fmt_bytes(x->bytes, b, sizeof b));
        xp_h_num(f, (uint64_t)x->time_ns, xp_fmt_ns(x->time_ns, b, sizeof b));
        xp_h_num(f, (uint64_t)x->blocked_ns, xp_fmt_ns(x->blocked_ns, b, sizeof b));
        xp_h_num(f, x->pinned_bytes, xp_fmt_bytes(x->pinned_bytes, b, sizeof b));
        xp_h_num(f, x->pageable_bytes, xp_fmt_bytes(x->pageable_bytes, b, sizeof b));
        double g = xp_gbps(x->bw_bytes, x->bw_ns);
        xp_h_num(f, isfinite(g) ? (uint64_t)(g * 1000) : 0, xp_fmt_gbps(g, b, sizeof b));
        fputs("</tr>\n", f);
    }
    fputs("</tbody>\n</table>\n", f);
    if (!t->n_failed_by_status)
        return;
    fputs("<table>\n<thead><tr><th>failed calls</th><th>status</th><th class=\"n\">calls</th></tr></thead>\n"
          "<tbody>\n", f);
    for (size_t i = 0; i < t->n_failed_by_status; i++) {
        const struct xp_status_count *x = &t->failed_by_status[i];
        fputs("<tr><td>", f);
        xp_html_text(f, x->api);
        fputs("</td><td>", f);
        xp_html_text(f, xp_cuda_status_str(x->driver, x->status).s);
        fputs("</td>", f);
        snprintf(b, sizeof b, "%" PRIu64, x->n);
        xp_h_num(f, x->n, b);
        fputs("</tr>\n", f);
    }
    fputs("</tbody>\n</table>\n", f);
}

static void xp_h_frames(FILE *f, const struct xp_process *p, uint32_t stack_id)
{
    const struct xp_stack *st = xp_site_stack(p, stack_id);
    char buf[512];
    if (!st || !st->nframes) {
        fputs("<p class=\"note\">(no stack)</p>\n", f);
        return;
    }
    fputs("<ol class=\"frames mono\">\n", f);
    uint32_t n = st->nframes - st->top;   /* from the top user frame, as the text */
    for (uint32_t i = 0; i < n && i < XP_HTML_FRAMES; i++) {
        fputs("<li>", f);
        if (i && st->frames[st->top + i - 1].inlined)
            fputs("<span class=\"note\">inlined into</span> ", f);
        xp_html_text(f, xp_fmt_frame(&st->frames[st->top + i], buf, sizeof buf));
        fputs("</li>\n", f);
    }
    if (n > XP_HTML_FRAMES)
        fprintf(f, "<li class=\"note\">... %u more frames</li>\n", n - XP_HTML_FRAMES);
    fputs("</ol>\n", f);
}

static void xp_h_site_cell(FILE *f, const struct xp_process *p, uint32_t stack_id)
{
    const struct xp_stack *st = xp_site_stack(p, stack_id);
    char buf[1024];
    fputs("<td class=\"mono\">", f);
    xp_html_text(f, xp_fmt_site(st, buf, sizeof buf));
    fputs("</td>", f);
}

void xp_h_findings(FILE *f, const struct xp_report *r)
{
    char b1[32], b2[32];
    fprintf(f, "<section id=\"findings\">\n<h2>Findings (%zu)</h2>\n", r->n_findings);
    if (!r->n_findings)
        fputs("<p class=\"note\">No findings.</p>\n", f);
    for (size_t i = 0; i < r->n_findings; i++) {
        const struct xp_finding *x = &r->findings[i];
        const char *sev = xp_severity_name(x->severity);
        fprintf(f, "<details class=\"finding xp-finding\" data-rule=\"");
        xp_html_text(f, x->rule);
        fprintf(f, "\">\n<summary><span class=\"sev sev-%s\">%s</span> <code>", sev, sev);
        xp_html_text(f, x->rule);
        fputs("</code> ", f);
        xp_html_text(f, x->message);
        fputs("</summary>\n<div>\n<p>", f);
        if (r->n_procs > 1 && x->proc) {
            xp_html_text(f, x->proc->label);
            fputs(": ", f);
        }
        fprintf(f, "%" PRIu64 " time(s), %s, cost %s.</p>\n<h3>Call site</h3>\n", x->count,
                xp_fmt_bytes(x->bytes, b1, sizeof b1), xp_fmt_ns(x->time_ns, b2, sizeof b2));
        xp_h_frames(f, x->proc, x->stack_id);
        if (x->fix) {
            fputs("<h3>Fix (CUDA)</h3>\n<p>", f);
            xp_html_text(f, x->fix);
            fputs("</p>\n", f);
        }
        if (x->fix_pytorch) {
            fputs("<h3>Fix (PyTorch)</h3>\n<p>", f);
            xp_html_text(f, x->fix_pytorch);
            fputs("</p>\n", f);
        }
        if (x->n_facts) {
            fputs("<h3>Details</h3>\n<table>\n", f);
            for (size_t k = 0; k < x->n_facts; k++) {
                fputs("<tr><td>", f);
                xp_html_text(f, x->facts[k].key);
                fputs("</td><td class=\"mono\">", f);
                if (x->facts[k].is_text)
                    xp_html_text(f, x->facts[k].text);
                else
                    fprintf(f, "%" PRId64, x->facts[k].num);
                fputs("</td></tr>\n", f);
            }
            fputs("</table>\n", f);
        }
        fputs("</div>\n</details>\n", f);
    }
    fputs("</section>\n", f);
}

/* The names of a bit set of codes, joined by ", ". */
static void xp_h_names(FILE *f, uint8_t set, int count, const char *(*name)(int))
{
    bool first = true;
    fputs("<td>", f);
    for (int i = 0; i < count; i++)
        if (set & (1u << i)) {
            fprintf(f, "%s%s", first ? "" : ", ", name(i));
            first = false;
        }
    fputs("</td>", f);
}

static const char *xp_dir_n(int i) { return xp_dir_name((xp_direction)i); }
static const char *xp_hm_n(int i) { return xp_hostmem_name((enum xp_hostmem)i); }
static const char *xp_bl_n(int i) { return xp_blocking_name((enum xp_block_class)i); }

void xp_h_sites(FILE *f, const struct xp_summary *s)
{
    char b[64];
    fputs("<section id=\"sites\">\n<h2>Call sites</h2>\n", f);
    if (!s->n_sites) {
        fputs("<p class=\"note\">No copies.</p>\n</section>\n", f);
        return;
    }
    fprintf(f, "<p class=\"note\">Per process, the top %zu by bytes and the top %zu by blocked time; "
               "click a header to sort.</p>\n",
            s->top, s->top);
    fputs("<table class=\"xp-sortable\" id=\"xp-sites\">\n<thead><tr><th class=\"n\">#</th>", f);
    if (s->r->n_procs > 1)
        fputs("<th>process</th>", f);
    fputs("<th>call site</th><th>api</th><th>direction</th><th>host memory</th><th>blocking</th>"
          "<th class=\"n\">copies</th><th class=\"n\">bytes</th><th class=\"n\">held</th>"
          "<th class=\"n\">blocked</th></tr></thead>\n<tbody>\n",
          f);
    for (size_t i = 0; i < s->n_sites; i++) {
        const struct xp_site *x = &s->sites[i];
        const struct xp_process *p = x->proc;
        fputs("<tr class=\"xp-site\">", f);
        snprintf(b, sizeof b, "%zu", i + 1);
        xp_h_num(f, i + 1, b);
        if (s->r->n_procs > 1) {
            fputs("<td>", f);
            xp_html_text(f, p ? p->label : NULL);
            fputs("</td>", f);
        }
        xp_h_site_cell(f, p, x->stack_id);
        fputs("<td>", f);
        for (uint8_t k = 0; k < x->n_apis; k++) {
            fputs(k ? ", " : "", f);
            xp_html_text(f, p && x->apis[k] < p->n_api ? p->api_names[x->apis[k]] : "unknown");
        }
        fputs("</td>", f);
        xp_h_names(f, x->directions, XP_DIR_COUNT, xp_dir_n);
        xp_h_names(f, x->host_mems, XP_HM_COUNT, xp_hm_n);
        xp_h_names(f, x->blockings, XP_BL_COUNT, xp_bl_n);
        snprintf(b, sizeof b, "%" PRIu64, x->copies);
        xp_h_num(f, x->copies, b);
        xp_h_num(f, x->bytes, xp_fmt_bytes(x->bytes, b, sizeof b));
        xp_h_num(f, (uint64_t)x->time_ns, xp_fmt_ns(x->time_ns, b, sizeof b));
        xp_h_num(f, (uint64_t)x->blocked_ns, xp_fmt_ns(x->blocked_ns, b, sizeof b));
        fputs("</tr>\n", f);
    }
    fputs("</tbody>\n</table>\n</section>\n", f);
}

void xp_h_header(FILE *f, const struct xp_report *r)
{
    fputs("<div class=\"meta\">\n", f);
    for (size_t i = 0; i < r->n_procs; i++) {
        const struct xp_process *p = &r->procs[i];
        fputs("<div><b>", f);
        xp_html_text(f, p->label);
        fputs("</b>", f);
        if (p->hostname) {
            fputs(" on ", f);
            xp_html_text(f, p->hostname);
        }
        fputs(": <code>", f);
        xp_html_text(f, p->cmdline ? p->cmdline : "(command unknown)");
        fputs("</code>, database <code>", f);
        xp_html_text(f, p->db_path);
        fputs("</code>", f);
        if (p->exit_status >= 0)
            fprintf(f, ", exit status %" PRId64, p->exit_status);
        if (p->recovered)
            fputs(", recovered after the process died", f);
        fputs("</div>\n", f);
        if (p->records_lost) {
            fprintf(f, "<div class=\"warn\">%" PRId64 " record(s) lost: ", p->records_lost);
            xp_html_text(f, p->records_lost_reason);
            fputs("</div>\n", f);
        }
        for (size_t k = 0; k < p->n_notes; k++) {
            fputs("<div class=\"warn\">Note: ", f);
            xp_html_text(f, p->notes[k]);
            fputs("</div>\n", f);
        }
    }
    fputs("</div>\n</header>\n", f);
}

/* What the page says it drew: "N of M copies drawn; ...". */
