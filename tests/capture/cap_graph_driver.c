/* cap_graph_driver.c: copies inside CUDA graphs, through the driver API.
 * capture_graph() captures an upload (4096 bytes, pinned), a device copy
 * (3000), a memset (1500) and a download (2000, pinned) on a stream;
 * launch_step() launches the graph three times, the upload's bytes the same
 * for the first two and changed for the third.  Then add_graph() builds a
 * graph by hand with cuGraphAddMemcpyNode (an upload of 5000 pageable bytes),
 * launched once as added and once after cuGraphExecMemcpyNodeSetParams made
 * it 6000.  It prints every result code and what it read back, so the output
 * with and without the profiler can be compared. */
#include "cap_util.h"

#include <cuda.h>

#define CHECK_CU(call)                                                         \
    do {                                                                       \
        CUresult r_ = (call);                                                  \
        printf("%s -> %d\n", #call, (int)r_);                                  \
        CHECK(r_ == CUDA_SUCCESS);                                             \
    } while (0)

static CUdeviceptr d1, d2;
static unsigned char *hin, *hout, *page;

static __attribute__((noinline)) CUgraph capture_graph(CUstream s)
{
    CUgraph g = NULL;
    CHECK_CU(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CHECK_CU(cuMemcpyHtoDAsync(d1, hin, 4096, s));
    CHECK_CU(cuMemcpyDtoDAsync(d2, d1, 3000, s));
    CHECK_CU(cuMemsetD8Async(d2 + 3000, 7, 1500, s));
    CHECK_CU(cuMemcpyDtoHAsync(hout, d2, 2000, s));
    CHECK_CU(cuStreamEndCapture(s, &g));
    return g;
}

static __attribute__((noinline)) void launch_step(CUgraphExec e, CUstream s)
{
    CHECK_CU(cuGraphLaunch(e, s));
    CHECK_CU(cuStreamSynchronize(s));
}

/* An upload of `bytes` from the pageable buffer to d1, as a memcpy node has it. */
static CUDA_MEMCPY3D upload(size_t bytes)
{
    CUDA_MEMCPY3D p;
    memset(&p, 0, sizeof p);
    p.srcMemoryType = CU_MEMORYTYPE_HOST;
    p.srcHost = page;
    p.srcPitch = bytes;
    p.srcHeight = 1;
    p.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    p.dstDevice = d1;
    p.dstPitch = bytes;
    p.dstHeight = 1;
    p.WidthInBytes = bytes;
    p.Height = 1;
    p.Depth = 1;
    return p;
}

static __attribute__((noinline)) CUgraph add_graph(CUcontext ctx, CUgraphNode *node)
{
    CUgraph g = NULL;
    CHECK_CU(cuGraphCreate(&g, 0));
    CUDA_MEMCPY3D p = upload(5000);
    CHECK_CU(cuGraphAddMemcpyNode(node, g, NULL, 0, &p, ctx));
    CAP_PRINT("node", *node);
    return g;
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUstream s;
    CHECK_CU(cuInit(0));
    CHECK_CU(cuDeviceGet(&dev, 0));
    CHECK_CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK_CU(cuCtxSetCurrent(ctx));
    CHECK_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CAP_PRINT("stream", s);
    CHECK_CU(cuMemAlloc(&d1, 8192));
    CHECK_CU(cuMemAlloc(&d2, 8192));
    CHECK_CU(cuMemAllocHost((void **)&hin, 4096));
    CHECK_CU(cuMemAllocHost((void **)&hout, 4096));
    page = malloc(8192);
    CHECK(page != NULL);

    CUgraph g = capture_graph(s);
    CUgraphExec e = NULL;
    CHECK_CU(cuGraphInstantiate(&e, g, 0));
    for (int step = 0; step < 3; step++) {
        memset(hin, step < 2 ? 1 : 2, 4096);
        launch_step(e, s);
        printf("step %d read back %d\n", step, hout[0]);
        CHECK(hout[0] == (step < 2 ? 1 : 2));
    }
    CHECK_CU(cuGraphExecDestroy(e));
    CHECK_CU(cuGraphDestroy(g));

    CUgraphNode node = NULL;
    memset(page, 5, 8192);
    g = add_graph(ctx, &node);
    CHECK_CU(cuGraphInstantiate(&e, g, 0));
    launch_step(e, s);
    CUDA_MEMCPY3D p = upload(6000);
    CHECK_CU(cuGraphExecMemcpyNodeSetParams(e, node, &p, ctx));
    launch_step(e, s);
    unsigned char back[6001];   /* its own size: not a node's */
    CHECK_CU(cuMemcpyDtoH(back, d1, sizeof back));
    printf("explicit read back %d %d\n", back[0], back[5999]);
    CHECK(back[5999] == 5);
    CHECK_CU(cuGraphExecDestroy(e));
    CHECK_CU(cuGraphDestroy(g));
    return 0;
}
