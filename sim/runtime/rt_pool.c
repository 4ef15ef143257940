/* rt_pool.c: the stream-ordered allocator (cudaMallocAsync, cudaFreeAsync,
 * cudaMallocFromPoolAsync) and the memory pools behind it. */
#include "rt_internal.h"

#include <string.h>

/* cudaMemPool_t is CUmemoryPool, and the attributes share their values. */
_Static_assert(cudaMemPoolReuseFollowEventDependencies ==
                       (int)CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES &&
                   cudaMemPoolAttrReleaseThreshold == (int)CU_MEMPOOL_ATTR_RELEASE_THRESHOLD &&
                   cudaMemPoolAttrUsedMemHigh == (int)CU_MEMPOOL_ATTR_USED_MEM_HIGH,
               "cudaMemPoolAttr values");

static inline void *ptr_of(CUdeviceptr p)
{
    return (void *)(uintptr_t)p;
}

/* from_pool: cudaMallocFromPoolAsync (pool given), else cudaMallocAsync. */
static cudaError_t malloc_async(xprt_api api, void **devPtr, size_t size, bool from_pool,
                                cudaMemPool_t pool, cudaStream_t stream)
{
    if (devPtr == NULL || (from_pool && pool == NULL))
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    if (size == 0) {
        /* Nothing to allocate, like cudaMalloc(0). */
        *devPtr = NULL;
        return cudaSuccess;
    }
    CUdeviceptr p = 0;
    CUresult r = from_pool ? XPRT_CALL(d, cuMemAllocFromPoolAsync, &p, size, pool, (CUstream)stream)
                           : XPRT_CALL(d, cuMemAllocAsync, &p, size, (CUstream)stream);
    if (r == CUDA_SUCCESS)
        *devPtr = ptr_of(p);
    return xprt_result_cu(r);
}

XPRT_EXPORT cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
    return malloc_async(XPRT_LEGACY, devPtr, size, false, NULL, hStream);
}

XPRT_EXPORT cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream)
{
    return malloc_async(XPRT_PTDS, devPtr, size, false, NULL, hStream);
}

XPRT_EXPORT cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t memPool,
                                                cudaStream_t stream)
{
    return malloc_async(XPRT_LEGACY, ptr, size, true, memPool, stream);
}

XPRT_EXPORT cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size,
                                                     cudaMemPool_t memPool, cudaStream_t stream)
{
    return malloc_async(XPRT_PTDS, ptr, size, true, memPool, stream);
}

static cudaError_t free_async(xprt_api api, void *devPtr, cudaStream_t stream)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(
        XPRT_CALL(d, cuMemFreeAsync, (CUdeviceptr)(uintptr_t)devPtr, (CUstream)stream));
}

XPRT_EXPORT cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
    return free_async(XPRT_LEGACY, devPtr, hStream);
}

XPRT_EXPORT cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream)
{
    return free_async(XPRT_PTDS, devPtr, hStream);
}

/* Enters and checks a device ordinal, for the per-device pool queries. */
static cudaError_t enter_device(int device, const xprt_drv **d)
{
    cudaError_t e = xprt_enter(XPRT_LEGACY, d);
    if (e == cudaSuccess && (device < 0 || device >= xprt_device_count()))
        e = cudaErrorInvalidDevice;
    return e;
}

XPRT_EXPORT cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device)
{
    if (memPool == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = enter_device(device, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuDeviceGetDefaultMemPool, memPool, (CUdevice)device));
}

XPRT_EXPORT cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *memPool, int device)
{
    if (memPool == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = enter_device(device, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuDeviceGetMemPool, memPool, (CUdevice)device));
}

XPRT_EXPORT cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t memPool)
{
    const xprt_drv *d;
    cudaError_t e = enter_device(device, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuDeviceSetMemPool, (CUdevice)device, memPool));
}

XPRT_EXPORT cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr,
                                                void *value)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(
        XPRT_CALL(d, cuMemPoolSetAttribute, memPool, (CUmemPool_attribute)attr, value));
}

XPRT_EXPORT cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr,
                                                void *value)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(
        XPRT_CALL(d, cuMemPoolGetAttribute, memPool, (CUmemPool_attribute)attr, value));
}

XPRT_EXPORT cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuMemPoolTrimTo, memPool, minBytesToKeep));
}

_Static_assert(sizeof(struct cudaMemPoolProps) == sizeof(CUmemPoolProps),
               "the runtime's pool properties are the driver's");

XPRT_EXPORT cudaError_t cudaMemPoolCreate(cudaMemPool_t *memPool,
                                          const struct cudaMemPoolProps *poolProps)
{
    if (memPool == NULL || poolProps == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    /* The same fields in the same places, the enums' values the driver's. */
    CUmemPoolProps props;
    memcpy(&props, poolProps, sizeof props);
    return xprt_result_cu(XPRT_CALL(d, cuMemPoolCreate, memPool, &props));
}

XPRT_EXPORT cudaError_t cudaMemPoolDestroy(cudaMemPool_t memPool)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuMemPoolDestroy, memPool));
}
