/* drv_stream.c: the exported stream, event and host-callback entry points. */
#include "xpsim_driver.h"
#include "xpsim_graph.h"
#include "xpsim_stream.h"

#include <stdlib.h>

/* Resolves a stream handle for the calling thread's current device. */
static CUresult enter_stream(CUstream h, bool ptds, CUstream *out)
{
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    return xpsim_stream_resolve(h, ptds, dev, out);
}

static CUresult create_stream(CUstream *phStream, unsigned int flags, int priority)
{
    if (phStream == NULL || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    /* Priorities are clamped to the range the device reports, as CUDA does. */
    if (priority > 0)
        priority = 0;
    if (priority < -5)
        priority = -5;
    CUstream s = xpsim_stream_create(dev, flags, priority);
    if (s == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *phStream = s;
    xpsim_debug("cuStreamCreate(flags %#x, priority %d) -> %p", flags, priority, (void *)s);
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    return create_stream(phStream, Flags, 0);
}

XPSIM_API CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    return create_stream(phStream, flags, priority);
}

XPSIM_API CUresult cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (leastPriority)
        *leastPriority = 0;
    if (greatestPriority)
        *greatestPriority = -5;
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuStreamDestroy_v2(CUstream hStream)
{
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    xpsim_debug("cuStreamDestroy(%p)", (void *)hStream);
    rc = xpsim_stream_destroy(hStream);
    if (rc == CUDA_SUCCESS)
        xpsim_capture_stream_gone(hStream);
    return rc;
}

static CUresult stream_sync(CUstream h, bool ptds)
{
    CUstream s;
    CUresult rc = enter_stream(h, ptds, &s);
    if (rc == CUDA_SUCCESS)
        rc = xpsim_capture_sync(s);
    return rc != CUDA_SUCCESS ? rc : xpsim_stream_synchronize(s);
}

static CUresult stream_query(CUstream h, bool ptds)
{
    CUstream s;
    CUresult rc = enter_stream(h, ptds, &s);
    if (rc == CUDA_SUCCESS)
        rc = xpsim_capture_sync(s);
    return rc != CUDA_SUCCESS ? rc : xpsim_stream_query(s);
}

static CUresult stream_wait_event(CUstream h, CUevent e, unsigned int flags, bool ptds)
{
    CUstream s;
    CUresult rc = enter_stream(h, ptds, &s);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!xpsim_event_valid(e) || (flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL))
        return !xpsim_event_valid(e) ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE;
    bool captured;
    rc = xpsim_capture_wait_event(s, e, flags, &captured);
    return captured ? rc : xpsim_stream_wait_event(s, e);
}

static CUresult stream_get_flags(CUstream h, unsigned int *flags, bool ptds)
{
    CUstream s;
    CUresult rc = flags ? enter_stream(h, ptds, &s) : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        *flags = xpsim_stream_flags(s);
    return rc;
}

static CUresult stream_get_priority(CUstream h, int *priority, bool ptds)
{
    CUstream s;
    CUresult rc = priority ? enter_stream(h, ptds, &s) : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        *priority = xpsim_stream_priority(s);
    return rc;
}

static CUresult stream_get_device(CUstream h, CUdevice *device, bool ptds)
{
    CUstream s;
    CUresult rc = device ? enter_stream(h, ptds, &s) : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        *device = xpsim_stream_device(s);
    return rc;
}

XPDRV_TWINS(cuStreamSynchronize, cuStreamSynchronize_ptsz, (CUstream h), stream_sync(h, ptds))
XPDRV_TWINS(cuStreamQuery, cuStreamQuery_ptsz, (CUstream h), stream_query(h, ptds))
XPDRV_TWINS(cuStreamWaitEvent, cuStreamWaitEvent_ptsz, (CUstream h, CUevent e, unsigned int flags),
            stream_wait_event(h, e, flags, ptds))
XPDRV_TWINS(cuStreamGetFlags, cuStreamGetFlags_ptsz, (CUstream h, unsigned int *flags),
            stream_get_flags(h, flags, ptds))
XPDRV_TWINS(cuStreamGetPriority, cuStreamGetPriority_ptsz, (CUstream h, int *priority),
            stream_get_priority(h, priority, ptds))
XPDRV_TWINS(cuStreamGetDevice, cuStreamGetDevice_ptsz, (CUstream h, CUdevice *device),
            stream_get_device(h, device, ptds))

/* Host functions run on the stream's worker, in stream order. */
typedef struct host_call {
    CUhostFn fn;
    CUstreamCallback callback;
    CUstream stream;          /* as the caller named it, for the callback */
    void *user;
} host_call;

static void run_host_call(void *arg)
{
    host_call *c = arg;
    if (c->fn)
        c->fn(c->user);
    else
        c->callback(c->stream, CUDA_SUCCESS, c->user);
}

static CUresult enqueue_host_call(CUstream h, const host_call *call, bool ptds, const char *api)
{
    CUstream s;
    CUresult rc = enter_stream(h, ptds, &s);
    if (rc != CUDA_SUCCESS)
        return rc;
    /* Captured, a host function becomes a host node; a stream callback (whose
     * status argument a graph cannot supply) may not be captured. */
    if (call->fn != NULL) {
        xpsim_node_params np = {.type = CU_GRAPH_NODE_TYPE_HOST,
                                .u.host = {.fn = call->fn, .userData = call->user}};
        bool captured;
        rc = xpsim_capture_work(s, &np, &captured);
        if (captured)
            return rc;
    } else if ((rc = xpsim_capture_sync(s)) != CUDA_SUCCESS) {
        return rc;
    }
    host_call *c = malloc(sizeof *c);
    if (c == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *c = *call;
    xpsim_work w = {.run = run_host_call, .release = free, .ctx = c, .duration_ns = 0,
                    .lane = XPSIM_LANE_NONE, .fault = CUDA_SUCCESS, .what = api};
    xpsim_stream_enqueue(s, &w);
    return CUDA_SUCCESS;
}

static CUresult launch_host_func(CUstream h, CUhostFn fn, void *user, bool ptds)
{
    if (fn == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    host_call c = {.fn = fn, .stream = h, .user = user};
    return enqueue_host_call(h, &c, ptds, "cuLaunchHostFunc");
}

static CUresult add_callback(CUstream h, CUstreamCallback cb, void *user, unsigned int flags, bool ptds)
{
    if (cb == NULL || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    host_call c = {.callback = cb, .stream = h, .user = user};
    return enqueue_host_call(h, &c, ptds, "cuStreamAddCallback");
}

CUresult xpdrv_host_enqueue(const CUDA_HOST_NODE_PARAMS *p, CUstream h, bool ptds)
{
    return launch_host_func(h, p->fn, p->userData, ptds);
}

XPDRV_TWINS(cuLaunchHostFunc, cuLaunchHostFunc_ptsz, (CUstream h, CUhostFn fn, void *userData),
            launch_host_func(h, fn, userData, ptds))
XPDRV_TWINS(cuStreamAddCallback, cuStreamAddCallback_ptsz,
            (CUstream h, CUstreamCallback cb, void *userData, unsigned int flags),
            add_callback(h, cb, userData, flags, ptds))

XPSIM_API CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    if (phEvent == NULL ||
        (Flags & ~(unsigned)(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS)))
        return CUDA_ERROR_INVALID_VALUE;
    /* Interprocess events must also disable timing, as CUDA requires. */
    if ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING))
        return CUDA_ERROR_INVALID_VALUE;
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    CUevent e = xpsim_event_create(Flags);
    if (e == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *phEvent = e;
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuEventDestroy_v2(CUevent hEvent)
{
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc == CUDA_SUCCESS && (rc = xpsim_event_destroy(hEvent)) == CUDA_SUCCESS)
        xpsim_capture_event_gone(hEvent);
    return rc;
}

static CUresult event_record(CUevent e, CUstream h, unsigned int flags, bool ptds)
{
    CUstream s;
    CUresult rc = enter_stream(h, ptds, &s);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!xpsim_event_valid(e))
        return CUDA_ERROR_INVALID_HANDLE;
    if (flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL)
        return CUDA_ERROR_INVALID_VALUE;
    bool captured;
    rc = xpsim_capture_event_record(e, s, flags, &captured);
    return captured ? rc : xpsim_event_record(e, s);
}

XPDRV_TWINS(cuEventRecord, cuEventRecord_ptsz, (CUevent e, CUstream h), event_record(e, h, 0, ptds))
XPDRV_TWINS(cuEventRecordWithFlags, cuEventRecordWithFlags_ptsz,
            (CUevent e, CUstream h, unsigned int flags), event_record(e, h, flags, ptds))

XPSIM_API CUresult cuEventQuery(CUevent hEvent)
{
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!xpsim_event_valid(hEvent))
        return CUDA_ERROR_INVALID_HANDLE;
    rc = xpsim_capture_event_check(hEvent);
    return rc != CUDA_SUCCESS ? rc : xpsim_event_query(hEvent);
}

XPSIM_API CUresult cuEventSynchronize(CUevent hEvent)
{
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!xpsim_event_valid(hEvent))
        return CUDA_ERROR_INVALID_HANDLE;
    rc = xpsim_capture_event_check(hEvent);
    return rc != CUDA_SUCCESS ? rc : xpsim_event_synchronize(hEvent);
}

static CUresult event_elapsed(float *ms, CUevent start, CUevent end)
{
    if (ms == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!xpsim_event_valid(start) || !xpsim_event_valid(end))
        return CUDA_ERROR_INVALID_HANDLE;
    return xpsim_event_elapsed(ms, start, end);
}

/* The two versions differ only in how real drivers round; one body serves.
 * cuda.h maps the old name to _v2, so unmap it to define the old symbol. */
#undef cuEventElapsedTime
XPSIM_API CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd);
XPSIM_API CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    return event_elapsed(pMilliseconds, hStart, hEnd);
}

XPSIM_API CUresult cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    return event_elapsed(pMilliseconds, hStart, hEnd);
}
