/* fp_ema_d2d.c: an exponential moving average of the weights kept on the
 * device, refreshed every step by device-to-device cudaMemcpy of each of the
 * model's four weight tensors into the shadow copy (what a simple EMA or
 * "swap weights for evaluation" does). A device-to-device cudaMemcpy does not
 * synchronize the host (CUDA's API synchronization behavior), so the loop does
 * not wait on it. Batches come from pinned memory, asynchronously.
 *
 * ENV: XFERPROF_SIM_KERNEL_TIME=100us
 * TRUTH: none
 * (no sync-in-loop, no low-bandwidth: the D2D copies hold nobody) */
#include "fp_common.h"

#define STEPS 50
#define TENSORS 4
#define TENSOR_BYTES (4u << 20)
#define BATCH_BYTES (1u << 20)

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    void *w[TENSORS], *ema[TENSORS], *dev_batch;
    for (int i = 0; i < TENSORS; i++) {
        CHECK(cudaMalloc(&w[i], TENSOR_BYTES));
        CHECK(cudaMalloc(&ema[i], TENSOR_BYTES));
    }
    CHECK(cudaMalloc(&dev_batch, BATCH_BYTES));
    unsigned char *batch;
    CHECK(cudaMallocHost((void **)&batch, BATCH_BYTES));
    for (unsigned step = 0; step < STEPS; step++) {
        fp_fill_batch(batch, BATCH_BYTES, step);
        CHECK(cudaMemcpyAsync(dev_batch, batch, BATCH_BYTES, cudaMemcpyHostToDevice, s)); /* @batch */
        ex_kernel_launch(&k, s);
        ex_kernel_launch(&k, s);
        for (int i = 0; i < TENSORS; i++)
            CHECK(cudaMemcpy(ema[i], w[i], TENSOR_BYTES, cudaMemcpyDeviceToDevice)); /* @ema */
        CHECK(cudaStreamSynchronize(s)); /* the host batch is refilled next step */
    }
    CHECK(cudaFreeHost(batch));
    CHECK(cudaFree(dev_batch));
    for (int i = 0; i < TENSORS; i++) {
        CHECK(cudaFree(w[i]));
        CHECK(cudaFree(ema[i]));
    }
    CHECK(cudaStreamDestroy(s));
    ex_kernel_fini(&k);
    return 0;
}
