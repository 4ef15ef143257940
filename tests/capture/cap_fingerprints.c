/* cap_fingerprints.c: copies whose content test_fingerprints.py knows (the
 * buffers are filled with pattern(), which it computes too), for checking
 * copies.fingerprint under each --fingerprint setting: equal content, changed
 * content inside and outside the sampled blocks, the size threshold, D2H
 * after a synchronous copy, and the copies that get no fingerprint (device
 * memory, managed memory, async D2H, failures). */
#include "cap_util.h"

#define BIG (1u << 20)
#define SMALL 4096u
#define BLOCK 256u                   /* XP_FP_BLOCK */
#define NBLOCKS 16u                  /* XP_FP_BLOCKS */

/* Byte i of the buffer with this seed (test_fingerprints.py: pattern()). */
static void pattern(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(((uint32_t)(i * 2654435761u) >> 16) ^ seed);
}

/* Where sampled block k of an n-byte copy starts. */
static size_t block_at(size_t n, unsigned k)
{
    return (n - BLOCK) * k / (NBLOCKS - 1);
}

__attribute__((noinline)) static void up(void *dev, const void *src, size_t n)
{
    CHECK_OK(cudaMemcpy(dev, src, n, cudaMemcpyHostToDevice));
}

int main(void)
{
    unsigned char *dev = NULL, *dev_other = NULL, *dev_small = NULL, *pinned = NULL;
    unsigned char *managed = NULL;
    cudaStream_t stream = NULL;
    CHECK_OK(cudaMalloc((void **)&dev, BIG));
    CHECK_OK(cudaMalloc((void **)&dev_other, BIG));
    CHECK_OK(cudaMalloc((void **)&dev_small, SMALL));
    CHECK_OK(cudaMallocHost((void **)&pinned, BIG));
    CHECK_OK(cudaMallocManaged((void **)&managed, SMALL, cudaMemAttachGlobal));
    CHECK_OK(cudaStreamCreate(&stream));
    unsigned char *a = malloc(BIG), *b = malloc(SMALL), *c = malloc(SMALL), *c2 = malloc(SMALL);
    CHECK(a && b && c && c2);
    pattern(a, BIG, 1);
    pattern(b, SMALL, 2);
    pattern(managed, SMALL, 3);
    printf("off_inside %zu\n", block_at(BIG, 5) + 10);
    printf("off_outside %u\n", 300u);
    fflush(stdout);

    /* 1 MiB: twice unchanged, then changed in a sampled block, outside every
     * sampled block, and in its last byte (each change undone after). */
    up(dev, a, BIG);                                              /* 1 */
    up(dev, a, BIG);                                              /* 2 */
    size_t inside = block_at(BIG, 5) + 10;
    a[inside] ^= 0xff;
    up(dev_other, a, BIG);                                        /* 3 */
    a[inside] ^= 0xff;
    a[300] ^= 0xff;
    up(dev_other, a, BIG);                                        /* 4 */
    a[300] ^= 0xff;
    a[BIG - 1] ^= 0xff;
    up(dev_other, a, BIG);                                        /* 5 */
    a[BIG - 1] ^= 0xff;

    /* 4 KiB: exact. */
    up(dev_small, b, SMALL);                                      /* 6 */
    up(dev_small, b, SMALL);                                      /* 7 */
    CHECK_OK(cudaMemcpy(c, dev_small, SMALL, cudaMemcpyDeviceToHost));  /* 8: D2H, sync */
    CHECK(memcmp(b, c, SMALL) == 0);
    b[1234] ^= 1;
    up(dev_other, b, SMALL);                                      /* 9 */
    b[1234] ^= 1;

    /* 1 MiB back down into pinned memory: the same bytes as copy 1. */
    CHECK_OK(cudaMemcpy(pinned, dev, BIG, cudaMemcpyDeviceToHost));      /* 10 */
    CHECK(memcmp(pinned, a, BIG) == 0);
    /* Async D2H: not complete when the call returns, so unknown. */
    CHECK_OK(cudaMemcpyAsync(pinned, dev, SMALL, cudaMemcpyDeviceToHost, stream)); /* 11 */
    CHECK_OK(cudaStreamSynchronize(stream));
    /* Async H2D from pinned memory: the source is there at call time. */
    CHECK_OK(cudaMemcpyAsync(dev_small, pinned, SMALL, cudaMemcpyHostToDevice, stream)); /* 12 */
    CHECK_OK(cudaStreamSynchronize(stream));
    CHECK_OK(cudaMemcpy(c2, b, SMALL, cudaMemcpyHostToHost));            /* 13: H2H */
    CHECK_OK(cudaMemcpy(dev_other, dev, SMALL, cudaMemcpyDeviceToDevice)); /* 14: D2D */
    /* Managed memory is never read by the profiler. */
    CHECK_OK(cudaMemcpy(dev_small, managed, SMALL, cudaMemcpyHostToDevice)); /* 15 */
    CHECK_OK(cudaMemcpy(managed, dev_small, SMALL, cudaMemcpyDeviceToHost)); /* 16 */
    /* The threshold: 64 KiB exact, one byte more sampled. */
    up(dev, a, 64u * 1024u);                                      /* 17 */
    up(dev, a, 64u * 1024u + 1u);                                 /* 18 */
    /* A failed copy (beyond dev_small) has none. */
    CHECK_CUDA(cudaMemcpy(dev_small, b, 2 * SMALL, cudaMemcpyHostToDevice), /* 19 */
               cudaErrorInvalidValue);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidValue);
    /* cudaMemcpyDefault, resolved to H2D: as copy 6. */
    CHECK_OK(cudaMemcpy(dev_small, b, SMALL, cudaMemcpyDefault));        /* 20 */

    CHECK_OK(cudaStreamDestroy(stream));
    CHECK_OK(cudaFree(managed));
    CHECK_OK(cudaFreeHost(pinned));
    CHECK_OK(cudaFree(dev_small));
    CHECK_OK(cudaFree(dev_other));
    CHECK_OK(cudaFree(dev));
    free(c2);
    free(c);
    free(b);
    free(a);
    return 0;
}
