/* rt_register.c: nvcc's registration entry points, lazy module loading, launches. */
/* Also the symbol and function queries built on the registry. */
#include "rt_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- a pointer-keyed hash map (open addressing, linear probing) ---------- */

/* Removal keeps the key with a NULL value (a tombstone), so probing chains
 * stay intact; registering the same key again reuses the slot. */
typedef struct ptr_map {
    const void **keys;
    void **vals;
    size_t cap;                  /* power of two, or 0 */
    size_t used;                 /* slots with a key */
} ptr_map;

static size_t hash_ptr(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x;
}

static size_t map_slot(const ptr_map *m, const void *key)
{
    size_t mask = m->cap - 1, i = hash_ptr(key) & mask;
    while (m->keys[i] != NULL && m->keys[i] != key)
        i = (i + 1) & mask;
    return i;
}

static void *map_get(const ptr_map *m, const void *key)
{
    if (m->cap == 0 || key == NULL)
        return NULL;
    size_t i = map_slot(m, key);
    return m->keys[i] == key ? m->vals[i] : NULL;
}

static bool map_grow(ptr_map *m)
{
    size_t cap = m->cap == 0 ? 64 : m->cap * 2;
    ptr_map n = {.keys = calloc(cap, sizeof *n.keys), .vals = calloc(cap, sizeof *n.vals),
                 .cap = cap};
    if (n.keys == NULL || n.vals == NULL) {
        free(n.keys);
        free(n.vals);
        return false;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (m->keys[i] == NULL || m->vals[i] == NULL)
            continue;            /* tombstones do not survive a rehash */
        size_t j = map_slot(&n, m->keys[i]);
        n.keys[j] = m->keys[i];
        n.vals[j] = m->vals[i];
        n.used++;
    }
    free(m->keys);
    free(m->vals);
    *m = n;
    return true;
}

static bool map_put(ptr_map *m, const void *key, void *val)
{
    if (key == NULL)
        return false;
    if ((m->used + 1) * 2 > m->cap && !map_grow(m))
        return false;
    size_t i = map_slot(m, key);
    if (m->keys[i] == NULL) {
        m->keys[i] = key;
        m->used++;
    }
    m->vals[i] = val;
    return true;
}

static void map_del(ptr_map *m, const void *key, const void *val)
{
    if (m->cap == 0 || key == NULL)
        return;
    size_t i = map_slot(m, key);
    if (m->keys[i] == key && m->vals[i] == val)
        m->vals[i] = NULL;
}

/* ---- records ------------------------------------------------------------- */

#define FUNC_MAGIC 0x66727078u   /* "xprf": tells a cudaKernel_t of ours */

typedef struct fatbin_rec fatbin_rec;

typedef struct xprt_func {
    uint32_t magic;
    fatbin_rec *fb;
    const void *host_fun;        /* the host stub nvcc generated */
    const char *name;            /* the kernel's (mangled) device name */
    /* Per device, guarded by fb->lock: the loaded function, and the device
     * generation + 1 it belongs to (0: not loaded). */
    CUfunction fn[XPSIM_MAX_DEVICES];
    unsigned fn_gen1[XPSIM_MAX_DEVICES];
    struct xprt_func *next;
} xprt_func;

struct xprt_var {
    fatbin_rec *fb;
    const void *shadow;          /* host shadow; for __managed__ the pointer slot */
    const char *name;
    size_t size;
    bool constant;
    bool managed;
    void **managed_slot;         /* where host code reads the managed address */
    CUdeviceptr managed_ptr;     /* guarded by fb->lock; one per process */
    int managed_dev;             /* whose context allocated it */
    CUdeviceptr ptr[XPSIM_MAX_DEVICES];      /* guarded by fb->lock */
    unsigned ptr_gen1[XPSIM_MAX_DEVICES];
    struct xprt_var *next;
};

struct fatbin_rec {
    /* First, so that *handle is the fatbin image, as code that peeks at the
     * handle nvcc keeps would expect. */
    const void *image;
    pthread_mutex_t lock;        /* guards the per-device state below and in
                                  * this fatbin's functions and variables */
    CUmodule mod[XPSIM_MAX_DEVICES];
    unsigned mod_gen1[XPSIM_MAX_DEVICES];
    xprt_func *funcs;
    xprt_var *vars;
    struct fatbin_rec *next;     /* in g_fatbins, under g_reg_lock */
};

/* The fatbin wrapper nvcc emits (fatbinary_section.h's __fatBinC_Wrapper_t). */
typedef struct fatbin_wrapper {
    int magic;
    int version;
    const unsigned long long *data;
    void *filename_or_fatbins;
} fatbin_wrapper;

#define FATBINC_WRAPPER_MAGIC 0x466243B1

/* Host stub and record address -> xprt_func; shadow and managed storage
 * address -> xprt_var.  Records are never freed: a concurrent lookup may
 * still hold one while its fatbin unregisters at exit. */
static pthread_rwlock_t g_reg_lock = PTHREAD_RWLOCK_INITIALIZER;
static ptr_map g_funcs;
static ptr_map g_vars;
static fatbin_rec *g_fatbins;

static xprt_func *find_func(const void *key)
{
    pthread_rwlock_rdlock(&g_reg_lock);
    xprt_func *f = map_get(&g_funcs, key);
    pthread_rwlock_unlock(&g_reg_lock);
    return f;
}

xprt_var *xprt_find_var(const void *symbol)
{
    pthread_rwlock_rdlock(&g_reg_lock);
    xprt_var *v = map_get(&g_vars, symbol);
    pthread_rwlock_unlock(&g_reg_lock);
    return v;
}

/* ---- registration (called from constructors nvcc generates) -------------- */

XPRT_EXPORT void **__cudaRegisterFatBinary(void *fatCubin)
{
    fatbin_rec *fb = calloc(1, sizeof *fb);
    if (fb == NULL)
        return NULL;
    const fatbin_wrapper *w = fatCubin;
    /* A wrapper points at the fatbin; anything else is taken to be one. */
    fb->image = w != NULL && w->magic == FATBINC_WRAPPER_MAGIC ? (const void *)w->data : fatCubin;
    pthread_mutex_init(&fb->lock, NULL);
    pthread_rwlock_wrlock(&g_reg_lock);
    fb->next = g_fatbins;
    g_fatbins = fb;
    pthread_rwlock_unlock(&g_reg_lock);
    xpsim_debug("cudart: __cudaRegisterFatBinary(%p) -> %p", fatCubin, (void *)fb);
    return (void **)fb;
}

XPRT_EXPORT void __cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
    xpsim_debug("cudart: __cudaRegisterFatBinaryEnd(%p)", (void *)fatCubinHandle);
}

XPRT_EXPORT void __cudaUnregisterFatBinary(void **fatCubinHandle)
{
    fatbin_rec *fb = (fatbin_rec *)fatCubinHandle;
    if (fb == NULL)
        return;
    xpsim_debug("cudart: __cudaUnregisterFatBinary(%p)", (void *)fb);
    /* Runs from atexit, or when a library with kernels is unloaded: forget
     * its host addresses, which may be reused.  The modules stay loaded;
     * the driver may already be shutting down, and it frees them itself. */
    pthread_mutex_lock(&fb->lock);
    pthread_rwlock_wrlock(&g_reg_lock);
    for (xprt_func *f = fb->funcs; f != NULL; f = f->next) {
        map_del(&g_funcs, f->host_fun, f);
        map_del(&g_funcs, f, f);
    }
    for (xprt_var *v = fb->vars; v != NULL; v = v->next) {
        map_del(&g_vars, v->shadow, v);
        if (v->managed_ptr != 0)
            map_del(&g_vars, (const void *)(uintptr_t)v->managed_ptr, v);
    }
    pthread_rwlock_unlock(&g_reg_lock);
    pthread_mutex_unlock(&fb->lock);
}

XPRT_EXPORT void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun,
                                        char *deviceFun, const char *deviceName,
                                        int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim,
                                        dim3 *gDim, int *wSize)
{
    /* Launch bounds and the rest describe code that never runs here. */
    (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
    fatbin_rec *fb = (fatbin_rec *)fatCubinHandle;
    const char *name = deviceName != NULL ? deviceName : deviceFun;
    if (fb == NULL || hostFun == NULL || name == NULL)
        return;
    xprt_func *f = calloc(1, sizeof *f);
    if (f == NULL)
        return;
    *f = (xprt_func){.magic = FUNC_MAGIC, .fb = fb, .host_fun = hostFun, .name = name};
    /* Lock order everywhere: a fatbin's lock, then the registry's. */
    pthread_mutex_lock(&fb->lock);
    f->next = fb->funcs;
    fb->funcs = f;
    pthread_rwlock_wrlock(&g_reg_lock);
    /* The record's own address too: it is the cudaKernel_t handed out by
     * __cudaGetKernel, which cudaLaunchKernel also accepts as func. */
    bool ok = map_put(&g_funcs, hostFun, f) && map_put(&g_funcs, f, f);
    pthread_rwlock_unlock(&g_reg_lock);
    pthread_mutex_unlock(&fb->lock);
    xpsim_debug("cudart: __cudaRegisterFunction(%p, %s)%s", (const void *)hostFun, name,
                ok ? "" : " failed: out of memory");
}

static void register_var(fatbin_rec *fb, xprt_var *v)
{
    pthread_mutex_lock(&fb->lock);
    v->next = fb->vars;
    fb->vars = v;
    pthread_rwlock_wrlock(&g_reg_lock);
    bool ok = map_put(&g_vars, v->shadow, v);
    pthread_rwlock_unlock(&g_reg_lock);
    pthread_mutex_unlock(&fb->lock);
    xpsim_debug("cudart: registered %s%s variable %s (%zu bytes) at %p%s",
                v->constant ? "__constant__ " : "", v->managed ? "__managed__" : "__device__",
                v->name, v->size, v->shadow, ok ? "" : " failed: out of memory");
}

XPRT_EXPORT void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress,
                                   const char *deviceName, int ext, size_t size, int constant,
                                   int global)
{
    (void)ext, (void)global;     /* linkage only matters to a device linker */
    fatbin_rec *fb = (fatbin_rec *)fatCubinHandle;
    const char *name = deviceName != NULL ? deviceName : deviceAddress;
    if (fb == NULL || hostVar == NULL || name == NULL)
        return;
    xprt_var *v = calloc(1, sizeof *v);
    if (v == NULL)
        return;
    *v = (xprt_var){.fb = fb, .shadow = hostVar, .name = name, .size = size,
                    .constant = constant != 0};
    register_var(fb, v);
}

XPRT_EXPORT void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress,
                                          char *deviceAddress, const char *deviceName, int ext,
                                          size_t size, int constant, int global)
{
    (void)ext, (void)global;
    fatbin_rec *fb = (fatbin_rec *)fatCubinHandle;
    const char *name = deviceName != NULL ? deviceName : deviceAddress;
    if (fb == NULL || hostVarPtrAddress == NULL || name == NULL)
        return;
    xprt_var *v = calloc(1, sizeof *v);
    if (v == NULL)
        return;
    *v = (xprt_var){.fb = fb, .shadow = hostVarPtrAddress, .name = name, .size = size,
                    .constant = constant != 0, .managed = true,
                    .managed_slot = hostVarPtrAddress};
    register_var(fb, v);
}

/* These two are exported by libcudart.so.13 without a published prototype,
 * and nvcc 13.0 does not emit calls to them for ordinary code; NVIDIA's
 * implementations take four and five arguments.  Accepting them quietly
 * keeps a program that does call them from tripping a "not supported" stub
 * (which would set the last error from a constructor). */
XPRT_EXPORT void __cudaRegisterHostVar(void **fatCubinHandle, const char *deviceName,
                                       char *hostVar, size_t size)
{
    xpsim_debug("cudart: __cudaRegisterHostVar(%p, %s, %p, %zu) ignored",
                (void *)fatCubinHandle, deviceName != NULL ? deviceName : "?", (void *)hostVar,
                size);
}

XPRT_EXPORT void __cudaRegisterUnifiedTable(void **fatCubinHandle, void *a, void *b, void *c,
                                            void *d)
{
    (void)a, (void)b, (void)c, (void)d;
    xpsim_debug("cudart: __cudaRegisterUnifiedTable(%p) ignored", (void *)fatCubinHandle);
}

/* ---- modules and variables per device ------------------------------------ */

/* Module and function handles from before a cudaDeviceReset.  The reset
 * destroyed them on the device side, but the driver's records of them are
 * the driver's to free; keeping them reachable keeps leak checkers quiet
 * about memory this runtime merely stopped pointing at. */
typedef struct retired_handle {
    void *handle;
    struct retired_handle *next;
} retired_handle;

static pthread_mutex_t g_retired_lock = PTHREAD_MUTEX_INITIALIZER;
static retired_handle *g_retired;

static void retire(void *handle)
{
    retired_handle *r = malloc(sizeof *r);
    if (r == NULL)
        return;
    pthread_mutex_lock(&g_retired_lock);
    *r = (retired_handle){.handle = handle, .next = g_retired};
    g_retired = r;
    pthread_mutex_unlock(&g_retired_lock);
}

static bool all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0)
            return false;
    return true;
}

/* The bytes a variable starts with: its initializer in the device image, or
 * (an image the simulator cannot read) the host shadow's bytes.  NULL means
 * all zero. */
static const void *initial_bytes(const xprt_var *v)
{
    const void *bytes = NULL;
    if (xprt_fatbin_var_init(v->fb->image, v->name, v->size, &bytes))
        return bytes;
    if (v->managed)
        return NULL;             /* the managed shadow is only a pointer */
    return v->shadow;
}

/* Storage for a __device__/__constant__ variable on the current device,
 * counted against the device's memory like the real module load does. */
static cudaError_t alloc_var_locked(const xprt_drv *d, xprt_var *v, int dev, unsigned gen1)
{
    CUdeviceptr p = 0;
    if (v->size > 0) {
        /* The driver writes the initial bytes itself, as a module load does,
         * so no copy appears in the device's traffic. */
        const unsigned char *init = initial_bytes(v);
        if (init != NULL && all_zero(init, v->size))
            init = NULL;
        CUresult r = d->xpsimModuleGlobalAlloc(&p, v->size, init);
        if (r != CUDA_SUCCESS)
            return xprt_map_error(r);
    }
    v->ptr[dev] = p;
    v->ptr_gen1[dev] = gen1;
    return cudaSuccess;
}

/* Loads fb into the current device (dev) once per device generation, with
 * its variables: CUDA's lazy module loading, at first use. */
static cudaError_t ensure_loaded_locked(const xprt_drv *d, fatbin_rec *fb, int dev)
{
    unsigned gen1 = xprt_device_generation(dev) + 1;
    if (fb->mod_gen1[dev] == gen1)
        return cudaSuccess;
    CUmodule mod = NULL;
    CUresult r = XPRT_CALL(d, cuModuleLoadData, &mod, fb->image);
    if (r != CUDA_SUCCESS) {
        xpsim_debug("cudart: cuModuleLoadData(%p) failed: %d", fb->image, (int)r);
        return xprt_map_error(r);
    }
    for (xprt_var *v = fb->vars; v != NULL; v = v->next) {
        if (v->managed || v->ptr_gen1[dev] == gen1)
            continue;
        cudaError_t e = alloc_var_locked(d, v, dev, gen1);
        if (e != cudaSuccess)
            return e;
    }
    if (fb->mod_gen1[dev] != 0)
        retire(fb->mod[dev]);
    fb->mod[dev] = mod;
    fb->mod_gen1[dev] = gen1;
    return cudaSuccess;
}

/* __managed__ variables: one managed allocation per process, published
 * through the pointer slot the host code reads. */
static cudaError_t ensure_managed_locked(const xprt_drv *d, fatbin_rec *fb)
{
    for (xprt_var *v = fb->vars; v != NULL; v = v->next) {
        if (!v->managed || v->managed_ptr != 0)
            continue;
        CUdeviceptr p = 0;
        CUresult r = XPRT_CALL(d, cuMemAllocManaged, &p, v->size > 0 ? v->size : 1,
                               CU_MEM_ATTACH_GLOBAL);
        if (r != CUDA_SUCCESS)
            return xprt_map_error(r);
        /* Managed memory is host memory in the simulator: no copy to time. */
        const void *init = initial_bytes(v);
        if (init != NULL)
            memcpy((void *)(uintptr_t)p, init, v->size);
        else
            memset((void *)(uintptr_t)p, 0, v->size);
        v->managed_ptr = p;
        v->managed_dev = xprt_current_device();
        *v->managed_slot = (void *)(uintptr_t)p;
        /* Host code names a managed variable by its storage (nvcc turns
         * `var` into `*ptr`), so that address is the symbol too. */
        pthread_rwlock_wrlock(&g_reg_lock);
        (void)map_put(&g_vars, (const void *)(uintptr_t)p, v);
        pthread_rwlock_unlock(&g_reg_lock);
    }
    return cudaSuccess;
}

cudaError_t xprt_var_address(const xprt_drv *d, xprt_var *v, CUdeviceptr *out_ptr,
                             size_t *out_size)
{
    fatbin_rec *fb = v->fb;
    cudaError_t e;
    pthread_mutex_lock(&fb->lock);
    if (v->managed) {
        e = ensure_managed_locked(d, fb);
        *out_ptr = v->managed_ptr;
    } else {
        int dev = xprt_current_device();
        e = ensure_loaded_locked(d, fb, dev);
        *out_ptr = v->ptr[dev];
    }
    pthread_mutex_unlock(&fb->lock);
    *out_size = v->size;
    return e;
}

void xprt_modules_after_reset(const xprt_drv *d, int dev)
{
    /* Snapshot the fatbins: a fatbin's lock is never taken under the
     * registry's (the lock order is the other way round). */
    pthread_rwlock_rdlock(&g_reg_lock);
    size_t n = 0;
    for (fatbin_rec *fb = g_fatbins; fb != NULL; fb = fb->next)
        n++;
    fatbin_rec **all = n > 0 ? malloc(n * sizeof *all) : NULL;
    n = 0;
    for (fatbin_rec *fb = all != NULL ? g_fatbins : NULL; fb != NULL; fb = fb->next)
        all[n++] = fb;
    pthread_rwlock_unlock(&g_reg_lock);
    /* The reset unmapped the device's managed memory, but host code keeps
     * reading __managed__ variables through their pointer slots without
     * asking the runtime again: give them fresh storage, initialized as a
     * reloaded module's would be, instead of leaving the slots dangling.
     * (Device-side storage is simply reloaded at next use.) */
    for (size_t i = 0; i < n; i++) {
        fatbin_rec *fb = all[i];
        pthread_mutex_lock(&fb->lock);
        bool had = false;
        for (xprt_var *v = fb->vars; v != NULL; v = v->next) {
            if (v->managed && v->managed_ptr != 0 && v->managed_dev == dev) {
                pthread_rwlock_wrlock(&g_reg_lock);
                map_del(&g_vars, (const void *)(uintptr_t)v->managed_ptr, v);
                pthread_rwlock_unlock(&g_reg_lock);
                v->managed_ptr = 0;
                had = true;
            }
        }
        if (had && ensure_managed_locked(d, fb) != cudaSuccess)
            xpsim_debug("cudart: __managed__ variables of %p lost in the reset", (void *)fb);
        pthread_mutex_unlock(&fb->lock);
    }
    free(all);
}

XPRT_EXPORT char __cudaInitModule(void **fatCubinHandle)
{
    fatbin_rec *fb = (fatbin_rec *)fatCubinHandle;
    if (fb == NULL)
        return 0;
    /* Host code calls this on its first access to a __managed__ variable of
     * the module; afterwards it reads the variable through the pointer. */
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e == cudaSuccess) {
        pthread_mutex_lock(&fb->lock);
        e = ensure_managed_locked(d, fb);
        pthread_mutex_unlock(&fb->lock);
    }
    if (e != cudaSuccess) {
        (void)xprt_result(e);
        return 0;
    }
    return 1;
}

/* The driver function of f on the current device. */
static cudaError_t get_function(const xprt_drv *d, xprt_func *f, CUfunction *out)
{
    fatbin_rec *fb = f->fb;
    int dev = xprt_current_device();
    pthread_mutex_lock(&fb->lock);
    cudaError_t e = ensure_loaded_locked(d, fb, dev);
    if (e == cudaSuccess && f->fn_gen1[dev] != fb->mod_gen1[dev]) {
        CUfunction fn = NULL;
        CUresult r = XPRT_CALL(d, cuModuleGetFunction, &fn, fb->mod[dev], f->name);
        if (r == CUDA_SUCCESS) {
            if (f->fn_gen1[dev] != 0)
                retire(f->fn[dev]);
            f->fn[dev] = fn;
            f->fn_gen1[dev] = fb->mod_gen1[dev];
        } else {
            e = r == CUDA_ERROR_NOT_FOUND ? cudaErrorInvalidDeviceFunction : xprt_map_error(r);
        }
    }
    *out = f->fn[dev];
    pthread_mutex_unlock(&fb->lock);
    return e;
}

/* A host stub, or one of our cudaKernel_t handles. */
static xprt_func *lookup_func(const void *func)
{
    xprt_func *f = find_func(func);
    return f != NULL && f->magic == FUNC_MAGIC ? f : NULL;
}

/* ---- launches ------------------------------------------------------------ */

/* The limits every CUDA device since compute capability 3.0 has. */
static bool valid_config(dim3 grid, dim3 block)
{
    if (grid.x == 0 || grid.y == 0 || grid.z == 0 || block.x == 0 || block.y == 0 ||
        block.z == 0)
        return false;
    if (grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535)
        return false;
    if (block.x > 1024 || block.y > 1024 || block.z > 64)
        return false;
    return (uint64_t)block.x * block.y * block.z <= 1024;
}

static cudaError_t launch(xprt_api api, xprt_func *f, dim3 grid, dim3 block, void **args,
                          size_t shared_mem, cudaStream_t stream)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    if (f == NULL)
        return xprt_result(cudaErrorInvalidDeviceFunction);
    if (!valid_config(grid, block))
        return xprt_result(cudaErrorInvalidConfiguration);
    if (shared_mem > UINT32_MAX)     /* the driver takes an unsigned int */
        return xprt_result(cudaErrorInvalidValue);
    CUfunction fn;
    e = get_function(d, f, &fn);
    if (e != cudaSuccess)
        return xprt_result(e);
    CUresult r = XPRT_CALL(d, cuLaunchKernel, fn, grid.x, grid.y, grid.z, block.x, block.y,
                           block.z, (unsigned)shared_mem, (CUstream)stream, args, NULL);
    return xprt_result_cu(r);
}

XPRT_EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim,
                                         void **args, size_t sharedMem, cudaStream_t stream)
{
    return launch(XPRT_LEGACY, lookup_func(func), gridDim, blockDim, args, sharedMem, stream);
}

XPRT_EXPORT cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
                                              void **args, size_t sharedMem, cudaStream_t stream)
{
    return launch(XPRT_PTDS, lookup_func(func), gridDim, blockDim, args, sharedMem, stream);
}

XPRT_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                           void **args, size_t sharedMem, cudaStream_t stream)
{
    return launch(XPRT_LEGACY, lookup_func(kernel), gridDim, blockDim, args, sharedMem, stream);
}

XPRT_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                                void **args, size_t sharedMem,
                                                cudaStream_t stream)
{
    return launch(XPRT_PTDS, lookup_func(kernel), gridDim, blockDim, args, sharedMem, stream);
}

static cudaError_t get_kernel(cudaKernel_t *kernel, const void *hostFun)
{
    if (kernel == NULL)
        return xprt_result(cudaErrorInvalidValue);
    xprt_func *f = lookup_func(hostFun);
    if (f == NULL)
        return xprt_result(cudaErrorInvalidDeviceFunction);
    /* cudaKernel_t is opaque: the function record serves. */
    *kernel = (cudaKernel_t)(void *)f;
    return cudaSuccess;
}

XPRT_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun)
{
    return get_kernel(kernel, hostFun);
}

XPRT_EXPORT cudaError_t cudaGetKernel(cudaKernel_t *kernelPtr, const void *entryFuncAddr)
{
    return get_kernel(kernelPtr, entryFuncAddr);
}

/* <<<...>>> pushes a configuration, the kernel's stub pops it; arguments may
 * launch kernels of their own in between, hence a stack. */
#define CALL_STACK_DEPTH 32

typedef struct call_config {
    dim3 grid, block;
    size_t shared_mem;
    cudaStream_t stream;
} call_config;

static _Thread_local call_config t_calls[CALL_STACK_DEPTH];
static _Thread_local unsigned t_call_depth;

XPRT_EXPORT unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                                 struct CUstream_st *stream)
{
    if (t_call_depth == CALL_STACK_DEPTH)
        return 1;                /* nonzero: the launch expression is skipped */
    t_calls[t_call_depth++] =
        (call_config){.grid = gridDim, .block = blockDim, .shared_mem = sharedMem,
                      .stream = (cudaStream_t)stream};
    return 0;
}

XPRT_EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim,
                                                   size_t *sharedMem, void *stream)
{
    if (t_call_depth == 0)
        return xprt_result(cudaErrorMissingConfiguration);
    call_config c = t_calls[--t_call_depth];
    if (gridDim != NULL)
        *gridDim = c.grid;
    if (blockDim != NULL)
        *blockDim = c.block;
    if (sharedMem != NULL)
        *sharedMem = c.shared_mem;
    if (stream != NULL)
        *(cudaStream_t *)stream = c.stream;
    return cudaSuccess;
}

/* ---- symbol and function queries ----------------------------------------- */

XPRT_EXPORT cudaError_t cudaGetSymbolAddress(void **devPtr, const void *symbol)
{
    if (devPtr == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    xprt_var *v = xprt_find_var(symbol);
    if (v == NULL)
        return xprt_result(cudaErrorInvalidSymbol);
    CUdeviceptr p = 0;
    size_t size = 0;
    e = xprt_var_address(d, v, &p, &size);
    if (e == cudaSuccess)
        *devPtr = (void *)(uintptr_t)p;
    return xprt_result(e);
}

XPRT_EXPORT cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol)
{
    if (size == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = xprt_enter(XPRT_LEGACY, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    xprt_var *v = xprt_find_var(symbol);
    if (v == NULL)
        return xprt_result(cudaErrorInvalidSymbol);
    *size = v->size;
    return cudaSuccess;
}

/* Enters and finds the kernel a function query names. */
static cudaError_t enter_func(const void *func, const xprt_drv **d, xprt_func **out)
{
    cudaError_t e = xprt_enter(XPRT_LEGACY, d);
    if (e != cudaSuccess)
        return e;
    *out = lookup_func(func);
    return *out != NULL ? cudaSuccess : cudaErrorInvalidDeviceFunction;
}

cudaError_t xprt_func_handle(const void *func, const xprt_drv **d, CUfunction *out)
{
    xprt_func *f;
    cudaError_t e = enter_func(func, d, &f);
    return e == cudaSuccess ? get_function(*d, f, out) : e;
}

static int func_attr(const xprt_drv *d, CUfunction fn, CUfunction_attribute attr, int fallback)
{
    int value = 0;
    return XPRT_CALL(d, cuFuncGetAttribute, &value, attr, fn) == CUDA_SUCCESS ? value : fallback;
}

XPRT_EXPORT cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
    if (attr == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    CUfunction fn = NULL;
    cudaError_t e = xprt_func_handle(func, &d, &fn);
    if (e != cudaSuccess)
        return xprt_result(e);
    /* What the driver knows, else what a small kernel of the device's
     * architecture would report. */
    int major = 0, minor = 0;
    CUdevice dev = xprt_current_device();
    (void)XPRT_CALL(d, cuDeviceGetAttribute, &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                    dev);
    (void)XPRT_CALL(d, cuDeviceGetAttribute, &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                    dev);
    int arch = major * 10 + minor;
    memset(attr, 0, sizeof *attr);
    attr->sharedSizeBytes = (size_t)func_attr(d, fn, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, 0);
    attr->constSizeBytes = (size_t)func_attr(d, fn, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, 0);
    attr->localSizeBytes = (size_t)func_attr(d, fn, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, 0);
    attr->maxThreadsPerBlock = func_attr(d, fn, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024);
    attr->numRegs = func_attr(d, fn, CU_FUNC_ATTRIBUTE_NUM_REGS, 16);
    attr->ptxVersion = func_attr(d, fn, CU_FUNC_ATTRIBUTE_PTX_VERSION, arch);
    attr->binaryVersion = func_attr(d, fn, CU_FUNC_ATTRIBUTE_BINARY_VERSION, arch);
    attr->cacheModeCA = func_attr(d, fn, CU_FUNC_ATTRIBUTE_CACHE_MODE_CA, 0);
    attr->maxDynamicSharedSizeBytes =
        func_attr(d, fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 48 * 1024);
    attr->preferredShmemCarveout =
        func_attr(d, fn, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, -1);
    return cudaSuccess;
}

XPRT_EXPORT cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr,
                                             int value)
{
    const xprt_drv *d;
    xprt_func *f;
    cudaError_t e = enter_func(func, &d, &f);
    if (e != cudaSuccess)
        return xprt_result(e);
    if ((int)attr < 0 || attr >= cudaFuncAttributeMax)
        return xprt_result(cudaErrorInvalidValue);
    /* The limits the occupancy calculator reads are the driver's (the
     * values coincide); nothing executes, so the others change nothing. */
    if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize ||
        attr == cudaFuncAttributePreferredSharedMemoryCarveout) {
        CUfunction fn = NULL;
        e = get_function(d, f, &fn);
        if (e == cudaSuccess)
            e = xprt_map_error(XPRT_CALL(d, cuFuncSetAttribute, fn, (CUfunction_attribute)attr,
                                         value));
        return xprt_result(e);
    }
    xpsim_debug("cudart: cudaFuncSetAttribute(%s, %d, %d) accepted", f->name, (int)attr, value);
    return cudaSuccess;
}

XPRT_EXPORT cudaError_t cudaFuncSetCacheConfig(const void *func, enum cudaFuncCache cacheConfig)
{
    const xprt_drv *d;
    xprt_func *f;
    cudaError_t e = enter_func(func, &d, &f);
    if (e != cudaSuccess)
        return xprt_result(e);
    if ((int)cacheConfig < (int)cudaFuncCachePreferNone ||
        (int)cacheConfig > (int)cudaFuncCachePreferEqual)
        return xprt_result(cudaErrorInvalidValue);
    return cudaSuccess;
}

XPRT_EXPORT cudaError_t cudaFuncGetName(const char **name, const void *func)
{
    if (name == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    xprt_func *f;
    cudaError_t e = enter_func(func, &d, &f);
    if (e != cudaSuccess)
        return xprt_result(e);
    *name = f->name;
    return cudaSuccess;
}

cudaError_t xprt_function_of(const xprt_drv *d, const void *func, CUfunction *out)
{
    xprt_func *f = lookup_func(func);
    return f == NULL ? cudaErrorInvalidDeviceFunction : get_function(d, f, out);
}

XPRT_EXPORT cudaError_t cudaGetFuncBySymbol(cudaFunction_t *functionPtr, const void *symbolPtr)
{
    if (functionPtr == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    CUfunction fn = NULL;
    cudaError_t e = xprt_func_handle(symbolPtr, &d, &fn);
    if (e == cudaSuccess)
        *functionPtr = (cudaFunction_t)fn;
    return xprt_result(e);
}
