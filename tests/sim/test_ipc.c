/* Device memory shared between two processes (cudaIpcGetMemHandle / OpenMemHandle / CloseMemHandle): the exporter's bytes seen by the importer, the importer's writes seen by the exporter, and the documented errors.  The importer is this program run again (argv[1] "import" and the handle in hex). */
#include "xpt_ipc.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define N (3 * 4096 + 100)   /* not a whole number of pages, at an offset that is none either */

/* The other process: reads the pattern, writes the next one, closes. */
static int import(const char *hex)
{
    cudaIpcMemHandle_t h;
    xpt_from_hex(hex, &h, sizeof h);
    void *p = NULL, *again = NULL;
    CHECK_CUDA(cudaIpcOpenMemHandle(&p, h, 0), cudaErrorInvalidValue);
    CHECK_OK(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess));
    CHECK_OK(cudaIpcOpenMemHandle(&again, h, cudaIpcMemLazyEnablePeerAccess));
    CHECK(again == p);
    struct cudaPointerAttributes a;
    CHECK_OK(cudaPointerGetAttributes(&a, p));
    CHECK_EQ(a.type, cudaMemoryTypeDevice);
    CHECK_CUDA(cudaFree(p), cudaErrorInvalidValue);
    unsigned char *buf = malloc(N);
    CHECK(buf != NULL);
    CHECK_OK(cudaMemcpy(buf, p, N, cudaMemcpyDeviceToHost));
    CHECK_PATTERN(buf, N, 5);
    xpt_fill(buf, N, 6);
    CHECK_OK(cudaMemcpy(p, buf, N, cudaMemcpyHostToDevice));
    /* Past its end is no memory. */
    CHECK_CUDA(cudaMemcpy(buf, p, N + 1, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    CHECK_OK(cudaIpcCloseMemHandle(p));
    CHECK_OK(cudaIpcCloseMemHandle(p));   /* the second open's reference */
    CHECK_CUDA(cudaIpcCloseMemHandle(p), cudaErrorInvalidValue);
    /* A handle that names no process's memory. */
    cudaIpcMemHandle_t bad;
    memset(&bad, 0, sizeof bad);
    CHECK_CUDA(cudaIpcOpenMemHandle(&p, bad, cudaIpcMemLazyEnablePeerAccess),
               cudaErrorInvalidResourceHandle);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "import") == 0)
        return import(argv[2]);

    void *pad = NULL, *d = NULL;
    CHECK_OK(cudaMalloc(&pad, 1000));   /* so that d starts inside a page */
    CHECK_OK(cudaMalloc(&d, N));
    unsigned char *buf = malloc(N);
    CHECK(buf != NULL);
    xpt_fill(buf, N, 5);
    CHECK_OK(cudaMemcpy(d, buf, N, cudaMemcpyHostToDevice));
    CHECK_OK(cudaMemcpy(pad, buf, 1000, cudaMemcpyHostToDevice));
    cudaIpcMemHandle_t h;
    CHECK_CUDA(cudaIpcGetMemHandle(&h, (char *)d + 16), cudaErrorInvalidValue);
    CHECK_CUDA(cudaIpcGetMemHandle(&h, buf), cudaErrorInvalidValue);
    CHECK_OK(cudaIpcGetMemHandle(&h, d));
    /* Not in the process that exported it. */
    void *self = NULL;
    CHECK_CUDA(cudaIpcOpenMemHandle(&self, h, cudaIpcMemLazyEnablePeerAccess),
               cudaErrorDeviceUninitialized);   /* "invalid device context" */

    char hex[2 * sizeof h + 1];
    xpt_to_hex(&h, sizeof h, hex);
    char *child_argv[] = {argv[0], "import", hex, NULL};
    pid_t pid;
    CHECK(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, child_argv, environ) == 0);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "importer status %#x", status);

    CHECK_OK(cudaMemcpy(buf, d, N, cudaMemcpyDeviceToHost));
    CHECK_PATTERN(buf, N, 6);
    /* The first export moved the device's bytes into a file: what the other
     * allocations held is still there, and freeing and allocating go on. */
    CHECK_OK(cudaMemcpy(buf, pad, 1000, cudaMemcpyDeviceToHost));
    CHECK_PATTERN(buf, 1000, 5);
    CHECK_OK(cudaFree(d));
    CHECK_OK(cudaMalloc(&d, N));
    CHECK_OK(cudaMemset(d, 0x3c, N));
    CHECK_OK(cudaMemcpy(buf, d, N, cudaMemcpyDeviceToHost));
    CHECK_BYTES(buf, N, 0x3c);
    CHECK_OK(cudaFree(d));
    CHECK_OK(cudaFree(pad));
    free(buf);
    puts("ipc: ok");
    return 0;
}
