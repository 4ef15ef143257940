/* drv_pool.c: the stream-ordered allocator: each device's default memory
 * pool, pools of cuMemPoolCreate, cuMemAllocAsync / cuMemAllocFromPoolAsync
 * and cuMemFreeAsync.
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
#include <unistd.h>

struct CUmemPoolHandle_st {
    cuuint64_t release_threshold;
    int reuse[3];             /* the REUSE_* attributes, in enum order */
    cuuint64_t used, used_high, reserved_high;
    int device;
    xpdrv_pool_kind kind;
    /* CREATED: the handle types it may be exported as; destroyed while
     * allocations of it were live (the handle is gone, the struct stays
     * until the last is freed, as their blocks name it). */
    CUmemAllocationHandleType handle_types;
    bool destroyed;
    /* IMPORTED: our duplicate of the descriptor it was imported from (the
     * exporter's device file) and that file's inode. */
    int fd;
    uint64_t ino;
    struct CUmemPoolHandle_st *next;   /* g_created */
};

/* g_lock guards every pool's fields and the list of created pools. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static bool g_pools_ready;    /* g_lock */
static struct CUmemPoolHandle_st g_pools[XPSIM_MAX_DEVICES];
static struct CUmemPoolHandle_st *g_current[XPSIM_MAX_DEVICES];   /* g_lock; NULL: default */
static struct CUmemPoolHandle_st *g_created;   /* g_lock: created and imported, live */

static void pools_ready_locked(void)
{
    if (g_pools_ready)
        return;
    /* CUDA's defaults: every reuse policy enabled, threshold 0. */
    for (int i = 0; i < XPSIM_MAX_DEVICES; i++)
        g_pools[i] = (struct CUmemPoolHandle_st){.reuse = {1, 1, 1}, .device = i, .fd = -1};
    g_pools_ready = true;
}

/* The live pool a handle names, NULL for anything else.  Handles are
 * compared, never dereferenced, until they are known. */
static struct CUmemPoolHandle_st *pool_find_locked(CUmemoryPool pool)
{
    for (int i = 0; i < xpdrv_device_count(); i++)
        if (pool == &g_pools[i])
            return pool;
    for (struct CUmemPoolHandle_st *p = g_created; p != NULL; p = p->next)
        if (p == pool)
            return p;
    return NULL;
}

bool xpdrv_pool_info(CUmemoryPool pool, xpdrv_pool_desc *out)
{
    pthread_mutex_lock(&g_lock);
    pools_ready_locked();
    const struct CUmemPoolHandle_st *p = pool_find_locked(pool);
    if (p != NULL)
        *out = (xpdrv_pool_desc){.device = p->device, .kind = p->kind,
                                 .handle_types = p->handle_types, .fd = p->fd, .ino = p->ino};
    pthread_mutex_unlock(&g_lock);
    return p != NULL;
}

/* The device of a pool that allocations may come from, -1 for an unknown
 * or imported one. */
static int pool_device(CUmemoryPool pool)
{
    xpdrv_pool_desc d;
    return xpdrv_pool_info(pool, &d) && d.kind != XPDRV_POOL_IMPORTED ? d.device : -1;
}

static void pool_add(struct CUmemPoolHandle_st *p)
{
    pthread_mutex_lock(&g_lock);
    p->next = g_created;
    g_created = p;
    pthread_mutex_unlock(&g_lock);
}

CUresult xpdrv_pool_import(int device, int fd, uint64_t ino, CUmemoryPool *out)
{
    struct CUmemPoolHandle_st *p = calloc(1, sizeof *p);
    if (p == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *p = (struct CUmemPoolHandle_st){.reuse = {1, 1, 1}, .device = device,
                                     .kind = XPDRV_POOL_IMPORTED, .fd = fd, .ino = ino};
    pool_add(p);
    *out = p;
    return CUDA_SUCCESS;
}

/* The pool a block of POOL memory came from (its owner). */
CUmemoryPool xpdrv_pool_of(int device, CUdeviceptr ptr)
{
    xpsim_block b;
    if (!xpsim_devmem_lookup(&xpdrv_device(device)->mem, ptr, &b) || b.kind != XPSIM_BLOCK_POOL)
        return NULL;
    return (CUmemoryPool)(uintptr_t)b.owner;
}

static void account(struct CUmemPoolHandle_st *p, cuuint64_t bytes, bool taken)
{
    bool gone = false;
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
        gone = p->destroyed && p->used == 0;
    }
    pthread_mutex_unlock(&g_lock);
    if (gone)
        free(p);
}

/* Device memory of one device, pinned; exportable as a POSIX descriptor or
 * not at all (the other handle types are other platforms' or fabrics'). */
XPSIM_API CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
    if (pool == NULL || props == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
        props->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return props->location.type == CU_MEM_LOCATION_TYPE_DEVICE ||
                       props->location.type == CU_MEM_LOCATION_TYPE_INVALID
                   ? CUDA_ERROR_INVALID_VALUE
                   : CUDA_ERROR_NOT_SUPPORTED;
    if ((rc = xpdrv_check_device(props->location.id)) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_VALUE;
    if (props->handleTypes != CU_MEM_HANDLE_TYPE_NONE &&
        props->handleTypes != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return CUDA_ERROR_NOT_SUPPORTED;
    struct CUmemPoolHandle_st *p = calloc(1, sizeof *p);
    if (p == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *p = (struct CUmemPoolHandle_st){.reuse = {1, 1, 1}, .device = props->location.id,
                                     .kind = XPDRV_POOL_CREATED,
                                     .handle_types = props->handleTypes, .fd = -1};
    pool_add(p);
    *pool = p;
    xpsim_debug("cuMemPoolCreate(device %d, handle types %#x) -> %p", p->device,
                (unsigned)p->handle_types, (void *)p);
    return CUDA_SUCCESS;
}

/* A device's current pool goes back to its default; live allocations stay
 * valid, and the pool's memory goes when the last is freed. */
XPSIM_API CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    struct CUmemPoolHandle_st *gone = NULL;
    bool found = false;
    int fd = -1;
    pthread_mutex_lock(&g_lock);
    pools_ready_locked();
    for (struct CUmemPoolHandle_st **pp = &g_created; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == pool) {   /* a default pool is not in the list: invalid value */
            found = true;
            gone = *pp;
            *pp = gone->next;
            if (g_current[gone->device] == gone)
                g_current[gone->device] = NULL;
            fd = gone->fd;
            gone->destroyed = true;
            if (gone->used != 0)
                gone = NULL;   /* freed with its last allocation (account) */
            break;
        }
    }
    pthread_mutex_unlock(&g_lock);
    if (!found)
        return CUDA_ERROR_INVALID_VALUE;
    if (fd >= 0)
        close(fd);
    free(gone);
    return CUDA_SUCCESS;
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

/* The pool cuMemAllocAsync takes from (its default until set). */
static struct CUmemPoolHandle_st *current_pool(int dev)
{
    pthread_mutex_lock(&g_lock);
    pools_ready_locked();
    struct CUmemPoolHandle_st *p = g_current[dev] ? g_current[dev] : &g_pools[dev];
    pthread_mutex_unlock(&g_lock);
    return p;
}

XPSIM_API CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
    if (pool == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_device(dev);
    if (rc == CUDA_SUCCESS)
        *pool = current_pool(dev);
    return rc;
}

/* A pool of that device, not an imported one. */
XPSIM_API CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
    CUresult rc = xpdrv_check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (pool_device(pool) != dev)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    g_current[dev] = pool == &g_pools[dev] ? NULL : pool;
    pthread_mutex_unlock(&g_lock);
    return CUDA_SUCCESS;
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
    xpdrv_pool_desc d;
    return xpdrv_pool_info(pool, &d) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

XPSIM_API CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (value == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    rc = CUDA_SUCCESS;
    pthread_mutex_lock(&g_lock);
    pools_ready_locked();
    struct CUmemPoolHandle_st *p = pool_find_locked(pool);
    if (p == NULL) {
        pthread_mutex_unlock(&g_lock);
        return CUDA_ERROR_INVALID_VALUE;
    }
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
    if (value == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    rc = CUDA_SUCCESS;
    pthread_mutex_lock(&g_lock);
    pools_ready_locked();
    const struct CUmemPoolHandle_st *p = pool_find_locked(pool);
    if (p == NULL) {
        pthread_mutex_unlock(&g_lock);
        return CUDA_ERROR_INVALID_VALUE;
    }
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

/* pool NULL: the current pool of the stream's device (cuMemAllocAsync).
 * An imported pool makes no allocations (cuda.h). */
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
    if (pool == NULL)
        pool = current_pool(dev);
    /* The block names its pool (its owner), for the free's accounting. */
    rc = xpsim_devmem_alloc(&xpdrv_device(dev)->mem, bytes, XPSIM_BLOCK_POOL, pool, dptr);
    if (rc == CUDA_SUCCESS)
        account(pool, (bytes + XPSIM_DEVMEM_ALIGN - 1) & ~(uint64_t)(XPSIM_DEVMEM_ALIGN - 1), true);
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
    CUmemoryPool pool = xpdrv_pool_of(device, dptr);
    CUresult rc = xpsim_devmem_release(&xpdrv_device(device)->mem, dptr,
                                       XPSIM_BLOCK_BIT(XPSIM_BLOCK_POOL), &size);
    if (rc == CUDA_SUCCESS && pool != NULL)
        account(pool, size, false);
    return rc;
}

typedef struct async_free {
    int device;
    CUdeviceptr ptr;
    uint64_t size;
    struct CUmemPoolHandle_st *pool;   /* its pool; NULL for a cuMemAlloc'd block */
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
    if (f->pool != NULL)
        account(f->pool, f->size, false);
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
    /* Memory imported from another process's pool: unmapped after the
     * device's queued work, at once (not in stream order). */
    if (info.kind == XPDRV_MEM_DEVICE && info.origin == XPDRV_FROM_IPC && info.base == dptr)
        return xpdrv_ipc_free_imported(dptr);
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
    CUmemoryPool pool = xpdrv_pool_of(info.device, dptr);
    rc = xpsim_devmem_retag(&xpdrv_device(info.device)->mem, dptr,
                            XPSIM_BLOCK_BIT(XPSIM_BLOCK_POOL) | XPSIM_BLOCK_BIT(XPSIM_BLOCK_ALLOC),
                            XPSIM_BLOCK_FREEING, &old, &f->size);
    if (rc != CUDA_SUCCESS) {
        free(f);
        return rc;
    }
    f->device = info.device;
    f->ptr = dptr;
    f->pool = old == XPSIM_BLOCK_POOL ? pool : NULL;
    xpsim_work w = {.run = NULL, .release = finish_free, .ctx = f, .duration_ns = 0,
                    .lane = XPSIM_LANE_NONE, .fault = CUDA_SUCCESS, .what = "memFreeAsync"};
    xpsim_stream_enqueue(s, &w);
    xpsim_debug("cuMemFreeAsync(%#llx) stream %p", (unsigned long long)dptr, (void *)s);
    return CUDA_SUCCESS;
}

XPDRV_TWINS(cuMemFreeAsync, cuMemFreeAsync_ptsz, (CUdeviceptr dptr, CUstream h),
            free_async(dptr, h, ptds))
