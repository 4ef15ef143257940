/* test_engine_vmm.c: the engine's view of the driver's virtual memory
 * management, with no driver loaded (so nothing can come from the driver
 * fallback of classification): a mapping is device memory of its physical
 * allocation's device from the registry alone, the reservation around it is
 * not, and one unmap of two adjacent mappings ends both. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "xp_engine.h"
#include "xp_registry.h"

static void enter(xp_scope *s)
{
    s->site.ret = 0;
    s->site.sp = 0;
    xp_scope_enter(s, 0);
    xp_scope_returned(s);   /* no real call: straight to writing */
}

static void test_mapped_is_device_memory(void **state)
{
    const uint64_t va = 0x7e0000000000ull, gran = 2u << 20, handle = 0x5000;
    xp_scope s;
    enter(&s);
    assert_true(s.recording);
    xp_record_alloc_on(&s, XP_API_cuMemAddressReserve, XP_ALLOC_RESERVED, va, 4 * gran,
                       XP_DEVICE_OF_KIND, 0);
    xp_record_alloc_on(&s, XP_API_cuMemCreate, XP_ALLOC_PHYSICAL, handle, 2 * gran, 3, 0);
    assert_int_equal(xp_physical_device(handle), 3);
    assert_int_equal(xp_physical_device(handle + 1), XP_DEVICE_OF_KIND);
    xp_record_alloc_on(&s, XP_API_cuMemMap, XP_ALLOC_MAPPED, va + gran, gran,
                       xp_physical_device(handle), 0);
    xp_record_alloc_on(&s, XP_API_cuMemMap, XP_ALLOC_MAPPED, va + 2 * gran, gran,
                       xp_physical_device(handle), 0);

    xp_where w;
    xp_classify(va + gran + 100, &w);
    assert_int_equal(w.kind, XP_ALLOC_DEVICE);
    assert_int_equal(w.device, 3);
    xp_classify(va + 2 * gran + 100, &w);
    assert_int_equal(w.kind, XP_ALLOC_DEVICE);
    xp_classify(va + 100, &w);   /* reserved, unmapped: no memory the registry knows */
    assert_int_equal(w.kind, 0);

    xp_record_free_span(&s, XP_API_cuMemUnmap, 1u << XP_ALLOC_MAPPED, va + gran, 2 * gran, 0);
    xp_range r;
    assert_false(xp_registry_lookup(va + gran + 100, &r));
    assert_false(xp_registry_lookup(va + 2 * gran + 100, &r));
    assert_true(xp_table_lookup(XP_TABLE_HANDLES, va, &r));
    assert_int_equal(r.kind, XP_ALLOC_RESERVED);
    assert_int_equal(r.device, -1);
    xp_record_free(&s, XP_API_cuMemRelease, 1u << XP_ALLOC_PHYSICAL, handle, 0);
    assert_int_equal(xp_physical_device(handle), XP_DEVICE_OF_KIND);
    xp_record_free(&s, XP_API_cuMemAddressFree, 1u << XP_ALLOC_RESERVED, va, 0);
    assert_false(xp_table_lookup(XP_TABLE_HANDLES, va, &r));
    xp_scope_leave(&s);
    (void)state;
}

int main(void)
{
    /* The session the engine starts on first use writes here (the test's
     * working folder, replaced by each run); no stacks: the scopes above
     * have no caller to walk from. */
    setenv("XFERPROF_OUTPUT", "test_engine_vmm.db", 1);
    setenv("XFERPROF_STACK_DEPTH", "0", 1);
    setenv("XFERPROF_QUIET", "1", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mapped_is_device_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
