/* rt_error.c: error mapping, last and sticky errors, cudaGetErrorName/String. */
#include "rt_internal.h"

#include <stdatomic.h>

static _Thread_local cudaError_t t_last_error = cudaSuccess;

/* A sticky error corrupts the device's context: every later call on it fails
 * with it, and cudaGetLastError reports it without clearing it, until
 * cudaDeviceReset.  Kept per process because the context is shared. */
static atomic_int g_sticky[XPSIM_MAX_DEVICES];

cudaError_t xprt_map_error(CUresult r)
{
    /* One place for the CUresult -> cudaError_t mapping.  CUDA 12 aligned the
     * two enums for every code the (simulated) driver produces, so the
     * mapping is the identity; a driver code the runtime enum lacks would be
     * meaningless to a program and becomes cudaErrorUnknown. */
    if (r == CUDA_SUCCESS)
        return cudaSuccess;
    if (xprt_error_enum_name((int)r) == NULL)
        return cudaErrorUnknown;
    return (cudaError_t)r;
}

bool xprt_is_sticky(cudaError_t e)
{
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
        return true;
    default:
        return false;
    }
}

cudaError_t xprt_result(cudaError_t e)
{
    /* cudaErrorNotReady "is not actually an error" (driver_types.h): the
     * answer of cudaStreamQuery, cudaEventQuery and cudaEventElapsedTime on
     * unfinished work leaves the last error alone. */
    if (e == cudaSuccess || e == cudaErrorNotReady)
        return e;
    t_last_error = e;
    if (xprt_is_sticky(e)) {
        int dev = xprt_current_device();
        if (dev >= 0 && dev < XPSIM_MAX_DEVICES)
            atomic_store_explicit(&g_sticky[dev], (int)e, memory_order_relaxed);
    }
    return e;
}

void xprt_clear_sticky(int dev)
{
    int sticky = atomic_exchange_explicit(&g_sticky[dev], 0, memory_order_relaxed);
    /* The calling thread's record of that same failure goes with it, so that
     * a program that resets after a fault starts clean. */
    if (sticky != 0 && (int)t_last_error == sticky)
        t_last_error = cudaSuccess;
}

static cudaError_t current_sticky(void)
{
    int dev = xprt_current_device();
    if (dev < 0 || dev >= XPSIM_MAX_DEVICES)
        return cudaSuccess;
    return (cudaError_t)atomic_load_explicit(&g_sticky[dev], memory_order_relaxed);
}

/* A runtime that could not initialize (no driver, no device) stays broken:
 * NVIDIA's cudaGetLastError initializes the runtime and then reports that
 * failure on every call without clearing it (checked against libcudart.so.13
 * on a machine without libcuda.so.1). */
XPRT_EXPORT cudaError_t cudaGetLastError(void)
{
    cudaError_t init = xprt_init();
    if (init != cudaSuccess)
        return init;
    cudaError_t sticky = current_sticky();
    if (sticky != cudaSuccess)
        return sticky;
    cudaError_t e = t_last_error;
    t_last_error = cudaSuccess;
    return e;
}

XPRT_EXPORT cudaError_t cudaPeekAtLastError(void)
{
    cudaError_t init = xprt_init();
    if (init != cudaSuccess)
        return init;
    cudaError_t sticky = current_sticky();
    if (sticky != cudaSuccess)
        return sticky;
    return t_last_error;
}

int xprt_unsupported(const char *name)
{
    xpsim_debug("cudart: %s is not supported by the simulator", name);
    t_last_error = cudaErrorNotSupported;
    return (int)cudaErrorNotSupported;
}

/* NVIDIA's descriptions of the codes programs meet most; any other code of
 * enum cudaError is described by its name. */
static const char *error_string(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInitializationError: return "initialization error";
    case cudaErrorCudartUnloading: return "driver shutting down";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidPitchValue: return "invalid pitch argument";
    case cudaErrorInvalidSymbol: return "invalid device symbol";
    case cudaErrorInvalidHostPointer: return "invalid host pointer";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorStubLibrary: return "CUDA driver is a stub library";
    case cudaErrorInsufficientDriver:
        return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorCallRequiresNewerDriver:
        return "API call is not supported in the installed CUDA driver";
    case cudaErrorMissingConfiguration: return "__global__ function call is not configured";
    case cudaErrorInvalidDeviceFunction: return "invalid device function";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorStartupFailure: return "startup failure in cuda runtime";
    case cudaErrorInvalidKernelImage: return "device kernel image is invalid";
    case cudaErrorDeviceUninitialized: return "invalid device context";
    case cudaErrorNoKernelImageForDevice:
        return "no kernel image is available for execution on the device";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorIllegalState: return "the operation cannot be performed in the present state";
    case cudaErrorSymbolNotFound: return "named symbol not found";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
    case cudaErrorLaunchTimeout: return "the launch timed out and was terminated";
    case cudaErrorPeerAccessAlreadyEnabled: return "peer access is already enabled";
    case cudaErrorPeerAccessNotEnabled: return "peer access has not been enabled";
    case cudaErrorContextIsDestroyed: return "context is destroyed";
    case cudaErrorAssert: return "device-side assert triggered";
    case cudaErrorHostMemoryAlreadyRegistered:
        return "part or all of the requested memory range is already mapped";
    case cudaErrorHostMemoryNotRegistered:
        return "pointer does not correspond to a registered memory region";
    case cudaErrorHardwareStackError: return "hardware stack error";
    case cudaErrorIllegalInstruction: return "an illegal instruction was encountered";
    case cudaErrorMisalignedAddress: return "misaligned address";
    case cudaErrorInvalidAddressSpace:
        return "operation not supported on global/shared address space";
    case cudaErrorInvalidPc: return "invalid program counter";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorNotPermitted: return "operation not permitted";
    case cudaErrorNotSupported: return "operation not supported";
    case cudaErrorTimeout: return "wait operation timed out";
    case cudaErrorUnknown: return "unknown error";
    default: return NULL;
    }
}

XPRT_EXPORT const char *cudaGetErrorName(cudaError_t error)
{
    const char *name = xprt_error_enum_name((int)error);
    return name != NULL ? name : "unrecognized error code";
}

XPRT_EXPORT const char *cudaGetErrorString(cudaError_t error)
{
    const char *name = xprt_error_enum_name((int)error);
    if (name == NULL)
        return "unrecognized error code";
    const char *s = error_string(error);
    return s != NULL ? s : name;
}
