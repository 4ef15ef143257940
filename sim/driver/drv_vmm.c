/* drv_vmm.c: the virtual memory management entry points (cuMemCreate,
 * cuMemAddressReserve, cuMemMap, cuMemSetAccess, ...): argument checks, then
 * xpsim_vmm.c.  These are what PyTorch's expandable segments are built on. */
#include "xpsim_driver.h"
#include "xpsim_stream.h"
#include "xpsim_vmm.h"

#include <stdlib.h>

/* What cuMemCreate and cuMemGetAllocationGranularity accept: pinned memory
 * of one device.  Host locations and compression are features the simulated
 * devices do not report; exporting needs no more than a note of the request
 * here (cuMemExportToShareableHandle itself is not simulated). */
static CUresult check_prop(const CUmemAllocationProp *prop)
{
    if (prop == NULL || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED)
        return CUDA_ERROR_INVALID_VALUE;
    switch (prop->location.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
        break;
    case CU_MEM_LOCATION_TYPE_HOST:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
        return CUDA_ERROR_NOT_SUPPORTED;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    CUresult rc = xpdrv_check_device(prop->location.id);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (prop->requestedHandleTypes & ~(unsigned)CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (prop->allocFlags.compressionType != CU_MEM_ALLOCATION_COMP_NONE ||
        (prop->allocFlags.usage & CU_MEM_CREATE_USAGE_TILE_POOL))
        return CUDA_ERROR_NOT_SUPPORTED;
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                                 CUmemAllocationGranularity_flags option)
{
    if (granularity == NULL ||
        (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM && option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_init();
    if (rc == CUDA_SUCCESS)
        rc = check_prop(prop);
    if (rc == CUDA_SUCCESS)
        *granularity = XPSIM_VMM_GRANULARITY;
    return rc;
}

XPSIM_API CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                               const CUmemAllocationProp *prop, unsigned long long flags)
{
    if (handle == NULL || flags != 0 || size == 0 || size % XPSIM_VMM_GRANULARITY != 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_init();
    if (rc == CUDA_SUCCESS)
        rc = check_prop(prop);
    if (rc != CUDA_SUCCESS)
        return rc;
    int dev = prop->location.id;
    rc = xpsim_vmm_create(&xpdrv_device(dev)->mem, size, prop, handle);
    xpsim_debug("cuMemCreate(%zu) on device %d -> %d %#llx", size, dev, (int)rc,
                rc == CUDA_SUCCESS ? (unsigned long long)*handle : 0ull);
    return rc;
}

XPSIM_API CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    CUresult rc = xpdrv_check_init();
    if (rc == CUDA_SUCCESS)
        rc = xpsim_vmm_release(handle);
    xpsim_debug("cuMemRelease(%#llx) -> %d", (unsigned long long)handle, (int)rc);
    return rc;
}

XPSIM_API CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
                                                          CUmemGenericAllocationHandle handle)
{
    if (prop == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_init();
    return rc != CUDA_SUCCESS ? rc : xpsim_vmm_properties(handle, prop);
}

XPSIM_API CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
    if (handle == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_init();
    return rc != CUDA_SUCCESS ? rc : xpsim_vmm_retain_at((uint64_t)(uintptr_t)addr, handle);
}

XPSIM_API CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
                                       CUdeviceptr addr, unsigned long long flags)
{
    if (ptr == NULL || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_init();
    if (rc == CUDA_SUCCESS)
        rc = xpsim_vmm_reserve(size, alignment, addr, ptr);
    xpsim_debug("cuMemAddressReserve(%zu, align %zu, hint %#llx) -> %d %#llx", size, alignment,
                (unsigned long long)addr, (int)rc,
                rc == CUDA_SUCCESS ? (unsigned long long)*ptr : 0ull);
    return rc;
}

XPSIM_API CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    CUresult rc = xpdrv_check_init();
    if (rc == CUDA_SUCCESS)
        rc = xpsim_vmm_free(ptr, size);
    xpsim_debug("cuMemAddressFree(%#llx, %zu) -> %d", (unsigned long long)ptr, size, (int)rc);
    return rc;
}

XPSIM_API CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                            CUmemGenericAllocationHandle handle, unsigned long long flags)
{
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_init();
    if (rc == CUDA_SUCCESS)
        rc = xpsim_vmm_map(ptr, size, offset, handle);
    xpsim_debug("cuMemMap(%#llx, %zu, offset %zu, %#llx) -> %d", (unsigned long long)ptr, size,
                offset, (unsigned long long)handle, (int)rc);
    return rc;
}

XPSIM_API CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    /* Synchronous, as documented: queued copies may still use the mapping
     * (and hold pointers into its host view), on any device. */
    for (int i = 0; i < xpdrv_device_count(); i++)
        (void)xpsim_device_synchronize(i);
    rc = xpsim_vmm_unmap(ptr, size);
    xpsim_debug("cuMemUnmap(%#llx, %zu) -> %d", (unsigned long long)ptr, size, (int)rc);
    return rc;
}

static bool valid_access(CUmemAccess_flags flags)
{
    return flags == CU_MEM_ACCESS_FLAGS_PROT_NONE || flags == CU_MEM_ACCESS_FLAGS_PROT_READ ||
           flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
}

/* Access is granted to devices: the host never reaches device memory. */
static CUresult check_location(const CUmemLocation *loc)
{
    if (loc == NULL || loc->type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    return xpdrv_check_device(loc->id);
}

XPSIM_API CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
                                  size_t count)
{
    if (desc == NULL || count == 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    int *devices = malloc(count * sizeof *devices);
    unsigned int *flags = malloc(count * sizeof *flags);
    if (devices == NULL || flags == NULL)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i < count && rc == CUDA_SUCCESS; i++) {
        rc = check_location(&desc[i].location);
        if (rc == CUDA_SUCCESS && !valid_access(desc[i].flags))
            rc = CUDA_ERROR_INVALID_VALUE;
        if (rc == CUDA_SUCCESS) {
            devices[i] = desc[i].location.id;
            flags[i] = (unsigned int)desc[i].flags;
        }
    }
    if (rc == CUDA_SUCCESS)
        rc = xpsim_vmm_set_access(ptr, size, devices, flags, count);
    free(devices);
    free(flags);
    xpsim_debug("cuMemSetAccess(%#llx, %zu, %zu descriptors) -> %d", (unsigned long long)ptr,
                size, count, (int)rc);
    return rc;
}

XPSIM_API CUresult cuMemGetAccess(unsigned long long *flags, const CUmemLocation *location,
                                  CUdeviceptr ptr)
{
    if (flags == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_init();
    if (rc == CUDA_SUCCESS)
        rc = check_location(location);
    unsigned int f = 0;
    if (rc == CUDA_SUCCESS)
        rc = xpsim_vmm_get_access(ptr, location->id, &f);
    if (rc == CUDA_SUCCESS)
        *flags = f;
    return rc;
}
