/* Peer access between two devices: who can access whom, enabling and disabling it with the documented errors (runtime and driver), the link's attributes, and copies between the devices' memory at the peer bandwidth. */
#include "xpt_check.h"

#include <cuda.h>

#define CHECK_CU(call, expected)                                               \
    do {                                                                       \
        CUresult xpt_r_ = (call);                                              \
        if (xpt_r_ != (expected))                                              \
            XPT_FAIL("%s returned %d, expected %d", #call, (int)xpt_r_,        \
                     (int)(expected));                                         \
    } while (0)

#define N (4u << 20)   /* ~42 ms at the peer bandwidth meson.build sets */

int main(void)
{
    int can = -1;
    CHECK_OK(cudaDeviceCanAccessPeer(&can, 0, 1));
    CHECK_EQ(can, 1);
    CHECK_OK(cudaDeviceCanAccessPeer(&can, 1, 0));
    CHECK_EQ(can, 1);
    CHECK_OK(cudaDeviceCanAccessPeer(&can, 1, 1));
    CHECK_EQ(can, 0);
    CHECK_CUDA(cudaDeviceCanAccessPeer(&can, 0, 2), cudaErrorInvalidDevice);
    CHECK_CUDA(cudaDeviceCanAccessPeer(NULL, 0, 1), cudaErrorInvalidValue);
    int v = -1;
    CHECK_OK(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrAccessSupported, 0, 1));
    CHECK_EQ(v, 1);
    CHECK_OK(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrPerformanceRank, 1, 0));
    CHECK_EQ(v, 0);
    CHECK_CUDA(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrAccessSupported, 1, 1),
               cudaErrorInvalidDevice);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidDevice);

    /* One direction at a time, each enabled once. */
    CHECK_OK(cudaSetDevice(0));
    CHECK_CUDA(cudaDeviceEnablePeerAccess(0, 0), cudaErrorInvalidDevice);
    CHECK_CUDA(cudaDeviceEnablePeerAccess(2, 0), cudaErrorInvalidDevice);
    CHECK_CUDA(cudaDeviceEnablePeerAccess(1, 1), cudaErrorInvalidValue);
    CHECK_CUDA(cudaDeviceDisablePeerAccess(1), cudaErrorPeerAccessNotEnabled);
    CHECK_CUDA(cudaGetLastError(), cudaErrorPeerAccessNotEnabled);
    CHECK_OK(cudaDeviceEnablePeerAccess(1, 0));
    CHECK_CUDA(cudaDeviceEnablePeerAccess(1, 0), cudaErrorPeerAccessAlreadyEnabled);
    CHECK_CUDA(cudaGetLastError(), cudaErrorPeerAccessAlreadyEnabled);
    CHECK_OK(cudaSetDevice(1));
    CHECK_CUDA(cudaDeviceDisablePeerAccess(0), cudaErrorPeerAccessNotEnabled);
    CHECK_OK(cudaDeviceEnablePeerAccess(0, 0));
    CHECK_OK(cudaSetDevice(0));
    CHECK_OK(cudaDeviceDisablePeerAccess(1));
    CHECK_CUDA(cudaDeviceDisablePeerAccess(1), cudaErrorPeerAccessNotEnabled);
    /* A reset takes the device's access with its context. */
    CHECK_OK(cudaDeviceEnablePeerAccess(1, 0));
    CHECK_OK(cudaDeviceReset());
    CHECK_OK(cudaDeviceEnablePeerAccess(1, 0));

    /* The driver's forms, on the contexts. */
    CUcontext c0 = NULL, c1 = NULL;
    CHECK_CU(cuCtxGetCurrent(&c0), CUDA_SUCCESS);
    CHECK_CU(cuDevicePrimaryCtxRetain(&c1, 1), CUDA_SUCCESS);
    int dcan = -1;
    CHECK_CU(cuDeviceCanAccessPeer(&dcan, 0, 1), CUDA_SUCCESS);
    CHECK_EQ(dcan, 1);
    CHECK_CU(cuCtxEnablePeerAccess(c1, 0), CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
    CHECK_CU(cuCtxEnablePeerAccess(c0, 0), CUDA_ERROR_PEER_ACCESS_UNSUPPORTED);
    CHECK_CU(cuCtxEnablePeerAccess(c1, 4), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cuCtxEnablePeerAccess((CUcontext)&v, 0), CUDA_ERROR_INVALID_CONTEXT);
    CHECK_CU(cuCtxDisablePeerAccess(c1), CUDA_SUCCESS);
    CHECK_CU(cuCtxDisablePeerAccess(c1), CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
    CHECK_CU(cuDeviceGetP2PAttribute(&v, CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED,
                                     0, 1), CUDA_SUCCESS);
    CHECK_EQ(v, 1);
    CHECK_CU(cuDeviceGetP2PAttribute(&v, (CUdevice_P2PAttribute)99, 0, 1),
             CUDA_ERROR_INVALID_VALUE);
    CHECK_OK(cudaDeviceEnablePeerAccess(1, 0));

    /* A copy between the devices' memory by address is a peer copy: it
     * moves the bytes and takes bytes / peer bandwidth. */
    unsigned char *host = malloc(N), *back = malloc(N);
    CHECK(host != NULL && back != NULL);
    xpt_fill(host, N, 3);
    void *a = NULL, *b = NULL;
    CHECK_OK(cudaMalloc(&a, N));
    CHECK_OK(cudaMemcpy(a, host, N, cudaMemcpyHostToDevice));
    CHECK_OK(cudaSetDevice(1));
    CHECK_OK(cudaMalloc(&b, N));
    CHECK_OK(cudaSetDevice(0));
    double t0 = xpt_now();
    CHECK_OK(cudaMemcpy(b, a, N, cudaMemcpyDefault));
    CHECK_OK(cudaDeviceSynchronize());
    CHECK_OK(cudaSetDevice(1));
    CHECK_OK(cudaDeviceSynchronize());
    double took = xpt_now() - t0;
    CHECK_MSG(took >= 0.9 * N / 100e6, "peer copy of %u bytes took %.3f s", N, took);
    CHECK_OK(cudaMemcpy(back, b, N, cudaMemcpyDeviceToHost));
    CHECK_PATTERN(back, N, 3);
    CHECK_OK(cudaFree(b));
    CHECK_OK(cudaSetDevice(0));
    CHECK_OK(cudaFree(a));
    free(host);
    free(back);
    puts("peer: ok");
    return 0;
}
