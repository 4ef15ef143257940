/* render_diff_text.c: `xferprof diff` for a terminal: totals side by side, then sites, regressions first. */
#include <errno.h>
#include <string.h>

#include "xp_diff.h"

/* ANSI colors, only when the command says the output is a terminal that
 * wants them (a TTY and no NO_COLOR). */
static const char *xp_dt_color(enum xp_diff_class c, bool color)
{
    if (!color)
        return "";
    switch (c) {
    case XP_DC_REGRESSED: return "\033[1;31m";
    case XP_DC_NEW: return "\033[33m";
    case XP_DC_GONE: return "\033[36m";
    case XP_DC_IMPROVED: return "\033[32m";
    default: return "";
    }
}

static const char *xp_dt_reset(enum xp_diff_class c, bool color)
{
    return color && c != XP_DC_UNCHANGED ? "\033[0m" : "";
}

/* A metric is worth a line when either side has something. */
static bool xp_dt_shown(const struct xp_diff_metric *m)
{
    return (!m->base_null && m->base != 0) || (!m->new_null && m->new_ != 0);
}

static void xp_dt_totals(FILE *f, const struct xp_diff_totals_cmp *t, bool color, const char *indent)
{
    char b[32], n[32], ch[32], pct[32];
    fprintf(f, "%s%-28s %14s %14s %14s %9s\n", indent, "metric", "base", "new", "change", "");
    for (size_t i = 0; i < t->n; i++) {
        const struct xp_diff_metric *m = &t->m[i];
        if (!xp_dt_shown(m))
            continue;
        struct xp_diff_metric delta = *m;
        delta.new_ = m->new_ - m->base;
        delta.new_null = m->base_null || m->new_null;
        xp_diff_fmt_metric(m, false, b, sizeof b);
        xp_diff_fmt_metric(m, true, n, sizeof n);
        xp_diff_fmt_metric(&delta, true, ch, sizeof ch);
        if (delta.new_null)
            snprintf(pct, sizeof pct, "-");
        else
            xp_diff_fmt_pct(m->base, m->new_, pct, sizeof pct);
        fprintf(f, "%s%s%-28s %14s %14s %14s %9s%s%s%s\n", indent, xp_dt_color(m->cls, color),
                m->name, b, n, ch, pct, m->cls == XP_DC_UNCHANGED ? "" : "  ",
                m->cls == XP_DC_UNCHANGED ? "" : xp_diff_class_name(m->cls),
                xp_dt_reset(m->cls, color));
    }
}

static void xp_dt_stats(FILE *f, const char *side, const struct xp_diff_stats *s)
{
    char by[32], t[32];
    if (!s) {
        fprintf(f, "      %-5s -\n", side);
        return;
    }
    fprintf(f, "      %-5s %.0f copies, %s, blocked %s,", side, s->copies,
            xp_diff_fmt_bytes(s->bytes, by, sizeof by), xp_diff_fmt_ns(s->blocked_ns, t, sizeof t));
    for (unsigned i = XP_HM_PAGEABLE; i < XP_HM_COUNT; i++)
        if (s->host_mem & (1u << i))
            fprintf(f, " %s", xp_hostmem_name((enum xp_hostmem)i));
    for (unsigned i = XP_BL_SYNC; i < XP_BL_COUNT; i++)
        if (s->blocking & (1u << i))
            fprintf(f, " %s", xp_blocking_name((enum xp_block_class)i));
    if (s->instances > 1)
        fprintf(f, " (per instance of %llu)", (unsigned long long)s->instances);
    fputc('\n', f);
}

int xp_render_diff_text(FILE *f, const struct xp_diff *d, const struct xp_diff_inputs *in,
                        bool color)
{
    char buf[1024];
    fprintf(f, "xferprof diff: base %zu process%s (%zu database%s), new %zu process%s (%zu database%s)\n",
            d->base_procs, d->base_procs == 1 ? "" : "es", in->n_base_dbs,
            in->n_base_dbs == 1 ? "" : "s", d->new_procs, d->new_procs == 1 ? "" : "es",
            in->n_new_dbs, in->n_new_dbs == 1 ? "" : "s");
    fprintf(f, "by %s, threshold %g%%; sites matched: %zu exact, %zu approximate, %zu gone, %zu new\n\n",
            xp_diff_by_name(d->opt.by), d->opt.threshold_pct, d->n_exact, d->n_approximate,
            d->n_gone, d->n_new);
    fprintf(f, "Totals\n");
    xp_dt_totals(f, &d->totals, color, "  ");
    for (size_t i = 0; d->n_pairs > 1 && i < d->n_pairs; i++) {
        const struct xp_diff_pair *p = &d->pairs[i];
        fprintf(f, "\n%s -> %s\n", p->base ? p->base->label : "(none)",
                p->new_ ? p->new_->label : "(none)");
        xp_dt_totals(f, &p->totals, color, "  ");
    }
    fprintf(f, "\nSites\n");
    if (d->n_sites == 0)
        fprintf(f, "  (no copies on either side)\n");
    for (size_t i = 0; i < d->n_sites; i++) {
        const struct xp_diff_site *s = &d->sites[i];
        fprintf(f, "  %s%-10s%s %s", xp_dt_color(s->cls, color), xp_diff_class_name(s->cls),
                xp_dt_reset(s->cls, color), xp_diff_site_label(s, buf, sizeof buf));
        if (s->match == XP_DM_APPROXIMATE)
            fprintf(f, " (matched approximately)");
        for (size_t k = 0; k < s->n_reasons; k++)
            fprintf(f, "%s%s", k ? ", " : ": ", s->reasons[k]);
        fputc('\n', f);
        /* Numbers for what changed; an unchanged site is one line. */
        if (s->cls != XP_DC_UNCHANGED) {
            for (size_t k = 1; k < s->n_frames && k < 4; k++)
                fprintf(f, "      %s %s\n", s->frames[k - 1].inlined ? "inlined into" : "from",
                        xp_diff_fmt_frame(&s->frames[k], buf, sizeof buf));
            xp_dt_stats(f, "base", s->base);
            xp_dt_stats(f, "new", s->new_);
        }
    }
    static const char *const kinds[] = {"appeared", "disappeared", "changed"};
    if (d->n_findings)
        fprintf(f, "\nFindings\n");
    for (size_t i = 0; i < d->n_findings; i++) {
        const struct xp_diff_finding *fd = &d->findings[i];
        const char *where = xp_diff_fmt_site(fd->frames, fd->n_frames, "(no site)", buf, sizeof buf);
        fprintf(f, "  %-11s %s at %s", kinds[fd->kind], fd->rule, where);
        if (fd->kind == XP_DF_CHANGED)
            fprintf(f, ": count %llu -> %llu, bytes %llu -> %llu",
                    (unsigned long long)fd->base.count, (unsigned long long)fd->new_.count,
                    (unsigned long long)fd->base.bytes, (unsigned long long)fd->new_.bytes);
        fputc('\n', f);
    }
    fprintf(f, "\n%zu regression%s", d->regressions, d->regressions == 1 ? "" : "s");
    if (d->exit_status)
        fprintf(f, " (exit status 1)");
    fputc('\n', f);
    if (fflush(f) != 0 || ferror(f)) {
        if (!errno)
            errno = EIO;
        return -1;
    }
    return 0;
}
