/* rt_abi.h: what the CUDA 12 ABI layer (rt_abi12.c) shares with the runtime's CUDA 13 code. */
#ifndef RT_ABI_H
#define RT_ABI_H

/* Included after one version's cuda.h and runtime headers, whichever: it names
 * no type whose layout differs between CUDA 12 and 13, so the libcudart.so.12
 * build (sim/cuda12/) can compile rt_abi12.c against NVIDIA's CUDA 12 headers
 * and everything else against CUDA 13's. */

#include <stddef.h>

/* How a cudaDeviceProp field is stored from its int device attribute. */
typedef enum xprt_prop_type { XPRT_P_INT, XPRT_P_UINT, XPRT_P_SIZE } xprt_prop_type;

typedef struct xprt_prop_attr {
    size_t offset;               /* in the caller's struct cudaDeviceProp */
    xprt_prop_type type;
    int attr;                    /* CUdevice_attribute: same values in 12 and 13 */
} xprt_prop_attr;

#define XPRT_PROP_I(field, a) {offsetof(struct cudaDeviceProp, field), XPRT_P_INT, CU_DEVICE_ATTRIBUTE_##a},
#define XPRT_PROP_U(field, a) {offsetof(struct cudaDeviceProp, field), XPRT_P_UINT, CU_DEVICE_ATTRIBUTE_##a},
#define XPRT_PROP_S(field, a) {offsetof(struct cudaDeviceProp, field), XPRT_P_SIZE, CU_DEVICE_ATTRIBUTE_##a},

/* The fields of struct cudaDeviceProp that CUDA 12 and 13 both have and that
 * have a device attribute, which is how NVIDIA's runtime fills them; each
 * version's table adds its own fields (rt_device.c, rt_abi12.c). */
#define XPRT_PROPS_COMMON(PI, PU, PS)                                              \
    PS(sharedMemPerBlock, MAX_SHARED_MEMORY_PER_BLOCK)                             \
    PI(regsPerBlock, MAX_REGISTERS_PER_BLOCK)                                      \
    PI(warpSize, WARP_SIZE)                                                        \
    PS(memPitch, MAX_PITCH)                                                        \
    PI(maxThreadsPerBlock, MAX_THREADS_PER_BLOCK)                                  \
    PI(maxThreadsDim[0], MAX_BLOCK_DIM_X)                                          \
    PI(maxThreadsDim[1], MAX_BLOCK_DIM_Y)                                          \
    PI(maxThreadsDim[2], MAX_BLOCK_DIM_Z)                                          \
    PI(maxGridSize[0], MAX_GRID_DIM_X)                                             \
    PI(maxGridSize[1], MAX_GRID_DIM_Y)                                             \
    PI(maxGridSize[2], MAX_GRID_DIM_Z)                                             \
    PS(totalConstMem, TOTAL_CONSTANT_MEMORY)                                       \
    PI(major, COMPUTE_CAPABILITY_MAJOR)                                            \
    PI(minor, COMPUTE_CAPABILITY_MINOR)                                            \
    PS(textureAlignment, TEXTURE_ALIGNMENT)                                        \
    PS(texturePitchAlignment, TEXTURE_PITCH_ALIGNMENT)                             \
    PI(multiProcessorCount, MULTIPROCESSOR_COUNT)                                  \
    PI(integrated, INTEGRATED)                                                     \
    PI(canMapHostMemory, CAN_MAP_HOST_MEMORY)                                      \
    PI(maxTexture1D, MAXIMUM_TEXTURE1D_WIDTH)                                      \
    PI(maxTexture1DMipmap, MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH)                      \
    PI(maxTexture2D[0], MAXIMUM_TEXTURE2D_WIDTH)                                   \
    PI(maxTexture2D[1], MAXIMUM_TEXTURE2D_HEIGHT)                                  \
    PI(maxTexture2DMipmap[0], MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH)                   \
    PI(maxTexture2DMipmap[1], MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT)                  \
    PI(maxTexture2DLinear[0], MAXIMUM_TEXTURE2D_LINEAR_WIDTH)                      \
    PI(maxTexture2DLinear[1], MAXIMUM_TEXTURE2D_LINEAR_HEIGHT)                     \
    PI(maxTexture2DLinear[2], MAXIMUM_TEXTURE2D_LINEAR_PITCH)                      \
    PI(maxTexture2DGather[0], MAXIMUM_TEXTURE2D_GATHER_WIDTH)                      \
    PI(maxTexture2DGather[1], MAXIMUM_TEXTURE2D_GATHER_HEIGHT)                     \
    PI(maxTexture3D[0], MAXIMUM_TEXTURE3D_WIDTH)                                   \
    PI(maxTexture3D[1], MAXIMUM_TEXTURE3D_HEIGHT)                                  \
    PI(maxTexture3D[2], MAXIMUM_TEXTURE3D_DEPTH)                                   \
    PI(maxTexture3DAlt[0], MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE)                      \
    PI(maxTexture3DAlt[1], MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE)                     \
    PI(maxTexture3DAlt[2], MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE)                      \
    PI(maxTextureCubemap, MAXIMUM_TEXTURECUBEMAP_WIDTH)                            \
    PI(maxTexture1DLayered[0], MAXIMUM_TEXTURE1D_LAYERED_WIDTH)                    \
    PI(maxTexture1DLayered[1], MAXIMUM_TEXTURE1D_LAYERED_LAYERS)                   \
    PI(maxTexture2DLayered[0], MAXIMUM_TEXTURE2D_LAYERED_WIDTH)                    \
    PI(maxTexture2DLayered[1], MAXIMUM_TEXTURE2D_LAYERED_HEIGHT)                   \
    PI(maxTexture2DLayered[2], MAXIMUM_TEXTURE2D_LAYERED_LAYERS)                   \
    PI(maxTextureCubemapLayered[0], MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH)          \
    PI(maxTextureCubemapLayered[1], MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS)         \
    PI(maxSurface1D, MAXIMUM_SURFACE1D_WIDTH)                                      \
    PI(maxSurface2D[0], MAXIMUM_SURFACE2D_WIDTH)                                   \
    PI(maxSurface2D[1], MAXIMUM_SURFACE2D_HEIGHT)                                  \
    PI(maxSurface3D[0], MAXIMUM_SURFACE3D_WIDTH)                                   \
    PI(maxSurface3D[1], MAXIMUM_SURFACE3D_HEIGHT)                                  \
    PI(maxSurface3D[2], MAXIMUM_SURFACE3D_DEPTH)                                   \
    PI(maxSurface1DLayered[0], MAXIMUM_SURFACE1D_LAYERED_WIDTH)                    \
    PI(maxSurface1DLayered[1], MAXIMUM_SURFACE1D_LAYERED_LAYERS)                   \
    PI(maxSurface2DLayered[0], MAXIMUM_SURFACE2D_LAYERED_WIDTH)                    \
    PI(maxSurface2DLayered[1], MAXIMUM_SURFACE2D_LAYERED_HEIGHT)                   \
    PI(maxSurface2DLayered[2], MAXIMUM_SURFACE2D_LAYERED_LAYERS)                   \
    PI(maxSurfaceCubemap, MAXIMUM_SURFACECUBEMAP_WIDTH)                            \
    PI(maxSurfaceCubemapLayered[0], MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH)          \
    PI(maxSurfaceCubemapLayered[1], MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS)         \
    PS(surfaceAlignment, SURFACE_ALIGNMENT)                                        \
    PI(concurrentKernels, CONCURRENT_KERNELS)                                      \
    PI(ECCEnabled, ECC_ENABLED)                                                    \
    PI(pciBusID, PCI_BUS_ID)                                                       \
    PI(pciDeviceID, PCI_DEVICE_ID)                                                 \
    PI(pciDomainID, PCI_DOMAIN_ID)                                                 \
    PI(tccDriver, TCC_DRIVER)                                                      \
    PI(asyncEngineCount, ASYNC_ENGINE_COUNT)                                       \
    PI(unifiedAddressing, UNIFIED_ADDRESSING)                                      \
    PI(memoryBusWidth, GLOBAL_MEMORY_BUS_WIDTH)                                    \
    PI(l2CacheSize, L2_CACHE_SIZE)                                                 \
    PI(persistingL2CacheMaxSize, MAX_PERSISTING_L2_CACHE_SIZE)                     \
    PI(maxThreadsPerMultiProcessor, MAX_THREADS_PER_MULTIPROCESSOR)                \
    PI(streamPrioritiesSupported, STREAM_PRIORITIES_SUPPORTED)                     \
    PI(globalL1CacheSupported, GLOBAL_L1_CACHE_SUPPORTED)                          \
    PI(localL1CacheSupported, LOCAL_L1_CACHE_SUPPORTED)                            \
    PS(sharedMemPerMultiprocessor, MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)           \
    PI(regsPerMultiprocessor, MAX_REGISTERS_PER_MULTIPROCESSOR)                    \
    PI(managedMemory, MANAGED_MEMORY)                                              \
    PI(isMultiGpuBoard, MULTI_GPU_BOARD)                                           \
    PI(multiGpuBoardGroupID, MULTI_GPU_BOARD_GROUP_ID)                             \
    PI(hostNativeAtomicSupported, HOST_NATIVE_ATOMIC_SUPPORTED)                    \
    PI(pageableMemoryAccess, PAGEABLE_MEMORY_ACCESS)                               \
    PI(concurrentManagedAccess, CONCURRENT_MANAGED_ACCESS)                         \
    PI(computePreemptionSupported, COMPUTE_PREEMPTION_SUPPORTED)                   \
    PI(canUseHostPointerForRegisteredMem, CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM) \
    PI(cooperativeLaunch, COOPERATIVE_LAUNCH)                                      \
    PS(sharedMemPerBlockOptin, MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)                  \
    PI(pageableMemoryAccessUsesHostPageTables,                                     \
       PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES)                               \
    PI(directManagedMemAccessFromHost, DIRECT_MANAGED_MEM_ACCESS_FROM_HOST)        \
    PI(maxBlocksPerMultiProcessor, MAX_BLOCKS_PER_MULTIPROCESSOR)                  \
    PI(accessPolicyMaxWindowSize, MAX_ACCESS_POLICY_WINDOW_SIZE)                   \
    PS(reservedSharedMemPerBlock, RESERVED_SHARED_MEMORY_PER_BLOCK)                \
    PI(hostRegisterSupported, HOST_REGISTER_SUPPORTED)                             \
    PI(sparseCudaArraySupported, SPARSE_CUDA_ARRAY_SUPPORTED)                      \
    PI(hostRegisterReadOnlySupported, READ_ONLY_HOST_REGISTER_SUPPORTED)           \
    PI(timelineSemaphoreInteropSupported, TIMELINE_SEMAPHORE_INTEROP_SUPPORTED)    \
    PI(memoryPoolsSupported, MEMORY_POOLS_SUPPORTED)                               \
    PI(gpuDirectRDMASupported, GPU_DIRECT_RDMA_SUPPORTED)                          \
    PU(gpuDirectRDMAFlushWritesOptions, GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS)      \
    PI(gpuDirectRDMAWritesOrdering, GPU_DIRECT_RDMA_WRITES_ORDERING)               \
    PU(memoryPoolSupportedHandleTypes, MEMPOOL_SUPPORTED_HANDLE_TYPES)             \
    PI(deferredMappingCudaArraySupported, DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED)   \
    PI(ipcEventSupported, IPC_EVENT_SUPPORTED)                                     \
    PI(clusterLaunch, CLUSTER_LAUNCH)                                              \
    PI(unifiedFunctionPointers, UNIFIED_FUNCTION_POINTERS)

/* Where the version-independent parts of a struct cudaDeviceProp are. */
typedef struct xprt_prop_layout {
    size_t name_offset, name_size;
    size_t uuid_offset;          /* 16 bytes */
    size_t total_mem_offset;     /* size_t */
    size_t size;                 /* of the whole struct, zeroed first */
    const xprt_prop_attr *attrs;
    size_t nattrs;
} xprt_prop_layout;

#define XPRT_PROP_LAYOUT(table)                                                    \
    ((xprt_prop_layout){offsetof(struct cudaDeviceProp, name),                     \
                        sizeof(((struct cudaDeviceProp *)0)->name),                \
                        offsetof(struct cudaDeviceProp, uuid),                     \
                        offsetof(struct cudaDeviceProp, totalGlobalMem),           \
                        sizeof(struct cudaDeviceProp), (table),                    \
                        sizeof(table) / sizeof((table)[0])})

/* cudaGetDeviceProperties for a struct of the given layout (rt_device.c):
 * returns a cudaError_t value (the same in 12 and 13), recorded as the last
 * error when it is one. */
int xprt_device_properties(void *prop, const xprt_prop_layout *layout, int device);

/* The runtime's CUDA 13 cudaPointerGetAttributes, whatever name the
 * libcudart.so.12 build gives it; attributes has room for CUDA 13's struct. */
int xprt_pointer_attributes(void *attributes, const void *ptr);

/* cudaStreamGetCaptureInfo (ptds: its _ptsz form) without edge data, for
 * CUDA 12's 3- and 6-argument forms: status required, the rest optional;
 * *status is a cudaStreamCaptureStatus (same values in 12 and 13). */
int xprt_capture_info(int ptds, void *stream, int *status, unsigned long long *id,
                      cudaGraph_t *graph, const cudaGraphNode_t **deps, size_t *ndeps);

/* The runtime's CUDA 13 cudaMemcpyBatchAsync (ptds: its _ptsz form), whatever
 * name the libcudart.so.12 build gives it; attrs: struct cudaMemcpyAttributes,
 * the same in CUDA 12.8 and 13. */
int xprt_memcpy_batch(int ptds, void *const *dsts, const void *const *srcs, const size_t *sizes,
                      size_t count, void *attrs, size_t *attrsIdxs, size_t numAttrs,
                      void *stream);

/* Room for CUDA 13's struct cudaPointerAttributes (checked in rt_memory.c). */
#define XPRT_POINTER_ATTRIBUTES_ROOM 128

#endif
