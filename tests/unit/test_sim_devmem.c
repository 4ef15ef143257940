/* test_sim_devmem.c: the simulated device allocator and host-range table. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xpsim_devmem.h"
#include "xpsim_hostmem.h"

#define MiB (1024u * 1024u)

static int setup(void **state)
{
    xpsim_devmem *dm = malloc(sizeof *dm);
    assert_non_null(dm);
    assert_int_equal(xpsim_devmem_init(dm, 0, 64 * MiB), CUDA_SUCCESS);
    *state = dm;
    return 0;
}

static int teardown(void **state)
{
    xpsim_devmem_fini(*state);
    free(*state);
    return 0;
}

static void test_alignment_and_rounding(void **state)
{
    xpsim_devmem *dm = *state;
    CUdeviceptr a, b;
    assert_int_equal(xpsim_devmem_alloc(dm, 1, XPSIM_BLOCK_ALLOC, NULL, &a), CUDA_SUCCESS);
    assert_int_equal(xpsim_devmem_alloc(dm, 1, XPSIM_BLOCK_ALLOC, NULL, &b), CUDA_SUCCESS);
    assert_int_equal(a % 256, 0);
    assert_int_equal(b % 256, 0);
    /* A 1-byte allocation still takes a whole granule. */
    assert_int_equal(b - a, XPSIM_DEVMEM_ALIGN);
    uint64_t free_bytes, total;
    xpsim_devmem_info(dm, &free_bytes, &total);
    assert_int_equal(total, 64 * MiB);
    assert_int_equal(free_bytes, 64 * MiB - 2 * XPSIM_DEVMEM_ALIGN);
}

static void test_free_errors(void **state)
{
    xpsim_devmem *dm = *state;
    CUdeviceptr a;
    assert_int_equal(xpsim_devmem_alloc(dm, 4096, XPSIM_BLOCK_ALLOC, NULL, &a), CUDA_SUCCESS);
    assert_int_equal(xpsim_devmem_free(dm, a + 256), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(xpsim_devmem_free(dm, a), CUDA_SUCCESS);
    assert_int_equal(xpsim_devmem_free(dm, a), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(xpsim_devmem_free(dm, 0x1000), CUDA_ERROR_INVALID_VALUE);
    CUdeviceptr m;
    assert_int_equal(xpsim_devmem_alloc(dm, 64, XPSIM_BLOCK_MODULE, NULL, &m), CUDA_SUCCESS);
    assert_int_equal(xpsim_devmem_free(dm, m), CUDA_ERROR_INVALID_VALUE);
}

static void test_first_fit_fragmentation(void **state)
{
    xpsim_devmem *dm = *state;
    CUdeviceptr blocks[64];
    for (int i = 0; i < 64; i++)
        assert_int_equal(xpsim_devmem_alloc(dm, MiB, XPSIM_BLOCK_ALLOC, NULL, &blocks[i]), CUDA_SUCCESS);
    CUdeviceptr extra;
    assert_int_equal(xpsim_devmem_alloc(dm, 1, XPSIM_BLOCK_ALLOC, NULL, &extra), CUDA_ERROR_OUT_OF_MEMORY);
    for (int i = 0; i < 64; i += 2)
        assert_int_equal(xpsim_devmem_free(dm, blocks[i]), CUDA_SUCCESS);
    uint64_t free_bytes, total;
    xpsim_devmem_info(dm, &free_bytes, &total);
    assert_int_equal(free_bytes, 32 * MiB);
    assert_int_equal(xpsim_devmem_largest_free(dm), MiB);
    /* Half the device is free, yet no 2 MiB hole exists. */
    assert_int_equal(xpsim_devmem_alloc(dm, 2 * MiB, XPSIM_BLOCK_ALLOC, NULL, &extra), CUDA_ERROR_OUT_OF_MEMORY);
    /* First fit: the lowest hole is reused. */
    assert_int_equal(xpsim_devmem_alloc(dm, MiB, XPSIM_BLOCK_ALLOC, NULL, &extra), CUDA_SUCCESS);
    assert_int_equal(extra, blocks[0]);
    /* Freeing a neighbour coalesces: blocks[1] joins the holes around it. */
    assert_int_equal(xpsim_devmem_free(dm, blocks[3]), CUDA_SUCCESS);
    assert_int_equal(xpsim_devmem_largest_free(dm), 3 * MiB);
    assert_int_equal(xpsim_devmem_alloc(dm, 3 * MiB, XPSIM_BLOCK_ALLOC, NULL, &extra), CUDA_SUCCESS);
    assert_int_equal(extra, blocks[2]);
}

static void test_lookup_and_shadow(void **state)
{
    xpsim_devmem *dm = *state;
    CUdeviceptr a;
    assert_int_equal(xpsim_devmem_alloc(dm, 1000, XPSIM_BLOCK_ALLOC, NULL, &a), CUDA_SUCCESS);
    xpsim_block b;
    assert_true(xpsim_devmem_lookup(dm, a + 999, &b));
    assert_int_equal(dm->base + b.offset, a);
    assert_int_equal(b.requested, 1000);
    /* Past what was asked for (in the granule's padding) is not the allocation. */
    assert_false(xpsim_devmem_lookup(dm, a + 1000, &b));
    memset(xpsim_devmem_shadow(dm, a), 0x5a, 1000);
    assert_int_equal(((unsigned char *)xpsim_devmem_shadow(dm, a))[999], 0x5a);
    xpsim_devmem_free_owned(dm, NULL);
    assert_false(xpsim_devmem_lookup(dm, a, &b));
    uint64_t free_bytes, total;
    xpsim_devmem_info(dm, &free_bytes, &total);
    assert_int_equal(free_bytes, total);
}

/* A context's destroy frees its own allocations and module variables, not
 * another context's nor pool memory (which belongs to the device). */
static void test_free_owned(void **state)
{
    xpsim_devmem *dm = *state;
    static const int ctx_a = 0, ctx_b = 0;
    CUdeviceptr a, m, b, p;
    assert_int_equal(xpsim_devmem_alloc(dm, 100, XPSIM_BLOCK_ALLOC, &ctx_a, &a), CUDA_SUCCESS);
    assert_int_equal(xpsim_devmem_alloc(dm, 100, XPSIM_BLOCK_MODULE, &ctx_a, &m), CUDA_SUCCESS);
    assert_int_equal(xpsim_devmem_alloc(dm, 100, XPSIM_BLOCK_ALLOC, &ctx_b, &b), CUDA_SUCCESS);
    assert_int_equal(xpsim_devmem_alloc(dm, 100, XPSIM_BLOCK_POOL, NULL, &p), CUDA_SUCCESS);
    xpsim_devmem_free_owned(dm, &ctx_a);
    xpsim_block blk;
    assert_false(xpsim_devmem_lookup(dm, a, &blk));
    assert_false(xpsim_devmem_lookup(dm, m, &blk));
    assert_true(xpsim_devmem_lookup(dm, b, &blk));
    assert_true(blk.owner == &ctx_b);
    assert_true(xpsim_devmem_lookup(dm, p, &blk));
    assert_int_equal(dm->used, 2 * XPSIM_DEVMEM_ALIGN);
}

static void test_device_range_not_host_accessible(void **state)
{
    xpsim_devmem *dm = *state;
    CUdeviceptr a;
    assert_int_equal(xpsim_devmem_alloc(dm, 64, XPSIM_BLOCK_ALLOC, NULL, &a), CUDA_SUCCESS);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGSEGV, SIG_DFL);   /* cmocka catches it otherwise */
        volatile unsigned char *p = (volatile unsigned char *)(uintptr_t)a;
        unsigned char v = *p;   /* must fault, as on a real GPU */
        _exit(v == 0 ? 3 : 4);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGSEGV);
}

static void test_hostmem_ranges(void **state)
{
    static char buf[8192];
    uint64_t base = (uint64_t)(uintptr_t)buf;
    xpsim_host_range r = {.base = base, .size = 4096, .kind = XPSIM_HOST_REGISTERED};
    assert_int_equal(xpsim_hostmem_add(&r), CUDA_SUCCESS);
    xpsim_host_range overlap = {.base = base + 4095, .size = 10, .kind = XPSIM_HOST_REGISTERED};
    assert_int_equal(xpsim_hostmem_add(&overlap), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    xpsim_host_range after = {.base = base + 4096, .size = 100, .kind = XPSIM_HOST_PINNED};
    assert_int_equal(xpsim_hostmem_add(&after), CUDA_SUCCESS);
    xpsim_host_range found;
    assert_true(xpsim_hostmem_lookup(base + 100, &found));
    assert_int_equal(found.base, base);
    assert_true(xpsim_hostmem_lookup(base + 4096 + 99, &found));
    assert_int_equal(found.kind, XPSIM_HOST_PINNED);
    assert_false(xpsim_hostmem_lookup(base + 4096 + 100, &found));
    /* Only the exact base of the right kind is removed. */
    assert_false(xpsim_hostmem_remove(base + 1, XPSIM_HOST_REGISTERED, NULL));
    assert_false(xpsim_hostmem_remove(base, XPSIM_HOST_PINNED, NULL));
    assert_true(xpsim_hostmem_remove(base, XPSIM_HOST_REGISTERED, NULL));
    assert_false(xpsim_hostmem_lookup(base + 100, &found));
    assert_true(xpsim_hostmem_remove(base + 4096, XPSIM_HOST_PINNED, NULL));
    (void)state;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_alignment_and_rounding, setup, teardown),
        cmocka_unit_test_setup_teardown(test_free_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_fit_fragmentation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lookup_and_shadow, setup, teardown),
        cmocka_unit_test_setup_teardown(test_free_owned, setup, teardown),
        cmocka_unit_test_setup_teardown(test_device_range_not_host_accessible, setup, teardown),
        cmocka_unit_test(test_hostmem_ranges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
