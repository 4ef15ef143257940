/* fp_chunked_upload.c: a collate function that sends a batch to the device
 * one sample at a time. Each step builds 512 samples of 4 KiB in a pinned
 * staging area and issues one cudaMemcpyAsync per sample into the device
 * batch (the samples are contiguous: one 2 MiB copy would do), then runs the
 * step's kernels. Everything is pinned and asynchronous, the loss is read
 * every 30 steps; only the number of copies is wrong: 512 calls of a few
 * microseconds each per step, against one.
 *
 * ENV: XFERPROF_SIM_KERNEL_TIME=300us
 * TRUTH: small-copies @ sample */
#include "fp_common.h"

#define STEPS 60
#define SAMPLES 512
#define SAMPLE_BYTES 4096u

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    unsigned char *host[2];
    unsigned char *dev[2];
    cudaEvent_t used[2];
    for (int i = 0; i < 2; i++) {
        CHECK(cudaMallocHost((void **)&host[i], SAMPLES * SAMPLE_BYTES));
        CHECK(cudaMalloc((void **)&dev[i], SAMPLES * SAMPLE_BYTES));
        CHECK(cudaEventCreateWithFlags(&used[i], cudaEventDisableTiming));
    }
    float *dev_loss, *loss;
    CHECK(cudaMalloc((void **)&dev_loss, sizeof *dev_loss));
    CHECK(cudaMallocHost((void **)&loss, sizeof *loss));
    for (unsigned step = 0; step < STEPS; step++) {
        int b = step % 2;
        CHECK(cudaEventSynchronize(used[b]));
        fp_fill_batch(host[b], SAMPLES * SAMPLE_BYTES, step);
        for (unsigned i = 0; i < SAMPLES; i++) {
            size_t off = (size_t)i * SAMPLE_BYTES;
            CHECK(cudaMemcpyAsync(dev[b] + off, host[b] + off, SAMPLE_BYTES, cudaMemcpyHostToDevice, s)); /* @sample */
        }
        CHECK(cudaEventRecord(used[b], s));
        for (int l = 0; l < 3; l++)
            ex_kernel_launch(&k, s);
        if (step % 30 == 29) {
            CHECK(cudaMemcpyAsync(loss, dev_loss, sizeof *loss, cudaMemcpyDeviceToHost, s)); /* @loss */
            CHECK(cudaStreamSynchronize(s));
            printf("step %u loss %.3f\n", step + 1, (double)*loss);
        }
    }
    CHECK(cudaStreamSynchronize(s));
    for (int i = 0; i < 2; i++) {
        CHECK(cudaFreeHost(host[i]));
        CHECK(cudaFree(dev[i]));
        CHECK(cudaEventDestroy(used[i]));
    }
    CHECK(cudaFree(dev_loss));
    CHECK(cudaFreeHost(loss));
    CHECK(cudaStreamDestroy(s));
    ex_kernel_fini(&k);
    return 0;
}
