/* async_pageable.c: the pitfall is cudaMemcpyAsync from pageable (malloc'd)
 * memory.  The bytes must first be staged through a pinned bounce buffer, so
 * the "asynchronous" call holds the host for the whole transfer and nothing
 * overlaps with it; from cudaMallocHost memory the same call returns at once.
 *
 * xferprof report should say:
 *   async-pageable (warning) at upload_batch: BATCHES copies,
 *     BATCHES * BATCH_BYTES bytes (6 x 512 KiB = 3145728);
 *   nothing at upload_batch_pinned (the same uploads from pinned memory).
 * BATCHES stays below sync-in-loop's threshold (10 blocking copies from one
 * site) and every batch differs, so this is the only finding. */
#include "example_util.h"

#include <string.h>

#define BATCHES 6
/* Below low-bandwidth's 1 MiB minimum, so a copy slowed by a busy host is
 * not also reported as slow. */
#define BATCH_BYTES (512u << 10)

static EX_SITE void upload_batch(void *dev, const void *host, cudaStream_t s)
{
    CHECK(cudaMemcpyAsync(dev, host, BATCH_BYTES, cudaMemcpyHostToDevice, s));
}

static EX_SITE void upload_batch_pinned(void *dev, const void *host, cudaStream_t s)
{
    CHECK(cudaMemcpyAsync(dev, host, BATCH_BYTES, cudaMemcpyHostToDevice, s));
}

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    void *dev;
    CHECK(cudaMalloc(&dev, BATCH_BYTES));
    unsigned char *pageable = malloc(BATCH_BYTES);
    unsigned char *pinned;
    CHECK(cudaMallocHost((void **)&pinned, BATCH_BYTES));
    if (pageable == NULL)
        return 1;

    for (int step = 0; step < BATCHES; step++) {
        /* A new batch every step: distinct content, so no upload is redundant. */
        memset(pageable, step + 1, BATCH_BYTES);
        upload_batch(dev, pageable, s);
        ex_kernel_launch(&k, s);
        memset(pinned, 0x80 + step, BATCH_BYTES);
        upload_batch_pinned(dev, pinned, s);
        ex_kernel_launch(&k, s);
        CHECK(cudaStreamSynchronize(s));
    }

    CHECK(cudaFreeHost(pinned));
    free(pageable);
    CHECK(cudaFree(dev));
    CHECK(cudaStreamDestroy(s));
    ex_kernel_fini(&k);
    ex_expect("async-pageable", "upload_batch", BATCHES, (long long)BATCHES * BATCH_BYTES, NULL);
    return 0;
}
