/* drv_peer.c: peer access between devices (cuDeviceCanAccessPeer, cuCtxEnablePeerAccess, cuCtxDisablePeerAccess, cuDeviceGetP2PAttribute). */
#include "xpsim_driver.h"

/* Every two distinct simulated devices can reach each other's memory, as
 * GPUs on one PCIe switch or NVLink can; a device is not its own peer. */
XPSIM_API CUresult cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev)
{
    if (canAccessPeer == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_device(dev);
    if (rc == CUDA_SUCCESS)
        rc = xpdrv_check_device(peerDev);
    if (rc != CUDA_SUCCESS)
        return rc;
    *canAccessPeer = dev != peerDev;
    return CUDA_SUCCESS;
}

/* The link between two devices, as the simulator models it: peer access
 * and arrays over it, no native atomics (a PCIe link, which the default
 * `peer=` bandwidth stands for), one performance rank. */
XPSIM_API CUresult cuDeviceGetP2PAttribute(int *value, CUdevice_P2PAttribute attrib,
                                           CUdevice srcDevice, CUdevice dstDevice)
{
    if (value == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_device(srcDevice);
    if (rc == CUDA_SUCCESS)
        rc = xpdrv_check_device(dstDevice);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (srcDevice == dstDevice)
        return CUDA_ERROR_INVALID_DEVICE;
    switch (attrib) {
    case CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK: *value = 0; break;
    case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED: *value = 1; break;
    case CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED: *value = 0; break;
    case CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED: *value = 1; break;
    case CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED: *value = 0; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* The current context and the bit of peerContext's device in its peer set,
 * after the checks both calls share. */
static CUresult peer_bit(CUcontext peerContext, CUcontext *out_ctx, uint32_t *out_bit)
{
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!xpdrv_ctx_valid(peerContext))
        return CUDA_ERROR_INVALID_CONTEXT;
    *out_ctx = xpdrv_current();
    *out_bit = 1u << peerContext->device;
    return CUDA_SUCCESS;
}

/* Access from the current context to the memory of peerContext's device.
 * Kept per context and peer device (simulated kernels touch no memory, so
 * access changes no copy: it is state, and its errors). */
XPSIM_API CUresult cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags)
{
    CUcontext ctx;
    uint32_t bit;
    CUresult rc = peer_bit(peerContext, &ctx, &bit);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (peerContext->device == ctx->device)
        return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
    if (atomic_fetch_or(&ctx->peers, bit) & bit)
        return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    xpsim_debug("cuCtxEnablePeerAccess: device %d -> device %d", ctx->device,
                peerContext->device);
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuCtxDisablePeerAccess(CUcontext peerContext)
{
    CUcontext ctx;
    uint32_t bit;
    CUresult rc = peer_bit(peerContext, &ctx, &bit);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!(atomic_fetch_and(&ctx->peers, ~bit) & bit))
        return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
    return CUDA_SUCCESS;
}
