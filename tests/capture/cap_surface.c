/* cap_surface.c: the runtime's copy surface beyond cudaMemcpy(Async): 2D
 * copies, peer copies between two devices (XFERPROF_SIM_DEVICES=2),
 * memsets and cudaMallocPitch, with known sizes.  Built twice: plain, and
 * with -DCUDA_API_PER_THREAD_DEFAULT_STREAM (the _ptds/_ptsz entry points).
 * Prints every pointer and handle for test_surface.py. */
#include "cap_util.h"

#define W 1000u                /* 2D: row bytes */
#define H 20u                  /* 2D: rows */
#define SPITCH 1024u           /* pitch of the pageable source rows */

int main(void)
{
    void *dev = NULL, *dev2 = NULL, *peer = NULL, *pinned = NULL, *managed = NULL;
    void *pitched = NULL;
    size_t pitch = 0;
    cudaStream_t stream = NULL;

    CHECK_OK(cudaSetDevice(1));
    CHECK_OK(cudaMalloc(&peer, 1 << 20));
    CHECK_OK(cudaSetDevice(0));
    CHECK_OK(cudaMalloc(&dev, 1 << 20));
    CHECK_OK(cudaMalloc(&dev2, 1 << 20));
    CHECK_OK(cudaMallocPitch(&pitched, &pitch, W, H));
    CHECK_OK(cudaMallocHost(&pinned, 1 << 20));
    CHECK_OK(cudaMallocManaged(&managed, 1 << 20, cudaMemAttachGlobal));
    CHECK_OK(cudaStreamCreate(&stream));
    unsigned char *pageable = malloc(SPITCH * H);
    CHECK(pageable != NULL);
    for (unsigned i = 0; i < SPITCH * H; i++)
        pageable[i] = (unsigned char)(i * 7 + 3);

    CAP_PRINT("dev", dev);
    CAP_PRINT("dev2", dev2);
    CAP_PRINT("peer", peer);
    CAP_PRINT("pitched", pitched);
    printf("pitch %zu\n", pitch);
    CAP_PRINT("pinned", pinned);
    CAP_PRINT("managed", managed);
    CAP_PRINT("pageable", pageable);
    CAP_PRINT("stream", stream);
    fflush(stdout);

    /* 2D: up from pageable rows SPITCH apart into the pitched allocation,
     * back down into contiguous pinned rows (the same W*H bytes), across on
     * the device, and async from pinned and from pageable memory. */
    CHECK_OK(cudaMemcpy2D(pitched, pitch, pageable, SPITCH, W, H, cudaMemcpyHostToDevice));
    CHECK_OK(cudaMemcpy2D(pinned, W, pitched, pitch, W, H, cudaMemcpyDeviceToHost));
    for (unsigned r = 0; r < H; r++)
        CHECK(memcmp((unsigned char *)pinned + r * W, pageable + r * SPITCH, W) == 0);
    CHECK_OK(cudaMemcpy2D(dev, 512, pitched, pitch, 500, 10, cudaMemcpyDeviceToDevice));
    /* A device-to-device copy returns before it is done, and the per-thread
     * default stream (the _ptds build) is not ordered with `stream`: wait
     * before the next copy overwrites what this one reads. */
    CHECK_OK(cudaDeviceSynchronize());
    CHECK_OK(cudaMemcpy2DAsync(pitched, pitch, pinned, W, W, 10, cudaMemcpyHostToDevice, stream));
    CHECK_OK(cudaMemcpy2DAsync(pitched, pitch, pageable, SPITCH, 100, 5, cudaMemcpyDefault,
                               stream));
    CHECK_OK(cudaStreamSynchronize(stream));

    /* Peer: from device 0 to device 1, sync and async. */
    CHECK_OK(cudaMemcpyPeer(peer, 1, dev, 0, 5000));
    CHECK_OK(cudaMemcpyPeerAsync(dev2, 0, peer, 1, 6000, stream));
    CHECK_OK(cudaStreamSynchronize(stream));

    /* Memsets: device memory (returns at once), pinned and managed memory
     * (completes first), async; then one on pageable memory, which fails. */
    CHECK_OK(cudaMemset(dev, 0x5a, 3000));
    CHECK_OK(cudaMemset(pinned, 7, 3100));
    CHECK_OK(cudaMemset(managed, 0x1ff, 3200));
    CHECK_OK(cudaMemsetAsync(dev2, 1, 4000, stream));
    CHECK_OK(cudaStreamSynchronize(stream));
    CHECK_CUDA(cudaMemset(pageable, 0, 100), cudaErrorInvalidValue);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidValue);
    CHECK(((unsigned char *)pinned)[3099] == 7 && ((unsigned char *)managed)[0] == 0xff);

    CHECK_OK(cudaStreamDestroy(stream));
    CHECK_OK(cudaFree(managed));
    CHECK_OK(cudaFreeHost(pinned));
    CHECK_OK(cudaFree(pitched));
    CHECK_OK(cudaFree(dev2));
    CHECK_OK(cudaFree(dev));
    CHECK_OK(cudaFree(peer));
    free(pageable);
    return 0;
}
