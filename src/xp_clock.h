/* xp_clock.h: the records' clock, CLOCK_MONOTONIC nanoseconds read from the
 * invariant TSC where the kernel keeps time with it (a few instructions, not
 * a call into the vDSO: issue 15), else from clock_gettime. */
#ifndef XP_CLOCK_H
#define XP_CLOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#pragma GCC visibility push(hidden)

/*
 * Why this is CLOCK_MONOTONIC, and how exactly (docs/performance.md, "The
 * records' clock"):
 * - The TSC is used only where the CPU says it is invariant (constant rate
 *   in every P-, C- and T-state) and the kernel's clocksource is "tsc": the
 *   kernel then vouches that the TSCs of all CPUs agree, and its own
 *   CLOCK_MONOTONIC is this TSC scaled.  A thread moving between CPUs, and a
 *   forked child (same machine, same TSC), read the same clock.
 * - TSC ticks become nanoseconds by a scale measured against CLOCK_MONOTONIC
 *   (xp_clock.c): the first one over the session's start-up (at least 1 ms),
 *   anchored so that it never reads less than a clock_gettime made before
 *   it; then refined at
 *   growing intervals (up to a minute) by the ingest thread, each scale
 *   continuing the last one where it takes over and slewing towards
 *   CLOCK_MONOTONIC (as NTP moves it) over the next interval: no jumps,
 *   microseconds from CLOCK_MONOTONIC.
 * - Scales are never written once published (a pool of them), so a thread
 *   reading one while the next is published reads a whole one.  A thread
 *   that loaded the old scale and was preempted before reading the TSC can
 *   read, at most, its interval's slew (1/1000) of that delay away from
 *   the new one: a record's end is kept at or after its start.
 * The session's start_mono_ns is read before the first scale (so it is
 * clock_gettime's, except in a forked child, which continues its parent's
 * scale), and records never read less than it. */
typedef struct xp_tsc_scale {
    uint64_t tsc0, ns0;       /* the TSC at the scale's start, and its time */
    uint64_t mult;            /* nanoseconds per tick, times 2^32 */
} xp_tsc_scale;

/* The scale in use; NULL: the records read clock_gettime. */
extern const xp_tsc_scale *_Atomic xp_clock_scale;

static inline uint64_t xp_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* tsc on scale k; a tick before the scale's start (another thread's scale
 * published after this thread read its TSC) extrapolates backwards. */
static inline uint64_t xp_tsc_to_ns(const xp_tsc_scale *k, uint64_t tsc)
{
    __extension__ typedef __int128 i128;
    int64_t d = (int64_t)(tsc - k->tsc0);
    /* Both signed (mult is far below 2^63): one signed multiply. */
    return k->ns0 + (uint64_t)(int64_t)(((i128)d * (i128)(int64_t)k->mult) >> 32);
}

/* The records' time, CLOCK_MONOTONIC nanoseconds. */
static inline __attribute__((always_inline)) uint64_t xp_now_ns(void)
{
#if defined(__x86_64__)
    const xp_tsc_scale *k = atomic_load_explicit(&xp_clock_scale, memory_order_acquire);
    if (__builtin_expect(k != NULL, 1)) {
        /* No lfence before it (the vDSO has one; xp_clock.c's calibration
         * keeps its own): the CPU may then read the TSC up to its reorder
         * window (some hundred instructions, tens of ns) before the code
         * around it is done, and a call's start or end moves by that much
         * at most, where the records promise microseconds from
         * CLOCK_MONOTONIC and a call's end is kept at or after its start
         * (xp_reserve_call).  Nothing orders records by these times across
         * threads more finely.  The two lfences were ~10 ns of the copy
         * hook's thread time (issue 15; docs/performance.md). */
        return xp_tsc_to_ns(k, __rdtsc());
    }
#endif
    return xp_mono_ns();
}

/* At a session's start (single-threaded then): whether the records may use
 * the TSC (XFERPROF_CLOCK=monotonic says no), and the first pair of
 * readings the scales are measured from.  A scale already in use (a forked
 * child's, its parent's) stays, and the next continues it. */
void xp_clock_start(bool allow_tsc);

/* At the end of the session's start: publishes the first scale, measured
 * over the start (at least 1 ms: it waits for the rest). */
void xp_clock_started(void);

/* From the ingest thread, every 100 ms: publishes a refined scale when it
 * is time. */
void xp_clock_tick(void);

/* What the records' clock is for this session: "tsc" (from the first
 * scale on) or "monotonic" (clock_gettime throughout). */
const char *xp_clock_name(void);

/* The scale that takes over from `old` (NULL: from clock_gettime) at tick
 * `tsc`, when CLOCK_MONOTONIC read `ns` there: it starts where old is at
 * that tick (at ns, without one), runs at `rate` (nanoseconds per tick
 * times 2^32, measured over the session) and makes up the difference to ns
 * over the next `slew_ticks` ticks, at most 1/1000 of the rate.  Pure (unit
 * tested). */
xp_tsc_scale xp_clock_next_scale(const xp_tsc_scale *old, uint64_t tsc, uint64_t ns,
                                 uint64_t rate, uint64_t slew_ticks);

#pragma GCC visibility pop

#endif
