/* cap_syncs.c: each synchronization API (run with XFERPROF_SIM_BANDWIDTH=
 * pinned=100M, so the stream synchronize after a 16 MiB upload lasts about
 * 168 ms).  Prints the handles for test_syncs.py. */
#include "cap_util.h"

#define BIG (16u << 20)

int main(void)
{
    void *dev = NULL, *pinned = NULL;
    cudaStream_t stream = NULL;
    cudaEvent_t event = NULL;
    CHECK_OK(cudaMalloc(&dev, BIG));
    CHECK_OK(cudaMallocHost(&pinned, BIG));
    CHECK_OK(cudaStreamCreate(&stream));
    CHECK_OK(cudaEventCreate(&event));
    CAP_PRINT("stream", stream);
    CAP_PRINT("event", event);
    printf("tid %ld\n", cap_tid());
    fflush(stdout);

    /* 1: the long one. */
    CHECK_OK(cudaMemcpyAsync(dev, pinned, BIG, cudaMemcpyHostToDevice, stream));
    CHECK_OK(cudaStreamSynchronize(stream));
    /* 2: an event behind a small copy. */
    CHECK_OK(cudaMemcpyAsync(dev, pinned, 4096, cudaMemcpyHostToDevice, stream));
    CHECK_OK(cudaEventRecord(event, stream));
    CHECK_OK(cudaEventSynchronize(event));
    /* 3: the whole device. */
    CHECK_OK(cudaMemcpyAsync(dev, pinned, 4096, cudaMemcpyHostToDevice, stream));
    CHECK_OK(cudaDeviceSynchronize());
    /* 4: the legacy default stream. */
    CHECK_OK(cudaStreamSynchronize(NULL));

    /* Frees synchronize inside the runtime: that must not add sync rows. */
    CHECK_OK(cudaEventDestroy(event));
    CHECK_OK(cudaStreamDestroy(stream));
    CHECK_OK(cudaFreeHost(pinned));
    CHECK_OK(cudaFree(dev));
    return 0;
}
