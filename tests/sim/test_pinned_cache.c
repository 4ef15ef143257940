/* PyTorch's pinned-memory cache on a busy host: with the calls its CachingHostAllocator makes (an event from a cudaEventDisableTiming pool recorded on the legacy stream when a block is freed; cudaStreamIsCapturing, then cudaEventQuery of the oldest event) and the host computing on the same CPU as the device's threads, events of ~50 us of device work are found complete within a few polls and blocks are reused, as on a GPU. */
#include "xpt_check.h"

#include <sched.h>

#define STEPS 60
#define BLOCK (1u << 20)
#define MAX_BLOCKS 8
/* Host work between two steps, in CPU time of the calling thread (what
 * torch.randn(256, 1024) costs here): ~20 times the device time of a step
 * (a 1 MiB copy at 25 GB/s and two memsets, ~50 us). */
#define HOST_WORK_NS 1000000.0
/* How often the host looks at the cache while it works (torch's background
 * thread, pinned_use_background_threads, every 100 us). */
#define POLL_NS 50000.0
/* 5 polls, 5 times the device time of a step. */
#define MAX_LAG_NS 250000.0

/* CPU time of the calling thread, in nanoseconds. */
static double cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Keeps the CPU busy for ns of its own CPU time, as a CPU operator does:
 * never sleeps or yields.  Measured in the thread's CPU time, so a loaded
 * machine makes it take longer rather than shorter. */
static void burn(double ns)
{
    double end = cpu_ns() + ns;
    volatile unsigned long sink = 0;
    while (cpu_ns() < end)
        for (int i = 0; i < 100; i++)
            sink += (unsigned long)i;
}

/* The cache: blocks ever allocated, the free list, and the queue of
 * (event, block) recorded at free, oldest first; events are pooled. */
static void *blocks[MAX_BLOCKS];
static int nblocks;
static void *free_list[MAX_BLOCKS];
static int nfree;
static struct pending {
    cudaEvent_t ev;
    void *block;
    double freed_cpu_ns;   /* host CPU time when it was freed */
} queue[STEPS];
/* Host CPU time from each free to the query that found its event complete. */
static double lag_ns[STEPS];
static int nlag;
static int qhead, qtail;
static cudaEvent_t pool[STEPS];
static int npool;

/* CachingHostAllocatorImpl::process_events: the oldest event first, stop at
 * the first that is not ready. */
static void process_events(void)
{
    while (qhead < qtail) {
        enum cudaStreamCaptureStatus capture = cudaStreamCaptureStatusActive;
        CHECK_OK(cudaStreamIsCapturing(0, &capture));
        CHECK_EQ(capture, cudaStreamCaptureStatusNone);
        cudaError_t e = cudaEventQuery(queue[qhead].ev);
        if (e == cudaErrorNotReady) {
            /* Not ready is a status: torch clears it and nothing is left. */
            CHECK_CUDA(cudaGetLastError(), cudaSuccess);
            return;
        }
        CHECK_CUDA(e, cudaSuccess);
        lag_ns[nlag++] = cpu_ns() - queue[qhead].freed_cpu_ns;
        pool[npool++] = queue[qhead].ev;
        free_list[nfree++] = queue[qhead].block;
        qhead++;
    }
}

static void *cache_alloc(void)
{
    process_events();
    if (nfree > 0)
        return free_list[--nfree];
    CHECK_MSG(nblocks < MAX_BLOCKS,
              "%d pinned blocks after %d of %d freed blocks came back: the events recorded at "
              "their free did not complete while the host worked (torch on a GPU needs 2 or 3)",
              nblocks, qhead, qtail);
    void *p = NULL;
    CHECK_OK(cudaHostAlloc(&p, BLOCK, cudaHostAllocDefault));
    blocks[nblocks++] = p;
    return p;
}

/* CachingHostAllocatorImpl::free with the block used on the legacy stream:
 * an event from the pool (created with cudaEventDisableTiming) recorded there. */
static void cache_free(void *block)
{
    cudaEvent_t ev;
    if (npool > 0)
        ev = pool[--npool];
    else
        CHECK_OK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    CHECK_OK(cudaEventRecord(ev, 0));
    queue[qtail].ev = ev;
    queue[qtail].block = block;
    queue[qtail].freed_cpu_ns = cpu_ns();
    qtail++;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    /* One CPU for the host thread and the device's threads alike (they
     * inherit the mask), as when the host's threads keep every core busy. */
    cpu_set_t mask;
    CHECK(sched_getaffinity(0, sizeof mask, &mask) == 0);
    int cpu = 0;
    while (!CPU_ISSET(cpu, &mask))
        cpu++;
    CPU_ZERO(&mask);
    CPU_SET(cpu, &mask);
    CHECK(sched_setaffinity(0, sizeof mask, &mask) == 0);

    void *d = NULL;
    CHECK_OK(cudaMalloc(&d, BLOCK));
    CHECK_FROM_SIM("cudaEventQuery");

    /* b = torch.randn(256, 1024).pin_memory(); x = b.to(dev, non_blocking=True);
     * y = torch.tanh(x * w), the old b freed when the name is rebound. */
    void *prev = NULL;
    for (int step = 0; step < STEPS; step++) {
        void *b = cache_alloc();
        memset(b, step, BLOCK);
        CHECK_OK(cudaMemcpyAsync(d, b, BLOCK, cudaMemcpyHostToDevice, 0));
        CHECK_OK(cudaMemsetAsync(d, 1, BLOCK, 0));
        CHECK_OK(cudaMemsetAsync(d, 2, BLOCK, 0));
        if (prev)
            cache_free(prev);
        prev = b;
        if (step % 20 == 19)
            CHECK_OK(cudaStreamSynchronize(0));   /* y.sum().item() */
        /* Work on the CPU, looking at the cache every POLL_NS as torch's
         * background thread does (pinned_use_background_threads). */
        for (int k = 0; k < (int)(HOST_WORK_NS / POLL_NS); k++) {
            burn(POLL_NS);
            process_events();
        }
    }
    /* Half of the frees came back within MAX_LAG_NS of host CPU time.  A
     * median, so that the odd late wake-up of a device thread on a loaded
     * machine does not count; a device that waits for the host to give up
     * its CPU takes milliseconds (scheduler ticks) for most of them. */
    CHECK_OK(cudaStreamSynchronize(0));
    process_events();
    qsort(lag_ns, (size_t)nlag, sizeof lag_ns[0], cmp_double);
    CHECK_MSG(lag_ns[nlag / 2] <= MAX_LAG_NS,
              "median host CPU time from a free to its event found complete: %.0f us "
              "(90th percentile %.0f us) for ~50 us of device work",
              lag_ns[nlag / 2] / 1e3, lag_ns[nlag * 9 / 10] / 1e3);
    CHECK_MSG(nblocks <= 4, "%d pinned blocks for %d steps (torch on a GPU needs 2 or 3)", nblocks,
              STEPS);
    fprintf(stderr, "%d pinned blocks for %d steps\n", nblocks, STEPS);
    return 0;
}
