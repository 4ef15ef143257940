/* xp_api.h: the numbering of hooked entry points, shared by the preload
 * (records carry the id) and the readers (which store the name). */
#ifndef XP_API_H
#define XP_API_H

/* X(name, layer): layer 0 runtime, 1 driver.  Append only: ids are what the
 * journal stores, so reordering would misname old journals. */
#define XP_API_LIST(X)                                                         \
    X(cudaMalloc, 0)                                                           \
    X(cudaFree, 0)                                                             \
    X(cudaMallocHost, 0)                                                       \
    X(cudaHostAlloc, 0)                                                        \
    X(cudaFreeHost, 0)                                                         \
    X(cudaHostRegister, 0)                                                     \
    X(cudaHostUnregister, 0)                                                   \
    X(cudaMallocManaged, 0)                                                    \
    X(cudaMemcpy, 0)                                                           \
    X(cudaMemcpy_ptds, 0)                                                      \
    X(cudaMemcpyAsync, 0)                                                      \
    X(cudaMemcpyAsync_ptsz, 0)                                                 \
    X(cudaStreamSynchronize, 0)                                                \
    X(cudaStreamSynchronize_ptsz, 0)                                           \
    X(cudaDeviceSynchronize, 0)                                                \
    X(cudaEventSynchronize, 0)                                                 \
    X(cudaSetDevice, 0)                                                        \
    X(cudaMemcpy2D, 0)                                                      \
    X(cudaMemcpy2D_ptds, 0)                                                 \
    X(cudaMemcpy2DAsync, 0)                                                 \
    X(cudaMemcpy2DAsync_ptsz, 0)                                            \
    X(cudaMemcpyPeer, 0)                                                    \
    X(cudaMemcpyPeer_ptds, 0)                                               \
    X(cudaMemcpyPeerAsync, 0)                                               \
    X(cudaMemcpyPeerAsync_ptsz, 0)                                          \
    X(cudaMemcpyToSymbol, 0)                                                \
    X(cudaMemcpyToSymbol_ptds, 0)                                           \
    X(cudaMemcpyToSymbolAsync, 0)                                           \
    X(cudaMemcpyToSymbolAsync_ptsz, 0)                                      \
    X(cudaMemcpyFromSymbol, 0)                                              \
    X(cudaMemcpyFromSymbol_ptds, 0)                                         \
    X(cudaMemcpyFromSymbolAsync, 0)                                         \
    X(cudaMemcpyFromSymbolAsync_ptsz, 0)                                    \
    X(cudaMemset, 0)                                                        \
    X(cudaMemset_ptds, 0)                                                   \
    X(cudaMemsetAsync, 0)                                                   \
    X(cudaMemsetAsync_ptsz, 0)                                              \
    X(cudaMallocPitch, 0)                                                   \
    X(cudaLaunchKernel, 0)                                                  \
    X(cudaLaunchKernel_ptsz, 0)                                             \
    X(__cudaLaunchKernel, 0)                                                \
    X(__cudaLaunchKernel_ptsz, 0)                                           \
    X(cuMemAlloc_v2, 1)                                                     \
    X(cuMemAllocPitch_v2, 1)                                                \
    X(cuMemAllocManaged, 1)                                                 \
    X(cuMemFree_v2, 1)                                                      \
    X(cuMemAllocHost_v2, 1)                                                 \
    X(cuMemHostAlloc, 1)                                                    \
    X(cuMemFreeHost, 1)                                                     \
    X(cuMemHostRegister_v2, 1)                                              \
    X(cuMemHostUnregister, 1)                                               \
    X(cuMemcpy, 1)                                                          \
    X(cuMemcpy_ptds, 1)                                                     \
    X(cuMemcpyAsync, 1)                                                     \
    X(cuMemcpyAsync_ptsz, 1)                                                \
    X(cuMemcpyHtoD_v2, 1)                                                   \
    X(cuMemcpyHtoD_v2_ptds, 1)                                              \
    X(cuMemcpyDtoH_v2, 1)                                                   \
    X(cuMemcpyDtoH_v2_ptds, 1)                                              \
    X(cuMemcpyDtoD_v2, 1)                                                   \
    X(cuMemcpyDtoD_v2_ptds, 1)                                              \
    X(cuMemcpyHtoDAsync_v2, 1)                                              \
    X(cuMemcpyHtoDAsync_v2_ptsz, 1)                                         \
    X(cuMemcpyDtoHAsync_v2, 1)                                              \
    X(cuMemcpyDtoHAsync_v2_ptsz, 1)                                         \
    X(cuMemcpyDtoDAsync_v2, 1)                                              \
    X(cuMemcpyDtoDAsync_v2_ptsz, 1)                                         \
    X(cuMemcpyPeer, 1)                                                      \
    X(cuMemcpyPeer_ptds, 1)                                                 \
    X(cuMemcpyPeerAsync, 1)                                                 \
    X(cuMemcpyPeerAsync_ptsz, 1)                                            \
    X(cuMemcpy2D_v2, 1)                                                     \
    X(cuMemcpy2D_v2_ptds, 1)                                                \
    X(cuMemcpy2DUnaligned_v2, 1)                                            \
    X(cuMemcpy2DUnaligned_v2_ptds, 1)                                       \
    X(cuMemcpy2DAsync_v2, 1)                                                \
    X(cuMemcpy2DAsync_v2_ptsz, 1)                                           \
    X(cuMemsetD8_v2, 1)                                                     \
    X(cuMemsetD8_v2_ptds, 1)                                                \
    X(cuMemsetD16_v2, 1)                                                    \
    X(cuMemsetD16_v2_ptds, 1)                                               \
    X(cuMemsetD32_v2, 1)                                                    \
    X(cuMemsetD32_v2_ptds, 1)                                               \
    X(cuMemsetD8Async, 1)                                                   \
    X(cuMemsetD8Async_ptsz, 1)                                              \
    X(cuMemsetD16Async, 1)                                                  \
    X(cuMemsetD16Async_ptsz, 1)                                             \
    X(cuMemsetD32Async, 1)                                                  \
    X(cuMemsetD32Async_ptsz, 1)                                             \
    X(cuStreamSynchronize, 1)                                               \
    X(cuStreamSynchronize_ptsz, 1)                                          \
    X(cuCtxSynchronize, 1)                                                  \
    X(cuCtxSynchronize_v2, 1)                                               \
    X(cuEventSynchronize, 1)                                                \
    X(cuLaunchKernel, 1)                                                    \
    X(cuLaunchKernel_ptsz, 1) \
    X(cudaMallocAsync, 0)\
    X(cudaMallocAsync_ptsz, 0)\
    X(cudaFreeAsync, 0)\
    X(cudaFreeAsync_ptsz, 0)\
    X(cudaMallocFromPoolAsync, 0)\
    X(cudaMallocFromPoolAsync_ptsz, 0)\
    X(cuMemAllocAsync, 1)\
    X(cuMemAllocAsync_ptsz, 1)\
    X(cuMemFreeAsync, 1)\
    X(cuMemFreeAsync_ptsz, 1)\
    X(cuMemAllocFromPoolAsync, 1)\
    X(cuMemAllocFromPoolAsync_ptsz, 1)\
    X(cudaMalloc3D, 0)\
    X(cudaMemcpy3D, 0)\
    X(cudaMemcpy3D_ptds, 0)\
    X(cudaMemcpy3DAsync, 0)\
    X(cudaMemcpy3DAsync_ptsz, 0)\
    X(cudaMemcpy3DPeer, 0)\
    X(cudaMemcpy3DPeer_ptds, 0)\
    X(cudaMemcpy3DPeerAsync, 0)\
    X(cudaMemcpy3DPeerAsync_ptsz, 0)\
    X(cudaMemcpyBatchAsync, 0)\
    X(cudaMemcpyBatchAsync_ptsz, 0)\
    X(cudaMemPrefetchAsync, 0)\
    X(cudaMemPrefetchAsync_ptsz, 0)\
    X(cuMemAddressReserve, 1)\
    X(cuMemAddressFree, 1)\
    X(cuMemCreate, 1)\
    X(cuMemRelease, 1)\
    X(cuMemMap, 1)\
    X(cuMemUnmap, 1)\
    X(cuMemcpy3D_v2, 1)\
    X(cuMemcpy3D_v2_ptds, 1)\
    X(cuMemcpy3DAsync_v2, 1)\
    X(cuMemcpy3DAsync_v2_ptsz, 1)\
    X(cuMemPrefetchAsync_v2, 1)\
    X(cuMemPrefetchAsync_v2_ptsz, 1)\
    X(cuMemPrefetchAsync, 1)\
    X(cuMemPrefetchAsync_ptsz, 1)\
    X(cudaMemPrefetchAsync_v2, 0)\
    X(cudaMemPrefetchAsync_v2_ptsz, 0)\
    X(cudaProfilerStart, 0)\
    X(cudaProfilerStop, 0)\
    X(cuProfilerStart, 1)\
    X(cuProfilerStop, 1)\
    X(cudaMallocArray, 0)\
    X(cudaMalloc3DArray, 0)\
    X(cudaFreeArray, 0)\
    X(cudaMemcpy2DToArray, 0)\
    X(cudaMemcpy2DToArray_ptds, 0)\
    X(cudaMemcpy2DToArrayAsync, 0)\
    X(cudaMemcpy2DToArrayAsync_ptsz, 0)\
    X(cudaMemcpy2DFromArray, 0)\
    X(cudaMemcpy2DFromArray_ptds, 0)\
    X(cudaMemcpy2DFromArrayAsync, 0)\
    X(cudaMemcpy2DFromArrayAsync_ptsz, 0)\
    X(cudaMemcpy2DArrayToArray, 0)\
    X(cudaMemcpy2DArrayToArray_ptds, 0)\
    X(cudaMemcpyToArray, 0)\
    X(cudaMemcpyToArray_ptds, 0)\
    X(cudaMemcpyToArrayAsync, 0)\
    X(cudaMemcpyToArrayAsync_ptsz, 0)\
    X(cudaMemcpyFromArray, 0)\
    X(cudaMemcpyFromArray_ptds, 0)\
    X(cudaMemcpyFromArrayAsync, 0)\
    X(cudaMemcpyFromArrayAsync_ptsz, 0)\
    X(cudaMemcpyArrayToArray, 0)\
    X(cudaMemcpyArrayToArray_ptds, 0)\
    X(cuArrayCreate_v2, 1)\
    X(cuArray3DCreate_v2, 1)\
    X(cuArrayDestroy, 1)\
    X(cuMemcpyHtoA_v2, 1)\
    X(cuMemcpyHtoA_v2_ptds, 1)\
    X(cuMemcpyAtoH_v2, 1)\
    X(cuMemcpyAtoH_v2_ptds, 1)\
    X(cuMemcpyHtoAAsync_v2, 1)\
    X(cuMemcpyHtoAAsync_v2_ptsz, 1)\
    X(cuMemcpyAtoHAsync_v2, 1)\
    X(cuMemcpyAtoHAsync_v2_ptsz, 1)\
    X(cuMemcpyDtoA_v2, 1)\
    X(cuMemcpyDtoA_v2_ptds, 1)\
    X(cuMemcpyAtoD_v2, 1)\
    X(cuMemcpyAtoD_v2_ptds, 1)\
    X(cuMemcpyAtoA_v2, 1)\
    X(cuMemcpyAtoA_v2_ptds, 1)\
    X(cudaStreamBeginCapture, 0)\
    X(cudaStreamBeginCapture_ptsz, 0)\
    X(cudaStreamBeginCaptureToGraph, 0)\
    X(cudaStreamBeginCaptureToGraph_ptsz, 0)\
    X(cudaStreamEndCapture, 0)\
    X(cudaStreamEndCapture_ptsz, 0)\
    X(cudaGraphAddMemcpyNode, 0)\
    X(cudaGraphAddMemcpyNode1D, 0)\
    X(cudaGraphAddMemcpyNodeToSymbol, 0)\
    X(cudaGraphAddMemcpyNodeFromSymbol, 0)\
    X(cudaGraphAddMemsetNode, 0)\
    X(cudaGraphMemcpyNodeSetParams, 0)\
    X(cudaGraphMemcpyNodeSetParams1D, 0)\
    X(cudaGraphMemcpyNodeSetParamsToSymbol, 0)\
    X(cudaGraphMemcpyNodeSetParamsFromSymbol, 0)\
    X(cudaGraphMemsetNodeSetParams, 0)\
    X(cudaGraphExecMemcpyNodeSetParams, 0)\
    X(cudaGraphExecMemcpyNodeSetParams1D, 0)\
    X(cudaGraphExecMemcpyNodeSetParamsToSymbol, 0)\
    X(cudaGraphExecMemcpyNodeSetParamsFromSymbol, 0)\
    X(cudaGraphExecMemsetNodeSetParams, 0)\
    X(cudaGraphInstantiate, 0)\
    X(cudaGraphInstantiateWithFlags, 0)\
    X(cudaGraphInstantiateWithParams, 0)\
    X(cudaGraphInstantiateWithParams_ptsz, 0)\
    X(cudaGraphExecUpdate, 0)\
    X(cudaGraphLaunch, 0)\
    X(cudaGraphLaunch_ptsz, 0)\
    X(cudaGraphExecDestroy, 0)\
    X(cudaGraphDestroy, 0)\
    X(cudaGraphClone, 0)\
    X(cudaGraphDestroyNode, 0)\
    X(cudaGraphAddChildGraphNode, 0)\
    X(cuStreamBeginCapture, 1)\
    X(cuStreamBeginCapture_ptsz, 1)\
    X(cuStreamBeginCapture_v2, 1)\
    X(cuStreamBeginCapture_v2_ptsz, 1)\
    X(cuStreamBeginCaptureToGraph, 1)\
    X(cuStreamBeginCaptureToGraph_ptsz, 1)\
    X(cuStreamEndCapture, 1)\
    X(cuStreamEndCapture_ptsz, 1)\
    X(cuGraphAddMemcpyNode, 1)\
    X(cuGraphAddMemsetNode, 1)\
    X(cuGraphMemcpyNodeSetParams, 1)\
    X(cuGraphMemsetNodeSetParams, 1)\
    X(cuGraphExecMemcpyNodeSetParams, 1)\
    X(cuGraphExecMemsetNodeSetParams, 1)\
    X(cuGraphInstantiate, 1)\
    X(cuGraphInstantiate_v2, 1)\
    X(cuGraphInstantiateWithFlags, 1)\
    X(cuGraphInstantiateWithParams, 1)\
    X(cuGraphInstantiateWithParams_ptsz, 1)\
    X(cuGraphExecUpdate, 1)\
    X(cuGraphExecUpdate_v2, 1)\
    X(cuGraphLaunch, 1)\
    X(cuGraphLaunch_ptsz, 1)\
    X(cuGraphExecDestroy, 1)\
    X(cuGraphDestroy, 1)\
    X(cuGraphClone, 1)\
    X(cuGraphDestroyNode, 1)\
    X(cuGraphAddChildGraphNode, 1)\
    X(cuCtxCreate, 1)\
    X(cuCtxCreate_v2, 1)\
    X(cuCtxCreate_v3, 1)\
    X(cuCtxCreate_v4, 1)\
    X(cuCtxDestroy, 1)\
    X(cuCtxDestroy_v2, 1)\
    X(cuCtxSetCurrent, 1)\
    X(cuCtxPushCurrent, 1)\
    X(cuCtxPushCurrent_v2, 1)\
    X(cuCtxPopCurrent, 1)\
    X(cuCtxPopCurrent_v2, 1)\
    X(cudaIpcOpenMemHandle, 0)\
    X(cudaIpcCloseMemHandle, 0)\
    X(cuIpcOpenMemHandle, 1)\
    X(cuIpcOpenMemHandle_v2, 1)\
    X(cuIpcCloseMemHandle, 1)\
    X(cudaMemPoolImportPointer, 0)\
    X(cuMemPoolImportPointer, 1)

typedef enum xp_api {
    XP_API_NONE = 0,
#define XP_API_ENUM(name, layer) XP_API_##name,
    XP_API_LIST(XP_API_ENUM)
#undef XP_API_ENUM
    XP_API_COUNT
} xp_api;

/* The entry point's name ("cudaMemcpyAsync"), or NULL for an unknown id. */
const char *xp_api_name(unsigned id);

/* "runtime" or "driver", or NULL for an unknown id. */
const char *xp_api_layer(unsigned id);

#endif
