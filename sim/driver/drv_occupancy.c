/* drv_occupancy.c: the occupancy calculator (cuOccupancy*), answered by NVIDIA's own calculator (cuda_occupancy.h) from the device's limits and the function's attributes. */
#include "xpsim_driver.h"

#include <cuda_occupancy.h>

/* The calculator's view of the current context's device and of f, from the
 * same answers cuDeviceGetAttribute and cuFuncGetAttribute give programs.
 * flags: CU_OCCUPANCY_*; blockSizeLimit, when positive, caps the block
 * size cuOccupancyMaxPotentialBlockSize may choose. */
typedef struct occ_inputs {
    cudaOccDeviceProp prop;
    cudaOccFuncAttributes attr;
    cudaOccDeviceState state;
} occ_inputs;

static CUresult inputs(CUfunction f, unsigned int flags, int blockSizeLimit, occ_inputs *in)
{
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!xpdrv_func_valid(f))
        return CUDA_ERROR_INVALID_HANDLE;
    if (flags & ~(unsigned)CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)
        return CUDA_ERROR_INVALID_VALUE;
    struct { CUdevice_attribute a; int *to; } dev_attrs[] = {
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &in->prop.computeMajor},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &in->prop.computeMinor},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &in->prop.maxThreadsPerBlock},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, &in->prop.maxThreadsPerMultiprocessor},
        {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, &in->prop.regsPerBlock},
        {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, &in->prop.regsPerMultiprocessor},
        {CU_DEVICE_ATTRIBUTE_WARP_SIZE, &in->prop.warpSize},
        {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &in->prop.numSms},
    };
    struct { CUdevice_attribute a; size_t *to; } dev_sizes[] = {
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &in->prop.sharedMemPerBlock},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
         &in->prop.sharedMemPerMultiprocessor},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &in->prop.sharedMemPerBlockOptin},
        {CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK,
         &in->prop.reservedSharedMemPerBlock},
    };
    for (size_t i = 0; i < sizeof dev_attrs / sizeof dev_attrs[0]; i++)
        if ((rc = cuDeviceGetAttribute(dev_attrs[i].to, dev_attrs[i].a, dev)) != CUDA_SUCCESS)
            return rc;
    for (size_t i = 0; i < sizeof dev_sizes / sizeof dev_sizes[0]; i++) {
        int v = 0;
        if ((rc = cuDeviceGetAttribute(&v, dev_sizes[i].a, dev)) != CUDA_SUCCESS)
            return rc;
        *dev_sizes[i].to = (size_t)v;
    }
    int threads = 0, regs = 0, smem = 0, dyn = 0;
    cuFuncGetAttribute(&threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f);
    cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f);
    cuFuncGetAttribute(&smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
    cuFuncGetAttribute(&dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f);
    if (blockSizeLimit > 0 && blockSizeLimit < threads)
        threads = blockSizeLimit;
    /* As the calculator's C++ constructor from cudaFuncAttributes fills it,
     * which is what NVIDIA's runtime hands its calculator. */
    in->attr = (cudaOccFuncAttributes){
        .maxThreadsPerBlock = threads, .numRegs = regs, .sharedSizeBytes = (size_t)smem,
        .partitionedGCConfig = (flags & CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)
                                   ? PARTITIONED_GC_ON_STRICT : PARTITIONED_GC_OFF,
        .shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN, .maxDynamicSharedSizeBytes = (size_t)dyn,
        .numBlockBarriers = 1, .virtualResourceCount = 0};
    in->state = (cudaOccDeviceState){.cacheConfig = CACHE_PREFER_NONE,
                                     .carveoutConfig = SHAREDMEM_CARVEOUT_DEFAULT};
    return CUDA_SUCCESS;
}

static CUresult occ_result(cudaOccError e)
{
    return e == CUDA_OCC_SUCCESS ? CUDA_SUCCESS
           : e == CUDA_OCC_ERROR_INVALID_INPUT ? CUDA_ERROR_INVALID_VALUE
                                               : CUDA_ERROR_UNKNOWN;
}

XPSIM_API CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int *numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize, unsigned int flags)
{
    if (numBlocks == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    occ_inputs in;
    CUresult rc = inputs(func, flags, 0, &in);
    if (rc != CUDA_SUCCESS)
        return rc;
    cudaOccResult r;
    rc = occ_result(cudaOccMaxActiveBlocksPerMultiprocessor(&r, &in.prop, &in.attr, &in.state,
                                                            blockSize, dynamicSMemSize));
    if (rc == CUDA_SUCCESS)
        *numBlocks = r.activeBlocksPerMultiprocessor;
    return rc;
}

XPSIM_API CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func,
                                                               int blockSize,
                                                               size_t dynamicSMemSize)
{
    return cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize,
                                                                dynamicSMemSize,
                                                                CU_OCCUPANCY_DEFAULT);
}

XPSIM_API CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(
    int *minGridSize, int *blockSize, CUfunction func,
    CUoccupancyB2DSize blockSizeToDynamicSMemSize, size_t dynamicSMemSize, int blockSizeLimit,
    unsigned int flags)
{
    if (minGridSize == NULL || blockSize == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    occ_inputs in;
    CUresult rc = inputs(func, flags, blockSizeLimit, &in);
    if (rc != CUDA_SUCCESS)
        return rc;
    return occ_result(cudaOccMaxPotentialOccupancyBlockSize(
        minGridSize, blockSize, &in.prop, &in.attr, &in.state, blockSizeToDynamicSMemSize,
        dynamicSMemSize));
}

XPSIM_API CUresult cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize,
                                                    CUfunction func,
                                                    CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                    size_t dynamicSMemSize, int blockSizeLimit)
{
    return cuOccupancyMaxPotentialBlockSizeWithFlags(minGridSize, blockSize, func,
                                                     blockSizeToDynamicSMemSize, dynamicSMemSize,
                                                     blockSizeLimit, CU_OCCUPANCY_DEFAULT);
}

XPSIM_API CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize,
                                                           CUfunction func, int numBlocks,
                                                           int blockSize)
{
    if (dynamicSmemSize == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    occ_inputs in;
    CUresult rc = inputs(func, CU_OCCUPANCY_DEFAULT, 0, &in);
    if (rc != CUDA_SUCCESS)
        return rc;
    return occ_result(cudaOccAvailableDynamicSMemPerBlock(dynamicSmemSize, &in.prop, &in.attr,
                                                          &in.state, numBlocks, blockSize));
}
