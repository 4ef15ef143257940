/* Explicit CUDA graphs through the runtime API: memcpy (3D, 1D, pinned and pageable host memory), memset, host and empty nodes, launches that move the bytes each time in stream order with other work, per-node exec updates, cudaGraphExecUpdate, clone, destroy, and the documented errors. Needs XFERPROF_SIM_BANDWIDTH=pinned=100M,pageable=100M. */
#include "xpt_check.h"

#include <stdatomic.h>

#define N (64u << 10)
#define LONG (16u << 20)   /* ~168 ms at 100 MB/s */

static atomic_int host_calls;
static atomic_int order_seen;   /* host_calls when the second host node ran */

static void CUDART_CB count_call(void *arg)
{
    (void)arg;
    atomic_fetch_add(&host_calls, 1);
}

static void CUDART_CB note_order(void *arg)
{
    /* Runs after the first host node of the same launch. */
    atomic_store(&order_seen, atomic_load(&host_calls));
    (void)arg;
}

static size_t node_count(cudaGraph_t g)
{
    size_t n = 0;
    CHECK_OK(cudaGraphGetNodes(g, NULL, &n));
    return n;
}

static struct cudaMemcpy3DParms params_1d(void *dst, const void *src, size_t n,
                                          enum cudaMemcpyKind kind)
{
    struct cudaMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    p.srcPtr = (struct cudaPitchedPtr){.ptr = (void *)(uintptr_t)src, .pitch = n, .xsize = n,
                                       .ysize = 1};
    p.dstPtr = (struct cudaPitchedPtr){.ptr = dst, .pitch = n, .xsize = n, .ysize = 1};
    p.extent = (struct cudaExtent){.width = n, .height = 1, .depth = 1};
    p.kind = kind;
    return p;
}

/* upload (pinned, 3D params) -> memset of the tail -> host -> download
 * (pageable, 1D) -> host: each launch moves the bytes the host holds then. */
static void launch_moves_bytes(void)
{
    unsigned char *pin, *back = malloc(N);
    void *dev;
    CHECK(back != NULL);
    CHECK_OK(cudaMallocHost((void **)&pin, N));
    CHECK_OK(cudaMalloc(&dev, N));
    cudaGraph_t g;
    CHECK_OK(cudaGraphCreate(&g, 0));
    cudaGraphNode_t up, set, h1, down, h2;
    struct cudaMemcpy3DParms p = params_1d(dev, pin, N, cudaMemcpyHostToDevice);
    CHECK_OK(cudaGraphAddMemcpyNode(&up, g, NULL, 0, &p));
    struct cudaMemsetParams m = {.dst = (char *)dev + N / 2, .pitch = 0, .value = 0x5a,
                                 .elementSize = 1, .width = N / 2, .height = 1};
    CHECK_OK(cudaGraphAddMemsetNode(&set, g, &up, 1, &m));
    struct cudaHostNodeParams hp = {.fn = count_call, .userData = NULL};
    CHECK_OK(cudaGraphAddHostNode(&h1, g, &set, 1, &hp));
    CHECK_OK(cudaGraphAddMemcpyNode1D(&down, g, &h1, 1, back, dev, N, cudaMemcpyDeviceToHost));
    struct cudaHostNodeParams hp2 = {.fn = note_order, .userData = NULL};
    CHECK_OK(cudaGraphAddHostNode(&h2, g, &down, 1, &hp2));
    CHECK_EQ(node_count(g), 5);
    size_t roots = 0;
    CHECK_OK(cudaGraphGetRootNodes(g, NULL, &roots));
    CHECK_EQ(roots, 1);
    enum cudaGraphNodeType t;
    CHECK_OK(cudaGraphNodeGetType(set, &t));
    CHECK_EQ(t, cudaGraphNodeTypeMemset);
    CHECK_OK(cudaGraphNodeGetType(down, &t));
    CHECK_EQ(t, cudaGraphNodeTypeMemcpy);

    /* Nothing moves before a launch. */
    xpt_fill(pin, N, 1);
    memset(back, 0, N);
    cudaGraphExec_t x;
    CHECK_OK(cudaGraphInstantiate(&x, g, 0));
    CHECK_BYTES(back, N, 0);
    CHECK_EQ(atomic_load(&host_calls), 0);

    cudaStream_t s;
    CHECK_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (unsigned seed = 1; seed <= 2; seed++) {
        xpt_fill(pin, N, seed);   /* the second launch must copy the new bytes */
        CHECK_OK(cudaGraphLaunch(x, s));
        CHECK_OK(cudaStreamSynchronize(s));
        CHECK_PATTERN(back, N / 2, seed);
        CHECK_BYTES(back + N / 2, N / 2, 0x5a);
        CHECK_EQ(atomic_load(&host_calls), (int)seed);
        CHECK_EQ(atomic_load(&order_seen), (int)seed);
    }

    /* A node's new parameters reach later launches of that executable graph
     * only; the graph's own node is unchanged. */
    unsigned char *back2 = malloc(N);
    CHECK(back2 != NULL);
    memset(back2, 0, N);
    memset(back, 0, N);
    CHECK_OK(cudaGraphExecMemcpyNodeSetParams1D(x, down, back2, dev, N, cudaMemcpyDeviceToHost));
    CHECK_OK(cudaGraphLaunch(x, s));
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_BYTES(back, N, 0);
    CHECK_PATTERN(back2, N / 2, 2);
    struct cudaMemcpy3DParms got;
    CHECK_OK(cudaGraphMemcpyNodeGetParams(down, &got));
    CHECK(got.dstPtr.ptr == back && got.srcPtr.ptr == dev);
    CHECK_EQ(got.kind, cudaMemcpyDeviceToHost);
    CHECK_EQ(got.extent.width, N);
    CHECK_OK(cudaGraphMemcpyNodeGetParams(up, &got));
    CHECK(got.srcPtr.ptr == pin && got.dstPtr.ptr == dev);
    CHECK_EQ(got.kind, cudaMemcpyHostToDevice);

    /* A memset node's parameters, set on the graph, reach the next
     * instantiation. */
    struct cudaMemsetParams m2 = m;
    m2.value = 0x33;
    CHECK_OK(cudaGraphMemsetNodeSetParams(set, &m2));
    struct cudaMemsetParams mg;
    CHECK_OK(cudaGraphMemsetNodeGetParams(set, &mg));
    CHECK_EQ(mg.value, 0x33);
    cudaGraphExec_t x2;
    CHECK_OK(cudaGraphInstantiateWithFlags(&x2, g, 0));
    CHECK_OK(cudaGraphLaunch(x2, s));
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_BYTES(back + N / 2, N / 2, 0x33);

    /* cudaGraphExecUpdate: same topology, new pointers -> taken; another
     * topology -> refused, named. */
    cudaGraph_t g2;
    CHECK_OK(cudaGraphClone(&g2, g));
    CHECK_EQ(node_count(g2), 5);
    cudaGraphNode_t nodes[5];
    size_t n = 5;
    CHECK_OK(cudaGraphGetNodes(g2, nodes, &n));
    CHECK_EQ(n, 5);
    memset(back2, 0, N);
    CHECK_OK(cudaGraphMemcpyNodeSetParams1D(nodes[3], back2, dev, N, cudaMemcpyDeviceToHost));
    cudaGraphExecUpdateResultInfo info;
    CHECK_OK(cudaGraphExecUpdate(x2, g2, &info));
    CHECK_EQ(info.result, cudaGraphExecUpdateSuccess);
    CHECK_OK(cudaGraphLaunch(x2, s));
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_PATTERN(back2, N / 2, 2);
    cudaGraphNode_t extra;
    CHECK_OK(cudaGraphAddEmptyNode(&extra, g2, &nodes[4], 1));
    CHECK_CUDA(cudaGraphExecUpdate(x2, g2, &info), cudaErrorGraphExecUpdateFailure);
    CHECK_EQ(info.result, cudaGraphExecUpdateErrorTopologyChanged);
    CHECK_OK(cudaGraphDestroyNode(extra));
    CHECK_OK(cudaGraphExecUpdate(x2, g2, &info));
    CHECK_CUDA(cudaGraphNodeGetType(extra, &t), cudaErrorInvalidValue);

    CHECK_OK(cudaGraphExecDestroy(x));
    CHECK_OK(cudaGraphExecDestroy(x2));
    CHECK_CUDA(cudaGraphLaunch(x, s), cudaErrorInvalidValue);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidValue);
    CHECK_OK(cudaGraphDestroy(g));
    CHECK_OK(cudaGraphDestroy(g2));
    CHECK_OK(cudaStreamDestroy(s));
    CHECK_OK(cudaFree(dev));
    CHECK_OK(cudaFreeHost(pin));
    free(back);
    free(back2);
    printf("launch: bytes moved per launch\n");
}

/* A launch is stream work: it runs after the stream's earlier work and
 * before its later work. */
static void stream_order(void)
{
    unsigned char *pin, *out;
    void *big, *small;
    CHECK_OK(cudaMallocHost((void **)&pin, LONG));
    CHECK_OK(cudaMallocHost((void **)&out, N));
    CHECK_OK(cudaMalloc(&big, LONG));
    CHECK_OK(cudaMalloc(&small, N));
    cudaGraph_t g;
    CHECK_OK(cudaGraphCreate(&g, 0));
    cudaGraphNode_t dd, dh;
    CHECK_OK(cudaGraphAddMemcpyNode1D(&dd, g, NULL, 0, small, big, N, cudaMemcpyDeviceToDevice));
    CHECK_OK(cudaGraphAddMemcpyNode1D(&dh, g, &dd, 1, out, small, N, cudaMemcpyDefault));
    cudaGraphExec_t x;
    CHECK_OK(cudaGraphInstantiate(&x, g, 0));
    cudaStream_t s;
    CHECK_OK(cudaStreamCreate(&s));

    xpt_fill(pin, LONG, 7);
    memset(out, 0, N);
    CHECK_OK(cudaMemcpyAsync(big, pin, LONG, cudaMemcpyHostToDevice, s));   /* slow */
    CHECK_OK(cudaGraphLaunch(x, s));
    CHECK_OK(cudaMemsetAsync(small, 0, N, s));   /* after the graph: must not reach out */
    CHECK_CUDA(cudaStreamQuery(s), cudaErrorNotReady);
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_PATTERN(out, N, 7);

    /* cudaGraphUpload validates and moves nothing. */
    memset(out, 0, N);
    CHECK_OK(cudaGraphUpload(x, s));
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_BYTES(out, N, 0);

    CHECK_OK(cudaGraphExecDestroy(x));
    CHECK_OK(cudaGraphDestroy(g));
    CHECK_OK(cudaStreamDestroy(s));
    CHECK_OK(cudaFree(big));
    CHECK_OK(cudaFree(small));
    CHECK_OK(cudaFreeHost(pin));
    CHECK_OK(cudaFreeHost(out));
    printf("order: launch in stream order\n");
}

/* cudaGraphInstantiateWithParams with upload, a child graph, and the
 * documented errors. */
static void params_and_errors(void)
{
    unsigned char *pin;
    void *dev;
    CHECK_OK(cudaMallocHost((void **)&pin, N));
    CHECK_OK(cudaMalloc(&dev, N));
    cudaGraph_t child, g;
    CHECK_OK(cudaGraphCreate(&child, 0));
    cudaGraphNode_t c1, n1, n2;
    struct cudaMemsetParams m = {.dst = dev, .value = 0x77777777u, .elementSize = 4, .width = N / 4,
                                 .height = 1};
    CHECK_OK(cudaGraphAddMemsetNode(&c1, child, NULL, 0, &m));
    CHECK_OK(cudaGraphCreate(&g, 0));
    CHECK_OK(cudaGraphAddChildGraphNode(&n1, g, NULL, 0, child));
    CHECK_OK(cudaGraphAddMemcpyNode1D(&n2, g, &n1, 1, pin, dev, N, cudaMemcpyDeviceToHost));
    CHECK_OK(cudaGraphDestroy(child));   /* the node holds its own copy */

    cudaStream_t s;
    CHECK_OK(cudaStreamCreate(&s));
    cudaGraphInstantiateParams ip = {.flags = cudaGraphInstantiateFlagUpload, .uploadStream = s};
    cudaGraphExec_t x;
    CHECK_OK(cudaGraphInstantiateWithParams(&x, g, &ip));
    CHECK_EQ(ip.result_out, cudaGraphInstantiateSuccess);
    memset(pin, 0, N);
    CHECK_OK(cudaGraphLaunch(x, s));
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_BYTES(pin, N, 0x77);

    /* Upload is only for WithParams; unknown flags; bad handles. */
    cudaGraphExec_t y;
    CHECK_CUDA(cudaGraphInstantiateWithFlags(&y, g, cudaGraphInstantiateFlagUpload),
               cudaErrorInvalidValue);
    CHECK_CUDA(cudaGraphInstantiate(&y, g, 1ull << 40), cudaErrorInvalidValue);
    CHECK_CUDA(cudaGraphCreate(&child, 1), cudaErrorInvalidValue);
    cudaGraphNode_t bad;
    /* A dependency of another graph. */
    cudaGraph_t other;
    CHECK_OK(cudaGraphCreate(&other, 0));
    CHECK_CUDA(cudaGraphAddEmptyNode(&bad, other, &n1, 1), cudaErrorInvalidValue);
    /* Kind against pointers; element size; an array handle that names no array. */
    CHECK_CUDA(cudaGraphAddMemcpyNode1D(&bad, other, NULL, 0, pin, dev, N,
                                        cudaMemcpyHostToDevice),
               cudaErrorInvalidValue);
    m.elementSize = 3;
    CHECK_CUDA(cudaGraphAddMemsetNode(&bad, other, NULL, 0, &m), cudaErrorInvalidValue);
    struct cudaMemcpy3DParms p = params_1d(dev, pin, N, cudaMemcpyHostToDevice);
    p.srcArray = (cudaArray_t)(uintptr_t)0x1000;
    CHECK_CUDA(cudaGraphAddMemcpyNode(&bad, other, NULL, 0, &p), cudaErrorInvalidResourceHandle);
    p = params_1d(dev, pin, N, (enum cudaMemcpyKind)42);
    CHECK_CUDA(cudaGraphAddMemcpyNode(&bad, other, NULL, 0, &p), cudaErrorInvalidMemcpyDirection);
    /* Not a memcpy node. */
    CHECK_CUDA(cudaGraphMemcpyNodeGetParams(n1, &p), cudaErrorInvalidValue);
    CHECK_CUDA(cudaGraphExecMemcpyNodeSetParams1D(x, n1, pin, dev, N, cudaMemcpyDefault),
               cudaErrorInvalidValue);
    CHECK_EQ(node_count(other), 0);

    CHECK_OK(cudaGraphExecDestroy(x));
    CHECK_OK(cudaGraphDestroy(g));
    CHECK_OK(cudaGraphDestroy(other));
    CHECK_CUDA(cudaGraphDestroy(other), cudaErrorInvalidValue);
    CHECK_OK(cudaStreamDestroy(s));
    CHECK_OK(cudaFree(dev));
    CHECK_OK(cudaFreeHost(pin));
    printf("errors: documented\n");
}

int main(void)
{
    CHECK_FROM_SIM("cudaGraphLaunch");
    launch_moves_bytes();
    stream_order();
    params_and_errors();
    return 0;
}
