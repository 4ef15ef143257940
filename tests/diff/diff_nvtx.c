/* diff_nvtx.c: a training loop marked with NVTX ranges, for the `xferprof
 * diff --by nvtx` scenario (test_diff_nvtx.py): one "init" range uploading
 * INIT_BYTES once, then DIFF_STEPS "step" ranges (4, or 8 with -DDIFF_STEPS=8)
 * each uploading STEP_BYTES from pinned memory and downloading a 4-byte loss.
 * Runs of different lengths: per step instance the traffic is the same. */
#include "../sim/xpt_check.h"

#include <nvtx3/nvToolsExt.h>

#ifndef DIFF_STEPS
#define DIFF_STEPS 4
#endif
#define INIT_BYTES (2u << 20)
#define STEP_BYTES (1u << 20)

int main(void)
{
    void *host = NULL, *dev = NULL, *loss_dev = NULL;
    CHECK_OK(cudaMallocHost(&host, INIT_BYTES));
    CHECK_OK(cudaMalloc(&dev, INIT_BYTES));
    CHECK_OK(cudaMalloc(&loss_dev, 4));
    nvtxRangePushA("init");
    memset(host, 1, INIT_BYTES);
    CHECK_OK(cudaMemcpy(dev, host, INIT_BYTES, cudaMemcpyHostToDevice));
    nvtxRangePop();
    for (int s = 0; s < DIFF_STEPS; s++) {
        nvtxRangePushA("step");
        memset(host, 2 + s, STEP_BYTES); /* new content each step: not a redundant upload */
        CHECK_OK(cudaMemcpy(dev, host, STEP_BYTES, cudaMemcpyHostToDevice));
        float loss = 0;
        CHECK_OK(cudaMemcpy(&loss, loss_dev, sizeof loss, cudaMemcpyDeviceToHost));
        nvtxRangePop();
    }
    CHECK_OK(cudaFree(loss_dev));
    CHECK_OK(cudaFree(dev));
    CHECK_OK(cudaFreeHost(host));
    return 0;
}
