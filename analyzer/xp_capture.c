/* xp_capture.c: the capture window a process was recorded with, from its
 * meta (capture_range, capture_window.N, window_skipped_calls): what the
 * report's header says and the time the rules measure shares against. */
#include "xp_render.h"
#include "xp_report.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A meta value's integers: up to two, "START END" or "START". */
static int ints(const char *v, int64_t *a, int64_t *b)
{
    long long x = 0, y = 0;
    int n = v ? sscanf(v, "%lld %lld", &x, &y) : 0;
    *a = x;
    *b = y;
    return n;
}

int xp_capture_meta(struct xp_process *p, const char *k, const char *v)
{
    int64_t a, b;
    if (strcmp(k, "capture_range") == 0) {
        free(p->capture_range);
        p->capture_range = strdup(v ? v : "");
        return p->capture_range ? 1 : -1;
    }
    if (strncmp(k, "capture_window.", 15) == 0) {
        int n = ints(v, &a, &b);
        p->capture_windows++;
        if (n == 2 && b >= a)
            p->capture_ns += b - a;
        else if (n >= 1 && a > p->capture_open_ns)
            p->capture_open_ns = a;   /* still open when the process died */
        return 1;
    }
    if (strcmp(k, "capture_duration_ns") == 0) {
        ints(v, &p->capture_duration_ns, &b);
        return 1;
    }
    if (strcmp(k, "window_skipped_calls") == 0) {
        ints(v, &p->window_skipped, &b);
        return 1;
    }
    return 0;
}

void xp_capture_done(struct xp_process *p)
{
    /* A window the process died in ran to its last event, or its duration. */
    if (p->capture_open_ns > 0 && p->end_mono_ns > p->capture_open_ns) {
        int64_t e = p->end_mono_ns;
        if (p->capture_duration_ns > 0 && p->capture_open_ns + p->capture_duration_ns < e)
            e = p->capture_open_ns + p->capture_duration_ns;
        p->capture_ns += e - p->capture_open_ns;
    }
    p->capture_open_ns = 0;
}

int64_t xp_process_run_ns(const struct xp_process *p)
{
    if (p->capture_range)
        return p->capture_ns;
    return p->end_mono_ns > p->start_mono_ns ? p->end_mono_ns - p->start_mono_ns : 0;
}

const char *xp_capture_line(const struct xp_process *p, char *buf, size_t n)
{
    char in[32], all[32];
    if (!p->capture_range)
        return NULL;
    int w = snprintf(buf, n, "captured: %s, %" PRId64 " window%s, %s of %s", p->capture_range,
                     p->capture_windows, p->capture_windows == 1 ? "" : "s",
                     xp_fmt_ns(p->capture_ns, in, sizeof in),
                     xp_fmt_ns(p->end_mono_ns - p->start_mono_ns, all, sizeof all));
    if (w > 0 && (size_t)w < n && p->window_skipped > 0)
        snprintf(buf + w, n - (size_t)w, "; %" PRId64 " call%s outside the capture window",
                 p->window_skipped, p->window_skipped == 1 ? "" : "s");
    return buf;
}
