/* Asynchronous copies from pinned memory return before the device is done: streams and events report not-ready, then complete, with modeled durations and data that lands at completion. Needs XFERPROF_SIM_BANDWIDTH=pinned=100M,pageable=100M. */
#include "xpt_check.h"

#define N (16u << 20)
#define BW 100e6   /* bytes per second, as set by meson.build */

int main(void)
{
    const double copy_ms = (double)N / BW * 1e3;   /* ~168 ms */

    unsigned char *hsrc = NULL, *hdst = NULL;
    void *d = NULL;
    CHECK_OK(cudaMallocHost((void **)&hsrc, N));
    CHECK_OK(cudaMallocHost((void **)&hdst, N));
    CHECK_OK(cudaMalloc(&d, N));
    cudaStream_t s;
    CHECK_OK(cudaStreamCreate(&s));
    cudaEvent_t e0, e1;
    CHECK_OK(cudaEventCreate(&e0));
    CHECK_OK(cudaEventCreate(&e1));

    /* A stream with nothing queued is complete; so is a never-recorded event. */
    CHECK_OK(cudaStreamQuery(s));
    CHECK_OK(cudaEventQuery(e1));

    /* H2D from pinned memory: the call returns at once. */
    xpt_fill(hsrc, N, 1);
    CHECK_OK(cudaEventRecord(e0, s));
    CHECK_OK(cudaMemcpyAsync(d, hsrc, N, cudaMemcpyHostToDevice, s));
    CHECK_OK(cudaEventRecord(e1, s));
    CHECK_CUDA(cudaStreamQuery(s), cudaErrorNotReady);
    CHECK_CUDA(cudaEventQuery(e1), cudaErrorNotReady);
    /* Not-ready is a status, not an error: the last error stays clean. */
    CHECK_CUDA(cudaPeekAtLastError(), cudaSuccess);
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);

    /* Elapsed time needs both events complete. */
    float ms = -1.0f;
    CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1), cudaErrorNotReady);
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);

    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_OK(cudaStreamQuery(s));
    CHECK_OK(cudaEventQuery(e1));
    CHECK_OK(cudaEventElapsedTime(&ms, e0, e1));
    CHECK_MSG(ms >= 0.9 * copy_ms, "copy of %u bytes at %.0f B/s took %.3f ms of device time",
              N, BW, (double)ms);
    /* The bytes are there. */
    memset(hdst, 0, N);
    CHECK_OK(cudaMemcpy(hdst, d, N, cudaMemcpyDeviceToHost));
    CHECK_PATTERN(hdst, N, 1);

    /* cudaEventSynchronize waits for the captured work. */
    xpt_fill(hsrc, N, 2);
    double t0 = xpt_now();
    CHECK_OK(cudaMemcpyAsync(d, hsrc, N, cudaMemcpyHostToDevice, s));
    CHECK_OK(cudaEventRecord(e1, s));
    CHECK_CUDA(cudaEventQuery(e1), cudaErrorNotReady);
    CHECK_OK(cudaEventSynchronize(e1));
    double waited_ms = (xpt_now() - t0) * 1e3;
    CHECK_OK(cudaEventQuery(e1));
    CHECK_OK(cudaStreamQuery(s));
    /* It returned no earlier than the copy could have finished. */
    CHECK_MSG(waited_ms >= 0.9 * copy_ms, "cudaEventSynchronize returned %.3f ms after the "
              "copy was queued", waited_ms);
    memset(hdst, 0, N);
    CHECK_OK(cudaMemcpy(hdst, d, N, cudaMemcpyDeviceToHost));
    CHECK_PATTERN(hdst, N, 2);

    /* D2H into pinned memory returns at once and writes the destination only
     * when the stream gets to it: queued behind a long H2D into another
     * buffer, it cannot have touched a byte when the calls return.  (While
     * the copy itself runs the bytes may land at any moment, as with a real
     * DMA, so that window is not examined.) */
    void *d2 = NULL;
    CHECK_OK(cudaMalloc(&d2, N));
    memset(hdst, 0, N);
    CHECK_OK(cudaMemcpyAsync(d2, hsrc, N, cudaMemcpyHostToDevice, s));
    CHECK_OK(cudaMemcpyAsync(hdst, d, N, cudaMemcpyDeviceToHost, s));
    CHECK_CUDA(cudaStreamQuery(s), cudaErrorNotReady);
#ifndef __SANITIZE_THREAD__
    /* Nothing written before the stream reached the copy.  Sampled, so the
     * look is quick next to the 168 ms H2D ahead of it.  (A deliberate race
     * with the copy engine, so left out under ThreadSanitizer.) */
    for (size_t i = 0; i < N; i += 4093)
        CHECK_MSG(hdst[i] == 0, "hdst[%zu] written before the stream reached the copy", i);
    CHECK(hdst[N - 1] == 0);
#endif
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_PATTERN(hdst, N, 2);
    CHECK_OK(cudaFree(d2));

    /* Two copies queued back to back on one stream run one after the other:
     * the events around both span both durations. */
    CHECK_OK(cudaEventRecord(e0, s));
    CHECK_OK(cudaMemcpyAsync(d, hsrc, N, cudaMemcpyHostToDevice, s));
    CHECK_OK(cudaMemcpyAsync(hdst, d, N, cudaMemcpyDeviceToHost, s));
    CHECK_OK(cudaEventRecord(e1, s));
    CHECK_OK(cudaEventSynchronize(e1));
    CHECK_OK(cudaEventElapsedTime(&ms, e0, e1));
    CHECK_MSG(ms >= 1.8 * copy_ms, "two queued copies took %.3f ms of device time", (double)ms);

    CHECK_OK(cudaEventDestroy(e0));
    CHECK_OK(cudaEventDestroy(e1));
    CHECK_OK(cudaStreamDestroy(s));
    CHECK_OK(cudaFree(d));
    CHECK_OK(cudaFreeHost(hsrc));
    CHECK_OK(cudaFreeHost(hdst));
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);
    return 0;
}
