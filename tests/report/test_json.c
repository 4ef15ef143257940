/* test_json.c: the report's JSON writer: string escaping (RFC 8259), invalid
 * UTF-8, exact 64-bit integers, doubles and their non-finite values, layout. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "xp_json.h"

/* What xp_json_write_string makes of n bytes of s. */
static char *escaped(const char *s, size_t n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    xp_json_write_string(f, s, n);
    fclose(f);
    return buf;
}

static void expect_escape(const char *in, size_t n, const char *want)
{
    char *got = escaped(in, n);
    assert_string_equal(got, want);
    free(got);
}

static void test_escapes(void **state)
{
    (void)state;
    expect_escape("plain", 5, "\"plain\"");
    expect_escape("a\"b\\c/", 6, "\"a\\\"b\\\\c/\"");
    expect_escape("\n\r\t\b\f", 5, "\"\\n\\r\\t\\b\\f\"");
    expect_escape("\x01\x1f", 2, "\"\\u0001\\u001f\"");
    expect_escape("nul\0in", 6, "\"nul\\u0000in\"");
    expect_escape("\x7f", 1, "\"\x7f\"");
}

static void test_utf8(void **state)
{
    (void)state;
    /* Valid: 2, 3 and 4 byte forms pass through. */
    expect_escape("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9, "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
    /* A lone continuation byte, a truncated sequence, an overlong '/', a
     * surrogate, beyond U+10FFFF, 0xff: each bad byte becomes U+FFFD. */
    expect_escape("a\x80z", 3, "\"a\xef\xbf\xbdz\"");
    expect_escape("\xe2\x82", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\"");
    expect_escape("\xc0\xaf", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\"");
    expect_escape("\xed\xa0\x80", 3, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
    expect_escape("\xf4\x90\x80\x80", 4,
                  "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
    expect_escape("\xff", 1, "\"\xef\xbf\xbd\"");
}

static char *render(void (*fn)(struct xp_json *))
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    struct xp_json j;
    xp_json_init(&j, f);
    fn(&j);
    fclose(f);
    return buf;
}

static void doc_numbers(struct xp_json *j)
{
    xp_json_object(j);
    xp_json_key(j, "u"), xp_json_uint(j, UINT64_MAX);
    xp_json_key(j, "i"), xp_json_int(j, INT64_MIN);
    xp_json_key(j, "d"), xp_json_double(j, 0.1234567);
    xp_json_key(j, "big"), xp_json_double(j, 1e21);
    xp_json_key(j, "nan"), xp_json_double(j, NAN);
    xp_json_key(j, "inf"), xp_json_double(j, -INFINITY);
    xp_json_key(j, "s"), xp_json_str(j, NULL);
    xp_json_key(j, "b"), xp_json_bool(j, true);
    xp_json_key(j, "empty"), xp_json_array(j), xp_json_end(j);
    xp_json_key(j, "pts"), xp_json_array_inline(j);
    xp_json_array_inline(j), xp_json_int(j, 1), xp_json_int(j, 2), xp_json_end(j);
    xp_json_array_inline(j), xp_json_int(j, 3), xp_json_int(j, 4), xp_json_end(j);
    xp_json_end(j);
    xp_json_end(j);
}

static void test_values(void **state)
{
    (void)state;
    char *got = render(doc_numbers);
    assert_string_equal(got, "{\n"
                             "  \"u\": 18446744073709551615,\n"
                             "  \"i\": -9223372036854775808,\n"
                             "  \"d\": 0.123457,\n"
                             "  \"big\": 1e+21,\n"
                             "  \"nan\": null,\n"
                             "  \"inf\": null,\n"
                             "  \"s\": null,\n"
                             "  \"b\": true,\n"
                             "  \"empty\": [],\n"
                             "  \"pts\": [[1, 2], [3, 4]]\n"
                             "}\n");
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
