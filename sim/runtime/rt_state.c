/* rt_state.c: driver tables, lazy initialization, per-thread and per-device state. */
#include "rt_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* ---- the driver ---------------------------------------------------------- */

typedef __typeof__(cuGetProcAddress_v2) gpa_fn;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static cudaError_t g_init_status;
static gpa_fn *g_gpa;
static xprt_drv g_tables[2];
static int g_device_count;

typedef struct entry_name {
    const char *name;
    size_t offset;
} entry_name;

static const entry_name g_entries[] = {
#define XPRT_ENTRY(name, type) {#name, offsetof(xprt_drv, name)},
    XPRT_DRIVER_FUNCS(XPRT_ENTRY)
#undef XPRT_ENTRY
    {"xpsimModuleGlobalAlloc", offsetof(xprt_drv, xpsimModuleGlobalAlloc)},
};

/* Fills one table the way NVIDIA's runtime does: every entry point by its base
 * name, for the runtime's own version, in the given default-stream mode. */
static void resolve(xprt_drv *table, cuuint64_t flags)
{
    for (size_t i = 0; i < sizeof g_entries / sizeof g_entries[0]; i++) {
        void *pfn = NULL;
        CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        CUresult r = g_gpa(g_entries[i].name, &pfn, CUDART_VERSION, flags, &status);
        if (r != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS)
            pfn = NULL;
        if (pfn == NULL)
            xpsim_debug("cudart: driver has no %s (flags %llu)", g_entries[i].name,
                        (unsigned long long)flags);
        /* A data pointer to a function pointer: the member has the right type,
         * and POSIX guarantees the representations agree. */
        memcpy((char *)table + g_entries[i].offset, &pfn, sizeof pfn);
    }
}

static void load_driver(void)
{
    g_init_status = cudaErrorInsufficientDriver;
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (h == NULL) {
        xpsim_debug("cudart: dlopen(libcuda.so.1) failed: %s", dlerror());
        return;
    }
    void *sym = dlsym(h, "cuGetProcAddress_v2");
    if (sym == NULL) {
        xpsim_debug("cudart: libcuda.so.1 has no cuGetProcAddress_v2");
        return;
    }
    memcpy(&g_gpa, &sym, sizeof sym);
    resolve(&g_tables[XPRT_LEGACY], CU_GET_PROC_ADDRESS_DEFAULT);
    resolve(&g_tables[XPRT_PTDS], CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    const xprt_drv *d = &g_tables[XPRT_LEGACY];
    if (d->cuInit == NULL || d->cuDeviceGetCount == NULL || d->cuDevicePrimaryCtxRetain == NULL ||
        d->cuCtxSetCurrent == NULL)
        return;
    CUresult r = d->cuInit(0);
    if (r == CUDA_SUCCESS)
        r = d->cuDeviceGetCount(&g_device_count);
    if (r != CUDA_SUCCESS) {
        g_device_count = 0;
        g_init_status = xprt_map_error(r);
        xpsim_debug("cudart: driver initialization failed: %d", (int)r);
        return;
    }
    if (g_device_count > XPSIM_MAX_DEVICES)
        g_device_count = XPSIM_MAX_DEVICES;
    g_init_status = g_device_count > 0 ? cudaSuccess : cudaErrorNoDevice;
    xpsim_debug("cudart: driver loaded, %d device(s)", g_device_count);
}

cudaError_t xprt_init(void)
{
    pthread_once(&g_once, load_driver);
    return g_init_status;
}

const xprt_drv *xprt_table(xprt_api api)
{
    return &g_tables[api == XPRT_PTDS ? XPRT_PTDS : XPRT_LEGACY];
}

gpa_fn *xprt_get_proc_address(void)
{
    return g_gpa;
}

int xprt_device_count(void)
{
    return g_device_count;
}

/* ---- per-device state ---------------------------------------------------- */

typedef struct device_state {
    pthread_mutex_t lock;        /* guards ctx while it is retained */
    CUcontext ctx;               /* primary context, NULL until retained */
    atomic_uint generation;      /* bumped by every cudaDeviceReset */
    atomic_uint flags;           /* cudaSetDeviceFlags */
} device_state;

static device_state g_devices[XPSIM_MAX_DEVICES] = {
#define DEV_INIT {.lock = PTHREAD_MUTEX_INITIALIZER}
    DEV_INIT, DEV_INIT, DEV_INIT, DEV_INIT, DEV_INIT, DEV_INIT, DEV_INIT, DEV_INIT,
    DEV_INIT, DEV_INIT, DEV_INIT, DEV_INIT, DEV_INIT, DEV_INIT, DEV_INIT, DEV_INIT,
#undef DEV_INIT
};
_Static_assert(XPSIM_MAX_DEVICES == 16, "g_devices initializer lists 16 devices");

unsigned xprt_device_generation(int dev)
{
    return atomic_load_explicit(&g_devices[dev].generation, memory_order_acquire);
}

unsigned xprt_device_flags(int dev)
{
    return atomic_load_explicit(&g_devices[dev].flags, memory_order_relaxed);
}

void xprt_set_device_flags(int dev, unsigned flags)
{
    atomic_store_explicit(&g_devices[dev].flags, flags, memory_order_relaxed);
}

cudaError_t xprt_primary_ctx(int dev, CUcontext *out_ctx)
{
    device_state *ds = &g_devices[dev];
    const xprt_drv *d = &g_tables[XPRT_LEGACY];
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&ds->lock);
    if (ds->ctx == NULL) {
        CUdevice cudev = dev;
        if (d->cuDeviceGet != NULL)
            r = d->cuDeviceGet(&cudev, dev);
        if (r == CUDA_SUCCESS)
            r = d->cuDevicePrimaryCtxRetain(&ds->ctx, cudev);
        if (r != CUDA_SUCCESS)
            ds->ctx = NULL;
    }
    *out_ctx = ds->ctx;
    pthread_mutex_unlock(&ds->lock);
    return xprt_map_error(r);
}

void xprt_device_was_reset(int dev)
{
    device_state *ds = &g_devices[dev];
    pthread_mutex_lock(&ds->lock);
    /* Retain again on next use: the reset context may come back as a new
     * object, and every thread must make it current again. */
    ds->ctx = NULL;
    atomic_store_explicit(&ds->flags, 0, memory_order_relaxed);
    atomic_fetch_add_explicit(&ds->generation, 1, memory_order_acq_rel);
    pthread_mutex_unlock(&ds->lock);
}

/* ---- per-thread state ---------------------------------------------------- */

typedef struct thread_state {
    int device;                  /* cudaSetDevice; 0 until then */
    int ctx_device;              /* whose primary context is current here, -1 none */
    unsigned ctx_generation;     /* of that device when it was made current */
    CUcontext ctx;               /* the context the runtime made current last */
} thread_state;

static _Thread_local thread_state t_state = {.device = 0, .ctx_device = -1};

/* The calling thread's current context, as the driver says (NULL: none,
 * or the driver is not loaded). */
static CUcontext driver_current(void)
{
    CUcontext cur = NULL;
    if (XPRT_CALL(&g_tables[XPRT_LEGACY], cuCtxGetCurrent, &cur) != CUDA_SUCCESS)
        cur = NULL;
    return cur;
}

/* A context current on this thread that the runtime did not make current:
 * the program's own, through the driver API. */
static bool foreign_context(CUcontext cur)
{
    return cur != NULL && cur != t_state.ctx;
}

int xprt_current_device(void)
{
    CUdevice dev;
    if (foreign_context(driver_current()) &&
        XPRT_CALL(&g_tables[XPRT_LEGACY], cuCtxGetDevice, &dev) == CUDA_SUCCESS)
        return dev;
    return t_state.device;
}

void xprt_set_current_device(int dev)
{
    t_state.device = dev;
}

cudaError_t xprt_use_device(int dev, CUcontext *out_ctx)
{
    unsigned gen = xprt_device_generation(dev);
    /* The program may have changed the current context through the driver
     * since (cuCtxPopCurrent, cuCtxSetCurrent): make ours current again. */
    if (driver_current() != t_state.ctx)
        t_state.ctx_device = -1;
    if (t_state.ctx_device == dev && t_state.ctx_generation == gen && out_ctx == NULL)
        return cudaSuccess;
    CUcontext ctx;
    cudaError_t e = xprt_primary_ctx(dev, &ctx);
    if (e != cudaSuccess)
        return e;
    if (t_state.ctx_device != dev || t_state.ctx_generation != gen) {
        CUresult r = g_tables[XPRT_LEGACY].cuCtxSetCurrent(ctx);
        if (r != CUDA_SUCCESS)
            return xprt_map_error(r);
        t_state.ctx_device = dev;
        t_state.ctx_generation = gen;
        t_state.ctx = ctx;
    }
    if (out_ctx != NULL)
        *out_ctx = ctx;
    return cudaSuccess;
}

cudaError_t xprt_enter(xprt_api api, const xprt_drv **out)
{
    cudaError_t e = xprt_init();
    if (e != cudaSuccess)
        return e;
    *out = xprt_table(api);
    if (foreign_context(driver_current()))
        return cudaSuccess;
    int dev = t_state.device;
    if (dev >= g_device_count)
        return cudaErrorInvalidDevice;
    return xprt_use_device(dev, NULL);
}
