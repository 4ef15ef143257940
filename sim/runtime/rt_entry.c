/* rt_entry.c: driver entry points for programs, profiler switch, driverless exports. */
#include "rt_internal.h"

static cudaError_t entry_point(const char *symbol, void **funcPtr, unsigned int cudaVersion,
                               unsigned long long flags,
                               enum cudaDriverEntryPointQueryResult *driverStatus, bool ptsz,
                               bool by_version)
{
    const unsigned long long known = cudaEnableLegacyStream | cudaEnablePerThreadDefaultStream;
    if (symbol == NULL || funcPtr == NULL || (flags & ~known) != 0)
        return xprt_result(cudaErrorInvalidValue);
    cudaError_t e = xprt_init();
    if (e != cudaSuccess)
        return xprt_result(e);
    /* cudaEnableDefault means what the caller was compiled for: the _ptsz
     * entry point is what per-thread-default-stream code calls. */
    cuuint64_t cu_flags;
    if (flags == cudaEnableDefault)
        cu_flags = ptsz ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
                        : CU_GET_PROC_ADDRESS_DEFAULT;
    else
        cu_flags = flags & cudaEnablePerThreadDefaultStream
                       ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
                       : CU_GET_PROC_ADDRESS_LEGACY_STREAM;
    if (by_version) {
        /* Documented: a version above the driver's is an invalid value. */
        const xprt_drv *d = xprt_table(XPRT_LEGACY);
        int driver_version = 0;
        if (XPRT_CALL(d, cuDriverGetVersion, &driver_version) == CUDA_SUCCESS &&
            cudaVersion > (unsigned)driver_version)
            return xprt_result(cudaErrorInvalidValue);
    } else {
        /* The deprecated form asks for the runtime's own version. */
        cudaVersion = XPRT_RUNTIME_VERSION;
    }
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    void *pfn = NULL;
    CUresult r = xprt_get_proc_address()(symbol, &pfn, (int)cudaVersion, cu_flags, &status);
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_FOUND)
        return xprt_result_cu(r);
    /* Not found is not an error: NULL and the reason in driverStatus.  The
     * two status enums share their values. */
    if (r != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS) {
        pfn = NULL;
        if (status == CU_GET_PROC_ADDRESS_SUCCESS)
            status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    }
    *funcPtr = pfn;
    if (driverStatus != NULL)
        *driverStatus = (enum cudaDriverEntryPointQueryResult)status;
    return cudaSuccess;
}

XPRT_EXPORT cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr,
                                                unsigned long long flags,
                                                enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return entry_point(symbol, funcPtr, 0, flags, driverStatus, false, false);
}

XPRT_EXPORT cudaError_t cudaGetDriverEntryPoint_ptsz(
    const char *symbol, void **funcPtr, unsigned long long flags,
    enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return entry_point(symbol, funcPtr, 0, flags, driverStatus, true, false);
}

XPRT_EXPORT cudaError_t cudaGetDriverEntryPointByVersion(
    const char *symbol, void **funcPtr, unsigned int cudaVersion, unsigned long long flags,
    enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return entry_point(symbol, funcPtr, cudaVersion, flags, driverStatus, false, true);
}

XPRT_EXPORT cudaError_t cudaGetDriverEntryPointByVersion_ptsz(
    const char *symbol, void **funcPtr, unsigned int cudaVersion, unsigned long long flags,
    enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return entry_point(symbol, funcPtr, cudaVersion, flags, driverStatus, true, true);
}

/* The simulator has no profiler of its own to start (the profiler under test
 * observes it from outside), so these only initialize, as NVIDIA's do: they
 * fail without a driver. */
XPRT_EXPORT cudaError_t cudaProfilerStart(void)
{
    return xprt_result(xprt_init());
}

XPRT_EXPORT cudaError_t cudaProfilerStop(void)
{
    return xprt_result(xprt_init());
}

/* Returns a struct (by hidden pointer on x86-64), so no int-returning stub
 * could stand in for it. */
XPRT_EXPORT struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w,
                                                               enum cudaChannelFormatKind f)
{
    return (struct cudaChannelFormatDesc){.x = x, .y = y, .z = z, .w = w, .f = f};
}

/* Undocumented; NVIDIA's libcudart.so.13 implements it as "return 0". */
XPRT_EXPORT void *__cudaGetProcAddress(void)
{
    return NULL;
}
