/* xp_progress.c: a progress line on stderr for analyzer work that takes a while. */
#include "xp_progress.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

/* Work shorter than this shows nothing (XFERPROF_PROGRESS_AFTER_MS sets
 * another delay: 0 shows the line at once, for a test that cannot rely on
 * a machine's speed to make work last a second); updates come at most this
 * often. */
#define XP_PROGRESS_DELAY_NS 1000000000LL
#define XP_PROGRESS_DELAY_MAX_MS 3600000L
#define XP_PROGRESS_EVERY_NS 100000000LL

/* The command's line (xp_progress.h: one command, one thread). */
static struct {
    bool on;               /* started, on a terminal that understands \033[K */
    bool shown;            /* something of ours is on the line now */
    int64_t start_ns;      /* when the work began */
    int64_t next_ns;       /* the earliest time of the next update */
    char prefix[64];       /* "xferprof CMD: " */
    char stage[512];
} xp_prog;

static int64_t xp_progress_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* XFERPROF_PROGRESS_AFTER_MS when it is a number of milliseconds up to an
 * hour, else the default: a progress line is no reason to refuse work. */
static int64_t xp_progress_delay_ns(void)
{
    const char *v = getenv("XFERPROF_PROGRESS_AFTER_MS");
    if (v == NULL || *v < '0' || *v > '9')
        return XP_PROGRESS_DELAY_NS;
    char *end;
    long ms = strtol(v, &end, 10);
    if (*end != '\0' || ms > XP_PROGRESS_DELAY_MAX_MS)
        return XP_PROGRESS_DELAY_NS;
    return (int64_t)ms * 1000000LL;
}

void xp_progress_start(const char *cmd)
{
    snprintf(xp_prog.prefix, sizeof xp_prog.prefix, "xferprof %s: ", cmd);
    const char *term = getenv("TERM");
    xp_prog.on = isatty(STDERR_FILENO) && !(term && strcmp(term, "dumb") == 0);
    xp_prog.shown = false;
    xp_prog.start_ns = xp_progress_now();
    xp_prog.next_ns = xp_prog.start_ns + xp_progress_delay_ns();
    xp_prog.stage[0] = '\0';
}

/* Whether an update is due now (and, if so, when the next one is). */
static bool xp_progress_due(void)
{
    if (!xp_prog.on)
        return false;
    int64_t now = xp_progress_now();
    if (now < xp_prog.next_ns)
        return false;
    xp_prog.next_ns = now + XP_PROGRESS_EVERY_NS;
    return true;
}

/* Rewrites the line with text, cut to the terminal's width: a line that
 * wrapped would not be erased by the next "\r". */
static void xp_progress_put(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void xp_progress_put(const char *fmt, ...)
{
    char text[sizeof xp_prog.prefix + sizeof xp_prog.stage + 64];
    int len = snprintf(text, sizeof text, "%s", xp_prog.prefix);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text + len, sizeof text - (size_t)len, fmt, ap);
    va_end(ap);
    struct winsize ws;
    size_t n = strlen(text);
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 && n >= ws.ws_col)
        n = ws.ws_col - 1u;
    fprintf(stderr, "\r%.*s\033[K", (int)n, text);
    fflush(stderr);
    xp_prog.shown = true;
}

void xp_progress_stage(const char *fmt, ...)
{
    if (!xp_prog.on)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(xp_prog.stage, sizeof xp_prog.stage, fmt, ap);
    va_end(ap);
    if (xp_progress_due())
        xp_progress_put("%s", xp_prog.stage);
}

void xp_progress_count(uint64_t done, const char *unit, int percent)
{
    if (!xp_progress_due())
        return;
    char pct[16] = "";
    if (percent >= 0 && percent <= 100)
        snprintf(pct, sizeof pct, " (%d%%)", percent);
    xp_progress_put("%s: %llu %s%s", xp_prog.stage, (unsigned long long)done, unit, pct);
}

void xp_progress_recover(void *user, uint64_t records, uint64_t bytes)
{
    uint64_t size = *(const uint64_t *)user;
    int percent = size ? (int)(bytes >= size ? 100 : bytes * 100 / size) : -1;
    xp_progress_count(records, "journal records", percent);
}

void xp_progress_clear(void)
{
    if (!xp_prog.shown)
        return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    xp_prog.shown = false;
}
