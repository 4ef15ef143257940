/* rt_peer.c: peer access in the runtime (cudaDeviceCanAccessPeer, cudaDeviceEnablePeerAccess, cudaDeviceDisablePeerAccess, cudaDeviceGetP2PAttribute), over the driver's. */
#include "rt_internal.h"

/* Initializes and checks two ordinals the caller names. */
static cudaError_t check_pair(int a, int b)
{
    cudaError_t e = xprt_init();
    if (e != cudaSuccess)
        return e;
    int n = xprt_device_count();
    return a >= 0 && a < n && b >= 0 && b < n ? cudaSuccess : cudaErrorInvalidDevice;
}

XPRT_EXPORT cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice)
{
    if (canAccessPeer == NULL)
        return xprt_result(cudaErrorInvalidValue);
    cudaError_t e = check_pair(device, peerDevice);
    if (e != cudaSuccess)
        return xprt_result(e);
    const xprt_drv *d = xprt_table(XPRT_LEGACY);
    return xprt_result_cu(XPRT_CALL(d, cuDeviceCanAccessPeer, canAccessPeer, device, peerDevice));
}

XPRT_EXPORT cudaError_t cudaDeviceGetP2PAttribute(int *value, enum cudaDeviceP2PAttr attr,
                                                  int srcDevice, int dstDevice)
{
    if (value == NULL)
        return xprt_result(cudaErrorInvalidValue);
    cudaError_t e = check_pair(srcDevice, dstDevice);
    if (e != cudaSuccess)
        return xprt_result(e);
    /* cudaDevP2PAttr* have the CU_DEVICE_P2P_ATTRIBUTE_* values. */
    const xprt_drv *d = xprt_table(XPRT_LEGACY);
    return xprt_result_cu(XPRT_CALL(d, cuDeviceGetP2PAttribute, value,
                                    (CUdevice_P2PAttribute)attr, srcDevice, dstDevice));
}

/* The current device's context, and peerDevice's primary context, for the
 * two calls below; cudaErrorInvalidDevice for a device that is no peer of
 * the current one (itself, or out of range), as documented. */
static cudaError_t enter_peer(int peerDevice, const xprt_drv **d, CUcontext *out_peer)
{
    cudaError_t e = xprt_enter(XPRT_LEGACY, d);
    if (e != cudaSuccess)
        return e;
    if (peerDevice < 0 || peerDevice >= xprt_device_count() ||
        peerDevice == xprt_current_device())
        return cudaErrorInvalidDevice;
    return xprt_primary_ctx(peerDevice, out_peer);
}

XPRT_EXPORT cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags)
{
    const xprt_drv *d;
    CUcontext peer;
    cudaError_t e = enter_peer(peerDevice, &d, &peer);
    if (e == cudaSuccess && flags != 0)
        e = cudaErrorInvalidValue;
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuCtxEnablePeerAccess, peer, flags));
}

XPRT_EXPORT cudaError_t cudaDeviceDisablePeerAccess(int peerDevice)
{
    const xprt_drv *d;
    CUcontext peer;
    cudaError_t e = enter_peer(peerDevice, &d, &peer);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuCtxDisablePeerAccess, peer));
}
