/* render_html_tables.h: the HTML report's tables and header (render_html_tables.c). */
#ifndef RENDER_HTML_TABLES_H
#define RENDER_HTML_TABLES_H

#include <stdio.h>

#include "xp_render.h"

/* The page's header: each process, its command, run time, notes. */
void xp_h_header(FILE *f, const struct xp_report *r);
/* Totals as cards: copies, bytes, blocked time, per direction. */
void xp_h_totals(FILE *f, const struct xp_totals *t);
/* The findings table, most severe and costly first. */
void xp_h_findings(FILE *f, const struct xp_report *r);
/* The call sites by bytes and by blocked time. */
void xp_h_sites(FILE *f, const struct xp_summary *s);

#endif
