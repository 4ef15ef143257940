/* xpsim_devmem.h: one simulated device's memory: a reserved address range the
 * host cannot touch, a shadow the simulator reads and writes, and a first-fit
 * allocator over it. */
#ifndef XPSIM_DEVMEM_H
#define XPSIM_DEVMEM_H

#include <cuda.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* cudaMalloc guarantees 256-byte alignment; NVIDIA's allocator hands out
 * 512-byte granules, which is what programs observe as pointer spacing. */
#define XPSIM_DEVMEM_ALIGN 512u

typedef enum xpsim_block_kind {
    XPSIM_BLOCK_FREE = 0,
    XPSIM_BLOCK_ALLOC,        /* cuMemAlloc / cuMemAllocPitch */
    XPSIM_BLOCK_MODULE,       /* a module's __device__ variable: not freeable */
    XPSIM_BLOCK_POOL,         /* cuMemAllocAsync: from the device's memory pool */
    XPSIM_BLOCK_FREEING,      /* cuMemFreeAsync'd, until its stream reaches the free:
                                 still taken, no longer an allocation */
    XPSIM_BLOCK_PHYSICAL,     /* cuMemCreate: reachable only where it is mapped */
    XPSIM_BLOCK_ARRAY,        /* a CUDA array's memory (drv_array.c): addressed by
                                 the array copies only, freed by cuArrayDestroy */
} xpsim_block_kind;

/* A set of kinds, for the calls below that accept several. */
#define XPSIM_BLOCK_BIT(kind) (1u << (kind))

typedef struct xpsim_block {
    uint64_t offset;          /* from the range's base */
    uint64_t size;            /* rounded to XPSIM_DEVMEM_ALIGN */
    uint64_t requested;       /* what the caller asked for */
    xpsim_block_kind kind;
    /* The context that allocated an ALLOC, MODULE or ARRAY block (its
     * CUcontext), which frees it when destroyed or reset; NULL for the
     * others, which belong to the device. */
    const void *owner;
} xpsim_block;

typedef struct xpsim_devmem {
    int device;
    uint64_t base;            /* device addresses: PROT_NONE, so host access faults */
    uint64_t capacity;
    unsigned char *shadow;    /* where the bytes of [base, base+capacity) live */
    /* The memory file the shadow maps (offset = address - base) once an
     * allocation was exported to another process (xpsim_devmem_share);
     * -1 while the shadow is anonymous memory, as it is until then. */
    int shadow_fd;
    uint64_t shadow_ino;      /* the file's inode: the descriptor may have been closed
                                 by the program since, and its number reused */
    /* PHYSICAL blocks keep their bytes at the same offsets of a memory file
     * instead, so that they can be mapped wherever a program maps them
     * (cuMemMap); created by the first such allocation, -1 until then. */
    int phys_fd;
    pthread_rwlock_t lock;    /* guards blocks, count, used, phys_fd */
    xpsim_block *blocks;      /* sorted by offset, covering the whole range */
    size_t count, cap;
    uint64_t used;            /* bytes in non-free blocks */
} xpsim_devmem;

/* Reserves the ranges (without committing memory).  Returns CUDA_SUCCESS or
 * CUDA_ERROR_OUT_OF_MEMORY when the address space cannot be had. */
CUresult xpsim_devmem_init(xpsim_devmem *dm, int device, uint64_t capacity);
void xpsim_devmem_fini(xpsim_devmem *dm);

/* First fit, owned by `owner` (xpsim_block.owner).  CUDA_ERROR_OUT_OF_MEMORY
 * when no free block is large enough, even if the free bytes in total would be. */
CUresult xpsim_devmem_alloc(xpsim_devmem *dm, uint64_t bytes, xpsim_block_kind kind,
                            const void *owner, CUdeviceptr *out_ptr);

/* Makes the shadow a memory file other processes can map (cuIpcGetMemHandle):
 * on the first call the bytes of every allocation move into a new file that
 * then replaces the anonymous shadow, and its descriptor is kept from then on
 * (a process that exports nothing holds none).  The caller has let the
 * device's queued work finish; a host thread writing device memory right
 * then may lose its bytes.  *out_fd: the file.  CUDA_ERROR_NOT_SUPPORTED
 * without memfd, or where the file size limit is below the capacity. */
CUresult xpsim_devmem_share(xpsim_devmem *dm, int *out_fd);

/* cuMemCreate's backing store: bytes (a multiple of align, a power of two
 * no smaller than the host page) at an align-aligned offset, counted as used
 * like any allocation but invisible to xpsim_devmem_lookup.  Its bytes are
 * those of the memory file *out_fd from offset *out_ptr - dm->base.
 * CUDA_ERROR_NOT_SUPPORTED if the memory file cannot be created. */
CUresult xpsim_devmem_alloc_physical(xpsim_devmem *dm, uint64_t bytes, uint64_t align,
                                     CUdeviceptr *out_ptr, int *out_fd);

/* Frees the XPSIM_BLOCK_ALLOC block starting exactly at ptr.
 * CUDA_ERROR_INVALID_VALUE for anything else (never allocated, an interior
 * pointer, already freed, a module variable). */
CUresult xpsim_devmem_free(xpsim_devmem *dm, CUdeviceptr ptr);

/* Frees the block starting exactly at ptr if its kind is in `kinds` (a set of
 * XPSIM_BLOCK_BITs); *out_size (if not NULL) receives the bytes it took.
 * CUDA_ERROR_INVALID_VALUE otherwise. */
CUresult xpsim_devmem_release(xpsim_devmem *dm, CUdeviceptr ptr, unsigned kinds,
                              uint64_t *out_size);

/* Turns the block starting exactly at ptr, if its kind is in `kinds`, into a
 * block of kind `to` (a stream-ordered free in flight), reporting the kind it
 * had and the bytes it takes.  CUDA_ERROR_INVALID_VALUE otherwise. */
CUresult xpsim_devmem_retag(xpsim_devmem *dm, CUdeviceptr ptr, unsigned kinds,
                            xpsim_block_kind to, xpsim_block_kind *out_old, uint64_t *out_size);

/* Frees what the context `owner` owns (context reset or destroy): its ALLOC,
 * MODULE and ARRAY blocks.  Pool and physical allocations belong to the
 * device, not to a context, and stay (cuda.h: cuCtxDestroy "will not destroy
 * memory allocations by cuMemCreate(), cuMemAllocAsync() and
 * cuMemAllocFromPoolAsync()"). */
void xpsim_devmem_free_owned(xpsim_devmem *dm, const void *owner);

static inline bool xpsim_devmem_in_range(const xpsim_devmem *dm, uint64_t addr)
{
    return addr >= dm->base && addr - dm->base < dm->capacity;
}

/* The allocation (ALLOC, MODULE or POOL block) containing addr; false if addr
 * is in no live allocation. */
bool xpsim_devmem_lookup(xpsim_devmem *dm, uint64_t addr, xpsim_block *out_block);

/* Where the simulator reads and writes the bytes of device address addr. */
static inline void *xpsim_devmem_shadow(const xpsim_devmem *dm, uint64_t addr)
{
    return dm->shadow + (addr - dm->base);
}

void xpsim_devmem_info(xpsim_devmem *dm, uint64_t *out_free, uint64_t *out_total);

/* Largest free block, for tests of fragmentation. */
uint64_t xpsim_devmem_largest_free(xpsim_devmem *dm);

#endif
