/* fp_weights_every_step.c: a model whose frozen embedding weights are copied
 * to the device at the start of every step (the copy was meant to happen once
 * and ended up inside the loop), into the same device buffer, with the step's
 * kernels in between. The weights never change on the host; the batch does.
 * Both copies are async from pinned memory, so nothing blocks.
 *
 * TRUTH: redundant-upload @ weights
 * (the batch upload is not redundant: its bytes differ every step) */
#include "fp_common.h"

#define STEPS 40
#define WEIGHT_BYTES (4u << 20)
#define BATCH_BYTES (1u << 20)

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    void *dev_w, *dev_batch;
    unsigned char *w, *batch;
    CHECK(cudaMalloc(&dev_w, WEIGHT_BYTES));
    CHECK(cudaMalloc(&dev_batch, BATCH_BYTES));
    CHECK(cudaMallocHost((void **)&w, WEIGHT_BYTES));
    CHECK(cudaMallocHost((void **)&batch, BATCH_BYTES));
    fp_fill_batch(w, WEIGHT_BYTES, 12345); /* loaded from a checkpoint once */
    for (unsigned step = 0; step < STEPS; step++) {
        CHECK(cudaMemcpyAsync(dev_w, w, WEIGHT_BYTES, cudaMemcpyHostToDevice, s)); /* @weights */
        fp_fill_batch(batch, BATCH_BYTES, step);
        CHECK(cudaMemcpyAsync(dev_batch, batch, BATCH_BYTES, cudaMemcpyHostToDevice, s)); /* @batch */
        ex_kernel_launch(&k, s);
        ex_kernel_launch(&k, s);
        CHECK(cudaStreamSynchronize(s)); /* the batch buffer is refilled next step */
        fp_host_work_us(500);
    }
    CHECK(cudaFreeHost(batch));
    CHECK(cudaFreeHost(w));
    CHECK(cudaFree(dev_batch));
    CHECK(cudaFree(dev_w));
    CHECK(cudaStreamDestroy(s));
    ex_kernel_fini(&k);
    return 0;
}
