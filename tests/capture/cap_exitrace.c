/* cap_exitrace.c: threads busy in CUDA calls while the process exits.
 *
 *   cap_exitrace MODE COUNTS_FILE
 *
 * Six workers loop: two on cudaMemcpy (pageable H2D), two on cudaMemcpyAsync
 * + cudaStreamSynchronize, two on cudaMalloc + cudaFree.  Copies are of 4 KiB
 * to 1 MiB, varying by round, so that on a slow simulated link the exit finds
 * calls in flight at every stage of the profiler's exit path.  Once each has done
 * a few rounds the process ends, by MODE:
 *   exit    main calls exit(7)
 *   return  main returns 5
 *   thread  worker 0 calls exit(9) (main waits in pause())
 *   long    only one worker, inside one copy far longer than the profiler
 *           waits at exit (set XFERPROF_SIM_BANDWIDTH low), when main calls
 *           exit(3)
 * stdout is the same every run ("start MODE"); what differs goes to
 * COUNTS_FILE, written by an atexit handler registered first, so it runs
 * before any library's destructor: per kind of call, "done" (calls that had
 * returned by then: each must be in the database or counted as lost) and
 * "issued" (calls made).  The workers go on calling through the exit, as a
 * real program's threads would, except in the long mode, where the handler
 * stops them from issuing more, so that "issued" is exact there: the rows
 * plus records_lost must equal it. */
#include "cap_util.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>

#define WORKERS 6
#define COPY_BYTES (1024u * 1024u)
#define ROUNDS_BEFORE_EXIT 10

enum { K_COPY, K_SYNC, K_ALLOC, K_FREE, K_ERROR, K_COUNT };
static const char *const kind_names[K_COUNT] = {"copy", "sync", "alloc", "free", "error"};

typedef struct worker {
    int index;
    pthread_t thread;
    _Atomic long tid;
    /* 1 while deciding to issue a call: the atexit handler waits for 0, so a
     * call counted is a call made and a call made is a call counted. */
    _Atomic int gate;
    _Atomic long issued[K_COUNT];
    _Atomic long done[K_COUNT];
    _Atomic long rounds;
} worker;

static worker workers[WORKERS];
static int n_workers = WORKERS;
static _Atomic int stopping;
static bool long_mode;
static _Atomic int exit_from_worker;
static int counts_fd = -1;

/* Counts one call of kind k about to be made; false (the caller parks) once
 * the process is exiting, in the long mode. */
static bool issue(worker *w, int k)
{
    atomic_store(&w->gate, 1);
    if (long_mode && atomic_load(&stopping)) {
        atomic_store(&w->gate, 0);
        return false;
    }
    atomic_fetch_add(&w->issued[k], 1);
    atomic_store(&w->gate, 0);
    return true;
}

static void park(void)
{
    for (;;)
        pause();
}

static void note(worker *w, int k, cudaError_t rc)
{
    atomic_fetch_add(&w->done[k], 1);
    if (rc != cudaSuccess)
        atomic_fetch_add(&w->issued[K_ERROR], 1);
}

static void *work(void *p)
{
    worker *w = p;
    atomic_store(&w->tid, cap_tid());
    int role = w->index / 2;   /* 0 memcpy, 1 async + sync, 2 malloc + free */
    void *dev = NULL, *host = malloc(COPY_BYTES);
    cudaStream_t s = NULL;
    CHECK(host);
    memset(host, w->index, COPY_BYTES);
    if (role != 2) {
        if (!issue(w, K_ALLOC))
            park();
        note(w, K_ALLOC, cudaMalloc(&dev, COPY_BYTES));
    }
    if (role == 1)
        CHECK_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));   /* not recorded */
    for (unsigned round = 0;; round++) {
        size_t bytes = 4096u * (1u + (round * 7919u + (unsigned)w->index * 131u) % 256u);
        if (w->index == 0 && atomic_load(&exit_from_worker) &&
            atomic_load(&w->rounds) >= ROUNDS_BEFORE_EXIT)
            exit(9);
        switch (role) {
        case 0:
            if (!issue(w, K_COPY))
                park();
            note(w, K_COPY, cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
            break;
        case 1:
            if (!issue(w, K_COPY))
                park();
            note(w, K_COPY, cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, s));
            if (!issue(w, K_SYNC))
                park();
            note(w, K_SYNC, cudaStreamSynchronize(s));
            break;
        default: {
            void *d = NULL;
            if (!issue(w, K_ALLOC))
                park();
            note(w, K_ALLOC, cudaMalloc(&d, 4096u << (w->index % 4)));
            if (!issue(w, K_FREE))
                park();
            note(w, K_FREE, cudaFree(d));
            break;
        }
        }
        atomic_fetch_add(&w->rounds, 1);
    }
    return NULL;
}

/* The long mode's worker: one copy that outlasts the profiler's wait. */
static void *work_long(void *p)
{
    worker *w = p;
    atomic_store(&w->tid, cap_tid());
    size_t n = 64u << 20;
    void *dev = NULL, *host = calloc(1, n);
    CHECK(host);
    if (!issue(w, K_ALLOC))
        park();
    note(w, K_ALLOC, cudaMalloc(&dev, n));
    atomic_fetch_add(&w->rounds, 1);
    if (!issue(w, K_COPY))
        park();
    note(w, K_COPY, cudaMemcpy(dev, host, n, cudaMemcpyHostToDevice));
    park();
    return NULL;
}

static void stop_and_count(void)
{
    atomic_store(&stopping, 1);
    long issued[K_COUNT] = {0}, done[K_COUNT] = {0};
    for (int i = 0; i < n_workers; i++) {
        for (int k = 0; k < K_COUNT; k++)
            done[k] += atomic_load(&workers[i].done[k]);
        while (atomic_load(&workers[i].gate))
            sched_yield();
        for (int k = 0; k < K_COUNT; k++)
            issued[k] += atomic_load(&workers[i].issued[k]);
    }
    char buf[512];
    int len = 0;
    for (int k = 0; k < K_COUNT; k++)
        len += snprintf(buf + len, sizeof buf - (size_t)len, "done_%s %ld\nissued_%s %ld\n",
                        kind_names[k], done[k], kind_names[k], issued[k]);
    ssize_t wr = write(counts_fd, buf, (size_t)len);
    (void)wr;
}

/* True once the thread is asleep in the simulator's clock_nanosleep (system
 * call 230 on x86-64, 115 on arm64): inside the copy, past our hook's entry. */
static bool in_sleep(long tid)
{
    char path[64], line[64] = "";
    snprintf(path, sizeof path, "/proc/self/task/%ld/syscall", tid);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return false;
    bool yes = fgets(line, sizeof line, f) != NULL &&
#if defined(__aarch64__)
               strncmp(line, "115 ", 4) == 0;
#else
               strncmp(line, "230 ", 4) == 0;
#endif
    fclose(f);
    return yes;
}

int main(int argc, char **argv)
{
    CHECK(argc == 3);
    const char *mode = argv[1];
    counts_fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    CHECK(counts_fd >= 0);
    CHECK(atexit(stop_and_count) == 0);
    printf("start %s\n", mode);   /* left in stdio's buffer: exit flushes it */
    long_mode = strcmp(mode, "long") == 0;
    if (long_mode)
        n_workers = 1;
    for (int i = 0; i < n_workers; i++) {
        workers[i].index = i;
        CHECK(pthread_create(&workers[i].thread, NULL, long_mode ? work_long : work,
                             &workers[i]) == 0);
    }
    if (strcmp(mode, "thread") == 0) {
        atomic_store(&exit_from_worker, 1);
        park();
    }
    for (int i = 0; i < n_workers; i++)
        while (atomic_load(&workers[i].rounds) < (long_mode ? 1 : ROUNDS_BEFORE_EXIT))
            sched_yield();
    if (long_mode) {
        while (!in_sleep(atomic_load(&workers[0].tid)))
            sched_yield();
        exit(3);
    }
    if (strcmp(mode, "exit") == 0)
        exit(7);
    CHECK(strcmp(mode, "return") == 0);
    return 5;
}
