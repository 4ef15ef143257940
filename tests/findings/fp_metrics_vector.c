/* fp_metrics_vector.c: a training loop that shows live metrics in its
 * progress bar, the way a trainer logging `on_step=True` does: a small
 * kernel gathers the step's loss, accuracy, gradient norm, loss scale,
 * learning rate and token count into a device struct (6 floats, 24 bytes),
 * which is copied every step with cudaMemcpyAsync into a pinned struct and
 * read after cudaStreamSynchronize to update the bar. The batches are done
 * right: two pinned buffers, cudaMemcpyAsync, an event per buffer. A
 * checkpoint every 100 steps downloads the weights.
 *
 * The per-step read stalls the host until the step's kernels finish, so the
 * GPU idles while the host prepares the next step; pinning does not help (it
 * is pinned already). The fix: accumulate the metrics on the device and read
 * them every N steps (refresh the bar every 20 steps).
 *
 * ENV: XFERPROF_SIM_KERNEL_TIME=150us
 * TRUTH: sync-in-loop @ metrics
 * (the checkpoint every 100 steps is rare and needed; small-copies: 300 reads
 * of 24 bytes are one problem, the stall, told by sync-in-loop) */
#include "fp_common.h"

#define STEPS 300
#define BATCH_BYTES (1u << 20)
#define WEIGHT_BYTES (4u << 20)
#define CKPT_EVERY 100

struct metrics {
    float loss, accuracy, grad_norm, loss_scale, lr, tokens;
};

static EX_SITE void read_metrics(struct metrics *m, const void *dev_m, cudaStream_t s)
{
    CHECK(cudaMemcpyAsync(m, dev_m, sizeof *m, cudaMemcpyDeviceToHost, s)); /* @metrics */
    CHECK(cudaStreamSynchronize(s));
}

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    unsigned char *batch[2], *ckpt;
    void *dev_batch[2], *dev_w, *dev_m;
    cudaEvent_t used[2];
    for (int i = 0; i < 2; i++) {
        CHECK(cudaMallocHost((void **)&batch[i], BATCH_BYTES));
        CHECK(cudaMalloc(&dev_batch[i], BATCH_BYTES));
        CHECK(cudaEventCreateWithFlags(&used[i], cudaEventDisableTiming));
    }
    CHECK(cudaMallocHost((void **)&ckpt, WEIGHT_BYTES));
    CHECK(cudaMalloc(&dev_w, WEIGHT_BYTES));
    CHECK(cudaMalloc(&dev_m, sizeof(struct metrics)));
    struct metrics *m;
    CHECK(cudaMallocHost((void **)&m, sizeof *m));
    double shown = 0;
    for (unsigned step = 0; step < STEPS; step++) {
        int b = step % 2;
        CHECK(cudaEventSynchronize(used[b]));
        fp_fill_batch(batch[b], BATCH_BYTES, step);
        CHECK(cudaMemcpyAsync(dev_batch[b], batch[b], BATCH_BYTES, cudaMemcpyHostToDevice, s)); /* @batch */
        CHECK(cudaEventRecord(used[b], s));
        ex_kernel_launch(&k, s); /* forward */
        ex_kernel_launch(&k, s); /* backward */
        ex_kernel_launch(&k, s); /* optimizer */
        CHECK(cudaMemsetAsync(dev_m, 0, sizeof(struct metrics), s)); /* the metrics kernel */
        read_metrics(m, dev_m, s);
        shown += m->loss + m->accuracy; /* the progress bar's postfix */
        if (step % CKPT_EVERY == CKPT_EVERY - 1) {
            CHECK(cudaMemcpy(ckpt, dev_w, WEIGHT_BYTES, cudaMemcpyDeviceToHost)); /* @ckpt */
            fp_host_work_us(2000); /* serialize it */
        }
    }
    printf("%u steps, %.1f\n", STEPS, shown);
    for (int i = 0; i < 2; i++) {
        CHECK(cudaFreeHost(batch[i]));
        CHECK(cudaFree(dev_batch[i]));
        CHECK(cudaEventDestroy(used[i]));
    }
    CHECK(cudaFreeHost(ckpt));
    CHECK(cudaFreeHost(m));
    CHECK(cudaFree(dev_w));
    CHECK(cudaFree(dev_m));
    CHECK(cudaStreamDestroy(s));
    ex_kernel_fini(&k);
    return 0;
}
