/* bench_overhead.c: the cost of one intercepted call.  Times N calls of
 * cudaMemcpyAsync (8 bytes, pinned to device, on a stream) on the simulator
 * (run with XFERPROF_SIM_LATENCY=0), with and without the preload: the
 * difference per call is what the profiler adds.
 *
 *   bench_overhead time N [REPS [FRAMES [BYTES [same|new [SITES]]]]]
 *       prints "ns_per_call X": the best of REPS runs of N calls, made from
 *       FRAMES (default 32) nested frames of this program, so that a 32-frame
 *       stack is full; only the calls are timed, the stream is drained
 *       between batches of 1000.  BYTES (default 8): the size of each copy
 *       (on the stub runtime, where copies return at once, what a larger
 *       copy adds is the preload's fingerprint of it).  same (default): every
 *       copy sends the same bytes, so from 64 KiB on each repeated sample is
 *       confirmed by a full hash; new: a counter in the first 8 bytes makes
 *       every copy new content (a changed sample, no confirmation)
 *       SITES (default 1): the calls come from that many call sites in
 *       turn (distinct functions, so distinct stacks: a real program has
 *       hundreds; at most 64)
 *   bench_overhead cputime N [REPS [FRAMES [BYTES [same|new [SITES]]]]]
 *       as time, and also prints "cpu_ns_per_call X": the best of REPS runs
 *       of the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID, user and
 *       system) per call.  What a tool costs the program's thread itself:
 *       a tool working in another thread or process (xferprof's ingest,
 *       uftrace's writers, ltrace's tracer) costs wall time only
 *       (bench/run_peers.sh)
 *   bench_overhead kill N
 *       makes N calls, then SIGKILLs itself: leaves a journal of N copy
 *       records to ingest
 *   bench_overhead unwind N [FRAMES]
 *       no CUDA: prints "ns_per_walk X frames F", the cost of one
 *       unw_backtrace (libunwind, per-thread caching, as the preload calls
 *       it) from FRAMES nested frames
 *   bench_overhead nvtx N [REPS]
 *       no CUDA: prints "ns_per_pair X", the best of REPS runs of N
 *       nvtxRangePushA + nvtxRangePop pairs (NVTX3's header-only API; under
 *       xferprof run the preload is NVTX's injection and records them) */
#include <cuda_runtime_api.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

#define BATCH 1000

static uint64_t clock_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

static void ok(cudaError_t rc, const char *what)
{
    if (rc != cudaSuccess) {
        fprintf(stderr, "bench_overhead: %s: %s\n", what, cudaGetErrorName(rc));
        exit(1);
    }
}

/* Bytes per copy (bench_overhead time ... BYTES), and whether each copy
 * sends new content (... new). */
static size_t copy_bytes = 8;
static bool new_content;
/* bench_overhead cputime: the calls' thread CPU time is summed here too.
 * Read outside the monotonic clock's pair, so that the wall time is the
 * same measurement as in mode time; a thread CPU clock read is a system
 * call (not in the vDSO), once per BATCH calls. */
static bool cpu_clock;
static uint64_t cpu_spent;

/* Call sites the copies come from in turn (bench_overhead time ... SITES):
 * 64 functions alike but for their address, each a stack of its own. */
static int sites = 1;
typedef cudaError_t (*site_fn)(void *, const void *, cudaStream_t);
#define SITE(k)                                                                                   \
    __attribute__((noinline)) static cudaError_t site_##k(void *d, const void *p, cudaStream_t s) \
    {                                                                                             \
        cudaError_t r = cudaMemcpyAsync(d, p, copy_bytes, cudaMemcpyHostToDevice, s);             \
        __asm__ volatile("" : : "r"(r) : "memory"); /* no tail call: this frame stays */          \
        return r;                                                                                 \
    }
#define SITE8(k) SITE(k##0) SITE(k##1) SITE(k##2) SITE(k##3) SITE(k##4) SITE(k##5) SITE(k##6) SITE(k##7)
SITE8(0) SITE8(1) SITE8(2) SITE8(3) SITE8(4) SITE8(5) SITE8(6) SITE8(7)
#define SITE8_REF(k) site_##k##0, site_##k##1, site_##k##2, site_##k##3, site_##k##4, site_##k##5, \
                     site_##k##6, site_##k##7
static const site_fn site_fns[64] = {SITE8_REF(0), SITE8_REF(1), SITE8_REF(2), SITE8_REF(3),
                                     SITE8_REF(4), SITE8_REF(5), SITE8_REF(6), SITE8_REF(7)};

/* n calls in batches of BATCH; returns the nanoseconds spent in the calls.
 * noinline: the function callgrind's --toggle-collect counts
 * (bench/run_peers.sh). */
__attribute__((noinline)) static uint64_t calls(void *dev, const void *pinned, cudaStream_t s,
                                                long n)
{
    uint64_t spent = 0;
    cpu_spent = 0;
    for (long done = 0; done < n;) {
        long k = n - done < BATCH ? n - done : BATCH;
        uint64_t c0 = cpu_clock ? clock_ns(CLOCK_THREAD_CPUTIME_ID) : 0;
        uint64_t t0 = now_ns();
        for (long i = 0; i < k; i++) {
            if (new_content)
                memcpy((void *)pinned, &(uint64_t){(uint64_t)(done + i) ^ t0}, sizeof(uint64_t));
            ok(sites > 1 ? site_fns[(done + i) % sites](dev, pinned, s)
                         : cudaMemcpyAsync(dev, pinned, copy_bytes, cudaMemcpyHostToDevice, s),
               "cudaMemcpyAsync");
        }
        spent += now_ns() - t0;
        if (cpu_clock)
            cpu_spent += clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
        done += k;
        /* Untimed: keeps the simulator's queue short, so every batch starts
         * from the same state. */
        ok(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    }
    return spent;
}

typedef struct {
    bool unwind;              /* time unw_backtrace instead of CUDA calls */
    int walked;               /* frames the last walk found */
    void *dev;
    const void *pinned;
    cudaStream_t s;
    long n;
    int reps;
    double best;
    double best_cpu;          /* bench_overhead cputime: thread CPU ns per call */
} job;

/* Goes `frames` calls deep, then measures.  noinline and the use of the
 * result after the call keep the compiler from folding the frames away
 * (no tail calls). */
__attribute__((noinline)) static int nest(job *j, int frames)
{
    if (frames > 1) {
        int r = nest(j, frames - 1);
        __asm__ volatile("" : : "r"(r) : "memory");
        return r + 1;
    }
    for (int r = 0; r < j->reps; r++) {
        uint64_t spent;
        if (j->unwind) {
            void *buf[300];
            uint64_t t0 = now_ns();
            for (long i = 0; i < j->n; i++)
                j->walked = unw_backtrace(buf, 300);
            spent = now_ns() - t0;
        } else {
            spent = calls(j->dev, j->pinned, j->s, j->n);
        }
        double per = (double)spent / (double)j->n;
        if (per < j->best)
            j->best = per;
        double cpu = (double)cpu_spent / (double)j->n;
        if (cpu_clock && cpu < j->best_cpu)
            j->best_cpu = cpu;
    }
    return 1;
}

/* Best ns per push+pop pair over reps runs of n pairs. */
static double nvtx_pairs(long n, int reps)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        uint64_t t0 = now_ns();
        for (long i = 0; i < n; i++) {
            nvtxRangePushA("bench range");
            nvtxRangePop();
        }
        double per = (double)(now_ns() - t0) / (double)n;
        if (per < best)
            best = per;
    }
    return best;
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "time") != 0 && strcmp(argv[1], "cputime") != 0 &&
                     strcmp(argv[1], "kill") != 0 && strcmp(argv[1], "unwind") != 0 &&
                     strcmp(argv[1], "nvtx") != 0)) {
        fprintf(stderr, "usage: bench_overhead time|cputime N [REPS [FRAMES [BYTES [same|new [SITES]]]]] "
                        "| kill N | unwind N [FRAMES] | nvtx N [REPS]\n");
        return 2;
    }
    if (strcmp(argv[1], "nvtx") == 0) {
        long n = strtol(argv[2], NULL, 10);
        int reps = argc > 3 ? atoi(argv[3]) : 5;
        if (n <= 0 || reps <= 0)
            return 2;
        nvtx_pairs(n / 10 + 1, 1);   /* warm-up: NVTX's initialization, first touch */
        printf("ns_per_pair %.1f\n", nvtx_pairs(n, reps));
        return 0;
    }
    if (strcmp(argv[1], "unwind") == 0) {
        long n = strtol(argv[2], NULL, 10);
        int frames = argc > 3 ? atoi(argv[3]) : 32;
        if (n <= 0 || frames <= 0 || frames > 10000)
            return 2;
        unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
        job warm = {.unwind = true, .n = n / 10 + 1, .reps = 1, .best = 1e30};
        nest(&warm, frames);
        job j = {.unwind = true, .n = n, .reps = 5, .best = 1e30};
        nest(&j, frames);
        printf("ns_per_walk %.1f frames %d\n", j.best, j.walked);
        return 0;
    }
    long n = strtol(argv[2], NULL, 10);
    int reps = argc > 3 ? atoi(argv[3]) : 5;
    int frames = argc > 4 ? atoi(argv[4]) : 32;
    long bytes = argc > 5 ? strtol(argv[5], NULL, 10) : 8;
    new_content = argc > 6 && strcmp(argv[6], "new") == 0;
    sites = argc > 7 ? atoi(argv[7]) : 1;
    if (sites < 1 || sites > 64)
        return 2;
    if (n <= 0 || reps <= 0 || frames <= 0 || frames > 10000 || bytes <= 0 ||
        bytes > (1l << 30) || (argc > 6 && !new_content && strcmp(argv[6], "same") != 0))
        return 2;
    copy_bytes = (size_t)bytes;
    cpu_clock = strcmp(argv[1], "cputime") == 0;
    size_t buf = copy_bytes < 64 ? 64 : copy_bytes;
    void *dev = NULL, *pinned = NULL;
    cudaStream_t s = NULL;
    ok(cudaMalloc(&dev, buf), "cudaMalloc");
    ok(cudaMallocHost(&pinned, buf), "cudaMallocHost");
    ok(cudaStreamCreate(&s), "cudaStreamCreate");
    memset(pinned, 1, buf);

    if (strcmp(argv[1], "kill") == 0) {
        calls(dev, pinned, s, n);
        fflush(stdout);
        kill(getpid(), SIGKILL);
        return 1;
    }
    /* Warm-up at the same depth: first touch, caches, the stack seen once. */
    job warm = {.dev = dev, .pinned = pinned, .s = s, .n = n / 10 + 1, .reps = 1, .best = 1e30};
    nest(&warm, frames);
    job j = {.dev = dev, .pinned = pinned, .s = s, .n = n, .reps = reps, .best = 1e30,
             .best_cpu = 1e30};
    nest(&j, frames);
    printf("ns_per_call %.1f\n", j.best);
    if (cpu_clock)
        printf("cpu_ns_per_call %.1f\n", j.best_cpu);
    ok(cudaStreamDestroy(s), "cudaStreamDestroy");
    ok(cudaFreeHost(pinned), "cudaFreeHost");
    ok(cudaFree(dev), "cudaFree");
    return 0;
}
