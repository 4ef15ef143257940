/* render_text.c: the report for a terminal (`--format text`): aligned columns, human units, color on a TTY. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xp_render.h"

const char *xp_fmt_bytes(uint64_t b, char *buf, size_t n)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (b < 1024) {
        snprintf(buf, n, "%" PRIu64 " B", b);
        return buf;
    }
    double v = (double)b / 1024;
    size_t u = 0;
    while (v >= 1024 && u + 1 < sizeof units / sizeof units[0])
        v /= 1024, u++;
    snprintf(buf, n, "%.1f %s", v, units[u]);
    return buf;
}

const char *xp_fmt_ns(int64_t ns, char *buf, size_t n)
{
    double v = (double)ns;
    if (ns < 1000 && ns > -1000)
        snprintf(buf, n, "%" PRId64 " ns", ns);
    else if (fabs(v) < 1e6)
        snprintf(buf, n, "%.1f \xc2\xb5s", v / 1e3);
    else if (fabs(v) < 1e9)
        snprintf(buf, n, "%.1f ms", v / 1e6);
    else
        snprintf(buf, n, "%.2f s", v / 1e9);
    return buf;
}

const char *xp_fmt_gbps(double gbps, char *buf, size_t n)
{
    if (!isfinite(gbps))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.2f GB/s", gbps);
    return buf;
}

const char *xp_fmt_frame(const struct xp_frame *f, char *buf, size_t n)
{
    const char *name = xp_frame_name(f);
    if (f->python && f->function && f->line > 0) {
        snprintf(buf, n, "%s:%d in %s", f->module, f->line, f->function);
    } else if (name && f->file) {
        const char *slash = strrchr(f->file, '/');
        snprintf(buf, n, "%s (%s:%d)", name, slash ? slash + 1 : f->file, f->line);
    } else if (name) {
        snprintf(buf, n, "%s (%s)", name, f->module ? f->module : "?");
    } else if (f->module) {
        snprintf(buf, n, "%s+0x%" PRIx64, f->module, f->offset);
    } else {
        snprintf(buf, n, "0x%" PRIx64, f->addr);
    }
    return buf;
}

const char *xp_fmt_site(const struct xp_stack *s, char *buf, size_t n)
{
    if (!s || !s->nframes) {
        snprintf(buf, n, "(no stack)");
        return buf;
    }
    /* From the top user frame (Python or native): the site is the user's line. */
    uint32_t top = s->top < s->nframes ? s->top : 0;
    xp_fmt_frame(&s->frames[top], buf, n);
    if (s->frames[top].inlined && top + 1 < s->nframes) {
        size_t used = strlen(buf);
        char caller[512];
        snprintf(buf + used, n - used, " inlined into %s",
                 xp_fmt_frame(&s->frames[top + 1], caller, sizeof caller));
    }
    return buf;
}

const char *xp_frame_label(const struct xp_stack *s, uint32_t i)
{
    return i <= s->top ? "at " : s->frames[i - 1].inlined ? "inlined into " : "called from ";
}

const struct xp_stack *xp_site_stack(const struct xp_process *p, uint32_t stack_id)
{
    return p && stack_id != XP_NONE_ID ? xp_process_stack(p, stack_id) : NULL;
}

/* ANSI sequences, empty without color. */
struct xp_style {
    const char *bold, *dim, *red, *yellow, *cyan, *off;
};

static struct xp_style xp_style_for(bool color)
{
    if (color)
        return (struct xp_style){"\033[1m", "\033[2m", "\033[31m", "\033[33m", "\033[36m", "\033[0m"};
    return (struct xp_style){"", "", "", "", "", ""};
}

/* Frames shown per site: the call site and a few callers. */
#define XP_TEXT_FRAMES 4

static void xp_t_frames(FILE *f, const struct xp_process *p, uint32_t stack_id, const char *indent,
                        const struct xp_style *st)
{
    const struct xp_stack *s = xp_site_stack(p, stack_id);
    char buf[512];
    if (!s || s->nframes == 0) {
        fprintf(f, "%s%s(no stack)%s\n", indent, st->dim, st->off);
        return;
    }
    /* From the top user frame: a framework's frames inside it are not
     * where the user looks (the JSON report has them). */
    uint32_t n = s->nframes - s->top;
    for (uint32_t i = 0; i < n && i < XP_TEXT_FRAMES; i++)
        fprintf(f, "%s%s%s\n", indent, xp_frame_label(s, s->top + i),
                xp_fmt_frame(&s->frames[s->top + i], buf, sizeof buf));
    if (n > XP_TEXT_FRAMES)
        fprintf(f, "%s%s... %u more frames%s\n", indent, st->dim, n - XP_TEXT_FRAMES, st->off);
}

static void xp_t_totals(FILE *f, const struct xp_totals *t, const struct xp_style *st)
{
    char b1[32], b2[32], b3[32], b4[32];
    fprintf(f, "  %-5s %10s %12s %12s %12s %12s %12s\n", "", "copies", "bytes", "time", "blocked",
            "pinned", "bandwidth");
    for (int d = XP_DIR_H2D; d < XP_DIR_COUNT; d++) {
        const struct xp_dir_totals *x = &t->dir[d];
        if (!x->count)
            continue;
        char pinned[16] = "-";
        uint64_t host = x->pinned_bytes + x->pageable_bytes + x->managed_bytes;
        if (host)
            snprintf(pinned, sizeof pinned, "%.0f%%", 100.0 * (double)x->pinned_bytes / (double)host);
        fprintf(f, "  %-5s %10" PRIu64 " %12s %12s %12s %12s %12s\n", xp_dir_name((xp_direction)d),
                x->count, xp_fmt_bytes(x->bytes, b1, sizeof b1), xp_fmt_ns(x->time_ns, b2, sizeof b2),
                xp_fmt_ns(x->blocked_ns, b3, sizeof b3), pinned,
                xp_fmt_gbps(xp_gbps(x->bw_bytes, x->bw_ns), b4, sizeof b4));
    }
    fprintf(f, "  %s%-5s %10" PRIu64 " %12s %12s %12s%s\n", st->bold, "all", t->copies,
            xp_fmt_bytes(t->bytes, b1, sizeof b1), xp_fmt_ns(t->time_ns, b2, sizeof b2),
            xp_fmt_ns(t->blocked_ns, b3, sizeof b3), st->off);
    double ps = xp_share(t->pinned_bytes, t->host_bytes), bs = xp_share(t->blocking_copies, t->copies);
    if (isfinite(ps) || isfinite(bs)) {
        fprintf(f, "  ");
        if (isfinite(ps))
            fprintf(f, "pinned host memory: %.0f%% of host bytes   ", 100 * ps);
        if (isfinite(bs))
            fprintf(f, "blocking copies: %.0f%%", 100 * bs);
        fprintf(f, "\n");
    }
    if (t->allocations)
        fprintf(f, "  device memory: peak %s, %" PRIu64 " allocation(s), %" PRIu64
                   " live at exit (%s)\n",
                xp_fmt_bytes(t->peak_bytes, b1, sizeof b1), t->allocations, t->live_at_exit_count,
                xp_fmt_bytes(t->live_at_exit_bytes, b2, sizeof b2));
    if (t->syncs || t->memsets || t->failed_calls)
        fprintf(f, "  syncs: %" PRIu64 " (%s waited)   memsets: %" PRIu64 "   failed calls: %" PRIu64 "\n",
                t->syncs, xp_fmt_ns(t->sync_time_ns, b1, sizeof b1), t->memsets, t->failed_calls);
    /* Where such a copy's call site is: the capture or add, not the launch. */
    if (t->graph_copies)
        fprintf(f, "  CUDA graphs: %" PRIu64 " copies ran in %" PRIu64
                   " launch(es); their call sites are where each copy was captured or added\n",
                t->graph_copies, t->graph_launches);
    for (size_t i = 0; i < t->n_failed_by_status; i++) {
        const struct xp_status_count *x = &t->failed_by_status[i];
        fprintf(f, "    %8" PRIu64 " failed  %s: %s\n", x->n, x->api,
                xp_cuda_status_str(x->driver, x->status).s);
    }
}

static int xp_site_cmp_blocked(const void *a, const void *b)
{
    const struct xp_site *x = *(const struct xp_site *const *)a, *y = *(const struct xp_site *const *)b;
    if (x->blocked_ns != y->blocked_ns)
        return x->blocked_ns > y->blocked_ns ? -1 : 1;
    return (x->stack_id > y->stack_id) - (x->stack_id < y->stack_id);
}

static void xp_t_site(FILE *f, size_t rank, const struct xp_site *s, const struct xp_style *st)
{
    char b1[32], b2[32], b3[32];
    const struct xp_process *p = s->proc;
    fprintf(f, "  %s%2zu.%s %10s %8" PRIu64 " copies  %10s held  %10s blocked  %s",
            st->bold, rank, st->off, xp_fmt_bytes(s->bytes, b1, sizeof b1), s->copies,
            xp_fmt_ns(s->time_ns, b2, sizeof b2), xp_fmt_ns(s->blocked_ns, b3, sizeof b3), st->cyan);
    for (uint8_t i = 0; i < s->n_apis; i++)
        fprintf(f, "%s%s", i ? "," : "", s->apis[i] < p->n_api ? p->api_names[s->apis[i]] : "?");
    fprintf(f, "%s\n", st->off);
    xp_t_frames(f, p, s->stack_id, "        ", st);
}

static void xp_t_sites(FILE *f, const struct xp_summary *s, size_t proc, const struct xp_style *st)
{
    const struct xp_site **mine = malloc((s->n_sites + 1) * sizeof *mine);
    size_t n = 0;
    if (!mine)
        return;
    for (size_t i = 0; i < s->n_sites; i++)
        if (s->sites[i].proc_index == proc)
            mine[n++] = &s->sites[i];
    if (!n) {
        free(mine);
        return;
    }
    fprintf(f, "\n %sTop call sites by bytes%s\n", st->bold, st->off);
    for (size_t i = 0; i < n && i < s->top; i++)
        xp_t_site(f, i + 1, mine[i], st);
    xp_sort(mine, n, sizeof mine[0], xp_site_cmp_blocked);
    if (mine[0]->blocked_ns > 0)
        fprintf(f, "\n %sTop call sites by blocked time%s\n", st->bold, st->off);
    for (size_t i = 0; i < n && i < s->top && mine[i]->blocked_ns > 0; i++)
        xp_t_site(f, i + 1, mine[i], st);
    free(mine);
}

static void xp_t_finding(FILE *f, const struct xp_finding *x, bool many_procs, const struct xp_style *st)
{
    char b1[32], b2[32];
    const char *color = x->severity == XP_SEV_ERROR ? st->red
                        : x->severity == XP_SEV_WARNING ? st->yellow : st->cyan;
    fprintf(f, "\n  %s%s%-7s%s %s%s%s", color, st->bold, xp_severity_name(x->severity), st->off,
            st->bold, x->rule, st->off);
    if (many_procs && x->proc)
        fprintf(f, "  %s[%s]%s", st->dim, x->proc->label, st->off);
    fprintf(f, "\n    %s\n", x->message);
    fprintf(f, "    cost: %" PRIu64 " call(s), %s, %s\n", x->count, xp_fmt_bytes(x->bytes, b1, sizeof b1),
            xp_fmt_ns(x->time_ns, b2, sizeof b2));
    if (x->stack_id != XP_NONE_ID)
        xp_t_frames(f, x->proc, x->stack_id, "    ", st);
    if (x->fix)
        fprintf(f, "    fix: %s\n", x->fix);
    if (x->fix_pytorch)
        fprintf(f, "    PyTorch: %s\n", x->fix_pytorch);
}

int xp_render_text(FILE *f, const struct xp_summary *s)
{
    const struct xp_report *r = s->r;
    struct xp_style st = xp_style_for(s->color);
    char b1[32];
    for (size_t i = 0; i < r->n_procs; i++) {
        const struct xp_process *p = &r->procs[i];
        fprintf(f, "%s%s== %s%s%s  %s%s\n", i ? "\n" : "", st.bold, p->label, p->hostname ? " on " : "",
                p->hostname ? p->hostname : "", st.off, p->db_path);
        if (p->cmdline)
            fprintf(f, "  command: %s\n", p->cmdline);
        fprintf(f, "  ran %s", xp_fmt_ns(p->end_mono_ns - p->start_mono_ns, b1, sizeof b1));
        if (p->exit_status >= 0)
            fprintf(f, ", exit status %" PRId64, p->exit_status);
        if (p->recovered)
            fprintf(f, ", recovered after the process died");
        if (p->stacks_off)
            fprintf(f, ", stacks were off");
        fprintf(f, "\n");
        char cap[160];
        if (xp_capture_line(p, cap, sizeof cap))
            fprintf(f, "  %s\n", cap);
        if (p->records_lost)
            fprintf(f, "  %s%" PRId64 " record(s) lost%s%s%s\n", st.red, p->records_lost, st.off,
                    p->records_lost_reason ? ": " : "", p->records_lost_reason ? p->records_lost_reason : "");
        for (size_t k = 0; k < p->n_notes; k++)
            fprintf(f, "  %snote:%s %s\n", st.yellow, st.off, p->notes[k]);
        fprintf(f, "\n %sTotals%s\n", st.bold, st.off);
        xp_t_totals(f, &s->proc[i], &st);
        xp_t_sites(f, s, i, &st);
    }
    if (r->n_procs > 1) {
        fprintf(f, "\n%s== all %zu processes%s\n", st.bold, r->n_procs, st.off);
        xp_t_totals(f, s->all, &st);
    }
    fprintf(f, "\n%s== Findings (%zu)%s\n", st.bold, r->n_findings, st.off);
    if (!r->n_findings)
        fprintf(f, "  none\n");
    for (size_t i = 0; i < r->n_findings; i++)
        xp_t_finding(f, &r->findings[i], r->n_procs > 1, &st);
    return ferror(f) ? -1 : 0;
}
