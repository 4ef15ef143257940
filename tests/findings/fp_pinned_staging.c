/* fp_pinned_staging.c: a dataset held in ordinary (pageable) host memory, as
 * numpy arrays or a memory-mapped file are, uploaded through two pinned
 * staging buffers: each batch is memcpy'd into the free staging buffer and
 * sent with cudaMemcpyAsync; the host waits on the buffer's event only before
 * it reuses it. The pageable memory never reaches a CUDA copy.
 *
 * TRUTH: none */
#include "fp_common.h"

#include <stdlib.h>

#define STEPS 80
#define DATASET_BATCHES 16
#define BATCH_BYTES (2u << 20)

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    unsigned char *dataset = malloc((size_t)DATASET_BATCHES * BATCH_BYTES);
    for (unsigned i = 0; i < DATASET_BATCHES; i++)
        fp_fill_batch(dataset + (size_t)i * BATCH_BYTES, BATCH_BYTES, i);
    unsigned char *staging[2];
    void *dev_batch[2];
    cudaEvent_t sent[2];
    for (int i = 0; i < 2; i++) {
        CHECK(cudaMallocHost((void **)&staging[i], BATCH_BYTES));
        CHECK(cudaMalloc(&dev_batch[i], BATCH_BYTES));
        CHECK(cudaEventCreateWithFlags(&sent[i], cudaEventDisableTiming));
    }
    for (unsigned step = 0; step < STEPS; step++) {
        int b = step % 2;
        if (step >= 2)
            CHECK(cudaEventSynchronize(sent[b]));
        /* an epoch of 16 batches, shuffled differently each epoch: a batch
           is a new mix of two dataset rows */
        unsigned r1 = (step * 7 + step / DATASET_BATCHES) % DATASET_BATCHES;
        unsigned r2 = (step * 3 + 1) % DATASET_BATCHES;
        memcpy(staging[b], dataset + (size_t)r1 * BATCH_BYTES, BATCH_BYTES / 2);
        memcpy(staging[b] + BATCH_BYTES / 2, dataset + (size_t)r2 * BATCH_BYTES + BATCH_BYTES / 2,
               BATCH_BYTES / 2);
        ((uint32_t *)staging[b])[0] = step; /* the sample ids travel with the batch */
        CHECK(cudaMemcpyAsync(dev_batch[b], staging[b], BATCH_BYTES, cudaMemcpyHostToDevice, s)); /* @staged */
        ex_kernel_launch(&k, s);
        CHECK(cudaEventRecord(sent[b], s));
    }
    CHECK(cudaStreamSynchronize(s));
    for (int i = 0; i < 2; i++) {
        CHECK(cudaFreeHost(staging[i]));
        CHECK(cudaFree(dev_batch[i]));
        CHECK(cudaEventDestroy(sent[i]));
    }
    free(dataset);
    CHECK(cudaStreamDestroy(s));
    ex_kernel_fini(&k);
    return 0;
}
