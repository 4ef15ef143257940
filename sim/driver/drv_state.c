/* drv_state.c: cuInit, devices, contexts, and fork behaviour of the simulated driver. */
#include "xpsim_devices.h"
#include "xpsim_driver.h"
#include "xpsim_graph.h"
#include "xpsim_stream.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define SIM_DRIVER_VERSION 13000
#define CTX_STACK_DEPTH 16

/* Set once by cuInit (under init_once); devices are never torn down, like a
 * real driver's, so pointers into them stay valid for the process. */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static CUresult init_result = CUDA_ERROR_NOT_INITIALIZED;
static atomic_bool initialized;
static atomic_bool forked_child;   /* set in a child forked after cuInit */
static int device_count;
static xpsim_device devices[XPSIM_MAX_DEVICES];
static pthread_mutex_t primary_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint_fast64_t launch_counter;

/* Each thread's context stack: top is the current context. */
static __thread CUcontext ctx_stack[CTX_STACK_DEPTH];
static __thread int ctx_depth;

static void mark_forked_child(void)
{
    /* A CUDA context does not survive fork(): the child's calls fail until
     * it execs, as NVIDIA documents. */
    atomic_store(&forked_child, true);
}

static void do_init(void)
{
    const xpsim_config *cfg = xpsim_config_get();
    /* No device at all, or none that CUDA_VISIBLE_DEVICES lets us see. */
    if (cfg->visible_count == 0) {
        init_result = CUDA_ERROR_NO_DEVICE;
        return;
    }
    for (int i = 0; i < cfg->visible_count; i++) {
        devices[i].ordinal = i;
        devices[i].physical = cfg->visible[i];
        xpsim_device_uuid(cfg->visible[i], cfg->hostname, devices[i].uuid);
        devices[i].primary.device = i;
        devices[i].primary.primary = true;
        devices[i].primary.id = (unsigned long long)i + 1;
        if (xpsim_devmem_init(&devices[i].mem, i, cfg->memory_bytes) != CUDA_SUCCESS) {
            fprintf(stderr, "xferprof-sim: cannot reserve %llu bytes of address space for device %d\n",
                    (unsigned long long)cfg->memory_bytes, i);
            init_result = CUDA_ERROR_OUT_OF_MEMORY;
            return;
        }
        xpsim_debug("device %d: [%#llx, %#llx)", i, (unsigned long long)devices[i].mem.base,
                    (unsigned long long)(devices[i].mem.base + devices[i].mem.capacity));
    }
    device_count = cfg->visible_count;
    xpsim_streams_init(device_count);
    pthread_atfork(NULL, NULL, mark_forked_child);
    init_result = CUDA_SUCCESS;
    atomic_store(&initialized, true);
}

XPSIM_API CUresult cuInit(unsigned int flags)
{
    if (atomic_load(&forked_child))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_once(&init_once, do_init);
    xpsim_debug("cuInit(%u) -> %d", flags, (int)init_result);
    return init_result;
}

CUresult xpdrv_check_init(void)
{
    if (!atomic_load(&initialized) || atomic_load(&forked_child))
        return CUDA_ERROR_NOT_INITIALIZED;
    return CUDA_SUCCESS;
}

int xpdrv_device_count(void)
{
    return device_count;
}

xpsim_device *xpdrv_device(int ordinal)
{
    return &devices[ordinal];
}

CUresult xpdrv_check_device(CUdevice dev)
{
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    return dev >= 0 && dev < device_count ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult xpdrv_enter(int *out_device)
{
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (ctx_depth == 0 || ctx_stack[ctx_depth - 1] == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    /* Destroyed by another thread while current here, as cuda.h describes. */
    if (atomic_load(&ctx_stack[ctx_depth - 1]->destroyed))
        return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    int dev = ctx_stack[ctx_depth - 1]->device;
    rc = xpsim_device_sticky_error(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    *out_device = dev;
    return CUDA_SUCCESS;
}

uint64_t xpdrv_next_launch_number(void)
{
    return atomic_fetch_add(&launch_counter, 1) + 1;
}

CUcontext xpdrv_current(void)
{
    return ctx_depth ? ctx_stack[ctx_depth - 1] : NULL;
}

static bool valid_context(CUcontext ctx)
{
    return xpdrv_ctx_valid(ctx);
}

CUresult xpdrv_ctx_push(CUcontext ctx)
{
    if (ctx_depth == CTX_STACK_DEPTH)
        return CUDA_ERROR_OUT_OF_MEMORY;
    ctx_stack[ctx_depth++] = ctx;
    return CUDA_SUCCESS;
}

void xpdrv_ctx_pop_if_current(CUcontext ctx)
{
    if (ctx_depth > 0 && ctx_stack[ctx_depth - 1] == ctx)
        ctx_depth--;
}

XPSIM_API CUresult cuDriverGetVersion(int *driverVersion)
{
    /* Answers before cuInit, as the real driver does. */
    if (driverVersion == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = SIM_DRIVER_VERSION;
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuDeviceGetCount(int *count)
{
    if (count == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    *count = device_count;
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    if (device == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_device(ordinal);
    if (rc != CUDA_SUCCESS)
        return rc;
    *device = ordinal;
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    if (name == NULL || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    snprintf(name, (size_t)len, "xferprof simulated GPU");
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    if (bytes == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    *bytes = devices[dev].mem.capacity;
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    if (uuid == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    /* The physical GPU's, whatever ordinal it has here.  Like NVIDIA's, it
     * leaves the context's sticky error alone (it needs no context). */
    memcpy(uuid->bytes, devices[dev].uuid, sizeof uuid->bytes);
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
    if (pciBusId == NULL || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    snprintf(pciBusId, (size_t)len, "0000:%02x:00.0", 0x10 + devices[dev].physical);
    return CUDA_SUCCESS;
}

/* The attributes of a Hopper-class device (compute capability 9.0), the ones
 * programs and frameworks query.  Unknown attributes: CUDA_ERROR_INVALID_VALUE. */
static bool device_attribute(CUdevice_attribute attrib, CUdevice dev, int *out)
{
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *out = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: *out = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *out = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *out = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *out = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: *out = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *out = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *out = 49152; break;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: *out = 65536; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *out = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH: *out = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: *out = 65536; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *out = 1755000; break;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: *out = 512; break;
    case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP: *out = 1; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *out = 132; break;
    case CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT: *out = 0; break;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED: *out = 0; break;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: *out = 1; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE: *out = CU_COMPUTEMODE_DEFAULT; break;
    case CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT: *out = 512; break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: *out = 1; break;
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: *out = 1; break;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *out = 0x10 + devices[dev].physical; break;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: *out = 0; break;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: *out = 0; break;
    case CU_DEVICE_ATTRIBUTE_TCC_DRIVER: *out = 0; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *out = 2619000; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *out = 5120; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *out = 52428800; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *out = 2048; break;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: *out = 2; break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *out = 1; break;
    case CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED: *out = 1; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *out = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *out = 0; break;
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED: *out = 1; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED: *out = 1; break;
    case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED: *out = 1; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *out = 233472; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *out = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: *out = 1; break;
    case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD: *out = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID: *out = devices[dev].physical; break;
    case CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED: *out = 0; break;
    case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: *out = 0; break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: *out = 1; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED: *out = 1; break;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: *out = 1; break;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: *out = 1; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
        *out = XPDRV_SMEM_PER_BLOCK_OPTIN;
        break;
    case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES: *out = 0; break;
    case CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST: *out = 0; break;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: *out = 1; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: *out = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE: *out = 0; break;
    case CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE: *out = 0; break;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: *out = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: *out = 1; break;
    case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED: *out = 0; break;
    default: return false;
    }
    return true;
}

XPSIM_API CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    if (pi == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    return device_attribute(attrib, dev, pi) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

XPSIM_API CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    if (pctx == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&primary_lock);
    devices[dev].primary_refs++;
    pthread_mutex_unlock(&primary_lock);
    *pctx = &devices[dev].primary;
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    CUresult rc = xpdrv_check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&primary_lock);
    if (devices[dev].primary_refs > 0)
        devices[dev].primary_refs--;
    pthread_mutex_unlock(&primary_lock);
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    CUresult rc = xpdrv_check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    /* Destroys what the context owned: pending work is finished, device and
     * managed memory is freed, and a sticky error is cleared. */
    xpsim_device_reset(dev);
    xpdrv_ctx_free_resources(&devices[dev].primary);
    /* Peer access from this device goes with the context ("until ... either
     * device is reset": access to it from others is not tracked apart). */
    atomic_store(&devices[dev].primary.peers, 0);
    pthread_mutex_lock(&primary_lock);
    devices[dev].primary_refs = 0;
    pthread_mutex_unlock(&primary_lock);
    xpsim_debug("cuDevicePrimaryCtxReset(%d)", dev);
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    if (flags == NULL || active == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&primary_lock);
    *flags = devices[dev].primary_flags;
    *active = devices[dev].primary_refs > 0;
    pthread_mutex_unlock(&primary_lock);
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
    CUresult rc = xpdrv_check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&primary_lock);
    devices[dev].primary_flags = flags;
    pthread_mutex_unlock(&primary_lock);
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuCtxSetCurrent(CUcontext ctx)
{
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (ctx != NULL && !valid_context(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (ctx_depth == 0)
        ctx_depth = 1;
    ctx_stack[ctx_depth - 1] = ctx;
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    if (pctx == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    *pctx = ctx_depth ? ctx_stack[ctx_depth - 1] : NULL;
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!valid_context(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    return xpdrv_ctx_push(ctx);
}

XPSIM_API CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (ctx_depth == 0 || ctx_stack[ctx_depth - 1] == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    ctx_depth--;
    if (pctx)
        *pctx = ctx_stack[ctx_depth];
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuCtxGetDevice(CUdevice *device)
{
    if (device == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (ctx_depth == 0 || ctx_stack[ctx_depth - 1] == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    *device = ctx_stack[ctx_depth - 1]->device;
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuCtxSynchronize(void)
{
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc == CUDA_SUCCESS)
        rc = xpsim_capture_unsafe();
    if (rc != CUDA_SUCCESS)
        return rc;
    return xpsim_device_synchronize(dev);
}

/* The simulator has no profiler to switch (the profiler under test watches
 * from outside): like NVIDIA's, these need a current context, do nothing
 * more, and do not nest (a second Start, or a Stop with none, is no error). */
XPSIM_API CUresult cuProfilerStart(void);
XPSIM_API CUresult cuProfilerStart(void)
{
    int dev;
    return xpdrv_enter(&dev);
}

XPSIM_API CUresult cuProfilerStop(void);
XPSIM_API CUresult cuProfilerStop(void)
{
    int dev;
    return xpdrv_enter(&dev);
}

/* CUDA 13's form names the context; NULL means the current one. */
XPSIM_API CUresult cuCtxSynchronize_v2(CUcontext ctx);
XPSIM_API CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    if (ctx == NULL)
        return cuCtxSynchronize();
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!valid_context(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    rc = xpsim_device_sticky_error(ctx->device);
    if (rc == CUDA_SUCCESS)
        rc = xpsim_capture_unsafe();
    return rc != CUDA_SUCCESS ? rc : xpsim_device_synchronize(ctx->device);
}

int xpdrv_unsupported(const char *name)
{
    xpsim_debug("%s: not simulated -> CUDA_ERROR_NOT_SUPPORTED", name);
    return CUDA_ERROR_NOT_SUPPORTED;
}
