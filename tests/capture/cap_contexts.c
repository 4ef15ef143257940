/* cap_contexts.c: a context of its own on device 1 (cuCtxCreate), used by the
 * driver and the runtime alike, popped, pushed again and destroyed with its
 * allocations (device memory from both APIs, managed memory, an array) still
 * live; one allocation freed by hand before.  Prints the handles on stderr
 * (they differ from run to run) and only what does not vary on stdout, so
 * test_contexts.py can compare stdout with and without the profiler. */
#include "cap_util.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

#define SAY(name, value) \
    fprintf(stderr, "%s 0x%llx\n", (name), (unsigned long long)(uintptr_t)(value))

int main(void)
{
    CHECK_OK(cudaSetDevice(0));
    void *a0 = NULL;
    CHECK_OK(cudaMalloc(&a0, 4096));
    SAY("a0", a0);

    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    CHECK(h != NULL);
#define SYM(var, type, name) type var = (type)dlsym(h, name); CHECK(var != NULL)
    SYM(create, PFN_cuCtxCreate_v12050, "cuCtxCreate_v4");
    SYM(destroy, PFN_cuCtxDestroy_v4000, "cuCtxDestroy_v2");
    SYM(push, PFN_cuCtxPushCurrent_v4000, "cuCtxPushCurrent_v2");
    SYM(pop, PFN_cuCtxPopCurrent_v4000, "cuCtxPopCurrent_v2");
    SYM(alloc, PFN_cuMemAlloc_v3020, "cuMemAlloc_v2");
    SYM(dfree, PFN_cuMemFree_v3020, "cuMemFree_v2");
    SYM(managed, PFN_cuMemAllocManaged_v6000, "cuMemAllocManaged");
    SYM(array, PFN_cuArrayCreate_v3020, "cuArrayCreate_v2");

    CUcontext ctx;
    CHECK(create(&ctx, NULL, 0, 1) == CUDA_SUCCESS);
    CUdeviceptr d1, d1b, m1;
    CHECK(alloc(&d1, 8192) == CUDA_SUCCESS);
    CHECK(alloc(&d1b, 512) == CUDA_SUCCESS);
    CHECK(managed(&m1, 1024, CU_MEM_ATTACH_GLOBAL) == CUDA_SUCCESS);
    CUDA_ARRAY_DESCRIPTOR ad = {.Width = 64, .Height = 4, .Format = CU_AD_FORMAT_FLOAT,
                                .NumChannels = 1};
    CUarray arr;
    CHECK(array(&arr, &ad) == CUDA_SUCCESS);
    /* The runtime works in the current context, on its device. */
    void *r1 = NULL;
    CHECK_OK(cudaMalloc(&r1, 2048));
    static unsigned char host[2048];
    memset(host, 0x2a, sizeof host);
    CHECK_OK(cudaMemcpy(r1, host, sizeof host, cudaMemcpyHostToDevice));
    int dev = -1;
    CHECK_OK(cudaGetDevice(&dev));
    printf("device in the context %d\n", dev);
    CHECK(dfree(d1b) == CUDA_SUCCESS);
    SAY("d1", d1);
    SAY("d1b", d1b);
    SAY("m1", m1);
    SAY("arr", arr);
    SAY("r1", r1);
    SAY("host", host);

    /* Back to the runtime's own context on device 0, then into ours again to
     * destroy it. */
    CUcontext popped;
    CHECK(pop(&popped) == CUDA_SUCCESS && popped == ctx);
    CHECK_OK(cudaGetDevice(&dev));
    printf("device after the pop %d\n", dev);
    CHECK_OK(cudaMemcpy(a0, host, 4096 > sizeof host ? sizeof host : 4096,
                        cudaMemcpyHostToDevice));
    CHECK(push(ctx) == CUDA_SUCCESS);
    CHECK(destroy(ctx) == CUDA_SUCCESS);
    CHECK_OK(cudaGetDevice(&dev));
    printf("device after the destroy %d\n", dev);
    CHECK_OK(cudaFree(a0));
    dlclose(h);
    puts("contexts: done");
    return 0;
}
