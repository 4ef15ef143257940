/* The driver API reached the way NVIDIA's runtime reaches it: dlopen("libcuda.so.1"), cuGetProcAddress_v2 for each entry point, then memory, copies and streams through those pointers. */
#include "xpt_check.h"

#include <cuda.h>
#include <unistd.h>

#define CHECK_CU(call, expected)                                               \
    do {                                                                       \
        CUresult xpt_r_ = (call);                                              \
        CUresult xpt_w_ = (expected);                                          \
        if (xpt_r_ != xpt_w_) {                                                \
            const char *xpt_n_ = NULL;                                         \
            if (p_cuGetErrorName)                                              \
                p_cuGetErrorName(xpt_r_, &xpt_n_);                             \
            XPT_FAIL("%s returned %d (%s), expected %d", #call, (int)xpt_r_,   \
                     xpt_n_ ? xpt_n_ : "?", (int)xpt_w_);                      \
        }                                                                      \
    } while (0)
#define CHECK_CU_OK(call) CHECK_CU(call, CUDA_SUCCESS)

/* Pointers typed from the declarations in cuda.h (which #define the base
 * names to the versioned symbols, hence the explicit _v2 spellings). */
static __typeof__(&cuGetProcAddress_v2) p_cuGetProcAddress;
static __typeof__(&cuGetErrorName) p_cuGetErrorName;

static void *handle;

/* Resolves through cuGetProcAddress_v2 and checks it agrees with the
 * library's own symbol table. */
static void *resolve(const char *base, cuuint64_t flags, const char *expect_symbol)
{
    void *fn = NULL;
    CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)-1;
    CHECK_CU_OK(p_cuGetProcAddress(base, &fn, 13000, flags, &st));
    CHECK_MSG(st == CU_GET_PROC_ADDRESS_SUCCESS, "%s: status %d", base, (int)st);
    CHECK_MSG(fn != NULL, "%s resolved to NULL", base);
    void *direct = dlsym(handle, expect_symbol);
    CHECK_MSG(direct != NULL, "libcuda.so.1 does not export %s", expect_symbol);
    CHECK_MSG(fn == direct, "cuGetProcAddress_v2(%s, flags %llu) is %p, dlsym(%s) is %p", base,
              (unsigned long long)flags, fn, expect_symbol, direct);
    return fn;
}

int main(void)
{
    handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    CHECK_MSG(handle != NULL, "dlopen(libcuda.so.1): %s", dlerror());
    p_cuGetProcAddress = (__typeof__(p_cuGetProcAddress))dlsym(handle, "cuGetProcAddress_v2");
    p_cuGetErrorName = (__typeof__(p_cuGetErrorName))dlsym(handle, "cuGetErrorName");
    CHECK(p_cuGetProcAddress != NULL && p_cuGetErrorName != NULL);

    /* It is the simulator's library that was found through LD_LIBRARY_PATH. */
    Dl_info info;
    CHECK(dladdr((void *)p_cuGetProcAddress, &info) && info.dli_fname);
    CHECK_MSG(xpt_file_is_sim(info.dli_fname), "libcuda.so.1 loaded from %s", info.dli_fname);

    /* Lookups work before cuInit, as the runtime relies on. */
    resolve("cuMemAlloc", CU_GET_PROC_ADDRESS_DEFAULT, "cuMemAlloc_v2");
    resolve("cuMemcpyHtoD", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuMemcpyHtoD_v2_ptds");
    resolve("cuMemcpyHtoD", CU_GET_PROC_ADDRESS_DEFAULT, "cuMemcpyHtoD_v2");
    resolve("cuMemcpyHtoD", CU_GET_PROC_ADDRESS_LEGACY_STREAM, "cuMemcpyHtoD_v2");
    resolve("cuMemcpyHtoDAsync", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
            "cuMemcpyHtoDAsync_v2_ptsz");
    resolve("cuStreamSynchronize", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
            "cuStreamSynchronize_ptsz");
    /* A function with no per-thread twin gives the plain one under that flag. */
    resolve("cuMemFree", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuMemFree_v2");
    resolve("cuInit", CU_GET_PROC_ADDRESS_DEFAULT, "cuInit");
    /* Stream-ordered allocation, 3D copies, prefetching and batches: the
     * newest ABI, and its per-thread twin under the flag. */
    resolve("cuMemAllocAsync", CU_GET_PROC_ADDRESS_DEFAULT, "cuMemAllocAsync");
    resolve("cuMemAllocAsync", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuMemAllocAsync_ptsz");
    resolve("cuMemFreeAsync", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuMemFreeAsync_ptsz");
    resolve("cuMemAllocFromPoolAsync", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
            "cuMemAllocFromPoolAsync_ptsz");
    resolve("cuDeviceGetDefaultMemPool", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
            "cuDeviceGetDefaultMemPool");
    resolve("cuMemPoolSetAttribute", CU_GET_PROC_ADDRESS_DEFAULT, "cuMemPoolSetAttribute");
    resolve("cuMemcpy3D", CU_GET_PROC_ADDRESS_DEFAULT, "cuMemcpy3D_v2");
    resolve("cuMemcpy3D", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuMemcpy3D_v2_ptds");
    resolve("cuMemcpy3DAsync", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
            "cuMemcpy3DAsync_v2_ptsz");
    resolve("cuMemcpy3DPeer", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuMemcpy3DPeer_ptds");
    resolve("cuMemPrefetchAsync", CU_GET_PROC_ADDRESS_DEFAULT, "cuMemPrefetchAsync_v2");
    resolve("cuMemPrefetchAsync", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
            "cuMemPrefetchAsync_v2_ptsz");
    resolve("cuMemAdvise", CU_GET_PROC_ADDRESS_DEFAULT, "cuMemAdvise_v2");
    resolve("cuMemcpyBatchAsync", CU_GET_PROC_ADDRESS_DEFAULT, "cuMemcpyBatchAsync_v2");
    resolve("cuMemcpyBatchAsync", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
            "cuMemcpyBatchAsync_v2_ptsz");
    resolve("cuMemCreate", CU_GET_PROC_ADDRESS_DEFAULT, "cuMemCreate");
    resolve("cuMemMap", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuMemMap");
    resolve("cuMemAddressReserve", CU_GET_PROC_ADDRESS_DEFAULT, "cuMemAddressReserve");
    resolve("cuMemRetainAllocationHandle", CU_GET_PROC_ADDRESS_DEFAULT,
            "cuMemRetainAllocationHandle");
    {
        /* Older versions get the older ABIs, or nothing before the API
         * existed. */
        void *old_fn = NULL;
        CUdriverProcAddressQueryResult old_st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        CHECK_CU_OK(p_cuGetProcAddress("cuMemPrefetchAsync", &old_fn, 12000,
                                       CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &old_st));
        CHECK(old_st == CU_GET_PROC_ADDRESS_SUCCESS &&
              old_fn == dlsym(handle, "cuMemPrefetchAsync_ptsz"));
        CHECK_CU_OK(p_cuGetProcAddress("cuMemcpyBatchAsync", &old_fn, 12080, 0, &old_st));
        CHECK(old_st == CU_GET_PROC_ADDRESS_SUCCESS && old_fn == dlsym(handle, "cuMemcpyBatchAsync"));
        CHECK_CU_OK(p_cuGetProcAddress("cuMemAllocAsync", &old_fn, 11000, 0, &old_st));
        CHECK_EQ(old_st, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
        CHECK(old_fn == NULL);
        CHECK_CU_OK(p_cuGetProcAddress("cuMemCreate", &old_fn, 10010, 0, &old_st));
        CHECK_EQ(old_st, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    }

    /* An unknown name: not found, pfn cleared.  NVIDIA's header documents
     * CUDA_SUCCESS with pfn NULL; drivers have been seen to return
     * CUDA_ERROR_NOT_FOUND.  Either, but the status must say not found. */
    void *fn = (void *)&main;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
    CUresult rc = p_cuGetProcAddress("cuNoSuchFunction", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT,
                                     &st);
    CHECK_MSG(rc == CUDA_SUCCESS || rc == CUDA_ERROR_NOT_FOUND, "unknown name: returned %d",
              (int)rc);
    CHECK(fn == NULL);
    CHECK_EQ(st, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    /* Asking for a version newer than the driver is invalid. */
    CHECK_CU(p_cuGetProcAddress("cuMemAlloc", &fn, 99000, 0, &st), CUDA_ERROR_INVALID_VALUE);

    /* Everything below goes through pointers cuGetProcAddress gave. */
#define GET(var, name, sym)                                                    \
    __typeof__(&sym) var = (__typeof__(&sym))resolve(name, CU_GET_PROC_ADDRESS_DEFAULT, #sym)
    GET(pInit, "cuInit", cuInit);
    GET(pDriverGetVersion, "cuDriverGetVersion", cuDriverGetVersion);
    GET(pDeviceGetCount, "cuDeviceGetCount", cuDeviceGetCount);
    GET(pDeviceGet, "cuDeviceGet", cuDeviceGet);
    GET(pCtxRetain, "cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain);
    GET(pCtxRelease, "cuDevicePrimaryCtxRelease", cuDevicePrimaryCtxRelease_v2);
    GET(pCtxSetCurrent, "cuCtxSetCurrent", cuCtxSetCurrent);
    GET(pCtxGetCurrent, "cuCtxGetCurrent", cuCtxGetCurrent);
    GET(pMemAlloc, "cuMemAlloc", cuMemAlloc_v2);
    GET(pMemFree, "cuMemFree", cuMemFree_v2);
    GET(pHtoD, "cuMemcpyHtoD", cuMemcpyHtoD_v2);
    GET(pDtoH, "cuMemcpyDtoH", cuMemcpyDtoH_v2);
    GET(pHtoDAsync, "cuMemcpyHtoDAsync", cuMemcpyHtoDAsync_v2);
    GET(pAllocHost, "cuMemAllocHost", cuMemAllocHost_v2);
    GET(pFreeHost, "cuMemFreeHost", cuMemFreeHost);
    GET(pHostAlloc, "cuMemHostAlloc", cuMemHostAlloc);
    GET(pHostRegister, "cuMemHostRegister", cuMemHostRegister_v2);
    GET(pHostUnregister, "cuMemHostUnregister", cuMemHostUnregister);
    GET(pPointerGetAttribute, "cuPointerGetAttribute", cuPointerGetAttribute);
    GET(pStreamCreate, "cuStreamCreate", cuStreamCreate);
    GET(pStreamSync, "cuStreamSynchronize", cuStreamSynchronize);
    GET(pStreamDestroy, "cuStreamDestroy", cuStreamDestroy_v2);
#undef GET

    /* Before cuInit the driver refuses work. */
    int count = -1;
    CHECK_CU(pDeviceGetCount(&count), CUDA_ERROR_NOT_INITIALIZED);
    int version = 0;
    CHECK_CU_OK(pDriverGetVersion(&version));   /* allowed before cuInit */
    CHECK_MSG(version >= 13000, "driver version %d", version);

    CHECK_CU_OK(pInit(0));
    CHECK_CU_OK(pDeviceGetCount(&count));
    CHECK(count >= 1);
    CUdevice dev = -1;
    CHECK_CU_OK(pDeviceGet(&dev, 0));
    CHECK_CU(pDeviceGet(&dev, count), CUDA_ERROR_INVALID_DEVICE);
    CHECK_CU_OK(pDeviceGet(&dev, 0));

    /* No context is current yet: allocation needs one. */
    CUdeviceptr dptr = 0;
    CUcontext cur = (CUcontext)&handle;
    CHECK_CU_OK(pCtxGetCurrent(&cur));
    CHECK(cur == NULL);
    CHECK_CU(pMemAlloc(&dptr, 4096), CUDA_ERROR_INVALID_CONTEXT);

    CUcontext ctx = NULL;
    CHECK_CU_OK(pCtxRetain(&ctx, dev));
    CHECK(ctx != NULL);
    CHECK_CU_OK(pCtxSetCurrent(ctx));
    CHECK_CU_OK(pCtxGetCurrent(&cur));
    CHECK(cur == ctx);

    enum { SZ = 1 << 16 };
    unsigned char src[SZ], dst[SZ];
    CHECK_CU_OK(pMemAlloc(&dptr, SZ));
    CHECK(dptr != 0 && dptr % 256 == 0);
    xpt_fill(src, SZ, 1);
    memset(dst, 0, SZ);
    CHECK_CU_OK(pHtoD(dptr, src, SZ));
    CHECK_CU_OK(pDtoH(dst, dptr, SZ));
    CHECK_PATTERN(dst, SZ, 1);

    /* Host memory kinds as the driver reports them. */
    void *ph = NULL, *pha = NULL, *reg = NULL;
    CHECK_CU_OK(pAllocHost(&ph, SZ));
    CHECK_CU_OK(pHostAlloc(&pha, SZ, CU_MEMHOSTALLOC_PORTABLE));
    CHECK(posix_memalign(&reg, (size_t)sysconf(_SC_PAGESIZE), SZ) == 0);
    CHECK_CU_OK(pHostRegister(reg, SZ, 0));
    CHECK_CU(pHostRegister(reg, SZ, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);

    unsigned int mt = 0;
    CHECK_CU_OK(pPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dptr));
    CHECK_EQ(mt, CU_MEMORYTYPE_DEVICE);
    CHECK_CU_OK(pPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)ph));
    CHECK_EQ(mt, CU_MEMORYTYPE_HOST);
    CHECK_CU_OK(pPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)pha));
    CHECK_EQ(mt, CU_MEMORYTYPE_HOST);
    CHECK_CU_OK(pPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                     (CUdeviceptr)reg + 100));
    CHECK_EQ(mt, CU_MEMORYTYPE_HOST);
    /* The driver, unlike the runtime, calls plain host memory invalid. */
    CHECK_CU(pPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)src),
             CUDA_ERROR_INVALID_VALUE);

    /* An async copy from pinned memory, completed by a stream synchronize. */
    CUstream s = NULL;
    CHECK_CU_OK(pStreamCreate(&s, CU_STREAM_DEFAULT));
    xpt_fill(ph, SZ, 2);
    CHECK_CU_OK(pHtoDAsync(dptr, ph, SZ, s));
    CHECK_CU_OK(pStreamSync(s));
    memset(dst, 0, SZ);
    CHECK_CU_OK(pDtoH(dst, dptr, SZ));
    CHECK_PATTERN(dst, SZ, 2);
    /* Registered memory as a copy source. */
    xpt_fill(reg, SZ, 3);
    CHECK_CU_OK(pHtoDAsync(dptr, reg, SZ, s));
    CHECK_CU_OK(pStreamSync(s));
    CHECK_CU_OK(pDtoH(dst, dptr, SZ));
    CHECK_PATTERN(dst, SZ, 3);
    CHECK_CU_OK(pStreamDestroy(s));

    CHECK_CU_OK(pMemFree(dptr));
    CHECK_CU(pMemFree(dptr), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU_OK(pHostUnregister(reg));
    CHECK_CU(pHostUnregister(reg), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    CHECK_CU_OK(pFreeHost(ph));
    CHECK_CU_OK(pFreeHost(pha));
    free(reg);

    const char *name = NULL;
    CHECK_CU_OK(p_cuGetErrorName(CUDA_ERROR_INVALID_VALUE, &name));
    CHECK(name && strcmp(name, "CUDA_ERROR_INVALID_VALUE") == 0);
    CHECK_CU_OK(p_cuGetErrorName(CUDA_ERROR_NOT_INITIALIZED, &name));
    CHECK(name && strcmp(name, "CUDA_ERROR_NOT_INITIALIZED") == 0);
    CHECK_CU(p_cuGetErrorName((CUresult)12345, &name), CUDA_ERROR_INVALID_VALUE);

    CHECK_CU_OK(pCtxRelease(dev));
    dlclose(handle);
    return 0;
}
