/* pinned_vs_pageable.c: the same uploads from pageable and from pinned memory,
 * timed with CUDA events: what the host is held for, and what the link does. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call)                                                                      \
    do {                                                                                 \
        cudaError_t err_ = (call);                                                       \
        if (err_ != cudaSuccess) {                                                       \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                \
                    cudaGetErrorString(err_));                                           \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Issues `reps` async uploads of `bytes` from src on stream s and reports how
 * long the host was held by the calls and how long the device took. */
static void measure(const char *label, const void *src, void *dst, size_t bytes, int reps,
                    cudaStream_t s)
{
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventRecord(start, s));
    double t0 = now_ms();
    for (int i = 0; i < reps; i++)
        CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s));
    double held = now_ms() - t0;
    CHECK(cudaEventRecord(stop, s));
    CHECK(cudaEventSynchronize(stop));
    float device_ms;
    CHECK(cudaEventElapsedTime(&device_ms, start, stop));
    double gbps = (double)bytes * reps / (device_ms / 1e3) / 1e9;
    printf("%-9s %d x %zu MiB: host held %7.2f ms, device %7.2f ms, %6.2f GB/s\n", label, reps,
           bytes >> 20, held, device_ms, gbps);
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
}

int main(void)
{
    const size_t bytes = 64u << 20;
    const int reps = 8;
    int devices = 0;
    CHECK(cudaGetDeviceCount(&devices));
    struct cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("device 0: %s, %zu MiB\n", prop.name, (size_t)(prop.totalGlobalMem >> 20));

    void *dev;
    CHECK(cudaMalloc(&dev, bytes));
    char *pageable = malloc(bytes);
    char *pinned;
    CHECK(cudaMallocHost((void **)&pinned, bytes));
    if (pageable == NULL)
        return 1;
    memset(pageable, 1, bytes);
    memset(pinned, 1, bytes);

    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    measure("pageable", pageable, dev, bytes, reps, s);
    measure("pinned", pinned, dev, bytes, reps, s);

    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFreeHost(pinned));
    free(pageable);
    CHECK(cudaFree(dev));
    printf("pageable async copies hold the host for the whole transfer; pinned ones return at once\n");
    return 0;
}
