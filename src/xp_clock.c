/* xp_clock.c: the TSC scales of the records' clock (xp_clock.h): whether the
 * TSC may be used, and measuring and publishing its scale. */
#include "xp_clock.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

__extension__ typedef __int128 i128;

const xp_tsc_scale *_Atomic xp_clock_scale;

/* Published scales are never written again (xp_clock.h): a pool, taken in
 * order.  At the longest interval, a minute, it lasts 68 hours; the last
 * scale then stays (measured over all those hours). */
#define XP_CLOCK_SCALES 4096
static xp_tsc_scale scales[XP_CLOCK_SCALES];
static unsigned n_scales;

/* The session's: written by xp_clock_start (before the ingest thread
 * exists) and then by the ingest thread alone. */
static bool use_tsc;
static uint64_t first_tsc, first_ns;   /* the session's first pair */
static uint64_t next_ns;               /* CLOCK_MONOTONIC of the next scale */
static uint64_t interval_ns;           /* from that one to the one after */

/* The first scale is measured over the session's start-up, at least 1 ms
 * (then 50 ppm off at worst, slewed out in the next 100 ms), the second 100
 * ms in, each next one twice as far from the last. */
#define XP_CLOCK_BASE_NS 1000000ull
#define XP_CLOCK_FIRST_NS 100000000ull
#define XP_CLOCK_LONGEST_NS 60000000000ull

#if defined(__x86_64__)
static uint64_t tsc_ordered(void)
{
    _mm_lfence();
    uint64_t t = __rdtsc();
    _mm_lfence();
    return t;
}

/* The CPU's word (CPUID 0x80000007, EDX bit 8) and the kernel's: the
 * clocksource it keeps CLOCK_MONOTONIC with is the TSC, which it checked
 * to agree across CPUs (a virtual machine's kvm-clock, or a TSC the kernel
 * found unstable, is not used). */
static bool tsc_usable(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000007u, &a, &b, &c, &d) || !(d & (1u << 8)))
        return false;
    int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                  O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    char buf[16];
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    return n == 4 && memcmp(buf, "tsc\n", 4) == 0;
}

/* A (tick, CLOCK_MONOTONIC) pair, the closest of three: the tick read just
 * before the clock, so that the clock's time is at or after the tick's. */
static void read_pair(uint64_t *tsc, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 3; i++) {
        uint64_t a = tsc_ordered();
        uint64_t m = xp_mono_ns();
        uint64_t b = tsc_ordered();
        if (b - a < best) {
            best = b - a;
            *tsc = a;
            *ns = m;
        }
    }
}
#else
static bool tsc_usable(void)
{
    return false;
}

static void read_pair(uint64_t *tsc, uint64_t *ns)
{
    *tsc = 0;
    *ns = xp_mono_ns();
}
#endif

xp_tsc_scale xp_clock_next_scale(const xp_tsc_scale *old, uint64_t tsc, uint64_t ns,
                                 uint64_t rate, uint64_t slew_ticks)
{
    xp_tsc_scale k = {.tsc0 = tsc, .ns0 = old ? xp_tsc_to_ns(old, tsc) : ns, .mult = rate};
    int64_t behind = (int64_t)(ns - k.ns0);
    /* Times 2^32 by a multiply: behind may be negative (ahead). */
    i128 slew = slew_ticks ? (i128)behind * ((i128)1 << 32) / (i128)slew_ticks : 0;
    i128 most = (i128)(rate / 1000);
    if (slew > most)
        slew = most;
    if (slew < -most)
        slew = -most;
    k.mult = (uint64_t)((i128)rate + slew);
    return k;
}

void xp_clock_start(bool allow_tsc)
{
    int saved = errno;
    use_tsc = allow_tsc && tsc_usable();
    errno = saved;
    if (!use_tsc) {
        atomic_store_explicit(&xp_clock_scale, NULL, memory_order_release);
        return;
    }
    read_pair(&first_tsc, &first_ns);
    next_ns = first_ns + XP_CLOCK_FIRST_NS;
    interval_ns = XP_CLOCK_FIRST_NS;
}

/* The next scale, measured from the session's first pair to now. */
static void publish(void)
{
    uint64_t tsc, ns;
    read_pair(&tsc, &ns);
    if (n_scales == XP_CLOCK_SCALES || tsc <= first_tsc || ns <= first_ns)
        return;
    uint64_t rate = (uint64_t)(((i128)(ns - first_ns) << 32) / (i128)(tsc - first_tsc));
    uint64_t slew_ticks = (uint64_t)(((i128)interval_ns << 32) / (i128)rate);
    xp_tsc_scale *k = &scales[n_scales++];
    *k = xp_clock_next_scale(atomic_load_explicit(&xp_clock_scale, memory_order_relaxed), tsc,
                             ns, rate, slew_ticks);
    atomic_store_explicit(&xp_clock_scale, k, memory_order_release);
    next_ns = ns + interval_ns;
    if (interval_ns < XP_CLOCK_LONGEST_NS)
        interval_ns *= 2;
}

void xp_clock_started(void)
{
    if (!use_tsc)
        return;
    while (xp_mono_ns() - first_ns < XP_CLOCK_BASE_NS)
        ;
    publish();
}

void xp_clock_tick(void)
{
    if (use_tsc && xp_mono_ns() >= next_ns)
        publish();
}

const char *xp_clock_name(void)
{
    return use_tsc ? "tsc" : "monotonic";
}
