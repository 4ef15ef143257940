/* rep_errnames.c: failed calls of both layers, for test_errnames.py (run with
 * XFERPROF_SIM_MEMORY=64M).  Runtime: a copy with an invalid kind
 * (cudaErrorInvalidMemcpyDirection, 21), a free of a pointer never allocated
 * (cudaErrorInvalidValue, 1), a 1 GiB cudaMalloc (cudaErrorMemoryAllocation,
 * 2).  Driver, reached through dlopen + dlsym as libraries reach it: a 1 GiB
 * cuMemAlloc_v2 (CUDA_ERROR_OUT_OF_MEMORY, 2) and a cuMemFree_v2 of a pointer
 * never allocated (CUDA_ERROR_INVALID_VALUE, 1).  Prints each return code
 * ("rc_NAME 0x..."), so the driver checks the codes the program saw. */
#include "../capture/cap_util.h"

#include <cuda.h>
#include <dlfcn.h>

typedef CUresult (*mem_alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*mem_free_fn)(CUdeviceptr);

int main(void)
{
    void *host = malloc(4096), *dev = NULL, *big = NULL;
    CHECK(host);
    CHECK_OK(cudaMalloc(&dev, 4096));
    cudaError_t badkind = cudaMemcpy(dev, host, 16, (enum cudaMemcpyKind)7);
    cudaError_t bogus = cudaFree((void *)(uintptr_t)0x1234);
    cudaError_t oom = cudaMalloc(&big, (size_t)1 << 30);
    (void)cudaGetLastError();

    void *libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    CHECK(libcuda);
    mem_alloc_fn mem_alloc = (mem_alloc_fn)dlsym(libcuda, "cuMemAlloc_v2");
    mem_free_fn mem_free = (mem_free_fn)dlsym(libcuda, "cuMemFree_v2");
    CHECK(mem_alloc && mem_free);
    CUdeviceptr dbig = 0;
    CUresult cu_oom = mem_alloc(&dbig, (size_t)1 << 30);
    CUresult cu_bogus = mem_free((CUdeviceptr)0x5678);

    CAP_PRINT("rc_badkind", badkind);
    CAP_PRINT("rc_bogus", bogus);
    CAP_PRINT("rc_oom", oom);
    CAP_PRINT("rc_cu_oom", cu_oom);
    CAP_PRINT("rc_cu_bogus", cu_bogus);
    fflush(stdout);
    CHECK_OK(cudaFree(dev));
    free(host);
    return 0;
}
