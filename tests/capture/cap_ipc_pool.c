/* cap_ipc_pool.c: allocations of a memory pool shared between two
 * processes.  The exporter creates a pool exportable as a POSIX descriptor,
 * allocates three buffers from it, fills the first, exports the pool and
 * the three pointers and runs itself again as the importer ("import", the
 * three export data in hex and a socket on which the pool's descriptor
 * comes, SCM_RIGHTS), which imports all three, reads the first and writes
 * into it, frees it with cudaFree and the third with cudaFreeAsync, and
 * leaves the second imported at exit, beside a buffer of its own it never
 * frees.  Pointers go to stderr (they vary from run to run), the rest to
 * stdout, so that test_ipc_pool.py can compare stdout with and without the
 * profiler. */
#include "cap_util.h"
#include "../sim/xpt_ipc.h"

#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

#define SAY(name, value) \
    fprintf(stderr, "%s 0x%llx\n", (name), (unsigned long long)(uintptr_t)(value))

enum { N = 20000, BIG = 1 << 20, SMALL = 4096 };

static int import(char **hex, int sock)
{
    struct cudaMemPoolPtrExportData data[3];
    for (int i = 0; i < 3; i++)
        xpt_from_hex(hex[i], &data[i], sizeof data[i]);
    int fd = xpt_recv_fd(sock);
    cudaMemPool_t pool;
    CHECK_OK(cudaMemPoolImportFromShareableHandle(&pool, (void *)(intptr_t)fd,
                                                  cudaMemHandleTypePosixFileDescriptor, 0));
    void *a = NULL, *b = NULL, *c = NULL, *own = NULL;
    CHECK_OK(cudaMemPoolImportPointer(&a, pool, &data[0]));
    CHECK_OK(cudaMemPoolImportPointer(&b, pool, &data[1]));
    CHECK_OK(cudaMemPoolImportPointer(&c, pool, &data[2]));
    CHECK_OK(cudaMalloc(&own, BIG));
    static unsigned char host[N];
    CHECK_OK(cudaMemcpy(host, a, N, cudaMemcpyDeviceToHost));
    printf("importer read %d\n", host[N - 1]);
    memset(host, 0x66, N);
    CHECK_OK(cudaMemcpy(a, host, N, cudaMemcpyHostToDevice));
    CHECK_OK(cudaFree(a));
    CHECK_OK(cudaFreeAsync(c, 0));
    CHECK_OK(cudaStreamSynchronize(0));
    SAY("ia", a);
    SAY("ib", b);
    SAY("ic", c);
    SAY("iown", own);
    SAY("ihost", host);
    fflush(stdout);
    return 0;   /* b and own stay: imported and allocated at exit */
}

int main(int argc, char **argv)
{
    if (argc == 6 && strcmp(argv[1], "import") == 0)
        return import(argv + 2, atoi(argv[5]));
    struct cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t pool;
    CHECK_OK(cudaMemPoolCreate(&pool, &props));
    void *p[3] = {NULL, NULL, NULL};
    const size_t sizes[3] = {N, BIG, SMALL};
    for (int i = 0; i < 3; i++)
        CHECK_OK(cudaMallocFromPoolAsync(&p[i], sizes[i], pool, 0));
    static unsigned char host[N];
    memset(host, 0x33, N);
    CHECK_OK(cudaMemcpy(p[0], host, N, cudaMemcpyHostToDevice));
    int fd = -1;
    CHECK_OK(cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0));
    char hex[3][2 * sizeof(struct cudaMemPoolPtrExportData) + 1];
    for (int i = 0; i < 3; i++) {
        struct cudaMemPoolPtrExportData data;
        CHECK_OK(cudaMemPoolExportPointer(&data, p[i]));
        xpt_to_hex(&data, sizeof data, hex[i]);
    }
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    char sock[16];
    snprintf(sock, sizeof sock, "%d", sv[1]);
    fflush(stdout);
    char *child_argv[] = {argv[0], "import", hex[0], hex[1], hex[2], sock, NULL};
    pid_t pid;
    CHECK(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, child_argv, environ) == 0);
    xpt_send_fd(sv[0], fd);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_OK(cudaMemcpy(host, p[0], N, cudaMemcpyDeviceToHost));
    printf("exporter read %d\n", host[0]);
    printf("importer %d\n", (int)pid);
    for (int i = 0; i < 3; i++)
        CHECK_OK(cudaFreeAsync(p[i], 0));
    CHECK_OK(cudaStreamSynchronize(0));
    CHECK_OK(cudaMemPoolDestroy(pool));
    close(fd);
    puts("ipc_pool: done");
    return 0;
}
