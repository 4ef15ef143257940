/* fp_pageable_readback.c: feature extraction for a retrieval index. Each
 * batch is uploaded from a pinned double buffer, the encoder runs, and the
 * batch's embeddings (8 MiB) are read back with cudaMemcpyAsync into a
 * malloc'ed buffer, then the stream is synchronized and the host writes them
 * out. The readback is the job's output, so reading every batch is right;
 * reading into pageable memory is not: the copy is staged through the
 * driver's pinned buffer at a fraction of the link's speed, and cannot
 * overlap the next batch's encoder (pinned buffers, two of them, would).
 *
 * ENV: XFERPROF_SIM_KERNEL_TIME=400us
 * TRUTH: sync-in-loop @ readback
 * (one finding: a blocking copy in the loop, as a plain cudaMemcpy would be;
 * its fix must be pinned buffers in turn, not "read it every N steps", which
 * tests/unit/test_rules_copies.c checks) */
#include "fp_common.h"

#include <stdlib.h>

#define BATCHES 40
#define BATCH_BYTES (1u << 20)
#define EMB_BYTES (8u << 20)

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    unsigned char *host[2];
    void *dev[2];
    cudaEvent_t used[2];
    for (int i = 0; i < 2; i++) {
        CHECK(cudaMallocHost((void **)&host[i], BATCH_BYTES));
        CHECK(cudaMalloc(&dev[i], BATCH_BYTES));
        CHECK(cudaEventCreateWithFlags(&used[i], cudaEventDisableTiming));
    }
    void *dev_emb;
    CHECK(cudaMalloc(&dev_emb, EMB_BYTES));
    unsigned char *emb = malloc(EMB_BYTES);
    if (!emb)
        return 1;
    unsigned long written = 0;
    for (unsigned n = 0; n < BATCHES; n++) {
        int b = n % 2;
        CHECK(cudaEventSynchronize(used[b]));
        fp_fill_batch(host[b], BATCH_BYTES, n);
        CHECK(cudaMemcpyAsync(dev[b], host[b], BATCH_BYTES, cudaMemcpyHostToDevice, s)); /* @batch */
        CHECK(cudaEventRecord(used[b], s));
        for (int l = 0; l < 4; l++)
            ex_kernel_launch(&k, s);
        CHECK(cudaMemcpyAsync(emb, dev_emb, EMB_BYTES, cudaMemcpyDeviceToHost, s)); /* @readback */
        CHECK(cudaStreamSynchronize(s));
        fp_host_work_us(500);                                /* write to the index */
        written += emb[n];
    }
    printf("%u batches written (%lu)\n", BATCHES, written);
    for (int i = 0; i < 2; i++) {
        CHECK(cudaFreeHost(host[i]));
        CHECK(cudaFree(dev[i]));
        CHECK(cudaEventDestroy(used[i]));
    }
    free(emb);
    CHECK(cudaFree(dev_emb));
    CHECK(cudaStreamDestroy(s));
    ex_kernel_fini(&k);
    return 0;
}
