/* Built with -DCUDA_API_PER_THREAD_DEFAULT_STREAM: the header maps calls to their _ptds/_ptsz entry points, and stream 0 means the calling thread's own stream. Needs XFERPROF_SIM_BANDWIDTH=pinned=100M,pageable=100M. */
#include "xpt_check.h"

#include <pthread.h>

#ifndef CUDA_API_PER_THREAD_DEFAULT_STREAM
#error "compile with -DCUDA_API_PER_THREAD_DEFAULT_STREAM"
#endif
#ifndef __CUDART_API_PER_THREAD_DEFAULT_STREAM
#error "cuda_runtime_api.h did not switch to the per-thread default stream entry points"
#endif

#define LONG (32u << 20)   /* ~335 ms at 100 MB/s */

#define STR2(x) #x
#define STR(x) STR2(x)

static unsigned char *pinned;
static void *dlong, *dsmall_a, *dsmall_b;
static pthread_barrier_t barrier;
static cudaEvent_t a_done;

/* Thread A: a long copy on "stream 0", which is its per-thread stream. */
static void *thread_a(void *arg)
{
    (void)arg;
    CHECK_OK(cudaMemcpyAsync(dlong, pinned, LONG, cudaMemcpyHostToDevice, 0));
    CHECK_OK(cudaEventRecord(a_done, 0));
    CHECK_CUDA(cudaStreamQuery(0), cudaErrorNotReady);
    pthread_barrier_wait(&barrier);   /* 1: queued */
    pthread_barrier_wait(&barrier);   /* 2: the other side has checked */
    CHECK_OK(cudaStreamSynchronize(0));
    CHECK_OK(cudaStreamQuery(0));
    return NULL;
}

/* Thread B: its own stream 0 is not ordered after A's. */
static void *thread_b(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&barrier);   /* 1 */
    /* Empty per-thread stream: complete, although A's is busy. */
    CHECK_OK(cudaStreamQuery(0));
    cudaEvent_t b_done;
    CHECK_OK(cudaEventCreate(&b_done));
    CHECK_OK(cudaMemsetAsync(dsmall_b, 0x6b, 4096, 0));
    CHECK_OK(cudaEventRecord(b_done, 0));
    CHECK_OK(cudaEventSynchronize(b_done));
    CHECK_CUDA(cudaEventQuery(a_done), cudaErrorNotReady);
    /* cudaMemcpy (the _ptds variant) on B's stream does not wait for A's
     * copy either, and sees B's memset. */
    unsigned char back[4096];
    CHECK_OK(cudaMemcpy(back, dsmall_b, sizeof back, cudaMemcpyDeviceToHost));
    CHECK_BYTES(back, sizeof back, 0x6b);
    CHECK_CUDA(cudaEventQuery(a_done), cudaErrorNotReady);
    CHECK_OK(cudaEventDestroy(b_done));
    pthread_barrier_wait(&barrier);   /* 2 */
    return NULL;
}

int main(void)
{
    /* The macros really renamed the calls: the entry points this binary
     * references are the per-thread ones, and the simulator resolves them. */
    CHECK(strcmp(STR(cudaMemcpyAsync), "cudaMemcpyAsync_ptsz") == 0);
    CHECK(strcmp(STR(cudaMemcpy), "cudaMemcpy_ptds") == 0);
    CHECK(strcmp(STR(cudaEventRecord), "cudaEventRecord_ptsz") == 0);
    CHECK(dlsym(RTLD_DEFAULT, "cudaMemcpyAsync_ptsz") != NULL);
    CHECK_FROM_SIM("cudaMemcpyAsync_ptsz");
    CHECK_FROM_SIM("cudaMemcpy_ptds");

    CHECK_OK(cudaMallocHost((void **)&pinned, LONG));
    CHECK_OK(cudaMalloc(&dlong, LONG));
    CHECK_OK(cudaMalloc(&dsmall_a, 4096));
    CHECK_OK(cudaMalloc(&dsmall_b, 4096));
    memset(pinned, 0x44, LONG);
    CHECK_OK(cudaEventCreate(&a_done));

    /* Two threads, each on its own stream 0: B completes while A runs. */
    CHECK(pthread_barrier_init(&barrier, NULL, 2) == 0);
    pthread_t ta, tb;
    CHECK(pthread_create(&ta, NULL, thread_a, NULL) == 0);
    CHECK(pthread_create(&tb, NULL, thread_b, NULL) == 0);
    CHECK(pthread_join(tb, NULL) == 0);
    CHECK(pthread_join(ta, NULL) == 0);
    CHECK_OK(cudaEventQuery(a_done));
    CHECK(pthread_barrier_destroy(&barrier) == 0);

    /* The main thread's stream 0 is per-thread too, and does not wait for A. */
    CHECK(pthread_barrier_init(&barrier, NULL, 2) == 0);
    CHECK(pthread_create(&ta, NULL, thread_a, NULL) == 0);
    pthread_barrier_wait(&barrier);   /* 1 */
    cudaEvent_t m_done;
    CHECK_OK(cudaEventCreate(&m_done));
    CHECK_OK(cudaMemsetAsync(dsmall_a, 0x11, 4096, 0));
    CHECK_OK(cudaEventRecord(m_done, 0));
    CHECK_OK(cudaEventSynchronize(m_done));
    CHECK_CUDA(cudaEventQuery(a_done), cudaErrorNotReady);
    /* The legacy stream, named explicitly, still waits for A's per-thread
     * stream (per-thread streams are blocking streams). */
    CHECK_OK(cudaMemsetAsync(dsmall_a, 0x12, 4096, cudaStreamLegacy));
    CHECK_OK(cudaEventRecord(m_done, cudaStreamLegacy));
    CHECK_OK(cudaEventSynchronize(m_done));
    CHECK_OK(cudaEventQuery(a_done));
    pthread_barrier_wait(&barrier);   /* 2 */
    CHECK(pthread_join(ta, NULL) == 0);
    CHECK(pthread_barrier_destroy(&barrier) == 0);

    unsigned char back[4096];
    CHECK_OK(cudaMemcpy(back, dsmall_a, sizeof back, cudaMemcpyDeviceToHost));
    CHECK_BYTES(back, sizeof back, 0x12);

    /* Stream-ordered allocation, batches and 3D copies have their per-thread
     * twins too: stream 0 is this thread's stream, a free queued there waits
     * for the copy ahead of it, and a batch may use it. */
    CHECK(strcmp(STR(cudaMallocAsync), "cudaMallocAsync_ptsz") == 0);
    CHECK(strcmp(STR(cudaMemcpyBatchAsync), "cudaMemcpyBatchAsync_ptsz") == 0);
    CHECK(strcmp(STR(cudaMemcpy3D), "cudaMemcpy3D_ptds") == 0);
    CHECK_FROM_SIM("cudaMallocAsync_ptsz");
    CHECK_FROM_SIM("cudaFreeAsync_ptsz");
    CHECK_FROM_SIM("cudaMemcpyBatchAsync_ptsz");
    CHECK_FROM_SIM("cudaMemcpy3D_ptds");
    size_t free0 = 0, free1 = 0, total = 0;
    CHECK_OK(cudaMemGetInfo(&free0, &total));
    void *pool_mem = NULL;
    CHECK_OK(cudaMallocAsync(&pool_mem, LONG, 0));
    CHECK_OK(cudaMemcpyAsync(pool_mem, pinned, LONG, cudaMemcpyHostToDevice, 0));
    CHECK_OK(cudaFreeAsync(pool_mem, 0));
    CHECK_OK(cudaMemGetInfo(&free1, &total));
    CHECK_EQ(free1, free0 - LONG);
    CHECK_CUDA(cudaStreamQuery(0), cudaErrorNotReady);
    memset(pinned, 0x45, 4096);
    void *dsts[] = {dsmall_b};
    const void *srcs[] = {pinned};
    size_t sizes[] = {4096}, first = 0;
    struct cudaMemcpyAttributes attr;
    memset(&attr, 0, sizeof attr);
    attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    CHECK_OK(cudaMemcpyBatchAsync(dsts, srcs, sizes, 1, &attr, &first, 1, 0));
    CHECK_OK(cudaStreamSynchronize(0));
    CHECK_OK(cudaMemGetInfo(&free1, &total));
    CHECK_EQ(free1, free0);
    struct cudaMemcpy3DParms p3;
    memset(&p3, 0, sizeof p3);
    p3.srcPtr = (struct cudaPitchedPtr){.ptr = dsmall_b, .pitch = 64, .xsize = 64, .ysize = 16};
    p3.dstPtr = (struct cudaPitchedPtr){.ptr = back, .pitch = 64, .xsize = 64, .ysize = 16};
    p3.extent = (struct cudaExtent){.width = 64, .height = 16, .depth = 4};
    p3.kind = cudaMemcpyDeviceToHost;
    memset(back, 0, sizeof back);
    CHECK_OK(cudaMemcpy3D(&p3));
    CHECK_BYTES(back, sizeof back, 0x45);

    CHECK_OK(cudaEventDestroy(m_done));
    CHECK_OK(cudaEventDestroy(a_done));
    CHECK_OK(cudaFree(dlong));
    CHECK_OK(cudaFree(dsmall_a));
    CHECK_OK(cudaFree(dsmall_b));
    CHECK_OK(cudaFreeHost(pinned));
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);
    return 0;
}
