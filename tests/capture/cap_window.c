/* cap_window.c: copies before, inside and after capture windows, for
 * test_window.py.  Every copy has its own size, so the driver can tell which
 * were recorded.  argv[1] picks the trigger:
 *   profiler  cudaProfilerStart/Stop twice; the pinned buffer and the device
 *             buffers come from before the first window, one of them is freed
 *             inside it, one allocated inside is never freed
 *   nvtx      push/pop ranges "capture" in the default domain and in domain
 *             "dom", a start/end range "capture", a range "other"
 *   time      a copy, 2.5 s, a copy, 2.5 s, a copy (for --delay 1.5 --duration 2: each
 *             copy 1 s or more from the window's edges, so that a loaded machine
 *             starting the program late does not move one across) */
#include "cap_util.h"

#include <cuda_profiler_api.h>
#include <nvtx3/nvToolsExt.h>
#include <time.h>

static void *dev;
static unsigned char *pinned;

/* A copy of `bytes` bytes from the pinned buffer: its size names it. */
static void copy(size_t bytes)
{
    CHECK(cudaMemcpy(dev, pinned, bytes, cudaMemcpyHostToDevice) == cudaSuccess);
}

static void pause_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static nvtxEventAttributes_t attr(const char *m)
{
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = m;
    return a;
}

static void profiler(void)
{
    void *freed_inside = NULL, *kept = NULL;
    CHECK(cudaMalloc(&freed_inside, 1 << 20) == cudaSuccess);
    CAP_PRINT("freed_inside", freed_inside);
    copy(1001);                                   /* before */
    CHECK(cudaProfilerStart() == cudaSuccess);
    CHECK(cudaProfilerStart() == cudaSuccess);    /* no nesting: one window */
    copy(2002);                                   /* inside, from pinned memory */
    CHECK(cudaMemset(dev, 0, 77) == cudaSuccess);
    CHECK(cudaFree(freed_inside) == cudaSuccess);
    CHECK(cudaMalloc(&kept, 3 << 20) == cudaSuccess);
    CAP_PRINT("kept", kept);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(cudaProfilerStop() == cudaSuccess);
    copy(3003);                                   /* after */
    CHECK(cudaMemset(dev, 0, 88) == cudaSuccess);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(cudaProfilerStop() == cudaSuccess);     /* a Stop with none open: no error */
    CHECK(cudaProfilerStart() == cudaSuccess);
    copy(4004);                                   /* the second window */
    CHECK(cudaProfilerStop() == cudaSuccess);
    copy(5005);                                   /* after it */
}

static void nvtx(void)
{
    nvtxDomainHandle_t dom = nvtxDomainCreateA("dom");
    nvtxEventAttributes_t cap = attr("capture");
    copy(1001);
    nvtxRangePushA("other");
    copy(1002);
    nvtxRangePushA("capture");                     /* default domain, inside "other" */
    copy(2002);
    nvtxRangePop();
    copy(1003);
    nvtxRangePop();
    nvtxDomainRangePushEx(dom, &cap);
    copy(3003);                                   /* "capture" in domain "dom" */
    nvtxDomainRangePop(dom);
    copy(1004);
    nvtxRangeId_t id = nvtxRangeStartA("capture");
    copy(4004);                                   /* a start/end range */
    nvtxRangeEnd(id);
    copy(1005);
}

static void timed(void)
{
    copy(1001);
    pause_s(2.5);
    copy(2002);
    pause_s(2.5);
    copy(3003);
}

int main(int argc, char **argv)
{
    CHECK(argc == 2);
    CHECK(cudaMallocHost((void **)&pinned, 1 << 16) == cudaSuccess);
    CHECK(cudaMalloc(&dev, 1 << 17) == cudaSuccess);
    CAP_PRINT("pinned", pinned);
    CAP_PRINT("dev", dev);
    if (strcmp(argv[1], "profiler") == 0)
        profiler();
    else if (strcmp(argv[1], "nvtx") == 0)
        nvtx();
    else
        timed();
    CHECK(cudaFree(dev) == cudaSuccess);
    CHECK(cudaFreeHost(pinned) == cudaSuccess);
    printf("done\n");
    return 0;
}
