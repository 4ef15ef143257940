/* xp_html.c: the HTML page skeleton, escaping, and the embedded data element (xp_html.h). */
#include <string.h>

#include "xp_html.h"

void xp_html_text(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f);
        }
    }
}

void xp_html_begin(FILE *f, const char *title)
{
    fputs("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"generator\" content=\"xferprof " XP_VERSION "\">\n<title>",
          f);
    xp_html_text(f, title);
    fputs("</title>\n<style>\n", f);
    fputs(xp_html_css, f);
    fputs("</style>\n</head>\n<body>\n<header>\n<h1>", f);
    xp_html_text(f, title);
    fputs("</h1>\n", f);
}

int xp_html_end(FILE *f)
{
    fputs("<pre id=\"xp-errors\"></pre>\n<div id=\"xp-tip\"></div>\n"
          "<footer>xferprof " XP_VERSION ": a self-contained page (no network); drawn in "
          "<span id=\"xp-render-ms\">?</span> ms.</footer>\n<script>\n",
          f);
    fputs(xp_html_js, f);
    fputs("</script>\n</body>\n</html>\n", f);
    return ferror(f) ? -1 : 0;
}

/* The cookie of a data stream: where the escaped bytes go. */
static ssize_t xp_html_data_write(void *cookie, const char *buf, size_t n)
{
    FILE *f = cookie;
    size_t done = 0;
    while (done < n) {
        const char *lt = memchr(buf + done, '<', n - done);
        size_t run = lt ? (size_t)(lt - (buf + done)) : n - done;
        if (run && fwrite(buf + done, 1, run, f) != run)
            return -1;
        done += run;
        if (lt) {
            if (fputs("\\u003c", f) == EOF)
                return -1;
            done++;
        }
    }
    return (ssize_t)n;
}

FILE *xp_html_data_open(FILE *f)
{
    fputs("<script type=\"application/json\" id=\"xp-data\">", f);
    cookie_io_functions_t io = {.write = xp_html_data_write};
    FILE *d = fopencookie(f, "w", io);
    if (d)
        setvbuf(d, NULL, _IOFBF, 1 << 16);
    return d;
}

int xp_html_data_close(FILE *data, FILE *f)
{
    int rc = data && fclose(data) == 0 ? 0 : -1;
    fputs("</script>\n", f);
    return rc == 0 && !ferror(f) ? 0 : -1;
}
