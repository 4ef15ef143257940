/* Unified-memory hints: cudaMemPrefetchAsync (CUDA 13 form, with a cudaMemLocation) is accepted on managed memory only, returns at once and occupies its stream for the time the migration takes, leaving the data as it was; cudaMemAdvise is accepted on managed memory.  Needs XFERPROF_SIM_BANDWIDTH=pinned=100M,pageable=100M. */
#include "xpt_check.h"

#define N (16u << 20)
#define BW 100e6

int main(void)
{
    const double move_ms = (double)N / BW * 1e3;   /* ~168 ms */
    unsigned char *m = NULL;
    CHECK_OK(cudaMallocManaged((void **)&m, N, cudaMemAttachGlobal));
    xpt_fill(m, N, 4);
    cudaStream_t s;
    CHECK_OK(cudaStreamCreate(&s));
    cudaEvent_t e0, e1;
    CHECK_OK(cudaEventCreate(&e0));
    CHECK_OK(cudaEventCreate(&e1));

    struct cudaMemLocation dev0 = {.type = cudaMemLocationTypeDevice, .id = 0};
    struct cudaMemLocation host = {.type = cudaMemLocationTypeHost, .id = 0};

    /* To the device: queued, timed like a copy of the range, and no byte
     * changes. */
    double t0 = xpt_now();
    CHECK_OK(cudaEventRecord(e0, s));
    CHECK_OK(cudaMemPrefetchAsync(m, N, dev0, 0, s));
    CHECK_OK(cudaEventRecord(e1, s));
    CHECK_MSG((xpt_now() - t0) * 1e3 < 0.5 * move_ms, "cudaMemPrefetchAsync held the caller");
    CHECK_CUDA(cudaStreamQuery(s), cudaErrorNotReady);
    CHECK_OK(cudaStreamSynchronize(s));
    float ms = 0;
    CHECK_OK(cudaEventElapsedTime(&ms, e0, e1));
    CHECK_MSG(ms >= 0.9 * move_ms, "prefetch of %u bytes took %.3f ms of device time", N, (double)ms);
    CHECK_PATTERN(m, N, 4);

    /* Back to the host, part of the range, on the per-thread stream. */
    CHECK_OK(cudaMemPrefetchAsync(m + 4096, N / 2, host, 0, cudaStreamPerThread));
    CHECK_OK(cudaStreamSynchronize(cudaStreamPerThread));
    CHECK_PATTERN(m, N, 4);

    /* Only managed memory, inside the allocation, to a real place. */
    void *d = NULL;
    CHECK_OK(cudaMalloc(&d, 4096));
    unsigned char *pageable = malloc(4096);
    CHECK(pageable);
    CHECK_CUDA(cudaMemPrefetchAsync(d, 4096, dev0, 0, s), cudaErrorInvalidValue);
    CHECK_CUDA(cudaMemPrefetchAsync(pageable, 4096, dev0, 0, s), cudaErrorInvalidValue);
    CHECK_CUDA(cudaMemPrefetchAsync(m + 4096, N, dev0, 0, s), cudaErrorInvalidValue);
    CHECK_CUDA(cudaMemPrefetchAsync(m, N, dev0, 1, s), cudaErrorInvalidValue);
    struct cudaMemLocation nodev = {.type = cudaMemLocationTypeDevice, .id = 5};
    CHECK_CUDA(cudaMemPrefetchAsync(m, N, nodev, 0, s), cudaErrorInvalidDevice);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidDevice);
    CHECK_OK(cudaStreamQuery(s));   /* none of them queued anything */

    /* Advice: accepted on managed memory, with a valid location where one
     * is needed; no effect on the data. */
    CHECK_OK(cudaMemAdvise(m, N, cudaMemAdviseSetReadMostly, dev0));
    CHECK_OK(cudaMemAdvise(m, N, cudaMemAdviseSetPreferredLocation, dev0));
    CHECK_OK(cudaMemAdvise(m, N, cudaMemAdviseSetAccessedBy, host));
    CHECK_OK(cudaMemAdvise(m, N, cudaMemAdviseUnsetReadMostly, nodev));   /* location ignored */
    CHECK_CUDA(cudaMemAdvise(m, N, cudaMemAdviseSetPreferredLocation, nodev), cudaErrorInvalidDevice);
    CHECK_CUDA(cudaMemAdvise(d, 4096, cudaMemAdviseSetReadMostly, dev0), cudaErrorInvalidValue);
    CHECK_CUDA(cudaMemAdvise(m, N, (enum cudaMemoryAdvise)99, dev0), cudaErrorInvalidValue);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidValue);
    CHECK_PATTERN(m, N, 4);

    CHECK_OK(cudaEventDestroy(e0));
    CHECK_OK(cudaEventDestroy(e1));
    CHECK_OK(cudaStreamDestroy(s));
    CHECK_OK(cudaFree(m));
    CHECK_OK(cudaFree(d));
    free(pageable);
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);
    return 0;
}
