/* clean.c: a training loop that does everything right: pinned host buffers,
 * weights uploaded once, every batch uploaded asynchronously on a stream with
 * a kernel between uploads, results read back asynchronously into pinned
 * memory and synchronized once per step, everything freed at the end.
 *
 * xferprof report should find NOTHING here: no finding of any rule. */
#include "example_util.h"

#include <string.h>

#define STEPS 8
#define WEIGHT_BYTES (1u << 20)
#define BATCH_BYTES (256u << 10)
#define RESULT_BYTES (64u << 10)

static EX_SITE void upload_weights_once(void *dev, const void *host, cudaStream_t s)
{
    CHECK(cudaMemcpyAsync(dev, host, WEIGHT_BYTES, cudaMemcpyHostToDevice, s));
}

static EX_SITE void upload_batch(void *dev, const void *host, cudaStream_t s)
{
    CHECK(cudaMemcpyAsync(dev, host, BATCH_BYTES, cudaMemcpyHostToDevice, s));
}

static EX_SITE void download_results(void *host, const void *dev, cudaStream_t s)
{
    CHECK(cudaMemcpyAsync(host, dev, RESULT_BYTES, cudaMemcpyDeviceToHost, s));
}

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    void *dev_weights, *dev_batch, *dev_results;
    CHECK(cudaMalloc(&dev_weights, WEIGHT_BYTES));
    CHECK(cudaMalloc(&dev_batch, BATCH_BYTES));
    CHECK(cudaMalloc(&dev_results, RESULT_BYTES));
    unsigned char *weights, *batch, *results;
    CHECK(cudaMallocHost((void **)&weights, WEIGHT_BYTES));
    CHECK(cudaMallocHost((void **)&batch, BATCH_BYTES));
    CHECK(cudaMallocHost((void **)&results, RESULT_BYTES));
    memset(weights, 0x5a, WEIGHT_BYTES);
    CHECK(cudaMemsetAsync(dev_results, 0, RESULT_BYTES, s));

    upload_weights_once(dev_weights, weights, s);
    for (int step = 0; step < STEPS; step++) {
        memset(batch, step + 1, BATCH_BYTES);
        upload_batch(dev_batch, batch, s);
        ex_kernel_launch(&k, s);
        download_results(results, dev_results, s);
        CHECK(cudaStreamSynchronize(s)); /* once per step, for the results */
    }

    CHECK(cudaFreeHost(results));
    CHECK(cudaFreeHost(batch));
    CHECK(cudaFreeHost(weights));
    CHECK(cudaFree(dev_results));
    CHECK(cudaFree(dev_batch));
    CHECK(cudaFree(dev_weights));
    CHECK(cudaStreamDestroy(s));
    ex_kernel_fini(&k);
    ex_expect_none();
    return 0;
}
