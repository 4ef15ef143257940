/* drv_context.c: contexts of their own (cuCtxCreate, cuCtxDestroy and the older forms of the context stack calls). */
#include "xpsim_driver.h"
#include "xpsim_stream.h"

#include <pthread.h>
#include <stdlib.h>

/* Every context cuCtxCreate made, destroyed ones included: a handle stays
 * recognizable after cuCtxDestroy (CUDA_ERROR_CONTEXT_IS_DESTROYED where it
 * is still current, CUDA_ERROR_INVALID_CONTEXT elsewhere) instead of
 * pointing at freed memory, for the price of a few dozen bytes each.
 * xpdrv_ctx_lock guards the list. */
static pthread_mutex_t xpdrv_ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static struct CUctx_st *created;
static atomic_ullong next_id = XPSIM_MAX_DEVICES + 1;   /* primaries have 1..16 */

/* Whether ctx is one cuCtxCreate made (destroyed or not): compared by
 * address before anything is read through it. */
static bool is_created(CUcontext ctx)
{
    bool found = false;
    pthread_mutex_lock(&xpdrv_ctx_lock);
    for (const struct CUctx_st *c = created; c != NULL && !found; c = c->next)
        found = c == ctx;
    pthread_mutex_unlock(&xpdrv_ctx_lock);
    return found;
}

static bool is_primary(CUcontext ctx)
{
    for (int i = 0; i < xpdrv_device_count(); i++)
        if (ctx == &xpdrv_device(i)->primary)
            return true;
    return false;
}

bool xpdrv_ctx_valid(CUcontext ctx)
{
    if (ctx == NULL)
        return false;
    if (is_primary(ctx))
        return true;
    return is_created(ctx) && !atomic_load(&ctx->destroyed);
}

void xpdrv_ctx_free_resources(CUcontext ctx)
{
    int dev = ctx->device;
    /* Queued work may still use the memory, as for cuMemFree. */
    (void)xpsim_device_synchronize(dev);
    xpdrv_arrays_drop(ctx);
    xpsim_devmem_free_owned(&xpdrv_device(dev)->mem, ctx);
    xpsim_hostmem_drop_managed(ctx);
}

/* The flags cuCtxCreate takes: one scheduling policy and the CU_CTX_* bits. */
static bool valid_flags(unsigned int flags)
{
    unsigned sched = flags & CU_CTX_SCHED_MASK;
    return (flags & ~(unsigned)CU_CTX_FLAGS_MASK) == 0 &&
           (sched == CU_CTX_SCHED_AUTO || sched == CU_CTX_SCHED_SPIN ||
            sched == CU_CTX_SCHED_YIELD || sched == CU_CTX_SCHED_BLOCKING_SYNC);
}

/* Every form ends here: a new context on dev, pushed on the calling
 * thread's stack, as documented ("associates it with the calling thread"). */
static CUresult create(CUcontext *pctx, unsigned int flags, CUdevice dev, const char *api)
{
    if (pctx == NULL || !valid_flags(flags))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    struct CUctx_st *c = calloc(1, sizeof *c);
    if (c == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    c->device = dev;
    c->flags = flags;
    c->id = atomic_fetch_add(&next_id, 1);
    rc = xpdrv_ctx_push(c);
    if (rc != CUDA_SUCCESS) {
        free(c);
        return rc;
    }
    pthread_mutex_lock(&xpdrv_ctx_lock);
    c->next = created;
    created = c;
    pthread_mutex_unlock(&xpdrv_ctx_lock);
    *pctx = c;
    xpsim_debug("%s(%#x, device %d) -> %p (id %llu)", api, flags, dev, (void *)c, c->id);
    return CUDA_SUCCESS;
}

/* cuda.h maps these names to their newest forms and declares only those. */
#undef cuCtxCreate
#undef cuCtxDestroy
#undef cuCtxPushCurrent
#undef cuCtxPopCurrent

/* CUDA 3.2's form (cuda.h before 12.5 maps cuCtxCreate to it) and the
 * original one, which has the same arguments. */
XPSIM_API CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
XPSIM_API CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return create(pctx, flags, dev, "cuCtxCreate_v2");
}

XPSIM_API CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev);
XPSIM_API CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return create(pctx, flags, dev, "cuCtxCreate");
}

/* CUDA 11.4's form with execution affinity, which no simulated device
 * supports (CU_DEVICE_ATTRIBUTE... has none): asking for any is refused. */
XPSIM_API CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray,
                                  int numParams, unsigned int flags, CUdevice dev);
XPSIM_API CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray,
                                  int numParams, unsigned int flags, CUdevice dev)
{
    if (numParams < 0 || (numParams > 0 && paramsArray == NULL))
        return CUDA_ERROR_INVALID_VALUE;
    if (numParams > 0)
        return CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;
    return create(pctx, flags, dev, "cuCtxCreate_v3");
}

/* CUDA 12.5's form (cuda.h 13's cuCtxCreate): optional parameters, of which
 * execution affinity and CIG (graphics interop) are not simulated. */
XPSIM_API CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
                                  unsigned int flags, CUdevice dev)
{
    if (ctxCreateParams != NULL) {
        if (ctxCreateParams->numExecAffinityParams < 0 ||
            (ctxCreateParams->numExecAffinityParams > 0 &&
             ctxCreateParams->execAffinityParams == NULL))
            return CUDA_ERROR_INVALID_VALUE;
        if (ctxCreateParams->numExecAffinityParams > 0)
            return CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;
        if (ctxCreateParams->cigParams != NULL)
            return CUDA_ERROR_NOT_SUPPORTED;
    }
    return create(pctx, flags, dev, "cuCtxCreate_v4");
}

/* Destroys a created context: its queued work is finished, and its device
 * memory, arrays and managed memory are freed (pool and cuMemCreate memory
 * stay, as cuda.h says).  Popped here if current; where it is current on
 * other threads it stays there, unusable.  A primary context is released,
 * never destroyed: CUDA_ERROR_INVALID_CONTEXT. */
XPSIM_API CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (ctx == NULL || !is_created(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    bool was = false;
    atomic_compare_exchange_strong(&ctx->destroyed, &was, true);
    if (was)   /* another thread destroyed it first */
        return CUDA_ERROR_INVALID_CONTEXT;
    xpdrv_ctx_free_resources(ctx);
    xpdrv_ctx_pop_if_current(ctx);
    xpsim_debug("cuCtxDestroy_v2(%p)", (void *)ctx);
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuCtxDestroy(CUcontext ctx);
XPSIM_API CUresult cuCtxDestroy(CUcontext ctx)
{
    return cuCtxDestroy_v2(ctx);
}

/* The forms before CUDA 4.0 of the stack calls: the same arguments. */
XPSIM_API CUresult cuCtxPushCurrent(CUcontext ctx);
XPSIM_API CUresult cuCtxPushCurrent(CUcontext ctx)
{
    return cuCtxPushCurrent_v2(ctx);
}

XPSIM_API CUresult cuCtxPopCurrent(CUcontext *pctx);
XPSIM_API CUresult cuCtxPopCurrent(CUcontext *pctx)
{
    return cuCtxPopCurrent_v2(pctx);
}

/* The current context's creation flags (the primary context's as set by
 * cuDevicePrimaryCtxSetFlags). */
XPSIM_API CUresult cuCtxGetFlags(unsigned int *flags)
{
    if (flags == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    CUcontext c = xpdrv_current();
    *flags = c->primary ? xpdrv_device(dev)->primary_flags : c->flags;
    return CUDA_SUCCESS;
}

/* A context's unique id; NULL names the current one. */
XPSIM_API CUresult cuCtxGetId(CUcontext ctx, unsigned long long *ctxId)
{
    if (ctxId == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (ctx == NULL)
        ctx = xpdrv_current();
    if (ctx == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!xpdrv_ctx_valid(ctx))
        return is_created(ctx) ? CUDA_ERROR_CONTEXT_IS_DESTROYED : CUDA_ERROR_INVALID_CONTEXT;
    *ctxId = ctx->id;
    return CUDA_SUCCESS;
}

/* The API version a context was created with: 3020 for every form since
 * CUDA 3.2, as NVIDIA's driver answers. */
XPSIM_API CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
    if (version == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (ctx == NULL)
        ctx = xpdrv_current();
    if (ctx == NULL || !xpdrv_ctx_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    *version = 3020;
    return CUDA_SUCCESS;
}
