/* cap_sites.c: 64 call sites used in turn, 10 rounds: site k (a function of
 * its own, site_XY with X = k / 8 and Y = k % 8) copies 64 + k bytes, so
 * that the database tells the sites apart by size.  Many more sites than a stack cache of a few entries, and all of
 * them from the same depth and stack pointer: every copy must still get its
 * own site's stack. */
#include "cap_util.h"

static void *dev, *host;
static cudaStream_t stream;

#define SITE(k)                                                                          \
    __attribute__((noinline)) static void site_##k(int n)                                \
    {                                                                                    \
        CHECK_OK(cudaMemcpyAsync(dev, host, 64 + (size_t)n, cudaMemcpyHostToDevice, stream)); \
        __asm__ volatile("" ::: "memory");                                               \
    }
#define SITE8(k) SITE(k##0) SITE(k##1) SITE(k##2) SITE(k##3) SITE(k##4) SITE(k##5) SITE(k##6) SITE(k##7)
SITE8(0) SITE8(1) SITE8(2) SITE8(3) SITE8(4) SITE8(5) SITE8(6) SITE8(7)
#define REF8(k) site_##k##0, site_##k##1, site_##k##2, site_##k##3, site_##k##4, site_##k##5, \
                site_##k##6, site_##k##7
static void (*const sites[64])(int) = {REF8(0), REF8(1), REF8(2), REF8(3),
                                       REF8(4), REF8(5), REF8(6), REF8(7)};

int main(void)
{
    CHECK_OK(cudaMalloc(&dev, 256));
    CHECK_OK(cudaMallocHost(&host, 256));
    CHECK_OK(cudaStreamCreate(&stream));
    for (int round = 0; round < 10; round++)
        for (int k = 0; k < 64; k++)
            sites[k](k);
    CHECK_OK(cudaStreamSynchronize(stream));
    CHECK_OK(cudaStreamDestroy(stream));
    CHECK_OK(cudaFreeHost(host));
    CHECK_OK(cudaFree(dev));
    printf("copies 640\n");
    return 0;
}
