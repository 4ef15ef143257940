/* drv_pool_ipc.c: memory pools shared between processes (cuMemPoolExportToShareableHandle, cuMemPoolImportFromShareableHandle, cuMemPoolExportPointer, cuMemPoolImportPointer) over the device's memory file, as drv_ipc.c shares single allocations. */
#include "xpsim_driver.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define POOL_PTR_MAGIC 0x58505050u   /* "XPPP" */

/* What CUmemPoolPtrExportData (64 opaque bytes) holds: where the exporter
 * keeps the allocation's bytes in its device file (known by its inode, the
 * file the importer's pool was imported from). */
typedef struct pool_ptr_data {
    uint32_t magic;
    int32_t device;           /* the exporter's ordinal, for the debug log */
    uint64_t ino;
    uint64_t offset;
    uint64_t size;
} pool_ptr_data;
_Static_assert(sizeof(pool_ptr_data) <= sizeof(CUmemPoolPtrExportData), "fits the export data");

/* The shareable handle of a POSIX-descriptor pool is a new descriptor of
 * the device's memory file (close-on-exec: a program hands it on with
 * SCM_RIGHTS, or clears the flag); the program owns and closes it. */
XPSIM_API CUresult cuMemPoolExportToShareableHandle(void *handle_out, CUmemoryPool pool,
                                                   CUmemAllocationHandleType handleType,
                                                   unsigned long long flags)
{
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    xpdrv_pool_desc d;
    if (handle_out == NULL || flags != 0 || handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ||
        !xpdrv_pool_info(pool, &d) || d.kind != XPDRV_POOL_CREATED ||
        !(d.handle_types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
        return CUDA_ERROR_INVALID_VALUE;
    int fd = -1;
    uint64_t ino = 0;
    if ((rc = xpdrv_device_file(d.device, &fd, &ino)) != CUDA_SUCCESS)
        return rc;
    int out = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (out < 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *(int *)handle_out = out;
    xpsim_debug("cuMemPoolExportToShareableHandle(%p) -> fd %d", (void *)pool, out);
    return CUDA_SUCCESS;
}

/* A descriptor of another process's device file (as
 * cuMemPoolExportToShareableHandle made it), which the program keeps: the
 * pool works on a duplicate of its own. */
XPSIM_API CUresult cuMemPoolImportFromShareableHandle(CUmemoryPool *pool_out, void *handle,
                                                     CUmemAllocationHandleType handleType,
                                                     unsigned long long flags)
{
    if (pool_out == NULL || flags != 0 || handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return CUDA_ERROR_INVALID_VALUE;
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    int given = (int)(intptr_t)handle;
    char path[64], target[64] = "";
    snprintf(path, sizeof path, "/proc/self/fd/%d", given);
    ssize_t n = readlink(path, target, sizeof target - 1);
    static const char device_file[] = "/memfd:xpsim-device";
    struct stat st;
    if (given < 0 || n < (ssize_t)sizeof device_file - 1 ||
        memcmp(target, device_file, sizeof device_file - 1) != 0 || fstat(given, &st) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    int fd = fcntl(given, F_DUPFD_CLOEXEC, 0);
    if (fd < 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if ((rc = xpdrv_pool_import(dev, fd, (uint64_t)st.st_ino, pool_out)) != CUDA_SUCCESS)
        close(fd);
    return rc;
}

/* The base of a live allocation from a pool created exportable. */
XPSIM_API CUresult cuMemPoolExportPointer(CUmemPoolPtrExportData *shareData_out, CUdeviceptr ptr)
{
    if (shareData_out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    int cur;
    CUresult rc = xpdrv_enter(&cur);
    if (rc != CUDA_SUCCESS)
        return rc;
    xpdrv_ptr info;
    xpdrv_classify(ptr, &info);
    xpdrv_pool_desc d;
    if (info.kind != XPDRV_MEM_DEVICE || info.origin != XPDRV_FROM_POOL || info.base != ptr ||
        info.device < 0 || !xpdrv_pool_info(xpdrv_pool_of(info.device, ptr), &d) ||
        !(d.handle_types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
        return CUDA_ERROR_INVALID_VALUE;
    int fd = -1;
    uint64_t ino = 0;
    if ((rc = xpdrv_device_file(info.device, &fd, &ino)) != CUDA_SUCCESS)
        return rc;
    pool_ptr_data data = {.magic = POOL_PTR_MAGIC, .device = info.device, .ino = ino,
                          .offset = ptr - xpdrv_device(info.device)->mem.base,
                          .size = info.size};
    memset(shareData_out, 0, sizeof *shareData_out);
    memcpy(shareData_out->reserved, &data, sizeof data);
    return CUDA_SUCCESS;
}

/* Maps the exporter's allocation, which must be of the file the pool was
 * imported from; freed with cuMemFree / cuMemFreeAsync. */
XPSIM_API CUresult cuMemPoolImportPointer(CUdeviceptr *ptr_out, CUmemoryPool pool,
                                          CUmemPoolPtrExportData *shareData)
{
    if (ptr_out == NULL || shareData == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    int cur;
    CUresult rc = xpdrv_enter(&cur);
    if (rc != CUDA_SUCCESS)
        return rc;
    xpdrv_pool_desc d;
    pool_ptr_data data;
    memcpy(&data, shareData->reserved, sizeof data);
    if (!xpdrv_pool_info(pool, &d) || d.kind != XPDRV_POOL_IMPORTED ||
        data.magic != POOL_PTR_MAGIC || data.ino != d.ino || data.size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    rc = xpdrv_ipc_import(d.fd, d.ino, data.offset, data.size, d.device, ptr_out);
    xpsim_debug("cuMemPoolImportPointer(pool %p, offset %#llx, %llu bytes) -> %d", (void *)pool,
                (unsigned long long)data.offset, (unsigned long long)data.size, (int)rc);
    return rc;
}
