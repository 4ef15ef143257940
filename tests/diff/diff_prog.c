/* diff_prog.c: a small training loop that `xferprof diff` scenarios build in
 * variants (tests/diff/meson.build) and compare.
 *
 * STEPS steps; each uploads BATCH bytes (from upload_a, or upload_b with
 * -DDIFF_MOVED=1), allocates a 256 KiB scratch buffer on the device and frees
 * it (not with -DDIFF_LEAK=1), and downloads a 4-byte loss into pageable
 * memory.  The batch lives in pinned memory (pageable with
 * -DDIFF_PAGEABLE=1); -DDIFF_UPLOADS=2 uploads it twice per step.
 *
 * The switches only change data (volatile settings read at run time), never
 * code: every variant has the same instructions at the same offsets, so that
 * a diff without symbols (module + offset) sees exactly the change made.
 * Only the -O0/-O2 pair differs in code, which is what it tests. */
#include "../sim/xpt_check.h"

#ifndef DIFF_PAGEABLE
#define DIFF_PAGEABLE 0
#endif
#ifndef DIFF_UPLOADS
#define DIFF_UPLOADS 1
#endif
#ifndef DIFF_LEAK
#define DIFF_LEAK 0
#endif
#ifndef DIFF_MOVED
#define DIFF_MOVED 0
#endif

#define STEPS 4
#define BATCH (1u << 20)
#define SCRATCH (256u << 10)

static volatile int cfg_pageable = DIFF_PAGEABLE;
static volatile int cfg_uploads = DIFF_UPLOADS;
static volatile int cfg_leak = DIFF_LEAK;
static volatile int cfg_moved = DIFF_MOVED;
static volatile int calls_b; /* keeps upload_b from being folded into upload_a */

__attribute__((noinline)) static void upload_a(void *dev, const void *host)
{
    CHECK_OK(cudaMemcpy(dev, host, BATCH, cudaMemcpyHostToDevice));
}

__attribute__((noinline)) static void upload_b(void *dev, const void *host)
{
    calls_b++;
    CHECK_OK(cudaMemcpy(dev, host, BATCH, cudaMemcpyHostToDevice));
}

__attribute__((noinline)) static void step(void *dev, const void *host, void *loss_dev)
{
    for (int u = 0; u < cfg_uploads; u++) {
        if (cfg_moved)
            upload_b(dev, host);
        else
            upload_a(dev, host);
    }
    void *scratch = NULL;
    CHECK_OK(cudaMalloc(&scratch, SCRATCH));
    if (!cfg_leak)
        CHECK_OK(cudaFree(scratch));
    float loss = 0;
    CHECK_OK(cudaMemcpy(&loss, loss_dev, sizeof loss, cudaMemcpyDeviceToHost));
}

int main(void)
{
    void *host = NULL, *dev = NULL, *loss_dev = NULL;
    if (cfg_pageable)
        CHECK((host = malloc(BATCH)) != NULL);
    else
        CHECK_OK(cudaMallocHost(&host, BATCH));
    memset(host, 3, BATCH);
    CHECK_OK(cudaMalloc(&dev, BATCH));
    CHECK_OK(cudaMalloc(&loss_dev, 4));
    for (int s = 0; s < STEPS; s++)
        step(dev, host, loss_dev);
    CHECK_OK(cudaFree(loss_dev));
    CHECK_OK(cudaFree(dev));
    if (cfg_pageable)
        free(host);
    else
        CHECK_OK(cudaFreeHost(host));
    return 0;
}
