/* render_diff_json.c: `xferprof diff --format json`, the stable machine interface (docs/diff.md). */
#include <errno.h>

#include "xp_commands.h"
#include "xp_diff.h"
#include "xp_json.h"

static void xp_dj_side(struct xp_json *j, const char *key, char **dbs, size_t n, size_t procs)
{
    xp_json_key(j, key);
    xp_json_object(j);
    xp_json_key(j, "databases");
    xp_json_array(j);
    for (size_t i = 0; i < n; i++)
        xp_json_str(j, dbs[i]);
    xp_json_end(j);
    xp_json_key(j, "processes");
    xp_json_uint(j, procs);
    xp_json_end(j);
}

static void xp_dj_totals(struct xp_json *j, const struct xp_diff_totals_cmp *t)
{
    xp_json_object(j);
    for (size_t i = 0; i < t->n; i++) {
        const struct xp_diff_metric *m = &t->m[i];
        double pct;
        xp_json_key(j, m->name);
        xp_json_object(j);
        xp_json_key(j, "base");
        m->base_null ? xp_json_null(j) : xp_json_double(j, m->base);
        xp_json_key(j, "new");
        m->new_null ? xp_json_null(j) : xp_json_double(j, m->new_);
        xp_json_key(j, "change");
        m->base_null || m->new_null ? xp_json_null(j) : xp_json_double(j, m->new_ - m->base);
        xp_json_key(j, "change_pct");
        if (!m->base_null && !m->new_null && xp_diff_change_pct(m->base, m->new_, &pct))
            xp_json_double(j, pct);
        else
            xp_json_null(j);
        xp_json_end(j);
    }
    xp_json_end(j);
}

/* FRAME as in the report's JSON; addresses are shown, never matched on. */
static void xp_dj_frames(struct xp_json *j, const struct xp_diff_frame *f, size_t n)
{
    xp_json_array(j);
    for (size_t i = 0; i < n; i++) {
        xp_json_object(j);
        xp_json_key(j, "function");
        xp_json_str(j, f[i].function);
        xp_json_key(j, "demangled");
        xp_json_str(j, f[i].function && f[i].demangled ? f[i].demangled : f[i].function);
        xp_json_key(j, "inlined");
        xp_json_bool(j, f[i].inlined);
        xp_json_key(j, "file");
        xp_json_str(j, f[i].file);
        xp_json_key(j, "line");
        f[i].line > 0 ? xp_json_int(j, f[i].line) : xp_json_null(j);
        xp_json_key(j, "module");
        xp_json_str(j, f[i].module);
        xp_json_key(j, "offset");
        xp_json_uint(j, f[i].offset);
        xp_json_key(j, "address");
        xp_json_uint(j, f[i].addr);
        xp_json_end(j);
    }
    xp_json_end(j);
}

static void xp_dj_bits(struct xp_json *j, uint32_t bits, unsigned count, const char *(*name)(unsigned))
{
    xp_json_array(j);
    for (unsigned i = 0; i < count; i++)
        if (bits & (1u << i))
            xp_json_str(j, name(i));
    xp_json_end(j);
}

static const char *xp_dj_hostmem(unsigned i) { return xp_hostmem_name((enum xp_hostmem)i); }
static const char *xp_dj_blocking(unsigned i) { return xp_blocking_name((enum xp_block_class)i); }

static void xp_dj_stats(struct xp_json *j, const struct xp_diff_stats *s)
{
    if (!s) {
        xp_json_null(j);
        return;
    }
    xp_json_object(j);
    xp_json_key(j, "copies");
    xp_json_double(j, s->copies);
    xp_json_key(j, "bytes");
    xp_json_double(j, s->bytes);
    xp_json_key(j, "time_ns");
    xp_json_double(j, s->time_ns);
    xp_json_key(j, "blocked_ns");
    xp_json_double(j, s->blocked_ns);
    xp_json_key(j, "host_mem");
    /* A D2D copy has no host side: "none" is not a kind of memory. */
    xp_dj_bits(j, s->host_mem & ~(1u << XP_HM_NONE), XP_HM_COUNT, xp_dj_hostmem);
    xp_json_key(j, "blocking");
    xp_dj_bits(j, s->blocking & ~(1u << XP_BL_UNKNOWN), XP_BL_COUNT, xp_dj_blocking);
    xp_json_key(j, "apis");
    xp_json_array(j);
    for (size_t i = 0; i < s->n_apis; i++)
        xp_json_str(j, s->apis[i]);
    xp_json_end(j);
    if (s->instances > 1) {
        xp_json_key(j, "instances");
        xp_json_uint(j, s->instances);
    }
    xp_json_end(j);
}

static void xp_dj_fside(struct xp_json *j, const struct xp_diff_finding_side *s)
{
    xp_json_key(j, "count");
    xp_json_uint(j, s->count);
    xp_json_key(j, "bytes");
    xp_json_uint(j, s->bytes);
    xp_json_key(j, "time_ns");
    xp_json_int(j, s->time_ns);
}

static void xp_dj_findings(struct xp_json *j, const struct xp_diff *d)
{
    static const char *const kinds[] = {"appeared", "disappeared", "changed"};
    xp_json_object(j);
    for (int k = XP_DF_APPEARED; k <= XP_DF_CHANGED; k++) {
        xp_json_key(j, kinds[k]);
        xp_json_array(j);
        for (size_t i = 0; i < d->n_findings; i++) {
            const struct xp_diff_finding *f = &d->findings[i];
            if ((int)f->kind != k)
                continue;
            xp_json_object(j);
            xp_json_key(j, "rule");
            xp_json_str(j, f->rule);
            xp_json_key(j, "frames");
            xp_dj_frames(j, f->frames, f->n_frames);
            if (k == XP_DF_CHANGED) {
                xp_json_key(j, "base");
                xp_json_object(j);
                xp_dj_fside(j, &f->base);
                xp_json_end(j);
                xp_json_key(j, "new");
                xp_json_object(j);
                xp_dj_fside(j, &f->new_);
                xp_json_end(j);
            } else {
                xp_dj_fside(j, k == XP_DF_APPEARED ? &f->new_ : &f->base);
            }
            xp_json_end(j);
        }
        xp_json_end(j);
    }
    xp_json_end(j);
}

int xp_render_diff_json(FILE *f, const struct xp_diff *d, const struct xp_diff_inputs *in)
{
    struct xp_json jw, *j = &jw;
    xp_json_init(j, f);
    xp_json_object(j);
    xp_json_key(j, "format");
    xp_json_str(j, "xferprof-diff");
    xp_json_key(j, "version");
    xp_json_int(j, 1);
    xp_json_key(j, "xferprof_version");
    xp_json_str(j, XP_VERSION);
    xp_dj_side(j, "base", in->base_dbs, in->n_base_dbs, d->base_procs);
    xp_dj_side(j, "new", in->new_dbs, in->n_new_dbs, d->new_procs);
    xp_json_key(j, "threshold_pct");
    xp_json_double(j, d->opt.threshold_pct);
    xp_json_key(j, "by");
    xp_json_str(j, xp_diff_by_name(d->opt.by));
    xp_json_key(j, "matching");
    xp_json_object(j);
    xp_json_key(j, "exact");
    xp_json_uint(j, d->n_exact);
    xp_json_key(j, "approximate");
    xp_json_uint(j, d->n_approximate);
    xp_json_key(j, "gone");
    xp_json_uint(j, d->n_gone);
    xp_json_key(j, "new");
    xp_json_uint(j, d->n_new);
    xp_json_end(j);
    xp_json_key(j, "totals");
    xp_dj_totals(j, &d->totals);
    xp_json_key(j, "pairs");
    xp_json_array(j);
    for (size_t i = 0; i < d->n_pairs; i++) {
        const struct xp_diff_pair *p = &d->pairs[i];
        xp_json_object(j);
        xp_json_key(j, "base_process");
        xp_json_str(j, p->base ? p->base->label : NULL);
        xp_json_key(j, "new_process");
        xp_json_str(j, p->new_ ? p->new_->label : NULL);
        xp_json_key(j, "totals");
        xp_dj_totals(j, &p->totals);
        xp_json_end(j);
    }
    xp_json_end(j);
    xp_json_key(j, "sites");
    xp_json_array(j);
    for (size_t i = 0; i < d->n_sites; i++) {
        const struct xp_diff_site *s = &d->sites[i];
        xp_json_object(j);
        xp_json_key(j, "class");
        xp_json_str(j, xp_diff_class_name(s->cls));
        xp_json_key(j, "match");
        xp_json_str(j, xp_diff_match_name(s->match));
        xp_json_key(j, "reasons");
        xp_json_array(j);
        for (size_t k = 0; k < s->n_reasons; k++)
            xp_json_str(j, s->reasons[k]);
        xp_json_end(j);
        if (s->range) {
            xp_json_key(j, "range");
            xp_json_str(j, s->range);
        }
        xp_json_key(j, "frames");
        xp_dj_frames(j, s->frames, s->n_frames);
        xp_json_key(j, "base");
        xp_dj_stats(j, s->base);
        xp_json_key(j, "new");
        xp_dj_stats(j, s->new_);
        xp_json_end(j);
    }
    xp_json_end(j);
    xp_json_key(j, "findings");
    xp_dj_findings(j, d);
    xp_json_key(j, "regressions");
    xp_json_uint(j, d->regressions);
    xp_json_key(j, "exit_status");
    xp_json_int(j, d->exit_status);
    xp_json_end(j);
    fputc('\n', f);
    if (ferror(f)) {
        if (!errno)
            errno = EIO;
        return -1;
    }
    return 0;
}
