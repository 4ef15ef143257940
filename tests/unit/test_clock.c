/* test_clock.c: the records' clock (xp_clock.h): TSC scales that continue each other, slew
 * towards CLOCK_MONOTONIC, and the clock itself against clock_gettime. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <cpuid.h>
#include <stdio.h>
#include <string.h>

#include "xp_clock.h"

/* Whether this machine's records should read the TSC: invariant, and the
 * kernel's clocksource. */
static bool machine_has_tsc_clock(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000007u, &a, &b, &c, &d) || !(d & (1u << 8)))
        return false;
    char buf[32] = "";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (f == NULL)
        return false;
    bool tsc = fgets(buf, sizeof buf, f) != NULL && strcmp(buf, "tsc\n") == 0;
    fclose(f);
    return tsc;
}

/* 2^32 ns per tick (a 1 GHz TSC), times 2^32: ticks are nanoseconds. */
#define ONE_NS (1ull << 32)

static void test_first_scale_starts_at_the_clock(void **state)
{
    (void)state;
    xp_tsc_scale k = xp_clock_next_scale(NULL, 1000, 5000, ONE_NS, 100000);
    assert_int_equal(xp_tsc_to_ns(&k, 1000), 5000);
    assert_int_equal(xp_tsc_to_ns(&k, 2000), 6000);
    /* Before its start (a tick read before another thread published it). */
    assert_int_equal(xp_tsc_to_ns(&k, 900), 4900);
}

static void test_next_scale_continues_and_slews(void **state)
{
    (void)state;
    xp_tsc_scale a = xp_clock_next_scale(NULL, 0, 1000000, ONE_NS, 0);
    /* 100 000 ticks later CLOCK_MONOTONIC says 40 ns more than scale a. */
    uint64_t t = 100000, ns = xp_tsc_to_ns(&a, t) + 40;
    xp_tsc_scale b = xp_clock_next_scale(&a, t, ns, ONE_NS, 100000);
    /* No jump where b takes over ... */
    assert_int_equal(xp_tsc_to_ns(&b, t), xp_tsc_to_ns(&a, t));
    /* ... and the 40 ns made up over the next 100 000 ticks (within 1 ns). */
    int64_t off = (int64_t)(xp_tsc_to_ns(&b, t + 100000) - (ns + 100000));
    assert_true(off >= -1 && off <= 1);
    /* Ahead instead: slower, still forward. */
    xp_tsc_scale c = xp_clock_next_scale(&a, t, xp_tsc_to_ns(&a, t) - 40, ONE_NS, 100000);
    assert_true(c.mult < ONE_NS);
    assert_true(xp_tsc_to_ns(&c, t + 1) >= xp_tsc_to_ns(&c, t));
}

static void test_slew_is_bounded(void **state)
{
    (void)state;
    xp_tsc_scale a = xp_clock_next_scale(NULL, 0, 0, ONE_NS, 0);
    /* A second behind (a suspended machine, a clock step): at most 1/1000
     * of the rate, so the clock never runs backwards nor races. */
    xp_tsc_scale b = xp_clock_next_scale(&a, 1000, 1000 + 1000000000ull, ONE_NS, 1000);
    assert_int_equal(b.mult, ONE_NS + ONE_NS / 1000);
    xp_tsc_scale c = xp_clock_next_scale(&a, 1000000000ull, 0, ONE_NS, 1000);
    assert_int_equal(c.mult, ONE_NS - ONE_NS / 1000);
}

/* The clock itself, as a session uses it: between two clock_gettime
 * readings made around it, up to the scale's error (the first scale is
 * measured over 1 ms: tens of ppm at worst, microseconds over this test). */
static void test_clock_follows_clock_monotonic(void **state)
{
    (void)state;
    xp_clock_start(true);
    xp_clock_started();
    /* This machine: an invariant TSC, and the kernel keeps time with it. */
    bool tsc = machine_has_tsc_clock();
    assert_string_equal(xp_clock_name(), tsc ? "tsc" : "monotonic");
    assert_true((atomic_load(&xp_clock_scale) != NULL) == tsc);
    uint64_t last = 0;
    for (int i = 0; i < 200000; i++) {
        uint64_t before = xp_mono_ns();
        uint64_t t = xp_now_ns();
        uint64_t after = xp_mono_ns();
        assert_true(t + 20000 >= before && t <= after + 20000);
        assert_true(t >= last);
        last = t;
    }
    xp_clock_start(false);
    assert_string_equal(xp_clock_name(), "monotonic");
    assert_null(atomic_load(&xp_clock_scale));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_scale_starts_at_the_clock),
        cmocka_unit_test(test_next_scale_continues_and_slews),
        cmocka_unit_test(test_slew_is_bounded),
        cmocka_unit_test(test_clock_follows_clock_monotonic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
