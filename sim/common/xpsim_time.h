/* xpsim_time.h: the one clock the simulator models device time with. */
#ifndef XPSIM_TIME_H
#define XPSIM_TIME_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds: the same clock the profiler uses, so that
 * simulated durations and measured ones are comparable. */
static inline uint64_t xpsim_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Blocks the calling thread until xpsim_now_ns() >= deadline_ns.  Sleeps for
 * long waits and spins, without yielding, for the last stretch, because
 * nanosleep overshoots by tens of microseconds and small copies are that
 * short. */
void xpsim_sleep_until(uint64_t deadline_ns);

#endif
