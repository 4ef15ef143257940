/* Stream capture through the runtime API: captured work becomes graph nodes instead of running, each launch of the graph moves the bytes of that moment, cross-stream fork and join, what may not be called while a stream captures (and invalidates the capture), and the global, thread-local and relaxed modes. */
#include "xpt_check.h"

#include <pthread.h>
#include <stdatomic.h>

#define N (64u << 10)

static atomic_int host_calls;
static unsigned char *pin, *out;
static void *dev;

static void CUDART_CB count_call(void *arg)
{
    (void)arg;
    atomic_fetch_add(&host_calls, 1);
}

static size_t node_count(cudaGraph_t g)
{
    size_t n = 0;
    CHECK_OK(cudaGraphGetNodes(g, NULL, &n));
    return n;
}

static enum cudaStreamCaptureStatus status_of(cudaStream_t s)
{
    enum cudaStreamCaptureStatus st;
    CHECK_OK(cudaStreamIsCapturing(s, &st));
    return st;
}

/* Upload, memset, host function, download: captured, nothing runs; the
 * graph then runs them at each launch, with the bytes of that moment. */
static void capture_and_replay(void)
{
    cudaStream_t s;
    CHECK_OK(cudaStreamCreate(&s));
    CHECK_EQ(status_of(s), cudaStreamCaptureStatusNone);
    xpt_fill(pin, N, 1);
    memset(out, 0, N);
    CHECK_OK(cudaMemset(dev, 0, N));
    CHECK_OK(cudaDeviceSynchronize());

    CHECK_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CHECK_EQ(status_of(s), cudaStreamCaptureStatusActive);
    CHECK_OK(cudaMemcpyAsync(dev, pin, N, cudaMemcpyHostToDevice, s));
    CHECK_OK(cudaMemsetAsync((char *)dev + N / 2, 0x5a, N / 2, s));
    CHECK_OK(cudaLaunchHostFunc(s, count_call, NULL));
    CHECK_OK(cudaMemcpyAsync(out, dev, N, cudaMemcpyDefault, s));
    enum cudaStreamCaptureStatus st;
    unsigned long long id = 0;
    cudaGraph_t during = NULL;
    const cudaGraphNode_t *deps = NULL;
    const cudaGraphEdgeData *edges = NULL;
    size_t ndeps = 0;
    CHECK_OK(cudaStreamGetCaptureInfo(s, &st, &id, &during, &deps, &edges, &ndeps));
    CHECK_EQ(st, cudaStreamCaptureStatusActive);
    CHECK(id != 0 && during != NULL && deps != NULL && edges != NULL);
    CHECK_EQ(ndeps, 1);
    enum cudaGraphNodeType t;
    CHECK_OK(cudaGraphNodeGetType(deps[0], &t));
    CHECK_EQ(t, cudaGraphNodeTypeMemcpy);
    CHECK_EQ(node_count(during), 4);
    cudaGraph_t g;
    CHECK_OK(cudaStreamEndCapture(s, &g));
    CHECK(g == during);
    CHECK_EQ(status_of(s), cudaStreamCaptureStatusNone);

    /* Nothing ran: the stream is idle and the bytes are where they were. */
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_BYTES(out, N, 0);
    CHECK_EQ(atomic_load(&host_calls), 0);

    /* The captured copy, read back as the runtime describes it. */
    cudaGraphNode_t nodes[4];
    size_t n = 4;
    CHECK_OK(cudaGraphGetNodes(g, nodes, &n));
    struct cudaMemcpy3DParms p;
    CHECK_OK(cudaGraphMemcpyNodeGetParams(nodes[0], &p));
    CHECK(p.srcPtr.ptr == pin && p.dstPtr.ptr == dev);
    CHECK_EQ(p.extent.width, N);
    CHECK_EQ(p.extent.height, 1);
    CHECK_EQ(p.kind, cudaMemcpyHostToDevice);
    struct cudaMemsetParams m;
    CHECK_OK(cudaGraphMemsetNodeGetParams(nodes[1], &m));
    CHECK_EQ(m.value, 0x5a);
    CHECK_EQ(m.width, N / 2);

    cudaGraphExec_t x;
    CHECK_OK(cudaGraphInstantiate(&x, g, 0));
    for (unsigned seed = 2; seed <= 3; seed++) {
        xpt_fill(pin, N, seed);
        CHECK_OK(cudaGraphLaunch(x, s));
        CHECK_OK(cudaStreamSynchronize(s));
        CHECK_PATTERN(out, N / 2, seed);
        CHECK_BYTES(out + N / 2, N / 2, 0x5a);
        CHECK_EQ(atomic_load(&host_calls), (int)seed - 1);
    }
    CHECK_OK(cudaGraphExecDestroy(x));
    CHECK_OK(cudaGraphDestroy(g));
    CHECK_OK(cudaStreamDestroy(s));
    printf("capture: replayed with new bytes\n");
}

/* s1 forks s2 through an event and joins it back: both branches are in the
 * graph; without the join, EndCapture says unjoined. */
static void fork_join(void)
{
    cudaStream_t s1, s2;
    cudaEvent_t fork, join;
    CHECK_OK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK_OK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    CHECK_OK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CHECK_OK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    for (int joined = 1; joined >= 0; joined--) {
        memset(out, 0, N);
        CHECK_OK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
        CHECK_OK(cudaMemcpyAsync(dev, pin, N, cudaMemcpyHostToDevice, s1));
        CHECK_OK(cudaEventRecord(fork, s1));
        /* A captured event may not be queried. */
        CHECK_CUDA(cudaEventQuery(fork), cudaErrorCapturedEvent);
        CHECK_OK(cudaStreamWaitEvent(s2, fork, 0));
        CHECK_EQ(status_of(s2), cudaStreamCaptureStatusActive);
        CHECK_OK(cudaMemcpyAsync(out + N / 2, (char *)dev + N / 2, N / 2, cudaMemcpyDeviceToHost,
                                 s2));
        CHECK_OK(cudaMemcpyAsync(out, dev, N / 2, cudaMemcpyDeviceToHost, s1));
        /* Only the origin ends a capture. */
        cudaGraph_t g = NULL;
        CHECK_CUDA(cudaStreamEndCapture(s2, &g), cudaErrorStreamCaptureUnmatched);
        if (joined) {
            CHECK_OK(cudaEventRecord(join, s2));
            CHECK_OK(cudaStreamWaitEvent(s1, join, 0));
            CHECK_OK(cudaStreamEndCapture(s1, &g));
            CHECK_EQ(status_of(s2), cudaStreamCaptureStatusNone);
            CHECK_EQ(node_count(g), 3);
            size_t roots = 0;
            CHECK_OK(cudaGraphGetRootNodes(g, NULL, &roots));
            CHECK_EQ(roots, 1);
            cudaGraphExec_t x;
            CHECK_OK(cudaGraphInstantiate(&x, g, 0));
            xpt_fill(pin, N, 9);
            CHECK_OK(cudaGraphLaunch(x, s1));
            CHECK_OK(cudaStreamSynchronize(s1));
            CHECK_PATTERN(out, N, 9);
            CHECK_OK(cudaGraphExecDestroy(x));
            CHECK_OK(cudaGraphDestroy(g));
        } else {
            CHECK_CUDA(cudaStreamEndCapture(s1, &g), cudaErrorStreamCaptureUnjoined);
            CHECK(g == NULL);
            CHECK_EQ(status_of(s2), cudaStreamCaptureStatusNone);
        }
        CHECK_BYTES(out + (joined ? N : 0), joined ? 0 : N, 0);
    }
    CHECK_OK(cudaEventQuery(fork));   /* the capture is over */
    CHECK_OK(cudaStreamDestroy(s1));
    CHECK_OK(cudaStreamDestroy(s2));
    CHECK_OK(cudaEventDestroy(fork));
    CHECK_OK(cudaEventDestroy(join));
    printf("fork/join: joined, unjoined\n");
}

/* Begins a global-mode capture on s with one copy in it. */
static void begin(cudaStream_t s, enum cudaStreamCaptureMode mode)
{
    CHECK_OK(cudaStreamBeginCapture(s, mode));
    CHECK_OK(cudaMemcpyAsync(dev, pin, N, cudaMemcpyHostToDevice, s));
}

/* Ends the capture on s, which must have been invalidated. */
static void end_invalidated(cudaStream_t s)
{
    CHECK_EQ(status_of(s), cudaStreamCaptureStatusInvalidated);
    /* Work on an invalidated capture is refused. */
    CHECK_CUDA(cudaMemcpyAsync(dev, pin, N, cudaMemcpyHostToDevice, s),
               cudaErrorStreamCaptureInvalidated);
    cudaGraph_t g = (cudaGraph_t)(uintptr_t)1;
    CHECK_CUDA(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
    CHECK(g == NULL);
    CHECK_EQ(status_of(s), cudaStreamCaptureStatusNone);
    cudaGetLastError();
}

static void end_valid(cudaStream_t s)
{
    cudaGraph_t g = NULL;
    CHECK_OK(cudaStreamEndCapture(s, &g));
    CHECK(g != NULL);
    CHECK_OK(cudaGraphDestroy(g));
}

/* What may not run during a capture, with the documented errors. */
static void illegal_calls(void)
{
    cudaStream_t s, nb;
    CHECK_OK(cudaStreamCreate(&s));   /* blocking: the legacy stream depends on it */
    CHECK_OK(cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking));

    CHECK_CUDA(cudaStreamBeginCapture(cudaStreamLegacy, cudaStreamCaptureModeGlobal),
               cudaErrorStreamCaptureUnsupported);
    cudaGraph_t g;
    CHECK_CUDA(cudaStreamEndCapture(s, &g), cudaErrorIllegalState);

    /* Synchronizing or querying the capturing stream. */
    begin(s, cudaStreamCaptureModeGlobal);
    CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaErrorIllegalState);
    CHECK_CUDA(cudaStreamSynchronize(s), cudaErrorStreamCaptureUnsupported);
    end_invalidated(s);
    begin(s, cudaStreamCaptureModeGlobal);
    CHECK_CUDA(cudaStreamQuery(s), cudaErrorStreamCaptureUnsupported);
    end_invalidated(s);

    /* The legacy stream while a blocking stream captures: a synchronous
     * copy, an async copy, even a query of it. */
    begin(s, cudaStreamCaptureModeGlobal);
    CHECK_CUDA(cudaMemcpy(out, dev, N, cudaMemcpyDeviceToHost), cudaErrorStreamCaptureImplicit);
    end_invalidated(s);
    begin(s, cudaStreamCaptureModeGlobal);
    CHECK_CUDA(cudaMemcpyAsync(out, dev, N, cudaMemcpyDeviceToHost, 0),
               cudaErrorStreamCaptureImplicit);
    end_invalidated(s);
    /* ... but asking the legacy stream's status does not invalidate. */
    begin(s, cudaStreamCaptureModeGlobal);
    enum cudaStreamCaptureStatus st;
    CHECK_CUDA(cudaStreamIsCapturing(cudaStreamLegacy, &st), cudaErrorStreamCaptureImplicit);
    CHECK_EQ(status_of(s), cudaStreamCaptureStatusActive);
    end_valid(s);
    /* A non-blocking capturing stream leaves the legacy stream usable. */
    begin(nb, cudaStreamCaptureModeRelaxed);
    CHECK_OK(cudaMemcpy(out, dev, N, cudaMemcpyDeviceToHost));
    CHECK_EQ(status_of(cudaStreamLegacy), cudaStreamCaptureStatusNone);
    end_valid(nb);

    /* Potentially unsafe calls in the capturing thread (global mode). */
    void *p = NULL;
    begin(s, cudaStreamCaptureModeGlobal);
    CHECK_CUDA(cudaMalloc(&p, 256), cudaErrorStreamCaptureUnsupported);
    end_invalidated(s);
    begin(s, cudaStreamCaptureModeGlobal);
    CHECK_CUDA(cudaDeviceSynchronize(), cudaErrorStreamCaptureUnsupported);
    end_invalidated(s);
    /* Relaxed: allowed, the capture stays valid. */
    begin(s, cudaStreamCaptureModeRelaxed);
    CHECK_OK(cudaMalloc(&p, 256));
    CHECK_OK(cudaFree(p));
    end_valid(s);
    /* The thread's own mode switched to relaxed allows them too. */
    begin(s, cudaStreamCaptureModeGlobal);
    enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    CHECK_OK(cudaThreadExchangeStreamCaptureMode(&mode));
    CHECK_EQ(mode, cudaStreamCaptureModeGlobal);
    CHECK_OK(cudaMalloc(&p, 256));
    CHECK_OK(cudaFree(p));
    CHECK_OK(cudaThreadExchangeStreamCaptureMode(&mode));
    CHECK_EQ(mode, cudaStreamCaptureModeRelaxed);
    end_valid(s);
    mode = (enum cudaStreamCaptureMode)7;
    CHECK_CUDA(cudaThreadExchangeStreamCaptureMode(&mode), cudaErrorInvalidValue);

    /* Stream-ordered allocation (memory nodes are not simulated) is refused
     * rather than run outside the graph. */
    begin(s, cudaStreamCaptureModeRelaxed);
    CHECK_CUDA(cudaMallocAsync(&p, 256, s), cudaErrorStreamCaptureUnsupported);
    end_invalidated(s);

    /* Waiting on an event recorded outside the capture crosses its boundary. */
    cudaEvent_t outside;
    CHECK_OK(cudaEventCreate(&outside));
    CHECK_OK(cudaEventRecord(outside, nb));
    begin(s, cudaStreamCaptureModeGlobal);
    CHECK_CUDA(cudaStreamWaitEvent(s, outside, 0), cudaErrorStreamCaptureIsolation);
    end_invalidated(s);
    CHECK_OK(cudaEventDestroy(outside));

    CHECK_OK(cudaStreamDestroy(s));
    CHECK_OK(cudaStreamDestroy(nb));
    CHECK_OK(cudaGetLastError());
    printf("illegal: errors and invalidation as documented\n");
}

/* ---- modes across threads ------------------------------------------------ */

typedef struct other_call {
    enum cudaStreamCaptureMode thread_mode;
    cudaError_t malloc_result;
    cudaStream_t end_stream;      /* EndCapture this one, if set */
    cudaError_t end_result;
    cudaGraph_t graph;
} other_call;

static void *other_thread(void *arg)
{
    other_call *c = arg;
    CHECK_OK(cudaSetDevice(0));
    if (c->end_stream != NULL) {
        c->end_result = cudaStreamEndCapture(c->end_stream, &c->graph);
        return NULL;
    }
    enum cudaStreamCaptureMode m = c->thread_mode;
    CHECK_OK(cudaThreadExchangeStreamCaptureMode(&m));
    void *p = NULL;
    c->malloc_result = cudaMalloc(&p, 256);
    if (c->malloc_result == cudaSuccess)
        CHECK_OK(cudaFree(p));
    cudaGetLastError();
    return NULL;
}

static void run_other(other_call *c)
{
    pthread_t t;
    CHECK(pthread_create(&t, NULL, other_thread, c) == 0);
    CHECK(pthread_join(t, NULL) == 0);
}

static void modes(void)
{
    cudaStream_t s;
    CHECK_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    struct {
        enum cudaStreamCaptureMode capture, other;
        cudaError_t expect;
    } cases[] = {
        /* Another thread in global mode is stopped by a global capture ... */
        {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeGlobal, cudaErrorStreamCaptureUnsupported},
        /* ... not in thread-local or relaxed mode ... */
        {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal, cudaSuccess},
        {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeRelaxed, cudaSuccess},
        /* ... and not by a thread-local or relaxed capture. */
        {cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeGlobal, cudaSuccess},
        {cudaStreamCaptureModeRelaxed, cudaStreamCaptureModeGlobal, cudaSuccess},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        begin(s, cases[i].capture);
        other_call c = {.thread_mode = cases[i].other};
        run_other(&c);
        CHECK_MSG(c.malloc_result == cases[i].expect, "case %zu: cudaMalloc -> %s", i,
                  cudaGetErrorName(c.malloc_result));
        if (cases[i].expect == cudaSuccess)
            end_valid(s);
        else
            end_invalidated(s);
    }

    /* Only the thread that began a non-relaxed capture may end it. */
    begin(s, cudaStreamCaptureModeThreadLocal);
    other_call c = {.end_stream = s};
    run_other(&c);
    CHECK_EQ(c.end_result, cudaErrorStreamCaptureWrongThread);
    CHECK_EQ(status_of(s), cudaStreamCaptureStatusActive);
    end_valid(s);
    begin(s, cudaStreamCaptureModeRelaxed);
    c = (other_call){.end_stream = s};
    run_other(&c);
    CHECK_EQ(c.end_result, cudaSuccess);
    CHECK(c.graph != NULL);
    CHECK_EQ(node_count(c.graph), 1);
    CHECK_OK(cudaGraphDestroy(c.graph));
    CHECK_OK(cudaStreamDestroy(s));
    printf("modes: global, thread-local, relaxed\n");
}

int main(void)
{
    CHECK_FROM_SIM("cudaStreamBeginCapture");
    CHECK_OK(cudaMallocHost((void **)&pin, N));
    CHECK_OK(cudaMallocHost((void **)&out, N));
    CHECK_OK(cudaMalloc(&dev, N));
    capture_and_replay();
    fork_join();
    illegal_calls();
    modes();
    CHECK_OK(cudaFree(dev));
    CHECK_OK(cudaFreeHost(pin));
    CHECK_OK(cudaFreeHost(out));
    return 0;
}
