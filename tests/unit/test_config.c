/* test_config.c: the preload's settings from XFERPROF_* and the expansion of output patterns (xp_config.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xp_config.h"

static const char *const rank_vars[] = {"RANK", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK",
                                        "SLURM_PROCID"};

static void clear_env(void)
{
    unsetenv("XFERPROF_OUTPUT");
    unsetenv("XFERPROF_STACK_DEPTH");
    unsetenv("XFERPROF_QUIET");
    unsetenv("XFERPROF_FINGERPRINT");
    unsetenv("XFERPROF_MANIFEST");
    for (size_t i = 0; i < 4; i++)
        unsetenv(rank_vars[i]);
}

static int setup(void **state)
{
    (void)state;
    clear_env();
    /* %t is local time: pin the zone so the expected strings hold anywhere. */
    setenv("TZ", "UTC", 1);
    tzset();
    return 0;
}

static void test_expand_basic(void **state)
{
    char out[256];
    assert_int_equal(xp_expand_output("run-%h-%p-r%r.db", 1234, "node7", "3", 0, out, sizeof out),
                     0);
    assert_string_equal(out, "run-node7-1234-r3.db");
    assert_int_equal(xp_expand_output("/abs/plain.db", 1, "h", NULL, 0, out, sizeof out), 0);
    assert_string_equal(out, "/abs/plain.db");
    assert_int_equal(xp_expand_output("", 1, "h", NULL, 0, out, sizeof out), 0);
    assert_string_equal(out, "");
    /* No rank set: %r is "0", so single-process runs still get a name. */
    assert_int_equal(xp_expand_output("%r", 1, "h", NULL, 0, out, sizeof out), 0);
    assert_string_equal(out, "0");
    /* Repeated sequences. */
    assert_int_equal(xp_expand_output("%p%p", 42, "h", NULL, 0, out, sizeof out), 0);
    assert_string_equal(out, "4242");
    (void)state;
}

static void test_expand_host_default(void **state)
{
    char out[256];
    /* No host given: the machine's own name, never empty. */
    assert_int_equal(xp_expand_output("%h", 1, NULL, NULL, 0, out, sizeof out), 0);
    assert_true(strlen(out) > 0);
    (void)state;
}

static void test_expand_time(void **state)
{
    char out[256];
    assert_int_equal(xp_expand_output("%t", 1, "h", NULL, 0, out, sizeof out), 0);
    assert_string_equal(out, "19700101-000000");
    assert_int_equal(xp_expand_output("x-%t.db", 1, "h", NULL, 1700000000, out, sizeof out), 0);
    assert_string_equal(out, "x-20231114-221320.db");
    (void)state;
}

static void test_expand_percent(void **state)
{
    char out[256];
    assert_int_equal(xp_expand_output("100%%-%p", 9, "h", NULL, 0, out, sizeof out), 0);
    assert_string_equal(out, "100%-9");
    /* "%%p" is a literal '%' then 'p', not a pid. */
    assert_int_equal(xp_expand_output("%%p", 9, "h", NULL, 0, out, sizeof out), 0);
    assert_string_equal(out, "%p");
    (void)state;
}

static void test_expand_unknown(void **state)
{
    char out[256];
    strcpy(out, "junk");
    assert_int_equal(xp_expand_output("a-%q.db", 1, "h", NULL, 0, out, sizeof out), -1);
    /* Nothing half-expanded is left for a careless caller to create. */
    assert_string_equal(out, "");
    assert_int_equal(xp_expand_output("trailing%", 1, "h", NULL, 0, out, sizeof out), -1);
    assert_int_equal(xp_expand_output("%P", 1, "h", NULL, 0, out, sizeof out), -1);
    (void)state;
}

static void test_expand_overflow(void **state)
{
    char out[8];
    /* "abcdefg" plus the NUL is exactly 8. */
    assert_int_equal(xp_expand_output("abcdefg", 1, "h", NULL, 0, out, sizeof out), 0);
    assert_string_equal(out, "abcdefg");
    assert_int_equal(xp_expand_output("abcdefgh", 1, "h", NULL, 0, out, sizeof out), -1);
    assert_string_equal(out, "");
    /* Overflow inside an expansion. */
    assert_int_equal(xp_expand_output("ab%h", 1, "hostname", NULL, 0, out, sizeof out), -1);
    char out9[9];
    assert_int_equal(xp_expand_output("%p", 123456789, "h", NULL, 0, out9, sizeof out9), -1);
    assert_int_equal(xp_expand_output("%p", 12345678, "h", NULL, 0, out9, sizeof out9), 0);
    assert_string_equal(out9, "12345678");
    assert_int_equal(xp_expand_output("x", 1, "h", NULL, 0, out, 0), -1);
    char big[PATH_MAX];
    assert_int_equal(xp_expand_output("%t%t%t%t%t%t%t%t", 1, "h", NULL, 0, big, 100), -1);
    (void)state;
}

static void test_rank_priority(void **state)
{
    char out[64];
    assert_null(xp_config_rank());
    /* Set all four with distinct values, then remove them from the most
     * important down: each time the next one must win. */
    setenv("RANK", "10", 1);
    setenv("LOCAL_RANK", "11", 1);
    setenv("OMPI_COMM_WORLD_RANK", "12", 1);
    setenv("SLURM_PROCID", "13", 1);
    static const char *const expect[] = {"10", "11", "12", "13"};
    for (size_t i = 0; i < 4; i++) {
        assert_non_null(xp_config_rank());
        assert_string_equal(xp_config_rank(), expect[i]);
        assert_int_equal(xp_expand_output("r%r", 1, "h", xp_config_rank(), 0, out, sizeof out), 0);
        char want[8];
        strcpy(want, "r");
        strcat(want, expect[i]);
        assert_string_equal(out, want);
        unsetenv(rank_vars[i]);
    }
    assert_null(xp_config_rank());
    /* An empty variable counts as unset. */
    setenv("RANK", "", 1);
    setenv("SLURM_PROCID", "5", 1);
    assert_string_equal(xp_config_rank(), "5");
    clear_env();
    (void)state;
}

static void test_load_defaults(void **state)
{
    xp_config c;
    char err[256] = "x";
    assert_int_equal(xp_config_load(&c, err, sizeof err), 0);
    assert_string_equal(err, "");
    assert_string_equal(c.output, XP_DEFAULT_OUTPUT);
    assert_int_equal(c.stack_depth, XP_DEFAULT_STACK_DEPTH);
    assert_false(c.quiet);
    assert_string_equal(c.manifest, "");
    (void)state;
}

static void test_load_values(void **state)
{
    xp_config c;
    char err[256];
    setenv("XFERPROF_OUTPUT", "/data/run-%r.db", 1);
    setenv("XFERPROF_STACK_DEPTH", "0", 1);
    setenv("XFERPROF_QUIET", "1", 1);
    setenv("XFERPROF_MANIFEST", "/tmp/xferprof-manifest-abc", 1);
    assert_int_equal(xp_config_load(&c, err, sizeof err), 0);
    assert_string_equal(c.output, "/data/run-%r.db");
    assert_int_equal(c.stack_depth, 0);
    assert_true(c.quiet);
    assert_string_equal(c.manifest, "/tmp/xferprof-manifest-abc");

    setenv("XFERPROF_STACK_DEPTH", "256", 1);
    setenv("XFERPROF_QUIET", "0", 1);
    assert_int_equal(xp_config_load(&c, err, sizeof err), 0);
    assert_int_equal(c.stack_depth, 256);
    assert_false(c.quiet);

    /* Empty values are defaults, not errors. */
    setenv("XFERPROF_OUTPUT", "", 1);
    setenv("XFERPROF_STACK_DEPTH", "", 1);
    setenv("XFERPROF_QUIET", "", 1);
    assert_int_equal(xp_config_load(&c, err, sizeof err), 0);
    assert_string_equal(c.output, XP_DEFAULT_OUTPUT);
    assert_int_equal(c.stack_depth, XP_DEFAULT_STACK_DEPTH);
    assert_false(c.quiet);
    clear_env();
    (void)state;
}

static void test_load_bad_depth(void **state)
{
    static const char *const bad[] = {"abc", "-1", "257", "12x", " 5", "5 ", "0x10", "+3",
                                      "99999999999999999999"};
    xp_config c;
    char err[256];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("XFERPROF_STACK_DEPTH", bad[i], 1);
        err[0] = '\0';
        assert_int_equal(xp_config_load(&c, err, sizeof err), -1);
        assert_non_null(strstr(err, "XFERPROF_STACK_DEPTH"));
        assert_null(strchr(err, '\n'));
        assert_int_equal(c.stack_depth, XP_DEFAULT_STACK_DEPTH);
    }
    /* The other settings still load around the bad one. */
    setenv("XFERPROF_OUTPUT", "other.db", 1);
    setenv("XFERPROF_STACK_DEPTH", "deep", 1);
    assert_int_equal(xp_config_load(&c, err, sizeof err), -1);
    assert_string_equal(c.output, "other.db");
    clear_env();
    (void)state;
}

static void test_load_bad_quiet_and_first_error(void **state)
{
    xp_config c;
    char err[256];
    setenv("XFERPROF_QUIET", "yes", 1);
    assert_int_equal(xp_config_load(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "XFERPROF_QUIET"));
    assert_false(c.quiet);
    /* Two bad settings: the reason names the first (in the order read). */
    setenv("XFERPROF_STACK_DEPTH", "x", 1);
    assert_int_equal(xp_config_load(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "XFERPROF_STACK_DEPTH"));
    assert_null(strstr(err, "XFERPROF_QUIET"));
    /* A NULL err is allowed. */
    assert_int_equal(xp_config_load(&c, NULL, 0), -1);
    clear_env();
    (void)state;
}

static void test_load_fingerprint(void **state)
{
    xp_config c;
    char err[256];
    assert_int_equal(xp_config_load(&c, err, sizeof err), 0);
    assert_int_equal(c.fingerprint, XP_FP_MODE_SAMPLED);
    static const struct {
        const char *text;
        xp_fp_mode mode;
    } good[] = {{"off", XP_FP_MODE_OFF}, {"sampled", XP_FP_MODE_SAMPLED},
                {"full", XP_FP_MODE_FULL}, {"", XP_FP_MODE_SAMPLED}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        setenv("XFERPROF_FINGERPRINT", good[i].text, 1);
        assert_int_equal(xp_config_load(&c, err, sizeof err), 0);
        assert_int_equal(c.fingerprint, good[i].mode);
        if (good[i].text[0])
            assert_string_equal(xp_config_fingerprint_name(c.fingerprint), good[i].text);
    }
    static const char *const bad[] = {"bogus", "Full", "on", "1", "sampled ", "of"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        xp_fp_mode m = XP_FP_MODE_FULL;
        assert_int_equal(xp_config_parse_fingerprint(bad[i], &m), -1);
        assert_int_equal(m, XP_FP_MODE_FULL);
        setenv("XFERPROF_FINGERPRINT", bad[i], 1);
        assert_int_equal(xp_config_load(&c, err, sizeof err), -1);
        assert_int_equal(c.fingerprint, XP_FP_MODE_SAMPLED);
        assert_non_null(strstr(err, "XFERPROF_FINGERPRINT"));
        assert_non_null(strstr(err, "off, sampled, full"));
    }
    (void)state;
}

static void test_load_too_long(void **state)
{
    xp_config c;
    char err[256];
    char *longpath = malloc(PATH_MAX + 16);
    assert_non_null(longpath);
    memset(longpath, 'a', PATH_MAX + 15);
    longpath[PATH_MAX + 15] = '\0';
    setenv("XFERPROF_OUTPUT", longpath, 1);
    assert_int_equal(xp_config_load(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "XFERPROF_OUTPUT"));
    assert_true(strlen(err) < 200); /* the value is cut short in the message */
    assert_string_equal(c.output, XP_DEFAULT_OUTPUT);
    unsetenv("XFERPROF_OUTPUT");
    setenv("XFERPROF_MANIFEST", longpath, 1);
    assert_int_equal(xp_config_load(&c, err, sizeof err), -1);
    assert_string_equal(c.manifest, "");
    free(longpath);
    clear_env();
    (void)state;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_expand_basic, setup),
        cmocka_unit_test_setup(test_expand_host_default, setup),
        cmocka_unit_test_setup(test_expand_time, setup),
        cmocka_unit_test_setup(test_expand_percent, setup),
        cmocka_unit_test_setup(test_expand_unknown, setup),
        cmocka_unit_test_setup(test_expand_overflow, setup),
        cmocka_unit_test_setup(test_rank_priority, setup),
        cmocka_unit_test_setup(test_load_defaults, setup),
        cmocka_unit_test_setup(test_load_values, setup),
        cmocka_unit_test_setup(test_load_bad_depth, setup),
        cmocka_unit_test_setup(test_load_bad_quiet_and_first_error, setup),
        cmocka_unit_test_setup(test_load_fingerprint, setup),
        cmocka_unit_test_setup(test_load_too_long, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
