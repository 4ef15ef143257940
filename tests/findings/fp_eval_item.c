/* fp_eval_item.c: training done right, and an evaluation pass every 10 steps
 * that is not. Each eval batch's accuracy is read with cudaMemcpy of one int
 * (PyTorch's `(pred == y).sum().item()`), so the host waits for every eval
 * batch: 30 batches x 5 passes. At the end of each pass the predictions are
 * downloaded once (2 MiB) to write a confusion matrix: one copy per pass, which
 * is fine.
 *
 * ENV: XFERPROF_SIM_KERNEL_TIME=100us
 * TRUTH: sync-in-loop @ acc_item
 * (small-copies is not the problem here, the wait is: one finding) */
#include "fp_common.h"

#define STEPS 50
#define EVAL_EVERY 10
#define EVAL_BATCHES 30
#define BATCH_BYTES (1u << 20)
#define PRED_BYTES (2u << 20)

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    unsigned char *batch[2];
    void *dev_batch[2];
    cudaEvent_t done[2];
    for (int i = 0; i < 2; i++) {
        CHECK(cudaMallocHost((void **)&batch[i], BATCH_BYTES));
        CHECK(cudaMalloc(&dev_batch[i], BATCH_BYTES));
        CHECK(cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming));
    }
    int *dev_correct;
    void *dev_pred;
    CHECK(cudaMalloc((void **)&dev_correct, sizeof(int)));
    CHECK(cudaMalloc(&dev_pred, PRED_BYTES));
    CHECK(cudaMemset(dev_pred, 3, PRED_BYTES));
    unsigned char *pred;
    CHECK(cudaMallocHost((void **)&pred, PRED_BYTES));
    unsigned n = 0;
    for (unsigned step = 0; step < STEPS; step++) {
        int b = n % 2;
        if (n >= 2)
            CHECK(cudaEventSynchronize(done[b]));
        fp_fill_batch(batch[b], BATCH_BYTES, n++);
        CHECK(cudaMemcpyAsync(dev_batch[b], batch[b], BATCH_BYTES, cudaMemcpyHostToDevice, s)); /* @train_batch */
        ex_kernel_launch(&k, s);
        ex_kernel_launch(&k, s);
        CHECK(cudaEventRecord(done[b], s));
        if (step % EVAL_EVERY == EVAL_EVERY - 1) {
            long correct = 0;
            for (int e = 0; e < EVAL_BATCHES; e++) {
                b = n % 2;
                CHECK(cudaEventSynchronize(done[b]));
                fp_fill_batch(batch[b], BATCH_BYTES, 100000 + step * EVAL_BATCHES + e); /* a new validation shard each pass */
                CHECK(cudaMemcpyAsync(dev_batch[b], batch[b], BATCH_BYTES, cudaMemcpyHostToDevice, s)); /* @eval_batch */
                ex_kernel_launch(&k, s);
                CHECK(cudaMemsetAsync(dev_correct, e, sizeof(int), s)); /* the batch's count */
                CHECK(cudaEventRecord(done[b], s));
                n++;
                int c;
                CHECK(cudaMemcpy(&c, dev_correct, sizeof c, cudaMemcpyDeviceToHost)); /* @acc_item */
                correct += c;
            }
            CHECK(cudaMemcpy(pred, dev_pred, PRED_BYTES, cudaMemcpyDeviceToHost)); /* @preds */
            printf("eval after step %u: %ld correct, first class %d\n", step + 1, correct, pred[0]);
        }
    }
    CHECK(cudaStreamSynchronize(s));
    for (int i = 0; i < 2; i++) {
        CHECK(cudaFreeHost(batch[i]));
        CHECK(cudaFree(dev_batch[i]));
        CHECK(cudaEventDestroy(done[i]));
    }
    CHECK(cudaFreeHost(pred));
    CHECK(cudaFree(dev_correct));
    CHECK(cudaFree(dev_pred));
    CHECK(cudaStreamDestroy(s));
    ex_kernel_fini(&k);
    return 0;
}
