/* fp_table_on_change.c: a model moved to the GPU once, and a lookup table
 * sent again only when it changes. The model's 8 weight tensors are uploaded
 * with cudaMemcpy before the loop. The loss's per-class weights (a 256 KiB
 * table, rebalanced on the host from the running label counts) live in pinned
 * memory and are re-uploaded with cudaMemcpyAsync only when the host
 * recomputes them, every 50 steps, each time with new values; the kernels
 * read the device copy in between. Batches come from two pinned buffers. The
 * loss is read every 25 steps.
 *
 * ENV: XFERPROF_SIM_KERNEL_TIME=100us
 * TRUTH: none
 * (the weights cross once; the table crosses 8 times in 400 steps, each
 * time with bytes the device did not have: nothing is redundant; the loss
 * read once per 25 steps is logging, not a per-step stall) */
#include "fp_common.h"

#include <stdlib.h>

#define STEPS 400
#define REBALANCE_EVERY 50
#define LOG_EVERY 25
#define TENSORS 8
#define TENSOR_BYTES (2u << 20)
#define CLASSES 65536
#define BATCH_BYTES (1u << 20)

/* New class weights from the label counts seen so far: every entry moves */
static void rebalance(float *weights, const unsigned *counts, unsigned seen)
{
    for (unsigned c = 0; c < CLASSES; c++)
        weights[c] = (float)seen / ((float)CLASSES * (float)(counts[c] + 1));
}

static EX_SITE void upload_model(void *const *dev_w)
{
    unsigned char *host = malloc(TENSOR_BYTES);
    for (int i = 0; i < TENSORS; i++) {
        fp_fill_batch(host, TENSOR_BYTES, 5000 + i); /* read from the checkpoint file */
        CHECK(cudaMemcpy(dev_w[i], host, TENSOR_BYTES, cudaMemcpyHostToDevice)); /* @model */
    }
    free(host);
}

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    void *dev_w[TENSORS];
    for (int i = 0; i < TENSORS; i++)
        CHECK(cudaMalloc(&dev_w[i], TENSOR_BYTES));
    upload_model(dev_w);

    float *class_w, *dev_class_w;
    CHECK(cudaMallocHost((void **)&class_w, CLASSES * sizeof *class_w));
    CHECK(cudaMalloc((void **)&dev_class_w, CLASSES * sizeof *dev_class_w));
    unsigned *counts = calloc(CLASSES, sizeof *counts);
    cudaEvent_t table_sent;
    CHECK(cudaEventCreateWithFlags(&table_sent, cudaEventDisableTiming));
    int table_dirty = 1;
    rebalance(class_w, counts, 1);

    unsigned char *batch[2];
    void *dev_batch[2];
    cudaEvent_t sent[2];
    for (int i = 0; i < 2; i++) {
        CHECK(cudaMallocHost((void **)&batch[i], BATCH_BYTES));
        CHECK(cudaMalloc(&dev_batch[i], BATCH_BYTES));
        CHECK(cudaEventCreateWithFlags(&sent[i], cudaEventDisableTiming));
    }
    float *loss, *dev_loss;
    CHECK(cudaMallocHost((void **)&loss, sizeof *loss));
    CHECK(cudaMalloc((void **)&dev_loss, sizeof *dev_loss));
    unsigned seen = 0;
    for (unsigned step = 0; step < STEPS; step++) {
        int b = step % 2;
        if (step >= 2)
            CHECK(cudaEventSynchronize(sent[b]));
        fp_fill_batch(batch[b], BATCH_BYTES, step);
        /* The batch's labels, counted for the next rebalancing */
        const uint32_t *labels = (const uint32_t *)batch[b];
        for (unsigned i = 0; i < 256; i++)
            counts[labels[i] % CLASSES]++;
        seen += 256;
        CHECK(cudaMemcpyAsync(dev_batch[b], batch[b], BATCH_BYTES, cudaMemcpyHostToDevice, s)); /* @batch */
        CHECK(cudaEventRecord(sent[b], s));
        if (table_dirty) {
            CHECK(cudaMemcpyAsync(dev_class_w, class_w, CLASSES * sizeof *class_w,
                                  cudaMemcpyHostToDevice, s)); /* @table */
            CHECK(cudaEventRecord(table_sent, s));
            table_dirty = 0;
        }
        ex_kernel_launch(&k, s); /* forward, the weighted loss reads the table */
        ex_kernel_launch(&k, s); /* backward and update */
        CHECK(cudaMemsetAsync(dev_loss, step & 0x3f, sizeof *dev_loss, s));
        if (step % LOG_EVERY == LOG_EVERY - 1) {
            CHECK(cudaMemcpyAsync(loss, dev_loss, sizeof *loss, cudaMemcpyDeviceToHost, s)); /* @loss_log */
            CHECK(cudaStreamSynchronize(s));
            if (step % 100 == 99)
                printf("step %u loss %g\n", step + 1, *loss);
        }
        if (step % REBALANCE_EVERY == REBALANCE_EVERY - 1) {
            CHECK(cudaEventSynchronize(table_sent)); /* the pinned table is not being read */
            rebalance(class_w, counts, seen);
            table_dirty = 1;
        }
        fp_host_work_us(400);
    }
    CHECK(cudaStreamSynchronize(s));
    free(counts);
    for (int i = 0; i < 2; i++) {
        CHECK(cudaFreeHost(batch[i]));
        CHECK(cudaFree(dev_batch[i]));
        CHECK(cudaEventDestroy(sent[i]));
    }
    CHECK(cudaEventDestroy(table_sent));
    CHECK(cudaFreeHost(class_w));
    CHECK(cudaFreeHost(loss));
    CHECK(cudaFree(dev_class_w));
    CHECK(cudaFree(dev_loss));
    for (int i = 0; i < TENSORS; i++)
        CHECK(cudaFree(dev_w[i]));
    CHECK(cudaStreamDestroy(s));
    ex_kernel_fini(&k);
    return 0;
}
