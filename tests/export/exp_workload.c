/* exp_workload.c: a known workload for the export tests.  The main thread
 * makes synchronous copies from pageable and pinned memory, async copies on
 * two streams (pinned: async; pageable: async_pageable), a memset, syncs and
 * one failing copy (an invalid kind); a second thread makes async copies on
 * the second stream.  Device allocations rise to a known peak and fall.
 * Prints what the driver checks: "copies N", "copy_bytes N", "pinned_copies
 * N", "peak_device N", "pinned_host N", "pid N", "main_tid N", "worker_tid N".
 * With the argument "kill" it then dies of SIGKILL, leaving its journal. */
#include "../capture/cap_util.h"

#include <pthread.h>
#include <signal.h>

#define KIB 1024u
#define MIB (1024u * 1024u)

static void *dev_a, *pinned;
static cudaStream_t s2;
static long worker_tid;

/* 3 async D2H copies into pinned memory on s2, then waits for s2. */
static void *worker(void *arg)
{
    (void)arg;
    worker_tid = cap_tid();
    for (int i = 0; i < 3; i++)
        CHECK_OK(cudaMemcpyAsync((char *)pinned + 16 * KIB, dev_a, 8 * KIB,
                                 cudaMemcpyDeviceToHost, s2));
    CHECK_OK(cudaStreamSynchronize(s2));
    return NULL;
}

int main(int argc, char **argv)
{
    void *dev_b = NULL, *dev_c = NULL;
    char *pageable = malloc(MIB);
    cudaStream_t s1;
    CHECK(pageable);
    memset(pageable, 3, MIB);

    CHECK_OK(cudaMalloc(&dev_a, 1 * MIB));
    CHECK_OK(cudaMalloc(&dev_b, 2 * MIB));              /* live: 3 MiB, the peak */
    CHECK_OK(cudaMallocHost(&pinned, 64 * KIB));
    CHECK_OK(cudaStreamCreate(&s1));
    CHECK_OK(cudaStreamCreate(&s2));

    /* Synchronous: pageable H2D 4 KiB, pinned D2H 4 KiB. */
    CHECK_OK(cudaMemcpy(dev_a, pageable, 4 * KIB, cudaMemcpyHostToDevice));
    CHECK_OK(cudaMemcpy(pinned, dev_a, 4 * KIB, cudaMemcpyDeviceToHost));
    /* Async from pinned on s1 (2 x 16 KiB), from pageable on s2 (1 MiB). */
    CHECK_OK(cudaMemcpyAsync(dev_b, pinned, 16 * KIB, cudaMemcpyHostToDevice, s1));
    CHECK_OK(cudaMemcpyAsync(dev_b, pinned, 16 * KIB, cudaMemcpyHostToDevice, s1));
    CHECK_OK(cudaMemcpyAsync(dev_a, pageable, MIB, cudaMemcpyHostToDevice, s2));
    CHECK_OK(cudaMemset(dev_b, 0, 256 * KIB));
    CHECK_OK(cudaStreamSynchronize(s1));

    pthread_t t;
    CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);

    /* The failing call: an invalid kind (a copy of 16 bytes that fails). */
    cudaError_t bad = cudaMemcpy(dev_a, pageable, 16, (enum cudaMemcpyKind)7);
    CHECK(bad != cudaSuccess);
    (void)cudaGetLastError();

    CHECK_OK(cudaFree(dev_b));                           /* live: 1 MiB */
    CHECK_OK(cudaMalloc(&dev_c, 512 * KIB));             /* live: 1.5 MiB */
    CHECK_OK(cudaDeviceSynchronize());
    CHECK_OK(cudaFree(dev_c));
    CHECK_OK(cudaFree(dev_a));
    CHECK_OK(cudaStreamDestroy(s1));
    CHECK_OK(cudaStreamDestroy(s2));
    CHECK_OK(cudaFreeHost(pinned));
    free(pageable);

    printf("copies %d\n", 2 + 3 + 3 + 1);
    printf("copy_bytes %u\n", 4 * KIB + 4 * KIB + 2 * 16 * KIB + MIB + 3 * 8 * KIB + 16);
    printf("pinned_copies %d\n", 1 + 2 + 3);
    printf("async_copies %d\n", 2 + 1 + 3);
    printf("peak_device %u\n", 3 * MIB);
    printf("pinned_host %u\n", 64 * KIB);
    printf("pid %ld\n", (long)getpid());
    printf("main_tid %ld\n", cap_tid());
    printf("worker_tid %ld\n", worker_tid);
    fflush(stdout);
    if (argc > 1 && strcmp(argv[1], "kill") == 0)
        kill(getpid(), SIGKILL);
    return 0;
}
