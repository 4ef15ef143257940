/* Events shared between two processes (cudaIpcGetEventHandle / cudaIpcOpenEventHandle), as NVIDIA's simpleIPC uses them: each process waits on the other's records of one event, in stream order and on the host, and sees the bytes written before them; the documented errors.  The other process is this program run again (argv[1] "import", the handles in hex and the descriptors of two pipes); a stream held on a pipe keeps a record pending for as long as a check needs it to be. */
#include "xpt_ipc.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define N (256 * 1024)

/* A host function that holds its stream until a byte arrives on the pipe. */
static void CUDART_CB hold(void *arg)
{
    char c;
    CHECK(read((int)(intptr_t)arg, &c, 1) == 1);
}

static void say(int fd)
{
    CHECK(write(fd, "x", 1) == 1);
}

/* The other process: its stream waits for the exporter's pending record
 * (held on IN until this process writes OUT), then records the event itself
 * behind a stream held until the exporter answers on IN. */
static int import(const char *mem_hex, const char *ev_hex, int in, int out)
{
    cudaIpcMemHandle_t mh;
    cudaIpcEventHandle_t eh;
    xpt_from_hex(mem_hex, &mh, sizeof mh);
    xpt_from_hex(ev_hex, &eh, sizeof eh);
    void *d = NULL;
    cudaEvent_t ev, again;
    CHECK_OK(cudaIpcOpenMemHandle(&d, mh, cudaIpcMemLazyEnablePeerAccess));
    CHECK_OK(cudaIpcOpenEventHandle(&ev, eh));
    CHECK_OK(cudaIpcOpenEventHandle(&again, eh));
    CHECK(again != ev);
    cudaStream_t s;
    CHECK_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    unsigned char *host = NULL;
    CHECK_OK(cudaMallocHost((void **)&host, N));
    memset(host, 0, N);

    /* The exporter's record waits behind its held stream. */
    CHECK_CUDA(cudaEventQuery(ev), cudaErrorNotReady);
    CHECK_CUDA(cudaEventQuery(again), cudaErrorNotReady);
    CHECK_OK(cudaStreamWaitEvent(s, ev, 0));
    CHECK_OK(cudaMemcpyAsync(host, d, N, cudaMemcpyDeviceToHost, s));
    CHECK_CUDA(cudaStreamQuery(s), cudaErrorNotReady);
    say(out);   /* let the exporter's stream go on */
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_PATTERN(host, N, 1);   /* its copy before the record, not what was there */
    CHECK_OK(cudaEventSynchronize(ev));
    CHECK_OK(cudaEventQuery(ev));
    float ms;
    CHECK_CUDA(cudaEventElapsedTime(&ms, ev, ev), cudaErrorInvalidResourceHandle);

    /* Now this process records it, behind a stream held by the exporter. */
    CHECK_OK(cudaLaunchHostFunc(s, hold, (void *)(intptr_t)in));
    xpt_fill(host, N, 2);
    CHECK_OK(cudaMemcpyAsync(d, host, N, cudaMemcpyHostToDevice, s));
    CHECK_OK(cudaEventRecord(again, s));
    CHECK_CUDA(cudaEventQuery(ev), cudaErrorNotReady);   /* the other open sees it too */
    say(out);
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_OK(cudaEventQuery(ev));

    CHECK_OK(cudaEventDestroy(again));
    CHECK_OK(cudaEventDestroy(ev));
    CHECK_OK(cudaIpcCloseMemHandle(d));
    /* A handle that names no event. */
    cudaIpcEventHandle_t bad;
    memset(&bad, 0, sizeof bad);
    CHECK_CUDA(cudaIpcOpenEventHandle(&ev, bad), cudaErrorInvalidResourceHandle);
    CHECK_OK(cudaFreeHost(host));
    CHECK_OK(cudaStreamDestroy(s));
    return 0;
}

/* Run after the exporter destroyed the event: its handle opens nothing. */
static int stale(const char *ev_hex)
{
    cudaIpcEventHandle_t eh;
    xpt_from_hex(ev_hex, &eh, sizeof eh);
    cudaEvent_t ev;
    CHECK_CUDA(cudaIpcOpenEventHandle(&ev, eh), cudaErrorInvalidResourceHandle);
    return 0;
}

static pid_t spawn(char **argv)
{
    pid_t pid;
    CHECK(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ) == 0);
    return pid;
}

static void reap(pid_t pid)
{
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
}

int main(int argc, char **argv)
{
    if (argc == 6 && strcmp(argv[1], "import") == 0)
        return import(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]));
    if (argc == 3 && strcmp(argv[1], "stale") == 0)
        return stale(argv[2]);

    int dev_attr = 0;
    CHECK_OK(cudaDeviceGetAttribute(&dev_attr, cudaDevAttrIpcEventSupport, 0));
    CHECK_EQ(dev_attr, 1);

    /* Only an event made for it can be shared: interprocess, without timing. */
    cudaEvent_t plain, ev;
    cudaIpcEventHandle_t eh;
    CHECK_CUDA(cudaEventCreateWithFlags(&ev, cudaEventInterprocess), cudaErrorInvalidValue);
    CHECK_OK(cudaEventCreateWithFlags(&plain, cudaEventDisableTiming));
    CHECK_CUDA(cudaIpcGetEventHandle(&eh, plain), cudaErrorInvalidResourceHandle);
    CHECK_CUDA(cudaIpcGetEventHandle(NULL, plain), cudaErrorInvalidValue);
    CHECK_OK(cudaEventDestroy(plain));
    CHECK_OK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming | cudaEventInterprocess));
    CHECK_OK(cudaIpcGetEventHandle(&eh, ev));
    cudaEvent_t self;
    CHECK_CUDA(cudaIpcOpenEventHandle(&self, eh), cudaErrorDeviceUninitialized);

    void *d = NULL;
    CHECK_OK(cudaMalloc(&d, N));
    CHECK_OK(cudaMemset(d, 0, N));
    cudaIpcMemHandle_t mh;
    CHECK_OK(cudaIpcGetMemHandle(&mh, d));
    cudaStream_t s;
    CHECK_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    unsigned char *host = NULL;
    CHECK_OK(cudaMallocHost((void **)&host, N));

    int to_child[2], to_parent[2];
    CHECK(pipe(to_child) == 0 && pipe(to_parent) == 0);
    /* The record is pending until the importer has queued its wait. */
    CHECK_OK(cudaLaunchHostFunc(s, hold, (void *)(intptr_t)to_parent[0]));
    xpt_fill(host, N, 1);
    CHECK_OK(cudaMemcpyAsync(d, host, N, cudaMemcpyHostToDevice, s));
    CHECK_OK(cudaEventRecord(ev, s));

    char mem_hex[2 * sizeof mh + 1], ev_hex[2 * sizeof eh + 1], in[16], out[16];
    xpt_to_hex(&mh, sizeof mh, mem_hex);
    xpt_to_hex(&eh, sizeof eh, ev_hex);
    snprintf(in, sizeof in, "%d", to_child[0]);
    snprintf(out, sizeof out, "%d", to_parent[1]);
    char *child_argv[] = {argv[0], "import", mem_hex, ev_hex, in, out, NULL};
    pid_t pid = spawn(child_argv);

    /* The importer let our stream go (the held function took its first
     * byte), then recorded the event behind its own held stream (its second
     * byte): the event is pending again, in this process too. */
    CHECK_OK(cudaStreamSynchronize(s));
    char c;
    CHECK(read(to_parent[0], &c, 1) == 1);
    CHECK_CUDA(cudaEventQuery(ev), cudaErrorNotReady);
    memset(host, 0, N);
    CHECK_OK(cudaStreamWaitEvent(s, ev, 0));
    CHECK_OK(cudaMemcpyAsync(host, d, N, cudaMemcpyDeviceToHost, s));
    CHECK_CUDA(cudaStreamQuery(s), cudaErrorNotReady);
    say(to_child[1]);
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_PATTERN(host, N, 2);
    CHECK_OK(cudaEventSynchronize(ev));
    CHECK_OK(cudaEventQuery(ev));
    reap(pid);

    /* Recorded here again: the state is still one. */
    CHECK_OK(cudaEventRecord(ev, s));
    CHECK_OK(cudaEventSynchronize(ev));
    CHECK_OK(cudaEventDestroy(ev));
    char *stale_argv[] = {argv[0], "stale", ev_hex, NULL};
    reap(spawn(stale_argv));

    CHECK_OK(cudaFreeHost(host));
    CHECK_OK(cudaFree(d));
    CHECK_OK(cudaStreamDestroy(s));
    puts("ipc_event: ok");
    return 0;
}
