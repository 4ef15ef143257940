/* Device memory: cudaMalloc alignment and disjointness, host inaccessibility, capacity accounting, and cudaFree's error cases. */
#include "xpt_check.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define NALLOC 16

/* [a, a+na) and [b, b+nb) share at least one byte. */
static int overlaps(uintptr_t a, size_t na, uintptr_t b, size_t nb)
{
    return a < b + nb && b < a + na;
}

/* Reading device memory from the host must fault, as it does on a GPU where
 * device addresses are reserved but not mapped in the host's page tables.
 * Done in a child so the fault does not end the test. */
static void check_host_read_faults(const void *dptr)
{
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);   /* the crash is expected: no core file */
        volatile const unsigned char *p = dptr;
        unsigned char v = *p;
        /* Reaching here means the device address is host-readable. */
        _exit(10 + (v & 1));
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV,
              "child reading device pointer %p: %s %d", dptr,
              WIFSIGNALED(status) ? "killed by signal" : "exited with",
              WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

int main(void)
{
    const unsigned long long capacity = xpt_env_size("XFERPROF_SIM_MEMORY", 16ull << 30);

    /* Force context creation so later free-memory deltas are allocations only. */
    CHECK_OK(cudaFree(NULL));

    size_t free0 = 0, total0 = 0;
    CHECK_OK(cudaMemGetInfo(&free0, &total0));
    CHECK_MSG(total0 == capacity, "total %zu, XFERPROF_SIM_MEMORY %llu", total0, capacity);
    CHECK(free0 <= total0);

    /* Host allocations of several kinds to compare device pointers against. */
    int stack_var = 0;
    unsigned char *heap_small = malloc(100);
    unsigned char *heap_big = malloc(8u << 20);   /* mmap'd by glibc */
    CHECK(heap_small && heap_big);

    static const size_t sizes[NALLOC] = {1, 255, 256, 257, 4096, 1000, 1 << 20, 3,
                                         511, 512, 513, 77777, 64, 2 << 20, 8, 100000};
    void *d[NALLOC];
    for (int i = 0; i < NALLOC; i++) {
        d[i] = NULL;
        CHECK_OK(cudaMalloc(&d[i], sizes[i]));
        CHECK(d[i] != NULL);
        CHECK_MSG(((uintptr_t)d[i] & 255u) == 0, "allocation %d at %p not 256-aligned", i, d[i]);
        CHECK(!overlaps((uintptr_t)d[i], sizes[i], (uintptr_t)heap_small, 100));
        CHECK(!overlaps((uintptr_t)d[i], sizes[i], (uintptr_t)heap_big, 8u << 20));
        CHECK(!overlaps((uintptr_t)d[i], sizes[i], (uintptr_t)&stack_var, sizeof stack_var));
        CHECK(!overlaps((uintptr_t)d[i], sizes[i], (uintptr_t)&main, 1));
        for (int j = 0; j < i; j++)
            CHECK_MSG(!overlaps((uintptr_t)d[i], sizes[i], (uintptr_t)d[j], sizes[j]),
                      "allocation %d [%p,+%zu) overlaps %d [%p,+%zu)", i, d[i], sizes[i], j,
                      d[j], sizes[j]);
    }

    check_host_read_faults(d[4]);
    check_host_read_faults((const unsigned char *)d[6] + (1 << 19));

    /* Free memory shrinks by at least what was asked for (the allocator may round up). */
    size_t free1 = 0, total1 = 0;
    CHECK_OK(cudaMemGetInfo(&free1, &total1));
    CHECK_EQ(total1, total0);
    size_t asked = 0;
    for (int i = 0; i < NALLOC; i++)
        asked += sizes[i];
    CHECK_MSG(free0 - free1 >= asked, "free went %zu -> %zu for %zu bytes", free0, free1, asked);

    void *big = NULL;
    size_t free2 = 0;
    CHECK_OK(cudaMalloc(&big, 32u << 20));
    CHECK_OK(cudaMemGetInfo(&free2, &total1));
    CHECK_MSG(free1 - free2 >= (32u << 20), "free went %zu -> %zu for 32 MiB", free1, free2);
    CHECK_OK(cudaFree(big));
    CHECK_OK(cudaMemGetInfo(&free2, &total1));
    CHECK_EQ(free2, free1);

    /* Size 0 succeeds (CUDA returns success; the pointer value is unspecified). */
    void *zero = (void *)1;
    CHECK_OK(cudaMalloc(&zero, 0));
    CHECK_OK(cudaFree(zero));

    /* NULL out-pointer. */
    CHECK_CUDA(cudaMalloc(NULL, 16), cudaErrorInvalidValue);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidValue);

    /* More than the device holds: out of memory, recorded as the last error once. */
    void *huge = NULL;
    CHECK_CUDA(cudaMalloc(&huge, (size_t)capacity + 1), cudaErrorMemoryAllocation);
    CHECK_CUDA(cudaGetLastError(), cudaErrorMemoryAllocation);
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);
    /* Out of memory is not sticky: allocation still works. */
    void *after = NULL;
    CHECK_OK(cudaMalloc(&after, 4096));
    CHECK_OK(cudaFree(after));

    CHECK_OK(cudaFree(NULL));

    /* Pointers cudaMalloc never returned. */
    CHECK_CUDA(cudaFree(heap_small), cudaErrorInvalidValue);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidValue);
    CHECK_CUDA(cudaFree((unsigned char *)d[6] + 256), cudaErrorInvalidValue);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidValue);

    /* A rejected interior free must not have released the block: it still
     * holds data. */
    unsigned char pat[4096], back[4096];
    xpt_fill(pat, sizeof pat, 6);
    CHECK_OK(cudaMemcpy(d[6], pat, sizeof pat, cudaMemcpyHostToDevice));
    CHECK_OK(cudaMemcpy(back, d[6], sizeof back, cudaMemcpyDeviceToHost));
    CHECK_PATTERN(back, sizeof back, 6);

    for (int i = 0; i < NALLOC; i++)
        CHECK_OK(cudaFree(d[i]));
    /* Double free. */
    CHECK_CUDA(cudaFree(d[3]), cudaErrorInvalidValue);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidValue);

    size_t free3 = 0;
    CHECK_OK(cudaMemGetInfo(&free3, &total1));
    CHECK_MSG(free3 == free0, "free after freeing everything %zu, at start %zu", free3, free0);

    free(heap_small);
    free(heap_big);
    return 0;
}
