/* rt_array.c: CUDA arrays in the runtime (cudaMallocArray, cudaMalloc3DArray,
 * cudaFreeArray, cudaArrayGetInfo) and the copies that name one
 * (cudaMemcpy2DToArray, ...FromArray, ...ArrayToArray and the deprecated
 * linear forms): a cudaArray_t is the driver's CUarray, as in NVIDIA's. */
#include "rt_internal.h"

static inline CUarray cu_array(cudaArray_const_t a)
{
    return (CUarray)(uintptr_t)a;
}

/* A channel descriptor as the driver says it: every channel used has x's
 * size (8, 16 or 32 bits; 16-bit floats are half), one, two or four of them.
 * Anything else is cudaErrorInvalidChannelDescriptor. */
static cudaError_t format_of(const struct cudaChannelFormatDesc *c, CUarray_format *fmt,
                             unsigned *channels)
{
    if (c == NULL)
        return cudaErrorInvalidValue;
    int bits[4] = {c->x, c->y, c->z, c->w};
    unsigned n = 0;
    while (n < 4 && bits[n] != 0)
        n++;
    for (unsigned i = 0; i < 4; i++)
        if ((i < n && bits[i] != c->x) || (i >= n && bits[i] != 0))
            return cudaErrorInvalidChannelDescriptor;
    if (n == 0 || n == 3)
        return cudaErrorInvalidChannelDescriptor;
    static const CUarray_format table[3][3] = {
        /* signed, unsigned, float for 8, 16, 32 bits; 0: none */
        {CU_AD_FORMAT_SIGNED_INT8, CU_AD_FORMAT_UNSIGNED_INT8, 0},
        {CU_AD_FORMAT_SIGNED_INT16, CU_AD_FORMAT_UNSIGNED_INT16, CU_AD_FORMAT_HALF},
        {CU_AD_FORMAT_SIGNED_INT32, CU_AD_FORMAT_UNSIGNED_INT32, CU_AD_FORMAT_FLOAT}};
    int row = c->x == 8 ? 0 : c->x == 16 ? 1 : c->x == 32 ? 2 : -1;
    int col = c->f == cudaChannelFormatKindSigned ? 0 : c->f == cudaChannelFormatKindUnsigned ? 1
              : c->f == cudaChannelFormatKindFloat ? 2 : -1;
    if (row < 0 || col < 0 || table[row][col] == 0)
        return cudaErrorInvalidChannelDescriptor;
    *fmt = table[row][col];
    *channels = n;
    return cudaSuccess;
}

static cudaError_t malloc_array(cudaArray_t *array, const struct cudaChannelFormatDesc *desc,
                                struct cudaExtent e, unsigned int flags)
{
    const xprt_drv *d;
    cudaError_t err = xprt_enter(XPRT_LEGACY, &d);
    if (err != cudaSuccess)
        return xprt_result(err);
    if (array == NULL)
        return xprt_result(cudaErrorInvalidValue);
    CUDA_ARRAY3D_DESCRIPTOR ad = {.Width = e.width, .Height = e.height, .Depth = e.depth,
                                  .Flags = flags};
    if ((err = format_of(desc, &ad.Format, &ad.NumChannels)) != cudaSuccess)
        return xprt_result(err);
    CUarray a = NULL;
    CUresult r = XPRT_CALL(d, cuArray3DCreate, &a, &ad);
    if (r == CUDA_SUCCESS)
        *array = (cudaArray_t)(uintptr_t)a;
    /* The runtime says it the runtime's way: no memory is an allocation failure. */
    return xprt_result(r == CUDA_ERROR_OUT_OF_MEMORY ? cudaErrorMemoryAllocation
                                                     : xprt_map_error(r));
}

/* height 0: a 1D array. */
XPRT_EXPORT cudaError_t cudaMallocArray(cudaArray_t *array,
                                        const struct cudaChannelFormatDesc *desc, size_t width,
                                        size_t height, unsigned int flags)
{
    return malloc_array(array, desc, (struct cudaExtent){width, height, 0}, flags);
}

XPRT_EXPORT cudaError_t cudaMalloc3DArray(cudaArray_t *array,
                                          const struct cudaChannelFormatDesc *desc,
                                          struct cudaExtent extent, unsigned int flags)
{
    return malloc_array(array, desc, extent, flags);
}

XPRT_EXPORT cudaError_t cudaFreeArray(cudaArray_t array)
{
    const xprt_drv *d;
    cudaError_t err = xprt_enter(XPRT_LEGACY, &d);
    if (err != cudaSuccess)
        return xprt_result(err);
    if (array == NULL)
        return cudaSuccess;   /* "If array is 0, no operation is performed." */
    CUresult r = XPRT_CALL(d, cuArrayDestroy, cu_array(array));
    return xprt_result(r == CUDA_ERROR_INVALID_HANDLE ? cudaErrorInvalidValue
                                                      : xprt_map_error(r));
}

/* The driver's descriptor of an array, cudaErrorInvalidResourceHandle for a
 * handle that names none. */
static cudaError_t describe(const xprt_drv *d, cudaArray_const_t a, CUDA_ARRAY3D_DESCRIPTOR *out)
{
    if (a == NULL)
        return cudaErrorInvalidResourceHandle;
    CUresult r = XPRT_CALL(d, cuArray3DGetDescriptor, out, cu_array(a));
    return r == CUDA_ERROR_INVALID_HANDLE ? cudaErrorInvalidResourceHandle : xprt_map_error(r);
}

static size_t format_bytes(CUarray_format f)
{
    switch (f) {
    case CU_AD_FORMAT_SIGNED_INT8: case CU_AD_FORMAT_UNSIGNED_INT8: return 1;
    case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_HALF: return 2;
    default: return 4;
    }
}

cudaError_t xprt_array_elem(const xprt_drv *d, cudaArray_const_t a, size_t *out)
{
    CUDA_ARRAY3D_DESCRIPTOR ad;
    cudaError_t err = describe(d, a, &ad);
    if (err == cudaSuccess)
        *out = format_bytes(ad.Format) * ad.NumChannels;
    return err;
}

XPRT_EXPORT cudaError_t cudaArrayGetInfo(struct cudaChannelFormatDesc *desc,
                                         struct cudaExtent *extent, unsigned int *flags,
                                         cudaArray_t array)
{
    const xprt_drv *d;
    cudaError_t err = xprt_enter(XPRT_LEGACY, &d);
    if (err != cudaSuccess)
        return xprt_result(err);
    CUDA_ARRAY3D_DESCRIPTOR ad;
    if ((err = describe(d, array, &ad)) != cudaSuccess)
        return xprt_result(err);
    if (desc != NULL) {
        int bits = (int)format_bytes(ad.Format) * 8;
        enum cudaChannelFormatKind k =
            ad.Format == CU_AD_FORMAT_HALF || ad.Format == CU_AD_FORMAT_FLOAT
                ? cudaChannelFormatKindFloat
            : ad.Format == CU_AD_FORMAT_SIGNED_INT8 || ad.Format == CU_AD_FORMAT_SIGNED_INT16 ||
                    ad.Format == CU_AD_FORMAT_SIGNED_INT32
                ? cudaChannelFormatKindSigned : cudaChannelFormatKindUnsigned;
        *desc = (struct cudaChannelFormatDesc){
            .x = bits, .y = ad.NumChannels > 1 ? bits : 0, .z = ad.NumChannels > 2 ? bits : 0,
            .w = ad.NumChannels > 3 ? bits : 0, .f = k};
    }
    if (extent != NULL)
        *extent = (struct cudaExtent){ad.Width, ad.Height, ad.Depth};
    if (flags != NULL)
        *flags = ad.Flags;
    return cudaSuccess;
}

/* ---- copies -------------------------------------------------------------- */

/* The pointer side of an array copy: kind must take the array as device
 * memory (to_array: the pointer is the source), and the pointer must be
 * what kind says.  Its memory type for the driver. */
static cudaError_t pointer_side(const xprt_drv *d, const void *ptr, enum cudaMemcpyKind kind,
                                bool ptr_is_src, CUmemorytype *type)
{
    bool ptr_device;
    switch (kind) {
    case cudaMemcpyHostToDevice: if (!ptr_is_src) return cudaErrorInvalidMemcpyDirection;
                                 ptr_device = false; break;
    case cudaMemcpyDeviceToHost: if (ptr_is_src) return cudaErrorInvalidMemcpyDirection;
                                 ptr_device = false; break;
    case cudaMemcpyDeviceToDevice: ptr_device = true; break;
    case cudaMemcpyDefault: *type = CU_MEMORYTYPE_UNIFIED; return cudaSuccess;
    default: return cudaErrorInvalidMemcpyDirection;
    }
    *type = ptr_device ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
    return xprt_check_side(d, ptr, ptr_device);
}

/* One side for CUDA_MEMCPY3D: an array at (x bytes, y), or a pointer with its pitch. */
typedef struct arr_side {
    CUarray array;
    const void *ptr;
    CUmemorytype type;
    size_t x, y, pitch;
} arr_side;

#define SET_SIDE(c, side, s)                                                   \
    do {                                                                       \
        (c).side##MemoryType = (s).array ? CU_MEMORYTYPE_ARRAY : (s).type;     \
        (c).side##Array = (s).array;                                           \
        (c).side##Host = (s).type == CU_MEMORYTYPE_HOST ? (void *)(uintptr_t)(s).ptr : NULL; \
        (c).side##Device = (s).type == CU_MEMORYTYPE_HOST ? 0 : (CUdeviceptr)(uintptr_t)(s).ptr; \
        (c).side##XInBytes = (s).x;                                            \
        (c).side##Y = (s).y;                                                   \
        (c).side##Pitch = (s).pitch;                                           \
    } while (0)

static CUresult box(const xprt_drv *d, const arr_side *dst, const arr_side *src, size_t width,
                    size_t height, bool async, cudaStream_t stream)
{
    CUDA_MEMCPY3D c = {.WidthInBytes = width, .Height = height, .Depth = 1};
    SET_SIDE(c, dst, *dst);
    SET_SIDE(c, src, *src);
    return async ? XPRT_CALL(d, cuMemcpy3DAsync, &c, (CUstream)stream)
                 : XPRT_CALL(d, cuMemcpy3D, &c);
}

/* A 2D copy with the array on one side (to_array: the destination).  wOffset
 * in bytes, hOffset in rows, as the runtime's documentation has them. */
static cudaError_t copy_2d_array(xprt_api api, cudaArray_const_t array, size_t wOffset,
                                 size_t hOffset, const void *ptr, size_t pitch, size_t width,
                                 size_t height, enum cudaMemcpyKind kind, bool to_array,
                                 bool async, cudaStream_t stream)
{
    const xprt_drv *d;
    cudaError_t err = xprt_enter(api, &d);
    if (err != cudaSuccess)
        return xprt_result(err);
    arr_side a = {.array = cu_array(array), .x = wOffset, .y = hOffset};
    arr_side p = {.ptr = ptr, .pitch = pitch};
    if ((err = pointer_side(d, ptr, kind, to_array, &p.type)) != cudaSuccess)
        return xprt_result(err);
    if (array == NULL)
        return xprt_result(cudaErrorInvalidResourceHandle);
    if (width == 0 || height == 0)
        return cudaSuccess;
    if (width > pitch)
        return xprt_result(cudaErrorInvalidPitchValue);
    CUresult r = to_array ? box(d, &a, &p, width, height, async, stream)
                          : box(d, &p, &a, width, height, async, stream);
    return xprt_result_cu(r);
}

#define TO_ARRAY_ARGS                                                          \
    (cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src, size_t spitch, \
     size_t width, size_t height, enum cudaMemcpyKind kind
#define TO_ARRAY_CALL(api, async, stream)                                      \
    copy_2d_array(api, dst, wOffset, hOffset, src, spitch, width, height, kind, true, async, stream)
XPRT_EXPORT cudaError_t cudaMemcpy2DToArray TO_ARRAY_ARGS)
{
    return TO_ARRAY_CALL(XPRT_LEGACY, false, NULL);
}
XPRT_EXPORT cudaError_t cudaMemcpy2DToArray_ptds TO_ARRAY_ARGS)
{
    return TO_ARRAY_CALL(XPRT_PTDS, false, NULL);
}
XPRT_EXPORT cudaError_t cudaMemcpy2DToArrayAsync TO_ARRAY_ARGS, cudaStream_t stream)
{
    return TO_ARRAY_CALL(XPRT_LEGACY, true, stream);
}
XPRT_EXPORT cudaError_t cudaMemcpy2DToArrayAsync_ptsz TO_ARRAY_ARGS, cudaStream_t stream)
{
    return TO_ARRAY_CALL(XPRT_PTDS, true, stream);
}

#define FROM_ARRAY_ARGS                                                        \
    (void *dst, size_t dpitch, cudaArray_const_t src, size_t wOffset, size_t hOffset,    \
     size_t width, size_t height, enum cudaMemcpyKind kind
#define FROM_ARRAY_CALL(api, async, stream)                                    \
    copy_2d_array(api, src, wOffset, hOffset, dst, dpitch, width, height, kind, false, async, \
                  stream)
XPRT_EXPORT cudaError_t cudaMemcpy2DFromArray FROM_ARRAY_ARGS)
{
    return FROM_ARRAY_CALL(XPRT_LEGACY, false, NULL);
}
XPRT_EXPORT cudaError_t cudaMemcpy2DFromArray_ptds FROM_ARRAY_ARGS)
{
    return FROM_ARRAY_CALL(XPRT_PTDS, false, NULL);
}
XPRT_EXPORT cudaError_t cudaMemcpy2DFromArrayAsync FROM_ARRAY_ARGS, cudaStream_t stream)
{
    return FROM_ARRAY_CALL(XPRT_LEGACY, true, stream);
}
XPRT_EXPORT cudaError_t cudaMemcpy2DFromArrayAsync_ptsz FROM_ARRAY_ARGS, cudaStream_t stream)
{
    return FROM_ARRAY_CALL(XPRT_PTDS, true, stream);
}

static cudaError_t copy_2d_a2a(xprt_api api, cudaArray_t dst, size_t wOffsetDst,
                               size_t hOffsetDst, cudaArray_const_t src, size_t wOffsetSrc,
                               size_t hOffsetSrc, size_t width, size_t height,
                               enum cudaMemcpyKind kind)
{
    const xprt_drv *d;
    cudaError_t err = xprt_enter(api, &d);
    if (err != cudaSuccess)
        return xprt_result(err);
    if (kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
        return xprt_result(cudaErrorInvalidMemcpyDirection);
    if (dst == NULL || src == NULL)
        return xprt_result(cudaErrorInvalidResourceHandle);
    if (width == 0 || height == 0)
        return cudaSuccess;
    arr_side ds = {.array = cu_array(dst), .x = wOffsetDst, .y = hOffsetDst};
    arr_side ss = {.array = cu_array(src), .x = wOffsetSrc, .y = hOffsetSrc};
    return xprt_result_cu(box(d, &ds, &ss, width, height, false, NULL));
}

#define A2A_2D_ARGS                                                            \
    (cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst, cudaArray_const_t src, \
     size_t wOffsetSrc, size_t hOffsetSrc, size_t width, size_t height,        \
     enum cudaMemcpyKind kind)
XPRT_EXPORT cudaError_t cudaMemcpy2DArrayToArray A2A_2D_ARGS
{
    return copy_2d_a2a(XPRT_LEGACY, dst, wOffsetDst, hOffsetDst, src, wOffsetSrc, hOffsetSrc,
                       width, height, kind);
}
XPRT_EXPORT cudaError_t cudaMemcpy2DArrayToArray_ptds A2A_2D_ARGS
{
    return copy_2d_a2a(XPRT_PTDS, dst, wOffsetDst, hOffsetDst, src, wOffsetSrc, hOffsetSrc,
                       width, height, kind);
}

/* ---- the deprecated linear forms ----------------------------------------- */

/* Byte offset of (wOffset bytes, hOffset rows) in the array's tight layout,
 * where count bytes must fit (checked before any byte moves), and its row
 * length. */
static cudaError_t linear_offset(const xprt_drv *d, cudaArray_const_t a, size_t wOffset,
                                 size_t hOffset, size_t count, size_t *off, size_t *row)
{
    CUDA_ARRAY3D_DESCRIPTOR ad;
    cudaError_t err = describe(d, a, &ad);
    if (err != cudaSuccess)
        return err;
    *row = ad.Width * format_bytes(ad.Format) * ad.NumChannels;
    size_t total = *row * (ad.Height ? ad.Height : 1) * (ad.Depth ? ad.Depth : 1);
    if (__builtin_mul_overflow(hOffset, *row, off) ||
        __builtin_add_overflow(*off, wOffset, off) || *off > total || count > total - *off)
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

/* count bytes from byte `off` on, which may run across rows: the rest of the
 * first row, whole rows, the start of the last, each one 2D copy. */
static cudaError_t copy_linear(xprt_api api, cudaArray_const_t array, size_t wOffset,
                               size_t hOffset, const void *ptr, size_t count,
                               enum cudaMemcpyKind kind, bool to_array, bool async,
                               cudaStream_t stream)
{
    const xprt_drv *d;
    cudaError_t err = xprt_enter(api, &d);
    if (err != cudaSuccess)
        return xprt_result(err);
    arr_side p = {.ptr = ptr};
    size_t off, row;
    if ((err = pointer_side(d, ptr, kind, to_array, &p.type)) != cudaSuccess ||
        (err = linear_offset(d, array, wOffset, hOffset, count, &off, &row)) != cudaSuccess)
        return xprt_result(err);
    arr_side a = {.array = cu_array(array), .x = off % row, .y = off / row};
    CUresult r = CUDA_SUCCESS;
    while (count > 0 && r == CUDA_SUCCESS) {
        size_t width = a.x != 0 || count < row ? (count < row - a.x ? count : row - a.x) : row;
        size_t height = a.x == 0 && count >= row ? count / row : 1;
        p.pitch = a.pitch = width;
        r = to_array ? box(d, &a, &p, width, height, async, stream)
                     : box(d, &p, &a, width, height, async, stream);
        p.ptr = (const char *)p.ptr + width * height;
        count -= width * height;
        a.y += a.x + width == row ? height : 0;
        a.x = a.x + width == row ? 0 : a.x + width;
    }
    return xprt_result_cu(r);
}

#define TO_LINEAR_ARGS                                                         \
    (cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src, size_t count, \
     enum cudaMemcpyKind kind
#define FROM_LINEAR_ARGS                                                       \
    (void *dst, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t count, \
     enum cudaMemcpyKind kind
XPRT_EXPORT cudaError_t cudaMemcpyToArray TO_LINEAR_ARGS)
{
    return copy_linear(XPRT_LEGACY, dst, wOffset, hOffset, src, count, kind, true, false, NULL);
}
XPRT_EXPORT cudaError_t cudaMemcpyToArray_ptds TO_LINEAR_ARGS)
{
    return copy_linear(XPRT_PTDS, dst, wOffset, hOffset, src, count, kind, true, false, NULL);
}
XPRT_EXPORT cudaError_t cudaMemcpyToArrayAsync TO_LINEAR_ARGS, cudaStream_t stream)
{
    return copy_linear(XPRT_LEGACY, dst, wOffset, hOffset, src, count, kind, true, true, stream);
}
XPRT_EXPORT cudaError_t cudaMemcpyToArrayAsync_ptsz TO_LINEAR_ARGS, cudaStream_t stream)
{
    return copy_linear(XPRT_PTDS, dst, wOffset, hOffset, src, count, kind, true, true, stream);
}
XPRT_EXPORT cudaError_t cudaMemcpyFromArray FROM_LINEAR_ARGS)
{
    return copy_linear(XPRT_LEGACY, src, wOffset, hOffset, dst, count, kind, false, false, NULL);
}
XPRT_EXPORT cudaError_t cudaMemcpyFromArray_ptds FROM_LINEAR_ARGS)
{
    return copy_linear(XPRT_PTDS, src, wOffset, hOffset, dst, count, kind, false, false, NULL);
}
XPRT_EXPORT cudaError_t cudaMemcpyFromArrayAsync FROM_LINEAR_ARGS, cudaStream_t stream)
{
    return copy_linear(XPRT_LEGACY, src, wOffset, hOffset, dst, count, kind, false, true, stream);
}
XPRT_EXPORT cudaError_t cudaMemcpyFromArrayAsync_ptsz FROM_LINEAR_ARGS, cudaStream_t stream)
{
    return copy_linear(XPRT_PTDS, src, wOffset, hOffset, dst, count, kind, false, true, stream);
}

static cudaError_t copy_linear_a2a(xprt_api api, cudaArray_t dst, size_t wOffsetDst,
                                   size_t hOffsetDst, cudaArray_const_t src, size_t wOffsetSrc,
                                   size_t hOffsetSrc, size_t count, enum cudaMemcpyKind kind)
{
    const xprt_drv *d;
    cudaError_t err = xprt_enter(api, &d);
    if (err != cudaSuccess)
        return xprt_result(err);
    if (kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
        return xprt_result(cudaErrorInvalidMemcpyDirection);
    size_t doff, soff, row;
    if ((err = linear_offset(d, dst, wOffsetDst, hOffsetDst, count, &doff, &row)) !=
            cudaSuccess ||
        (err = linear_offset(d, src, wOffsetSrc, hOffsetSrc, count, &soff, &row)) != cudaSuccess)
        return xprt_result(err);
    if (count == 0)
        return cudaSuccess;
    return xprt_result_cu(XPRT_CALL(d, cuMemcpyAtoA, cu_array(dst), doff, cu_array(src), soff,
                                    count));
}

#define A2A_ARGS                                                               \
    (cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst, cudaArray_const_t src, \
     size_t wOffsetSrc, size_t hOffsetSrc, size_t count, enum cudaMemcpyKind kind)
XPRT_EXPORT cudaError_t cudaMemcpyArrayToArray A2A_ARGS
{
    return copy_linear_a2a(XPRT_LEGACY, dst, wOffsetDst, hOffsetDst, src, wOffsetSrc, hOffsetSrc,
                           count, kind);
}
XPRT_EXPORT cudaError_t cudaMemcpyArrayToArray_ptds A2A_ARGS
{
    return copy_linear_a2a(XPRT_PTDS, dst, wOffsetDst, hOffsetDst, src, wOffsetSrc, hOffsetSrc,
                           count, kind);
}
