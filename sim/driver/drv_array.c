/* drv_array.c: CUDA arrays (cuArrayCreate, cuArray3DCreate, cuArrayDestroy,
 * their descriptors): device memory the program has no address for, laid out
 * tight, which only the array copies (drv_copy.c) reach. */
#include "xpsim_driver.h"
#include "xpsim_stream.h"

#include <pthread.h>
#include <stdlib.h>

/* A CUarray points at one of these.  Handles are checked against the list
 * of live arrays, so a stale or made-up one is an error, not a crash. */
struct CUarray_st {
    CUDA_ARRAY3D_DESCRIPTOR desc;
    xpdrv_array_geom geom;
    const void *owner;        /* the context that created it (xpsim_block.owner) */
    struct CUarray_st *next;
};

/* Live arrays of every device; guards the list and the nodes' fields. */
static pthread_mutex_t arrays_lock = PTHREAD_MUTEX_INITIALIZER;
static struct CUarray_st *arrays;

/* Bytes of one channel of the formats the simulator knows: the eight plain
 * ones (integer, half, float); 0 for the others (packed, compressed). */
static size_t channel_bytes(CUarray_format f)
{
    switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF: return 2;
    case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT: return 4;
    default: return 0;
    }
}

#define ARRAY_FLAGS                                                            \
    (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST | CUDA_ARRAY3D_CUBEMAP | \
     CUDA_ARRAY3D_TEXTURE_GATHER)

/* The documented shapes: width at least 1; height 0 makes a 1D array,
 * which has no depth unless layered; a cubemap is square with 6 faces (per
 * layer). */
static CUresult geometry_of(const CUDA_ARRAY3D_DESCRIPTOR *d, xpdrv_array_geom *g)
{
    if (d->Width == 0 || (d->Height == 0 && d->Depth != 0 && !(d->Flags & CUDA_ARRAY3D_LAYERED)) ||
        (d->NumChannels != 1 && d->NumChannels != 2 && d->NumChannels != 4) ||
        (d->Flags & ~(unsigned)ARRAY_FLAGS))
        return CUDA_ERROR_INVALID_VALUE;
    if ((d->Flags & CUDA_ARRAY3D_CUBEMAP) &&
        (d->Width != d->Height || d->Depth == 0 || d->Depth % 6 != 0 ||
         (!(d->Flags & CUDA_ARRAY3D_LAYERED) && d->Depth != 6)))
        return CUDA_ERROR_INVALID_VALUE;
    size_t ch = channel_bytes(d->Format);
    if (ch == 0)
        return CUDA_ERROR_NOT_SUPPORTED;
    g->elem = ch * d->NumChannels;
    g->rows = d->Height ? d->Height : 1;
    g->slices = d->Depth ? d->Depth : 1;
    if (__builtin_mul_overflow(d->Width, g->elem, &g->row) ||
        __builtin_mul_overflow(g->row, g->rows, &g->slice) ||
        __builtin_mul_overflow(g->slice, g->slices, &g->bytes))
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

static CUresult create(CUarray *out, const CUDA_ARRAY3D_DESCRIPTOR *d, const char *api)
{
    if (out == NULL || d == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    struct CUarray_st *a = calloc(1, sizeof *a);
    if (a == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    a->desc = *d;
    a->geom.device = dev;
    a->owner = xpdrv_current();
    if ((rc = geometry_of(d, &a->geom)) != CUDA_SUCCESS ||
        (rc = xpsim_devmem_alloc(&xpdrv_device(dev)->mem, a->geom.bytes, XPSIM_BLOCK_ARRAY,
                                 a->owner, &a->geom.mem)) != CUDA_SUCCESS) {
        free(a);
        return rc;
    }
    pthread_mutex_lock(&arrays_lock);
    a->next = arrays;
    arrays = a;
    pthread_mutex_unlock(&arrays_lock);
    *out = a;
    xpsim_debug("%s(%zu x %zu x %zu, %zu bytes) on device %d -> %p", api, d->Width, d->Height,
                d->Depth, a->geom.bytes, dev, (void *)a);
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *p)
{
    return create(pHandle, p, "cuArray3DCreate_v2");
}

XPSIM_API CUresult cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *p)
{
    if (p == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_ARRAY3D_DESCRIPTOR d = {.Width = p->Width, .Height = p->Height, .Depth = 0,
                                 .Format = p->Format, .NumChannels = p->NumChannels};
    return create(pHandle, &d, "cuArrayCreate_v2");
}

/* The live array behind a handle, NULL if none (arrays_lock held). */
static struct CUarray_st *find_locked(CUarray h)
{
    for (struct CUarray_st *a = arrays; a != NULL; a = a->next)
        if (a == h)
            return a;
    return NULL;
}

bool xpdrv_array_get(CUarray h, xpdrv_array_geom *out)
{
    pthread_mutex_lock(&arrays_lock);
    struct CUarray_st *a = find_locked(h);
    if (a != NULL)
        *out = a->geom;
    pthread_mutex_unlock(&arrays_lock);
    return a != NULL;
}

XPSIM_API CUresult cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR *out, CUarray h)
{
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&arrays_lock);
    struct CUarray_st *a = find_locked(h);
    if (a != NULL)
        *out = a->desc;
    pthread_mutex_unlock(&arrays_lock);
    return a != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* "If the array was created with cuArray3DCreate with a nonzero depth, the
 * function returns CUDA_ERROR_INVALID_VALUE" (cuda.h, cuArrayGetDescriptor). */
XPSIM_API CUresult cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR *out, CUarray h)
{
    CUDA_ARRAY3D_DESCRIPTOR d;
    if (out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = cuArray3DGetDescriptor_v2(&d, h);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (d.Depth != 0)
        return CUDA_ERROR_INVALID_VALUE;
    *out = (CUDA_ARRAY_DESCRIPTOR){.Width = d.Width, .Height = d.Height, .Format = d.Format,
                                   .NumChannels = d.NumChannels};
    return CUDA_SUCCESS;
}

/* Unlinks the array first, so a second destroy of the handle fails; queued
 * work that copies to or from it finishes before its memory goes back, as
 * with cuMemFree. */
XPSIM_API CUresult cuArrayDestroy(CUarray h)
{
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&arrays_lock);
    struct CUarray_st **p = &arrays;
    while (*p != NULL && *p != h)
        p = &(*p)->next;
    struct CUarray_st *a = *p;
    if (a != NULL)
        *p = a->next;
    pthread_mutex_unlock(&arrays_lock);
    if (a == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    xpsim_device_synchronize(a->geom.device);
    rc = xpsim_devmem_release(&xpdrv_device(a->geom.device)->mem, a->geom.mem,
                              XPSIM_BLOCK_BIT(XPSIM_BLOCK_ARRAY), NULL);
    xpsim_debug("cuArrayDestroy(%p) -> %d", (void *)h, (int)rc);
    free(a);
    return rc;
}

void xpdrv_arrays_drop(CUcontext owner)
{
    pthread_mutex_lock(&arrays_lock);
    for (struct CUarray_st **p = &arrays; *p != NULL;) {
        struct CUarray_st *a = *p;
        if (a->owner == owner) {
            *p = a->next;
            free(a);
        } else {
            p = &a->next;
        }
    }
    pthread_mutex_unlock(&arrays_lock);
}
