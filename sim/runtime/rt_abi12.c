/* rt_abi12.c: the entry points whose CUDA 12 signature or struct differs from CUDA 13's, for libcudart.so.12. */
/* Compiled only into the libcudart.so.12 build (sim/cuda12/), against NVIDIA's
 * CUDA 12 headers: every type named here has its CUDA 12 layout. The work is
 * done by the CUDA 13 code of the other files, reached through rt_abi.h,
 * which names no type whose layout differs. */

#include <cuda.h>
/* As in rt_internal.h: the header then declares the names libcudart itself
 * exports (cudaGetDeviceProperties as well as _v2, the legacy 3-argument
 * cudaStreamGetCaptureInfo as well as _v2) instead of renaming them. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda_runtime_api.h>

#include <stdint.h>
#include <string.h>

#include "rt_abi.h"

#if CUDART_VERSION < 12000 || CUDART_VERSION >= 13000
#error "rt_abi12.c needs NVIDIA's CUDA 12 runtime headers"
#endif

#define XPRT_EXPORT __attribute__((visibility("default")))

/* ---- struct cudaDeviceProp: CUDA 12 has eight fields CUDA 13 dropped ------ */

static const xprt_prop_attr g_props12[] = {
    XPRT_PROPS_COMMON(XPRT_PROP_I, XPRT_PROP_U, XPRT_PROP_S)
    XPRT_PROP_I(clockRate, CLOCK_RATE)
    XPRT_PROP_I(deviceOverlap, GPU_OVERLAP)
    XPRT_PROP_I(kernelExecTimeoutEnabled, KERNEL_EXEC_TIMEOUT)
    XPRT_PROP_I(computeMode, COMPUTE_MODE)
    XPRT_PROP_I(maxTexture1DLinear, MAXIMUM_TEXTURE1D_LINEAR_WIDTH)
    XPRT_PROP_I(memoryClockRate, MEMORY_CLOCK_RATE)
    XPRT_PROP_I(singleToDoublePrecisionPerfRatio, SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO)
    XPRT_PROP_I(cooperativeMultiDeviceLaunch, COOPERATIVE_MULTI_DEVICE_LAUNCH)
};

XPRT_EXPORT cudaError_t cudaGetDeviceProperties_v2(struct cudaDeviceProp *prop, int device)
{
    xprt_prop_layout layout = XPRT_PROP_LAYOUT(g_props12);
    return (cudaError_t)xprt_device_properties(prop, &layout, device);
}

/* CUDA 12's headers rename every call to _v2; the plain export serves
 * binaries that bound it directly, with the same struct. */
XPRT_EXPORT cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    return cudaGetDeviceProperties_v2(prop, device);
}

/* ---- struct cudaPointerAttributes: CUDA 13 added a reserved tail --------- */

XPRT_EXPORT cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes,
                                                 const void *ptr)
{
    if (attributes == NULL)
        return (cudaError_t)xprt_pointer_attributes(NULL, ptr);
    /* The leading fields are the same; the CUDA 13 struct does not fit. */
    _Alignas(max_align_t) unsigned char room[XPRT_POINTER_ATTRIBUTES_ROOM];
    cudaError_t e = (cudaError_t)xprt_pointer_attributes(room, ptr);
    if (e == cudaSuccess)
        memcpy(attributes, room, sizeof *attributes);
    return e;
}

/* ---- stream capture: CUDA 12's plain name is the 3-argument legacy form --- */

static cudaError_t capture_info(int ptds, cudaStream_t stream,
                                enum cudaStreamCaptureStatus *status, unsigned long long *id,
                                cudaGraph_t *graph, const cudaGraphNode_t **deps, size_t *ndeps)
{
    int st = 0;
    cudaError_t e = (cudaError_t)xprt_capture_info(ptds, stream, status != NULL ? &st : NULL, id,
                                                     graph, deps, ndeps);
    if (e == cudaSuccess)
        *status = (enum cudaStreamCaptureStatus)st;
    return e;
}

XPRT_EXPORT cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream,
                                                 enum cudaStreamCaptureStatus *captureStatus_out,
                                                 unsigned long long *id_out)
{
    return capture_info(0, stream, captureStatus_out, id_out, NULL, NULL, NULL);
}

XPRT_EXPORT cudaError_t cudaStreamGetCaptureInfo_ptsz(
    cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
    unsigned long long *id_out)
{
    return capture_info(1, stream, captureStatus_out, id_out, NULL, NULL, NULL);
}

XPRT_EXPORT cudaError_t cudaStreamGetCaptureInfo_v2(
    cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
    unsigned long long *id_out, cudaGraph_t *graph_out,
    const cudaGraphNode_t **dependencies_out, size_t *numDependencies_out)
{
    return capture_info(0, stream, captureStatus_out, id_out, graph_out, dependencies_out,
                        numDependencies_out);
}

XPRT_EXPORT cudaError_t cudaStreamGetCaptureInfo_v2_ptsz(
    cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
    unsigned long long *id_out, cudaGraph_t *graph_out,
    const cudaGraphNode_t **dependencies_out, size_t *numDependencies_out)
{
    return capture_info(1, stream, captureStatus_out, id_out, graph_out, dependencies_out,
                        numDependencies_out);
}

/* ---- unified memory: CUDA 12's plain names take a device ordinal ---------- */

/* The CUDA 13 definitions under their CUDA 12 _v2 names (rt_memory.c);
 * the headers declare the legacy-stream ones only. */
cudaError_t cudaMemPrefetchAsync_v2_ptsz(const void *devPtr, size_t count,
                                         struct cudaMemLocation location, unsigned int flags,
                                         cudaStream_t stream);

/* cudaCpuDeviceId means the host; any other value is a device ordinal. */
static struct cudaMemLocation location_of(int device)
{
    struct cudaMemLocation loc;
    memset(&loc, 0, sizeof loc);
    loc.type = device == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
    loc.id = device == cudaCpuDeviceId ? 0 : device;
    return loc;
}

XPRT_EXPORT cudaError_t cudaMemPrefetchAsync(const void *devPtr, size_t count, int dstDevice,
                                             cudaStream_t stream)
{
    return cudaMemPrefetchAsync_v2(devPtr, count, location_of(dstDevice), 0, stream);
}

XPRT_EXPORT cudaError_t cudaMemPrefetchAsync_ptsz(const void *devPtr, size_t count,
                                                  int dstDevice, cudaStream_t stream)
{
    return cudaMemPrefetchAsync_v2_ptsz(devPtr, count, location_of(dstDevice), 0, stream);
}

XPRT_EXPORT cudaError_t cudaMemAdvise(const void *devPtr, size_t count,
                                      enum cudaMemoryAdvise advice, int device)
{
    return cudaMemAdvise_v2(devPtr, count, advice, location_of(device));
}

/* ---- cudaMemcpyBatchAsync: CUDA 12.8 added it with a failIdx -------------- */

#if CUDART_VERSION < 12080
/* Older CUDA 12 headers (12.4's, torch's) declare neither; 12.8's prototype,
 * and its struct is CUDA 13's, which only the CUDA 13 code reads. */
struct cudaMemcpyAttributes;
XPRT_EXPORT cudaError_t cudaMemcpyBatchAsync(void **dsts, void **srcs, size_t *sizes,
                                             size_t count, struct cudaMemcpyAttributes *attrs,
                                             size_t *attrsIdxs, size_t numAttrs,
                                             size_t *failIdx, cudaStream_t stream);
XPRT_EXPORT cudaError_t cudaMemcpyBatchAsync_ptsz(void **dsts, void **srcs, size_t *sizes,
                                                  size_t count,
                                                  struct cudaMemcpyAttributes *attrs,
                                                  size_t *attrsIdxs, size_t numAttrs,
                                                  size_t *failIdx, cudaStream_t stream);
#endif

/* failIdx: SIZE_MAX on an error, which the simulator (as a driver that
 * checks the batch before any copy) never ties to one copy; untouched on
 * success, as NVIDIA documents it only for a failure. */
static cudaError_t batch12(int ptds, void **dsts, void **srcs, size_t *sizes, size_t count,
                           struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs,
                           size_t numAttrs, size_t *failIdx, cudaStream_t stream)
{
    cudaError_t e = (cudaError_t)xprt_memcpy_batch(ptds, dsts, (const void *const *)srcs, sizes,
                                                   count, attrs, attrsIdxs, numAttrs, stream);
    if (e != cudaSuccess && failIdx != NULL)
        *failIdx = SIZE_MAX;
    return e;
}

XPRT_EXPORT cudaError_t cudaMemcpyBatchAsync(void **dsts, void **srcs, size_t *sizes,
                                             size_t count, struct cudaMemcpyAttributes *attrs,
                                             size_t *attrsIdxs, size_t numAttrs,
                                             size_t *failIdx, cudaStream_t stream)
{
    return batch12(0, dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, stream);
}

XPRT_EXPORT cudaError_t cudaMemcpyBatchAsync_ptsz(void **dsts, void **srcs, size_t *sizes,
                                                  size_t count,
                                                  struct cudaMemcpyAttributes *attrs,
                                                  size_t *attrsIdxs, size_t numAttrs,
                                                  size_t *failIdx, cudaStream_t stream)
{
    return batch12(1, dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, stream);
}
