/* xpsim_driver.h: state shared by the simulated driver's entry points:
 * devices, contexts, initialization, and what an address points at. */
#ifndef XPSIM_DRIVER_H
#define XPSIM_DRIVER_H

#include <cuda.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "xpsim_config.h"
#include "xpsim_devmem.h"
#include "xpsim_hostmem.h"
#include "xpsim_log.h"

/* Exported entry points: everything else is hidden (-fvisibility=hidden). */
#define XPSIM_API __attribute__((visibility("default")))

/* A context: each device's primary one (xpsim_device.primary, never freed)
 * and those cuCtxCreate makes (drv_context.c).  CUcontext handles point at
 * these. */
struct CUctx_st {
    int device;
    bool primary;
    unsigned int flags;       /* cuCtxCreate's CU_CTX_* (primary: xpsim_device.primary_flags) */
    unsigned long long id;    /* cuCtxGetId: unique in the process */
    atomic_bool destroyed;    /* cuCtxDestroy'd: still current elsewhere, unusable */
    /* Devices whose memory this context may access (cuCtxEnablePeerAccess),
     * a bit per ordinal. */
    _Atomic uint32_t peers;
    struct CUctx_st *next;    /* the list of created contexts (drv_context.c) */
};

typedef struct xpsim_device {
    int ordinal;
    int physical;              /* the GPU behind the ordinal (CUDA_VISIBLE_DEVICES) */
    unsigned char uuid[16];    /* the physical GPU's, xpsim_device_uuid */
    xpsim_devmem mem;
    struct CUctx_st primary;
    int primary_refs;          /* cuDevicePrimaryCtxRetain count, under xpdrv_lock */
    unsigned int primary_flags;
} xpsim_device;

/* Defines an entry point and its per-thread-default-stream twin (_ptds or
 * _ptsz): the same body, with `ptds` false or true. */
#define XPDRV_TWINS(name, twin, params, call)                                  \
    XPSIM_API CUresult name params;                                            \
    XPSIM_API CUresult twin params;                                            \
    XPSIM_API CUresult name params { const bool ptds = false; return call; }   \
    XPSIM_API CUresult twin params { const bool ptds = true; return call; }

/* Number of devices, valid after cuInit succeeded. */
int xpdrv_device_count(void);
xpsim_device *xpdrv_device(int ordinal);

/* CUDA_SUCCESS after a successful cuInit in this process (a child forked
 * after initialization gets CUDA_ERROR_NOT_INITIALIZED, as with real CUDA). */
CUresult xpdrv_check_init(void);

/* The calling thread's current context's device: CUDA_ERROR_NOT_INITIALIZED,
 * CUDA_ERROR_INVALID_CONTEXT when no context is current, or the device's
 * sticky error.  Every call that acts on a context starts with this. */
CUresult xpdrv_enter(int *out_device);

/* The calling thread's current context (NULL if none); after xpdrv_enter
 * succeeded, that of its device. */
CUcontext xpdrv_current(void);

/* A live context: a device's primary one, or a created one not destroyed. */
bool xpdrv_ctx_valid(CUcontext ctx);

/* Pushes ctx on the calling thread's context stack (cuCtxPushCurrent). */
CUresult xpdrv_ctx_push(CUcontext ctx);

/* Pops ctx off the calling thread's stack if it is on top (cuCtxDestroy of
 * the current context). */
void xpdrv_ctx_pop_if_current(CUcontext ctx);

/* Frees what the context owns (reset or destroy): its device memory, arrays
 * and managed memory, after the device's queued work. */
void xpdrv_ctx_free_resources(CUcontext ctx);

/* Valid CUdevice ordinal?  (after init) */
CUresult xpdrv_check_device(CUdevice dev);

/* What an address is, from the driver's tables. */
typedef enum xpdrv_mem_kind {
    XPDRV_MEM_PAGEABLE = 0,   /* host memory the driver does not know */
    XPDRV_MEM_PINNED,         /* page-locked: allocated or registered */
    XPDRV_MEM_MANAGED,
    XPDRV_MEM_DEVICE,
    XPDRV_MEM_DEVICE_HOLE,    /* inside a device range but no live allocation */
} xpdrv_mem_kind;

typedef enum xpdrv_origin {
    XPDRV_FROM_ALLOC = 0,     /* cuMemAlloc & co., host memory, module variables */
    XPDRV_FROM_POOL,          /* DEVICE: cuMemAllocAsync / cuMemAllocFromPoolAsync */
    XPDRV_FROM_VMM,           /* DEVICE: a cuMemMap mapping; DEVICE_HOLE: inside a
                                 cuMemAddressReserve range but not mapped there */
    XPDRV_FROM_IPC,           /* DEVICE: another process's allocation, opened with
                                 cuIpcOpenMemHandle (drv_ipc.c) */
} xpdrv_origin;

typedef struct xpdrv_ptr {
    xpdrv_mem_kind kind;
    int device;               /* DEVICE, DEVICE_HOLE (-1 in a VMM reservation), MANAGED;
                                 -1 otherwise */
    uint64_t base, size;      /* the allocation, mapping or range (0,0 for pageable) */
    /* End of the bytes a copy may reach from base in one piece: base + size,
     * except that adjacent VMM mappings of one device with the same access
     * are one stretch of device memory, as on a GPU. */
    uint64_t limit;
    xpsim_host_kind host_kind;/* PINNED and MANAGED */
    unsigned int flags;       /* PINNED, MANAGED: the allocation's flags */
    xpdrv_origin origin;
    /* DEVICE: CU_MEM_ACCESS_FLAGS_PROT_* the memory's own device has to it
     * (READWRITE except for VMM mappings, which start with none). */
    unsigned int access;
    unsigned char *view;      /* VMM, IPC: where the host sees base; NULL otherwise */
} xpdrv_ptr;

void xpdrv_classify(uint64_t addr, xpdrv_ptr *out);

/* addr in memory opened with cuIpcOpenMemHandle: fills *out (a DEVICE
 * range with its view) and answers true. */
bool xpdrv_ipc_lookup(uint64_t addr, xpdrv_ptr *out);

/* The memory file behind the device's memory (made at the first call,
 * xpsim_devmem_share), its descriptor and inode, for exports.
 * CUDA_ERROR_MAP_FAILED when the program closed that descriptor. */
CUresult xpdrv_device_file(int device, int *fd, uint64_t *ino);

/* Maps [offset, offset + size) of another process's device file fd (its
 * inode ino; fd stays the caller's) as memory of device dev, imported from
 * a pool: the same range imported again gives the same pointer and a
 * reference, and xpdrv_ipc_free_imported (cuMemFree) drops one. */
CUresult xpdrv_ipc_import(int fd, uint64_t ino, uint64_t offset, uint64_t size, int dev,
                          CUdeviceptr *out);
/* CUDA_ERROR_INVALID_VALUE for anything but the base of imported memory. */
CUresult xpdrv_ipc_free_imported(CUdeviceptr dptr);

/* Host-accessible address of the byte at addr (shadow for device memory, the
 * physical allocation's bytes for a VMM mapping). */
void *xpdrv_view(const xpdrv_ptr *info, uint64_t addr);

/* Memory pools (drv_pool.c): a device's default pool, one of
 * cuMemPoolCreate, or one imported from another process's export
 * (drv_pool_ipc.c), which maps the exporter's allocations and makes none. */
typedef enum xpdrv_pool_kind {
    XPDRV_POOL_DEFAULT = 0,
    XPDRV_POOL_CREATED,
    XPDRV_POOL_IMPORTED,
} xpdrv_pool_kind;

typedef struct xpdrv_pool_desc {
    int device;
    xpdrv_pool_kind kind;
    CUmemAllocationHandleType handle_types;   /* CREATED: what it may be exported as */
    int fd;                   /* IMPORTED: the exporter's device file (ours to close) */
    uint64_t ino;             /* IMPORTED: that file's inode */
} xpdrv_pool_desc;

/* False for a handle that names no live pool. */
bool xpdrv_pool_info(CUmemoryPool pool, xpdrv_pool_desc *out);

/* A new imported pool over fd (which it then owns). */
CUresult xpdrv_pool_import(int device, int fd, uint64_t ino, CUmemoryPool *out);

/* The pool the POOL allocation at ptr came from; NULL if none. */
CUmemoryPool xpdrv_pool_of(int device, CUdeviceptr ptr);

/* cuMemFree of a pool allocation: at once, without synchronizing, as
 * documented.  CUDA_ERROR_INVALID_VALUE if dptr starts none. */
CUresult xpdrv_pool_free_now(int device, CUdeviceptr dptr);

/* Private entry points (not CUDA's), reachable through cuGetProcAddress:
 * storage for a module's variables, for the simulated runtime, holding init
 * (bytes bytes) or zeros when init is NULL; and the
 * number of kernel launches a device has seen, for tests. */
XPSIM_API CUresult xpsimModuleGlobalAlloc(CUdeviceptr *dptr, size_t bytes, const void *init);
XPSIM_API unsigned long long xpsimKernelLaunchCount(int device);

/* A CUDA array's memory (drv_array.c): `bytes` at device address `mem` of
 * `device`, laid out tight: `slices` slices of `rows` rows of `row` bytes,
 * elements of `elem` bytes. */
typedef struct xpdrv_array_geom {
    int device;
    CUdeviceptr mem;
    size_t elem, row, rows, slice, slices, bytes;
} xpdrv_array_geom;

/* The live array h's memory; false for a handle that names none. */
bool xpdrv_array_get(CUarray h, xpdrv_array_geom *out);

/* Forgets the arrays the context owner created (it was reset or destroyed:
 * their memory is gone with the rest). */
void xpdrv_arrays_drop(CUcontext owner);

/* A function's dynamic shared memory limit until cuFuncSetAttribute raises
 * it, and the most it may be raised to (the device's opt-in maximum per
 * block, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN). */
#define XPDRV_FUNC_DEFAULT_DYNAMIC_SMEM 49152
#define XPDRV_SMEM_PER_BLOCK_OPTIN 232448

/* A CUfunction cuModuleGetFunction handed out (drv_module.c). */
bool xpdrv_func_valid(CUfunction f);

/* Called by the generated weak stubs of unimplemented entry points. */
int xpdrv_unsupported(const char *name);

/* Used by drv_module.c for XFERPROF_SIM_FAULT. */
uint64_t xpdrv_next_launch_number(void);

#endif
