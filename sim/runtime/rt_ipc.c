/* rt_ipc.c: device memory, events and memory pools shared between processes in the runtime (cudaIpc*MemHandle, cudaIpc*EventHandle, cudaMemPoolExport*, cudaMemPoolImport*), over the driver's. */
#include "rt_internal.h"

#include <string.h>

_Static_assert(sizeof(cudaIpcMemHandle_t) == sizeof(CUipcMemHandle),
               "the runtime's handle is the driver's");
_Static_assert(sizeof(cudaIpcEventHandle_t) == sizeof(CUipcEventHandle),
               "the runtime's event handle is the driver's");

XPRT_EXPORT cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *handle, void *devPtr)
{
    if (handle == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    CUipcMemHandle h;
    CUresult r = XPRT_CALL(d, cuIpcGetMemHandle, &h, (CUdeviceptr)(uintptr_t)devPtr);
    if (r == CUDA_SUCCESS)
        memcpy(handle, &h, sizeof h);
    return xprt_result_cu(r);
}

XPRT_EXPORT cudaError_t cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle,
                                             unsigned int flags)
{
    if (devPtr == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    /* cudaIpcMemLazyEnablePeerAccess is CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS. */
    CUipcMemHandle h;
    memcpy(&h, &handle, sizeof h);
    CUdeviceptr p = 0;
    CUresult r = XPRT_CALL(d, cuIpcOpenMemHandle, &p, h, flags);
    if (r == CUDA_SUCCESS)
        *devPtr = (void *)(uintptr_t)p;
    return xprt_result_cu(r);
}

XPRT_EXPORT cudaError_t cudaIpcCloseMemHandle(void *devPtr)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuIpcCloseMemHandle, (CUdeviceptr)(uintptr_t)devPtr));
}

XPRT_EXPORT cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t *handle, cudaEvent_t event)
{
    if (handle == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    CUipcEventHandle h;
    CUresult r = XPRT_CALL(d, cuIpcGetEventHandle, &h, (CUevent)event);
    if (r == CUDA_SUCCESS)
        memcpy(handle, &h, sizeof h);
    return xprt_result_cu(r);
}

XPRT_EXPORT cudaError_t cudaIpcOpenEventHandle(cudaEvent_t *event, cudaIpcEventHandle_t handle)
{
    if (event == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    CUipcEventHandle h;
    memcpy(&h, &handle, sizeof h);
    CUevent ev = NULL;
    CUresult r = XPRT_CALL(d, cuIpcOpenEventHandle, &ev, h);
    if (r == CUDA_SUCCESS)
        *event = (cudaEvent_t)ev;
    return xprt_result_cu(r);
}

_Static_assert(sizeof(struct cudaMemPoolPtrExportData) == sizeof(CUmemPoolPtrExportData),
               "the runtime's pointer export data is the driver's");

/* cudaMemHandleTypePosixFileDescriptor is CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR. */
XPRT_EXPORT cudaError_t cudaMemPoolExportToShareableHandle(void *shareableHandle,
                                                           cudaMemPool_t memPool,
                                                           enum cudaMemAllocationHandleType handleType,
                                                           unsigned int flags)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuMemPoolExportToShareableHandle, shareableHandle, memPool,
                                    (CUmemAllocationHandleType)handleType, flags));
}

XPRT_EXPORT cudaError_t cudaMemPoolImportFromShareableHandle(cudaMemPool_t *memPool,
                                                             void *shareableHandle,
                                                             enum cudaMemAllocationHandleType handleType,
                                                             unsigned int flags)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuMemPoolImportFromShareableHandle, memPool,
                                    shareableHandle, (CUmemAllocationHandleType)handleType,
                                    flags));
}

XPRT_EXPORT cudaError_t cudaMemPoolExportPointer(struct cudaMemPoolPtrExportData *exportData,
                                                 void *ptr)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuMemPoolExportPointer,
                                    (CUmemPoolPtrExportData *)exportData,
                                    (CUdeviceptr)(uintptr_t)ptr));
}

XPRT_EXPORT cudaError_t cudaMemPoolImportPointer(void **ptr, cudaMemPool_t memPool,
                                                 struct cudaMemPoolPtrExportData *exportData)
{
    if (ptr == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    CUdeviceptr p = 0;
    CUresult r = XPRT_CALL(d, cuMemPoolImportPointer, &p, memPool,
                           (CUmemPoolPtrExportData *)exportData);
    if (r == CUDA_SUCCESS)
        *ptr = (void *)(uintptr_t)p;
    return xprt_result_cu(r);
}
