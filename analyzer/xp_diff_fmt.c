/* xp_diff_fmt.c: numbers, frames and sites as text, for the diff renderers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xp_diff.h"
#include "xp_diff_int.h"

/* ---- formatting shared by the renderers -------------------------------- */

const char *xp_diff_fmt_bytes(double v, char *buf, size_t n)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double a = fabs(v);
    size_t u = 0;
    while (a >= 1024 && u + 1 < sizeof unit / sizeof unit[0]) {
        a /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, n, "%.0f B", v);
    else
        snprintf(buf, n, "%.1f %s", v < 0 ? -a : a, unit[u]);
    return buf;
}

const char *xp_diff_fmt_ns(double v, char *buf, size_t n)
{
    double a = fabs(v);
    if (a >= 1e9)
        snprintf(buf, n, "%.2f s", v / 1e9);
    else if (a >= 1e6)
        snprintf(buf, n, "%.2f ms", v / 1e6);
    else if (a >= 1e3)
        snprintf(buf, n, "%.1f us", v / 1e3);
    else
        snprintf(buf, n, "%.0f ns", v);
    return buf;
}

static bool xp_ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

const char *xp_diff_fmt_metric(const struct xp_diff_metric *m, bool new_side, char *buf, size_t n)
{
    double v = new_side ? m->new_ : m->base;
    if (new_side ? m->new_null : m->base_null)
        snprintf(buf, n, "-");
    else if (xp_ends_with(m->name, "bytes"))
        xp_diff_fmt_bytes(v, buf, n);
    else if (xp_ends_with(m->name, "_ns"))
        xp_diff_fmt_ns(v, buf, n);
    else if (xp_ends_with(m->name, "_share"))
        snprintf(buf, n, "%.1f%%", v * 100);
    else if (xp_ends_with(m->name, "_gbps"))
        snprintf(buf, n, "%.2f GB/s", v);
    else
        snprintf(buf, n, "%.0f", v);
    return buf;
}

const char *xp_diff_fmt_pct(double base, double new_, char *buf, size_t n)
{
    double pct;
    if (!xp_diff_change_pct(base, new_, &pct))
        snprintf(buf, n, "n/a");
    else
        snprintf(buf, n, "%+.1f%%", pct);
    return buf;
}

const char *xp_diff_fmt_frame(const struct xp_diff_frame *f, char *buf, size_t n)
{
    const char *name = f->demangled ? f->demangled : f->function;
    if (name && f->file && f->line > 0)
        snprintf(buf, n, "%s (%s:%d) [%s]", name, f->file, f->line, f->module ? f->module : "?");
    else if (name)
        snprintf(buf, n, "%s [%s]", name, f->module ? f->module : "?");
    else
        snprintf(buf, n, "%s+0x%llx", f->module ? f->module : "?", (unsigned long long)f->offset);
    return buf;
}

const char *xp_diff_fmt_site(const struct xp_diff_frame *f, size_t nframes, const char *none,
                             char *buf, size_t n)
{
    if (!nframes) {
        snprintf(buf, n, "%s", none);
        return buf;
    }
    xp_diff_fmt_frame(&f[0], buf, n);
    if (f[0].inlined && nframes > 1) {
        size_t used = strlen(buf);
        char caller[512];
        snprintf(buf + used, n - used, " inlined into %s",
                 xp_diff_fmt_frame(&f[1], caller, sizeof caller));
    }
    return buf;
}

const char *xp_diff_site_label(const struct xp_diff_site *s, char *buf, size_t n)
{
    if (s->range)
        snprintf(buf, n, "%s", s->range);
    else
        xp_diff_fmt_site(s->frames, s->n_frames, "(no stack)", buf, n);
    return buf;
}
