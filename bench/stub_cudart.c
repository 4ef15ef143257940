/* stub_cudart.c: a libcudart.so.13 whose calls return at once, so that
 * bench_overhead measures the preload alone, without the simulator's stream
 * threads and locks (which on a small machine contend with the preload's
 * ingest thread and blur the difference).  Exports, at version
 * libcudart.so.13 as NVIDIA's runtime does, only what bench_overhead calls.
 * Device pointers are made up (never dereferenced); pinned memory is
 * ordinary memory. */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>

#define STUB __attribute__((visibility("default")))

/* Made-up device addresses, far from the program's memory.  Owned by the
 * (single-threaded) benchmark. */
static uintptr_t next_dev = (uintptr_t)0x7e0000000000ull;

STUB cudaError_t cudaMalloc(void **p, size_t n)
{
    *p = (void *)next_dev;
    next_dev += (n + 0xfffffu) & ~(uintptr_t)0xfffffu;
    return cudaSuccess;
}

STUB cudaError_t cudaFree(void *p)
{
    (void)p;
    return cudaSuccess;
}

STUB cudaError_t cudaMallocHost(void **p, size_t n)
{
    return posix_memalign(p, 4096, n) == 0 ? cudaSuccess : cudaErrorMemoryAllocation;
}

STUB cudaError_t cudaFreeHost(void *p)
{
    free(p);
    return cudaSuccess;
}

STUB cudaError_t cudaStreamCreate(cudaStream_t *s)
{
    *s = (cudaStream_t)(uintptr_t)0x5000;
    return cudaSuccess;
}

STUB cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    (void)s;
    return cudaSuccess;
}

STUB cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    (void)s;
    return cudaSuccess;
}

STUB cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind k,
                                 cudaStream_t s)
{
    (void)dst, (void)src, (void)n, (void)k, (void)s;
    return cudaSuccess;
}

STUB const char *cudaGetErrorName(cudaError_t e)
{
    return e == cudaSuccess ? "cudaSuccess" : "cudaError (stub)";
}
