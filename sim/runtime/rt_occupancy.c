/* rt_occupancy.c: the runtime's occupancy calculator (cudaOccupancy*), over the driver's; cuda_runtime.h's cudaOccupancyMaxPotentialBlockSize templates are built on these and cudaFuncGetAttributes. */
#include "rt_internal.h"

XPRT_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int *numBlocks, const void *func, int blockSize, size_t dynamicSMemSize, unsigned int flags)
{
    if (numBlocks == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    CUfunction fn = NULL;
    cudaError_t e = xprt_func_handle(func, &d, &fn);
    if (e != cudaSuccess)
        return xprt_result(e);
    /* cudaOccupancy* flags have the CU_OCCUPANCY_* values. */
    return xprt_result_cu(XPRT_CALL(d, cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags,
                                    numBlocks, fn, blockSize, dynamicSMemSize, flags));
}

XPRT_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks,
                                                                      const void *func,
                                                                      int blockSize,
                                                                      size_t dynamicSMemSize)
{
    return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize,
                                                                  dynamicSMemSize,
                                                                  cudaOccupancyDefault);
}

XPRT_EXPORT cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize,
                                                                  const void *func,
                                                                  int numBlocks, int blockSize)
{
    if (dynamicSmemSize == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    CUfunction fn = NULL;
    cudaError_t e = xprt_func_handle(func, &d, &fn);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuOccupancyAvailableDynamicSMemPerBlock, dynamicSmemSize,
                                    fn, numBlocks, blockSize));
}
