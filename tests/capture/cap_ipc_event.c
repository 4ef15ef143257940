/* cap_ipc_event.c: an event shared between two processes, as NVIDIA's
 * simpleIPC shares one.  The exporter uploads into a buffer on a stream,
 * records an interprocess event after it, exports both and runs itself
 * again as the importer ("import" and the two handles in hex), which opens
 * both, makes its stream wait for the event, downloads the buffer, waits for
 * the event on the host, records it itself and closes everything.  Handles
 * and pointers go to stderr (they vary from run to run), the rest to stdout,
 * so that test_ipc_event.py can compare stdout with and without the
 * profiler. */
#include "cap_util.h"
#include "../sim/xpt_ipc.h"

#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

#define SAY(name, value) \
    fprintf(stderr, "%s 0x%llx\n", (name), (unsigned long long)(uintptr_t)(value))

enum { N = 1 << 20 };

static int import(const char *mem_hex, const char *ev_hex)
{
    cudaIpcMemHandle_t mh;
    cudaIpcEventHandle_t eh;
    xpt_from_hex(mem_hex, &mh, sizeof mh);
    xpt_from_hex(ev_hex, &eh, sizeof eh);
    void *d = NULL;
    cudaEvent_t ev;
    cudaStream_t s;
    unsigned char *host = NULL;
    CHECK_OK(cudaIpcOpenMemHandle(&d, mh, cudaIpcMemLazyEnablePeerAccess));
    CHECK_OK(cudaIpcOpenEventHandle(&ev, eh));
    CHECK_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK_OK(cudaMallocHost((void **)&host, N));
    CHECK_OK(cudaStreamWaitEvent(s, ev, 0));
    CHECK_OK(cudaMemcpyAsync(host, d, N, cudaMemcpyDeviceToHost, s));
    CHECK_OK(cudaEventSynchronize(ev));
    CHECK_OK(cudaStreamSynchronize(s));
    printf("importer read %d %d\n", host[0], host[N - 1]);
    CHECK_OK(cudaEventRecord(ev, s));
    CHECK_OK(cudaEventSynchronize(ev));
    SAY("iev", ev);
    SAY("istream", s);
    SAY("id", d);
    SAY("ihost", host);
    CHECK_OK(cudaEventDestroy(ev));
    CHECK_OK(cudaIpcCloseMemHandle(d));
    CHECK_OK(cudaFreeHost(host));
    CHECK_OK(cudaStreamDestroy(s));
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "import") == 0)
        return import(argv[2], argv[3]);
    void *d = NULL;
    unsigned char *host = NULL;
    cudaStream_t s;
    cudaEvent_t ev;
    CHECK_OK(cudaMalloc(&d, N));
    CHECK_OK(cudaMallocHost((void **)&host, N));
    CHECK_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK_OK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming | cudaEventInterprocess));
    memset(host, 0x2a, N);
    CHECK_OK(cudaMemcpyAsync(d, host, N, cudaMemcpyHostToDevice, s));
    CHECK_OK(cudaEventRecord(ev, s));
    cudaIpcMemHandle_t mh;
    cudaIpcEventHandle_t eh;
    CHECK_OK(cudaIpcGetMemHandle(&mh, d));
    CHECK_OK(cudaIpcGetEventHandle(&eh, ev));
    char mem_hex[2 * sizeof mh + 1], ev_hex[2 * sizeof eh + 1];
    xpt_to_hex(&mh, sizeof mh, mem_hex);
    xpt_to_hex(&eh, sizeof eh, ev_hex);
    fflush(stdout);
    char *child_argv[] = {argv[0], "import", mem_hex, ev_hex, NULL};
    pid_t pid;
    CHECK(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, child_argv, environ) == 0);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_OK(cudaEventQuery(ev));   /* the importer's record has completed */
    printf("importer %d\n", (int)pid);
    CHECK_OK(cudaEventDestroy(ev));
    CHECK_OK(cudaStreamDestroy(s));
    CHECK_OK(cudaFreeHost(host));
    CHECK_OK(cudaFree(d));
    puts("ipc_event: done");
    return 0;
}
