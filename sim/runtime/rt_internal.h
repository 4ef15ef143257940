/* rt_internal.h: what the modules of the simulated CUDA runtime share. */
#ifndef RT_INTERNAL_H
#define RT_INTERNAL_H

/* The driver headers first, in their ordinary (legacy default stream)
 * configuration: cudaTypedefs.h gives the driver table its function pointer
 * types, and cuda.h's cuX macros (cuMemAlloc -> cuMemAlloc_v2) are then
 * unaffected by what the runtime header below is told. */
#include <cuda.h>
#include <cudaTypedefs.h>

/* NVIDIA builds libcudart with __CUDA_API_VERSION_INTERNAL: the runtime header
 * then declares both the legacy names and their _ptds/_ptsz variants (it
 * renames the first declarations and #undefs the renames at its end), which is
 * exactly what a library that defines both needs.  cuda.h is already in, so
 * this does not switch it to its per-thread names. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda_runtime_api.h>
#include <cuda_profiler_api.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xpsim_config.h"
#include "xpsim_log.h"

#define XPRT_EXPORT __attribute__((visibility("default")))

/* The same sources also build libcudart.so.12 (sim/cuda12/), with
 * XPRT_CUDART12 set to that runtime's CUDART_VERSION. A few names have another
 * signature in CUDA 12: there the CUDA 13 definition takes the name of its
 * CUDA 12 twin of the same signature (cudaMemPrefetchAsync ->
 * cudaMemPrefetchAsync_v2), or a name of its own that the version script keeps
 * local, and rt_abi12.c defines the CUDA 12 name. */
#ifdef XPRT_CUDART12
#define XPRT_ABI13(name, name12) name12
#define XPRT_RUNTIME_VERSION XPRT_CUDART12
#else
#define XPRT_ABI13(name, name12) name
#define XPRT_RUNTIME_VERSION CUDART_VERSION
#endif

#ifdef XPRT_CUDART12
/* The renamed CUDA 13 definitions, which CUDA 13's headers do not declare. */
cudaError_t xprt_cuda13_GetDeviceProperties(struct cudaDeviceProp *prop, int device);
cudaError_t xprt_cuda13_PointerGetAttributes(struct cudaPointerAttributes *attributes,
                                             const void *ptr);
cudaError_t cudaMemPrefetchAsync_v2(const void *devPtr, size_t count,
                                    struct cudaMemLocation location, unsigned int flags,
                                    cudaStream_t stream);
cudaError_t cudaMemPrefetchAsync_v2_ptsz(const void *devPtr, size_t count,
                                         struct cudaMemLocation location, unsigned int flags,
                                         cudaStream_t stream);
cudaError_t cudaMemAdvise_v2(const void *devPtr, size_t count, enum cudaMemoryAdvise advice,
                             struct cudaMemLocation location);
cudaError_t cudaStreamGetCaptureInfo_v3(cudaStream_t stream,
                                        enum cudaStreamCaptureStatus *captureStatus_out,
                                        unsigned long long *id_out, cudaGraph_t *graph_out,
                                        const cudaGraphNode_t **dependencies_out,
                                        const cudaGraphEdgeData **edgeData_out,
                                        size_t *numDependencies_out);
cudaError_t cudaStreamGetCaptureInfo_v3_ptsz(cudaStream_t stream,
                                             enum cudaStreamCaptureStatus *captureStatus_out,
                                             unsigned long long *id_out, cudaGraph_t *graph_out,
                                             const cudaGraphNode_t **dependencies_out,
                                             const cudaGraphEdgeData **edgeData_out,
                                             size_t *numDependencies_out);
cudaError_t xprt_cuda13_MemcpyBatchAsync(void *const *dsts, const void *const *srcs,
                                         const size_t *sizes, size_t count,
                                         struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs,
                                         size_t numAttrs, cudaStream_t stream);
cudaError_t xprt_cuda13_MemcpyBatchAsync_ptsz(void *const *dsts, const void *const *srcs,
                                              const size_t *sizes, size_t count,
                                              struct cudaMemcpyAttributes *attrs,
                                              size_t *attrsIdxs, size_t numAttrs,
                                              cudaStream_t stream);
#endif

/* ---- nvcc's private entry points (crt/host_runtime.h, crt/device_functions.h
 * declare them only for C++ host code); the prototypes follow those headers. */
XPRT_EXPORT void **__cudaRegisterFatBinary(void *fatCubin);
XPRT_EXPORT void __cudaRegisterFatBinaryEnd(void **fatCubinHandle);
XPRT_EXPORT void __cudaUnregisterFatBinary(void **fatCubinHandle);
XPRT_EXPORT void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress,
                                   const char *deviceName, int ext, size_t size, int constant,
                                   int global);
XPRT_EXPORT void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress,
                                          char *deviceAddress, const char *deviceName, int ext,
                                          size_t size, int constant, int global);
XPRT_EXPORT char __cudaInitModule(void **fatCubinHandle);
XPRT_EXPORT void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun,
                                        char *deviceFun, const char *deviceName,
                                        int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim,
                                        dim3 *gDim, int *wSize);
XPRT_EXPORT unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                                 struct CUstream_st *stream);
XPRT_EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim,
                                                   size_t *sharedMem, void *stream);
XPRT_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun);
XPRT_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                           void **args, size_t sharedMem, cudaStream_t stream);
XPRT_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                                void **args, size_t sharedMem,
                                                cudaStream_t stream);
/* Undocumented exports of libcudart.so.13 that nvcc 13.0 does not emit for
 * ordinary code.  Their prototypes are not published; see rt_register.c. */
XPRT_EXPORT void __cudaRegisterHostVar(void **fatCubinHandle, const char *deviceName,
                                       char *hostVar, size_t size);
XPRT_EXPORT void __cudaRegisterUnifiedTable(void **fatCubinHandle, void *a, void *b, void *c,
                                            void *d);
XPRT_EXPORT void *__cudaGetProcAddress(void);

/* ---- the driver, reached only through cuGetProcAddress_v2 ------------------
 *
 * Base names, as a program would pass them to cuGetProcAddress, each with the
 * cudaTypedefs.h type of the ABI the driver hands back for version 13000: the
 * highest PFN_<name>_v<N> with N <= 13000.  That is not always what cuda.h's
 * macros select: cuCtxSynchronize at 13000 is cuCtxSynchronize_v2(CUcontext).
 * The _ptds/_ptsz variants share those signatures. */
#define XPRT_DRIVER_FUNCS(X)                                                \
    X(cuInit, PFN_cuInit_v2000)                                             \
    X(cuDriverGetVersion, PFN_cuDriverGetVersion_v2020)                     \
    X(cuDeviceGet, PFN_cuDeviceGet_v2000)                                   \
    X(cuDeviceGetCount, PFN_cuDeviceGetCount_v2000)                         \
    X(cuDeviceGetName, PFN_cuDeviceGetName_v2000)                           \
    X(cuDeviceGetUuid, PFN_cuDeviceGetUuid_v11040)                          \
    X(cuDeviceTotalMem, PFN_cuDeviceTotalMem_v3020)                         \
    X(cuDeviceGetAttribute, PFN_cuDeviceGetAttribute_v2000)                 \
    X(cuDeviceGetPCIBusId, PFN_cuDeviceGetPCIBusId_v4010)                   \
    X(cuDevicePrimaryCtxRetain, PFN_cuDevicePrimaryCtxRetain_v7000)         \
    X(cuDevicePrimaryCtxReset, PFN_cuDevicePrimaryCtxReset_v11000)          \
    X(cuDevicePrimaryCtxSetFlags, PFN_cuDevicePrimaryCtxSetFlags_v11000)    \
    X(cuCtxSetCurrent, PFN_cuCtxSetCurrent_v4000)                           \
    X(cuCtxGetCurrent, PFN_cuCtxGetCurrent_v4000)                           \
    X(cuCtxGetDevice, PFN_cuCtxGetDevice_v2000)                             \
    X(cuDeviceCanAccessPeer, PFN_cuDeviceCanAccessPeer_v4000)               \
    X(cuDeviceGetP2PAttribute, PFN_cuDeviceGetP2PAttribute_v8000)           \
    X(cuCtxEnablePeerAccess, PFN_cuCtxEnablePeerAccess_v4000)               \
    X(cuCtxDisablePeerAccess, PFN_cuCtxDisablePeerAccess_v4000)             \
    X(cuIpcGetMemHandle, PFN_cuIpcGetMemHandle_v4010)                       \
    X(cuIpcOpenMemHandle, PFN_cuIpcOpenMemHandle_v11000)                    \
    X(cuIpcCloseMemHandle, PFN_cuIpcCloseMemHandle_v4010)                   \
    X(cuIpcGetEventHandle, PFN_cuIpcGetEventHandle_v4010)                   \
    X(cuIpcOpenEventHandle, PFN_cuIpcOpenEventHandle_v4010)                 \
    X(cuCtxSynchronize, PFN_cuCtxSynchronize_v13000)                        \
    X(cuCtxGetStreamPriorityRange, PFN_cuCtxGetStreamPriorityRange_v5050)   \
    X(cuMemGetInfo, PFN_cuMemGetInfo_v3020)                                 \
    X(cuMemAlloc, PFN_cuMemAlloc_v3020)                                     \
    X(cuMemAllocPitch, PFN_cuMemAllocPitch_v3020)                           \
    X(cuMemFree, PFN_cuMemFree_v3020)                                       \
    X(cuMemAllocHost, PFN_cuMemAllocHost_v3020)                             \
    X(cuMemHostAlloc, PFN_cuMemHostAlloc_v2020)                             \
    X(cuMemFreeHost, PFN_cuMemFreeHost_v2000)                               \
    X(cuMemHostRegister, PFN_cuMemHostRegister_v6050)                       \
    X(cuMemHostUnregister, PFN_cuMemHostUnregister_v4000)                   \
    X(cuMemHostGetDevicePointer, PFN_cuMemHostGetDevicePointer_v3020)       \
    X(cuMemHostGetFlags, PFN_cuMemHostGetFlags_v2030)                       \
    X(cuMemAllocManaged, PFN_cuMemAllocManaged_v6000)                       \
    X(cuMemPrefetchAsync, PFN_cuMemPrefetchAsync_v12020)                    \
    X(cuMemAdvise, PFN_cuMemAdvise_v12020)                                  \
    X(cuMemAllocAsync, PFN_cuMemAllocAsync_v11020)                          \
    X(cuMemAllocFromPoolAsync, PFN_cuMemAllocFromPoolAsync_v11020)          \
    X(cuMemFreeAsync, PFN_cuMemFreeAsync_v11020)                            \
    X(cuDeviceGetDefaultMemPool, PFN_cuDeviceGetDefaultMemPool_v11020)      \
    X(cuDeviceGetMemPool, PFN_cuDeviceGetMemPool_v11020)                    \
    X(cuDeviceSetMemPool, PFN_cuDeviceSetMemPool_v11020)                    \
    X(cuMemPoolSetAttribute, PFN_cuMemPoolSetAttribute_v11020)              \
    X(cuMemPoolGetAttribute, PFN_cuMemPoolGetAttribute_v11020)              \
    X(cuMemPoolTrimTo, PFN_cuMemPoolTrimTo_v11020)                          \
    X(cuMemPoolCreate, PFN_cuMemPoolCreate_v11020)                          \
    X(cuMemPoolDestroy, PFN_cuMemPoolDestroy_v11020)                        \
    X(cuMemPoolExportToShareableHandle, PFN_cuMemPoolExportToShareableHandle_v11020) \
    X(cuMemPoolImportFromShareableHandle, PFN_cuMemPoolImportFromShareableHandle_v11020) \
    X(cuMemPoolExportPointer, PFN_cuMemPoolExportPointer_v11020)            \
    X(cuMemPoolImportPointer, PFN_cuMemPoolImportPointer_v11020)            \
    X(cuPointerGetAttribute, PFN_cuPointerGetAttribute_v4000)               \
    X(cuPointerGetAttributes, PFN_cuPointerGetAttributes_v7000)             \
    X(cuMemcpy, PFN_cuMemcpy_v4000)                                         \
    X(cuMemcpyAsync, PFN_cuMemcpyAsync_v4000)                               \
    X(cuMemcpyHtoD, PFN_cuMemcpyHtoD_v3020)                                 \
    X(cuMemcpyDtoH, PFN_cuMemcpyDtoH_v3020)                                 \
    X(cuMemcpyDtoD, PFN_cuMemcpyDtoD_v3020)                                 \
    X(cuMemcpyHtoDAsync, PFN_cuMemcpyHtoDAsync_v3020)                       \
    X(cuMemcpyDtoHAsync, PFN_cuMemcpyDtoHAsync_v3020)                       \
    X(cuMemcpyDtoDAsync, PFN_cuMemcpyDtoDAsync_v3020)                       \
    X(cuMemcpy2D, PFN_cuMemcpy2D_v3020)                                     \
    X(cuMemcpy2DAsync, PFN_cuMemcpy2DAsync_v3020)                           \
    X(cuMemcpy3D, PFN_cuMemcpy3D_v3020)                                     \
    X(cuMemcpy3DAsync, PFN_cuMemcpy3DAsync_v3020)                           \
    X(cuMemcpy3DPeer, PFN_cuMemcpy3DPeer_v4000)                             \
    X(cuMemcpy3DPeerAsync, PFN_cuMemcpy3DPeerAsync_v4000)                   \
    X(cuMemcpyBatchAsync, PFN_cuMemcpyBatchAsync_v13000)                    \
    X(cuMemcpyPeer, PFN_cuMemcpyPeer_v4000)                                 \
    X(cuMemcpyAtoA, PFN_cuMemcpyAtoA_v3020)                                 \
    X(cuArray3DCreate, PFN_cuArray3DCreate_v3020)                           \
    X(cuArray3DGetDescriptor, PFN_cuArray3DGetDescriptor_v3020)             \
    X(cuArrayDestroy, PFN_cuArrayDestroy_v2000)                             \
    X(cuMemcpyPeerAsync, PFN_cuMemcpyPeerAsync_v4000)                       \
    X(cuMemsetD8, PFN_cuMemsetD8_v3020)                                     \
    X(cuMemsetD8Async, PFN_cuMemsetD8Async_v3020)                           \
    X(cuMemsetD2D8, PFN_cuMemsetD2D8_v3020)                                 \
    X(cuMemsetD2D8Async, PFN_cuMemsetD2D8Async_v3020)                       \
    X(cuStreamCreate, PFN_cuStreamCreate_v2000)                             \
    X(cuStreamCreateWithPriority, PFN_cuStreamCreateWithPriority_v5050)     \
    X(cuStreamDestroy, PFN_cuStreamDestroy_v4000)                           \
    X(cuStreamSynchronize, PFN_cuStreamSynchronize_v2000)                   \
    X(cuStreamQuery, PFN_cuStreamQuery_v2000)                               \
    X(cuStreamWaitEvent, PFN_cuStreamWaitEvent_v3020)                       \
    X(cuStreamGetFlags, PFN_cuStreamGetFlags_v5050)                         \
    X(cuStreamGetPriority, PFN_cuStreamGetPriority_v5050)                   \
    X(cuStreamGetDevice, PFN_cuStreamGetDevice_v12080)                   \
    X(cuLaunchHostFunc, PFN_cuLaunchHostFunc_v10000)                        \
    X(cuEventCreate, PFN_cuEventCreate_v2000)                               \
    X(cuEventRecord, PFN_cuEventRecord_v2000)                               \
    X(cuEventRecordWithFlags, PFN_cuEventRecordWithFlags_v11010)            \
    X(cuEventQuery, PFN_cuEventQuery_v2000)                                 \
    X(cuEventSynchronize, PFN_cuEventSynchronize_v2000)                     \
    X(cuEventElapsedTime, PFN_cuEventElapsedTime_v12080)                    \
    X(cuEventDestroy, PFN_cuEventDestroy_v4000)                             \
    X(cuModuleLoadData, PFN_cuModuleLoadData_v2000)                         \
    X(cuModuleGetFunction, PFN_cuModuleGetFunction_v2000)                   \
    X(cuFuncGetAttribute, PFN_cuFuncGetAttribute_v2020)                     \
    X(cuFuncSetAttribute, PFN_cuFuncSetAttribute_v9000)                     \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags,                 \
      PFN_cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags_v7000)       \
    X(cuOccupancyAvailableDynamicSMemPerBlock,                              \
      PFN_cuOccupancyAvailableDynamicSMemPerBlock_v10020)                   \
    X(cuLaunchKernel, PFN_cuLaunchKernel_v4000)                             \
    X(cuStreamBeginCapture, PFN_cuStreamBeginCapture_v10010)                \
    X(cuStreamEndCapture, PFN_cuStreamEndCapture_v10000)                    \
    X(cuStreamIsCapturing, PFN_cuStreamIsCapturing_v10000)                  \
    X(cuStreamGetCaptureInfo, PFN_cuStreamGetCaptureInfo_v12030)            \
    X(cuThreadExchangeStreamCaptureMode, PFN_cuThreadExchangeStreamCaptureMode_v10010) \
    X(cuGraphCreate, PFN_cuGraphCreate_v10000)                              \
    X(cuGraphDestroy, PFN_cuGraphDestroy_v10000)                            \
    X(cuGraphClone, PFN_cuGraphClone_v10000)                                \
    X(cuGraphAddMemcpyNode, PFN_cuGraphAddMemcpyNode_v10000)                \
    X(cuGraphAddMemsetNode, PFN_cuGraphAddMemsetNode_v10000)                \
    X(cuGraphAddKernelNode, PFN_cuGraphAddKernelNode_v12000)                \
    X(cuGraphAddHostNode, PFN_cuGraphAddHostNode_v10000)                    \
    X(cuGraphAddEmptyNode, PFN_cuGraphAddEmptyNode_v10000)                  \
    X(cuGraphAddChildGraphNode, PFN_cuGraphAddChildGraphNode_v10000)        \
    X(cuGraphAddEventRecordNode, PFN_cuGraphAddEventRecordNode_v11010)      \
    X(cuGraphAddEventWaitNode, PFN_cuGraphAddEventWaitNode_v11010)          \
    X(cuGraphGetNodes, PFN_cuGraphGetNodes_v10000)                          \
    X(cuGraphGetRootNodes, PFN_cuGraphGetRootNodes_v10000)                  \
    X(cuGraphNodeGetType, PFN_cuGraphNodeGetType_v10000)                    \
    X(cuGraphDestroyNode, PFN_cuGraphDestroyNode_v10000)                    \
    X(cuGraphMemcpyNodeGetParams, PFN_cuGraphMemcpyNodeGetParams_v10000)    \
    X(cuGraphMemcpyNodeSetParams, PFN_cuGraphMemcpyNodeSetParams_v10000)    \
    X(cuGraphMemsetNodeGetParams, PFN_cuGraphMemsetNodeGetParams_v10000)    \
    X(cuGraphMemsetNodeSetParams, PFN_cuGraphMemsetNodeSetParams_v10000)    \
    X(cuGraphHostNodeGetParams, PFN_cuGraphHostNodeGetParams_v10000)        \
    X(cuGraphKernelNodeGetParams, PFN_cuGraphKernelNodeGetParams_v12000)    \
    X(cuGraphKernelNodeSetParams, PFN_cuGraphKernelNodeSetParams_v12000)    \
    X(cuGraphHostNodeSetParams, PFN_cuGraphHostNodeSetParams_v10000)        \
    X(cuGraphInstantiate, PFN_cuGraphInstantiateWithFlags_v11040)           \
    X(cuGraphInstantiateWithParams, PFN_cuGraphInstantiateWithParams_v12000) \
    X(cuGraphExecDestroy, PFN_cuGraphExecDestroy_v10000)                    \
    X(cuGraphLaunch, PFN_cuGraphLaunch_v10000)                              \
    X(cuGraphUpload, PFN_cuGraphUpload_v11010)                              \
    X(cuGraphExecMemcpyNodeSetParams, PFN_cuGraphExecMemcpyNodeSetParams_v10020) \
    X(cuGraphExecMemsetNodeSetParams, PFN_cuGraphExecMemsetNodeSetParams_v10020) \
    X(cuGraphExecHostNodeSetParams, PFN_cuGraphExecHostNodeSetParams_v10020) \
    X(cuGraphExecKernelNodeSetParams, PFN_cuGraphExecKernelNodeSetParams_v12000) \
    X(cuGraphExecUpdate, PFN_cuGraphExecUpdate_v12000)

typedef CUresult (*xprt_global_alloc_fn)(CUdeviceptr *dptr, size_t bytes, const void *init);

typedef struct xprt_drv {
/* name expands through cuda.h's macros (cuMemAlloc -> cuMemAlloc_v2) here
 * and at every d->name call site alike. */
#define XPRT_MEMBER(name, type) type name;
    XPRT_DRIVER_FUNCS(XPRT_MEMBER)
#undef XPRT_MEMBER
    /* The simulator's private extension: storage for a module variable. */
    xprt_global_alloc_fn xpsimModuleGlobalAlloc;
} xprt_drv;

/* Calls a driver entry point; one the driver did not hand out answers "not
 * supported" instead of crashing. */
#define XPRT_CALL(d, fn, ...) ((d)->fn != NULL ? (d)->fn(__VA_ARGS__) : CUDA_ERROR_NOT_SUPPORTED)

/* Which default stream the calling entry point means: the plain names use the
 * legacy default stream, the _ptds/_ptsz ones the per-thread default stream. */
typedef enum xprt_api { XPRT_LEGACY = 0, XPRT_PTDS = 1 } xprt_api;

/* ---- rt_state.c ---------------------------------------------------------- */

/* Loads the driver once; cudaSuccess or why the runtime cannot work
 * (cudaErrorInsufficientDriver without a usable libcuda.so.1, or what cuInit
 * answered). */
cudaError_t xprt_init(void);

/* The table for api, after xprt_init succeeded. */
const xprt_drv *xprt_table(xprt_api api);

/* The driver's own cuGetProcAddress_v2, after xprt_init succeeded. */
__typeof__(cuGetProcAddress_v2) *xprt_get_proc_address(void);

/* Entry of every API call that uses the driver: initializes, makes the calling
 * thread's device's primary context current, and returns the table.  A
 * context the program made current through the driver API (cuCtxCreate,
 * cuCtxSetCurrent, cuCtxPushCurrent) is used instead, as NVIDIA's runtime
 * does. */
cudaError_t xprt_enter(xprt_api api, const xprt_drv **out);

/* Makes dev's primary context current on the calling thread (retaining it the
 * first time); *out_ctx receives it when not NULL. */
cudaError_t xprt_use_device(int dev, CUcontext *out_ctx);

/* The primary context of dev, retained once per process. */
cudaError_t xprt_primary_ctx(int dev, CUcontext *out_ctx);

int xprt_device_count(void);
/* cudaSetDevice's device, or the device of the context the program made
 * current through the driver API. */
int xprt_current_device(void);
void xprt_set_current_device(int dev);

/* Bumped by cudaDeviceReset: what was loaded into the device before is gone. */
unsigned xprt_device_generation(int dev);

/* cudaDeviceReset's bookkeeping after the driver reset the primary context. */
void xprt_device_was_reset(int dev);

unsigned xprt_device_flags(int dev);
void xprt_set_device_flags(int dev, unsigned flags);

/* ---- rt_error.c ---------------------------------------------------------- */

/* CUresult -> cudaError_t: the values coincide since CUDA 12 for every error
 * the driver returns; a value the runtime enum lacks becomes cudaErrorUnknown. */
cudaError_t xprt_map_error(CUresult r);

/* Records a failing call's error as the thread's last error (and a sticky one
 * against the current device) and returns it: the tail of every API call.
 * cudaErrorNotReady is a status, never recorded. */
cudaError_t xprt_result(cudaError_t e);

/* Same for a driver result. */
static inline cudaError_t xprt_result_cu(CUresult r)
{
    return xprt_result(xprt_map_error(r));
}

bool xprt_is_sticky(cudaError_t e);

/* Forgets dev's sticky error (cudaDeviceReset). */
void xprt_clear_sticky(int dev);

/* The weak stubs' handler (sim/gen/gen_stubs.py). */
int xprt_unsupported(const char *name);

/* Generated from driver_types.h by gen_error_table.py: the enumerator's name
 * for a cudaError value, NULL for a value not in enum cudaError. */
const char *xprt_error_enum_name(int code);

/* ---- rt_register.c ------------------------------------------------------- */

typedef struct xprt_var xprt_var;

/* The registered __device__/__constant__/__managed__ variable whose host
 * shadow (or managed storage) is symbol; NULL if none. */
xprt_var *xprt_find_var(const void *symbol);

/* The variable's size and its storage on the calling thread's current device
 * (allocated and initialized on first use). */
cudaError_t xprt_var_address(const xprt_drv *d, xprt_var *v, CUdeviceptr *out_ptr,
                             size_t *out_size);

/* cudaDeviceReset's part: re-creates the __managed__ variables the reset of
 * dev (now current again) freed.  d: the legacy table. */
void xprt_modules_after_reset(const xprt_drv *d, int dev);

/* The driver function of a kernel's host stub (or cudaKernel_t) on the
 * current device: cudaErrorInvalidDeviceFunction if it is none. */
cudaError_t xprt_function_of(const xprt_drv *d, const void *func, CUfunction *out);

/* ---- rt_memory.c --------------------------------------------------------- */

/* What a pointer addresses, as the driver knows it. */
typedef enum xprt_mem {
    XPRT_MEM_UNREGISTERED = 0,   /* ordinary pageable host memory (or garbage) */
    XPRT_MEM_HOST,               /* pinned or registered host memory */
    XPRT_MEM_DEVICE,
    XPRT_MEM_MANAGED,
} xprt_mem;

typedef struct xprt_ptr_info {
    xprt_mem type;
    int device;                  /* allocated/registered against; -2 if none */
    CUdeviceptr device_ptr;      /* 0 if the device cannot reach it */
    void *host_ptr;              /* NULL if the host cannot reach it */
} xprt_ptr_info;

cudaError_t xprt_classify(const xprt_drv *d, const void *ptr, xprt_ptr_info *out);

/* ---- rt_copy.c ----------------------------------------------------------- */

/* The copy behind cudaMemcpy/cudaMemcpyAsync (and the symbol copies): kind
 * checked against the pointers, then the matching driver copy.  stream is
 * used only when async. */
cudaError_t xprt_copy(const xprt_drv *d, void *dst, const void *src, size_t count,
                      enum cudaMemcpyKind kind, bool async, cudaStream_t stream);

/* Whether ptr is acceptable as the side of a copy that its kind says is on
 * the device (want_device) or on the host. */
cudaError_t xprt_check_side(const xprt_drv *d, const void *ptr, bool want_device);

/* What a memcpy node of a graph holds, from the runtime's parameters
 * (rt_graph.c): cudaMemcpy3DParms converted as cudaMemcpy3D converts it
 *, a 1D copy, and the address of
 * symbol + offset for a copy of count bytes to (to_symbol) or from it. */
cudaError_t xprt_memcpy3d_params(const xprt_drv *d, const struct cudaMemcpy3DParms *p,
                                 CUDA_MEMCPY3D *out);
cudaError_t xprt_memcpy1d_params(const xprt_drv *d, void *dst, const void *src, size_t count,
                                 enum cudaMemcpyKind kind, CUDA_MEMCPY3D *out);
cudaError_t xprt_symbol_at(const xprt_drv *d, const void *symbol, size_t count, size_t offset,
                           enum cudaMemcpyKind kind, bool to_symbol, void **out);

/* ---- rt_array.c ---------------------------------------------------------- */

/* Bytes of one element of array a; cudaErrorInvalidResourceHandle when a
 * names no array. */
cudaError_t xprt_array_elem(const xprt_drv *d, cudaArray_const_t a, size_t *out);

/* The driver function behind a registered kernel (its host stub `func`),
 * after entering as xprt_enter does; cudaErrorInvalidDeviceFunction when
 * func is no kernel. */
cudaError_t xprt_func_handle(const void *func, const xprt_drv **d, CUfunction *out);

/* ---- rt_fatbin.c --------------------------------------------------------- */

/* Finds the initial bytes of the module variable named name in a fatbin's
 * first uncompressed ELF image: true and *out_bytes (NULL for a variable in a
 * no-bits section, i.e. zero-initialized) when found with exactly size bytes. */
bool xprt_fatbin_var_init(const void *fatbin, const char *name, size_t size,
                          const void **out_bytes);

#endif
