/* Cross-stream ordering with cudaStreamWaitEvent, host functions and callbacks in stream order on another thread, destroying a busy stream, and invalid handles. Needs XFERPROF_SIM_BANDWIDTH=pinned=100M,pageable=100M. */
#include "xpt_check.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#define LONG (32u << 20)   /* ~335 ms at 100 MB/s */

static unsigned char *pinned, *pinned_dst;
static void *dlong, *dsmall;

static void wait_event(void)
{
    cudaStream_t s1, s2, s3;
    CHECK_OK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK_OK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    CHECK_OK(cudaStreamCreateWithFlags(&s3, cudaStreamNonBlocking));
    cudaEvent_t e1, e2, e3;
    CHECK_OK(cudaEventCreateWithFlags(&e1, cudaEventDisableTiming));
    CHECK_OK(cudaEventCreateWithFlags(&e2, cudaEventDisableTiming));
    CHECK_OK(cudaEventCreateWithFlags(&e3, cudaEventDisableTiming));

    CHECK_OK(cudaMemcpyAsync(dlong, pinned, LONG, cudaMemcpyHostToDevice, s1));
    CHECK_OK(cudaEventRecord(e1, s1));
    /* s2 waits for e1; s3 is the control that does not. */
    CHECK_OK(cudaStreamWaitEvent(s2, e1, 0));
    CHECK_OK(cudaMemsetAsync(dsmall, 0x21, 4096, s2));
    CHECK_OK(cudaEventRecord(e2, s2));
    CHECK_OK(cudaMemsetAsync(dsmall, 0x22, 4096, s3));
    CHECK_OK(cudaEventRecord(e3, s3));

    CHECK_OK(cudaEventSynchronize(e3));
    CHECK_CUDA(cudaEventQuery(e1), cudaErrorNotReady);   /* control: no wait */
    CHECK_CUDA(cudaEventQuery(e2), cudaErrorNotReady);   /* held behind e1 */
    CHECK_OK(cudaEventSynchronize(e2));
    CHECK_OK(cudaEventQuery(e1));

    /* The wait captured e1 as recorded then: re-recording e1 later does not
     * hold work already queued on s2. */
    CHECK_OK(cudaStreamWaitEvent(s2, e1, 0));   /* e1 complete: no wait */
    CHECK_OK(cudaMemcpyAsync(dlong, pinned, LONG, cudaMemcpyHostToDevice, s1));
    CHECK_OK(cudaEventRecord(e1, s1));
    CHECK_OK(cudaMemsetAsync(dsmall, 0x23, 4096, s2));
    CHECK_OK(cudaEventRecord(e2, s2));
    CHECK_OK(cudaEventSynchronize(e2));
    CHECK_CUDA(cudaEventQuery(e1), cudaErrorNotReady);

    CHECK_OK(cudaDeviceSynchronize());
    CHECK_OK(cudaEventDestroy(e1));
    CHECK_OK(cudaEventDestroy(e2));
    CHECK_OK(cudaEventDestroy(e3));
    CHECK_OK(cudaStreamDestroy(s1));
    CHECK_OK(cudaStreamDestroy(s2));
    CHECK_OK(cudaStreamDestroy(s3));
}

/* What a host function saw when it ran. */
struct host_probe {
    pthread_t caller;
    atomic_int ran;
    int other_thread;
    int data_arrived;        /* the preceding D2H copy had completed */
    cudaStream_t cb_stream;
    cudaError_t cb_status;
    int sleep_ms;
};

static void probe(struct host_probe *p)
{
    p->other_thread = !pthread_equal(pthread_self(), p->caller);
    p->data_arrived = xpt_find_mismatch(pinned_dst, LONG, 5) == LONG;
    if (p->sleep_ms)
        usleep((useconds_t)p->sleep_ms * 1000u);
    atomic_store(&p->ran, 1);
}

static void CUDART_CB host_fn(void *user)
{
    probe(user);
}

static void CUDART_CB stream_cb(cudaStream_t stream, cudaError_t status, void *user)
{
    struct host_probe *p = user;
    p->cb_stream = stream;
    p->cb_status = status;
    probe(p);
}

static void host_functions(void)
{
    cudaStream_t s;
    CHECK_OK(cudaStreamCreate(&s));
    cudaEvent_t after;
    CHECK_OK(cudaEventCreate(&after));

    /* Device holds pattern 5; a long D2H into pinned memory precedes the host
     * function, which must find all of it there. */
    xpt_fill(pinned, LONG, 5);
    CHECK_OK(cudaMemcpy(dlong, pinned, LONG, cudaMemcpyHostToDevice));
    memset(pinned_dst, 0, LONG);

    struct host_probe p1 = {.caller = pthread_self(), .sleep_ms = 200};
    CHECK_OK(cudaMemcpyAsync(pinned_dst, dlong, LONG, cudaMemcpyDeviceToHost, s));
    CHECK_OK(cudaLaunchHostFunc(s, host_fn, &p1));
    /* Work after the host function waits until it has returned. */
    CHECK_OK(cudaMemsetAsync(dsmall, 0x31, 4096, s));
    CHECK_OK(cudaEventRecord(after, s));
    CHECK_EQ(atomic_load(&p1.ran), 0);   /* queued behind a ~335 ms copy */
    CHECK_OK(cudaEventSynchronize(after));
    CHECK_MSG(atomic_load(&p1.ran), "work after the host function completed before it returned");
    CHECK_MSG(p1.data_arrived, "host function ran before the preceding copy completed");
    CHECK_MSG(p1.other_thread, "host function ran on the thread that queued it");

    /* cudaStreamAddCallback: same ordering, plus the stream and status. */
    memset(pinned_dst, 0, LONG);
    struct host_probe p2 = {.caller = pthread_self(), .cb_status = cudaErrorUnknown};
    CHECK_OK(cudaMemcpyAsync(pinned_dst, dlong, LONG, cudaMemcpyDeviceToHost, s));
    CHECK_OK(cudaStreamAddCallback(s, stream_cb, &p2, 0));
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK(atomic_load(&p2.ran));
    CHECK(p2.data_arrived);
    CHECK(p2.other_thread);
    CHECK(p2.cb_stream == s);
    CHECK_CUDA(p2.cb_status, cudaSuccess);

    /* Flags must be 0. */
    CHECK_CUDA(cudaStreamAddCallback(s, stream_cb, &p2, 1), cudaErrorInvalidValue);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidValue);

    /* Host functions on the legacy stream work too. */
    memset(pinned_dst, 0, LONG);
    struct host_probe p3 = {.caller = pthread_self()};
    CHECK_OK(cudaMemcpyAsync(pinned_dst, dlong, LONG, cudaMemcpyDeviceToHost, 0));
    CHECK_OK(cudaLaunchHostFunc(0, host_fn, &p3));
    CHECK_OK(cudaDeviceSynchronize());
    CHECK(atomic_load(&p3.ran));
    CHECK(p3.data_arrived);

    CHECK_OK(cudaEventDestroy(after));
    CHECK_OK(cudaStreamDestroy(s));
}

/* Destroying a stream with work still queued: the call returns, the work
 * still completes. */
static void destroy_busy_stream(void)
{
    cudaStream_t s;
    CHECK_OK(cudaStreamCreate(&s));
    xpt_fill(pinned, LONG, 6);
    CHECK_OK(cudaMemcpyAsync(dlong, pinned, LONG, cudaMemcpyHostToDevice, s));
    CHECK_OK(cudaStreamDestroy(s));
    CHECK_OK(cudaDeviceSynchronize());
    memset(pinned_dst, 0, LONG);
    CHECK_OK(cudaMemcpy(pinned_dst, dlong, LONG, cudaMemcpyDeviceToHost));
    CHECK_PATTERN(pinned_dst, LONG, 6);
}

static void invalid_handles(void)
{
    cudaStream_t bogus = (cudaStream_t)(uintptr_t)0x1234;
    CHECK_CUDA(cudaStreamQuery(bogus), cudaErrorInvalidResourceHandle);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidResourceHandle);
    CHECK_CUDA(cudaStreamSynchronize(bogus), cudaErrorInvalidResourceHandle);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidResourceHandle);
    CHECK_CUDA(cudaMemcpyAsync(dsmall, pinned, 16, cudaMemcpyHostToDevice, bogus),
               cudaErrorInvalidResourceHandle);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidResourceHandle);

    /* Elapsed time needs timing on both events. */
    cudaEvent_t timed, untimed;
    CHECK_OK(cudaEventCreate(&timed));
    CHECK_OK(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming));
    CHECK_OK(cudaEventRecord(timed, 0));
    CHECK_OK(cudaEventRecord(untimed, 0));
    CHECK_OK(cudaDeviceSynchronize());
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, timed, untimed), cudaErrorInvalidResourceHandle);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidResourceHandle);
    CHECK_CUDA(cudaEventElapsedTime(&ms, untimed, timed), cudaErrorInvalidResourceHandle);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidResourceHandle);
    CHECK_OK(cudaEventElapsedTime(&ms, timed, timed));
    CHECK(ms == 0.0f);
    CHECK_OK(cudaEventDestroy(timed));
    CHECK_OK(cudaEventDestroy(untimed));
}

int main(void)
{
    CHECK_OK(cudaMallocHost((void **)&pinned, LONG));
    CHECK_OK(cudaMallocHost((void **)&pinned_dst, LONG));
    CHECK_OK(cudaMalloc(&dlong, LONG));
    CHECK_OK(cudaMalloc(&dsmall, 4096));
    memset(pinned, 0x55, LONG);

    wait_event();
    host_functions();
    destroy_busy_stream();
    invalid_handles();

    CHECK_OK(cudaFree(dlong));
    CHECK_OK(cudaFree(dsmall));
    CHECK_OK(cudaFreeHost(pinned));
    CHECK_OK(cudaFreeHost(pinned_dst));
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);
    return 0;
}
