/* fp_amp_found_inf.c: mixed-precision training as torch.cuda.amp's GradScaler
 * does it. Batches come from a pinned double buffer and are uploaded with
 * cudaMemcpyAsync; forward, backward and the unscale kernel run; then the
 * scaler reads the 4-byte found_inf flag the unscale kernel wrote
 * (cudaMemcpyAsync into pinned memory + cudaStreamSynchronize) to decide
 * whether to apply the optimizer step: a hidden wait on the GPU every step.
 * The loss scale itself is updated on the device. The running loss is read
 * every 50 steps, which is fine. Everything is freed at exit.
 *
 * ENV: XFERPROF_SIM_KERNEL_TIME=200us
 * TRUTH: sync-in-loop @ found_inf */
#include "fp_common.h"

#define STEPS 120
#define BATCH_BYTES (2u << 20)

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    unsigned char *host[2];
    void *dev[2];
    cudaEvent_t used[2];
    for (int i = 0; i < 2; i++) {
        CHECK(cudaHostAlloc((void **)&host[i], BATCH_BYTES, cudaHostAllocDefault));
        CHECK(cudaMalloc(&dev[i], BATCH_BYTES));
        CHECK(cudaEventCreateWithFlags(&used[i], cudaEventDisableTiming));
    }
    int *dev_found_inf, *found_inf;
    float *dev_loss, *loss;
    CHECK(cudaMalloc((void **)&dev_found_inf, sizeof *dev_found_inf));
    CHECK(cudaMalloc((void **)&dev_loss, sizeof *dev_loss));
    CHECK(cudaMallocHost((void **)&found_inf, sizeof *found_inf));
    CHECK(cudaMallocHost((void **)&loss, sizeof *loss));
    unsigned applied = 0;
    for (unsigned step = 0; step < STEPS; step++) {
        int b = step % 2;
        CHECK(cudaEventSynchronize(used[b]));
        fp_fill_batch(host[b], BATCH_BYTES, step);
        fp_host_work_us(150);                               /* collate */
        CHECK(cudaMemcpyAsync(dev[b], host[b], BATCH_BYTES, cudaMemcpyHostToDevice, s)); /* @batch */
        CHECK(cudaEventRecord(used[b], s));
        for (int l = 0; l < 4; l++)
            ex_kernel_launch(&k, s);                        /* forward, backward */
        CHECK(cudaMemsetAsync(dev_found_inf, 0, sizeof *dev_found_inf, s));
        ex_kernel_launch(&k, s);                            /* unscale, sets found_inf */
        CHECK(cudaMemcpyAsync(found_inf, dev_found_inf, sizeof *found_inf, cudaMemcpyDeviceToHost, s)); /* @found_inf */
        CHECK(cudaStreamSynchronize(s));
        if (!*found_inf) {
            ex_kernel_launch(&k, s);                        /* optimizer step */
            applied++;
        }
        ex_kernel_launch(&k, s);                            /* update the scale */
        if (step % 50 == 49) {
            CHECK(cudaMemcpyAsync(loss, dev_loss, sizeof *loss, cudaMemcpyDeviceToHost, s)); /* @loss */
            CHECK(cudaStreamSynchronize(s));
            printf("step %u loss %.3f\n", step + 1, (double)*loss);
        }
    }
    CHECK(cudaStreamSynchronize(s));
    printf("%u steps applied\n", applied);
    for (int i = 0; i < 2; i++) {
        CHECK(cudaFreeHost(host[i]));
        CHECK(cudaFree(dev[i]));
        CHECK(cudaEventDestroy(used[i]));
    }
    CHECK(cudaFree(dev_found_inf));
    CHECK(cudaFree(dev_loss));
    CHECK(cudaFreeHost(found_inf));
    CHECK(cudaFreeHost(loss));
    CHECK(cudaStreamDestroy(s));
    ex_kernel_fini(&k);
    return 0;
}
