/* cap_copy_sync.c: the copy+sync idiom (PyTorch's .cpu()/.item()), broken
 * pairs, and the blocking classes of device-to-device and host-to-host
 * copies, for test_copy_sync.py. */
#include "cap_util.h"

#include <stdlib.h>
#include <string.h>

#define N (256u << 10)

int main(void)
{
    void *dev = NULL, *dev2 = NULL;
    cudaStream_t stream = NULL;
    cudaEvent_t event = NULL;
    unsigned char *host = malloc(N), *back = malloc(N), *other = malloc(N);
    if (!host || !back || !other)
        return 1;
    memset(host, 0x5a, N);
    CHECK_OK(cudaMalloc(&dev, N));
    CHECK_OK(cudaMalloc(&dev2, N));
    CHECK_OK(cudaStreamCreate(&stream));
    CHECK_OK(cudaEventCreate(&event));
    CHECK_OK(cudaMemcpy(dev, host, N, cudaMemcpyHostToDevice));
    /* 1: .cpu(): an async download synchronized at once (paired, fingerprinted). */
    CHECK_OK(cudaMemcpyAsync(back, dev, N, cudaMemcpyDeviceToHost, stream));
    CHECK_OK(cudaStreamSynchronize(stream));
    /* 2: the same, broken by a memset in between: not paired. */
    CHECK_OK(cudaMemcpyAsync(back, dev, N, cudaMemcpyDeviceToHost, stream));
    CHECK_OK(cudaMemsetAsync(dev2, 0, 16, stream));
    CHECK_OK(cudaStreamSynchronize(stream));
    /* 3: a sync of another stream (the default one): not paired. */
    CHECK_OK(cudaMemcpyAsync(back, dev, N, cudaMemcpyDeviceToHost, stream));
    CHECK_OK(cudaStreamSynchronize(0));
    CHECK_OK(cudaStreamSynchronize(stream));
    /* 4: the device: paired. */
    CHECK_OK(cudaMemcpyAsync(back, dev, N, cudaMemcpyDeviceToHost, stream));
    CHECK_OK(cudaDeviceSynchronize());
    /* 5: device to device through the synchronous API, and host to host async. */
    CHECK_OK(cudaMemcpy(dev2, dev, N, cudaMemcpyDeviceToDevice));
    CHECK_OK(cudaMemcpyAsync(other, host, N, cudaMemcpyHostToHost, stream));
    CHECK_OK(cudaStreamSynchronize(stream));
    printf("done\n");
    return 0;
}
