/* cap_directions.c: one copy of every direction and host memory kind, with
 * known sizes; prints every pointer and handle so that test_directions.py can
 * check each copies row against them. */
#include "cap_util.h"

#define BUF (1u << 20)

/* Kept out of line: the drivers look for the program's own frames in the
 * recorded stacks. */
__attribute__((noinline)) static void copies(void *dev, void *dev2, void *pageable,
                                             void *pageable2, void *pinned, void *hostalloc,
                                             unsigned char *reg, void *managed,
                                             cudaStream_t stream)
{
    /* H2D from each host memory kind (sizes: the copy's number x 1000). */
    CHECK_OK(cudaMemcpy(dev, pageable, 1000, cudaMemcpyHostToDevice));
    CHECK_OK(cudaMemcpy(dev, pinned, 2000, cudaMemcpyHostToDevice));
    CHECK_OK(cudaMemcpy(dev, hostalloc, 3000, cudaMemcpyHostToDevice));
    /* Inside a registered range, not at its start. */
    CHECK_OK(cudaMemcpy(dev, reg + 4096 + 100, 4000, cudaMemcpyHostToDevice));
    /* D2H into pageable and pinned memory. */
    CHECK_OK(cudaMemcpy(pageable, dev, 5000, cudaMemcpyDeviceToHost));
    CHECK_OK(cudaMemcpy(pinned, dev, 6000, cudaMemcpyDeviceToHost));
    CHECK_OK(cudaMemcpy(dev2, dev, 7000, cudaMemcpyDeviceToDevice));
    CHECK_OK(cudaMemcpy(pageable2, pageable, 8000, cudaMemcpyHostToHost));
    /* cudaMemcpyDefault in each direction: resolved from the pointers. */
    CHECK_OK(cudaMemcpy(dev, pageable, 9000, cudaMemcpyDefault));
    CHECK_OK(cudaMemcpy(pinned, dev, 10000, cudaMemcpyDefault));
    CHECK_OK(cudaMemcpy(dev2, dev, 11000, cudaMemcpyDefault));
    CHECK_OK(cudaMemcpy(hostalloc, pinned, 12000, cudaMemcpyDefault));
    /* Async: pinned returns at once, pageable is staged. */
    CHECK_OK(cudaMemcpyAsync(dev, pinned, 13000, cudaMemcpyHostToDevice, stream));
    CHECK_OK(cudaMemcpyAsync(dev, pageable, 14000, cudaMemcpyHostToDevice, stream));
    CHECK_OK(cudaMemcpyAsync(pinned, dev, 15000, cudaMemcpyDeviceToHost, stream));
    CHECK_OK(cudaStreamSynchronize(stream));
    /* Managed memory as the host side. */
    CHECK_OK(cudaMemcpy(dev, managed, 16000, cudaMemcpyHostToDevice));
    CHECK_OK(cudaMemcpy(managed, dev, 17000, cudaMemcpyDeviceToHost));
    /* Registered memory as a D2H destination, offset again. */
    CHECK_OK(cudaMemcpyAsync(reg + 8192 + 8, dev, 18000, cudaMemcpyDeviceToHost, stream));
    CHECK_OK(cudaStreamSynchronize(stream));
}

int main(void)
{
    void *dev = NULL, *dev2 = NULL, *pinned = NULL, *hostalloc = NULL, *managed = NULL;
    cudaStream_t stream = NULL;
    CHECK_OK(cudaMalloc(&dev, BUF));
    CHECK_OK(cudaMalloc(&dev2, BUF));
    CHECK_OK(cudaMallocHost(&pinned, BUF));
    CHECK_OK(cudaHostAlloc(&hostalloc, BUF, cudaHostAllocDefault));
    CHECK_OK(cudaMallocManaged(&managed, BUF, cudaMemAttachGlobal));
    CHECK_OK(cudaStreamCreate(&stream));
    void *pageable = malloc(BUF), *pageable2 = malloc(BUF);
    CHECK(pageable && pageable2);
    memset(pageable, 1, BUF);
    memset(pageable2, 2, BUF);
    unsigned char *reg = cap_pages(BUF);
    CHECK_OK(cudaHostRegister(reg, BUF, cudaHostRegisterDefault));

    CAP_PRINT("dev", dev);
    CAP_PRINT("dev2", dev2);
    CAP_PRINT("pageable", pageable);
    CAP_PRINT("pageable2", pageable2);
    CAP_PRINT("pinned", pinned);
    CAP_PRINT("hostalloc", hostalloc);
    CAP_PRINT("reg", reg);
    CAP_PRINT("managed", managed);
    CAP_PRINT("stream", stream);
    printf("tid %ld\n", cap_tid());
    fflush(stdout);

    copies(dev, dev2, pageable, pageable2, pinned, hostalloc, reg, managed, stream);

    CHECK_OK(cudaHostUnregister(reg));
    CHECK_OK(cudaStreamDestroy(stream));
    CHECK_OK(cudaFree(managed));
    CHECK_OK(cudaFreeHost(hostalloc));
    CHECK_OK(cudaFreeHost(pinned));
    CHECK_OK(cudaFree(dev2));
    CHECK_OK(cudaFree(dev));
    free(reg);
    free(pageable2);
    free(pageable);
    return 0;
}
