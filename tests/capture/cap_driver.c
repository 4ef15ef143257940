/* cap_driver.c: driver-API copies reached every way a program (or a library
 * in it) reaches the driver: (a) symbols linked against libcuda, (b)
 * dlopen("libcuda.so.1") + dlsym (and RTLD_NEXT, RTLD_DEFAULT), (c)
 * cuGetProcAddress_v2 and the CUDA 11.3 cuGetProcAddress.  Every copy has its
 * own size (the section's number x 1000 + its own), so test_driver.py can
 * tell each one's row; built a second
 * time with -DCUDA_API_PER_THREAD_DEFAULT_STREAM, where the linked calls of
 * (a) become their _ptds/_ptsz variants.  It prints every result code and
 * what it read back, so the output with and without the profiler can be
 * compared. */
#include "cap_util.h"

#include <cuda.h>

#define BUF (1u << 16)

static int failures;

#define CHECK_CU(call, expected)                                               \
    do {                                                                       \
        CUresult r_ = (call);                                                  \
        printf("%s -> %d\n", #call, (int)r_);                                  \
        if (r_ != (expected)) {                                                \
            fprintf(stderr, "%s:%d: %s returned %d, expected %d\n", __FILE__,  \
                    __LINE__, #call, (int)r_, (int)(expected));                \
            failures++;                                                        \
        }                                                                      \
    } while (0)
#define CHECK_CU_OK(call) CHECK_CU(call, CUDA_SUCCESS)

typedef CUresult (*htod_fn)(CUdeviceptr, const void *, size_t);
typedef CUresult (*dtoh_fn)(void *, CUdeviceptr, size_t);
typedef CUresult (*dtod_fn)(CUdeviceptr, CUdeviceptr, size_t);
typedef CUresult (*dtoh_async_fn)(void *, CUdeviceptr, size_t, CUstream);
typedef CUresult (*sync_fn)(CUstream);
typedef CUresult (*unified_fn)(CUdeviceptr, CUdeviceptr, size_t);
typedef CUresult (*gpa_v2_fn)(const char *, void **, int, cuuint64_t,
                              CUdriverProcAddressQueryResult *);
typedef CUresult (*gpa_fn)(const char *, void **, int, cuuint64_t);

/* A data pointer to a function pointer (POSIX: same representation). */
#define AS_FN(type, p) ((type)(uintptr_t)(p))

static void *get_v2(gpa_v2_fn gpa, const char *name, int version, cuuint64_t flags)
{
    void *fn = NULL;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult r = gpa(name, &fn, version, flags, &st);
    printf("cuGetProcAddress_v2(%s, %d, %llu) -> %d status %d found %d\n", name, version,
           (unsigned long long)flags, (int)r, (int)st, fn != NULL);
    if (r != CUDA_SUCCESS || fn == NULL)
        failures++;
    return fn;
}

/* Fills, uploads, reads back and compares: the copies must really happen. */
static void expect_bytes(const unsigned char *p, size_t n, unsigned char v, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != v) {
            printf("%s: byte %zu is %u, expected %u\n", what, i, p[i], v);
            failures++;
            return;
        }
    printf("%s: %zu bytes ok\n", what, n);
}

/* (a) Linked symbols (cuda.h's macros pick the variant: _v2, and _ptds /
 * _ptsz under CUDA_API_PER_THREAD_DEFAULT_STREAM). */
__attribute__((noinline)) static void linked(CUdeviceptr d, CUdeviceptr d2, unsigned char *host,
                                             unsigned char *pinned, CUstream stream)
{
    memset(host, 1, BUF);
    CHECK_CU_OK(cuMemcpyHtoD(d, host, 1001));
    memset(pinned, 2, BUF);
    CHECK_CU_OK(cuMemcpyHtoD(d, pinned, 1002));
    memset(host, 0, BUF);
    CHECK_CU_OK(cuMemcpyDtoH(host, d, 1003));
    expect_bytes(host, 1002, 2, "linked DtoH");
    CHECK_CU_OK(cuMemcpyDtoD(d2, d, 1004));
    /* The per-thread default stream (in the _ptds build) is not ordered
     * with the program's stream: the context synchronizations keep the two
     * streams' work on the same buffers apart. */
    CHECK_CU_OK(cuCtxSynchronize());
    CHECK_CU_OK(cuMemcpyHtoDAsync(d, pinned, 1005, stream));
    CHECK_CU_OK(cuMemcpyDtoHAsync(pinned, d2, 1006, stream));
    CHECK_CU_OK(cuStreamSynchronize(stream));
    CHECK_CU_OK(cuMemcpy(d2, (CUdeviceptr)(uintptr_t)host, 1007));   /* unified: H2D */
    CHECK_CU_OK(cuCtxSynchronize());
    CHECK_CU_OK(cuMemcpyAsync((CUdeviceptr)(uintptr_t)pinned, d2, 1008, stream));
    CHECK_CU_OK(cuStreamSynchronize(stream));
    CUDA_MEMCPY2D m = {0};
    m.srcMemoryType = CU_MEMORYTYPE_HOST;
    m.srcHost = host;
    m.srcPitch = 200;
    m.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    m.dstDevice = d;
    m.dstPitch = 512;
    m.WidthInBytes = 109;   /* 109 x 10 = 1090 bytes */
    m.Height = 10;
    CHECK_CU_OK(cuMemcpy2D(&m));
    CHECK_CU_OK(cuMemsetD8(d, 0x5a, 1011));
    CHECK_CU_OK(cuCtxSynchronize());
    CHECK_CU_OK(cuMemsetD32Async(d, 0x01020304u, 253, stream));   /* 1012 bytes */
    CHECK_CU_OK(cuStreamSynchronize(stream));
    CHECK_CU_OK(cuCtxSynchronize());
    /* Failures keep their codes, and are recorded. */
    CHECK_CU(cuMemcpyHtoD(d + BUF - 10, host, 1013), CUDA_ERROR_INVALID_VALUE);
}

/* (b) dlopen + dlsym: each variant by its exported name. */
__attribute__((noinline)) static void looked_up(void *lib, CUdeviceptr d, unsigned char *host)
{
    htod_fn htod = AS_FN(htod_fn, dlsym(lib, "cuMemcpyHtoD_v2"));
    dtoh_fn dtoh = AS_FN(dtoh_fn, dlsym(lib, "cuMemcpyDtoH_v2"));
    htod_fn htod_ptds = AS_FN(htod_fn, dlsym(lib, "cuMemcpyHtoD_v2_ptds"));
    printf("dlsym found %d %d %d\n", htod != NULL, dtoh != NULL, htod_ptds != NULL);
    if (!htod || !dtoh || !htod_ptds) {
        failures++;
        return;
    }
    memset(host, 3, BUF);
    CHECK_CU_OK(htod(d, host, 2001));
    memset(host, 0, BUF);
    CHECK_CU_OK(dtoh(host, d, 2002));
    expect_bytes(host, 2001, 3, "dlsym DtoH");
    CHECK_CU_OK(htod_ptds(d, host, 2003));
    /* The global scope (libcuda is linked): the next definition after the
     * program, and the first one. */
    dtoh_fn next = AS_FN(dtoh_fn, dlsym(RTLD_NEXT, "cuMemcpyDtoH_v2"));
    htod_fn first = AS_FN(htod_fn, dlsym(RTLD_DEFAULT, "cuMemcpyHtoD_v2"));
    printf("RTLD_NEXT/RTLD_DEFAULT found %d %d\n", next != NULL, first != NULL);
    if (next)
        CHECK_CU_OK(next(host, d, 2004));
    if (first)
        CHECK_CU_OK(first(d, host, 2005));
    /* A name the driver does not have: NULL, as without the profiler. */
    printf("dlsym(cuNoSuchFunction) %d\n", dlsym(lib, "cuNoSuchFunction") != NULL);
}

/* (c) cuGetProcAddress: base names, a version and the flags pick the variant. */
__attribute__((noinline)) static void proc_address(void *lib, CUdeviceptr d, CUdeviceptr d2,
                                                   unsigned char *pinned, CUstream stream)
{
    gpa_v2_fn gpa = AS_FN(gpa_v2_fn, dlsym(lib, "cuGetProcAddress_v2"));
    gpa_fn gpa_old = AS_FN(gpa_fn, dlsym(lib, "cuGetProcAddress"));
    if (gpa == NULL || gpa_old == NULL) {
        printf("no cuGetProcAddress\n");
        failures++;
        return;
    }
    htod_fn htod = AS_FN(htod_fn, get_v2(gpa, "cuMemcpyHtoD", 13000, CU_GET_PROC_ADDRESS_DEFAULT));
    htod_fn htod_pt = AS_FN(htod_fn, get_v2(gpa, "cuMemcpyHtoD", 13000,
                                            CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM));
    dtoh_async_fn dtoh_async_pt =
        AS_FN(dtoh_async_fn, get_v2(gpa, "cuMemcpyDtoHAsync", 13000,
                                    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM));
    sync_fn sync_pt = AS_FN(sync_fn, get_v2(gpa, "cuStreamSynchronize", 13000,
                                            CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM));
    /* The lookup handed out by the lookup. */
    gpa_v2_fn gpa2 = AS_FN(gpa_v2_fn, get_v2(gpa, "cuGetProcAddress", 13000,
                                             CU_GET_PROC_ADDRESS_DEFAULT));
    if (!htod || !htod_pt || !dtoh_async_pt || !sync_pt || !gpa2)
        return;
    memset(pinned, 4, BUF);
    CHECK_CU_OK(htod(d, pinned, 3001));
    CHECK_CU_OK(htod_pt(d, pinned, 3002));
    CHECK_CU_OK(cuCtxSynchronize());   /* as in linked() */
    CHECK_CU_OK(dtoh_async_pt(pinned, d, 3003, stream));
    CHECK_CU_OK(sync_pt(stream));
    unified_fn unified = AS_FN(unified_fn, get_v2(gpa2, "cuMemcpy", 13000,
                                                  CU_GET_PROC_ADDRESS_DEFAULT));
    if (unified)
        CHECK_CU_OK(unified(d2, d, 3004));   /* unified: D2D */
    /* The CUDA 11.3 form. */
    void *fn = NULL;
    CHECK_CU_OK(gpa_old("cuMemcpyDtoD", &fn, 12000, CU_GET_PROC_ADDRESS_DEFAULT));
    if (fn)
        CHECK_CU_OK(AS_FN(dtod_fn, fn)(d2, d, 3005));
    else
        failures++;
    /* A version below every variant: no function, as without the profiler. */
    fn = NULL;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
    CHECK_CU_OK(gpa("cuMemcpyHtoD", &fn, 3000, CU_GET_PROC_ADDRESS_DEFAULT, &st));
    printf("version 3000: status %d found %d\n", (int)st, fn != NULL);
}

int main(void)
{
    CHECK_CU_OK(cuInit(0));
    CUdevice dev;
    CUcontext ctx;
    CHECK_CU_OK(cuDeviceGet(&dev, 0));
    CHECK_CU_OK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK_CU_OK(cuCtxSetCurrent(ctx));
    CUdeviceptr d = 0, d2 = 0;
    void *pinned = NULL;
    CUstream stream = NULL;
    CHECK_CU_OK(cuMemAlloc(&d, BUF));
    CHECK_CU_OK(cuMemAlloc(&d2, BUF));
    CHECK_CU_OK(cuMemAllocHost(&pinned, BUF));
    CHECK_CU_OK(cuStreamCreate(&stream, CU_STREAM_DEFAULT));
    unsigned char *host = malloc(BUF);
    CHECK(host != NULL);
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    CHECK(lib != NULL);

    linked(d, d2, host, pinned, stream);
    looked_up(lib, d, host);
    proc_address(lib, d, d2, pinned, stream);

    CHECK_CU(cuMemFree(d + 16), CUDA_ERROR_INVALID_VALUE);
    /* Stream-ordered: the free is recorded when issued; the stream's
     * destruction lets it complete. */
    CUdeviceptr a = 0;
    CHECK_CU_OK(cuMemAllocAsync(&a, BUF, stream));
    CHECK_CU_OK(cuMemFreeAsync(a, stream));
    CHECK_CU_OK(cuStreamDestroy(stream));
    CHECK_CU_OK(cuMemFreeHost(pinned));
    CHECK_CU_OK(cuMemFree(d2));
    CHECK_CU_OK(cuMemFree(d));
    CHECK_CU_OK(cuDevicePrimaryCtxRelease(dev));
    dlclose(lib);
    free(host);
    printf("failures %d\n", failures);
    return failures ? 1 : 0;
}
