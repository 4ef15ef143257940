/* xpsim_time.c: precise waits on the simulator's clock (CLOCK_MONOTONIC). */
#include "xpsim_time.h"

#include <sched.h>

/* nanosleep wakes up late by tens of microseconds; the last stretch is spun
 * (yielding, so a loaded machine still makes progress) to land on time. */
#define XPSIM_SPIN_NS 50000u

void xpsim_sleep_until(uint64_t deadline_ns)
{
    for (;;) {
        uint64_t now = xpsim_now_ns();
        if (now >= deadline_ns)
            return;
        if (deadline_ns - now > XPSIM_SPIN_NS) {
            uint64_t wake = deadline_ns - XPSIM_SPIN_NS;
            struct timespec ts = {
                .tv_sec = (time_t)(wake / 1000000000u),
                .tv_nsec = (long)(wake % 1000000000u),
            };
            /* Absolute, so an EINTR (or any early return) just loops and
             * re-sleeps for what is left rather than drifting. */
            (void)clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
        } else {
            sched_yield();
        }
    }
}
