/* rt_device.c: device selection, properties, attributes, sync, reset, flags, versions. */
#include "rt_internal.h"
#include "rt_abi.h"

#include <string.h>

/* Initializes and checks an ordinal the caller names explicitly. */
static cudaError_t init_device(int device)
{
    cudaError_t e = xprt_init();
    if (e != cudaSuccess)
        return e;
    if (device < 0 || device >= xprt_device_count())
        return cudaErrorInvalidDevice;
    return cudaSuccess;
}

XPRT_EXPORT cudaError_t cudaGetDeviceCount(int *count)
{
    if (count == NULL)
        return xprt_result(cudaErrorInvalidValue);
    cudaError_t e = xprt_init();
    /* NVIDIA's runtime leaves *count alone when it finds no driver; zero is
     * friendlier to programs that ignore the error, and what the brief of
     * this simulator asks for. */
    *count = e == cudaSuccess ? xprt_device_count() : 0;
    return xprt_result(e);
}

XPRT_EXPORT cudaError_t cudaSetDevice(int device)
{
    cudaError_t e = init_device(device);
    if (e != cudaSuccess)
        return xprt_result(e);
    /* CUDA 12+: selecting a device initializes its primary context. */
    e = xprt_use_device(device, NULL);
    if (e == cudaSuccess)
        xprt_set_current_device(device);
    return xprt_result(e);
}

XPRT_EXPORT cudaError_t cudaGetDevice(int *device)
{
    if (device == NULL)
        return xprt_result(cudaErrorInvalidValue);
    cudaError_t e = xprt_init();
    if (e != cudaSuccess)
        return xprt_result(e);
    *device = xprt_current_device();
    return cudaSuccess;
}

XPRT_EXPORT cudaError_t cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags)
{
    if (flags != 0 || (deviceFlags & ~(unsigned)cudaDeviceMask) != 0)
        return xprt_result(cudaErrorInvalidValue);
    cudaError_t e = init_device(device);
    if (e == cudaSuccess) {
        if (deviceFlags != 0)
            xprt_set_device_flags(device, deviceFlags);
        CUcontext ctx;
        e = xprt_primary_ctx(device, &ctx);
    }
    return xprt_result(e);
}

/* Every field of CUDA 13's struct cudaDeviceProp that has a device attribute. */
static const xprt_prop_attr g_props[] = {
    XPRT_PROPS_COMMON(XPRT_PROP_I, XPRT_PROP_U, XPRT_PROP_S)
    XPRT_PROP_I(deviceNumaConfig, NUMA_CONFIG)
    XPRT_PROP_I(deviceNumaId, NUMA_ID)
    XPRT_PROP_I(mpsEnabled, MPS_ENABLED)
    XPRT_PROP_I(hostNumaId, HOST_NUMA_ID)
    XPRT_PROP_U(gpuPciDeviceID, GPU_PCI_DEVICE_ID)
    XPRT_PROP_U(gpuPciSubsystemID, GPU_PCI_SUBSYSTEM_ID)
    XPRT_PROP_I(hostNumaMultinodeIpcSupported, HOST_NUMA_MULTINODE_IPC_SUPPORTED)
};

static void store_prop(char *prop, const xprt_prop_attr *p, int value)
{
    char *field = prop + p->offset;
    switch (p->type) {
    case XPRT_P_INT:
        memcpy(field, &value, sizeof value);
        break;
    case XPRT_P_UINT: {
        unsigned u = (unsigned)value;
        memcpy(field, &u, sizeof u);
        break;
    }
    case XPRT_P_SIZE: {
        /* The driver reports sizes as int; negative means nothing sensible. */
        size_t s = value < 0 ? 0 : (size_t)value;
        memcpy(field, &s, sizeof s);
        break;
    }
    }
}

int xprt_device_properties(void *prop_out, const xprt_prop_layout *layout, int device)
{
    char *prop = prop_out;
    if (prop == NULL)
        return xprt_result(cudaErrorInvalidValue);
    cudaError_t e = init_device(device);
    if (e != cudaSuccess)
        return xprt_result(e);
    const xprt_drv *d = xprt_table(XPRT_LEGACY);
    CUdevice dev = device;
    CUresult r = XPRT_CALL(d, cuDeviceGet, &dev, device);
    if (r != CUDA_SUCCESS)
        return xprt_result_cu(r);
    memset(prop, 0, layout->size);
    char *name = prop + layout->name_offset;
    r = XPRT_CALL(d, cuDeviceGetName, name, (int)layout->name_size, dev);
    if (r != CUDA_SUCCESS)
        return xprt_result_cu(r);
    name[layout->name_size - 1] = '\0';
    CUuuid uuid;
    if (XPRT_CALL(d, cuDeviceGetUuid, &uuid, dev) == CUDA_SUCCESS)
        memcpy(prop + layout->uuid_offset, &uuid, sizeof uuid);
    size_t total = 0;
    r = XPRT_CALL(d, cuDeviceTotalMem, &total, dev);
    if (r != CUDA_SUCCESS)
        return xprt_result_cu(r);
    memcpy(prop + layout->total_mem_offset, &total, sizeof total);
    /* An attribute the driver does not know stays zero, as do the fields
     * without an attribute (luid is undefined off Windows anyway). */
    for (size_t i = 0; i < layout->nattrs; i++) {
        int value = 0;
        if (XPRT_CALL(d, cuDeviceGetAttribute, &value, (CUdevice_attribute)layout->attrs[i].attr,
                      dev) == CUDA_SUCCESS)
            store_prop(prop, &layout->attrs[i], value);
    }
    return cudaSuccess;
}

/* CUDA 12 has another struct cudaDeviceProp under this name (rt_abi12.c). */
XPRT_EXPORT cudaError_t XPRT_ABI13(cudaGetDeviceProperties, xprt_cuda13_GetDeviceProperties)(
    struct cudaDeviceProp *prop, int device)
{
    xprt_prop_layout layout = XPRT_PROP_LAYOUT(g_props);
    return (cudaError_t)xprt_device_properties(prop, &layout, device);
}

XPRT_EXPORT cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    if (value == NULL)
        return xprt_result(cudaErrorInvalidValue);
    cudaError_t e = init_device(device);
    if (e != cudaSuccess)
        return xprt_result(e);
    /* enum cudaDeviceAttr and CUdevice_attribute share their values. */
    const xprt_drv *d = xprt_table(XPRT_LEGACY);
    return xprt_result_cu(XPRT_CALL(d, cuDeviceGetAttribute, value, (CUdevice_attribute)attr,
                                    (CUdevice)device));
}

XPRT_EXPORT cudaError_t cudaDeviceGetPCIBusId(char *pciBusId, int len, int device)
{
    if (pciBusId == NULL || len <= 0)
        return xprt_result(cudaErrorInvalidValue);
    cudaError_t e = init_device(device);
    if (e != cudaSuccess)
        return xprt_result(e);
    const xprt_drv *d = xprt_table(XPRT_LEGACY);
    return xprt_result_cu(XPRT_CALL(d, cuDeviceGetPCIBusId, pciBusId, len, (CUdevice)device));
}

XPRT_EXPORT cudaError_t cudaDeviceSynchronize(void)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    /* The CUDA 13 ABI takes a context; NULL is the current one. */
    return xprt_result_cu(XPRT_CALL(d, cuCtxSynchronize, NULL));
}

XPRT_EXPORT cudaError_t cudaDeviceReset(void)
{
    cudaError_t e = xprt_init();
    if (e != cudaSuccess)
        return xprt_result(e);
    int dev = xprt_current_device();
    if (dev >= xprt_device_count())
        return xprt_result(cudaErrorInvalidDevice);
    const xprt_drv *d = xprt_table(XPRT_LEGACY);
    /* The driver frees the device's allocations, module variables included,
     * and clears its sticky error; the runtime forgets what it had loaded. */
    CUresult r = XPRT_CALL(d, cuDevicePrimaryCtxReset, (CUdevice)dev);
    if (r != CUDA_SUCCESS)
        return xprt_result_cu(r);
    xprt_device_was_reset(dev);
    xprt_clear_sticky(dev);
    /* The device's context comes back at once for the __managed__ variables
     * (and, as with CUDA 12+, is what the next call would create anyway). */
    e = xprt_use_device(dev, NULL);
    if (e == cudaSuccess)
        xprt_modules_after_reset(d, dev);
    return xprt_result(e);
}

XPRT_EXPORT cudaError_t cudaSetDeviceFlags(unsigned int flags)
{
    unsigned sched = flags & cudaDeviceScheduleMask;
    if ((flags & ~(unsigned)cudaDeviceMask) != 0 ||
        (sched != cudaDeviceScheduleAuto && sched != cudaDeviceScheduleSpin &&
         sched != cudaDeviceScheduleYield && sched != cudaDeviceScheduleBlockingSync))
        return xprt_result(cudaErrorInvalidValue);
    cudaError_t e = xprt_init();
    if (e != cudaSuccess)
        return xprt_result(e);
    int dev = xprt_current_device();
    if (dev >= xprt_device_count())
        return xprt_result(cudaErrorInvalidDevice);
    /* cudaDevice* flags have the CU_CTX_* values.  A driver that does not
     * model scheduling policies may refuse; the runtime still remembers. */
    const xprt_drv *d = xprt_table(XPRT_LEGACY);
    CUresult r = XPRT_CALL(d, cuDevicePrimaryCtxSetFlags, (CUdevice)dev, flags);
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_SUPPORTED)
        return xprt_result_cu(r);
    xprt_set_device_flags(dev, flags);
    /* Documented: a device not yet initialized is initialized with them. */
    return xprt_result(xprt_use_device(dev, NULL));
}

XPRT_EXPORT cudaError_t cudaGetDeviceFlags(unsigned int *flags)
{
    if (flags == NULL)
        return xprt_result(cudaErrorInvalidValue);
    cudaError_t e = xprt_init();
    if (e != cudaSuccess)
        return xprt_result(e);
    int dev = xprt_current_device();
    if (dev >= xprt_device_count())
        return xprt_result(cudaErrorInvalidDevice);
    /* Host memory is always mapped under unified addressing, so the context
     * reports cudaDeviceMapHost whether or not it was asked for. */
    *flags = xprt_device_flags(dev) | cudaDeviceMapHost;
    return cudaSuccess;
}

XPRT_EXPORT cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    int least = 0, greatest = 0;
    CUresult r = XPRT_CALL(d, cuCtxGetStreamPriorityRange, &least, &greatest);
    if (r != CUDA_SUCCESS)
        return xprt_result_cu(r);
    if (leastPriority != NULL)
        *leastPriority = least;
    if (greatestPriority != NULL)
        *greatestPriority = greatest;
    return cudaSuccess;
}

XPRT_EXPORT cudaError_t cudaDriverGetVersion(int *driverVersion)
{
    if (driverVersion == NULL)
        return xprt_result(cudaErrorInvalidValue);
    (void)xprt_init();
    const xprt_drv *d = xprt_table(XPRT_LEGACY);
    /* Without a driver NVIDIA's runtime answers version 0 and success (checked
     * against libcudart.so.13 on a machine without libcuda.so.1). */
    if (d->cuDriverGetVersion == NULL) {
        *driverVersion = 0;
        return cudaSuccess;
    }
    return xprt_result_cu(d->cuDriverGetVersion(driverVersion));
}

XPRT_EXPORT cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
    if (runtimeVersion == NULL)
        return xprt_result(cudaErrorInvalidValue);
    *runtimeVersion = XPRT_RUNTIME_VERSION;
    return cudaSuccess;
}

XPRT_EXPORT cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    if (free_bytes == NULL || total_bytes == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuMemGetInfo, free_bytes, total_bytes));
}
