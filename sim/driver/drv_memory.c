/* drv_memory.c: device, pinned, registered and managed memory, and pointer attributes. */
#include "xpsim_driver.h"
#include "xpsim_graph.h"
#include "xpsim_stream.h"
#include "xpsim_vmm.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static uint64_t page_round(uint64_t bytes)
{
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    return (bytes + page - 1) & ~(page - 1);
}

void xpdrv_classify(uint64_t addr, xpdrv_ptr *out)
{
    memset(out, 0, sizeof *out);
    out->device = -1;
    for (int i = 0; i < xpdrv_device_count(); i++) {
        xpsim_devmem *dm = &xpdrv_device(i)->mem;
        if (!xpsim_devmem_in_range(dm, addr))
            continue;
        xpsim_block b;
        out->device = i;
        if (xpsim_devmem_lookup(dm, addr, &b)) {
            out->kind = XPDRV_MEM_DEVICE;
            out->base = dm->base + b.offset;
            out->size = b.requested;
            out->limit = out->base + out->size;
            out->origin = b.kind == XPSIM_BLOCK_POOL ? XPDRV_FROM_POOL : XPDRV_FROM_ALLOC;
            out->access = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        } else {
            out->kind = XPDRV_MEM_DEVICE_HOLE;
        }
        return;
    }
    xpsim_vmm_hit v;
    if (xpsim_vmm_lookup(addr, &v)) {
        out->kind = v.mapped ? XPDRV_MEM_DEVICE : XPDRV_MEM_DEVICE_HOLE;
        out->device = v.device;
        out->base = v.base;
        out->size = v.size;
        out->limit = v.limit;
        out->origin = XPDRV_FROM_VMM;
        out->access = v.access;
        out->view = v.view;
        return;
    }
    if (xpdrv_ipc_lookup(addr, out))
        return;
    xpsim_host_range r;
    if (xpsim_hostmem_lookup(addr, &r)) {
        out->kind = r.kind == XPSIM_HOST_MANAGED ? XPDRV_MEM_MANAGED : XPDRV_MEM_PINNED;
        out->device = r.kind == XPSIM_HOST_MANAGED ? r.device : -1;
        out->base = r.base;
        out->size = r.size;
        out->limit = r.base + r.size;
        out->host_kind = r.kind;
        out->flags = r.flags;
    }
}

void *xpdrv_view(const xpdrv_ptr *info, uint64_t addr)
{
    if (info->kind == XPDRV_MEM_DEVICE && info->view != NULL)
        return info->view + (addr - info->base);
    if (info->kind == XPDRV_MEM_DEVICE)
        return xpsim_devmem_shadow(&xpdrv_device(info->device)->mem, addr);
    return (void *)(uintptr_t)addr;
}

static CUresult alloc_device(CUdeviceptr *dptr, size_t bytes, xpsim_block_kind kind, const char *api)
{
    if (dptr == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    /* A module's variables are the driver's own business, not a capture's. */
    if (kind != XPSIM_BLOCK_MODULE && (rc = xpsim_capture_unsafe()) != CUDA_SUCCESS)
        return rc;
    /* A module's variables belong to the device's primary context, where
     * the runtime keeps them; the rest to the current context. */
    const void *owner = kind == XPSIM_BLOCK_MODULE ? &xpdrv_device(dev)->primary : xpdrv_current();
    rc = xpsim_devmem_alloc(&xpdrv_device(dev)->mem, bytes, kind, owner, dptr);
    xpsim_debug("%s(%zu) on device %d -> %d %#llx", api, bytes, dev, (int)rc,
                rc == CUDA_SUCCESS ? (unsigned long long)*dptr : 0ull);
    return rc;
}

XPSIM_API CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    return alloc_device(dptr, bytesize, XPSIM_BLOCK_ALLOC, "cuMemAlloc_v2");
}

XPSIM_API CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
                                      size_t Height, unsigned int ElementSizeBytes)
{
    if (pPitch == NULL || WidthInBytes == 0 || Height == 0 ||
        (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16))
        return CUDA_ERROR_INVALID_VALUE;
    /* Rows start on the device's texture pitch alignment (512 bytes). */
    size_t pitch = (WidthInBytes + 511) & ~(size_t)511;
    CUresult rc = alloc_device(dptr, pitch * Height, XPSIM_BLOCK_ALLOC, "cuMemAllocPitch_v2");
    if (rc == CUDA_SUCCESS)
        *pPitch = pitch;
    return rc;
}

/* Private entry point for the simulated runtime: storage for a module's
 * __device__ and __constant__ variables, which real drivers allocate and
 * initialize when they load a module (no copy the program could see) and
 * which cuMemFree must refuse. */
XPSIM_API CUresult xpsimModuleGlobalAlloc(CUdeviceptr *dptr, size_t bytes, const void *init)
{
    CUresult rc = alloc_device(dptr, bytes, XPSIM_BLOCK_MODULE, "xpsimModuleGlobalAlloc");
    if (rc != CUDA_SUCCESS)
        return rc;
    xpdrv_ptr info;
    xpdrv_classify(*dptr, &info);
    void *view = xpdrv_view(&info, *dptr);
    if (init)
        memcpy(view, init, bytes);
    else
        memset(view, 0, bytes);
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    int cur;
    CUresult rc = xpdrv_enter(&cur);
    if (rc != CUDA_SUCCESS)
        return rc;
    if ((rc = xpsim_capture_unsafe()) != CUDA_SUCCESS)
        return rc;
    if (dptr == 0)
        return CUDA_SUCCESS;
    xpdrv_ptr info;
    xpdrv_classify(dptr, &info);
    if (info.kind != XPDRV_MEM_DEVICE && info.kind != XPDRV_MEM_DEVICE_HOLE) {
        /* Managed memory is freed with cuMemFree too. */
        xpsim_host_range r;
        if (info.kind == XPDRV_MEM_MANAGED && info.base == dptr) {
            xpsim_device_synchronize(info.device);
            if (xpsim_hostmem_remove(dptr, XPSIM_HOST_MANAGED, &r)) {
                munmap((void *)(uintptr_t)r.base, r.mapped);
                return CUDA_SUCCESS;
            }
        }
        xpsim_debug("cuMemFree_v2(%#llx): not a device allocation", (unsigned long long)dptr);
        return CUDA_ERROR_INVALID_VALUE;
    }
    /* Memory imported from another process's pool is freed here (unmapped
     * after the device's queued work); opened with a memory handle, it is
     * closed with cuIpcCloseMemHandle instead. */
    if (info.origin == XPDRV_FROM_IPC)
        return info.base == dptr ? xpdrv_ipc_free_imported(dptr) : CUDA_ERROR_INVALID_VALUE;
    /* Mapped VMM memory is released with cuMemUnmap/cuMemRelease instead. */
    if (info.origin == XPDRV_FROM_VMM || info.device < 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (info.origin == XPDRV_FROM_POOL) {
        /* "This API will not perform any implicit synchronization when the
         * pointer was allocated with cuMemAllocAsync": the caller vouches
         * that nothing uses it any more. */
        rc = xpdrv_pool_free_now(info.device, dptr);
    } else {
        /* cudaFree synchronizes: the memory may still be in use by queued work. */
        xpsim_device_synchronize(info.device);
        rc = xpsim_devmem_free(&xpdrv_device(info.device)->mem, dptr);
    }
    xpsim_debug("cuMemFree_v2(%#llx) -> %d", (unsigned long long)dptr, (int)rc);
    return rc;
}

XPSIM_API CUresult cuMemGetInfo_v2(size_t *free, size_t *total)
{
    if (free == NULL || total == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    uint64_t f, t;
    xpsim_devmem_info(&xpdrv_device(dev)->mem, &f, &t);
    *free = f;
    *total = t;
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    xpdrv_ptr info;
    xpdrv_classify(dptr, &info);
    if (info.kind != XPDRV_MEM_DEVICE && info.kind != XPDRV_MEM_MANAGED)
        return CUDA_ERROR_NOT_FOUND;
    if (pbase)
        *pbase = info.base;
    if (psize)
        *psize = info.size;
    return CUDA_SUCCESS;
}

/* Page-locked host memory comes from mmap: page aligned, like the driver's. */
static CUresult alloc_host(void **pp, size_t bytes, xpsim_host_kind kind, unsigned int flags,
                           int device, const void *owner)
{
    uint64_t mapped = page_round(bytes);
    void *p = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    xpsim_host_range r = {.base = (uint64_t)(uintptr_t)p, .size = bytes, .mapped = mapped,
                          .kind = kind, .flags = flags, .device = device,
                          .owner = owner};
    CUresult rc = xpsim_hostmem_add(&r);
    if (rc != CUDA_SUCCESS) {
        munmap(p, mapped);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *pp = p;
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
    if (pp == NULL || bytesize == 0 ||
        (Flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP |
                             CU_MEMHOSTALLOC_WRITECOMBINED)))
        return CUDA_ERROR_INVALID_VALUE;
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    if ((rc = xpsim_capture_unsafe()) != CUDA_SUCCESS)
        return rc;
    rc = alloc_host(pp, bytesize, XPSIM_HOST_PINNED, Flags, -1, NULL);
    xpsim_debug("cuMemHostAlloc(%zu, %#x) -> %d %p", bytesize, Flags, (int)rc,
                rc == CUDA_SUCCESS ? *pp : NULL);
    return rc;
}

XPSIM_API CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    return cuMemHostAlloc(pp, bytesize, 0);
}

XPSIM_API CUresult cuMemFreeHost(void *p)
{
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    if ((rc = xpsim_capture_unsafe()) != CUDA_SUCCESS)
        return rc;
    if (p == NULL)
        return CUDA_SUCCESS;
    xpsim_host_range r;
    if (!xpsim_hostmem_lookup((uint64_t)(uintptr_t)p, &r) || r.kind != XPSIM_HOST_PINNED ||
        r.base != (uint64_t)(uintptr_t)p)
        return CUDA_ERROR_INVALID_VALUE;
    /* Like cudaFree, freeing pinned memory waits for work that may use it. */
    for (int i = 0; i < xpdrv_device_count(); i++)
        xpsim_device_synchronize(i);
    if (!xpsim_hostmem_remove(r.base, XPSIM_HOST_PINNED, &r))
        return CUDA_ERROR_INVALID_VALUE;
    munmap(p, r.mapped);
    xpsim_debug("cuMemFreeHost(%p)", p);
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    if (dptr == NULL || bytesize == 0 ||
        (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
        return CUDA_ERROR_INVALID_VALUE;
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    if ((rc = xpsim_capture_unsafe()) != CUDA_SUCCESS)
        return rc;
    void *p;
    rc = alloc_host(&p, bytesize, XPSIM_HOST_MANAGED, flags, dev, xpdrv_current());
    if (rc == CUDA_SUCCESS)
        *dptr = (CUdeviceptr)(uintptr_t)p;
    xpsim_debug("cuMemAllocManaged(%zu) -> %d %p", bytesize, (int)rc, rc == CUDA_SUCCESS ? p : NULL);
    return rc;
}

XPSIM_API CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
    if (p == NULL || bytesize == 0 ||
        (Flags & ~(unsigned)(CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                             CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY)))
        return CUDA_ERROR_INVALID_VALUE;
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    if ((rc = xpsim_capture_unsafe()) != CUDA_SUCCESS)
        return rc;
    uint64_t addr = (uint64_t)(uintptr_t)p;
    xpdrv_ptr info;
    xpdrv_classify(addr, &info);
    if (info.kind == XPDRV_MEM_DEVICE || info.kind == XPDRV_MEM_DEVICE_HOLE)
        return CUDA_ERROR_INVALID_VALUE;   /* device addresses, allocated or not */
    xpsim_host_range r = {.base = addr, .size = bytesize, .kind = XPSIM_HOST_REGISTERED,
                          .flags = Flags, .device = -1};
    rc = xpsim_hostmem_add(&r);
    xpsim_debug("cuMemHostRegister_v2(%p, %zu, %#x) -> %d", p, bytesize, Flags, (int)rc);
    return rc;
}

XPSIM_API CUresult cuMemHostUnregister(void *p)
{
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    if ((rc = xpsim_capture_unsafe()) != CUDA_SUCCESS)
        return rc;
    if (p == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (!xpsim_hostmem_remove((uint64_t)(uintptr_t)p, XPSIM_HOST_REGISTERED, NULL))
        return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    xpsim_debug("cuMemHostUnregister(%p)", p);
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
    if (pdptr == NULL || Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    xpsim_host_range r;
    if (!xpsim_hostmem_lookup((uint64_t)(uintptr_t)p, &r) || r.kind == XPSIM_HOST_MANAGED)
        return CUDA_ERROR_INVALID_VALUE;
    /* Unified addressing: the device sees pinned memory at the host address. */
    *pdptr = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
    if (pFlags == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    xpsim_host_range r;
    if (!xpsim_hostmem_lookup((uint64_t)(uintptr_t)p, &r) || r.kind != XPSIM_HOST_PINNED)
        return CUDA_ERROR_INVALID_VALUE;
    *pFlags = r.flags;
    return CUDA_SUCCESS;
}

/* Allocation ids for CU_POINTER_ATTRIBUTE_BUFFER_ID: the base address is
 * unique among live allocations, which is what programs use it for. */
static CUresult pointer_attribute(void *data, CUpointer_attribute attribute, const xpdrv_ptr *info,
                                  CUdeviceptr ptr)
{
    bool known = info->kind == XPDRV_MEM_DEVICE || info->kind == XPDRV_MEM_PINNED ||
                 info->kind == XPDRV_MEM_MANAGED;
    bool reserved = info->kind == XPDRV_MEM_DEVICE_HOLE && info->origin == XPDRV_FROM_VMM;
    switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
        if (!known)
            return CUDA_ERROR_INVALID_VALUE;
        *(CUcontext *)data = info->device >= 0 ? &xpdrv_device(info->device)->primary
                                                : &xpdrv_device(0)->primary;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        if (!known)
            return CUDA_ERROR_INVALID_VALUE;
        *(unsigned int *)data = info->kind == XPDRV_MEM_PINNED ? CU_MEMORYTYPE_HOST
                                                               : CU_MEMORYTYPE_DEVICE;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        if (!known)
            return CUDA_ERROR_INVALID_VALUE;
        *(CUdeviceptr *)data = ptr;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (info->kind != XPDRV_MEM_PINNED && info->kind != XPDRV_MEM_MANAGED)
            return CUDA_ERROR_INVALID_VALUE;
        *(void **)data = (void *)(uintptr_t)ptr;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        if (!known)
            return CUDA_ERROR_INVALID_VALUE;
        *(unsigned int *)data = info->kind == XPDRV_MEM_MANAGED;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        if (!known)
            return CUDA_ERROR_INVALID_VALUE;
        *(int *)data = info->device >= 0 ? info->device : 0;
        return CUDA_SUCCESS;
    /* A reserved but unmapped VMM range still has a range (NVIDIA's driver
     * reports the reservation, with MAPPED 0). */
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        if (!known && !reserved)
            return CUDA_ERROR_INVALID_VALUE;
        *(CUdeviceptr *)data = info->base;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        if (!known && !reserved)
            return CUDA_ERROR_INVALID_VALUE;
        *(size_t *)data = info->size;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
        if (!known)
            return CUDA_ERROR_INVALID_VALUE;
        *(CUdeviceptr *)data = info->base;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
        if (!known)
            return CUDA_ERROR_INVALID_VALUE;
        *(size_t *)data = info->size;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPED:
        *(unsigned int *)data = known;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
        if (!known)
            return CUDA_ERROR_INVALID_VALUE;
        *(unsigned long long *)data = info->base;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
        if (!known)
            return CUDA_ERROR_INVALID_VALUE;
        *(unsigned int *)data = 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
        if (!known)
            return CUDA_ERROR_INVALID_VALUE;
        /* The CU_MEM_ACCESS_FLAGS_PROT_* values are these flags' values. */
        _Static_assert(CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READ == (int)CU_MEM_ACCESS_FLAGS_PROT_READ &&
                           CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE ==
                               (int)CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
                       "access flag values");
        *(unsigned int *)data = info->kind == XPDRV_MEM_DEVICE
                                    ? info->access
                                    : (unsigned int)CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
        if (!known)
            return CUDA_ERROR_INVALID_VALUE;
        *(CUmemoryPool *)data = info->origin == XPDRV_FROM_POOL
                                    ? xpdrv_pool_of(info->device, info->base)
                                    : NULL;
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

XPSIM_API CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    if (data == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    xpdrv_ptr info;
    xpdrv_classify(ptr, &info);
    return pointer_attribute(data, attribute, &info, ptr);
}

XPSIM_API CUresult cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes,
                                          void **data, CUdeviceptr ptr)
{
    if (attributes == NULL || data == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    xpdrv_ptr info;
    xpdrv_classify(ptr, &info);
    /* Unlike cuPointerGetAttribute, an address the driver does not know is
     * not an error here: its attributes read as zero/NULL. */
    for (unsigned int i = 0; i < numAttributes; i++) {
        if (data[i] == NULL)
            continue;
        if (pointer_attribute(data[i], attributes[i], &info, ptr) != CUDA_SUCCESS) {
            switch (attributes[i]) {
            case CU_POINTER_ATTRIBUTE_CONTEXT: *(CUcontext *)data[i] = NULL; break;
            case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
            case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
            case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *(CUdeviceptr *)data[i] = 0; break;
            case CU_POINTER_ATTRIBUTE_HOST_POINTER: *(void **)data[i] = NULL; break;
            case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
            case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *(size_t *)data[i] = 0; break;
            case CU_POINTER_ATTRIBUTE_BUFFER_ID: *(unsigned long long *)data[i] = 0; break;
            case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data[i] = -2; break;
            case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: *(CUmemoryPool *)data[i] = NULL; break;
            default: *(unsigned int *)data[i] = 0; break;
            }
        }
    }
    return CUDA_SUCCESS;
}
