/* fp_checkpoint.c: a training loop that checkpoints to the host every 50
 * steps: each of the model's 6 weight tensors is downloaded with cudaMemcpy
 * into a host buffer and written to a file. The download has to wait (the file
 * needs the bytes), happens 4 times in 200 steps of about 1.5 ms, and is a
 * small part of the run. The batches are pinned and asynchronous.
 *
 * ENV: XFERPROF_SIM_KERNEL_TIME=200us
 * TRUTH: none
 * (24 blocking copies from one site, but not per step: not sync-in-loop;
 * all of one size and kind: not low-bandwidth) */
#include "fp_common.h"

#include <stdlib.h>

#define STEPS 200
#define CKPT_EVERY 50
#define TENSORS 6
#define TENSOR_BYTES (1u << 20)
#define BATCH_BYTES (512u << 10)

static EX_SITE void save_checkpoint(void *const *dev_w, unsigned char *host, FILE *f)
{
    for (int i = 0; i < TENSORS; i++) {
        CHECK(cudaMemcpy(host, dev_w[i], TENSOR_BYTES, cudaMemcpyDeviceToHost)); /* @ckpt */
        if (fwrite(host, 1, TENSOR_BYTES, f) != TENSOR_BYTES) {
            perror("checkpoint");
            exit(1);
        }
    }
    fflush(f);
}

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    void *dev_w[TENSORS];
    for (int i = 0; i < TENSORS; i++) {
        CHECK(cudaMalloc(&dev_w[i], TENSOR_BYTES));
        CHECK(cudaMemset(dev_w[i], i, TENSOR_BYTES));
    }
    unsigned char *host = malloc(TENSOR_BYTES);
    FILE *f = tmpfile();
    if (f == NULL) {
        perror("tmpfile");
        return 1;
    }
    unsigned char *batch[2];
    void *dev_batch[2];
    cudaEvent_t done[2];
    for (int i = 0; i < 2; i++) {
        CHECK(cudaMallocHost((void **)&batch[i], BATCH_BYTES));
        CHECK(cudaMalloc(&dev_batch[i], BATCH_BYTES));
        CHECK(cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming));
    }
    for (unsigned step = 0; step < STEPS; step++) {
        int b = step % 2;
        if (step >= 2)
            CHECK(cudaEventSynchronize(done[b]));
        fp_fill_batch(batch[b], BATCH_BYTES, step);
        CHECK(cudaMemcpyAsync(dev_batch[b], batch[b], BATCH_BYTES, cudaMemcpyHostToDevice, s)); /* @batch */
        ex_kernel_launch(&k, s);
        ex_kernel_launch(&k, s);
        CHECK(cudaEventRecord(done[b], s));
        if (step % CKPT_EVERY == CKPT_EVERY - 1)
            save_checkpoint(dev_w, host, f);
        fp_host_work_us(1000); /* logging, the data pipeline */
    }
    CHECK(cudaStreamSynchronize(s));
    printf("checkpoint bytes %ld\n", ftell(f));
    fclose(f);
    free(host);
    for (int i = 0; i < 2; i++) {
        CHECK(cudaFreeHost(batch[i]));
        CHECK(cudaFree(dev_batch[i]));
        CHECK(cudaEventDestroy(done[i]));
    }
    for (int i = 0; i < TENSORS; i++)
        CHECK(cudaFree(dev_w[i]));
    CHECK(cudaStreamDestroy(s));
    ex_kernel_fini(&k);
    return 0;
}
