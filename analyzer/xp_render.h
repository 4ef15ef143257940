/* xp_render.h: what the report's renderers (render_json.c, render_text.c, render_md.c, render_html.c) get, and the units they share. */
#ifndef XP_RENDER_H
#define XP_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "xp_report.h"
#include "xp_totals.h"

/* Everything a report shows, computed before rendering. */
struct xp_summary {
    const struct xp_report *r;        /* processes and findings (filtered, sorted) */
    const struct xp_totals *all;      /* all processes together */
    const struct xp_totals *proc;     /* per process, r->n_procs of them */
    const struct xp_site *sites;      /* per process, the top sites (xp_sites_top) */
    size_t n_sites;
    size_t top;
    bool color;                       /* text only: ANSI colors */
};

/* Each writes the whole report to f; returns 0, or -1 when writing failed
 * (ferror). */
int xp_render_json(FILE *f, const struct xp_summary *s);
int xp_render_text(FILE *f, const struct xp_summary *s);
int xp_render_markdown(FILE *f, const struct xp_summary *s);
int xp_render_html(FILE *f, const struct xp_summary *s);

/* Human units for text and Markdown: "1.5 MiB", "12.3 ms", "11.2 GB/s"
 * (bandwidth NaN gives "-").  Each returns buf. */
const char *xp_fmt_bytes(uint64_t bytes, char *buf, size_t n);
const char *xp_fmt_ns(int64_t ns, char *buf, size_t n);
const char *xp_fmt_gbps(double gbps, char *buf, size_t n);
/* "function (file:line)", "function (module)" or "module+0xoff"; the
 * function demangled. */
const char *xp_fmt_frame(const struct xp_frame *f, char *buf, size_t n);
/* A call site on one line: its first frame, and when that one is inlined,
 * " inlined into " the function it was inlined into at the call's line;
 * "(no stack)" when s is NULL or empty. */
const char *xp_fmt_site(const struct xp_stack *s, char *buf, size_t n);
/* How frame i of s is introduced in a list of frames: "at " (the first),
 * "inlined into " (after an inlined one) or "called from ". */
const char *xp_frame_label(const struct xp_stack *s, uint32_t i);

/* The stack of a site or finding: NULL when none or unknown. */
const struct xp_stack *xp_site_stack(const struct xp_process *p, uint32_t stack_id);

#endif
