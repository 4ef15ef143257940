/* xpsim_time.c: precise waits on the simulator's clock (CLOCK_MONOTONIC). */
#include "xpsim_time.h"

/* nanosleep wakes up late by tens of microseconds; the last stretch is spun
 * to land on time.  The spin must not sched_yield: a yield hands the CPU to
 * any other runnable thread until a scheduler tick (4 ms on this kernel), so a
 * stream worker sharing a CPU with a busy host thread (PyTorch's OpenMP
 * pool, a cudaEventQuery polling loop) finished a 5 us kernel milliseconds
 * late, and events the host polls never completed in time (PyTorch's pinned
 * memory cache then grew instead of reusing blocks).  A plain spin is
 * preempted like any other thread and costs at most this long per wait; a
 * real device's progress does not depend on the host's threads at all. */
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
        }
    }
}
