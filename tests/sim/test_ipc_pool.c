/* Memory pools shared between two processes, as NVIDIA's streamOrderedAllocationIPC shares them: a pool created exportable as a POSIX descriptor, the descriptor passed with SCM_RIGHTS, one allocation's export data passed in hex; the importer reads the exporter's bytes, writes its own, frees the import with cudaFree; pools of cudaMemPoolCreate as the current pool; the documented errors.  The importer is this program run again (argv[1] "import", the export data in hex, the socket's descriptor). */
#include "xpt_ipc.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define N (64 * 1024 + 100)

static int import(const char *hex, int sock)
{
    struct cudaMemPoolPtrExportData data;
    xpt_from_hex(hex, &data, sizeof data);
    int fd = xpt_recv_fd(sock);
    cudaMemPool_t pool;
    CHECK_CUDA(cudaMemPoolImportFromShareableHandle(&pool, (void *)(intptr_t)fd,
                                                    cudaMemHandleTypeNone, 0),
               cudaErrorInvalidValue);
    CHECK_CUDA(cudaMemPoolImportFromShareableHandle(&pool, (void *)(intptr_t)sock,
                                                    cudaMemHandleTypePosixFileDescriptor, 0),
               cudaErrorInvalidValue);   /* a descriptor, but of no pool */
    CHECK_OK(cudaMemPoolImportFromShareableHandle(&pool, (void *)(intptr_t)fd,
                                                  cudaMemHandleTypePosixFileDescriptor, 0));
    CHECK(close(fd) == 0);   /* the pool keeps what it needs */
    void *p = NULL, *again = NULL;
    struct cudaMemPoolPtrExportData bad;
    memset(&bad, 0, sizeof bad);
    CHECK_CUDA(cudaMemPoolImportPointer(&p, pool, &bad), cudaErrorInvalidValue);
    CHECK_OK(cudaMemPoolImportPointer(&p, pool, &data));
    CHECK_OK(cudaMemPoolImportPointer(&again, pool, &data));
    CHECK(again == p);
    /* An imported pool makes no allocations and is no device's pool. */
    void *q = NULL;
    CHECK_CUDA(cudaMallocFromPoolAsync(&q, 4096, pool, 0), cudaErrorInvalidValue);
    CHECK_CUDA(cudaDeviceSetMemPool(0, pool), cudaErrorInvalidValue);
    struct cudaPointerAttributes a;
    CHECK_OK(cudaPointerGetAttributes(&a, p));
    CHECK_EQ(a.type, cudaMemoryTypeDevice);
    unsigned char *buf = malloc(N);
    CHECK(buf != NULL);
    CHECK_OK(cudaMemcpy(buf, p, N, cudaMemcpyDeviceToHost));
    CHECK_PATTERN(buf, N, 7);
    xpt_fill(buf, N, 8);
    CHECK_OK(cudaMemcpy(p, buf, N, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(buf, p, N + 1, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    /* Freed by cudaFree (once per import), not closed as an IPC handle. */
    CHECK_CUDA(cudaIpcCloseMemHandle(p), cudaErrorInvalidValue);
    CHECK_OK(cudaFree(p));
    CHECK_OK(cudaFreeAsync(p, 0));
    CHECK_OK(cudaStreamSynchronize(0));
    CHECK_CUDA(cudaFree(p), cudaErrorInvalidValue);
    CHECK_OK(cudaMemPoolDestroy(pool));
    CHECK_CUDA(cudaMemPoolDestroy(pool), cudaErrorInvalidValue);
    free(buf);
    return 0;
}

static cudaMemPool_t create_pool(enum cudaMemAllocationHandleType types, cudaError_t want)
{
    struct cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = types;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t pool = NULL;
    CHECK_CUDA(cudaMemPoolCreate(&pool, &props), want);
    return pool;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "import") == 0)
        return import(argv[2], atoi(argv[3]));

    /* Pools of one's own: the current pool, and what may be exported. */
    cudaMemPool_t dflt, cur, plain, pool;
    CHECK_OK(cudaDeviceGetDefaultMemPool(&dflt, 0));
    (void)create_pool(cudaMemHandleTypeWin32, cudaErrorNotSupported);
    plain = create_pool(cudaMemHandleTypeNone, cudaSuccess);
    pool = create_pool(cudaMemHandleTypePosixFileDescriptor, cudaSuccess);
    CHECK(plain != dflt && pool != dflt && plain != pool);
    CHECK_OK(cudaDeviceSetMemPool(0, plain));
    CHECK_OK(cudaDeviceGetMemPool(&cur, 0));
    CHECK(cur == plain);
    void *a = NULL;
    CHECK_OK(cudaMallocAsync(&a, 1000, 0));
    size_t used = 0;   /* it came from the current pool */
    CHECK_OK(cudaMemPoolGetAttribute(plain, cudaMemPoolAttrUsedMemCurrent, &used));
    CHECK_EQ(used, 1024);
    CHECK_OK(cudaMemPoolGetAttribute(dflt, cudaMemPoolAttrUsedMemCurrent, &used));
    CHECK_EQ(used, 0);
    int fd = -1;
    struct cudaMemPoolPtrExportData data;
    CHECK_CUDA(cudaMemPoolExportToShareableHandle(&fd, plain, cudaMemHandleTypePosixFileDescriptor, 0),
               cudaErrorInvalidValue);
    CHECK_CUDA(cudaMemPoolExportToShareableHandle(&fd, dflt, cudaMemHandleTypePosixFileDescriptor, 0),
               cudaErrorInvalidValue);
    CHECK_CUDA(cudaMemPoolExportPointer(&data, a), cudaErrorInvalidValue);
    /* Destroyed with an allocation live: the device's pool is its default
     * again, and the allocation is freed as usual. */
    CHECK_OK(cudaMemPoolDestroy(plain));
    CHECK_OK(cudaDeviceGetMemPool(&cur, 0));
    CHECK(cur == dflt);
    CHECK_OK(cudaFreeAsync(a, 0));
    CHECK_CUDA(cudaMemPoolDestroy(dflt), cudaErrorInvalidValue);

    void *pad = NULL, *d = NULL;
    CHECK_OK(cudaMallocFromPoolAsync(&pad, 100, pool, 0));   /* d starts inside a page */
    CHECK_OK(cudaMallocFromPoolAsync(&d, N, pool, 0));
    unsigned char *buf = malloc(N);
    CHECK(buf != NULL);
    xpt_fill(buf, N, 7);
    CHECK_OK(cudaMemcpy(d, buf, N, cudaMemcpyHostToDevice));
    CHECK_OK(cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0));
    CHECK(fd >= 0);
    CHECK_CUDA(cudaMemPoolExportPointer(&data, (char *)d + 16), cudaErrorInvalidValue);
    CHECK_OK(cudaMemPoolExportPointer(&data, d));

    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    char hex[2 * sizeof data + 1], sock[16];
    xpt_to_hex(&data, sizeof data, hex);
    snprintf(sock, sizeof sock, "%d", sv[1]);
    char *child_argv[] = {argv[0], "import", hex, sock, NULL};
    pid_t pid;
    CHECK(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, child_argv, environ) == 0);
    xpt_send_fd(sv[0], fd);
    CHECK(close(fd) == 0);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "importer status %#x", status);

    CHECK_OK(cudaMemcpy(buf, d, N, cudaMemcpyDeviceToHost));
    CHECK_PATTERN(buf, N, 8);
    CHECK_OK(cudaFreeAsync(d, 0));
    CHECK_OK(cudaFreeAsync(pad, 0));
    CHECK_OK(cudaStreamSynchronize(0));
    CHECK_OK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
    CHECK_EQ(used, 0);
    CHECK_OK(cudaMemPoolDestroy(pool));
    free(buf);
    puts("ipc_pool: ok");
    return 0;
}
