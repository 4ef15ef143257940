/* drv_ipc.c: device memory and events shared between processes (cuIpcGetMemHandle, cuIpcOpenMemHandle, cuIpcCloseMemHandle through a memory file behind the device's shadow, xpsim_devmem_share; cuIpcGetEventHandle, cuIpcOpenEventHandle over xpsim_ipc_event.h). */
#include "xpsim_driver.h"
#include "xpsim_ipc_event.h"
#include "xpsim_stream.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define IPC_MAGIC 0x58504950u   /* "XPIP" */

/* What a CUipcMemHandle (64 opaque bytes) holds: where the exporting
 * process keeps the allocation's bytes, in a file any process of the same
 * user can open as /proc/PID/fd/FD. */
typedef struct ipc_handle {
    uint32_t magic;
    int32_t pid;
    int32_t fd;
    int32_t device;           /* the exporter's ordinal, for the record */
    uint64_t offset;          /* of the allocation in the file */
    uint64_t size;            /* bytes the allocation was asked for */
    uint64_t ino;             /* the file's inode: FD must still name it */
} ipc_handle;
_Static_assert(sizeof(ipc_handle) <= sizeof(CUipcMemHandle), "fits CUipcMemHandle");

/* Memory this process opened: reserved address space (PROT_NONE, as a
 * device's range: a host dereference crashes) and, beside it, the
 * exporter's pages mapped shared, where the simulator reads and writes.
 * Opened from a memory handle (cuIpcCloseMemHandle closes it) or imported
 * from a pool (pooled: cuMemFree frees it; h then names no process). */
typedef struct ipc_open {
    ipc_handle h;
    bool pooled;
    int device;               /* the importing context's */
    uint64_t base;            /* the device pointer handed out */
    unsigned char *view;      /* where the host sees base */
    void *reserved, *mapped;  /* the two mappings, page aligned */
    size_t len;
    unsigned refs;            /* opens not yet closed */
    struct ipc_open *next;
} ipc_open;

static bool ipc_reopen(const ipc_handle *h, int dev, bool pooled, CUdeviceptr *out);
static CUresult ipc_map(const ipc_handle *hp, int fd, int dev, bool pooled, CUdeviceptr *pdptr);

/* Guards the list of opened handles (usually empty: lookups are cheap). */
static pthread_rwlock_t ipc_lock = PTHREAD_RWLOCK_INITIALIZER;
static ipc_open *opened;

bool xpdrv_ipc_lookup(uint64_t addr, xpdrv_ptr *out)
{
    bool found = false;
    pthread_rwlock_rdlock(&ipc_lock);
    for (const ipc_open *o = opened; o != NULL && !found; o = o->next) {
        if (addr - o->base < o->h.size) {
            out->kind = XPDRV_MEM_DEVICE;
            out->device = o->device;
            out->base = o->base;
            out->size = o->h.size;
            out->limit = o->base + o->h.size;
            out->origin = XPDRV_FROM_IPC;
            out->access = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
            out->view = o->view;
            found = true;
        }
    }
    pthread_rwlock_unlock(&ipc_lock);
    return found;
}

CUresult xpdrv_device_file(int device, int *fd, uint64_t *ino)
{
    xpsim_devmem *dm = &xpdrv_device(device)->mem;
    if (dm->shadow_fd < 0)   /* the first export: queued work must not write meanwhile */
        (void)xpsim_device_synchronize(device);
    CUresult rc = xpsim_devmem_share(dm, fd);
    if (rc != CUDA_SUCCESS)
        return rc;
    /* A program that closes every descriptor (as daemons do) may have
     * closed ours: the file can then no longer be handed out. */
    struct stat st;
    if (fstat(*fd, &st) != 0 || (uint64_t)st.st_ino != dm->shadow_ino)
        return CUDA_ERROR_MAP_FAILED;
    *ino = dm->shadow_ino;
    return CUDA_SUCCESS;
}

/* The base of a cuMemAlloc allocation of the current context's device,
 * whose bytes are in its device's memory file. */
XPSIM_API CUresult cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
{
    if (pHandle == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    xpdrv_ptr info;
    xpdrv_classify(dptr, &info);
    if (info.kind != XPDRV_MEM_DEVICE || info.origin != XPDRV_FROM_ALLOC || info.base != dptr ||
        info.view != NULL)
        return CUDA_ERROR_INVALID_VALUE;
    int fd = -1;
    uint64_t ino = 0;
    if ((rc = xpdrv_device_file(info.device, &fd, &ino)) != CUDA_SUCCESS)
        return rc;
    ipc_handle h = {.magic = IPC_MAGIC, .pid = (int32_t)getpid(), .fd = fd,
                    .device = info.device, .offset = dptr - xpdrv_device(info.device)->mem.base,
                    .size = info.size, .ino = ino};
    memset(pHandle, 0, sizeof *pHandle);
    memcpy(pHandle->reserved, &h, sizeof h);
    xpsim_debug("cuIpcGetMemHandle(%#llx): pid %d fd %d offset %#llx, %llu bytes",
                (unsigned long long)dptr, h.pid, h.fd, (unsigned long long)h.offset,
                (unsigned long long)h.size);
    return CUDA_SUCCESS;
}

/* Maps the exporter's bytes into this process; a handle opened again
 * gives the same pointer and one more reference. */
static CUresult ipc_open_mem(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)
{
    if (pdptr == NULL || Flags != CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)
        return CUDA_ERROR_INVALID_VALUE;
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    ipc_handle h;
    memcpy(&h, handle.reserved, sizeof h);
    if (h.magic != IPC_MAGIC || h.size == 0)
        return CUDA_ERROR_INVALID_HANDLE;
    /* Memory of this very process is not opened through IPC: NVIDIA's
     * driver refuses it too, with the invalid context its users report
     * ("invalid device context" from the runtime). */
    if (h.pid == (int32_t)getpid())
        return CUDA_ERROR_INVALID_CONTEXT;
    if (ipc_reopen(&h, dev, false, pdptr))
        return CUDA_SUCCESS;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)h.pid, (int)h.fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || (uint64_t)st.st_ino != h.ino)) {
        close(fd);   /* the descriptor names another file now */
        fd = -1;
    }
    if (fd < 0)   /* the exporter is gone, or the handle was made up */
        return CUDA_ERROR_INVALID_HANDLE;
    rc = ipc_map(&h, fd, dev, false, pdptr);
    close(fd);
    return rc;
}

/* The same memory opened again in the same way: the same pointer, one more
 * reference.  (The file's inode names it in every process.) */
static bool ipc_reopen(const ipc_handle *h, int dev, bool pooled, CUdeviceptr *out)
{
    bool found = false;
    pthread_rwlock_wrlock(&ipc_lock);
    for (ipc_open *o = opened; o != NULL && !found; o = o->next) {
        if (o->h.ino == h->ino && o->h.offset == h->offset && o->h.size == h->size &&
            o->device == dev && o->pooled == pooled) {
            o->refs++;
            *out = o->base;
            found = true;
        }
    }
    pthread_rwlock_unlock(&ipc_lock);
    return found;
}

/* Maps h's bytes of the file fd (which stays the caller's). */
static CUresult ipc_map(const ipc_handle *hp, int fd, int dev, bool pooled, CUdeviceptr *pdptr)
{
    ipc_handle h = *hp;
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t start = h.offset & ~(page - 1), phase = h.offset - start;
    size_t len = (size_t)((phase + h.size + page - 1) & ~(page - 1));
    void *reserved = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    void *mapped = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)start);
    ipc_open *o = calloc(1, sizeof *o);
    if (reserved == MAP_FAILED || mapped == MAP_FAILED || o == NULL) {
        if (reserved != MAP_FAILED)
            munmap(reserved, len);
        if (mapped != MAP_FAILED)
            munmap(mapped, len);
        free(o);
        return CUDA_ERROR_MAP_FAILED;
    }
    *o = (ipc_open){.h = h, .pooled = pooled, .device = dev, .base = (uint64_t)(uintptr_t)reserved + phase,
                    .view = (unsigned char *)mapped + phase, .reserved = reserved,
                    .mapped = mapped, .len = len, .refs = 1};
    pthread_rwlock_wrlock(&ipc_lock);
    o->next = opened;
    opened = o;
    pthread_rwlock_unlock(&ipc_lock);
    *pdptr = o->base;
    xpsim_debug("ipc: %s %llu bytes (pid %d) on device %d -> %#llx",
                pooled ? "imported" : "opened", (unsigned long long)h.size, (int)h.pid, dev,
                (unsigned long long)o->base);
    return CUDA_SUCCESS;
}

CUresult xpdrv_ipc_import(int fd, uint64_t ino, uint64_t offset, uint64_t size, int dev,
                          CUdeviceptr *out)
{
    ipc_handle h = {.magic = IPC_MAGIC, .pid = 0, .fd = -1, .device = -1, .offset = offset,
                    .size = size, .ino = ino};
    if (ipc_reopen(&h, dev, true, out))
        return CUDA_SUCCESS;
    return ipc_map(&h, fd, dev, true, out);
}

XPSIM_API CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle,
                                         unsigned int Flags)
{
    return ipc_open_mem(pdptr, handle, Flags);
}

/* CUDA 4.1's name, the same arguments (cuda.h maps the name to _v2). */
#undef cuIpcOpenMemHandle
XPSIM_API CUresult cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle,
                                      unsigned int Flags);
XPSIM_API CUresult cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle,
                                      unsigned int Flags)
{
    return ipc_open_mem(pdptr, handle, Flags);
}

/* Unmaps at the last close, after the device's queued work (which may copy
 * to or from it); the exporter's allocation is untouched. */
static CUresult ipc_unmap(CUdeviceptr dptr, bool pooled)
{
    ipc_open *gone = NULL;
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    pthread_rwlock_wrlock(&ipc_lock);
    for (ipc_open **p = &opened; *p != NULL; p = &(*p)->next) {
        if ((*p)->base == dptr && (*p)->pooled == pooled) {
            rc = CUDA_SUCCESS;
            if (--(*p)->refs == 0) {
                gone = *p;
                *p = gone->next;
            }
            break;
        }
    }
    pthread_rwlock_unlock(&ipc_lock);
    if (gone != NULL) {
        (void)xpsim_device_synchronize(gone->device);
        munmap(gone->mapped, gone->len);
        munmap(gone->reserved, gone->len);
        free(gone);
    }
    return rc;
}

XPSIM_API CUresult cuIpcCloseMemHandle(CUdeviceptr dptr)
{
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    return rc != CUDA_SUCCESS ? rc : ipc_unmap(dptr, false);
}

CUresult xpdrv_ipc_free_imported(CUdeviceptr dptr)
{
    return ipc_unmap(dptr, true);
}

/* ---- events ------------------------------------------------------------- */

#define IPC_EVENT_MAGIC 0x58504945u   /* "XPIE" */

/* What a CUipcEventHandle (64 opaque bytes) holds: the event's slot of
 * shared state in the creating process's file (xpsim_ipc_event.h). */
typedef struct ipc_event_handle {
    uint32_t magic;
    uint32_t pad;
    xpsim_ipc_slot_name slot;
} ipc_event_handle;
_Static_assert(sizeof(ipc_event_handle) <= sizeof(CUipcEventHandle), "fits CUipcEventHandle");

/* An event created with CU_EVENT_INTERPROCESS (which cuEventCreate accepts
 * only with CU_EVENT_DISABLE_TIMING); an opened one hands out its creator's
 * handle again. */
XPSIM_API CUresult cuIpcGetEventHandle(CUipcEventHandle *pHandle, CUevent event)
{
    if (pHandle == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    ipc_event_handle h = {.magic = IPC_EVENT_MAGIC};
    if ((rc = xpsim_event_ipc_name(event, &h.slot)) != CUDA_SUCCESS)
        return rc;
    memset(pHandle, 0, sizeof *pHandle);
    memcpy(pHandle->reserved, &h, sizeof h);
    xpsim_debug("cuIpcGetEventHandle(%p): pid %d fd %d slot %u", (void *)event, (int)h.slot.pid,
                (int)h.slot.fd, h.slot.index);
    return CUDA_SUCCESS;
}

/* A new event of this process over the exporter's state: each open gives
 * another, destroyed with cuEventDestroy. */
XPSIM_API CUresult cuIpcOpenEventHandle(CUevent *phEvent, CUipcEventHandle handle)
{
    if (phEvent == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    ipc_event_handle h;
    memcpy(&h, handle.reserved, sizeof h);
    if (h.magic != IPC_EVENT_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    /* As for memory: not in the process that made it ("invalid device
     * context", what NVIDIA's answers, and HIP's tests expect of it). */
    if (h.slot.pid == (int32_t)getpid())
        return CUDA_ERROR_INVALID_CONTEXT;
    xpsim_ipc_ref *ref = NULL;
    if ((rc = xpsim_ipc_ref_open(&h.slot, &ref)) != CUDA_SUCCESS)
        return rc;
    CUevent e = xpsim_event_open_ipc(ref);
    if (e == NULL) {
        xpsim_ipc_ref_drop(ref);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *phEvent = e;
    xpsim_debug("cuIpcOpenEventHandle(pid %d slot %u) -> %p", (int)h.slot.pid, h.slot.index,
                (void *)e);
    return CUDA_SUCCESS;
}
