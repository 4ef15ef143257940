/* Graphs and stream capture through the driver API (linked against NVIDIA's stub libcuda.so): memcpy nodes over pinned, pageable, device and managed memory, memset nodes, capture of async copies, exec updates, and cuGetProcAddress handing out each ABI by version. */
#include "xpt_check_cu.h"

#define N (32u << 10)

static CUgraphNode add_copy(CUgraph g, const CUgraphNode *dep, CUmemorytype st, const void *sh,
                            CUdeviceptr sd, CUmemorytype dt, void *dh, CUdeviceptr dd, size_t n)
{
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = st;
    c.srcHost = sh;
    c.srcDevice = sd;
    c.dstMemoryType = dt;
    c.dstHost = dh;
    c.dstDevice = dd;
    c.WidthInBytes = n;
    c.Height = 1;
    c.Depth = 1;
    CUgraphNode node;
    CUcontext ctx;
    CHECK_CU_OK(cuCtxGetCurrent(&ctx));
    CHECK_CU_OK(cuGraphAddMemcpyNode(&node, g, dep, dep ? 1 : 0, &c, ctx));
    CUDA_MEMCPY3D back;
    CHECK_CU_OK(cuGraphMemcpyNodeGetParams(node, &back));
    CHECK(memcmp(&back, &c, sizeof c) == 0);
    return node;
}

/* pinned -> device, memset, device -> managed, managed -> pageable. */
static void explicit_graph(void)
{
    unsigned char *pin, *page = malloc(N);
    CUdeviceptr dev, man;
    CHECK(page != NULL);
    CHECK_CU_OK(cuMemAllocHost((void **)&pin, N));
    CHECK_CU_OK(cuMemAlloc(&dev, N));
    CHECK_CU_OK(cuMemAllocManaged(&man, N, CU_MEM_ATTACH_GLOBAL));
    CUgraph g;
    CHECK_CU_OK(cuGraphCreate(&g, 0));
    CUgraphNode a = add_copy(g, NULL, CU_MEMORYTYPE_HOST, pin, 0, CU_MEMORYTYPE_DEVICE, NULL, dev, N);
    CUDA_MEMSET_NODE_PARAMS m = {.dst = dev + N / 2, .value = 0xabababab, .elementSize = 4,
                                 .width = N / 8, .height = 1};
    CUgraphNode b, c, d;
    CUcontext ctx;
    CHECK_CU_OK(cuCtxGetCurrent(&ctx));
    CHECK_CU_OK(cuGraphAddMemsetNode(&b, g, &a, 1, &m, ctx));
    c = add_copy(g, &b, CU_MEMORYTYPE_DEVICE, NULL, dev, CU_MEMORYTYPE_UNIFIED, NULL, man, N);
    d = add_copy(g, &c, CU_MEMORYTYPE_UNIFIED, NULL, man, CU_MEMORYTYPE_HOST, page, 0, N);
    CUgraphNodeType t;
    CHECK_CU_OK(cuGraphNodeGetType(b, &t));
    CHECK_EQ(t, CU_GRAPH_NODE_TYPE_MEMSET);
    CUgraphExec x;
    CHECK_CU_OK(cuGraphInstantiate(&x, g, 0));   /* cuGraphInstantiateWithFlags */
    CUstream s;
    CHECK_CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (unsigned seed = 1; seed <= 2; seed++) {
        xpt_fill(pin, N, seed);
        memset(page, 0, N);
        CHECK_CU_OK(cuGraphLaunch(x, s));
        CHECK_CU_OK(cuStreamSynchronize(s));
        CHECK_PATTERN(page, N / 2, seed);
        CHECK_BYTES(page + N / 2, N / 2, 0xab);
        CHECK_PATTERN((unsigned char *)(uintptr_t)man, N / 2, seed);
    }

    /* The memset node's value changed in the executable graph only. */
    m.value = 0x01010101;
    CHECK_CU_OK(cuGraphExecMemsetNodeSetParams(x, b, &m, ctx));
    CHECK_CU_OK(cuGraphLaunch(x, s));
    CHECK_CU_OK(cuStreamSynchronize(s));
    CHECK_BYTES(page + N / 2, N / 2, 0x01);
    CUDA_MEMSET_NODE_PARAMS mg;
    CHECK_CU_OK(cuGraphMemsetNodeGetParams(b, &mg));
    CHECK_EQ(mg.value, 0xabababab);

    /* Update from a clone: same topology. */
    CUgraph g2;
    CHECK_CU_OK(cuGraphClone(&g2, g));
    CUgraphExecUpdateResultInfo info;
    CHECK_CU_OK(cuGraphExecUpdate(x, g2, &info));
    CHECK_EQ(info.result, CU_GRAPH_EXEC_UPDATE_SUCCESS);
    CHECK_CU_OK(cuGraphLaunch(x, s));
    CHECK_CU_OK(cuStreamSynchronize(s));
    CHECK_BYTES(page + N / 2, N / 2, 0xab);
    (void)d;

    CHECK_CU_OK(cuGraphExecDestroy(x));
    CHECK_CU_OK(cuGraphDestroy(g));
    CHECK_CU_OK(cuGraphDestroy(g2));
    CHECK_CU_OK(cuStreamDestroy(s));
    CHECK_CU_OK(cuMemFree(dev));
    CHECK_CU_OK(cuMemFree(man));
    CHECK_CU_OK(cuMemFreeHost(pin));
    free(page);
    printf("driver graph: pinned, pageable, device, managed\n");
}

static void capture(void)
{
    unsigned char *pin, *back;
    CUdeviceptr dev;
    CHECK_CU_OK(cuMemAllocHost((void **)&pin, N));
    CHECK_CU_OK(cuMemAllocHost((void **)&back, N));
    CHECK_CU_OK(cuMemAlloc(&dev, N));
    CUstream s;
    CHECK_CU_OK(cuStreamCreate(&s, CU_STREAM_DEFAULT));
    memset(back, 0, N);
    CHECK_CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CHECK_CU_OK(cuMemcpyHtoDAsync(dev, pin, N, s));
    CHECK_CU_OK(cuMemsetD8Async(dev, 0x11, 16, s));
    CHECK_CU_OK(cuMemcpyDtoHAsync(back, dev, N, s));
    CUstreamCaptureStatus st;
    cuuint64_t id = 0;
    CUgraph during;
    const CUgraphNode *deps;
    size_t ndeps = 0;
    CHECK_CU_OK(cuStreamGetCaptureInfo(s, &st, &id, &during, &deps, NULL, &ndeps));
    CHECK_EQ(st, CU_STREAM_CAPTURE_STATUS_ACTIVE);
    CHECK_EQ(ndeps, 1);
    /* The legacy stream may not be used meanwhile. */
    CHECK_CU(cuMemcpyDtoH(back, dev, N), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    CUgraph g;
    CHECK_CU(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    CHECK(g == NULL);

    CHECK_CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CHECK_CU_OK(cuMemcpyHtoDAsync(dev, pin, N, s));
    CHECK_CU_OK(cuMemsetD8Async(dev, 0x11, 16, s));
    CHECK_CU_OK(cuMemcpyDtoHAsync(back, dev, N, s));
    CHECK_CU_OK(cuStreamEndCapture(s, &g));
    size_t n = 0;
    CHECK_CU_OK(cuGraphGetNodes(g, NULL, &n));
    CHECK_EQ(n, 3);
    CHECK_BYTES(back, N, 0);
    CUgraphExec x;
    CHECK_CU_OK(cuGraphInstantiate(&x, g, 0));
    for (unsigned seed = 4; seed <= 5; seed++) {
        xpt_fill(pin, N, seed);
        CHECK_CU_OK(cuGraphLaunch(x, s));
        CHECK_CU_OK(cuStreamSynchronize(s));
        CHECK_BYTES(back, 16, 0x11);
        CHECK(memcmp(back + 16, pin + 16, N - 16) == 0);
    }
    CHECK_CU_OK(cuGraphExecDestroy(x));
    CHECK_CU_OK(cuGraphDestroy(g));
    CHECK_CU_OK(cuStreamDestroy(s));
    CHECK_CU_OK(cuMemFree(dev));
    CHECK_CU_OK(cuMemFreeHost(pin));
    CHECK_CU_OK(cuMemFreeHost(back));
    printf("driver capture: async copies and memsets replayed\n");
}

/* Each ABI by the version that introduced it, as the real driver resolves. */
static void proc_address(void)
{
    static const struct {
        const char *base;
        int version;
        const char *symbol;
    } cases[] = {
        {"cuStreamBeginCapture", 10000, "cuStreamBeginCapture"},
        {"cuStreamBeginCapture", 10010, "cuStreamBeginCapture_v2"},
        {"cuStreamGetCaptureInfo", 10010, "cuStreamGetCaptureInfo"},
        {"cuStreamGetCaptureInfo", 11030, "cuStreamGetCaptureInfo_v2"},
        {"cuStreamGetCaptureInfo", 13000, "cuStreamGetCaptureInfo_v3"},
        {"cuGraphInstantiate", 11000, "cuGraphInstantiate_v2"},
        {"cuGraphInstantiate", 12000, "cuGraphInstantiateWithFlags"},
        {"cuGraphExecUpdate", 11000, "cuGraphExecUpdate"},
        {"cuGraphExecUpdate", 12000, "cuGraphExecUpdate_v2"},
        {"cuGraphAddKernelNode", 11000, "cuGraphAddKernelNode"},
        {"cuGraphAddKernelNode", 12000, "cuGraphAddKernelNode_v2"},
        {"cuGraphLaunch", 13000, "cuGraphLaunch"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        void *fn = NULL;
        CUdriverProcAddressQueryResult q;
        CHECK_CU_OK(cuGetProcAddress(cases[i].base, &fn, cases[i].version,
                                     CU_GET_PROC_ADDRESS_DEFAULT, &q));
        void *want = dlsym(RTLD_DEFAULT, cases[i].symbol);
        CHECK_MSG(fn != NULL && fn == want, "%s at %d: %p, %s is %p", cases[i].base,
                  cases[i].version, fn, cases[i].symbol, want);
    }
    /* The CUDA 11 instantiate, through the pointer the driver handed out. */
    void *fn = NULL;
    CUdriverProcAddressQueryResult q;
    CHECK_CU_OK(cuGetProcAddress("cuGraphInstantiate", &fn, 11000, CU_GET_PROC_ADDRESS_DEFAULT, &q));
    CUresult (*inst11)(CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t) =
        (CUresult(*)(CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t))fn;
    CUgraph g;
    CUgraphNode e;
    CHECK_CU_OK(cuGraphCreate(&g, 0));
    CHECK_CU_OK(cuGraphAddEmptyNode(&e, g, NULL, 0));
    CUgraphExec x;
    char log[16] = "x";
    CHECK_CU_OK(inst11(&x, g, &e, log, sizeof log));
    CHECK(log[0] == '\0');
    CHECK_CU_OK(cuGraphLaunch(x, NULL));
    CHECK_CU_OK(cuCtxSynchronize());
    CHECK_CU_OK(cuGraphExecDestroy(x));
    CHECK_CU_OK(cuGraphDestroy(g));
    printf("driver proc address: every ABI by version\n");
}

int main(void)
{
    CHECK_FROM_SIM("cuGraphLaunch");
    CHECK_CU_OK(cuInit(0));
    CUdevice dev;
    CUcontext ctx;
    CHECK_CU_OK(cuDeviceGet(&dev, 0));
    CHECK_CU_OK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK_CU_OK(cuCtxSetCurrent(ctx));
    explicit_graph();
    capture();
    proc_address();
    return 0;
}
