/* The bounded launch queue: a host that never synchronizes runs at most XFERPROF_SIM_QUEUE_DEPTH items ahead of each stream, and the blocking that enforces it does not deadlock. */
#include "xpt_check.h"

#include <cuda.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <unistd.h>

/* Usage: test_sim_queue_depth MODE [ARGS]
 *   run-ahead            5,000 kernels on one stream, no sync: device progress
 *                        keeps up with host progress, timed against the model
 *   gate N [warned]      a stream held by a host function takes exactly N
 *                        items, the next launch blocks until it is let go
 *                        ("warned": XFERPROF_SIM_QUEUE_DEPTH is malformed, the
 *                        simulator says so and uses N, the default)
 *   legacy               the legacy stream, blocking and non-blocking streams
 *                        interleaved (the workers' implicit cross-stream waits)
 *   events               two streams waiting on each other's events in turn
 *   hostfunc             host functions that enqueue work on their own stream
 *                        and on another while the host fills both
 * The depth the run-ahead, legacy, events and hostfunc modes check is that of
 * XFERPROF_SIM_QUEUE_DEPTH (1024 when unset).  A deadlock shows as the test
 * never ending (meson's timeout). */

/* An event recorded on a stream has completed once this many items more than
 * the depth have been queued behind it.  The simulator is exact (0 would
 * do); a real GPU's depth is only approximately a number of items. */
#define XPT_QUEUE_SLACK 2u

/* The driver's launch entry points, from the library the runtime loaded. */
static __typeof__(&cuModuleLoadData) p_cuModuleLoadData;
static __typeof__(&cuModuleGetFunction) p_cuModuleGetFunction;
static __typeof__(&cuLaunchKernel) p_cuLaunchKernel;
static CUfunction kernel;

static unsigned long depth;

static void setup(void)
{
    CHECK_OK(cudaFree(0));
    CHECK_FROM_SIM("cudaFree");
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    CHECK_MSG(lib != NULL, "libcuda.so.1 not loaded by the runtime: %s", dlerror());
    p_cuModuleLoadData = (__typeof__(p_cuModuleLoadData))dlsym(lib, "cuModuleLoadData");
    p_cuModuleGetFunction = (__typeof__(p_cuModuleGetFunction))dlsym(lib, "cuModuleGetFunction");
    p_cuLaunchKernel = (__typeof__(p_cuLaunchKernel))dlsym(lib, "cuLaunchKernel");
    CHECK(p_cuModuleLoadData && p_cuModuleGetFunction && p_cuLaunchKernel);
    /* Kernels do not run on the simulator: any image loads. */
    static const char image[] = "xpt queue depth";
    CUmodule mod;
    CHECK_EQ(p_cuModuleLoadData(&mod, image), CUDA_SUCCESS);
    CHECK_EQ(p_cuModuleGetFunction(&kernel, mod, "step"), CUDA_SUCCESS);

}

static void launch(cudaStream_t s)
{
    CHECK_EQ(p_cuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 0, (CUstream)s, NULL, NULL), CUDA_SUCCESS);
}

/* XFERPROF_SIM_KERNEL_TIME as the simulator reads it ("100us"), in ns. */
static double kernel_ns(void)
{
    const char *t = getenv("XFERPROF_SIM_KERNEL_TIME");
    CHECK_MSG(t && *t, "the test needs XFERPROF_SIM_KERNEL_TIME");
    char *end;
    double v = strtod(t, &end);
    if (!strcmp(end, "us"))
        v *= 1e3;
    else if (!strcmp(end, "ms"))
        v *= 1e6;
    else
        CHECK_MSG(!strcmp(end, "ns") || !*end, "XFERPROF_SIM_KERNEL_TIME=%s", t);
    return v;
}

/* ---- host progress against device progress ------------------------------ */

#define TRACK_EVERY 8u
#define TRACK_RING 1024u

/* Counts what this program queued on one stream and records an event every
 * TRACK_EVERY items; after every enqueue, each event with more than the
 * depth (+ slack) of items queued behind it must have completed: the host
 * cannot be further ahead of the device than that. */
typedef struct tracker {
    cudaStream_t stream;
    const char *name;
    unsigned long queued;   /* items, the event records included */
    unsigned long events;
    cudaEvent_t ev[TRACK_RING];
    unsigned long at[TRACK_RING];   /* queued when that event was recorded */
    unsigned long head, tail;       /* outstanding: ev[head % RING .. tail % RING) */
} tracker;

static void track_init(tracker *t, cudaStream_t s, const char *name)
{
    memset(t, 0, sizeof *t);
    t->stream = s;
    t->name = name;
    for (unsigned i = 0; i < TRACK_RING; i++)
        CHECK_OK(cudaEventCreateWithFlags(&t->ev[i], cudaEventDisableTiming));
}

static void track_check(tracker *t)
{
    while (t->head < t->tail && t->at[t->head % TRACK_RING] + depth + XPT_QUEUE_SLACK <= t->queued) {
        cudaError_t q = cudaEventQuery(t->ev[t->head % TRACK_RING]);
        CHECK_MSG(q == cudaSuccess,
                  "stream %s: the event recorded as item %lu is %s with %lu items queued, "
                  "so the host is more than %lu (depth %lu + slack %u) items ahead",
                  t->name, t->at[t->head % TRACK_RING], cudaGetErrorName(q), t->queued,
                  depth + XPT_QUEUE_SLACK, depth, XPT_QUEUE_SLACK);
        t->head++;
    }
}

/* Call after queuing one item on t's stream by other means. */
static void track_queued(tracker *t)
{
    t->queued++;
    track_check(t);
    if (t->queued % TRACK_EVERY == 0) {
        CHECK_MSG(t->tail - t->head < TRACK_RING, "stream %s: %lu events outstanding", t->name,
                  t->tail - t->head);
        CHECK_OK(cudaEventRecord(t->ev[t->tail % TRACK_RING], t->stream));
        t->queued++;
        t->events++;
        t->at[t->tail % TRACK_RING] = t->queued;
        t->tail++;
        track_check(t);
    }
}

static void track_launch(tracker *t)
{
    launch(t->stream);
    track_queued(t);
}

/* ---- run-ahead ------------------------------------------------------------ */

static void run_ahead(void)
{
    const unsigned kernels = 5000;
    double ns = kernel_ns();
    cudaStream_t s;
    CHECK_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    static tracker t;
    track_init(&t, s, "s");

    double t0 = xpt_now();
    for (unsigned i = 0; i < kernels; i++)
        track_launch(&t);
    double elapsed = xpt_now() - t0;

    /* When the last enqueue returned, all but depth (+ slack) items had
     * completed, the event records among them taking no device time, and
     * one stream runs its kernels one after the other: so the loop cannot
     * have taken less than the modeled time of the kernels among those. */
    double min_done = (double)t.queued - (double)(depth + XPT_QUEUE_SLACK) - (double)t.events;
    double bound = min_done * ns * 1e-9;
    printf("run-ahead: %u kernels of %.0f ns, %lu items, depth %lu: enqueue loop took %.3f s, "
           "model says at least %.3f s\n", kernels, ns, t.queued, depth, elapsed, bound);
    CHECK_MSG(elapsed >= bound,
              "the enqueue loop took %.3f s, less than the %.3f s the device needs for the "
              "kernels that must have completed", elapsed, bound);
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_OK(cudaStreamDestroy(s));
}

/* ---- gate ------------------------------------------------------------------ */

static atomic_bool gate_open;
static atomic_ulong gate_launched;

static void CUDART_CB gate_fn(void *arg)
{
    (void)arg;
    while (!atomic_load(&gate_open))
        usleep(1000);
}

typedef struct gate_job {
    cudaStream_t stream;
    unsigned long launches;
} gate_job;

static void *gate_enqueuer(void *arg)
{
    gate_job *job = arg;
    CHECK_OK(cudaSetDevice(0));
    for (unsigned long i = 0; i < job->launches; i++) {
        launch(job->stream);
        atomic_fetch_add(&gate_launched, 1);
    }
    return NULL;
}

/* Reads what the simulator printed on stderr while it read its settings. */
static void first_call_capturing_stderr(char *out, size_t n)
{
    fflush(stderr);
    FILE *tmp = tmpfile();
    CHECK(tmp != NULL);
    int saved = dup(2);
    CHECK(saved >= 0 && dup2(fileno(tmp), 2) == 2);
    cudaError_t rc = cudaFree(0);
    fflush(stderr);
    CHECK(dup2(saved, 2) == 2);
    close(saved);
    CHECK_OK(rc);
    rewind(tmp);
    size_t got = fread(out, 1, n - 1, tmp);
    out[got] = '\0';
    fclose(tmp);
}

static void gate(unsigned long expect, bool warned)
{
    if (warned) {
        char err[4096];
        first_call_capturing_stderr(err, sizeof err);
        const char *v = getenv("XFERPROF_SIM_QUEUE_DEPTH");
        char want[256];
        snprintf(want, sizeof want, "ignoring XFERPROF_SIM_QUEUE_DEPTH=%s", v ? v : "");
        CHECK_MSG(strstr(err, want) != NULL, "stderr lacks \"%s\": \"%s\"", want, err);
    }
    setup();
    cudaStream_t s;
    CHECK_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    /* Item 1 holds the stream until the gate opens. */
    CHECK_OK(cudaLaunchHostFunc(s, gate_fn, NULL));

    gate_job job = {.stream = s, .launches = expect + 50};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, gate_enqueuer, &job) == 0);
    /* expect - 1 launches fit behind the held host function... */
    while (atomic_load(&gate_launched) < expect - 1)
        usleep(1000);
    /* ...and the next one does not return however long we wait (a while is
     * enough for a launch that wrongly returns to show). */
    usleep(200 * 1000);
    unsigned long n = atomic_load(&gate_launched);
    CHECK_MSG(n == expect - 1,
              "%lu launches returned behind a held item, the depth of %lu allows %lu", n,
              expect, expect - 1);
    atomic_store(&gate_open, true);
    CHECK(pthread_join(th, NULL) == 0);
    CHECK_EQ(atomic_load(&gate_launched), job.launches);
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_OK(cudaStreamDestroy(s));
    printf("gate: %lu launches returned behind a held item, then the next one waited\n", n);
}

/* ---- deadlock risks ------------------------------------------------------- */

/* The legacy stream waits for earlier work of the blocking streams and they
 * for its earlier work, inside the workers; full queues on all of them. */
static void legacy(void)
{
    cudaStream_t blocking, nonblocking;
    CHECK_OK(cudaStreamCreate(&blocking));
    CHECK_OK(cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking));
    static tracker tl, tb, tn, tp;
    track_init(&tl, cudaStreamLegacy, "legacy");
    track_init(&tb, blocking, "blocking");
    track_init(&tn, nonblocking, "non-blocking");
    track_init(&tp, cudaStreamPerThread, "per-thread");
    for (unsigned i = 0; i < 100 * depth; i++) {
        /* Bursts of a few items per stream, so every queue fills up while
         * the others hold it back. */
        tracker *t = (i / 5) % 4 == 0 ? &tl : (i / 5) % 4 == 1 ? &tb : (i / 5) % 4 == 2 ? &tn : &tp;
        track_launch(t);
    }
    CHECK_OK(cudaDeviceSynchronize());
    printf("legacy: %lu + %lu + %lu + %lu items queued\n", tl.queued, tb.queued, tn.queued,
           tp.queued);
}

/* Each stream waits on the other's latest event before every kernel, so
 * every queued item of one stream depends on the other's. */
static void events(void)
{
    cudaStream_t a, b;
    CHECK_OK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
    CHECK_OK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
    cudaEvent_t ea, eb;
    CHECK_OK(cudaEventCreateWithFlags(&ea, cudaEventDisableTiming));
    CHECK_OK(cudaEventCreateWithFlags(&eb, cudaEventDisableTiming));
    static tracker ta, tb;
    track_init(&ta, a, "a");
    track_init(&tb, b, "b");
    for (unsigned i = 0; i < 20 * depth; i++) {
        track_launch(&ta);
        CHECK_OK(cudaEventRecord(ea, a));
        track_queued(&ta);
        /* Waits are not counted: one on a completed event queues nothing,
         * and counting fewer items than were queued only loosens the check. */
        CHECK_OK(cudaStreamWaitEvent(b, ea, 0));
        track_launch(&tb);
        CHECK_OK(cudaEventRecord(eb, b));
        track_queued(&tb);
        CHECK_OK(cudaStreamWaitEvent(a, eb, 0));
    }
    CHECK_OK(cudaStreamSynchronize(a));
    CHECK_OK(cudaStreamSynchronize(b));
    printf("events: %lu + %lu items queued\n", ta.queued, tb.queued);
}

/* A host function queues more than the depth on its own stream (whose
 * worker runs it, so it cannot make room) and on the other stream, whose
 * next item waits on an event recorded after the host function. */
typedef struct host_job {
    cudaStream_t own, other;
    atomic_ulong calls;
} host_job;

static void CUDART_CB host_enqueue(void *arg)
{
    host_job *job = arg;
    CHECK_OK(cudaSetDevice(0));
    for (unsigned long i = 0; i < 2 * depth + 3; i++) {
        launch(job->own);
        launch(job->other);
    }
    atomic_fetch_add(&job->calls, 1);
}

static void hostfunc(void)
{
    static host_job job;
    CHECK_OK(cudaStreamCreateWithFlags(&job.own, cudaStreamNonBlocking));
    CHECK_OK(cudaStreamCreateWithFlags(&job.other, cudaStreamNonBlocking));
    cudaEvent_t after;
    CHECK_OK(cudaEventCreateWithFlags(&after, cudaEventDisableTiming));
    static tracker town, tother;
    track_init(&town, job.own, "own");
    track_init(&tother, job.other, "other");
    const unsigned rounds = 8;
    for (unsigned r = 0; r < rounds; r++) {
        CHECK_OK(cudaLaunchHostFunc(job.own, host_enqueue, &job));
        track_queued(&town);
        CHECK_OK(cudaEventRecord(after, job.own));
        track_queued(&town);
        /* Not counted, as in events(); nor are the host function's items. */
        CHECK_OK(cudaStreamWaitEvent(job.other, after, 0));
        for (unsigned i = 0; i < 2 * depth; i++) {
            track_launch(&town);
            track_launch(&tother);
        }
    }
    CHECK_OK(cudaStreamSynchronize(job.own));
    CHECK_OK(cudaStreamSynchronize(job.other));
    CHECK_EQ(atomic_load(&job.calls), rounds);
    printf("hostfunc: %u host functions queued %lu items each\n", rounds, 2 * (2 * depth + 3));
}

int main(int argc, char **argv)
{
    CHECK_MSG(argc >= 2, "usage: %s run-ahead|gate N [warned]|legacy|events|hostfunc", argv[0]);
    const char *mode = argv[1];
    if (!strcmp(mode, "gate")) {
        CHECK(argc >= 3);
        gate(strtoul(argv[2], NULL, 10), argc >= 4 && !strcmp(argv[3], "warned"));
        return 0;
    }
    const char *d = getenv("XFERPROF_SIM_QUEUE_DEPTH");
    depth = d && *d ? strtoul(d, NULL, 10) : 1024;
    CHECK_MSG(depth >= 1, "XFERPROF_SIM_QUEUE_DEPTH=%s", d);
    setup();
    if (!strcmp(mode, "run-ahead"))
        run_ahead();
    else if (!strcmp(mode, "legacy"))
        legacy();
    else if (!strcmp(mode, "events"))
        events();
    else if (!strcmp(mode, "hostfunc"))
        hostfunc();
    else
        XPT_FAIL("unknown mode %s", mode);
    return 0;
}
