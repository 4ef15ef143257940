/* Contexts of their own (cuCtxCreate in every form, cuCtxDestroy, the context stack): what they own, what the runtime does on a thread where one is current, and the documented errors. */
#include "xpt_check.h"

#include <cuda.h>
#include <pthread.h>

/* Driver call whose result must be exactly `expected`. */
#define CHECK_CU(call, expected)                                               \
    do {                                                                       \
        CUresult xpt_r_ = (call);                                              \
        if (xpt_r_ != (expected))                                              \
            XPT_FAIL("%s returned %d, expected %d", #call, (int)xpt_r_,        \
                     (int)(expected));                                         \
    } while (0)
#define CHECK_CU_OK(call) CHECK_CU(call, CUDA_SUCCESS)

#define MiB (1u << 20)

/* Free memory of dev, as the runtime's own context on it sees it; device 0's
 * primary context is current again afterwards. */
static size_t free_on(int dev)
{
    size_t f = 0, t = 0;
    CHECK_OK(cudaSetDevice(dev));
    CHECK_OK(cudaMemGetInfo(&f, &t));
    CHECK_OK(cudaSetDevice(0));
    return f;
}

/* A context current on another thread stays current there when destroyed,
 * and every call there then says so. */
typedef struct shared {
    CUcontext ctx;
    pthread_barrier_t current, destroyed;
} shared;

static void *other_thread(void *arg)
{
    shared *sh = arg;
    CHECK_CU_OK(cuCtxSetCurrent(sh->ctx));
    pthread_barrier_wait(&sh->current);
    pthread_barrier_wait(&sh->destroyed);
    CUdeviceptr p;
    CHECK_CU(cuMemAlloc(&p, 4096), CUDA_ERROR_CONTEXT_IS_DESTROYED);
    CUcontext cur = NULL;
    CHECK_CU_OK(cuCtxGetCurrent(&cur));
    CHECK(cur == sh->ctx);
    return NULL;
}

int main(void)
{
    CHECK_CU_OK(cuInit(0));
    /* The runtime's own context on device 1 first: a created context is
     * another one, with its own allocations. */
    const size_t free1 = free_on(1);
    CHECK_OK(cudaSetDevice(0));
    CUcontext primary0 = NULL;
    CHECK_CU_OK(cuCtxGetCurrent(&primary0));
    CHECK(primary0 != NULL);

    CUcontext ctx = NULL;
    CHECK_CU(cuCtxCreate(&ctx, NULL, 0x100, 1), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cuCtxCreate(&ctx, NULL, CU_CTX_SCHED_SPIN | CU_CTX_SCHED_YIELD, 1),
             CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cuCtxCreate(&ctx, NULL, 0, 2), CUDA_ERROR_INVALID_DEVICE);
    CUexecAffinityParam aff = {.type = CU_EXEC_AFFINITY_TYPE_SM_COUNT, .param.smCount.val = 8};
    CUctxCreateParams with_aff = {.execAffinityParams = &aff, .numExecAffinityParams = 1};
    CHECK_CU(cuCtxCreate(&ctx, &with_aff, 0, 1), CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY);

    CHECK_CU_OK(cuCtxCreate(&ctx, NULL, CU_CTX_SCHED_BLOCKING_SYNC, 1));
    CUcontext cur = NULL;
    CHECK_CU_OK(cuCtxGetCurrent(&cur));
    CHECK(cur == ctx && ctx != primary0);
    CUdevice dev = -1;
    CHECK_CU_OK(cuCtxGetDevice(&dev));
    CHECK_EQ(dev, 1);
    unsigned flags = 0;
    CHECK_CU_OK(cuCtxGetFlags(&flags));
    CHECK_EQ(flags, CU_CTX_SCHED_BLOCKING_SYNC);
    unsigned long long id = 0, id0 = 0;
    CHECK_CU_OK(cuCtxGetId(ctx, &id));
    CHECK_CU_OK(cuCtxGetId(primary0, &id0));
    CHECK(id != 0 && id != id0);

    /* The runtime uses the created context: its device, its memory. */
    int rdev = -1;
    CHECK_OK(cudaGetDevice(&rdev));
    CHECK_EQ(rdev, 1);
    CUdeviceptr dmem = 0;
    CHECK_CU_OK(cuMemAlloc(&dmem, 3 * MiB));
    void *rmem = NULL;
    CHECK_OK(cudaMalloc(&rmem, 2 * MiB));
    struct cudaPointerAttributes pa;
    CHECK_OK(cudaPointerGetAttributes(&pa, rmem));
    CHECK_EQ(pa.device, 1);
    CUdeviceptr managed = 0;
    CHECK_CU_OK(cuMemAllocManaged(&managed, 8192, CU_MEM_ATTACH_GLOBAL));
    CUarray arr = NULL;
    CUDA_ARRAY_DESCRIPTOR ad = {.Width = 1024, .Height = 256, .Format = CU_AD_FORMAT_FLOAT,
                                .NumChannels = 1};
    CHECK_CU_OK(cuArrayCreate(&arr, &ad));
    CUdeviceptr pooled = 0;
    CHECK_CU_OK(cuMemAllocAsync(&pooled, MiB, NULL));
    CHECK_CU_OK(cuCtxSynchronize());
    /* A reset of device 1's primary context leaves the created one's memory alone. */
    CHECK_CU_OK(cuDevicePrimaryCtxReset(1));
    CHECK_CU_OK(cuMemsetD8(dmem, 7, 3 * MiB));
    unsigned char byte = 0;
    CHECK_CU_OK(cuMemcpyDtoH(&byte, dmem + 5, 1));
    CHECK_EQ(byte, 7);

    /* Popped: the runtime goes back to its own device (0) and context. */
    CUcontext popped = NULL;
    CHECK_CU_OK(cuCtxPopCurrent(&popped));
    CHECK(popped == ctx);
    CHECK_OK(cudaGetDevice(&rdev));
    CHECK_EQ(rdev, 0);
    void *r0 = NULL;
    CHECK_OK(cudaMalloc(&r0, MiB));
    CHECK_OK(cudaPointerGetAttributes(&pa, r0));
    CHECK_EQ(pa.device, 0);
    CHECK_OK(cudaFree(r0));
    CHECK_EQ(free_on(1), free1 - 7 * MiB);

    /* Destroyed while current on another thread and pushed here. */
    shared sh = {.ctx = ctx};
    pthread_barrier_init(&sh.current, NULL, 2);
    pthread_barrier_init(&sh.destroyed, NULL, 2);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, other_thread, &sh) == 0);
    pthread_barrier_wait(&sh.current);
    CHECK_CU_OK(cuCtxPushCurrent(ctx));
    CHECK_CU_OK(cuCtxDestroy(ctx));
    pthread_barrier_wait(&sh.destroyed);
    CHECK(pthread_join(t, NULL) == 0);
    /* Popped off this thread's stack: cudaSetDevice's context is back. */
    CHECK_CU_OK(cuCtxGetCurrent(&cur));
    CHECK(cur == primary0);

    /* Its memory, managed memory and array are gone; pool memory is the device's. */
    CHECK_EQ(free_on(1), free1 - MiB);
    CHECK_CU(cuMemFree(dmem), CUDA_ERROR_INVALID_VALUE);
    CHECK_CUDA(cudaFree(rmem), cudaErrorInvalidValue);
    CHECK_CU(cuMemFree(managed), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cuArrayDestroy(arr), CUDA_ERROR_INVALID_HANDLE);
    CHECK_CU_OK(cuMemFree(pooled));
    CHECK_EQ(free_on(1), free1);

    /* A destroyed or primary context is no context to destroy, push or set. */
    CHECK_CU(cuCtxDestroy(ctx), CUDA_ERROR_INVALID_CONTEXT);
    CHECK_CU(cuCtxPushCurrent(ctx), CUDA_ERROR_INVALID_CONTEXT);
    CHECK_CU(cuCtxSetCurrent(ctx), CUDA_ERROR_INVALID_CONTEXT);
    CHECK_CU(cuCtxGetId(ctx, &id), CUDA_ERROR_CONTEXT_IS_DESTROYED);
    CHECK_CU(cuCtxDestroy(primary0), CUDA_ERROR_INVALID_CONTEXT);
    CHECK_CU(cuCtxDestroy(NULL), CUDA_ERROR_INVALID_CONTEXT);

    /* The older forms, as cuGetProcAddress hands them to older programs. */
    typedef CUresult (*create_v2_fn)(CUcontext *, unsigned, CUdevice);
    typedef CUresult (*create_v3_fn)(CUcontext *, CUexecAffinityParam *, int, unsigned, CUdevice);
    typedef CUresult (*destroy_fn)(CUcontext);
    void *fn = NULL;
    CUdriverProcAddressQueryResult q;
    CHECK_CU_OK(cuGetProcAddress("cuCtxCreate", &fn, 3020, 0, &q));
    CHECK(fn != NULL && q == CU_GET_PROC_ADDRESS_SUCCESS);
    CHECK(fn == dlsym(RTLD_DEFAULT, "cuCtxCreate_v2"));
    create_v2_fn create_v2 = (create_v2_fn)fn;
    CUcontext old = NULL;
    CHECK_CU_OK(create_v2(&old, 0, 0));
    CHECK_CU_OK(cuCtxGetDevice(&dev));
    CHECK_EQ(dev, 0);
    CHECK_CU_OK(cuGetProcAddress("cuCtxCreate", &fn, 11040, 0, &q));
    CHECK(fn == dlsym(RTLD_DEFAULT, "cuCtxCreate_v3"));
    CUcontext v3 = NULL;
    CHECK_CU(((create_v3_fn)fn)(&v3, &aff, 1, 0, 0), CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY);
    CHECK_CU_OK(((create_v3_fn)fn)(&v3, NULL, 0, 0, 0));
    CHECK_CU_OK(cuGetProcAddress("cuCtxDestroy", &fn, 2000, 0, &q));
    CHECK(fn == dlsym(RTLD_DEFAULT, "cuCtxDestroy"));
    CHECK_CU_OK(((destroy_fn)fn)(v3));
    CHECK_CU_OK(cuCtxGetCurrent(&cur));
    CHECK(cur == old);
    CHECK_CU_OK(cuCtxDestroy(old));
    CHECK_CU_OK(cuCtxGetCurrent(&cur));
    CHECK(cur == primary0);
    puts("contexts: ok");
    return 0;
}
