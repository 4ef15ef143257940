/* cap_vmm.c: the driver calls a training job makes besides plain copies,
 * reached the way PyTorch reaches them (cudaGetDriverEntryPointByVersion):
 * the virtual memory management of expandable segments (reserve, create,
 * map, copies into the mapped range, one unmap of two mappings, release,
 * address free, a failed create), a stream-ordered allocation from a pool,
 * cuMemAlloc looked up at CUDA 3.2's version, a 3D copy and managed-memory
 * prefetches (CUDA 13's form and CUDA 8's).  Prints every pointer, handle and
 * size test_vmm.py looks for. */
#include "cap_util.h"

#include <cuda.h>

#define GRAN ((size_t)2 << 20)   /* the simulator's VMM granularity */

#define CHECK_CU(call, expected)                                               \
    do {                                                                       \
        CUresult r_ = (call);                                                  \
        CHECK_MSG(r_ == (expected), "%s returned %d, expected %d", #call,     \
                  (int)r_, (int)(expected));                                   \
    } while (0)
#define CHECK_CU_OK(call) CHECK_CU(call, CUDA_SUCCESS)

static void *entry(const char *name, unsigned version)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult st = cudaDriverEntryPointSymbolNotFound;
    CHECK_OK(cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault, &st));
    CHECK_MSG(fn != NULL && st == cudaDriverEntryPointSuccess, "%s not found", name);
    return fn;
}

/* Typed from cuda.h's declaration of what the version hands out. */
#define GET(var, name, version, decl) \
    __typeof__(&decl) var = (__typeof__(&decl))entry(name, version)

/* CUDA 8's prefetch, which cuda.h declares only for the driver's own build. */
typedef CUresult (*prefetch_v1_fn)(CUdeviceptr, size_t, CUdevice, CUstream);

/* The host box of the 3D copy: DEPTH slices of SLICE_ROWS rows PITCH bytes
 * apart, of which HEIGHT rows of WIDTH bytes from (X, Y) are copied. */
enum { WIDTH = 50, HEIGHT = 4, DEPTH = 3, PITCH = 64, SLICE_ROWS = 5, X = 2, Y = 1 };

int main(void)
{
    CHECK_OK(cudaSetDevice(0));
    CHECK_OK(cudaFree(NULL));   /* the context */
    GET(pReserve, "cuMemAddressReserve", 13000, cuMemAddressReserve);
    GET(pAddrFree, "cuMemAddressFree", 13000, cuMemAddressFree);
    GET(pCreate, "cuMemCreate", 13000, cuMemCreate);
    GET(pRelease, "cuMemRelease", 13000, cuMemRelease);
    GET(pMap, "cuMemMap", 13000, cuMemMap);
    GET(pUnmap, "cuMemUnmap", 13000, cuMemUnmap);
    GET(pSetAccess, "cuMemSetAccess", 13000, cuMemSetAccess);
    GET(pHtoD, "cuMemcpyHtoD", 13000, cuMemcpyHtoD_v2);
    GET(pPool, "cuDeviceGetDefaultMemPool", 13000, cuDeviceGetDefaultMemPool);
    GET(pFromPool, "cuMemAllocFromPoolAsync", 13000, cuMemAllocFromPoolAsync);
    GET(pFreeAsync, "cuMemFreeAsync", 13000, cuMemFreeAsync);
    GET(pAlloc3020, "cuMemAlloc", 3020, cuMemAlloc_v2);
    GET(pFree, "cuMemFree", 13000, cuMemFree_v2);
    GET(pAllocPitch, "cuMemAllocPitch", 13000, cuMemAllocPitch_v2);
    GET(pCopy3D, "cuMemcpy3D", 13000, cuMemcpy3D_v2);
    GET(pAllocManaged, "cuMemAllocManaged", 13000, cuMemAllocManaged);
    GET(pPrefetch, "cuMemPrefetchAsync", 13000, cuMemPrefetchAsync_v2);
    prefetch_v1_fn pPrefetch8 = (prefetch_v1_fn)(uintptr_t)entry("cuMemPrefetchAsync", 8000);
    GET(pStreamSync, "cuStreamSynchronize", 13000, cuStreamSynchronize);

    /* ---- expandable segments ----------------------------------------- */
    CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
    CUdeviceptr va = 0, leaked_va = 0;
    CHECK_CU_OK(pReserve(&va, 3 * GRAN, 0, 0, 0));
    CHECK_CU_OK(pReserve(&leaked_va, GRAN, 0, 0, 0));
    CUmemGenericAllocationHandle h1 = 0, h2 = 0, bad = 0;
    CHECK_CU_OK(pCreate(&h1, GRAN, &prop, 0));
    CHECK_CU_OK(pCreate(&h2, 2 * GRAN, &prop, 0));
    CHECK_CU(pCreate(&bad, GRAN + 1, &prop, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU_OK(pMap(va, GRAN, 0, h1, 0));
    CHECK_CU_OK(pMap(va + GRAN, 2 * GRAN, 0, h2, 0));
    CUmemAccessDesc access = {.location = prop.location,
                              .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CHECK_CU_OK(pSetAccess(va, 3 * GRAN, &access, 1));
    CAP_PRINT("va", va);
    CAP_PRINT("leaked_va", leaked_va);
    CAP_PRINT("h1", h1);
    CAP_PRINT("h2", h2);

    unsigned char *pageable = malloc(GRAN);
    CHECK(pageable != NULL);
    memset(pageable, 0x5a, GRAN);
    void *pinned = NULL;
    CHECK_OK(cudaMallocHost(&pinned, 8192));
    memset(pinned, 0xa5, 8192);
    /* Into the first mapping from pageable memory (the runtime), into the
     * second from pinned memory (the driver), and back, kind Default: the
     * addresses alone say which side is the device's. */
    CHECK_OK(cudaMemcpy((void *)(uintptr_t)(va + 100), pageable, 5001, cudaMemcpyHostToDevice));
    CHECK_CU_OK(pHtoD(va + GRAN + 7, pinned, 5002));
    CHECK_OK(cudaMemcpy(pageable, (void *)(uintptr_t)(va + GRAN), 5003, cudaMemcpyDefault));
    CHECK(pageable[7] == 0xa5 && pageable[5002] == 0xa5);
    CAP_PRINT("pageable", pageable);
    CAP_PRINT("pinned", pinned);

    CHECK_CU_OK(pUnmap(va, 3 * GRAN));   /* both mappings at once */
    CHECK_CU_OK(pRelease(h1));
    CHECK_CU_OK(pRelease(h2));
    CHECK_CU_OK(pAddrFree(va, 3 * GRAN));

    /* ---- a pool allocation; cuMemAlloc at version 3020 ---------------- */
    cudaStream_t s;
    CHECK_OK(cudaStreamCreate(&s));
    CUmemoryPool pool;
    CHECK_CU_OK(pPool(&pool, 0));
    CUdeviceptr from_pool = 0;
    CHECK_CU_OK(pFromPool(&from_pool, 12345, pool, (CUstream)s));
    CHECK_CU_OK(pFreeAsync(from_pool, (CUstream)s));
    CAP_PRINT("from_pool", from_pool);
    CUdeviceptr d3020 = 0;
    CHECK_CU_OK(pAlloc3020(&d3020, 4096));
    CAP_PRINT("d3020", d3020);
    CHECK_CU_OK(pFree(d3020));

    /* ---- a 3D copy from a host box into pitched device memory ---------- */
    size_t box_bytes = (size_t)PITCH * SLICE_ROWS * DEPTH;
    unsigned char *box = malloc(box_bytes);
    CHECK(box != NULL);
    for (size_t i = 0; i < box_bytes; i++)
        box[i] = (unsigned char)(i * 7 + 3);
    CUdeviceptr pitched = 0;
    size_t dpitch = 0;
    CHECK_CU_OK(pAllocPitch(&pitched, &dpitch, WIDTH, HEIGHT * DEPTH, 4));
    CUDA_MEMCPY3D c3 = {.srcXInBytes = X, .srcY = Y, .srcMemoryType = CU_MEMORYTYPE_HOST,
                        .srcHost = box, .srcPitch = PITCH, .srcHeight = SLICE_ROWS,
                        .dstMemoryType = CU_MEMORYTYPE_DEVICE, .dstDevice = pitched,
                        .dstPitch = dpitch, .dstHeight = HEIGHT,
                        .WidthInBytes = WIDTH, .Height = HEIGHT, .Depth = DEPTH};
    CHECK_CU_OK(pCopy3D(&c3));
    printf("box3d %d %d %d %d %d %d %d\n", WIDTH, HEIGHT, DEPTH, PITCH, SLICE_ROWS, X, Y);
    CAP_PRINT("box", box);
    CAP_PRINT("pitched", pitched);
    CHECK_CU_OK(pFree(pitched));

    /* ---- managed memory prefetched to the device and back -------------- */
    CUdeviceptr m = 0;
    CHECK_CU_OK(pAllocManaged(&m, 1 << 16, CU_MEM_ATTACH_GLOBAL));
    CAP_PRINT("managed", m);
    CUmemLocation dev0 = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0};
    CUmemLocation host = {.type = CU_MEM_LOCATION_TYPE_HOST, .id = 0};
    CHECK_CU_OK(pPrefetch(m, 1 << 16, dev0, 0, (CUstream)s));
    CHECK_CU_OK(pPrefetch(m + 4096, 8192, host, 0, (CUstream)s));
    CHECK_CU_OK(pPrefetch8(m, 12288, 0, (CUstream)s));
    CHECK_CU_OK(pPrefetch8(m, 16384, CU_DEVICE_CPU, (CUstream)s));
    CHECK_CU_OK(pStreamSync((CUstream)s));
    CHECK_CU_OK(pFree(m));

    CHECK_OK(cudaStreamDestroy(s));
    CHECK_OK(cudaFreeHost(pinned));
    free(box);
    free(pageable);
    printf("done\n");
    return 0;
}
