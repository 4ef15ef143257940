/* drv_managed.c: the unified-memory hints, cuMemPrefetchAsync and cuMemAdvise.
 *
 * Managed memory lives on the host in the simulator (drv_memory.c) and is
 * treated as resident on its device by copies, so there is nothing to
 * migrate: a prefetch is stream work that takes the time the migration would
 * (latency + bytes at the pinned rate, on the copy engine of its direction)
 * and moves no byte; advice is checked and otherwise has no effect. */
#include "xpsim_driver.h"
#include "xpsim_graph.h"
#include "xpsim_stream.h"

/* Valid destinations and subjects of hints.  The device attribute
 * CONCURRENT_MANAGED_ACCESS, which prefetching to a device requires, is 1 on
 * every simulated device.  The host has one NUMA node, 0. */
static CUresult check_location(CUmemLocation loc)
{
    switch (loc.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE: return xpdrv_check_device(loc.id);
    case CU_MEM_LOCATION_TYPE_HOST:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT: return CUDA_SUCCESS;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA: return loc.id == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

/* The range must be managed memory, all inside one allocation ("The memory
 * range must refer to managed memory allocated via cuMemAllocManaged or
 * declared via __managed__ variables"; pageable memory would need
 * CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, which is 0). */
static CUresult check_managed(CUdeviceptr ptr, size_t count)
{
    if (ptr == 0 || count == 0)
        return CUDA_ERROR_INVALID_VALUE;
    xpdrv_ptr info;
    xpdrv_classify(ptr, &info);
    if (info.kind != XPDRV_MEM_MANAGED || count > info.limit - ptr)
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

/* The legacy forms name a device, or CU_DEVICE_CPU for the host. */
static CUmemLocation location_of(CUdevice dev)
{
    if (dev == CU_DEVICE_CPU)
        return (CUmemLocation){.type = CU_MEM_LOCATION_TYPE_HOST, .id = 0};
    return (CUmemLocation){.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = dev};
}

static CUresult prefetch(CUdeviceptr ptr, size_t count, CUmemLocation loc, unsigned int flags,
                         CUstream h, bool ptds, const char *api)
{
    int cur;
    CUresult rc = xpdrv_enter(&cur);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = check_location(loc)) != CUDA_SUCCESS || (rc = check_managed(ptr, count)) != CUDA_SUCCESS)
        return rc;
    CUstream s;
    /* Prefetches are not captured: refused on a capturing stream. */
    if ((rc = xpsim_stream_resolve(h, ptds, cur, &s)) != CUDA_SUCCESS ||
        (rc = xpsim_capture_sync(s)) != CUDA_SUCCESS)
        return rc;
    const xpsim_config *cfg = xpsim_config_get();
    bool to_device = loc.type == CU_MEM_LOCATION_TYPE_DEVICE;
    xpsim_work w = {.run = NULL, .release = NULL, .ctx = NULL,
                    .duration_ns = cfg->latency_ns + (uint64_t)((double)count * 1e9 / cfg->pinned_bps),
                    .lane = to_device ? XPSIM_LANE_H2D : XPSIM_LANE_D2H, .fault = CUDA_SUCCESS,
                    .what = api};
    xpsim_stream_enqueue(s, &w);
    xpsim_debug("%s(%#llx, %zu) to %s %d stream %p", api, (unsigned long long)ptr, count,
                to_device ? "device" : "host", loc.id, (void *)s);
    return CUDA_SUCCESS;
}

XPDRV_TWINS(cuMemPrefetchAsync_v2, cuMemPrefetchAsync_v2_ptsz,
            (CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags,
             CUstream h),
            prefetch(devPtr, count, location, flags, h, ptds, "cuMemPrefetchAsync_v2"))

static CUresult advise(CUdeviceptr ptr, size_t count, CUmem_advise advice, CUmemLocation loc)
{
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    switch (advice) {
    case CU_MEM_ADVISE_SET_READ_MOSTLY:
    case CU_MEM_ADVISE_UNSET_READ_MOSTLY:
    case CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION:
        break;   /* the location is ignored */
    case CU_MEM_ADVISE_SET_PREFERRED_LOCATION:
    case CU_MEM_ADVISE_SET_ACCESSED_BY:
    case CU_MEM_ADVISE_UNSET_ACCESSED_BY:
        if ((rc = check_location(loc)) != CUDA_SUCCESS)
            return rc;
        break;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    rc = check_managed(ptr, count);
    xpsim_debug("cuMemAdvise(%#llx, %zu, %d) -> %d", (unsigned long long)ptr, count, (int)advice,
                (int)rc);
    return rc;
}

XPSIM_API CUresult cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice,
                                  CUmemLocation location)
{
    return advise(devPtr, count, advice, location);
}

/* The CUDA 8 forms, with a device ordinal.  cuda.h maps their names to _v2
 * and no longer declares them. */
#undef cuMemPrefetchAsync
#undef cuMemAdvise
XPDRV_TWINS(cuMemPrefetchAsync, cuMemPrefetchAsync_ptsz,
            (CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream h),
            prefetch(devPtr, count, location_of(dstDevice), 0, h, ptds, "cuMemPrefetchAsync"))

XPSIM_API CUresult cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device);
XPSIM_API CUresult cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device)
{
    return advise(devPtr, count, advice, location_of(device));
}
