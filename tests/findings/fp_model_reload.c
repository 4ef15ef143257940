/* fp_model_reload.c: an offline batch-inference job that processes its input
 * in shards and, through a helper written for one-off use, loads the model
 * again for every shard: the 16 MiB of weights (the same bytes each time,
 * kept in pinned memory after the first read from disk) are copied into a
 * freshly cudaMalloc'ed buffer, used for the shard's 20 batches, and freed.
 * Batches are uploaded from a pinned double buffer; each shard's results
 * (512 KiB) are downloaded once at its end and written out. 12 shards.
 *
 * ENV: XFERPROF_SIM_KERNEL_TIME=200us
 * TRUTH: reupload-fresh @ weights */
#include "fp_common.h"

#include <stdlib.h>

#define SHARDS 12
#define BATCHES 20
#define WEIGHT_BYTES (16u << 20)
#define BATCH_BYTES (1u << 20)
#define RESULT_BYTES (512u << 10)

static unsigned char *host_weights;

/* Loads the model onto the device: the helper every shard calls. */
static EX_SITE void *load_model(cudaStream_t s)
{
    void *w;
    CHECK(cudaMalloc(&w, WEIGHT_BYTES));
    CHECK(cudaMemcpyAsync(w, host_weights, WEIGHT_BYTES, cudaMemcpyHostToDevice, s)); /* @weights */
    return w;
}

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaMallocHost((void **)&host_weights, WEIGHT_BYTES));
    fp_fill_batch(host_weights, WEIGHT_BYTES, 424242);    /* read from disk once */
    unsigned char *host[2], *results;
    void *dev_batch[2], *dev_results;
    cudaEvent_t used[2];
    for (int i = 0; i < 2; i++) {
        CHECK(cudaMallocHost((void **)&host[i], BATCH_BYTES));
        CHECK(cudaMalloc(&dev_batch[i], BATCH_BYTES));
        CHECK(cudaEventCreateWithFlags(&used[i], cudaEventDisableTiming));
    }
    CHECK(cudaMallocHost((void **)&results, RESULT_BYTES));
    CHECK(cudaMalloc(&dev_results, RESULT_BYTES));
    unsigned n = 0;
    unsigned long checksum = 0;
    for (unsigned shard = 0; shard < SHARDS; shard++) {
        void *w = load_model(s);
        for (unsigned i = 0; i < BATCHES; i++, n++) {
            int b = n % 2;
            CHECK(cudaEventSynchronize(used[b]));
            fp_fill_batch(host[b], BATCH_BYTES, n);
            CHECK(cudaMemcpyAsync(dev_batch[b], host[b], BATCH_BYTES, cudaMemcpyHostToDevice, s)); /* @batch */
            CHECK(cudaEventRecord(used[b], s));
            ex_kernel_launch(&k, s);
            ex_kernel_launch(&k, s);
        }
        CHECK(cudaMemcpyAsync(results, dev_results, RESULT_BYTES, cudaMemcpyDeviceToHost, s)); /* @results */
        CHECK(cudaStreamSynchronize(s));
        checksum += results[shard];
        CHECK(cudaFree(w));
    }
    printf("%u batches, checksum %lu\n", n, checksum);
    for (int i = 0; i < 2; i++) {
        CHECK(cudaFreeHost(host[i]));
        CHECK(cudaFree(dev_batch[i]));
        CHECK(cudaEventDestroy(used[i]));
    }
    CHECK(cudaFreeHost(results));
    CHECK(cudaFree(dev_results));
    CHECK(cudaFreeHost(host_weights));
    CHECK(cudaStreamDestroy(s));
    ex_kernel_fini(&k);
    return 0;
}
