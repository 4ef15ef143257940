/* xpsim_hostmem.h: host memory the driver knows about: pinned allocations,
 * registered ranges and managed allocations, by address. */
#ifndef XPSIM_HOSTMEM_H
#define XPSIM_HOSTMEM_H

#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum xpsim_host_kind {
    XPSIM_HOST_PINNED = 1,    /* cuMemAllocHost / cuMemHostAlloc */
    XPSIM_HOST_REGISTERED,    /* cuMemHostRegister of the program's memory */
    XPSIM_HOST_MANAGED,       /* cuMemAllocManaged */
} xpsim_host_kind;

typedef struct xpsim_host_range {
    uint64_t base;
    uint64_t size;            /* as requested */
    uint64_t mapped;          /* bytes mmap'd by us (0 for registered ranges) */
    xpsim_host_kind kind;
    unsigned int flags;       /* CU_MEMHOSTALLOC_* / CU_MEMHOSTREGISTER_* / CU_MEM_ATTACH_* */
    int device;               /* managed: the device it was allocated for */
    const void *owner;        /* managed: the context that allocated it (its CUcontext) */
} xpsim_host_range;

/* Adds a range.  CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED if it overlaps a
 * known range, CUDA_ERROR_OUT_OF_MEMORY if the table cannot grow. */
CUresult xpsim_hostmem_add(const xpsim_host_range *range);

/* Removes the range of this kind starting exactly at base; false if none. */
bool xpsim_hostmem_remove(uint64_t base, xpsim_host_kind kind, xpsim_host_range *out_range);

/* The range containing addr; false if addr is ordinary pageable memory. */
bool xpsim_hostmem_lookup(uint64_t addr, xpsim_host_range *out_range);

/* Drops the managed ranges the context `owner` allocated (context reset or
 * destroy), unmapping them. */
void xpsim_hostmem_drop_managed(const void *owner);

#endif
