/* cap_graph_rt.c: copies inside CUDA graphs, through the runtime API: the
 * program of cap_graph_driver.c (the same captures, launches, added node and
 * exec update, the same output), with cudaStreamBeginCapture,
 * cudaGraphAddMemcpyNode1D and cudaGraphExecMemcpyNodeSetParams1D. */
#include "cap_util.h"

#define CHECK_RT(call)                                                         \
    do {                                                                       \
        cudaError_t r_ = (call);                                               \
        printf("%s -> %d\n", #call, (int)r_);                                  \
        CHECK(r_ == cudaSuccess);                                              \
    } while (0)

static unsigned char *d1, *d2, *hin, *hout, *page;

static __attribute__((noinline)) cudaGraph_t capture_graph(cudaStream_t s)
{
    cudaGraph_t g = NULL;
    CHECK_RT(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CHECK_RT(cudaMemcpyAsync(d1, hin, 4096, cudaMemcpyHostToDevice, s));
    CHECK_RT(cudaMemcpyAsync(d2, d1, 3000, cudaMemcpyDeviceToDevice, s));
    CHECK_RT(cudaMemsetAsync(d2 + 3000, 7, 1500, s));
    CHECK_RT(cudaMemcpyAsync(hout, d2, 2000, cudaMemcpyDeviceToHost, s));
    CHECK_RT(cudaStreamEndCapture(s, &g));
    return g;
}

static __attribute__((noinline)) void launch_step(cudaGraphExec_t e, cudaStream_t s)
{
    CHECK_RT(cudaGraphLaunch(e, s));
    CHECK_RT(cudaStreamSynchronize(s));
}

static __attribute__((noinline)) cudaGraph_t add_graph(cudaGraphNode_t *node)
{
    cudaGraph_t g = NULL;
    CHECK_RT(cudaGraphCreate(&g, 0));
    CHECK_RT(cudaGraphAddMemcpyNode1D(node, g, NULL, 0, d1, page, 5000, cudaMemcpyHostToDevice));
    CAP_PRINT("node", *node);
    return g;
}

int main(void)
{
    cudaStream_t s;
    CHECK_RT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CAP_PRINT("stream", s);
    CHECK_RT(cudaMalloc((void **)&d1, 8192));
    CHECK_RT(cudaMalloc((void **)&d2, 8192));
    CHECK_RT(cudaMallocHost((void **)&hin, 4096));
    CHECK_RT(cudaMallocHost((void **)&hout, 4096));
    page = malloc(8192);
    CHECK(page != NULL);

    cudaGraph_t g = capture_graph(s);
    cudaGraphExec_t e = NULL;
    CHECK_RT(cudaGraphInstantiate(&e, g, 0));
    for (int step = 0; step < 3; step++) {
        memset(hin, step < 2 ? 1 : 2, 4096);
        launch_step(e, s);
        printf("step %d read back %d\n", step, hout[0]);
        CHECK(hout[0] == (step < 2 ? 1 : 2));
    }
    CHECK_RT(cudaGraphExecDestroy(e));
    CHECK_RT(cudaGraphDestroy(g));

    cudaGraphNode_t node = NULL;
    memset(page, 5, 8192);
    g = add_graph(&node);
    CHECK_RT(cudaGraphInstantiate(&e, g, 0));
    launch_step(e, s);
    CHECK_RT(cudaGraphExecMemcpyNodeSetParams1D(e, node, d1, page, 6000, cudaMemcpyHostToDevice));
    launch_step(e, s);
    unsigned char back[6001];   /* its own size: not a node's */
    CHECK_RT(cudaMemcpy(back, d1, sizeof back, cudaMemcpyDeviceToHost));
    printf("explicit read back %d %d\n", back[0], back[5999]);
    CHECK(back[5999] == 5);
    CHECK_RT(cudaGraphExecDestroy(e));
    CHECK_RT(cudaGraphDestroy(g));
    return 0;
}
