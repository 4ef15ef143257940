/* rep_timing.c: a training loop whose copies give the timing rules every
 * chance of a false alarm, and have none of their problems.
 *
 * Truth (what the report must not say): no low-bandwidth and no
 * small-copies finding.
 *  - rep_load_shards: 8 fresh device buffers of 4 MiB, each filled once by a
 *    synchronous upload from a fresh pageable buffer: every copy is the first
 *    into its destination and pays page faults, not a slow link;
 *  - rep_step_upload, STEPS steps: a 2 MiB upload from pinned memory with
 *    cudaMemcpyAsync on a stream, synchronized at the end of the step (host
 *    time of an async call says nothing about the transfer), and every 4th
 *    step a 1 MiB synchronous download of the output into pinned memory (7,
 *    too few for sync-in-loop), all of the same kind and size: on a loaded
 *    machine some are preempted, outliers of a fast site;
 *  - rep_log_scalar: 150 uploads of 16 bytes over the run, async from pinned
 *    memory: many small copies, but their cost is a tiny share of the run.
 * Everything is freed.  Run under CPU load by test_timing.py. */
#include "../sim/xpt_check.h"

#define SHARDS 8
#define SHARD_BYTES (4u << 20)
#define STEPS 30
#define BATCH (2u << 20)
#define OUT (1u << 20)
#define SCALARS 150

__attribute__((noinline)) static void rep_load_shards(void **shards)
{
    for (int i = 0; i < SHARDS; i++) {
        char *host = malloc(SHARD_BYTES);
        CHECK(host != NULL);
        memset(host, i + 1, SHARD_BYTES);
        CHECK_OK(cudaMalloc(&shards[i], SHARD_BYTES));
        CHECK_OK(cudaMemcpy(shards[i], host, SHARD_BYTES, cudaMemcpyHostToDevice));
        free(host);
    }
}

__attribute__((noinline)) static void rep_step_upload(void *dev, const void *host, cudaStream_t s)
{
    CHECK_OK(cudaMemcpyAsync(dev, host, BATCH, cudaMemcpyHostToDevice, s));
}

__attribute__((noinline)) static void rep_step_download(void *host, const void *dev)
{
    CHECK_OK(cudaMemcpy(host, dev, OUT, cudaMemcpyDeviceToHost));
}

__attribute__((noinline)) static void rep_log_scalar(void *dev, const void *host, cudaStream_t s)
{
    CHECK_OK(cudaMemcpyAsync(dev, host, 16, cudaMemcpyHostToDevice, s));
}

int main(void)
{
    void *shards[SHARDS], *batch_dev, *out_dev, *scalar_dev;
    unsigned char *batch, *out, *scalar;
    cudaStream_t s;
    CHECK_OK(cudaStreamCreate(&s));
    rep_load_shards(shards);
    CHECK_OK(cudaMalloc(&batch_dev, BATCH));
    CHECK_OK(cudaMalloc(&out_dev, OUT));
    CHECK_OK(cudaMalloc(&scalar_dev, 16 * SCALARS));
    CHECK_OK(cudaMallocHost((void **)&batch, BATCH));
    CHECK_OK(cudaMallocHost((void **)&out, OUT));
    CHECK_OK(cudaMallocHost((void **)&scalar, 16 * SCALARS));
    CHECK_OK(cudaMemset(out_dev, 0, OUT));
    int logged = 0;
    for (int step = 0; step < STEPS; step++) {
        memset(batch, step + 1, BATCH); /* a new batch each step */
        rep_step_upload(batch_dev, batch, s);
        for (; logged < SCALARS * (step + 1) / STEPS; logged++) {
            memcpy(scalar + 16 * logged, &logged, sizeof logged);
            rep_log_scalar((char *)scalar_dev + 16 * logged, scalar + 16 * logged, s);
        }
        CHECK_OK(cudaStreamSynchronize(s));
        if (step % 4 == 3) /* an evaluation of the output every 4th step */
            rep_step_download(out, out_dev);
    }
    CHECK_OK(cudaFreeHost(scalar));
    CHECK_OK(cudaFreeHost(out));
    CHECK_OK(cudaFreeHost(batch));
    CHECK_OK(cudaFree(scalar_dev));
    CHECK_OK(cudaFree(out_dev));
    CHECK_OK(cudaFree(batch_dev));
    for (int i = 0; i < SHARDS; i++)
        CHECK_OK(cudaFree(shards[i]));
    CHECK_OK(cudaStreamDestroy(s));
    return 0;
}
