/* render_diff_md.c: `xferprof diff --format markdown`, GitHub tables for a pull request comment. */
#include <errno.h>
#include <string.h>

#include "xp_diff.h"

/* Table cells cannot hold a bare '|' (C++ operator names can). */
static void xp_dm_cell(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", f);
        else if (*s == '\n')
            fputc(' ', f);
        else
            fputc(*s, f);
    }
}

static void xp_dm_totals(FILE *f, const struct xp_diff_totals_cmp *t)
{
    char b[32], n[32], ch[32], pct[32];
    fprintf(f, "| metric | base | new | change | %% | |\n|---|---:|---:|---:|---:|---|\n");
    for (size_t i = 0; i < t->n; i++) {
        const struct xp_diff_metric *m = &t->m[i];
        if ((m->base_null || m->base == 0) && (m->new_null || m->new_ == 0))
            continue;
        struct xp_diff_metric delta = *m;
        delta.new_ = m->new_ - m->base;
        delta.new_null = m->base_null || m->new_null;
        if (delta.new_null)
            snprintf(pct, sizeof pct, "-");
        else
            xp_diff_fmt_pct(m->base, m->new_, pct, sizeof pct);
        fprintf(f, "| `%s` | %s | %s | %s | %s | %s |\n", m->name,
                xp_diff_fmt_metric(m, false, b, sizeof b), xp_diff_fmt_metric(m, true, n, sizeof n),
                xp_diff_fmt_metric(&delta, true, ch, sizeof ch), pct,
                m->cls == XP_DC_REGRESSED  ? "**regressed**"
                : m->cls == XP_DC_IMPROVED ? "improved"
                                           : "");
    }
}

static void xp_dm_stat(FILE *f, const struct xp_diff_stats *s, bool bytes)
{
    char buf[32];
    if (!s)
        fputs(" - |", f);
    else if (bytes)
        fprintf(f, " %s |", xp_diff_fmt_bytes(s->bytes, buf, sizeof buf));
    else
        fprintf(f, " %s |", xp_diff_fmt_ns(s->blocked_ns, buf, sizeof buf));
}

int xp_render_diff_md(FILE *f, const struct xp_diff *d, const struct xp_diff_inputs *in)
{
    char buf[1024];
    fprintf(f, "## xferprof diff\n\n");
    fprintf(f, "Base: %zu process%s, new: %zu process%s. By %s, threshold %g%%. "
               "Sites matched: %zu exact, %zu approximate, %zu gone, %zu new. "
               "**%zu regression%s.**\n\n",
            d->base_procs, d->base_procs == 1 ? "" : "es", d->new_procs,
            d->new_procs == 1 ? "" : "es", xp_diff_by_name(d->opt.by), d->opt.threshold_pct,
            d->n_exact, d->n_approximate, d->n_gone, d->n_new, d->regressions,
            d->regressions == 1 ? "" : "s");
    (void)in;
    fprintf(f, "### Totals\n\n");
    xp_dm_totals(f, &d->totals);
    for (size_t i = 0; d->n_pairs > 1 && i < d->n_pairs; i++) {
        const struct xp_diff_pair *p = &d->pairs[i];
        fprintf(f, "\n#### ");
        xp_dm_cell(f, p->base ? p->base->label : "(none)");
        fprintf(f, " → ");
        xp_dm_cell(f, p->new_ ? p->new_->label : "(none)");
        fprintf(f, "\n\n");
        xp_dm_totals(f, &p->totals);
    }
    fprintf(f, "\n### Sites\n\n| class | site | bytes base | bytes new | blocked base | blocked new | why |\n"
               "|---|---|---:|---:|---:|---:|---|\n");
    for (size_t i = 0; i < d->n_sites; i++) {
        const struct xp_diff_site *s = &d->sites[i];
        fprintf(f, "| %s%s%s | `", s->cls == XP_DC_REGRESSED ? "**" : "", xp_diff_class_name(s->cls),
                s->cls == XP_DC_REGRESSED ? "**" : "");
        xp_dm_cell(f, xp_diff_site_label(s, buf, sizeof buf));
        fputs("` |", f);
        xp_dm_stat(f, s->base, true);
        xp_dm_stat(f, s->new_, true);
        xp_dm_stat(f, s->base, false);
        xp_dm_stat(f, s->new_, false);
        fputc(' ', f);
        if (s->match == XP_DM_APPROXIMATE)
            fputs("approximate match; ", f);
        for (size_t k = 0; k < s->n_reasons; k++) {
            if (k)
                fputs(", ", f);
            xp_dm_cell(f, s->reasons[k]);
        }
        fputs(" |\n", f);
    }
    if (d->n_findings) {
        static const char *const kinds[] = {"appeared", "disappeared", "changed"};
        fprintf(f, "\n### Findings\n\n| | rule | site | count | bytes |\n|---|---|---|---:|---:|\n");
        for (size_t i = 0; i < d->n_findings; i++) {
            const struct xp_diff_finding *fd = &d->findings[i];
            const struct xp_diff_finding_side *v = fd->kind == XP_DF_DISAPPEARED ? &fd->base : &fd->new_;
            fprintf(f, "| %s | `%s` | `", kinds[fd->kind], fd->rule);
            xp_dm_cell(f, xp_diff_fmt_site(fd->frames, fd->n_frames, "(no site)", buf, sizeof buf));
            fprintf(f, "` | %llu | %llu |\n", (unsigned long long)v->count, (unsigned long long)v->bytes);
        }
    }
    if (fflush(f) != 0 || ferror(f)) {
        if (!errno)
            errno = EIO;
        return -1;
    }
    return 0;
}
