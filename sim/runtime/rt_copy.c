/* rt_copy.c: cudaMemcpy (1D, 2D, peer, symbol) and cudaMemset entry points. */
/* The runtime checks the arguments; the driver moves and times the bytes. */
#include "rt_internal.h"

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

/* Whether ptr is acceptable as the side of a copy that kind says is on the
 * device (want_device) or on the host. */
static cudaError_t check_side(const xprt_drv *d, const void *ptr, bool want_device)
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
    cudaError_t e = check_side(d, dst, dst_dev);
    if (e == cudaSuccess)
        e = check_side(d, src, src_dev);
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

static void set_side_2d(CUmemorytype type, const void *ptr, bool is_dst, CUDA_MEMCPY2D *p)
{
    if (is_dst) {
        p->dstMemoryType = type;
        if (type == CU_MEMORYTYPE_HOST)
            p->dstHost = (void *)(uintptr_t)ptr;
        else
            p->dstDevice = dptr_of(ptr);
    } else {
        p->srcMemoryType = type;
        if (type == CU_MEMORYTYPE_HOST)
            p->srcHost = ptr;
        else
            p->srcDevice = dptr_of(ptr);
    }
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
    CUmemorytype dst_type, src_type;
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
    CUDA_MEMCPY2D p = {0};
    set_side_2d(src_type, src, false, &p);
    set_side_2d(dst_type, dst, true, &p);
    p.srcPitch = spitch;
    p.dstPitch = dpitch;
    p.WidthInBytes = width;
    p.Height = height;
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

/* ---- symbols ------------------------------------------------------------- */

/* Copies between a registered variable and memory; to_symbol says which way.
 * The kinds the API documents: HostToDevice (to) or DeviceToHost (from),
 * DeviceToDevice, and Default. */
static cudaError_t memcpy_symbol(xprt_api api, bool to_symbol, const void *symbol, void *mem,
                                 size_t count, size_t offset, enum cudaMemcpyKind kind,
                                 bool async, cudaStream_t stream)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    enum cudaMemcpyKind host_kind = to_symbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    if (kind != host_kind && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
        return xprt_result(cudaErrorInvalidMemcpyDirection);
    xprt_var *v = xprt_find_var(symbol);
    if (v == NULL)
        return xprt_result(cudaErrorInvalidSymbol);
    CUdeviceptr base = 0;
    size_t size = 0;
    e = xprt_var_address(d, v, &base, &size);
    if (e != cudaSuccess)
        return xprt_result(e);
    if (offset > size || count > size - offset)
        return xprt_result(cudaErrorInvalidValue);
    void *var = (void *)(uintptr_t)(base + offset);
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
