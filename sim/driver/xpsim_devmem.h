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
} xpsim_block_kind;

typedef struct xpsim_block {
    uint64_t offset;          /* from the range's base */
    uint64_t size;            /* rounded to XPSIM_DEVMEM_ALIGN */
    uint64_t requested;       /* what the caller asked for */
    xpsim_block_kind kind;
} xpsim_block;

typedef struct xpsim_devmem {
    int device;
    uint64_t base;            /* device addresses: PROT_NONE, so host access faults */
    uint64_t capacity;
    unsigned char *shadow;    /* where the bytes of [base, base+capacity) live */
    pthread_rwlock_t lock;    /* guards blocks, count, used */
    xpsim_block *blocks;      /* sorted by offset, covering the whole range */
    size_t count, cap;
    uint64_t used;            /* bytes in non-free blocks */
} xpsim_devmem;

/* Reserves the ranges (without committing memory).  Returns CUDA_SUCCESS or
 * CUDA_ERROR_OUT_OF_MEMORY when the address space cannot be had. */
CUresult xpsim_devmem_init(xpsim_devmem *dm, int device, uint64_t capacity);
void xpsim_devmem_fini(xpsim_devmem *dm);

/* First fit.  CUDA_ERROR_OUT_OF_MEMORY when no free block is large enough,
 * even if the free bytes in total would be. */
CUresult xpsim_devmem_alloc(xpsim_devmem *dm, uint64_t bytes, xpsim_block_kind kind,
                            CUdeviceptr *out_ptr);

/* Frees the XPSIM_BLOCK_ALLOC block starting exactly at ptr.
 * CUDA_ERROR_INVALID_VALUE for anything else (never allocated, an interior
 * pointer, already freed, a module variable). */
CUresult xpsim_devmem_free(xpsim_devmem *dm, CUdeviceptr ptr);

/* Frees every block (context reset). */
void xpsim_devmem_free_all(xpsim_devmem *dm);

static inline bool xpsim_devmem_in_range(const xpsim_devmem *dm, uint64_t addr)
{
    return addr >= dm->base && addr - dm->base < dm->capacity;
}

/* The allocated block containing addr; false if addr is in no live block. */
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
