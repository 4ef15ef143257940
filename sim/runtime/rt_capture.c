/* rt_capture.c: stream capture in the runtime API (cudaStreamBeginCapture, EndCapture, IsCapturing, GetCaptureInfo, cudaThreadExchangeStreamCaptureMode), passed to the driver's. */
/* cudaStreamCaptureMode and cudaStreamCaptureStatus have the CU_* values,
 * cudaGraph_t and cudaGraphNode_t are the driver's handles, and the capture
 * errors (900-908) share their numbers. */
#include "rt_internal.h"
#include "rt_abi.h"

static inline CUstream cu_stream(cudaStream_t s)
{
    return (CUstream)s;
}

static cudaError_t begin_capture(xprt_api api, cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuStreamBeginCapture, cu_stream(stream),
                                    (CUstreamCaptureMode)mode));
}

XPRT_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    return begin_capture(XPRT_LEGACY, stream, mode);
}

XPRT_EXPORT cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream,
                                                    enum cudaStreamCaptureMode mode)
{
    return begin_capture(XPRT_PTDS, stream, mode);
}

static cudaError_t end_capture(xprt_api api, cudaStream_t stream, cudaGraph_t *pGraph)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuStreamEndCapture, cu_stream(stream), (CUgraph *)pGraph));
}

XPRT_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
    return end_capture(XPRT_LEGACY, stream, pGraph);
}

XPRT_EXPORT cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t *pGraph)
{
    return end_capture(XPRT_PTDS, stream, pGraph);
}

/* Every query form: status is required, the rest optional. */
static cudaError_t capture_info(xprt_api api, cudaStream_t stream,
                                enum cudaStreamCaptureStatus *status, unsigned long long *id,
                                cudaGraph_t *graph, const cudaGraphNode_t **deps,
                                const cudaGraphEdgeData **edges, size_t *ndeps)
{
    if (status == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    cuuint64_t cid = 0;
    CUresult r = XPRT_CALL(d, cuStreamGetCaptureInfo, cu_stream(stream), &st,
                           id != NULL ? &cid : NULL, (CUgraph *)graph, (const CUgraphNode **)deps,
                           (const CUgraphEdgeData **)edges, ndeps);
    if (r == CUDA_SUCCESS) {
        *status = (enum cudaStreamCaptureStatus)st;
        if (id != NULL)
            *id = cid;
    }
    return xprt_result_cu(r);
}

int xprt_capture_info(int ptds, void *stream, int *status, unsigned long long *id,
                      cudaGraph_t *graph, const cudaGraphNode_t **deps, size_t *ndeps)
{
    enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    cudaError_t e = capture_info(ptds ? XPRT_PTDS : XPRT_LEGACY, (cudaStream_t)stream,
                                 status != NULL ? &st : NULL, id, graph, deps, NULL, ndeps);
    if (e == cudaSuccess)
        *status = (int)st;
    return e;
}

XPRT_EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t stream,
                                              enum cudaStreamCaptureStatus *pCaptureStatus)
{
    return capture_info(XPRT_LEGACY, stream, pCaptureStatus, NULL, NULL, NULL, NULL, NULL);
}

XPRT_EXPORT cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t stream,
                                                   enum cudaStreamCaptureStatus *pCaptureStatus)
{
    return capture_info(XPRT_PTDS, stream, pCaptureStatus, NULL, NULL, NULL, NULL, NULL);
}

/* CUDA 13's form (with edge data) is CUDA 12's _v3. */
XPRT_EXPORT cudaError_t XPRT_ABI13(cudaStreamGetCaptureInfo, cudaStreamGetCaptureInfo_v3)(
    cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
    unsigned long long *id_out, cudaGraph_t *graph_out, const cudaGraphNode_t **dependencies_out,
    const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
    return capture_info(XPRT_LEGACY, stream, captureStatus_out, id_out, graph_out,
                        dependencies_out, edgeData_out, numDependencies_out);
}

XPRT_EXPORT cudaError_t XPRT_ABI13(cudaStreamGetCaptureInfo_ptsz, cudaStreamGetCaptureInfo_v3_ptsz)(
    cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
    unsigned long long *id_out, cudaGraph_t *graph_out, const cudaGraphNode_t **dependencies_out,
    const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
    return capture_info(XPRT_PTDS, stream, captureStatus_out, id_out, graph_out,
                        dependencies_out, edgeData_out, numDependencies_out);
}

XPRT_EXPORT cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuThreadExchangeStreamCaptureMode,
                                    (CUstreamCaptureMode *)mode));
}
