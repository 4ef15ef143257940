/* Two devices: selection, per-device address ranges and attributes, device properties, and peer copies between them. */
#include "xpt_check.h"

#define N (4u << 20)   /* ~42 ms at the peer bandwidth set by meson.build */

static int all_checks(void)
{
    const unsigned long long capacity = xpt_env_size("XFERPROF_SIM_MEMORY", 16ull << 30);

    int count = -1;
    CHECK_OK(cudaGetDeviceCount(&count));
    CHECK_EQ(count, 2);

    int cur = -1;
    CHECK_OK(cudaGetDevice(&cur));
    CHECK_EQ(cur, 0);

    for (int dev = 0; dev < count; dev++) {
        struct cudaDeviceProp prop;
        memset(&prop, 0, sizeof prop);
        CHECK_OK(cudaGetDeviceProperties(&prop, dev));
        CHECK_MSG(prop.name[0] != '\0', "device %d has no name", dev);
        CHECK_MSG(memchr(prop.name, '\0', sizeof prop.name) != NULL, "name not terminated");
        CHECK_MSG(prop.totalGlobalMem == capacity, "device %d totalGlobalMem %zu", dev,
                  prop.totalGlobalMem);
        CHECK_MSG(prop.major >= 7, "device %d compute capability %d.%d", dev, prop.major,
                  prop.minor);
        CHECK_EQ(prop.unifiedAddressing, 1);
        CHECK_EQ(prop.warpSize, 32);
        CHECK(prop.maxThreadsPerBlock >= 1024);

        int v = -1;
        CHECK_OK(cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, dev));
        CHECK_EQ(v, 32);
        CHECK_OK(cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor, dev));
        CHECK_EQ(v, prop.major);
        CHECK_OK(cudaDeviceGetAttribute(&v, cudaDevAttrUnifiedAddressing, dev));
        CHECK_EQ(v, 1);
    }
    struct cudaDeviceProp bad;
    CHECK_CUDA(cudaGetDeviceProperties(&bad, 2), cudaErrorInvalidDevice);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidDevice);
    int dummy;
    CHECK_CUDA(cudaDeviceGetAttribute(&dummy, cudaDevAttrWarpSize, 2), cudaErrorInvalidDevice);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidDevice);

    /* Allocate on device 0, then on device 1. */
    void *d0 = NULL, *d1 = NULL;
    CHECK_OK(cudaMalloc(&d0, N));
    size_t free0_dev1_before = 0, total = 0;
    CHECK_OK(cudaSetDevice(1));
    CHECK_OK(cudaGetDevice(&cur));
    CHECK_EQ(cur, 1);
    CHECK_OK(cudaMemGetInfo(&free0_dev1_before, &total));
    CHECK_OK(cudaMalloc(&d1, N));
    size_t free_dev1_after = 0;
    CHECK_OK(cudaMemGetInfo(&free_dev1_after, &total));
    CHECK(free0_dev1_before - free_dev1_after >= N);

    CHECK(d0 != NULL && d1 != NULL);
    CHECK_MSG((uintptr_t)d1 >= (uintptr_t)d0 + N || (uintptr_t)d0 >= (uintptr_t)d1 + N,
              "device 0 block %p and device 1 block %p overlap", d0, d1);

    /* An out-of-range ordinal fails and leaves the current device alone. */
    CHECK_CUDA(cudaSetDevice(2), cudaErrorInvalidDevice);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidDevice);
    CHECK_CUDA(cudaSetDevice(-1), cudaErrorInvalidDevice);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidDevice);
    CHECK_OK(cudaGetDevice(&cur));
    CHECK_EQ(cur, 1);

    /* Each pointer knows its device, whichever device is current. */
    struct cudaPointerAttributes a;
    for (int current = 0; current < 2; current++) {
        CHECK_OK(cudaSetDevice(current));
        memset(&a, 0xff, sizeof a);
        CHECK_OK(cudaPointerGetAttributes(&a, d0));
        CHECK_EQ(a.type, cudaMemoryTypeDevice);
        CHECK_EQ(a.device, 0);
        memset(&a, 0xff, sizeof a);
        CHECK_OK(cudaPointerGetAttributes(&a, (unsigned char *)d1 + 100));
        CHECK_EQ(a.type, cudaMemoryTypeDevice);
        CHECK_EQ(a.device, 1);
    }

    /* Device 0's memory accounting was not touched by device 1's allocation. */
    CHECK_OK(cudaSetDevice(0));
    size_t free_dev0 = 0;
    CHECK_OK(cudaMemGetInfo(&free_dev0, &total));
    CHECK_EQ(total, capacity);

    /* Peer copy 0 -> 1, verified by reading device 1 back. */
    unsigned char *src = malloc(N), *back = malloc(N);
    CHECK(src && back);
    xpt_fill(src, N, 3);
    CHECK_OK(cudaMemcpy(d0, src, N, cudaMemcpyHostToDevice));
    CHECK_OK(cudaMemcpyPeer(d1, 1, d0, 0, N));
    CHECK_OK(cudaDeviceSynchronize());   /* ordering is peer_order()'s subject */
    CHECK_OK(cudaSetDevice(1));
    memset(back, 0, N);
    CHECK_OK(cudaMemcpy(back, d1, N, cudaMemcpyDeviceToHost));
    CHECK_PATTERN(back, N, 3);

    /* And back 1 -> 0 with a different pattern, through cudaMemcpyDefault
     * (unified addressing resolves both ends). */
    xpt_fill(src, N, 4);
    CHECK_OK(cudaMemcpy(d1, src, N, cudaMemcpyHostToDevice));
    CHECK_OK(cudaMemcpy(d0, d1, N, cudaMemcpyDefault));
    /* Unlike cudaMemcpyPeer, cudaMemcpy is not documented to serialize with
     * the other device's work, and device to device it need not hold the
     * host: wait for device 1 before reading on device 0. */
    CHECK_OK(cudaDeviceSynchronize());
    CHECK_OK(cudaSetDevice(0));
    memset(back, 0, N);
    CHECK_OK(cudaMemcpy(back, d0, N, cudaMemcpyDeviceToHost));
    CHECK_PATTERN(back, N, 4);

    /* A peer copy naming the wrong device for a pointer is rejected. */
    CHECK_CUDA(cudaMemcpyPeer(d1, 2, d0, 0, N), cudaErrorInvalidDevice);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidDevice);

    /* Freeing works from either current device (the pointer names its device). */
    CHECK_OK(cudaFree(d1));
    CHECK_OK(cudaSetDevice(1));
    size_t free_dev1_end = 0;
    CHECK_OK(cudaMemGetInfo(&free_dev1_end, &total));
    CHECK_EQ(free_dev1_end, free0_dev1_before);
    CHECK_OK(cudaFree(d0));

    free(src);
    free(back);
    return 0;
}

/* cudaMemcpyPeer "is asynchronous with respect to the host, but serialized
 * with respect to all pending and future asynchronous work in to the current
 * device, srcDevice, and dstDevice" (cuda_runtime_api.h): work queued later
 * on the destination device's own stream runs after it, with no synchronize
 * in between.  The peer bandwidth set by meson.build makes the copy ~42 ms,
 * so a read that is not ordered after it sees the old bytes. */
static int peer_order(void)
{
    unsigned char *src = malloc(N), *back = malloc(N);
    CHECK(src && back);
    void *d0 = NULL, *d1 = NULL;
    CHECK_OK(cudaSetDevice(1));
    CHECK_OK(cudaMalloc(&d1, N));
    CHECK_OK(cudaMemset(d1, 0, N));
    CHECK_OK(cudaDeviceSynchronize());
    CHECK_OK(cudaSetDevice(0));
    CHECK_OK(cudaMalloc(&d0, N));
    xpt_fill(src, N, 5);
    CHECK_OK(cudaMemcpy(d0, src, N, cudaMemcpyHostToDevice));

    /* Current device 0 = source; then read on the destination device. */
    CHECK_OK(cudaMemcpyPeer(d1, 1, d0, 0, N));
    CHECK_OK(cudaSetDevice(1));
    memset(back, 0, N);
    CHECK_OK(cudaMemcpy(back, d1, N, cudaMemcpyDeviceToHost));
    CHECK_PATTERN(back, N, 5);

    /* Issued with the destination device current; then the source is
     * overwritten by later work on the source device, which must wait for
     * the copy to have read it. */
    xpt_fill(src, N, 6);
    CHECK_OK(cudaSetDevice(0));
    CHECK_OK(cudaMemcpy(d0, src, N, cudaMemcpyHostToDevice));
    CHECK_OK(cudaDeviceSynchronize());
    CHECK_OK(cudaSetDevice(1));
    CHECK_OK(cudaMemcpyPeer(d1, 1, d0, 0, N));
    CHECK_OK(cudaSetDevice(0));
    CHECK_OK(cudaMemset(d0, 0x99, N));
    CHECK_OK(cudaDeviceSynchronize());
    CHECK_OK(cudaSetDevice(1));
    CHECK_OK(cudaDeviceSynchronize());
    memset(back, 0, N);
    CHECK_OK(cudaMemcpy(back, d1, N, cudaMemcpyDeviceToHost));
    CHECK_PATTERN(back, N, 6);

    CHECK_OK(cudaFree(d1));
    CHECK_OK(cudaFree(d0));
    free(src);
    free(back);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "peer-order") == 0)
        return peer_order();
    return all_checks();
}
