/* redundant_upload.c: the pitfall is uploading the same, unchanged weights
 * every step, from one call site, into the same device buffer with no kernel
 * launched in between: every upload after the first moves bytes the device
 * already holds.
 *
 * xferprof report should say:
 *   redundant-upload (warning) at upload_weights: STEPS - 2 copies (the first
 *     upload is needed; the second is not counted: 1 MiB is fingerprinted by
 *     samples, and a repeat is confirmed by a full hash of both uploads, which
 *     the first one, not yet suspect, did not get), (STEPS - 2) * WEIGHT_BYTES
 *     bytes (6 x 1 MiB = 6291456).
 *   nothing at upload_batch: each step's batch is different.
 * The copies are asynchronous from pinned memory (no blocking finding) and
 * fewer than 10 per site. */
#include "example_util.h"

#include <string.h>

#define STEPS 8
#define WEIGHT_BYTES (1u << 20)
#define BATCH_BYTES (256u << 10)

static EX_SITE void upload_weights(void *dev, const void *host, cudaStream_t s)
{
    CHECK(cudaMemcpyAsync(dev, host, WEIGHT_BYTES, cudaMemcpyHostToDevice, s));
}

static EX_SITE void upload_batch(void *dev, const void *host, cudaStream_t s)
{
    CHECK(cudaMemcpyAsync(dev, host, BATCH_BYTES, cudaMemcpyHostToDevice, s));
}

int main(void)
{
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    void *dev_weights, *dev_batch;
    CHECK(cudaMalloc(&dev_weights, WEIGHT_BYTES));
    CHECK(cudaMalloc(&dev_batch, BATCH_BYTES));
    unsigned char *weights, *batch;
    CHECK(cudaMallocHost((void **)&weights, WEIGHT_BYTES));
    CHECK(cudaMallocHost((void **)&batch, BATCH_BYTES));
    memset(weights, 0x5a, WEIGHT_BYTES); /* loaded once, never changed */

    for (int step = 0; step < STEPS; step++) {
        upload_weights(dev_weights, weights, s);
        memset(batch, step + 1, BATCH_BYTES);
        upload_batch(dev_batch, batch, s);
        CHECK(cudaStreamSynchronize(s));
    }

    CHECK(cudaFreeHost(batch));
    CHECK(cudaFreeHost(weights));
    CHECK(cudaFree(dev_batch));
    CHECK(cudaFree(dev_weights));
    CHECK(cudaStreamDestroy(s));
    ex_expect("redundant-upload", "upload_weights", STEPS - 2,
              (long long)(STEPS - 2) * WEIGHT_BYTES, NULL);
    return 0;
}
