/* xp_classify.c: what the preload knows about an address or a handle: the
 * registry first, with each thread's memory of its last answers, and the
 * driver (never the runtime) for what the registry does not know. */
#include "xp_classify.h"

#include <dlfcn.h>
#include <stdatomic.h>

#include <cuda.h>
#include "xp_registry.h"
#include "xp_thread.h"

typedef CUresult (*cu_pointer_get_attribute_fn)(void *, CUpointer_attribute, CUdeviceptr);
typedef CUresult (*cu_mem_get_info_fn)(size_t *, size_t *);
typedef CUresult (*cu_mem_get_address_range_fn)(CUdeviceptr *, size_t *, CUdeviceptr);

/* The driver's own entry points, looked up in the libcuda the runtime has
 * loaded (never loading one ourselves). */
void *xp_driver_symbol(const char *name)
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (h == NULL)
        return NULL;
    void *fn = dlsym(h, name);
    dlclose(h);
    return fn;
}

static _Atomic(cu_pointer_get_attribute_fn) cu_attr;

static void ask_driver(uint64_t addr, xp_where *out)
{
    cu_pointer_get_attribute_fn fn = atomic_load_explicit(&cu_attr, memory_order_relaxed);
    if (fn == NULL) {
        fn = (cu_pointer_get_attribute_fn)xp_driver_symbol("cuPointerGetAttribute");
        if (fn == NULL)
            return;
        atomic_store_explicit(&cu_attr, fn, memory_order_relaxed);
    }
    unsigned int type = 0, managed = 0;
    int ordinal = -1;
    xp_guard g = xp_guard_enter((uintptr_t)fn);
    CUresult rc = fn(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)addr);
    if (rc == CUDA_SUCCESS) {
        fn(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, (CUdeviceptr)addr);
        fn(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)addr);
    }
    xp_guard_leave(g);
    if (rc != CUDA_SUCCESS)
        return;
    if (managed)
        out->kind = XP_ALLOC_MANAGED;
    else if (type == CU_MEMORYTYPE_DEVICE)
        out->kind = XP_ALLOC_DEVICE;
    else if (type == CU_MEMORYTYPE_HOST)
        out->kind = XP_ALLOC_PINNED;
    out->device = out->kind == XP_ALLOC_PINNED ? -1 : ordinal;
}

/* The thread's memory of the registry's last answers (xp_thread.h), good
 * while the registry's generation is gen. */
static inline const xp_range_memo *memo_find(const xp_thread *t, uint64_t gen, uint64_t addr)
{
    for (unsigned k = 0; k < XP_RANGE_MEMO; k++) {
        const xp_range_memo *m = &t->ranges[k];
        if (m->valid && m->generation == gen && addr - m->base < m->size)
            return m;
    }
    return NULL;
}

static inline bool memo_hit(const xp_thread *t, uint64_t gen, uint64_t addr, xp_where *out)
{
    const xp_range_memo *m = memo_find(t, gen, addr);
    if (m != NULL)
        *out = m->where;
    return m != NULL;
}

/* Addresses that share an answer: a range of the registry, or a page the
 * thread remembers the driver's answer for.  size 0: none. */
typedef struct xp_span {
    uint64_t base, size;
} xp_span;

/* xp_classify past the memo: the registry, else the driver.  t may be NULL
 * (no block: no memories).  Returns the addresses the answer holds for. */
static xp_span classify_slow(xp_thread *t, uint64_t gen, uint64_t addr, xp_where *out)
{
    out->kind = 0;
    out->device = -1;
    xp_range r;
    if (xp_registry_lookup(addr, &r)) {
        /* A mapping, and another process's memory opened here, are device
         * memory at an address: what a copy sees. */
        out->kind = r.kind == XP_ALLOC_MAPPED || r.kind == XP_ALLOC_IPC ? XP_ALLOC_DEVICE
                                                                          : r.kind;
        out->device = r.kind == XP_ALLOC_PINNED || r.kind == XP_ALLOC_REGISTERED ? -1 : r.device;
        if (t) {
            t->ranges[t->next_range] = (xp_range_memo){r.base, r.size, gen, *out, true};
            t->next_range = (t->next_range + 1) % XP_RANGE_MEMO;
        }
        return (xp_span){r.base, r.size};
    }
    /* The thread's memory of what the driver said about a page (xp_thread.h);
     * without one, the driver is asked every time. */
    uint64_t page = addr >> 12;
    xp_where_memo *m = t ? &t->where[page % XP_WHERE_MEMO] : NULL;
    if (m && m->valid && m->page == page && m->generation == gen) {
        *out = m->where;
        return (xp_span){page << 12, 4096};
    }
    ask_driver(addr, out);
    if (m == NULL)
        return (xp_span){0, 0};
    m->page = page;
    m->generation = gen;
    m->where = *out;
    m->valid = true;
    return (xp_span){page << 12, 4096};
}

void xp_classify(uint64_t addr, xp_where *out)
{
    /* Read before the lookup: a change made during it makes the memo stale. */
    uint64_t gen = xp_registry_generation();
    xp_thread *t = xp_thread_get();
    if (t == NULL || !memo_hit(t, gen, addr, out))
        classify_slow(t, gen, addr, out);
}

/* One side of a copy, and the addresses its answer holds for. */
static xp_span side(xp_thread *t, uint64_t gen, uint64_t addr, xp_where *out)
{
    const xp_range_memo *m = t ? memo_find(t, gen, addr) : NULL;
    if (m == NULL)
        return classify_slow(t, gen, addr, out);
    *out = m->where;
    return (xp_span){m->base, m->size};
}

void xp_classify_copy_slow(xp_thread *t, uint64_t gen, uint64_t src, uint64_t dst, xp_where *ws,
                           xp_where *wd)
{
    if (t == NULL)
        t = xp_thread_get();
    xp_span s = side(t, gen, src, ws), d = side(t, gen, dst, wd);
    /* The next copy between the same two allocations (or pages) is
     * answered inline. */
    if (t != NULL && s.size != 0 && d.size != 0)
        t->pair = (xp_pair_memo){.generation = gen, .src_base = s.base, .src_size = s.size,
                                 .dst_base = d.base, .dst_size = d.size, .ws = *ws, .wd = *wd};
}

uint64_t xp_driver_range_bytes(uint64_t ptr)
{
    cu_mem_get_address_range_fn fn =
        (cu_mem_get_address_range_fn)xp_driver_symbol("cuMemGetAddressRange_v2");
    if (fn == NULL)
        return 0;
    CUdeviceptr base = 0;
    size_t size = 0;
    xp_guard g = xp_guard_enter((uintptr_t)fn);
    CUresult rc = fn(&base, &size, (CUdeviceptr)ptr);
    xp_guard_leave(g);
    return rc == CUDA_SUCCESS ? size : 0;
}

int xp_driver_mem_info(uint64_t *free_bytes, uint64_t *total_bytes)
{
    cu_mem_get_info_fn fn = (cu_mem_get_info_fn)xp_driver_symbol("cuMemGetInfo_v2");
    if (fn == NULL)
        return -1;
    size_t f = 0, t = 0;
    xp_guard g = xp_guard_enter((uintptr_t)fn);
    CUresult rc = fn(&f, &t);
    xp_guard_leave(g);
    if (rc != CUDA_SUCCESS)
        return -1;
    *free_bytes = f;
    *total_bytes = t;
    return 0;
}

void xp_classify_array(uint64_t handle, xp_where *out)
{
    xp_range r;
    bool known = xp_table_lookup(XP_TABLE_HANDLES, handle, &r) && r.kind == XP_ALLOC_ARRAY;
    out->kind = XP_ALLOC_DEVICE;
    out->device = known ? r.device : -1;
}

int xp_physical_device(uint64_t handle)
{
    xp_range r;
    if (xp_table_lookup(XP_TABLE_HANDLES, handle, &r) && r.kind == XP_ALLOC_PHYSICAL)
        return r.device;
    return XP_DEVICE_OF_KIND;
}
