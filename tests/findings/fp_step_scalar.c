/* fp_step_scalar.c: small copies that do not matter. Each step uploads a large
 * batch (8 MiB, pinned, async) and, beside it, the step's 16-byte schedule
 * values (step number, learning rate), also async from pinned memory; the
 * host spends 2 ms a step on logging and data work. The 150 tiny copies cost a
 * few microseconds each against steps of milliseconds: packing them would
 * save nothing a user could measure.
 *
 * ENV: XFERPROF_SIM_KERNEL_TIME=1ms
 * TRUTH: none
 * (small-copies must stay quiet: its copies are not worth the user's time) */
#include "fp_common.h"

#define STEPS 150
#define BATCH_BYTES (8u << 20)

struct schedule {
    float step, lr, warmup, pad;
};

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    unsigned char *batch[2];
    void *dev_batch[2];
    struct schedule *sched, *dev_sched;
    for (int i = 0; i < 2; i++) {
        CHECK(cudaMallocHost((void **)&batch[i], BATCH_BYTES));
        CHECK(cudaMalloc(&dev_batch[i], BATCH_BYTES));
    }
    CHECK(cudaMallocHost((void **)&sched, 2 * sizeof *sched)); /* one per slot */
    CHECK(cudaMalloc((void **)&dev_sched, sizeof *sched));
    cudaEvent_t done[2];
    for (int i = 0; i < 2; i++)
        CHECK(cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming));
    for (unsigned step = 0; step < STEPS; step++) {
        int b = step % 2;
        if (step >= 2)
            CHECK(cudaEventSynchronize(done[b])); /* the slot's previous step is done */
        fp_fill_batch(batch[b], BATCH_BYTES, step);
        CHECK(cudaMemcpyAsync(dev_batch[b], batch[b], BATCH_BYTES, cudaMemcpyHostToDevice, s)); /* @batch */
        sched[b].step = (float)step;
        sched[b].lr = 3e-4f * (float)(STEPS - step) / STEPS;
        sched[b].warmup = step < 10 ? (float)step / 10 : 1.0f;
        CHECK(cudaMemcpyAsync(dev_sched, &sched[b], sizeof *sched, cudaMemcpyHostToDevice, s)); /* @sched */
        ex_kernel_launch(&k, s);
        CHECK(cudaEventRecord(done[b], s));
        fp_host_work_us(2000);
    }
    CHECK(cudaStreamSynchronize(s));
    for (int i = 0; i < 2; i++) {
        CHECK(cudaFreeHost(batch[i]));
        CHECK(cudaFree(dev_batch[i]));
        CHECK(cudaEventDestroy(done[i]));
    }
    CHECK(cudaFreeHost(sched));
    CHECK(cudaFree(dev_sched));
    CHECK(cudaStreamDestroy(s));
    ex_kernel_fini(&k);
    return 0;
}
