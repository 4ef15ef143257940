/* rt_stream.c: streams, events and host callbacks, passed through to the driver. */
/* cudaStream_t is CUstream and cudaEvent_t is CUevent: handles pass as they are. */
#include "rt_internal.h"
#include "rt_abi.h"

#include <stdlib.h>

static inline CUstream cu_stream(cudaStream_t s)
{
    return (CUstream)s;
}

static inline CUevent cu_event(cudaEvent_t e)
{
    return (CUevent)e;
}

/* ---- streams ------------------------------------------------------------- */

static cudaError_t stream_create(cudaStream_t *pStream, unsigned int flags, int priority,
                                 bool with_priority)
{
    if (pStream == NULL || (flags & ~(unsigned)cudaStreamNonBlocking) != 0)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    CUstream s = NULL;
    /* cudaStream* flags have the CU_STREAM_* values. */
    CUresult r = with_priority ? XPRT_CALL(d, cuStreamCreateWithPriority, &s, flags, priority)
                               : XPRT_CALL(d, cuStreamCreate, &s, flags);
    if (r == CUDA_SUCCESS)
        *pStream = (cudaStream_t)s;
    return xprt_result_cu(r);
}

XPRT_EXPORT cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
    return stream_create(pStream, cudaStreamDefault, 0, false);
}

XPRT_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    return stream_create(pStream, flags, 0, false);
}

XPRT_EXPORT cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags,
                                                     int priority)
{
    return stream_create(pStream, flags, priority, true);
}

XPRT_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuStreamDestroy, cu_stream(stream)));
}

static cudaError_t stream_synchronize(xprt_api api, cudaStream_t stream)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuStreamSynchronize, cu_stream(stream)));
}

XPRT_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    return stream_synchronize(XPRT_LEGACY, stream);
}

XPRT_EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
    return stream_synchronize(XPRT_PTDS, stream);
}

static cudaError_t stream_query(xprt_api api, cudaStream_t stream)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuStreamQuery, cu_stream(stream)));
}

XPRT_EXPORT cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    return stream_query(XPRT_LEGACY, stream);
}

XPRT_EXPORT cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream)
{
    return stream_query(XPRT_PTDS, stream);
}

static cudaError_t stream_wait_event(xprt_api api, cudaStream_t stream, cudaEvent_t event,
                                     unsigned int flags)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    /* cudaEventWait* flags have the CU_EVENT_WAIT_* values. */
    return xprt_result_cu(XPRT_CALL(d, cuStreamWaitEvent, cu_stream(stream), cu_event(event),
                                    flags));
}

XPRT_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                            unsigned int flags)
{
    return stream_wait_event(XPRT_LEGACY, stream, event, flags);
}

XPRT_EXPORT cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event,
                                                 unsigned int flags)
{
    return stream_wait_event(XPRT_PTDS, stream, event, flags);
}

static cudaError_t stream_get_flags(xprt_api api, cudaStream_t stream, unsigned int *flags)
{
    if (flags == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuStreamGetFlags, cu_stream(stream), flags));
}

XPRT_EXPORT cudaError_t cudaStreamGetFlags(cudaStream_t hStream, unsigned int *flags)
{
    return stream_get_flags(XPRT_LEGACY, hStream, flags);
}

XPRT_EXPORT cudaError_t cudaStreamGetFlags_ptsz(cudaStream_t hStream, unsigned int *flags)
{
    return stream_get_flags(XPRT_PTDS, hStream, flags);
}

static cudaError_t stream_get_priority(xprt_api api, cudaStream_t stream, int *priority)
{
    if (priority == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuStreamGetPriority, cu_stream(stream), priority));
}

XPRT_EXPORT cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int *priority)
{
    return stream_get_priority(XPRT_LEGACY, hStream, priority);
}

XPRT_EXPORT cudaError_t cudaStreamGetPriority_ptsz(cudaStream_t hStream, int *priority)
{
    return stream_get_priority(XPRT_PTDS, hStream, priority);
}

static cudaError_t stream_get_device(xprt_api api, cudaStream_t stream, int *device)
{
    if (device == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    CUdevice dev = 0;
    CUresult r = XPRT_CALL(d, cuStreamGetDevice, cu_stream(stream), &dev);
    if (r == CUDA_SUCCESS)
        *device = (int)dev;
    return xprt_result_cu(r);
}

XPRT_EXPORT cudaError_t cudaStreamGetDevice(cudaStream_t hStream, int *device)
{
    return stream_get_device(XPRT_LEGACY, hStream, device);
}

XPRT_EXPORT cudaError_t cudaStreamGetDevice_ptsz(cudaStream_t hStream, int *device)
{
    return stream_get_device(XPRT_PTDS, hStream, device);
}

/* ---- host functions and callbacks ---------------------------------------- */

static cudaError_t launch_host_func(xprt_api api, cudaStream_t stream, cudaHostFn_t fn,
                                    void *userData)
{
    if (fn == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuLaunchHostFunc, cu_stream(stream), fn, userData));
}

XPRT_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
    return launch_host_func(XPRT_LEGACY, stream, fn, userData);
}

XPRT_EXPORT cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn,
                                                void *userData)
{
    return launch_host_func(XPRT_PTDS, stream, fn, userData);
}

/* cudaStreamAddCallback is a host function with the old signature. */
typedef struct callback_rec {
    cudaStreamCallback_t fn;
    void *user_data;
    cudaStream_t stream;         /* as the caller passed it (the API says so) */
} callback_rec;

static void CUDA_CB callback_trampoline(void *arg)
{
    callback_rec rec = *(callback_rec *)arg;
    free(arg);
    /* The engine runs host functions only on a healthy stream, so the status
     * the callback sees is always success. */
    rec.fn(rec.stream, cudaSuccess, rec.user_data);
}

static cudaError_t stream_add_callback(xprt_api api, cudaStream_t stream,
                                       cudaStreamCallback_t callback, void *userData,
                                       unsigned int flags)
{
    if (callback == NULL || flags != 0)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    callback_rec *rec = malloc(sizeof *rec);
    if (rec == NULL)
        return xprt_result(cudaErrorMemoryAllocation);
    *rec = (callback_rec){.fn = callback, .user_data = userData, .stream = stream};
    CUresult r = XPRT_CALL(d, cuLaunchHostFunc, cu_stream(stream), callback_trampoline, rec);
    if (r != CUDA_SUCCESS)
        free(rec);
    return xprt_result_cu(r);
}

XPRT_EXPORT cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback,
                                              void *userData, unsigned int flags)
{
    return stream_add_callback(XPRT_LEGACY, stream, callback, userData, flags);
}

XPRT_EXPORT cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream,
                                                   cudaStreamCallback_t callback,
                                                   void *userData, unsigned int flags)
{
    return stream_add_callback(XPRT_PTDS, stream, callback, userData, flags);
}

/* ---- events -------------------------------------------------------------- */

static cudaError_t event_create(cudaEvent_t *event, unsigned int flags)
{
    const unsigned known = cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;
    if (event == NULL || (flags & ~known) != 0)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    CUevent ev = NULL;
    /* cudaEvent* flags have the CU_EVENT_* values. */
    CUresult r = XPRT_CALL(d, cuEventCreate, &ev, flags);
    if (r == CUDA_SUCCESS)
        *event = (cudaEvent_t)ev;
    return xprt_result_cu(r);
}

XPRT_EXPORT cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    return event_create(event, cudaEventDefault);
}

XPRT_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    return event_create(event, flags);
}

static cudaError_t event_record(xprt_api api, cudaEvent_t event, cudaStream_t stream,
                                unsigned int flags, bool with_flags)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    /* cudaEventRecord* flags have the CU_EVENT_RECORD_* values. */
    CUresult r = with_flags
                     ? XPRT_CALL(d, cuEventRecordWithFlags, cu_event(event), cu_stream(stream),
                                 flags)
                     : XPRT_CALL(d, cuEventRecord, cu_event(event), cu_stream(stream));
    return xprt_result_cu(r);
}

XPRT_EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    return event_record(XPRT_LEGACY, event, stream, 0, false);
}

XPRT_EXPORT cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream)
{
    return event_record(XPRT_PTDS, event, stream, 0, false);
}

XPRT_EXPORT cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream,
                                                 unsigned int flags)
{
    return event_record(XPRT_LEGACY, event, stream, flags, true);
}

XPRT_EXPORT cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream,
                                                      unsigned int flags)
{
    return event_record(XPRT_PTDS, event, stream, flags, true);
}

XPRT_EXPORT cudaError_t cudaEventQuery(cudaEvent_t event)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuEventQuery, cu_event(event)));
}

XPRT_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuEventSynchronize, cu_event(event)));
}

XPRT_EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    if (ms == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    /* cuEventElapsedTime here is cuda.h's cuEventElapsedTime_v2, the CUDA 13
     * ABI that cudaEventElapsedTime (float *, start, end) sits on. */
    return xprt_result_cu(XPRT_CALL(d, cuEventElapsedTime, ms, cu_event(start), cu_event(end)));
}

XPRT_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuEventDestroy, cu_event(event)));
}
