/* cap_failures.c: failing calls (run with XFERPROF_SIM_MEMORY=64M): an
 * allocation beyond capacity, a bogus and a double free, a copy with an
 * invalid kind, a synchronize of a stream that does not exist.  Prints each
 * return code ("rc_NAME 0x...") and pointer for test_failures.py. */
#include "cap_util.h"

int main(void)
{
    void *big = (void *)(uintptr_t)0x1, *real = NULL, *pre = NULL, *host = malloc(4096);
    CHECK(host);
    /* Something allocated first, so that free and total differ at the failure. */
    CHECK_OK(cudaMalloc(&pre, 8u << 20));
    size_t mfree = 0, mtotal = 0;
    CHECK_OK(cudaMemGetInfo(&mfree, &mtotal));
    cudaError_t oom = cudaMalloc(&big, (size_t)1 << 30);
    CHECK_CUDA(oom, cudaErrorMemoryAllocation);
    CHECK_OK(cudaMalloc(&real, 4096));
    cudaError_t bogus = cudaFree((void *)(uintptr_t)0x1234);
    CHECK_CUDA(bogus, cudaErrorInvalidValue);
    CHECK_OK(cudaFree(real));
    cudaError_t twice = cudaFree(real);
    CHECK_CUDA(twice, cudaErrorInvalidValue);
    void *dev = NULL;
    CHECK_OK(cudaMalloc(&dev, 4096));
    cudaError_t badkind = cudaMemcpy(dev, host, 16, (enum cudaMemcpyKind)7);
    CHECK_CUDA(badkind, cudaErrorInvalidMemcpyDirection);
    cudaStream_t gone = (cudaStream_t)(uintptr_t)0xdead0;
    cudaError_t badstream = cudaStreamSynchronize(gone);
    CHECK(badstream != cudaSuccess);
    (void)cudaGetLastError();

    CAP_PRINT("real", real);
    CAP_PRINT("dev", dev);
    CAP_PRINT("host", host);
    CAP_PRINT("gone", gone);
    CAP_PRINT("rc_oom", oom);
    CAP_PRINT("rc_bogus", bogus);
    CAP_PRINT("rc_twice", twice);
    CAP_PRINT("rc_badkind", badkind);
    CAP_PRINT("rc_badstream", badstream);
    CAP_PRINT("pre", pre);
    CAP_PRINT("mem_total", mtotal);
    CAP_PRINT("mem_free_at_oom", mfree);
    fflush(stdout);
    CHECK_OK(cudaFree(dev));
    CHECK_OK(cudaFree(pre));
    free(host);
    return 0;
}
