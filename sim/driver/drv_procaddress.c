/* drv_procaddress.c: cuGetProcAddress, resolving a base name, a CUDA version
 * and the per-thread-default-stream flag to one exported variant. */
#include "xpsim_driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIM_DRIVER_VERSION 13000

/* Every entry point this library exports (implemented or stub), generated
 * into cuda_stubs.c in strcmp order. */
typedef struct xpsim_export {
    const char *name;
    void *fn;                 /* what the name resolves to in this library */
    void *stub;               /* its not-supported stand-in (NULL if none) */
} xpsim_export;
extern const xpsim_export xpdrv_exports[];
extern const unsigned xpdrv_exports_count;

/* The versioned variants the simulator implements, with the CUDA version
 * that introduced each ABI (what cudaVersion must reach to get it).  A base
 * name absent here resolves to its highest _vN export (a stub, mostly). */
typedef struct variant {
    const char *base;
    const char *symbol;
    int version;
} variant;

static const variant variants[] = {
    {"cuDeviceTotalMem", "cuDeviceTotalMem_v2", 3020},
    {"cuDeviceGetUuid", "cuDeviceGetUuid_v2", 11040},
    {"cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxRelease_v2", 11000},
    {"cuDevicePrimaryCtxReset", "cuDevicePrimaryCtxReset_v2", 11000},
    {"cuDevicePrimaryCtxSetFlags", "cuDevicePrimaryCtxSetFlags_v2", 11000},
    {"cuCtxPushCurrent", "cuCtxPushCurrent", 2000},
    {"cuCtxPushCurrent", "cuCtxPushCurrent_v2", 4000},
    {"cuCtxCreate", "cuCtxCreate", 2000},
    {"cuCtxCreate", "cuCtxCreate_v2", 3020},
    {"cuCtxCreate", "cuCtxCreate_v3", 11040},
    {"cuCtxCreate", "cuCtxCreate_v4", 12050},
    {"cuCtxDestroy", "cuCtxDestroy", 2000},
    {"cuCtxDestroy", "cuCtxDestroy_v2", 4000},
    {"cuIpcOpenMemHandle", "cuIpcOpenMemHandle", 4010},
    {"cuIpcOpenMemHandle", "cuIpcOpenMemHandle_v2", 11000},
    {"cuCtxSynchronize", "cuCtxSynchronize", 2000},
    {"cuCtxSynchronize", "cuCtxSynchronize_v2", 13000},
    {"cuCtxPopCurrent", "cuCtxPopCurrent", 2000},
    {"cuCtxPopCurrent", "cuCtxPopCurrent_v2", 4000},
    {"cuMemAlloc", "cuMemAlloc_v2", 3020},
    {"cuMemAllocPitch", "cuMemAllocPitch_v2", 3020},
    {"cuMemFree", "cuMemFree_v2", 3020},
    {"cuMemGetInfo", "cuMemGetInfo_v2", 3020},
    {"cuMemGetAddressRange", "cuMemGetAddressRange_v2", 3020},
    {"cuMemAllocHost", "cuMemAllocHost_v2", 3020},
    {"cuMemHostRegister", "cuMemHostRegister_v2", 6050},
    {"cuMemHostGetDevicePointer", "cuMemHostGetDevicePointer_v2", 3020},
    {"cuMemcpyHtoD", "cuMemcpyHtoD_v2", 3020},
    {"cuMemcpyDtoH", "cuMemcpyDtoH_v2", 3020},
    {"cuMemcpyDtoD", "cuMemcpyDtoD_v2", 3020},
    {"cuMemcpyHtoDAsync", "cuMemcpyHtoDAsync_v2", 3020},
    {"cuMemcpyDtoHAsync", "cuMemcpyDtoHAsync_v2", 3020},
    {"cuMemcpyDtoDAsync", "cuMemcpyDtoDAsync_v2", 3020},
    {"cuMemcpy2D", "cuMemcpy2D_v2", 3020},
    {"cuMemcpy2DUnaligned", "cuMemcpy2DUnaligned_v2", 3020},
    {"cuMemcpy2DAsync", "cuMemcpy2DAsync_v2", 3020},
    {"cuArrayCreate", "cuArrayCreate_v2", 3020},
    {"cuArray3DCreate", "cuArray3DCreate_v2", 3020},
    {"cuArrayGetDescriptor", "cuArrayGetDescriptor_v2", 3020},
    {"cuArray3DGetDescriptor", "cuArray3DGetDescriptor_v2", 3020},
    {"cuMemcpyHtoA", "cuMemcpyHtoA_v2", 3020},
    {"cuMemcpyAtoH", "cuMemcpyAtoH_v2", 3020},
    {"cuMemcpyHtoAAsync", "cuMemcpyHtoAAsync_v2", 3020},
    {"cuMemcpyAtoHAsync", "cuMemcpyAtoHAsync_v2", 3020},
    {"cuMemcpyDtoA", "cuMemcpyDtoA_v2", 3020},
    {"cuMemcpyAtoD", "cuMemcpyAtoD_v2", 3020},
    {"cuMemcpyAtoA", "cuMemcpyAtoA_v2", 3020},
    {"cuMemsetD8", "cuMemsetD8_v2", 3020},
    {"cuMemsetD16", "cuMemsetD16_v2", 3020},
    {"cuMemsetD32", "cuMemsetD32_v2", 3020},
    {"cuMemsetD2D8", "cuMemsetD2D8_v2", 3020},
    {"cuMemsetD2D16", "cuMemsetD2D16_v2", 3020},
    {"cuMemsetD2D32", "cuMemsetD2D32_v2", 3020},
    {"cuStreamDestroy", "cuStreamDestroy_v2", 4000},
    {"cuEventDestroy", "cuEventDestroy_v2", 4000},
    {"cuEventElapsedTime", "cuEventElapsedTime_v2", 12080},
    {"cuEventElapsedTime", "cuEventElapsedTime", 2000},
    {"cuGetProcAddress", "cuGetProcAddress_v2", 12000},
    {"cuGetProcAddress", "cuGetProcAddress", 11030},
    {"cuMemcpy3D", "cuMemcpy3D", 2000},
    {"cuMemcpy3D", "cuMemcpy3D_v2", 3020},
    {"cuMemcpy3DAsync", "cuMemcpy3DAsync", 2000},
    {"cuMemcpy3DAsync", "cuMemcpy3DAsync_v2", 3020},
    {"cuMemcpy3DPeer", "cuMemcpy3DPeer", 4000},
    {"cuMemcpy3DPeerAsync", "cuMemcpy3DPeerAsync", 4000},
    {"cuMemcpyBatchAsync", "cuMemcpyBatchAsync", 12080},
    {"cuMemcpyBatchAsync", "cuMemcpyBatchAsync_v2", 13000},
    {"cuMemPrefetchAsync", "cuMemPrefetchAsync", 8000},
    {"cuMemPrefetchAsync", "cuMemPrefetchAsync_v2", 12020},
    {"cuMemAdvise", "cuMemAdvise", 8000},
    {"cuMemAdvise", "cuMemAdvise_v2", 12020},
    {"cuMemAllocAsync", "cuMemAllocAsync", 11020},
    {"cuMemFreeAsync", "cuMemFreeAsync", 11020},
    {"cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync", 11020},
    {"cuDeviceGetDefaultMemPool", "cuDeviceGetDefaultMemPool", 11020},
    {"cuDeviceGetMemPool", "cuDeviceGetMemPool", 11020},
    {"cuDeviceSetMemPool", "cuDeviceSetMemPool", 11020},
    {"cuMemPoolSetAttribute", "cuMemPoolSetAttribute", 11020},
    {"cuMemPoolGetAttribute", "cuMemPoolGetAttribute", 11020},
    {"cuMemPoolTrimTo", "cuMemPoolTrimTo", 11020},
    {"cuMemGetDefaultMemPool", "cuMemGetDefaultMemPool", 13000},
    {"cuMemGetMemPool", "cuMemGetMemPool", 13000},
    {"cuMemAddressReserve", "cuMemAddressReserve", 10020},
    {"cuMemAddressFree", "cuMemAddressFree", 10020},
    {"cuMemCreate", "cuMemCreate", 10020},
    {"cuMemRelease", "cuMemRelease", 10020},
    {"cuMemMap", "cuMemMap", 10020},
    {"cuMemUnmap", "cuMemUnmap", 10020},
    {"cuMemSetAccess", "cuMemSetAccess", 10020},
    {"cuMemGetAccess", "cuMemGetAccess", 10020},
    {"cuMemGetAllocationGranularity", "cuMemGetAllocationGranularity", 10020},
    {"cuMemGetAllocationPropertiesFromHandle", "cuMemGetAllocationPropertiesFromHandle", 10020},
    {"cuMemRetainAllocationHandle", "cuMemRetainAllocationHandle", 11000},
    /* Graphs and stream capture: each older ABI stays reachable. */
    {"cuStreamBeginCapture", "cuStreamBeginCapture", 10000},
    {"cuStreamBeginCapture", "cuStreamBeginCapture_v2", 10010},
    {"cuStreamGetCaptureInfo", "cuStreamGetCaptureInfo", 10010},
    {"cuStreamGetCaptureInfo", "cuStreamGetCaptureInfo_v2", 11030},
    {"cuStreamGetCaptureInfo", "cuStreamGetCaptureInfo_v3", 12030},
    {"cuGraphInstantiate", "cuGraphInstantiate", 10000},
    {"cuGraphInstantiate", "cuGraphInstantiate_v2", 11000},
    {"cuGraphInstantiate", "cuGraphInstantiateWithFlags", 12000},
    {"cuGraphExecUpdate", "cuGraphExecUpdate", 10020},
    {"cuGraphExecUpdate", "cuGraphExecUpdate_v2", 12000},
    {"cuGraphAddKernelNode", "cuGraphAddKernelNode", 10000},
    {"cuGraphAddKernelNode", "cuGraphAddKernelNode_v2", 12000},
    {"cuGraphKernelNodeGetParams", "cuGraphKernelNodeGetParams", 10000},
    {"cuGraphKernelNodeGetParams", "cuGraphKernelNodeGetParams_v2", 12000},
    {"cuGraphKernelNodeSetParams", "cuGraphKernelNodeSetParams", 10000},
    {"cuGraphKernelNodeSetParams", "cuGraphKernelNodeSetParams_v2", 12000},
    {"cuGraphExecKernelNodeSetParams", "cuGraphExecKernelNodeSetParams", 10010},
    {"cuGraphExecKernelNodeSetParams", "cuGraphExecKernelNodeSetParams_v2", 12000},
};

/* Per-thread default stream variants exist from CUDA 7.0. */
#define PTDS_VERSION 7000

static const xpsim_export *find_export(const char *name)
{
    size_t lo = 0, hi = xpdrv_exports_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(xpdrv_exports[mid].name, name);
        if (c == 0)
            return &xpdrv_exports[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static void *export_address(const char *name)
{
    const xpsim_export *e = find_export(name);
    return e ? e->fn : NULL;
}

static bool implemented(const xpsim_export *e)
{
    return e->fn != e->stub;
}

/* The _ptds (synchronous APIs) or _ptsz (stream APIs) twin of symbol. */
static void *ptds_twin(const char *symbol, char *buf, size_t len)
{
    static const char *const suffixes[] = {"_ptds", "_ptsz"};
    for (size_t i = 0; i < 2; i++) {
        if ((size_t)snprintf(buf, len, "%s%s", symbol, suffixes[i]) >= len)
            return NULL;
        void *fn = export_address(buf);
        if (fn)
            return fn;
    }
    return NULL;
}

/* The variant of base to hand out when the table above says nothing: the
 * highest-numbered _vN the simulator implements, else the highest stub. */
static const char *latest_export(const char *base, char *buf, size_t len)
{
    const xpsim_export *plain = find_export(base);
    const char *best = plain ? base : NULL;
    int best_v = 1;
    bool best_real = plain && implemented(plain);
    size_t n = strlen(base);
    for (unsigned i = 0; i < xpdrv_exports_count; i++) {
        const xpsim_export *e = &xpdrv_exports[i];
        if (strncmp(e->name, base, n) != 0 || strncmp(e->name + n, "_v", 2) != 0)
            continue;
        char *end;
        long v = strtol(e->name + n + 2, &end, 10);
        if (*end != '\0')
            continue;
        bool real = implemented(e);
        if ((real && !best_real) || (real == best_real && v > best_v)) {
            best_v = (int)v;
            best_real = real;
            snprintf(buf, len, "%s", e->name);
            best = buf;
        }
    }
    return best;
}

static CUresult get_proc_address(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                 CUdriverProcAddressQueryResult *status)
{
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (symbol == NULL || pfn == NULL || cudaVersion > SIM_DRIVER_VERSION ||
        (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM |
                               CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)))
        return CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;

    /* Base names only: "cuMemAlloc", never "cuMemAlloc_v2". */
    const char *chosen = NULL;
    bool listed = false;
    int best_version = -1;
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
        if (strcmp(variants[i].base, symbol) != 0)
            continue;
        listed = true;
        if (variants[i].version <= cudaVersion && variants[i].version > best_version) {
            best_version = variants[i].version;
            chosen = variants[i].symbol;
        }
    }
    char buf[128];
    if (listed && chosen == NULL) {
        st = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    } else {
        if (!listed)
            chosen = latest_export(symbol, buf, sizeof buf);
        void *fn = chosen ? export_address(chosen) : NULL;
        if (fn != NULL) {
            char twin[160];
            void *pt = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) &&
                               cudaVersion >= PTDS_VERSION
                           ? ptds_twin(chosen, twin, sizeof twin)
                           : NULL;
            *pfn = pt ? pt : fn;
            st = CU_GET_PROC_ADDRESS_SUCCESS;
            xpsim_debug("cuGetProcAddress_v2(%s, %d, %#llx) -> %s", symbol, cudaVersion,
                        (unsigned long long)flags, pt ? twin : chosen);
        }
    }
    if (st != CU_GET_PROC_ADDRESS_SUCCESS)
        xpsim_debug("cuGetProcAddress_v2(%s, %d, %#llx) -> %s", symbol, cudaVersion,
                    (unsigned long long)flags,
                    st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT ? "version not sufficient"
                                                                     : "not found");
    if (status)
        *status = st;
    /* Not finding a symbol is a successful search (the docs: pfn is NULL). */
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                       cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
    return get_proc_address(symbol, pfn, cudaVersion, flags, symbolStatus);
}

/* The CUDA 11.3 form, without the status. */
#undef cuGetProcAddress
XPSIM_API CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);
XPSIM_API CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    return get_proc_address(symbol, pfn, cudaVersion, flags, NULL);
}

/* ---- cuGetExportTable ----------------------------------------------------- */

/* The libraries already told about (their load addresses), so that each is
 * named once however often it asks; owned by cuGetExportTable. */
static pthread_mutex_t g_told_lock = PTHREAD_MUTEX_INITIALIZER;
static const void *g_told[16];
static unsigned g_ntold;

static bool first_time_for(const void *base)
{
    bool first = true;
    pthread_mutex_lock(&g_told_lock);
    for (unsigned i = 0; i < g_ntold && first; i++)
        first = g_told[i] != base;
    if (first && g_ntold < sizeof g_told / sizeof g_told[0])
        g_told[g_ntold++] = base;
    pthread_mutex_unlock(&g_told_lock);
    return first;
}

/* NVIDIA's private interface: tables of undocumented functions behind UUIDs,
 * which the CUDA runtime linked statically into cuBLAS, cuDNN, NCCL, cuFFT
 * and the like needs before anything else. It cannot be simulated, and those
 * libraries then fail with a status of their own that names nothing
 * (PyTorch: "CUBLAS_STATUS_NOT_INITIALIZED when calling cublasCreate"), so the
 * simulator says on stderr, whatever XFERPROF_SIM_DEBUG says, which library
 * asked for which missing function. Never a crash: the call fails. */
XPSIM_API CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
    (void)pExportTableId;
    Dl_info info;
    const char *who = "a library";
    const void *base = NULL;
    if (dladdr(__builtin_return_address(0), &info) != 0 && info.dli_fname != NULL) {
        const char *slash = strrchr(info.dli_fname, '/');
        who = slash != NULL ? slash + 1 : info.dli_fname;
        base = info.dli_fbase;
    }
    if (first_time_for(base))
        xpsim_log_write("%s called cuGetExportTable, NVIDIA's private driver interface, which the "
                        "simulator does not have: %s cannot run on the simulator (nor can cuBLAS, "
                        "cuDNN, NCCL or any library with the CUDA runtime linked in statically); "
                        "the call fails with CUDA_ERROR_NOT_SUPPORTED", who, who);
    if (ppExportTable != NULL)
        *ppExportTable = NULL;
    return CUDA_ERROR_NOT_SUPPORTED;
}
