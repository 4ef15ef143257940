/* fp_nan_check_roundtrip.c: a gradient check done on the host. Every 5th step
 * the loop downloads the gradient buffer with cudaMemcpy, scans it for NaN on
 * the CPU (none found, nothing changed) and uploads the same bytes back into
 * the buffer the optimizer reads, because the check was written as
 * "download, fix, upload". The upload sends the device bytes it already had.
 *
 * TRUTH: round-trip @ upload_back
 * (8 downloads and 8 uploads: too few for a blocking-loop finding) */
#include "fp_common.h"

#include <math.h>
#include <stdlib.h>

#define STEPS 40
#define GRAD_BYTES (1u << 20)

static EX_SITE int has_nan(const float *g, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (isnan(g[i]))
            return 1;
    return 0;
}

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    void *dev_grad, *dev_grad_in;
    CHECK(cudaMalloc(&dev_grad, GRAD_BYTES));
    CHECK(cudaMalloc(&dev_grad_in, GRAD_BYTES));
    float *host = malloc(GRAD_BYTES);
    unsigned nan_steps = 0;
    for (unsigned step = 0; step < STEPS; step++) {
        ex_kernel_launch(&k, 0); /* backward: the memset stands for its result */
        CHECK(cudaMemsetAsync(dev_grad, 1 + step % 60, GRAD_BYTES, 0));
        if (step % 5 == 4) {
            CHECK(cudaMemcpy(host, dev_grad, GRAD_BYTES, cudaMemcpyDeviceToHost)); /* @download */
            nan_steps += has_nan(host, GRAD_BYTES / 4);
            CHECK(cudaMemcpy(dev_grad_in, host, GRAD_BYTES, cudaMemcpyHostToDevice)); /* @upload_back */
        }
        ex_kernel_launch(&k, 0);
    }
    printf("steps with NaN: %u\n", nan_steps);
    free(host);
    CHECK(cudaFree(dev_grad));
    CHECK(cudaFree(dev_grad_in));
    ex_kernel_fini(&k);
    return 0;
}
