/* xpsim_vmm.h: the state behind CUDA's virtual memory management API:
 * physical allocations (cuMemCreate), address reservations
 * (cuMemAddressReserve) and the mappings of the one into the other (cuMemMap).
 *
 * A reservation is address space of its own, PROT_NONE like a device's range
 * (so it overlaps nothing and a host dereference crashes), with a host view of
 * the same size beside it.  Physical allocations take device memory from the
 * device's allocator and keep their bytes in its memory file; mapping one maps
 * that part of the file into the view at the same offset, so the bytes behind
 * a run of adjacent mappings are contiguous for the host just as the mapped
 * addresses are for the device.
 *
 * Everything here is in CUDA driver terms; drv_vmm.c validates the arguments
 * of the exported cu* functions and calls in. */
#ifndef XPSIM_VMM_H
#define XPSIM_VMM_H

#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>

#include "xpsim_devmem.h"

/* What cuMemGetAllocationGranularity answers, minimum and recommended: the
 * large-page size of NVIDIA's GPUs.  Sizes, offsets and mapped addresses are
 * multiples of it. */
#define XPSIM_VMM_GRANULARITY (2ull << 20)

/* What an address inside a reservation is. */
typedef struct xpsim_vmm_hit {
    bool mapped;
    int device;               /* mapped: the physical allocation's device; else -1 */
    uint64_t base, size;      /* mapped: the mapping (one cuMemMap); else the reservation */
    uint64_t limit;           /* mapped: end of the adjacent mappings of the same
                                 device with the same access; else base + size */
    unsigned int access;      /* mapped: CU_MEM_ACCESS_FLAGS_PROT_* of its own device */
    unsigned char *view;      /* mapped: where the host sees base */
} xpsim_vmm_hit;

/* False when addr is in no reservation (cheap while there are none). */
bool xpsim_vmm_lookup(uint64_t addr, xpsim_vmm_hit *out);

/* cuMemCreate: size bytes (a multiple of the granularity) of dm's memory.
 * prop is kept for cuMemGetAllocationPropertiesFromHandle. */
CUresult xpsim_vmm_create(xpsim_devmem *dm, uint64_t size, const CUmemAllocationProp *prop,
                          CUmemGenericAllocationHandle *out);

/* cuMemRelease: drops one reference to the handle; the memory goes back to
 * the device once no reference and no mapping is left. */
CUresult xpsim_vmm_release(CUmemGenericAllocationHandle handle);

CUresult xpsim_vmm_properties(CUmemGenericAllocationHandle handle, CUmemAllocationProp *out);

/* cuMemRetainAllocationHandle: the handle mapped at addr, with a new reference. */
CUresult xpsim_vmm_retain_at(uint64_t addr, CUmemGenericAllocationHandle *out);

/* cuMemAddressReserve.  size and hint: multiples of the host page; align: a
 * power of two or 0 (the reservation is aligned to at least the granularity).
 * hint is honoured when that address range is free. */
CUresult xpsim_vmm_reserve(uint64_t size, uint64_t align, uint64_t hint, CUdeviceptr *out);

/* cuMemAddressFree of exactly a reservation, which must have no mappings. */
CUresult xpsim_vmm_free(CUdeviceptr ptr, uint64_t size);

/* cuMemMap of [offset, offset + size) of the allocation at [ptr, ptr + size),
 * which must be inside one reservation and not mapped yet.  The mapping
 * starts with no access for any device. */
CUresult xpsim_vmm_map(CUdeviceptr ptr, uint64_t size, uint64_t offset,
                       CUmemGenericAllocationHandle handle);

/* cuMemUnmap of [ptr, ptr + size), which must be made of whole mappings.
 * The caller waits for device work that may use them first. */
CUresult xpsim_vmm_unmap(CUdeviceptr ptr, uint64_t size);

/* cuMemSetAccess: flags[i] (CU_MEM_ACCESS_FLAGS_PROT_*) for device
 * devices[i], over [ptr, ptr + size), which must be made of whole mappings. */
CUresult xpsim_vmm_set_access(CUdeviceptr ptr, uint64_t size, const int *devices,
                              const unsigned int *flags, size_t count);

/* cuMemGetAccess: what device may do at the mapped address ptr. */
CUresult xpsim_vmm_get_access(CUdeviceptr ptr, int device, unsigned int *out);

#endif
