/* rt_device.c: device selection, properties, attributes, sync, reset, flags, versions. */
#include "rt_internal.h"

#include <string.h>

/* Initializes and checks an ordinal the caller names explicitly. */
static cudaError_t init_device(int device)
{
    cudaError_t e = xprt_init();
    if (e != cudaSuccess)
        return e;
    if (device < 0 || device >= xprt_device_count())
        return cudaErrorInvalidDevice;
    return cudaSuccess;
}

XPRT_EXPORT cudaError_t cudaGetDeviceCount(int *count)
{
    if (count == NULL)
        return xprt_result(cudaErrorInvalidValue);
    cudaError_t e = xprt_init();
    /* NVIDIA's runtime leaves *count alone when it finds no driver; zero is
     * friendlier to programs that ignore the error, and what the brief of
     * this simulator asks for. */
    *count = e == cudaSuccess ? xprt_device_count() : 0;
    return xprt_result(e);
}

XPRT_EXPORT cudaError_t cudaSetDevice(int device)
{
    cudaError_t e = init_device(device);
    if (e != cudaSuccess)
        return xprt_result(e);
    /* CUDA 12+: selecting a device initializes its primary context. */
    e = xprt_use_device(device, NULL);
    if (e == cudaSuccess)
        xprt_set_current_device(device);
    return xprt_result(e);
}

XPRT_EXPORT cudaError_t cudaGetDevice(int *device)
{
    if (device == NULL)
        return xprt_result(cudaErrorInvalidValue);
    cudaError_t e = xprt_init();
    if (e != cudaSuccess)
        return xprt_result(e);
    *device = xprt_current_device();
    return cudaSuccess;
}

XPRT_EXPORT cudaError_t cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags)
{
    if (flags != 0 || (deviceFlags & ~(unsigned)cudaDeviceMask) != 0)
        return xprt_result(cudaErrorInvalidValue);
    cudaError_t e = init_device(device);
    if (e == cudaSuccess) {
        if (deviceFlags != 0)
            xprt_set_device_flags(device, deviceFlags);
        CUcontext ctx;
        e = xprt_primary_ctx(device, &ctx);
    }
    return xprt_result(e);
}

typedef enum prop_type { P_INT, P_UINT, P_SIZE } prop_type;

typedef struct prop_attr {
    size_t offset;
    prop_type type;
    CUdevice_attribute attr;
} prop_attr;

#define PI(field, a) {offsetof(struct cudaDeviceProp, field), P_INT, CU_DEVICE_ATTRIBUTE_##a}
#define PU(field, a) {offsetof(struct cudaDeviceProp, field), P_UINT, CU_DEVICE_ATTRIBUTE_##a}
#define PS(field, a) {offsetof(struct cudaDeviceProp, field), P_SIZE, CU_DEVICE_ATTRIBUTE_##a}

/* Every field of struct cudaDeviceProp that has a device attribute, which is
 * how NVIDIA's runtime fills it. */
static const prop_attr g_props[] = {
    PS(sharedMemPerBlock, MAX_SHARED_MEMORY_PER_BLOCK),
    PI(regsPerBlock, MAX_REGISTERS_PER_BLOCK),
    PI(warpSize, WARP_SIZE),
    PS(memPitch, MAX_PITCH),
    PI(maxThreadsPerBlock, MAX_THREADS_PER_BLOCK),
    PI(maxThreadsDim[0], MAX_BLOCK_DIM_X),
    PI(maxThreadsDim[1], MAX_BLOCK_DIM_Y),
    PI(maxThreadsDim[2], MAX_BLOCK_DIM_Z),
    PI(maxGridSize[0], MAX_GRID_DIM_X),
    PI(maxGridSize[1], MAX_GRID_DIM_Y),
    PI(maxGridSize[2], MAX_GRID_DIM_Z),
    PS(totalConstMem, TOTAL_CONSTANT_MEMORY),
    PI(major, COMPUTE_CAPABILITY_MAJOR),
    PI(minor, COMPUTE_CAPABILITY_MINOR),
    PS(textureAlignment, TEXTURE_ALIGNMENT),
    PS(texturePitchAlignment, TEXTURE_PITCH_ALIGNMENT),
    PI(multiProcessorCount, MULTIPROCESSOR_COUNT),
    PI(integrated, INTEGRATED),
    PI(canMapHostMemory, CAN_MAP_HOST_MEMORY),
    PI(maxTexture1D, MAXIMUM_TEXTURE1D_WIDTH),
    PI(maxTexture1DMipmap, MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH),
    PI(maxTexture2D[0], MAXIMUM_TEXTURE2D_WIDTH),
    PI(maxTexture2D[1], MAXIMUM_TEXTURE2D_HEIGHT),
    PI(maxTexture2DMipmap[0], MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH),
    PI(maxTexture2DMipmap[1], MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT),
    PI(maxTexture2DLinear[0], MAXIMUM_TEXTURE2D_LINEAR_WIDTH),
    PI(maxTexture2DLinear[1], MAXIMUM_TEXTURE2D_LINEAR_HEIGHT),
    PI(maxTexture2DLinear[2], MAXIMUM_TEXTURE2D_LINEAR_PITCH),
    PI(maxTexture2DGather[0], MAXIMUM_TEXTURE2D_GATHER_WIDTH),
    PI(maxTexture2DGather[1], MAXIMUM_TEXTURE2D_GATHER_HEIGHT),
    PI(maxTexture3D[0], MAXIMUM_TEXTURE3D_WIDTH),
    PI(maxTexture3D[1], MAXIMUM_TEXTURE3D_HEIGHT),
    PI(maxTexture3D[2], MAXIMUM_TEXTURE3D_DEPTH),
    PI(maxTexture3DAlt[0], MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE),
    PI(maxTexture3DAlt[1], MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE),
    PI(maxTexture3DAlt[2], MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE),
    PI(maxTextureCubemap, MAXIMUM_TEXTURECUBEMAP_WIDTH),
    PI(maxTexture1DLayered[0], MAXIMUM_TEXTURE1D_LAYERED_WIDTH),
    PI(maxTexture1DLayered[1], MAXIMUM_TEXTURE1D_LAYERED_LAYERS),
    PI(maxTexture2DLayered[0], MAXIMUM_TEXTURE2D_LAYERED_WIDTH),
    PI(maxTexture2DLayered[1], MAXIMUM_TEXTURE2D_LAYERED_HEIGHT),
    PI(maxTexture2DLayered[2], MAXIMUM_TEXTURE2D_LAYERED_LAYERS),
    PI(maxTextureCubemapLayered[0], MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH),
    PI(maxTextureCubemapLayered[1], MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS),
    PI(maxSurface1D, MAXIMUM_SURFACE1D_WIDTH),
    PI(maxSurface2D[0], MAXIMUM_SURFACE2D_WIDTH),
    PI(maxSurface2D[1], MAXIMUM_SURFACE2D_HEIGHT),
    PI(maxSurface3D[0], MAXIMUM_SURFACE3D_WIDTH),
    PI(maxSurface3D[1], MAXIMUM_SURFACE3D_HEIGHT),
    PI(maxSurface3D[2], MAXIMUM_SURFACE3D_DEPTH),
    PI(maxSurface1DLayered[0], MAXIMUM_SURFACE1D_LAYERED_WIDTH),
    PI(maxSurface1DLayered[1], MAXIMUM_SURFACE1D_LAYERED_LAYERS),
    PI(maxSurface2DLayered[0], MAXIMUM_SURFACE2D_LAYERED_WIDTH),
    PI(maxSurface2DLayered[1], MAXIMUM_SURFACE2D_LAYERED_HEIGHT),
    PI(maxSurface2DLayered[2], MAXIMUM_SURFACE2D_LAYERED_LAYERS),
    PI(maxSurfaceCubemap, MAXIMUM_SURFACECUBEMAP_WIDTH),
    PI(maxSurfaceCubemapLayered[0], MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH),
    PI(maxSurfaceCubemapLayered[1], MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS),
    PS(surfaceAlignment, SURFACE_ALIGNMENT),
    PI(concurrentKernels, CONCURRENT_KERNELS),
    PI(ECCEnabled, ECC_ENABLED),
    PI(pciBusID, PCI_BUS_ID),
    PI(pciDeviceID, PCI_DEVICE_ID),
    PI(pciDomainID, PCI_DOMAIN_ID),
    PI(tccDriver, TCC_DRIVER),
    PI(asyncEngineCount, ASYNC_ENGINE_COUNT),
    PI(unifiedAddressing, UNIFIED_ADDRESSING),
    PI(memoryBusWidth, GLOBAL_MEMORY_BUS_WIDTH),
    PI(l2CacheSize, L2_CACHE_SIZE),
    PI(persistingL2CacheMaxSize, MAX_PERSISTING_L2_CACHE_SIZE),
    PI(maxThreadsPerMultiProcessor, MAX_THREADS_PER_MULTIPROCESSOR),
    PI(streamPrioritiesSupported, STREAM_PRIORITIES_SUPPORTED),
    PI(globalL1CacheSupported, GLOBAL_L1_CACHE_SUPPORTED),
    PI(localL1CacheSupported, LOCAL_L1_CACHE_SUPPORTED),
    PS(sharedMemPerMultiprocessor, MAX_SHARED_MEMORY_PER_MULTIPROCESSOR),
    PI(regsPerMultiprocessor, MAX_REGISTERS_PER_MULTIPROCESSOR),
    PI(managedMemory, MANAGED_MEMORY),
    PI(isMultiGpuBoard, MULTI_GPU_BOARD),
    PI(multiGpuBoardGroupID, MULTI_GPU_BOARD_GROUP_ID),
    PI(hostNativeAtomicSupported, HOST_NATIVE_ATOMIC_SUPPORTED),
    PI(pageableMemoryAccess, PAGEABLE_MEMORY_ACCESS),
    PI(concurrentManagedAccess, CONCURRENT_MANAGED_ACCESS),
    PI(computePreemptionSupported, COMPUTE_PREEMPTION_SUPPORTED),
    PI(canUseHostPointerForRegisteredMem, CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM),
    PI(cooperativeLaunch, COOPERATIVE_LAUNCH),
    PS(sharedMemPerBlockOptin, MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
    PI(pageableMemoryAccessUsesHostPageTables, PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES),
    PI(directManagedMemAccessFromHost, DIRECT_MANAGED_MEM_ACCESS_FROM_HOST),
    PI(maxBlocksPerMultiProcessor, MAX_BLOCKS_PER_MULTIPROCESSOR),
    PI(accessPolicyMaxWindowSize, MAX_ACCESS_POLICY_WINDOW_SIZE),
    PS(reservedSharedMemPerBlock, RESERVED_SHARED_MEMORY_PER_BLOCK),
    PI(hostRegisterSupported, HOST_REGISTER_SUPPORTED),
    PI(sparseCudaArraySupported, SPARSE_CUDA_ARRAY_SUPPORTED),
    PI(hostRegisterReadOnlySupported, READ_ONLY_HOST_REGISTER_SUPPORTED),
    PI(timelineSemaphoreInteropSupported, TIMELINE_SEMAPHORE_INTEROP_SUPPORTED),
    PI(memoryPoolsSupported, MEMORY_POOLS_SUPPORTED),
    PI(gpuDirectRDMASupported, GPU_DIRECT_RDMA_SUPPORTED),
    PU(gpuDirectRDMAFlushWritesOptions, GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS),
    PI(gpuDirectRDMAWritesOrdering, GPU_DIRECT_RDMA_WRITES_ORDERING),
    PU(memoryPoolSupportedHandleTypes, MEMPOOL_SUPPORTED_HANDLE_TYPES),
    PI(deferredMappingCudaArraySupported, DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED),
    PI(ipcEventSupported, IPC_EVENT_SUPPORTED),
    PI(clusterLaunch, CLUSTER_LAUNCH),
    PI(unifiedFunctionPointers, UNIFIED_FUNCTION_POINTERS),
    PI(deviceNumaConfig, NUMA_CONFIG),
    PI(deviceNumaId, NUMA_ID),
    PI(mpsEnabled, MPS_ENABLED),
    PI(hostNumaId, HOST_NUMA_ID),
    PU(gpuPciDeviceID, GPU_PCI_DEVICE_ID),
    PU(gpuPciSubsystemID, GPU_PCI_SUBSYSTEM_ID),
    PI(hostNumaMultinodeIpcSupported, HOST_NUMA_MULTINODE_IPC_SUPPORTED),
};

#undef PI
#undef PU
#undef PS

static void store_prop(struct cudaDeviceProp *prop, const prop_attr *p, int value)
{
    char *field = (char *)prop + p->offset;
    switch (p->type) {
    case P_INT:
        memcpy(field, &value, sizeof value);
        break;
    case P_UINT: {
        unsigned u = (unsigned)value;
        memcpy(field, &u, sizeof u);
        break;
    }
    case P_SIZE: {
        /* The driver reports sizes as int; negative means nothing sensible. */
        size_t s = value < 0 ? 0 : (size_t)value;
        memcpy(field, &s, sizeof s);
        break;
    }
    }
}

XPRT_EXPORT cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    if (prop == NULL)
        return xprt_result(cudaErrorInvalidValue);
    cudaError_t e = init_device(device);
    if (e != cudaSuccess)
        return xprt_result(e);
    const xprt_drv *d = xprt_table(XPRT_LEGACY);
    CUdevice dev = device;
    CUresult r = XPRT_CALL(d, cuDeviceGet, &dev, device);
    if (r != CUDA_SUCCESS)
        return xprt_result_cu(r);
    memset(prop, 0, sizeof *prop);
    r = XPRT_CALL(d, cuDeviceGetName, prop->name, (int)sizeof prop->name, dev);
    if (r != CUDA_SUCCESS)
        return xprt_result_cu(r);
    prop->name[sizeof prop->name - 1] = '\0';
    CUuuid uuid;
    if (XPRT_CALL(d, cuDeviceGetUuid, &uuid, dev) == CUDA_SUCCESS)
        memcpy(&prop->uuid, &uuid, sizeof prop->uuid);
    size_t total = 0;
    r = XPRT_CALL(d, cuDeviceTotalMem, &total, dev);
    if (r != CUDA_SUCCESS)
        return xprt_result_cu(r);
    prop->totalGlobalMem = total;
    /* An attribute the driver does not know stays zero, as do the fields
     * without an attribute (luid is undefined off Windows anyway). */
    for (size_t i = 0; i < sizeof g_props / sizeof g_props[0]; i++) {
        int value = 0;
        if (XPRT_CALL(d, cuDeviceGetAttribute, &value, g_props[i].attr, dev) == CUDA_SUCCESS)
            store_prop(prop, &g_props[i], value);
    }
    return cudaSuccess;
}

XPRT_EXPORT cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    if (value == NULL)
        return xprt_result(cudaErrorInvalidValue);
    cudaError_t e = init_device(device);
    if (e != cudaSuccess)
        return xprt_result(e);
    /* enum cudaDeviceAttr and CUdevice_attribute share their values. */
    const xprt_drv *d = xprt_table(XPRT_LEGACY);
    return xprt_result_cu(XPRT_CALL(d, cuDeviceGetAttribute, value, (CUdevice_attribute)attr,
                                    (CUdevice)device));
}

XPRT_EXPORT cudaError_t cudaDeviceGetPCIBusId(char *pciBusId, int len, int device)
{
    if (pciBusId == NULL || len <= 0)
        return xprt_result(cudaErrorInvalidValue);
    cudaError_t e = init_device(device);
    if (e != cudaSuccess)
        return xprt_result(e);
    const xprt_drv *d = xprt_table(XPRT_LEGACY);
    return xprt_result_cu(XPRT_CALL(d, cuDeviceGetPCIBusId, pciBusId, len, (CUdevice)device));
}

XPRT_EXPORT cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice)
{
    if (canAccessPeer == NULL)
        return xprt_result(cudaErrorInvalidValue);
    cudaError_t e = init_device(device);
    if (e == cudaSuccess)
        e = init_device(peerDevice);
    if (e != cudaSuccess)
        return xprt_result(e);
    /* No: the simulator has no peer mappings (cudaDeviceEnablePeerAccess is
     * "not supported"), and a program told so copies with cudaMemcpyPeer,
     * staged through the host as CUDA does without peer access. */
    *canAccessPeer = 0;
    return cudaSuccess;
}

XPRT_EXPORT cudaError_t cudaDeviceSynchronize(void)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    /* The CUDA 13 ABI takes a context; NULL is the current one. */
    return xprt_result_cu(XPRT_CALL(d, cuCtxSynchronize, NULL));
}

XPRT_EXPORT cudaError_t cudaDeviceReset(void)
{
    cudaError_t e = xprt_init();
    if (e != cudaSuccess)
        return xprt_result(e);
    int dev = xprt_current_device();
    if (dev >= xprt_device_count())
        return xprt_result(cudaErrorInvalidDevice);
    const xprt_drv *d = xprt_table(XPRT_LEGACY);
    /* The driver frees the device's allocations, module variables included,
     * and clears its sticky error; the runtime forgets what it had loaded. */
    CUresult r = XPRT_CALL(d, cuDevicePrimaryCtxReset, (CUdevice)dev);
    if (r != CUDA_SUCCESS)
        return xprt_result_cu(r);
    xprt_device_was_reset(dev);
    xprt_clear_sticky(dev);
    /* The device's context comes back at once for the __managed__ variables
     * (and, as with CUDA 12+, is what the next call would create anyway). */
    e = xprt_use_device(dev, NULL);
    if (e == cudaSuccess)
        xprt_modules_after_reset(d, dev);
    return xprt_result(e);
}

XPRT_EXPORT cudaError_t cudaSetDeviceFlags(unsigned int flags)
{
    unsigned sched = flags & cudaDeviceScheduleMask;
    if ((flags & ~(unsigned)cudaDeviceMask) != 0 ||
        (sched != cudaDeviceScheduleAuto && sched != cudaDeviceScheduleSpin &&
         sched != cudaDeviceScheduleYield && sched != cudaDeviceScheduleBlockingSync))
        return xprt_result(cudaErrorInvalidValue);
    cudaError_t e = xprt_init();
    if (e != cudaSuccess)
        return xprt_result(e);
    int dev = xprt_current_device();
    if (dev >= xprt_device_count())
        return xprt_result(cudaErrorInvalidDevice);
    /* cudaDevice* flags have the CU_CTX_* values.  A driver that does not
     * model scheduling policies may refuse; the runtime still remembers. */
    const xprt_drv *d = xprt_table(XPRT_LEGACY);
    CUresult r = XPRT_CALL(d, cuDevicePrimaryCtxSetFlags, (CUdevice)dev, flags);
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_SUPPORTED)
        return xprt_result_cu(r);
    xprt_set_device_flags(dev, flags);
    /* Documented: a device not yet initialized is initialized with them. */
    return xprt_result(xprt_use_device(dev, NULL));
}

XPRT_EXPORT cudaError_t cudaGetDeviceFlags(unsigned int *flags)
{
    if (flags == NULL)
        return xprt_result(cudaErrorInvalidValue);
    cudaError_t e = xprt_init();
    if (e != cudaSuccess)
        return xprt_result(e);
    int dev = xprt_current_device();
    if (dev >= xprt_device_count())
        return xprt_result(cudaErrorInvalidDevice);
    /* Host memory is always mapped under unified addressing, so the context
     * reports cudaDeviceMapHost whether or not it was asked for. */
    *flags = xprt_device_flags(dev) | cudaDeviceMapHost;
    return cudaSuccess;
}

XPRT_EXPORT cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    int least = 0, greatest = 0;
    CUresult r = XPRT_CALL(d, cuCtxGetStreamPriorityRange, &least, &greatest);
    if (r != CUDA_SUCCESS)
        return xprt_result_cu(r);
    if (leastPriority != NULL)
        *leastPriority = least;
    if (greatestPriority != NULL)
        *greatestPriority = greatest;
    return cudaSuccess;
}

XPRT_EXPORT cudaError_t cudaDriverGetVersion(int *driverVersion)
{
    if (driverVersion == NULL)
        return xprt_result(cudaErrorInvalidValue);
    (void)xprt_init();
    const xprt_drv *d = xprt_table(XPRT_LEGACY);
    /* Without a driver NVIDIA's runtime answers version 0 and success (checked
     * against libcudart.so.13 on a machine without libcuda.so.1). */
    if (d->cuDriverGetVersion == NULL) {
        *driverVersion = 0;
        return cudaSuccess;
    }
    return xprt_result_cu(d->cuDriverGetVersion(driverVersion));
}

XPRT_EXPORT cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
    if (runtimeVersion == NULL)
        return xprt_result(cudaErrorInvalidValue);
    *runtimeVersion = CUDART_VERSION;
    return cudaSuccess;
}

XPRT_EXPORT cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    if (free_bytes == NULL || total_bytes == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuMemGetInfo, free_bytes, total_bytes));
}
