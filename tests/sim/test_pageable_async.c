/* cudaMemcpyAsync with pageable host memory follows NVIDIA's "API synchronization behavior": H2D stages the buffer before returning, D2H returns only when complete, and cudaMemcpy waits for earlier legacy-stream work. Needs XFERPROF_SIM_BANDWIDTH=pinned=100M,pageable=100M. */
#include "xpt_check.h"

#define N (16u << 20)
#define BW 100e6

int main(void)
{
    const double copy_s = (double)N / BW;   /* ~0.168 s */

    unsigned char *h = malloc(N), *back = malloc(N);
    CHECK(h && back);
    void *d = NULL;
    CHECK_OK(cudaMalloc(&d, N));
    cudaStream_t s;
    CHECK_OK(cudaStreamCreate(&s));

    /* H2D from pageable memory: the call holds the host while the buffer is
     * staged, so the buffer may be reused as soon as it returns. */
    xpt_fill(h, N, 1);
    double t0 = xpt_now();
    CHECK_OK(cudaMemcpyAsync(d, h, N, cudaMemcpyHostToDevice, s));
    double call_s = xpt_now() - t0;
    memset(h, 0x5a, N);   /* pattern B, right away */
    CHECK_MSG(call_s >= 0.9 * copy_s, "pageable H2D cudaMemcpyAsync returned after %.3f ms, "
              "staging %u bytes at %.0f B/s takes %.3f ms", call_s * 1e3, N, BW, copy_s * 1e3);
    CHECK_OK(cudaStreamSynchronize(s));
    memset(back, 0, N);
    CHECK_OK(cudaMemcpy(back, d, N, cudaMemcpyDeviceToHost));
    CHECK_PATTERN(back, N, 1);   /* A arrived, not B */

    /* D2H into pageable memory: complete when the call returns, with no
     * synchronize. */
    xpt_fill(h, N, 2);
    CHECK_OK(cudaMemcpy(d, h, N, cudaMemcpyHostToDevice));
    memset(back, 0, N);
    t0 = xpt_now();
    CHECK_OK(cudaMemcpyAsync(back, d, N, cudaMemcpyDeviceToHost, s));
    call_s = xpt_now() - t0;
    CHECK_PATTERN(back, N, 2);
    CHECK_MSG(call_s >= 0.9 * copy_s, "pageable D2H cudaMemcpyAsync returned after %.3f ms",
              call_s * 1e3);
    CHECK_OK(cudaStreamQuery(s));

    /* A pageable D2H also waits for work queued before it on its stream:
     * a pinned H2D (which returns at once) followed by the pageable read. */
    unsigned char *pinned = NULL;
    CHECK_OK(cudaMallocHost((void **)&pinned, N));
    xpt_fill(pinned, N, 3);
    CHECK_OK(cudaMemcpyAsync(d, pinned, N, cudaMemcpyHostToDevice, s));
    memset(back, 0, N);
    CHECK_OK(cudaMemcpyAsync(back, d, N, cudaMemcpyDeviceToHost, s));
    CHECK_PATTERN(back, N, 3);

    /* cudaMemcpy is on the legacy stream and waits for its earlier work: a
     * long pinned H2D queued on stream 0, then a synchronous D2H. */
    xpt_fill(pinned, N, 4);
    t0 = xpt_now();
    CHECK_OK(cudaMemcpyAsync(d, pinned, N, cudaMemcpyHostToDevice, 0));
    memset(back, 0, N);
    CHECK_OK(cudaMemcpy(back, d, N, cudaMemcpyDeviceToHost));
    double both_s = xpt_now() - t0;
    CHECK_PATTERN(back, N, 4);
    CHECK_MSG(both_s >= 1.8 * copy_s, "H2D then D2H of %u bytes done after %.3f ms", N,
              both_s * 1e3);

    /* The synchronous pageable H2D likewise: buffer reusable on return, and
     * the bytes are on the device for any later work. */
    xpt_fill(h, N, 5);
    CHECK_OK(cudaMemcpy(d, h, N, cudaMemcpyHostToDevice));
    memset(h, 0, N);
    CHECK_OK(cudaMemcpyAsync(pinned, d, N, cudaMemcpyDeviceToHost, s));
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_PATTERN(pinned, N, 5);

    CHECK_OK(cudaStreamDestroy(s));
    CHECK_OK(cudaFreeHost(pinned));
    CHECK_OK(cudaFree(d));
    free(h);
    free(back);
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);
    return 0;
}
