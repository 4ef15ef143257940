/* xp_html.h: what the HTML report (render_html.c) and diff (render_diff_html.c) share: the page skeleton with its embedded CSS and JavaScript (analyzer/html/), escaping, and the embedded data element. */
#ifndef XP_HTML_H
#define XP_HTML_H

#include <stdio.h>

/* The page's CSS and script, generated from analyzer/html/ by embed.py. */
extern const char xp_html_css[];
extern const char xp_html_js[];

/* s as HTML text or as the value of a quoted attribute: & < > " ' escaped.
 * NULL writes nothing; invalid UTF-8 is passed through (browsers show U+FFFD). */
void xp_html_text(FILE *f, const char *s);

/* <!doctype html> through the page header: <title> and <h1> are title
 * (escaped), the CSS inline, then <body>; the caller writes the sections. */
void xp_html_begin(FILE *f, const char *title);

/* The error box, the tooltip, the render-time marker, the script, the end
 * of the page.  Returns 0, or -1 when writing failed (ferror). */
int xp_html_end(FILE *f);

/* A stream whose bytes go into f inside <script type="application/json"
 * id="xp-data">, with every '<' written as \u003c: JSON allows that escape
 * only inside strings, which is the only place a '<' can be, so no name
 * ("</script>", "<!--") can end the element.  NULL when out of memory.
 * xp_html_data_close ends the element and returns 0, or -1 on a write error. */
FILE *xp_html_data_open(FILE *f);
int xp_html_data_close(FILE *data, FILE *f);

#endif
