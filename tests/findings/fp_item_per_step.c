/* fp_item_per_step.c: the loss read back every step, as PyTorch's
 * `loss.item()` does it: cudaMemcpyAsync of 4 bytes into a host variable
 * followed at once by cudaStreamSynchronize of the same stream. The host waits
 * every step for all the step's kernels. The batch is uploaded right (pinned,
 * async), the loss is printed every 50 steps.
 *
 * ENV: XFERPROF_SIM_KERNEL_TIME=200us
 * TRUTH: sync-in-loop @ item
 * (the fix is to keep the loss on the device and read it every N steps;
 * async-pageable ("pin it") and small-copies are the wrong findings here) */
#include "fp_common.h"

#define STEPS 200
#define BATCH_BYTES (1u << 20)

static EX_SITE float loss_item(const float *dev_loss, cudaStream_t s)
{
    float v;
    CHECK(cudaMemcpyAsync(&v, dev_loss, sizeof v, cudaMemcpyDeviceToHost, s)); /* @item */
    CHECK(cudaStreamSynchronize(s));
    return v;
}

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    void *dev_batch;
    float *dev_loss;
    unsigned char *batch;
    CHECK(cudaMalloc(&dev_batch, BATCH_BYTES));
    CHECK(cudaMalloc((void **)&dev_loss, sizeof(float)));
    CHECK(cudaMemset(dev_loss, 0, sizeof(float)));
    CHECK(cudaMallocHost((void **)&batch, BATCH_BYTES));
    double running = 0;
    for (unsigned step = 0; step < STEPS; step++) {
        fp_fill_batch(batch, BATCH_BYTES, step);
        CHECK(cudaMemcpyAsync(dev_batch, batch, BATCH_BYTES, cudaMemcpyHostToDevice, s)); /* @upload */
        ex_kernel_launch(&k, s); /* forward */
        ex_kernel_launch(&k, s); /* backward */
        ex_kernel_launch(&k, s); /* optimizer */
        running += loss_item(dev_loss, s);
        if (step % 50 == 49)
            printf("step %u loss %.3f\n", step + 1, running / 50);
    }
    CHECK(cudaFreeHost(batch));
    CHECK(cudaFree(dev_loss));
    CHECK(cudaFree(dev_batch));
    CHECK(cudaStreamDestroy(s));
    ex_kernel_fini(&k);
    return 0;
}
