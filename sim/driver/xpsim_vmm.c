/* xpsim_vmm.c: physical allocations, address reservations and their mappings. */
#include "xpsim_vmm.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "xpsim_config.h"

typedef struct vmm_phys {
    struct vmm_phys *next;
    xpsim_devmem *dm;
    CUdeviceptr block;        /* its place in the device's memory */
    int fd;                   /* the device's memory file, bytes at block - dm->base */
    uint64_t size;
    CUmemAllocationProp prop;
    unsigned handles;         /* cuMemCreate + cuMemRetainAllocationHandle - cuMemRelease */
    unsigned mappings;
} vmm_phys;

typedef struct vmm_mapping {
    uint64_t off, size;       /* in the reservation */
    vmm_phys *phys;
    uint64_t phys_off;
    unsigned char access[XPSIM_MAX_DEVICES];
} vmm_mapping;

typedef struct vmm_resv {
    uint64_t base, size;
    unsigned char *view;
    vmm_mapping *maps;        /* sorted by off, never overlapping */
    size_t nmaps, cap;
} vmm_resv;

/* Guards everything below.  Lookups (every copy that meets an address
 * outside the device ranges) read; the API calls write. */
static pthread_rwlock_t g_lock = PTHREAD_RWLOCK_INITIALIZER;
static vmm_resv **g_resv;     /* sorted by base */
static size_t g_nresv, g_capresv;
static vmm_phys *g_phys;
/* Reservations in existence, so that a program that never reserves pays
 * nothing for the lookups. */
static atomic_size_t g_active;

static uint64_t page_size(void)
{
    return (uint64_t)sysconf(_SC_PAGESIZE);
}

/* ---- physical allocations (g_lock held) --------------------------------- */

static vmm_phys *phys_find(CUmemGenericAllocationHandle handle)
{
    for (vmm_phys *p = g_phys; p; p = p->next)
        if ((CUmemGenericAllocationHandle)(uintptr_t)p == handle)
            return p;
    return NULL;
}

/* Gives the memory back once nothing refers to it any more. */
static void phys_maybe_free(vmm_phys *p)
{
    if (p->handles > 0 || p->mappings > 0)
        return;
    for (vmm_phys **pp = &g_phys; *pp; pp = &(*pp)->next) {
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    }
    (void)xpsim_devmem_release(p->dm, p->block, XPSIM_BLOCK_BIT(XPSIM_BLOCK_PHYSICAL), NULL);
    free(p);
}

CUresult xpsim_vmm_create(xpsim_devmem *dm, uint64_t size, const CUmemAllocationProp *prop,
                          CUmemGenericAllocationHandle *out)
{
    vmm_phys *p = calloc(1, sizeof *p);
    if (p == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult rc = xpsim_devmem_alloc_physical(dm, size, XPSIM_VMM_GRANULARITY, &p->block, &p->fd);
    if (rc != CUDA_SUCCESS) {
        free(p);
        return rc;
    }
    p->dm = dm;
    p->size = size;
    p->prop = *prop;
    p->handles = 1;
    pthread_rwlock_wrlock(&g_lock);
    p->next = g_phys;
    g_phys = p;
    pthread_rwlock_unlock(&g_lock);
    *out = (CUmemGenericAllocationHandle)(uintptr_t)p;
    return CUDA_SUCCESS;
}

CUresult xpsim_vmm_release(CUmemGenericAllocationHandle handle)
{
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    pthread_rwlock_wrlock(&g_lock);
    vmm_phys *p = phys_find(handle);
    if (p && p->handles > 0) {
        p->handles--;
        phys_maybe_free(p);
        rc = CUDA_SUCCESS;
    }
    pthread_rwlock_unlock(&g_lock);
    return rc;
}

CUresult xpsim_vmm_properties(CUmemGenericAllocationHandle handle, CUmemAllocationProp *out)
{
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    pthread_rwlock_rdlock(&g_lock);
    vmm_phys *p = phys_find(handle);
    if (p && p->handles > 0) {
        *out = p->prop;
        rc = CUDA_SUCCESS;
    }
    pthread_rwlock_unlock(&g_lock);
    return rc;
}

/* ---- reservations (g_lock held) ----------------------------------------- */

/* Index of the reservation containing addr, or g_nresv. */
static size_t resv_find(uint64_t addr)
{
    size_t lo = 0, hi = g_nresv;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const vmm_resv *r = g_resv[mid];
        if (addr < r->base)
            hi = mid;
        else if (addr - r->base >= r->size)
            lo = mid + 1;
        else
            return mid;
    }
    return g_nresv;
}

/* Index of the first mapping of r that ends after off (r->nmaps if none). */
static size_t map_from(const vmm_resv *r, uint64_t off)
{
    size_t lo = 0, hi = r->nmaps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->maps[mid].off + r->maps[mid].size <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int map_device(const vmm_mapping *m)
{
    return m->phys->dm->device;
}

/* The mappings [*first, *last) of r that tile [ptr, ptr + size) exactly.
 * False if the range has a gap or cuts a mapping. */
static bool whole_mappings(const vmm_resv *r, uint64_t ptr, uint64_t size, size_t *first,
                           size_t *last)
{
    if (size == 0 || ptr - r->base > r->size || size > r->size - (ptr - r->base))
        return false;
    uint64_t off = ptr - r->base, end = off + size;
    size_t i = map_from(r, off);
    *first = i;
    while (off < end) {
        if (i == r->nmaps || r->maps[i].off != off || r->maps[i].size > end - off)
            return false;
        off += r->maps[i].size;
        i++;
    }
    *last = i;
    return true;
}

bool xpsim_vmm_lookup(uint64_t addr, xpsim_vmm_hit *out)
{
    if (atomic_load_explicit(&g_active, memory_order_acquire) == 0)
        return false;
    bool found = false;
    pthread_rwlock_rdlock(&g_lock);
    size_t ri = resv_find(addr);
    if (ri < g_nresv) {
        const vmm_resv *r = g_resv[ri];
        found = true;
        uint64_t off = addr - r->base;
        size_t i = map_from(r, off);
        if (i < r->nmaps && r->maps[i].off <= off) {
            const vmm_mapping *m = &r->maps[i];
            int dev = map_device(m);
            uint64_t end = m->off + m->size;
            for (size_t j = i + 1; j < r->nmaps; j++) {
                const vmm_mapping *n = &r->maps[j];
                if (n->off != end || map_device(n) != dev || n->access[dev] != m->access[dev])
                    break;
                end += n->size;
            }
            *out = (xpsim_vmm_hit){.mapped = true, .device = dev, .base = r->base + m->off,
                                   .size = m->size, .limit = r->base + end,
                                   .access = m->access[dev], .view = r->view + m->off};
        } else {
            *out = (xpsim_vmm_hit){.mapped = false, .device = -1, .base = r->base,
                                   .size = r->size, .limit = r->base + r->size};
        }
    }
    pthread_rwlock_unlock(&g_lock);
    return found;
}

CUresult xpsim_vmm_retain_at(uint64_t addr, CUmemGenericAllocationHandle *out)
{
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    pthread_rwlock_wrlock(&g_lock);
    size_t ri = resv_find(addr);
    if (ri < g_nresv) {
        vmm_resv *r = g_resv[ri];
        size_t i = map_from(r, addr - r->base);
        if (i < r->nmaps && r->maps[i].off <= addr - r->base) {
            r->maps[i].phys->handles++;
            *out = (CUmemGenericAllocationHandle)(uintptr_t)r->maps[i].phys;
            rc = CUDA_SUCCESS;
        }
    }
    pthread_rwlock_unlock(&g_lock);
    return rc;
}

/* PROT_NONE address space of size bytes aligned to align, at hint if that is
 * free and aligned; NULL if none can be had. */
static void *reserve_space(uint64_t size, uint64_t align, uint64_t hint)
{
    const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
    if (hint != 0 && hint % align == 0) {
        void *p = mmap((void *)(uintptr_t)hint, size, PROT_NONE, flags | MAP_FIXED_NOREPLACE, -1, 0);
        if (p != MAP_FAILED && (uint64_t)(uintptr_t)p == hint)
            return p;
        /* Kernels before 4.17 treat the flag as a mere hint. */
        if (p != MAP_FAILED)
            munmap(p, size);
    }
    /* Over-reserve to align the start, then give back the slack. */
    if (size > UINT64_MAX - align)
        return NULL;
    unsigned char *raw = mmap(NULL, size + align, PROT_NONE, flags, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    uint64_t start = ((uint64_t)(uintptr_t)raw + align - 1) & ~(align - 1);
    uint64_t head = start - (uint64_t)(uintptr_t)raw;
    if (head > 0)
        munmap(raw, head);
    if (align - head > 0)
        munmap((void *)(uintptr_t)(start + size), align - head);
    return (void *)(uintptr_t)start;
}

CUresult xpsim_vmm_reserve(uint64_t size, uint64_t align, uint64_t hint, CUdeviceptr *out)
{
    uint64_t page = page_size();
    if (size == 0 || size % page != 0 || hint % page != 0 || (align & (align - 1)) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (align < XPSIM_VMM_GRANULARITY)
        align = XPSIM_VMM_GRANULARITY;
    vmm_resv *r = calloc(1, sizeof *r);
    if (r == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    void *va = reserve_space(size, align, hint);
    void *view = va ? mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                           -1, 0)
                    : MAP_FAILED;
    if (view == MAP_FAILED) {
        if (va)
            munmap(va, size);
        free(r);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    r->base = (uint64_t)(uintptr_t)va;
    r->size = size;
    r->view = view;

    CUresult rc = CUDA_SUCCESS;
    pthread_rwlock_wrlock(&g_lock);
    if (g_nresv == g_capresv) {
        size_t ncap = g_capresv ? 2 * g_capresv : 16;
        vmm_resv **n = realloc(g_resv, ncap * sizeof *n);
        if (n == NULL) {
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            g_resv = n;
            g_capresv = ncap;
        }
    }
    if (rc == CUDA_SUCCESS) {
        size_t i = 0;
        while (i < g_nresv && g_resv[i]->base < r->base)
            i++;
        memmove(&g_resv[i + 1], &g_resv[i], (g_nresv - i) * sizeof *g_resv);
        g_resv[i] = r;
        g_nresv++;
        atomic_fetch_add_explicit(&g_active, 1, memory_order_release);
    }
    pthread_rwlock_unlock(&g_lock);
    if (rc != CUDA_SUCCESS) {
        munmap(va, size);
        munmap(view, size);
        free(r);
        return rc;
    }
    *out = (CUdeviceptr)r->base;
    return CUDA_SUCCESS;
}

CUresult xpsim_vmm_free(CUdeviceptr ptr, uint64_t size)
{
    vmm_resv *r = NULL;
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    pthread_rwlock_wrlock(&g_lock);
    size_t i = resv_find(ptr);
    /* Mapped memory must be unmapped first: what would become of it is
     * undocumented, and a program that does this has lost track of it. */
    if (i < g_nresv && g_resv[i]->base == ptr && g_resv[i]->size == size && g_resv[i]->nmaps == 0) {
        r = g_resv[i];
        memmove(&g_resv[i], &g_resv[i + 1], (g_nresv - i - 1) * sizeof *g_resv);
        g_nresv--;
        atomic_fetch_sub_explicit(&g_active, 1, memory_order_release);
        rc = CUDA_SUCCESS;
    }
    pthread_rwlock_unlock(&g_lock);
    if (r) {
        munmap((void *)(uintptr_t)r->base, r->size);
        munmap(r->view, r->size);
        free(r->maps);
        free(r);
    }
    return rc;
}

CUresult xpsim_vmm_map(CUdeviceptr ptr, uint64_t size, uint64_t offset,
                       CUmemGenericAllocationHandle handle)
{
    if (size == 0 || size % XPSIM_VMM_GRANULARITY != 0 || offset % XPSIM_VMM_GRANULARITY != 0 ||
        ptr % XPSIM_VMM_GRANULARITY != 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    pthread_rwlock_wrlock(&g_lock);
    vmm_phys *p = phys_find(handle);
    size_t ri = resv_find(ptr);
    if (p == NULL || p->handles == 0 || ri == g_nresv || offset > p->size ||
        size > p->size - offset)
        goto out;
    vmm_resv *r = g_resv[ri];
    uint64_t off = ptr - r->base;
    if (size > r->size - off)
        goto out;
    /* Only unmapped addresses can be mapped. */
    size_t i = map_from(r, off);
    if (i < r->nmaps && r->maps[i].off < off + size)
        goto out;
    if (r->nmaps == r->cap) {
        size_t ncap = r->cap ? 2 * r->cap : 8;
        vmm_mapping *n = realloc(r->maps, ncap * sizeof *n);
        if (n == NULL) {
            rc = CUDA_ERROR_OUT_OF_MEMORY;
            goto out;
        }
        r->maps = n;
        r->cap = ncap;
    }
    off_t file_off = (off_t)(p->block - p->dm->base + offset);
    if (mmap(r->view + off, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, p->fd,
             file_off) == MAP_FAILED) {
        rc = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    memmove(&r->maps[i + 1], &r->maps[i], (r->nmaps - i) * sizeof *r->maps);
    r->maps[i] = (vmm_mapping){.off = off, .size = size, .phys = p, .phys_off = offset};
    r->nmaps++;
    p->mappings++;
    rc = CUDA_SUCCESS;
out:
    pthread_rwlock_unlock(&g_lock);
    return rc;
}

CUresult xpsim_vmm_unmap(CUdeviceptr ptr, uint64_t size)
{
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    pthread_rwlock_wrlock(&g_lock);
    size_t ri = resv_find(ptr), first, last;
    if (ri < g_nresv && whole_mappings(g_resv[ri], ptr, size, &first, &last)) {
        vmm_resv *r = g_resv[ri];
        /* The view goes back to inaccessible address space. */
        (void)mmap(r->view + (ptr - r->base), size, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        for (size_t i = first; i < last; i++) {
            r->maps[i].phys->mappings--;
            phys_maybe_free(r->maps[i].phys);
        }
        memmove(&r->maps[first], &r->maps[last], (r->nmaps - last) * sizeof *r->maps);
        r->nmaps -= last - first;
        rc = CUDA_SUCCESS;
    }
    pthread_rwlock_unlock(&g_lock);
    return rc;
}

CUresult xpsim_vmm_set_access(CUdeviceptr ptr, uint64_t size, const int *devices,
                              const unsigned int *flags, size_t count)
{
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    pthread_rwlock_wrlock(&g_lock);
    size_t ri = resv_find(ptr), first, last;
    if (ri < g_nresv && whole_mappings(g_resv[ri], ptr, size, &first, &last)) {
        vmm_resv *r = g_resv[ri];
        for (size_t i = first; i < last; i++)
            for (size_t k = 0; k < count; k++)
                r->maps[i].access[devices[k]] = (unsigned char)flags[k];
        rc = CUDA_SUCCESS;
    }
    pthread_rwlock_unlock(&g_lock);
    return rc;
}

CUresult xpsim_vmm_get_access(CUdeviceptr ptr, int device, unsigned int *out)
{
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    pthread_rwlock_rdlock(&g_lock);
    size_t ri = resv_find(ptr);
    if (ri < g_nresv) {
        const vmm_resv *r = g_resv[ri];
        size_t i = map_from(r, ptr - r->base);
        if (i < r->nmaps && r->maps[i].off <= ptr - r->base) {
            *out = r->maps[i].access[device];
            rc = CUDA_SUCCESS;
        }
    }
    pthread_rwlock_unlock(&g_lock);
    return rc;
}
