/* xp_context.c: contexts of their own: the thread's device follows its current context, and what cuCtxDestroy freed is recorded as freed. */
#include "xp_engine.h"

#include <cuda.h>

#include "xp_registry.h"

typedef CUresult (*cu_ctx_get_device_fn)(CUdevice *);
typedef CUresult (*cu_pointer_get_attribute_fn)(void *, CUpointer_attribute, CUdeviceptr);
typedef CUresult (*cu_array_get_descriptor_fn)(CUDA_ARRAY3D_DESCRIPTOR *, CUarray);

/* The device of the calling thread's current context, as the driver says
 * (no runtime state touched); -1 with none. */
static int context_device(void)
{
    cu_ctx_get_device_fn fn = (cu_ctx_get_device_fn)xp_driver_symbol("cuCtxGetDevice");
    if (fn == NULL)
        return -1;
    CUdevice dev = -1;
    xp_guard g = xp_guard_enter((uintptr_t)fn);
    CUresult rc = fn(&dev);
    xp_guard_leave(g);
    return rc == CUDA_SUCCESS ? dev : -1;
}

void xp_record_context(const xp_scope *s, xp_api api, int status)
{
    if (!s->recording)
        return;
    xp_record_call(s, api, 0, status);
    /* A driver-made context is what the runtime uses too (cudaSetDevice
     * replaces it), so the thread's allocations, copies and syncs now
     * happen on its device.  No context left current: the device stays. */
    int dev = status == 0 ? context_device() : -1;
    if (dev >= 0)
        xp_current_device = dev;
}

/* Whether the driver still knows the allocation r (its context may have
 * been destroyed with it).  Only a definite "no such memory / handle" says
 * gone: an error for another reason (no context current to ask in) keeps
 * the allocation live rather than inventing a free. */
static bool driver_knows(const xp_range *r, cu_pointer_get_attribute_fn attr,
                         cu_array_get_descriptor_fn array)
{
    CUresult rc;
    xp_guard g;
    if (r->kind == XP_ALLOC_ARRAY) {
        CUDA_ARRAY3D_DESCRIPTOR d;
        g = xp_guard_enter((uintptr_t)array);
        rc = array(&d, (CUarray)(uintptr_t)r->base);
        xp_guard_leave(g);
        return rc != CUDA_ERROR_INVALID_HANDLE;
    }
    unsigned int type = 0;
    g = xp_guard_enter((uintptr_t)attr);
    rc = attr(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)r->base);
    xp_guard_leave(g);
    return rc != CUDA_ERROR_INVALID_VALUE;
}

/* What a context owns, by table: memory it allocated or registered, and
 * its arrays (reservations, physical and pool memory belong to no context,
 * and a mapping goes with its reservation). */
#define CONTEXT_MEMORY                                                          \
    ((1u << XP_ALLOC_DEVICE) | (1u << XP_ALLOC_PINNED) | (1u << XP_ALLOC_REGISTERED) | \
     (1u << XP_ALLOC_MANAGED))
#define CONTEXT_HANDLES (1u << XP_ALLOC_ARRAY)

/* Records a free, by this call, of every allocation of `kinds` in table t
 * the driver no longer knows.  The table is walked in address order
 * without holding it (the driver is asked between steps); each free
 * removes its range, so the walk goes on from the next address. */
static void free_forgotten(const xp_scope *s, xp_api api, xp_table t, unsigned kinds,
                           cu_pointer_get_attribute_fn attr, cu_array_get_descriptor_fn array)
{
    xp_range r;
    for (uint64_t at = 0; xp_table_next(t, at, &r); at = r.base + 1) {
        if ((kinds & (1u << r.kind)) && !driver_knows(&r, attr, array))
            xp_record_free(s, api, 1u << r.kind, r.base, 0);
        if (r.base == UINT64_MAX)
            break;
    }
}

void xp_record_context_destroy(const xp_scope *s, xp_api api, int status)
{
    if (!s->recording)
        return;
    if (status == 0) {
        cu_pointer_get_attribute_fn attr =
            (cu_pointer_get_attribute_fn)xp_driver_symbol("cuPointerGetAttribute");
        cu_array_get_descriptor_fn array =
            (cu_array_get_descriptor_fn)xp_driver_symbol("cuArray3DGetDescriptor_v2");
        if (attr != NULL)
            free_forgotten(s, api, XP_TABLE_MEMORY, CONTEXT_MEMORY, attr, array);
        if (array != NULL)
            free_forgotten(s, api, XP_TABLE_HANDLES, CONTEXT_HANDLES, attr, array);
    }
    xp_record_context(s, api, status);
}
