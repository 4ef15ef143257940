/* cap_driver_rt.c: driver functions obtained from the runtime with
 * cudaGetDriverEntryPointByVersion and cudaGetDriverEntryPoint (section 4),
 * and a runtime copy, which reaches the driver inside the runtime and must be
 * recorded once, as the runtime call (section 5).  Sizes as in cap_driver.c.
 * Built a second time with -DCUDA_API_PER_THREAD_DEFAULT_STREAM: the runtime
 * calls become their _ptds/_ptsz forms (cudaGetDriverEntryPointByVersion_ptsz
 * among them, which hands out per-thread variants by default). */
#include "cap_util.h"

#include <cuda.h>

#define BUF (1u << 16)

typedef CUresult (*htod_fn)(CUdeviceptr, const void *, size_t);
typedef CUresult (*dtoh_fn)(void *, CUdeviceptr, size_t);

#define AS_FN(type, p) ((type)(uintptr_t)(p))

static int failures;

static void *entry(const char *name, unsigned long long flags, bool by_version)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult st = cudaDriverEntryPointSymbolNotFound;
/* Deprecated, and still what older code (and libraries) call. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    cudaError_t r = by_version ? cudaGetDriverEntryPointByVersion(name, &fn, 13000, flags, &st)
                               : cudaGetDriverEntryPoint(name, &fn, flags, &st);
#pragma GCC diagnostic pop
    printf("%s(%s, %llu) -> %d status %d found %d\n",
           by_version ? "cudaGetDriverEntryPointByVersion" : "cudaGetDriverEntryPoint", name,
           flags, (int)r, (int)st, fn != NULL);
    if (r != cudaSuccess || fn == NULL)
        failures++;
    return fn;
}

__attribute__((noinline)) static void entry_points(CUdeviceptr d, unsigned char *host)
{
    htod_fn htod = AS_FN(htod_fn, entry("cuMemcpyHtoD", cudaEnableDefault, true));
    dtoh_fn dtoh_pt = AS_FN(dtoh_fn, entry("cuMemcpyDtoH", cudaEnablePerThreadDefaultStream,
                                           false));
    htod_fn htod_legacy = AS_FN(htod_fn, entry("cuMemcpyHtoD", cudaEnableLegacyStream, true));
    if (!htod || !dtoh_pt || !htod_legacy)
        return;
    memset(host, 7, BUF);
    printf("4001 -> %d\n", (int)htod(d, host, 4001));
    memset(host, 0, BUF);
    printf("4002 -> %d\n", (int)dtoh_pt(host, d, 4002));
    printf("readback %d\n", host[0] == 7 && host[4000] == 7);
    printf("4003 -> %d\n", (int)htod_legacy(d, host, 4003));
}

__attribute__((noinline)) static void runtime_copy(void *d, unsigned char *host)
{
    CHECK_OK(cudaMemcpy(d, host, 5001, cudaMemcpyHostToDevice));
    CHECK_OK(cudaMemcpy(host, d, 5002, cudaMemcpyDeviceToHost));
}

int main(void)
{
    void *d = NULL;
    CHECK_OK(cudaMalloc(&d, BUF));
    unsigned char *host = malloc(BUF);
    CHECK(host != NULL);
    entry_points((CUdeviceptr)(uintptr_t)d, host);
    runtime_copy(d, host);
    CHECK_OK(cudaFree(d));
    free(host);
    printf("failures %d\n", failures);
    return failures ? 1 : 0;
}
