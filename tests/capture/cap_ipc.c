/* cap_ipc.c: device memory shared between two processes.  The exporter
 * allocates two buffers, fills one, exports both and runs itself again as
 * the importer ("import" and the two handles in hex), which opens both,
 * reads the first, writes into it, closes it, and leaves the second open
 * at exit, beside a buffer of its own it never frees.  Pointers go to
 * stderr (they vary from run to run), the rest to stdout, so that
 * test_ipc.py can compare stdout with and without the profiler. */
#include "cap_util.h"
#include "../sim/xpt_ipc.h"

#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

#define SAY(name, value) \
    fprintf(stderr, "%s 0x%llx\n", (name), (unsigned long long)(uintptr_t)(value))

enum { N = 20000, BIG = 1 << 20 };

static int import(const char *hex_a, const char *hex_b)
{
    cudaIpcMemHandle_t ha, hb;
    xpt_from_hex(hex_a, &ha, sizeof ha);
    xpt_from_hex(hex_b, &hb, sizeof hb);
    void *a = NULL, *b = NULL, *own = NULL;
    CHECK_OK(cudaIpcOpenMemHandle(&a, ha, cudaIpcMemLazyEnablePeerAccess));
    CHECK_OK(cudaIpcOpenMemHandle(&b, hb, cudaIpcMemLazyEnablePeerAccess));
    CHECK_OK(cudaMalloc(&own, BIG));
    static unsigned char host[N];
    CHECK_OK(cudaMemcpy(host, a, N, cudaMemcpyDeviceToHost));
    printf("importer read %d\n", host[N - 1]);
    memset(host, 0x77, N);
    CHECK_OK(cudaMemcpy(a, host, N, cudaMemcpyHostToDevice));
    CHECK_OK(cudaIpcCloseMemHandle(a));
    SAY("ia", a);
    SAY("ib", b);
    SAY("iown", own);
    SAY("ihost", host);
    fflush(stdout);
    return 0;   /* b and own stay: open and allocated at exit */
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "import") == 0)
        return import(argv[2], argv[3]);
    void *a = NULL, *b = NULL;
    CHECK_OK(cudaMalloc(&a, N));
    CHECK_OK(cudaMalloc(&b, BIG));
    static unsigned char host[N];
    memset(host, 0x33, N);
    CHECK_OK(cudaMemcpy(a, host, N, cudaMemcpyHostToDevice));
    cudaIpcMemHandle_t ha, hb;
    CHECK_OK(cudaIpcGetMemHandle(&ha, a));
    CHECK_OK(cudaIpcGetMemHandle(&hb, b));
    char hex_a[2 * sizeof ha + 1], hex_b[2 * sizeof hb + 1];
    xpt_to_hex(&ha, sizeof ha, hex_a);
    xpt_to_hex(&hb, sizeof hb, hex_b);
    fflush(stdout);
    char *child_argv[] = {argv[0], "import", hex_a, hex_b, NULL};
    pid_t pid;
    CHECK(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, child_argv, environ) == 0);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_OK(cudaMemcpy(host, a, N, cudaMemcpyDeviceToHost));
    printf("exporter read %d\n", host[0]);
    printf("importer %d\n", (int)pid);
    CHECK_OK(cudaFree(a));
    CHECK_OK(cudaFree(b));
    puts("ipc: done");
    return 0;
}
