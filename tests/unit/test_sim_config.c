/* test_sim_config.c: parsing of the simulator's XFERPROF_SIM_* settings. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>

#include "xpsim_config.h"
#include "xpsim_devices.h"

static void test_sizes(void **state)
{
    uint64_t b;
    assert_true(xpsim_parse_size("512M", &b));
    assert_int_equal(b, 512ull << 20);
    assert_true(xpsim_parse_size("16G", &b));
    assert_int_equal(b, 16ull << 30);
    assert_true(xpsim_parse_size("1.5k", &b));
    assert_int_equal(b, 1536);
    assert_true(xpsim_parse_size("4096", &b));
    assert_int_equal(b, 4096);
    assert_true(xpsim_parse_size("2GiB", &b));
    assert_int_equal(b, 2ull << 30);
    assert_false(xpsim_parse_size("", &b));
    assert_false(xpsim_parse_size("12Q", &b));
    assert_false(xpsim_parse_size("-1G", &b));
    assert_false(xpsim_parse_size("G", &b));
    (void)state;
}

static void test_rates_and_durations(void **state)
{
    double bps;
    assert_true(xpsim_parse_rate("25G", &bps));
    assert_true(bps == 25e9);
    assert_true(xpsim_parse_rate("100M", &bps));
    assert_true(bps == 100e6);
    assert_false(xpsim_parse_rate("0", &bps));
    assert_false(xpsim_parse_rate("fast", &bps));
    uint64_t ns;
    assert_true(xpsim_parse_duration("2us", &ns));
    assert_int_equal(ns, 2000);
    assert_true(xpsim_parse_duration("1.5ms", &ns));
    assert_int_equal(ns, 1500000);
    assert_true(xpsim_parse_duration("700", &ns));
    assert_int_equal(ns, 700);
    assert_false(xpsim_parse_duration("3 hours", &ns));
    (void)state;
}

/* The environment is read once, so this test sets it before the first call. */
static void test_environment(void **state)
{
    unsetenv("XFERPROF_SIM_DEBUG");
    setenv("XFERPROF_SIM_MEMORY", "512M", 1);
    setenv("XFERPROF_SIM_DEVICES", "3", 1);
    setenv("XFERPROF_SIM_BANDWIDTH", "pinned=12G,pageable=3G,peer=50G", 1);
    setenv("XFERPROF_SIM_LATENCY", "10us", 1);
    setenv("XFERPROF_SIM_FAULT", "launch:7", 1);
    const xpsim_config *c = xpsim_config_get();
    assert_int_equal(c->memory_bytes, 512ull << 20);
    assert_int_equal(c->devices, 3);
    assert_true(c->pinned_bps == 12e9);
    assert_true(c->pageable_bps == 3e9);
    assert_true(c->peer_bps == 50e9);
    assert_true(c->device_bps == 1000e9);  /* untouched: default */
    assert_int_equal(c->latency_ns, 10000);
    assert_int_equal(c->fault_launch, 7);
    assert_int_equal(c->fault_error, 700);   /* CUDA_ERROR_ILLEGAL_ADDRESS */
    assert_false(c->debug);
    (void)state;
}

/* UUIDs: a function of the machine and the physical index only. */
static void test_device_uuids(void **state)
{
    unsigned char a[XPSIM_UUID_BYTES], b[XPSIM_UUID_BYTES], c[XPSIM_UUID_BYTES];
    xpsim_device_uuid(1, "node-a", a);
    xpsim_device_uuid(1, "node-a", b);
    assert_memory_equal(a, b, sizeof a);
    xpsim_device_uuid(2, "node-a", c);
    assert_memory_not_equal(a, c, sizeof a);
    xpsim_device_uuid(1, "node-b", c);
    assert_memory_not_equal(a, c, sizeof a);
    static const unsigned char u[XPSIM_UUID_BYTES] = {0x89, 0x32, 0xf9, 0x37, 0xd7, 0x2c, 0x41, 0x06,
                                                      0xc1, 0x2f, 0x20, 0xbd, 0x9f, 0xae, 0xd9, 0xf6};
    char text[XPSIM_UUID_TEXT];
    xpsim_uuid_format(u, text);
    assert_string_equal(text, "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6");
    (void)state;
}

static void test_visible_devices(void **state)
{
    int v[XPSIM_MAX_DEVICES];
    assert_int_equal(xpsim_visible_parse(NULL, 3, "h", v), 3);
    assert_int_equal(v[2], 2);
    assert_int_equal(xpsim_visible_parse("", 3, "h", v), 0);
    assert_int_equal(xpsim_visible_parse("2,0", 3, "h", v), 2);
    assert_int_equal(v[0], 2);
    assert_int_equal(v[1], 0);
    assert_int_equal(xpsim_visible_parse("1,1,0", 3, "h", v), 1);   /* no device twice */
    assert_int_equal(xpsim_visible_parse("1,,0", 3, "h", v), 1);
    assert_int_equal(xpsim_visible_parse("1,3", 3, "h", v), 1);
    assert_int_equal(xpsim_visible_parse(" 1", 3, "h", v), 0);
    assert_int_equal(xpsim_visible_parse("MIG-1", 3, "h", v), 0);
    unsigned char u[XPSIM_UUID_BYTES];
    char text[XPSIM_UUID_TEXT], value[64];
    xpsim_device_uuid(2, "h", u);
    xpsim_uuid_format(u, text);
    snprintf(value, sizeof value, "0,%s", text);
    assert_int_equal(xpsim_visible_parse(value, 3, "h", v), 2);
    assert_int_equal(v[1], 2);
    /* Another machine's GPU is not one of ours. */
    assert_int_equal(xpsim_visible_parse(value, 3, "other", v), 1);
    (void)state;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_rates_and_durations),
        cmocka_unit_test(test_environment),
        cmocka_unit_test(test_device_uuids),
        cmocka_unit_test(test_visible_devices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
