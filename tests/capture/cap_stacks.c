/* cap_stacks.c: the same copy site reached through two different callers
 * whose frames are laid out alike (same stack pointer at the hook), taken in
 * turn, and then from a deeper recursion: the stacks the preload records
 * must tell every chain apart (its per-thread stack cache must not merge
 * them). */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

static char host[64];
static void *dev;

__attribute__((noinline)) static void copy_site(void)
{
    if (cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice) != cudaSuccess)
        exit(2);
    __asm__ volatile("" ::: "memory");
}

/* Two callers with identical frames: copy_site sees the same stack pointer
 * from either, only the return address above it differs. */
__attribute__((noinline)) static void caller_a(void)
{
    copy_site();
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void caller_b(void)
{
    copy_site();
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void recurse(int n)
{
    if (n == 0)
        copy_site();
    else
        recurse(n - 1);
    __asm__ volatile("" ::: "memory");
}

int main(void)
{
    if (cudaMalloc(&dev, sizeof host) != cudaSuccess)
        return 2;
    for (int i = 0; i < 10; i++) {   /* copies 0..19: a, b, a, b, ... */
        caller_a();
        caller_b();
    }
    for (int i = 0; i < 3; i++)      /* copies 20..25: depth 1, 3, 1, 3, 1, 3 */
        for (int d = 1; d <= 3; d += 2)
            recurse(d);
    cudaFree(dev);
    printf("done\n");
    return 0;
}
