/* Stream-ordered allocation: cudaMallocAsync takes device memory at the call, cudaFreeAsync gives it back only when its stream reaches the free, cudaFree of a pool allocation does not synchronize, and the default pool reports its attributes.  Needs XFERPROF_SIM_BANDWIDTH=pinned=100M,pageable=100M and XFERPROF_SIM_MEMORY=512M. */
#include "xpt_check.h"

#include <cuda.h>

#define N (16u << 20)   /* ~168 ms at 100 MB/s: a free queued behind it waits that long */
#define BIG (64u << 20)

static size_t free_bytes(void)
{
    size_t f = 0, t = 0;
    CHECK_OK(cudaMemGetInfo(&f, &t));
    return f;
}

static unsigned long long pool_attr(cudaMemPool_t pool, enum cudaMemPoolAttr attr)
{
    cuuint64_t v = 0;
    CHECK_OK(cudaMemPoolGetAttribute(pool, attr, &v));
    return (unsigned long long)v;
}

int main(void)
{
    CHECK_OK(cudaFree(NULL));
    int supported = 0;
    CHECK_OK(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, 0));
    CHECK_EQ(supported, 1);

    unsigned char *h = NULL, *back = NULL;
    CHECK_OK(cudaMallocHost((void **)&h, N));
    CHECK_OK(cudaMallocHost((void **)&back, N));
    cudaStream_t s;
    CHECK_OK(cudaStreamCreate(&s));
    const size_t free0 = free_bytes();

    /* The memory is taken at the call, before the stream has done anything. */
    void *p = NULL;
    CHECK_OK(cudaMallocAsync(&p, BIG, s));
    CHECK(p != NULL && (uintptr_t)p % 256 == 0);
    CHECK_EQ(free_bytes(), free0 - BIG);
    struct cudaPointerAttributes pa;
    CHECK_OK(cudaPointerGetAttributes(&pa, p));
    CHECK_EQ(pa.type, cudaMemoryTypeDevice);

    /* Usable in stream order: a copy in, a copy out. */
    xpt_fill(h, N, 1);
    CHECK_OK(cudaMemcpyAsync(p, h, N, cudaMemcpyHostToDevice, s));
    CHECK_OK(cudaMemcpyAsync(back, p, N, cudaMemcpyDeviceToHost, s));

    /* The free waits behind those copies: the memory is still taken when
     * the call returns, and comes back once the stream is past the free. */
    CHECK_OK(cudaFreeAsync(p, s));
    CHECK_CUDA(cudaStreamQuery(s), cudaErrorNotReady);
    CHECK_MSG(free_bytes() == free0 - BIG, "free bytes %zu right after cudaFreeAsync, expected %zu",
              free_bytes(), free0 - BIG);
    /* Already freed (in stream order): a second free is an error. */
    CHECK_CUDA(cudaFreeAsync(p, s), cudaErrorInvalidValue);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidValue);
    CHECK_CUDA(cudaStreamQuery(s), cudaErrorNotReady);
    CHECK_EQ(free_bytes(), free0 - BIG);
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_EQ(free_bytes(), free0);
    CHECK_PATTERN(back, N, 1);
    CHECK_CUDA(cudaFree(p), cudaErrorInvalidValue);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidValue);

    /* A free on another stream happens when that stream reaches it, however
     * busy the allocating stream is. */
    cudaStream_t s2;
    CHECK_OK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    void *q = NULL;
    CHECK_OK(cudaMallocAsync(&q, BIG, s));
    CHECK_OK(cudaMemcpyAsync(q, h, N, cudaMemcpyHostToDevice, s));
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_OK(cudaMemcpyAsync(back, q, N, cudaMemcpyDeviceToHost, s2));
    CHECK_OK(cudaFreeAsync(q, s2));
    CHECK_EQ(free_bytes(), free0 - BIG);
    CHECK_OK(cudaStreamSynchronize(s2));
    CHECK_EQ(free_bytes(), free0);

    /* cudaFree of a pool allocation frees at once and does not wait for the
     * device ("no implicit synchronization"): the copy queued before it is
     * still running when it returns. */
    void *r = NULL, *busy = NULL;
    CHECK_OK(cudaMallocAsync(&r, BIG, s));
    CHECK_OK(cudaMalloc(&busy, N));
    CHECK_OK(cudaMemcpyAsync(busy, h, N, cudaMemcpyHostToDevice, s));
    CHECK_OK(cudaFree(r));
    CHECK_CUDA(cudaStreamQuery(s), cudaErrorNotReady);
    CHECK_EQ(free_bytes(), free0 - N);
    CHECK_OK(cudaStreamSynchronize(s));

    /* Memory from cudaMalloc may be freed in stream order too. */
    CHECK_OK(cudaMemcpyAsync(back, busy, N, cudaMemcpyDeviceToHost, s));
    CHECK_OK(cudaFreeAsync(busy, s));
    CHECK_EQ(free_bytes(), free0 - N);
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_EQ(free_bytes(), free0);
    CHECK_PATTERN(back, N, 1);

    /* The default pool: its attributes, and allocations from it by name. */
    cudaMemPool_t pool = NULL, current = NULL;
    CHECK_OK(cudaDeviceGetDefaultMemPool(&pool, 0));
    CHECK(pool != NULL);
    CHECK_OK(cudaDeviceGetMemPool(&current, 0));
    CHECK(current == pool);
    CHECK_CUDA(cudaDeviceGetDefaultMemPool(&pool, 7), cudaErrorInvalidDevice);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidDevice);
    CHECK_EQ(pool_attr(pool, cudaMemPoolAttrReleaseThreshold), 0);
    cuuint64_t threshold = UINT64_MAX;
    CHECK_OK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
    CHECK(pool_attr(pool, cudaMemPoolAttrReleaseThreshold) == UINT64_MAX);
    int reuse = -1;
    CHECK_OK(cudaMemPoolGetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &reuse));
    CHECK_EQ(reuse, 1);
    CHECK_EQ(pool_attr(pool, cudaMemPoolAttrUsedMemCurrent), 0);
    void *f = NULL;
    CHECK_OK(cudaMallocFromPoolAsync(&f, BIG, pool, s));
    CHECK_EQ(free_bytes(), free0 - BIG);
    CHECK_EQ(pool_attr(pool, cudaMemPoolAttrUsedMemCurrent), BIG);
    CHECK(pool_attr(pool, cudaMemPoolAttrUsedMemHigh) >= BIG);
    /* The driver names the pool an allocation came from. */
    CUresult (*get_attr)(void *, CUpointer_attribute, CUdeviceptr) = NULL;
    enum cudaDriverEntryPointQueryResult qr;
    CHECK_OK(cudaGetDriverEntryPointByVersion("cuPointerGetAttribute", (void **)&get_attr, 13000,
                                              cudaEnableDefault, &qr));
    CHECK(get_attr != NULL && qr == cudaDriverEntryPointSuccess);
    CUmemoryPool owner = NULL;
    CHECK_EQ(get_attr(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, (CUdeviceptr)(uintptr_t)f),
             CUDA_SUCCESS);
    CHECK(owner == (CUmemoryPool)pool);
    CHECK_OK(cudaFreeAsync(f, s));
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_EQ(pool_attr(pool, cudaMemPoolAttrUsedMemCurrent), 0);
    CHECK_EQ(free_bytes(), free0);
    CHECK_OK(cudaMemPoolTrimTo(pool, 0));

    /* Errors: no pool, too big, a bad stream. */
    CHECK_CUDA(cudaMallocFromPoolAsync(&f, 4096, NULL, s), cudaErrorInvalidValue);
    CHECK_CUDA(cudaMallocAsync(&f, 1ull << 40, s), cudaErrorMemoryAllocation);
    CHECK_CUDA(cudaGetLastError(), cudaErrorMemoryAllocation);
    CHECK_EQ(free_bytes(), free0);

    CHECK_OK(cudaStreamDestroy(s2));
    CHECK_OK(cudaStreamDestroy(s));
    CHECK_OK(cudaFreeHost(h));
    CHECK_OK(cudaFreeHost(back));
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);
    return 0;
}
