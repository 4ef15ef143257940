/* fp_log_every_n.c: a long training run (600 steps) that logs the way a
 * careful engineer does: the loss is read back every 10 steps for the progress
 * line (a 4-byte cudaMemcpyAsync into pinned memory and a stream sync: what
 * `if step % 10 == 0: print(loss.item())` does) and the per-class accuracy
 * vector (4 KiB) every 50 steps with cudaMemcpy for the metrics file. The
 * weights are uploaded once, the batches come from two pinned buffers sent
 * asynchronously, and everything is freed at the end.
 *
 * ENV: XFERPROF_SIM_KERNEL_TIME=100us
 * TRUTH: none
 * (the loss read waits for the GPU once per 10 steps and the metrics read once
 * per 50: logging every N steps is the fix sync-in-loop recommends, not a
 * problem; 60 and 12 small reads cost microseconds of a run of ~0.6 s, so
 * small-copies has nothing worth packing; the weights upload is once) */
#include "fp_common.h"

#include <stdlib.h>

#define STEPS 600
#define LOG_EVERY 10
#define METRICS_EVERY 50
#define CLASSES 1024
#define BATCH_BYTES (1u << 20)
#define WEIGHT_BYTES (16u << 20)

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    unsigned char *w = malloc(WEIGHT_BYTES);
    fp_fill_batch(w, WEIGHT_BYTES, 99);
    void *dev_w;
    CHECK(cudaMalloc(&dev_w, WEIGHT_BYTES));
    CHECK(cudaMemcpy(dev_w, w, WEIGHT_BYTES, cudaMemcpyHostToDevice)); /* @weights */
    free(w);
    unsigned char *batch[2];
    void *dev_batch[2];
    cudaEvent_t sent[2];
    for (int i = 0; i < 2; i++) {
        CHECK(cudaMallocHost((void **)&batch[i], BATCH_BYTES));
        CHECK(cudaMalloc(&dev_batch[i], BATCH_BYTES));
        CHECK(cudaEventCreateWithFlags(&sent[i], cudaEventDisableTiming));
    }
    float *loss, *dev_loss, *dev_acc;
    CHECK(cudaMallocHost((void **)&loss, sizeof *loss));
    CHECK(cudaMalloc((void **)&dev_loss, sizeof *dev_loss));
    CHECK(cudaMalloc((void **)&dev_acc, CLASSES * sizeof *dev_acc));
    float acc[CLASSES];
    FILE *metrics = tmpfile();
    if (metrics == NULL) {
        perror("tmpfile");
        return 1;
    }
    for (unsigned step = 0; step < STEPS; step++) {
        int b = step % 2;
        if (step >= 2)
            CHECK(cudaEventSynchronize(sent[b])); /* the buffer's last upload is done */
        fp_fill_batch(batch[b], BATCH_BYTES, step);
        CHECK(cudaMemcpyAsync(dev_batch[b], batch[b], BATCH_BYTES, cudaMemcpyHostToDevice, s)); /* @batch */
        CHECK(cudaEventRecord(sent[b], s));
        ex_kernel_launch(&k, s); /* forward */
        ex_kernel_launch(&k, s); /* backward and update */
        /* The step's loss and running accuracy, as the kernels would leave them */
        CHECK(cudaMemsetAsync(dev_loss, step & 0x3f, sizeof *dev_loss, s));
        CHECK(cudaMemsetAsync(dev_acc, step & 0x7f, CLASSES * sizeof *dev_acc, s));
        if (step % LOG_EVERY == 0) {
            CHECK(cudaMemcpyAsync(loss, dev_loss, sizeof *loss, cudaMemcpyDeviceToHost, s)); /* @loss_log */
            CHECK(cudaStreamSynchronize(s));
            if (step % 100 == 0)
                printf("step %u loss %g\n", step, *loss);
        }
        if (step % METRICS_EVERY == METRICS_EVERY - 1) {
            CHECK(cudaMemcpy(acc, dev_acc, sizeof acc, cudaMemcpyDeviceToHost)); /* @metrics */
            fwrite(acc, sizeof acc[0], CLASSES, metrics);
        }
        fp_host_work_us(400); /* the data pipeline's share of the step */
    }
    CHECK(cudaStreamSynchronize(s));
    printf("metrics bytes %ld\n", ftell(metrics));
    fclose(metrics);
    for (int i = 0; i < 2; i++) {
        CHECK(cudaFreeHost(batch[i]));
        CHECK(cudaFree(dev_batch[i]));
        CHECK(cudaEventDestroy(sent[i]));
    }
    CHECK(cudaFreeHost(loss));
    CHECK(cudaFree(dev_loss));
    CHECK(cudaFree(dev_acc));
    CHECK(cudaFree(dev_w));
    CHECK(cudaStreamDestroy(s));
    ex_kernel_fini(&k);
    return 0;
}
