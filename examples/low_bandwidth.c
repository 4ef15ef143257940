/* low_bandwidth.c: the pitfall is a synchronous upload issued while a large
 * transfer (here a prefetch of the next batch on a side stream) is in flight.
 * cudaMemcpy runs on the legacy default stream, which waits for the work of
 * every blocking stream (one made by plain cudaStreamCreate), and a GPU has
 * one copy engine per direction anyway: the small copy waits for the big one
 * and the caller, blocked in cudaMemcpy, sees a fraction of the link's
 * bandwidth.  The same copies made while nothing else is queued run at full
 * speed.  (Fix: a cudaStreamNonBlocking side stream does not order the
 * legacy stream, but shares the engine; better, make the upload async in
 * stream order, or issue it before the prefetch.)
 *
 * xferprof report should say:
 *   low-bandwidth (warning) at upload_params_contended: CONTENDED copies,
 *     CONTENDED * PARAM_BYTES bytes (4 x 1 MiB = 4194304), each below a
 *     quarter of the reference bandwidth of H2D pinned copies (which the
 *     uncontended upload_params copies set).
 *   nothing at upload_params or prefetch_next_batch (asynchronous).
 * Each site makes fewer than 10 blocking copies and every upload differs. */
#include "example_util.h"

#include <string.h>

#define FAST 8
#define CONTENDED 4
#define PARAM_BYTES (1u << 20)
#define PREFETCH_BYTES (16u << 20)

static EX_SITE void upload_params(void *dev, const void *host)
{
    CHECK(cudaMemcpy(dev, host, PARAM_BYTES, cudaMemcpyHostToDevice));
}

static EX_SITE void upload_params_contended(void *dev, const void *host)
{
    CHECK(cudaMemcpy(dev, host, PARAM_BYTES, cudaMemcpyHostToDevice));
}

static EX_SITE void prefetch_next_batch(void *dev, const void *host, cudaStream_t side)
{
    CHECK(cudaMemcpyAsync(dev, host, PREFETCH_BYTES, cudaMemcpyHostToDevice, side));
}

int main(void)
{
    /* A blocking stream (the default flags), as most programs create: the
     * legacy stream's cudaMemcpy waits for its queued work. */
    cudaStream_t side;
    CHECK(cudaStreamCreate(&side));
    void *dev_params, *dev_batch;
    CHECK(cudaMalloc(&dev_params, PARAM_BYTES));
    CHECK(cudaMalloc(&dev_batch, PREFETCH_BYTES));
    unsigned char *params, *batch;
    CHECK(cudaMallocHost((void **)&params, PARAM_BYTES));
    CHECK(cudaMallocHost((void **)&batch, PREFETCH_BYTES));
    memset(batch, 0, PREFETCH_BYTES);
    /* Zeroed buffers, as a program starts them: this also keeps first-touch
     * page faults out of the first upload's time. */
    CHECK(cudaMemset(dev_params, 0, PARAM_BYTES));
    CHECK(cudaMemset(dev_batch, 0, PREFETCH_BYTES));
    CHECK(cudaDeviceSynchronize());

    int version = 0;
    for (int i = 0; i < FAST; i++) {
        memset(params, ++version, PARAM_BYTES); /* new parameters each time */
        upload_params(dev_params, params);
    }
    for (int i = 0; i < CONTENDED; i++) {
        batch[0] = (unsigned char)(i + 1); /* a different batch each time */
        prefetch_next_batch(dev_batch, batch, side);
        memset(params, ++version, PARAM_BYTES);
        upload_params_contended(dev_params, params);
        CHECK(cudaStreamSynchronize(side));
    }

    CHECK(cudaFreeHost(batch));
    CHECK(cudaFreeHost(params));
    CHECK(cudaFree(dev_batch));
    CHECK(cudaFree(dev_params));
    CHECK(cudaStreamDestroy(side));
    ex_expect("low-bandwidth", "upload_params_contended", CONTENDED,
              (long long)CONTENDED * PARAM_BYTES, NULL);
    return 0;
}
