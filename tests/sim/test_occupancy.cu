// The occupancy calculator, runtime and driver: blocks per multiprocessor from the function's attributes (32 registers a thread, no static shared memory, 48 KiB of dynamic shared memory until it opts in to more) and the device's limits (compute capability 9.0: 2048 threads, 32 blocks, 228 KiB of shared memory and 65536 registers per SM, 132 SMs, 1 KiB reserved per block), the block size that maximizes it, and what dynamic shared memory a block may have.
#include "xpt_check.h"

#include <cuda.h>
#include <dlfcn.h>

__global__ void kern(float *p)
{
    // Never run: a kernel for nvcc to register.
    p[threadIdx.x] *= 2.0f;
}

static size_t smem_for(int block)
{
    return (size_t)block * 64;   // 64 bytes of dynamic shared memory a thread
}

int main(void)
{
    int n = -1;
    CHECK_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kern, 256, 0));
    CHECK_EQ(n, 8);    // 8 warps a block: registers (8192 a block) and threads (2048) allow 8
    CHECK_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kern, 1024, 0));
    CHECK_EQ(n, 2);
    CHECK_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kern, 32, 0));
    CHECK_EQ(n, 32);   // the limit of blocks per SM
    CHECK_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kern, 100, 0));
    CHECK_EQ(n, 16);   // 4 warps a block (rounded up): 2048 threads / 128
    // Shared memory: 40 KiB + 1 KiB reserved a block, 228 KiB an SM: 5 blocks.
    CHECK_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&n, kern, 128, 40 << 10,
                                                                    cudaOccupancyDefault));
    CHECK_EQ(n, 5);
    CHECK_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
        &n, kern, 128, 40 << 10, cudaOccupancyDisableCachingOverride));
    CHECK_EQ(n, 5);
    // More dynamic shared memory than the function allows: no block fits,
    // until it opts in to more.
    CHECK_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kern, 128, 100 << 10));
    CHECK_EQ(n, 0);
    size_t avail = 0;
    CHECK_OK(cudaOccupancyAvailableDynamicSMemPerBlock(&avail, kern, 2, 256));
    CHECK_EQ(avail, 48 << 10);
    CHECK_OK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 << 10));
    struct cudaFuncAttributes fa;
    CHECK_OK(cudaFuncGetAttributes(&fa, kern));
    CHECK_EQ(fa.maxDynamicSharedSizeBytes, 200 << 10);
    CHECK_EQ(fa.numRegs, 32);
    CHECK_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kern, 128, 100 << 10));
    CHECK_EQ(n, 2);
    CHECK_OK(cudaOccupancyAvailableDynamicSMemPerBlock(&avail, kern, 2, 256));
    CHECK_EQ(avail, 233472 / 2);   // half the SM's (the calculator leaves the reserve aside here)
    CHECK_CUDA(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, 300 << 10),
               cudaErrorInvalidValue);
    CHECK_OK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, 48 << 10));

    // Errors: no kernel, no output, a bad block size or flag.
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, (const void *)&n, 128, 0),
               cudaErrorInvalidDeviceFunction);
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(NULL, kern, 128, 0),
               cudaErrorInvalidValue);
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kern, 0, 0),
               cudaErrorInvalidValue);
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&n, kern, 128, 0, 4),
               cudaErrorInvalidValue);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidValue);

    // cuda_runtime.h's templates, over the calls above and cudaFuncGetAttributes.
    int grid = -1, block = -1;
    CHECK_OK(cudaOccupancyMaxPotentialBlockSize(&grid, &block, kern));
    CHECK_EQ(block, 1024);   // full occupancy (64 warps) from the largest block
    CHECK_EQ(grid, 2 * 132);
    CHECK_OK(cudaOccupancyMaxPotentialBlockSize(&grid, &block, kern, 0, 200));
    CHECK_EQ(block, 128);    // the largest block under 200 with full occupancy
    CHECK_EQ(grid, 16 * 132);
    CHECK_OK(cudaOccupancyMaxPotentialBlockSizeVariableSMem(&grid, &block, kern, smem_for));
    // 1024 threads would want 64 KiB, over the function's 48 KiB; 512 (32 KiB)
    // still reaches full occupancy.
    CHECK_EQ(block, 512);
    CHECK_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kern, block, smem_for(block)));
    CHECK_EQ(grid, n * 132);

    // The driver's forms, on the function the runtime registered.
    cudaFunction_t f;
    CHECK_OK(cudaGetFuncBySymbol(&f, (const void *)kern));
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    CHECK(h != NULL);
    typedef CUresult (*active_fn)(int *, CUfunction, int, size_t);
    typedef CUresult (*potential_fn)(int *, int *, CUfunction, CUoccupancyB2DSize, size_t, int);
    typedef CUresult (*avail_fn)(size_t *, CUfunction, int, int);
    active_fn active = (active_fn)dlsym(h, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    potential_fn potential = (potential_fn)dlsym(h, "cuOccupancyMaxPotentialBlockSize");
    avail_fn davail = (avail_fn)dlsym(h, "cuOccupancyAvailableDynamicSMemPerBlock");
    CHECK(active && potential && davail);
    CHECK(active(&n, (CUfunction)f, 512, 0) == CUDA_SUCCESS);
    CHECK_EQ(n, 4);
    CHECK(active(&n, NULL, 512, 0) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(potential(&grid, &block, (CUfunction)f, NULL, 0, 0) == CUDA_SUCCESS);
    CHECK_EQ(block, 1024);
    CHECK(potential(&grid, &block, (CUfunction)f, NULL, 0, 200) == CUDA_SUCCESS);
    CHECK_EQ(block, 128);
    CHECK(davail(&avail, (CUfunction)f, 1, 1024) == CUDA_SUCCESS);
    CHECK_EQ(avail, 48 << 10);
    dlclose(h);
    puts("occupancy: ok");
    return 0;
}
