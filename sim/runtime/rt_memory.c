/* rt_memory.c: device, pinned, registered and managed memory; pointer attributes. */
#include "rt_internal.h"
#include "rt_abi.h"

#include <string.h>

static inline CUdeviceptr dptr_of(const void *p)
{
    return (CUdeviceptr)(uintptr_t)p;
}

static inline void *ptr_of(CUdeviceptr p)
{
    return (void *)(uintptr_t)p;
}

/* Enters with the legacy table; every memory API here is stream-less. */
static cudaError_t enter(const xprt_drv **d)
{
    return xprt_enter(XPRT_LEGACY, d);
}

XPRT_EXPORT cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    if (devPtr == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    if (size == 0) {
        /* NVIDIA's runtime: a zero-byte allocation is a NULL pointer. */
        *devPtr = NULL;
        return cudaSuccess;
    }
    CUdeviceptr p = 0;
    CUresult r = XPRT_CALL(d, cuMemAlloc, &p, size);
    if (r == CUDA_SUCCESS)
        *devPtr = ptr_of(p);
    return xprt_result_cu(r);
}

XPRT_EXPORT cudaError_t cudaFree(void *devPtr)
{
    /* cudaFree(NULL) is the customary way to initialize the runtime, so it
     * enters (and can fail) before it does nothing. */
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    if (devPtr == NULL)
        return cudaSuccess;
    return xprt_result_cu(XPRT_CALL(d, cuMemFree, dptr_of(devPtr)));
}

XPRT_EXPORT cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
    if (devPtr == NULL || pitch == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    if (width == 0 || height == 0) {
        /* Nothing to allocate, like cudaMalloc(0). */
        *devPtr = NULL;
        *pitch = 0;
        return cudaSuccess;
    }
    CUdeviceptr p = 0;
    size_t out_pitch = 0;
    /* The runtime has no element size to offer; 16 lets the driver pick the
     * widest-aligned pitch, which is what cudaMallocPitch documents. */
    CUresult r = XPRT_CALL(d, cuMemAllocPitch, &p, &out_pitch, width, height, 16);
    if (r == CUDA_SUCCESS) {
        *devPtr = ptr_of(p);
        *pitch = out_pitch;
    }
    return xprt_result_cu(r);
}

XPRT_EXPORT cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pitchedDevPtr, struct cudaExtent extent)
{
    if (pitchedDevPtr == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    /* Without an array the width is in bytes; the slices are stacked rows
     * of one pitched allocation. */
    size_t rows;
    if (__builtin_mul_overflow(extent.height, extent.depth, &rows))
        return xprt_result(cudaErrorMemoryAllocation);
    *pitchedDevPtr = (struct cudaPitchedPtr){.ptr = NULL, .pitch = 0, .xsize = extent.width,
                                             .ysize = extent.height};
    if (extent.width == 0 || rows == 0)
        return cudaSuccess;   /* nothing to allocate, like cudaMallocPitch */
    CUdeviceptr p = 0;
    size_t pitch = 0;
    CUresult r = XPRT_CALL(d, cuMemAllocPitch, &p, &pitch, extent.width, rows, 16);
    if (r == CUDA_SUCCESS) {
        pitchedDevPtr->ptr = ptr_of(p);
        pitchedDevPtr->pitch = pitch;
    }
    return xprt_result_cu(r);
}

XPRT_EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    if (ptr == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    if (size == 0) {
        *ptr = NULL;
        return cudaSuccess;
    }
    return xprt_result_cu(XPRT_CALL(d, cuMemAllocHost, ptr, size));
}

XPRT_EXPORT cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    const unsigned known = cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined;
    if (pHost == NULL || (flags & ~known) != 0)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    if (size == 0) {
        *pHost = NULL;
        return cudaSuccess;
    }
    /* cudaHostAlloc* flags have the CU_MEMHOSTALLOC_* values. */
    return xprt_result_cu(XPRT_CALL(d, cuMemHostAlloc, pHost, size, flags));
}

XPRT_EXPORT cudaError_t cudaFreeHost(void *ptr)
{
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    if (ptr == NULL)
        return cudaSuccess;
    return xprt_result_cu(XPRT_CALL(d, cuMemFreeHost, ptr));
}

XPRT_EXPORT cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    const unsigned known = cudaHostRegisterPortable | cudaHostRegisterMapped |
                           cudaHostRegisterIoMemory | cudaHostRegisterReadOnly;
    if (ptr == NULL || size == 0 || (flags & ~known) != 0)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    /* cudaHostRegister* flags have the CU_MEMHOSTREGISTER_* values. */
    return xprt_result_cu(XPRT_CALL(d, cuMemHostRegister, ptr, size, flags));
}

XPRT_EXPORT cudaError_t cudaHostUnregister(void *ptr)
{
    if (ptr == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuMemHostUnregister, ptr));
}

XPRT_EXPORT cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags)
{
    if (pDevice == NULL || pHost == NULL || flags != 0)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    CUdeviceptr p = 0;
    CUresult r = XPRT_CALL(d, cuMemHostGetDevicePointer, &p, pHost, 0);
    if (r == CUDA_SUCCESS)
        *pDevice = ptr_of(p);
    return xprt_result_cu(r);
}

XPRT_EXPORT cudaError_t cudaHostGetFlags(unsigned int *pFlags, void *pHost)
{
    if (pFlags == NULL || pHost == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuMemHostGetFlags, pFlags, pHost));
}

XPRT_EXPORT cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
    /* The documented rules: size 0 is an error, and exactly one of the two
     * attach flags. */
    if (devPtr == NULL || size == 0 || (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost))
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    CUdeviceptr p = 0;
    /* cudaMemAttach* have the CU_MEM_ATTACH_* values. */
    CUresult r = XPRT_CALL(d, cuMemAllocManaged, &p, size, flags);
    if (r == CUDA_SUCCESS)
        *devPtr = ptr_of(p);
    return xprt_result_cu(r);
}

/* cudaMemLocation is CUmemLocation, field for field and value for value. */
_Static_assert(sizeof(struct cudaMemLocation) == sizeof(CUmemLocation) &&
                   cudaMemLocationTypeDevice == (int)CU_MEM_LOCATION_TYPE_DEVICE &&
                   cudaMemLocationTypeHostNumaCurrent == (int)CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT,
               "cudaMemLocation layout");

static CUmemLocation location_of(struct cudaMemLocation loc)
{
    return (CUmemLocation){.type = (CUmemLocationType)loc.type, .id = loc.id};
}

static cudaError_t prefetch(xprt_api api, const void *devPtr, size_t count,
                            struct cudaMemLocation location, unsigned int flags,
                            cudaStream_t stream)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuMemPrefetchAsync, dptr_of(devPtr), count,
                                    location_of(location), flags, (CUstream)stream));
}

XPRT_EXPORT cudaError_t XPRT_ABI13(cudaMemPrefetchAsync, cudaMemPrefetchAsync_v2)(
    const void *devPtr, size_t count, struct cudaMemLocation location, unsigned int flags,
    cudaStream_t stream)
{
    return prefetch(XPRT_LEGACY, devPtr, count, location, flags, stream);
}

XPRT_EXPORT cudaError_t XPRT_ABI13(cudaMemPrefetchAsync_ptsz, cudaMemPrefetchAsync_v2_ptsz)(
    const void *devPtr, size_t count, struct cudaMemLocation location, unsigned int flags,
    cudaStream_t stream)
{
    return prefetch(XPRT_PTDS, devPtr, count, location, flags, stream);
}

XPRT_EXPORT cudaError_t XPRT_ABI13(cudaMemAdvise, cudaMemAdvise_v2)(
    const void *devPtr, size_t count, enum cudaMemoryAdvise advice, struct cudaMemLocation location)
{
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    /* cudaMemoryAdvise has the CU_MEM_ADVISE_* values. */
    return xprt_result_cu(XPRT_CALL(d, cuMemAdvise, dptr_of(devPtr), count, (CUmem_advise)advice,
                                    location_of(location)));
}

/* cuPointerGetAttribute one by one, for a driver without the batched query. */
static CUresult classify_singly(const xprt_drv *d, CUdeviceptr p, unsigned *type,
                                unsigned *managed, int *ordinal, CUdeviceptr *dev_ptr,
                                void **host_ptr)
{
    CUresult r = XPRT_CALL(d, cuPointerGetAttribute, type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p);
    if (r == CUDA_ERROR_INVALID_VALUE) {
        *type = 0;
        return CUDA_SUCCESS;
    }
    if (r != CUDA_SUCCESS)
        return r;
    (void)XPRT_CALL(d, cuPointerGetAttribute, managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p);
    (void)XPRT_CALL(d, cuPointerGetAttribute, ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p);
    (void)XPRT_CALL(d, cuPointerGetAttribute, dev_ptr, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, p);
    (void)XPRT_CALL(d, cuPointerGetAttribute, host_ptr, CU_POINTER_ATTRIBUTE_HOST_POINTER, p);
    return CUDA_SUCCESS;
}

cudaError_t xprt_classify(const xprt_drv *d, const void *ptr, xprt_ptr_info *out)
{
    *out = (xprt_ptr_info){.type = XPRT_MEM_UNREGISTERED,
                           .device = cudaInvalidDeviceId,
                           .host_ptr = (void *)(uintptr_t)ptr};
    if (ptr == NULL)
        return cudaSuccess;
    /* IS_MANAGED is documented as "a boolean": an unsigned int read as
     * nonzero is right whether the driver writes one byte or four. */
    unsigned type = 0, managed = 0;
    int ordinal = cudaInvalidDeviceId;
    CUdeviceptr dev_ptr = 0;
    void *host_ptr = NULL;
    CUpointer_attribute attrs[] = {
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE,   CU_POINTER_ATTRIBUTE_IS_MANAGED,
        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
        CU_POINTER_ATTRIBUTE_HOST_POINTER,
    };
    void *data[] = {&type, &managed, &ordinal, &dev_ptr, &host_ptr};
    CUresult r = XPRT_CALL(d, cuPointerGetAttributes, 5, attrs, data, dptr_of(ptr));
    if (r == CUDA_ERROR_NOT_SUPPORTED)
        r = classify_singly(d, dptr_of(ptr), &type, &managed, &ordinal, &dev_ptr, &host_ptr);
    if (r == CUDA_ERROR_INVALID_VALUE)
        return cudaSuccess;        /* memory the driver does not know */
    if (r != CUDA_SUCCESS)
        return xprt_map_error(r);
    if (managed != 0 || type == CU_MEMORYTYPE_UNIFIED) {
        out->type = XPRT_MEM_MANAGED;
        out->device_ptr = dev_ptr != 0 ? dev_ptr : dptr_of(ptr);
        out->host_ptr = host_ptr != NULL ? host_ptr : (void *)(uintptr_t)ptr;
    } else if (type == CU_MEMORYTYPE_DEVICE) {
        out->type = XPRT_MEM_DEVICE;
        out->device_ptr = dev_ptr != 0 ? dev_ptr : dptr_of(ptr);
        out->host_ptr = NULL;
    } else if (type == CU_MEMORYTYPE_HOST) {
        out->type = XPRT_MEM_HOST;
        out->device_ptr = dev_ptr;
        out->host_ptr = host_ptr != NULL ? host_ptr : (void *)(uintptr_t)ptr;
    } else {
        return cudaSuccess;        /* type 0: unknown to the driver */
    }
    out->device = ordinal;
    return cudaSuccess;
}

_Static_assert(sizeof(struct cudaPointerAttributes) <= XPRT_POINTER_ATTRIBUTES_ROOM,
               "rt_abi12.c's buffer for CUDA 13's cudaPointerAttributes");

/* CUDA 12's struct is shorter (no reserved tail): rt_abi12.c copies its part. */
XPRT_EXPORT cudaError_t XPRT_ABI13(cudaPointerGetAttributes, xprt_cuda13_PointerGetAttributes)(
    struct cudaPointerAttributes *attributes, const void *ptr)
{
    if (attributes == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    xprt_ptr_info info;
    e = xprt_classify(d, ptr, &info);
    if (e != cudaSuccess)
        return xprt_result(e);
    /* CUDA 11+: memory CUDA does not know is not an error but
     * cudaMemoryTypeUnregistered, with no device and no device alias. */
    memset(attributes, 0, sizeof *attributes);
    switch (info.type) {
    case XPRT_MEM_UNREGISTERED:
        attributes->type = cudaMemoryTypeUnregistered;
        break;
    case XPRT_MEM_HOST:
        attributes->type = cudaMemoryTypeHost;
        break;
    case XPRT_MEM_DEVICE:
        attributes->type = cudaMemoryTypeDevice;
        break;
    case XPRT_MEM_MANAGED:
        attributes->type = cudaMemoryTypeManaged;
        break;
    }
    attributes->device = info.device;
    attributes->devicePointer = ptr_of(info.device_ptr);
    attributes->hostPointer = info.host_ptr;
    return cudaSuccess;
}

int xprt_pointer_attributes(void *attributes, const void *ptr)
{
    return XPRT_ABI13(cudaPointerGetAttributes, xprt_cuda13_PointerGetAttributes)(attributes, ptr);
}
