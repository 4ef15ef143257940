/* render_diff_html.c: `xferprof diff --format html`, the two runs side by side on one self-contained page (docs/diff.md). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "xp_diff.h"
#include "xp_html.h"

static const char *xp_dh_class(enum xp_diff_class c)
{
    return c == XP_DC_REGRESSED ? "regressed" : c == XP_DC_IMPROVED ? "improved" : "";
}

/* A numeric cell: sorts by v, shows text. */
static void xp_dh_num(FILE *f, double v, const char *text)
{
    fprintf(f, "<td class=\"n\" data-v=\"%.17g\">", isfinite(v) ? v : 0);
    xp_html_text(f, text);
    fputs("</td>", f);
}

static void xp_dh_totals(FILE *f, const struct xp_diff_totals_cmp *t)
{
    char b[48], n[48], ch[48], pct[48];
    fputs("<table class=\"xp-sortable\">\n<thead><tr><th>metric</th><th class=\"n\">base</th>"
          "<th class=\"n\">new</th><th class=\"n\">change</th><th class=\"n\">%</th><th></th></tr></thead>\n<tbody>\n",
          f);
    for (size_t i = 0; i < t->n; i++) {
        const struct xp_diff_metric *m = &t->m[i];
        if ((m->base_null || m->base == 0) && (m->new_null || m->new_ == 0))
            continue;
        struct xp_diff_metric delta = *m;
        double p = 0;
        delta.new_ = m->new_ - m->base;
        delta.new_null = m->base_null || m->new_null;
        if (delta.new_null || !xp_diff_change_pct(m->base, m->new_, &p))
            snprintf(pct, sizeof pct, "-");
        else
            xp_diff_fmt_pct(m->base, m->new_, pct, sizeof pct);
        fprintf(f, "<tr class=\"%s\"><td><code>", xp_dh_class(m->cls));
        xp_html_text(f, m->name);
        fputs("</code></td>", f);
        xp_dh_num(f, m->base, xp_diff_fmt_metric(m, false, b, sizeof b));
        xp_dh_num(f, m->new_, xp_diff_fmt_metric(m, true, n, sizeof n));
        /* Colored by what the change means (more bandwidth is better), not by its sign. */
        fprintf(f, "<td class=\"n %s\" data-v=\"%.17g\">",
                m->cls == XP_DC_REGRESSED ? "up" : m->cls == XP_DC_IMPROVED ? "down" : "",
                delta.new_null ? 0 : delta.new_);
        xp_html_text(f, xp_diff_fmt_metric(&delta, true, ch, sizeof ch));
        fputs("</td>", f);
        xp_dh_num(f, p, pct);
        fprintf(f, "<td class=\"cls\">%s</td></tr>\n", xp_dh_class(m->cls));
    }
    fputs("</tbody>\n</table>\n", f);
}

/* One site value on both sides (absent: "-"), then its change in percent. */
static void xp_dh_pair(FILE *f, const struct xp_diff_stats *base, double vb,
                       const struct xp_diff_stats *new_, double vn, bool bytes)
{
    char b[48];
    const struct xp_diff_stats *st[2] = {base, new_};
    double v[2] = {vb, vn}, p = 0;
    for (int k = 0; k < 2; k++) {
        if (!st[k])
            fputs("<td class=\"n\" data-v=\"0\">-</td>", f);
        else
            xp_dh_num(f, v[k], bytes ? xp_diff_fmt_bytes(v[k], b, sizeof b) : xp_diff_fmt_ns(v[k], b, sizeof b));
    }
    if (base && new_ && xp_diff_change_pct(vb, vn, &p))
        xp_dh_num(f, p, xp_diff_fmt_pct(vb, vn, b, sizeof b));
    else
        fputs("<td class=\"n\" data-v=\"0\">-</td>", f);
}

static void xp_dh_frames_title(FILE *f, const struct xp_diff_frame *fr, size_t n)
{
    char buf[1024];
    for (size_t i = 0; i < n && i < 16; i++) {
        if (i && fr[i - 1].inlined)
            fputs("inlined into ", f);
        xp_html_text(f, xp_diff_fmt_frame(&fr[i], buf, sizeof buf));
        fputs("&#10;", f);
    }
}

static void xp_dh_sites(FILE *f, const struct xp_diff *d)
{
    char buf[1024];
    fprintf(f, "<section id=\"sites\">\n<h2>Call sites (%zu)</h2>\n", d->n_sites);
    if (!d->n_sites) {
        fputs("<p class=\"note\">No copies on either side.</p>\n</section>\n", f);
        return;
    }
    fputs("<p class=\"note\">Regressions first, then new, gone, improved and unchanged sites; "
          "hover a site for its frames, click a header to sort.</p>\n"
          "<table class=\"xp-sortable\" id=\"xp-diff-sites\">\n<thead><tr><th>class</th><th>site</th>"
          "<th class=\"n\">bytes base</th><th class=\"n\">bytes new</th><th class=\"n\">bytes %</th>"
          "<th class=\"n\">blocked base</th><th class=\"n\">blocked new</th><th class=\"n\">blocked %</th>"
          "<th>why</th></tr></thead>\n<tbody>\n",
          f);
    for (size_t i = 0; i < d->n_sites; i++) {
        const struct xp_diff_site *s = &d->sites[i];
        fprintf(f, "<tr class=\"xp-dsite %s\" data-class=\"%s\"><td class=\"cls\" data-v=\"%d\">%s</td>"
                   "<td class=\"mono\" title=\"",
                xp_dh_class(s->cls), xp_diff_class_name(s->cls), (int)s->cls, xp_diff_class_name(s->cls));
        xp_dh_frames_title(f, s->frames, s->n_frames);
        fputs("\">", f);
        xp_html_text(f, xp_diff_site_label(s, buf, sizeof buf));
        fputs("</td>", f);
        xp_dh_pair(f, s->base, s->base ? s->base->bytes : 0, s->new_, s->new_ ? s->new_->bytes : 0, true);
        xp_dh_pair(f, s->base, s->base ? s->base->blocked_ns : 0, s->new_, s->new_ ? s->new_->blocked_ns : 0,
                   false);
        fputs("<td>", f);
        if (s->match == XP_DM_APPROXIMATE)
            fputs("approximate match; ", f);
        for (size_t k = 0; k < s->n_reasons; k++) {
            fputs(k ? ", " : "", f);
            xp_html_text(f, s->reasons[k]);
        }
        fputs("</td></tr>\n", f);
    }
    fputs("</tbody>\n</table>\n</section>\n", f);
}

static void xp_dh_findings(FILE *f, const struct xp_diff *d)
{
    static const char *const kinds[] = {"appeared", "disappeared", "changed"};
    char buf[1024];
    fprintf(f, "<section id=\"findings\">\n<h2>Findings</h2>\n");
    if (!d->n_findings)
        fputs("<p class=\"note\">The same findings on both sides.</p>\n", f);
    for (int k = XP_DF_APPEARED; k <= XP_DF_CHANGED; k++) {
        bool any = false;
        for (size_t i = 0; i < d->n_findings; i++) {
            const struct xp_diff_finding *x = &d->findings[i];
            if ((int)x->kind != k)
                continue;
            if (!any)
                fprintf(f, "<h3>%s</h3>\n", kinds[k]);
            any = true;
            const struct xp_diff_finding_side *v = x->kind == XP_DF_DISAPPEARED ? &x->base : &x->new_;
            fprintf(f, "<details class=\"finding xp-dfinding %s\">\n<summary><span class=\"%s\">%s</span> <code>",
                    kinds[k], kinds[k], kinds[k]);
            xp_html_text(f, x->rule);
            fputs("</code> at <code>", f);
            xp_html_text(f, xp_diff_fmt_site(x->frames, x->n_frames, "(no site)", buf, sizeof buf));
            fprintf(f, "</code>: %llu time(s), ", (unsigned long long)v->count);
            xp_html_text(f, xp_diff_fmt_bytes((double)v->bytes, buf, sizeof buf));
            if (k == XP_DF_CHANGED) {
                fprintf(f, " (base %llu time(s), ", (unsigned long long)x->base.count);
                xp_html_text(f, xp_diff_fmt_bytes((double)x->base.bytes, buf, sizeof buf));
                fputs(")", f);
            }
            fputs("</summary>\n<div>\n<ol class=\"frames mono\">\n", f);
            for (size_t n = 0; n < x->n_frames; n++) {
                fputs("<li>", f);
                if (n && x->frames[n - 1].inlined)
                    fputs("<span class=\"note\">inlined into</span> ", f);
                xp_html_text(f, xp_diff_fmt_frame(&x->frames[n], buf, sizeof buf));
                fputs("</li>\n", f);
            }
            fputs("</ol>\n<p class=\"note\">The fix: see this rule in the new run's report "
                  "(<code>xferprof report NEW --format html</code>).</p>\n</div>\n</details>\n", f);
        }
    }
    fputs("</section>\n", f);
}

static void xp_dh_side(FILE *f, const char *name, char **dbs, size_t n, size_t procs)
{
    fprintf(f, "<div><b>%s</b> (%zu process%s):", name, procs, procs == 1 ? "" : "es");
    for (size_t i = 0; i < n; i++) {
        fputs(" <code>", f);
        xp_html_text(f, dbs[i]);
        fputs("</code>", f);
    }
    fputs("</div>\n", f);
}

int xp_render_diff_html(FILE *f, const struct xp_diff *d, const struct xp_diff_inputs *in)
{
    xp_html_begin(f, "xferprof diff");
    fputs("<div class=\"meta\">\n", f);
    xp_dh_side(f, "base", in->base_dbs, in->n_base_dbs, d->base_procs);
    xp_dh_side(f, "new", in->new_dbs, in->n_new_dbs, d->new_procs);
    fprintf(f, "<div>Compared by %s; a change counts past %g%% (and 64 KiB or 1 ms).</div>\n</div>\n</header>\n",
            xp_diff_by_name(d->opt.by), d->opt.threshold_pct);
    fprintf(f, "<div class=\"cards\">\n<div class=\"card\"><div class=\"v %s\" id=\"xp-regressions\">%zu</div>"
               "<div class=\"k\">regression%s</div></div>\n",
            d->regressions ? "up" : "", d->regressions, d->regressions == 1 ? "" : "s");
    fprintf(f, "<div class=\"card\"><div class=\"v\">%zu / %zu</div><div class=\"k\">sites matched exactly / "
               "approximately</div></div>\n<div class=\"card\"><div class=\"v\">%zu / %zu</div>"
               "<div class=\"k\">sites gone / new</div></div>\n</div>\n",
            d->n_exact, d->n_approximate, d->n_gone, d->n_new);
    fputs("<section id=\"totals\">\n<h2>Totals, base and new side by side</h2>\n", f);
    xp_dh_totals(f, &d->totals);
    for (size_t i = 0; d->n_pairs > 1 && i < d->n_pairs; i++) {
        const struct xp_diff_pair *p = &d->pairs[i];
        fputs("<h3>", f);
        xp_html_text(f, p->base ? p->base->label : "(none)");
        fputs(" &rarr; ", f);
        xp_html_text(f, p->new_ ? p->new_->label : "(none)");
        fputs("</h3>\n", f);
        xp_dh_totals(f, &p->totals);
    }
    fputs("</section>\n", f);
    xp_dh_sites(f, d);
    xp_dh_findings(f, d);
    if (xp_html_end(f) != 0 || fflush(f) != 0) {
        if (!errno)
            errno = EIO;
        return -1;
    }
    return 0;
}
