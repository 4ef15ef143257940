/* test_registry.c: the preload's registry of allocated ranges. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>

#include "xp_registry.h"

static void test_lookup_inside_and_outside(void **state)
{
    xp_registry_clear();
    xp_range a = {.base = 0x10000, .size = 0x1000, .alloc_id = 1, .kind = XP_ALLOC_DEVICE, .device = 0};
    xp_range b = {.base = 0x30000, .size = 0x100, .alloc_id = 2, .kind = XP_ALLOC_REGISTERED, .device = -1};
    assert_true(xp_registry_add(&b));
    assert_true(xp_registry_add(&a));
    xp_range r;
    assert_true(xp_registry_lookup(0x10000, &r));
    assert_int_equal(r.alloc_id, 1);
    assert_true(xp_registry_lookup(0x10fff, &r));
    assert_int_equal(r.alloc_id, 1);
    assert_false(xp_registry_lookup(0x11000, &r));
    assert_false(xp_registry_lookup(0xffff, &r));
    /* An offset inside a registered range counts as that range. */
    assert_true(xp_registry_lookup(0x30080, &r));
    assert_int_equal(r.kind, XP_ALLOC_REGISTERED);
    (void)state;
}

static void test_remove_exact_base_and_kind(void **state)
{
    xp_registry_clear();
    xp_range a = {.base = 0x10000, .size = 0x1000, .alloc_id = 7, .kind = XP_ALLOC_DEVICE};
    assert_true(xp_registry_add(&a));
    xp_range out;
    assert_false(xp_registry_remove(0x10010, 1u << XP_ALLOC_DEVICE, &out));
    assert_false(xp_registry_remove(0x10000, 1u << XP_ALLOC_PINNED, &out));
    uint64_t g = xp_registry_generation();
    assert_true(xp_registry_remove(0x10000, 1u << XP_ALLOC_DEVICE, &out));
    assert_int_equal(out.alloc_id, 7);
    assert_true(xp_registry_generation() != g);
    assert_false(xp_registry_lookup(0x10000, &out));
    assert_false(xp_registry_remove(0x10000, 1u << XP_ALLOC_DEVICE, &out));
    (void)state;
}

static void test_overlap_replaces_stale(void **state)
{
    xp_registry_clear();
    xp_range a = {.base = 0x10000, .size = 0x1000, .alloc_id = 1, .kind = XP_ALLOC_DEVICE};
    xp_range b = {.base = 0x11000, .size = 0x1000, .alloc_id = 2, .kind = XP_ALLOC_DEVICE};
    xp_range c = {.base = 0x10800, .size = 0x1000, .alloc_id = 3, .kind = XP_ALLOC_DEVICE};
    assert_true(xp_registry_add(&a));
    assert_true(xp_registry_add(&b));
    /* The driver reused the addresses (we missed the frees): c replaces both. */
    assert_true(xp_registry_add(&c));
    xp_range r;
    assert_true(xp_registry_lookup(0x10900, &r));
    assert_int_equal(r.alloc_id, 3);
    assert_false(xp_registry_lookup(0x10000, &r));
    assert_false(xp_registry_lookup(0x11900, &r));
    (void)state;
}

/* Reserved ranges and handles are a table of their own: a mapping inside a
 * reservation replaces nothing, and neither is found by an address lookup. */
static void test_handles_apart(void **state)
{
    xp_registry_clear();
    xp_range reserved = {.base = 0x200000, .size = 0x600000, .alloc_id = 7,
                         .kind = XP_ALLOC_RESERVED, .device = -1};
    xp_range mapped = {.base = 0x400000, .size = 0x200000, .alloc_id = 8,
                       .kind = XP_ALLOC_MAPPED, .device = 0};
    assert_true(xp_table_add(XP_TABLE_HANDLES, &reserved));
    assert_true(xp_registry_add(&mapped));
    xp_range r;
    assert_false(xp_registry_lookup(0x200000, &r));
    assert_true(xp_registry_lookup(0x400010, &r));
    assert_int_equal(r.alloc_id, 8);
    assert_true(xp_table_lookup(XP_TABLE_HANDLES, 0x400010, &r));
    assert_int_equal(r.alloc_id, 7);
    assert_false(xp_table_remove(XP_TABLE_HANDLES, 0x200000, 1u << XP_ALLOC_PHYSICAL, &r));
    assert_true(xp_table_remove(XP_TABLE_HANDLES, 0x200000, 1u << XP_ALLOC_RESERVED, &r));
    assert_int_equal(r.alloc_id, 7);
    assert_true(xp_registry_lookup(0x400010, &r));
    xp_registry_clear();
    assert_false(xp_registry_lookup(0x400010, &r));
    (void)state;
}

/* Readers racing a writer always see either the old or the new table. */
static _Atomic int stop_flag;
static void *writer(void *arg)
{
    (void)arg;
    for (uint64_t i = 0; !stop_flag; i++) {
        xp_range r = {.base = 0x100000 + (i % 512) * 0x1000, .size = 0x800, .alloc_id = i + 100,
                      .kind = XP_ALLOC_DEVICE};
        xp_registry_add(&r);
        xp_range out;
        xp_registry_remove(r.base, 1u << XP_ALLOC_DEVICE, &out);
    }
    return NULL;
}

static void test_concurrent_readers(void **state)
{
    xp_registry_clear();
    xp_range fixed = {.base = 0x10000, .size = 0x1000, .alloc_id = 42, .kind = XP_ALLOC_PINNED};
    assert_true(xp_registry_add(&fixed));
    pthread_t t;
    stop_flag = 0;
    assert_int_equal(pthread_create(&t, NULL, writer, NULL), 0);
    for (int i = 0; i < 200000; i++) {
        xp_range r;
        assert_true(xp_registry_lookup(0x10010, &r));
        assert_int_equal(r.alloc_id, 42);
        assert_false(xp_registry_lookup(0x20000, &r));
    }
    stop_flag = 1;
    pthread_join(t, NULL);
    (void)state;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookup_inside_and_outside),
        cmocka_unit_test(test_remove_exact_base_and_kind),
        cmocka_unit_test(test_overlap_replaces_stale),
        cmocka_unit_test(test_handles_apart),
        cmocka_unit_test(test_concurrent_readers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
