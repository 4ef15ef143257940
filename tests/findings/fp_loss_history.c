/* fp_loss_history.c: per-step metrics kept as device buffers. Each step the
 * loop allocates a small device buffer for the step's loss and gradient norm
 * and appends it to a history array "to plot later" (PyTorch's
 * `history.append(loss)` instead of `loss.item()`), so device memory grows
 * with every step until the run ends. The step's activations are allocated and
 * freed every step, the weights once; both are freed.
 *
 * TRUTH: leak(growing) @ keep
 * ALLOW: alloc-churn @ act
 * (the activations and the weights are not leaks; the activations made and
 * freed every step are allocation churn, a finding added after this program
 * was written: right, not required) */
#include "fp_common.h"

#define STEPS 60
#define METRIC_BYTES (64u << 10)
#define ACT_BYTES (2u << 20)
#define WEIGHT_BYTES (8u << 20)

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    void *dev_w;
    CHECK(cudaMalloc(&dev_w, WEIGHT_BYTES)); /* @weights */
    void *history[STEPS];
    for (unsigned step = 0; step < STEPS; step++) {
        void *act;
        CHECK(cudaMalloc(&act, ACT_BYTES)); /* @act */
        ex_kernel_launch(&k, s);
        CHECK(cudaMalloc(&history[step], METRIC_BYTES)); /* @keep */
        CHECK(cudaMemsetAsync(history[step], 0, METRIC_BYTES, s));
        CHECK(cudaStreamSynchronize(s));
        CHECK(cudaFree(act));
        fp_host_work_us(3000);
    }
    printf("%u steps, %u metrics kept\n", STEPS, STEPS);
    CHECK(cudaFree(dev_w));
    CHECK(cudaStreamDestroy(s));
    ex_kernel_fini(&k);
    return 0;
}
