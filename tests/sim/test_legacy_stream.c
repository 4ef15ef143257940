/* The legacy default stream orders against blocking streams in both directions, non-blocking streams and per-thread default streams escape it. Needs XFERPROF_SIM_BANDWIDTH=pinned=100M,pageable=100M. */
#include "xpt_check.h"

#include <pthread.h>

#define LONG (32u << 20)   /* ~335 ms at 100 MB/s */
#define BW 100e6

static unsigned char *pinned;    /* LONG bytes, source of the long copies */
static unsigned char *small_h;   /* 4096 bytes pinned, destination of small D2H copies */
static void *dlong, *dsmall;

/* Legacy work queued after blocking-stream work completes only after it. */
static void legacy_waits_for_blocking(void)
{
    cudaStream_t s1;
    CHECK_OK(cudaStreamCreate(&s1));   /* blocking: cudaStreamDefault */
    unsigned int flags = 99;
    CHECK_OK(cudaStreamGetFlags(s1, &flags));
    CHECK_EQ(flags, cudaStreamDefault);
    cudaEvent_t start, s1_done, legacy_done;
    CHECK_OK(cudaEventCreate(&start));
    CHECK_OK(cudaEventCreate(&s1_done));
    CHECK_OK(cudaEventCreate(&legacy_done));

    CHECK_OK(cudaEventRecord(start, s1));
    CHECK_OK(cudaMemcpyAsync(dlong, pinned, LONG, cudaMemcpyHostToDevice, s1));
    CHECK_OK(cudaEventRecord(s1_done, s1));
    CHECK_OK(cudaMemsetAsync(dsmall, 0x42, 4096, 0));
    CHECK_OK(cudaEventRecord(legacy_done, 0));
    /* The memset alone would take microseconds; it is held behind s1. */
    CHECK_CUDA(cudaEventQuery(legacy_done), cudaErrorNotReady);
    CHECK_OK(cudaEventSynchronize(legacy_done));
    CHECK_OK(cudaEventQuery(s1_done));
    float ms = 0;
    CHECK_OK(cudaEventElapsedTime(&ms, start, legacy_done));
    CHECK_MSG(ms >= 0.9 * LONG / BW * 1e3, "legacy memset completed %.3f ms after s1's copy "
              "started", (double)ms);

    /* The other direction: blocking-stream work waits for earlier legacy work. */
    CHECK_OK(cudaEventRecord(start, 0));
    CHECK_OK(cudaMemcpyAsync(dlong, pinned, LONG, cudaMemcpyHostToDevice, 0));
    CHECK_OK(cudaEventRecord(legacy_done, 0));
    CHECK_OK(cudaMemcpyAsync(small_h, dsmall, 4096, cudaMemcpyDeviceToHost, s1));
    CHECK_OK(cudaEventRecord(s1_done, s1));
    CHECK_OK(cudaEventSynchronize(s1_done));
    CHECK_OK(cudaEventQuery(legacy_done));
    CHECK_OK(cudaEventElapsedTime(&ms, start, s1_done));
    CHECK_MSG(ms >= 0.9 * LONG / BW * 1e3, "s1's copy completed %.3f ms after the legacy copy "
              "started", (double)ms);
    CHECK_BYTES(small_h, 4096, 0x42);

    /* cudaStreamLegacy is the same stream as 0. */
    CHECK_OK(cudaMemcpyAsync(dlong, pinned, LONG, cudaMemcpyHostToDevice, s1));
    CHECK_OK(cudaEventRecord(s1_done, s1));
    CHECK_OK(cudaMemsetAsync(dsmall, 0x43, 4096, cudaStreamLegacy));
    CHECK_OK(cudaEventRecord(legacy_done, cudaStreamLegacy));
    CHECK_OK(cudaEventSynchronize(legacy_done));
    CHECK_OK(cudaEventQuery(s1_done));

    CHECK_OK(cudaDeviceSynchronize());
    CHECK_OK(cudaEventDestroy(start));
    CHECK_OK(cudaEventDestroy(s1_done));
    CHECK_OK(cudaEventDestroy(legacy_done));
    CHECK_OK(cudaStreamDestroy(s1));
}

/* A non-blocking stream's work does not wait for the legacy stream (nor the
 * legacy stream for it). */
static void nonblocking_escapes_legacy(void)
{
    cudaStream_t nb;
    CHECK_OK(cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking));
    unsigned int flags = 99;
    CHECK_OK(cudaStreamGetFlags(nb, &flags));
    CHECK_EQ(flags, cudaStreamNonBlocking);
    cudaEvent_t legacy_done, nb_done;
    CHECK_OK(cudaEventCreate(&legacy_done));
    CHECK_OK(cudaEventCreate(&nb_done));

    CHECK_OK(cudaMemsetAsync(dsmall, 0x17, 4096, 0));
    CHECK_OK(cudaDeviceSynchronize());

    CHECK_OK(cudaMemcpyAsync(dlong, pinned, LONG, cudaMemcpyHostToDevice, 0));
    CHECK_OK(cudaEventRecord(legacy_done, 0));
    /* A memset and a small copy in the other direction: neither needs the
     * copy engine the long H2D copy occupies. */
    CHECK_OK(cudaMemsetAsync(dsmall, 0x18, 2048, nb));
    CHECK_OK(cudaMemcpyAsync(small_h, dsmall, 4096, cudaMemcpyDeviceToHost, nb));
    CHECK_OK(cudaEventRecord(nb_done, nb));
    CHECK_OK(cudaEventSynchronize(nb_done));
    CHECK_CUDA(cudaEventQuery(legacy_done), cudaErrorNotReady);
    CHECK_BYTES(small_h, 2048, 0x18);
    CHECK_BYTES(small_h + 2048, 2048, 0x17);
    CHECK_CUDA(cudaStreamQuery(0), cudaErrorNotReady);
    CHECK_OK(cudaStreamQuery(nb));

    /* Legacy work queued after non-blocking work does not wait for it either. */
    CHECK_OK(cudaDeviceSynchronize());
    CHECK_OK(cudaMemcpyAsync(dlong, pinned, LONG, cudaMemcpyHostToDevice, nb));
    CHECK_OK(cudaEventRecord(nb_done, nb));
    CHECK_OK(cudaMemsetAsync(dsmall, 0x19, 4096, 0));
    CHECK_OK(cudaEventRecord(legacy_done, 0));
    CHECK_OK(cudaEventSynchronize(legacy_done));
    CHECK_CUDA(cudaEventQuery(nb_done), cudaErrorNotReady);

    /* cudaDeviceSynchronize waits for every stream, non-blocking ones included. */
    CHECK_OK(cudaDeviceSynchronize());
    CHECK_OK(cudaEventQuery(nb_done));
    CHECK_OK(cudaStreamQuery(nb));

    CHECK_OK(cudaEventDestroy(legacy_done));
    CHECK_OK(cudaEventDestroy(nb_done));
    CHECK_OK(cudaStreamDestroy(nb));
}

/* cudaStreamPerThread: each thread's own default stream.  Per-thread streams
 * do not wait for each other, but they are blocking streams with respect to
 * the legacy stream. */
static pthread_barrier_t barrier;
static cudaEvent_t a_done;

static void *thread_a(void *arg)
{
    (void)arg;
    CHECK_OK(cudaMemcpyAsync(dlong, pinned, LONG, cudaMemcpyHostToDevice, cudaStreamPerThread));
    CHECK_OK(cudaEventRecord(a_done, cudaStreamPerThread));
    pthread_barrier_wait(&barrier);   /* 1: A's copy is queued */
    pthread_barrier_wait(&barrier);   /* 2: B has checked */
    CHECK_OK(cudaStreamSynchronize(cudaStreamPerThread));
    return NULL;
}

static void *thread_b(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&barrier);   /* 1 */
    cudaEvent_t b_done;
    CHECK_OK(cudaEventCreate(&b_done));
    CHECK_OK(cudaMemsetAsync(dsmall, 0x61, 4096, cudaStreamPerThread));
    CHECK_OK(cudaEventRecord(b_done, cudaStreamPerThread));
    CHECK_OK(cudaEventSynchronize(b_done));
    /* B's per-thread stream finished while A's copy is still running. */
    CHECK_CUDA(cudaEventQuery(a_done), cudaErrorNotReady);
    CHECK_OK(cudaEventDestroy(b_done));
    pthread_barrier_wait(&barrier);   /* 2 */
    return NULL;
}

static void per_thread_streams(void)
{
    CHECK_OK(cudaEventCreate(&a_done));
    CHECK(pthread_barrier_init(&barrier, NULL, 2) == 0);
    pthread_t ta, tb;
    CHECK(pthread_create(&ta, NULL, thread_a, NULL) == 0);
    CHECK(pthread_create(&tb, NULL, thread_b, NULL) == 0);
    CHECK(pthread_join(tb, NULL) == 0);
    CHECK(pthread_join(ta, NULL) == 0);
    CHECK_OK(cudaEventQuery(a_done));

    /* The legacy stream waits for a per-thread stream of another thread. */
    CHECK(pthread_barrier_destroy(&barrier) == 0);
    CHECK(pthread_barrier_init(&barrier, NULL, 2) == 0);
    CHECK(pthread_create(&ta, NULL, thread_a, NULL) == 0);
    pthread_barrier_wait(&barrier);   /* 1: A's copy is queued */
    cudaEvent_t legacy_done;
    CHECK_OK(cudaEventCreate(&legacy_done));
    CHECK_OK(cudaMemsetAsync(dsmall, 0x62, 4096, 0));
    CHECK_OK(cudaEventRecord(legacy_done, 0));
    CHECK_OK(cudaEventSynchronize(legacy_done));
    CHECK_OK(cudaEventQuery(a_done));
    pthread_barrier_wait(&barrier);   /* 2 */
    CHECK(pthread_join(ta, NULL) == 0);
    CHECK(pthread_barrier_destroy(&barrier) == 0);
    CHECK_OK(cudaEventDestroy(legacy_done));
    CHECK_OK(cudaEventDestroy(a_done));
}

int main(void)
{
    CHECK_OK(cudaMallocHost((void **)&pinned, LONG));
    CHECK_OK(cudaMallocHost((void **)&small_h, 4096));
    CHECK_OK(cudaMalloc(&dlong, LONG));
    CHECK_OK(cudaMalloc(&dsmall, 4096));
    memset(pinned, 0x33, LONG);

    legacy_waits_for_blocking();
    nonblocking_escapes_legacy();
    per_thread_streams();

    CHECK_OK(cudaDeviceSynchronize());
    CHECK_OK(cudaFree(dlong));
    CHECK_OK(cudaFree(dsmall));
    CHECK_OK(cudaFreeHost(pinned));
    CHECK_OK(cudaFreeHost(small_h));
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);
    return 0;
}
