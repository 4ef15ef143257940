/* fp_mallocasync_temps.c: stream-ordered allocation, as CUDA's own samples
 * and JAX/RAPIDS-style code use it. Every step allocates its activations and
 * a workspace with cudaMallocAsync on the compute stream (three buffers whose
 * sizes change with the sequence length of the batch) and frees them with
 * cudaFreeAsync at the end of the step; the default pool keeps its memory
 * (release threshold raised to "keep everything"), so after the first steps
 * no allocation reaches the device allocator. Batches are uploaded from a
 * pinned double buffer; the loss is read every 40 steps. Everything freed.
 *
 * ENV: XFERPROF_SIM_KERNEL_TIME=150us
 * TRUTH: none */
#include "fp_common.h"

#define STEPS 120
#define MAX_SEQ 512
#define ROW_BYTES 4096u

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaMemPool_t pool;
    CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
    uint64_t keep = UINT64_MAX;
    CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    unsigned char *host[2];
    void *dev_batch[2];
    cudaEvent_t used[2];
    for (int i = 0; i < 2; i++) {
        CHECK(cudaMallocHost((void **)&host[i], MAX_SEQ * ROW_BYTES));
        CHECK(cudaMalloc(&dev_batch[i], MAX_SEQ * ROW_BYTES));
        CHECK(cudaEventCreateWithFlags(&used[i], cudaEventDisableTiming));
    }
    float *dev_loss, *loss;
    CHECK(cudaMalloc((void **)&dev_loss, sizeof *dev_loss));
    CHECK(cudaMallocHost((void **)&loss, sizeof *loss));
    for (unsigned step = 0; step < STEPS; step++) {
        size_t seq = 128 + (step * 37) % (MAX_SEQ - 128);
        int b = step % 2;
        CHECK(cudaEventSynchronize(used[b]));
        fp_fill_batch(host[b], seq * ROW_BYTES, step);
        CHECK(cudaMemcpyAsync(dev_batch[b], host[b], seq * ROW_BYTES, cudaMemcpyHostToDevice, s)); /* @batch */
        CHECK(cudaEventRecord(used[b], s));
        void *act, *grad, *work;
        CHECK(cudaMallocAsync(&act, seq * ROW_BYTES * 4, s));   /* @act */
        CHECK(cudaMallocAsync(&grad, seq * ROW_BYTES * 4, s));  /* @grad */
        CHECK(cudaMallocAsync(&work, 8u << 20, s));             /* @work */
        for (int l = 0; l < 4; l++)
            ex_kernel_launch(&k, s);
        CHECK(cudaFreeAsync(work, s));
        CHECK(cudaFreeAsync(grad, s));
        CHECK(cudaFreeAsync(act, s));
        if (step % 40 == 39) {
            CHECK(cudaMemcpyAsync(loss, dev_loss, sizeof *loss, cudaMemcpyDeviceToHost, s)); /* @loss */
            CHECK(cudaStreamSynchronize(s));
            printf("step %u loss %.3f\n", step + 1, (double)*loss);
        }
    }
    CHECK(cudaStreamSynchronize(s));
    for (int i = 0; i < 2; i++) {
        CHECK(cudaFreeHost(host[i]));
        CHECK(cudaFree(dev_batch[i]));
        CHECK(cudaEventDestroy(used[i]));
    }
    CHECK(cudaFree(dev_loss));
    CHECK(cudaFreeHost(loss));
    CHECK(cudaStreamDestroy(s));
    ex_kernel_fini(&k);
    return 0;
}
