/* The virtual memory management API through the driver, as PyTorch's expandable segments use it: granularity, physical allocations that count against the device, reserved address ranges, mappings that copies go through (also across adjacent mappings), access control, unmapping, release.  Needs XFERPROF_SIM_MEMORY=512M. */
#include "xpt_check.h"

#include <cuda.h>

#define CHECK_CU(call, expected)                                               \
    do {                                                                       \
        CUresult xpt_r_ = (call);                                              \
        CUresult xpt_w_ = (expected);                                          \
        if (xpt_r_ != xpt_w_)                                                  \
            XPT_FAIL("%s returned %d, expected %d", #call, (int)xpt_r_, (int)xpt_w_); \
    } while (0)
#define CHECK_CU_OK(call) CHECK_CU(call, CUDA_SUCCESS)

static __typeof__(&cuGetProcAddress_v2) p_gpa;

static void *sym(const char *base)
{
    void *fn = NULL;
    CUdriverProcAddressQueryResult st;
    CHECK_CU_OK(p_gpa(base, &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &st));
    CHECK_MSG(fn != NULL && st == CU_GET_PROC_ADDRESS_SUCCESS, "%s not resolved", base);
    return fn;
}

/* Typed from cuda.h's declarations (whose names map to the ABI the
 * simulator hands out for version 13000). */
#define GET(var, base, decl) __typeof__(&decl) var = (__typeof__(&decl))sym(base)

int main(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    CHECK_MSG(lib != NULL, "dlopen: %s", dlerror());
    p_gpa = (__typeof__(p_gpa))dlsym(lib, "cuGetProcAddress_v2");
    CHECK(p_gpa != NULL);
    GET(pInit, "cuInit", cuInit);
    GET(pRetain, "cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain);
    GET(pSetCurrent, "cuCtxSetCurrent", cuCtxSetCurrent);
    GET(pAttr, "cuDeviceGetAttribute", cuDeviceGetAttribute);
    GET(pGetInfo, "cuMemGetInfo", cuMemGetInfo_v2);
    GET(pAlloc, "cuMemAlloc", cuMemAlloc_v2);
    GET(pFree, "cuMemFree", cuMemFree_v2);
    GET(pHtoD, "cuMemcpyHtoD", cuMemcpyHtoD_v2);
    GET(pDtoH, "cuMemcpyDtoH", cuMemcpyDtoH_v2);
    GET(pDtoD, "cuMemcpyDtoD", cuMemcpyDtoD_v2);
    GET(pPtrAttr, "cuPointerGetAttribute", cuPointerGetAttribute);
    GET(pAddrRange, "cuMemGetAddressRange", cuMemGetAddressRange_v2);
    GET(pGran, "cuMemGetAllocationGranularity", cuMemGetAllocationGranularity);
    GET(pCreate, "cuMemCreate", cuMemCreate);
    GET(pRelease, "cuMemRelease", cuMemRelease);
    GET(pReserve, "cuMemAddressReserve", cuMemAddressReserve);
    GET(pAddrFree, "cuMemAddressFree", cuMemAddressFree);
    GET(pMap, "cuMemMap", cuMemMap);
    GET(pUnmap, "cuMemUnmap", cuMemUnmap);
    GET(pSetAccess, "cuMemSetAccess", cuMemSetAccess);
    GET(pGetAccess, "cuMemGetAccess", cuMemGetAccess);
    GET(pRetainHandle, "cuMemRetainAllocationHandle", cuMemRetainAllocationHandle);
    GET(pProps, "cuMemGetAllocationPropertiesFromHandle", cuMemGetAllocationPropertiesFromHandle);

    CHECK_CU_OK(pInit(0));
    CUcontext ctx;
    CHECK_CU_OK(pRetain(&ctx, 0));
    CHECK_CU_OK(pSetCurrent(ctx));
    int vmm = 0;
    CHECK_CU_OK(pAttr(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0));
    CHECK_EQ(vmm, 1);

    /* Granularity: 2 MiB, minimum and recommended; only real devices. */
    CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
    size_t g = 0, rec = 0;
    CHECK_CU_OK(pGran(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CHECK_CU_OK(pGran(&rec, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    CHECK_EQ(g, 2u << 20);
    CHECK_EQ(rec, 2u << 20);
    CUmemAllocationProp bad = prop;
    bad.location.id = 9;
    CHECK_CU(pGran(&g, &bad, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_ERROR_INVALID_DEVICE);

    size_t free0 = 0, total = 0, f = 0;
    CHECK_CU_OK(pGetInfo(&free0, &total));

    /* Physical memory counts against the device at cuMemCreate. */
    CUmemGenericAllocationHandle h1 = 0, h2 = 0;
    CHECK_CU(pCreate(&h1, g + 4096, &prop, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(pCreate(&h1, 1ull << 40, &prop, 0), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_CU_OK(pCreate(&h1, 2 * g, &prop, 0));
    CHECK_CU_OK(pCreate(&h2, 2 * g, &prop, 0));
    CHECK_CU_OK(pGetInfo(&f, &total));
    CHECK_EQ(f, free0 - 4 * g);
    CUmemAllocationProp got;
    CHECK_CU_OK(pProps(&got, h1));
    CHECK(got.type == CU_MEM_ALLOCATION_TYPE_PINNED && got.location.id == 0);

    /* A reservation: aligned, disjoint from device allocations, and not
     * memory until something is mapped there. */
    CUdeviceptr d = 0, va = 0;
    CHECK_CU_OK(pAlloc(&d, 1u << 20));
    CHECK_CU_OK(pReserve(&va, 8 * g, 0, 0, 0));
    CHECK(va != 0 && va % g == 0);
    CHECK(d + (1u << 20) <= va || va + 8 * g <= d);
    CHECK_CU_OK(pGetInfo(&f, &total));
    CHECK_EQ(f, free0 - 4 * g - (1u << 20));
    enum { SZ = 3u << 20 };
    unsigned char *src = malloc(8u << 20), *dst = malloc(8u << 20);
    CHECK(src && dst);
    xpt_fill(src, 8u << 20, 1);
    CHECK_CU(pHtoD(va, src, 4096), CUDA_ERROR_INVALID_VALUE);
    unsigned int mt = 0;
    CHECK_CU(pPtrAttr(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, va), CUDA_ERROR_INVALID_VALUE);
    unsigned int mapped = 1;
    CHECK_CU_OK(pPtrAttr(&mapped, CU_POINTER_ATTRIBUTE_MAPPED, va + g));
    CHECK_EQ(mapped, 0);
    CUdeviceptr range = 0;
    CHECK_CU_OK(pPtrAttr(&range, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, va + g));
    CHECK(range == va);

    /* Mapped but with no access granted yet: still no memory for copies. */
    CHECK_CU(pMap(va + 4096, 2 * g, 0, h1, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(pMap(va, 4 * g, 0, h1, 0), CUDA_ERROR_INVALID_VALUE);   /* larger than h1 */
    CHECK_CU_OK(pMap(va, 2 * g, 0, h1, 0));
    CHECK_CU(pMap(va + g, 2 * g, 0, h2, 0), CUDA_ERROR_INVALID_VALUE);   /* overlaps */
    CUmemLocation dev0 = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0};
    unsigned long long access = 99;
    CHECK_CU_OK(pGetAccess(&access, &dev0, va + 5));
    CHECK_EQ(access, CU_MEM_ACCESS_FLAGS_PROT_NONE);
    CHECK_CU(pHtoD(va, src, 4096), CUDA_ERROR_INVALID_VALUE);
    CUmemAccessDesc rw = {.location = dev0, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CHECK_CU(pSetAccess(va, 3 * g, &rw, 1), CUDA_ERROR_INVALID_VALUE);   /* past the mapping */
    CHECK_CU_OK(pSetAccess(va, 2 * g, &rw, 1));
    CHECK_CU_OK(pGetAccess(&access, &dev0, va + 2 * g - 1));
    CHECK_EQ(access, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);

    /* Now it is device memory of the mapping's extent. */
    CHECK_CU_OK(pPtrAttr(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, va + 100));
    CHECK_EQ(mt, CU_MEMORYTYPE_DEVICE);
    CHECK_CU_OK(pPtrAttr(&mapped, CU_POINTER_ATTRIBUTE_MAPPED, va + 100));
    CHECK_EQ(mapped, 1);
    CUdeviceptr base = 0;
    size_t size = 0;
    CHECK_CU_OK(pAddrRange(&base, &size, va + 12345));
    CHECK(base == va && size == 2 * g);
    CHECK_CU_OK(pHtoD(va + 100, src, SZ));
    memset(dst, 0, SZ);
    CHECK_CU_OK(pDtoH(dst, va + 100, SZ));
    CHECK_PATTERN(dst, SZ, 1);
    /* Not past the mapped bytes. */
    CHECK_CU(pHtoD(va + 2 * g - 100, src, 200), CUDA_ERROR_INVALID_VALUE);
    /* Device to device, both ways, with ordinary device memory. */
    CHECK_CU_OK(pDtoD(d, va + 100, 1u << 20));
    memset(dst, 0, 1u << 20);
    CHECK_CU_OK(pDtoH(dst, d, 1u << 20));
    CHECK_PATTERN(dst, 1u << 20, 1);
    /* cuMemFree is not how mapped memory goes. */
    CHECK_CU(pFree(va), CUDA_ERROR_INVALID_VALUE);

    /* A second allocation mapped right after the first: one stretch of
     * device memory, so a copy may cross from one into the other. */
    CHECK_CU_OK(pMap(va + 2 * g, 2 * g, 0, h2, 0));
    CHECK_CU_OK(pSetAccess(va + 2 * g, 2 * g, &rw, 1));
    CHECK_CU_OK(pHtoD(va, src, 4 * g));
    memset(dst, 0, 4 * g);
    CHECK_CU_OK(pDtoH(dst, va, 4 * g));
    CHECK_PATTERN(dst, 4 * g, 1);
    CHECK_CU_OK(pAddrRange(&base, &size, va + 3 * g));
    CHECK(base == va + 2 * g && size == 2 * g);
    CUdeviceptr start = 0;
    CHECK_CU_OK(pPtrAttr(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, va + 3 * g));
    CHECK(start == va + 2 * g);
    CUmemGenericAllocationHandle again = 0;
    CHECK_CU_OK(pRetainHandle(&again, (void *)(uintptr_t)(va + 3 * g + 7)));
    CHECK(again == h2);
    CHECK_CU_OK(pRelease(again));

    /* The bytes belong to the physical allocation: mapped elsewhere, h2
     * shows what was written through va + 2g. */
    CUdeviceptr va2 = 0;
    CHECK_CU_OK(pReserve(&va2, 2 * g, 0, 0, 0));
    CHECK(va2 + 2 * g <= va || va + 8 * g <= va2);
    CHECK_CU(pUnmap(va + 2 * g, g), CUDA_ERROR_INVALID_VALUE);   /* part of a mapping */
    CHECK_CU_OK(pUnmap(va + 2 * g, 2 * g));
    CHECK_CU(pHtoD(va + 2 * g, src, 4096), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU_OK(pMap(va2, 2 * g, 0, h2, 0));
    CHECK_CU_OK(pSetAccess(va2, 2 * g, &rw, 1));
    memset(dst, 0, 2 * g);
    CHECK_CU_OK(pDtoH(dst, va2, 2 * g));
    CHECK(memcmp(dst, src + 2 * g, 2 * g) == 0);

    /* Read-only access: copies may read, not write. */
    CUmemAccessDesc ro = {.location = dev0, .flags = CU_MEM_ACCESS_FLAGS_PROT_READ};
    CHECK_CU_OK(pSetAccess(va2, 2 * g, &ro, 1));
    CHECK_CU(pHtoD(va2, src, 4096), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU_OK(pDtoH(dst, va2, 4096));

    /* Released while mapped: the memory stays until the last unmap. */
    CHECK_CU_OK(pGetInfo(&f, &total));
    const size_t before = f;
    CHECK_CU_OK(pRelease(h1));
    CHECK_CU_OK(pGetInfo(&f, &total));
    CHECK_EQ(f, before);
    CHECK_CU_OK(pDtoH(dst, va, 4096));
    CHECK_PATTERN(dst, 4096, 1);
    CHECK_CU_OK(pUnmap(va, 2 * g));
    CHECK_CU_OK(pGetInfo(&f, &total));
    CHECK_EQ(f, before + 2 * g);
    CHECK_CU(pDtoH(dst, va, 4096), CUDA_ERROR_INVALID_VALUE);
    /* Unmapped first, released after: the memory comes back at the release. */
    CHECK_CU_OK(pUnmap(va2, 2 * g));
    CHECK_CU_OK(pGetInfo(&f, &total));
    CHECK_EQ(f, before + 2 * g);
    CHECK_CU_OK(pRelease(h2));
    CHECK_CU(pRelease(h2), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU_OK(pGetInfo(&f, &total));
    CHECK_EQ(f, before + 4 * g);

    /* Reservations are freed whole, once nothing is mapped in them. */
    CHECK_CU(pAddrFree(va, 4 * g), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU_OK(pAddrFree(va, 8 * g));
    CHECK_CU_OK(pAddrFree(va2, 2 * g));
    CHECK_CU(pAddrFree(va2, 2 * g), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU_OK(pFree(d));
    CHECK_CU_OK(pGetInfo(&f, &total));
    CHECK_EQ(f, free0);

    free(src);
    free(dst);
    dlclose(lib);
    return 0;
}
