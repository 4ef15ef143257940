/* cap_factsmemo.c: loops of 1D copies between the same two buffers, each
 * loop changing only what the thread's memory of a copy's facts is keyed by
 * (the kind, sync or async, the current device a host-only copy is
 * recorded on), and a device whose first copy between two buffers failed.
 * Prints each copy's return code as "rc N" on stdout, in call order. */
#include "cap_util.h"

#define ROUNDS 4

static void report(cudaError_t rc)
{
    printf("rc %d\n", (int)rc);
}

int main(void)
{
    void *dev0 = NULL, *dev1 = NULL, *pinned = NULL;
    cudaStream_t stream;
    unsigned char *pageable = cap_pages(4096), *pageable2 = cap_pages(4096);
    CHECK_OK(cudaSetDevice(0));
    CHECK_OK(cudaMalloc(&dev0, 4096));
    CHECK_OK(cudaMallocHost(&pinned, 4096));
    CHECK_OK(cudaStreamCreate(&stream));
    /* The same sides: the kind and the API's nature change from call to call. */
    for (int i = 0; i < ROUNDS; i++) {
        report(cudaMemcpy(dev0, pinned, 100 + i, cudaMemcpyHostToDevice));
        report(cudaMemcpy(dev0, pinned, 200 + i, cudaMemcpyDefault));
        report(cudaMemcpyAsync(dev0, pinned, 300 + i, cudaMemcpyHostToDevice, stream));
        CHECK_OK(cudaStreamSynchronize(stream));
    }
    /* A host-to-host copy called H2D: its device is the current one, which
     * changes between calls on the same sides. */
    for (int i = 0; i < ROUNDS; i++) {
        CHECK_OK(cudaSetDevice(i % 2));
        report(cudaMemcpy(pageable2, pageable, 400 + i, cudaMemcpyHostToDevice));
    }
    /* Device 1: the first copy between these sides fails, the next ones do
     * not; the device's UUID must be asked for all the same. */
    CHECK_OK(cudaSetDevice(1));
    CHECK_OK(cudaMalloc(&dev1, 4096));
    report(cudaMemcpy(dev1, pinned, 1u << 20, cudaMemcpyHostToDevice));
    for (int i = 0; i < ROUNDS; i++)
        report(cudaMemcpy(dev1, pinned, 500 + i, cudaMemcpyHostToDevice));
    CHECK_OK(cudaStreamDestroy(stream));
    return 0;
}
