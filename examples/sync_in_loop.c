/* sync_in_loop.c: the pitfall is a blocking device-to-host copy in every step
 * of a training loop: reading the 4-byte loss back (what PyTorch's
 * `loss.item()` does) waits for all queued work, so the host cannot run ahead
 * and queue the next step while the device works.
 *
 * xferprof report should say:
 *   sync-in-loop (warning) at read_loss: STEPS copies, STEPS * 4 bytes
 *     (50 copies, 200 bytes), details direction D2H, median_bytes 4.
 * Nothing else: the batches go up asynchronously from pinned memory, each one
 * different, with a kernel after each; STEPS stays below small-copies' 100. */
#include "example_util.h"

#include <string.h>

#define STEPS 50
#define BATCH_BYTES (256u << 10)

static EX_SITE void upload_batch(void *dev, const void *host, cudaStream_t s)
{
    CHECK(cudaMemcpyAsync(dev, host, BATCH_BYTES, cudaMemcpyHostToDevice, s));
}

static EX_SITE float read_loss(const float *dev_loss)
{
    float loss;
    CHECK(cudaMemcpy(&loss, dev_loss, sizeof loss, cudaMemcpyDeviceToHost));
    return loss;
}

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    void *dev_batch;
    float *dev_loss;
    CHECK(cudaMalloc(&dev_batch, BATCH_BYTES));
    CHECK(cudaMalloc((void **)&dev_loss, sizeof(float)));
    CHECK(cudaMemset(dev_loss, 0, sizeof(float)));
    unsigned char *batch;
    CHECK(cudaMallocHost((void **)&batch, BATCH_BYTES));

    double total = 0;
    for (int step = 0; step < STEPS; step++) {
        memset(batch, step + 1, BATCH_BYTES);
        upload_batch(dev_batch, batch, s);
        ex_kernel_launch(&k, s); /* forward + backward */
        CHECK(cudaStreamSynchronize(s));
        total += read_loss(dev_loss);
    }
    printf("mean loss %g\n", total / STEPS);

    CHECK(cudaFreeHost(batch));
    CHECK(cudaFree(dev_loss));
    CHECK(cudaFree(dev_batch));
    CHECK(cudaStreamDestroy(s));
    ex_kernel_fini(&k);
    ex_expect("sync-in-loop", "read_loss", STEPS, (long long)STEPS * sizeof(float),
              " direction=D2H median_bytes=4");
    return 0;
}
