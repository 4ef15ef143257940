/* xp_progress.h: a progress line on stderr for analyzer work that takes a while. */
#ifndef XP_PROGRESS_H
#define XP_PROGRESS_H

#include <stdint.h>

/* The analyzer runs one command per process, on one thread: the line is
 * that command's, a single state in xp_progress.c.  Until
 * xp_progress_start is called (unit tests, fuzzers, benchmarks) every call
 * below does nothing. */

/* Starts the clock of command cmd's work ("xferprof CMD: " begins the
 * line).  The line is shown only when
 * stderr is a terminal and TERM is not "dumb", and only once the work has
 * taken about a second (short work shows nothing at all; the environment's
 * XFERPROF_PROGRESS_AFTER_MS sets another delay, 0 to 3600000 ms); then it
 * is rewritten in place ("\r...\033[K") at most about ten times a second. */
void xp_progress_start(const char *cmd);

/* Names what is being done now (printf format): shown with this call or a
 * later one, whichever comes when the line is due. */
void xp_progress_stage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* How far the current stage has come: "STAGE: DONE UNIT", with " (P%)"
 * when percent is 0 to 100.  Cheap when the line is not due (a clock
 * read), but meant to be called every few thousand items, not per item. */
void xp_progress_count(uint64_t done, const char *unit, int percent);

/* Counts one more item (*n) of a row loop, and every 4096 of them calls
 * xp_progress_count: the clock is not read per row. */
static inline void xp_progress_tick(uint64_t *n, const char *unit)
{
    if ((++*n & 4095) == 0)
        xp_progress_count(*n, unit, -1);
}

/* An xp_recover_progress hook (xp_ingest.h) for the current stage:
 * "N journal records (P%)"; user points to the journal's size in bytes
 * (a uint64_t). */
void xp_progress_recover(void *user, uint64_t records, uint64_t bytes);

/* Clears the line if anything was shown (before the command prints, and
 * at its end).  A later xp_progress_stage or count may show it again. */
void xp_progress_clear(void);

#endif
