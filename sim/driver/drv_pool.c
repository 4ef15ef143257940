/* drv_pool.c: the stream-ordered allocator: each device's default memory
 * pool, cuMemAllocAsync / cuMemAllocFromPoolAsync and cuMemFreeAsync.
 *
 * The model: an allocation takes device memory from the device's first-fit
 * allocator at the call (so cuMemGetInfo sees it at once), which is usable in
 * stream order as CUDA promises; a free is work on its stream, and the memory
 * goes back when the stream reaches it.  A pool holds nothing beyond its live
 * allocations: the release threshold is kept and reported but every free
 * gives its memory straight back, as a real pool with threshold 0 does at the
 * next synchronization. */
#include "xpsim_driver.h"
#include "xpsim_graph.h"
#include "xpsim_stream.h"

#include <pthread.h>
#include <stdlib.h>

struct CUmemPoolHandle_st {
    cuuint64_t release_threshold;
    int reuse[3];             /* the REUSE_* attributes, in enum order */
    cuuint64_t used, used_high, reserved_high;
};

/* g_lock guards every pool's fields. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static bool g_pools_ready;    /* g_lock */
static struct CUmemPoolHandle_st g_pools[XPSIM_MAX_DEVICES];

static void pools_ready_locked(void)
{
    if (g_pools_ready)
        return;
    /* CUDA's defaults: every reuse policy enabled, threshold 0. */
    for (int i = 0; i < XPSIM_MAX_DEVICES; i++)
        g_pools[i] = (struct CUmemPoolHandle_st){.reuse = {1, 1, 1}};
    g_pools_ready = true;
}

CUmemoryPool xpdrv_default_pool(int device)
{
    return device >= 0 && device < xpdrv_device_count() ? &g_pools[device] : NULL;
}

/* The device a pool handle belongs to, -1 for anything but a default pool.
 * Handles are compared, never dereferenced, until they are known. */
static int pool_device(CUmemoryPool pool)
{
    for (int i = 0; i < xpdrv_device_count(); i++)
        if (pool == &g_pools[i])
            return i;
    return -1;
}

static void account(int device, cuuint64_t bytes, bool taken)
{
    struct CUmemPoolHandle_st *p = &g_pools[device];
    pthread_mutex_lock(&g_lock);
    pools_ready_locked();
    if (taken) {
        p->used += bytes;
        if (p->used > p->used_high)
            p->used_high = p->used;
        /* The pool's backing memory is exactly what is in use. */
        if (p->used > p->reserved_high)
            p->reserved_high = p->used;
    } else {
        p->used -= bytes;
    }
    pthread_mutex_unlock(&g_lock);
}

XPSIM_API CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
    if (pool_out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_device(dev);
    if (rc == CUDA_SUCCESS)
        *pool_out = &g_pools[dev];
    return rc;
}

/* Only default pools exist (cuMemPoolCreate is not simulated), so a device's
 * current pool is always its default pool. */
XPSIM_API CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
    return cuDeviceGetDefaultMemPool(pool, dev);
}

XPSIM_API CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
    CUresult rc = xpdrv_check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    return pool_device(pool) == dev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* CUDA 13's location-based lookups: device memory only. */
static CUresult location_pool(CUmemoryPool *pool_out, const CUmemLocation *location,
                              CUmemAllocationType type)
{
    if (pool_out == NULL || location == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (location->type != CU_MEM_LOCATION_TYPE_DEVICE || type != CU_MEM_ALLOCATION_TYPE_PINNED)
        return location->type == CU_MEM_LOCATION_TYPE_INVALID ? CUDA_ERROR_INVALID_VALUE
                                                               : CUDA_ERROR_NOT_SUPPORTED;
    return cuDeviceGetDefaultMemPool(pool_out, location->id);
}

XPSIM_API CUresult cuMemGetDefaultMemPool(CUmemoryPool *pool_out, CUmemLocation *location,
                                          CUmemAllocationType type)
{
    return location_pool(pool_out, location, type);
}

XPSIM_API CUresult cuMemGetMemPool(CUmemoryPool *pool, CUmemLocation *location,
                                   CUmemAllocationType type)
{
    return location_pool(pool, location, type);
}

XPSIM_API CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    /* Nothing is cached beyond live allocations: nothing to trim. */
    return pool_device(pool) >= 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

XPSIM_API CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    int dev = pool_device(pool);
    if (dev < 0 || value == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUmemPoolHandle_st *p = &g_pools[dev];
    rc = CUDA_SUCCESS;
    pthread_mutex_lock(&g_lock);
    pools_ready_locked();
    switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        p->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES] = *(int *)value != 0;
        break;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
        p->release_threshold = *(cuuint64_t *)value;
        break;
    /* The watermarks can only be reset, to the current value. */
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
        if (*(cuuint64_t *)value != 0)
            rc = CUDA_ERROR_INVALID_VALUE;
        else if (attr == CU_MEMPOOL_ATTR_USED_MEM_HIGH)
            p->used_high = p->used;
        else
            p->reserved_high = p->used;
        break;
    default:
        rc = CUDA_ERROR_INVALID_VALUE;
        break;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

XPSIM_API CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    int dev = pool_device(pool);
    if (dev < 0 || value == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    const struct CUmemPoolHandle_st *p = &g_pools[dev];
    rc = CUDA_SUCCESS;
    pthread_mutex_lock(&g_lock);
    pools_ready_locked();
    switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        *(int *)value = p->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES];
        break;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: *(cuuint64_t *)value = p->release_threshold; break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: *(cuuint64_t *)value = p->used; break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: *(cuuint64_t *)value = p->reserved_high; break;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH: *(cuuint64_t *)value = p->used_high; break;
    default: rc = CUDA_ERROR_INVALID_VALUE; break;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

/* pool NULL: the current pool of the stream's device (cuMemAllocAsync). */
static CUresult alloc_async(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream h,
                            bool ptds, const char *api)
{
    if (dptr == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    int cur;
    CUresult rc = xpdrv_enter(&cur);
    if (rc != CUDA_SUCCESS)
        return rc;
    CUstream s;
    if ((rc = xpsim_stream_resolve(h, ptds, cur, &s)) != CUDA_SUCCESS)
        return rc;
    /* Memory allocation and free nodes are not simulated: refused on a
     * capturing stream (as a synchronous use of it). */
    if ((rc = xpsim_capture_sync(s)) != CUDA_SUCCESS)
        return rc;
    int dev = pool ? pool_device(pool) : xpsim_stream_device(s);
    if (dev < 0 || bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    rc = xpsim_devmem_alloc(&xpdrv_device(dev)->mem, bytes, XPSIM_BLOCK_POOL, NULL, dptr);
    if (rc == CUDA_SUCCESS)
        account(dev, (bytes + XPSIM_DEVMEM_ALIGN - 1) & ~(uint64_t)(XPSIM_DEVMEM_ALIGN - 1), true);
    xpsim_debug("%s(%zu) on device %d stream %p -> %d %#llx", api, bytes, dev, (void *)s, (int)rc,
                rc == CUDA_SUCCESS ? (unsigned long long)*dptr : 0ull);
    return rc;
}

XPDRV_TWINS(cuMemAllocAsync, cuMemAllocAsync_ptsz, (CUdeviceptr *dptr, size_t bytesize, CUstream h),
            alloc_async(dptr, bytesize, NULL, h, ptds, "cuMemAllocAsync"))
XPDRV_TWINS(cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync_ptsz,
            (CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream h),
            pool == NULL ? CUDA_ERROR_INVALID_VALUE
                         : alloc_async(dptr, bytesize, pool, h, ptds, "cuMemAllocFromPoolAsync"))

CUresult xpdrv_pool_free_now(int device, CUdeviceptr dptr)
{
    uint64_t size = 0;
    CUresult rc = xpsim_devmem_release(&xpdrv_device(device)->mem, dptr,
                                       XPSIM_BLOCK_BIT(XPSIM_BLOCK_POOL), &size);
    if (rc == CUDA_SUCCESS)
        account(device, size, false);
    return rc;
}

typedef struct async_free {
    int device;
    CUdeviceptr ptr;
    uint64_t size;
    bool pooled;              /* from the pool, not a cuMemAlloc'd block */
} async_free;

/* The free is done in release rather than run: release runs also when a
 * sticky error on the device skips the work, and the memory must come back
 * either way.  It runs when the stream reaches the free, before completion is
 * published, so a host that synchronized sees the memory back. */
static void finish_free(void *arg)
{
    async_free *f = arg;
    (void)xpsim_devmem_release(&xpdrv_device(f->device)->mem, f->ptr,
                               XPSIM_BLOCK_BIT(XPSIM_BLOCK_FREEING), NULL);
    if (f->pooled)
        account(f->device, f->size, false);
    xpsim_debug("device %d: %#llx freed in stream order", f->device, (unsigned long long)f->ptr);
    free(f);
}

static CUresult free_async(CUdeviceptr dptr, CUstream h, bool ptds)
{
    int cur;
    CUresult rc = xpdrv_enter(&cur);
    if (rc != CUDA_SUCCESS)
        return rc;
    CUstream s;
    if ((rc = xpsim_stream_resolve(h, ptds, cur, &s)) != CUDA_SUCCESS ||
        (rc = xpsim_capture_sync(s)) != CUDA_SUCCESS)
        return rc;
    if (dptr == 0)
        return CUDA_SUCCESS;   /* like cuMemFree(0) */
    xpdrv_ptr info;
    xpdrv_classify(dptr, &info);
    if (info.kind != XPDRV_MEM_DEVICE || info.base != dptr || info.origin == XPDRV_FROM_VMM ||
        info.origin == XPDRV_FROM_IPC || info.device < 0)
        return CUDA_ERROR_INVALID_VALUE;
    async_free *f = malloc(sizeof *f);
    if (f == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    /* From now on it is no allocation (a second free is an error, copies to
     * it fail), yet its memory is taken until the stream gets there.  Memory
     * from cuMemAlloc may be freed in stream order too. */
    xpsim_block_kind old;
    rc = xpsim_devmem_retag(&xpdrv_device(info.device)->mem, dptr,
                            XPSIM_BLOCK_BIT(XPSIM_BLOCK_POOL) | XPSIM_BLOCK_BIT(XPSIM_BLOCK_ALLOC),
                            XPSIM_BLOCK_FREEING, &old, &f->size);
    if (rc != CUDA_SUCCESS) {
        free(f);
        return rc;
    }
    f->device = info.device;
    f->ptr = dptr;
    f->pooled = old == XPSIM_BLOCK_POOL;
    xpsim_work w = {.run = NULL, .release = finish_free, .ctx = f, .duration_ns = 0,
                    .lane = XPSIM_LANE_NONE, .fault = CUDA_SUCCESS, .what = "memFreeAsync"};
    xpsim_stream_enqueue(s, &w);
    xpsim_debug("cuMemFreeAsync(%#llx) stream %p", (unsigned long long)dptr, (void *)s);
    return CUDA_SUCCESS;
}

XPDRV_TWINS(cuMemFreeAsync, cuMemFreeAsync_ptsz, (CUdeviceptr dptr, CUstream h),
            free_async(dptr, h, ptds))
