/* fp_sync_pageable_upload.c: the plainest slow loop: every step the batch is
 * built in a malloc'd buffer and uploaded with cudaMemcpy, which waits for the
 * step's queued kernels and for the transfer, from pageable memory, before
 * the host can prepare the next batch.
 *
 * ENV: XFERPROF_SIM_KERNEL_TIME=300us
 * TRUTH: sync-in-loop @ upload
 * (one finding for these copies: they are of one size and kind, so not
 * low-bandwidth, and cudaMemcpy is not an async-pageable copy) */
#include "fp_common.h"

#include <stdlib.h>

#define STEPS 60
#define BATCH_BYTES (4u << 20)

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    void *dev_batch;
    CHECK(cudaMalloc(&dev_batch, BATCH_BYTES));
    unsigned char *batch = malloc(BATCH_BYTES);
    for (unsigned step = 0; step < STEPS; step++) {
        fp_fill_batch(batch, BATCH_BYTES, step);
        CHECK(cudaMemcpy(dev_batch, batch, BATCH_BYTES, cudaMemcpyHostToDevice)); /* @upload */
        ex_kernel_launch(&k, 0);
        ex_kernel_launch(&k, 0);
    }
    CHECK(cudaDeviceSynchronize());
    free(batch);
    CHECK(cudaFree(dev_batch));
    ex_kernel_fini(&k);
    return 0;
}
