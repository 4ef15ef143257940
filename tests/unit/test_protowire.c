/* test_protowire.c: analyzer/xp_protowire.c's encodings checked byte by byte against protobuf's encoding reference. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "xp_protowire.h"

static void xt_expect(const struct xp_pw *w, const uint8_t *want, size_t n)
{
    assert_false(w->oom);
    assert_int_equal(w->len, n);
    assert_memory_equal(w->p, want, n);
}

/* The reference's examples: 150 is 96 01; a tag is field << 3 | type. */
static void test_varints(void **state)
{
    (void)state;
    struct xp_pw w = {0};
    xp_pw_uint(&w, 1, 150);
    xt_expect(&w, (const uint8_t[]){0x08, 0x96, 0x01}, 3);
    xp_pw_reset(&w);
    xp_pw_uint(&w, 1, 0);
    xp_pw_uint(&w, 1, 127);
    xp_pw_uint(&w, 1, 128);
    xt_expect(&w, (const uint8_t[]){0x08, 0x00, 0x08, 0x7f, 0x08, 0x80, 0x01}, 7);
    /* int64 -1: the two's complement, ten bytes. */
    xp_pw_reset(&w);
    xp_pw_int(&w, 4, -1);
    xt_expect(&w, (const uint8_t[]){0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                   0x01}, 11);
    xp_pw_reset(&w);
    xp_pw_uint(&w, 16, UINT64_MAX); /* a two-byte tag */
    xt_expect(&w, (const uint8_t[]){0x80, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                   0xff, 0x01}, 12);
    xp_pw_free(&w);
}

static void test_fixed_and_bytes(void **state)
{
    (void)state;
    struct xp_pw w = {0};
    xp_pw_fixed64(&w, 47, 0x0102030405060708u); /* little-endian */
    xp_pw_bytes(&w, 2, "testing", 7);
    xt_expect(&w, (const uint8_t[]){0xf9, 0x02, 8, 7, 6, 5, 4, 3, 2, 1,
                                   0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g'}, 19);
    xp_pw_free(&w);
}

/* Nested messages get the shortest length in front, across the one-byte
 * boundary (127 / 128 bytes of body) and nested in each other. */
static void test_nested(void **state)
{
    (void)state;
    struct xp_pw w = {0};
    char body[200];
    memset(body, 'x', sizeof body);
    for (size_t n = 124; n <= 127; n += 3) { /* bodies of 2 + n bytes: 126, 129 */
        xp_pw_reset(&w);
        size_t outer = xp_pw_open(&w, 1);
        size_t inner = xp_pw_open(&w, 3);
        xp_pw_raw(&w, body, n);
        xp_pw_close(&w, inner);
        xp_pw_close(&w, outer);
        assert_false(w.oom);
        size_t inner_len = n, inner_hdr = 1 + (n < 128 ? 1 : 2);
        size_t outer_len = inner_hdr + inner_len;
        size_t outer_hdr = 1 + (outer_len < 128 ? 1 : 2);
        assert_int_equal(w.len, outer_hdr + outer_len);
        assert_int_equal(w.p[0], 0x0a);
        if (outer_len < 128)
            assert_int_equal(w.p[1], outer_len);
        else {
            assert_int_equal(w.p[1], 0x80 | (outer_len & 0x7f));
            assert_int_equal(w.p[2], outer_len >> 7);
        }
        assert_int_equal(w.p[outer_hdr], 0x1a);
        assert_int_equal(w.p[outer_hdr + 1], n); /* n < 128 */
        assert_memory_equal(w.p + outer_hdr + inner_hdr, body, n);
    }
    /* An empty message: its tag and length 0. */
    xp_pw_reset(&w);
    xp_pw_close(&w, xp_pw_open(&w, 8));
    xt_expect(&w, (const uint8_t[]){0x42, 0x00}, 2);
    xp_pw_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_varints),
        cmocka_unit_test(test_fixed_and_bytes),
        cmocka_unit_test(test_nested),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
