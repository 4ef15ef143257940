/* fragmentation.c: an allocation that fails although the device has enough
 * free memory in total, because no free block is large enough: the program
 * fills the device with BLOCK_BYTES blocks, frees every other one, then asks
 * for BIG_BYTES, more than any hole (and the untouched tail) but less than
 * their sum.  (Caching allocators hide this in real frameworks; the fix is to
 * allocate large, long-lived buffers first, or fewer sizes.)
 *
 * Run it with a small simulated device, as the golden test does:
 *   XFERPROF_SIM_MEMORY=512M xferprof run --sim -- examples/fragmentation
 * xferprof report should say:
 *   oom (error) at alloc_big: 1 failed allocation of BIG_BYTES (64 MiB),
 *     details fragmentation true (the request is below the device's free memory);
 *   fragmentation (warning) on device 0: the largest hole is a small part of
 *     the free memory inside the span in use.
 * Everything is freed at the end, so no leak. */
#include "example_util.h"

#define BLOCK_BYTES (8u << 20)
#define BIG_BYTES (64u << 20)
#define TAIL_BLOCKS 2 /* left unallocated at the end: a hole smaller than BIG_BYTES */
#define MAX_BLOCKS 4096

static EX_SITE void *alloc_block(void)
{
    void *p;
    CHECK(cudaMalloc(&p, BLOCK_BYTES));
    return p;
}

/* Not `return cudaMalloc(...)`: a tail call would leave main as the site. */
static EX_SITE cudaError_t alloc_big(void **p)
{
    cudaError_t e = cudaMalloc(p, BIG_BYTES);
    if (e != cudaSuccess)
        fprintf(stderr, "alloc_big: %s\n", cudaGetErrorName(e));
    return e;
}

int main(void)
{
    size_t free_b, total_b;
    CHECK(cudaMemGetInfo(&free_b, &total_b));
    size_t n = free_b / BLOCK_BYTES;
    if (n <= TAIL_BLOCKS + 2 || n - TAIL_BLOCKS > MAX_BLOCKS) {
        fprintf(stderr, "device memory %zu MiB: run with XFERPROF_SIM_MEMORY=512M\n",
                free_b >> 20);
        return 2;
    }
    n -= TAIL_BLOCKS;
    static void *blocks[MAX_BLOCKS];
    for (size_t i = 0; i < n; i++)
        blocks[i] = alloc_block();
    for (size_t i = 0; i < n; i += 2) {
        CHECK(cudaFree(blocks[i]));
        blocks[i] = NULL;
    }
    CHECK(cudaMemGetInfo(&free_b, &total_b));
    void *big = NULL;
    cudaError_t e = alloc_big(&big);
    (void)cudaGetLastError();
    printf("%zu blocks of %u MiB, every other freed: %zu MiB free; %u MiB: %s\n", n,
           BLOCK_BYTES >> 20, free_b >> 20, BIG_BYTES >> 20, cudaGetErrorName(e));
    if (e == cudaSuccess)
        CHECK(cudaFree(big));
    for (size_t i = 0; i < n; i++)
        if (blocks[i] != NULL)
            CHECK(cudaFree(blocks[i]));
    if (e != cudaErrorMemoryAllocation)
        return 1;
    ex_expect("oom", "alloc_big", 1, BIG_BYTES, " fragmentation=true");
    ex_expect("fragmentation", "-", 1, -1, NULL);
    return 0;
}
