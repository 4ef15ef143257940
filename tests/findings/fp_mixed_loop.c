/* fp_mixed_loop.c: a first-draft training loop with three problems at once,
 * as they often come together: batches built in malloc'd memory and sent with
 * cudaMemcpyAsync (staged: the "async" upload blocks), the loss read with
 * cudaMemcpy every step to print it, and the step's loss buffer kept in a list
 * for a plot at the end (device memory grows every step). The model's weights
 * are uploaded once, correctly, and freed at the end.
 *
 * ENV: XFERPROF_SIM_KERNEL_TIME=100us
 * TRUTH: async-pageable @ batch
 * TRUTH: sync-in-loop @ loss_read
 * TRUTH: leak(growing) @ loss_alloc
 * (the weights upload and the weights allocation are fine) */
#include "fp_common.h"

#include <stdlib.h>

#define STEPS 80
#define BATCH_BYTES (2u << 20)
#define WEIGHT_BYTES (8u << 20)
#define LOSS_BYTES (16u << 10)

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    unsigned char *w = malloc(WEIGHT_BYTES);
    fp_fill_batch(w, WEIGHT_BYTES, 4242);
    void *dev_w, *dev_batch;
    CHECK(cudaMalloc(&dev_w, WEIGHT_BYTES)); /* @w_alloc */
    CHECK(cudaMemcpy(dev_w, w, WEIGHT_BYTES, cudaMemcpyHostToDevice)); /* @w_upload */
    CHECK(cudaMalloc(&dev_batch, BATCH_BYTES));
    unsigned char *batch = malloc(BATCH_BYTES);
    void *losses[STEPS];
    for (unsigned step = 0; step < STEPS; step++) {
        fp_fill_batch(batch, BATCH_BYTES, step);
        CHECK(cudaMemcpyAsync(dev_batch, batch, BATCH_BYTES, cudaMemcpyHostToDevice, s)); /* @batch */
        ex_kernel_launch(&k, s);
        CHECK(cudaMalloc(&losses[step], LOSS_BYTES)); /* @loss_alloc */
        CHECK(cudaMemsetAsync(losses[step], step & 0x3f, LOSS_BYTES, s));
        float loss;
        CHECK(cudaMemcpy(&loss, losses[step], sizeof loss, cudaMemcpyDeviceToHost)); /* @loss_read */
        if (step % 20 == 19)
            printf("step %u loss %g\n", step + 1, loss);
        fp_host_work_us(1500);
    }
    free(batch);
    free(w);
    CHECK(cudaFree(dev_batch));
    CHECK(cudaFree(dev_w));
    CHECK(cudaStreamDestroy(s));
    ex_kernel_fini(&k);
    return 0;
}
