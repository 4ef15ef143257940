/* Fragmentation: freed 1 MiB holes add up to plenty of free memory yet no 2 MiB block fits, and a 1 MiB request reuses the lowest hole (first fit). */
#include "xpt_check.h"

#define MIB (1u << 20)
#define MAXBLK 4096

int main(void)
{
    const unsigned long long capacity = xpt_env_size("XFERPROF_SIM_MEMORY", 0);
    CHECK_MSG(capacity == 64ull << 20, "run with XFERPROF_SIM_MEMORY=64M (got %llu)", capacity);

    size_t free_start = 0, total = 0;
    CHECK_OK(cudaMemGetInfo(&free_start, &total));
    CHECK_EQ(total, capacity);

    static void *blk[MAXBLK];
    int n = 0;
    for (;;) {
        CHECK(n < MAXBLK);
        void *p = NULL;
        cudaError_t rc = cudaMalloc(&p, MIB);
        if (rc == cudaErrorMemoryAllocation)
            break;
        CHECK_CUDA(rc, cudaSuccess);
        blk[n++] = p;
    }
    CHECK_CUDA(cudaGetLastError(), cudaErrorMemoryAllocation);
    /* 64 MiB hold 64 blocks; allow a little for the allocator's own use. */
    CHECK_MSG(n >= 60 && n <= 64, "%d blocks of 1 MiB fit in 64 MiB", n);

    size_t free_full = 0;
    CHECK_OK(cudaMemGetInfo(&free_full, &total));
    CHECK_MSG(free_full < MIB, "%zu bytes free after the device was filled", free_full);

    /* Free every other block but the last, so each hole is exactly one block
     * between two live ones (the tail after the last block is under 1 MiB
     * and must not merge with a hole). */
    uintptr_t lowest = UINTPTR_MAX;
    int freed = 0;
    for (int i = 0; i < n - 1; i += 2) {
        CHECK_OK(cudaFree(blk[i]));
        if ((uintptr_t)blk[i] < lowest)
            lowest = (uintptr_t)blk[i];
        blk[i] = NULL;
        freed++;
    }

    size_t free_holes = 0;
    CHECK_OK(cudaMemGetInfo(&free_holes, &total));
    CHECK_MSG(free_holes >= 30ull * MIB, "free %zu after freeing %d blocks", free_holes, freed);
    CHECK(free_holes >= free_full + (size_t)freed * MIB);

    /* No hole is 2 MiB: plenty free in total, yet out of memory. */
    void *two = NULL;
    CHECK_CUDA(cudaMalloc(&two, 2 * MIB), cudaErrorMemoryAllocation);
    CHECK_CUDA(cudaGetLastError(), cudaErrorMemoryAllocation);

    /* 1 MiB fits in a hole; first fit takes the lowest. */
    void *one = NULL;
    CHECK_OK(cudaMalloc(&one, MIB));
    CHECK_MSG((uintptr_t)one == lowest, "1 MiB allocation at %p, lowest hole at %p", one,
              (void *)lowest);

    /* Freeing a neighbour merges holes: now 2 MiB (or more) fit. Block 1
     * sits between holes 0 and 2 only if blocks were handed out in address
     * order, so pick the live block right above the lowest hole instead. */
    CHECK_OK(cudaFree(one));
    int above = -1;
    for (int i = 0; i < n; i++)
        if (blk[i] && (uintptr_t)blk[i] == lowest + MIB)
            above = i;
    if (above >= 0) {
        CHECK_OK(cudaFree(blk[above]));
        blk[above] = NULL;
        CHECK_OK(cudaMalloc(&two, 2 * MIB));
        CHECK_MSG((uintptr_t)two == lowest, "2 MiB allocation at %p, merged hole at %p", two,
                  (void *)lowest);
        CHECK_OK(cudaFree(two));
    }

    for (int i = 0; i < n; i++)
        if (blk[i])
            CHECK_OK(cudaFree(blk[i]));
    size_t free_end = 0;
    CHECK_OK(cudaMemGetInfo(&free_end, &total));
    CHECK_MSG(free_end == free_start, "free %zu after freeing everything, %zu at start",
              free_end, free_start);
    return 0;
}
