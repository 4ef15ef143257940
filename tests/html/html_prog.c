/* html_prog.c: a run with every kind of thing the HTML report draws, for
 * test_html.py: copies of all four directions from pageable and pinned
 * memory (sync, async, async_pageable) on two streams and from two threads,
 * synchronizations, an NVTX range around a step, device memory rising and
 * falling, and one allocation that fails (out of memory).  Prints
 * "copies N" (every copy it made, for the driver to count marks).
 *
 * With "bulk N" it instead makes N small async copies (pinned, one stream):
 * a run too big to draw every copy of. */
#include "../capture/cap_util.h"

#include <pthread.h>

#include <nvtx3/nvToolsExt.h>

#define KIB 1024u
#define MIB (1024u * 1024u)

static void *dev_a, *pinned;
static cudaStream_t s2;
static int copies;

/* Async downloads into pinned memory on s2 from a second thread, then a wait. */
static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 4; i++)
        CHECK_OK(cudaMemcpyAsync((char *)pinned + 64 * KIB, dev_a, 32 * KIB, cudaMemcpyDeviceToHost, s2));
    CHECK_OK(cudaStreamSynchronize(s2));
    return NULL;
}

static int bulk(long n)
{
    void *dev = NULL, *host = NULL;
    cudaStream_t s;
    CHECK_OK(cudaMalloc(&dev, 4096));
    CHECK_OK(cudaMallocHost(&host, 4096));
    CHECK_OK(cudaStreamCreate(&s));
    for (long i = 0; i < n; i++)
        CHECK_OK(cudaMemcpyAsync(dev, host, 64 + (size_t)(i % 64) * 8, cudaMemcpyHostToDevice, s));
    CHECK_OK(cudaStreamSynchronize(s));
    printf("copies %ld\n", n);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "bulk") == 0)
        return bulk(atol(argv[2]));
    void *dev_b = NULL, *dev_c = NULL, *huge = NULL;
    char *pageable = malloc(4 * MIB);
    cudaStream_t s1;
    pthread_t t;
    CHECK(pageable);
    memset(pageable, 1, 4 * MIB);

    CHECK_OK(cudaMalloc(&dev_a, 4 * MIB));
    CHECK_OK(cudaMallocHost(&pinned, 4 * MIB));
    CHECK_OK(cudaStreamCreate(&s1));
    CHECK_OK(cudaStreamCreate(&s2));

    nvtxRangePushA("step 0");
    /* Sync copies: pageable up, pinned down, device to device, host to host. */
    CHECK_OK(cudaMemcpy(dev_a, pageable, 1 * MIB, cudaMemcpyHostToDevice));
    CHECK_OK(cudaMemcpy(pinned, dev_a, 256 * KIB, cudaMemcpyDeviceToHost));
    CHECK_OK(cudaMalloc(&dev_b, 8 * MIB));                /* live 12 MiB: the peak */
    CHECK_OK(cudaMemcpy(dev_b, dev_a, 2 * MIB, cudaMemcpyDeviceToDevice));
    CHECK_OK(cudaMemcpy(pageable + 2 * MIB, pinned, 16 * KIB, cudaMemcpyHostToHost));
    copies += 4;
    /* Async on s1 from pinned (async) and from pageable (async_pageable). */
    for (int i = 0; i < 3; i++)
        CHECK_OK(cudaMemcpyAsync(dev_a, pinned, 512 * KIB, cudaMemcpyHostToDevice, s1));
    CHECK_OK(cudaMemcpyAsync(dev_a, pageable, 2 * MIB, cudaMemcpyHostToDevice, s1));
    copies += 4;
    CHECK_OK(cudaStreamSynchronize(s1));
    nvtxRangePop();

    CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    copies += 4;

    CHECK_OK(cudaFree(dev_b));                            /* live 4 MiB */
    /* Out of memory: far beyond any device. */
    cudaError_t oom = cudaMalloc(&huge, (size_t)1 << 46);
    CHECK(oom == cudaErrorMemoryAllocation);
    (void)cudaGetLastError();
    CHECK_OK(cudaMalloc(&dev_c, 1 * MIB));                /* live 5 MiB */
    CHECK_OK(cudaMemcpy(pageable, dev_c, 64 * KIB, cudaMemcpyDeviceToHost));
    copies += 1;
    CHECK_OK(cudaDeviceSynchronize());
    CHECK_OK(cudaFree(dev_c));
    CHECK_OK(cudaStreamDestroy(s1));
    CHECK_OK(cudaStreamDestroy(s2));
    printf("copies %d\n", copies);
    return 0;
}
