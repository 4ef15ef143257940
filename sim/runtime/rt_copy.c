/* rt_copy.c: cudaMemcpy (1D, 2D, peer, symbol) and cudaMemset entry points. */
/* The runtime checks the arguments; the driver moves and times the bytes. */
#include "rt_internal.h"
#include "rt_abi.h"

#include <stdlib.h>

static inline CUdeviceptr dptr_of(const void *p)
{
    return (CUdeviceptr)(uintptr_t)p;
}

static inline CUstream stream_of(cudaStream_t s)
{
    /* cudaStream_t and CUstream are the same struct pointer, and the special
     * handles (cudaStreamLegacy, cudaStreamPerThread) have the same values. */
    return (CUstream)s;
}

static bool valid_kind(enum cudaMemcpyKind kind)
{
    return (unsigned)kind <= (unsigned)cudaMemcpyDefault;
}

/* Memory the host can address directly (what a "Host" side accepts). */
static bool host_side(xprt_mem t)
{
    return t == XPRT_MEM_UNREGISTERED || t == XPRT_MEM_HOST || t == XPRT_MEM_MANAGED;
}

/* Memory a kernel can address (what a "Device" side accepts). */
static bool device_side(xprt_mem t)
{
    return t == XPRT_MEM_DEVICE || t == XPRT_MEM_MANAGED;
}

cudaError_t xprt_check_side(const xprt_drv *d, const void *ptr, bool want_device)
{
    xprt_ptr_info info;
    cudaError_t e = xprt_classify(d, ptr, &info);
    if (e != cudaSuccess)
        return e;
    bool ok = want_device ? device_side(info.type) : host_side(info.type);
    return ok ? cudaSuccess : cudaErrorInvalidValue;
}

/* The pointers must be where kind says they are; cudaMemcpyDefault lets the
 * driver work it out from the addresses (unified addressing). */
static cudaError_t check_pointers(const xprt_drv *d, const void *dst, const void *src,
                                  enum cudaMemcpyKind kind)
{
    bool dst_dev, src_dev;
    switch (kind) {
    case cudaMemcpyHostToDevice: dst_dev = true; src_dev = false; break;
    case cudaMemcpyDeviceToHost: dst_dev = false; src_dev = true; break;
    case cudaMemcpyDeviceToDevice: dst_dev = true; src_dev = true; break;
    case cudaMemcpyHostToHost: dst_dev = false; src_dev = false; break;
    default: return cudaSuccess;
    }
    cudaError_t e = xprt_check_side(d, dst, dst_dev);
    if (e == cudaSuccess)
        e = xprt_check_side(d, src, src_dev);
    return e;
}

cudaError_t xprt_copy(const xprt_drv *d, void *dst, const void *src, size_t count,
                      enum cudaMemcpyKind kind, bool async, cudaStream_t stream)
{
    if (!valid_kind(kind))
        return cudaErrorInvalidMemcpyDirection;
    if (count == 0)
        return cudaSuccess;
    cudaError_t e = check_pointers(d, dst, src, kind);
    if (e != cudaSuccess)
        return e;
    CUstream s = stream_of(stream);
    CUresult r;
    switch (kind) {
    case cudaMemcpyHostToDevice:
        r = async ? XPRT_CALL(d, cuMemcpyHtoDAsync, dptr_of(dst), src, count, s)
                  : XPRT_CALL(d, cuMemcpyHtoD, dptr_of(dst), src, count);
        break;
    case cudaMemcpyDeviceToHost:
        r = async ? XPRT_CALL(d, cuMemcpyDtoHAsync, dst, dptr_of(src), count, s)
                  : XPRT_CALL(d, cuMemcpyDtoH, dst, dptr_of(src), count);
        break;
    case cudaMemcpyDeviceToDevice:
        r = async ? XPRT_CALL(d, cuMemcpyDtoDAsync, dptr_of(dst), dptr_of(src), count, s)
                  : XPRT_CALL(d, cuMemcpyDtoD, dptr_of(dst), dptr_of(src), count);
        break;
    default: /* HostToHost and Default: unified addressing, by address */
        r = async ? XPRT_CALL(d, cuMemcpyAsync, dptr_of(dst), dptr_of(src), count, s)
                  : XPRT_CALL(d, cuMemcpy, dptr_of(dst), dptr_of(src), count);
        break;
    }
    return xprt_map_error(r);
}

/* ---- cudaMemcpy / cudaMemcpyAsync ---------------------------------------- */

static cudaError_t memcpy_1d(xprt_api api, void *dst, const void *src, size_t count,
                             enum cudaMemcpyKind kind, bool async, cudaStream_t stream)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e == cudaSuccess)
        e = xprt_copy(d, dst, src, count, kind, async, stream);
    return xprt_result(e);
}

XPRT_EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count,
                                   enum cudaMemcpyKind kind)
{
    return memcpy_1d(XPRT_LEGACY, dst, src, count, kind, false, NULL);
}

XPRT_EXPORT cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count,
                                        enum cudaMemcpyKind kind)
{
    return memcpy_1d(XPRT_PTDS, dst, src, count, kind, false, NULL);
}

XPRT_EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
                                        enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return memcpy_1d(XPRT_LEGACY, dst, src, count, kind, true, stream);
}

XPRT_EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
                                             enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return memcpy_1d(XPRT_PTDS, dst, src, count, kind, true, stream);
}

/* ---- cudaMemcpy2D / cudaMemcpy2DAsync ------------------------------------ */

/* The driver's view of one side of a 2D or 3D copy. */
typedef struct side_cu {
    CUmemorytype type;
    const void *host;
    CUdeviceptr dev;
} side_cu;

static side_cu side_of(CUmemorytype type, const void *ptr)
{
    if (type == CU_MEMORYTYPE_HOST)
        return (side_cu){.type = type, .host = ptr, .dev = 0};
    return (side_cu){.type = type, .host = NULL, .dev = dptr_of(ptr)};
}

/* The memory types a (valid) kind stands for; Default lets the driver tell
 * by address. */
static void kind_types(enum cudaMemcpyKind kind, const void *src, const void *dst, side_cu *s,
                       side_cu *d)
{
    CUmemorytype src_type, dst_type;
    switch (kind) {
    case cudaMemcpyHostToDevice:
        src_type = CU_MEMORYTYPE_HOST;
        dst_type = CU_MEMORYTYPE_DEVICE;
        break;
    case cudaMemcpyDeviceToHost:
        src_type = CU_MEMORYTYPE_DEVICE;
        dst_type = CU_MEMORYTYPE_HOST;
        break;
    case cudaMemcpyDeviceToDevice:
        src_type = dst_type = CU_MEMORYTYPE_DEVICE;
        break;
    case cudaMemcpyHostToHost:
        src_type = dst_type = CU_MEMORYTYPE_HOST;
        break;
    default:
        src_type = dst_type = CU_MEMORYTYPE_UNIFIED;
        break;
    }
    *s = side_of(src_type, src);
    *d = side_of(dst_type, dst);
}

static cudaError_t memcpy_2d(xprt_api api, void *dst, size_t dpitch, const void *src,
                             size_t spitch, size_t width, size_t height,
                             enum cudaMemcpyKind kind, bool async, cudaStream_t stream)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    if (!valid_kind(kind))
        return xprt_result(cudaErrorInvalidMemcpyDirection);
    if (width == 0 || height == 0)
        return cudaSuccess;
    if (width > dpitch || width > spitch)
        return xprt_result(cudaErrorInvalidPitchValue);
    e = check_pointers(d, dst, src, kind);
    if (e != cudaSuccess)
        return xprt_result(e);
    side_cu ss, ds;
    kind_types(kind, src, dst, &ss, &ds);
    CUDA_MEMCPY2D p = {.srcMemoryType = ss.type, .srcHost = ss.host, .srcDevice = ss.dev,
                       .srcPitch = spitch,
                       .dstMemoryType = ds.type, .dstHost = (void *)(uintptr_t)ds.host,
                       .dstDevice = ds.dev, .dstPitch = dpitch,
                       .WidthInBytes = width, .Height = height};
    CUresult r = async ? XPRT_CALL(d, cuMemcpy2DAsync, &p, stream_of(stream))
                       : XPRT_CALL(d, cuMemcpy2D, &p);
    return xprt_result_cu(r);
}

XPRT_EXPORT cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch,
                                     size_t width, size_t height, enum cudaMemcpyKind kind)
{
    return memcpy_2d(XPRT_LEGACY, dst, dpitch, src, spitch, width, height, kind, false, NULL);
}

XPRT_EXPORT cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src,
                                          size_t spitch, size_t width, size_t height,
                                          enum cudaMemcpyKind kind)
{
    return memcpy_2d(XPRT_PTDS, dst, dpitch, src, spitch, width, height, kind, false, NULL);
}

XPRT_EXPORT cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src,
                                          size_t spitch, size_t width, size_t height,
                                          enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return memcpy_2d(XPRT_LEGACY, dst, dpitch, src, spitch, width, height, kind, true, stream);
}

XPRT_EXPORT cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src,
                                               size_t spitch, size_t width, size_t height,
                                               enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return memcpy_2d(XPRT_PTDS, dst, dpitch, src, spitch, width, height, kind, true, stream);
}

/* ---- cudaMemcpyPeer / cudaMemcpyPeerAsync -------------------------------- */

static cudaError_t memcpy_peer(void *dst, int dstDevice, const void *src, int srcDevice,
                               size_t count, bool async, cudaStream_t stream)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    int n = xprt_device_count();
    if (dstDevice < 0 || dstDevice >= n || srcDevice < 0 || srcDevice >= n)
        return xprt_result(cudaErrorInvalidDevice);
    if (count == 0)
        return cudaSuccess;
    CUcontext dst_ctx, src_ctx;
    e = xprt_primary_ctx(dstDevice, &dst_ctx);
    if (e == cudaSuccess)
        e = xprt_primary_ctx(srcDevice, &src_ctx);
    if (e != cudaSuccess)
        return xprt_result(e);
    CUresult r = async ? XPRT_CALL(d, cuMemcpyPeerAsync, dptr_of(dst), dst_ctx, dptr_of(src),
                                   src_ctx, count, stream_of(stream))
                       : XPRT_CALL(d, cuMemcpyPeer, dptr_of(dst), dst_ctx, dptr_of(src), src_ctx,
                                   count);
    return xprt_result_cu(r);
}

XPRT_EXPORT cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice,
                                       size_t count)
{
    return memcpy_peer(dst, dstDevice, src, srcDevice, count, false, NULL);
}

XPRT_EXPORT cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src,
                                            int srcDevice, size_t count, cudaStream_t stream)
{
    return memcpy_peer(dst, dstDevice, src, srcDevice, count, true, stream);
}

/* ---- cudaMemcpy3D / cudaMemcpy3DAsync / cudaMemcpy3DPeer(Async) ---------- */

/* A cudaPitchedPtr side at a cudaPos: positions and (without arrays) the
 * extent's width are in bytes, ysize is the
 * height of a slice.  Rows must fit in the pitch wherever there are several,
 * as with cudaMemcpy2D. */
static cudaError_t pitched_ok(struct cudaPitchedPtr p, struct cudaPos pos, struct cudaExtent ext)
{
    if ((ext.height > 1 || ext.depth > 1) && (pos.x > p.pitch || ext.width > p.pitch - pos.x))
        return cudaErrorInvalidPitchValue;
    return cudaSuccess;
}

#define PITCHED_3D(c, side, pp, pos, s)                                        \
    do {                                                                       \
        (c).side##XInBytes = (pos).x;                                          \
        (c).side##Y = (pos).y;                                                 \
        (c).side##Z = (pos).z;                                                 \
        (c).side##MemoryType = (s).type;                                       \
        (c).side##Host = (void *)(uintptr_t)(s).host;                          \
        (c).side##Device = (s).dev;                                            \
        (c).side##Pitch = (pp).pitch;                                          \
        (c).side##Height = (pp).ysize;                                         \
    } while (0)

/* An array side: the array at its position, x in elements of elem bytes. */
#define ARRAY_3D(c, side, array, pos, elem)                                    \
    do {                                                                       \
        if ((array) != NULL) {                                                 \
            (c).side##MemoryType = CU_MEMORYTYPE_ARRAY;                        \
            (c).side##Array = (CUarray)(uintptr_t)(array);                     \
            (c).side##XInBytes = (pos).x * (elem);                             \
            (c).side##Host = NULL;                                             \
            (c).side##Device = 0;                                              \
            (c).side##Pitch = (c).side##Height = 0;                            \
        }                                                                      \
    } while (0)

/* One side of a cudaMemcpy3D: an array must be device memory to the kind;
 * a pointer must be where the kind says and its rows fit in its pitch. */
static cudaError_t side_3d_ok(const xprt_drv *d, cudaArray_const_t array,
                              struct cudaPitchedPtr pp, struct cudaPos pos, struct cudaExtent ext,
                              enum cudaMemcpyKind kind, bool is_src)
{
    bool device;
    switch (kind) {
    case cudaMemcpyHostToDevice: device = !is_src; break;
    case cudaMemcpyDeviceToHost: device = is_src; break;
    case cudaMemcpyDeviceToDevice: device = true; break;
    case cudaMemcpyHostToHost: device = false; break;
    default: return array != NULL ? cudaSuccess : pitched_ok(pp, pos, ext);
    }
    if (array != NULL)
        return device ? cudaSuccess : cudaErrorInvalidMemcpyDirection;
    cudaError_t e = pitched_ok(pp, pos, ext);
    return e != cudaSuccess ? e : xprt_check_side(d, pp.ptr, device);
}

/* cudaMemcpy3DParms as the driver's CUDA_MEMCPY3D: positions and the
 * extent's width in bytes (with an array, the extent and the array's
 * position are in its elements; a pointer's position stays in bytes), ysize
 * as the slice height, the memory types the kind stands for (UNIFIED for
 * cudaMemcpyDefault).  An empty extent is not checked further: a copy of
 * nothing succeeds (its CUDA_MEMCPY3D then has a zero dimension). */
static cudaError_t memcpy3d_params(const xprt_drv *d, const struct cudaMemcpy3DParms *p,
                                   CUDA_MEMCPY3D *c)
{
    if (!valid_kind(p->kind))
        return cudaErrorInvalidMemcpyDirection;
    size_t selem = 1, delem = 1;
    cudaError_t e;
    if ((p->srcArray && (e = xprt_array_elem(d, p->srcArray, &selem)) != cudaSuccess) ||
        (p->dstArray && (e = xprt_array_elem(d, p->dstArray, &delem)) != cudaSuccess))
        return e;
    if (p->srcArray && p->dstArray && selem != delem)
        return cudaErrorInvalidValue;
    struct cudaExtent ext = p->extent;
    if (__builtin_mul_overflow(ext.width, p->srcArray ? selem : delem, &ext.width))
        return cudaErrorInvalidValue;
    *c = (CUDA_MEMCPY3D){.WidthInBytes = ext.width, .Height = ext.height, .Depth = ext.depth};
    if (ext.width == 0 || ext.height == 0 || ext.depth == 0)
        return cudaSuccess;
    if ((e = side_3d_ok(d, p->srcArray, p->srcPtr, p->srcPos, ext, p->kind, true)) !=
            cudaSuccess ||
        (e = side_3d_ok(d, p->dstArray, p->dstPtr, p->dstPos, ext, p->kind, false)) !=
            cudaSuccess)
        return e;
    side_cu ss, ds;
    kind_types(p->kind, p->srcPtr.ptr, p->dstPtr.ptr, &ss, &ds);
    PITCHED_3D(*c, src, p->srcPtr, p->srcPos, ss);
    PITCHED_3D(*c, dst, p->dstPtr, p->dstPos, ds);
    ARRAY_3D(*c, src, p->srcArray, p->srcPos, selem);
    ARRAY_3D(*c, dst, p->dstArray, p->dstPos, delem);
    return cudaSuccess;
}

cudaError_t xprt_memcpy3d_params(const xprt_drv *d, const struct cudaMemcpy3DParms *p,
                                 CUDA_MEMCPY3D *out)
{
    return p == NULL ? cudaErrorInvalidValue : memcpy3d_params(d, p, out);
}

cudaError_t xprt_memcpy1d_params(const xprt_drv *d, void *dst, const void *src, size_t count,
                                 enum cudaMemcpyKind kind, CUDA_MEMCPY3D *out)
{
    struct cudaMemcpy3DParms p = {
        .srcPtr = {.ptr = (void *)(uintptr_t)src, .pitch = count, .xsize = count, .ysize = 1},
        .dstPtr = {.ptr = dst, .pitch = count, .xsize = count, .ysize = 1},
        .extent = {.width = count, .height = 1, .depth = 1},
        .kind = kind};
    return memcpy3d_params(d, &p, out);
}

static cudaError_t memcpy_3d(xprt_api api, const struct cudaMemcpy3DParms *p, bool async,
                             cudaStream_t stream)
{
    if (p == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    CUDA_MEMCPY3D c;
    if ((e = memcpy3d_params(d, p, &c)) != cudaSuccess)
        return xprt_result(e);
    if (c.WidthInBytes == 0 || c.Height == 0 || c.Depth == 0)
        return cudaSuccess;
    CUresult r = async ? XPRT_CALL(d, cuMemcpy3DAsync, &c, stream_of(stream))
                       : XPRT_CALL(d, cuMemcpy3D, &c);
    return xprt_result_cu(r);
}

XPRT_EXPORT cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms *p)
{
    return memcpy_3d(XPRT_LEGACY, p, false, NULL);
}

XPRT_EXPORT cudaError_t cudaMemcpy3D_ptds(const struct cudaMemcpy3DParms *p)
{
    return memcpy_3d(XPRT_PTDS, p, false, NULL);
}

XPRT_EXPORT cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms *p, cudaStream_t stream)
{
    return memcpy_3d(XPRT_LEGACY, p, true, stream);
}

XPRT_EXPORT cudaError_t cudaMemcpy3DAsync_ptsz(const struct cudaMemcpy3DParms *p,
                                               cudaStream_t stream)
{
    return memcpy_3d(XPRT_PTDS, p, true, stream);
}

/* Between devices the pointers are unified addresses, the devices name the
 * contexts. */
static cudaError_t memcpy_3d_peer(xprt_api api, const struct cudaMemcpy3DPeerParms *p, bool async,
                                  cudaStream_t stream)
{
    if (p == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    int n = xprt_device_count();
    if (p->srcDevice < 0 || p->srcDevice >= n || p->dstDevice < 0 || p->dstDevice >= n)
        return xprt_result(cudaErrorInvalidDevice);
    if (p->srcArray != NULL || p->dstArray != NULL)
        return xprt_result(cudaErrorNotSupported);
    if (p->extent.width == 0 || p->extent.height == 0 || p->extent.depth == 0)
        return cudaSuccess;
    if ((e = pitched_ok(p->srcPtr, p->srcPos, p->extent)) != cudaSuccess ||
        (e = pitched_ok(p->dstPtr, p->dstPos, p->extent)) != cudaSuccess)
        return xprt_result(e);
    CUDA_MEMCPY3D_PEER c = {.WidthInBytes = p->extent.width, .Height = p->extent.height,
                            .Depth = p->extent.depth};
    if ((e = xprt_primary_ctx(p->srcDevice, &c.srcContext)) != cudaSuccess ||
        (e = xprt_primary_ctx(p->dstDevice, &c.dstContext)) != cudaSuccess)
        return xprt_result(e);
    side_cu ss = side_of(CU_MEMORYTYPE_UNIFIED, p->srcPtr.ptr);
    side_cu ds = side_of(CU_MEMORYTYPE_UNIFIED, p->dstPtr.ptr);
    PITCHED_3D(c, src, p->srcPtr, p->srcPos, ss);
    PITCHED_3D(c, dst, p->dstPtr, p->dstPos, ds);
    CUresult r = async ? XPRT_CALL(d, cuMemcpy3DPeerAsync, &c, stream_of(stream))
                       : XPRT_CALL(d, cuMemcpy3DPeer, &c);
    return xprt_result_cu(r);
}

XPRT_EXPORT cudaError_t cudaMemcpy3DPeer(const struct cudaMemcpy3DPeerParms *p)
{
    return memcpy_3d_peer(XPRT_LEGACY, p, false, NULL);
}

XPRT_EXPORT cudaError_t cudaMemcpy3DPeer_ptds(const struct cudaMemcpy3DPeerParms *p)
{
    return memcpy_3d_peer(XPRT_PTDS, p, false, NULL);
}

XPRT_EXPORT cudaError_t cudaMemcpy3DPeerAsync(const struct cudaMemcpy3DPeerParms *p,
                                              cudaStream_t stream)
{
    return memcpy_3d_peer(XPRT_LEGACY, p, true, stream);
}

XPRT_EXPORT cudaError_t cudaMemcpy3DPeerAsync_ptsz(const struct cudaMemcpy3DPeerParms *p,
                                                   cudaStream_t stream)
{
    return memcpy_3d_peer(XPRT_PTDS, p, true, stream);
}

/* ---- cudaMemcpyBatchAsync ------------------------------------------------ */

/* cudaMemcpyAttributes is CUmemcpyAttributes, field for field and value for
 * value. */
_Static_assert(sizeof(struct cudaMemcpyAttributes) == sizeof(CUmemcpyAttributes) &&
                   offsetof(struct cudaMemcpyAttributes, flags) ==
                       offsetof(CUmemcpyAttributes, flags) &&
                   cudaMemcpySrcAccessOrderAny == (int)CU_MEMCPY_SRC_ACCESS_ORDER_ANY,
               "cudaMemcpyAttributes layout");

static cudaError_t memcpy_batch(xprt_api api, void *const *dsts, const void *const *srcs,
                                const size_t *sizes, size_t count,
                                struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs,
                                size_t numAttrs, cudaStream_t stream)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    if (dsts == NULL || srcs == NULL || sizes == NULL || count == 0)
        return xprt_result(cudaErrorInvalidValue);
    /* Pointers become device addresses (unified addressing), each batch its
     * own arrays: the driver takes CUdeviceptr, not pointers. */
    CUdeviceptr *addrs = malloc(2 * count * sizeof *addrs);
    if (addrs == NULL)
        return xprt_result(cudaErrorMemoryAllocation);
    for (size_t i = 0; i < count; i++) {
        addrs[i] = dptr_of(dsts[i]);
        addrs[count + i] = dptr_of(srcs[i]);
    }
    CUresult r = XPRT_CALL(d, cuMemcpyBatchAsync, addrs, addrs + count,
                           (size_t *)(uintptr_t)sizes, count, (CUmemcpyAttributes *)attrs,
                           attrsIdxs, numAttrs, stream_of(stream));
    free(addrs);
    return xprt_result_cu(r);
}

/* CUDA 12.8's has a failIdx (rt_abi12.c). */
XPRT_EXPORT cudaError_t XPRT_ABI13(cudaMemcpyBatchAsync, xprt_cuda13_MemcpyBatchAsync)(
    void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count,
    struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, cudaStream_t stream)
{
    return memcpy_batch(XPRT_LEGACY, dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs,
                        stream);
}

XPRT_EXPORT cudaError_t XPRT_ABI13(cudaMemcpyBatchAsync_ptsz, xprt_cuda13_MemcpyBatchAsync_ptsz)(
    void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count,
    struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, cudaStream_t stream)
{
    return memcpy_batch(XPRT_PTDS, dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, stream);
}

int xprt_memcpy_batch(int ptds, void *const *dsts, const void *const *srcs, const size_t *sizes,
                      size_t count, void *attrs, size_t *attrsIdxs, size_t numAttrs,
                      void *stream)
{
    return memcpy_batch(ptds ? XPRT_PTDS : XPRT_LEGACY, dsts, srcs, sizes, count, attrs,
                        attrsIdxs, numAttrs, stream);
}

/* ---- symbols ------------------------------------------------------------- */

/* Copies between a registered variable and memory; to_symbol says which way.
 * The kinds the API documents: HostToDevice (to) or DeviceToHost (from),
 * DeviceToDevice, and Default. */
cudaError_t xprt_symbol_at(const xprt_drv *d, const void *symbol, size_t count, size_t offset,
                           enum cudaMemcpyKind kind, bool to_symbol, void **out)
{
    enum cudaMemcpyKind host_kind = to_symbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    if (kind != host_kind && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    xprt_var *v = xprt_find_var(symbol);
    if (v == NULL)
        return cudaErrorInvalidSymbol;
    CUdeviceptr base = 0;
    size_t size = 0;
    cudaError_t e = xprt_var_address(d, v, &base, &size);
    if (e != cudaSuccess)
        return e;
    if (offset > size || count > size - offset)
        return cudaErrorInvalidValue;
    *out = (void *)(uintptr_t)(base + offset);
    return cudaSuccess;
}

static cudaError_t memcpy_symbol(xprt_api api, bool to_symbol, const void *symbol, void *mem,
                                 size_t count, size_t offset, enum cudaMemcpyKind kind,
                                 bool async, cudaStream_t stream)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    void *var;
    if ((e = xprt_symbol_at(d, symbol, count, offset, kind, to_symbol, &var)) != cudaSuccess)
        return xprt_result(e);
    e = to_symbol ? xprt_copy(d, var, mem, count, kind, async, stream)
                  : xprt_copy(d, mem, var, count, kind, async, stream);
    return xprt_result(e);
}

XPRT_EXPORT cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count,
                                           size_t offset, enum cudaMemcpyKind kind)
{
    return memcpy_symbol(XPRT_LEGACY, true, symbol, (void *)(uintptr_t)src, count, offset, kind,
                         false, NULL);
}

XPRT_EXPORT cudaError_t cudaMemcpyToSymbol_ptds(const void *symbol, const void *src,
                                                size_t count, size_t offset,
                                                enum cudaMemcpyKind kind)
{
    return memcpy_symbol(XPRT_PTDS, true, symbol, (void *)(uintptr_t)src, count, offset, kind,
                         false, NULL);
}

XPRT_EXPORT cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src,
                                                size_t count, size_t offset,
                                                enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return memcpy_symbol(XPRT_LEGACY, true, symbol, (void *)(uintptr_t)src, count, offset, kind,
                         true, stream);
}

XPRT_EXPORT cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src,
                                                     size_t count, size_t offset,
                                                     enum cudaMemcpyKind kind,
                                                     cudaStream_t stream)
{
    return memcpy_symbol(XPRT_PTDS, true, symbol, (void *)(uintptr_t)src, count, offset, kind,
                         true, stream);
}

XPRT_EXPORT cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count,
                                             size_t offset, enum cudaMemcpyKind kind)
{
    return memcpy_symbol(XPRT_LEGACY, false, symbol, dst, count, offset, kind, false, NULL);
}

XPRT_EXPORT cudaError_t cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol, size_t count,
                                                  size_t offset, enum cudaMemcpyKind kind)
{
    return memcpy_symbol(XPRT_PTDS, false, symbol, dst, count, offset, kind, false, NULL);
}

XPRT_EXPORT cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count,
                                                  size_t offset, enum cudaMemcpyKind kind,
                                                  cudaStream_t stream)
{
    return memcpy_symbol(XPRT_LEGACY, false, symbol, dst, count, offset, kind, true, stream);
}

XPRT_EXPORT cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol,
                                                       size_t count, size_t offset,
                                                       enum cudaMemcpyKind kind,
                                                       cudaStream_t stream)
{
    return memcpy_symbol(XPRT_PTDS, false, symbol, dst, count, offset, kind, true, stream);
}

/* ---- cudaMemset ---------------------------------------------------------- */

static cudaError_t memset_1d(xprt_api api, void *devPtr, int value, size_t count, bool async,
                             cudaStream_t stream)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    if (count == 0)
        return cudaSuccess;
    /* Like memset, only the low byte of value counts. */
    unsigned char byte = (unsigned char)value;
    CUresult r = async ? XPRT_CALL(d, cuMemsetD8Async, dptr_of(devPtr), byte, count,
                                   stream_of(stream))
                       : XPRT_CALL(d, cuMemsetD8, dptr_of(devPtr), byte, count);
    return xprt_result_cu(r);
}

XPRT_EXPORT cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
    return memset_1d(XPRT_LEGACY, devPtr, value, count, false, NULL);
}

XPRT_EXPORT cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count)
{
    return memset_1d(XPRT_PTDS, devPtr, value, count, false, NULL);
}

XPRT_EXPORT cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count,
                                        cudaStream_t stream)
{
    return memset_1d(XPRT_LEGACY, devPtr, value, count, true, stream);
}

XPRT_EXPORT cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count,
                                             cudaStream_t stream)
{
    return memset_1d(XPRT_PTDS, devPtr, value, count, true, stream);
}

static cudaError_t memset_2d(xprt_api api, void *devPtr, size_t pitch, int value, size_t width,
                             size_t height, bool async, cudaStream_t stream)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    if (width == 0 || height == 0)
        return cudaSuccess;
    unsigned char byte = (unsigned char)value;
    CUresult r = async ? XPRT_CALL(d, cuMemsetD2D8Async, dptr_of(devPtr), pitch, byte, width,
                                   height, stream_of(stream))
                       : XPRT_CALL(d, cuMemsetD2D8, dptr_of(devPtr), pitch, byte, width, height);
    return xprt_result_cu(r);
}

XPRT_EXPORT cudaError_t cudaMemset2D(void *devPtr, size_t pitch, int value, size_t width,
                                     size_t height)
{
    return memset_2d(XPRT_LEGACY, devPtr, pitch, value, width, height, false, NULL);
}

XPRT_EXPORT cudaError_t cudaMemset2D_ptds(void *devPtr, size_t pitch, int value, size_t width,
                                          size_t height)
{
    return memset_2d(XPRT_PTDS, devPtr, pitch, value, width, height, false, NULL);
}

XPRT_EXPORT cudaError_t cudaMemset2DAsync(void *devPtr, size_t pitch, int value, size_t width,
                                          size_t height, cudaStream_t stream)
{
    return memset_2d(XPRT_LEGACY, devPtr, pitch, value, width, height, true, stream);
}

XPRT_EXPORT cudaError_t cudaMemset2DAsync_ptsz(void *devPtr, size_t pitch, int value,
                                               size_t width, size_t height, cudaStream_t stream)
{
    return memset_2d(XPRT_PTDS, devPtr, pitch, value, width, height, true, stream);
}

/* Slices ysize rows apart; when they follow each other without a gap (or
 * there is only one) the whole box is one 2D memset of height * depth rows,
 * else one per slice. */
static cudaError_t memset_3d(xprt_api api, struct cudaPitchedPtr p, int value,
                             struct cudaExtent extent, bool async, cudaStream_t stream)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    if (extent.width == 0 || extent.height == 0 || extent.depth == 0)
        return cudaSuccess;
    /* "The pitch field is ignored when height and depth are both equal to 1." */
    bool one_row = extent.height == 1 && extent.depth == 1;
    size_t pitch = one_row ? extent.width : p.pitch;
    if (extent.width > pitch || (extent.depth > 1 && p.ysize < extent.height))
        return xprt_result(cudaErrorInvalidValue);
    unsigned char byte = (unsigned char)value;
    CUdeviceptr base = dptr_of(p.ptr);
    size_t rows, slice;
    if (extent.depth == 1 || p.ysize == extent.height) {
        if (__builtin_mul_overflow(extent.height, extent.depth, &rows))
            return xprt_result(cudaErrorInvalidValue);
        CUresult r = async ? XPRT_CALL(d, cuMemsetD2D8Async, base, pitch, byte, extent.width, rows,
                                       stream_of(stream))
                           : XPRT_CALL(d, cuMemsetD2D8, base, pitch, byte, extent.width, rows);
        return xprt_result_cu(r);
    }
    if (__builtin_mul_overflow(pitch, p.ysize, &slice))
        return xprt_result(cudaErrorInvalidValue);
    for (size_t z = 0; z < extent.depth; z++) {
        CUdeviceptr at = base + z * slice;
        CUresult r = async ? XPRT_CALL(d, cuMemsetD2D8Async, at, pitch, byte, extent.width,
                                       extent.height, stream_of(stream))
                           : XPRT_CALL(d, cuMemsetD2D8, at, pitch, byte, extent.width,
                                       extent.height);
        if (r != CUDA_SUCCESS)
            return xprt_result_cu(r);
    }
    return cudaSuccess;
}

XPRT_EXPORT cudaError_t cudaMemset3D(struct cudaPitchedPtr pitchedDevPtr, int value,
                                     struct cudaExtent extent)
{
    return memset_3d(XPRT_LEGACY, pitchedDevPtr, value, extent, false, NULL);
}

XPRT_EXPORT cudaError_t cudaMemset3D_ptds(struct cudaPitchedPtr pitchedDevPtr, int value,
                                          struct cudaExtent extent)
{
    return memset_3d(XPRT_PTDS, pitchedDevPtr, value, extent, false, NULL);
}

XPRT_EXPORT cudaError_t cudaMemset3DAsync(struct cudaPitchedPtr pitchedDevPtr, int value,
                                          struct cudaExtent extent, cudaStream_t stream)
{
    return memset_3d(XPRT_LEGACY, pitchedDevPtr, value, extent, true, stream);
}

XPRT_EXPORT cudaError_t cudaMemset3DAsync_ptsz(struct cudaPitchedPtr pitchedDevPtr, int value,
                                               struct cudaExtent extent, cudaStream_t stream)
{
    return memset_3d(XPRT_PTDS, pitchedDevPtr, value, extent, true, stream);
}
