/* xpsim_devmem.c: device address ranges and the first-fit allocator. */
#include "xpsim_devmem.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* Device ranges start on a 2 MiB boundary, like the driver's VA reservations,
 * so that pointer arithmetic in programs meets the same alignment. */
#define RANGE_ALIGN (2u << 20)

static void *reserve(uint64_t bytes, int prot)
{
    void *p = mmap(NULL, bytes, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

CUresult xpsim_devmem_init(xpsim_devmem *dm, int device, uint64_t capacity)
{
    memset(dm, 0, sizeof *dm);
    dm->device = device;
    dm->phys_fd = -1;
    dm->shadow_fd = -1;
    dm->capacity = (capacity + XPSIM_DEVMEM_ALIGN - 1) & ~(uint64_t)(XPSIM_DEVMEM_ALIGN - 1);
    /* The device view is never accessible from the host: a program that
     * dereferences a device pointer crashes, as it does on a real GPU.  Over-
     * reserve to align the base, then give back the slack. */
    unsigned char *raw = reserve(dm->capacity + RANGE_ALIGN, PROT_NONE);
    if (raw == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    uint64_t base = ((uint64_t)(uintptr_t)raw + RANGE_ALIGN - 1) & ~(uint64_t)(RANGE_ALIGN - 1);
    if (base > (uint64_t)(uintptr_t)raw)
        munmap(raw, base - (uint64_t)(uintptr_t)raw);
    uint64_t tail = (uint64_t)(uintptr_t)raw + dm->capacity + RANGE_ALIGN - (base + dm->capacity);
    if (tail > 0)
        munmap((void *)(uintptr_t)(base + dm->capacity), tail);
    dm->base = base;
    dm->shadow = reserve(dm->capacity, PROT_READ | PROT_WRITE);
    if (dm->shadow == NULL) {
        munmap((void *)(uintptr_t)dm->base, dm->capacity);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    dm->cap = 64;
    dm->blocks = calloc(dm->cap, sizeof *dm->blocks);
    if (dm->blocks == NULL) {
        munmap(dm->shadow, dm->capacity);
        munmap((void *)(uintptr_t)dm->base, dm->capacity);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    dm->blocks[0] = (xpsim_block){.offset = 0, .size = dm->capacity, .kind = XPSIM_BLOCK_FREE};
    dm->count = 1;
    pthread_rwlock_init(&dm->lock, NULL);
    return CUDA_SUCCESS;
}

void xpsim_devmem_fini(xpsim_devmem *dm)
{
    if (dm->blocks == NULL)
        return;
    munmap(dm->shadow, dm->capacity);
    munmap((void *)(uintptr_t)dm->base, dm->capacity);
    if (dm->phys_fd >= 0)
        close(dm->phys_fd);
    if (dm->shadow_fd >= 0)
        close(dm->shadow_fd);
    free(dm->blocks);
    pthread_rwlock_destroy(&dm->lock);
    memset(dm, 0, sizeof *dm);
    dm->phys_fd = -1;
    dm->shadow_fd = -1;
}

/* Index of the block containing offset (blocks tile the range). */
static size_t find_block(const xpsim_devmem *dm, uint64_t offset)
{
    size_t lo = 0, hi = dm->count;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (dm->blocks[mid].offset <= offset)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static bool insert_at(xpsim_devmem *dm, size_t index, xpsim_block b)
{
    if (dm->count == dm->cap) {
        size_t ncap = dm->cap * 2;
        xpsim_block *nb = realloc(dm->blocks, ncap * sizeof *nb);
        if (nb == NULL)
            return false;
        dm->blocks = nb;
        dm->cap = ncap;
    }
    memmove(&dm->blocks[index + 1], &dm->blocks[index], (dm->count - index) * sizeof *dm->blocks);
    dm->blocks[index] = b;
    dm->count++;
    return true;
}

static void remove_at(xpsim_devmem *dm, size_t index)
{
    memmove(&dm->blocks[index], &dm->blocks[index + 1], (dm->count - index - 1) * sizeof *dm->blocks);
    dm->count--;
}

/* First fit of `bytes` at an `align`-aligned offset (align: a power of two,
 * at least XPSIM_DEVMEM_ALIGN); lock held. */
static CUresult alloc_locked(xpsim_devmem *dm, uint64_t bytes, uint64_t align,
                             xpsim_block_kind kind, const void *owner, CUdeviceptr *out_ptr)
{
    if (bytes == 0 || bytes > dm->capacity)
        return bytes == 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_OUT_OF_MEMORY;
    uint64_t need = (bytes + XPSIM_DEVMEM_ALIGN - 1) & ~(uint64_t)(XPSIM_DEVMEM_ALIGN - 1);
    for (size_t i = 0; i < dm->count; i++) {
        xpsim_block *b = &dm->blocks[i];
        if (b->kind != XPSIM_BLOCK_FREE || b->size < need)
            continue;
        uint64_t pad = ((b->offset + align - 1) & ~(align - 1)) - b->offset;
        if (pad > b->size - need)
            continue;
        if (pad > 0) {
            /* The hole before the aligned start stays free. */
            xpsim_block rest = {.offset = b->offset + pad, .size = b->size - pad,
                                .kind = XPSIM_BLOCK_FREE};
            if (!insert_at(dm, i + 1, rest))
                return CUDA_ERROR_OUT_OF_MEMORY;
            dm->blocks[i].size = pad;
            b = &dm->blocks[++i];
        }
        if (b->size > need) {
            xpsim_block rest = {.offset = b->offset + need, .size = b->size - need,
                                .kind = XPSIM_BLOCK_FREE};
            if (!insert_at(dm, i + 1, rest))
                return CUDA_ERROR_OUT_OF_MEMORY;
            b = &dm->blocks[i];   /* insert_at may have moved the array */
            b->size = need;
        }
        b->kind = kind;
        b->owner = owner;
        b->requested = bytes;
        dm->used += need;
        *out_ptr = (CUdeviceptr)(dm->base + b->offset);
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult xpsim_devmem_alloc(xpsim_devmem *dm, uint64_t bytes, xpsim_block_kind kind,
                            const void *owner, CUdeviceptr *out_ptr)
{
    pthread_rwlock_wrlock(&dm->lock);
    CUresult rc = alloc_locked(dm, bytes, XPSIM_DEVMEM_ALIGN, kind, owner, out_ptr);
    pthread_rwlock_unlock(&dm->lock);
    return rc;
}

CUresult xpsim_devmem_share(xpsim_devmem *dm, int *out_fd)
{
    CUresult rc = CUDA_SUCCESS;
    pthread_rwlock_wrlock(&dm->lock);
    if (dm->shadow_fd < 0) {
        /* A file as large as the device: refused rather than killed by
         * SIGXFSZ where the file size limit is lower. */
        struct rlimit fsize;
        int fd = getrlimit(RLIMIT_FSIZE, &fsize) == 0 &&
                         (fsize.rlim_cur == RLIM_INFINITY || fsize.rlim_cur >= dm->capacity)
                     ? memfd_create("xpsim-device", MFD_CLOEXEC)
                     : -1;
        unsigned char *file = MAP_FAILED;
        if (fd >= 0 && ftruncate(fd, (off_t)dm->capacity) == 0)
            file = mmap(NULL, dm->capacity, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
                        fd, 0);
        if (file == MAP_FAILED) {
            rc = CUDA_ERROR_NOT_SUPPORTED;
        } else {
            /* Every block that holds bytes, whole pages (the file is sparse
             * elsewhere); then the file replaces the shadow in one step. */
            uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
            for (size_t i = 0; i < dm->count; i++) {
                const xpsim_block *b = &dm->blocks[i];
                if (b->kind == XPSIM_BLOCK_FREE || b->kind == XPSIM_BLOCK_PHYSICAL)
                    continue;
                uint64_t start = b->offset & ~(page - 1);
                uint64_t end = (b->offset + b->size + page - 1) & ~(page - 1);
                memcpy(file + start, dm->shadow + start, end - start);
            }
            munmap(file, dm->capacity);
            if (mmap(dm->shadow, dm->capacity, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_NORESERVE | MAP_FIXED, fd, 0) == MAP_FAILED)
                rc = CUDA_ERROR_NOT_SUPPORTED;
        }
        struct stat st;
        if (rc == CUDA_SUCCESS && fstat(fd, &st) == 0) {
            dm->shadow_fd = fd;
            dm->shadow_ino = (uint64_t)st.st_ino;
        } else if (fd >= 0) {
            close(fd);
        }
    }
    if (rc == CUDA_SUCCESS)
        *out_fd = dm->shadow_fd;
    pthread_rwlock_unlock(&dm->lock);
    return rc;
}

CUresult xpsim_devmem_alloc_physical(xpsim_devmem *dm, uint64_t bytes, uint64_t align,
                                     CUdeviceptr *out_ptr, int *out_fd)
{
    CUresult rc = CUDA_SUCCESS;
    pthread_rwlock_wrlock(&dm->lock);
    if (dm->phys_fd < 0) {
        /* Sparse like the shadow: only what is written takes memory. */
        int fd = memfd_create("xpsim-physical", MFD_CLOEXEC);
        if (fd >= 0 && ftruncate(fd, (off_t)dm->capacity) != 0) {
            close(fd);
            fd = -1;
        }
        dm->phys_fd = fd;
        if (fd < 0)
            rc = CUDA_ERROR_NOT_SUPPORTED;
    }
    if (rc == CUDA_SUCCESS)
        rc = alloc_locked(dm, bytes, align, XPSIM_BLOCK_PHYSICAL, NULL, out_ptr);
    if (rc == CUDA_SUCCESS)
        *out_fd = dm->phys_fd;
    pthread_rwlock_unlock(&dm->lock);
    return rc;
}

/* Marks block i free and merges it with free neighbours; lock held. */
static void release_block(xpsim_devmem *dm, size_t i)
{
    xpsim_block *b = &dm->blocks[i];
    dm->used -= b->size;
    /* Give the pages back: freed device memory has no contents to keep, and
     * long runs that churn allocations must not grow the simulator's RSS. */
    uint64_t page = 4096;
    uint64_t start = (b->offset + page - 1) & ~(page - 1);
    uint64_t end = (b->offset + b->size) & ~(page - 1);
    if (end > start) {
        if (b->kind == XPSIM_BLOCK_PHYSICAL)
            (void)fallocate(dm->phys_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                            (off_t)start, (off_t)(end - start));
        else if (dm->shadow_fd >= 0)   /* shared (xpsim_devmem_share): drop the file's pages */
            madvise(dm->shadow + start, end - start, MADV_REMOVE);
        else
            madvise(dm->shadow + start, end - start, MADV_DONTNEED);
    }
    b->kind = XPSIM_BLOCK_FREE;
    b->owner = NULL;
    b->requested = 0;
    if (i + 1 < dm->count && dm->blocks[i + 1].kind == XPSIM_BLOCK_FREE) {
        b->size += dm->blocks[i + 1].size;
        remove_at(dm, i + 1);
    }
    if (i > 0 && dm->blocks[i - 1].kind == XPSIM_BLOCK_FREE) {
        dm->blocks[i - 1].size += dm->blocks[i].size;
        remove_at(dm, i);
    }
}

/* Index of the block starting exactly at ptr with a kind in `kinds`, or
 * dm->count; lock held. */
static size_t block_at(const xpsim_devmem *dm, CUdeviceptr ptr, unsigned kinds)
{
    if (!xpsim_devmem_in_range(dm, ptr))
        return dm->count;
    size_t i = find_block(dm, ptr - dm->base);
    const xpsim_block *b = &dm->blocks[i];
    return b->offset == ptr - dm->base && (kinds & XPSIM_BLOCK_BIT(b->kind)) ? i : dm->count;
}

CUresult xpsim_devmem_release(xpsim_devmem *dm, CUdeviceptr ptr, unsigned kinds,
                              uint64_t *out_size)
{
    /* A free block is never released, whatever the caller asked for. */
    kinds &= ~XPSIM_BLOCK_BIT(XPSIM_BLOCK_FREE);
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    pthread_rwlock_wrlock(&dm->lock);
    size_t i = block_at(dm, ptr, kinds);
    if (i < dm->count) {
        if (out_size)
            *out_size = dm->blocks[i].size;
        release_block(dm, i);
        rc = CUDA_SUCCESS;
    }
    pthread_rwlock_unlock(&dm->lock);
    return rc;
}

CUresult xpsim_devmem_free(xpsim_devmem *dm, CUdeviceptr ptr)
{
    return xpsim_devmem_release(dm, ptr, XPSIM_BLOCK_BIT(XPSIM_BLOCK_ALLOC), NULL);
}

CUresult xpsim_devmem_retag(xpsim_devmem *dm, CUdeviceptr ptr, unsigned kinds,
                            xpsim_block_kind to, xpsim_block_kind *out_old, uint64_t *out_size)
{
    kinds &= ~XPSIM_BLOCK_BIT(XPSIM_BLOCK_FREE);
    if (to == XPSIM_BLOCK_FREE)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    pthread_rwlock_wrlock(&dm->lock);
    size_t i = block_at(dm, ptr, kinds);
    if (i < dm->count) {
        if (out_old)
            *out_old = dm->blocks[i].kind;
        if (out_size)
            *out_size = dm->blocks[i].size;
        dm->blocks[i].kind = to;
        rc = CUDA_SUCCESS;
    }
    pthread_rwlock_unlock(&dm->lock);
    return rc;
}

void xpsim_devmem_free_owned(xpsim_devmem *dm, const void *owner)
{
    pthread_rwlock_wrlock(&dm->lock);
    /* Downwards: release_block merges block i only with i - 1 and i + 1, so
     * the blocks below i keep their indices. */
    for (size_t i = dm->count; i-- > 0;) {
        xpsim_block_kind k = dm->blocks[i].kind;
        if ((k == XPSIM_BLOCK_ALLOC || k == XPSIM_BLOCK_MODULE || k == XPSIM_BLOCK_ARRAY) &&
            dm->blocks[i].owner == owner)
            release_block(dm, i);
    }
    pthread_rwlock_unlock(&dm->lock);
}

bool xpsim_devmem_lookup(xpsim_devmem *dm, uint64_t addr, xpsim_block *out_block)
{
    if (!xpsim_devmem_in_range(dm, addr))
        return false;
    bool found = false;
    pthread_rwlock_rdlock(&dm->lock);
    size_t i = find_block(dm, addr - dm->base);
    const xpsim_block *b = &dm->blocks[i];
    /* An address in a block's alignment padding is outside what was asked for.
     * A physical allocation has no address of its own, and a block being
     * freed in stream order is no longer an allocation.  An array's memory
     * is device memory to the array copies, which reach it by address too. */
    bool allocation = b->kind == XPSIM_BLOCK_ALLOC || b->kind == XPSIM_BLOCK_MODULE ||
                      b->kind == XPSIM_BLOCK_POOL || b->kind == XPSIM_BLOCK_ARRAY;
    if (allocation && addr - dm->base < b->offset + b->requested) {
        *out_block = *b;
        found = true;
    }
    pthread_rwlock_unlock(&dm->lock);
    return found;
}

void xpsim_devmem_info(xpsim_devmem *dm, uint64_t *out_free, uint64_t *out_total)
{
    pthread_rwlock_rdlock(&dm->lock);
    *out_free = dm->capacity - dm->used;
    *out_total = dm->capacity;
    pthread_rwlock_unlock(&dm->lock);
}

uint64_t xpsim_devmem_largest_free(xpsim_devmem *dm)
{
    uint64_t best = 0;
    pthread_rwlock_rdlock(&dm->lock);
    for (size_t i = 0; i < dm->count; i++)
        if (dm->blocks[i].kind == XPSIM_BLOCK_FREE && dm->blocks[i].size > best)
            best = dm->blocks[i].size;
    pthread_rwlock_unlock(&dm->lock);
    return best;
}
